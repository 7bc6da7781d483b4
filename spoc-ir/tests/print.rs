//! The printer: snapshots of three kernels, and the naming rules.

mod support;

use spoc_ir::*;
use support::*;

#[test]
fn saxpy_snapshot() {
    insta::assert_snapshot!(saxpy().to_string());
}

#[test]
fn block_sum_snapshot() {
    insta::assert_snapshot!(block_sum().to_string());
}

#[test]
fn shapes_snapshot() {
    insta::assert_snapshot!(shapes_kernel().to_string());
}

#[test]
fn saxpy_prints_as_documented() {
    let text = saxpy().to_string();
    assert!(text.starts_with(
        "kernel saxpy(a: f32, x: global [f32], y: mut global [f32]) {\n    let i: u32 = global_id_x();\n"
    ), "{text}");
    assert!(
        text.contains("        y[i] = ((a * x[i]) + y[i]);\n"),
        "{text}"
    );
}

#[test]
fn shadowed_names_are_disambiguated() {
    let mut b = Builder::new();
    let y = b.buf_mut("y", Type::U32);
    let i0 = b.local("i", Type::U32, false);
    let i1 = b.local("i", Type::U32, false);
    let i1_src = b.local("i_1", Type::U32, false);
    b.let_(i0, gid_x());
    b.let_(i1, bin(BinOp::Add, b.v(i0), u32c(1)));
    b.let_(i1_src, b.v(i1));
    b.push(stmt(assign(lidx(lv(y), b.v(i0)), b.v(i1_src))));
    let k = b.kernel("k");
    assert_valid(&k);
    assert_eq!(
        print::var_names(&k.vars),
        ["y", "i", "i_2", "i_1"],
        "a later `i` must not take the name of the source variable `i_1`"
    );
    let text = k.to_string();
    spoc_testkit::assert_contains_all(
        &text,
        &[
            "let i_2: u32 = (i + 1u32);",
            "let i_1: u32 = i_2;",
            "y[i] = i_1;",
        ],
    );
}

#[test]
fn constants_carry_rust_suffixes() {
    let show = |c: Const| Expr::constant(c).to_string();
    assert_eq!(show(Const::I32(-3)), "-3");
    assert_eq!(show(Const::U32(7)), "7u32");
    assert_eq!(show(Const::I64(7)), "7i64");
    assert_eq!(show(Const::U64(7)), "7u64");
    assert_eq!(show(Const::f32(2.0)), "2.0f32");
    assert_eq!(show(Const::f32(1e-7)), "1e-7f32");
    assert_eq!(show(Const::f64(0.5)), "0.5");
    assert_eq!(show(Const::f32(-0.0)), "-0.0f32");
    assert_eq!(show(Const::f32(f32::NEG_INFINITY)), "f32::NEG_INFINITY");
    assert_eq!(show(Const::f64(f64::NAN)), "f64::NAN");
    assert_eq!(show(Const::F32(0x7fc0_0001)), "f32::from_bits(0x7fc00001)");
    assert_eq!(show(Const::F16(0x3c00)), "f16::from_bits(0x3c00)");
    assert_eq!(show(Const::Bool(true)), "true");
}

#[test]
fn expressions_print_unambiguously() {
    // -(-x), (-x).abs(), (x as f32).sqrt(), x.mul_add(a, b)
    let x = Expr::var(VarId(0), Type::F32);
    assert_eq!(
        un(UnOp::Neg, un(UnOp::Neg, x.clone())).to_string(),
        "-(-$v0)"
    );
    assert_eq!(un(UnOp::Neg, f32c(-1.0)).to_string(), "-(-1.0f32)");
    assert_eq!(
        math(MathFn::Abs, vec![un(UnOp::Neg, x.clone())]).to_string(),
        "(-$v0).abs()"
    );
    assert_eq!(
        math(MathFn::Sqrt, vec![cast(i32c(2), ScalarType::F32)]).to_string(),
        "(2 as f32).sqrt()"
    );
    assert_eq!(
        math(MathFn::MulAdd, vec![x.clone(), f32c(2.0), f32c(1.0)]).to_string(),
        "$v0.mul_add(2.0f32, 1.0f32)"
    );
    assert_eq!(
        select(boolc(true), x.clone(), f32c(0.0)).to_string(),
        "if true { $v0 } else { 0.0f32 }"
    );
}

#[test]
fn statements_print_rust_like() {
    let i = VarId(0);
    let step = StmtKind::For(ForLoop {
        var: i,
        start: u32c(0),
        end: u32c(10),
        step: u32c(2),
        dir: ForDir::Down,
        body: vec![stmt(StmtKind::Break)],
    });
    assert_eq!(
        stmt(step).to_string(),
        "for $v0 in (0u32..10u32).rev().step_by(2u32) {\n    break;\n}"
    );
    let chain = if_(
        boolc(true),
        vec![stmt(StmtKind::Return(None))],
        Some(vec![stmt(if_(
            boolc(false),
            vec![],
            Some(vec![stmt(StmtKind::Barrier)]),
        ))]),
    );
    assert_eq!(
        stmt(chain).to_string(),
        "if true {\n    return;\n} else if false {} else {\n    sync_threads();\n}"
    );
    let lp = StmtKind::While {
        cond: boolc(true),
        body: vec![stmt(StmtKind::MemFence(FenceScope::Device))],
    };
    assert_eq!(stmt(lp).to_string(), "loop {\n    fence_device();\n}");
}

#[test]
fn printing_an_ill_formed_kernel_does_not_panic() {
    let mut k = saxpy();
    k.params[0].var = VarId(77);
    k.body
        .push(stmt(StmtKind::Expr(Expr::var(VarId(99), Type::F32))));
    k.body.push(stmt(StmtKind::Expr(Expr {
        kind: ExprKind::RecordLit {
            record: "Nope".into(),
            fields: vec![f32c(1.0)],
        },
        ty: Type::Record("Nope".into()),
    })));
    let text = k.to_string();
    spoc_testkit::assert_contains_all(
        &text,
        &["kernel saxpy($v77: f32,", "$v99;", "Nope { #0: 1.0f32 };"],
    );
}

#[test]
fn expr_to_string_uses_the_kernel_names() {
    let k = saxpy();
    let StmtKind::If { cond, .. } = &k.body[1].kind else {
        unreachable!()
    };
    assert_eq!(print::expr_to_string(&k, None, cond), "(i < len(y))");
    assert_eq!(cond.to_string(), "($v3 < len($v2))");
}
