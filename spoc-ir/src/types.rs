//! Element and value types of the IR.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// A scalar type. `F16` and `BF16` are storage-only types in the IR: they can be loaded, stored,
/// passed and cast, not computed on. The kernel language's arithmetic on them is lowered by the
/// front end to `f32` arithmetic between conversions ([`crate::half::widen_block`]).
///
/// The kernel language's `usize` is lowered to [`ScalarType::U32`]: indices and lengths are 32-bit
/// unsigned, as CUDA's `threadIdx`/`blockDim` are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarType {
    /// `bool`: one byte in memory (0 or 1).
    Bool,
    /// `i32`: 32-bit two's-complement integer.
    I32,
    /// `i64`: 64-bit two's-complement integer.
    I64,
    /// `u32`: 32-bit unsigned integer (also the kernel language's `usize`).
    U32,
    /// `u64`: 64-bit unsigned integer.
    U64,
    /// IEEE-754 binary16, storage only (2 bytes): 1 sign, 5 exponent, 10 fraction bits.
    F16,
    /// bfloat16, storage only (2 bytes): 1 sign, 8 exponent, 7 fraction bits, the upper half
    /// of an IEEE-754 binary32 (`half::bf16` on the host).
    BF16,
    /// IEEE-754 binary32 (`f32`).
    F32,
    /// IEEE-754 binary64 (`f64`).
    F64,
}

impl ScalarType {
    /// All scalar types, in declaration order.
    pub const ALL: [ScalarType; 9] = [
        ScalarType::Bool,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// Size in bytes of one value in memory (bool is one byte).
    pub fn size_bytes(self) -> usize {
        match self {
            ScalarType::Bool => 1,
            ScalarType::F16 | ScalarType::BF16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// True for the signed and unsigned integer types (not `bool`).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            ScalarType::I32 | ScalarType::I64 | ScalarType::U32 | ScalarType::U64
        )
    }

    /// The smallest and largest values of an integer type (`None` for `bool` and floats).
    pub fn int_range(self) -> Option<(i128, i128)> {
        match self {
            ScalarType::I32 => Some((i32::MIN.into(), i32::MAX.into())),
            ScalarType::I64 => Some((i64::MIN.into(), i64::MAX.into())),
            ScalarType::U32 => Some((0, u32::MAX.into())),
            ScalarType::U64 => Some((0, u64::MAX.into())),
            _ => None,
        }
    }

    /// True for `i32` and `i64`.
    pub fn is_signed(self) -> bool {
        matches!(self, ScalarType::I32 | ScalarType::I64)
    }

    /// True for `f16`, `bf16`, `f32` and `f64`.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 | ScalarType::F64
        )
    }

    /// True for the 16-bit storage-only float types `f16` and `bf16`.
    pub fn is_half(self) -> bool {
        matches!(self, ScalarType::F16 | ScalarType::BF16)
    }

    /// True for types arithmetic is defined on (integers, `f32`, `f64`; not `bool`, not `f16`).
    pub fn is_arithmetic(self) -> bool {
        self.is_integer() || matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    /// The Rust spelling of the type (`f16` for the storage type).
    pub const fn rust_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::F16 => "f16",
            ScalarType::BF16 => "bf16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

/// Where an array lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemSpace {
    /// Device memory handed to the kernel as a buffer parameter (CUDA global, OpenCL `__global`,
    /// Vulkan storage buffer).
    Global,
    /// Per-block memory shared by the threads of one block (CUDA `__shared__`, OpenCL `__local`,
    /// Vulkan `Workgroup`).
    Shared,
    /// Per-thread memory (registers or private memory).
    Local,
}

impl fmt::Display for MemSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemSpace::Global => "global",
            MemSpace::Shared => "shared",
            MemSpace::Local => "local",
        })
    }
}

/// The type of a value, variable or parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Type {
    /// No value (`()`): the result of statements and of helper functions without a return type.
    Unit,
    /// A scalar.
    Scalar(ScalarType),
    /// A record (struct) type, by name; defined in [`crate::Kernel::records`].
    Record(String),
    /// A variant (enum) type, by name; defined in [`crate::Kernel::variants`].
    Variant(String),
    /// An array. `len` is `None` for global buffers, whose length is known only at launch, and for
    /// shared arrays sized at launch (dynamic shared memory).
    Array {
        /// The element type, shared: every expression naming an array carries its type, and the
        /// copies that unrolling makes clone it without allocating.
        elem: Arc<Type>,
        /// Where the array lives.
        space: MemSpace,
        /// The length in elements, when fixed at compile time.
        len: Option<u32>,
    },
    /// A short vector of scalars (2, 3 or 4 lanes).
    Vector {
        /// The type of each lane.
        elem: ScalarType,
        /// The number of lanes: 2, 3 or 4.
        lanes: u8,
    },
    /// A type the front end could not decide yet. Never in a loaded kernel: the loader
    /// ([`crate::resolve`]) or the end of lowering replaces it, and [`crate::validate()`] rejects
    /// any that is left.
    Pending(PendingType),
}

/// The names of a vector's lanes, in order: a `Type::Vector` value's lane `i` is its field
/// `LANE_NAMES[i]` (`v.x`, `v.y`, `v.z`, `v.w`), as in CUDA's `float4`, OpenCL C and GLSL.
pub const LANE_NAMES: [&str; 4] = ["x", "y", "z", "w"];

/// The lane a vector field name selects (`"x"` → 0 … `"w"` → 3); `None` for any other name.
pub fn lane_index(field: &str) -> Option<usize> {
    LANE_NAMES.iter().position(|l| *l == field)
}

/// A path to a field through nested records: field `b` of field `a` of record `Root` is
/// `Root.a.b`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FieldPath {
    /// The record the path starts at.
    pub record: String,
    /// The field names, outermost first (at least one).
    pub fields: Vec<String>,
}

impl FieldPath {
    /// The path written `Root.a.b`, or `None` if it names no field.
    pub fn parse(dotted: &str) -> Option<FieldPath> {
        let mut parts = dotted.split('.');
        let record = parts.next()?.to_string();
        let fields: Vec<String> = parts.map(str::to_string).collect();
        (!record.is_empty() && !fields.is_empty() && fields.iter().all(|f| !f.is_empty()))
            .then_some(FieldPath { record, fields })
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.record)?;
        for field in &self.fields {
            write!(f, ".{field}")?;
        }
        Ok(())
    }
}

/// What a [`Type::Pending`] waits for.
///
/// `#[kernel]` sees one item, so it does not know the field types of the records a function
/// uses; where a type depends on one it leaves [`PendingType::Field`] or
/// [`PendingType::FieldLiteral`] in the embedded IR, and the loader resolves them against the
/// records' definitions. [`PendingType::Var`] and [`PendingType::Literal`] live only inside the
/// front end, during type inference.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PendingType {
    /// The type of the field at this path (boxed, like the literal's parts: a [`Type`] is in
    /// every IR expression, and this keeps it at 32 bytes).
    Field(Box<FieldPath>),
    /// The type of a literal constant written where the field at `field` is expected
    /// (`q.x += 1.0`); set on an [`crate::ExprKind::Const`] whose constant is a placeholder,
    /// replaced by the constant `digits` of the field's scalar type.
    FieldLiteral {
        /// The literal in base 10, with a leading `-` if negative (`"-1.5"`, `"3"`).
        digits: Box<str>,
        /// The field whose type the literal takes.
        field: Box<FieldPath>,
    },
    /// Type variable `N` of the front end's inference.
    Var(u32),
    /// The type of the front end's pending literal `N` (set on its placeholder constant).
    Literal(u32),
}

impl fmt::Display for PendingType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PendingType::Field(p) => write!(f, "?field:{p}"),
            PendingType::FieldLiteral { digits, field } => write!(f, "?lit:{digits}:{field}"),
            PendingType::Var(n) => write!(f, "?{n}"),
            PendingType::Literal(n) => write!(f, "?lit{n}"),
        }
    }
}

impl Type {
    /// The scalar type `bool`.
    pub const BOOL: Type = Type::Scalar(ScalarType::Bool);
    /// The scalar type `i32`.
    pub const I32: Type = Type::Scalar(ScalarType::I32);
    /// The scalar type `i64`.
    pub const I64: Type = Type::Scalar(ScalarType::I64);
    /// The scalar type `u32` (the kernel language's `usize`).
    pub const U32: Type = Type::Scalar(ScalarType::U32);
    /// The scalar type `u64`.
    pub const U64: Type = Type::Scalar(ScalarType::U64);
    /// The storage-only scalar type `f16`.
    pub const F16: Type = Type::Scalar(ScalarType::F16);
    /// `bf16` (storage only).
    pub const BF16: Type = Type::Scalar(ScalarType::BF16);
    /// The scalar type `f32`.
    pub const F32: Type = Type::Scalar(ScalarType::F32);
    /// The scalar type `f64`.
    pub const F64: Type = Type::Scalar(ScalarType::F64);

    /// A global buffer of `elem`.
    pub fn global_array(elem: Type) -> Type {
        Type::Array {
            elem: Arc::new(elem),
            space: MemSpace::Global,
            len: None,
        }
    }

    /// The scalar type, if this is a scalar.
    pub fn as_scalar(&self) -> Option<ScalarType> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// The element type and memory space, if this is an array.
    pub fn as_array(&self) -> Option<(&Type, MemSpace, Option<u32>)> {
        match self {
            Type::Array { elem, space, len } => Some((elem, *space, *len)),
            _ => None,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Unit => f.write_str("()"),
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Record(n) | Type::Variant(n) => f.write_str(n),
            Type::Array { elem, space, len } => match len {
                Some(n) => write!(f, "{space} [{elem}; {n}]"),
                None => write!(f, "{space} [{elem}]"),
            },
            Type::Vector { elem, lanes } => write!(f, "{elem}x{lanes}"),
            Type::Pending(p) => write!(f, "{p}"),
        }
    }
}

/// A record (struct) type: named fields in declaration order, laid out as `#[repr(C)]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RecordDef {
    /// The type's name; [`Type::Record`] refers to it.
    pub name: String,
    /// The fields, in declaration (and memory) order.
    pub fields: Vec<Field>,
}

/// One field of a record.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// The field's type.
    pub ty: Type,
}

/// A variant (enum) type: named cases, each with zero or more payload values.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VariantDef {
    /// The type's name; [`Type::Variant`] refers to it.
    pub name: String,
    /// The cases, in declaration order.
    pub cases: Vec<VariantCase>,
}

impl VariantDef {
    /// The position of case `case` in declaration order (its tag); `None` if there is none.
    pub fn case_index(&self, case: &str) -> Option<usize> {
        self.cases.iter().position(|c| c.name == case)
    }
}

/// One case of a variant type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VariantCase {
    /// The case's name.
    pub name: String,
    /// The types of the values the case carries, in order (empty for a plain case).
    pub payload: Vec<Type>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Const;

    #[test]
    fn integer_ranges_and_values() {
        assert_eq!(
            ScalarType::I32.int_range(),
            Some((-2_147_483_648, 2_147_483_647))
        );
        assert_eq!(
            ScalarType::U64.int_range(),
            Some((0, 18_446_744_073_709_551_615))
        );
        assert_eq!(ScalarType::F32.int_range(), None);
        assert_eq!(Const::I64(-5).int_value(), Some(-5));
        assert_eq!(Const::U32(u32::MAX).int_value(), Some(4_294_967_295));
        assert_eq!(Const::Bool(true).int_value(), None);
        assert_eq!(Const::f32(1.0).int_value(), None);
    }
}
