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
    /// A `bool`.
    Bool(bool),
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// A `u32` (also the kernel language's `usize`).
    U32(u32),
    /// A `u64`.
    U64(u64),
    /// IEEE-754 binary16 bits.
    F16(u16),
    /// bfloat16 bits (the upper 16 bits of the binary32 it rounds).
    BF16(u16),
    /// IEEE-754 binary32 bits; see [`Const::f32`].
    F32(u32),
    /// IEEE-754 binary64 bits; see [`Const::f64`].
    F64(u64),
}

impl Const {
    /// The `f32` constant `v`, stored as its bits (`-0.0` and NaN payloads kept).
    pub fn f32(v: f32) -> Const {
        Const::F32(v.to_bits())
    }
    /// The `f64` constant `v`, stored as its bits (`-0.0` and NaN payloads kept).
    pub fn f64(v: f64) -> Const {
        Const::F64(v.to_bits())
    }
    /// The value of an integer constant (`None` for `bool` and floats): what `match` patterns
    /// compare.
    pub fn int_value(self) -> Option<i128> {
        match self {
            Const::I32(v) => Some(v.into()),
            Const::I64(v) => Some(v.into()),
            Const::U32(v) => Some(v.into()),
            Const::U64(v) => Some(v.into()),
            _ => None,
        }
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
            Const::BF16(_) => ScalarType::BF16,
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
    /// `+`: wrapping on integers, correctly rounded on floats.
    Add,
    /// `-`: wrapping on integers, correctly rounded on floats.
    Sub,
    /// `*`: wrapping on integers (the low half of the product), correctly rounded on floats.
    Mul,
    /// `/`: truncating on integers (`MIN / -1` is `MIN`; by zero is an error), correctly rounded
    /// on floats.
    Div,
    /// `%`: remainder with the sign of the dividend (`MIN % -1` is 0; by zero is an error); on
    /// floats Rust's exact `fmod`.
    Rem,
    /// `&`: bitwise and on integers, logical and (both sides evaluated) on `bool`.
    BitAnd,
    /// `|`: bitwise or on integers, logical or (both sides evaluated) on `bool`.
    BitOr,
    /// `^`: bitwise exclusive or on integers, `!=` on `bool`.
    BitXor,
    /// `<<`: the amount is taken modulo the bit width of the left operand.
    Shl,
    /// `>>`: arithmetic on signed, logical on unsigned types; the amount is taken modulo the
    /// bit width of the left operand.
    Shr,
    /// `==` (IEEE equality on floats: NaN is unequal to everything, `-0.0 == 0.0`).
    Eq,
    /// `!=` (true when either float operand is NaN).
    Ne,
    /// `<` (false when either float operand is NaN).
    Lt,
    /// `<=` (false when either float operand is NaN).
    Le,
    /// `>` (false when either float operand is NaN).
    Gt,
    /// `>=` (false when either float operand is NaN).
    Ge,
    /// `&&` on `bool`: the right operand is evaluated only if the left one is `true`.
    LogicalAnd,
    /// `||` on `bool`: the right operand is evaluated only if the left one is `false`.
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
    /// What the expression computes.
    pub kind: ExprKind,
    /// The type of its value ([`Type::Unit`] for a call of a helper returning nothing).
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
    Index {
        /// The array read from.
        array: Box<Expr>,
        /// The element index, `u32`.
        index: Box<Expr>,
    },
    /// `base.field` on a record value.
    Field {
        /// The record value.
        base: Box<Expr>,
        /// The field's name, as in [`crate::RecordDef::fields`].
        field: String,
    },
    /// A unary operation.
    Unary {
        /// The operator.
        op: UnOp,
        /// Its operand, of the expression's type.
        operand: Box<Expr>,
    },
    /// A binary operation.
    Binary {
        /// The operator.
        op: BinOp,
        /// The left operand.
        lhs: Box<Expr>,
        /// The right operand: of the left operand's type, except for shifts (any integer type).
        rhs: Box<Expr>,
    },
    /// An intrinsic (thread indices, math, atomics, warp operations).
    Intrinsic {
        /// Which intrinsic.
        intrinsic: Intrinsic,
        /// Its arguments, in order (none for the index intrinsics; for math functions the
        /// receiver first, as in `x.powf(y)` = `[x, y]`).
        args: Vec<Expr>,
    },
    /// `value as ty`, scalar to scalar, with Rust's `as` semantics: integer casts truncate or
    /// extend, float-to-integer saturates (NaN gives 0), integer-to-float rounds to nearest.
    Cast {
        /// The scalar value converted.
        value: Box<Expr>,
        /// The target type.
        to: ScalarType,
    },
    /// A call of a helper function of [`crate::Kernel::functions`], by name.
    Call {
        /// The helper's name ([`crate::Function::name`]).
        func: String,
        /// One argument per parameter, in order (buffers are passed as their variable).
        args: Vec<Expr>,
    },
    /// `if cond { then } else { els }` as an expression; only the chosen branch is evaluated.
    Select {
        /// The `bool` condition.
        cond: Box<Expr>,
        /// The value when `cond` is `true`.
        then: Box<Expr>,
        /// The value when `cond` is `false`.
        els: Box<Expr>,
    },
    /// `match` as an expression; the arms are tried in order.
    Match {
        /// The value matched.
        scrutinee: Box<Expr>,
        /// Each pattern with the value of its arm; the first matching arm gives the value.
        arms: Vec<(Pattern, Expr)>,
    },
    /// The length (in elements, `u32`) of an array-typed expression.
    Len(Box<Expr>),
    /// A record value built from its fields, in declaration order.
    RecordLit {
        /// The record type's name ([`crate::RecordDef::name`]).
        record: String,
        /// One value per field, in declaration order.
        fields: Vec<Expr>,
    },
    /// A variant value: case `case` of variant type `variant`, with its payload.
    VariantLit {
        /// The variant type's name ([`crate::VariantDef::name`]).
        variant: String,
        /// The case's name ([`crate::VariantCase::name`]).
        case: String,
        /// One value per payload type of the case, in order.
        payload: Vec<Expr>,
    },
    /// `[value; len]`: a local array with every element equal to `value`.
    ArrayRepeat {
        /// The value of every element.
        value: Box<Expr>,
        /// The number of elements.
        len: u32,
    },
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
    Index {
        /// The array place.
        base: Box<LValue>,
        /// The element index, `u32`.
        index: Expr,
    },
    /// A field of a record place.
    Field {
        /// The record place.
        base: Box<LValue>,
        /// The field's name.
        field: String,
    },
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
        /// The variant type's name.
        variant: String,
        /// The case's name.
        case: String,
        /// One fresh variable per payload value of the case, in order.
        bindings: Vec<VarId>,
    },
}
