//! Properties of the naga generator's output that the snapshots do not make obvious: the
//! binding ABI, `NoContraction`, capability refusals, entry names and workgroup sizes.

mod naga_support;

use naga_support::*;
use spoc_codegen::naga::{no_contraction, scalar_params_layout, ParamSlot};
use spoc_codegen::{Capabilities, Code, CodegenError, Options, Target};
use spoc_ir::*;
use std::collections::HashSet;

fn gen_with(target: Target, k: &Kernel, caps: Capabilities) -> Result<String, CodegenError> {
    let src = spoc_codegen::generate_source_with(
        target,
        k,
        &Options {
            block: Some([32, 2, 1]),
            soa_params: &[],
            caps,
            checked: false,
        },
    )?
    .expect("a source target");
    Ok(match src.code {
        Code::Text(t) => t,
        Code::SpirV(w) => format!("{} words", w.len()),
    })
}

/// `kernel name(acc: &mut [ty]) { atomic_<op>(acc, 0, value); }`.
fn one_atomic(name: &str, ty: Type, op: AtomicOp, value: Expr) -> Kernel {
    let mut b = B::new();
    let acc = b.buf_mut("acc", ty);
    b.push(StmtKind::Expr(atomic(op, vec![acc, u32c(0), value])));
    b.kernel(name)
}

fn spirv(k: &Kernel) -> Vec<u32> {
    match gen(Target::Vulkan, k).unwrap().code {
        Code::SpirV(w) => w,
        Code::Text(_) => panic!("Vulkan gives SPIR-V"),
    }
}

/// `(opcode, operands)` of every instruction after the header.
fn instructions(words: &[u32]) -> Vec<(u32, Vec<u32>)> {
    let mut out = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        out.push((words[at] & 0xffff, words[at + 1..at + count].to_vec()));
        at += count;
    }
    out
}

#[test]
fn every_float_add_sub_mul_div_is_no_contraction() {
    for (name, k) in corpus() {
        let words = spirv(&k);
        let ins = instructions(&words);
        let arith: HashSet<u32> = ins
            .iter()
            .filter(|(op, _)| [129, 131, 133, 136].contains(op))
            .map(|(_, o)| o[1])
            .collect();
        let decorated: HashSet<u32> = ins
            .iter()
            .filter(|(op, o)| *op == 71 && o.get(1) == Some(&42))
            .map(|(_, o)| o[0])
            .collect();
        assert_eq!(arith, decorated, "{name}: NoContraction set");
        if name == "saxpy" {
            assert_eq!(arith.len(), 2, "saxpy has one FMul and one FAdd");
        }
        // The decorations sit before the first type declaration (annotation section).
        let first_type = ins
            .iter()
            .position(|(op, _)| (19..=39).contains(op))
            .unwrap();
        let last_nc = ins
            .iter()
            .rposition(|(op, o)| *op == 71 && o.get(1) == Some(&42))
            .unwrap_or(0);
        assert!(last_nc < first_type, "{name}: decoration after a type");
    }
}

#[test]
fn no_contraction_leaves_non_spirv_alone() {
    assert_eq!(no_contraction(&[1, 2, 3]), vec![1, 2, 3]);
    let truncated = [0x0723_0203, 0x10500, 0, 10, 0, (5 << 16) | 129, 1];
    assert_eq!(no_contraction(&truncated), truncated.to_vec());
}

#[test]
fn mul_add_is_the_only_fma() {
    // `x.mul_add(y, z)` is one Fma; `x * y + z` is a multiply and an add.
    let mut b = B::new();
    let x = b.param("x", Type::F32, false);
    let y = b.param("y", Type::F32, false);
    let out = b.buf_mut("out", Type::F32);
    b.push(assign(
        at(&out, u32c(0)),
        math(MathFn::MulAdd, vec![x.clone(), y.clone(), f32c(1.0)]),
    ));
    b.push(assign(at(&out, u32c(1)), add(mul(x, y), f32c(1.0))));
    let words = spirv(&b.kernel("fma"));
    // GLSL.std.450 Fma is extended instruction 50: `OpExtInst %ty %id %set 50 …`.
    let fmas = instructions(&words)
        .iter()
        .filter(|(op, o)| *op == 12 && o.get(3) == Some(&50))
        .count();
    assert_eq!(fmas, 1);
    let saxpy_fmas = instructions(&spirv(&saxpy()))
        .iter()
        .filter(|(op, o)| *op == 12 && o.get(3) == Some(&50))
        .count();
    assert_eq!(saxpy_fmas, 0, "a * x + y stays a multiply and an add");
}

#[test]
fn bindings_follow_the_documented_abi() {
    let wgsl = gen(Target::WebGpu, &saxpy()).unwrap();
    let t = wgsl.text().unwrap();
    spoc_testkit::assert_contains_all(
        t,
        &[
            "@group(0) @binding(0) \nvar<storage> spoc_params: saxpy_params;",
            "@group(0) @binding(1) \nvar<storage> x: array<f32>;",
            "@group(0) @binding(2) \nvar<storage, read_write> y: array<f32>;",
            "@workgroup_size(64, 1, 1)",
        ],
    );
    // No scalar parameter: no block, buffers still from binding 1.
    let mut b = B::new();
    let out = b.buf_mut("out", Type::U32);
    b.push(assign(at(&out, gid()), u32c(1)));
    let t = gen(Target::WebGpu, &b.kernel("only_buf")).unwrap();
    let t = t.text().unwrap();
    assert!(!t.contains("spoc_params"), "{t}");
    assert!(
        t.contains("@group(0) @binding(1) \nvar<storage, read_write> out: array<u32>;"),
        "{t}"
    );
    // Metal: scalar block at buffer(0), buffers from 1, the sizes buffer after them.
    let msl = gen(Target::Metal, &saxpy()).unwrap();
    let t = msl.text().unwrap();
    assert!(t.contains("spoc_params [[buffer(0)]]"), "{t}");
    assert!(t.contains("x [[buffer(1)]]"), "{t}");
    assert!(t.contains("y [[buffer(2)]]"), "{t}");
    assert!(t.contains("_buffer_sizes [[buffer(3)]]"), "{t}");
}

#[test]
fn scalar_block_layout_is_repr_c_with_u32_bools() {
    let mut b = B::new();
    b.param("flag", Type::BOOL, false);
    b.buf("x", Type::F32);
    b.param("d", Type::F64, false);
    b.param("n", Type::I32, false);
    b.param("p", Type::Record("P".into()), false);
    b.param("h", Type::F16, false);
    let mut k = b.kernel("layout");
    k.records = vec![record("P", &[("a", Type::U32), ("b", Type::F64)])];
    let (slots, size) = scalar_params_layout(Target::Vulkan, &k).unwrap();
    let expect = |param, name: &str, offset, size| ParamSlot {
        param,
        name: name.into(),
        offset,
        size,
    };
    assert_eq!(
        slots,
        vec![
            expect(0, "flag", 0, 4),
            expect(2, "d", 8, 8),
            expect(3, "n", 16, 4),
            expect(4, "p", 24, 16),
            expect(5, "h", 40, 2),
        ]
    );
    assert_eq!(size, 48);
    // And the generated struct has those offsets (std430 = repr(C) here).
    let msl = gen(Target::Vulkan, &k).unwrap();
    let Code::SpirV(words) = msl.code else {
        panic!()
    };
    let offsets: Vec<u32> = instructions(&words)
        .iter()
        .filter(|(op, o)| *op == 72 && o.get(2) == Some(&35))
        .map(|(_, o)| o[3])
        .collect();
    for off in [0, 8, 16, 24, 40] {
        assert!(offsets.contains(&off), "offset {off} in {offsets:?}");
    }
}

#[test]
fn bool_in_memory_is_refused() {
    let mut b = B::new();
    let out = b.buf_mut("out", Type::BOOL);
    b.push(assign(at(&out, gid()), boolc(true)));
    let e = gen(Target::Vulkan, &b.kernel("bools")).unwrap_err();
    assert!(
        matches!(&e, CodegenError::Unsupported { node, .. } if node.contains("`out`")),
        "{e}"
    );
    let mut b = B::new();
    b.param("p", Type::Record("Q".into()), false);
    let mut k = b.kernel("bool_rec");
    k.records = vec![record("Q", &[("ok", Type::BOOL)])];
    let e = gen(Target::Vulkan, &k).unwrap_err();
    assert!(matches!(e, CodegenError::Unsupported { .. }), "{e}");
}

fn unsupported(r: Result<String, CodegenError>) -> (String, String) {
    match r {
        Err(CodegenError::Unsupported {
            node, capability, ..
        }) => (node, capability),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn capabilities_are_checked_with_typed_errors() {
    let none = Capabilities {
        fp64: false,
        int64_atomics: false,
        float_atomic_add: false,
        subgroups: false,
        compute_capability: None,
        float_controls_ignored: false,
        unfused_fma_f32: false,
        inline_ptx: false,
    };
    let (node, cap) = unsupported(gen_with(Target::Vulkan, &doubles(), none.clone()));
    assert!(
        node.contains("f64") && cap.contains("shaderFloat64"),
        "{node} / {cap}"
    );
    assert!(gen_with(Target::Vulkan, &doubles(), full_caps()).is_ok());

    let (node, cap) = unsupported(gen_with(Target::Vulkan, &warp(), none.clone()));
    assert!(
        node.contains("shuffle") && cap.contains("subgroup"),
        "{node} / {cap}"
    );

    // Float atomic add: the capability, and never on WebGPU.
    let k = one_atomic("fadd", Type::F32, AtomicOp::Add, f32c(1.0));
    unsupported(gen_with(Target::Vulkan, &k, none.clone()));
    assert!(gen_with(Target::Vulkan, &k, full_caps()).is_ok());
    let (_, cap) = unsupported(gen_with(Target::WebGpu, &k, full_caps()));
    assert!(cap.contains("standard WGSL does not have"), "{cap}");

    // 64-bit atomics.
    let k = one_atomic("max64", Type::U64, AtomicOp::Max, u64c(1));
    let (node, cap) = unsupported(gen_with(Target::Vulkan, &k, none.clone()));
    assert!(
        node.contains("atomic_max") && cap.contains("int64_atomics"),
        "{node} / {cap}"
    );
    assert!(gen_with(Target::Vulkan, &k, full_caps()).is_ok());

    // f64 transcendentals are 32-bit only in GLSL.std.450.
    let mut b = B::new();
    let y = b.buf_mut("y", Type::F64);
    b.push(assign(at(&y, u32c(0)), math(MathFn::Exp, vec![f64c(1.0)])));
    let (node, _) = unsupported(gen_with(Target::Vulkan, &b.kernel("exp64"), full_caps()));
    assert!(node.contains("f64::exp"), "{node}");
}

#[test]
fn target_limits_are_typed_errors() {
    // 64-bit integers: none in standard WGSL, none in naga's GLSL.
    for t in [Target::WebGpu, Target::Glsl] {
        let (node, _) = unsupported(gen_with(t, &int_ops(), full_caps()));
        assert!(node.contains("i64"), "{node}");
    }
    // Fences on WebGPU and Metal.
    for t in [Target::WebGpu, Target::Metal] {
        let (node, _) = unsupported(gen_with(t, &shared_atomics(), full_caps()));
        assert!(node.contains("memory fence"), "{node}");
    }
    // Dynamic shared memory: a specialization constant on Vulkan, refused by the text targets.
    let mut b = B::new();
    let out = b.buf_mut("out", Type::F32);
    let dynamic = b.shared("scratch", Type::F32, None);
    b.push(assign(at(&dynamic, tid()), f32c(1.0)));
    b.push(assign(
        at(&out, gid()),
        add(idx(&dynamic, tid()), cast(len(&dynamic), ScalarType::F32)),
    ));
    let k = b.kernel("dyn");
    for t in [Target::WebGpu, Target::Metal, Target::Glsl] {
        let (node, _) = unsupported(gen_with(t, &k, full_caps()));
        assert!(node.contains("scratch"), "{node}");
    }
    let words = spirv(&k);
    let ins = instructions(&words);
    let spec = ins
        .iter()
        .find(|(op, _)| *op == 50)
        .expect("an OpSpecConstant");
    let id = spec.1[1];
    assert!(ins
        .iter()
        .any(|(op, o)| *op == 71 && o[0] == id && o[1] == 1 && o[2] == 0));
    // Both the array type and `len()` use it.
    assert!(
        ins.iter().any(|(op, o)| *op == 28 && o[2] == id),
        "OpTypeArray of the spec constant"
    );
}

#[test]
fn zero_block_dimension_and_soa_are_refused() {
    let e =
        spoc_codegen::generate_source(Target::Vulkan, &saxpy(), Some([64, 0, 1]), &[]).unwrap_err();
    assert!(matches!(e, CodegenError::FeatureNotSupported { .. }), "{e}");
    let e = spoc_codegen::generate_source(Target::Vulkan, &saxpy(), None, &["x"]).unwrap_err();
    assert!(matches!(e, CodegenError::FeatureNotSupported { .. }), "{e}");
}

#[test]
fn entry_names_and_default_block() {
    let k = saxpy();
    for (t, entry) in [
        (Target::Vulkan, "saxpy"),
        (Target::WebGpu, "saxpy"),
        (Target::Metal, "saxpy"),
        (Target::Glsl, "main"),
    ] {
        let src = spoc_codegen::generate_source(t, &k, None, &[])
            .unwrap()
            .unwrap();
        assert_eq!(src.entry, entry, "{t:?}");
        assert_eq!(src.target, t);
    }
    let wgsl = spoc_codegen::generate_source(Target::WebGpu, &k, None, &[])
        .unwrap()
        .unwrap();
    assert!(wgsl.text().unwrap().contains("@workgroup_size(1, 1, 1)"));
    // A kernel named like a reserved word of the language gets a renamed entry, reported.
    let mut k = saxpy();
    k.name = "main".into();
    let src = spoc_codegen::generate_source(Target::Metal, &k, None, &[])
        .unwrap()
        .unwrap();
    assert_ne!(src.entry, "main");
    assert!(src
        .text()
        .unwrap()
        .contains(&format!("kernel void {}(", src.entry)));
}

#[test]
fn for_loops_check_the_remaining_distance_before_stepping() {
    let t = gen(Target::WebGpu, &local_arrays()).unwrap();
    let t = t.text().unwrap().to_string();
    // `for i in 0..8`: compare `8 - i` with the step, then step; the flag is a local.
    assert!(t.contains("((8u - _e"), "{t}");
    assert!(t.contains("<= 1u) || (1u == 0u))"), "{t}");
    assert!(
        t.contains("break if spoc_tmp") || t.contains("break if _e"),
        "{t}"
    );
}

#[test]
fn signed_division_guards_min_over_minus_one() {
    let t = gen(Target::Metal, &int_ops()).unwrap();
    let t = t.text().unwrap().to_string();
    assert!(t.contains("== (-2147483647 - 1)) && (_e"), "{t}");
    // GLSL: signed % as a - (a / b) * b (GLSL's % is undefined for negative operands).
    let mut b = B::new();
    let a = b.param("a", Type::I32, false);
    let d = b.param("d", Type::I32, false);
    let out = b.buf_mut("out", Type::I32);
    b.push(assign(at(&out, u32c(0)), bin(BinOp::Rem, a, d)));
    let g = gen(Target::Glsl, &b.kernel("rem")).unwrap();
    assert!(!g.text().unwrap().contains(" % "), "{}", g.text().unwrap());
}

#[test]
fn float_ne_is_not_ordered() {
    // `x != y` must be true for NaN: `!(x == y)`, never SPIR-V's OpFOrdNotEqual (181).
    let words = spirv(&math_fns());
    assert!(!instructions(&words).iter().any(|(op, _)| *op == 181));
}

#[test]
fn wgsl_enables_the_extensions_it_uses() {
    let mut k = warp();
    k.body.retain(|s| s.kind != StmtKind::WarpBarrier);
    let (node, _) = unsupported(gen_with(Target::WebGpu, &k, full_caps()));
    assert!(
        node.contains("lane_id") && node.contains("[32, 2, 1]"),
        "{node}"
    );
    let t = gen(Target::WebGpu, &k).unwrap();
    let t = t.text().unwrap();
    assert!(t.starts_with("enable subgroups;\n"), "{t}");
    assert!(t.contains("subgroupShuffleDown("), "{t}");
    let t = gen(Target::WebGpu, &halves()).unwrap();
    let t = t.text().unwrap();
    assert!(t.contains("enable f16;"), "{t}");
    assert!(!t.contains("enable subgroups;"), "{t}");
}
