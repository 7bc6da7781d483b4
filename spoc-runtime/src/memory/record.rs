//! Records: `#[repr(C)]` structs of scalars and records, usable as kernel values, helper
//! arguments and buffer elements. `#[derive(Record)]` (from the `spoc` crate) implements
//! [`Record`] and [`FieldType`] for a struct; the kernel macro links the record's IR definition
//! ([`spoc_ir::RecordDef`]) into every kernel that names it and checks each field access against
//! [`Record::FIELDS`] at compile time.
//!
//! Layout is C's (`#[repr(C)]`): fields in declaration order, each at the next multiple of its
//! alignment, the size rounded up to the largest alignment; every backend's generated struct
//! (CUDA C, OpenCL C, SPIR-V with explicit offsets, PTX byte offsets) uses the same layout, so a
//! `Buffer<Particle>` holds the same bytes on the host and on the device.

use crate::buffer::DeviceCopy;
use spoc_ir::{RecordDef, ScalarType, Type};

/// What a record field holds, in a form usable in `const` checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeTag {
    /// A scalar of this type.
    Scalar(ScalarType),
    /// A record of this name.
    Record(&'static str),
}

impl TypeTag {
    /// `self == other`, usable in `const` contexts.
    pub const fn same(self, other: TypeTag) -> bool {
        match (self, other) {
            (TypeTag::Scalar(a), TypeTag::Scalar(b)) => a as u8 == b as u8,
            (TypeTag::Record(a), TypeTag::Record(b)) => str_eq(a, b),
            _ => false,
        }
    }

    /// The Rust spelling (`"f32"`, `"Particle"`), for compile-time messages.
    pub const fn name(self) -> &'static str {
        match self {
            TypeTag::Scalar(s) => s.rust_name(),
            TypeTag::Record(n) => n,
        }
    }
}

/// One field of a record, as [`Record::FIELDS`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// The field's name.
    pub name: &'static str,
    /// What it holds.
    pub tag: TypeTag,
    /// The fields of the field's type when it is a record (nested field checks read them);
    /// empty for scalars.
    pub fields: &'static [FieldInfo],
}

/// A type a record field (or a kernel value) may have: the scalars, and every record.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a type kernels can hold",
    label = "not a scalar or a `#[derive(Record)]` struct",
    note = "kernel values are `bool`, `i32`, `u32`, `i64`, `u64`, `f32`, `f64` and records: `#[derive(Clone, Copy, Record)] #[repr(C)] struct …`"
)]
pub trait FieldType: DeviceCopy {
    /// The type, for `const` checks.
    const TAG: TypeTag;
    /// The fields of a record (as [`Record::FIELDS`]); empty for scalars.
    const NESTED_FIELDS: &'static [FieldInfo] = &[];
    /// The type in the IR.
    fn ir_type() -> Type;
    /// Appends the IR definitions this type needs (none for scalars; the record and the records
    /// it contains, innermost first, for records), skipping names already in `out`.
    fn record_defs(out: &mut Vec<RecordDef>) {
        let _ = out;
    }
}

macro_rules! scalar_field {
    ($($t:ty => $s:ident),*) => {$(
        impl FieldType for $t {
            const TAG: TypeTag = TypeTag::Scalar(ScalarType::$s);
            fn ir_type() -> Type {
                Type::Scalar(ScalarType::$s)
            }
        }
    )*};
}
scalar_field!(bool => Bool, i32 => I32, i64 => I64, u32 => U32, u64 => U64, f32 => F32, f64 => F64);

/// A `#[derive(Record)]` struct. Implemented by the derive only.
///
/// # Safety
/// The type must be `#[repr(C)]` with only [`FieldType`] fields, listed in [`Record::FIELDS`] in
/// declaration order (the derive guarantees both).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a record",
    label = "used as a record in a kernel",
    note = "make it one with `#[derive(Clone, Copy, Record)]` and `#[repr(C)]`"
)]
pub unsafe trait Record: FieldType {
    /// The record's name in the IR: the struct's name. Two records of one name in one kernel
    /// are an error when the kernel's IR is linked.
    const NAME: &'static str;
    /// The fields in declaration (and memory) order.
    const FIELDS: &'static [FieldInfo];
}

/// Appends `def` to `out` unless a record of its name is there already.
pub fn push_record_def(out: &mut Vec<RecordDef>, def: RecordDef) {
    if !out.iter().any(|r| r.name == def.name) {
        out.push(def);
    }
}

/// String equality usable in `const` contexts.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The type of field `name` of `R`, if it has one (for the kernel macro's compile-time checks).
pub const fn field_tag<R: Record>(name: &str) -> Option<TypeTag> {
    let fields = R::FIELDS;
    let mut i = 0;
    while i < fields.len() {
        if str_eq(fields[i].name, name) {
            return Some(fields[i].tag);
        }
        i += 1;
    }
    None
}

/// The type of the field at `path` in `R` (`&["pos", "x"]` is `r.pos.x`), if every step exists
/// (each but the last a record): the kernel macro's compile-time check of nested field accesses.
pub const fn field_path_tag<R: Record>(path: &[&str]) -> Option<TypeTag> {
    let mut fields = R::FIELDS;
    let mut tag = None;
    let mut k = 0;
    while k < path.len() {
        if k > 0 {
            match tag {
                Some(TypeTag::Record(_)) => {}
                _ => return None,
            }
        }
        let mut found = None;
        let mut i = 0;
        while i < fields.len() {
            if str_eq(fields[i].name, path[k]) {
                found = Some(fields[i]);
                break;
            }
            i += 1;
        }
        match found {
            Some(f) => {
                tag = Some(f.tag);
                fields = f.fields;
            }
            None => return None,
        }
        k += 1;
    }
    tag
}

/// The type of field number-`H` of a record, `H` being the FNV-1a hash of the field's name
/// (spoc-macros' `record::field_hash`): `#[derive(Record)]` implements it for every field, so
/// that native code generated by the kernel macro, which cannot see the struct, can name a
/// field's type (`<Particle as FieldOf<{ hash("x") }>>::T`). Generated code only.
pub trait FieldOf<const H: u64> {
    /// The field's type.
    type T;
}

/// Arithmetic with the kernel language's semantics on a value whose type the kernel macro does
/// not know (a record field's): integers wrap, integer division and remainder by zero trap,
/// floats are IEEE. Native code generated for such values calls these. Generated code only.
pub trait KernelArith: Copy {
    /// `self + rhs`.
    fn k_add(self, rhs: Self) -> Self;
    /// `self - rhs`.
    fn k_sub(self, rhs: Self) -> Self;
    /// `self * rhs`.
    fn k_mul(self, rhs: Self) -> Self;
    /// `self / rhs`.
    ///
    /// # Errors
    /// [`crate::kernel_abi::Trap::DivisionByZero`] for an integer `rhs` of 0.
    fn k_div(self, rhs: Self) -> Result<Self, crate::kernel_abi::Trap>;
    /// `self % rhs`.
    ///
    /// # Errors
    /// [`crate::kernel_abi::Trap::DivisionByZero`] for an integer `rhs` of 0.
    fn k_rem(self, rhs: Self) -> Result<Self, crate::kernel_abi::Trap>;
    /// `-self`.
    fn k_neg(self) -> Self;
    /// `self.abs()` (wrapping for integers).
    fn k_abs(self) -> Self;
}

macro_rules! arith_int {
    ($($t:ty),*) => {$(
        impl KernelArith for $t {
            #[inline(always)]
            fn k_add(self, rhs: Self) -> Self { self.wrapping_add(rhs) }
            #[inline(always)]
            fn k_sub(self, rhs: Self) -> Self { self.wrapping_sub(rhs) }
            #[inline(always)]
            fn k_mul(self, rhs: Self) -> Self { self.wrapping_mul(rhs) }
            #[inline(always)]
            fn k_div(self, rhs: Self) -> Result<Self, crate::kernel_abi::Trap> {
                if rhs == 0 {
                    Err(crate::kernel_abi::Trap::DivisionByZero)
                } else {
                    Ok(self.wrapping_div(rhs))
                }
            }
            #[inline(always)]
            fn k_rem(self, rhs: Self) -> Result<Self, crate::kernel_abi::Trap> {
                if rhs == 0 {
                    Err(crate::kernel_abi::Trap::DivisionByZero)
                } else {
                    Ok(self.wrapping_rem(rhs))
                }
            }
            #[inline(always)]
            fn k_neg(self) -> Self { self.wrapping_neg() }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn k_abs(self) -> Self { if self < 0 { self.wrapping_neg() } else { self } }
        }
    )*};
}
arith_int!(i32, i64, u32, u64);

macro_rules! arith_float {
    ($($t:ty),*) => {$(
        impl KernelArith for $t {
            #[inline(always)]
            fn k_add(self, rhs: Self) -> Self { self + rhs }
            #[inline(always)]
            fn k_sub(self, rhs: Self) -> Self { self - rhs }
            #[inline(always)]
            fn k_mul(self, rhs: Self) -> Self { self * rhs }
            #[inline(always)]
            fn k_div(self, rhs: Self) -> Result<Self, crate::kernel_abi::Trap> { Ok(self / rhs) }
            #[inline(always)]
            fn k_rem(self, rhs: Self) -> Result<Self, crate::kernel_abi::Trap> { Ok(self % rhs) }
            #[inline(always)]
            fn k_neg(self) -> Self { -self }
            #[inline(always)]
            fn k_abs(self) -> Self { self.abs() }
        }
    )*};
}
arith_float!(f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_string_and_tag_equality() {
        assert!(str_eq("pos", "pos"));
        assert!(!str_eq("pos", "po"));
        assert!(!str_eq("pos", "pot"));
        assert!(TypeTag::Scalar(ScalarType::F32).same(<f32 as FieldType>::TAG));
        assert!(!TypeTag::Scalar(ScalarType::F32).same(TypeTag::Scalar(ScalarType::F64)));
        assert!(TypeTag::Record("A").same(TypeTag::Record("A")));
        assert!(!TypeTag::Record("A").same(TypeTag::Scalar(ScalarType::I32)));
    }

    #[test]
    fn kernel_arith_wraps_and_traps() {
        assert_eq!(i32::MAX.k_add(1), i32::MIN);
        assert_eq!(0u32.k_sub(1), u32::MAX);
        assert_eq!(i32::MIN.k_abs(), i32::MIN);
        assert!(5u64.k_div(0).is_err());
        assert_eq!(7i64.k_rem(-3).unwrap(), 1);
        assert_eq!(1.5f32.k_mul(2.0), 3.0);
        assert_eq!((-0.0f64).k_neg().to_bits(), 0.0f64.to_bits());
        assert!(1.0f32.k_div(0.0).unwrap().is_infinite());
    }
}
