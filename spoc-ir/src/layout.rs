//! Memory layout of IR values, decided once for every backend: the layout Rust gives the
//! `#[repr(C)]` types the host side uses for the same values.
//!
//! - `()`: size 0, alignment 1.
//! - Scalars: their size ([`crate::ScalarType::size_bytes`]), aligned to it; `bool` is one byte.
//! - Vectors: `lanes` packed scalars; 2 and 4 lanes aligned to the vector's size (one vector
//!   load moves it: `ld.v4`, `float4`, std430 `vec4`), 3 lanes to the scalar.
//! - Fixed-length arrays: `len` elements, each at a multiple of the element's (padded) size,
//!   aligned to the element.
//! - Records: `#[repr(C)]` structs — fields in declaration order, each at the next multiple of
//!   its alignment; the record aligned to its most aligned field and its size rounded up to
//!   that alignment. A record without fields has size 0 (Rust's rule for an empty
//!   `#[repr(C)]` struct; C leaves it undefined).
//! - Variants: `#[repr(C, u32)]` enums — a `u32` tag (the case's position) at offset 0, then a
//!   `#[repr(C)]` union of one `#[repr(C)]` struct per case (its payload values in order), at the
//!   next multiple of the union's alignment; the whole aligned to the larger of 4 and the
//!   union's alignment, its size rounded up to it.
//! - Global buffers and launch-sized shared arrays (no length) have no layout of their own.
//!
//! The tests check these rules against `std::mem::size_of`, `align_of` and `offset_of!` of real
//! Rust types.

use crate::{Kernel, RecordDef, Type, VariantDef};
use std::fmt;

/// Size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Size in bytes (a multiple of `align`).
    pub size: u64,
    /// Alignment in bytes (a power of two).
    pub align: u64,
}

/// The layout of a `#[repr(C)]` struct: its own size and alignment, and each member's offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    /// Size and alignment of the whole struct.
    pub layout: Layout,
    /// Byte offset of each member, in member order.
    pub offsets: Vec<u64>,
}

/// The layout of a variant type (a `#[repr(C, u32)]` enum).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantLayout {
    /// Size and alignment of the whole value.
    pub layout: Layout,
    /// Byte offset of the union of the cases' payloads (the `u32` tag is at offset 0).
    pub payload_offset: u64,
    /// For each case, in declaration order, the offsets of its payload values from the start
    /// of the variant value.
    pub cases: Vec<Vec<u64>>,
}

/// Why a type has no layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// The type has no size of its own: a global buffer, a shared array sized at launch, or an
    /// unresolved [`Type::Pending`].
    Unsized(Type),
    /// A record or variant that is not defined.
    Undefined(String),
    /// Records nested more than 64 deep: a record that contains itself.
    TooDeep(String),
    /// A size that does not fit in 64 bits.
    TooLarge(Type),
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::Unsized(t) => write!(f, "`{t}` has no size of its own"),
            LayoutError::Undefined(n) => write!(f, "type `{n}` is not defined"),
            LayoutError::TooDeep(n) => write!(f, "record type `{n}` contains itself"),
            LayoutError::TooLarge(t) => write!(f, "`{t}` is larger than 2^64 bytes"),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Records nested deeper than this are treated as self-containing.
const MAX_DEPTH: u32 = 64;

/// Alignment of the variant tag (`u32`).
const TAG: Layout = Layout { size: 4, align: 4 };

/// The layouts of the types of one kernel (or of any set of record and variant definitions).
#[derive(Clone, Copy, Debug)]
pub struct Layouts<'a> {
    records: &'a [RecordDef],
    variants: &'a [VariantDef],
}

impl<'a> Layouts<'a> {
    /// Layouts of the types `kernel` defines.
    pub fn of(kernel: &'a Kernel) -> Layouts<'a> {
        Layouts::new(&kernel.records, &kernel.variants)
    }

    /// Layouts of types defined by `records` and `variants`.
    pub fn new(records: &'a [RecordDef], variants: &'a [VariantDef]) -> Layouts<'a> {
        Layouts { records, variants }
    }

    /// Size and alignment of a value of `ty` in memory.
    ///
    /// # Errors
    /// See [`LayoutError`].
    pub fn layout(&self, ty: &Type) -> Result<Layout, LayoutError> {
        self.layout_at(ty, 0)
    }

    /// The layout of record `name`, with its fields' offsets in declaration order.
    ///
    /// # Errors
    /// See [`LayoutError`].
    pub fn record(&self, name: &str) -> Result<StructLayout, LayoutError> {
        self.record_at(name, 0)
    }

    /// The byte offset of field `field` of record `record`, with the field's type (`None` when
    /// the record has no such field).
    ///
    /// # Errors
    /// See [`LayoutError`].
    pub fn field_offset(
        &self,
        record: &str,
        field: &str,
    ) -> Result<Option<(u64, &'a Type)>, LayoutError> {
        let def = self.record_def(record)?;
        let layout = self.record(record)?;
        Ok(def
            .fields
            .iter()
            .zip(layout.offsets)
            .find(|(f, _)| f.name == field)
            .map(|(f, off)| (off, &f.ty)))
    }

    /// The layout of a `#[repr(C)]` struct whose members have types `members`, in order.
    ///
    /// # Errors
    /// See [`LayoutError`].
    pub fn members<'t>(
        &self,
        members: impl IntoIterator<Item = &'t Type>,
    ) -> Result<StructLayout, LayoutError> {
        self.members_at(members, 0)
    }

    /// The layout of variant `name`.
    ///
    /// # Errors
    /// See [`LayoutError`].
    pub fn variant(&self, name: &str) -> Result<VariantLayout, LayoutError> {
        self.variant_at(name, 0)
    }

    fn record_def(&self, name: &str) -> Result<&'a RecordDef, LayoutError> {
        self.records
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| LayoutError::Undefined(name.to_string()))
    }

    fn layout_at(&self, ty: &Type, depth: u32) -> Result<Layout, LayoutError> {
        let too_large = || LayoutError::TooLarge(ty.clone());
        match ty {
            Type::Unit => Ok(Layout { size: 0, align: 1 }),
            Type::Scalar(s) => {
                let n = s.size_bytes() as u64;
                Ok(Layout { size: n, align: n })
            }
            Type::Vector { elem, lanes } => {
                let n = elem.size_bytes() as u64;
                let size = n * u64::from(*lanes);
                // 2 and 4 lanes: aligned to the whole vector (CUDA's `float4`, OpenCL's
                // `float4`, std430's `vec4`), so that one vector load or store moves it; 3 lanes:
                // aligned to the lane.
                let align = if lanes.is_power_of_two() { size } else { n };
                Ok(Layout { size, align })
            }
            Type::Array {
                elem, len: Some(n), ..
            } => {
                let e = self.layout_at(elem, depth + 1)?;
                Ok(Layout {
                    size: e.size.checked_mul(u64::from(*n)).ok_or_else(too_large)?,
                    align: e.align,
                })
            }
            Type::Record(name) => Ok(self.record_at(name, depth)?.layout),
            Type::Variant(name) => Ok(self.variant_at(name, depth)?.layout),
            Type::Array { len: None, .. } | Type::Pending(_) => {
                Err(LayoutError::Unsized(ty.clone()))
            }
        }
    }

    fn record_at(&self, name: &str, depth: u32) -> Result<StructLayout, LayoutError> {
        if depth > MAX_DEPTH {
            return Err(LayoutError::TooDeep(name.to_string()));
        }
        let def = self.record_def(name)?;
        self.members_at(def.fields.iter().map(|f| &f.ty), depth + 1)
            .map_err(|e| match e {
                LayoutError::TooLarge(_) => LayoutError::TooLarge(Type::Record(name.into())),
                e => e,
            })
    }

    fn members_at<'t>(
        &self,
        members: impl IntoIterator<Item = &'t Type>,
        depth: u32,
    ) -> Result<StructLayout, LayoutError> {
        let mut offsets = Vec::new();
        let (mut size, mut align) = (0u64, 1u64);
        let mut last = None;
        for ty in members {
            last = Some(ty);
            let l = self.layout_at(ty, depth)?;
            let off = size
                .checked_next_multiple_of(l.align)
                .ok_or_else(|| LayoutError::TooLarge(ty.clone()))?;
            offsets.push(off);
            size = off
                .checked_add(l.size)
                .ok_or_else(|| LayoutError::TooLarge(ty.clone()))?;
            align = align.max(l.align);
        }
        let size = size
            .checked_next_multiple_of(align)
            .ok_or_else(|| LayoutError::TooLarge(last.cloned().unwrap_or(Type::Unit)))?;
        Ok(StructLayout {
            layout: Layout { size, align },
            offsets,
        })
    }

    fn variant_at(&self, name: &str, depth: u32) -> Result<VariantLayout, LayoutError> {
        if depth > MAX_DEPTH {
            return Err(LayoutError::TooDeep(name.to_string()));
        }
        let def = self
            .variants
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| LayoutError::Undefined(name.to_string()))?;
        let too_large = || LayoutError::TooLarge(Type::Variant(name.to_string()));
        let cases: Vec<StructLayout> = def
            .cases
            .iter()
            .map(|c| self.members_at(&c.payload, depth + 1))
            .collect::<Result<_, _>>()?;
        // The union of the cases' structs.
        let union_align = cases.iter().map(|c| c.layout.align).max().unwrap_or(1);
        let union_size = cases.iter().map(|c| c.layout.size).max().unwrap_or(0);
        let payload_offset = TAG.size.next_multiple_of(union_align);
        let align = TAG.align.max(union_align);
        let size = payload_offset
            .checked_add(union_size)
            .and_then(|s| s.checked_next_multiple_of(align))
            .ok_or_else(too_large)?;
        Ok(VariantLayout {
            layout: Layout { size, align },
            payload_offset,
            cases: cases
                .into_iter()
                .map(|c| c.offsets.iter().map(|o| payload_offset + o).collect())
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Field, MemSpace, ScalarType, VariantCase};
    use std::mem::{align_of, offset_of, size_of};

    fn field(name: &str, ty: Type) -> Field {
        Field {
            name: name.into(),
            ty,
        }
    }

    fn rec(name: &str, fields: Vec<Field>) -> RecordDef {
        RecordDef {
            name: name.into(),
            fields,
        }
    }

    fn local(elem: Type, n: u32) -> Type {
        Type::Array {
            elem: std::sync::Arc::new(elem),
            space: MemSpace::Local,
            len: Some(n),
        }
    }

    #[allow(dead_code)]
    #[repr(C)]
    struct P {
        a: bool,
        b: f64,
        c: i32,
    }

    /// A 2-lane vector: aligned to its size.
    #[allow(dead_code)]
    #[repr(C, align(16))]
    struct U64x2([u64; 2]);

    #[allow(dead_code)]
    #[repr(C)]
    struct Q {
        h: u16,
        p: P,
        x: [f32; 3],
        v: U64x2,
        z: u8,
    }

    #[allow(dead_code)]
    #[repr(C)]
    struct Empty {}

    #[allow(dead_code)]
    #[repr(C)]
    struct HasEmpty {
        a: u8,
        e: Empty,
        b: u32,
    }

    fn records() -> Vec<RecordDef> {
        vec![
            rec(
                "P",
                vec![
                    field("a", Type::BOOL),
                    field("b", Type::F64),
                    field("c", Type::I32),
                ],
            ),
            rec(
                "Q",
                vec![
                    field("h", Type::F16),
                    field("p", Type::Record("P".into())),
                    field("x", local(Type::F32, 3)),
                    field(
                        "v",
                        Type::Vector {
                            elem: ScalarType::U64,
                            lanes: 2,
                        },
                    ),
                    field("z", Type::BOOL),
                ],
            ),
            rec("Empty", vec![]),
            rec(
                "HasEmpty",
                vec![
                    field("a", Type::BOOL),
                    field("e", Type::Record("Empty".into())),
                    field("b", Type::U32),
                ],
            ),
        ]
    }

    fn of_rust<T>() -> Layout {
        Layout {
            size: size_of::<T>() as u64,
            align: align_of::<T>() as u64,
        }
    }

    #[test]
    fn records_are_laid_out_as_repr_c_structs() {
        let records = records();
        let l = Layouts::new(&records, &[]);
        let p = l.record("P").unwrap();
        assert_eq!(p.layout, of_rust::<P>());
        assert_eq!(
            p.offsets,
            [offset_of!(P, a), offset_of!(P, b), offset_of!(P, c)].map(|o| o as u64)
        );
        let q = l.record("Q").unwrap();
        assert_eq!(q.layout, of_rust::<Q>());
        assert_eq!(
            q.offsets,
            [
                offset_of!(Q, h),
                offset_of!(Q, p),
                offset_of!(Q, x),
                offset_of!(Q, v),
                offset_of!(Q, z)
            ]
            .map(|o| o as u64)
        );
        assert_eq!(
            l.layout(&Type::Record("Empty".into())),
            Ok(of_rust::<Empty>())
        );
        let h = l.record("HasEmpty").unwrap();
        assert_eq!(h.layout, of_rust::<HasEmpty>());
        assert_eq!(h.offsets[2], offset_of!(HasEmpty, b) as u64);
        assert_eq!(
            l.field_offset("Q", "v").unwrap(),
            Some((offset_of!(Q, v) as u64, &records[1].fields[3].ty))
        );
        assert_eq!(l.field_offset("Q", "nope").unwrap(), None);
        assert_eq!(
            l.layout(&local(Type::Record("P".into()), 4)),
            Ok(of_rust::<[P; 4]>())
        );
    }

    #[allow(dead_code)]
    #[repr(C, u32)]
    enum Shape {
        Circle(f32),
        Rect(u8, f64),
        Dot,
        Pair(P, u16),
    }

    /// Fieldless: Rust takes only `repr(u32)` here, which lays it out as the tag alone.
    #[allow(dead_code)]
    #[repr(u32)]
    enum Flag {
        Off,
        On,
    }

    #[allow(dead_code)]
    #[repr(C, u32)]
    enum Small {
        A(u8),
        B(bool, bool),
    }

    /// The offset of a payload value inside `v`.
    fn at<T, F>(v: &T, f: &F) -> u64 {
        (f as *const F as usize - v as *const T as usize) as u64
    }

    fn case(name: &str, payload: Vec<Type>) -> VariantCase {
        VariantCase {
            name: name.into(),
            payload,
        }
    }

    #[test]
    fn variants_are_laid_out_as_repr_c_u32_enums() {
        let records = records();
        let variants = vec![
            VariantDef {
                name: "Shape".into(),
                cases: vec![
                    case("Circle", vec![Type::F32]),
                    case("Rect", vec![Type::BOOL, Type::F64]),
                    case("Dot", vec![]),
                    case("Pair", vec![Type::Record("P".into()), Type::F16]),
                ],
            },
            VariantDef {
                name: "Flag".into(),
                cases: vec![case("Off", vec![]), case("On", vec![])],
            },
            VariantDef {
                name: "Small".into(),
                cases: vec![
                    case("A", vec![Type::BOOL]),
                    case("B", vec![Type::BOOL, Type::BOOL]),
                ],
            },
        ];
        let l = Layouts::new(&records, &variants);

        let shape = l.variant("Shape").unwrap();
        assert_eq!(shape.layout, of_rust::<Shape>());
        let circle = Shape::Circle(1.0);
        let Shape::Circle(r) = &circle else { panic!() };
        assert_eq!(shape.cases[0], [at(&circle, r)]);
        let rect = Shape::Rect(1, 2.0);
        let Shape::Rect(a, b) = &rect else { panic!() };
        assert_eq!(shape.cases[1], [at(&rect, a), at(&rect, b)]);
        assert!(shape.cases[2].is_empty());
        let pair = Shape::Pair(
            P {
                a: true,
                b: 0.0,
                c: 0,
            },
            7,
        );
        let Shape::Pair(p, h) = &pair else { panic!() };
        assert_eq!(shape.cases[3], [at(&pair, p), at(&pair, h)]);
        assert_eq!(shape.payload_offset, 8);

        assert_eq!(l.variant("Flag").unwrap().layout, of_rust::<Flag>());
        let small = l.variant("Small").unwrap();
        assert_eq!(small.layout, of_rust::<Small>());
        let b = Small::B(true, false);
        let Small::B(x, y) = &b else { panic!() };
        assert_eq!(small.cases[1], [at(&b, x), at(&b, y)]);
        assert_eq!(
            l.layout(&local(Type::Variant("Shape".into()), 3)),
            Ok(of_rust::<[Shape; 3]>())
        );
    }

    #[test]
    fn what_has_no_layout() {
        let records = vec![rec("R", vec![field("r", Type::Record("R".into()))])];
        let l = Layouts::new(&records, &[]);
        assert_eq!(
            l.layout(&Type::global_array(Type::F32)),
            Err(LayoutError::Unsized(Type::global_array(Type::F32)))
        );
        assert_eq!(
            l.layout(&Type::Record("Nope".into())),
            Err(LayoutError::Undefined("Nope".into()))
        );
        assert_eq!(
            l.layout(&Type::Record("R".into())),
            Err(LayoutError::TooDeep("R".into()))
        );
        assert_eq!(
            l.layout(&local(local(Type::U64, u32::MAX), u32::MAX))
                .map_err(|e| matches!(e, LayoutError::TooLarge(_))),
            Err(true)
        );
    }
}
