//! Hand-built IR kernels for the C-family code generator tests (the corpus every dialect is
//! generated from, snapshotted, and compiled by the real toolchains).
#![allow(dead_code)]

pub mod toolchains;

use spoc_codegen::{Capabilities, Options, Source, Target};
use spoc_ir::*;

pub use spoc_testkit::ir::*;

// ------------------------------------------------------------------------------------ corpus

/// Signed and unsigned integer arithmetic: wrapping ops, division, shifts, negation.
pub fn int_ops() -> Kernel {
    let mut b = B::new();
    let a = b.buf("a", Type::I32);
    let w = b.buf("w", Type::I64);
    let out = b.buf_mut("out", Type::I32);
    let out64 = b.buf_mut("out64", Type::U64);
    let i = b.local("i", Type::U32, false);
    let x = b.local("x", Type::I32, false);
    let y = b.local("y", Type::I32, false);
    let z = b.local("z", Type::I64, false);
    let u = b.local("u", Type::U64, false);
    b.let_(&i, gid());
    b.let_(&x, idx(&a, i.clone()));
    b.let_(
        &y,
        bin(BinOp::BitOr, idx(&a, add(i.clone(), u32c(1))), i32c(1)),
    );
    b.let_(&z, idx(&w, i.clone()));
    // x * y + x / y - x % y + (x & 0xff) - (y ^ 0x55) + (x >> 3) + (y << 2) - -x
    let e = bin(
        BinOp::Sub,
        add(
            add(
                bin(
                    BinOp::Sub,
                    add(
                        bin(
                            BinOp::Sub,
                            add(
                                mul(x.clone(), y.clone()),
                                bin(BinOp::Div, x.clone(), y.clone()),
                            ),
                            bin(BinOp::Rem, x.clone(), y.clone()),
                        ),
                        bin(BinOp::BitAnd, x.clone(), i32c(0xff)),
                    ),
                    bin(BinOp::BitXor, y.clone(), i32c(0x55)),
                ),
                bin(BinOp::Shr, x.clone(), i32c(3)),
            ),
            bin(BinOp::Shl, y.clone(), x.clone()),
        ),
        un(UnOp::Neg, x.clone()),
    );
    b.push(assign(at(&out, i.clone()), e));
    // z / -1 (i64), (z % 7) as u64, u >> (i % 70), !u
    b.let_(
        &u,
        bin(
            BinOp::BitXor,
            cast(bin(BinOp::Div, z.clone(), i64c(-1)), ScalarType::U64),
            cast(bin(BinOp::Rem, z.clone(), i64c(i64::MIN)), ScalarType::U64),
        ),
    );
    let v = bin(
        BinOp::Add,
        bin(BinOp::Shr, u.clone(), bin(BinOp::Rem, i.clone(), u32c(70))),
        un(UnOp::Not, bin(BinOp::Shl, u.clone(), z.clone())),
    );
    b.push(assign(
        at(&out64, i.clone()),
        bin(BinOp::Mul, v, u64c(u64::MAX)),
    ));
    b.push(assign(
        at(&out, add(i.clone(), u32c(1))),
        add(
            math(MathFn::Abs, vec![x.clone()]),
            math(
                MathFn::Max,
                vec![math(MathFn::Min, vec![x, y]), i32c(i32::MIN)],
            ),
        ),
    ));
    b.kernel("int_ops")
}

/// Loops: `while` with `break`/`continue`, `for` up and down with steps, signed and unsigned,
/// `loop`, and a `match` inside a loop whose arm breaks out.
pub fn loops() -> Kernel {
    let mut b = B::new();
    let n = b.param("n", Type::I32, false);
    let out = b.buf_mut("out", Type::I32);
    let acc = b.local("acc", Type::I32, true);
    let k = b.local("k", Type::I32, true);
    let i = b.local("i", Type::I32, false);
    let j = b.local("j", Type::U32, false);
    let m = b.local("m", Type::I64, false);
    let q = b.local("q", Type::U32, false);
    let r = b.local("r", Type::I32, false);
    b.let_(&acc, i32c(0));
    b.let_(&k, i32c(0));
    b.push(StmtKind::While {
        cond: lt(k.clone(), n.clone()),
        body: vec![
            s(assign(place(&k), add(k.clone(), i32c(1)))),
            s(if_(
                bin(BinOp::Eq, bin(BinOp::Rem, k.clone(), i32c(3)), i32c(0)),
                vec![StmtKind::Continue],
                None,
            )),
            s(if_(
                bin(BinOp::Gt, acc.clone(), i32c(1000)),
                vec![StmtKind::Break],
                None,
            )),
            s(assign(place(&acc), add(acc.clone(), k.clone()))),
        ],
    });
    // for i in -5..n (plain form)
    b.push(for_(
        &i,
        i32c(-5),
        n.clone(),
        u32c(1),
        ForDir::Up,
        vec![assign(
            place(&acc),
            bin(BinOp::BitXor, acc.clone(), i.clone()),
        )],
    ));
    // for j in (0..len).rev() (plain unsigned down)
    b.push(for_(
        &j,
        u32c(0),
        len(&out),
        u32c(1),
        ForDir::Down,
        vec![if_(
            bin(BinOp::Eq, bin(BinOp::BitAnd, j.clone(), u32c(1)), u32c(1)),
            vec![StmtKind::Continue],
            None,
        )],
    ));
    // for m in (i64::MIN..i64::MAX).step_by(1 << 30).rev()
    b.push(for_(
        &m,
        i64c(i64::MIN),
        i64c(i64::MAX),
        u32c(1 << 30),
        ForDir::Down,
        vec![if_(
            bin(BinOp::Gt, m.clone(), i64c(0)),
            vec![StmtKind::Break],
            None,
        )],
    ));
    // for q in (acc as u32..n as u32).step_by(3)
    b.push(for_(
        &q,
        cast(acc.clone(), ScalarType::U32),
        cast(n.clone(), ScalarType::U32),
        u32c(3),
        ForDir::Up,
        vec![assign(place(&acc), add(acc.clone(), i32c(1)))],
    ));
    // for r in (-3..acc).rev() (signed down, general form), with a match that breaks
    b.push(for_(
        &r,
        i32c(-3),
        acc.clone(),
        u32c(1),
        ForDir::Down,
        vec![StmtKind::Match {
            scrutinee: r.clone(),
            arms: vec![
                (Pattern::Int(Const::I32(7)), vec![s(StmtKind::Break)]),
                (
                    Pattern::Range(Const::I32(i32::MIN), Const::I32(-2)),
                    vec![s(StmtKind::Continue)],
                ),
                (
                    Pattern::Wildcard,
                    vec![s(assign(place(&acc), add(acc.clone(), r.clone())))],
                ),
            ],
        }],
    ));
    // loop { if acc > 10 { break } acc += 1 }
    b.push(StmtKind::While {
        cond: boolc(true),
        body: vec![
            s(if_(
                bin(BinOp::Gt, acc.clone(), i32c(10)),
                vec![StmtKind::Break],
                None,
            )),
            s(assign(place(&acc), add(acc.clone(), i32c(1)))),
        ],
    });
    // a switch on an integer
    b.push(StmtKind::Match {
        scrutinee: bin(BinOp::Rem, acc.clone(), i32c(4)),
        arms: vec![
            (
                Pattern::Or(vec![
                    Pattern::Int(Const::I32(0)),
                    Pattern::Int(Const::I32(1)),
                ]),
                vec![s(assign(place(&acc), i32c(0)))],
            ),
            (
                Pattern::Int(Const::I32(1)),
                vec![s(assign(place(&acc), i32c(99)))],
            ),
            (Pattern::Wildcard, vec![]),
        ],
    });
    b.push(assign(at(&out, u32c(0)), acc));
    b.kernel("loops")
}

/// Helper functions: callees before callers, buffers with their lengths, a local array by
/// value, a mutable parameter, a record result.
pub fn helpers() -> Kernel {
    let point = record("Point", &[("x", Type::F32), ("y", Type::F32)]);
    let pt = Type::Record("Point".into());

    let mut sq = B::new();
    let x = sq.param("x", Type::F32, false);
    sq.push(StmtKind::Return(Some(mul(x.clone(), x))));
    let square = sq.function("square", Type::F32);

    let mut nb = B::new();
    let p = nb.param("p", pt.clone(), false);
    let norm = call("square", vec![field(p.clone(), "x", Type::F32)], Type::F32);
    let norm = add(
        norm,
        call("square", vec![field(p, "y", Type::F32)], Type::F32),
    );
    nb.push(StmtKind::Return(Some(math(MathFn::Sqrt, vec![norm]))));
    let normf = nb.function("norm", Type::F32);

    let arr4 = array_ty(Type::F32, MemSpace::Local, 4);
    let mut sb = B::new();
    let data = sb.buf("data", Type::F32);
    let mut_arr = sb.param("a", arr4.clone(), true);
    let total = sb.local("total", Type::F32, true);
    let i = sb.local("i", Type::U32, false);
    sb.let_(&total, f32c(0.0));
    sb.push(assign(at(&mut_arr, u32c(0)), idx(&data, u32c(0))));
    sb.push(for_(
        &i,
        u32c(0),
        len(&data),
        u32c(1),
        ForDir::Up,
        vec![assign(
            place(&total),
            add(total.clone(), idx(&data, i.clone())),
        )],
    ));
    sb.push(StmtKind::Return(Some(add(total, idx(&mut_arr, u32c(0))))));
    let sum = sb.function("sum", Type::F32);

    let mut mk = B::new();
    let v = mk.param("v", Type::F32, true);
    mk.push(assign(place(&v), add(v.clone(), f32c(1.0))));
    mk.push(StmtKind::Return(Some(Expr {
        kind: ExprKind::RecordLit {
            record: "Point".into(),
            fields: vec![v.clone(), un(UnOp::Neg, v)],
        },
        ty: pt.clone(),
    })));
    let make = mk.function("make", pt.clone());

    // an impure helper: its call must not be reordered with reads of memory
    let mut bp = B::new();
    let counter = bp.buf_mut("counter", Type::I32);
    bp.push(StmtKind::Return(Some(atomic(
        AtomicOp::Add,
        vec![counter, u32c(0), i32c(1)],
    ))));
    let bump = bp.function("bump", Type::I32);

    let mut b = B::new();
    let xs = b.buf("xs", Type::F32);
    let pts = b.buf_mut("pts", pt.clone());
    let out = b.buf_mut("out", Type::F32);
    let counts = b.buf_mut("counts", Type::I32);
    let i = b.local("i", Type::U32, false);
    let p = b.local("p", pt.clone(), false);
    let arr = b.local("arr", arr4.clone(), false);
    b.let_(&i, gid());
    b.let_(&p, call("make", vec![idx(&xs, i.clone())], pt.clone()));
    b.push(assign(at(&pts, i.clone()), p.clone()));
    b.let_(
        &arr,
        Expr {
            kind: ExprKind::ArrayRepeat {
                value: Box::new(f32c(0.5)),
                len: 4,
            },
            ty: arr4,
        },
    );
    b.push(assign(
        at(&out, i.clone()),
        add(
            call("norm", vec![idx(&pts, i.clone())], Type::F32),
            call("sum", vec![xs.clone(), arr], Type::F32),
        ),
    ));
    b.push(assign(
        at(&out, add(i.clone(), u32c(1))),
        add(
            idx(&out, i.clone()),
            call("sum", vec![out.clone(), b_arr_repeat(1.0)], Type::F32),
        ),
    ));
    // evaluation order: counts[i] is read before bump(counts) runs, and the value before the
    // place counts[counts[0]]
    b.push(assign(
        LValue::Index {
            base: Box::new(place(&counts)),
            index: cast(idx(&counts, u32c(0)), ScalarType::U32),
        },
        bin(
            BinOp::Sub,
            idx(&counts, i.clone()),
            call("bump", vec![counts.clone()], Type::I32),
        ),
    ));
    let mut k = b.kernel("helpers");
    k.records = vec![point];
    k.functions = vec![sum, normf, make, square, bump];
    k
}

fn b_arr_repeat(v: f32) -> Expr {
    Expr {
        kind: ExprKind::ArrayRepeat {
            value: Box::new(f32c(v)),
            len: 4,
        },
        ty: array_ty(Type::F32, MemSpace::Local, 4),
    }
}

/// Shared memory (fixed and launch-sized), barriers, fences and atomics of every kind.
pub fn shared_atomics() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let counts = b.buf_mut("counts", Type::I32);
    let ucounts = b.buf_mut("ucounts", Type::U32);
    let big = b.buf_mut("big", Type::I64);
    let ubig = b.buf_mut("ubig", Type::U64);
    let sums = b.buf_mut("sums", Type::F32);
    let tile = b.shared("tile", Type::F32, Some(256));
    let dynamic = b.shared("scratch", Type::I32, None);
    let t = b.local("t", Type::U32, false);
    let old = b.local("old", Type::I32, false);
    b.let_(&t, tid());
    b.push(assign(at(&tile, t.clone()), idx(&x, gid())));
    b.push(assign(
        at(&dynamic, bin(BinOp::Rem, t.clone(), len(&dynamic))),
        i32c(0),
    ));
    b.push(StmtKind::Barrier);
    b.push(StmtKind::MemFence(FenceScope::Block));
    let ops = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Exchange,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
    ];
    for op in ops {
        b.push(StmtKind::Expr(atomic(
            op,
            vec![counts.clone(), u32c(0), i32c(3)],
        )));
        b.push(StmtKind::Expr(atomic(
            op,
            vec![ucounts.clone(), u32c(1), u32c(5)],
        )));
        b.push(StmtKind::Expr(atomic(
            op,
            vec![big.clone(), u32c(2), i64c(-7)],
        )));
        b.push(StmtKind::Expr(atomic(
            op,
            vec![ubig.clone(), u32c(3), u64c(9)],
        )));
    }
    b.let_(
        &old,
        atomic(
            AtomicOp::CompareExchange,
            vec![counts.clone(), u32c(4), i32c(0), i32c(1)],
        ),
    );
    b.push(StmtKind::Expr(atomic(
        AtomicOp::CompareExchange,
        vec![big.clone(), u32c(4), i64c(0), i64c(1)],
    )));
    b.push(StmtKind::Expr(atomic(
        AtomicOp::Add,
        vec![dynamic.clone(), u32c(0), old],
    )));
    b.push(StmtKind::Expr(atomic(
        AtomicOp::Add,
        vec![sums.clone(), u32c(0), idx(&tile, t.clone())],
    )));
    b.push(StmtKind::Expr(atomic(
        AtomicOp::Add,
        vec![tile.clone(), u32c(0), f32c(1.0)],
    )));
    b.push(StmtKind::MemFence(FenceScope::Device));
    b.push(StmtKind::Barrier);
    b.kernel("shared_atomics")
}

/// Every cast kind, `f16` included.
pub fn casts() -> Kernel {
    let mut b = B::new();
    let f = b.buf("f", Type::F32);
    let d = b.buf("d", Type::F64);
    let h = b.buf_mut("h", Type::F16);
    let ints = b.buf_mut("ints", Type::I32);
    let longs = b.buf_mut("longs", Type::U64);
    let flags = b.buf_mut("flags", Type::BOOL);
    let outf = b.buf_mut("outf", Type::F32);
    let i = b.local("i", Type::U32, false);
    b.let_(&i, gid());
    let fi = idx(&f, i.clone());
    let di = idx(&d, i.clone());
    b.push(assign(
        at(&ints, i.clone()),
        cast(fi.clone(), ScalarType::I32),
    ));
    b.push(assign(
        at(&ints, add(i.clone(), u32c(1))),
        cast(cast(di.clone(), ScalarType::U32), ScalarType::I32),
    ));
    b.push(assign(
        at(&longs, i.clone()),
        cast(fi.clone(), ScalarType::U64),
    ));
    b.push(assign(
        at(&longs, add(i.clone(), u32c(1))),
        cast(cast(di.clone(), ScalarType::I64), ScalarType::U64),
    ));
    b.push(assign(at(&h, i.clone()), cast(fi.clone(), ScalarType::F16)));
    b.push(assign(
        at(&h, add(i.clone(), u32c(1))),
        cast(di.clone(), ScalarType::F16),
    ));
    b.push(assign(
        at(&h, add(i.clone(), u32c(2))),
        cast(idx(&ints, i.clone()), ScalarType::F16),
    ));
    b.push(assign(
        at(&h, add(i.clone(), u32c(3))),
        Expr::constant(Const::F16(0x3c00)),
    ));
    b.push(assign(
        at(&outf, i.clone()),
        add(
            cast(idx(&h, i.clone()), ScalarType::F32),
            cast(cast(idx(&h, i.clone()), ScalarType::F64), ScalarType::F32),
        ),
    ));
    b.push(assign(
        at(&ints, add(i.clone(), u32c(2))),
        cast(idx(&h, i.clone()), ScalarType::I32),
    ));
    b.push(assign(
        at(&outf, add(i.clone(), u32c(1))),
        add(
            cast(idx(&longs, i.clone()), ScalarType::F32),
            cast(idx(&ints, i.clone()), ScalarType::F32),
        ),
    ));
    b.push(assign(
        at(&flags, i.clone()),
        bin(
            BinOp::LogicalAnd,
            lt(fi.clone(), f32c(f32::INFINITY)),
            bin(BinOp::Ne, di, f64c(-0.0)),
        ),
    ));
    b.push(assign(
        at(&ints, add(i.clone(), u32c(3))),
        add(
            cast(idx(&flags, i.clone()), ScalarType::I32),
            cast(
                cast(idx(&longs, i.clone()), ScalarType::I64),
                ScalarType::I32,
            ),
        ),
    ));
    b.push(assign(
        at(&outf, add(i.clone(), u32c(2))),
        select(
            bin(BinOp::Eq, fi.clone(), fi.clone()),
            f32c(f32::NAN),
            f32c(0.1),
        ),
    ));
    b.kernel("casts")
}

/// Every math function on f32 and f64.
pub fn math_fns() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let y = b.buf("y", Type::F64);
    let out = b.buf_mut("out", Type::F32);
    let outd = b.buf_mut("outd", Type::F64);
    let i = b.local("i", Type::U32, false);
    b.let_(&i, gid());
    let mut k = 0u32;
    for (src, dst, t) in [(&x, &out, Type::F32), (&y, &outd, Type::F64)] {
        let v = idx(src, i.clone());
        for m in MathFn::ALL {
            let args = match m.arity() {
                1 => vec![v.clone()],
                2 if m == MathFn::Powi => vec![v.clone(), i32c(-3)],
                2 => vec![v.clone(), idx(src, add(i.clone(), u32c(1)))],
                _ => vec![v.clone(), v.clone(), v.clone()],
            };
            let _ = &t;
            b.push(assign(at(dst, add(i.clone(), u32c(k))), math(m, args)));
            k += 1;
        }
    }
    b.kernel("math_fns")
}

/// Records (buffer and by value), a variant with payloads, `match` with bindings (statement
/// and expression), nested records, vectors.
pub fn records_variants() -> Kernel {
    let v2 = Type::Vector {
        elem: ScalarType::F32,
        lanes: 2,
    };
    let particle = record(
        "Particle",
        &[
            ("pos", Type::Record("Vec2".into())),
            ("mass", Type::F32),
            ("alive", Type::BOOL),
            ("id", Type::I64),
            ("dir", v2.clone()),
        ],
    );
    let vec2 = record("Vec2", &[("x", Type::F32), ("y", Type::F32)]);
    let shape = variant_def(
        "Shape",
        vec![
            ("Circle", vec![Type::F32]),
            ("Rect", vec![Type::F32, Type::F32]),
            ("Empty", vec![]),
        ],
    );
    let pt = Type::Record("Particle".into());
    let vt = Type::Record("Vec2".into());
    let st = Type::Variant("Shape".into());
    let mut b = B::new();
    let ps = b.buf_mut("ps", pt.clone());
    let scale = b.param("scale", vt.clone(), false);
    let areas = b.buf_mut("areas", Type::F32);
    let i = b.local("i", Type::U32, false);
    let p = b.local("p", pt.clone(), true);
    let sh = b.local("sh", st.clone(), false);
    let r = b.local("r", Type::F32, false);
    let w = b.local("w", Type::F32, false);
    let h = b.local("h", Type::F32, false);
    let area = b.local("area", Type::F32, false);
    let r2 = b.local("r", Type::F32, false);
    b.let_(&i, gid());
    b.let_(&p, idx(&ps, i.clone()));
    let pos = LValue::Field {
        base: Box::new(place(&p)),
        field: "pos".into(),
    };
    b.push(assign(
        LValue::Field {
            base: Box::new(pos),
            field: "x".into(),
        },
        mul(
            field(field(p.clone(), "pos", vt.clone()), "x", Type::F32),
            field(scale.clone(), "x", Type::F32),
        ),
    ));
    b.push(assign(
        LValue::Field {
            base: Box::new(place(&p)),
            field: "dir".into(),
        },
        Expr {
            kind: ExprKind::VectorLit(vec![f32c(1.0), f32c(0.0)]),
            ty: v2,
        },
    ));
    b.push(assign(at(&ps, i.clone()), p.clone()));
    let variant = |case: &str, payload: Vec<Expr>| Expr {
        kind: ExprKind::VariantLit {
            variant: "Shape".into(),
            case: case.into(),
            payload,
        },
        ty: st.clone(),
    };
    b.let_(
        &sh,
        select(
            field(p.clone(), "alive", Type::BOOL),
            select(
                lt(field(p.clone(), "mass", Type::F32), f32c(1.0)),
                variant("Circle", vec![field(p.clone(), "mass", Type::F32)]),
                variant(
                    "Rect",
                    vec![
                        field(p.clone(), "mass", Type::F32),
                        field(scale.clone(), "y", Type::F32),
                    ],
                ),
            ),
            variant("Empty", vec![]),
        ),
    );
    let case = |c: &str, bindings: Vec<VarId>| Pattern::Case {
        variant: "Shape".into(),
        case: c.into(),
        bindings,
    };
    b.let_(
        &area,
        Expr {
            kind: ExprKind::Match {
                scrutinee: Box::new(sh.clone()),
                arms: vec![
                    (
                        case("Circle", vec![id(&r)]),
                        mul(mul(r.clone(), r.clone()), f32c(std::f32::consts::PI)),
                    ),
                    (case("Rect", vec![id(&w), id(&h)]), mul(w, h)),
                    (case("Empty", vec![]), f32c(0.0)),
                ],
            },
            ty: Type::F32,
        },
    );
    b.push(assign(at(&areas, i.clone()), area));
    // a statement match with a loop-breaking arm → if chain
    b.push(StmtKind::While {
        cond: boolc(true),
        body: vec![
            s(StmtKind::Match {
                scrutinee: sh.clone(),
                arms: vec![
                    (
                        case("Circle", vec![id(&r2)]),
                        vec![s(assign(at(&areas, u32c(0)), r2))],
                    ),
                    (
                        Pattern::Or(vec![case("Rect", vec![]), case("Empty", vec![])]),
                        vec![s(StmtKind::Break)],
                    ),
                ],
            }),
            s(StmtKind::Break),
        ],
    });
    // a match expression in an operand position, inside a short-circuit
    let m = Expr {
        kind: ExprKind::Match {
            scrutinee: Box::new(cast(i.clone(), ScalarType::I32)),
            arms: vec![
                (Pattern::Range(Const::I32(0), Const::I32(9)), boolc(true)),
                (Pattern::Wildcard, boolc(false)),
            ],
        },
        ty: Type::BOOL,
    };
    b.push(if_(
        bin(BinOp::LogicalAnd, lt(i.clone(), len(&areas)), m),
        vec![assign(at(&areas, i.clone()), f32c(-1.0))],
        None,
    ));
    let mut k = b.kernel("records_variants");
    k.records = vec![particle, vec2];
    k.variants = vec![shape];
    k
}

/// Warp operations.
pub fn warp() -> Kernel {
    let mut b = B::new();
    let x = b.buf_mut("x", Type::F32);
    let flags = b.buf_mut("flags", Type::U32);
    let v = b.local("v", Type::F32, true);
    let lane = b.local("lane", Type::U32, false);
    b.let_(&v, idx(&x, gid()));
    b.let_(&lane, intr(Intrinsic::LaneId, vec![], Type::U32));
    for k in [
        ShuffleKind::Down,
        ShuffleKind::Up,
        ShuffleKind::Xor,
        ShuffleKind::Index,
    ] {
        b.push(assign(
            place(&v),
            add(
                v.clone(),
                intr(Intrinsic::Shuffle(k), vec![v.clone(), u32c(1)], Type::F32),
            ),
        ));
    }
    b.push(StmtKind::WarpBarrier);
    let p = lt(v.clone(), f32c(0.0));
    b.push(assign(
        at(&flags, lane.clone()),
        intr(Intrinsic::Ballot, vec![p.clone()], Type::U32),
    ));
    b.push(if_(
        bin(
            BinOp::LogicalOr,
            intr(Intrinsic::VoteAny, vec![p.clone()], Type::BOOL),
            intr(Intrinsic::VoteAll, vec![p], Type::BOOL),
        ),
        vec![assign(
            at(&x, gid()),
            cast(
                intr(Intrinsic::WarpSize, vec![], Type::U32),
                ScalarType::F32,
            ),
        )],
        None,
    ));
    b.kernel("warp")
}

/// Local arrays: `[v; n]`, nested arrays, copies, selects of arrays.
pub fn local_arrays() -> Kernel {
    let a4 = array_ty(Type::I32, MemSpace::Local, 4);
    let a34 = array_ty(a4.clone(), MemSpace::Local, 3);
    let rep = |v: Expr, n: u32, ty: &Type| Expr {
        kind: ExprKind::ArrayRepeat {
            value: Box::new(v),
            len: n,
        },
        ty: ty.clone(),
    };
    let mut b = B::new();
    let src = b.buf("src", Type::I32);
    let out = b.buf_mut("out", Type::I32);
    let a = b.local("a", a4.clone(), true);
    let grid = b.local("grid", a34.clone(), true);
    let c = b.local("c", a4.clone(), false);
    let i = b.local("i", Type::U32, false);
    b.let_(&a, rep(idx(&src, u32c(0)), 4, &a4));
    b.let_(&grid, rep(rep(i32c(7), 4, &a4), 3, &a34));
    b.push(assign(at(&a, u32c(1)), i32c(2)));
    b.push(assign(
        LValue::Index {
            base: Box::new(at(&grid, u32c(2))),
            index: u32c(3),
        },
        idx(&a, u32c(1)),
    ));
    b.push(assign(at(&grid, u32c(1)), a.clone()));
    b.let_(
        &c,
        select(
            lt(idx(&src, u32c(1)), i32c(0)),
            a.clone(),
            idx(&grid, u32c(0)),
        ),
    );
    b.push(for_(
        &i,
        u32c(0),
        len(&c),
        u32c(1),
        ForDir::Up,
        vec![assign(
            at(&out, i.clone()),
            add(idx(&c, i.clone()), idx(&idx(&grid, u32c(2)), i.clone())),
        )],
    ));
    b.kernel("local_arrays")
}

/// Every kernel of the corpus, with its name.
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
        local_arrays
    ]
}

/// The three C-family targets.
pub const TARGETS: [Target; 3] = [Target::CudaC, Target::Hip, Target::OpenCl];

/// `(kernel name, target, source)` of every kernel of `kernels` for every one of [`TARGETS`]
/// (generated by [`gen`]), as `toolchains::check_all` takes them.
pub fn sources_for_every_target(kernels: Vec<(&str, Kernel)>) -> Vec<(String, Target, String)> {
    let mut sources = Vec::new();
    for (name, k) in kernels {
        for t in TARGETS {
            sources.push((name.to_string(), t, gen(t, &k)));
        }
    }
    sources
}

/// Capabilities for the corpus: the target's defaults, with everything the corpus uses turned
/// on for OpenCL (64-bit atomics, subgroups).
pub fn full_caps(target: Target) -> Capabilities {
    let mut c = Capabilities::for_target(target);
    c.fp64 = true;
    c.int64_atomics = true;
    c.subgroups = true;
    c
}

/// Generates `k` for `target` with [`full_caps`], panicking with the kernel on error.
pub fn gen(target: Target, k: &Kernel) -> String {
    gen_with(target, k, false)
}

/// [`gen`] in checked mode (`spoc_codegen::checked`) when `checked`.
pub fn gen_with(target: Target, k: &Kernel, checked: bool) -> String {
    validate(k).unwrap_or_else(|e| panic!("corpus kernel does not validate: {e}\n{k}"));
    let opts = Options {
        block: None,
        soa_params: &[],
        caps: full_caps(target),
        checked,
    };
    let src: Source = spoc_codegen::generate_source_with(target, k, &opts)
        .unwrap_or_else(|e| panic!("{target:?} {}: {e}", k.name))
        .expect("C targets generate source");
    src.text().expect("C targets generate text").to_string()
}
