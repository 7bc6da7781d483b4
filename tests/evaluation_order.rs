//! Rust's order of evaluation, on every device: operands left to right, whatever statements an
//! operand to the right needs first (block values, `if` and `match` values with statements in
//! their arms, helper-call and method arguments, indices), and in assignments the value before
//! the place (compound assignments on primitives too).
//!
//! Each case is a `#[device]` function, so the very same source runs twice: compiled by rustc
//! on the host (the reference: plain Rust) and by spoc inside the kernel `all_cases`, on each
//! device. Each takes a seed, so that no backend can fold the answer at compile time.

// The cases are written the way the bugs were found (a block's value bound, then returned):
// the form is the test, so clippy's rewrite would test something else.
#![allow(clippy::let_and_return)]

mod common;

use spoc::prelude::*;

/// `{ c += 1; c } * 100 + { c *= 10; c }`: 110 from 0, not 1010.
#[device]
fn blocks_in_a_sum(c0: i32) -> i32 {
    let mut c = c0;
    let r = {
        c += 1;
        c
    } * 100
        + {
            c *= 10;
            c
        };
    r
}

/// A variable read on the left of an operand that changes it.
#[device]
fn variable_then_block(c0: i32) -> i32 {
    let mut c = c0;
    c * 1000
        + {
            c += 3;
            c
        } * 10
        + c
}

/// `if` and `match` values whose arms have statements.
#[device]
fn if_and_match_values(c0: i32) -> i32 {
    let mut c = c0;
    let a = c * 100
        + if c >= 0 {
            c += 5;
            c
        } else {
            c -= 5;
            c
        };
    let b = c * 10
        + match c % 3 {
            0 => {
                c += 1;
                c
            }
            1 => {
                c += 2;
                c
            }
            _ => {
                c += 3;
                c
            }
        };
    a * 10000 + b * 10 + c
}

/// A `match` value whose arm is a block with a statement (the generated native code used to
/// leave the result possibly unassigned: rustc's E0381).
#[device]
fn match_arm_with_a_statement(m: i32) -> i32 {
    let w = match m % 3 {
        0 => {
            let t = m + 7;
            t
        }
        _ => 1,
    };
    w
}

/// Helper arguments and method arguments, each changing what the ones before it read.
#[device]
fn pair(a: i32, b: i32) -> i32 {
    a * 1000 + b
}

#[device]
fn call_arguments(c0: i32) -> i32 {
    let mut c = c0;
    let p: i32 = pair(c, {
        c += 7;
        c
    });
    let m = c.min({
        c += 10;
        c
    });
    let n = (c + 1).max({
        c -= 30;
        c
    });
    p * 100 + m * 10 + n
}

/// The comparisons and short-circuits of a condition.
#[device]
fn conditions(c0: i32) -> i32 {
    let mut c = c0;
    let mut r = 0;
    if c < {
        c += 1;
        c
    } {
        r += 1;
    }
    if c == 1 + c0 && {
        c *= 2;
        c
    } > c0
    {
        r += 10;
    }
    r * 100 + c
}

/// Indices: `y[{..}] = {..}` evaluates the value first, then the index; `y[i] += {..}` too.
#[device]
fn places(y: &mut [i32], c0: i32) {
    let mut c = c0;
    y[{
        c += 1;
        c
    } as usize] = {
        c *= 2;
        c
    };
    y[0] += {
        y[0] = 5;
        1
    };
    let mut k = 1usize;
    y[{
        k += 1;
        k
    }] += {
        k *= 2;
        k as i32
    };
    y[5] = c * 10
        + y[{
            c += 1;
            c - 1
        } as usize];
}

/// Runs every case with seed `x[0]`; `places` works on `y`.
#[kernel]
fn all_cases(x: &[i32], out: &mut [i32], y: &mut [i32]) {
    if global_id_x() == 0 {
        let s = x[0];
        out[0] = blocks_in_a_sum(s);
        out[1] = variable_then_block(s);
        out[2] = if_and_match_values(s);
        out[3] = call_arguments(s);
        out[4] = conditions(s);
        out[5] = match_arm_with_a_statement(s + 3);
        places(y, s);
    }
}

#[test]
fn operands_and_places_are_evaluated_in_rusts_order_on_every_device() {
    for seed in [0i32, 2] {
        let want = [
            blocks_in_a_sum(seed),
            variable_then_block(seed),
            if_and_match_values(seed),
            call_arguments(seed),
            conditions(seed),
            match_arm_with_a_statement(seed + 3),
        ];
        assert_eq!(want[0], if seed == 0 { 110 } else { 330 }, "plain Rust");
        let mut want_y = vec![0i32; 8];
        places(&mut want_y, seed);
        for dev in common::devices() {
            let x = dev.upload(&[seed]).unwrap();
            let mut out = dev.upload(&[0i32; 6]).unwrap();
            let mut y = dev.upload(&[0i32; 8]).unwrap();
            all_cases
                .launch(&dev, dims1d(1), dims1d(1), (&x, &mut out, &mut y))
                .unwrap_or_else(|e| panic!("{}: {e}", dev.framework));
            assert_eq!(
                out.to_vec().unwrap(),
                want,
                "seed {seed} on {}",
                dev.framework
            );
            assert_eq!(
                y.to_vec().unwrap(),
                want_y,
                "seed {seed} on {}",
                dev.framework
            );
        }
    }
}
