//! Memory layout of IR types for PTX: [`spoc_ir::layout`]'s `#[repr(C)]` rules, with PTX's one
//! restriction: variants live in registers only, so a variant in memory (a local array of
//! variants) is refused.

use super::Ctx;
use crate::CodegenError;
pub(crate) use spoc_ir::layout::Layout;
use spoc_ir::layout::{LayoutError, Layouts};
use spoc_ir::Type;

impl Ctx<'_> {
    /// The layout of `ty`, or `Unsupported` for types that have none in memory.
    pub(crate) fn layout(&self, ty: &Type) -> Result<Layout, CodegenError> {
        let mut t = ty;
        while let Type::Array {
            elem, len: Some(_), ..
        } = t
        {
            t = elem;
        }
        if let Type::Variant(v) = t {
            return Err(self.unsupported(
                format!("a value of the variant type `{v}` in memory (a local array of variants)"),
                "a memory layout for variants (variants live in registers only)",
            ));
        }
        Layouts::of(self.kernel)
            .layout(ty)
            .map_err(|e| self.layout_error(ty, e))
    }

    /// Byte offset of field `field` in record `record`, and the field's type.
    pub(crate) fn field_offset(
        &self,
        record: &str,
        field: &str,
    ) -> Result<(u64, Type), CodegenError> {
        match Layouts::of(self.kernel).field_offset(record, field) {
            Ok(Some((off, ty))) => Ok((off, ty.clone())),
            Ok(None) => Err(self.unsupported(
                format!("field `{field}` of record `{record}`"),
                "a field of that name",
            )),
            Err(e) => Err(self.layout_error(&Type::Record(record.into()), e)),
        }
    }

    fn layout_error(&self, ty: &Type, e: LayoutError) -> CodegenError {
        match e {
            LayoutError::Undefined(name) => self
                .record(&name)
                .err()
                .unwrap_or_else(|| self.unsupported(format!("type `{name}`"), "a definition")),
            LayoutError::Unsized(_) => self.unsupported(
                format!("a value of type `{ty}` in memory"),
                "a known length",
            ),
            e => self.unsupported(
                format!("a value of type `{ty}` in memory ({e})"),
                "a layout",
            ),
        }
    }
}
