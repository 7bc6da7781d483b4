//! Measurements made once per device when it is opened.

use super::device::VkDev;
use super::memory::VkBuffer;
use super::pipeline;
use spoc_codegen::abi::{Abi, AbiParam, ParamKind};
use std::sync::Arc;

/// Compiles the GLSL compute shader `body` (an `f32` buffer `f` at binding 1 and, with `d`, an
/// `f64` buffer `d` at binding 2; one invocation), post-processes its SPIR-V with `fix`, runs it
/// once on buffers holding `f` and `d`, and returns their contents afterwards.
fn run_probe(
    dev: &Arc<VkDev>,
    name: &str,
    body: &str,
    fix: impl Fn(&[u32]) -> Vec<u32>,
    f: &[f32],
    d: Option<&[f64]>,
) -> Result<(Vec<f32>, Option<Vec<f64>>), String> {
    let mut src = String::from(
        "#version 450\nlayout(local_size_x = 1) in;\n\
         layout(set = 0, binding = 1) buffer F { float f[]; };\n",
    );
    if d.is_some() {
        src.push_str("layout(set = 0, binding = 2) buffer D { double d[]; };\n");
    }
    src.push_str(&format!("void main() {{\n{body}}}\n"));
    let v = super::spv::max_spirv_for(dev.props.api_version).min((1, 5));
    let c = super::glsl::compile(&src, (v.0 as u8, v.1 as u8))?;
    let words = fix(&c.words);
    let buffer = || AbiParam {
        name: String::new(),
        kind: ParamKind::Buffer {
            mutable: true,
            elem_bytes: 0,
        },
    };
    let params = (0..1 + d.is_some() as usize).map(|_| buffer()).collect();
    let k = pipeline::build(
        dev,
        &words,
        &c.entry,
        name,
        [1, 1, 1],
        None,
        Abi::external_bindings(params),
        None,
    )?;
    let fb: Vec<u8> = f.iter().flat_map(|v| v.to_le_bytes()).collect();
    let db: Option<Vec<u8>> = d.map(|d| d.iter().flat_map(|v| v.to_le_bytes()).collect());
    let fbuf = VkBuffer::alloc(dev, fb.len() as u64)?;
    // SAFETY: `fb` is readable for its length; the buffer holds that much.
    unsafe { fbuf.write(0, fb.as_ptr(), fb.len() as u64)? };
    let dbuf = match &db {
        Some(db) => {
            let b = VkBuffer::alloc(dev, db.len() as u64)?;
            // SAFETY: as above.
            unsafe { b.write(0, db.as_ptr(), db.len() as u64)? };
            Some(b)
        }
        None => None,
    };
    let mut bufs = vec![(&fbuf, fb.len() as u64)];
    if let (Some(b), Some(db)) = (&dbuf, &db) {
        bufs.push((b, db.len() as u64));
    }
    pipeline::run(&k, [1, 1, 1].into(), &[], &bufs, false)?;
    let mut out = vec![0u8; fb.len()];
    // SAFETY: `out` is writable for the buffer's length.
    unsafe { fbuf.read(0, out.as_mut_ptr(), out.len() as u64)? };
    let f_out = out
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let d_out = match (&dbuf, &db) {
        (Some(b), Some(db)) => {
            let mut out = vec![0u8; db.len()];
            // SAFETY: as above.
            unsafe { b.read(0, out.as_mut_ptr(), out.len() as u64)? };
            Some(
                out.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect(),
            )
        }
        _ => None,
    };
    Ok((f_out, d_out))
}

/// Is GLSL.std.450 `Fma` fused on f32 and on f64 (when the device has f64)? Runs one tiny
/// kernel on `a * b + c` with `a = 1 + 2^-k`, `b = 1 - 2^-k`, `c = -1`: the exact product is
/// `1 - 2^-2k`, which rounds to 1 in the type (k = 13 for f32, 30 for f64), so a fused
/// multiply-add gives `-2^-2k` and an unfused one 0.
///
/// # Errors
/// A failing Vulkan call or compile (the caller then assumes fused, and says so).
pub(crate) fn fused_fma(dev: &Arc<VkDev>) -> Result<(bool, bool), String> {
    let f64_on = dev.props.shader_float64;
    let mut body = String::from("    f[3] = fma(f[0], f[1], f[2]);\n");
    if f64_on {
        body.push_str("    d[3] = fma(d[0], d[1], d[2]);\n");
    }
    let (e32, e64) = (2f32.powi(-13), 2f64.powi(-30));
    let d = [1.0 + e64, 1.0 - e64, -1.0, 7.0];
    let (f, d) = run_probe(
        dev,
        "fma_probe",
        &body,
        |w| w.to_vec(),
        &[1.0 + e32, 1.0 - e32, -1.0, 7.0],
        f64_on.then_some(&d[..]),
    )?;
    let fused64 = d.is_some_and(|d| d[3] == -(e64 * e64));
    Ok((f[3] == -(e32 * e32), fused64))
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
    let mut body =
        String::from("    f[3] = f[0] * 0.0;\n    f[4] = 0.0 - f[1];\n    f[5] = f[2] + 0.0;\n");
    if f64_on {
        body.push_str(
            "    d[3] = d[0] * 0.0lf;\n    d[4] = 0.0lf - d[1];\n    d[5] = d[2] + 0.0lf;\n",
        );
    }
    let fix = |w: &[u32]| {
        let w = spoc_codegen::naga::float_controls(&spoc_codegen::naga::no_contraction(w));
        super::retain_supported_float_controls(&w, &dev.props)
    };
    let d = [f64::NAN, 0.0, -0.0, 7.0, 7.0, 7.0];
    let (f, d) = run_probe(
        dev,
        "ieee_probe",
        &body,
        fix,
        &[f32::NAN, 0.0, -0.0, 7.0, 7.0, 7.0],
        f64_on.then_some(&d[..]),
    )?;
    let kept32 = f[3].is_nan() && f[4].to_bits() == 0 && f[5].to_bits() == 0;
    let kept64 = d.is_none_or(|d| d[3].is_nan() && d[4].to_bits() == 0 && d[5].to_bits() == 0);
    Ok([kept32, kept64])
}
