//! The constructs of the language issue: shared and local arrays, barriers and fences, atomics,
//! warp operations and `match`. Every kernel that lowers is validated (`super::lower`).

use super::{assert_errors_say, lower, ok};
use crate::lower::lower_fn;
use spoc_ir::{
    AtomicOp, BinOp, Const, Expr, ExprKind, FenceScope, ForLoop, Intrinsic, Kernel, LValue,
    MemSpace, Pattern, ShuffleKind, Stmt, StmtKind, Type, VarKind,
};

fn shared(elem: Type, len: Option<u32>) -> Type {
    Type::Array {
        elem: std::sync::Arc::new(elem),
        space: MemSpace::Shared,
        len,
    }
}

fn local(elem: Type, len: u32) -> Type {
    Type::Array {
        elem: std::sync::Arc::new(elem),
        space: MemSpace::Local,
        len: Some(len),
    }
}

/// Every expression of `body`, depth first.
fn exprs(body: &[Stmt]) -> Vec<Expr> {
    fn expr(e: &Expr, out: &mut Vec<Expr>) {
        out.push(e.clone());
        match &e.kind {
            ExprKind::Index { array, index } => {
                expr(array, out);
                expr(index, out);
            }
            ExprKind::Unary { operand, .. } => expr(operand, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                expr(lhs, out);
                expr(rhs, out);
            }
            ExprKind::Intrinsic { args, .. } | ExprKind::Call { args, .. } => {
                args.iter().for_each(|a| expr(a, out))
            }
            ExprKind::Cast { value, .. } | ExprKind::ArrayRepeat { value, .. } => expr(value, out),
            ExprKind::Select { cond, then, els } => {
                expr(cond, out);
                expr(then, out);
                expr(els, out);
            }
            ExprKind::Match { scrutinee, arms } => {
                expr(scrutinee, out);
                arms.iter().for_each(|(_, a)| expr(a, out));
            }
            ExprKind::Len(a) => expr(a, out),
            _ => {}
        }
    }
    fn block(b: &[Stmt], out: &mut Vec<Expr>) {
        for s in b {
            match &s.kind {
                StmtKind::Let { init: Some(e), .. }
                | StmtKind::Expr(e)
                | StmtKind::Return(Some(e)) => expr(e, out),
                StmtKind::Assign { target, value } => {
                    if let LValue::Index { index, .. } = target {
                        expr(index, out);
                    }
                    expr(value, out);
                }
                StmtKind::If { cond, then, els } => {
                    expr(cond, out);
                    block(then, out);
                    block(els.as_deref().unwrap_or(&[]), out);
                }
                StmtKind::While { cond, body } => {
                    expr(cond, out);
                    block(body, out);
                }
                StmtKind::For(ForLoop { body, .. }) | StmtKind::Block(body) => block(body, out),
                StmtKind::Match { scrutinee, arms } => {
                    expr(scrutinee, out);
                    arms.iter().for_each(|(_, b)| block(b, out));
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    block(body, &mut out);
    out
}

/// The intrinsic calls of `k`, with their argument types and result type.
fn intrinsics(k: &Kernel) -> Vec<(Intrinsic, Vec<Type>, Type)> {
    exprs(&k.body)
        .into_iter()
        .filter_map(|e| match e.kind {
            ExprKind::Intrinsic { intrinsic, args } if !intrinsic.is_index() => {
                Some((intrinsic, args.iter().map(|a| a.ty.clone()).collect(), e.ty))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn shared_arrays_are_hoisted_to_the_kernel() {
    let k = ok(syn::parse_quote! {
        fn k(x: &[f32], y: &mut [f32]) {
            let t = thread_idx_x();
            let tile = shared_array::<f32, 256>();
            tile[t] = x[t];
            sync_threads();
            y[t] = tile[255 - t] + tile.len() as f32;
        }
    });
    assert_eq!(k.shared.len(), 1);
    let decl = &k.shared[0];
    assert_eq!((decl.elem.clone(), decl.len), (Type::F32, Some(256)));
    let v = k.var(decl.var);
    assert_eq!(
        (v.name.as_str(), v.kind, v.ty.clone()),
        ("tile", VarKind::Shared, shared(Type::F32, Some(256)))
    );
    // No statement for the declaration: `let t`, the store, the barrier, the store.
    let kinds: Vec<&StmtKind> = k.body.iter().map(|s| &s.kind).collect();
    assert_eq!(kinds.len(), 4, "{kinds:#?}");
    assert!(matches!(
        kinds[1],
        StmtKind::Assign { target: LValue::Index { base, .. }, .. } if **base == LValue::Var(decl.var)
    ));
    assert_eq!(kinds[2], &StmtKind::Barrier);
    // `tile.len()` is the constant 256.
    assert!(exprs(&k.body)
        .iter()
        .any(|e| e.kind == ExprKind::Const(Const::U32(256))));
}

#[test]
fn shared_2d_is_flattened_row_major() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [f32]) {
            let tile = shared_array_2d::<f32, 16, 17>();
            let r = thread_idx_y();
            let c = thread_idx_x();
            tile[r][c] += 1.0;
            y[0] = tile[c][r] + tile.len() as f32;
        }
    });
    assert_eq!(k.shared[0].len, Some(16 * 17));
    // `tile[r][c] += 1.0`: the index `r * 17 + c` is computed once, into a temporary.
    let StmtKind::Let {
        init: Some(idx), ..
    } = &k.body[2].kind
    else {
        panic!("{:#?}", k.body)
    };
    let ExprKind::Binary {
        op: BinOp::Add,
        lhs,
        rhs,
    } = &idx.kind
    else {
        panic!("{idx:?}")
    };
    assert!(matches!(&rhs.kind, ExprKind::Var(_)));
    let ExprKind::Binary {
        op: BinOp::Mul,
        rhs: width,
        ..
    } = &lhs.kind
    else {
        panic!("{lhs:?}")
    };
    assert_eq!(width.kind, ExprKind::Const(Const::U32(17)));
    // `tile.len()` is the number of rows.
    assert!(exprs(&k.body)
        .iter()
        .any(|e| e.kind == ExprKind::Const(Const::U32(16))));
}

#[test]
fn dynamic_shared_is_sized_at_launch() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [u32]) {
            let buf = dynamic_shared::<u32>();
            let n = buf.len();
            buf[thread_idx_x() % n] = 1u32;
            y[0] = buf[0];
        }
    });
    assert_eq!(k.shared[0].len, None);
    assert_eq!(k.var(k.shared[0].var).ty, shared(Type::U32, None));
    assert!(exprs(&k.body)
        .iter()
        .any(|e| matches!(&e.kind, ExprKind::Len(a) if a.ty == shared(Type::U32, None))));
}

#[test]
fn shared_length_may_be_literal_arithmetic() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [f32]) {
            let a = shared_array::<f32, { 16 * 16 + 1 }>();
            a[0] = 1.0;
            y[0] = a[0];
        }
    });
    assert_eq!(k.shared[0].len, Some(257));
}

#[test]
fn barriers_and_fences_are_statements() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [f32]) {
            sync_threads();
            sync_warp();
            thread_fence_block();
            spoc::intrinsics::thread_fence();
        }
    });
    let kinds: Vec<StmtKind> = k.body.iter().map(|s| s.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            StmtKind::Barrier,
            StmtKind::WarpBarrier,
            StmtKind::MemFence(FenceScope::Block),
            StmtKind::MemFence(FenceScope::Device),
        ]
    );
}

#[test]
fn every_atomic_on_buffers_and_shared_arrays() {
    let k = ok(syn::parse_quote! {
        fn k(h: &mut [u32], f: &mut [f32], w: &mut [i64]) {
            let s = shared_array::<i32, 8>();
            let old = atomic_add(&mut h[0], 1u32);
            atomic_sub(&mut h[1], old);
            atomic_min(&mut s[1], -3);
            atomic_max(&mut w[0], 7);
            atomic_exchange(&mut h[2], 5);
            let prev = atomic_compare_exchange(&mut h[3], 0, 9);
            atomic_and(&mut s[2], 6);
            atomic_or(&mut h[4], prev);
            atomic_xor(&mut w[1], 1);
            atomic_add(&mut f[0], 0.5);
        }
    });
    let got: Vec<(Intrinsic, Vec<Type>, Type)> = intrinsics(&k);
    let global = |t: Type| Type::global_array(t);
    let expect = [
        (AtomicOp::Add, global(Type::U32), Type::U32),
        (AtomicOp::Sub, global(Type::U32), Type::U32),
        (AtomicOp::Min, shared(Type::I32, Some(8)), Type::I32),
        (AtomicOp::Max, global(Type::I64), Type::I64),
        (AtomicOp::Exchange, global(Type::U32), Type::U32),
        (AtomicOp::CompareExchange, global(Type::U32), Type::U32),
        (AtomicOp::And, shared(Type::I32, Some(8)), Type::I32),
        (AtomicOp::Or, global(Type::U32), Type::U32),
        (AtomicOp::Xor, global(Type::I64), Type::I64),
        (AtomicOp::Add, global(Type::F32), Type::F32),
    ];
    assert_eq!(got.len(), expect.len(), "{got:#?}");
    for ((i, args, ty), (op, array, elem)) in got.iter().zip(expect) {
        assert_eq!(*i, Intrinsic::Atomic(op));
        assert_eq!(args[0], array);
        assert_eq!(args[1], Type::U32, "the index");
        let n = if op == AtomicOp::CompareExchange {
            4
        } else {
            3
        };
        assert_eq!(args.len(), n);
        assert!(args[2..].iter().all(|a| *a == elem), "{op:?}: {args:?}");
        assert_eq!(*ty, elem);
    }
}

#[test]
fn atomics_on_2d_shared_elements_flatten_the_index() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [u32]) {
            let t = shared_array_2d::<u32, 4, 8>();
            atomic_add(&mut t[1][2], 1u32);
        }
    });
    let args = exprs(&k.body)
        .into_iter()
        .find_map(|e| match e.kind {
            ExprKind::Intrinsic {
                intrinsic: Intrinsic::Atomic(AtomicOp::Add),
                args,
            } => Some(args),
            _ => None,
        })
        .expect("an atomic");
    assert!(matches!(
        args[1].kind,
        ExprKind::Binary { op: BinOp::Add, .. }
    ));
}

#[test]
fn warp_operations_are_typed() {
    let k = ok(syn::parse_quote! {
        fn k(x: &[f32], y: &mut [f32], m: &mut [u32]) {
            let lane = lane_id();
            let w = warp_size();
            let v = x[lane];
            let a = shuffle(v, 0);
            let b = shuffle_up(v, 1);
            let c = shuffle_down(v, w / 2);
            let d = shuffle_xor(lane as i64, 16);
            if vote_any(v > 0.0) && vote_all(v < 9.0) {
                y[lane] = a + b + c + d as f32;
            }
            m[lane] = ballot(v > 1.0);
        }
    });
    let got = intrinsics(&k);
    let want = [
        (Intrinsic::LaneId, vec![], Type::U32),
        (Intrinsic::WarpSize, vec![], Type::U32),
        (
            Intrinsic::Shuffle(ShuffleKind::Index),
            vec![Type::F32, Type::U32],
            Type::F32,
        ),
        (
            Intrinsic::Shuffle(ShuffleKind::Up),
            vec![Type::F32, Type::U32],
            Type::F32,
        ),
        (
            Intrinsic::Shuffle(ShuffleKind::Down),
            vec![Type::F32, Type::U32],
            Type::F32,
        ),
        (
            Intrinsic::Shuffle(ShuffleKind::Xor),
            vec![Type::I64, Type::U32],
            Type::I64,
        ),
        (Intrinsic::VoteAny, vec![Type::BOOL], Type::BOOL),
        (Intrinsic::VoteAll, vec![Type::BOOL], Type::BOOL),
        (Intrinsic::Ballot, vec![Type::BOOL], Type::U32),
    ];
    assert_eq!(got, want);
}

#[test]
fn local_arrays_repeat_index_and_len() {
    let k = ok(syn::parse_quote! {
        fn k(x: &[f32], y: &mut [f32]) {
            let mut a = [0.0; 16];
            let b: [u32; 4] = [1; 4];
            for j in 0..a.len() {
                a[j] = x[j] * 2.0;
            }
            a[3] += b[2] as f32;
            y[0] = a[3];
        }
    });
    // `0.0` takes `f32` from its use: `a[j] = x[j] * 2.0`.
    assert_eq!(
        super::var_ty(&k, "a"),
        vec![local(Type::F32, 16)],
        "{:#?}",
        k.vars
    );
    assert_eq!(super::var_ty(&k, "b"), vec![local(Type::U32, 4)]);
    let init = super::let_init(&k, 0);
    assert_eq!(
        init.kind,
        ExprKind::ArrayRepeat {
            value: Box::new(Expr::constant(Const::f32(0.0))),
            len: 16
        }
    );
    let StmtKind::For(ForLoop { end, .. }) = &k.body[2].kind else {
        panic!("{:#?}", k.body[2])
    };
    assert_eq!(end.kind, ExprKind::Const(Const::U32(16)));
}

#[test]
fn local_array_element_type_defaults_like_its_literal() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [f64]) {
            let mut a = [0.0; 2];
            a[1] = 1.5;
            y[0] = a[1];
            let c = [7; 3];
            let d = c[0];
        }
    });
    assert_eq!(super::var_ty(&k, "a"), vec![local(Type::F64, 2)]);
    assert_eq!(super::var_ty(&k, "c"), vec![local(Type::I32, 3)]);
    assert_eq!(super::var_ty(&k, "d"), vec![Type::I32]);
}

#[test]
fn match_statement_with_literals_ranges_alternatives() {
    let k = ok(syn::parse_quote! {
        fn k(n: i32, y: &mut [f32]) {
            match n {
                0 => y[0] = 1.0,
                1 | 2 => { y[1] = 2.0; }
                -5..=-1 => {}
                10..20 => y[2] = 3.0,
                i32::MAX => {}
                _ => y[3] = 4.0,
            }
        }
    });
    let StmtKind::Match { scrutinee, arms } = &k.body[0].kind else {
        panic!("{:#?}", k.body)
    };
    assert_eq!(scrutinee.ty, Type::I32);
    let pats: Vec<&Pattern> = arms.iter().map(|(p, _)| p).collect();
    assert_eq!(
        pats,
        [
            &Pattern::Int(Const::I32(0)),
            &Pattern::Or(vec![
                Pattern::Int(Const::I32(1)),
                Pattern::Int(Const::I32(2))
            ]),
            &Pattern::Range(Const::I32(-5), Const::I32(-1)),
            &Pattern::Range(Const::I32(10), Const::I32(19)),
            &Pattern::Int(Const::I32(i32::MAX)),
            &Pattern::Wildcard,
        ]
    );
    assert!(matches!(arms[0].1[0].kind, StmtKind::Assign { .. }));
}

#[test]
fn match_literals_take_the_scrutinee_type() {
    let k = ok(syn::parse_quote! {
        fn k(y: &mut [u32]) {
            let v = match global_id_x() {
                0 => 10u32,
                1..=3 => 20,
                4.. => 30,
            };
            y[0] = v;
        }
    });
    let init = super::let_init(&k, 0);
    let ExprKind::Match { scrutinee, arms } = &init.kind else {
        panic!("{init:?}")
    };
    assert_eq!(scrutinee.ty, Type::U32);
    assert_eq!(arms[1].0, Pattern::Range(Const::U32(1), Const::U32(3)));
    assert_eq!(
        arms[2].0,
        Pattern::Range(Const::U32(4), Const::U32(u32::MAX))
    );
    assert_eq!(arms[1].1, Expr::constant(Const::U32(20)));
}

#[test]
fn match_value_with_statements_in_arms_is_hoisted() {
    let k = ok(syn::parse_quote! {
        fn k(n: u64, y: &mut [f32]) {
            let v: f32 = match n {
                0 => { let t = 2.0; t * t }
                _ => 1.0,
            };
            y[0] = v;
        }
    });
    // `let tmp; match n { 0 => { let t; tmp = t * t } _ => { tmp = 1.0 } } let v = tmp;`
    assert!(matches!(k.body[0].kind, StmtKind::Let { init: None, .. }));
    let StmtKind::Match { arms, .. } = &k.body[1].kind else {
        panic!("{:#?}", k.body)
    };
    assert_eq!(arms[0].0, Pattern::Int(Const::U64(0)));
    assert_eq!(arms[0].1.len(), 2);
    assert_eq!(arms[1].1.len(), 1);
}

#[test]
fn device_functions_take_warp_ops_and_atomics_but_not_shared_memory() {
    let item: syn::ItemFn = syn::parse_quote! {
        fn warp_sum(v: f32, h: &mut [u32]) -> f32 {
            atomic_add(&mut h[0], 1u32);
            sync_warp();
            let mut s = v;
            let mut off = 16;
            while off > 0 {
                s += shuffle_down(s, off);
                off /= 2;
            }
            match lane_id() { 0 => s, _ => 0.0 }
        }
    };
    assert!(lower_fn(&item, false).is_ok());
    let item: syn::ItemFn = syn::parse_quote! {
        fn h(v: f32) -> f32 { let t = shared_array::<f32, 32>(); t[0] = v; t[0] }
    };
    let e = lower_fn(&item, false)
        .err()
        .map(|e| e.messages())
        .unwrap_or_default();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("shared memory can only be declared in a kernel"),
        "{e:?}"
    );
    let item: syn::ItemFn = syn::parse_quote! { fn h() { sync_threads(); } };
    let e = lower_fn(&item, false)
        .err()
        .map(|e| e.messages())
        .unwrap_or_default();
    assert!(e[0].contains("call it from the #[kernel] body"), "{e:?}");
}

/// (kernel source, a phrase its single error must contain).
const LANG_ERRORS: &[(&str, &str)] = &[
    (
        "fn k(x: &[u32]) { atomic_add(&mut x[0], 1u32); }",
        "`x` is a read-only `&[u32]` buffer; declare the parameter as `&mut [u32]`",
    ),
    (
        "fn k(y: &mut [u32]) { let mut c = 0u32; atomic_add(&mut c, 1u32); }",
        "not on the variable `c`",
    ),
    (
        "fn k(y: &mut [u32]) { let mut a = [0u32; 4]; atomic_add(&mut a[0], 1u32); }",
        "not on the local array `a`",
    ),
    (
        "fn k(y: &mut [u32]) { atomic_add(&y[0], 1u32); }",
        "write `&mut`, not `&`",
    ),
    (
        "fn k(y: &mut [u32]) { atomic_add(y[0], 1u32); }",
        "must be `&mut a[i]`",
    ),
    (
        "fn k(y: &mut [f32]) { atomic_min(&mut y[0], 1.0); }",
        "`atomic_min` works on elements of type `i32`, `u32`, `i64` and `u64`, not `f32`",
    ),
    (
        "fn k(y: &mut [u32]) { atomic_add(&mut y[0], 1.0); }",
        "the value of `atomic_add` has the element type of `y`",
    ),
    (
        "fn k(y: &mut [u32]) { atomic_compare_exchange(&mut y[0], 1u32); }",
        "takes 3 arguments, 2 given",
    ),
    (
        "fn k(y: &mut [u32]) { let a = dynamic_shared::<u32>(); let b = dynamic_shared::<f32>(); }",
        "one `dynamic_shared` array",
    ),
    (
        "fn k(y: &mut [u32]) { let a = shared_array::<u32, 0>(); }",
        "length 0",
    ),
    (
        "fn k(y: &mut [u32]) { let a = shared_array::<u32, N>(); }",
        "constants declared outside the kernel are not visible",
    ),
    (
        "fn k(y: &mut [u32]) { let a = shared_array::<u32>(); }",
        "`shared_array::<T, N>()`",
    ),
    (
        "fn k(y: &mut [u32]) { shared_array::<u32, 4>(); }",
        "use it alone as the value of a `let`",
    ),
    (
        "fn k(y: &mut [u32]) { let t = shared_array_2d::<u32, 4, 4>(); y[0] = t[1]; }",
        "index it as `t[row][col]`",
    ),
    (
        "fn k(y: &mut [u32]) { let t = shared_array::<u32, 4>(); t[0][1] = 1; }",
        "`t` has one dimension",
    ),
    (
        "fn k(y: &mut [u32]) { let t = [0u32; 4]; let n: u32 = t.len(); }",
        "expected `u32`, found `usize`",
    ),
    (
        "fn k(y: &mut [u32]) { let t = shared_array::<u32, 4>(); y[0] = t.iter(); }",
        "arrays support indexing",
    ),
    (
        "fn k(y: &mut [u32]) { let t = [0u32; 4]; let s: u32 = helper(t); }",
        "cannot be passed to #[device] functions",
    ),
    (
        "fn k(y: &mut [u32]) { let t = shared_array::<u32, 4>(); t = t; }",
        "whole array",
    ),
    (
        "fn k(y: &mut [u32]) { let a = [0u32; 4]; a[0] = 1; }",
        "declare it with `let mut a`",
    ),
    (
        "fn k(y: &mut [u32]) { let a = [0u32; 4]; let b = a; }",
        "an array cannot be copied",
    ),
    (
        "fn k(y: &mut [u32]) { let a = [[0u32; 4]; 4]; }",
        "arrays of arrays",
    ),
    (
        "fn k(y: &mut [u32]) { let a = [0u32; 4]; y[0] = a + 1; }",
        "an array cannot be used as a value",
    ),
    (
        "fn k(y: &mut [u32]) { let v = sync_threads(); }",
        "is a statement",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = shuffle(true, 1); }",
        "moves numbers",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = shuffle(y[0], 1u32); }",
        "is a `usize`",
    ),
    (
        "fn k(y: &mut [u32]) { y[0] = ballot(1); }",
        "the predicate of `ballot` is a `bool`",
    ),
    (
        "fn k(y: &mut [u32]) { match 3u32 { 0 => {} 1..=5 => {} } }",
        "non-exhaustive patterns: `6_u32..=u32::MAX` not covered",
    ),
    (
        "fn k(y: &mut [i32]) { y[0] = match y[1] { 0..=i32::MAX => 1, }; }",
        "`i32::MIN..=-1_i32` not covered",
    ),
    (
        "fn k(y: &mut [i32]) { match y[0] { 5..=3 => {} _ => {} } }",
        "lower range bound must be less than or equal to upper",
    ),
    (
        "fn k(y: &mut [u32]) { match y[0] { 300u64 => {} _ => {} } }",
        "mismatched types",
    ),
    (
        "fn k(y: &mut [u32]) { match y[0] { 5_000_000_000 => {} _ => {} } }",
        "out of range for `u32`",
    ),
    (
        "fn k(y: &mut [u32]) { match y[0] > 1 { true => {} _ => {} } }",
        "`match` on a `bool`",
    ),
    (
        "fn k(y: &mut [f32]) { match y[0] { _ => {} } }",
        "`match` works on integers",
    ),
    (
        "fn k(y: &mut [u32]) { match y[0] { n => y[1] = n } }",
        "bindings in `match` patterns",
    ),
    (
        "fn k(y: &mut [u32]) { match y[0] { LIMIT => {} _ => {} } }",
        "constants declared outside the kernel cannot be used as patterns",
    ),
    (
        "fn k(y: &mut [u32]) { let v = match y[0] { 0 => 1.0, _ => 2 }; }",
        "`match` arms have incompatible types",
    ),
    (
        "fn k(y: &mut [u32]) { match y[0] { 0 => 1, _ => {} } }",
        "expected `()`",
    ),
];

#[test]
fn language_errors_say_what_to_write() {
    assert_errors_say(LANG_ERRORS);
}

#[test]
fn negative_literal_patterns_parse_with_their_sign() {
    let k = lower(syn::parse_quote! {
        fn k(y: &mut [i64]) {
            match y[0] { -3 => y[1] = 1, i64::MIN..=-4 => {} _ => {} }
        }
    })
    .unwrap_or_else(|e| panic!("{e:?}"));
    let StmtKind::Match { arms, .. } = &k.body[0].kind else {
        panic!()
    };
    assert_eq!(arms[0].0, Pattern::Int(Const::I64(-3)));
    assert_eq!(
        arms[1].0,
        Pattern::Range(Const::I64(i64::MIN), Const::I64(-4))
    );
}
