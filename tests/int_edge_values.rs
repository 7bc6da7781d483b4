//! Signed integer edge values on every device: `abs` and unary minus of `MIN` wrap (Rust's
//! `wrapping_abs` / `wrapping_neg`: `i32::MIN.abs() == i32::MIN`), and a comparison of the result
//! made *inside* the kernel sees the wrapped value. A backend that lets its compiler assume
//! `abs(x) >= 0` (C's signed overflow is undefined, GLSL.std.450 leaves `SAbs(MIN)` open) folds
//! `x.abs() < 0` to `false`; NVRTC, NVIDIA's OpenCL and NVIDIA's Vulkan driver did, on the H200.
//! The inputs come from a buffer, so no front end can fold them.

mod common;

use spoc::prelude::*;
use spoc_testkit::devices::check_each_device;

/// `abs` and unary minus of each `x[i]`, comparisons of them made in the kernel, and `abs`
/// divided by 3 (remainder and quotient), eight outputs per input. NVRTC and NVIDIA's OpenCL
/// took `i32::MIN.abs() % -3` for an unsigned remainder, `+2` (difftest/FINDINGS.md F13).
macro_rules! abs_neg {
    ($name:ident, $t:ident) => {
        #[kernel]
        fn $name(x: &[$t], out: &mut [$t]) {
            let i = global_id_x();
            if i < x.len() {
                let a = x[i].abs();
                let n = -x[i];
                out[8 * i] = a;
                out[8 * i + 1] = if a < 0 { 1 } else { 0 };
                out[8 * i + 2] = if a >= 0 { 1 } else { 0 };
                out[8 * i + 3] = n;
                out[8 * i + 4] = if n < 0 && x[i] < 0 { 1 } else { 0 };
                out[8 * i + 5] = if a == x[i] { 1 } else { 0 };
                out[8 * i + 6] = a % -3;
                out[8 * i + 7] = a / 3;
            }
        }
    };
}
abs_neg!(abs_neg_i32, i32);
abs_neg!(abs_neg_i64, i64);

/// What Rust says for each input, in the kernel's output order.
fn want<T>(xs: &[T], wabs: fn(T) -> T, wneg: fn(T) -> T, zero: T, one: T) -> Vec<T>
where
    T: Copy + PartialOrd + std::ops::Rem<Output = T> + std::ops::Div<Output = T> + From<i8>,
{
    xs.iter()
        .flat_map(|&x| {
            let (a, n) = (wabs(x), wneg(x));
            let b = |c: bool| if c { one } else { zero };
            [
                a,
                b(a < zero),
                b(a >= zero),
                n,
                b(n < zero && x < zero),
                b(a == x),
                a % T::from(-3),
                a / T::from(3),
            ]
        })
        .collect()
}

#[test]
fn abs_and_negation_of_min_wrap_on_every_device() {
    let x32 = [i32::MIN, i32::MIN + 1, -7, -1, 0, 1, i32::MAX];
    let x64 = [i64::MIN, i64::MIN + 1, -7, -1, 0, 1, i64::MAX];
    let want32 = want(&x32, i32::wrapping_abs, i32::wrapping_neg, 0, 1);
    let want64 = want(&x64, i64::wrapping_abs, i64::wrapping_neg, 0, 1);
    assert_eq!(
        &want32[..8],
        &[i32::MIN, 1, 0, i32::MIN, 1, 1, -2, -715_827_882]
    );
    check_each_device(common::devices(), 2, |dev, check| {
        let x = dev.upload(&x32)?;
        let mut out = dev.alloc::<i32>(want32.len())?;
        abs_neg_i32.launch(dev, dims1d(1), dims1d(x32.len() as u32), (&x, &mut out))?;
        check.eq("i32", &out.to_vec()?, &want32);
        let x = dev.upload(&x64)?;
        let mut out = dev.alloc::<i64>(want64.len())?;
        abs_neg_i64.launch(dev, dims1d(1), dims1d(x64.len() as u32), (&x, &mut out))?;
        check.eq("i64", &out.to_vec()?, &want64);
        Ok(())
    });
}

/// Integer `min`/`max` chains with a negated operand.
#[kernel]
fn min_max_of_negations(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i < a.len() {
        out[4 * i] = a[i].abs().max(b[i]);
        out[4 * i + 1] = a[i].max(-b[i]).max(a[(i + 1) % a.len()]);
        out[4 * i + 2] = a[i].min(-a[i]).min(b[i]);
        out[4 * i + 3] = b[i].max(a[i].abs());
    }
}

/// `x.abs().max(y)` and `a.max(-b).max(c)` on every device. ptxas 13.0 (the JIT of driver 580)
/// fuses two PTX `max.s32` into one 3-input `VIMNMX3` and drops a negation folded into it: on the
/// H200 `(-5).abs().max(-5)` gave -5 (difftest, kernels 1038 and 1819). The PTX generator emits
/// integer min/max as compare and select since.
#[test]
fn min_max_chains_with_negated_operands_on_every_device() {
    let vals = [
        i32::MIN,
        i32::MIN + 1,
        -100,
        -7,
        -5,
        -1,
        0,
        1,
        4,
        5,
        7,
        i32::MAX,
    ];
    let (a, b): (Vec<i32>, Vec<i32>) = vals
        .iter()
        .flat_map(|&x| vals.iter().map(move |&y| (x, y)))
        .unzip();
    let n = a.len();
    let want: Vec<i32> = (0..n)
        .flat_map(|i| {
            let (x, y, z) = (a[i], b[i], a[(i + 1) % n]);
            [
                x.wrapping_abs().max(y),
                x.max(y.wrapping_neg()).max(z),
                x.min(x.wrapping_neg()).min(y),
                y.max(x.wrapping_abs()),
            ]
        })
        .collect();
    assert_eq!(
        want[4 * 52..4 * 53],
        [5, 5, -5, 5],
        "a = -5, b = -5 (the H200 gave -5 first)"
    );
    check_each_device(common::devices(), 2, |dev, check| {
        let (da, db) = (dev.upload(&a)?, dev.upload(&b)?);
        let mut out = dev.alloc::<i32>(4 * n)?;
        min_max_of_negations.launch(
            dev,
            dims1d(n.div_ceil(64) as u32),
            dims1d(64),
            (&da, &db, &mut out),
        )?;
        let got = out.to_vec()?;
        // Every device is run, and each wrong one named with its first wrong outputs.
        let bad: Vec<String> = (0..4 * n)
            .filter(|&k| got[k] != want[k])
            .take(4)
            .map(|k| {
                let (i, form) = (k / 4, k % 4);
                format!(
                    "form {form} at a = {}, b = {}: got {}, want {}",
                    a[i], b[i], got[k], want[k]
                )
            })
            .collect();
        // NVIDIA's Vulkan driver fuses min/max chains as ptxas 13.0 does (F9), and spoc's
        // SPIR-V cannot yet keep it from forming the fused instruction: printed, not failed.
        check.wrong_unless_known_driver_bug(dev, "F9", &bad, "min/max chains right");
        Ok(())
    });
}

/// `f32 as u64`, then `as usize` (32-bit on the device: the low word), then `% 61`, then an index:
/// each step stored, from a buffer (`xs`) and from a scalar parameter (`p`, thread 0 of the last
/// block writes its row after the buffer's).
#[kernel]
fn f32_to_u64_index(xs: &[f32], p: f32, table: &[u64], out: &mut [u64]) {
    let i = global_id_x();
    if i <= xs.len() {
        let v = if i < xs.len() { xs[i] } else { p };
        let w = v as u64;
        let low = w as usize;
        let j = low % 61;
        out[5 * i] = w;
        out[5 * i + 1] = low as u64;
        out[5 * i + 2] = j as u64;
        out[5 * i + 3] = table[j];
        out[5 * i + 4] = if table[j] >= table[0] { 1 } else { 0 };
    }
}

/// The steps of difftest/FINDINGS.md F12 (NVIDIA's Vulkan stored nothing where
/// `x[((p3 as u64) as usize) % 61] >= x[0]` held for `p3 = 3.2968097e18`), one output each, for
/// values above `u32::MAX` and `i64::MAX`, saturating ones, NaN and negatives. Every device must
/// give Rust's values (NVIDIA's Vulkan included, since F12's workaround). The
/// generator's kernel itself, and the chain with only its narrowed result used:
/// `tests/driver_findings.rs`.
#[test]
fn f32_to_u64_then_low_word_then_remainder_on_every_device() {
    let xs = [
        3.296_809_7e18f32,
        1.0e10,
        4.3e9,
        9.3e18,
        1.8e19,
        3.0e19,
        -1.0,
        f32::NAN,
        123.9,
        f32::INFINITY,
    ];
    let p = 3.296_809_7e18f32;
    let table: Vec<u64> = (0..61u64).map(|j| 1000 + j).collect();
    let want: Vec<u64> = xs
        .iter()
        .chain([p].iter())
        .flat_map(|&v| {
            let w = v as u64;
            let low = w as u32;
            let j = (low % 61) as usize;
            [w, low as u64, j as u64, table[j], 1]
        })
        .collect();
    assert_eq!(
        want[0], 3_296_809_749_584_019_456,
        "f32 3.2968097e18 as u64"
    );
    check_each_device(common::devices(), 2, |dev, check| {
        let dx = dev.upload(&xs)?;
        let dt = dev.upload(&table)?;
        let mut out = dev.upload(&vec![7u64; want.len()])?;
        f32_to_u64_index.launch(dev, dims1d(1), dims1d(32), (&dx, p, &dt, &mut out))?;
        let got = out.to_vec()?;
        let bad: Vec<String> = (0..want.len())
            .filter(|&k| got[k] != want[k])
            .take(6)
            .map(|k| {
                let v = if k / 5 < xs.len() { xs[k / 5] } else { p };
                format!("step {} of {v:e}: got {}, want {}", k % 5, got[k], want[k])
            })
            .collect();
        for b in bad {
            check.wrong(b);
        }
        Ok(())
    });
}

/// `f32 as i64` and `f32 as u64` (saturating, NaN to 0) of one element per thread.
#[kernel]
fn f32_to_wide_ints(xs: &[f32], signed: &mut [i64], unsigned: &mut [u64]) {
    let i = global_id_x();
    if i < xs.len() {
        signed[i] = xs[i] as i64;
        unsigned[i] = xs[i] as u64;
    }
}

/// `f32 as i64`/`as u64` on every device for the edges (±0, NaN, ±infinity, 2^31, 2^32, 2^63,
/// 2^64 and their neighbours, the largest f32, subnormals, halves) and 4 000 f32 bit patterns
/// drawn from a fixed seed: Rust's values (the SPIR-V builds these from two 32-bit
/// conversions, difftest/FINDINGS.md F12).
#[test]
fn f32_to_64_bit_integers_on_every_device() {
    let mut xs: Vec<f32> = vec![
        0.0,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        1.0e-40,
        -1.0e-40,
        0.5,
        -0.5,
        1.5,
        -1.5,
        -1.0,
        4294967295.0,
        4294967296.0,
        -4294967296.0,
        2147483648.0,
        -2147483648.0,
        9223372036854775808.0,
        -9223372036854775808.0,
        18446744073709551616.0,
        -5.0e9,
        3.296_809_7e18,
        1.8e19,
    ];
    for &e in &[31, 32, 33, 62, 63, 64] {
        let p = 2f32.powi(e);
        xs.extend([p.next_down(), p.next_up(), -p.next_down(), -p.next_up()]);
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..4000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        xs.push(f32::from_bits(state as u32));
    }
    let want_i: Vec<i64> = xs.iter().map(|&x| x as i64).collect();
    let want_u: Vec<u64> = xs.iter().map(|&x| x as u64).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let dx = dev.upload(&xs)?;
        let mut si = dev.upload(&vec![7i64; xs.len()])?;
        let mut su = dev.upload(&vec![7u64; xs.len()])?;
        let blocks = xs.len().div_ceil(64) as u32;
        f32_to_wide_ints.launch(dev, dims1d(blocks), dims1d(64), (&dx, &mut si, &mut su))?;
        let (gi, gu) = (si.to_vec()?, su.to_vec()?);
        let bad: Vec<String> = (0..xs.len())
            .filter(|&k| gi[k] != want_i[k] || gu[k] != want_u[k])
            .take(5)
            .map(|k| {
                format!(
                    "{:e} ({:#010x}): got {} / {}, want {} / {}",
                    xs[k],
                    xs[k].to_bits(),
                    gi[k],
                    gu[k],
                    want_i[k],
                    want_u[k]
                )
            })
            .collect();
        for b in bad {
            check.wrong(b);
        }
        Ok(())
    });
}
