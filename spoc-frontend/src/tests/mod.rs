//! Unit tests of checking and lowering: inference, the IR produced, the errors, and the shape of
//! the generated Rust. Every kernel that lowers is also run through `spoc_ir::validate`.

use crate::lower::lower_fn;
use crate::{device_fn, handle};

mod codegen;
mod errors;
mod lang;
use spoc_ir::{
    BinOp, Const, Expr, ExprKind, ForDir, ForLoop, Intrinsic, Kernel, LValue, MathFn, ScalarType,
    Stmt, StmtKind, Type, VarId, VarKind,
};

fn lower(item: syn::ItemFn) -> Result<Kernel, Vec<String>> {
    let name = item.sig.ident.to_string();
    let l = lower_fn(&item, true).map_err(|e| e.messages())?;
    let k = handle::kernel_ir(&name, &l);
    let mut linked = k.clone();
    linked.functions = helper_stubs(&k.body);
    if let Err(e) = spoc_ir::validate(&linked) {
        panic!("lowered kernel `{name}` does not validate: {e}\n{k:#?}");
    }
    Ok(k)
}

/// Helper functions matching the calls in `body` (parameters typed after the arguments, the
/// return type after the call), so that kernels calling helpers can be validated alone.
fn helper_stubs(body: &[Stmt]) -> Vec<spoc_ir::Function> {
    fn expr(e: &Expr, out: &mut Vec<spoc_ir::Function>) {
        if let ExprKind::Call { func, args } = &e.kind {
            if out.iter().all(|f| &f.name != func) {
                let params: Vec<spoc_ir::Param> = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| spoc_ir::Param {
                        var: VarId(i as u32),
                        name: format!("p{i}"),
                        ty: a.ty.clone(),
                        mutable: matches!(a.ty, Type::Array { .. }),
                    })
                    .collect();
                let vars = params
                    .iter()
                    .map(|p| spoc_ir::VarDecl {
                        name: p.name.clone(),
                        ty: p.ty.clone(),
                        mutable: false,
                        kind: VarKind::Param,
                    })
                    .collect();
                let body = match e.ty.as_scalar() {
                    Some(_) => vec![Stmt::new(StmtKind::Return(Some(Expr::var(
                        VarId(0),
                        e.ty.clone(),
                    ))))],
                    None => vec![],
                };
                out.push(spoc_ir::Function {
                    name: func.clone(),
                    params,
                    ret: e.ty.clone(),
                    vars,
                    body,
                });
            }
        }
        match &e.kind {
            ExprKind::Call { args, .. } | ExprKind::Intrinsic { args, .. } => {
                args.iter().for_each(|a| expr(a, out))
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                expr(lhs, out);
                expr(rhs, out);
            }
            ExprKind::Unary { operand, .. } => expr(operand, out),
            ExprKind::Cast { value, .. } => expr(value, out),
            ExprKind::Select { cond, then, els } => {
                expr(cond, out);
                expr(then, out);
                expr(els, out);
            }
            _ => {}
        }
    }
    fn block(b: &[Stmt], out: &mut Vec<spoc_ir::Function>) {
        for s in b {
            match &s.kind {
                StmtKind::Let { init: Some(e), .. }
                | StmtKind::Expr(e)
                | StmtKind::Return(Some(e)) => expr(e, out),
                StmtKind::Assign { value, .. } => expr(value, out),
                StmtKind::If { cond, then, els } => {
                    expr(cond, out);
                    block(then, out);
                    block(els.as_deref().unwrap_or(&[]), out);
                }
                StmtKind::While { body, .. }
                | StmtKind::For(ForLoop { body, .. })
                | StmtKind::Block(body) => block(body, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    block(body, &mut out);
    out
}

fn ok(item: syn::ItemFn) -> Kernel {
    match lower(item) {
        Ok(k) => k,
        Err(e) => panic!("unexpected errors: {e:?}"),
    }
}

/// The single error of `item`, which must fail.
fn err(item: syn::ItemFn) -> String {
    match lower(item) {
        Ok(k) => panic!("expected an error, lowered {k:#?}"),
        Err(e) => {
            assert_eq!(e.len(), 1, "expected one error, got {e:?}");
            e[0].clone()
        }
    }
}

/// Lowers each `(source, needle)`: each must fail with a single error containing `needle`.
fn assert_errors_say(cases: &[(&str, &str)]) {
    for (src, needle) in cases {
        let item: syn::ItemFn = syn::parse_str(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let e = err(item);
        assert!(e.contains(needle), "`{src}`: error `{e}` lacks `{needle}`");
    }
}

fn var_ty(k: &Kernel, name: &str) -> Vec<Type> {
    k.vars
        .iter()
        .filter(|v| v.name == name)
        .map(|v| v.ty.clone())
        .collect()
}

/// The initializer of statement `n` of `k`'s body, a `let` with one.
fn let_init(k: &Kernel, n: usize) -> &Expr {
    let StmtKind::Let {
        init: Some(init), ..
    } = &k.body[n].kind
    else {
        panic!("not a let with an initializer: {:?}", k.body[n])
    };
    init
}

/// The left operand of `e`, an addition.
fn add_lhs(e: &Expr) -> &Expr {
    let ExprKind::Binary {
        op: BinOp::Add,
        lhs,
        ..
    } = &e.kind
    else {
        panic!("not an addition: {e:?}")
    };
    lhs
}

#[test]
fn saxpy_lowers_to_typed_ir() {
    let k = ok(syn::parse_quote! {
        fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
            let i = global_id_x();
            if i < y.len() {
                y[i] = a * x[i] + y[i];
            }
        }
    });
    assert_eq!(k.params.len(), 3);
    assert_eq!(k.params[0].ty, Type::F32);
    assert_eq!(k.params[1].ty, Type::global_array(Type::F32));
    assert!(!k.params[1].mutable);
    assert!(k.params[2].mutable);
    assert_eq!(var_ty(&k, "i"), vec![Type::U32]);
    assert_eq!(k.vars[3].kind, VarKind::Local);
    let init = let_init(&k, 0);
    assert_eq!(
        init.kind,
        ExprKind::Intrinsic {
            intrinsic: Intrinsic::GlobalId(spoc_ir::Axis::X),
            args: vec![]
        }
    );
    let StmtKind::If {
        cond,
        then,
        els: None,
    } = &k.body[1].kind
    else {
        panic!("{:?}", k.body[1])
    };
    assert_eq!(cond.ty, Type::BOOL);
    let StmtKind::Assign {
        target: LValue::Index { index, .. },
        value,
    } = &then[0].kind
    else {
        panic!()
    };
    assert_eq!(index.ty, Type::U32);
    assert_eq!(value.ty, Type::F32);
    let lhs = add_lhs(value);
    assert!(matches!(lhs.kind, ExprKind::Binary { op: BinOp::Mul, .. }));
    // Source locations are recorded (line numbers are those of this file's tokens, or absent
    // outside a compiler; columns are 1-based when present).
    assert!(k.body.iter().all(|s| s.loc.is_none_or(|l| l.column >= 1)));
}

#[test]
fn literals_default_like_rustc() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [f32], z: &mut [f64]) {
            let a = 1;
            let b = 2.5;
            let c = 3;
            let i = 4;
            y[i] = c as f32;
            let d = 1_000u64;
            let e = 2.0f32;
            let f = 7;
            let g: i64 = f;
            z[0] = b;
        }
    });
    assert_eq!(var_ty(&k, "a"), vec![Type::I32]);
    assert_eq!(var_ty(&k, "b"), vec![Type::F64]);
    assert_eq!(var_ty(&k, "c"), vec![Type::I32]);
    assert_eq!(var_ty(&k, "i"), vec![Type::U32], "an index is a usize");
    assert_eq!(var_ty(&k, "d"), vec![Type::U64]);
    assert_eq!(var_ty(&k, "e"), vec![Type::F32]);
    assert_eq!(
        var_ty(&k, "f"),
        vec![Type::I64],
        "inferred from a later use"
    );
    let StmtKind::Let { init: Some(e), .. } = &k.body[5].kind else {
        panic!()
    };
    assert_eq!(e.kind, ExprKind::Const(Const::U64(1000)));
    let StmtKind::Let { init: Some(e), .. } = &k.body[3].kind else {
        panic!()
    };
    assert_eq!(e.kind, ExprKind::Const(Const::U32(4)));
}

#[test]
fn float_literal_takes_f32_from_context() {
    let k = ok(syn::parse_quote! {
        fn k(a: f32, y: &mut [f32]) {
            y[0] = a * 0.1 + -2.5;
        }
    });
    let StmtKind::Assign { value, .. } = &k.body[0].kind else {
        panic!()
    };
    let ExprKind::Binary { lhs, rhs, .. } = &value.kind else {
        panic!()
    };
    assert_eq!(rhs.kind, ExprKind::Const(Const::f32(-2.5)));
    let ExprKind::Binary { rhs: tenth, .. } = &lhs.kind else {
        panic!()
    };
    assert_eq!(
        tenth.kind,
        ExprKind::Const(Const::f32(0.1)),
        "parsed as f32 directly"
    );
}

#[test]
fn usize_and_u32_are_distinct_types() {
    let e = err(syn::parse_quote! {
        fn k(y: &mut [u32]) {
            let i: u32 = global_id_x();
        }
    });
    assert!(e.contains("expected `u32`, found `usize`"), "{e}");
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [u32]) {
            let i: u32 = global_id_x() as u32;
            y[i as usize] = i;
        }
    });
    // usize -> u32 is the same IR type: the cast disappears.
    let StmtKind::Let { init: Some(e), .. } = &k.body[0].kind else {
        panic!()
    };
    assert!(matches!(e.kind, ExprKind::Intrinsic { .. }), "{e:?}");
}

#[test]
fn shadowing_makes_fresh_variables() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [i32]) {
            let x = 1.5f32;
            let x = x as i32 + 1;
            y[0] = x;
        }
    });
    assert_eq!(var_ty(&k, "x"), vec![Type::F32, Type::I32]);
    let StmtKind::Let {
        var: second,
        init: Some(init),
    } = &k.body[1].kind
    else {
        panic!()
    };
    let ExprKind::Binary { lhs, .. } = &init.kind else {
        panic!()
    };
    let ExprKind::Cast {
        value,
        to: ScalarType::I32,
    } = &lhs.kind
    else {
        panic!()
    };
    assert_eq!(value.kind, ExprKind::Var(VarId(1)), "refers to the first x");
    let StmtKind::Assign { value, .. } = &k.body[2].kind else {
        panic!()
    };
    assert_eq!(value.kind, ExprKind::Var(*second));
}

#[test]
fn if_expression_select_and_hoisting() {
    let k = ok(syn::parse_quote! {
        fn k(a: f32, y: &mut [f32]) {
            let v = if a > 0.0 { a } else { 0.0 };
            let w = if a > 1.0 { let t = a * 2.0; t + 1.0 } else if a < -1.0 { -a } else { 3.0 };
            y[0] = v + w;
        }
    });
    let StmtKind::Let { init: Some(v), .. } = &k.body[0].kind else {
        panic!()
    };
    assert!(matches!(v.kind, ExprKind::Select { .. }));
    assert_eq!(v.ty, Type::F32);
    // The second `if` has a statement in a branch: `let tmp; if … { let t; tmp = … } else { … }`.
    let StmtKind::Let {
        var: tmp,
        init: None,
    } = k.body[1].kind
    else {
        panic!("{:?}", k.body[1])
    };
    assert_eq!(k.vars[tmp.0 as usize].ty, Type::F32);
    assert!(k.vars[tmp.0 as usize].mutable);
    let StmtKind::If {
        then,
        els: Some(els),
        ..
    } = &k.body[2].kind
    else {
        panic!()
    };
    assert!(matches!(then[0].kind, StmtKind::Let { .. }));
    assert!(matches!(then[1].kind, StmtKind::Assign { target: LValue::Var(t), .. } if t == tmp));
    assert!(matches!(
        &els[0].kind,
        StmtKind::Assign {
            value: Expr {
                kind: ExprKind::Select { .. },
                ..
            },
            ..
        }
    ));
    let StmtKind::Let { init: Some(w), .. } = &k.body[3].kind else {
        panic!()
    };
    assert_eq!(w.kind, ExprKind::Var(tmp));
}

#[test]
fn short_circuit_keeps_hoisted_statements_conditional() {
    let k = ok(syn::parse_quote! {
        fn k(x: &[i32], y: &mut [i32]) {
            let i = global_id_x();
            if i < x.len() && { let v = x[i]; v > 0 } {
                y[i] = 1;
            }
        }
    });
    // `let t = i < len; if t { let v = x[i]; t = v > 0 } if t { … }`
    let StmtKind::Let { var: t, .. } = k.body[1].kind else {
        panic!("{:?}", k.body[1])
    };
    let StmtKind::If { then, .. } = &k.body[2].kind else {
        panic!()
    };
    assert!(matches!(then[0].kind, StmtKind::Let { .. }));
    let StmtKind::If { cond, .. } = &k.body[3].kind else {
        panic!()
    };
    assert_eq!(cond.kind, ExprKind::Var(t));
}

#[test]
fn for_loops_in_every_form() {
    let k = ok(syn::parse_quote! {
        fn k(n: u32, y: &mut [u32]) {
            for i in 0..n { y[0] += i; }
            for i in (0..n).rev() { y[1] += i; }
            for i in (0..n).step_by(2) { y[2] += i; }
            for i in (0..n).rev().step_by(3) { y[3] += i; }
            for _ in 0..10 {}
        }
    });
    let forms: Vec<(ForDir, Expr)> = k
        .body
        .iter()
        .map(|s| match &s.kind {
            StmtKind::For(ForLoop { dir, step, .. }) => (*dir, step.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    let u = |v| Expr::constant(Const::U32(v));
    assert_eq!(forms[0], (ForDir::Up, u(1)));
    assert_eq!(forms[1], (ForDir::Down, u(1)));
    assert_eq!(forms[2], (ForDir::Up, u(2)));
    assert_eq!(forms[3], (ForDir::Down, u(3)));
    let StmtKind::For(ForLoop { var, start, .. }) = &k.body[4].kind else {
        panic!()
    };
    assert_eq!(k.vars[var.0 as usize].ty, Type::I32);
    assert_eq!(start.ty, Type::I32);
}

#[test]
fn compound_assignment_on_element_evaluates_index_once() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [f32]) {
            let i = global_id_x();
            y[i * 2 + 1] += 1.0;
            y[i] *= 2.0;
            let mut s = 0u32;
            s <<= 3;
            s ^= 1;
        }
    });
    let StmtKind::Let { var: idx, .. } = k.body[1].kind else {
        panic!("{:?}", k.body[1])
    };
    let StmtKind::Assign {
        target: LValue::Index { index, .. },
        value,
    } = &k.body[2].kind
    else {
        panic!()
    };
    assert_eq!(index.kind, ExprKind::Var(idx));
    let lhs = add_lhs(value);
    assert!(matches!(&lhs.kind, ExprKind::Index { index, .. } if index.kind == ExprKind::Var(idx)));
    // `y[i] *= 2.0` needs no temporary.
    assert!(matches!(k.body[3].kind, StmtKind::Assign { .. }));
}

#[test]
fn while_loop_break_continue_return() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [i32]) {
            let mut i = 0;
            while i < 10 {
                i += 1;
                if i == 3 { continue; }
                if i == 8 { break; }
            }
            loop { if i > 100 { return; } i = i * 2; }
        }
    });
    assert!(matches!(k.body[1].kind, StmtKind::While { .. }));
    let StmtKind::While { cond, .. } = &k.body[2].kind else {
        panic!()
    };
    assert_eq!(cond.kind, ExprKind::Const(Const::Bool(true)));
}

#[test]
fn math_methods_and_integer_min_max() {
    let k = ok(syn::parse_quote! {
        fn k(x: &[f32], y: &mut [f32], z: &mut [i32]) {
            let a = x[0].sqrt() + x[1].mul_add(2.0, 1.0) + x[2].powi(3) + x[3].max(0.5);
            y[0] = a.abs() + f32::min(a, 1.0) + std::f32::consts::PI;
            z[0] = (-3i32).abs().max(2);
        }
    });
    let StmtKind::Let { init: Some(a), .. } = &k.body[0].kind else {
        panic!()
    };
    assert_eq!(a.ty, Type::F32);
    let mut found = Vec::new();
    fn walk(e: &Expr, out: &mut Vec<(MathFn, Vec<Type>)>) {
        match &e.kind {
            ExprKind::Intrinsic {
                intrinsic: Intrinsic::Math(m),
                args,
            } => {
                out.push((*m, args.iter().map(|a| a.ty.clone()).collect()));
                args.iter().for_each(|a| walk(a, out));
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                walk(lhs, out);
                walk(rhs, out);
            }
            _ => {}
        }
    }
    walk(a, &mut found);
    assert!(found.contains(&(MathFn::Powi, vec![Type::F32, Type::I32])));
    assert!(found.contains(&(MathFn::MulAdd, vec![Type::F32, Type::F32, Type::F32])));
    let StmtKind::Assign { value, .. } = &k.body[2].kind else {
        panic!()
    };
    assert_eq!(value.ty, Type::I32);
}

#[test]
fn helper_calls_take_their_type_from_context() {
    let k = ok(syn::parse_quote! {
        fn k(x: &[f32], y: &mut [f32]) {
            let i = global_id_x();
            let r: f32 = square(x[i]);
            y[i] = r + util::cube(r);
            touch(y);
        }
    });
    let StmtKind::Let { init: Some(c), .. } = &k.body[1].kind else {
        panic!()
    };
    assert_eq!(
        c.kind,
        ExprKind::Call {
            func: "square".into(),
            args: vec![Expr {
                kind: ExprKind::Index {
                    array: Box::new(Expr::var(VarId(0), Type::global_array(Type::F32))),
                    index: Box::new(Expr::var(VarId(2), Type::U32)),
                },
                ty: Type::F32,
            }]
        }
    );
    assert_eq!(c.ty, Type::F32);
    let StmtKind::Expr(t) = &k.body[3].kind else {
        panic!()
    };
    assert_eq!(t.ty, Type::Unit);
}

#[test]
fn helper_literal_arguments_take_the_call_s_type() {
    let k = ok(syn::parse_quote! {
        fn k(x: &[f32], y: &mut [f32], n: &mut [u32]) {
            y[0] = smoothstep(-1.0, 2.0, x[0]);
            n[0] = pick(n[1], 3);
        }
    });
    let StmtKind::Assign { value, .. } = &k.body[0].kind else {
        panic!()
    };
    let ExprKind::Call { args, .. } = &value.kind else {
        panic!()
    };
    assert_eq!(args[0].kind, ExprKind::Const(Const::f32(-1.0)));
    assert_eq!(args[1].ty, Type::F32);
    let StmtKind::Assign { value, .. } = &k.body[1].kind else {
        panic!()
    };
    let ExprKind::Call { args, .. } = &value.kind else {
        panic!()
    };
    assert_eq!(args[1].kind, ExprKind::Const(Const::U32(3)));
}

#[test]
fn device_functions_lower_and_refuse_recursion() {
    let item: syn::ItemFn = syn::parse_quote! {
        fn clampf(v: f32, lo: f32, hi: f32) -> f32 {
            if v < lo { return lo; }
            v.min(hi)
        }
    };
    let l = lower_fn(&item, false).unwrap_or_else(|e| panic!("{:?}", e.messages()));
    let f = device_fn::function_ir("clampf", &l);
    assert_eq!(f.ret, Type::F32);
    assert!(matches!(
        f.body.last(),
        Some(Stmt {
            kind: StmtKind::Return(Some(_)),
            ..
        })
    ));
    let rec: syn::ItemFn = syn::parse_quote! {
        fn fact(n: u32) -> u32 { if n == 0 { 1 } else { n * fact(n - 1) } }
    };
    let e = lower_fn(&rec, false)
        .err()
        .map(|e| e.messages())
        .unwrap_or_default();
    assert!(
        e.iter()
            .any(|m| m.contains("recursion is not supported on GPUs")),
        "{e:?}"
    );
    let no_value: syn::ItemFn = syn::parse_quote! { fn f(v: f32) -> f32 { let w = v; } };
    let e = lower_fn(&no_value, false)
        .err()
        .map(|e| e.messages())
        .unwrap_or_default();
    assert!(
        e.iter().any(|m| m.contains("does not end with a value")),
        "{e:?}"
    );
}

#[test]
fn untyped_helper_arguments_are_guessed_and_marked_for_the_signature_check() {
    use crate::lower::ArgHint;
    use crate::types::{Scalar, Ty};
    let item: syn::ItemFn = syn::parse_quote! {
        fn k(x: &mut [i32]) {
            let i = global_id_x();
            let c = 3;
            put(x, i, c);
            let r: i64 = g(7, 1i64);
            put(x, i, c);
        }
    };
    let l = lower_fn(&item, true).unwrap_or_else(|e| panic!("{:?}", e.messages()));
    assert_eq!(l.calls.len(), 3);
    // `c` took `usize` from `i` (a guess the compile-time check verifies), at both calls.
    let (ty, _, hint, guessed) = &l.calls[0].args[2];
    assert_eq!(*ty, Ty::USIZE);
    assert_eq!(*hint, ArgHint::Var("c".into()));
    assert!(*guessed);
    assert!(l.calls[2].args[2].3);
    // `7` took `i64` from the other argument and the result; `1i64` and the buffer were typed.
    let g = &l.calls[1];
    assert_eq!(g.args[0].0, Ty::Scalar(Scalar::I64));
    assert_eq!(g.args[0].2, ArgHint::Literal("7".into()));
    assert!(g.args[0].3);
    assert!(!g.args[1].3);
    assert_eq!(g.ret, Ty::Scalar(Scalar::I64));
    assert!(!l.calls[0].args[0].3);
    assert_eq!(l.calls[0].ret, Ty::Unit);
    assert_eq!(l.helpers.len(), 2);
    assert_eq!((l.calls[0].helper, l.calls[1].helper), (0, 1));
}
