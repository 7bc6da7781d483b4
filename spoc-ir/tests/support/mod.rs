//! Builders for hand-made IR kernels, shared by the spoc-ir integration tests: the spoc-ir
//! view (variables as [`VarId`]s, blocks as [`Block`]s) of [`spoc_testkit::ir`].
#![allow(dead_code)]

use spoc_ir::*;
use spoc_testkit::ir;

#[allow(unused_imports)] // each test binary uses some of them
pub use spoc_testkit::ir::{
    array_ty, assign, at_line, bin, boolc, call, cast, f32c, f64c, field, i32c, i64c, index, intr,
    math, record, retype, s as stmt, select, u32c, un, variant_def,
};

/// Builds the parameter list, variable table and body of a kernel or helper function, naming
/// variables by [`VarId`].
#[derive(Default)]
pub struct Builder(pub ir::B);

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// A parameter; `mutable` is `&mut [T]` for buffers.
    pub fn param(&mut self, name: &str, ty: Type, mutable: bool) -> VarId {
        ir::id(&self.0.param(name, ty, mutable))
    }

    /// A `&[elem]` parameter.
    pub fn buf(&mut self, name: &str, elem: Type) -> VarId {
        ir::id(&self.0.buf(name, elem))
    }

    /// A `&mut [elem]` parameter.
    pub fn buf_mut(&mut self, name: &str, elem: Type) -> VarId {
        ir::id(&self.0.buf_mut(name, elem))
    }

    /// A local variable (declared in the table only; a `let` must declare it in the body).
    pub fn local(&mut self, name: &str, ty: Type, mutable: bool) -> VarId {
        ir::id(&self.0.local(name, ty, mutable))
    }

    /// A shared array with its declaration.
    pub fn shared(&mut self, name: &str, elem: Type, len: Option<u32>) -> VarId {
        ir::id(&self.0.shared(name, elem, len))
    }

    /// A variable reference with its declared type.
    pub fn v(&self, id: VarId) -> Expr {
        self.0.v(id)
    }

    /// `a[i]` on a variable, typed with the element type.
    pub fn at(&self, a: VarId, i: Expr) -> Expr {
        index(self.v(a), i)
    }

    pub fn push(&mut self, s: Stmt) {
        self.0.body.push(s);
    }

    /// `let v = init;` (declares v in the body).
    pub fn let_(&mut self, v: VarId, init: Expr) {
        let v = self.v(v);
        self.0.let_(&v, init);
    }

    pub fn kernel(self, name: &str) -> Kernel {
        self.0.kernel(name)
    }

    pub fn function(self, name: &str, ret: Type) -> Function {
        self.0.function(name, ret)
    }
}

/// The variable table, parameters, shared arrays and body, as [`ir::B`] holds them.
impl std::ops::Deref for Builder {
    type Target = ir::B;
    fn deref(&self) -> &ir::B {
        &self.0
    }
}

impl std::ops::DerefMut for Builder {
    fn deref_mut(&mut self) -> &mut ir::B {
        &mut self.0
    }
}

pub fn gid_x() -> Expr {
    ir::gid()
}

/// `e.len()`.
pub fn len(e: Expr) -> Expr {
    ir::len(&e)
}

pub fn lv(v: VarId) -> LValue {
    LValue::Var(v)
}

pub fn lidx(base: LValue, i: Expr) -> LValue {
    LValue::Index {
        base: Box::new(base),
        index: i,
    }
}

pub fn if_(cond: Expr, then: Block, els: Option<Block>) -> StmtKind {
    StmtKind::If { cond, then, els }
}

pub fn for_up(var: VarId, start: Expr, end: Expr, body: Block) -> StmtKind {
    StmtKind::For(ForLoop {
        var,
        start,
        end,
        step: u32c(1),
        dir: ForDir::Up,
        body,
    })
}

/// The saxpy kernel of DESIGN.md §2 ([`spoc_testkit::ir::saxpy`]), with source lines 2–4.
pub fn saxpy() -> Kernel {
    let mut k = ir::saxpy();
    let at = |s: &mut Stmt, line| s.loc = Some(SrcLoc { line, column: 5 });
    at(&mut k.body[0], 2);
    at(&mut k.body[1], 3);
    let StmtKind::If { then, .. } = &mut k.body[1].kind else {
        unreachable!("saxpy's second statement is its `if`")
    };
    at(&mut then[0], 4);
    k
}

/// Asserts that `k` is valid (printing it and the error otherwise).
#[track_caller]
pub fn assert_valid(k: &Kernel) {
    if let Err(e) = validate(k) {
        panic!("expected a valid kernel, got: {e}\n{k}");
    }
}

/// Asserts that `k` is invalid with a message containing every one of `words`; returns the
/// message.
#[track_caller]
pub fn assert_invalid(k: &Kernel, words: &[&str]) -> String {
    match validate(k) {
        Ok(()) => panic!("expected an invalid kernel, but it validated:\n{k}"),
        Err(IrError::Invalid {
            kernel, message, ..
        }) => {
            if std::env::var_os("SPOC_IR_SHOW_ERRORS").is_some() {
                eprintln!("ERR {message}");
            }
            assert_eq!(kernel, k.name);
            for w in words {
                assert!(
                    message.contains(w),
                    "message {message:?} does not contain {w:?}\n{k}"
                );
            }
            message
        }
        Err(e) => panic!("expected IrError::Invalid, got {e:?}"),
    }
}

/// A block reduction: shared memory, a barrier, a downward `for`, an atomic.
pub fn block_sum() -> Kernel {
    let mut b = Builder::new();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let tile = b.shared("tile", Type::F32, Some(256));
    let t = b.local("t", Type::U32, false);
    let s = b.local("s", Type::U32, false);
    let acc = b.local("acc", Type::F32, true);
    b.let_(t, intr(Intrinsic::ThreadIdx(Axis::X), vec![], Type::U32));
    b.let_(acc, f32c(0.0));
    b.push(stmt(if_(
        bin(BinOp::Lt, gid_x(), len(b.v(x))),
        vec![stmt(assign(lv(acc), b.at(x, gid_x())))],
        None,
    )));
    b.push(stmt(assign(lidx(lv(tile), b.v(t)), b.v(acc))));
    b.push(stmt(StmtKind::Barrier));
    b.push(stmt(StmtKind::For(ForLoop {
        var: s,
        start: u32c(0),
        end: u32c(8),
        step: u32c(1),
        dir: ForDir::Down,
        body: vec![
            stmt(if_(
                bin(BinOp::Lt, b.v(t), bin(BinOp::Shl, u32c(1), b.v(s))),
                vec![stmt(assign(
                    lidx(lv(tile), b.v(t)),
                    bin(
                        BinOp::Add,
                        b.at(tile, b.v(t)),
                        b.at(
                            tile,
                            bin(BinOp::Add, b.v(t), bin(BinOp::Shl, u32c(1), b.v(s))),
                        ),
                    ),
                ))],
                None,
            )),
            stmt(StmtKind::Barrier),
        ],
    })));
    b.push(stmt(if_(
        bin(BinOp::Eq, b.v(t), u32c(0)),
        vec![stmt(StmtKind::Expr(intr(
            Intrinsic::Atomic(AtomicOp::Add),
            vec![b.v(out), u32c(0), b.at(tile, u32c(0))],
            Type::F32,
        )))],
        None,
    )));
    b.kernel("block_sum")
}

/// A kernel with a record, a variant, a helper, a `match` statement and a `match` expression.
pub fn shapes_kernel() -> Kernel {
    let point = Type::Record("Point".into());
    let shape = Type::Variant("Shape".into());
    // fn area(s: Shape) -> f32 { match s { Circle(r) => return r * r * 3.14, Rect(p) => return p.x * p.y, Empty => return 0.0 } }
    let mut h = Builder::new();
    let s = h.param("s", shape.clone(), false);
    let r = h.local("r", Type::F32, false);
    let p = h.local("p", point.clone(), false);
    h.push(stmt(StmtKind::Match {
        scrutinee: h.v(s),
        arms: vec![
            (
                ir::case("Shape", "Circle", vec![r]),
                vec![stmt(StmtKind::Return(Some(bin(
                    BinOp::Mul,
                    bin(BinOp::Mul, h.v(r), h.v(r)),
                    f32c(3.5),
                ))))],
            ),
            (
                ir::case("Shape", "Rect", vec![p]),
                vec![stmt(StmtKind::Return(Some(bin(
                    BinOp::Mul,
                    field(h.v(p), "x", Type::F32),
                    field(h.v(p), "y", Type::F32),
                ))))],
            ),
            (
                ir::case("Shape", "Empty", vec![]),
                vec![stmt(StmtKind::Return(Some(f32c(0.0))))],
            ),
        ],
    }));
    let area = h.function("area", Type::F32);

    let mut b = Builder::new();
    let pts = b.buf("pts", point.clone());
    let kinds = b.buf("kinds", Type::I32);
    let out = b.buf_mut("out", Type::F32);
    let i = b.local("i", Type::U32, false);
    let pt = b.local("pt", point.clone(), false);
    let sh = b.local("sh", shape.clone(), false);
    b.let_(i, gid_x());
    b.let_(pt, b.at(pts, b.v(i)));
    let mk = |case: &str, payload: Vec<Expr>| Expr {
        kind: ExprKind::VariantLit {
            variant: "Shape".into(),
            case: case.into(),
            payload,
        },
        ty: shape.clone(),
    };
    let scrut = b.at(kinds, b.v(i));
    let sel = Expr {
        kind: ExprKind::Match {
            scrutinee: Box::new(scrut),
            arms: vec![
                (
                    Pattern::Int(Const::I32(0)),
                    mk("Circle", vec![field(b.v(pt), "x", Type::F32)]),
                ),
                (
                    Pattern::Or(vec![
                        Pattern::Int(Const::I32(1)),
                        Pattern::Int(Const::I32(2)),
                    ]),
                    mk("Rect", vec![b.v(pt)]),
                ),
                (Pattern::Wildcard, mk("Empty", vec![])),
            ],
        },
        ty: shape.clone(),
    };
    b.let_(sh, sel);
    b.push(stmt(assign(
        lidx(lv(out), b.v(i)),
        call("area", vec![b.v(sh)], Type::F32),
    )));
    let mut k = b.kernel("areas");
    k.records = vec![record("Point", &[("x", Type::F32), ("y", Type::F32)])];
    k.variants = vec![variant_def(
        "Shape",
        vec![
            ("Circle", vec![Type::F32]),
            ("Rect", vec![point]),
            ("Empty", vec![]),
        ],
    )];
    k.functions = vec![area];
    k
}
