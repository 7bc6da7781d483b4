//! Memory layout of IR types, as `#[repr(C)]` lays them out.
//!
//! - scalars: their size, aligned to their size (`bool` is one byte);
//! - records: fields in declaration order, each at the next multiple of its alignment; the
//!   record's alignment is its largest field's, its size rounded up to it;
//! - vectors: `lanes` packed scalars, aligned to the scalar (as spoc's runtime lays them out);
//! - fixed-length arrays: `len` elements, aligned to the element.
//!
//! Variants and unsized arrays have no memory layout here.

use super::Ctx;
use crate::CodegenError;
use spoc_ir::Type;

/// Size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub size: u64,
    pub align: u64,
}

fn round_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

impl Ctx<'_> {
    /// The layout of `ty`, or `Unsupported` for types that have none in memory.
    pub(crate) fn layout(&self, ty: &Type) -> Result<Layout, CodegenError> {
        match ty {
            Type::Unit => Ok(Layout { size: 0, align: 1 }),
            Type::Scalar(s) => {
                let n = s.size_bytes() as u64;
                Ok(Layout { size: n, align: n })
            }
            Type::Vector { elem, lanes } => {
                let n = elem.size_bytes() as u64;
                Ok(Layout {
                    size: n * *lanes as u64,
                    align: n,
                })
            }
            Type::Record(name) => {
                let def = self.record(name)?;
                let (mut size, mut align) = (0u64, 1u64);
                for f in &def.fields {
                    let l = self.layout(&f.ty)?;
                    size = round_up(size, l.align) + l.size;
                    align = align.max(l.align);
                }
                Ok(Layout {
                    size: round_up(size, align),
                    align,
                })
            }
            Type::Array {
                elem, len: Some(n), ..
            } => {
                let l = self.layout(elem)?;
                Ok(Layout {
                    size: l.size * *n as u64,
                    align: l.align,
                })
            }
            Type::Array { len: None, .. } => Err(self.unsupported(
                format!("a value of type `{ty}` in memory"),
                "a known length",
            )),
            Type::Variant(v) => Err(self.unsupported(
                format!("a value of the variant type `{v}` in memory (a local array of variants)"),
                "a memory layout for variants (variants live in registers only)",
            )),
        }
    }

    /// Byte offset of field `field` in record `record`, and the field's type.
    pub(crate) fn field_offset(
        &self,
        record: &str,
        field: &str,
    ) -> Result<(u64, Type), CodegenError> {
        let def = self.record(record)?;
        let mut off = 0u64;
        for f in &def.fields {
            let l = self.layout(&f.ty)?;
            off = round_up(off, l.align);
            if f.name == field {
                return Ok((off, f.ty.clone()));
            }
            off += l.size;
        }
        Err(self.unsupported(
            format!("field `{field}` of record `{record}`"),
            "a field of that name",
        ))
    }
}
