//! The builder of hand-written IR kernels, for tests that need a kernel the `#[kernel]` macro
//! does not write (codegen corpora, validator cases, interpreter and runtime tests).
//!
//! [`B`] holds a kernel's (or helper's) variable table, parameters, shared arrays and body;
//! every variable it declares is returned as its [`Expr`], typed. The free functions build one
//! expression, l-value or statement each, typed the way the validator expects (comparisons and
//! logical operators give `bool`, other binary operators their left operand's type, an index
//! its array's element type). Statement builders return [`StmtKind`]; [`s`] and [`ss`] wrap
//! them in [`Stmt`]s without a source location.
//!
//! [`saxpy`] is the example: `y[i] = a * x[i] + y[i]`, built in six statements.
//!
//! ```
//! spoc_ir::validate(&spoc_testkit::ir::saxpy()).unwrap();
//! ```

use spoc_ir::*;

/// `saxpy(a: f32, x: &[f32], y: &mut [f32])`: `let i = global_id_x(); if i < y.len() { y[i] =
/// a * x[i] + y[i] }`, without source locations: the kernel most tests of the IR, the code
/// generators and the runtime start from.
pub fn saxpy() -> Kernel {
    let mut b = B::new();
    let a = b.param("a", Type::F32, false);
    let x = b.buf("x", Type::F32);
    let y = b.buf_mut("y", Type::F32);
    let i = b.local("i", Type::U32, false);
    b.let_(&i, gid());
    let value = add(mul(a, idx(&x, i.clone())), idx(&y, i.clone()));
    b.push(if_(
        lt(i.clone(), len(&y)),
        vec![assign(at(&y, i), value)],
        None,
    ));
    b.kernel("saxpy")
}

/// Builds the parameters, variables, shared arrays and body of a kernel or helper function.
#[derive(Default)]
pub struct B {
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// The variable table (parameters, locals, shared arrays).
    pub vars: Vec<VarDecl>,
    /// The shared-array declarations.
    pub shared: Vec<SharedDecl>,
    /// The body built so far by [`B::push`] and [`B::let_`].
    pub body: Block,
}

impl B {
    /// An empty kernel.
    pub fn new() -> B {
        B::default()
    }

    /// Declares a variable in the table and returns it.
    pub fn declare(&mut self, name: &str, ty: Type, mutable: bool, kind: VarKind) -> Expr {
        self.vars.push(VarDecl {
            name: name.into(),
            ty: ty.clone(),
            mutable,
            kind,
        });
        Expr::var(VarId(self.vars.len() as u32 - 1), ty)
    }

    /// A parameter (`mutable`: `&mut [T]` for buffers, `mut x` for scalars). A buffer's own
    /// variable is not `mut` (its elements are), as the front end declares it.
    pub fn param(&mut self, name: &str, ty: Type, mutable: bool) -> Expr {
        let buffer = matches!(ty, Type::Array { .. });
        let e = self.declare(name, ty.clone(), mutable && !buffer, VarKind::Param);
        self.params.push(Param {
            var: id(&e),
            name: name.into(),
            ty,
            mutable,
        });
        e
    }

    /// A `&[elem]` parameter.
    pub fn buf(&mut self, name: &str, elem: Type) -> Expr {
        self.param(name, Type::global_array(elem), false)
    }

    /// A `&mut [elem]` parameter.
    pub fn buf_mut(&mut self, name: &str, elem: Type) -> Expr {
        self.param(name, Type::global_array(elem), true)
    }

    /// A local, in the table only: declare it in the body with [`B::let_`], [`let_`] or a
    /// [`for_`].
    pub fn local(&mut self, name: &str, ty: Type, mutable: bool) -> Expr {
        self.declare(name, ty, mutable, VarKind::Local)
    }

    /// A shared array of `len` elements (`None`: sized at launch), with its declaration.
    pub fn shared(&mut self, name: &str, elem: Type, len: Option<u32>) -> Expr {
        let ty = Type::Array {
            elem: std::sync::Arc::new(elem.clone()),
            space: MemSpace::Shared,
            len,
        };
        let e = self.declare(name, ty, false, VarKind::Shared);
        self.shared.push(SharedDecl {
            var: id(&e),
            elem,
            len,
        });
        e
    }

    /// A reference to variable `v`, typed as declared.
    pub fn v(&self, v: VarId) -> Expr {
        Expr::var(v, self.vars[v.0 as usize].ty.clone())
    }

    /// Appends a statement (no source location) to the body.
    pub fn push(&mut self, k: StmtKind) {
        self.body.push(Stmt::new(k));
    }

    /// Appends `let v = init;` to the body.
    pub fn let_(&mut self, v: &Expr, init: Expr) {
        self.push(let_(v, init));
    }

    /// The kernel `name` with the body built so far.
    pub fn kernel(mut self, name: &str) -> Kernel {
        let body = std::mem::take(&mut self.body);
        self.kernel_with(name, body)
    }

    /// The kernel `name` with the given body (any built so far is dropped).
    pub fn kernel_with(self, name: &str, body: Block) -> Kernel {
        Kernel {
            name: name.into(),
            params: self.params,
            vars: self.vars,
            shared: self.shared,
            body,
            records: vec![],
            variants: vec![],
            functions: vec![],
        }
    }

    /// The helper function `name` returning `ret`, with the body built so far.
    pub fn function(mut self, name: &str, ret: Type) -> Function {
        let body = std::mem::take(&mut self.body);
        self.function_with(name, ret, body)
    }

    /// The helper function `name` returning `ret`, with the given body.
    ///
    /// # Panics
    /// If shared arrays were declared: helpers have none.
    pub fn function_with(self, name: &str, ret: Type, body: Block) -> Function {
        assert!(self.shared.is_empty(), "helpers have no shared arrays");
        Function {
            name: name.into(),
            params: self.params,
            ret,
            vars: self.vars,
            body,
        }
    }
}

/// The variable of a variable expression.
///
/// # Panics
/// If `e` is not a variable.
pub fn id(e: &Expr) -> VarId {
    match e.kind {
        ExprKind::Var(v) => v,
        _ => panic!("not a variable: {e:?}"),
    }
}

// ---------------------------------------------------------------- constants

/// One `pub fn name(v: T) -> Expr` per constant type, each `Expr::constant(make(v))`.
macro_rules! constants {
    ($($(#[$doc:meta])* $name:ident($t:ty) = $make:path;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(v: $t) -> Expr {
                Expr::constant($make(v))
            }
        )*
    };
}

constants! {
    /// A `u32` constant.
    u32c(u32) = Const::U32;
    /// A `u64` constant.
    u64c(u64) = Const::U64;
    /// An `i32` constant.
    i32c(i32) = Const::I32;
    /// An `i64` constant.
    i64c(i64) = Const::I64;
    /// An `f32` constant.
    f32c(f32) = Const::f32;
    /// An `f64` constant.
    f64c(f64) = Const::f64;
    /// A `bool` constant.
    boolc(bool) = Const::Bool;
}

// ---------------------------------------------------------------- expressions

/// `l op r`: `bool` for comparisons and logical operators, `l`'s type otherwise.
pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    let ty = if op.is_comparison() || op.is_logical() {
        Type::BOOL
    } else {
        l.ty.clone()
    };
    Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(l),
            rhs: Box::new(r),
        },
        ty,
    }
}

macro_rules! binops {
    ($($name:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("`l ", stringify!($op), " r` (see [`bin`]).")]
        pub fn $name(l: Expr, r: Expr) -> Expr {
            bin(BinOp::$op, l, r)
        }
    )*};
}
binops!(
    add => Add, sub => Sub, mul => Mul, div => Div, rem => Rem,
    lt => Lt, le => Le, gt => Gt, ge => Ge, eq => Eq, ne => Ne,
    and => LogicalAnd, or => LogicalOr,
);

/// `op e`, typed as `e`.
pub fn un(op: UnOp, e: Expr) -> Expr {
    Expr {
        ty: e.ty.clone(),
        kind: ExprKind::Unary {
            op,
            operand: Box::new(e),
        },
    }
}

/// `-e`.
pub fn neg(e: Expr) -> Expr {
    un(UnOp::Neg, e)
}

/// The type of an array of `len` elements `elem` in `space` (a local or shared array).
pub fn array_ty(elem: Type, space: MemSpace, len: u32) -> Type {
    Type::Array {
        elem: std::sync::Arc::new(elem),
        space,
        len: Some(len),
    }
}

/// `[value; len]`: a local array of `len` copies of `value`, typed `[T; len]` in local memory.
pub fn repeat(value: Expr, len: u32) -> Expr {
    Expr {
        ty: array_ty(value.ty.clone(), MemSpace::Local, len),
        kind: ExprKind::ArrayRepeat {
            value: Box::new(value),
            len,
        },
    }
}

/// `array[i]`, typed with the element type (`()` if `array` is not an array, for validator
/// tests).
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

/// `array[i]` for a borrowed array expression (see [`index`]).
pub fn idx(array: &Expr, i: Expr) -> Expr {
    index(array.clone(), i)
}

/// An intrinsic call of type `ty`.
pub fn intr(i: Intrinsic, args: Vec<Expr>, ty: Type) -> Expr {
    Expr {
        kind: ExprKind::Intrinsic { intrinsic: i, args },
        ty,
    }
}

/// A math function, typed as its first argument.
pub fn math(m: MathFn, args: Vec<Expr>) -> Expr {
    let ty = args[0].ty.clone();
    intr(Intrinsic::Math(m), args, ty)
}

/// An atomic on `args[0][args[1]]`, typed as the array's element.
///
/// # Panics
/// If `args[0]` is not an array.
pub fn atomic(op: AtomicOp, args: Vec<Expr>) -> Expr {
    let ty = args[0].ty.as_array().expect("an array").0.clone();
    intr(Intrinsic::Atomic(op), args, ty)
}

/// `global_id(axis)`, a `u32`.
pub fn global_id(axis: Axis) -> Expr {
    intr(Intrinsic::GlobalId(axis), vec![], Type::U32)
}

/// `global_id_x()`.
pub fn gid() -> Expr {
    global_id(Axis::X)
}

/// `thread_idx_x()`.
pub fn tid() -> Expr {
    intr(Intrinsic::ThreadIdx(Axis::X), vec![], Type::U32)
}

/// `e as to`.
pub fn cast(e: Expr, to: ScalarType) -> Expr {
    Expr {
        kind: ExprKind::Cast {
            value: Box::new(e),
            to,
        },
        ty: Type::Scalar(to),
    }
}

/// A call of helper `f`, of type `ty`.
pub fn call(f: &str, args: Vec<Expr>, ty: Type) -> Expr {
    Expr {
        kind: ExprKind::Call {
            func: f.into(),
            args,
        },
        ty,
    }
}

/// `e.len()`, a `u32`.
pub fn len(e: &Expr) -> Expr {
    Expr {
        kind: ExprKind::Len(Box::new(e.clone())),
        ty: Type::U32,
    }
}

/// `base.name`, of type `ty`.
pub fn field(base: Expr, name: &str, ty: Type) -> Expr {
    Expr {
        kind: ExprKind::Field {
            base: Box::new(base),
            field: name.into(),
        },
        ty,
    }
}

/// `if c { t } else { e }` as a value, typed as `t`.
pub fn select(c: Expr, t: Expr, e: Expr) -> Expr {
    Expr {
        ty: t.ty.clone(),
        kind: ExprKind::Select {
            cond: Box::new(c),
            then: Box::new(t),
            els: Box::new(e),
        },
    }
}

/// The same expression with another (possibly wrong) type.
pub fn retype(mut e: Expr, ty: Type) -> Expr {
    e.ty = ty;
    e
}

// ---------------------------------------------------------------- l-values and statements

/// The pattern `variant::case(bindings…)` of a `match` arm.
pub fn case(variant: &str, case: &str, bindings: Vec<VarId>) -> Pattern {
    Pattern::Case {
        variant: variant.into(),
        case: case.into(),
        bindings,
    }
}

/// A statement of `k`, without a source location.
pub fn s(k: StmtKind) -> Stmt {
    Stmt::new(k)
}

/// A block of the statements `ks`.
pub fn ss(ks: Vec<StmtKind>) -> Block {
    ks.into_iter().map(Stmt::new).collect()
}

/// A statement at source line `line` (column 5).
pub fn at_line(line: u32, kind: StmtKind) -> Stmt {
    Stmt {
        kind,
        loc: Some(SrcLoc { line, column: 5 }),
    }
}

/// The variable `e` as an assignment target.
pub fn place(e: &Expr) -> LValue {
    LValue::Var(id(e))
}

/// `base[i]` as an assignment target, for an array variable `base`.
pub fn at(base: &Expr, i: Expr) -> LValue {
    LValue::Index {
        base: Box::new(place(base)),
        index: i,
    }
}

/// `target = value;`
pub fn assign(target: LValue, value: Expr) -> StmtKind {
    StmtKind::Assign { target, value }
}

/// `let v = init;`
pub fn let_(v: &Expr, init: Expr) -> StmtKind {
    StmtKind::Let {
        var: id(v),
        init: Some(init),
    }
}

/// `if c { then } else { els }`.
pub fn if_(c: Expr, then: Vec<StmtKind>, els: Option<Vec<StmtKind>>) -> StmtKind {
    StmtKind::If {
        cond: c,
        then: ss(then),
        els: els.map(ss),
    }
}

/// `for v in (start..end)[.rev()].step_by(step) { body }`.
pub fn for_(
    v: &Expr,
    start: Expr,
    end: Expr,
    step: Expr,
    dir: ForDir,
    body: Vec<StmtKind>,
) -> StmtKind {
    StmtKind::For(ForLoop {
        var: id(v),
        start,
        end,
        step,
        dir,
        body: ss(body),
    })
}

/// A `#[repr(C)]` record of the given fields.
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

/// A variant (`enum`) of the given cases, each a name and its payload types.
pub fn variant_def(name: &str, cases: Vec<(&str, Vec<Type>)>) -> VariantDef {
    VariantDef {
        name: name.into(),
        cases: cases
            .into_iter()
            .map(|(n, payload)| VariantCase {
                name: n.into(),
                payload,
            })
            .collect(),
    }
}
