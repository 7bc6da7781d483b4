//! Vector lanes and whole-vector memory moves through the C generators (CUDA C, HIP, OpenCL C):
//! the kernels of `vector_lanes_ir`, in plain and checked mode, compiled by the real toolchains
//! (clang for OpenCL C 1.2 and CUDA C, hipcc for HIP; a missing tool is a skip unless
//! `SPOC_REQUIRE_TOOLCHAINS=1`). 2- and 4-lane typedefs carry the alignment of
//! `spoc_ir::layout`, so that NVRTC moves a whole `spoc_f32x4` with one 128-bit access, and
//! records holding vectors get the IR's offsets (checked with `_Static_assert`/`offsetof` under
//! clang's OpenCL C).

mod support;
mod vector_lanes_ir;

use spoc_codegen::Target;
use support::{gen, gen_with, toolchains, TARGETS};
use vector_lanes_ir::*;

#[test]
fn vector_typedefs_are_aligned_like_the_ir_layout() {
    for t in TARGETS {
        let src = gen(t, &swap_scale());
        assert!(
            src.contains("typedef struct __attribute__((aligned(16))) { float x; float y; float z; float w; } spoc_f32x4;"),
            "{t:?}:\n{src}"
        );
        let src = gen(t, &pairs());
        let u = if t == Target::OpenCl {
            "uint"
        } else {
            "unsigned int"
        };
        assert!(
            src.contains(&format!(
                "typedef struct __attribute__((aligned(8))) {{ {u} x; {u} y; }} spoc_u32x2;"
            )),
            "{t:?}:\n{src}"
        );
    }
}

#[test]
fn lanes_are_read_and_written_as_members() {
    for t in TARGETS {
        let src = gen(t, &swap_scale());
        assert!(src.contains("v.w"), "{t:?}: no lane read:\n{src}");
        assert!(
            src.contains("y[") && src.contains("].y = "),
            "{t:?}: no lane store:\n{src}"
        );
        assert!(src.contains("t.z = "), "{t:?}: no local lane store:\n{src}");
        let src = gen(t, &tile_rotate());
        assert!(
            src.contains("].w = "),
            "{t:?}: no shared lane store:\n{src}"
        );
        let src = gen(t, &tagged());
        assert!(
            src.contains(".v.y = "),
            "{t:?}: no record-field lane store:\n{src}"
        );
    }
}

/// Every kernel, plain and checked, compiles; the OpenCL C of `tagged` also asserts the
/// record's layout (`v` at 16, size 32, as `spoc_ir::layout` says) at compile time.
#[test]
fn vector_kernels_compile_with_real_toolchains() {
    let l = spoc_ir::layout::Layouts::of(&tagged())
        .record("Tagged")
        .unwrap();
    assert_eq!((l.offsets[1], l.layout.size, l.layout.align), (16, 32, 16));
    let mut sources = Vec::new();
    for (name, k) in all() {
        spoc_ir::validate(&k).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        for t in TARGETS {
            let mut src = gen(t, &k);
            if name == "tagged" && t == Target::OpenCl {
                src.push_str(&format!(
                    "\n_Static_assert(__builtin_offsetof(Tagged, v) == {}, \"offset of v\");\n\
                     _Static_assert(sizeof(Tagged) == {}, \"size of Tagged\");\n\
                     _Static_assert(_Alignof(Tagged) == {}, \"alignment of Tagged\");\n",
                    l.offsets[1], l.layout.size, l.layout.align
                ));
            }
            sources.push((name.to_string(), t, src));
            let checked = gen_with(t, &k, true);
            assert!(
                checked.contains("spoc_fault"),
                "{name} {t:?}: no fault record"
            );
            sources.push((format!("{name}_checked"), t, checked));
        }
    }
    toolchains::check_all("vector_lanes", &sources);
}

/// The alignment is what makes whole-vector copies one 128-bit access: clang's CUDA device
/// compiler (standing in for NVRTC, which reads the same attribute) turns `swap_scale`'s
/// `f32x4` load and stores into `ld.global.v4.f32` / `st.global.v4.f32`.
#[test]
fn whole_f32x4_copies_are_128_bit_accesses() {
    let Some(clang) = toolchains::clang() else {
        assert!(!toolchains::required(), "clang not found");
        eprintln!("SKIPPED: clang not found");
        return;
    };
    let dir = toolchains::work_dir("vector_lanes_ptx");
    let cu = dir.join("swap_scale.cu");
    let decls = dir.join("cuda_decls.h");
    std::fs::write(&cu, gen(Target::CudaC, &swap_scale())).unwrap();
    std::fs::write(&decls, toolchains::CUDA_DECLS).unwrap();
    let ptx = dir.join("swap_scale.ptx");
    toolchains::run_ok(
        std::process::Command::new(&clang)
            .args(["-x", "cuda", "--cuda-gpu-arch=sm_90", "--cuda-device-only"])
            .args(["-nocudainc", "-nocudalib", "-O2", "-S", "-include"])
            .arg(&decls)
            .arg(&cu)
            .arg("-o")
            .arg(&ptx),
    );
    let ptx = std::fs::read_to_string(&ptx).unwrap();
    let count = |op: &str| ptx.lines().filter(|l| l.contains(op)).count();
    assert_eq!(count("ld.global.v4.f32"), 1, "{ptx}");
    assert_eq!(count("st.global.v4.f32"), 2, "{ptx}");
    assert_eq!(count("ld.global.f32"), 0, "{ptx}");
}
