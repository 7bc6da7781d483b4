//! What the C-family generators refuse (typed errors naming the node and the capability) and
//! the choices that depend on the device's capabilities.

mod support;

use spoc_codegen::{generate_source_with, Capabilities, CodegenError, Options, Target};
use spoc_ir::*;
use support::*;

fn generate(target: Target, k: &Kernel, caps: Capabilities) -> Result<String, CodegenError> {
    let opts = Options {
        block: None,
        soa_params: &[],
        caps,
        checked: false,
    };
    generate_source_with(target, k, &opts).map(|s| {
        s.expect("C targets generate source")
            .text()
            .expect("text")
            .to_string()
    })
}

#[track_caller]
fn unsupported(r: Result<String, CodegenError>, node_has: &str, capability_has: &str) {
    match r {
        Err(CodegenError::Unsupported {
            node, capability, ..
        }) => {
            assert!(node.contains(node_has), "node {node:?} lacks {node_has:?}");
            assert!(
                capability.contains(capability_has),
                "capability {capability:?} lacks {capability_has:?}"
            );
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// `out[0] = x[0] as f64 * 2.0 as f32`-style kernel using f64 in one cast.
fn f64_kernel() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let v = cast(
        mul(cast(idx(&x, u32c(0)), ScalarType::F64), f64c(2.0)),
        ScalarType::F32,
    );
    b.push(assign(at(&out, u32c(0)), v));
    b.kernel("uses_f64")
}

#[test]
fn f64_without_fp64_is_refused_with_the_node() {
    let k = f64_kernel();
    let mut caps = Capabilities::for_target(Target::OpenCl);
    caps.fp64 = false;
    let r = generate(Target::OpenCl, &k, caps);
    unsupported(r, "as f64", "cl_khr_fp64");
    let mut caps = Capabilities::for_target(Target::CudaC);
    caps.fp64 = false;
    unsupported(generate(Target::CudaC, &k, caps), "f64", "fp64");
}

#[test]
fn f64_enables_cl_khr_fp64_only_when_used() {
    let with = generate(
        Target::OpenCl,
        &f64_kernel(),
        Capabilities::for_target(Target::OpenCl),
    )
    .unwrap();
    assert!(with.contains("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"));
    let without = generate(
        Target::OpenCl,
        &saxpy(),
        Capabilities::for_target(Target::OpenCl),
    )
    .unwrap();
    assert!(!without.contains("cl_khr_fp64"), "{without}");
    assert!(without.contains("#pragma OPENCL FP_CONTRACT OFF"));
}

#[test]
fn warp_operations_need_subgroups_on_opencl() {
    let caps = Capabilities::for_target(Target::OpenCl);
    assert!(!caps.subgroups);
    unsupported(
        generate(Target::OpenCl, &warp(), caps),
        "warp operation",
        "cl_khr_subgroups",
    );
    let mut caps = Capabilities::for_target(Target::CudaC);
    caps.subgroups = false;
    unsupported(generate(Target::CudaC, &warp(), caps), "lane_id", "warp");
}

#[test]
fn int64_atomics_need_the_capability() {
    let caps = Capabilities::for_target(Target::OpenCl);
    assert!(!caps.int64_atomics);
    unsupported(
        generate(Target::OpenCl, &shared_atomics(), caps),
        "atomic_add",
        "cl_khr_int64_base_atomics",
    );
}

fn float_add_kernel(elem: Type, value: Expr) -> Kernel {
    let mut b = B::new();
    let sums = b.buf_mut("sums", elem);
    b.push(StmtKind::Expr(atomic(
        AtomicOp::Add,
        vec![sums, u32c(0), value],
    )));
    b.kernel("float_add")
}

#[test]
fn float_atomic_add_is_native_or_a_cas_loop() {
    let k = float_add_kernel(Type::F32, f32c(1.5));
    // CUDA with the capability: the native atomicAdd.
    let native = generate(Target::CudaC, &k, Capabilities::for_target(Target::CudaC)).unwrap();
    assert!(native.contains("atomicAdd(&sums[0u], 1.5f);"), "{native}");
    // Without it: a compare-and-swap loop on the bits.
    let mut caps = Capabilities::for_target(Target::CudaC);
    caps.float_atomic_add = false;
    let cas = generate(Target::CudaC, &k, caps).unwrap();
    assert!(
        cas.contains("spoc_atomic_add_f32(&sums[0u], 1.5f);"),
        "{cas}"
    );
    assert!(cas.contains("atomicCAS(u, old, __float_as_uint(__uint_as_float(old) + v))"));
    // OpenCL 1.2 has no float atomics: always the loop, on 32-bit atomic_cmpxchg.
    let cl = generate(Target::OpenCl, &k, Capabilities::for_target(Target::OpenCl)).unwrap();
    assert!(
        cl.contains("spoc_atomic_add_f32_global(&sums[0u], 1.5f);"),
        "{cl}"
    );
    // CUDA's double atomicAdd needs sm_60: older devices get the loop.
    let k64 = float_add_kernel(Type::F64, f64c(1.5));
    let mut caps = Capabilities::for_target(Target::CudaC);
    caps.compute_capability = Some((5, 2));
    let old = generate(Target::CudaC, &k64, caps.clone()).unwrap();
    assert!(
        old.contains("spoc_atomic_add_f64(&sums[0u], 1.5);"),
        "{old}"
    );
    caps.compute_capability = Some((9, 0));
    let new = generate(Target::CudaC, &k64, caps).unwrap();
    assert!(new.contains("atomicAdd(&sums[0u], 1.5);"), "{new}");
    // f64 on OpenCL needs 64-bit atomics for its loop.
    let k64 = float_add_kernel(Type::F64, f64c(1.5));
    unsupported(
        generate(
            Target::OpenCl,
            &k64,
            Capabilities::for_target(Target::OpenCl),
        ),
        "atomic_add",
        "cl_khr_int64_base_atomics",
    );
}

#[test]
fn soa_parameters_are_refused_by_c_targets() {
    for t in TARGETS {
        let opts = Options {
            block: None,
            soa_params: &["y"],
            caps: Capabilities::for_target(t),
            checked: false,
        };
        assert!(matches!(
            generate_source_with(t, &saxpy(), &opts),
            Err(CodegenError::FeatureNotSupported { .. })
        ));
    }
}

#[test]
fn reserved_names_are_renamed() {
    let mut b = B::new();
    let x = b.buf_mut("sqrtf", Type::F32);
    let v = b.local("kernel", Type::F32, false);
    b.let_(&v, math(MathFn::Sqrt, vec![idx(&x, u32c(0))]));
    b.push(assign(at(&x, u32c(0)), v));
    let k = b.kernel("kernel");
    for t in TARGETS {
        let opts = Options {
            block: None,
            soa_params: &[],
            caps: Capabilities::for_target(t),
            checked: false,
        };
        let src = generate_source_with(t, &k, &opts).unwrap().unwrap();
        assert_eq!(src.entry, "spoc_kernel_kernel");
        let text = src.text().unwrap();
        assert!(text.contains("v_sqrtf[0u] = v_kernel;"), "{text}");
        assert!(text.contains("v_sqrtf_len"), "{text}");
    }
}

#[test]
fn kernel_without_parameters_and_abi_of_dynamic_shared() {
    let mut b = B::new();
    let s = b.shared("scratch", Type::U32, None);
    b.push(assign(at(&s, tid()), len(&s)));
    let k = b.kernel("dyn");
    let cuda = generate(Target::CudaC, &k, Capabilities::for_target(Target::CudaC)).unwrap();
    assert!(
        cuda.contains("void dyn(unsigned int scratch_len)"),
        "{cuda}"
    );
    assert!(
        cuda.contains("extern __shared__ unsigned int scratch[];"),
        "{cuda}"
    );
    assert!(
        cuda.contains("scratch[threadIdx.x] = scratch_len;"),
        "{cuda}"
    );
    let cl = generate(Target::OpenCl, &k, Capabilities::for_target(Target::OpenCl)).unwrap();
    assert!(
        cl.contains("void dyn(__local uint* scratch, uint scratch_len)"),
        "{cl}"
    );
    let empty = B::new().kernel("nothing");
    let cuda = generate(
        Target::CudaC,
        &empty,
        Capabilities::for_target(Target::CudaC),
    )
    .unwrap();
    assert!(cuda.contains("void nothing(void) {"), "{cuda}");
}

#[test]
fn signed_arithmetic_wraps_through_unsigned() {
    let mut b = B::new();
    let out = b.buf_mut("out", Type::I32);
    let x = b.param("x", Type::I32, false);
    b.push(assign(
        at(&out, u32c(0)),
        add(mul(x.clone(), i32c(3)), un(UnOp::Neg, x.clone())),
    ));
    b.push(assign(
        at(&out, u32c(1)),
        bin(BinOp::Shl, x.clone(), u32c(33)),
    ));
    b.push(assign(at(&out, u32c(2)), bin(BinOp::Div, x, i32c(-1))));
    let k = b.kernel("wrap");
    let cuda = generate(Target::CudaC, &k, Capabilities::for_target(Target::CudaC)).unwrap();
    spoc_testkit::assert_contains_all(
        &cuda,
        &[
            "v_out[0u] = (int)((unsigned int)x * 3u + (0u - (unsigned int)x));",
            // shift amounts are taken modulo 32
            "v_out[1u] = (int)((unsigned int)x << 1);",
            "v_out[2u] = spoc_div_i32(x, -1);",
            "if (b == -1) return (int)(0 - (unsigned int)a);",
            // A zero divisor gives 0 in every dialect: C's division by zero is undefined (the
            // compiler could assume a nonzero divisor), and it would trap a CPU device.
            "if (b == 0) return 0;",
        ],
    );
    let cl = generate(Target::OpenCl, &k, Capabilities::for_target(Target::OpenCl)).unwrap();
    assert!(cl.contains("if (b == 0) return 0;"), "{cl}");
    let mut b = B::new();
    let out = b.buf_mut("out", Type::U32);
    b.push(assign(
        at(&out, u32c(0)),
        bin(BinOp::Rem, idx(&out, u32c(1)), idx(&out, u32c(2))),
    ));
    let k = b.kernel("urem");
    let cl = generate(Target::OpenCl, &k, Capabilities::for_target(Target::OpenCl)).unwrap();
    assert!(
        cl.contains("v_out[0u] = spoc_rem_u32(v_out[1u], v_out[2u]);"),
        "{cl}"
    );
    let cuda = generate(Target::CudaC, &k, Capabilities::for_target(Target::CudaC)).unwrap();
    assert!(
        cuda.contains("v_out[0u] = spoc_rem_u32(v_out[1u], v_out[2u]);"),
        "{cuda}"
    );
    // A constant divisor other than 0 and -1 cannot be undefined: C's own operators.
    let mut b = B::new();
    let out = b.buf_mut("out", Type::I32);
    let x = b.param("x", Type::I32, false);
    b.push(assign(
        at(&out, u32c(0)),
        bin(BinOp::Div, x.clone(), i32c(7)),
    ));
    b.push(assign(at(&out, u32c(1)), bin(BinOp::Rem, x, i32c(-3))));
    let k = b.kernel("constdiv");
    for t in [Target::CudaC, Target::OpenCl, Target::Hip] {
        let c = generate(t, &k, Capabilities::for_target(t)).unwrap();
        assert!(c.contains("v_out[0u] = x / 7;"), "{c}");
        assert!(c.contains("v_out[1u] = x % -3;"), "{c}");
        assert!(!c.contains("spoc_div"), "{c}");
    }
}

/// `out[0] = a[0].abs().min(a[1])` on `i32`.
fn abs_min_kernel() -> Kernel {
    let mut b = B::new();
    let a = b.buf("a", Type::I32);
    let out = b.buf_mut("out", Type::I32);
    let v = math(
        MathFn::Min,
        vec![math(MathFn::Abs, vec![idx(&a, u32c(0))]), idx(&a, u32c(1))],
    );
    b.push(assign(at(&out, u32c(0)), v));
    b.kernel("abs_min")
}

/// Signed `abs` and integer `min`/`max` are inline PTX wherever NVVM compiles the C (CUDA C;
/// OpenCL C on a device with `inline_ptx`), which NVVM cannot fold on a wrong assumption
/// (difftest/FINDINGS.md F9, F13); plain C everywhere else.
#[test]
fn abs_and_min_are_inline_ptx_where_nvvm_compiles_the_c() {
    let k = abs_min_kernel();
    let abs_ptx = "neg.s32 n, %1; setp.gt.s32 p, %1, n; selp.b32 %0, %1, n, p;";
    let min_ptx = "setp.lt.s32 p, %1, %2; selp.b32 %0, %1, %2, p;";
    let cuda = generate(Target::CudaC, &k, Capabilities::for_target(Target::CudaC)).unwrap();
    let mut nv = Capabilities::for_target(Target::OpenCl);
    nv.inline_ptx = true;
    let nv_cl = generate(Target::OpenCl, &k, nv).unwrap();
    for (what, c) in [("CUDA C", &cuda), ("OpenCL C on NVIDIA", &nv_cl)] {
        assert!(c.contains(abs_ptx), "{what}: {c}");
        assert!(c.contains(min_ptx), "{what}: {c}");
    }
    let cl = generate(Target::OpenCl, &k, Capabilities::for_target(Target::OpenCl)).unwrap();
    let hip = generate(Target::Hip, &k, Capabilities::for_target(Target::Hip)).unwrap();
    for (what, c) in [("OpenCL C", &cl), ("HIP C", &hip)] {
        assert!(!c.contains("asm("), "{what}: {c}");
        assert!(c.contains("return (int)((x ^ s) - s);"), "{what}: {c}");
        assert!(c.contains("return a < b ? a : b;"), "{what}: {c}");
    }
}
