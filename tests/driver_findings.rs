//! The findings of the random differential tests that were seen on one driver only
//! (difftest/FINDINGS.md: F12, F16, F17, F18, F19, F20 on NVIDIA's Vulkan driver, F16 on its PTX
//! JIT too), as kernels that every device runs, each taken apart into the forms that tell which
//! step a driver gets wrong. A finding spoc works around (F12, F16, F18, F19, F20) must give Rust's
//! values on every device; only an open one (F17) is printed, not failed, on the device where
//! it was seen.

mod common;

use spoc::prelude::*;
use spoc_testkit::devices::check_each_device;

/// F16's expression, `1.0 / 8.0 - 3146031.3.ceil()` (exactly -3146031.875, halfway between two
/// f32: Rust rounds to even, -3146032.0), written as constants and taken apart into its steps
/// with the operands read from `x = [1.0, 8.0, 3146031.3]`, so that a compiler cannot fold them.
#[kernel]
fn halfway_difference(x: &[f32], out: &mut [f32]) {
    if global_id_x() == 0 {
        out[0] = (1.0f32 / 8.0f32) - (3146031.3f32).ceil();
        out[1] = x[0] / x[1] - x[2].ceil();
        out[2] = 0.125f32 - x[2].ceil();
        out[3] = x[0] / x[1];
        out[4] = x[2].ceil();
        out[5] = 0.125f32 - 3146032.0f32;
        out[6] = (1.0f32 / 8.0f32) - x[2].ceil();
        out[7] = x[0] / x[1] - 3146032.0f32;
    }
}

/// The value each output of [`halfway_difference`] must have (Rust's, evaluated on the host).
fn halfway_want(x: &[f32]) -> Vec<f32> {
    vec![
        (1.0f32 / 8.0f32) - (3146031.3f32).ceil(),
        x[0] / x[1] - x[2].ceil(),
        0.125f32 - x[2].ceil(),
        x[0] / x[1],
        x[2].ceil(),
        0.125f32 - 3146032.0f32,
        (1.0f32 / 8.0f32) - x[2].ceil(),
        x[0] / x[1] - 3146032.0f32,
    ]
}

/// F16: every form of the halfway difference rounds to even on every device.
#[test]
fn a_halfway_difference_rounds_to_even_on_every_device() {
    let x = [1.0f32, 8.0, 3146031.3];
    let want = halfway_want(&x);
    assert_eq!(want[0], -3146032.0, "Rust rounds the tie to even");
    check_each_device(common::devices(), 2, |dev, check| {
        let dx = dev.upload(&x)?;
        let mut out = dev.upload(&[7.0f32; 8])?;
        halfway_difference.launch(dev, dims1d(1), dims1d(32), (&dx, &mut out))?;
        let got = out.to_vec()?;
        let bad: Vec<String> = (0..want.len())
            .filter(|&k| got[k].to_bits() != want[k].to_bits())
            .map(|k| format!("out[{k}]: got {:?}, want {:?}", got[k], want[k]))
            .collect();
        // Worked around (spoc folds float constants itself): wrong on any device fails.
        for b in bad {
            check.wrong(b);
        }
        Ok(())
    });
}

/// F16's workaround: spoc hands the driver no float arithmetic of two constants (NVIDIA's
/// back-end compiler folded the tie toward zero, for CUDA/PTX as for Vulkan): the PTX of
/// `out[5] = 0.125 - 3146032.0` stores Rust's value, -3146032.0 (`0fCA4004C0`), and has no
/// subtraction of the two constants.
#[test]
fn float_constant_arithmetic_reaches_the_ptx_folded() {
    let src = halfway_difference
        .source(spoc::Target::CudaPtx)
        .unwrap()
        .expect("PTX");
    let ptx = src.text().expect("text");
    assert!(ptx.contains("0fCA4004C0"), "{ptx}");
    // 3146032.0 stays only in `out[7]`, subtracted from a run-time value.
    assert_eq!(ptx.matches("0f4A4004C0").count(), 1, "{ptx}");
    // `out[0]`: `3146031.3.ceil()` is folded too (the H100's JIT folded the rest wrongly once
    // `1.0 / 8.0` was a constant).
    assert!(!ptx.contains("0f4A4004BD"), "{ptx}");
}

/// Every other float operation of constants whose value Rust defines exactly, each a case a
/// driver's own folding could round differently (F16's lesson): a tie under an integer-to-float
/// cast (16 777 217 lies halfway between two f32), `sqrt`, `mul_add` (one rounding: `0.1 * 10.0
/// - 1.0` is not zero), `recip`, a narrowing cast, negation of a folded sum, and `as f32` of a
/// large `u64`.
#[kernel]
fn folded_float_constants(out: &mut [f32]) {
    if global_id_x() == 0 {
        out[0] = 16777217i32 as f32;
        out[1] = (2.0f32).sqrt();
        out[2] = (0.1f32).mul_add(10.0f32, -1.0f32);
        out[3] = (3.0f32).recip();
        out[4] = 0.1f64 as f32;
        out[5] = -(0.125f32 - 3146032.0f32);
        out[6] = 18446744073709551615u64 as f32;
        out[7] = ((2.0f64).sqrt() as f32).floor();
    }
}

/// The values [`folded_float_constants`] must store: Rust's.
fn folded_want() -> Vec<f32> {
    vec![
        16777217i32 as f32,
        (2.0f32).sqrt(),
        (0.1f32).mul_add(10.0f32, -1.0f32),
        (3.0f32).recip(),
        0.1f64 as f32,
        -(0.125f32 - 3146032.0f32),
        18446744073709551615u64 as f32,
        ((2.0f64).sqrt() as f32).floor(),
    ]
}

/// The PTX of [`folded_float_constants`] is eight stores of constants (no square root, fused
/// multiply-add, reciprocal or conversion left for the driver to fold), and every device
/// stores Rust's values.
#[test]
fn float_operations_of_constants_are_folded_with_rusts_values() {
    let want = folded_want();
    assert_eq!(want[0], 16777216.0, "the tie rounds to even");
    assert_ne!(want[2], 0.0, "one rounding");
    let ptx = folded_float_constants
        .source(spoc::Target::CudaPtx)
        .unwrap()
        .expect("PTX");
    let ptx = ptx.text().expect("text");
    for op in ["sqrt", "fma", "rcp", "div", "cvt.rn.f32", "neg", "cvt.rmi"] {
        assert!(!ptx.contains(op), "`{op}` left in the PTX:\n{ptx}");
    }
    assert!(
        ptx.contains(&format!("0f{:08X}", want[2].to_bits())),
        "{ptx}"
    );
    check_each_device(common::devices(), 2, |dev, check| {
        let mut out = dev.upload(&[7.0f32; 8])?;
        folded_float_constants.launch(dev, dims1d(1), dims1d(32), (&mut out,))?;
        let got = out.to_vec()?;
        for k in 0..want.len() {
            if got[k].to_bits() != want[k].to_bits() {
                check.wrong(format!("out[{k}]: got {:?}, want {:?}", got[k], want[k]));
            }
        }
        Ok(())
    });
}

/// F17 as FINDINGS.md shrank it (dt_9312): NVIDIA's Vulkan driver refused to create its
/// pipeline (`VK_ERROR_UNKNOWN`).
#[kernel]
fn f17_kernel(p1: u64, x_i32: &[i32], o_f64: &mut [f64]) {
    let gid = global_id_x();
    o_f64[gid * 4usize + 2usize] = ((!x_i32[0usize % x_i32.len()]) as f64).round();
    if ({
        if (match p1 {
            7u64 | 5u64 => {
                o_f64[gid * 4usize] = 0.0f64 / 0.0f64;
                false
            }
            _ => false,
        }) {}
        false
    }) {}
}

/// F17 without the dead branch's NaN store.
#[kernel]
fn f17_round_only(x_i32: &[i32], o_f64: &mut [f64]) {
    let gid = global_id_x();
    o_f64[gid * 4usize + 2usize] = ((!x_i32[0usize % x_i32.len()]) as f64).round();
}

/// F17 without the `round`.
#[kernel]
fn f17_nan_store_only(p1: u64, o_f64: &mut [f64]) {
    let gid = global_id_x();
    if p1 == 7 || p1 == 5 {
        o_f64[gid * 4usize] = 0.0f64 / 0.0f64;
    }
}

/// F17 with an f32 `round` instead of the f64 one.
#[kernel]
fn f17_round_f32(p1: u64, x_i32: &[i32], o_f32: &mut [f32]) {
    let gid = global_id_x();
    o_f32[gid * 4usize + 2usize] = ((!x_i32[0usize % x_i32.len()]) as f32).round();
    if p1 == 7 || p1 == 5 {
        o_f32[gid * 4usize] = 0.0f32 / 0.0f32;
    }
}

/// F17: the shrunk kernel and three parts of it, on every device: each runs and stores Rust's
/// values (`!5 = -6`, `-6.0.round() = -6.0`; with `p1 = 7` the NaN store runs too).
#[test]
fn f17_kernel_and_its_parts_run_on_every_device() {
    let x = [5i32, 1, 2];
    check_each_device(common::devices(), 2, |dev, check| {
        let dx = dev.upload(&x)?;
        let mut problems = Vec::new();
        let mut o = dev.upload(&[1.5f64; 128])?;
        let whole = f17_kernel.launch(dev, dims1d(1), dims1d(32), (7u64, &dx, &mut o));
        let mut o2 = dev.upload(&[1.5f64; 128])?;
        let round = f17_round_only.launch(dev, dims1d(1), dims1d(32), (&dx, &mut o2));
        let mut o3 = dev.upload(&[1.5f64; 128])?;
        let nan = f17_nan_store_only.launch(dev, dims1d(1), dims1d(32), (7u64, &mut o3));
        let mut o4 = dev.upload(&[1.5f32; 128])?;
        let round32 = f17_round_f32.launch(dev, dims1d(1), dims1d(32), (7u64, &dx, &mut o4));
        for (what, r) in [
            ("whole kernel", &whole),
            ("f64 round only", &round),
            ("NaN store only", &nan),
            ("f32 round and NaN store", &round32),
        ] {
            if let Err(e) = r {
                problems.push(format!("{what}: {e}"));
            }
        }
        if whole.is_ok() {
            let o = o.to_vec()?;
            if o[2] != -6.0 || !o[0].is_nan() || o[1] != 1.5 {
                problems.push(format!(
                    "whole kernel: thread 0 stored {:?}, want [NaN, 1.5, -6.0]",
                    &o[..3]
                ));
            }
        }
        if round.is_ok() && o2.to_vec()?[2] != -6.0 {
            problems.push("f64 round only: wrong value".into());
        }
        if nan.is_ok() && !o3.to_vec()?[4].is_nan() {
            problems.push("NaN store only: wrong value".into());
        }
        if round32.is_ok() && o4.to_vec()?[2] != -6.0 {
            problems.push("f32 round: wrong value".into());
        }
        check.wrong_unless_known_driver_bug(dev, "F17", &problems, "F17's kernels right");
        Ok(())
    });
}

/// F17 taken apart further: each kernel pairs one generated f64 routine (`/`, `sqrt`, `%`, all
/// on run-time operands) with one f64 rounding function, to find the pair NVIDIA's Vulkan
/// driver refuses (the shrunk kernel holds the division routine and `round`). `a = [7.0, 2.0,
/// -2.5]`; `o[0]` gets the routine's result, `o[1]` the rounding's.
#[kernel]
fn f17_div_round(a: &[f64], o: &mut [f64]) {
    if global_id_x() == 0 {
        let x = a[0];
        let y = a[1];
        let z = a[2];
        o[0] = x / y;
        o[1] = z.round();
    }
}

#[kernel]
fn f17_div_trunc(a: &[f64], o: &mut [f64]) {
    if global_id_x() == 0 {
        let x = a[0];
        let y = a[1];
        let z = a[2];
        o[0] = x / y;
        o[1] = z.trunc();
    }
}

#[kernel]
fn f17_div_floor(a: &[f64], o: &mut [f64]) {
    if global_id_x() == 0 {
        let x = a[0];
        let y = a[1];
        let z = a[2];
        o[0] = x / y;
        o[1] = z.floor();
    }
}

#[kernel]
fn f17_div_signum(a: &[f64], o: &mut [f64]) {
    if global_id_x() == 0 {
        let x = a[0];
        let y = a[1];
        let z = a[2];
        o[0] = x / y;
        o[1] = z.signum();
    }
}

#[kernel]
fn f17_div_abs(a: &[f64], o: &mut [f64]) {
    if global_id_x() == 0 {
        let x = a[0];
        let y = a[1];
        let z = a[2];
        o[0] = x / y;
        o[1] = z.abs();
    }
}

#[kernel]
fn f17_sqrt_round(a: &[f64], o: &mut [f64]) {
    if global_id_x() == 0 {
        let x = a[0];
        let y = a[1];
        let z = a[2];
        o[0] = x.sqrt() + y;
        o[1] = z.round();
    }
}

#[kernel]
fn f17_rem_round(a: &[f64], o: &mut [f64]) {
    if global_id_x() == 0 {
        let x = a[0];
        let y = a[1];
        let z = a[2];
        o[0] = x % y;
        o[1] = z.round();
    }
}

#[kernel]
fn f17_div_only(a: &[f64], o: &mut [f64]) {
    if global_id_x() == 0 {
        let x = a[0];
        let y = a[1];
        let z = a[2];
        o[0] = x / y;
        o[1] = z;
    }
}

/// What each F17 pair must store: Rust's values of the same expressions.
fn f17_pair_want(name: &str, a: [f64; 3]) -> [f64; 2] {
    let (x, y, z) = (a[0], a[1], a[2]);
    match name {
        "div_round" => [x / y, z.round()],
        "div_trunc" => [x / y, z.trunc()],
        "div_floor" => [x / y, z.floor()],
        "div_signum" => [x / y, z.signum()],
        "div_abs" => [x / y, z.abs()],
        "sqrt_round" => [x.sqrt() + y, z.round()],
        "rem_round" => [x % y, z.round()],
        "div_only" => [x / y, z],
        _ => unreachable!("no F17 pair {name}"),
    }
}

/// F17's pairs on every device: each builds and stores Rust's values; where NVIDIA's Vulkan
/// refuses one, the pairs it refuses are printed (the open finding), not failed.
#[test]
fn f17_pairs_of_routine_and_rounding() {
    let a = [7.0f64, 2.0, -2.5];
    check_each_device(common::devices(), 2, |dev, check| {
        let da = dev.upload(&a)?;
        let mut problems = Vec::new();
        // Launches pair `$k` and records a refusal or a value unlike Rust's under `$name`.
        macro_rules! pair {
            ($k:ident, $name:literal) => {
                let mut o = dev.upload(&[0.5f64; 2])?;
                match $k.launch(dev, dims1d(1), dims1d(32), (&da, &mut o)) {
                    Err(e) => problems.push(format!("{}: {e}", $name)),
                    Ok(()) => {
                        let (got, want) = (o.to_vec()?, f17_pair_want($name, a));
                        if got != want {
                            problems.push(format!("{}: got {got:?}, want {want:?}", $name));
                        }
                    }
                }
            };
        }
        pair!(f17_div_round, "div_round");
        pair!(f17_div_trunc, "div_trunc");
        pair!(f17_div_floor, "div_floor");
        pair!(f17_div_signum, "div_signum");
        pair!(f17_div_abs, "div_abs");
        pair!(f17_sqrt_round, "sqrt_round");
        pair!(f17_rem_round, "rem_round");
        pair!(f17_div_only, "div_only");
        check.wrong_unless_known_driver_bug(dev, "F17", &problems, "every F17 pair right");
        Ok(())
    });
}

/// F12's conversion chain with nothing but its narrowed result used (FINDINGS.md F12: on
/// NVIDIA's Vulkan the generator's kernel picked a wrong element where `int_edge_values`, which
/// stores the 64-bit value too, saw every step right): `(p as u64) as u32` and
/// `((p as u64) as usize) % 61`, from a scalar and from a buffer, the high word, and the
/// saturating `p as u32` a compiler could wrongly narrow the chain into. For `p = 3.2968097e18`
/// the low word is 0 (an f32 that large is a multiple of 2^37), so the index is 0, where the
/// 64-bit `(p as u64) % 61` is 54 and the saturated `u32::MAX % 61` is 56.
#[kernel]
fn f12_narrowed(xs: &[f32], p: f32, out: &mut [u32]) {
    if global_id_x() == 0 {
        out[0] = (p as u64) as u32;
        out[1] = (((p as u64) as usize) % 61usize) as u32;
        out[2] = (xs[0] as u64) as u32;
        out[3] = (((xs[0] as u64) as usize) % 61usize) as u32;
        out[4] = ((p as u64) >> 32u32) as u32;
        out[5] = p as u32;
        out[6] = ((p as u64) & 4294967295u64) as u32;
        out[7] = (((p as f64) as u64) as usize % 61usize) as u32;
        // The low word made opaque (XOR a zero read at run time) before the remainder, and
        // the remainder of a low word the kernel stored first: forms a workaround could take.
        let zero = xs[1] as u32;
        out[8] = (((p as u64) as u32) ^ zero) % 61u32;
        let low = (p as u64) as u32;
        out[9] = low;
        out[10] = low % 61u32;
        out[11] = ((p as u64) % 61u64) as u32;
        // The signed conversion narrowed, for a negative value with a non-zero low word
        // (-5e9), a small negative one (-1.5 → -1) and the saturated minimum (-3e19).
        out[12] = (xs[2] as i64) as u32;
        out[13] = (xs[3] as i64) as u32;
        out[14] = ((xs[4] as i64) >> 32u32) as u32;
        out[15] = (xs[2] as u64) as u32;
    }
}

/// F12: the narrowed forms of the chain store Rust's values, and the generator's kernel, given a
/// table where only the right element (`x[0]`) passes `x[j] >= x[0]`, stores in every thread.
#[test]
fn f12_narrowed_conversions_on_every_device() {
    let p = 3.296_809_7e18f32;
    // A kernel's `usize` is 32 bits wide (LANGUAGE.md): `as usize` keeps the low word.
    let want: Vec<u32> = vec![
        (p as u64) as u32,
        ((p as u64) as u32) % 61,
        (p as u64) as u32,
        ((p as u64) as u32) % 61,
        ((p as u64) >> 32) as u32,
        p as u32,
        ((p as u64) & 0xffff_ffff) as u32,
        ((p as f64) as u64 as u32) % 61,
        ((p as u64) as u32) % 61,
        (p as u64) as u32,
        ((p as u64) as u32) % 61,
        ((p as u64) % 61) as u32,
        (-5.0e9f32 as i64) as u32,
        (-1.5f32 as i64) as u32,
        ((-3.0e19f32 as i64) >> 32) as u32,
        (-5.0e9f32 as u64) as u32,
    ];
    assert_eq!((want[0], want[1], want[5]), (0, 0, u32::MAX));
    // x[0] = 7, every other element below it: only index 0 satisfies the comparison.
    let table: Vec<u64> = (0..61u64).map(|j| if j == 0 { 7 } else { j % 7 }).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let dx = dev.upload(&[p, 0.0, -5.0e9, -1.5, -3.0e19])?;
        let mut out = dev.upload(&[12345u32; 16])?;
        f12_narrowed.launch(dev, dims1d(1), dims1d(32), (&dx, p, &mut out))?;
        let got = out.to_vec()?;
        let mut bad: Vec<String> = (0..want.len())
            .filter(|&k| got[k] != want[k])
            .map(|k| format!("out[{k}]: got {}, want {}", got[k], want[k]))
            .collect();
        let dt = dev.upload(&table)?;
        let mut o = dev.upload(&vec![9u64; 256])?;
        f12_generated.launch(dev, dims1d(2), dims1d(32), (p, &dt, &mut o))?;
        let o = o.to_vec()?;
        let missed = (0..64).filter(|&g| o[4 * g] != 0).count();
        if missed > 0 {
            bad.push(format!(
                "the generator's kernel: {missed} of 64 threads did not store"
            ));
        }
        // Worked around (two 32-bit conversions in SPIR-V): wrong on any device fails.
        for b in bad {
            check.wrong(b);
        }
        Ok(())
    });
}

/// The kernel FINDINGS.md F12 shrank to (dt_2927), as the generator wrote it.
#[kernel]
fn f12_generated(p3: f32, x_u64: &[u64], o_u64: &mut [u64]) {
    let gid = global_id_x();
    #[allow(unused_mut, unused_variables)]
    let mut v21: i32 = {
        if x_u64[((p3 as u64) as usize) % 61usize]
            >= (match 0usize {
                _ => x_u64[0usize % 61usize],
            })
        {
            o_u64[gid * 4usize] = 0u64;
        }
        0i32
    };
}

/// FINDINGS.md F18 (dt_7003) and F19 (dt_9057) as shrunk: NaN from constants, then divided into
/// and converted. NVIDIA's Vulkan driver stored `0.0` and `i64::MIN`: the NaN tests of spoc's
/// division routine and saturating conversion (`x == x`) were taken as true; they test the
/// bits now.
#[kernel]
fn nan_from_constants(out_f: &mut [f32], out_i: &mut [i64]) {
    let gid = global_id_x();
    out_f[gid] = 0.0f32 / (f32::NAN - 0.0f32);
    let v: f32 = 0.0f32 - f32::NAN;
    out_i[gid] = v as i64;
}

/// F18 and F19: `0.0 / (NaN - 0.0)` is NaN and `(0.0 - NaN) as i64` is 0 on every device.
#[test]
fn nan_from_constants_stays_nan_on_every_device() {
    check_each_device(common::devices(), 2, |dev, check| {
        let mut f = dev.upload(&[7.0f32; 32])?;
        let mut i = dev.upload(&[7i64; 32])?;
        nan_from_constants.launch(dev, dims1d(1), dims1d(32), (&mut f, &mut i))?;
        let (f, i) = (f.to_vec()?, i.to_vec()?);
        if let Some(k) = (0..32).find(|&k| !f[k].is_nan()) {
            check.wrong(format!(
                "thread {k}: 0.0 / (NaN - 0.0) = {:?}, want NaN",
                f[k]
            ));
        }
        if let Some(k) = (0..32).find(|&k| i[k] != 0) {
            check.wrong(format!("thread {k}: (0.0 - NaN) as i64 = {}, want 0", i[k]));
        }
        Ok(())
    });
}

/// F20 as FINDINGS.md shrank it (dt_5828): NVIDIA's Vulkan driver (580) killed the process
/// (SIGSEGV) on its launch. Variants run on the H200 (2026-12-05): the crash needs the constant
/// `if true`, the `match` arm's early `return` and the loop without effects together (a
/// run-time condition, no `return`, no `match`, no loop, or a loop that stores: no crash). The
/// SPIR-V generator now gets the taken branch of a constant `if` instead.
#[kernel]
#[allow(unused_parens, unused_variables, unused_mut)]
fn f20_kernel(x_i32: &[i32], x_u32: &[u32], x_i64: &[i64], o_u32: &mut [u32]) {
    let gid = global_id_x();
    if true {
        match x_u32[0usize % x_u32.len()] {
            1094259310u32..=1094259311u32 => {}
            _ => {
                if (x_i32[0usize % 61usize] == 0i32) {
                    return;
                }
            }
        }
        for i18 in (0i64..x_i64[0usize % 61usize]) {}
    } else {
        let mut v20: u32 = 0u32;
    }
    o_u32[gid * 4usize + 1usize] = 0u32;
}

/// F20: the shrunk kernel (and its nested-condition form, which must store the same) runs on
/// every device, with and without its early `return`: threads
/// store 0 at `4 gid + 1` unless `x_i32[0] == 0` (and the `match` takes its default arm).
#[test]
fn f20_kernel_runs_on_every_device() {
    check_each_device(common::devices(), 2, |dev, check| {
        for (first, want) in [(1i32, 0u32), (0, 9)] {
            let mut xi = vec![first; 64];
            xi[1] = 3;
            let xi = dev.upload(&xi)?;
            let xu = dev.upload(&[5u32; 64])?;
            let xl = dev.upload(&[3i64; 64])?;
            let mut o = dev.upload(&[9u32; 256])?;
            f20_kernel.launch(dev, dims1d(2), dims1d(32), (&xi, &xu, &xl, &mut o))?;
            let mut nested = dev.upload(&[9u32; 256])?;
            f20_nested_condition.launch(
                dev,
                dims1d(2),
                dims1d(32),
                (&xi, &xu, &xl, &mut nested),
            )?;
            let o = o.to_vec()?;
            if nested.to_vec()? != o {
                check.wrong(format!(
                    "x_i32[0] = {first}: the nested-condition form stored other values"
                ));
            }
            for t in 0..64 {
                for (slot, v) in o[4 * t..4 * t + 4].iter().enumerate() {
                    let w = if slot == 1 { want } else { 9 };
                    if *v != w {
                        check.wrong(format!(
                            "x_i32[0] = {first}: thread {t} left {v} at slot {slot}, want {w}"
                        ));
                    }
                }
            }
        }
        Ok(())
    });
}

/// F20's kernel with its constant condition written as a constant `if` expression: folded
/// inside out, it is the same constant (a review found the outer `if` left standing).
#[kernel]
#[allow(unused_parens, unused_variables, unused_mut)]
fn f20_nested_condition(x_i32: &[i32], x_u32: &[u32], x_i64: &[i64], o_u32: &mut [u32]) {
    let gid = global_id_x();
    if (if true { true } else { false }) {
        match x_u32[0usize % x_u32.len()] {
            1094259310u32..=1094259311u32 => {}
            _ => {
                if (x_i32[0usize % 61usize] == 0i32) {
                    return;
                }
            }
        }
        for i18 in (0i64..x_i64[0usize % 61usize]) {}
    }
    o_u32[gid * 4usize + 1usize] = 0u32;
}

/// F20's kernel with its constant condition computed from constants, `!false`: `fold_constants`
/// makes it `true`, then the `if` is its branch.
#[kernel]
#[allow(unused_parens, unused_variables, unused_mut, clippy::nonminimal_bool)]
fn f20_not_false(x_i32: &[i32], x_u32: &[u32], x_i64: &[i64], o_u32: &mut [u32]) {
    let gid = global_id_x();
    if !false {
        match x_u32[0usize % x_u32.len()] {
            1094259310u32..=1094259311u32 => {}
            _ => {
                if (x_i32[0usize % 61usize] == 0i32) {
                    return;
                }
            }
        }
        for i18 in (0i64..x_i64[0usize % 61usize]) {}
    } else {
        let mut v20: u32 = 0u32;
    }
    o_u32[gid * 4usize + 1usize] = 0u32;
}

/// F20's kernel with the condition `1u32 == 1u32`.
#[kernel]
#[allow(unused_parens, unused_variables, unused_mut, clippy::eq_op)]
fn f20_u32_equal(x_i32: &[i32], x_u32: &[u32], x_i64: &[i64], o_u32: &mut [u32]) {
    let gid = global_id_x();
    if 1u32 == 1u32 {
        match x_u32[0usize % x_u32.len()] {
            1094259310u32..=1094259311u32 => {}
            _ => {
                if (x_i32[0usize % 61usize] == 0i32) {
                    return;
                }
            }
        }
        for i18 in (0i64..x_i64[0usize % 61usize]) {}
    } else {
        let mut v20: u32 = 0u32;
    }
    o_u32[gid * 4usize + 1usize] = 0u32;
}

/// F20's kernel with the condition `B == 1` on a const parameter: each instance's condition is
/// `1u32 == 1u32` (taken, F20's shape) or `2u32 == 1u32` (not taken: no early `return`).
#[kernel(instances(1, 2))]
#[allow(unused_parens, unused_variables, unused_mut)]
fn f20_const_generic<const B: u32>(x_i32: &[i32], x_u32: &[u32], x_i64: &[i64], o_u32: &mut [u32]) {
    let gid = global_id_x();
    if B == 1 {
        match x_u32[0usize % x_u32.len()] {
            1094259310u32..=1094259311u32 => {}
            _ => {
                if (x_i32[0usize % 61usize] == 0i32) {
                    return;
                }
            }
        }
        for i18 in (0i64..x_i64[0usize % 61usize]) {}
    } else {
        let mut v20: u32 = 0u32;
    }
    o_u32[gid * 4usize + 1usize] = 0u32;
}

/// F20 with its condition computed from constants: each form stores what F20's kernel stores
/// (0 at `4 gid + 1` unless `x_i32[0] == 0`), and `f20_const_generic::<2>`, whose condition is
/// false, stores 0 there for every thread.
#[test]
fn f20_computed_conditions_run_on_every_device() {
    check_each_device(common::devices(), 2, |dev, check| {
        for first in [1i32, 0] {
            let mut xi = vec![first; 64];
            xi[1] = 3;
            let xi = dev.upload(&xi)?;
            let xu = dev.upload(&[5u32; 64])?;
            let xl = dev.upload(&[3i64; 64])?;
            let taken = if first == 0 { 9 } else { 0 };
            for (name, want) in [
                ("f20_not_false", taken),
                ("f20_u32_equal", taken),
                ("f20_const_generic::<1>", taken),
                ("f20_const_generic::<2>", 0u32),
            ] {
                let mut o = dev.upload(&[9u32; 256])?;
                let args = (&xi, &xu, &xl, &mut o);
                let (g, b) = (dims1d(2), dims1d(32));
                match name {
                    "f20_not_false" => f20_not_false.launch(dev, g, b, args)?,
                    "f20_u32_equal" => f20_u32_equal.launch(dev, g, b, args)?,
                    "f20_const_generic::<1>" => f20_const_generic::<1>.launch(dev, g, b, args)?,
                    _ => f20_const_generic::<2>.launch(dev, g, b, args)?,
                }
                let o = o.to_vec()?;
                let want: Vec<u32> = (0..256)
                    .map(|k| if k % 4 == 1 { want } else { 9 })
                    .collect();
                check.eq(&format!("{name}, x_i32[0] = {first}"), &o, &want);
            }
        }
        println!(
            "{}: F20's computed conditions checked",
            spoc_testkit::devices::label(dev)
        );
        Ok(())
    });
}

/// The workaround of F20 itself, on any machine: the SPIR-V of F20's kernels branches on no
/// constant (`OpBranchConditional` whose condition is an `OpConstantTrue`/`OpConstantFalse`, or
/// a logical operation or comparison of constants only, see [`f20_spirv_check`]).
#[test]
fn f20_spirv_branches_on_no_constant() {
    f20_spirv_check(&[
        ("f20_kernel", f20_kernel.ir().expect("F20's kernel lowers")),
        (
            "f20_nested_condition",
            f20_nested_condition.ir().expect("the nested form lowers"),
        ),
    ]);
}

/// The same for F20's kernel with its condition computed from constants (`!false`,
/// `1u32 == 1u32`, a const parameter's `B == 1` in both instances): `fold_constants` makes each
/// a constant, and the `if` goes.
#[test]
fn f20_spirv_branches_on_no_computed_constant() {
    f20_spirv_check(&[
        ("f20_not_false", f20_not_false.ir().expect("lowers")),
        ("f20_u32_equal", f20_u32_equal.ir().expect("lowers")),
        (
            "f20_const_generic::<1>",
            f20_const_generic::<1>.ir().expect("lowers"),
        ),
        (
            "f20_const_generic::<2>",
            f20_const_generic::<2>.ir().expect("lowers"),
        ),
    ]);
}

/// Fails naming every kernel of `kernels` whose SPIR-V branches on a constant
/// ([`f20_constant_branches`]).
#[track_caller]
fn f20_spirv_check(kernels: &[(&str, &spoc::ir::Kernel)]) {
    let bad: Vec<String> = kernels
        .iter()
        .map(|(name, ir)| (name, f20_constant_branches(ir)))
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} ({n})"))
        .collect();
    assert!(
        bad.is_empty(),
        "the SPIR-V still branches on a constant condition: {}",
        bad.join(", ")
    );
}

/// How many `OpBranchConditional`s of `ir`'s SPIR-V branch on a constant.
fn f20_constant_branches(ir: &spoc::ir::Kernel) -> usize {
    use spoc_codegen::{generate_source_with, Capabilities, Code, Options, Target};
    let opts = Options {
        block: Some([32, 1, 1]),
        soa_params: &[],
        caps: Capabilities::for_target(Target::Vulkan),
        checked: false,
    };
    let src = generate_source_with(Target::Vulkan, ir, &opts)
        .expect("F20's kernel generates")
        .expect("SPIR-V is generated");
    let Code::SpirV(words) = src.code else {
        panic!("SPIR-V expected")
    };
    // SPIR-V spec, "Instructions": OpConstantTrue 41 / OpConstantFalse 42 / OpConstant 43
    // (result type, result id, value), OpBranchConditional 250 (condition, true label, false
    // label, weights), and the logical operations and comparisons whose operands follow their
    // result type and id: OpLogicalEqual 164 to OpFUnordGreaterThanEqual 191 (OpLogicalNot 168
    // and OpSelect 169 among them). A result computed by those from constants only is a
    // constant the driver can fold, so a branch on it counts too.
    let mut constants = std::collections::HashSet::new();
    let mut constant_branches = 0;
    let mut at = 5;
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        let operands = &words[at + 1..(at + count.max(1)).min(words.len())];
        match opcode {
            41..=43 => {
                constants.insert(operands[1]);
            }
            164..=191 if operands[2..].iter().all(|id| constants.contains(id)) => {
                constants.insert(operands[1]);
            }
            250 if constants.contains(&operands[0]) => constant_branches += 1,
            _ => {}
        }
        at += count.max(1);
    }
    constant_branches
}
