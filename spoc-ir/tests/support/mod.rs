//! Builders for hand-made IR kernels, shared by the spoc-ir integration tests.
#![allow(dead_code)]

use spoc_ir::*;

/// Builds the parameter list, variable table and body of a kernel or helper function.
#[derive(Default)]
pub struct Builder {
    pub params: Vec<Param>,
    pub vars: Vec<VarDecl>,
    pub shared: Vec<SharedDecl>,
    pub body: Block,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    fn add_var(&mut self, name: &str, ty: Type, mutable: bool, kind: VarKind) -> VarId {
        self.vars.push(VarDecl {
            name: name.into(),
            ty,
            mutable,
            kind,
        });
        VarId(self.vars.len() as u32 - 1)
    }

    /// A parameter; `mutable` is `&mut [T]` for buffers.
    pub fn param(&mut self, name: &str, ty: Type, mutable: bool) -> VarId {
        let var = self.add_var(name, ty.clone(), false, VarKind::Param);
        self.params.push(Param {
            var,
            name: name.into(),
            ty,
            mutable,
        });
        var
    }

    /// A `&[elem]` parameter.
    pub fn buf(&mut self, name: &str, elem: Type) -> VarId {
        self.param(name, Type::global_array(elem), false)
    }

    /// A `&mut [elem]` parameter.
    pub fn buf_mut(&mut self, name: &str, elem: Type) -> VarId {
        self.param(name, Type::global_array(elem), true)
    }

    /// A local variable (declared in the table only; a `let` must declare it in the body).
    pub fn local(&mut self, name: &str, ty: Type, mutable: bool) -> VarId {
        self.add_var(name, ty, mutable, VarKind::Local)
    }

    /// A shared array with its declaration.
    pub fn shared(&mut self, name: &str, elem: Type, len: Option<u32>) -> VarId {
        let ty = Type::Array {
            elem: Box::new(elem.clone()),
            space: MemSpace::Shared,
            len,
        };
        let var = self.add_var(name, ty, false, VarKind::Shared);
        self.shared.push(SharedDecl { var, elem, len });
        var
    }

    /// A variable reference with its declared type.
    pub fn v(&self, id: VarId) -> Expr {
        Expr::var(id, self.vars[id.0 as usize].ty.clone())
    }

    /// `a[i]` on a variable, typed with the element type.
    pub fn at(&self, a: VarId, i: Expr) -> Expr {
        index(self.v(a), i)
    }

    pub fn push(&mut self, s: Stmt) {
        self.body.push(s);
    }

    /// `let v = init;` (declares v in the body).
    pub fn let_(&mut self, v: VarId, init: Expr) {
        self.push(stmt(StmtKind::Let {
            var: v,
            init: Some(init),
        }));
    }

    pub fn kernel(self, name: &str) -> Kernel {
        Kernel {
            name: name.into(),
            params: self.params,
            vars: self.vars,
            shared: self.shared,
            body: self.body,
            records: vec![],
            variants: vec![],
            functions: vec![],
        }
    }

    pub fn function(self, name: &str, ret: Type) -> Function {
        assert!(self.shared.is_empty(), "helpers have no shared arrays");
        Function {
            name: name.into(),
            params: self.params,
            ret,
            vars: self.vars,
            body: self.body,
        }
    }
}

pub fn stmt(kind: StmtKind) -> Stmt {
    Stmt::new(kind)
}

/// A statement at source line `line`.
pub fn at_line(line: u32, kind: StmtKind) -> Stmt {
    Stmt {
        kind,
        loc: Some(SrcLoc { line, column: 5 }),
    }
}

pub fn u32c(v: u32) -> Expr {
    Expr::constant(Const::U32(v))
}
pub fn i32c(v: i32) -> Expr {
    Expr::constant(Const::I32(v))
}
pub fn i64c(v: i64) -> Expr {
    Expr::constant(Const::I64(v))
}
pub fn f32c(v: f32) -> Expr {
    Expr::constant(Const::f32(v))
}
pub fn f64c(v: f64) -> Expr {
    Expr::constant(Const::f64(v))
}
pub fn boolc(v: bool) -> Expr {
    Expr::constant(Const::Bool(v))
}

/// The same expression with another (possibly wrong) type.
pub fn retype(mut e: Expr, ty: Type) -> Expr {
    e.ty = ty;
    e
}

/// `lhs op rhs`, typed as the validator expects (bool for comparisons and logical ops, the
/// left operand's type otherwise).
pub fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let ty = if op.is_comparison() || op.is_logical() {
        Type::BOOL
    } else {
        lhs.ty.clone()
    };
    Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        ty,
    }
}

pub fn un(op: UnOp, e: Expr) -> Expr {
    Expr {
        ty: e.ty.clone(),
        kind: ExprKind::Unary {
            op,
            operand: Box::new(e),
        },
    }
}

/// `array[i]`, typed with the element type (or `()` if `array` is not an array).
pub fn index(array: Expr, i: Expr) -> Expr {
    let ty = array
        .ty
        .as_array()
        .map(|(t, _, _)| t.clone())
        .unwrap_or(Type::Unit);
    Expr {
        kind: ExprKind::Index {
            array: Box::new(array),
            index: Box::new(i),
        },
        ty,
    }
}

pub fn intr(i: Intrinsic, args: Vec<Expr>, ty: Type) -> Expr {
    Expr {
        kind: ExprKind::Intrinsic { intrinsic: i, args },
        ty,
    }
}

/// A math function typed with its first argument's type.
pub fn math(m: MathFn, args: Vec<Expr>) -> Expr {
    let ty = args[0].ty.clone();
    intr(Intrinsic::Math(m), args, ty)
}

pub fn gid_x() -> Expr {
    intr(Intrinsic::GlobalId(Axis::X), vec![], Type::U32)
}

pub fn cast(e: Expr, to: ScalarType) -> Expr {
    Expr {
        kind: ExprKind::Cast {
            value: Box::new(e),
            to,
        },
        ty: Type::Scalar(to),
    }
}

pub fn call(func: &str, args: Vec<Expr>, ty: Type) -> Expr {
    Expr {
        kind: ExprKind::Call {
            func: func.into(),
            args,
        },
        ty,
    }
}

pub fn len(e: Expr) -> Expr {
    Expr {
        kind: ExprKind::Len(Box::new(e)),
        ty: Type::U32,
    }
}

pub fn field(base: Expr, name: &str, ty: Type) -> Expr {
    Expr {
        kind: ExprKind::Field {
            base: Box::new(base),
            field: name.into(),
        },
        ty,
    }
}

pub fn select(cond: Expr, then: Expr, els: Expr) -> Expr {
    Expr {
        ty: then.ty.clone(),
        kind: ExprKind::Select {
            cond: Box::new(cond),
            then: Box::new(then),
            els: Box::new(els),
        },
    }
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

pub fn assign(target: LValue, value: Expr) -> StmtKind {
    StmtKind::Assign { target, value }
}

pub fn if_(cond: Expr, then: Block, els: Option<Block>) -> StmtKind {
    StmtKind::If { cond, then, els }
}

pub fn for_up(var: VarId, start: Expr, end: Expr, body: Block) -> StmtKind {
    StmtKind::For {
        var,
        start,
        end,
        step: u32c(1),
        dir: ForDir::Up,
        body,
    }
}

/// A record definition.
pub fn record(name: &str, fields: &[(&str, Type)]) -> RecordDef {
    RecordDef {
        name: name.into(),
        fields: fields
            .iter()
            .map(|(n, t)| Field {
                name: (*n).into(),
                ty: t.clone(),
            })
            .collect(),
    }
}

/// The saxpy kernel of DESIGN.md §2, with source lines 2–4.
pub fn saxpy() -> Kernel {
    let mut b = Builder::new();
    let a = b.param("a", Type::F32, false);
    let x = b.buf("x", Type::F32);
    let y = b.buf_mut("y", Type::F32);
    let i = b.local("i", Type::U32, false);
    b.push(at_line(
        2,
        StmtKind::Let {
            var: i,
            init: Some(gid_x()),
        },
    ));
    let value = bin(
        BinOp::Add,
        bin(BinOp::Mul, b.v(a), b.at(x, b.v(i))),
        b.at(y, b.v(i)),
    );
    b.push(at_line(
        3,
        if_(
            bin(BinOp::Lt, b.v(i), len(b.v(y))),
            vec![at_line(4, assign(lidx(lv(y), b.v(i)), value))],
            None,
        ),
    ));
    b.kernel("saxpy")
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
    b.push(stmt(StmtKind::For {
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
    }));
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
                Pattern::Case {
                    variant: "Shape".into(),
                    case: "Circle".into(),
                    bindings: vec![r],
                },
                vec![stmt(StmtKind::Return(Some(bin(
                    BinOp::Mul,
                    bin(BinOp::Mul, h.v(r), h.v(r)),
                    f32c(3.5),
                ))))],
            ),
            (
                Pattern::Case {
                    variant: "Shape".into(),
                    case: "Rect".into(),
                    bindings: vec![p],
                },
                vec![stmt(StmtKind::Return(Some(bin(
                    BinOp::Mul,
                    field(h.v(p), "x", Type::F32),
                    field(h.v(p), "y", Type::F32),
                ))))],
            ),
            (
                Pattern::Case {
                    variant: "Shape".into(),
                    case: "Empty".into(),
                    bindings: vec![],
                },
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
    k.variants = vec![VariantDef {
        name: "Shape".into(),
        cases: vec![
            VariantCase {
                name: "Circle".into(),
                payload: vec![Type::F32],
            },
            VariantCase {
                name: "Rect".into(),
                payload: vec![point],
            },
            VariantCase {
                name: "Empty".into(),
                payload: vec![],
            },
        ],
    }];
    k.functions = vec![area];
    k
}
