//! IEEE special values in arithmetic with constant operands, on every device, f32 and f64:
//! `x * 0.0` is NaN for NaN and ±infinity, `0.0 - x` is `+0.0` for `x = +0.0`, `x + 0.0` is
//! `+0.0` for `x = -0.0`, and the same through a variable holding the constant. A driver that
//! treats float arithmetic as fast-math folds these to `0.0`, `-x` and `x`: lavapipe (Mesa
//! 22.3) did, although the SPIR-V declares `SignedZeroInfNanPreserve` and the device reports
//! it; its kernels now hide their float constants from the driver (the Vulkan backend measures
//! this when it opens a device). The inputs come from buffers; the constants are the kernel's.

mod common;

use spoc::prelude::*;

#[kernel]
fn special_f32(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < x.len() {
        let zero = 0.0f32;
        out[6 * i] = x[i] * 0.0;
        out[6 * i + 1] = 0.0 - x[i];
        out[6 * i + 2] = x[i] + 0.0;
        out[6 * i + 3] = x[i] * zero;
        out[6 * i + 4] = zero - x[i];
        out[6 * i + 5] = x[i] * -0.0;
    }
}

#[kernel]
fn special_f64(x: &[f64], out: &mut [f64]) {
    let i = global_id_x();
    if i < x.len() {
        let zero = 0.0f64;
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

#[test]
fn constant_zeros_keep_nan_infinities_and_signed_zeros() -> spoc::Result<()> {
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
    let mut failures = Vec::new();
    for dev in common::devices() {
        let label = format!("{} ({})", dev.name, dev.framework);
        let x = dev.upload(&x32)?;
        let mut out = dev.alloc::<f32>(want32.len())?;
        special_f32.launch(&dev, dims1d(1), dims1d(x32.len() as u32), (&x, &mut out))?;
        for (k, (g, w)) in out.to_vec()?.into_iter().zip(&want32).enumerate() {
            if !same_f32(g, *w) {
                failures.push(format!(
                    "{label} f32: {} with x = {:?}: got {g:?}, want {w:?}",
                    WHAT[k % 6],
                    x32[k / 6]
                ));
            }
        }
        if !dev.capabilities.fp64 {
            println!("{label}: no f64");
            continue;
        }
        let x = dev.upload(&x64)?;
        let mut out = dev.alloc::<f64>(want64.len())?;
        match special_f64.launch(&dev, dims1d(1), dims1d(x64.len() as u32), (&x, &mut out)) {
            Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
                println!("{label}: f64 skipped: {feature}");
                continue;
            }
            r => r?,
        }
        for (k, (g, w)) in out.to_vec()?.into_iter().zip(&want64).enumerate() {
            if !same_f64(g, *w) {
                failures.push(format!(
                    "{label} f64: {} with x = {:?}: got {g:?}, want {w:?}",
                    WHAT[k % 6],
                    x64[k / 6]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
