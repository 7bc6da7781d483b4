//! Hand-built IR kernels for the PTX generator's tests (snapshots, ptxas), and a small builder.
#![allow(dead_code)]

use spoc_ir::*;
use spoc_testkit::ir;

/// Builds a kernel or helper as nested blocks, each statement on a line of its own (the PTX
/// snapshots show the `.loc` lines); the variable table is [`spoc_testkit::ir::B`]'s.
pub struct B {
    decls: ir::B,
    blocks: Vec<Block>,
    line: u32,
}

impl Default for B {
    fn default() -> B {
        B::new()
    }
}

impl B {
    pub fn new() -> B {
        B {
            decls: ir::B::new(),
            blocks: vec![Vec::new()],
            line: 1,
        }
    }

    fn var(&mut self, name: &str, ty: Type, mutable: bool, kind: VarKind) -> VarId {
        id(&self.decls.declare(name, ty, mutable, kind))
    }

    /// A reference to variable `v`.
    pub fn v(&self, v: VarId) -> Expr {
        self.decls.v(v)
    }

    pub fn param(&mut self, name: &str, ty: Type) -> Expr {
        self.decls.param(name, ty, false)
    }

    pub fn buf(&mut self, name: &str, elem: Type) -> Expr {
        self.decls.buf(name, elem)
    }

    pub fn buf_mut(&mut self, name: &str, elem: Type) -> Expr {
        self.decls.buf_mut(name, elem)
    }

    pub fn shared(&mut self, name: &str, elem: Type, len: Option<u32>) -> Expr {
        self.decls.shared(name, elem, len)
    }

    pub fn push(&mut self, kind: StmtKind) {
        let line = self.next_line();
        self.push_at(line, kind);
    }

    fn next_line(&mut self) -> u32 {
        self.line += 1;
        self.line - 1
    }

    fn push_at(&mut self, line: u32, kind: StmtKind) {
        let loc = Some(SrcLoc { line, column: 5 });
        self.blocks.last_mut().unwrap().push(Stmt { kind, loc });
    }

    fn sub(&mut self, f: impl FnOnce(&mut B)) -> Block {
        self.blocks.push(Vec::new());
        f(self);
        self.blocks.pop().unwrap()
    }

    /// `let name = init;`
    pub fn let_(&mut self, name: &str, init: Expr) -> Expr {
        let v = self.var(name, init.ty.clone(), false, VarKind::Local);
        self.push(StmtKind::Let {
            var: v,
            init: Some(init),
        });
        self.v(v)
    }

    /// `let mut name = init;`
    pub fn let_mut(&mut self, name: &str, init: Expr) -> VarId {
        let v = self.var(name, init.ty.clone(), true, VarKind::Local);
        self.push(StmtKind::Let {
            var: v,
            init: Some(init),
        });
        v
    }

    pub fn assign(&mut self, target: LValue, value: Expr) {
        self.push(StmtKind::Assign { target, value });
    }

    /// `v = value;`
    pub fn set(&mut self, v: VarId, value: Expr) {
        self.assign(LValue::Var(v), value);
    }

    /// `arr[i] = value;` for an array variable `arr`.
    pub fn store(&mut self, arr: &Expr, i: Expr, value: Expr) {
        let ExprKind::Var(v) = arr.kind else {
            panic!("store into a non-variable")
        };
        self.assign(
            LValue::Index {
                base: Box::new(LValue::Var(v)),
                index: i,
            },
            value,
        );
    }

    pub fn if_(&mut self, cond: Expr, then: impl FnOnce(&mut B)) {
        let line = self.next_line();
        let then = self.sub(then);
        self.push_at(
            line,
            StmtKind::If {
                cond,
                then,
                els: None,
            },
        );
    }

    pub fn if_else(&mut self, cond: Expr, then: impl FnOnce(&mut B), els: impl FnOnce(&mut B)) {
        let line = self.next_line();
        let then = self.sub(then);
        let els = self.sub(els);
        self.push_at(
            line,
            StmtKind::If {
                cond,
                then,
                els: Some(els),
            },
        );
    }

    pub fn while_(&mut self, cond: Expr, body: impl FnOnce(&mut B)) {
        let line = self.next_line();
        let body = self.sub(body);
        self.push_at(line, StmtKind::While { cond, body });
    }

    /// `for name in (start..end)[.rev()].step_by(step)`; the closure gets the loop variable.
    pub fn for_(
        &mut self,
        name: &str,
        start: Expr,
        end: Expr,
        step: Expr,
        dir: ForDir,
        body: impl FnOnce(&mut B, Expr),
    ) {
        let line = self.next_line();
        let var = self.var(name, start.ty.clone(), false, VarKind::Local);
        let ve = self.v(var);
        let body = self.sub(|b| body(b, ve));
        self.push_at(
            line,
            StmtKind::For(ForLoop {
                var,
                start,
                end,
                step,
                dir,
                body,
            }),
        );
    }

    pub fn brk(&mut self) {
        self.push(StmtKind::Break);
    }
    pub fn cont(&mut self) {
        self.push(StmtKind::Continue);
    }
    pub fn ret(&mut self, v: Option<Expr>) {
        self.push(StmtKind::Return(v));
    }
    pub fn expr(&mut self, e: Expr) {
        self.push(StmtKind::Expr(e));
    }

    pub fn kernel(mut self, name: &str) -> Kernel {
        let body = self.blocks.pop().unwrap();
        self.decls.kernel_with(name, body)
    }

    pub fn function(mut self, name: &str, ret: Type) -> Function {
        let body = self.blocks.pop().unwrap();
        self.decls.function_with(name, ret, body)
    }
}

// ---------------------------------------------------------------- expressions

#[allow(unused_imports)] // each test binary uses some of them
pub use spoc_testkit::ir::{
    add, and, array_ty, atomic, bin, boolc, call, cast, div, eq, f32c, f64c, field, ge, gid, i32c,
    i64c, id, idx, intr, len, lt, math, mul, record, rem, select, sub, tid, u32c, u64c, un,
    variant_def,
};

// ---------------------------------------------------------------- the corpus

/// `y[i] = a * x[i] + y[i]` for `i < y.len()`.
pub fn saxpy() -> Kernel {
    let mut b = B::new();
    let a = b.param("a", Type::F32);
    let x = b.buf("x", Type::F32);
    let y = b.buf_mut("y", Type::F32);
    let i = b.let_("i", gid());
    b.if_(lt(i.clone(), len(&y)), |b| {
        let v = add(mul(a, idx(&x, i.clone())), idx(&y, i.clone()));
        b.store(&y, i, v);
    });
    b.kernel("saxpy")
}

/// Integer arithmetic: wrapping ops, signed/unsigned division and remainder, shifts by
/// variable amounts, bitwise ops, comparisons, i64.
pub fn int_ops() -> Kernel {
    let mut b = B::new();
    let a = b.buf("a", Type::I32);
    let bb = b.buf("b", Type::I32);
    let ua = b.buf("ua", Type::U32);
    let w = b.buf("w", Type::I64);
    let out = b.buf_mut("out", Type::I32);
    let uout = b.buf_mut("uout", Type::U32);
    let wout = b.buf_mut("wout", Type::I64);
    let i = b.let_("i", gid());
    b.if_(ge(i.clone(), len(&a)), |b| b.ret(None));
    let x = b.let_("x", idx(&a, i.clone()));
    let y = b.let_("y", idx(&bb, i.clone()));
    let u = b.let_("u", idx(&ua, i.clone()));
    let k = b.let_("k", idx(&w, i.clone()));
    let i7 = mul(i.clone(), u32c(7));
    b.store(&out, i7.clone(), div(x.clone(), y.clone()));
    b.store(&out, add(i7.clone(), u32c(1)), rem(x.clone(), y.clone()));
    b.store(
        &out,
        add(i7.clone(), u32c(2)),
        bin(BinOp::Shl, x.clone(), y.clone()),
    );
    b.store(
        &out,
        add(i7.clone(), u32c(3)),
        bin(BinOp::Shr, x.clone(), u.clone()),
    );
    b.store(
        &out,
        add(i7.clone(), u32c(4)),
        bin(
            BinOp::BitXor,
            bin(BinOp::BitAnd, x.clone(), i32c(0xff)),
            un(UnOp::Not, y.clone()),
        ),
    );
    b.store(
        &out,
        add(i7.clone(), u32c(5)),
        sub(mul(x.clone(), i32c(1_000_003)), un(UnOp::Neg, y.clone())),
    );
    b.store(&out, add(i7, u32c(6)), div(x.clone(), i32c(-1)));
    let i4 = mul(i.clone(), u32c(4));
    b.store(&uout, i4.clone(), div(u.clone(), add(u.clone(), u32c(3))));
    b.store(
        &uout,
        add(i4.clone(), u32c(1)),
        rem(u32c(1_000_000), add(u.clone(), u32c(1))),
    );
    b.store(
        &uout,
        add(i4.clone(), u32c(2)),
        bin(BinOp::Shr, u.clone(), x.clone()),
    );
    b.store(
        &uout,
        add(i4, u32c(3)),
        cast(bin(BinOp::Le, x.clone(), y.clone()), ScalarType::U32),
    );
    let i3 = mul(i, u32c(3));
    b.store(&wout, i3.clone(), div(k.clone(), i64c(7)));
    b.store(
        &wout,
        add(i3.clone(), u32c(1)),
        rem(k.clone(), cast(y.clone(), ScalarType::I64)),
    );
    b.store(&wout, add(i3, u32c(2)), bin(BinOp::Shl, k, u));
    b.kernel("int_ops")
}

/// Loops: `while` with `break`/`continue`, `for` up and down with steps, `loop`.
pub fn loops() -> Kernel {
    let mut b = B::new();
    let out = b.buf_mut("out", Type::I64);
    let lo = b.param("lo", Type::I32);
    let hi = b.param("hi", Type::I32);
    let i = b.let_("i", gid());
    b.if_(ge(i.clone(), len(&out)), |b| b.ret(None));
    let acc = b.let_mut("acc", i64c(0));
    let acce = b.v(acc);
    let s = add(i.clone(), u32c(1));
    b.for_(
        "v",
        lo.clone(),
        hi.clone(),
        s.clone(),
        ForDir::Up,
        |b, v| {
            b.set(
                acc,
                add(mul(acce.clone(), i64c(3)), cast(v, ScalarType::I64)),
            );
        },
    );
    b.for_("w", lo.clone(), hi.clone(), s, ForDir::Down, |b, w| {
        b.if_(eq(rem(w.clone(), i32c(3)), i32c(0)), |b| b.cont());
        b.set(
            acc,
            sub(mul(acce.clone(), i64c(5)), cast(w, ScalarType::I64)),
        );
    });
    let n = b.let_mut("n", cast(i.clone(), ScalarType::U64));
    let ne = b.v(n);
    b.while_(boolc(true), |b| {
        b.if_(lt(ne.clone(), u64c(2)), |b| b.brk());
        b.if_else(
            eq(rem(ne.clone(), u64c(2)), u64c(0)),
            |b| b.set(n, div(ne.clone(), u64c(2))),
            |b| b.set(n, add(mul(ne.clone(), u64c(3)), u64c(1))),
        );
        b.set(acc, add(acce.clone(), i64c(1)));
    });
    let k = b.let_mut("k", u32c(0));
    let ke = b.v(k);
    b.while_(
        and(lt(ke.clone(), u32c(100)), lt(ke.clone(), i.clone())),
        |b| {
            b.set(k, add(ke.clone(), u32c(1)));
            b.if_(eq(rem(ke.clone(), u32c(7)), u32c(0)), |b| b.cont());
            b.set(
                acc,
                bin(
                    BinOp::BitXor,
                    acce.clone(),
                    cast(ke.clone(), ScalarType::I64),
                ),
            );
        },
    );
    b.store(&out, i, acce);
    b.kernel("loops")
}

/// A helper calling another helper, called twice from the kernel.
pub fn helpers() -> Kernel {
    // fn clamp01(v: f32) -> f32 { if v < 0.0 { return 0.0; } if v > 1.0 { return 1.0; } v }
    let mut h = B::new();
    let v = h.param("v", Type::F32);
    h.if_(lt(v.clone(), f32c(0.0)), |b| b.ret(Some(f32c(0.0))));
    h.if_(bin(BinOp::Gt, v.clone(), f32c(1.0)), |b| {
        b.ret(Some(f32c(1.0)))
    });
    h.ret(Some(v));
    let clamp01 = h.function("clamp01", Type::F32);
    // fn smoothstep(e0, e1, x) -> f32 { let t = clamp01((x - e0) / (e1 - e0)); t * t * (3 - 2t) }
    let mut h = B::new();
    let e0 = h.param("e0", Type::F32);
    let e1 = h.param("e1", Type::F32);
    let x = h.param("x", Type::F32);
    let t = h.let_(
        "t",
        call(
            "clamp01",
            vec![div(sub(x, e0.clone()), sub(e1, e0))],
            Type::F32,
        ),
    );
    h.ret(Some(mul(
        mul(t.clone(), t.clone()),
        sub(f32c(3.0), mul(f32c(2.0), t)),
    )));
    let smooth = h.function("smoothstep", Type::F32);
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let i = b.let_("i", gid());
    b.if_(lt(i.clone(), len(&x)), |b| {
        let xi = b.let_("xi", idx(&x, i.clone()));
        let s1 = call(
            "smoothstep",
            vec![f32c(0.0), f32c(1.0), xi.clone()],
            Type::F32,
        );
        let s2 = call("smoothstep", vec![f32c(-1.0), f32c(2.0), xi], Type::F32);
        b.store(&out, i, add(s1, s2));
    });
    let mut k = b.kernel("apply_smoothstep");
    k.functions = vec![smooth, clamp01];
    k
}

/// Shared memory, a barrier, atomics on global and shared memory, a warp shuffle reduction,
/// votes and a ballot.
pub fn shared_atomics_warp() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let sums = b.buf_mut("sums", Type::F32);
    let counts = b.buf_mut("counts", Type::U32);
    let flags = b.buf_mut("flags", Type::I64);
    let tile = b.shared("tile", Type::F32, Some(256));
    let lowest = b.shared("lowest", Type::I32, Some(1));
    let t = b.let_("t", tid());
    let i = b.let_("i", gid());
    let v = b.let_(
        "v",
        select(lt(i.clone(), len(&x)), idx(&x, i.clone()), f32c(0.0)),
    );
    b.store(&tile, t.clone(), v.clone());
    b.if_(eq(t.clone(), u32c(0)), |b| {
        b.store(&lowest, u32c(0), i32c(i32::MAX))
    });
    b.push(StmtKind::Barrier);
    let s = b.let_mut("s", idx(&tile, bin(BinOp::BitXor, t.clone(), u32c(1))));
    let se = b.v(s);
    b.for_("d", u32c(0), u32c(5), u32c(1), ForDir::Up, |b, d| {
        let sh = intr(
            Intrinsic::Shuffle(ShuffleKind::Xor),
            vec![se.clone(), bin(BinOp::Shl, u32c(1), d)],
            Type::F32,
        );
        b.set(s, add(se.clone(), sh));
    });
    let any = b.let_(
        "any",
        intr(
            Intrinsic::VoteAny,
            vec![lt(v.clone(), f32c(0.0))],
            Type::BOOL,
        ),
    );
    let all = b.let_(
        "all",
        intr(
            Intrinsic::VoteAll,
            vec![ge(v.clone(), f32c(0.0))],
            Type::BOOL,
        ),
    );
    let mask = b.let_(
        "mask",
        intr(
            Intrinsic::Ballot,
            vec![bin(BinOp::Gt, v.clone(), f32c(1.0))],
            Type::U32,
        ),
    );
    b.expr(atomic(
        AtomicOp::Min,
        vec![lowest.clone(), u32c(0), cast(v.clone(), ScalarType::I32)],
    ));
    let lane = intr(Intrinsic::LaneId, vec![], Type::U32);
    b.if_(eq(lane, u32c(0)), |b| {
        let blk = intr(Intrinsic::BlockIdx(Axis::X), vec![], Type::U32);
        b.expr(atomic(
            AtomicOp::Add,
            vec![sums.clone(), blk.clone(), se.clone()],
        ));
        b.expr(atomic(
            AtomicOp::Add,
            vec![
                counts.clone(),
                u32c(0),
                intr(Intrinsic::WarpSize, vec![], Type::U32),
            ],
        ));
        b.expr(atomic(
            AtomicOp::Or,
            vec![counts.clone(), u32c(1), mask.clone()],
        ));
        let old = b.let_(
            "old",
            atomic(
                AtomicOp::CompareExchange,
                vec![flags.clone(), blk.clone(), i64c(0), i64c(1)],
            ),
        );
        b.expr(atomic(AtomicOp::Sub, vec![flags.clone(), u32c(0), old]));
        b.expr(atomic(
            AtomicOp::Exchange,
            vec![
                counts.clone(),
                u32c(2),
                add(
                    cast(any, ScalarType::U32),
                    mul(cast(all, ScalarType::U32), u32c(2)),
                ),
            ],
        ));
    });
    b.push(StmtKind::Barrier);
    b.if_(eq(t, u32c(0)), |b| {
        let blk = intr(Intrinsic::BlockIdx(Axis::X), vec![], Type::U32);
        b.expr(atomic(
            AtomicOp::Max,
            vec![
                flags.clone(),
                add(blk, u32c(1)),
                cast(idx(&lowest, u32c(0)), ScalarType::I64),
            ],
        ));
    });
    b.kernel("shared_atomics_warp")
}

/// Casts across every pair of scalar types the corpus cares about.
pub fn casts() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F64);
    let ints = b.buf_mut("ints", Type::I64);
    let uints = b.buf_mut("uints", Type::U64);
    let f32s = b.buf_mut("f32s", Type::F32);
    let halves = b.buf_mut("halves", Type::F16);
    let i = b.let_("i", gid());
    b.if_(ge(i.clone(), len(&x)), |b| b.ret(None));
    let v = b.let_("v", idx(&x, i.clone()));
    let a = b.let_("a", cast(v.clone(), ScalarType::I32));
    let bu = b.let_("b", cast(v.clone(), ScalarType::U32));
    let c = b.let_("c", cast(v.clone(), ScalarType::I64));
    let d = b.let_("d", cast(v.clone(), ScalarType::U64));
    let e = b.let_("e", cast(v.clone(), ScalarType::F32));
    let f = b.let_("f", cast(a.clone(), ScalarType::U32));
    let g = b.let_("g", cast(bu.clone(), ScalarType::I32));
    let h = b.let_("h", cast(c.clone(), ScalarType::I32));
    let k = b.let_("k", cast(d.clone(), ScalarType::U32));
    let neg = b.let_("neg", lt(v.clone(), f64c(0.0)));
    let i3 = mul(i.clone(), u32c(3));
    b.store(
        &ints,
        i3.clone(),
        add(
            cast(a.clone(), ScalarType::I64),
            cast(g.clone(), ScalarType::I64),
        ),
    );
    b.store(
        &ints,
        add(i3.clone(), u32c(1)),
        add(c.clone(), cast(h, ScalarType::I64)),
    );
    b.store(
        &ints,
        add(i3, u32c(2)),
        cast(
            add(
                add(cast(a, ScalarType::F64), cast(bu.clone(), ScalarType::F64)),
                cast(cast(k, ScalarType::F32), ScalarType::F64),
            ),
            ScalarType::I64,
        ),
    );
    b.store(
        &uints,
        mul(i.clone(), u32c(2)),
        add(d, cast(f.clone(), ScalarType::U64)),
    );
    b.store(
        &uints,
        add(mul(i.clone(), u32c(2)), u32c(1)),
        bin(
            BinOp::BitXor,
            cast(c, ScalarType::U64),
            add(cast(bu, ScalarType::U64), cast(neg, ScalarType::U64)),
        ),
    );
    b.store(
        &f32s,
        i.clone(),
        add(
            add(
                cast(cast(e.clone(), ScalarType::F64), ScalarType::F32),
                cast(f, ScalarType::F32),
            ),
            cast(g, ScalarType::F32),
        ),
    );
    b.store(&halves, i.clone(), cast(e, ScalarType::F16));
    b.kernel("casts")
}

/// The record of the SoA kernels: three `f32` leaves.
pub fn particle() -> RecordDef {
    record(
        "Particle",
        &[("x", Type::F32), ("v", Type::F32), ("mass", Type::F32)],
    )
}

/// `p[i].x += p[i].v * dt / p[i].mass` over a record buffer (AoS or SoA by option), and a
/// whole-record copy into `out`.
pub fn particles() -> Kernel {
    let pt = Type::Record("Particle".into());
    let mut b = B::new();
    let p = b.buf_mut("p", pt.clone());
    let out = b.buf_mut("out", pt.clone());
    let dt = b.param("dt", Type::F32);
    let i = b.let_("i", gid());
    b.if_(lt(i.clone(), len(&p)), |b| {
        let pi = idx(&p, i.clone());
        let nx = add(
            field(pi.clone(), "x", Type::F32),
            div(
                mul(field(pi.clone(), "v", Type::F32), dt),
                field(pi.clone(), "mass", Type::F32),
            ),
        );
        let ExprKind::Var(pv) = p.kind else {
            unreachable!()
        };
        b.assign(
            LValue::Field {
                base: Box::new(LValue::Index {
                    base: Box::new(LValue::Var(pv)),
                    index: i.clone(),
                }),
                field: "x".into(),
            },
            nx,
        );
        let whole = b.let_("whole", pi);
        b.store(&out, i, whole);
    });
    let mut k = b.kernel("particles");
    k.records = vec![particle()];
    k
}

/// Every math function on `f32` and a few on `f64` (the routines' assembly).
pub fn math_all() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", Type::F32);
    let xd = b.buf("xd", Type::F64);
    let out = b.buf_mut("out", Type::F32);
    let outd = b.buf_mut("outd", Type::F64);
    let i = b.let_("i", gid());
    b.if_(ge(i.clone(), len(&x)), |b| b.ret(None));
    let v = b.let_("v", idx(&x, i.clone()));
    let w = b.let_("w", idx(&xd, i.clone()));
    let acc = b.let_mut("acc", f32c(0.0));
    let acce = b.v(acc);
    use MathFn::*;
    for m in MathFn::ALL {
        let args = match m.arity() {
            1 => vec![v.clone()],
            2 if m == Powi => vec![v.clone(), i32c(3)],
            2 => vec![v.clone(), f32c(1.5)],
            _ => vec![v.clone(), f32c(0.5), f32c(-1.0)],
        };
        b.set(acc, add(acce.clone(), math(m, args)));
    }
    b.store(&out, i.clone(), acce);
    let accd = b.let_mut("accd", f64c(0.0));
    let accde = b.v(accd);
    for m in [Exp, Ln, Sin, Atan2, Powf, Rsqrt, Round, Powi, Tanh, Hypot] {
        let args = match m.arity() {
            1 => vec![w.clone()],
            _ if m == Powi => vec![w.clone(), i32c(-2)],
            _ => vec![w.clone(), f64c(0.25)],
        };
        b.set(accd, add(accde.clone(), math(m, args)));
    }
    b.set(accd, add(accde.clone(), rem(w.clone(), f64c(0.75))));
    b.store(
        &outd,
        i,
        add(accde, cast(rem(v, f32c(0.3)), ScalarType::F64)),
    );
    b.kernel("math_all")
}

/// Records and variants in registers, `match` on integers and on a variant, a local array,
/// `if` as an expression on records, a dynamic shared array.
pub fn records_match() -> Kernel {
    let pt = Type::Record("Pair".into());
    let sh = Type::Variant("Shape".into());
    let mut b = B::new();
    let x = b.buf("x", Type::I32);
    let out = b.buf_mut("out", Type::F32);
    let scratch = b.shared("scratch", Type::F32, None);
    let i = b.let_("i", gid());
    b.if_(ge(i.clone(), len(&x)), |b| b.ret(None));
    let xi = b.let_("xi", idx(&x, i.clone()));
    let pair = Expr {
        kind: ExprKind::RecordLit {
            record: "Pair".into(),
            fields: vec![cast(xi.clone(), ScalarType::F32), f32c(2.0)],
        },
        ty: pt.clone(),
    };
    let pv = b.let_mut("p", pair);
    let pe = b.v(pv);
    // p = Pair { a: p.b, b: p.a }  (a swap through registers)
    b.set(
        pv,
        Expr {
            kind: ExprKind::RecordLit {
                record: "Pair".into(),
                fields: vec![
                    field(pe.clone(), "b", Type::F32),
                    field(pe.clone(), "a", Type::F32),
                ],
            },
            ty: pt.clone(),
        },
    );
    let circle = |r: Expr| Expr {
        kind: ExprKind::VariantLit {
            variant: "Shape".into(),
            case: "Circle".into(),
            payload: vec![r],
        },
        ty: sh.clone(),
    };
    let rect = |w: Expr, h: Expr| Expr {
        kind: ExprKind::VariantLit {
            variant: "Shape".into(),
            case: "Rect".into(),
            payload: vec![w, h],
        },
        ty: sh.clone(),
    };
    let shape = b.let_(
        "shape",
        select(
            lt(xi.clone(), i32c(0)),
            circle(field(pe.clone(), "a", Type::F32)),
            rect(
                field(pe.clone(), "a", Type::F32),
                field(pe.clone(), "b", Type::F32),
            ),
        ),
    );
    // local array
    let arr = b.let_mut("arr", ir::repeat(f32c(1.0), 4));
    let arre = b.v(arr);
    let k = b.let_(
        "k",
        cast(bin(BinOp::BitAnd, xi.clone(), i32c(3)), ScalarType::U32),
    );
    b.assign(
        LValue::Index {
            base: Box::new(LValue::Var(arr)),
            index: k.clone(),
        },
        f32c(5.0),
    );
    // match on the variant, as an expression
    let r_var = b.var("r", Type::F32, false, VarKind::Local);
    let w_var = b.var("w", Type::F32, false, VarKind::Local);
    let h_var = b.var("h", Type::F32, false, VarKind::Local);
    let area = Expr {
        kind: ExprKind::Match {
            scrutinee: Box::new(shape),
            arms: vec![
                (
                    Pattern::Case {
                        variant: "Shape".into(),
                        case: "Circle".into(),
                        bindings: vec![r_var],
                    },
                    mul(mul(b.v(r_var), b.v(r_var)), f32c(3.25)),
                ),
                (
                    Pattern::Case {
                        variant: "Shape".into(),
                        case: "Rect".into(),
                        bindings: vec![w_var, h_var],
                    },
                    mul(b.v(w_var), b.v(h_var)),
                ),
            ],
        },
        ty: Type::F32,
    };
    let area = b.let_("area", area);
    let tot = b.let_mut("tot", area);
    let tote = b.v(tot);
    // match on an integer, as a statement
    let arms = vec![
        (
            Pattern::Int(Const::I32(0)),
            vec![Stmt::new(StmtKind::Assign {
                target: LValue::Var(tot),
                value: add(tote.clone(), f32c(1.0)),
            })],
        ),
        (
            Pattern::Or(vec![
                Pattern::Int(Const::I32(1)),
                Pattern::Range(Const::I32(5), Const::I32(9)),
            ]),
            vec![Stmt::new(StmtKind::Assign {
                target: LValue::Var(tot),
                value: add(tote.clone(), idx(&arre, k.clone())),
            })],
        ),
        (Pattern::Wildcard, vec![]),
    ];
    b.push(StmtKind::Match {
        scrutinee: xi,
        arms,
    });
    b.store(&scratch, tid(), tote.clone());
    b.store(&out, i, add(tote, idx(&scratch, tid())));
    let mut k = b.kernel("records_match");
    k.records = vec![record("Pair", &[("a", Type::F32), ("b", Type::F32)])];
    k.variants = vec![variant_def(
        "Shape",
        vec![
            ("Circle", vec![Type::F32]),
            ("Rect", vec![Type::F32, Type::F32]),
        ],
    )];
    k
}

fn shuffle(kind: ShuffleKind, v: Expr, lane: Expr) -> Expr {
    let ty = v.ty.clone();
    intr(Intrinsic::Shuffle(kind), vec![v, lane], ty)
}

/// Warp shuffles of 64-bit and 32-bit values in every mode (all lanes active).
pub fn warp_shuffles() -> Kernel {
    let mut b = B::new();
    let a = b.buf("a", Type::F64);
    let bb = b.buf("b", Type::I64);
    let c = b.buf("c", Type::U32);
    let of = b.buf_mut("out_f", Type::F64);
    let oi = b.buf_mut("out_i", Type::I64);
    let ou = b.buf_mut("out_u", Type::U32);
    let delta = b.param("delta", Type::U32);
    let i = b.let_("i", gid());
    let lane = b.let_("lane", intr(Intrinsic::LaneId, vec![], Type::U32));
    let src = rem(add(lane, u32c(3)), u32c(32));
    b.store(
        &of,
        i.clone(),
        shuffle(ShuffleKind::Index, idx(&a, i.clone()), src),
    );
    b.store(
        &oi,
        i.clone(),
        shuffle(ShuffleKind::Up, idx(&bb, i.clone()), delta.clone()),
    );
    let i2 = mul(i.clone(), u32c(2));
    b.store(
        &ou,
        i2.clone(),
        shuffle(ShuffleKind::Down, idx(&c, i.clone()), delta),
    );
    b.store(
        &ou,
        add(i2, u32c(1)),
        add(
            shuffle(ShuffleKind::Xor, idx(&c, i.clone()), u32c(5)),
            shuffle(ShuffleKind::Index, idx(&c, i.clone()), u32c(40)),
        ),
    );
    b.kernel("warp_shuffles")
}

/// Buffers of `f16`, `bool`, vectors and nested records (AoS offsets).
pub fn memory_types() -> Kernel {
    let outer = Type::Record("Outer".into());
    let v4 = Type::Vector {
        elem: ScalarType::F32,
        lanes: 4,
    };
    let mut b = B::new();
    let h = b.buf("h", Type::F16);
    let flags = b.buf("flags", Type::BOOL);
    let vi = b.buf("vi", v4.clone());
    let p = b.buf("p", outer.clone());
    let out = b.buf_mut("out", Type::F32);
    let nflags = b.buf_mut("nflags", Type::BOOL);
    let vo = b.buf_mut("vo", v4);
    let po = b.buf_mut("po", outer.clone());
    let hs = b.buf_mut("hs", Type::F16);
    let i = b.let_("i", gid());
    b.if_(ge(i.clone(), len(&out)), |b| b.ret(None));
    let fi = b.let_("f", idx(&flags, i.clone()));
    b.store(
        &out,
        i.clone(),
        add(
            cast(idx(&h, i.clone()), ScalarType::F32),
            cast(cast(fi.clone(), ScalarType::U32), ScalarType::F32),
        ),
    );
    b.store(&nflags, i.clone(), un(UnOp::Not, fi));
    b.store(&vo, i.clone(), idx(&vi, i.clone()));
    let pi = idx(&p, i.clone());
    let inner = field(pi.clone(), "inner", Type::Record("Particle".into()));
    let rec = Expr {
        kind: ExprKind::RecordLit {
            record: "Outer".into(),
            fields: vec![
                inner.clone(),
                mul(field(pi, "w", Type::F32), field(inner, "mass", Type::F32)),
            ],
        },
        ty: outer,
    };
    b.store(&po, i.clone(), rec);
    b.store(
        &hs,
        i.clone(),
        cast(
            mul(cast(idx(&h, i.clone()), ScalarType::F32), f32c(3.0)),
            ScalarType::F16,
        ),
    );
    let mut k = b.kernel("memory_types");
    k.records = vec![
        particle(),
        record(
            "Outer",
            &[("inner", Type::Record("Particle".into())), ("w", Type::F32)],
        ),
    ];
    k
}

/// Every corpus kernel with the SoA parameter list it is generated with, under a snapshot
/// name.
pub fn all() -> Vec<(&'static str, Kernel, Vec<&'static str>)> {
    vec![
        ("saxpy", saxpy(), vec![]),
        ("int_ops", int_ops(), vec![]),
        ("loops", loops(), vec![]),
        ("helpers", helpers(), vec![]),
        ("shared_atomics_warp", shared_atomics_warp(), vec![]),
        ("casts", casts(), vec![]),
        ("particles_aos", particles(), vec![]),
        ("particles_soa", particles(), vec!["p"]),
        ("math_all", math_all(), vec![]),
        ("records_match", records_match(), vec![]),
        ("warp_shuffles", warp_shuffles(), vec![]),
        ("memory_types", memory_types(), vec![]),
    ]
}

/// Where the ignored `dump_for_device` tests write PTX for the scripts in `tests/ptx_device`
/// that run it on a GPU: `$SPOC_PTX_DUMP`, by default `tests/ptx_device/out`; created.
pub fn device_dump_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("SPOC_PTX_DUMP").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx_device/out"),
        std::path::PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// PTX for `k` with default CUDA capabilities and `soa` parameters (panics on error).
pub fn ptx(k: &Kernel, soa: &[&str]) -> String {
    ptx_with(k, soa, false)
}

/// [`ptx`] in checked mode (`spoc_codegen::checked`) when `checked`.
pub fn ptx_with(k: &Kernel, soa: &[&str], checked: bool) -> String {
    let target = spoc_codegen::Target::CudaPtx;
    let src = spoc_codegen::generate_source_with(
        target,
        k,
        &spoc_codegen::Options {
            block: None,
            soa_params: soa,
            caps: spoc_codegen::Capabilities::for_target(target),
            checked,
        },
    )
    .unwrap_or_else(|e| panic!("PTX generation of `{}` failed: {e}", k.name))
    .expect("CUDA/PTX generates source");
    src.text().expect("PTX is text").to_string()
}
