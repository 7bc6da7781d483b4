//! The validator: one ill-formed kernel per rule, each asserting the message's key words, and
//! valid kernels that pass.

mod support;

use spoc_ir::*;
use support::*;

/// A kernel `k(a: f32, n: i32, x: &[f32], y: &mut [f32], ux: &mut [u32])` whose body evaluates
/// the expression `f` builds, at line 7.
fn with_expr(f: impl FnOnce(&mut Builder, Vars) -> Expr) -> Kernel {
    with_exprs(|b, v| vec![f(b, v)])
}

/// Like [`with_expr`], one statement per expression.
fn with_exprs(f: impl FnOnce(&mut Builder, Vars) -> Vec<Expr>) -> Kernel {
    let mut b = Builder::new();
    let vars = Vars {
        a: b.param("a", Type::F32, false),
        n: b.param("n", Type::I32, false),
        x: b.buf("x", Type::F32),
        y: b.buf_mut("y", Type::F32),
        ux: b.buf_mut("ux", Type::U32),
    };
    for e in f(&mut b, vars) {
        b.push(at_line(7, StmtKind::Expr(e)));
    }
    b.kernel("k")
}

#[derive(Clone, Copy)]
struct Vars {
    a: VarId,
    n: VarId,
    x: VarId,
    y: VarId,
    ux: VarId,
}

// ---------------------------------------------------------------- valid kernels

#[test]
fn saxpy_is_valid() {
    assert_valid(&saxpy());
}

#[test]
fn reduction_with_shared_memory_loops_and_atomics_is_valid() {
    assert_valid(&block_sum());
}

#[test]
fn records_variants_match_and_helpers_are_valid() {
    assert_valid(&shapes_kernel());
}

#[test]
fn valid_operator_corner_cases() {
    // u32 << i32, bool & bool, -u32 (wraps), !i32, abs/min/max on integers, powi, mul_add,
    // f32 % f32, bool < bool, shuffle of f32, ballot, casts to and from f16.
    let k = with_exprs(|b, v| {
        let parts = vec![
            bin(BinOp::Shl, u32c(1), i32c(3)),
            bin(BinOp::BitAnd, boolc(true), boolc(false)),
            un(UnOp::Neg, u32c(1)),
            un(UnOp::Not, b.v(v.n)),
            math(MathFn::Abs, vec![b.v(v.n)]),
            math(MathFn::Max, vec![b.v(v.n), i32c(0)]),
            math(MathFn::Powi, vec![b.v(v.a), i32c(3)]),
            math(MathFn::MulAdd, vec![b.v(v.a), f32c(2.0), f32c(1.0)]),
            bin(BinOp::Rem, b.v(v.a), f32c(2.0)),
            bin(BinOp::Lt, boolc(false), boolc(true)),
            intr(
                Intrinsic::Shuffle(ShuffleKind::Down),
                vec![b.v(v.a), u32c(1)],
                Type::F32,
            ),
            intr(Intrinsic::Ballot, vec![boolc(true)], Type::U32),
            cast(cast(b.v(v.a), ScalarType::F16), ScalarType::F64),
            cast(boolc(true), ScalarType::U32),
        ];
        parts
    });
    assert_valid(&k);
}

#[test]
fn a_deferred_let_may_be_assigned_once_and_valid_control_flow_passes() {
    // let r: f32; if a > 0 { r = a } else { r = 0 }; while true { if .. { break } else { continue } }
    let mut b = Builder::new();
    let a = b.param("a", Type::F32, false);
    let y = b.buf_mut("y", Type::F32);
    let r = b.local("r", Type::F32, false);
    b.push(stmt(StmtKind::Let { var: r, init: None }));
    b.push(stmt(if_(
        bin(BinOp::Gt, b.v(a), f32c(0.0)),
        vec![stmt(assign(lv(r), b.v(a)))],
        Some(vec![stmt(assign(lv(r), f32c(0.0)))]),
    )));
    b.push(stmt(StmtKind::While {
        cond: boolc(true),
        body: vec![stmt(if_(
            bin(BinOp::Gt, b.v(r), f32c(1.0)),
            vec![stmt(StmtKind::Break)],
            Some(vec![stmt(StmtKind::Continue)]),
        ))],
    }));
    b.push(stmt(assign(lidx(lv(y), u32c(0)), b.v(r))));
    b.push(stmt(StmtKind::Return(None)));
    assert_valid(&b.kernel("k"));
}

// ---------------------------------------------------------------- variables and declarations

#[test]
fn variable_out_of_range() {
    let k = with_expr(|_, _| Expr::var(VarId(99), Type::F32));
    assert_invalid(
        &k,
        &["line 7:", "variable #99 does not exist", "5 variables"],
    );
}

#[test]
fn param_var_must_be_a_param() {
    let mut k = saxpy();
    k.vars[0].kind = VarKind::Local;
    assert_invalid(&k, &["parameter `a`", "local variable, not a parameter"]);
}

#[test]
fn param_type_must_match_its_variable() {
    let mut k = saxpy();
    k.vars[0].ty = Type::F64;
    assert_invalid(&k, &["parameter `a` has type `f32`", "declared `f64`"]);
}

#[test]
fn param_var_out_of_range() {
    let mut k = saxpy();
    k.params[1].var = VarId(40);
    assert_invalid(&k, &["parameter `x` refers to variable #40"]);
}

#[test]
fn shared_decl_must_point_at_a_shared_var() {
    let mut b = Builder::new();
    let t = b.local("t", Type::F32, false);
    b.shared("tile", Type::F32, Some(64));
    let mut k = b.kernel("k");
    k.shared[0].var = t;
    assert_invalid(&k, &["shared array declaration of `t`", "local variable"]);
}

#[test]
fn shared_decl_must_match_its_variable_type() {
    let mut b = Builder::new();
    b.shared("tile", Type::F32, Some(64));
    let mut k = b.kernel("k");
    k.shared[0].len = Some(128);
    assert_invalid(&k, &["`tile`", "shared [f32; 128]", "shared [f32; 64]"]);
}

#[test]
fn shared_var_needs_shared_array_type() {
    let mut b = Builder::new();
    b.shared("tile", Type::F32, Some(64));
    let mut k = b.kernel("k");
    k.vars[0].ty = Type::global_array(Type::F32);
    assert_invalid(&k, &["shared variable `tile`", "not a `shared` array"]);
}

#[test]
fn only_one_shared_array_sized_at_launch() {
    let mut b = Builder::new();
    b.shared("s1", Type::F32, None);
    b.shared("s2", Type::U32, None);
    assert_invalid(&b.kernel("k"), &["`s1` and `s2`", "sized at launch"]);
}

#[test]
fn let_must_declare_a_local() {
    let mut k = saxpy();
    k.body.push(stmt(StmtKind::Let {
        var: VarId(0),
        init: Some(f32c(1.0)),
    }));
    assert_invalid(
        &k,
        &["`let` declares `a`", "parameter variable, not a local"],
    );
}

#[test]
fn let_init_type_must_match() {
    let mut b = Builder::new();
    let i = b.local("i", Type::I32, false);
    b.push(at_line(
        3,
        StmtKind::Let {
            var: i,
            init: Some(gid_x()),
        },
    ));
    assert_invalid(
        &b.kernel("k"),
        &["line 3:", "`let i: i32`", "`global_id_x()`", "`u32`"],
    );
}

#[test]
fn local_used_outside_its_block() {
    let mut b = Builder::new();
    let y = b.buf_mut("y", Type::F32);
    let t = b.local("t", Type::F32, false);
    b.push(stmt(StmtKind::Block(vec![stmt(StmtKind::Let {
        var: t,
        init: Some(f32c(1.0)),
    })])));
    b.push(at_line(9, assign(lidx(lv(y), u32c(0)), b.v(t))));
    assert_invalid(
        &b.kernel("k"),
        &[
            "line 9:",
            "`t`",
            "not in scope",
            "outside the block of its `let`",
        ],
    );
}

#[test]
fn local_used_before_its_let() {
    let mut b = Builder::new();
    let y = b.buf_mut("y", Type::F32);
    let t = b.local("t", Type::F32, false);
    b.push(at_line(2, assign(lidx(lv(y), u32c(0)), b.v(t))));
    b.let_(t, f32c(1.0));
    assert_invalid(&b.kernel("k"), &["line 2:", "`t`", "no enclosing `let`"]);
}

#[test]
fn local_declared_twice() {
    let mut b = Builder::new();
    let t = b.local("t", Type::F32, false);
    b.let_(t, f32c(1.0));
    b.push(stmt(StmtKind::Block(vec![stmt(StmtKind::Let {
        var: t,
        init: Some(f32c(2.0)),
    })])));
    assert_invalid(&b.kernel("k"), &["declares `t`", "a second time"]);
}

#[test]
fn local_cannot_hold_a_buffer() {
    let mut b = Builder::new();
    b.local("view", Type::global_array(Type::F32), false);
    assert_invalid(&b.kernel("k"), &["`view`", "only local arrays"]);
}

#[test]
fn helpers_cannot_declare_shared_arrays() {
    let mut k = saxpy();
    let mut f = Builder::new().function("h", Type::Unit);
    f.vars.push(VarDecl {
        name: "tile".into(),
        ty: array_ty(Type::F32, MemSpace::Shared, 4),
        mutable: false,
        kind: VarKind::Shared,
    });
    k.functions.push(f);
    let e = validate(&k).unwrap_err();
    let IrError::Invalid {
        function, message, ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(function.as_deref(), Some("h"));
    assert!(
        message.contains("helper functions cannot declare shared arrays"),
        "{message}"
    );
    assert!(e.to_string().contains("helper `h`"), "{e}");
}

// ---------------------------------------------------------------- expression typing

#[test]
fn constant_with_wrong_type() {
    let k = with_expr(|_, _| retype(u32c(1), Type::I32));
    assert_invalid(
        &k,
        &[
            "line 7:",
            "`1u32` is typed `i32` in the IR, but it yields a `u32`",
        ],
    );
}

#[test]
fn variable_with_wrong_type() {
    let k = with_expr(|b, v| retype(b.v(v.a), Type::F64));
    assert_invalid(&k, &["`a` is typed `f64`", "yields an `f32`"]);
}

#[test]
fn index_of_a_non_array() {
    let k = with_expr(|b, v| index(b.v(v.a), u32c(0)));
    assert_invalid(&k, &["`a[0u32]` indexes `a`", "`f32`, not an array"]);
}

#[test]
fn index_must_be_u32() {
    let k = with_expr(|b, v| b.at(v.x, b.v(v.n)));
    assert_invalid(&k, &["the index of `x[n]`", "`i32`", "`u32` is needed"]);
}

#[test]
fn index_result_is_the_element_type() {
    let k = with_expr(|b, v| retype(b.at(v.x, u32c(0)), Type::F64));
    assert_invalid(&k, &["`x[0u32]` is typed `f64`", "yields an `f32`"]);
}

#[test]
fn index_works_on_shared_and_local_arrays() {
    let mut b = Builder::new();
    let tile = b.shared("tile", Type::U32, Some(8));
    let arr = b.local("arr", array_ty(Type::U32, MemSpace::Local, 4), true);
    b.let_(
        arr,
        Expr {
            kind: ExprKind::ArrayRepeat {
                value: Box::new(u32c(0)),
                len: 4,
            },
            ty: array_ty(Type::U32, MemSpace::Local, 4),
        },
    );
    b.push(stmt(assign(lidx(lv(arr), u32c(1)), b.at(tile, u32c(2)))));
    b.push(stmt(assign(lidx(lv(tile), u32c(0)), b.at(arr, u32c(1)))));
    assert_valid(&b.kernel("k"));
}

#[test]
fn field_must_exist() {
    let mut b = Builder::new();
    let p = b.param("p", Type::Record("Point".into()), false);
    b.push(at_line(5, StmtKind::Expr(field(b.v(p), "z", Type::F32))));
    let mut k = b.kernel("k");
    k.records = vec![record("Point", &[("x", Type::F32), ("y", Type::F32)])];
    assert_invalid(
        &k,
        &[
            "line 5:",
            "`p.z`",
            "record `Point` has no field `z`",
            "`x`, `y`",
        ],
    );
}

#[test]
fn field_of_a_non_record() {
    let k = with_expr(|b, v| field(b.v(v.a), "x", Type::F32));
    assert_invalid(&k, &["field `.x` of `a`", "`f32`, not a record"]);
}

#[test]
fn record_type_must_be_defined() {
    let mut b = Builder::new();
    b.param("p", Type::Record("Point".into()), false);
    assert_invalid(
        &b.kernel("k"),
        &["parameter `p`", "no record `Point` is defined"],
    );
}

#[test]
fn neg_needs_a_number() {
    let k = with_expr(|_, _| un(UnOp::Neg, boolc(true)));
    assert_invalid(&k, &["`-true`", "`-` needs a number, not a `bool`"]);
}

#[test]
fn not_needs_bool_or_integer() {
    let k = with_expr(|b, v| un(UnOp::Not, b.v(v.a)));
    assert_invalid(&k, &["`!a`", "needs a `bool` or an integer, not an `f32`"]);
}

#[test]
fn binary_operands_must_have_one_type() {
    let k = with_expr(|b, v| bin(BinOp::Add, gid_x(), b.v(v.n)));
    assert_invalid(
        &k,
        &[
            "`(global_id_x() + n)`",
            "different types, `u32` and `i32`",
            "`as`",
        ],
    );
}

#[test]
fn arithmetic_is_not_on_bool() {
    let k = with_expr(|_, _| bin(BinOp::Mul, boolc(true), boolc(false)));
    assert_invalid(&k, &["`*` needs numeric operands, not `bool`"]);
}

#[test]
fn arithmetic_is_not_on_f16() {
    let k = with_expr(|b, v| {
        let h = cast(b.v(v.a), ScalarType::F16);
        bin(BinOp::Add, h.clone(), h)
    });
    assert_invalid(&k, &["`f16` is a storage-only type", "as f32"]);
}

#[test]
fn bit_ops_are_not_on_floats() {
    let k = with_expr(|b, v| bin(BinOp::BitXor, b.v(v.a), b.v(v.a)));
    assert_invalid(&k, &["`^` needs integer or `bool` operands, not `f32`"]);
}

#[test]
fn shifts_need_integers() {
    let k = with_expr(|b, v| bin(BinOp::Shr, b.v(v.n), b.v(v.a)));
    assert_invalid(&k, &["`>>` needs integer operands, not `i32` and `f32`"]);
}

#[test]
fn comparisons_yield_bool() {
    let k = with_expr(|b, v| retype(bin(BinOp::Lt, b.v(v.a), f32c(1.0)), Type::F32));
    assert_invalid(&k, &["`(a < 1.0f32)` is typed `f32`", "yields a `bool`"]);
}

#[test]
fn comparisons_need_scalars() {
    let k = with_expr(|b, v| bin(BinOp::Eq, b.v(v.x), b.v(v.x)));
    assert_invalid(&k, &["`==` needs scalar operands, not `global [f32]`"]);
}

#[test]
fn logical_ops_need_bool() {
    let k = with_expr(|b, v| bin(BinOp::LogicalAnd, b.v(v.n), boolc(true)));
    assert_invalid(&k, &["`&&` needs `bool` operands, not `i32` and `bool`"]);
}

#[test]
fn index_intrinsics_take_no_arguments() {
    let k = with_expr(|_, _| intr(Intrinsic::ThreadIdx(Axis::Y), vec![u32c(0)], Type::U32));
    assert_invalid(&k, &["`thread_idx_y(0u32)` has 1 argument; it takes 0"]);
}

#[test]
fn index_intrinsics_yield_u32() {
    let k = with_expr(|_, _| intr(Intrinsic::LaneId, vec![], Type::I32));
    assert_invalid(&k, &["`lane_id()` is typed `i32`", "yields a `u32`"]);
}

#[test]
fn math_arity() {
    let k = with_expr(|b, v| math(MathFn::Max, vec![b.v(v.a)]));
    assert_invalid(&k, &["`a.max()` has 1 argument; it takes 2"]);
}

#[test]
fn math_on_integers_only_for_abs_min_max() {
    let k = with_expr(|b, v| math(MathFn::Sqrt, vec![b.v(v.n)]));
    assert_invalid(
        &k,
        &[
            "`n.sqrt()`",
            "`sqrt` is defined on `f32` and `f64`, not on `i32`",
        ],
    );
}

#[test]
fn math_arguments_share_the_float_type() {
    let k = with_expr(|b, v| math(MathFn::Min, vec![b.v(v.a), f64c(1.0)]));
    assert_invalid(&k, &["argument 2 of `min`", "`f64`", "`f32` is needed"]);
}

#[test]
fn powi_exponent_is_i32() {
    let k = with_expr(|b, v| math(MathFn::Powi, vec![b.v(v.a), f32c(2.0)]));
    assert_invalid(&k, &["argument 2 of `powi`", "`i32` is needed"]);
}

#[test]
fn atomic_on_a_read_only_buffer() {
    let k = with_expr(|b, v| {
        intr(
            Intrinsic::Atomic(AtomicOp::Add),
            vec![b.v(v.x), u32c(0), f32c(1.0)],
            Type::F32,
        )
    });
    assert_invalid(
        &k,
        &[
            "`atomic_add(x, 0u32, 1.0f32)` modifies `x`",
            "read-only buffer (`&[f32]`)",
        ],
    );
}

#[test]
fn float_atomics_only_add() {
    let k = with_expr(|b, v| {
        intr(
            Intrinsic::Atomic(AtomicOp::Max),
            vec![b.v(v.y), u32c(0), f32c(1.0)],
            Type::F32,
        )
    });
    assert_invalid(
        &k,
        &["`atomic_max` works on elements of type `i32`, `u32`, `i64` and `u64`, not `f32`"],
    );
}

#[test]
fn atomic_on_a_local_array() {
    let mut b = Builder::new();
    let arr_ty = array_ty(Type::U32, MemSpace::Local, 2);
    let arr = b.local("arr", arr_ty.clone(), true);
    b.let_(
        arr,
        Expr {
            kind: ExprKind::ArrayRepeat {
                value: Box::new(u32c(0)),
                len: 2,
            },
            ty: arr_ty,
        },
    );
    b.push(stmt(StmtKind::Expr(intr(
        Intrinsic::Atomic(AtomicOp::Add),
        vec![b.v(arr), u32c(0), u32c(1)],
        Type::U32,
    ))));
    assert_invalid(&b.kernel("k"), &["not on the local array `arr`"]);
}

#[test]
fn atomic_index_and_value_types() {
    let k = with_expr(|b, v| {
        intr(
            Intrinsic::Atomic(AtomicOp::Or),
            vec![b.v(v.ux), u32c(0), i32c(1)],
            Type::U32,
        )
    });
    assert_invalid(&k, &["the value of `atomic_or`", "`u32` is needed"]);
    let k = with_expr(|b, v| {
        intr(
            Intrinsic::Atomic(AtomicOp::Or),
            vec![b.v(v.ux), i32c(0), u32c(1)],
            Type::U32,
        )
    });
    assert_invalid(&k, &["the index of `atomic_or`"]);
}

#[test]
fn compare_exchange_takes_four_arguments_and_works_on_shared() {
    let k = with_expr(|b, v| {
        intr(
            Intrinsic::Atomic(AtomicOp::CompareExchange),
            vec![b.v(v.ux), u32c(0), u32c(1)],
            Type::U32,
        )
    });
    assert_invalid(&k, &["has 3 arguments; it takes 4"]);

    let mut b = Builder::new();
    let s = b.shared("flags", Type::I64, Some(4));
    b.push(stmt(StmtKind::Expr(intr(
        Intrinsic::Atomic(AtomicOp::CompareExchange),
        vec![b.v(s), u32c(0), i64c(0), i64c(1)],
        Type::I64,
    ))));
    assert_valid(&b.kernel("k"));
}

#[test]
fn shuffles_move_numbers() {
    let k = with_expr(|_, _| {
        intr(
            Intrinsic::Shuffle(ShuffleKind::Xor),
            vec![boolc(true), u32c(1)],
            Type::BOOL,
        )
    });
    assert_invalid(&k, &["`shuffle_xor` moves numbers", "not a `bool`"]);
    let k = with_expr(|b, v| {
        intr(
            Intrinsic::Shuffle(ShuffleKind::Index),
            vec![b.v(v.a), b.v(v.n)],
            Type::F32,
        )
    });
    assert_invalid(&k, &["the lane argument of `shuffle`", "`u32` is needed"]);
}

#[test]
fn votes_take_bool() {
    let k = with_expr(|b, v| intr(Intrinsic::VoteAll, vec![b.v(v.n)], Type::BOOL));
    assert_invalid(&k, &["the predicate of `vote_all` is `n`, of type `i32`"]);
    let k = with_expr(|_, _| intr(Intrinsic::Ballot, vec![boolc(true)], Type::BOOL));
    assert_invalid(&k, &["`ballot(true)` is typed `bool`", "yields a `u32`"]);
}

#[test]
fn casts_are_scalar_to_scalar_and_not_to_bool() {
    let k = with_expr(|b, v| cast(b.v(v.n), ScalarType::Bool));
    assert_invalid(&k, &["`(n as bool)` casts an `i32` to `bool`", "`!= 0`"]);
    let k = with_expr(|_, _| cast(boolc(true), ScalarType::F32));
    assert_invalid(&k, &["casts a `bool` to `f32`"]);
    let k = with_expr(|b, v| cast(b.v(v.x), ScalarType::F32));
    assert_invalid(&k, &["casts a `global [f32]`; only scalars can be cast"]);
}

fn twice_helper() -> Function {
    let mut h = Builder::new();
    let x = h.param("x", Type::F32, false);
    h.push(stmt(StmtKind::Return(Some(bin(
        BinOp::Mul,
        h.v(x),
        f32c(2.0),
    )))));
    h.function("twice", Type::F32)
}

#[test]
fn call_of_an_unknown_function() {
    let k = with_expr(|b, v| call("twice", vec![b.v(v.a)], Type::F32));
    assert_invalid(
        &k,
        &[
            "line 7:",
            "`twice(a)` calls `twice`",
            "no helper function `twice`",
        ],
    );
}

#[test]
fn call_arity_argument_and_result_types() {
    let mut k = with_expr(|b, v| call("twice", vec![b.v(v.a), b.v(v.a)], Type::F32));
    k.functions.push(twice_helper());
    assert_invalid(&k, &["passes 2 arguments, but `twice` takes 1"]);

    let mut k = with_expr(|b, v| call("twice", vec![b.v(v.n)], Type::F32));
    k.functions.push(twice_helper());
    assert_invalid(
        &k,
        &[
            "parameter `x` of `twice` has type `f32`",
            "argument `n` is an `i32`",
        ],
    );

    let mut k = with_expr(|b, v| call("twice", vec![b.v(v.a)], Type::F64));
    k.functions.push(twice_helper());
    assert_invalid(&k, &["`twice(a)` is typed `f64`", "yields an `f32`"]);

    let mut k = with_expr(|b, v| call("twice", vec![b.v(v.a)], Type::F32));
    k.functions.push(twice_helper());
    assert_valid(&k);
}

#[test]
fn read_only_buffer_cannot_be_passed_as_mutable() {
    let mut h = Builder::new();
    let out = h.buf_mut("out", Type::F32);
    h.push(stmt(assign(lidx(lv(out), u32c(0)), f32c(1.0))));
    let fill = h.function("fill", Type::Unit);
    let mut k = with_expr(|b, v| call("fill", vec![b.v(v.x)], Type::Unit));
    k.functions.push(fill.clone());
    assert_invalid(
        &k,
        &[
            "passes the read-only buffer `x` (`&[f32]`)",
            "parameter `out` of `fill`, which is `&mut [f32]`",
        ],
    );
    let mut k = with_expr(|b, v| call("fill", vec![b.v(v.y)], Type::Unit));
    k.functions.push(fill);
    assert_valid(&k);
}

/// A helper `name(<params>)` whose parameters are the `(name, type, mutable)` of `params`,
/// with an empty body.
fn buffer_helper(name: &str, params: &[(&str, Type, bool)]) -> Function {
    let mut h = Builder::new();
    for (p, ty, mutable) in params {
        h.param(p, ty.clone(), *mutable);
    }
    h.function(name, Type::Unit)
}

/// The aliasing error of `k`, which must be one.
#[track_caller]
fn aliased(k: &Kernel) -> AliasedCall {
    match validate(k) {
        Err(IrError::AliasedArgument(a)) => *a,
        other => panic!("expected IrError::AliasedArgument, got {other:?}\n{k}"),
    }
}

#[test]
fn one_buffer_is_not_passed_to_a_mut_parameter_and_another() {
    let buf = Type::global_array(Type::F32);
    let shift = || {
        buffer_helper(
            "shift",
            &[("src", buf.clone(), false), ("dst", buf.clone(), true)],
        )
    };
    // `shift(y, y)`: `y` as `src: &[f32]` and `dst: &mut [f32]`.
    let mut k = with_expr(|b, v| call("shift", vec![b.v(v.y), b.v(v.y)], Type::Unit));
    k.functions.push(shift());
    let e = validate(&k).unwrap_err();
    assert_eq!(
        e,
        IrError::AliasedArgument(Box::new(AliasedCall {
            kernel: "k".into(),
            function: None,
            callee: "shift".into(),
            buffer: "y".into(),
            written: "dst".into(),
            other: "src".into(),
            line: Some(7),
        }))
    );
    let text = e.to_string();
    assert!(
        text.contains("line 7: the call of `shift` passes `y` as parameter `dst`, which the helper writes through, and also as parameter `src`"),
        "{text}"
    );
    // Two buffers: valid.
    let mut k = with_expr(|b, v| call("shift", vec![b.v(v.x), b.v(v.y)], Type::Unit));
    k.functions.push(shift());
    assert_valid(&k);
    // Two `&mut [f32]` parameters: the first is named as the written one.
    let swap = buffer_helper(
        "swap",
        &[("a", buf.clone(), true), ("b", buf.clone(), true)],
    );
    let mut k = with_expr(|b, v| call("swap", vec![b.v(v.y), b.v(v.y)], Type::Unit));
    k.functions.push(swap);
    let a = aliased(&k);
    assert_eq!((&a.written[..], &a.other[..]), ("a", "b"));
    // One buffer for two `&[f32]` parameters: valid, as in Rust (even a `&mut [f32]` one).
    let dot = || {
        buffer_helper(
            "dot",
            &[("a", buf.clone(), false), ("b", buf.clone(), false)],
        )
    };
    for arg in [0, 1] {
        let mut k = with_expr(|b, v| {
            let a = if arg == 0 { v.x } else { v.y };
            call("dot", vec![b.v(a), b.v(a)], Type::Unit)
        });
        k.functions.push(dot());
        assert_valid(&k);
    }
}

#[test]
fn one_buffer_is_not_aliased_in_a_helper_nor_through_a_shared_array() {
    let buf = Type::global_array(Type::F32);
    // `outer(out: &mut [f32]) { shift(out, out); }`, called with `y`.
    let mut h = Builder::new();
    let out = h.buf_mut("out", Type::F32);
    h.push(at_line(
        12,
        StmtKind::Expr(call("shift", vec![h.v(out), h.v(out)], Type::Unit)),
    ));
    let outer = h.function("outer", Type::Unit);
    let mut k = with_expr(|b, v| call("outer", vec![b.v(v.y)], Type::Unit));
    k.functions.push(outer);
    k.functions.push(buffer_helper(
        "shift",
        &[("src", buf.clone(), false), ("dst", buf, true)],
    ));
    let a = aliased(&k);
    assert_eq!(a.function.as_deref(), Some("outer"));
    assert_eq!(
        (&a.callee[..], &a.buffer[..], a.line),
        ("shift", "out", Some(12))
    );
    // A shared array is writable through any parameter: not passed twice.
    let tile_ty = array_ty(Type::F32, MemSpace::Shared, 4);
    let mut b = Builder::new();
    let tile = b.shared("tile", Type::F32, Some(4));
    b.push(stmt(StmtKind::Expr(call(
        "pair",
        vec![b.v(tile), b.v(tile)],
        Type::Unit,
    ))));
    let mut k = b.kernel("k");
    k.functions.push(buffer_helper(
        "pair",
        &[("p", tile_ty.clone(), false), ("q", tile_ty, false)],
    ));
    let a = aliased(&k);
    assert_eq!((&a.written[..], &a.buffer[..], a.line), ("p", "tile", None));
}

#[test]
fn select_condition_and_branches() {
    let k = with_expr(|b, v| select(b.v(v.n), b.v(v.a), f32c(0.0)));
    assert_invalid(
        &k,
        &[
            "the condition of `if n { a } else { 0.0f32 }` is `n`, of type `i32`",
            "`bool` is needed",
        ],
    );
    let k = with_expr(|b, v| select(boolc(true), b.v(v.a), f64c(0.0)));
    assert_invalid(&k, &["branches of", "different types, `f32` and `f64`"]);
}

fn match_expr(scrutinee: Expr, arms: Vec<(Pattern, Expr)>) -> Expr {
    Expr {
        ty: arms[0].1.ty.clone(),
        kind: ExprKind::Match {
            scrutinee: Box::new(scrutinee),
            arms,
        },
    }
}

#[test]
fn match_patterns_are_typed_against_the_scrutinee() {
    let k = with_expr(|b, v| {
        match_expr(
            b.v(v.n),
            vec![
                (Pattern::Int(Const::U32(0)), f32c(1.0)),
                (Pattern::Wildcard, f32c(2.0)),
            ],
        )
    });
    assert_invalid(
        &k,
        &["pattern `0u32` is a `u32`, but the value matched is an `i32`"],
    );
}

#[test]
fn match_expressions_must_be_exhaustive() {
    let k = with_expr(|b, v| {
        match_expr(
            b.v(v.n),
            vec![
                (Pattern::Int(Const::I32(0)), f32c(1.0)),
                (Pattern::Range(Const::I32(1), Const::I32(9)), f32c(2.0)),
            ],
        )
    });
    assert_invalid(&k, &["does not cover every value of `i32`", "`_` arm"]);
    // Ranges that cover the whole type are exhaustive.
    let k = with_expr(|_, _| {
        match_expr(
            gid_x(),
            vec![
                (Pattern::Int(Const::U32(0)), f32c(1.0)),
                (
                    Pattern::Range(Const::U32(1), Const::U32(u32::MAX)),
                    f32c(2.0),
                ),
            ],
        )
    });
    assert_valid(&k);
}

#[test]
fn match_on_bool_and_empty_ranges_are_rejected() {
    let k = with_expr(|_, _| match_expr(boolc(true), vec![(Pattern::Wildcard, f32c(1.0))]));
    assert_invalid(&k, &["only integers and variants", "use `if`"]);
    let k = with_expr(|b, v| {
        match_expr(
            b.v(v.n),
            vec![
                (Pattern::Range(Const::I32(5), Const::I32(1)), f32c(1.0)),
                (Pattern::Wildcard, f32c(2.0)),
            ],
        )
    });
    assert_invalid(&k, &["`5..=1` is empty"]);
}

#[test]
fn case_patterns_check_the_variant_and_bindings() {
    let mut k = shapes_kernel();
    // Bind the `Circle` payload (f32) to a variable of type i32.
    k.functions[0].vars[1].ty = Type::I32;
    let e = validate(&k).unwrap_err();
    assert!(
        matches!(&e, IrError::Invalid { function: Some(f), .. } if f == "area"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("binds `r` of type `i32` to a payload of type `f32`"),
        "{e}"
    );

    let mut k = shapes_kernel();
    k.variants[0].cases.pop(); // no more `Empty`
    assert_invalid(&k, &["variant `Shape` has no case `Empty`"]);
}

#[test]
fn len_needs_an_array() {
    let k = with_expr(|b, v| len(b.v(v.a)));
    assert_invalid(&k, &["`len(a)`", "which is not an array"]);
}

#[test]
fn record_literals_match_the_definition() {
    let mut b = Builder::new();
    b.push(stmt(StmtKind::Expr(Expr {
        kind: ExprKind::RecordLit {
            record: "Point".into(),
            fields: vec![f32c(1.0), i32c(2)],
        },
        ty: Type::Record("Point".into()),
    })));
    let mut k = b.kernel("k");
    k.records = vec![record("Point", &[("x", Type::F32), ("y", Type::F32)])];
    assert_invalid(&k, &["field `y` of `Point` is `2`, of type `i32`"]);
    if let StmtKind::Expr(Expr {
        kind: ExprKind::RecordLit { fields, .. },
        ..
    }) = &mut k.body[0].kind
    {
        fields.pop();
    }
    assert_invalid(
        &k,
        &["`Point { x: 1.0f32 }` gives 1 field value, but record `Point` has 2 fields"],
    );
}

#[test]
fn variant_literals_match_the_definition() {
    let mut k = shapes_kernel();
    let ExprKind::Match { arms, .. } = &mut (match &mut k.body[2].kind {
        StmtKind::Let { init: Some(e), .. } => e,
        _ => unreachable!(),
    })
    .kind
    else {
        unreachable!()
    };
    if let ExprKind::VariantLit { case, .. } = &mut arms[0].1.kind {
        *case = "Triangle".into();
    }
    assert_invalid(&k, &["variant `Shape` has no case `Triangle`"]);
}

#[test]
fn array_repeat_yields_a_local_array() {
    let k = with_expr(|_, _| Expr {
        kind: ExprKind::ArrayRepeat {
            value: Box::new(f32c(0.0)),
            len: 4,
        },
        ty: array_ty(Type::F32, MemSpace::Shared, 4),
    });
    assert_invalid(
        &k,
        &[
            "`[0.0f32; 4]` is typed `shared [f32; 4]`",
            "`local [f32; 4]`",
        ],
    );
}

#[test]
fn vector_lanes() {
    let k = with_expr(|b, v| Expr {
        kind: ExprKind::VectorLit(vec![b.v(v.a), f64c(1.0)]),
        ty: Type::Vector {
            elem: ScalarType::F32,
            lanes: 2,
        },
    });
    assert_invalid(&k, &["a vector lane is `1.0`, of type `f64`"]);
    let k = with_expr(|b, v| Expr {
        kind: ExprKind::VectorLit(vec![b.v(v.a); 3]),
        ty: Type::Vector {
            elem: ScalarType::F32,
            lanes: 3,
        },
    });
    assert_valid(&k);
}

// ---------------------------------------------------------------- statements

#[test]
fn assignment_to_a_read_only_buffer() {
    let mut k = saxpy();
    // y[i] = ... becomes x[i] = ...
    let StmtKind::If { then, .. } = &mut k.body[1].kind else {
        unreachable!()
    };
    let StmtKind::Assign { target, .. } = &mut then[0].kind else {
        unreachable!()
    };
    *target = lidx(lv(VarId(1)), Expr::var(VarId(3), Type::U32));
    let e = validate(&k).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid IR in kernel `saxpy`: line 4: assignment to `x[i]`, but parameter `x` is a \
         read-only buffer (`&[f32]`); declare it `&mut [f32]`"
    );
}

#[test]
fn assignment_to_an_immutable_local() {
    let mut b = Builder::new();
    let t = b.local("t", Type::F32, false);
    b.let_(t, f32c(1.0));
    b.push(at_line(3, assign(lv(t), f32c(2.0))));
    assert_invalid(
        &b.kernel("k"),
        &["line 3:", "assignment to `t`", "not mutable", "`let mut t`"],
    );
}

#[test]
fn assignment_to_an_immutable_param() {
    let mut b = Builder::new();
    let a = b.param("a", Type::F32, false);
    b.push(stmt(assign(lv(a), f32c(2.0))));
    assert_invalid(
        &b.kernel("k"),
        &["`a` is not mutable", "declare the parameter `mut a`"],
    );
}

#[test]
fn assignment_to_an_element_of_an_immutable_local_array() {
    let mut b = Builder::new();
    let ty = array_ty(Type::I32, MemSpace::Local, 3);
    let arr = b.local("arr", ty.clone(), false);
    b.let_(
        arr,
        Expr {
            kind: ExprKind::ArrayRepeat {
                value: Box::new(i32c(0)),
                len: 3,
            },
            ty,
        },
    );
    b.push(stmt(assign(lidx(lv(arr), u32c(0)), i32c(1))));
    assert_invalid(
        &b.kernel("k"),
        &["assignment to `arr[0u32]`", "`let mut arr`"],
    );
}

#[test]
fn assignment_to_a_whole_buffer_or_a_loop_variable() {
    let mut b = Builder::new();
    let y = b.buf_mut("y", Type::F32);
    let y2 = b.buf_mut("y2", Type::F32);
    b.push(stmt(assign(lv(y), b.v(y2))));
    assert_invalid(&b.kernel("k"), &["assignment to the whole array `y`"]);

    let mut b = Builder::new();
    let i = b.local("i", Type::U32, true);
    b.push(stmt(for_up(
        i,
        u32c(0),
        u32c(4),
        vec![stmt(assign(lv(i), u32c(9)))],
    )));
    assert_invalid(&b.kernel("k"), &["`i` is a `for` loop variable"]);
}

#[test]
fn assignment_value_must_have_the_target_type() {
    let mut b = Builder::new();
    let y = b.buf_mut("y", Type::F32);
    b.push(at_line(6, assign(lidx(lv(y), u32c(0)), f64c(1.0))));
    assert_invalid(
        &b.kernel("k"),
        &[
            "line 6:",
            "assignment to `y[0u32]` (of type `f32`) of `1.0`, of type `f64`",
        ],
    );
}

#[test]
fn assignment_to_a_field_of_a_mutable_buffer_element() {
    let mut b = Builder::new();
    let pts = b.buf_mut("pts", Type::Record("Point".into()));
    b.push(stmt(assign(
        LValue::Field {
            base: Box::new(lidx(lv(pts), u32c(0))),
            field: "x".into(),
        },
        f32c(1.0),
    )));
    let mut k = b.kernel("k");
    k.records = vec![record("Point", &[("x", Type::F32), ("y", Type::F32)])];
    assert_valid(&k);
    k.params[0].mutable = false;
    assert_invalid(
        &k,
        &[
            "assignment to `pts[0u32].x`",
            "read-only buffer (`&[Point]`)",
        ],
    );
}

#[test]
fn conditions_are_bool() {
    let mut b = Builder::new();
    let n = b.param("n", Type::I32, false);
    b.push(at_line(2, if_(b.v(n), vec![], None)));
    assert_invalid(
        &b.kernel("k"),
        &["line 2:", "the `if` condition is `n`, of type `i32`"],
    );
    let mut b = Builder::new();
    let n = b.param("n", Type::I32, false);
    b.push(stmt(StmtKind::While {
        cond: b.v(n),
        body: vec![],
    }));
    assert_invalid(&b.kernel("k"), &["the `while` condition is `n`"]);
}

#[test]
fn for_loops_count_with_integers() {
    let mut b = Builder::new();
    let f = b.local("f", Type::F32, false);
    b.push(stmt(for_up(f, f32c(0.0), f32c(1.0), vec![])));
    assert_invalid(
        &b.kernel("k"),
        &["`for` variable `f` has type `f32`", "integer type"],
    );

    let mut b = Builder::new();
    let i = b.local("i", Type::I32, false);
    b.push(stmt(for_up(i, i32c(0), u32c(4), vec![])));
    assert_invalid(
        &b.kernel("k"),
        &[
            "the end of `for i` is `4u32`, of type `u32`",
            "`i32` is needed",
        ],
    );

    let mut b = Builder::new();
    let i = b.local("i", Type::I32, false);
    b.push(stmt(StmtKind::For(ForLoop {
        var: i,
        start: i32c(0),
        end: i32c(4),
        step: i32c(2),
        dir: ForDir::Up,
        body: vec![],
    })));
    assert_invalid(&b.kernel("k"), &["the step of `for i`", "`u32` is needed"]);

    let mut b = Builder::new();
    let n = b.param("n", Type::I32, false);
    b.push(stmt(for_up(n, i32c(0), i32c(4), vec![])));
    assert_invalid(
        &b.kernel("k"),
        &[
            "a `for` loop declares `n`",
            "parameter variable, not a local",
        ],
    );
}

#[test]
fn loop_variable_is_scoped_to_the_body() {
    let mut b = Builder::new();
    let y = b.buf_mut("y", Type::U32);
    let i = b.local("i", Type::U32, false);
    b.push(stmt(for_up(
        i,
        u32c(0),
        u32c(4),
        vec![stmt(assign(lidx(lv(y), b.v(i)), b.v(i)))],
    )));
    let mut k = b.kernel("k");
    assert_valid(&k);
    k.body.push(at_line(
        12,
        assign(lidx(lv(y), u32c(0)), Expr::var(i, Type::U32)),
    ));
    assert_invalid(&k, &["line 12:", "`i`", "not in scope"]);
}

#[test]
fn break_and_continue_only_inside_loops() {
    let mut b = Builder::new();
    b.push(at_line(8, StmtKind::Break));
    assert_invalid(&b.kernel("k"), &["line 8: `break` outside of a loop"]);
    let mut b = Builder::new();
    b.push(stmt(if_(boolc(true), vec![stmt(StmtKind::Continue)], None)));
    assert_invalid(&b.kernel("k"), &["`continue` outside of a loop"]);
}

#[test]
fn kernels_return_nothing() {
    let mut k = saxpy();
    k.body.push(at_line(5, StmtKind::Return(Some(f32c(1.0)))));
    assert_invalid(&k, &["line 5:", "`return 1.0f32`: kernels return no value"]);
}

fn kernel_with_helper(f: Function) -> Kernel {
    let mut k = saxpy();
    k.functions.push(f);
    k
}

#[test]
fn helper_returns() {
    let mut h = Builder::new();
    h.push(at_line(20, StmtKind::Return(None)));
    let k = kernel_with_helper(h.function("h", Type::F32));
    let msg = assert_invalid(
        &k,
        &[
            "line 20:",
            "`return;` without a value in `h`, which returns `f32`",
        ],
    );
    assert!(
        !msg.contains("helper `h`"),
        "the function is a field, not in the message"
    );

    let mut h = Builder::new();
    h.push(stmt(StmtKind::Return(Some(i32c(1)))));
    let k = kernel_with_helper(h.function("h", Type::F32));
    assert_invalid(
        &k,
        &["`return 1` returns an `i32` from `h`, which returns `f32`"],
    );

    let mut h = Builder::new();
    h.push(stmt(StmtKind::Return(Some(i32c(1)))));
    let k = kernel_with_helper(h.function("h", Type::Unit));
    assert_invalid(
        &k,
        &["`return 1` returns an `i32` from `h`, which returns `()`"],
    );
}

#[test]
fn non_unit_helpers_must_return_on_every_path() {
    let mut h = Builder::new();
    let c = h.param("c", Type::BOOL, false);
    h.push(stmt(if_(
        h.v(c),
        vec![stmt(StmtKind::Return(Some(f32c(1.0))))],
        None,
    )));
    let k = kernel_with_helper(h.function("h", Type::F32));
    assert_invalid(
        &k,
        &["`h` returns `f32`, but the end of its body can be reached"],
    );

    // if/else both returning, and `loop { if c { return } }`, are fine.
    let mut h = Builder::new();
    let c = h.param("c", Type::BOOL, false);
    h.push(stmt(if_(
        h.v(c),
        vec![stmt(StmtKind::Return(Some(f32c(1.0))))],
        Some(vec![stmt(StmtKind::Return(Some(f32c(2.0))))]),
    )));
    assert_valid(&kernel_with_helper(h.function("h", Type::F32)));
    let mut h = Builder::new();
    let c = h.param("c", Type::BOOL, false);
    h.push(stmt(StmtKind::While {
        cond: boolc(true),
        body: vec![stmt(if_(
            h.v(c),
            vec![stmt(StmtKind::Return(Some(f32c(1.0))))],
            None,
        ))],
    }));
    assert_valid(&kernel_with_helper(h.function("h", Type::F32)));
}

#[test]
fn barriers_are_not_supported_in_helpers() {
    let mut h = Builder::new();
    h.push(at_line(31, StmtKind::Barrier));
    let k = kernel_with_helper(h.function("sync", Type::Unit));
    let e = validate(&k).unwrap_err();
    let s = e.to_string();
    assert!(s.contains("helper `sync`"), "{s}");
    assert!(
        s.contains("line 31: `sync_threads()` in helper function `sync`"),
        "{s}"
    );
    assert!(s.contains("not supported yet"), "{s}");
}

#[test]
fn statements_without_location_inherit_the_enclosing_one() {
    let mut b = Builder::new();
    b.push(at_line(
        14,
        StmtKind::While {
            cond: boolc(true),
            body: vec![stmt(StmtKind::Expr(retype(u32c(0), Type::I32)))],
        },
    ));
    assert_invalid(&b.kernel("k"), &["line 14:"]);
}

// ---------------------------------------------------------------- the kernel

#[test]
fn parameter_names_are_unique() {
    let mut k = saxpy();
    k.params[2].name = "x".into();
    k.vars[2].name = "x".into();
    assert_invalid(&k, &["two parameters are named `x`"]);
}

#[test]
fn kernel_name_is_an_identifier() {
    for bad in ["", "1saxpy", "sax-py", "sax py"] {
        let mut k = saxpy();
        k.name = bad.into();
        assert_invalid(&k, &["is not an identifier"]);
    }
}

#[test]
fn types_are_defined_once() {
    let mut k = saxpy();
    k.records = vec![
        record("P", &[("x", Type::F32)]),
        record("P", &[("y", Type::F32)]),
    ];
    assert_invalid(&k, &["type `P` is defined twice"]);
    let mut k = saxpy();
    k.records = vec![record("P", &[("x", Type::F32)])];
    k.variants = vec![VariantDef {
        name: "P".into(),
        cases: vec![],
    }];
    assert_invalid(&k, &["type `P` is defined twice", "one namespace"]);
    let mut k = saxpy();
    k.records = vec![record("P", &[("x", Type::F32), ("x", Type::F32)])];
    assert_invalid(&k, &["record `P` has two fields named `x`"]);
}

#[test]
fn records_do_not_contain_themselves() {
    let mut k = saxpy();
    k.records = vec![
        record("A", &[("b", Type::Record("B".into()))]),
        record("B", &[("a", Type::Record("A".into())), ("x", Type::F32)]),
    ];
    assert_invalid(&k, &["record `A` contains itself (`A` -> `B` -> `A`)"]);
}

#[test]
fn helper_functions_are_defined_once_and_do_not_recurse() {
    let mut k = kernel_with_helper(twice_helper());
    k.functions.push(twice_helper());
    assert_invalid(&k, &["helper function `twice` is defined twice"]);

    // fn f(x) -> f32 { return f(x); }
    let mut h = Builder::new();
    let x = h.param("x", Type::F32, false);
    h.push(stmt(StmtKind::Return(Some(call(
        "f",
        vec![h.v(x)],
        Type::F32,
    )))));
    let k = kernel_with_helper(h.function("f", Type::F32));
    let e = validate(&k).unwrap_err();
    assert!(
        e.to_string()
            .contains("helper function `f` calls itself; recursion is not supported on GPUs"),
        "{e}"
    );

    // even -> odd -> even
    let mk = |name: &str, callee: &str| {
        let mut h = Builder::new();
        let n = h.param("n", Type::U32, false);
        h.push(stmt(StmtKind::Return(Some(call(
            callee,
            vec![h.v(n)],
            Type::BOOL,
        )))));
        h.function(name, Type::BOOL)
    };
    let mut k = saxpy();
    k.functions = vec![mk("even", "odd"), mk("odd", "even")];
    let e = validate(&k).unwrap_err();
    assert!(e.to_string().contains("(`even` -> `odd` -> `even`)"), "{e}");
    assert!(
        e.to_string().contains("recursion is not supported on GPUs"),
        "{e}"
    );
}

#[test]
fn kernel_parameters_are_scalars_records_or_buffers() {
    let mut b = Builder::new();
    b.param("s", array_ty(Type::F32, MemSpace::Shared, 4), false);
    assert_invalid(&b.kernel("k"), &["parameter `s`", "buffers"]);
    let mut b = Builder::new();
    b.buf("bad", Type::global_array(Type::F32));
    assert_invalid(
        &b.kernel("k"),
        &["parameter `bad`", "only local arrays may hold arrays"],
    );
}

#[test]
fn error_display_names_the_kernel() {
    let k = with_expr(|_, _| retype(u32c(1), Type::I32));
    let e = validate(&k).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid IR in kernel `k`: line 7: "),
        "{e}"
    );
}

#[test]
fn pending_types_are_rejected() {
    let mut k = support::saxpy();
    k.vars[0].ty = Type::Pending(PendingType::Field(Box::new(
        FieldPath::parse("P.x").unwrap(),
    )));
    k.params[0].ty = k.vars[0].ty.clone();
    let e = validate(&k).unwrap_err().to_string();
    assert!(e.contains("unresolved type `?field:P.x`"), "{e}");
    assert!(ValidKernel::new(k).is_err());
    assert!(ValidKernel::new(support::saxpy()).is_ok());
    assert_eq!(FieldPath::parse("P"), None);
    assert_eq!(FieldPath::parse("P.a.b").unwrap().to_string(), "P.a.b");
}
