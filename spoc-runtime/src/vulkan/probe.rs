//! Measurements made once per device when it is opened.

use super::device::VkDev;
use super::memory::VkBuffer;
use super::pipeline::{self, Abi};
use std::sync::Arc;

/// Is GLSL.std.450 `Fma` fused on f32 and on f64 (when the device has f64)? Runs one tiny
/// kernel on `a * b + c` with `a = 1 + 2^-k`, `b = 1 - 2^-k`, `c = -1`: the exact product is
/// `1 - 2^-2k`, which rounds to 1 in the type (k = 13 for f32, 30 for f64), so a fused
/// multiply-add gives `-2^-2k` and an unfused one 0.
///
/// # Errors
/// A failing Vulkan call or compile (the caller then assumes fused, and says so).
pub(crate) fn fused_fma(dev: &Arc<VkDev>) -> Result<(bool, bool), String> {
    let f64_on = dev.props.shader_float64;
    let mut src = String::from(
        "#version 450\nlayout(local_size_x = 1) in;\n\
         layout(set = 0, binding = 1) buffer F { float f[]; };\n",
    );
    if f64_on {
        src.push_str("layout(set = 0, binding = 2) buffer D { double d[]; };\n");
    }
    src.push_str("void main() {\n    f[3] = fma(f[0], f[1], f[2]);\n");
    if f64_on {
        src.push_str("    d[3] = fma(d[0], d[1], d[2]);\n");
    }
    src.push_str("}\n");
    let v = super::spv::max_spirv_for(dev.props.api_version).min((1, 5));
    let c = super::glsl::compile(&src, (v.0 as u8, v.1 as u8))?;
    let kinds = if f64_on { vec![true, true] } else { vec![true] };
    let k = pipeline::build(
        dev,
        &c.words,
        &c.entry,
        "fma_probe",
        [1, 1, 1],
        None,
        Abi::External {
            kinds,
            block_bytes: 0,
        },
        None,
    )?;
    let e32 = 2f32.powi(-13);
    let f: Vec<u8> = [1.0 + e32, 1.0 - e32, -1.0, 7.0]
        .iter()
        .flat_map(|v: &f32| v.to_le_bytes())
        .collect();
    let e64 = 2f64.powi(-30);
    let d: Vec<u8> = [1.0 + e64, 1.0 - e64, -1.0, 7.0]
        .iter()
        .flat_map(|v: &f64| v.to_le_bytes())
        .collect();
    let fb = VkBuffer::alloc(dev, f.len() as u64)?;
    // SAFETY: `f` is readable for its length; the buffer holds at least that much.
    unsafe { fb.write(0, f.as_ptr(), f.len() as u64)? };
    let db = if f64_on {
        let b = VkBuffer::alloc(dev, d.len() as u64)?;
        // SAFETY: as above.
        unsafe { b.write(0, d.as_ptr(), d.len() as u64)? };
        Some(b)
    } else {
        None
    };
    let mut bufs = vec![(&fb, f.len() as u64)];
    if let Some(b) = &db {
        bufs.push((b, d.len() as u64));
    }
    pipeline::run(&k, [1, 1, 1].into(), &[], &bufs, false)?;
    let mut out = [0u8; 8];
    // SAFETY: `out` is writable for 4 bytes; element 3 is inside the buffer.
    unsafe { fb.read(12, out.as_mut_ptr(), 4)? };
    let got32 = f32::from_le_bytes(out[..4].try_into().expect("4 bytes"));
    let fused32 = got32 == -(e32 * e32);
    let fused64 = match &db {
        Some(b) => {
            // SAFETY: `out` is writable for 8 bytes; element 3 is inside the buffer.
            unsafe { b.read(24, out.as_mut_ptr(), 8)? };
            f64::from_le_bytes(out) == -(e64 * e64)
        }
        None => false,
    };
    Ok((fused32, fused64))
}

/// Does the driver keep IEEE special values in arithmetic with constant operands (f32, and f64
/// when the device has it)? Runs `x * 0.0` with `x = NaN` (NaN), `0.0 - x` with `x = +0.0`
/// (`+0.0`) and `x + 0.0` with `x = -0.0` (`+0.0`), in a module that declares the float controls
/// the device reports (as generated kernels do, `spoc_codegen::naga::float_controls`). A driver
/// that treats the operations as fast-math folds them to `0.0`, `-x` and `x`.
///
/// # Errors
/// A failing Vulkan call or compile (the caller then assumes the worst).
pub(crate) fn ieee_special_values(dev: &Arc<VkDev>) -> Result<[bool; 2], String> {
    let f64_on = dev.props.shader_float64;
    let mut src = String::from(
        "#version 450\nlayout(local_size_x = 1) in;\n\
         layout(set = 0, binding = 1) buffer F { float f[]; };\n",
    );
    if f64_on {
        src.push_str("layout(set = 0, binding = 2) buffer D { double d[]; };\n");
    }
    src.push_str(
        "void main() {\n    f[3] = f[0] * 0.0;\n    f[4] = 0.0 - f[1];\n    f[5] = f[2] + 0.0;\n",
    );
    if f64_on {
        src.push_str(
            "    d[3] = d[0] * 0.0lf;\n    d[4] = 0.0lf - d[1];\n    d[5] = d[2] + 0.0lf;\n",
        );
    }
    src.push_str("}\n");
    let v = super::spv::max_spirv_for(dev.props.api_version).min((1, 5));
    let c = super::glsl::compile(&src, (v.0 as u8, v.1 as u8))?;
    let p = &dev.props;
    let words = spoc_codegen::naga::float_controls(&spoc_codegen::naga::no_contraction(&c.words));
    let words = spoc_codegen::naga::retain_float_controls(&words, |mode, width| {
        let i = match width {
            16 => 0,
            32 => 1,
            64 => 2,
            _ => return false,
        };
        match mode {
            spoc_codegen::naga::FloatMode::DenormPreserve => p.denorm_preserve[i],
            spoc_codegen::naga::FloatMode::SignedZeroInfNanPreserve => {
                p.signed_zero_inf_nan_preserve[i]
            }
        }
    });
    let kinds = if f64_on { vec![true, true] } else { vec![true] };
    let k = pipeline::build(
        dev,
        &words,
        &c.entry,
        "ieee_probe",
        [1, 1, 1],
        None,
        Abi::External {
            kinds,
            block_bytes: 0,
        },
        None,
    )?;
    let f: Vec<u8> = [f32::NAN, 0.0, -0.0, 7.0, 7.0, 7.0]
        .iter()
        .flat_map(|v: &f32| v.to_le_bytes())
        .collect();
    let d: Vec<u8> = [f64::NAN, 0.0, -0.0, 7.0, 7.0, 7.0]
        .iter()
        .flat_map(|v: &f64| v.to_le_bytes())
        .collect();
    let fb = VkBuffer::alloc(dev, f.len() as u64)?;
    // SAFETY: `f` is readable for its length; the buffer holds that much.
    unsafe { fb.write(0, f.as_ptr(), f.len() as u64)? };
    let db = if f64_on {
        let b = VkBuffer::alloc(dev, d.len() as u64)?;
        // SAFETY: as above.
        unsafe { b.write(0, d.as_ptr(), d.len() as u64)? };
        Some(b)
    } else {
        None
    };
    let mut bufs = vec![(&fb, f.len() as u64)];
    if let Some(b) = &db {
        bufs.push((b, d.len() as u64));
    }
    pipeline::run(&k, [1, 1, 1].into(), &[], &bufs, false)?;
    let mut out = [0u8; 24];
    // SAFETY: `out` is writable for 12 bytes; elements 3..6 are inside the buffer.
    unsafe { fb.read(12, out.as_mut_ptr(), 12)? };
    let g = |k: usize| f32::from_le_bytes(out[4 * k..4 * k + 4].try_into().expect("4 bytes"));
    let kept32 = g(0).is_nan() && g(1).to_bits() == 0 && g(2).to_bits() == 0;
    let kept64 = match &db {
        Some(b) => {
            // SAFETY: `out` is writable for 24 bytes; elements 3..6 are inside the buffer.
            unsafe { b.read(24, out.as_mut_ptr(), 24)? };
            let g = |k: usize| f64::from_le_bytes(out[8 * k..8 * k + 8].try_into().expect("8"));
            g(0).is_nan() && g(1).to_bits() == 0 && g(2).to_bits() == 0
        }
        None => true,
    };
    Ok([kept32, kept64])
}
