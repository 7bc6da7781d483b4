//! The 16-bit float types in generated code: `f16`/`bf16` kernels written in the kernel
//! language (lowered in-process by `spoc-frontend`), their PTX for the targets with and without
//! `cvt.rn.bf16.f32` (sm_80 and newer, PTX ISA 7.0) assembled by NVIDIA's `ptxas` for each, and
//! the C targets' conversion helpers. The values are checked on every device by the root
//! crate's `tests/half_floats.rs`.

mod support;

use spoc_codegen::{generate_source_with, Capabilities, CodegenError, Options, Target};
use spoc_testkit::toolchains::{ptxas_and_scratch_dir, ptxas_report};

const KERNEL: &str = r#"
fn halves(a: &[f16], b: &[bf16], x: &[f32], h: &mut [f16], g: &mut [bf16], y: &mut [f32]) {
    let i = global_id_x();
    if i < a.len() {
        let s = shared_array::<bf16, 32>();
        s[thread_idx_x() % 32] = b[i];
        h[i] = a[i] * a[i] + f16::from_f32(x[i]);
        g[i] = bf16::from_f32(x[i]) - s[thread_idx_x() % 32];
        y[i] = a[i].to_f32() + b[i].to_f32();
        if a[i] < f16::from_f32(0.0) {
            g[i] = -g[i];
        }
        let m = if a[i] < f16::ZERO { a[i] } else { f16::MAX };
        h[i] = m;
    }
}
"#;

fn kernel() -> spoc_ir::Kernel {
    spoc_frontend::lower_kernel_source(KERNEL).unwrap_or_else(|e| panic!("{e:?}"))
}

fn source(target: Target, cc: Option<(u32, u32)>) -> Result<String, CodegenError> {
    let mut caps = Capabilities::for_target(target);
    caps.compute_capability = cc;
    let src = generate_source_with(
        target,
        &kernel(),
        &Options {
            block: None,
            soa_params: &[],
            caps,
            checked: false,
        },
    )?
    .expect("a source target");
    Ok(src.text().expect("text").to_string())
}

#[test]
fn the_ir_computes_in_f32_between_conversions() {
    let k = kernel();
    let text = k.to_string();
    // No operator is left on a 16-bit value: every one is between casts to and from f32.
    assert!(!spoc_ir::half::has_half_arithmetic(&k.body), "{text}");
    spoc_ir::validate(&k).unwrap();
    assert!(text.contains("bf16"), "{text}");
}

/// sm_80 and newer convert with the instruction; older targets with the integer sequence, whose
/// NaN test and carry are there. bf16 to f32 is a shift everywhere.
#[test]
fn ptx_uses_cvt_rn_bf16_from_sm_80() {
    for (cc, native) in [
        (Some((9, 0)), true),
        (Some((8, 0)), true),
        (None, false),
        (Some((7, 5)), false),
        (Some((5, 2)), false),
    ] {
        let ptx = source(Target::CudaPtx, cc).unwrap();
        assert_eq!(ptx.contains("cvt.rn.bf16.f32"), native, "{cc:?}:\n{ptx}");
        assert!(ptx.contains("cvt.rn.f16.f32"), "{cc:?}");
        assert!(ptx.contains("cvt.f32.f16"), "{cc:?}");
        assert!(ptx.contains("shl.b32"), "{cc:?}: bf16 to f32 is a shift");
        if !native {
            assert!(ptx.contains("0x7FFF"), "{cc:?}: the rounding carry\n{ptx}");
            assert!(ptx.contains("0x7F800000"), "{cc:?}: the NaN test\n{ptx}");
        }
    }
}

/// `ptxas` (11.8) assembles the PTX of each target for that target's architecture.
#[test]
fn ptx_assembles_for_every_target() {
    let Some((ptxas, dir)) = ptxas_and_scratch_dir("assembling f16/bf16 PTX") else {
        return;
    };
    for (cc, arch) in [
        ((9, 0), "sm_90"),
        ((8, 0), "sm_80"),
        ((7, 0), "sm_70"),
        ((5, 2), "sm_52"),
    ] {
        let ptx = source(Target::CudaPtx, Some(cc)).unwrap();
        match ptxas_report(&ptxas, &dir, &format!("halves_{arch}"), arch, &ptx) {
            Ok(diag) => assert!(!diag.contains("warning"), "{arch}: ptxas warned:\n{diag}"),
            Err(diag) => panic!("{arch}: ptxas rejected the PTX:\n{diag}\n{ptx}"),
        }
    }
}

/// CUDA C and OpenCL C convert with spoc's prelude functions on `unsigned short` bits: no
/// `cuda_fp16.h`, so NVRTC needs no include path.
#[test]
fn c_targets_convert_with_prelude_functions() {
    for target in [Target::CudaC, Target::OpenCl] {
        let c = source(target, None).unwrap();
        for f in [
            "spoc_f32_to_bf16",
            "spoc_bf16_to_f32",
            "spoc_f32_to_f16",
            "spoc_f16_to_f32",
        ] {
            assert!(c.contains(f), "{target:?}: no {f}\n{c}");
        }
        assert!(
            !c.contains("cuda_fp16") && !c.contains("__half"),
            "{target:?}"
        );
    }
}

/// The C sources compile with the real toolchains (clang: OpenCL C 1.2 and CUDA C for sm_90;
/// hipcc: HIP), in plain and checked mode; a missing tool is skipped with a message.
#[test]
fn c_sources_compile_with_real_toolchains() {
    let k = kernel();
    let mut sources = Vec::new();
    for t in support::TARGETS {
        for checked in [false, true] {
            let name = format!("halves{}", if checked { "_checked" } else { "" });
            sources.push((name, t, support::gen_with(t, &k, checked)));
        }
    }
    support::toolchains::check_all("halves", &sources);
}

/// Vulkan (naga) has no type to hold `bf16` in: a typed refusal naming it. `f16` alone is fine
/// where the device has 16-bit storage.
#[test]
fn vulkan_refuses_bf16_by_name() {
    match source(Target::Vulkan, None) {
        Err(CodegenError::Unsupported { node, .. }) => assert!(node.contains("bf16"), "{node}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}
