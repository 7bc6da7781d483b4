//! `spoc_ir::unroll::fold_constants` on `bool` expressions of constants (`!`, comparisons,
//! `&&`/`||`), and `fold_constant_branches` on the `if`s whose conditions that leaves constant.
//! Every expected value is Rust's, computed here on the typed values.

mod support;

use spoc_ir::unroll::{fold_constant_branches, fold_constants};
use spoc_ir::*;
use spoc_testkit::ir::u64c;
use support::*;

/// `e` (a `bool` expression) after [`fold_constants`], folded as the initialiser of a `let` in
/// a valid kernel with a `&mut [u32]` parameter `out`; and whether anything was folded.
fn folded(e: impl FnOnce(&Builder) -> Expr) -> (Expr, bool) {
    let mut b = Builder::new();
    b.buf_mut("out", Type::U32);
    let v = b.local("v", Type::BOOL, false);
    let init = e(&b);
    b.let_(v, init);
    let mut k = b.kernel("k");
    assert_valid(&k);
    let changed = fold_constants(&mut k);
    assert_valid(&k);
    let StmtKind::Let { init: Some(e), .. } = &k.body[0].kind else {
        panic!("the kernel's `let` is gone:\n{k}")
    };
    (e.clone(), changed)
}

/// [`folded`] of an expression that needs no variable.
fn fold_const(e: Expr) -> (Expr, bool) {
    folded(|_| e)
}

/// The `bool` that `e` folds to, or a failure naming what it became.
#[track_caller]
fn value(e: Expr) -> bool {
    let shown = format!("{e:?}");
    match fold_const(e) {
        (
            Expr {
                kind: ExprKind::Const(Const::Bool(v)),
                ty: Type::BOOL,
            },
            true,
        ) => v,
        (other, _) => panic!("{shown} did not fold to a bool constant: {other:?}"),
    }
}

const CMP: [BinOp; 6] = [
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
];

/// `l op r` for a comparison, as Rust computes it on `T` (IEEE on floats).
fn rust_cmp<T: PartialOrd>(op: BinOp, l: T, r: T) -> bool {
    match op {
        BinOp::Eq => l == r,
        BinOp::Ne => l != r,
        BinOp::Lt => l < r,
        BinOp::Le => l <= r,
        BinOp::Gt => l > r,
        BinOp::Ge => l >= r,
        _ => unreachable!("not a comparison: {op:?}"),
    }
}

/// Every comparison of every pair of `vals`, folded, against Rust's on the typed values.
#[track_caller]
fn check_comparisons<T: PartialOrd + Copy + std::fmt::Debug>(vals: &[T], c: fn(T) -> Expr) {
    for &l in vals {
        for &r in vals {
            for op in CMP {
                assert_eq!(
                    value(bin(op, c(l), c(r))),
                    rust_cmp(op, l, r),
                    "{l:?} {} {r:?}",
                    op.symbol()
                );
            }
        }
    }
}

#[test]
fn logical_not_of_a_bool_constant_folds() {
    assert!(value(un(UnOp::Not, boolc(false))));
    assert!(!value(un(UnOp::Not, boolc(true))));
    // Nested: the inner `!` folds first.
    assert!(!value(un(UnOp::Not, un(UnOp::Not, boolc(false)))));
}

#[test]
fn integer_comparisons_fold_as_their_type() {
    // `u32::MAX < 1` is false as a `u32` (it would be true read as an `i32`), `-1 < 1` true as
    // an `i32` (false read as a `u32`): the values are compared as the operands' type.
    assert!(!value(bin(BinOp::Lt, u32c(u32::MAX), u32c(1))));
    assert!(value(bin(BinOp::Lt, i32c(-1), i32c(1))));
    assert!(value(bin(BinOp::Gt, u64c(u64::MAX), u64c(0))));
    assert!(value(bin(BinOp::Lt, i64c(i64::MIN), i64c(i64::MAX))));
    check_comparisons(&[0, 1, 7, u32::MAX - 1, u32::MAX], u32c);
    check_comparisons(&[i32::MIN, -1, 0, 1, i32::MAX], i32c);
    check_comparisons(&[0, 1, u64::MAX], u64c);
    check_comparisons(&[i64::MIN, -1, 0, 3, i64::MAX], i64c);
}

#[test]
fn bool_comparisons_fold() {
    // Rust orders `false < true`.
    assert!(value(bin(BinOp::Lt, boolc(false), boolc(true))));
    assert!(!value(bin(BinOp::Eq, boolc(true), boolc(false))));
    check_comparisons(&[false, true], boolc);
}

#[test]
fn float_comparisons_fold_with_ieee_semantics() {
    let nan32 = f32::NAN;
    assert!(!value(bin(BinOp::Eq, f32c(nan32), f32c(nan32))));
    assert!(value(bin(BinOp::Ne, f32c(nan32), f32c(nan32))));
    assert!(!value(bin(BinOp::Lt, f32c(nan32), f32c(1.0))));
    assert!(!value(bin(BinOp::Ge, f32c(1.0), f32c(nan32))));
    assert!(value(bin(BinOp::Eq, f32c(-0.0), f32c(0.0))));
    assert!(!value(bin(BinOp::Lt, f32c(-0.0), f32c(0.0))));
    assert!(value(bin(BinOp::Lt, f32c(2.0), f32c(3.0))));
    assert!(!value(bin(BinOp::Eq, f64c(f64::NAN), f64c(f64::NAN))));
    assert!(value(bin(BinOp::Ne, f64c(f64::NAN), f64c(0.0))));
    assert!(value(bin(BinOp::Le, f64c(-0.0), f64c(0.0))));
    // Two constants one ULP apart compare as the values they are, not as rounded to f32.
    let next = f64::from_bits(1.0f64.to_bits() + 1);
    assert!(value(bin(BinOp::Lt, f64c(1.0), f64c(next))));
    let neg_nan = f32::from_bits(nan32.to_bits() | (1 << 31));
    check_comparisons(
        &[
            nan32,
            neg_nan,
            f32::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            f32::MIN_POSITIVE / 2.0,
            1.5,
            f32::INFINITY,
        ],
        f32c,
    );
    check_comparisons(
        &[
            f64::NAN,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
            1.0,
            next,
            f64::INFINITY,
        ],
        f64c,
    );
}

#[test]
fn comparisons_of_folded_arithmetic_fold() {
    // Children first: the arithmetic folds to Rust's value, then the comparison.
    assert!(value(bin(
        BinOp::Eq,
        bin(BinOp::Add, i32c(1), i32c(2)),
        i32c(3)
    )));
    assert_eq!(
        value(bin(
            BinOp::Eq,
            bin(BinOp::Add, f64c(0.1), f64c(0.2)),
            f64c(0.3)
        )),
        0.1f64 + 0.2 == 0.3,
    );
    assert_eq!(
        value(bin(
            BinOp::Eq,
            bin(BinOp::Add, f32c(0.1), f32c(0.2)),
            f32c(0.3)
        )),
        0.1f32 + 0.2 == 0.3,
    );
}

#[test]
fn logical_operators_of_constants_fold() {
    for l in [false, true] {
        for r in [false, true] {
            assert_eq!(value(bin(BinOp::LogicalAnd, boolc(l), boolc(r))), l && r);
            assert_eq!(value(bin(BinOp::LogicalOr, boolc(l), boolc(r))), l || r);
        }
    }
    // Nested forms fold completely: `!(1u32 == 2u32) && (false || 2.0 < 3.0)`.
    assert!(value(bin(
        BinOp::LogicalAnd,
        un(UnOp::Not, bin(BinOp::Eq, u32c(1), u32c(2))),
        bin(
            BinOp::LogicalOr,
            boolc(false),
            bin(BinOp::Lt, f32c(2.0), f32c(3.0))
        )
    )));
}

/// A `bool` with an effect: `atomic_add(&mut out[0], 1) == 0`.
fn effect(b: &Builder) -> Expr {
    let out = b.v(VarId(0));
    bin(
        BinOp::Eq,
        spoc_testkit::ir::atomic(AtomicOp::Add, vec![out, u32c(0), u32c(1)]),
        u32c(0),
    )
}

#[test]
fn a_constant_left_operand_decides_or_leaves_the_right_one() {
    // `true && x` and `false || x` are `x` (evaluated once, as before); `false && x` and
    // `true || x` never evaluate `x`, so dropping it keeps the meaning.
    for (op, l, kept) in [
        (BinOp::LogicalAnd, true, true),
        (BinOp::LogicalOr, false, true),
        (BinOp::LogicalAnd, false, false),
        (BinOp::LogicalOr, true, false),
    ] {
        let (got, changed) = folded(|b| bin(op, boolc(l), effect(b)));
        assert!(changed, "{l} {} x", op.symbol());
        let want = if kept {
            folded(effect).0
        } else {
            Expr::constant(Const::Bool(l))
        };
        assert_eq!(got, want, "{l} {} x", op.symbol());
    }
}

#[test]
fn a_constant_right_operand_is_left_alone() {
    // `x && false` is false, but `x` runs first (its effect must stay); `x || true` likewise.
    for (op, r) in [(BinOp::LogicalAnd, false), (BinOp::LogicalOr, true)] {
        let (got, changed) = folded(|b| bin(op, effect(b), boolc(r)));
        assert!(!changed, "x {} {r} was folded to {got:?}", op.symbol());
        assert!(
            matches!(&got.kind, ExprKind::Binary { op: o, rhs, .. }
                if *o == op && rhs.kind == ExprKind::Const(Const::Bool(r))),
            "{got:?}"
        );
    }
}

#[test]
fn operands_that_are_not_both_constants_are_left_alone() {
    let (got, changed) = folded(|_| bin(BinOp::Lt, gid_x(), u32c(4)));
    assert!(!changed, "{got:?}");
    let (got, changed) = folded(|_| un(UnOp::Not, bin(BinOp::Lt, gid_x(), u32c(4))));
    assert!(!changed, "{got:?}");
}

/// A kernel `if cond { out[0] = 1 } else { out[0] = 2 }` (no `else` when `with_else` is
/// false), after [`fold_constants`] and [`fold_constant_branches`] as the SPIR-V generator
/// gets it: its body.
fn branches_folded(cond: impl FnOnce(&Builder) -> Expr, with_else: bool) -> Block {
    let mut b = Builder::new();
    let out = b.buf_mut("out", Type::U32);
    let store = |v| vec![stmt(assign(lidx(lv(out), u32c(0)), u32c(v)))];
    let c = cond(&b);
    b.push(stmt(if_(c, store(1), with_else.then(|| store(2)))));
    let mut k = b.kernel("k");
    assert_valid(&k);
    fold_constants(&mut k);
    fold_constant_branches(&mut k);
    assert_valid(&k);
    k.body
}

/// The value the kernel of [`branches_folded`] stores, read from its folded body: which branch
/// is left, once the `if` is gone (a failure if it is still there).
#[track_caller]
fn stored(body: &Block) -> Option<u32> {
    let [Stmt {
        kind: StmtKind::Block(branch),
        ..
    }] = body.as_slice()
    else {
        panic!("the `if` was not replaced by its branch: {body:?}")
    };
    match branch.as_slice() {
        [] => None,
        [Stmt {
            kind:
                StmtKind::Assign {
                    value:
                        Expr {
                            kind: ExprKind::Const(Const::U32(v)),
                            ..
                        },
                    ..
                },
            ..
        }] => Some(*v),
        other => panic!("unexpected branch {other:?}"),
    }
}

/// A condition built in a kernel's [`Builder`].
type Cond = Box<dyn Fn(&Builder) -> Expr>;

#[test]
fn ifs_on_conditions_computed_from_constants_become_their_branch() {
    let nan = || f32c(f32::NAN);
    let cases: Vec<(Cond, bool)> = vec![
        (Box::new(|_| un(UnOp::Not, boolc(false))), true),
        (Box::new(|_| un(UnOp::Not, boolc(true))), false),
        (Box::new(|_| bin(BinOp::Eq, u32c(1), u32c(1))), true),
        (Box::new(|_| bin(BinOp::Lt, u32c(u32::MAX), u32c(1))), false),
        (Box::new(|_| bin(BinOp::Lt, f32c(2.0), f32c(3.0))), true),
        (Box::new(move |_| bin(BinOp::Eq, nan(), nan())), false),
        (
            Box::new(|_| bin(BinOp::LogicalAnd, boolc(true), boolc(true))),
            true,
        ),
        (
            Box::new(|b| bin(BinOp::LogicalAnd, boolc(false), effect(b))),
            false,
        ),
        (
            Box::new(|b| bin(BinOp::LogicalOr, boolc(true), effect(b))),
            true,
        ),
    ];
    for (i, (cond, taken)) in cases.iter().enumerate() {
        let want = if *taken { Some(1) } else { Some(2) };
        assert_eq!(stored(&branches_folded(cond, true)), want, "case {i}");
        let want = if *taken { Some(1) } else { None };
        assert_eq!(stored(&branches_folded(cond, false)), want, "case {i}");
    }
}

#[test]
fn a_comparison_of_a_constant_if_folds_once_the_if_is_its_branch() {
    // `if (if true { 1u32 } else { 2u32 }) == 1u32`: `fold_constants` leaves the `if`
    // expression; `fold_constant_branches` takes its branch, then the comparison is of two
    // constants and the outer `if` goes too.
    let cond = |_: &Builder| bin(BinOp::Eq, select(boolc(true), u32c(1), u32c(2)), u32c(1));
    assert_eq!(stored(&branches_folded(cond, true)), Some(1));
    let cond = |_: &Builder| un(UnOp::Not, select(boolc(false), boolc(false), boolc(true)));
    assert_eq!(stored(&branches_folded(cond, true)), Some(2));
}

#[test]
fn an_if_on_a_run_time_condition_stays() {
    let body = branches_folded(|b| bin(BinOp::LogicalAnd, effect(b), boolc(false)), true);
    assert!(
        matches!(
            body.as_slice(),
            [Stmt {
                kind: StmtKind::If { .. },
                ..
            }]
        ),
        "{body:?}"
    );
}
