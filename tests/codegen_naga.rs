//! The naga generators on kernels written with `#[kernel]`: each kernel is lowered by the macro
//! and generated as SPIR-V (checked by `spirv-val --target-env vulkan1.2`), WGSL, MSL and GLSL
//! (checked by `glslangValidator`). A missing tool is a skip with a message, a failure with
//! `SPOC_REQUIRE_TOOLCHAINS=1` (Debian packages `spirv-tools`, `glslang-tools`).

/// Kernels and helpers shared with the other generator tests.
mod codegen_kernels;

#[path = "../spoc-codegen/tests/support/toolchains.rs"]
mod toolchains;

/// The kernels the examples share (one definition for the examples and the tests).
#[path = "../examples/programs/kernels.rs"]
#[allow(dead_code)]
mod shared_kernels;

use codegen_kernels::{
    block_reduce, int_semantics_naga as int_semantics, uses_helpers_naga as uses_helpers,
};
use shared_kernels::saxpy;
use spoc::prelude::*;
use spoc_codegen::{generate_source_with, Capabilities, Code, CodegenError, Options, Target};

#[kernel]
fn floats(x: &[f32], y: &mut [f32], ints: &mut [i32]) {
    let i = global_id_x();
    if i < x.len() {
        let v = x[i];
        y[i] = v / 3.0 + v.sqrt() + v.round() + (v % 1.5) + v.mul_add(2.0, 1.0) + v.max(0.5);
        ints[i] = v as i32 + (v * 1e10) as i32;
    }
}

fn kernels() -> Vec<(&'static str, &'static spoc::ir::Kernel)> {
    codegen_kernels::named_irs![saxpy, int_semantics, uses_helpers, floats, block_reduce]
}

fn generate(t: Target, k: &spoc::ir::Kernel) -> Result<spoc_codegen::Source, CodegenError> {
    let mut caps = Capabilities::for_target(t);
    caps.fp64 = !matches!(t, Target::Metal | Target::WebGpu);
    let opts = Options {
        block: Some([64, 1, 1]),
        soa_params: &[],
        caps,
        checked: false,
    };
    Ok(generate_source_with(t, k, &opts)?.expect("a source target"))
}

#[test]
fn spirv_of_macro_kernels_passes_spirv_val() {
    let dir = toolchains::work_dir("codegen-naga-spirv");
    for (name, k) in kernels() {
        let src = generate(Target::Vulkan, k).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Code::SpirV(words) = &src.code else {
            panic!("{name}: SPIR-V expected")
        };
        assert_eq!(src.entry, name);
        if toolchains::or_skip(toolchains::spirv_val()).is_none() {
            return;
        }
        toolchains::check_spirv(&dir, name, words).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn glsl_of_macro_kernels_compiles() {
    let dir = toolchains::work_dir("codegen-naga-glsl");
    for (name, k) in kernels() {
        let src = generate(Target::Glsl, k).unwrap_or_else(|e| panic!("{name}: {e}"));
        if toolchains::or_skip(toolchains::glslang()).is_none() {
            return;
        }
        toolchains::check_glsl(&dir, name, src.text().unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn wgsl_and_msl_of_macro_kernels() {
    for (name, k) in kernels() {
        for t in [Target::WebGpu, Target::Metal] {
            let src = generate(t, k).unwrap_or_else(|e| panic!("{t:?} {name}: {e}"));
            let text = src.text().unwrap();
            match t {
                Target::WebGpu => {
                    assert!(
                        text.contains("@compute @workgroup_size(64, 1, 1)"),
                        "{text}"
                    );
                    assert!(text.contains(&format!("fn {}(", src.entry)), "{text}");
                }
                _ => {
                    assert!(text.contains("#pragma METAL fp contract(off)"), "{text}");
                    assert!(
                        text.contains(&format!("kernel void {}(", src.entry)),
                        "{text}"
                    );
                }
            }
        }
    }
    // Float division goes through the correctly rounded routine on every target.
    let wgsl = generate(Target::WebGpu, floats.ir().unwrap()).unwrap();
    assert!(wgsl.text().unwrap().contains("spoc_div_f32"));
}
