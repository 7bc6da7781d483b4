//! IR types as naga types, host layouts, and the scalar-parameter block ABI.

use super::build::Gen;
use crate::{CodegenError, Target};
use naga::{ArraySize, Handle, Scalar, ScalarKind, Span, StructMember, TypeInner};
use spoc_ir::layout::Layouts;
use spoc_ir::{Kernel, MemSpace, ScalarType, Type};
use std::num::NonZeroU32;

/// One non-buffer parameter's place in the scalar-parameter block (binding 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    /// Index of the parameter in `Kernel::params`.
    pub param: usize,
    /// The parameter's name.
    pub name: String,
    /// Byte offset in the block.
    pub offset: u32,
    /// Size in bytes (4 for `bool`, stored as a `u32` 0/1; `#[repr(C)]` size otherwise).
    pub size: u32,
}

/// The scalar-parameter block of a kernel: where each non-buffer parameter goes, and the
/// block's size in bytes (0 when the kernel has no scalar parameter, in which case no block is
/// bound). The layout is that of a `#[repr(C)]` struct of those parameters in order, with `bool`
/// widened to a `u32`.
///
/// # Errors
/// [`CodegenError::Unsupported`] for a record parameter holding a `bool` (no 1-byte `bool` in
/// shader memory), naming `target`.
pub fn scalar_params_layout(
    target: Target,
    kernel: &Kernel,
) -> Result<(Vec<ParamSlot>, u32), CodegenError> {
    let mut slots = Vec::new();
    let (mut offset, mut align) = (0u32, 1u32);
    for (i, p) in kernel.params.iter().enumerate() {
        if p.is_buffer() {
            continue;
        }
        let (size, a) = if p.ty == Type::BOOL {
            (4, 4)
        } else {
            if contains_bool(kernel, &p.ty) {
                return Err(CodegenError::Unsupported {
                    kernel: kernel.name.clone(),
                    target: target.backend_name(),
                    node: format!(
                        "parameter `{}` of type `{}`, which holds a `bool`",
                        p.name, p.ty
                    ),
                    capability: "a 1-byte `bool` in shader memory (use an integer field)".into(),
                });
            }
            host_layout(kernel, &p.ty)
        };
        offset = offset.next_multiple_of(a);
        slots.push(ParamSlot {
            param: i,
            name: p.name.clone(),
            offset,
            size,
        });
        offset += size;
        align = align.max(a);
    }
    Ok((slots, offset.next_multiple_of(align)))
}

/// `(size, alignment)` in bytes of a value of `ty` in memory, as [`spoc_ir::layout`] lays it out
/// (`#[repr(C)]`), except for variants: SPIR-V has no unions, so a variant's value type here is
/// a struct of a `u32` tag followed by every case's payload ([`variant_fields`]), laid out by the
/// same struct rule. Variants never reach memory the host sees (records, buffers and parameters
/// hold none), so only this module's own local arrays of variants use that layout. Global arrays
/// and `()` take no room.
pub(super) fn host_layout(kernel: &Kernel, ty: &Type) -> (u32, u32) {
    let layouts = Layouts::of(kernel);
    let l = match ty {
        Type::Variant(name) => layouts
            .members(&variant_fields(kernel, name))
            .map(|s| s.layout),
        Type::Array {
            elem, len: Some(n), ..
        } => {
            let (s, a) = host_layout(kernel, elem);
            return (s * n, a);
        }
        _ => layouts.layout(ty),
    };
    l.map_or((0, 1), |l| (l.size as u32, l.align as u32))
}

/// The member types of a variant's struct: the `u32` tag, then each case's payload in order.
pub(super) fn variant_fields(kernel: &Kernel, name: &str) -> Vec<Type> {
    let mut out = vec![Type::U32];
    if let Some(v) = kernel.variant(name) {
        for c in &v.cases {
            out.extend(c.payload.iter().cloned());
        }
    }
    out
}

/// The member index of payload `k` of case `case` in a variant's struct.
pub(super) fn variant_member(kernel: &Kernel, name: &str, case: &str, k: usize) -> Option<u32> {
    let v = kernel.variant(name)?;
    let mut idx = 1u32;
    for c in &v.cases {
        if c.name == case {
            return (k < c.payload.len()).then_some(idx + k as u32);
        }
        idx += c.payload.len() as u32;
    }
    None
}

/// The tag of case `case` of variant `name` (its position).
pub(super) fn variant_tag(kernel: &Kernel, name: &str, case: &str) -> Option<u32> {
    kernel.variant(name)?.case_index(case).map(|p| p as u32)
}

/// True if a value of `ty` holds a `bool` somewhere.
pub(super) fn contains_bool(kernel: &Kernel, ty: &Type) -> bool {
    match ty {
        Type::Scalar(s) => *s == ScalarType::Bool,
        Type::Record(n) => kernel
            .record(n)
            .is_some_and(|r| r.fields.iter().any(|f| contains_bool(kernel, &f.ty))),
        Type::Variant(_) => true,
        Type::Array { elem, .. } => contains_bool(kernel, elem),
        Type::Vector { elem, .. } => *elem == ScalarType::Bool,
        Type::Unit | Type::Pending(_) => false,
    }
}

/// The naga scalar of an IR scalar type.
pub(super) fn scalar(s: ScalarType) -> Scalar {
    match s {
        ScalarType::Bool => Scalar::BOOL,
        ScalarType::I32 => Scalar::I32,
        ScalarType::I64 => Scalar::I64,
        ScalarType::U32 => Scalar::U32,
        ScalarType::U64 => Scalar::U64,
        ScalarType::F16 => Scalar::F16,
        // Refused by `check_scalar` before any type is made; the bits, were it not.
        ScalarType::BF16 => Scalar::U32,
        ScalarType::F32 => Scalar::F32,
        ScalarType::F64 => Scalar::F64,
    }
}

/// The unsigned integer scalar of the same width as `s`.
pub(super) fn unsigned_of(s: ScalarType) -> ScalarType {
    match s {
        ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => ScalarType::U64,
        _ => ScalarType::U32,
    }
}

impl Gen<'_> {
    /// Checks that the target and device can hold values of scalar type `s`.
    pub(super) fn check_scalar(&mut self, s: ScalarType) -> Result<(), CodegenError> {
        use naga::valid::Capabilities as C;
        match s {
            ScalarType::F64 => {
                self.require(C::FLOAT64, "`f64` values", "shaderFloat64 (caps.fp64)")
            }
            ScalarType::I64 | ScalarType::U64 => self.require(
                C::SHADER_INT64,
                &format!("`{s}` values"),
                "64-bit integers (shaderInt64)",
            ),
            ScalarType::F16 => self.require(
                C::SHADER_FLOAT16,
                "`f16` values",
                "16-bit floats (shaderFloat16 + storageBuffer16BitAccess)",
            ),
            // naga has no 16-bit integer type to hold bfloat16 bits in, and no bfloat16 type.
            ScalarType::BF16 => Err(self.unsupported(
                "`bf16` values",
                "bfloat16 storage, which naga's IR cannot express (no 16-bit integer or bfloat16 type)",
            )),
            _ => Ok(()),
        }
    }

    /// The naga type of a scalar.
    pub(super) fn scalar_ty(&mut self, s: ScalarType) -> Result<Handle<naga::Type>, CodegenError> {
        self.check_scalar(s)?;
        Ok(self.inner_ty(TypeInner::Scalar(scalar(s))))
    }

    /// Inserts (or finds) an unnamed type.
    pub(super) fn inner_ty(&mut self, inner: TypeInner) -> Handle<naga::Type> {
        self.module
            .types
            .insert(naga::Type { name: None, inner }, Span::UNDEFINED)
    }

    /// `vec3<u32>`, the type of the 3-axis builtins.
    pub(super) fn uvec3_ty(&mut self) -> Handle<naga::Type> {
        self.inner_ty(TypeInner::Vector {
            size: naga::VectorSize::Tri,
            scalar: Scalar::U32,
        })
    }

    /// The naga type of a value of IR type `ty` (a scalar, record, variant, vector or local
    /// array; never a global or shared array, which are variables only).
    pub(super) fn value_ty(&mut self, ty: &Type) -> Result<Handle<naga::Type>, CodegenError> {
        if let Some(h) = self.value_types.get(ty) {
            return Ok(*h);
        }
        let h = match ty {
            Type::Scalar(s) => self.scalar_ty(*s)?,
            // 2 and 4 lanes: a naga vector (`vec4<f32>`: size 16, aligned to 16 in std430,
            // as `spoc_ir::layout` lays the vector out), which one load or store moves. 3 lanes
            // (`vec3` would be aligned to 16 and padded to 16 in an array, where the IR packs
            // 12 bytes aligned to the lane) and `bool` lanes: an array of the lanes.
            Type::Vector { elem, lanes } if matches!(lanes, 2 | 4) && *elem != ScalarType::Bool => {
                self.check_scalar(*elem)?;
                let size = if *lanes == 2 {
                    naga::VectorSize::Bi
                } else {
                    naga::VectorSize::Quad
                };
                self.inner_ty(TypeInner::Vector {
                    size,
                    scalar: scalar(*elem),
                })
            }
            Type::Vector { elem, lanes } => {
                let base = self.scalar_ty(*elem)?;
                self.array_ty(base, Some(*lanes as u32), elem.size_bytes() as u32)
            }
            Type::Array {
                elem,
                space: MemSpace::Local,
                len: Some(n),
            } => {
                let base = self.value_ty(elem)?;
                let (stride, _) = host_layout(self.kernel, elem);
                self.array_ty(base, Some(*n), stride)
            }
            Type::Record(name) => {
                let def = self
                    .kernel
                    .record(name)
                    .ok_or_else(|| self.bug(format!("record `{name}` is not defined")))?;
                let fields: Vec<(String, Type)> = def
                    .fields
                    .iter()
                    .map(|f| (f.name.clone(), f.ty.clone()))
                    .collect();
                self.struct_ty(name, &fields)?
            }
            Type::Variant(name) => {
                let def = self
                    .kernel
                    .variant(name)
                    .ok_or_else(|| self.bug(format!("variant `{name}` is not defined")))?;
                let mut fields = vec![("tag".to_string(), Type::U32)];
                for c in &def.cases {
                    for (k, t) in c.payload.iter().enumerate() {
                        fields.push((format!("{}_{k}", c.name), t.clone()));
                    }
                }
                self.struct_ty(name, &fields)?
            }
            Type::Unit | Type::Array { .. } | Type::Pending(_) => {
                return Err(self.bug(format!("`{ty}` has no value type")));
            }
        };
        self.value_types.insert(ty.clone(), h);
        Ok(h)
    }

    /// An array type (`len` `None`: runtime-sized).
    pub(super) fn array_ty(
        &mut self,
        base: Handle<naga::Type>,
        len: Option<u32>,
        stride: u32,
    ) -> Handle<naga::Type> {
        let size = match len.and_then(NonZeroU32::new) {
            Some(n) => ArraySize::Constant(n),
            None => ArraySize::Dynamic,
        };
        self.inner_ty(TypeInner::Array { base, size, stride })
    }

    /// A named struct with `#[repr(C)]` member offsets.
    pub(super) fn struct_ty(
        &mut self,
        name: &str,
        fields: &[(String, Type)],
    ) -> Result<Handle<naga::Type>, CodegenError> {
        let l = Layouts::of(self.kernel)
            .members(fields.iter().map(|(_, t)| t))
            .map_err(|e| self.bug(format!("struct `{name}` has no layout: {e}")))?;
        let (offsets, span) = (l.offsets, l.layout.size as u32);
        let mut members = Vec::with_capacity(fields.len());
        for ((n, t), offset) in fields.iter().zip(offsets) {
            members.push(StructMember {
                name: Some(n.clone()),
                ty: self.value_ty(t)?,
                binding: None,
                offset: offset as u32,
            });
        }
        Ok(self.module.types.insert(
            naga::Type {
                name: Some(name.to_string()),
                inner: TypeInner::Struct { members, span },
            },
            Span::UNDEFINED,
        ))
    }

    /// The element type of a buffer or shared array in memory: the value type, or
    /// `atomic<T>` when the array is an atomic target.
    pub(super) fn elem_ty(
        &mut self,
        elem: &Type,
        atomic: bool,
    ) -> Result<Handle<naga::Type>, CodegenError> {
        match (atomic, elem) {
            (true, Type::Scalar(s)) => {
                self.check_scalar(*s)?;
                Ok(self.inner_ty(TypeInner::Atomic(scalar(*s))))
            }
            _ => self.value_ty(elem),
        }
    }

    /// The scalar kind of an IR scalar type (for `As` conversions).
    pub(super) fn kind(s: ScalarType) -> ScalarKind {
        scalar(s).kind
    }
}
