//! Memory layout of global-buffer elements (`#[repr(C)]`), and loads and stores through the raw
//! pointers of a launch.
//!
//! Every access to global memory is a relaxed atomic load or store of the scalar leaf: on the
//! CPU this costs the same as a plain access, and it keeps two blocks racing on one element (a
//! bug in the kernel, as on a GPU) from being undefined behaviour in the interpreter itself.

use super::error::{invalid, unsupported, Fault};
use super::value::Value;
use spoc_ir::layout::{LayoutError, Layouts};
use spoc_ir::{RecordDef, ScalarType, Type};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// The layout of a value in global memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// A scalar of its natural size and alignment (`bool` is one byte).
    Scalar(ScalarType),
    /// A `#[repr(C)]` record: each field at its offset.
    Record {
        size: usize,
        align: usize,
        fields: Box<[(usize, Layout)]>,
    },
}

/// Records nested deeper than this are treated as self-containing (ill-formed).
const MAX_NESTING: usize = 64;

impl Layout {
    /// The layout of `ty` as a buffer element: a scalar, a vector (a record of its lanes, see
    /// [`Layout::vector`]), or a record laid out by [`spoc_ir::layout`] (`#[repr(C)]`).
    ///
    /// Errors: `Unsupported` for variants, arrays and `()`; `InvalidKernel` for an
    /// unknown or self-containing record.
    pub(crate) fn of(ty: &Type, records: &[RecordDef]) -> Result<Layout, Fault> {
        Self::of_depth(ty, records, 0)
    }

    fn of_depth(ty: &Type, records: &[RecordDef], depth: usize) -> Result<Layout, Fault> {
        if depth > MAX_NESTING {
            return Err(invalid(format!("record type `{ty}` contains itself")));
        }
        match ty {
            Type::Scalar(s) => Ok(Layout::Scalar(*s)),
            Type::Vector { elem, lanes } => {
                check_lanes(*lanes)?;
                Ok(Layout::vector(*elem, *lanes))
            }
            Type::Record(name) => {
                let def = records
                    .iter()
                    .find(|r| &r.name == name)
                    .ok_or_else(|| invalid(format!("unknown record type `{name}`")))?;
                let mut fields = Vec::with_capacity(def.fields.len());
                for f in &def.fields {
                    fields.push(Self::of_depth(&f.ty, records, depth + 1)?);
                }
                let shape = Layouts::new(records, &[])
                    .record(name)
                    .map_err(|e| match e {
                        LayoutError::TooDeep(_) | LayoutError::Undefined(_) => {
                            invalid(e.to_string())
                        }
                        e => unsupported(format!("`{ty}` as an element of a buffer ({e})")),
                    })?;
                let size = usize::try_from(shape.layout.size)
                    .map_err(|_| unsupported(format!("`{ty}` (too large)")))?;
                Ok(Layout::Record {
                    size,
                    align: shape.layout.align as usize,
                    fields: shape
                        .offsets
                        .into_iter()
                        .map(|o| o as usize)
                        .zip(fields)
                        .collect(),
                })
            }
            other => Err(unsupported(format!("`{other}` as an element of a buffer"))),
        }
    }

    /// The layout of a `lanes`-lane vector of `elem`: a record of `lanes` scalars, lane `i` at
    /// byte `i * size(elem)`; 2 and 4 lanes aligned to the whole vector, 3 lanes to one lane
    /// (as [`spoc_ir::layout`] lays it out).
    pub(crate) fn vector(elem: ScalarType, lanes: u8) -> Layout {
        let n = elem.size_bytes();
        let size = n * usize::from(lanes);
        Layout::Record {
            size,
            align: if lanes.is_power_of_two() { size } else { n },
            fields: (0..usize::from(lanes))
                .map(|i| (i * n, Layout::Scalar(elem)))
                .collect(),
        }
    }

    /// Size in bytes.
    pub(crate) fn size(&self) -> usize {
        match self {
            Layout::Scalar(s) => s.size_bytes(),
            Layout::Record { size, .. } => *size,
        }
    }

    /// Alignment in bytes.
    pub(crate) fn align(&self) -> usize {
        match self {
            Layout::Scalar(s) => s.size_bytes(),
            Layout::Record { align, .. } => *align,
        }
    }

    /// Reads a value of this layout at `p`.
    ///
    /// # Safety
    /// `p` must be aligned to [`Layout::align`] and valid for reads of [`Layout::size`] bytes.
    pub(crate) unsafe fn load(&self, p: *mut u8) -> Value {
        match self {
            Layout::Scalar(s) => load_scalar(*s, p),
            Layout::Record { fields, .. } => {
                Value::record(fields.iter().map(|(off, l)| l.load(p.add(*off))).collect())
            }
        }
    }

    /// Writes `v` at `p`.
    ///
    /// Errors: `InvalidKernel` if `v` does not have this layout's type (nothing is written then
    /// for a scalar; a record may be partly written).
    ///
    /// # Safety
    /// `p` must be aligned to [`Layout::align`] and valid for writes of [`Layout::size`] bytes.
    pub(crate) unsafe fn store(&self, p: *mut u8, v: &Value) -> Result<(), Fault> {
        match self {
            Layout::Scalar(s) => store_scalar(*s, p, v),
            Layout::Record { fields, .. } => match v.as_record() {
                Some(vals) if vals.len() == fields.len() => {
                    for ((off, l), v) in fields.iter().zip(vals.iter()) {
                        l.store(p.add(*off), v)?;
                    }
                    Ok(())
                }
                _ => Err(invalid(format!(
                    "a {} stored into a buffer of records",
                    v.type_name()
                ))),
            },
        }
    }
}

/// Errors: `InvalidKernel` unless a vector has 2, 3 or 4 lanes.
pub(crate) fn check_lanes(lanes: u8) -> Result<(), Fault> {
    if (2..=4).contains(&lanes) {
        Ok(())
    } else {
        Err(invalid(format!("a vector of {lanes} lanes (2, 3 or 4)")))
    }
}

/// Reads a scalar at `p` (relaxed atomic load).
///
/// # Safety
/// `p` aligned to the scalar's size and valid for reads of it.
#[inline]
pub(crate) unsafe fn load_scalar(s: ScalarType, p: *mut u8) -> Value {
    match s {
        ScalarType::Bool => Value::Bool(AtomicU8::from_ptr(p).load(Relaxed) != 0),
        ScalarType::F16 => Value::F16(AtomicU16::from_ptr(p.cast()).load(Relaxed)),
        ScalarType::BF16 => Value::BF16(AtomicU16::from_ptr(p.cast()).load(Relaxed)),
        ScalarType::I32 => Value::I32(AtomicU32::from_ptr(p.cast()).load(Relaxed) as i32),
        ScalarType::U32 => Value::U32(AtomicU32::from_ptr(p.cast()).load(Relaxed)),
        ScalarType::F32 => Value::F32(f32::from_bits(AtomicU32::from_ptr(p.cast()).load(Relaxed))),
        ScalarType::I64 => Value::I64(AtomicU64::from_ptr(p.cast()).load(Relaxed) as i64),
        ScalarType::U64 => Value::U64(AtomicU64::from_ptr(p.cast()).load(Relaxed)),
        ScalarType::F64 => Value::F64(f64::from_bits(AtomicU64::from_ptr(p.cast()).load(Relaxed))),
    }
}

/// Writes scalar `v` of type `s` at `p` (relaxed atomic store).
///
/// # Safety
/// `p` aligned to the scalar's size and valid for writes of it.
#[inline]
pub(crate) unsafe fn store_scalar(s: ScalarType, p: *mut u8, v: &Value) -> Result<(), Fault> {
    match (s, v) {
        (ScalarType::Bool, Value::Bool(b)) => AtomicU8::from_ptr(p).store(*b as u8, Relaxed),
        (ScalarType::F16, Value::F16(x)) | (ScalarType::BF16, Value::BF16(x)) => {
            AtomicU16::from_ptr(p.cast()).store(*x, Relaxed)
        }
        (ScalarType::I32, Value::I32(x)) => AtomicU32::from_ptr(p.cast()).store(*x as u32, Relaxed),
        (ScalarType::U32, Value::U32(x)) => AtomicU32::from_ptr(p.cast()).store(*x, Relaxed),
        (ScalarType::F32, Value::F32(x)) => {
            AtomicU32::from_ptr(p.cast()).store(x.to_bits(), Relaxed)
        }
        (ScalarType::I64, Value::I64(x)) => AtomicU64::from_ptr(p.cast()).store(*x as u64, Relaxed),
        (ScalarType::U64, Value::U64(x)) => AtomicU64::from_ptr(p.cast()).store(*x, Relaxed),
        (ScalarType::F64, Value::F64(x)) => {
            AtomicU64::from_ptr(p.cast()).store(x.to_bits(), Relaxed)
        }
        (s, v) => {
            return Err(invalid(format!(
                "a {} stored into a buffer of {s}",
                v.type_name()
            )))
        }
    }
    Ok(())
}
