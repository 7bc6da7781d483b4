//! IEEE special values in arithmetic with constant operands, on every device, f32 and f64:
//! `x * 0.0` is NaN for NaN and ±infinity, `0.0 - x` is `+0.0` for `x = +0.0`, `x + 0.0` is
//! `+0.0` for `x = -0.0`, and the same through a variable holding the constant. A driver that
//! treats float arithmetic as fast-math folds these to `0.0`, `-x` and `x`: lavapipe (Mesa
//! 22.3) did, although the SPIR-V declares `SignedZeroInfNanPreserve` and the device reports
//! it; its kernels now hide their float constants from the driver (the Vulkan backend measures
//! this when it opens a device). The inputs come from buffers; the constants are the kernel's.
//!
//! And `f32::mul_add` rounds once on every device, bit for bit as on the host: lavapipe's
//! GLSL.std.450 `Fma` rounds twice, and kernels using `mul_add` were refused there; they now
//! compute it exactly in `f64` (round to odd).

mod common;

use spoc::prelude::*;
use spoc_testkit::devices::{check_each_device, label, DeviceCheck};

/// Signed zeros through `*`, `-`, `+` with a literal and with a variable zero; instances
/// `special_f32` and `special_f64`.
#[kernel]
fn special<T: Float>(x: &[T], out: &mut [T]) {
    let i = global_id_x();
    if i < x.len() {
        let zero = 0.0 as T;
        out[6 * i] = x[i] * 0.0;
        out[6 * i + 1] = 0.0 - x[i];
        out[6 * i + 2] = x[i] + 0.0;
        out[6 * i + 3] = x[i] * zero;
        out[6 * i + 4] = zero - x[i];
        out[6 * i + 5] = x[i] * -0.0;
    }
}

/// What Rust computes, in the kernel's order.
macro_rules! reference {
    ($xs:expr, $t:ty) => {{
        let bb = std::hint::black_box;
        $xs.iter()
            .flat_map(|&x: &$t| {
                let zero: $t = bb(0.0);
                [
                    bb(x) * bb(0.0),
                    bb(0.0) - bb(x),
                    bb(x) + bb(0.0),
                    x * zero,
                    zero - x,
                    bb(x) * bb(-0.0),
                ]
            })
            .collect::<Vec<$t>>()
    }};
}

/// Equal bits, or both NaN (payloads are not kept on GPUs).
fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

const WHAT: [&str; 6] = [
    "x * 0.0", "0.0 - x", "x + 0.0", "x * zero", "zero - x", "x * -0.0",
];

/// Compared by [`same_f32`] / [`same_f64`].
trait SameBits: Copy + std::fmt::Debug {
    fn same(self, other: Self) -> bool;
}

impl SameBits for f32 {
    fn same(self, other: f32) -> bool {
        same_f32(self, other)
    }
}

impl SameBits for f64 {
    fn same(self, other: f64) -> bool {
        same_f64(self, other)
    }
}

/// Records as wrong each element of `got` that is not the same as `want`'s: the type, the
/// operation (`WHAT`, six a value) and the input `x` it had.
fn mismatches<T: SameBits>(check: &mut DeviceCheck, got: &[T], want: &[T], x: &[T]) {
    let ty = std::any::type_name::<T>();
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        if !g.same(*w) {
            check.wrong(format!(
                "{ty}: {} with x = {:?}: got {g:?}, want {w:?}",
                WHAT[k % 6],
                x[k / 6]
            ));
        }
    }
}

#[test]
fn special_has_an_f32_and_an_f64_instance() {
    assert_eq!(special::INSTANCES, ["special_f32", "special_f64"]);
}

#[test]
fn constant_zeros_keep_nan_infinities_and_signed_zeros() {
    let x32 = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        2.5,
        -3.0,
    ];
    let x64 = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        2.5,
        -3.0,
    ];
    let want32 = reference!(x32, f32);
    let want64 = reference!(x64, f64);
    // The reference itself: NaN * 0 is NaN, 0 - 0 is +0, -0 + 0 is +0.
    assert!(want32[0].is_nan() && want32[6].is_nan());
    assert_eq!(want32[3 * 6 + 1].to_bits(), 0);
    assert_eq!(want32[4 * 6 + 2].to_bits(), 0);
    check_each_device(common::devices(), 2, |dev, check| {
        let x = dev.upload(&x32)?;
        let mut out = dev.alloc::<f32>(want32.len())?;
        special.launch(dev, dims1d(1), dims1d(x32.len() as u32), (&x, &mut out))?;
        mismatches(check, &out.to_vec()?, &want32, &x32);
        if !dev.capabilities.fp64 {
            println!("{}: no f64", label(dev));
            return Ok(());
        }
        let x = dev.upload(&x64)?;
        let mut out = dev.alloc::<f64>(want64.len())?;
        match special.launch(dev, dims1d(1), dims1d(x64.len() as u32), (&x, &mut out)) {
            Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
                println!("{}: f64 skipped: {feature}", label(dev));
                return Ok(());
            }
            r => r?,
        }
        mismatches(check, &out.to_vec()?, &want64, &x64);
        Ok(())
    });
}

#[kernel]
fn fma_f32(a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = a[i].mul_add(b[i], c[i]);
    }
}

/// Operands whose fused and unfused results differ, halfway cases for the rounding of the sum,
/// subnormal results, infinities and NaN; then pseudo-random triples.
fn fma_inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let e = 2f32.powi(-13);
    let tiny = f32::from_bits(1); // the smallest subnormal
    let mut t: Vec<(f32, f32, f32)> = vec![
        (1.0 + e, 1.0 - e, -1.0),
        (1.0 + f32::EPSILON, 1.0 + f32::EPSILON, -1.0),
        (3.0, 1.0 / 3.0, -1.0),
        (0.1, 10.0, -1.0),
        (1.5e-20, 1.5e-20, tiny),
        (2f32.powi(-75), 2f32.powi(-75), 0.0),
        (2f32.powi(-70), -2f32.powi(-70), tiny),
        (f32::MAX, 2.0, -f32::MAX),
        (f32::INFINITY, 0.0, 1.0),
        (f32::INFINITY, 1.0, f32::NEG_INFINITY),
        (f32::NAN, 1.0, 1.0),
        (-0.0, 1.0, 0.0),
        (-0.0, 1.0, -0.0),
        (1.0, 1.0, -1.0),
    ];
    let r = common::pseudo_random(0x5eed, 3 * 2000);
    for k in 0..2000 {
        let v = |w: u64| {
            let m = ((w >> 11) as f64 / (1u64 << 53) as f64) as f32 * 4.0 - 2.0;
            m * 2f32.powi(((w & 0xff) as i32 % 24) - 12)
        };
        t.push((v(r[3 * k]), v(r[3 * k + 1]), v(r[3 * k + 2])));
    }
    (
        t.iter().map(|x| x.0).collect(),
        t.iter().map(|x| x.1).collect(),
        t.iter().map(|x| x.2).collect(),
    )
}

#[test]
fn mul_add_rounds_once_on_every_device() {
    let (a, b, c) = fma_inputs();
    let want: Vec<f32> = (0..a.len()).map(|i| a[i].mul_add(b[i], c[i])).collect();
    let unfused = (0..a.len())
        .filter(|&i| want[i] != a[i] * b[i] + c[i])
        .count();
    assert!(
        unfused > 100,
        "the inputs tell one rounding from two ({unfused})"
    );
    check_each_device(common::devices(), 2, |dev, check| {
        let label = label(dev);
        let (xa, xb, xc) = (dev.upload(&a)?, dev.upload(&b)?, dev.upload(&c)?);
        let mut out = dev.alloc::<f32>(a.len())?;
        let grid = common::blocks_for(a.len(), 256);
        match fma_f32.launch(dev, dims1d(grid), dims1d(256), (&xa, &xb, &xc, &mut out)) {
            // Only a device that can neither fuse nor emulate may refuse: emulating an f32 fma
            // needs f64 (lavapipe's Fma rounds twice and it has f64: it must run).
            Err(spoc::Error::FeatureNotSupported { feature, .. }) if !dev.capabilities.fp64 => {
                check.skip(feature);
                return Ok(());
            }
            r => r?,
        }
        println!("{label}: ran");
        let got = out.to_vec()?;
        // Vulkan may flush f32 subnormals (NVIDIA's driver has no shaderDenormPreserveFloat32,
        // docs/LANGUAGE.md): a subnormal result may be a zero of its sign there.
        let flushed = |g: f32, w: f32| {
            dev.framework.starts_with("Vulkan")
                && w.is_subnormal()
                && g == 0.0
                && g.is_sign_negative() == w.is_sign_negative()
        };
        for i in (0..a.len())
            .filter(|&i| !same_f32(got[i], want[i]) && !flushed(got[i], want[i]))
            .take(5)
        {
            check.wrong(format!(
                "{:e}.mul_add({:e}, {:e}) = {:e}, want {:e}",
                a[i], b[i], c[i], got[i], want[i]
            ));
        }
        Ok(())
    });
}

/// `trunc`, `floor`, `ceil` and `round` of the input, then of a NaN constant (eight results a
/// thread).
#[kernel]
fn rounding_f32(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < x.len() {
        out[8 * i] = x[i].trunc();
        out[8 * i + 1] = x[i].floor();
        out[8 * i + 2] = x[i].ceil();
        out[8 * i + 3] = x[i].round();
        out[8 * i + 4] = f32::NAN.trunc();
        out[8 * i + 5] = f32::NAN.floor();
        out[8 * i + 6] = f32::NAN.ceil();
        out[8 * i + 7] = f32::NAN.round();
    }
}

/// Rust's `trunc` of a NaN is a NaN, also when the NaN is a constant the compiler can see: PoCL
/// (difftest finding F8) stored nothing for `f32::NAN.trunc()` (its `trunc` of a NaN is not a
/// value LLVM keeps; `floor`, `ceil`, `round` alike), so the OpenCL C passes a NaN through before rounding.
#[test]
fn rounding_keeps_nan_infinities_and_signed_zeros() {
    let x = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.5,
        2.5,
        -2.5,
        -0.25,
        1e30,
        8388609.0,
    ];
    let want: Vec<f32> = x
        .iter()
        .flat_map(|&v| {
            let n = std::hint::black_box(f32::NAN);
            [
                v.trunc(),
                v.floor(),
                v.ceil(),
                v.round(),
                n.trunc(),
                n.floor(),
                n.ceil(),
                n.round(),
            ]
        })
        .collect();
    assert!(want[4].is_nan() && want[9 * 8].to_bits() == (-0.0f32).to_bits());
    const OPS: [&str; 8] = [
        "trunc",
        "floor",
        "ceil",
        "round",
        "NAN.trunc",
        "NAN.floor",
        "NAN.ceil",
        "NAN.round",
    ];
    check_each_device(common::devices(), 2, |dev, check| {
        let xb = dev.upload(&x)?;
        // Filled with a finite value, so that a store that does not happen shows.
        let mut out = dev.upload(&vec![7.25f32; want.len()])?;
        rounding_f32.launch(dev, dims1d(1), dims1d(x.len() as u32), (&xb, &mut out))?;
        for (k, (g, w)) in out.to_vec()?.iter().zip(&want).enumerate() {
            if !same_f32(*g, *w) {
                check.wrong(format!(
                    "{} of {:?}: got {g:?}, want {w:?}",
                    OPS[k % 8],
                    x[k / 8]
                ));
            }
        }
        Ok(())
    });
}
