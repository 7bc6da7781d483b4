//! Constants, operators and expressions.

use crate::intrinsic::Intrinsic;
use crate::types::{ScalarType, Type};
use serde::{Deserialize, Serialize};

/// Index of a variable in the owning function's variable table ([`crate::Kernel::vars`] or
/// [`crate::Function::vars`]). Parameters, locals and shared arrays are all variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct VarId(pub u32);

/// A constant scalar. Floats are stored as their IEEE-754 bits so that constants compare, hash
/// and serialize exactly (NaN payloads and `-0.0` included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Const {
    Bool(bool),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    /// IEEE-754 binary16 bits.
    F16(u16),
    /// IEEE-754 binary32 bits; see [`Const::f32`].
    F32(u32),
    /// IEEE-754 binary64 bits; see [`Const::f64`].
    F64(u64),
}

impl Const {
    pub fn f32(v: f32) -> Const {
        Const::F32(v.to_bits())
    }
    pub fn f64(v: f64) -> Const {
        Const::F64(v.to_bits())
    }
    /// The scalar type of the constant.
    pub fn ty(self) -> ScalarType {
        match self {
            Const::Bool(_) => ScalarType::Bool,
            Const::I32(_) => ScalarType::I32,
            Const::I64(_) => ScalarType::I64,
            Const::U32(_) => ScalarType::U32,
            Const::U64(_) => ScalarType::U64,
            Const::F16(_) => ScalarType::F16,
            Const::F32(_) => ScalarType::F32,
            Const::F64(_) => ScalarType::F64,
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnOp {
    /// Arithmetic negation (wrapping for integers).
    Neg,
    /// Logical not on `bool`, bitwise not on integers (Rust's `!`).
    Not,
}

/// Binary operators. Both operands have the same type, except for shifts, whose right operand may
/// be any integer type. Semantics (the same on every backend):
/// - integer `+ - *` wrap; `/` and `%` by zero are errors (the Interpreter reports them; GPU
///   backends do not check), `MIN / -1` wraps to `MIN` and `MIN % -1` is 0;
/// - shifts take the amount modulo the bit width (Rust's `wrapping_shl`/`wrapping_shr`); `>>` is
///   arithmetic on signed types and logical on unsigned ones;
/// - float `+ - * /` are IEEE-754 correctly rounded and never contracted into an FMA;
/// - comparisons yield `bool`; `LogicalAnd`/`LogicalOr` short-circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
}

impl BinOp {
    /// True for `== != < <= > >=`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
    /// True for `&&` and `||`.
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::LogicalAnd | BinOp::LogicalOr)
    }
    /// True for `<<` and `>>`.
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }
    /// The Rust spelling of the operator.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::LogicalAnd => "&&",
            BinOp::LogicalOr => "||",
        }
    }
}

/// A typed expression. `ty` is the type of the value the expression yields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
}

/// The expression forms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    /// A constant.
    Const(Const),
    /// A variable (parameter, local, or shared array).
    Var(VarId),
    /// `array[index]`: `array` is array-typed (a buffer parameter, shared array or local array),
    /// `index` is `u32`. Out of bounds is an error on the Interpreter.
    Index { array: Box<Expr>, index: Box<Expr> },
    /// `base.field` on a record value.
    Field { base: Box<Expr>, field: String },
    /// A unary operation.
    Unary { op: UnOp, operand: Box<Expr> },
    /// A binary operation.
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// An intrinsic (thread indices, math, atomics, warp operations).
    Intrinsic { intrinsic: Intrinsic, args: Vec<Expr> },
    /// `value as ty`, scalar to scalar, with Rust's `as` semantics: integer casts truncate or
    /// extend, float-to-integer saturates (NaN gives 0), integer-to-float rounds to nearest.
    Cast { value: Box<Expr>, to: ScalarType },
    /// A call of a helper function of [`crate::Kernel::functions`], by name.
    Call { func: String, args: Vec<Expr> },
    /// `if cond { then } else { els }` as an expression; only the chosen branch is evaluated.
    Select {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Box<Expr>,
    },
    /// `match` as an expression; the arms are tried in order.
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<(Pattern, Expr)>,
    },
    /// The length (in elements, `u32`) of an array-typed expression.
    Len(Box<Expr>),
    /// A record value built from its fields, in declaration order.
    RecordLit { record: String, fields: Vec<Expr> },
    /// A variant value: case `case` of variant type `variant`, with its payload.
    VariantLit {
        variant: String,
        case: String,
        payload: Vec<Expr>,
    },
    /// `[value; len]`: a local array with every element equal to `value`.
    ArrayRepeat { value: Box<Expr>, len: u32 },
    /// A vector built from one value per lane.
    VectorLit(Vec<Expr>),
}

impl Expr {
    /// A constant expression.
    pub fn constant(c: Const) -> Expr {
        Expr {
            ty: Type::Scalar(c.ty()),
            kind: ExprKind::Const(c),
        }
    }
    /// A variable reference of the given type.
    pub fn var(id: VarId, ty: Type) -> Expr {
        Expr {
            kind: ExprKind::Var(id),
            ty,
        }
    }
}

/// A place that can be assigned to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LValue {
    /// A mutable local variable.
    Var(VarId),
    /// An element of a writable array (a `&mut [T]` parameter, a shared array, a local array).
    Index { base: Box<LValue>, index: Expr },
    /// A field of a record place.
    Field { base: Box<LValue>, field: String },
}

/// A `match` pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Pattern {
    /// `_`: matches anything.
    Wildcard,
    /// An integer constant (of the scrutinee's type).
    Int(Const),
    /// An inclusive integer range `lo..=hi`.
    Range(Const, Const),
    /// Several alternatives (`a | b`).
    Or(Vec<Pattern>),
    /// A case of a variant type, binding its payload values to fresh variables.
    Case {
        variant: String,
        case: String,
        bindings: Vec<VarId>,
    },
}
