//! Vector lanes and whole-vector memory moves through the naga generator: the kernels of
//! `vector_lanes_ir` as SPIR-V (checked by `spirv-val` when installed), run on a Vulkan device
//! (lavapipe on CI) with every value compared exactly; WGSL and MSL are generated too, and the
//! WGSL shows `vec4<f32>` buffers (stride 16) and lane accesses.
//!
//! Without a Vulkan device the run tests say so and pass, unless `SPOC_REQUIRE_TOOLCHAINS=1`
//! or `SPOC_REQUIRE_BACKENDS` names `vulkan`.

mod naga_support;
mod naga_vk;
#[path = "support/toolchains.rs"]
mod toolchains;
mod vector_lanes_ir;

use naga_support::full_caps;
use naga_vk::{bytes_of, from_bytes};
use spoc_codegen::{Code, Options, Target};
use spoc_ir::Kernel;
use vector_lanes_ir::*;

fn generate(target: Target, k: &Kernel) -> spoc_codegen::Source {
    generate_with(target, k, false)
}

/// [`generate`], in checked mode (bounds checks, the fault record) when `checked`.
fn generate_with(target: Target, k: &Kernel, checked: bool) -> spoc_codegen::Source {
    spoc_ir::validate(k).unwrap_or_else(|e| panic!("{}: {e:?}", k.name));
    spoc_codegen::generate_source_with(
        target,
        k,
        &Options {
            block: Some([BLOCK, 1, 1]),
            soa_params: &[],
            caps: full_caps(),
            checked,
        },
    )
    .unwrap_or_else(|e| panic!("{} for {target:?}: {e}", k.name))
    .unwrap()
}

fn spirv(k: &Kernel) -> (Vec<u32>, String) {
    let src = generate(Target::Vulkan, k);
    let Code::SpirV(words) = src.code else {
        panic!("SPIR-V expected")
    };
    (words, src.entry)
}

/// Runs `k` over one block with the given buffer contents (no scalar parameters); `None`
/// without a device.
fn launch(k: &Kernel, buffers: Vec<Vec<u8>>) -> Option<Vec<Vec<u8>>> {
    let (words, entry) = spirv(k);
    let bound: Vec<(u32, Vec<u8>)> = buffers
        .into_iter()
        .enumerate()
        .map(|(j, b)| (spoc_codegen::naga::buffer_binding(j), b))
        .collect();
    Some(
        naga_vk::with_device(&k.name, |vk| vk.run(&words, &entry, &bound, [1, 1, 1]))?
            .unwrap_or_else(|e| panic!("{}: {e}", k.name)),
    )
}

fn assert_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what}[{}].{}: got {g}, want {w}",
            i / 4,
            ["x", "y", "z", "w"][i % 4]
        );
    }
}

#[test]
fn every_kernel_validates_and_translates() {
    let dir = toolchains::work_dir("vector_lanes_naga");
    let val = toolchains::spirv_val();
    for (name, k) in all() {
        let (words, _) = spirv(&k);
        match &val {
            Ok(_) => toolchains::check_spirv(&dir, name, &words).unwrap_or_else(|e| panic!("{e}")),
            Err(why) if toolchains::required() => panic!("{why}"),
            Err(why) => eprintln!("SKIPPED spirv-val of {name}: {why}"),
        }
        // Checked mode: the lane accesses under bounds checks.
        let Code::SpirV(checked) = generate_with(Target::Vulkan, &k, true).code else {
            panic!("SPIR-V expected")
        };
        if val.is_ok() {
            let n = format!("{name}_checked");
            toolchains::check_spirv(&dir, &n, &checked).unwrap_or_else(|e| panic!("{e}"));
        }
        for t in [Target::WebGpu, Target::Metal] {
            let src = generate(t, &k);
            let Code::Text(text) = src.code else {
                panic!("{name} {t:?}: text expected")
            };
            assert!(!text.is_empty());
            if t == Target::WebGpu && name != "pairs" {
                assert!(text.contains("vec4<f32>"), "{name}: no vec4<f32>:\n{text}");
            }
        }
    }
}

/// The buffers of vectors are arrays of `vec4<f32>` / `vec2<u32>` (std430 strides 16 and 8),
/// and a lane write goes through the element's pointer.
#[test]
fn wgsl_uses_vector_types_and_lane_accesses() {
    let Code::Text(w) = generate(Target::WebGpu, &swap_scale()).code else {
        panic!()
    };
    assert!(w.contains("array<vec4<f32>>"), "{w}");
    assert!(w.contains(".y = "), "no lane store:\n{w}");
    let Code::Text(w) = generate(Target::WebGpu, &pairs()).code else {
        panic!()
    };
    assert!(w.contains("array<vec2<u32>>"), "{w}");
    let Code::Text(w) = generate(Target::WebGpu, &tagged()).code else {
        panic!()
    };
    assert!(w.contains("v: vec4<f32>"), "{w}");
}

/// `Tagged { id: u32, v: f32x4 }`: `v` at 16, size 32, in `spoc_ir::layout`, which the naga
/// struct follows.
#[test]
fn record_with_a_vector_field_has_the_ir_layout() {
    let k = tagged();
    let l = spoc_ir::layout::Layouts::of(&k).record("Tagged").unwrap();
    assert_eq!(l.offsets, vec![0, 16]);
    assert_eq!(l.layout.size, 32);
    assert_eq!(l.layout.align, 16);
    let n = BLOCK as usize;
    let Some(out) = launch(&k, vec![vec![0xee; n * 32]]) else {
        return;
    };
    for g in 0..n {
        let rec = &out[0][32 * g..32 * (g + 1)];
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), g as u32);
        assert_eq!(
            from_bytes::<f32>(&rec[16..32]),
            [g as f32, g as f32 * 0.5, 2.0, 3.0],
            "out[{g}].v"
        );
    }
}

#[test]
fn f32x4_lanes_swapped_and_scaled() {
    let x = input_f32x4();
    let n = BLOCK as usize;
    let Some(out) = launch(
        &swap_scale(),
        vec![bytes_of(&x), vec![0; n * 16], vec![0; n * 16]],
    ) else {
        return;
    };
    let (y, z) = want_swap_scale(&x);
    assert_bits(&from_bytes::<f32>(&out[1]), &y, "y");
    assert_bits(&from_bytes::<f32>(&out[2]), &z, "z");
}

#[test]
fn u32x2_copy_and_lane_writes() {
    let a = input_u32x2();
    let n = BLOCK as usize;
    let Some(out) = launch(&pairs(), vec![bytes_of(&a), vec![0; n * 8]]) else {
        return;
    };
    assert_eq!(from_bytes::<u32>(&out[1]), want_pairs(&a));
}

#[test]
fn shared_array_of_f32x4() {
    let x = input_f32x4();
    let n = BLOCK as usize;
    let Some(out) = launch(&tile_rotate(), vec![bytes_of(&x), vec![0; n * 16]]) else {
        return;
    };
    assert_bits(&from_bytes::<f32>(&out[1]), &want_tile_rotate(&x), "out");
}
