//! Targeted checks of the PTX generator: parameter ABI, SoA, targets and capabilities, and the
//! instruction choices that carry the IR's semantics.

mod ptx_corpus;
#[path = "support/toolchains.rs"]
mod toolchains;

use ptx_corpus::*;
use spoc_codegen::{generate_source_with, Capabilities, CodegenError, Options, Target};
use spoc_ir::*;

fn gen_with(k: &Kernel, soa: &[&str], caps: Capabilities) -> Result<String, CodegenError> {
    let opts = Options {
        block: None,
        soa_params: soa,
        caps,
        checked: false,
    };
    generate_source_with(Target::CudaPtx, k, &opts)
        .map(|s| s.expect("source").text().expect("text").to_string())
}

fn caps() -> Capabilities {
    Capabilities::for_target(Target::CudaPtx)
}

/// The `.param` lines of the entry, in order.
fn entry_params(ptx: &str) -> Vec<String> {
    let start = ptx.find(".visible .entry").expect("an entry");
    let body = &ptx[start..];
    let end = body.find(')').expect("end of the parameter list");
    body[..end]
        .lines()
        .filter(|l| l.trim_start().starts_with(".param"))
        .map(|l| l.trim().trim_end_matches(',').to_string())
        .collect()
}

/// The instruction lines of the entry only (not of the math routines).
fn entry_body(ptx: &str) -> &str {
    &ptx[ptx.find(".visible .entry").expect("an entry")..]
}

#[test]
fn buffer_and_scalar_parameter_abi() {
    let ptx = ptx(&saxpy(), &[]);
    assert_eq!(
        entry_params(&ptx),
        [
            ".param .f32 a",
            ".param .u64 x_ptr",
            ".param .u32 x_len",
            ".param .u64 y_ptr",
            ".param .u32 y_len"
        ]
    );
    assert!(ptx.contains(".version 7.8\n.target sm_70\n.address_size 64\n"));
    // read-only buffer through the non-coherent path, the written one not
    assert!(ptx.contains("ld.global.nc.f32"));
    assert!(ptx.contains("ld.global.f32"));
    assert!(ptx.contains("st.global.f32"));
}

#[test]
fn bool_and_record_parameters_are_bytes() {
    let mut b = B::new();
    let flag = b.param("flag", Type::BOOL);
    let r = b.param("r", Type::Record("Pair".into()));
    let out = b.buf_mut("out", Type::F32);
    b.if_(flag, |b| {
        let v = add(
            field(r.clone(), "a", Type::F32),
            cast(field(r, "n", Type::I64), ScalarType::F32),
        );
        b.store(&out, u32c(0), v);
    });
    let mut k = b.kernel("params");
    k.records = vec![record("Pair", &[("a", Type::F32), ("n", Type::I64)])];
    let ptx = ptx(&k, &[]);
    assert_eq!(
        entry_params(&ptx),
        [
            ".param .u8 flag",
            ".param .align 8 .b8 r[16]",
            ".param .u64 out_ptr",
            ".param .u32 out_len"
        ]
    );
    // #[repr(C)]: `n` at offset 8 after padding
    assert!(ptx.contains("ld.param.f32 %f1, [r];"), "{ptx}");
    assert!(ptx.contains("ld.param.s64 %rd1, [r+8];"), "{ptx}");
    assert!(ptx.contains("ld.param.u8"));
}

#[test]
fn soa_parameters_get_one_pointer_per_field_and_a_shared_length() {
    let soa = ptx(&particles(), &["p"]);
    assert_eq!(
        entry_params(&soa),
        [
            ".param .u64 p__soa_x",
            ".param .u64 p__soa_v",
            ".param .u64 p__soa_mass",
            ".param .u32 p__soa_len",
            ".param .u64 out_ptr",
            ".param .u32 out_len",
            ".param .f32 dt"
        ]
    );
    // p[i].x is a 4-byte stride on its own array, `out` keeps the 12-byte record stride
    let body = entry_body(&soa);
    assert!(body.contains("add.s64 %rd6, %rd_p_x, %rd5;"), "{body}");
    assert!(body.contains("mul.wide.u32 %rd19, %r_i, 12;"), "{body}");
    assert!(!body.contains("p_ptr"));
}

#[test]
fn empty_soa_list_is_byte_identical_to_aos() {
    let k = particles();
    let aos = spoc_codegen::generate_source(Target::CudaPtx, &k, None, &[]).unwrap();
    let empty = gen_with(&k, &[], caps()).unwrap();
    assert_eq!(aos.unwrap().text().unwrap(), empty);
    let soa = gen_with(&k, &["p"], caps()).unwrap();
    assert_ne!(empty, soa);
}

#[test]
fn soa_errors_are_clear() {
    let k = particles();
    match gen_with(&k, &["nope"], caps()) {
        Err(CodegenError::FeatureNotSupported { feature, .. }) => {
            assert!(feature.contains("no parameter `nope`"), "{feature}")
        }
        other => panic!("expected FeatureNotSupported, got {other:?}"),
    }
    match gen_with(&k, &["dt"], caps()) {
        Err(CodegenError::FeatureNotSupported { feature, .. }) => {
            assert!(feature.contains("not a record buffer"), "{feature}")
        }
        other => panic!("expected FeatureNotSupported, got {other:?}"),
    }
    // a nested record
    let mut b = B::new();
    let p = b.buf_mut("p", Type::Record("Outer".into()));
    b.store(&p, u32c(0), idx(&p, u32c(1)));
    let mut k = b.kernel("nested");
    k.records = vec![
        particle(),
        record(
            "Outer",
            &[("inner", Type::Record("Particle".into())), ("w", Type::F32)],
        ),
    ];
    match gen_with(&k, &["p"], caps()) {
        Err(CodegenError::Unsupported {
            capability, node, ..
        }) => {
            assert!(capability.contains("flat records"), "{capability}");
            assert!(node.contains("field `inner`"), "{node}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    // the same kernel is fine as AoS
    assert!(gen_with(&k, &[], caps()).is_ok());
}

#[test]
fn generated_parameter_names_must_not_collide() {
    let mut b = B::new();
    let x = b.buf_mut("x", Type::F32);
    let xp = b.param("x_ptr", Type::F32);
    b.store(&x, u32c(0), xp);
    match gen_with(&b.kernel("clash"), &[], caps()) {
        Err(CodegenError::FeatureNotSupported { feature, .. }) => {
            assert!(feature.contains("`x_ptr`"), "{feature}")
        }
        other => panic!("expected a collision error, got {other:?}"),
    }
}

#[test]
fn target_follows_the_compute_capability() {
    let k = saxpy();
    let target = |cc| {
        let mut c = caps();
        c.compute_capability = cc;
        gen_with(&k, &[], c).map(|p| {
            p.lines()
                .find(|l| l.starts_with(".target"))
                .unwrap()
                .to_string()
        })
    };
    assert_eq!(target(None).unwrap(), ".target sm_70");
    assert_eq!(target(Some((9, 0))).unwrap(), ".target sm_90");
    assert_eq!(target(Some((8, 6))).unwrap(), ".target sm_86");
    assert_eq!(target(Some((8, 8))).unwrap(), ".target sm_87");
    assert_eq!(target(Some((12, 0))).unwrap(), ".target sm_90");
    assert_eq!(target(Some((6, 1))).unwrap(), ".target sm_61");
    assert!(matches!(
        target(Some((3, 5))),
        Err(CodegenError::Unsupported { .. })
    ));
}

#[test]
fn capabilities_gate_atomics_and_warp_operations() {
    let k = shared_atomics_warp();
    let mut c = caps();
    c.subgroups = false;
    match gen_with(&k, &[], c) {
        Err(CodegenError::Unsupported { capability, .. }) => {
            assert!(capability.contains("warp"), "{capability}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let mut c = caps();
    c.float_atomic_add = false;
    assert!(matches!(
        gen_with(&k, &[], c),
        Err(CodegenError::Unsupported { .. })
    ));
    let mut c = caps();
    c.int64_atomics = false;
    assert!(matches!(
        gen_with(&k, &[], c),
        Err(CodegenError::Unsupported { .. })
    ));
    // f64 atomic add needs sm_60
    let mut b = B::new();
    let s = b.buf_mut("s", Type::F64);
    b.expr(atomic(AtomicOp::Add, vec![s, u32c(0), f64c(1.0)]));
    let k = b.kernel("add_f64");
    let mut c = caps();
    c.compute_capability = Some((5, 2));
    match gen_with(&k, &[], c) {
        Err(CodegenError::Unsupported { capability, .. }) => {
            assert!(capability.contains("6.0"), "{capability}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let mut c = caps();
    c.compute_capability = Some((6, 0));
    assert!(gen_with(&k, &[], c)
        .unwrap()
        .contains("atom.global.add.f64"));
    // warp operations use the active mask on sm_70+, the full warp before
    let k = shared_atomics_warp();
    let mut c = caps();
    c.compute_capability = Some((6, 1));
    let old = gen_with(&k, &[], c).unwrap();
    assert!(!old.contains("activemask"));
    assert!(
        old.lines()
            .any(|l| l.contains("vote.sync.any.pred") && l.ends_with(", -1;")),
        "{old}"
    );
    let new = ptx(&k, &[]);
    assert!(new.contains("activemask.b32"));
}

/// Warp operations outside any conditional region name the lanes that entered the kernel
/// (`activemask` computed once, before the first branch), so the warp meets there even after
/// a branch that left it apart (difftest F15); inside an `if` they take the lanes active there.
#[test]
fn warp_operations_outside_branches_name_every_lane_that_entered() {
    let mut b = B::new();
    let x = b.buf_mut("x", Type::U32);
    let i = b.let_("i", gid());
    let down = |v: Expr| {
        intr(
            Intrinsic::Shuffle(ShuffleKind::Down),
            vec![v, u32c(1)],
            Type::U32,
        )
    };
    b.if_(lt(i.clone(), u32c(7)), |b| {
        b.store(&x, i.clone(), down(i.clone()))
    });
    b.store(&x, add(i.clone(), u32c(64)), down(i.clone()));
    let ball = intr(Intrinsic::Ballot, vec![lt(i.clone(), u32c(3))], Type::U32);
    b.store(&x, add(i.clone(), u32c(128)), ball);
    let p = ptx(&b.kernel("warp_after_if"), &[]);
    let body = entry_body(&p);
    let entry = "activemask.b32 %r_spoc_warp_lanes;";
    assert_eq!(body.matches(entry).count(), 1, "{body}");
    let before = &body[..body.find(entry).unwrap()];
    assert!(
        !before.contains("bra"),
        "the entry mask follows a branch:\n{body}"
    );
    let lines: Vec<&str> = body.lines().map(str::trim).collect();
    let warp_ops: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("shfl.sync") || l.starts_with("vote.sync"))
        .collect();
    assert_eq!(warp_ops.len(), 3, "{body}");
    // the shuffle in the `if` takes the lanes active there, the two after it every lane
    assert!(!warp_ops[0].contains("spoc_warp_lanes"), "{body}");
    assert!(warp_ops[1].ends_with(", %r_spoc_warp_lanes;"), "{body}");
    assert!(warp_ops[2].ends_with(", %r_spoc_warp_lanes;"), "{body}");
    assert_eq!(body.matches("activemask.b32").count(), 2, "{body}");
}

#[test]
fn no_approximate_instructions_and_no_contraction() {
    for (name, k, soa) in all() {
        let p = ptx(&k, &soa);
        for bad in [".approx", ".ftz", "mad.f32", "mad.rn", "fma.f32 "] {
            assert!(!p.contains(bad), "{name} contains `{bad}`");
        }
        // every float add/sub/mul/div names its rounding
        for l in p.lines() {
            let l = l.trim();
            for op in ["add.f", "sub.f", "mul.f", "div.f", "rcp.f"] {
                assert!(!l.starts_with(op), "{name}: `{l}` has no rounding mode");
            }
        }
    }
    // saxpy: a multiply then an add, never an fma
    let p = ptx(&saxpy(), &[]);
    assert!(!p.contains("fma"));
    assert!(p.contains("mul.rn.f32") && p.contains("add.rn.f32"));
    // mul_add is the one fma
    let mut b = B::new();
    let x = b.buf_mut("x", Type::F32);
    b.store(
        &x,
        u32c(0),
        math(MathFn::MulAdd, vec![idx(&x, u32c(1)), f32c(2.0), f32c(3.0)]),
    );
    let p = ptx(&b.kernel("fma1"), &[]);
    assert_eq!(p.matches("fma.rn.f32").count(), 1, "{p}");
}

#[test]
fn one_over_x_is_the_correctly_rounded_reciprocal() {
    // `1.0 / x` is `rcp.rn` (the same bits as `div.rn 1.0, x`); any other numerator divides.
    let mut b = B::new();
    let x = b.buf_mut("x", Type::F32);
    let y = b.buf_mut("y", Type::F64);
    b.store(&x, u32c(0), div(f32c(1.0), idx(&x, u32c(1))));
    b.store(&x, u32c(2), div(f32c(2.0), idx(&x, u32c(3))));
    b.store(&x, u32c(4), div(idx(&x, u32c(5)), f32c(1.0)));
    b.store(&y, u32c(0), div(f64c(1.0), idx(&y, u32c(1))));
    let p = ptx(&b.kernel("recip"), &[]);
    assert_eq!(p.matches("rcp.rn.f32").count(), 1, "{p}");
    assert_eq!(p.matches("div.rn.f32").count(), 2, "{p}");
    assert_eq!(p.matches("rcp.rn.f64").count(), 1, "{p}");
    assert!(!p.contains("div.rn.f64"), "{p}");
}

#[test]
fn integer_semantics_guards() {
    let p = ptx(&int_ops(), &[]);
    let line = |parts: &[&str]| p.lines().any(|l| parts.iter().all(|x| l.contains(x)));
    // a zero divisor is replaced by 1 and the result by 0 (no unspecified hardware value)
    assert!(line(&["setp.eq.s32 %p", "%r_y, 0;"]), "{p}");
    assert!(line(&["selp.b32 %r", ", 1, %r_y, %p"]), "{p}");
    // MIN / -1 and MIN % -1 are selected, not left to div/rem
    assert!(line(&["setp.eq.s32 %p", ", -1;"]), "{p}");
    assert!(line(&["selp.b32 %r", ", 0, %r", ", %p"]), "{p}");
    // division by the constant -1 is a negation
    assert!(p.contains("// line 14: out[((i * 7u32) + 6u32)] = (x / -1);\n\tneg.s32"));
    // shift amounts are reduced modulo the width first
    assert!(line(&["and.b32 %r", ", %r_y, 31;"]), "{p}");
    assert!(p.contains(", %r_y, 31;\n\tshl.b32 %r"), "{p}");
    assert!(p.contains(", %r_u, 63;\n\tshl.b64"), "{p}");
    // signed >> is arithmetic, unsigned >> logical
    assert!(p.contains("shr.s32") && p.contains("shr.u32"));
}

#[test]
fn float_to_int_casts_force_nan_to_zero() {
    let p = ptx(&casts(), &[]);
    for t in ["s32", "u32", "s64", "u64"] {
        assert!(p.contains(&format!("cvt.rzi.{t}.f64")), "{t}");
    }
    assert_eq!(p.matches("setp.nan.f64").count(), 5, "{p}");
    assert!(p.contains("cvt.rn.f16.f32"));
    assert!(p.contains("st.global.b16"));
}

#[test]
fn short_circuit_conditions_branch() {
    // `k < 100 && k < i` in a loop condition: two branches, no and.pred
    let p = ptx(&loops(), &[]);
    let at = p
        .find("%r_k, 100;\n\t@!%p")
        .expect("the first test and its branch");
    let rest = &p[at..];
    assert!(
        rest.lines()
            .nth(1)
            .is_some_and(|l| l.contains("bra $L_wend_1;"))
            && rest
                .lines()
                .nth(2)
                .is_some_and(|l| l.contains("setp.lt.u32 %p") && l.contains("%r_k, %r_i;"))
            && rest
                .lines()
                .nth(3)
                .is_some_and(|l| l.contains("bra $L_wend_1;")),
        "{p}"
    );
    // `i < n && x[i] > 0` as a value: the load happens only after the test
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::U32);
    let i = b.let_("i", gid());
    let ok = b.let_(
        "ok",
        and(
            lt(i.clone(), len(&x)),
            bin(BinOp::Gt, idx(&x, i.clone()), f32c(0.0)),
        ),
    );
    b.store(&out, u32c(0), cast(ok, ScalarType::U32));
    let p = ptx(&b.kernel("guarded"), &[]);
    let branch = p.find("bra $L_and_end").expect("a branch around the load");
    let load = p.find("ld.global.nc.f32").expect("the load");
    assert!(branch < load, "{p}");
}

#[test]
fn dynamic_shared_memory_is_extern() {
    let p = ptx(&records_match(), &[]);
    assert!(p.contains(".extern .shared .align 16 .b8 spoc_dyn_smem[];"));
    // Shared addresses are 32-bit (the `.shared` window), as NVVM's.
    assert!(
        p.lines()
            .any(|l| l.trim_start().starts_with("mov.u32 %r") && l.ends_with(", spoc_dyn_smem;")),
        "{p}"
    );
    let p = ptx(&shared_atomics_warp(), &[]);
    assert!(p.contains(".shared .align 4 .f32 $smem_tile[256];"));
    assert!(!p.contains("spoc_dyn_smem"));
}

#[test]
fn math_routines_are_emitted_only_when_used() {
    let p = ptx(&saxpy(), &[]);
    assert!(!p.contains(".func"));
    let p = ptx(&math_all(), &[]);
    for f in ["exp", "ln", "sin", "atan2", "pow", "hypot", "fmod", "powi"] {
        assert!(p.contains(&format!("spoc_math_{f}_f64")), "{f}");
    }
    // f32 hypot is inline (exact in f64), f32 powi is its own routine
    assert!(p.contains("spoc_math_powi_f32"));
    assert!(!p.contains("spoc_math_hypot_f32"));
}

#[test]
fn a_kernel_without_parameters_assembles() {
    let k = B::new().kernel("nothing");
    let p = ptx(&k, &[]);
    assert!(p.contains(".visible .entry nothing(\n)\n{"), "{p}");
    assert!(p.trim_end().ends_with("ret;\n}"), "{p}");
    let dir = std::env::temp_dir().join(format!("spoc-ptx-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("nothing.ptx");
    std::fs::write(&src, &p).unwrap();
    let ptxas = std::path::Path::new("/opt/spoc-ptxas/usr/bin/ptxas");
    if ptxas.is_file() {
        toolchains::run_ok(
            std::process::Command::new(ptxas)
                .args(["-arch=sm_90", "-o"])
                .arg(dir.join("nothing.cubin"))
                .arg(&src),
        );
    }
}

/// `acc += x[p]` over `0..n`, or over `0..n` with a barrier in the body.
fn sum_loop(barrier: bool) -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let n = b.param("n", Type::U32);
    let acc = b.let_mut("acc", f32c(0.0));
    b.for_("p", u32c(0), n, u32c(1), ForDir::Up, |b, p| {
        let accv = Expr::var(acc, Type::F32);
        b.set(acc, bin(BinOp::Add, accv, idx(&x, p)));
        if barrier {
            b.push(StmtKind::Barrier);
        }
    });
    b.store(&out, gid(), Expr::var(acc, Type::F32));
    b.kernel("sum_loop")
}

#[test]
fn a_small_innermost_loop_runs_four_copies_per_iteration() {
    // 4 copies in the main loop and the loop itself for the rest: 5 loads of `x`.
    let p = ptx(&sum_loop(false), &[]);
    assert_eq!(entry_body(&p).matches("ld.global.nc.f32").count(), 5, "{p}");
    assert!(
        p.contains("& 4294967292u32"),
        "the main loop's end, a multiple of 4: {p}"
    );
    // A barrier keeps the loop as written: which threads take which copy must not change.
    let p = ptx(&sum_loop(true), &[]);
    assert_eq!(entry_body(&p).matches("ld.global.nc.f32").count(), 1, "{p}");
}

#[test]
fn a_short_constant_loop_over_shared_memory_is_straight_line_with_immediate_offsets() {
    // acc += s[t * 16 + k] for k in 0..16: no loop left, one 32-bit address, offsets 4..60.
    let mut b = B::new();
    let out = b.buf_mut("out", Type::F32);
    let s = b.shared("s", Type::F32, Some(256));
    let t = b.let_("t", tid());
    let acc = b.let_mut("acc", f32c(0.0));
    b.for_("k", u32c(0), u32c(16), u32c(1), ForDir::Up, |b, k| {
        let i = bin(BinOp::Add, bin(BinOp::Mul, t.clone(), u32c(16)), k);
        let accv = Expr::var(acc, Type::F32);
        b.set(acc, bin(BinOp::Add, accv, idx(&s, i)));
    });
    b.store(&out, gid(), Expr::var(acc, Type::F32));
    let p = ptx(&b.kernel("tile_row"), &[]);
    let body = entry_body(&p);
    assert!(!body.contains("$L_for"), "{p}");
    let loads: Vec<&str> = body
        .lines()
        .filter(|l| l.contains("ld.shared.f32"))
        .collect();
    assert_eq!(loads.len(), 16, "{p}");
    assert!(
        loads.iter().all(|l| l.contains(", [%r")),
        "32-bit shared addresses: {p}"
    );
    for (k, l) in loads.iter().enumerate().skip(1) {
        assert!(l.ends_with(&format!("+{}];", 4 * k)), "{l}: {p}");
    }
}

#[test]
fn a_counted_while_loop_over_shared_memory_is_straight_line() {
    // The block scan's doubling loop: `let mut offset = 1; while offset < 256 { v = t >= offset
    // ? s[t - offset] : 0; sync; s[t] += v; sync; offset *= 2 }`: 8 copies, no loop left, the
    // offsets constants, `offset` 256 after it.
    let mut b = B::new();
    let out = b.buf_mut("out", Type::U32);
    let s = b.shared("s", Type::U32, Some(256));
    let t = b.let_("t", tid());
    b.store(&s, t.clone(), u32c(1));
    b.push(StmtKind::Barrier);
    let offset = b.let_mut("offset", u32c(1));
    let off = || Expr::var(offset, Type::U32);
    b.while_(bin(BinOp::Lt, off(), u32c(256)), |b| {
        let v = b.let_(
            "v",
            select(
                bin(BinOp::Ge, t.clone(), off()),
                idx(&s, bin(BinOp::Sub, t.clone(), off())),
                u32c(0),
            ),
        );
        b.push(StmtKind::Barrier);
        b.store(&s, t.clone(), bin(BinOp::Add, idx(&s, t.clone()), v));
        b.push(StmtKind::Barrier);
        b.set(offset, bin(BinOp::Mul, off(), u32c(2)));
    });
    b.store(&out, gid(), bin(BinOp::Add, idx(&s, t.clone()), off()));
    let k = b.kernel("block_scan");
    let unrolled = unroll::auto_unrolled(&k, &unroll::AutoUnroll::PTX).expect("unrolled");
    let text = unrolled.to_string();
    assert!(!text.contains("while"), "{text}");
    for off in [1, 2, 4, 8, 16, 32, 64, 128] {
        assert!(
            text.contains(&format!("(t - {off}u32)")),
            "offset {off}: {text}"
        );
    }
    assert!(text.contains("offset = 256u32"), "{text}");
    let p = ptx(&k, &[]);
    let body = entry_body(&p);
    assert!(!body.contains("$L_while"), "{p}");
    assert_eq!(body.matches("bar.sync").count(), 17, "{p}");
}

#[test]
fn a_local_array_indexed_only_by_constants_lives_in_registers() {
    // let mut acc = [0.0; 4]; for k in 0..4 { acc[k] += x[k] }; out[0] = acc[1 + 2]: after
    // unrolling every index is a constant, so no `.local` array is left.
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let acc = b.let_mut("acc", spoc_testkit::ir::repeat(f32c(0.0), 4));
    let place = |i: Expr| LValue::Index {
        base: Box::new(LValue::Var(acc)),
        index: i,
    };
    let acc_e = b.v(acc);
    b.for_("k", u32c(0), u32c(4), u32c(1), ForDir::Up, |b, k| {
        let v = bin(BinOp::Add, idx(&acc_e, k.clone()), idx(&x, k.clone()));
        b.assign(place(k), v);
    });
    b.store(
        &out,
        u32c(0),
        idx(&acc_e, bin(BinOp::Add, u32c(1), u32c(2))),
    );
    let p = ptx(&b.kernel("acc4"), &[]);
    assert!(!p.contains(".local"), "{p}");
    assert!(!p.contains("ld.local") && !p.contains("st.local"), "{p}");
    assert_eq!(entry_body(&p).matches("ld.global.nc.f32").count(), 4, "{p}");
}

#[test]
fn a_guarded_load_with_a_zero_default_is_one_predicated_load() {
    // out[i] = if i < n && i > 2 { x[i + 1] } else { 0.0 }: `mov 0` then `@p ld`, no branch;
    // with a non-zero default, or a condition that could fault, the branches stay.
    let kernel = |default: Expr| {
        let mut b = B::new();
        let x = b.buf("x", Type::F32);
        let out = b.buf_mut("out", Type::F32);
        let n = b.param("n", Type::U32);
        let i = b.let_("i", gid());
        let cond = bin(
            BinOp::LogicalAnd,
            bin(BinOp::Lt, i.clone(), n),
            bin(BinOp::Gt, i.clone(), u32c(2)),
        );
        let v = select(cond, idx(&x, bin(BinOp::Add, i.clone(), u32c(1))), default);
        b.store(&out, i, v);
        b.kernel("guarded")
    };
    let p = ptx(&kernel(f32c(0.0)), &[]);
    let body = entry_body(&p);
    assert!(!body.contains("$L_sel"), "{p}");
    assert!(
        body.lines()
            .any(|l| l.trim_start().starts_with("@%p") && l.contains("ld.global.nc.f32")),
        "{p}"
    );
    let p = ptx(&kernel(f32c(-0.0)), &[]);
    assert!(
        entry_body(&p).contains("$L_sel_else"),
        "-0.0 is not the all-zero default: {p}"
    );
}

#[test]
fn partial_unrolling_loads_read_only_elements_before_the_copies() {
    // for j in 0..len(x) { let a = x[j]; let w = y[j]; acc += sqrt(a) * w; out[j] = acc }:
    // `x[j + k]` of every copy (read-only, index from the loop variable) moves ahead of the
    // four copies; `y` is written (`&mut`), so its loads stay in their copies; and so does a
    // load whose index a copy computes (`x[i]` with `let i = j ^ 1`).
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let y = b.buf_mut("y", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let acc = b.let_mut("acc", f32c(0.0));
    let acc_e = b.v(acc);
    b.for_("j", u32c(0), len(&x), u32c(1), ForDir::Up, |b, j| {
        let a = b.let_("a", idx(&x, j.clone()));
        let w = b.let_("w", idx(&y, j.clone()));
        let i = b.let_("i", bin(BinOp::BitXor, j.clone(), u32c(1)));
        let c = b.let_("c", idx(&x, i));
        let term = mul(math(MathFn::Sqrt, vec![a]), add(w, c));
        b.set(acc, add(acc_e.clone(), term));
        b.store(&out, j, acc_e.clone());
    });
    let k = b.kernel("hoisted");
    let u = unroll::auto_unrolled(&k, &unroll::AutoUnroll::PTX).expect("partially unrolled");
    let text = u.to_string();
    // The main loop's body: the four hoisted loads of `x`, then the four copies.
    let main = &text[text.find("step_by(4u32)").expect("a main loop")..];
    let first_copy = main.find('{').map(|o| &main[o + 1..]).expect("a body");
    let head: Vec<&str> = first_copy
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(5)
        .collect();
    for (n, line) in head[..4].iter().enumerate() {
        assert!(
            line.starts_with("let a") && line.contains("= x[") && !line.contains("y["),
            "statement {n} of the main loop is a hoisted load of x: {head:?}\n{text}"
        );
    }
    assert!(
        head[4].starts_with('{'),
        "then the copies: {head:?}\n{text}"
    );
    assert_eq!(text.matches("= y[").count(), 5, "y's loads stay: {text}");
    assert_eq!(text.matches("= x[i").count(), 5, "x[i] stays: {text}");
}
