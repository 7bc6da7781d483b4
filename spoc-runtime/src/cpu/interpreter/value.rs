//! Run-time values and the operations of the kernel language on them (DESIGN.md §2, the doc
//! comments of `spoc_ir::BinOp`, `ExprKind::Cast` and `MathFn`).

use super::error::{invalid, Fault, InterpErrorKind};
use half::f16;
use spoc_ir::{BinOp, Const, MathFn, ScalarType, UnOp};

/// A value held by a variable or produced by an expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// `()`, also the content of a variable not yet initialised.
    Unit,
    Bool(bool),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    /// An `f16` (storage only), as its IEEE-754 binary16 bits.
    F16(u16),
    /// A `bf16` (storage only), as its bits.
    BF16(u16),
    F32(f32),
    F64(f64),
    /// A global buffer, by its index in the launch's buffer table.
    Buffer(u32),
    /// A record, variant or local array. Boxed so that a `Value` is 16 bytes (a
    /// `Result<Value, Fault>` comes back in two registers) and its drop is one test.
    Agg(Box<Agg>),
}

// Scalars are the hot case: keep them two words.
const _: () = assert!(std::mem::size_of::<Value>() == 16);

/// The aggregate values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Agg {
    /// A record value: its fields in declaration order.
    Record(Box<[Value]>),
    /// A variant value: the index of its case in the variant's definition, and its payload.
    Variant { case: u32, payload: Box<[Value]> },
    /// A local (per-thread) array.
    Array(Box<[Value]>),
}

impl Value {
    /// The value of an IR constant.
    pub(crate) fn from_const(c: Const) -> Value {
        match c {
            Const::Bool(b) => Value::Bool(b),
            Const::I32(v) => Value::I32(v),
            Const::I64(v) => Value::I64(v),
            Const::U32(v) => Value::U32(v),
            Const::U64(v) => Value::U64(v),
            Const::F16(bits) => Value::F16(bits),
            Const::BF16(bits) => Value::BF16(bits),
            Const::F32(bits) => Value::F32(f32::from_bits(bits)),
            Const::F64(bits) => Value::F64(f64::from_bits(bits)),
        }
    }

    /// A short name of the value's type, for error messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Unit => "()",
            Value::Bool(_) => "bool",
            Value::I32(_) => "i32",
            Value::I64(_) => "i64",
            Value::U32(_) => "u32",
            Value::U64(_) => "u64",
            Value::F16(_) => "f16",
            Value::BF16(_) => "bf16",
            Value::F32(_) => "f32",
            Value::F64(_) => "f64",
            Value::Buffer(_) => "buffer",
            Value::Agg(a) => match **a {
                Agg::Record(_) => "record",
                Agg::Variant { .. } => "variant",
                Agg::Array(_) => "local array",
            },
        }
    }

    /// A record value.
    pub(crate) fn record(fields: Box<[Value]>) -> Value {
        Value::Agg(Box::new(Agg::Record(fields)))
    }

    /// A local array value.
    pub(crate) fn array(elems: Box<[Value]>) -> Value {
        Value::Agg(Box::new(Agg::Array(elems)))
    }

    /// The elements, if this is a local array.
    #[inline]
    pub(crate) fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Agg(a) => match &**a {
                Agg::Array(v) => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    /// The elements, if this is a local array.
    #[inline]
    pub(crate) fn as_array_mut(&mut self) -> Option<&mut [Value]> {
        match self {
            Value::Agg(a) => match &mut **a {
                Agg::Array(v) => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    /// The fields, if this is a record.
    #[inline]
    pub(crate) fn as_record(&self) -> Option<&[Value]> {
        match self {
            Value::Agg(a) => match &**a {
                Agg::Record(v) => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    /// The fields, if this is a record.
    #[inline]
    pub(crate) fn as_record_mut(&mut self) -> Option<&mut [Value]> {
        match self {
            Value::Agg(a) => match &mut **a {
                Agg::Record(v) => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value as a `bool` (conditions).
    #[inline]
    pub(crate) fn as_bool(&self) -> Result<bool, Fault> {
        match self {
            Value::Bool(b) => Ok(*b),
            v => Err(invalid(format!(
                "a condition is a {}, not a bool",
                v.type_name()
            ))),
        }
    }

    /// The value as an index (`u32`).
    #[inline(always)]
    pub(crate) fn as_index(&self) -> Result<u32, Fault> {
        match self {
            Value::U32(i) => Ok(*i),
            v => Err(invalid(format!(
                "an index is a {}, not a u32",
                v.type_name()
            ))),
        }
    }

    /// An integer (or `bool`) value widened to `i128`, exactly.
    #[inline]
    pub(crate) fn as_i128(&self) -> Option<i128> {
        match *self {
            Value::I32(v) => Some(v as i128),
            Value::I64(v) => Some(v as i128),
            Value::U32(v) => Some(v as i128),
            Value::U64(v) => Some(v as i128),
            Value::Bool(b) => Some(b as i128),
            _ => None,
        }
    }

    /// The integer value `v` of type `ty`; `v` must be in the type's range.
    #[inline]
    pub(crate) fn from_i128(ty: ScalarType, v: i128) -> Value {
        match ty {
            ScalarType::I32 => Value::I32(v as i32),
            ScalarType::I64 => Value::I64(v as i64),
            ScalarType::U32 => Value::U32(v as u32),
            ScalarType::U64 => Value::U64(v as u64),
            ScalarType::Bool => Value::Bool(v != 0),
            // Callers only pass integer types; keep a total function anyway.
            ScalarType::F16 => Value::F16(f16::from_f64(v as f64).to_bits()),
            ScalarType::BF16 => Value::BF16(half::bf16::from_f32(v as f32).to_bits()),
            ScalarType::F32 => Value::F32(v as f32),
            ScalarType::F64 => Value::F64(v as f64),
        }
    }
}

fn type_error(op: &str, a: &Value, b: &Value) -> Fault {
    invalid(format!(
        "operator `{op}` applied to {} and {}",
        a.type_name(),
        b.type_name()
    ))
}

fn div_by_zero() -> Fault {
    Box::new(InterpErrorKind::DivisionByZero)
}

/// Integer `+ - *` (wrapping) and float `+ - *` (IEEE).
macro_rules! arith {
    ($a:expr, $b:expr, $sym:tt, $wrapping:ident) => {
        match ($a, $b) {
            (Value::I32(x), Value::I32(y)) => Ok(Value::I32(x.$wrapping(y))),
            (Value::I64(x), Value::I64(y)) => Ok(Value::I64(x.$wrapping(y))),
            (Value::U32(x), Value::U32(y)) => Ok(Value::U32(x.$wrapping(y))),
            (Value::U64(x), Value::U64(y)) => Ok(Value::U64(x.$wrapping(y))),
            (Value::F32(x), Value::F32(y)) => Ok(Value::F32(x $sym y)),
            (Value::F64(x), Value::F64(y)) => Ok(Value::F64(x $sym y)),
            (a, b) => Err(type_error(stringify!($sym), &a, &b)),
        }
    };
}

/// Integer `/ %` (zero divisor is an error, `MIN / -1` wraps) and float `/ %` (IEEE, fmod).
macro_rules! divide {
    ($a:expr, $b:expr, $sym:tt, $wrapping:ident) => {
        match ($a, $b) {
            (Value::I32(x), Value::I32(y)) => if y == 0 { Err(div_by_zero()) } else { Ok(Value::I32(x.$wrapping(y))) },
            (Value::I64(x), Value::I64(y)) => if y == 0 { Err(div_by_zero()) } else { Ok(Value::I64(x.$wrapping(y))) },
            (Value::U32(x), Value::U32(y)) => if y == 0 { Err(div_by_zero()) } else { Ok(Value::U32(x.$wrapping(y))) },
            (Value::U64(x), Value::U64(y)) => if y == 0 { Err(div_by_zero()) } else { Ok(Value::U64(x.$wrapping(y))) },
            (Value::F32(x), Value::F32(y)) => Ok(Value::F32(x $sym y)),
            (Value::F64(x), Value::F64(y)) => Ok(Value::F64(x $sym y)),
            (a, b) => Err(type_error(stringify!($sym), &a, &b)),
        }
    };
}

/// Bitwise `& | ^` on integers and `bool`.
macro_rules! bitwise {
    ($a:expr, $b:expr, $sym:tt) => {
        match ($a, $b) {
            (Value::Bool(x), Value::Bool(y)) => Ok(Value::Bool(x $sym y)),
            (Value::I32(x), Value::I32(y)) => Ok(Value::I32(x $sym y)),
            (Value::I64(x), Value::I64(y)) => Ok(Value::I64(x $sym y)),
            (Value::U32(x), Value::U32(y)) => Ok(Value::U32(x $sym y)),
            (Value::U64(x), Value::U64(y)) => Ok(Value::U64(x $sym y)),
            (a, b) => Err(type_error(stringify!($sym), &a, &b)),
        }
    };
}

/// Comparisons on two values of one scalar type (floats per IEEE: NaN compares unordered).
macro_rules! compare {
    ($a:expr, $b:expr, $sym:tt) => {
        match ($a, $b) {
            (Value::Bool(x), Value::Bool(y)) => Ok(Value::Bool(x $sym y)),
            (Value::I32(x), Value::I32(y)) => Ok(Value::Bool(x $sym y)),
            (Value::I64(x), Value::I64(y)) => Ok(Value::Bool(x $sym y)),
            (Value::U32(x), Value::U32(y)) => Ok(Value::Bool(x $sym y)),
            (Value::U64(x), Value::U64(y)) => Ok(Value::Bool(x $sym y)),
            (Value::F32(x), Value::F32(y)) => Ok(Value::Bool(x $sym y)),
            (Value::F64(x), Value::F64(y)) => Ok(Value::Bool(x $sym y)),
            (a, b) => Err(type_error(stringify!($sym), &a, &b)),
        }
    };
}

/// Shift amount: any integer type, taken modulo the width by `wrapping_shl`/`wrapping_shr`
/// (truncating to `u32` first keeps the value modulo 32 and 64).
#[inline]
fn shift_amount(v: &Value) -> Option<u32> {
    match *v {
        Value::I32(x) => Some(x as u32),
        Value::I64(x) => Some(x as u32),
        Value::U32(x) => Some(x),
        Value::U64(x) => Some(x as u32),
        _ => None,
    }
}

macro_rules! shift {
    ($a:expr, $b:expr, $method:ident, $sym:expr) => {{
        let a = $a;
        let b = $b;
        match (&a, shift_amount(&b)) {
            (Value::I32(x), Some(n)) => Ok(Value::I32(x.$method(n))),
            (Value::I64(x), Some(n)) => Ok(Value::I64(x.$method(n))),
            (Value::U32(x), Some(n)) => Ok(Value::U32(x.$method(n))),
            (Value::U64(x), Some(n)) => Ok(Value::U64(x.$method(n))),
            _ => Err(type_error($sym, &a, &b)),
        }
    }};
}

/// `a op b` for every operator but `&&` and `||` (which the evaluator short-circuits).
#[inline]
pub(crate) fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, Fault> {
    match op {
        BinOp::Add => arith!(a, b, +, wrapping_add),
        BinOp::Sub => arith!(a, b, -, wrapping_sub),
        BinOp::Mul => arith!(a, b, *, wrapping_mul),
        BinOp::Div => divide!(a, b, /, wrapping_div),
        BinOp::Rem => divide!(a, b, %, wrapping_rem),
        BinOp::BitAnd => bitwise!(a, b, &),
        BinOp::BitOr => bitwise!(a, b, |),
        BinOp::BitXor => bitwise!(a, b, ^),
        BinOp::Shl => shift!(a, b, wrapping_shl, "<<"),
        BinOp::Shr => shift!(a, b, wrapping_shr, ">>"),
        BinOp::Eq => compare!(a, b, ==),
        BinOp::Ne => compare!(a, b, !=),
        BinOp::Lt => compare!(a, b, <),
        BinOp::Le => compare!(a, b, <=),
        BinOp::Gt => compare!(a, b, >),
        BinOp::Ge => compare!(a, b, >=),
        BinOp::LogicalAnd | BinOp::LogicalOr => match (a, b) {
            // Reached only when both sides were evaluated anyway.
            (Value::Bool(x), Value::Bool(y)) => Ok(Value::Bool(if op == BinOp::LogicalAnd {
                x && y
            } else {
                x || y
            })),
            (a, b) => Err(type_error(op.symbol(), &a, &b)),
        },
    }
}

/// `-a` (wrapping on integers) and `!a` (logical on `bool`, bitwise on integers).
#[inline]
pub(crate) fn unary(op: UnOp, a: Value) -> Result<Value, Fault> {
    Ok(match (op, a) {
        (UnOp::Neg, Value::I32(x)) => Value::I32(x.wrapping_neg()),
        (UnOp::Neg, Value::I64(x)) => Value::I64(x.wrapping_neg()),
        (UnOp::Neg, Value::U32(x)) => Value::U32(x.wrapping_neg()),
        (UnOp::Neg, Value::U64(x)) => Value::U64(x.wrapping_neg()),
        (UnOp::Neg, Value::F32(x)) => Value::F32(-x),
        (UnOp::Neg, Value::F64(x)) => Value::F64(-x),
        (UnOp::Not, Value::Bool(x)) => Value::Bool(!x),
        (UnOp::Not, Value::I32(x)) => Value::I32(!x),
        (UnOp::Not, Value::I64(x)) => Value::I64(!x),
        (UnOp::Not, Value::U32(x)) => Value::U32(!x),
        (UnOp::Not, Value::U64(x)) => Value::U64(!x),
        (op, a) => {
            let sym = if op == UnOp::Neg { "-" } else { "!" };
            return Err(invalid(format!(
                "operator `{sym}` applied to {}",
                a.type_name()
            )));
        }
    })
}

/// `v as to` with Rust's semantics: integer casts truncate or extend, float-to-integer saturates
/// (NaN gives 0), integer-to-float rounds to nearest, `bool` casts to integers as 0 or 1. `f16` is
/// converted exactly to wider floats and rounded to nearest from anything else. Casts Rust
/// rejects (to `bool`, `bool` to a float) are ill-formed IR.
pub(crate) fn cast(v: Value, to: ScalarType) -> Result<Value, Fault> {
    macro_rules! num {
        ($x:expr) => {
            match to {
                ScalarType::I32 => Value::I32($x as i32),
                ScalarType::I64 => Value::I64($x as i64),
                ScalarType::U32 => Value::U32($x as u32),
                ScalarType::U64 => Value::U64($x as u64),
                ScalarType::F32 => Value::F32($x as f32),
                ScalarType::F64 => Value::F64($x as f64),
                // `as f64` is exact for every integer that does not overflow f16 anyway.
                ScalarType::F16 => Value::F16(f16::from_f64($x as f64).to_bits()),
                // The validator admits `f32` as the other side of a `bf16` cast only.
                ScalarType::BF16 => return Err(bad_cast(&v, to)),
                ScalarType::Bool => return Err(bad_cast(&v, to)),
            }
        };
    }
    Ok(match v {
        Value::I32(x) => num!(x),
        Value::I64(x) => num!(x),
        Value::U32(x) => num!(x),
        Value::U64(x) => num!(x),
        Value::F32(x) => match to {
            ScalarType::F16 => Value::F16(f16::from_f32(x).to_bits()),
            // Round to nearest, ties to even; NaN stays NaN, overflow is infinity.
            ScalarType::BF16 => Value::BF16(half::bf16::from_f32(x).to_bits()),
            _ => num!(x),
        },
        Value::F64(x) => match to {
            ScalarType::F16 => Value::F16(f16::from_f64(x).to_bits()),
            _ => num!(x),
        },
        Value::BF16(bits) => match to {
            ScalarType::BF16 => Value::BF16(bits),
            // Exact: the bits are the upper half of the f32's.
            ScalarType::F32 => Value::F32(half::bf16::from_bits(bits).to_f32()),
            _ => return Err(bad_cast(&v, to)),
        },
        Value::F16(bits) => {
            if to == ScalarType::F16 {
                Value::F16(bits)
            } else {
                // f16 -> f32 is exact, so this is a single rounding for every target.
                let x = f16::from_bits(bits).to_f32();
                num!(x)
            }
        }
        Value::Bool(b) => match to {
            ScalarType::Bool => Value::Bool(b),
            ScalarType::I32 | ScalarType::I64 | ScalarType::U32 | ScalarType::U64 => {
                Value::from_i128(to, b as i128)
            }
            _ => return Err(bad_cast(&v, to)),
        },
        _ => return Err(bad_cast(&v, to)),
    })
}

fn bad_cast(v: &Value, to: ScalarType) -> Fault {
    invalid(format!("cast of a {} to {to}", v.type_name()))
}

/// The unary math functions on one float type.
macro_rules! float_unary {
    ($f:expr, $x:expr) => {{
        let x = $x;
        'm: {
            Some(match $f {
                MathFn::Sqrt => x.sqrt(),
                MathFn::Rsqrt => 1.0 / x.sqrt(),
                MathFn::Recip => x.recip(),
                MathFn::Abs => x.abs(),
                MathFn::Floor => x.floor(),
                MathFn::Ceil => x.ceil(),
                MathFn::Round => x.round(),
                MathFn::Trunc => x.trunc(),
                MathFn::Exp => x.exp(),
                MathFn::Exp2 => x.exp2(),
                MathFn::Ln => x.ln(),
                MathFn::Log2 => x.log2(),
                MathFn::Log10 => x.log10(),
                MathFn::Sin => x.sin(),
                MathFn::Cos => x.cos(),
                MathFn::Tan => x.tan(),
                MathFn::Asin => x.asin(),
                MathFn::Acos => x.acos(),
                MathFn::Atan => x.atan(),
                MathFn::Sinh => x.sinh(),
                MathFn::Cosh => x.cosh(),
                MathFn::Tanh => x.tanh(),
                MathFn::Signum => x.signum(),
                _ => break 'm None,
            })
        }
    }};
}

fn math_error(f: MathFn, args: &[&Value]) -> Fault {
    let types: Vec<&str> = args.iter().map(|v| v.type_name()).collect();
    invalid(format!("`{}` applied to ({})", f.name(), types.join(", ")))
}

/// A one-argument math function: float math in the argument's precision (Rust's methods);
/// `abs` on integers wraps (`i32::MIN.abs()` is `i32::MIN`) and is the identity on unsigned ones.
#[inline]
pub(crate) fn math1(f: MathFn, a: Value) -> Result<Value, Fault> {
    let r = match a {
        Value::F32(x) => float_unary!(f, x).map(Value::F32),
        Value::F64(x) => float_unary!(f, x).map(Value::F64),
        Value::I32(x) if f == MathFn::Abs => Some(Value::I32(x.wrapping_abs())),
        Value::I64(x) if f == MathFn::Abs => Some(Value::I64(x.wrapping_abs())),
        Value::U32(_) | Value::U64(_) if f == MathFn::Abs => Some(a.clone()),
        _ => None,
    };
    r.ok_or_else(|| math_error(f, &[&a]))
}

/// A two-argument math function (`min`, `max`, `powf`, `atan2`, `hypot`, `copysign`, `powi`).
/// `min`/`max` follow Rust: on floats a NaN operand yields the other operand.
#[inline]
pub(crate) fn math2(f: MathFn, a: Value, b: Value) -> Result<Value, Fault> {
    macro_rules! float2 {
        ($x:expr, $y:expr) => {
            match f {
                MathFn::Min => Some($x.min($y)),
                MathFn::Max => Some($x.max($y)),
                MathFn::Powf => Some($x.powf($y)),
                MathFn::Atan2 => Some($x.atan2($y)),
                MathFn::Hypot => Some($x.hypot($y)),
                MathFn::Copysign => Some($x.copysign($y)),
                _ => None,
            }
        };
    }
    macro_rules! int2 {
        ($x:expr, $y:expr) => {
            match f {
                MathFn::Min => Some($x.min($y)),
                MathFn::Max => Some($x.max($y)),
                _ => None,
            }
        };
    }
    let r = match (&a, &b) {
        (Value::F32(x), Value::I32(n)) if f == MathFn::Powi => Some(Value::F32(x.powi(*n))),
        (Value::F64(x), Value::I32(n)) if f == MathFn::Powi => Some(Value::F64(x.powi(*n))),
        (Value::F32(x), Value::F32(y)) => float2!(x, *y).map(Value::F32),
        (Value::F64(x), Value::F64(y)) => float2!(x, *y).map(Value::F64),
        (Value::I32(x), Value::I32(y)) => int2!(*x, *y).map(Value::I32),
        (Value::I64(x), Value::I64(y)) => int2!(*x, *y).map(Value::I64),
        (Value::U32(x), Value::U32(y)) => int2!(*x, *y).map(Value::U32),
        (Value::U64(x), Value::U64(y)) => int2!(*x, *y).map(Value::U64),
        _ => None,
    };
    r.ok_or_else(|| math_error(f, &[&a, &b]))
}

/// The three-argument math function: `x.mul_add(a, b)`, one rounding.
#[inline]
pub(crate) fn math3(f: MathFn, x: Value, a: Value, b: Value) -> Result<Value, Fault> {
    match (f, &x, &a, &b) {
        (MathFn::MulAdd, Value::F32(x), Value::F32(a), Value::F32(b)) => {
            Ok(Value::F32(x.mul_add(*a, *b)))
        }
        (MathFn::MulAdd, Value::F64(x), Value::F64(a), Value::F64(b)) => {
            Ok(Value::F64(x.mul_add(*a, *b)))
        }
        _ => Err(math_error(f, &[&x, &a, &b])),
    }
}
