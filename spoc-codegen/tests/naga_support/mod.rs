//! Hand-built IR kernels for the naga generator tests (SPIR-V, WGSL, MSL, GLSL): a corpus
//! covering every node family, and the capabilities to generate it with.
#![allow(dead_code)]

use spoc_codegen::{Capabilities, Options, Source, Target};
use spoc_ir::*;

pub use spoc_testkit::ir::*;

/// Integer arithmetic: division, remainder, shifts (amounts of other types), bit operations,
/// negation and comparisons on i32, u32 and i64.
pub fn int_ops() -> Kernel {
    let mut b = B::new();
    let a = b.param("a", Type::I32, false);
    let d = b.param("d", Type::I32, false);
    let u = b.param("u", Type::U32, false);
    let w = b.param("w", Type::I64, false);
    let flag = b.param("flag", Type::BOOL, false);
    let out = b.buf_mut("out", Type::I32);
    let outu = b.buf_mut("outu", Type::U32);
    let out64 = b.buf_mut("out64", Type::I64);
    let items: Vec<Expr> = vec![
        bin(BinOp::Div, a.clone(), d.clone()),
        bin(BinOp::Rem, a.clone(), d.clone()),
        bin(BinOp::Shl, a.clone(), u.clone()),
        bin(BinOp::Shr, a.clone(), d.clone()),
        bin(BinOp::Shr, a.clone(), i32c(35)),
        bin(BinOp::BitXor, a.clone(), un(UnOp::Not, d.clone())),
        un(UnOp::Neg, a.clone()),
        mul(a.clone(), d.clone()),
        select(flag.clone(), a.clone(), d.clone()),
        cast(bin(BinOp::Ge, a.clone(), d.clone()), ScalarType::I32),
        math(MathFn::Abs, vec![a.clone()]),
        math(MathFn::Max, vec![a.clone(), d.clone()]),
    ];
    for (k, e) in items.into_iter().enumerate() {
        b.push(assign(at(&out, u32c(k as u32)), e));
    }
    let uitems: Vec<Expr> = vec![
        bin(BinOp::Div, u.clone(), u32c(7)),
        bin(BinOp::Rem, u.clone(), u32c(7)),
        bin(BinOp::Shr, u.clone(), w.clone()),
        un(UnOp::Neg, u.clone()),
        bin(BinOp::BitOr, u.clone(), u32c(0x80)),
        cast(bin(BinOp::Ne, u.clone(), u32c(3)), ScalarType::U32),
        cast(
            bin(BinOp::BitXor, flag.clone(), boolc(true)),
            ScalarType::U32,
        ),
    ];
    for (k, e) in uitems.into_iter().enumerate() {
        b.push(assign(at(&outu, u32c(k as u32)), e));
    }
    let witems: Vec<Expr> = vec![
        bin(BinOp::Div, w.clone(), i64c(-1)),
        bin(BinOp::Rem, w.clone(), i64c(-1)),
        bin(BinOp::Shl, w.clone(), u.clone()),
        mul(w.clone(), i64c(0x1_0000_0001)),
    ];
    for (k, e) in witems.into_iter().enumerate() {
        b.push(assign(at(&out64, u32c(k as u32)), e));
    }
    b.kernel("int_ops")
}

/// `while` with `break`/`continue`, `for` up and down with steps, nested loops.
pub fn loops() -> Kernel {
    let mut b = B::new();
    let n = b.param("n", Type::I32, false);
    let out = b.buf_mut("out", Type::I32);
    let acc = b.local("acc", Type::I32, true);
    let i = b.local("i", Type::I32, false);
    let j = b.local("j", Type::U32, false);
    let k = b.local("k", Type::I64, false);
    b.push(let_(&acc, i32c(0)));
    b.push(for_(
        &i,
        i32c(-3),
        n.clone(),
        u32c(1),
        ForDir::Up,
        vec![
            if_(eq(i.clone(), i32c(5)), vec![StmtKind::Continue], None),
            if_(
                bin(BinOp::Gt, i.clone(), i32c(40)),
                vec![StmtKind::Break],
                None,
            ),
            assign(place(&acc), add(acc.clone(), i.clone())),
        ],
    ));
    b.push(for_(
        &j,
        u32c(0),
        u32c(u32::MAX),
        u32c(1 << 30),
        ForDir::Down,
        vec![assign(
            place(&acc),
            bin(BinOp::BitXor, acc.clone(), cast(j.clone(), ScalarType::I32)),
        )],
    ));
    b.push(for_(
        &k,
        i64c(i64::MAX - 10),
        i64c(i64::MAX),
        u32c(4),
        ForDir::Up,
        vec![assign(
            place(&acc),
            add(acc.clone(), cast(k.clone(), ScalarType::I32)),
        )],
    ));
    b.push(StmtKind::While {
        cond: bin(BinOp::Gt, acc.clone(), i32c(100)),
        body: ss(vec![
            assign(place(&acc), sub(acc.clone(), i32c(7))),
            if_(eq(acc.clone(), i32c(42)), vec![StmtKind::Break], None),
        ]),
    });
    b.push(StmtKind::While {
        cond: boolc(true),
        body: ss(vec![
            assign(place(&acc), add(acc.clone(), i32c(1))),
            if_(
                eq(bin(BinOp::Rem, acc.clone(), i32c(2)), i32c(0)),
                vec![StmtKind::Continue],
                None,
            ),
            StmtKind::Break,
        ]),
    });
    b.push(assign(at(&out, gid()), acc));
    b.kernel("loops")
}

/// Helpers: a pure function, one writing a buffer passed as an argument (called on two
/// buffers: two specialisations), one calling another, one returning from a loop.
pub fn helpers() -> Kernel {
    let mut sq = B::new();
    let x = sq.param("x", Type::F32, false);
    sq.push(StmtKind::Return(Some(mul(x.clone(), x))));
    let sq = sq.function("sq", Type::F32);

    let mut put = B::new();
    let buf = put.buf_mut("buf", Type::F32);
    let i = put.param("i", Type::U32, false);
    let v = put.param("v", Type::F32, false);
    put.push(assign(at(&buf, i.clone()), call("sq", vec![v], Type::F32)));
    let put = put.function("put", Type::Unit);

    let mut find = B::new();
    let hay = find.buf("hay", Type::F32);
    let needle = find.param("needle", Type::F32, false);
    let k = find.local("k", Type::U32, false);
    find.push(for_(
        &k,
        u32c(0),
        len(&hay),
        u32c(1),
        ForDir::Up,
        vec![if_(
            eq(idx(&hay, k.clone()), needle),
            vec![StmtKind::Return(Some(cast(k.clone(), ScalarType::I32)))],
            None,
        )],
    ));
    find.push(StmtKind::Return(Some(i32c(-1))));
    let find = find.function("find", Type::I32);

    let mut b = B::new();
    let a = b.buf_mut("a", Type::F32);
    let c = b.buf_mut("c", Type::F32);
    let pos = b.buf_mut("pos", Type::I32);
    b.push(StmtKind::Expr(call(
        "put",
        vec![a.clone(), gid(), f32c(3.0)],
        Type::Unit,
    )));
    b.push(StmtKind::Expr(call(
        "put",
        vec![c.clone(), gid(), idx(&a, gid())],
        Type::Unit,
    )));
    b.push(assign(
        at(&pos, gid()),
        call("find", vec![a, f32c(9.0)], Type::I32),
    ));
    let mut k = b.kernel("helpers");
    k.functions = vec![sq, put, find];
    k
}

/// Shared memory, a barrier, atomics on a buffer and on shared memory, compare-exchange.
pub fn shared_atomics() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let counter = b.buf_mut("counter", Type::U32);
    let tile = b.shared("tile", Type::F32, Some(64));
    let hits = b.shared("hits", Type::I32, Some(1));
    let old = b.local("old", Type::U32, false);
    let prev = b.local("prev", Type::I32, false);
    b.push(assign(at(&tile, tid()), idx(&x, gid())));
    b.push(if_(
        eq(tid(), u32c(0)),
        vec![assign(at(&hits, u32c(0)), i32c(0))],
        None,
    ));
    b.push(StmtKind::Barrier);
    b.push(let_(
        &old,
        atomic(AtomicOp::Add, vec![counter.clone(), u32c(0), u32c(1)]),
    ));
    b.push(let_(
        &prev,
        atomic(
            AtomicOp::Max,
            vec![hits.clone(), u32c(0), cast(tid(), ScalarType::I32)],
        ),
    ));
    b.push(StmtKind::Expr(atomic(
        AtomicOp::CompareExchange,
        vec![counter.clone(), u32c(1), old.clone(), u32c(7)],
    )));
    b.push(StmtKind::MemFence(FenceScope::Device));
    b.push(StmtKind::Barrier);
    b.push(assign(
        at(&out, gid()),
        add(
            idx(&tile, bin(BinOp::BitXor, tid(), u32c(1))),
            cast(add(prev, idx(&hits, u32c(0))), ScalarType::F32),
        ),
    ));
    b.kernel("shared_atomics")
}

/// `as` casts between every pair of families.
pub fn casts() -> Kernel {
    let mut b = B::new();
    let f = b.param("f", Type::F32, false);
    let i = b.param("i", Type::I32, false);
    let u = b.param("u", Type::U32, false);
    let flag = b.param("flag", Type::BOOL, false);
    let oi = b.buf_mut("oi", Type::I32);
    let ou = b.buf_mut("ou", Type::U32);
    let of = b.buf_mut("of", Type::F32);
    let ol = b.buf_mut("ol", Type::I64);
    let oul = b.buf_mut("oul", Type::U64);
    let items_i = vec![
        cast(f.clone(), ScalarType::I32),
        cast(u.clone(), ScalarType::I32),
        cast(flag.clone(), ScalarType::I32),
        cast(cast(i.clone(), ScalarType::I64), ScalarType::I32),
    ];
    for (k, e) in items_i.into_iter().enumerate() {
        b.push(assign(at(&oi, u32c(k as u32)), e));
    }
    let items_u = vec![
        cast(f.clone(), ScalarType::U32),
        cast(i.clone(), ScalarType::U32),
        cast(cast(f.clone(), ScalarType::U64), ScalarType::U32),
    ];
    for (k, e) in items_u.into_iter().enumerate() {
        b.push(assign(at(&ou, u32c(k as u32)), e));
    }
    let items_f = vec![
        cast(i.clone(), ScalarType::F32),
        cast(u.clone(), ScalarType::F32),
        cast(cast(u.clone(), ScalarType::U64), ScalarType::F32),
        f32c(f32::INFINITY),
        f32c(f32::NAN),
        f32c(-0.0),
    ];
    for (k, e) in items_f.into_iter().enumerate() {
        b.push(assign(at(&of, u32c(k as u32)), e));
    }
    b.push(assign(at(&ol, u32c(0)), cast(i.clone(), ScalarType::I64)));
    b.push(assign(at(&ol, u32c(1)), cast(u.clone(), ScalarType::I64)));
    b.push(assign(at(&ol, u32c(2)), cast(f.clone(), ScalarType::I64)));
    b.push(assign(at(&oul, u32c(0)), cast(i, ScalarType::U64)));
    b.push(assign(at(&oul, u32c(1)), cast(f, ScalarType::U64)));
    b.kernel("casts")
}

/// Every math function on `f32`.
pub fn math_fns() -> Kernel {
    let mut b = B::new();
    let x = b.param("x", Type::F32, false);
    let y = b.param("y", Type::F32, false);
    let n = b.param("n", Type::I32, false);
    let out = b.buf_mut("out", Type::F32);
    for (k, m) in MathFn::ALL.iter().enumerate() {
        let args = match m.arity() {
            1 => vec![x.clone()],
            2 if *m == MathFn::Powi => vec![x.clone(), n.clone()],
            2 => vec![x.clone(), y.clone()],
            _ => vec![x.clone(), y.clone(), f32c(0.5)],
        };
        b.push(assign(at(&out, u32c(k as u32)), math(*m, args)));
    }
    b.push(assign(
        at(&out, u32c(40)),
        bin(BinOp::Rem, x.clone(), y.clone()),
    ));
    b.push(assign(
        at(&out, u32c(41)),
        cast(cast(bin(BinOp::Ne, x, y), ScalarType::U32), ScalarType::F32),
    ));
    b.kernel("math_fns")
}

/// Records in a buffer and as a parameter, a variant matched with bindings, `match` on
/// integers with ranges and alternatives, `if` expressions whose branches read arrays.
pub fn records_variants() -> Kernel {
    let point = Type::Record("Point".into());
    let shape = Type::Variant("Shape".into());
    let mut b = B::new();
    let origin = b.param("origin", point.clone(), false);
    let pts = b.buf_mut("pts", point.clone());
    let code = b.param("code", Type::I32, false);
    let out = b.buf_mut("out", Type::F32);
    let p = b.local("p", point.clone(), true);
    let sh = b.local("sh", shape.clone(), false);
    let r = b.local("r", Type::F32, false);
    let w = b.local("w", Type::F32, false);
    let h = b.local("h", Type::F32, false);
    let area = b.local("area", Type::F32, false);
    let v = b.local("v", Type::F32, false);
    b.push(let_(&p, idx(&pts, gid())));
    b.push(assign(
        LValue::Field {
            base: Box::new(place(&p)),
            field: "x".into(),
        },
        add(
            field(p.clone(), "x", Type::F32),
            field(origin.clone(), "x", Type::F32),
        ),
    ));
    b.push(assign(at(&pts, gid()), p.clone()));
    b.push(assign(
        LValue::Field {
            base: Box::new(at(&pts, u32c(0))),
            field: "id".into(),
        },
        u32c(9),
    ));
    b.push(let_(
        &sh,
        select(
            lt(code.clone(), i32c(0)),
            Expr {
                kind: ExprKind::VariantLit {
                    variant: "Shape".into(),
                    case: "Circle".into(),
                    payload: vec![field(p.clone(), "y", Type::F32)],
                },
                ty: shape.clone(),
            },
            Expr {
                kind: ExprKind::VariantLit {
                    variant: "Shape".into(),
                    case: "Rect".into(),
                    payload: vec![f32c(2.0), field(idx(&pts, u32c(1)), "x", Type::F32)],
                },
                ty: shape.clone(),
            },
        ),
    ));
    b.push(let_(
        &area,
        Expr {
            kind: ExprKind::Match {
                scrutinee: Box::new(sh.clone()),
                arms: vec![
                    (
                        Pattern::Case {
                            variant: "Shape".into(),
                            case: "Circle".into(),
                            bindings: vec![id(&r)],
                        },
                        mul(r.clone(), r.clone()),
                    ),
                    (
                        Pattern::Case {
                            variant: "Shape".into(),
                            case: "Rect".into(),
                            bindings: vec![id(&w), id(&h)],
                        },
                        mul(w.clone(), h.clone()),
                    ),
                ],
            },
            ty: Type::F32,
        },
    ));
    b.push(let_(
        &v,
        select(lt(gid(), len(&out)), idx(&out, gid()), f32c(0.0)),
    ));
    b.push(StmtKind::Match {
        scrutinee: code.clone(),
        arms: vec![
            (
                Pattern::Int(Const::I32(0)),
                ss(vec![assign(at(&out, u32c(0)), area.clone())]),
            ),
            (
                Pattern::Or(vec![
                    Pattern::Range(Const::I32(1), Const::I32(9)),
                    Pattern::Int(Const::I32(-5)),
                ]),
                ss(vec![assign(at(&out, u32c(1)), v.clone())]),
            ),
            (
                Pattern::Wildcard,
                ss(vec![assign(at(&out, u32c(2)), f32c(-1.0))]),
            ),
        ],
    });
    b.push(if_(
        bin(
            BinOp::LogicalAnd,
            lt(u32c(3), len(&out)),
            bin(BinOp::Gt, idx(&out, u32c(3)), f32c(0.0)),
        ),
        vec![assign(at(&out, u32c(3)), f32c(1.0))],
        None,
    ));
    let mut k = b.kernel("records_variants");
    k.records = vec![record(
        "Point",
        &[("x", Type::F32), ("y", Type::F32), ("id", Type::U32)],
    )];
    k.variants = vec![variant_def(
        "Shape",
        vec![
            ("Circle", vec![Type::F32]),
            ("Rect", vec![Type::F32, Type::F32]),
        ],
    )];
    k
}

/// Warp operations: shuffles, votes, ballot, lane id, warp size, warp barrier.
pub fn warp() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let mask = b.buf_mut("mask", Type::U32);
    let v = b.local("v", Type::F32, true);
    b.push(let_(&v, idx(&x, gid())));
    for kind in [
        ShuffleKind::Down,
        ShuffleKind::Up,
        ShuffleKind::Xor,
        ShuffleKind::Index,
    ] {
        b.push(assign(
            place(&v),
            add(
                v.clone(),
                intr(
                    Intrinsic::Shuffle(kind),
                    vec![v.clone(), u32c(1)],
                    Type::F32,
                ),
            ),
        ));
    }
    b.push(StmtKind::WarpBarrier);
    b.push(assign(at(&out, gid()), v.clone()));
    let pred = bin(BinOp::Gt, v.clone(), f32c(0.0));
    b.push(assign(
        at(&mask, gid()),
        add(
            intr(Intrinsic::Ballot, vec![pred.clone()], Type::U32),
            add(
                cast(
                    intr(Intrinsic::VoteAny, vec![pred.clone()], Type::BOOL),
                    ScalarType::U32,
                ),
                add(
                    cast(
                        intr(Intrinsic::VoteAll, vec![pred], Type::BOOL),
                        ScalarType::U32,
                    ),
                    add(
                        intr(Intrinsic::LaneId, vec![], Type::U32),
                        intr(Intrinsic::WarpSize, vec![], Type::U32),
                    ),
                ),
            ),
        ),
    ));
    b.kernel("warp")
}

/// Local arrays: a zeroed one written in a loop, a large non-zero repeat, a small one, an
/// array of vectors; a 2-D grid index.
pub fn local_arrays() -> Kernel {
    let mut b = B::new();
    let out = b.buf_mut("out", Type::F32);
    let arr_ty = |n| array_ty(Type::F32, MemSpace::Local, n);
    let a = b.local("a", arr_ty(8), true);
    let big = b.local("big", arr_ty(40), true);
    let small = b.local("small", arr_ty(3), false);
    let i = b.local("i", Type::U32, false);
    let s = b.local("s", Type::F32, true);
    b.push(let_(
        &a,
        Expr {
            kind: ExprKind::ArrayRepeat {
                value: Box::new(f32c(0.0)),
                len: 8,
            },
            ty: arr_ty(8),
        },
    ));
    b.push(let_(
        &big,
        Expr {
            kind: ExprKind::ArrayRepeat {
                value: Box::new(f32c(1.5)),
                len: 40,
            },
            ty: arr_ty(40),
        },
    ));
    b.push(let_(
        &small,
        Expr {
            kind: ExprKind::ArrayRepeat {
                value: Box::new(cast(gid(), ScalarType::F32)),
                len: 3,
            },
            ty: arr_ty(3),
        },
    ));
    b.push(let_(&s, f32c(0.0)));
    b.push(for_(
        &i,
        u32c(0),
        len(&a),
        u32c(1),
        ForDir::Up,
        vec![
            assign(at(&a, i.clone()), cast(i.clone(), ScalarType::F32)),
            assign(
                place(&s),
                add(
                    s.clone(),
                    add(idx(&a, i.clone()), idx(&big, mul(i.clone(), u32c(5)))),
                ),
            ),
        ],
    ));
    let row = intr(Intrinsic::GlobalId(Axis::Y), vec![], Type::U32);
    let width = intr(Intrinsic::GlobalSize(Axis::X), vec![], Type::U32);
    b.push(assign(
        at(&out, add(mul(row, width), gid())),
        add(s, idx(&small, u32c(2))),
    ));
    b.kernel("local_arrays")
}

/// f64 arithmetic (needs `caps.fp64`): `y[2i] = sqrt(x) + round(x)`,
/// `y[2i+1] = (x as i64) as f64 + min(x.mul_add(2, -0.5), +inf)`.
pub fn doubles() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F64);
    let y = b.buf_mut("y", Type::F64);
    let i = b.local("i", Type::U32, false);
    b.push(let_(&i, gid()));
    b.push(if_(
        lt(i.clone(), len(&x)),
        vec![
            assign(
                at(&y, mul(i.clone(), u32c(2))),
                add(
                    math(MathFn::Sqrt, vec![idx(&x, i.clone())]),
                    math(MathFn::Round, vec![idx(&x, i.clone())]),
                ),
            ),
            assign(
                at(&y, add(mul(i.clone(), u32c(2)), u32c(1))),
                add(
                    cast(cast(idx(&x, i.clone()), ScalarType::I64), ScalarType::F64),
                    math(
                        MathFn::Min,
                        vec![
                            math(
                                MathFn::MulAdd,
                                vec![idx(&x, i.clone()), f64c(2.0), f64c(-0.5)],
                            ),
                            f64c(f64::INFINITY),
                        ],
                    ),
                ),
            ),
        ],
        None,
    ));
    b.kernel("doubles")
}

/// `f16` storage: `y[2i] = (x as f32 * (scale as f32 + 1.0)) as f16`,
/// `y[2i+1] = (x as i32) as f16`.
pub fn halves() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F16);
    let y = b.buf_mut("y", Type::F16);
    let scale = b.param("scale", Type::F16, false);
    let i = b.local("i", Type::U32, false);
    b.push(let_(&i, gid()));
    b.push(if_(
        lt(i.clone(), len(&x)),
        vec![
            assign(
                at(&y, mul(i.clone(), u32c(2))),
                cast(
                    mul(
                        cast(idx(&x, i.clone()), ScalarType::F32),
                        add(
                            cast(scale, ScalarType::F32),
                            cast(Expr::constant(Const::F16(0x3c00)), ScalarType::F32),
                        ),
                    ),
                    ScalarType::F16,
                ),
            ),
            assign(
                at(&y, add(mul(i.clone(), u32c(2)), u32c(1))),
                cast(cast(idx(&x, i), ScalarType::I32), ScalarType::F16),
            ),
        ],
        None,
    ));
    b.kernel("halves")
}

/// A shared array sized at launch: `out[g] = tile[(t + 1) % len(tile)] + len(tile)` after
/// `tile[t] = x[g]` and a barrier.
pub fn dynamic_shared() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let tile = b.shared("tile", Type::F32, None);
    b.push(assign(at(&tile, tid()), idx(&x, gid())));
    b.push(StmtKind::Barrier);
    b.push(assign(
        at(&out, gid()),
        add(
            idx(&tile, bin(BinOp::Rem, add(tid(), u32c(1)), len(&tile))),
            cast(len(&tile), ScalarType::F32),
        ),
    ));
    b.kernel("dyn_shared")
}

/// Vectors (`spoc_ir::layout`: 3 lanes packed and aligned to the lane, 2 and 4 aligned to their
/// size): a buffer of `f32x3` (stride 12), a record holding an `f64x2` after a `u32`
/// (`{ id: u32, v: f64x2 }`: `v` at 16, stride 32), vector literals.
pub fn vectors() -> Kernel {
    let v3 = Type::Vector {
        elem: ScalarType::F32,
        lanes: 3,
    };
    let d2 = Type::Vector {
        elem: ScalarType::F64,
        lanes: 2,
    };
    let rec = Type::Record("Tagged".into());
    let mut b = B::new();
    let out = b.buf_mut("out", v3.clone());
    let tags = b.buf_mut("tags", rec.clone());
    let g = cast(gid(), ScalarType::F32);
    b.push(assign(
        at(&out, gid()),
        Expr {
            kind: ExprKind::VectorLit(vec![g, f32c(1.0), f32c(2.5)]),
            ty: v3,
        },
    ));
    b.push(assign(
        at(&tags, gid()),
        Expr {
            kind: ExprKind::RecordLit {
                record: "Tagged".into(),
                fields: vec![
                    add(gid(), u32c(100)),
                    Expr {
                        kind: ExprKind::VectorLit(vec![f64c(0.5), cast(gid(), ScalarType::F64)]),
                        ty: d2.clone(),
                    },
                ],
            },
            ty: rec,
        },
    ));
    let mut k = b.kernel("vectors");
    k.records = vec![record("Tagged", &[("id", Type::U32), ("v", d2)])];
    k
}

/// Every kernel of the corpus, by name.
pub fn corpus() -> Vec<(&'static str, Kernel)> {
    spoc_testkit::named_kernels![
        saxpy,
        int_ops,
        loops,
        helpers,
        shared_atomics,
        casts,
        math_fns,
        records_variants,
        warp,
        local_arrays,
        doubles,
        halves,
        dynamic_shared,
        vectors
    ]
}

/// Capabilities with everything the target language has switched on.
pub fn full_caps() -> Capabilities {
    Capabilities {
        fp64: true,
        int64_atomics: true,
        float_atomic_add: true,
        subgroups: true,
        compute_capability: None,
        float_controls_ignored: false,
        unfused_fma_f32: false,
        inline_ptx: false,
    }
}

/// Generates `k` for `target` with all capabilities and a 64×1×1 block.
pub fn gen(target: Target, k: &Kernel) -> Result<Source, spoc_codegen::CodegenError> {
    gen_with(target, k, false)
}

/// [`gen`] in checked mode (`spoc_codegen::checked`) when `checked`.
pub fn gen_with(
    target: Target,
    k: &Kernel,
    checked: bool,
) -> Result<Source, spoc_codegen::CodegenError> {
    gen_caps(target, k, full_caps(), checked)
}

/// [`gen_with`] with the device capabilities `caps`.
pub fn gen_caps(
    target: Target,
    k: &Kernel,
    caps: Capabilities,
    checked: bool,
) -> Result<Source, spoc_codegen::CodegenError> {
    spoc_ir::validate(k).unwrap_or_else(|e| panic!("{} does not validate: {e}", k.name));
    spoc_codegen::generate_source_with(
        target,
        k,
        &Options {
            block: Some([64, 1, 1]),
            soa_params: &[],
            caps,
            checked,
        },
    )
    .map(|s| s.expect("a source target"))
}
