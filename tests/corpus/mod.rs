//! The root kernel corpus: the `#[kernel]` kernels (and their `#[device]` helpers) that
//! `tests/kernels.rs` runs on every available device and `tests/codegen_corpus.rs` generates for
//! every target and checks with the real validators. Only kernel definitions live here; inputs,
//! references and tolerances stay with the tests that use them.

// `clamp01` spells its clamp out, as the kernel was written.
#![allow(clippy::manual_clamp)]

use spoc::prelude::*;

/// The kernels the examples share (saxpy, block_sum, mandelbrot): one definition for both.
#[path = "../../examples/programs/kernels.rs"]
#[allow(dead_code)] // the kernels only some programs and tests use
mod shared;
#[allow(unused_imports)] // each test binary uses some of them
pub use shared::{block_sum, mandelbrot, mandelbrot_escape, saxpy};

// ---------------------------------------------------------------- saxpy (f32)

// ---------------------------------------------------------------- element-wise i32

#[kernel]
pub fn ops_i32(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        let y = b[i] | 1;
        out[i] = x * y + x / y - x % y + (x & 0xff) - (y ^ 0x55) + (x >> 3) + (y << 2) - -x;
    }
}

// ---------------------------------------------------------------- element-wise u32

#[kernel]
pub fn ops_u32(a: &[u32], b: &[u32], out: &mut [u32]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        let s = b[i] % 32;
        let mut h = x ^ (x >> 16);
        h = h * 0x45d9f3b;
        h ^= h >> 16;
        out[i] = h + (x << s) + (x >> (31 - s)) + !b[i] + b[i] / (s + 1);
    }
}

// ---------------------------------------------------------------- element-wise i64

#[kernel]
pub fn ops_i64(a: &[i64], k: i64, out: &mut [i64]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        out[i] = x * k - (x >> 7) + x % 1_000_003 + (i as i64) * 4_294_967_296;
    }
}

// ---------------------------------------------------------------- element-wise f64

#[kernel]
pub fn ops_f64(a: &[f64], b: &[f64], out: &mut [f64]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        let y = b[i];
        out[i] = (x * x + y * y).sqrt() / (1.0 + y.abs()) - x.mul_add(y, 0.5) + x.min(y) * x.max(y);
    }
}

// ---------------------------------------------------------------- 2-D naive matrix multiply

#[kernel]
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize, m: usize, k: usize) {
    let row = global_id_y();
    let col = global_id_x();
    if row < n && col < m {
        let mut acc = 0.0f32;
        for p in 0..k {
            acc += a[row * k + p] * b[p * m + col];
        }
        c[row * m + col] = acc;
    }
}

// ---------------------------------------------------------------- mandelbrot

// ---------------------------------------------------------------- loops with break / continue

#[kernel]
pub fn collatz(start: &[u64], steps: &mut [u32], odd_sum: &mut [u64]) {
    let i = global_id_x();
    if i >= steps.len() {
        return;
    }
    let mut v = start[i];
    let mut n = 0u32;
    let mut odd = 0u64;
    loop {
        if v <= 1 {
            break;
        }
        n += 1;
        if v % 2 == 0 {
            v /= 2;
            continue;
        }
        odd += v;
        v = 3 * v + 1;
    }
    let mut j = 0u32;
    let mut skipped = 0u32;
    while j < 100 {
        j += 1;
        if j % 3 == 0 {
            continue;
        }
        if j > n + 10 {
            break;
        }
        skipped += 1;
    }
    steps[i] = n * 1000 + skipped;
    odd_sum[i] = odd;
}

// ---------------------------------------------------------------- helper functions

/// `v` clamped to `[0, 1]`.
#[device]
pub fn clamp01(v: f32) -> f32 {
    if v < 0.0 {
        0.0
    } else if v > 1.0 {
        1.0
    } else {
        v
    }
}

/// The cubic smoothstep of `x` between the edges `e0` and `e1`.
#[device]
pub fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = clamp01((x - e0) / (e1 - e0));
    t * t * (3.0 - 2.0 * t)
}

#[kernel]
pub fn apply_smoothstep(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = smoothstep(-1.0, 2.0, x[i]);
    }
}

// ---------------------------------------------------------------- if as an expression

#[kernel]
pub fn classify(x: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i < x.len() {
        let v = x[i];
        let sign = if v > 0 {
            1
        } else if v < 0 {
            -1
        } else {
            0
        };
        let mag = if v.abs() > 100 {
            let big = v / 100;
            big * big
        } else {
            v
        };
        out[i] = sign * 1_000_000 + mag;
    }
}

// ---------------------------------------------------------------- casts across all scalar types

#[kernel]
pub fn casts(x: &[f64], ints: &mut [i64], uints: &mut [u64], f32s: &mut [f32], flags: &mut [u32]) {
    let i = global_id_x();
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let a = v as i32;
    let b = v as u32;
    let c = v as i64;
    let d = v as u64;
    let e = v as f32;
    let f = a as u32;
    let g = b as i32;
    let h = c as i32;
    let k = d as u32;
    let back = (e as f64) as f32;
    let z = (a as f64) + (b as f64) + (k as f32) as f64;
    ints[i * 3] = a as i64 + g as i64;
    ints[i * 3 + 1] = c + h as i64;
    ints[i * 3 + 2] = z as i64;
    uints[i * 2] = d + f as u64;
    uints[i * 2 + 1] = (c as u64) ^ (b as u64);
    f32s[i] = back + (f as f32) + (g as f32);
    let neg = v < 0.0;
    flags[i] = (neg as u32) + ((v > 1e9) as u32) * 2;
}

// ---------------------------------------------------------------- wrapping integer overflow

#[kernel]
pub fn overflow(
    out_i32: &mut [i32],
    out_u32: &mut [u32],
    out_i64: &mut [i64],
    out_u64: &mut [u64],
) {
    let i = global_id_x();
    if i >= out_i32.len() {
        return;
    }
    let k = i as i32;
    out_i32[i] = 2_147_483_000 + k * 1000 - (-2_147_483_647 - 1) / -1 * (k % 2);
    out_u32[i] = 0u32 - (i as u32) + 4_000_000_000 * (i as u32);
    out_i64[i] = 9_223_372_036_854_775_000 + (i as i64) * 1_000;
    out_u64[i] = (i as u64) * 0x9E37_79B9_7F4A_7C15 - 1;
}

// ---------------------------------------------------- for loops: step_by, rev; while, continue

#[kernel]
pub fn for_loops(out: &mut [i64], lo: i32, hi: i32) {
    let i = global_id_x();
    if i >= out.len() {
        return;
    }
    let s = i + 1;
    let mut acc = 0i64;
    for v in (lo..hi).step_by(s) {
        acc = acc * 3 + v as i64;
    }
    for v in (lo..hi).rev() {
        acc = acc * 7 - v as i64;
    }
    for v in (lo..hi).rev().step_by(s) {
        acc = acc * 5 + v as i64;
    }
    for _v in hi..lo {
        acc += 1_000_000;
    }
    let mut k = 0i32;
    while k < hi {
        k += 3;
        if k % 5 == 0 {
            continue;
        }
        acc += k as i64;
    }
    out[i] = acc;
}

// ---------------------------------------------------------------- f32 math methods

#[kernel]
pub fn math_f32(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < x.len() {
        let v = x[i];
        out[i] = v.sin() + v.cos() * v.exp().ln() + v.abs().sqrt() + v.floor() - v.ceil()
            + v.tanh()
            + v.atan2(1.5)
            + v.abs().powf(0.3)
            + v.powi(3)
            + v.round()
            + v.trunc()
            + v.mul_add(0.5, -1.0);
    }
}

// ---------------------------------------------------------------- conditions computed from constants

/// `if`s on conditions computed from constants, taken and not taken, each setting one bit of
/// `out[i]` (the GPU targets get them folded: `!`, comparisons, `&&`/`||` with a constant left
/// operand); and `&&`/`||` whose right operand has an effect, an atomic add on `hits` or a store
/// into `marks` inside a block, which must run exactly when Rust runs it.
#[kernel]
#[allow(
    clippy::nonminimal_bool,
    clippy::eq_op,
    clippy::overly_complex_bool_expr,
    clippy::bool_comparison,
    clippy::absurd_extreme_comparisons,
    invalid_nan_comparisons
)]
pub fn const_conditions(x: &[u32], out: &mut [u32], hits: &mut [u32], marks: &mut [u32]) {
    let i = global_id_x();
    if i < x.len() {
        let mut bits = 0u32;
        if !false {
            bits |= 0x1;
        }
        if !true {
            bits |= 0x2;
        }
        if 1u32 == 1u32 {
            bits |= 0x4;
        }
        if 4294967295u32 < 1u32 {
            bits |= 0x8;
        }
        if -1i32 < 1i32 {
            bits |= 0x10;
        }
        if i64::MIN >= -1i64 {
            bits |= 0x20;
        }
        if 18446744073709551615u64 > 1u64 {
            bits |= 0x40;
        }
        if 2.0f32 < 3.0f32 {
            bits |= 0x80;
        }
        if f32::NAN == f32::NAN {
            bits |= 0x100;
        }
        if f32::NAN != f32::NAN {
            bits |= 0x200;
        }
        if -0.0f64 == 0.0f64 {
            bits |= 0x400;
        }
        if f64::NAN >= 1.0f64 {
            bits |= 0x800;
        }
        if true == false {
            bits |= 0x1000;
        }
        if !(1u32 == 2u32) && (false || 2.5f64 > -1.0f64) {
            bits |= 0x2000;
        }
        if 0.1f64 + 0.2f64 == 0.3f64 {
            bits |= 0x4000;
        }
        let flag = if 7i64 != 7i64 { 0u32 } else { 0x8000u32 };
        bits |= flag;
        if false && atomic_add(&mut hits[0], 1u32) < 1000000u32 {
            bits |= 0x1_0000;
        }
        if true && atomic_add(&mut hits[1], 1u32) < 1000000u32 {
            bits |= 0x2_0000;
        }
        if true || atomic_add(&mut hits[2], 1u32) < 1000000u32 {
            bits |= 0x4_0000;
        }
        if false || atomic_add(&mut hits[3], 1u32) > 1000000u32 {
            bits |= 0x8_0000;
        }
        if false && {
            marks[2 * i] = 1u32;
            x[i] > 3u32
        } {
            bits |= 0x10_0000;
        }
        if true && {
            marks[2 * i + 1] = 1u32 + x[i];
            x[i] > 3u32
        } {
            bits |= 0x20_0000;
        }
        out[i] = bits;
    }
}
