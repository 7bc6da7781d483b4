//! Facts about a kernel the runtime needs before launching it, computed once per kernel: the
//! intrinsics it calls, the layout of its types, its static shared memory.

use spoc_ir::{ExprKind, Intrinsic, Kernel, ScalarType, Type};
use std::collections::HashSet;

/// Size and alignment in bytes of a value of `ty` in memory ([`spoc_ir::layout`]: `#[repr(C)]`
/// records, `#[repr(C, u32)]` variants), or `None` for types without a fixed layout (global
/// buffers, launch-sized arrays).
pub(crate) fn layout(kernel: &Kernel, ty: &Type) -> Option<(usize, usize)> {
    let l = spoc_ir::layout::Layouts::of(kernel).layout(ty).ok()?;
    Some((
        usize::try_from(l.size).ok()?,
        usize::try_from(l.align).ok()?,
    ))
}

/// Bytes of the kernel's statically sized shared arrays.
pub(crate) fn static_shared_bytes(kernel: &Kernel) -> usize {
    kernel
        .shared
        .iter()
        .filter_map(|s| {
            let n = s.len? as usize;
            let (size, _) = layout(kernel, &s.elem)?;
            size.checked_mul(n)
        })
        .fold(0usize, |a, b| a.saturating_add(b))
}

/// Every intrinsic the kernel and its helpers call.
pub(crate) fn intrinsics(kernel: &Kernel) -> HashSet<Intrinsic> {
    let mut out = HashSet::new();
    for body in spoc_ir::visit::bodies(kernel) {
        spoc_ir::visit::for_each_expr(body, &mut |e| {
            if let ExprKind::Intrinsic { intrinsic, .. } = &e.kind {
                out.insert(*intrinsic);
            }
        });
    }
    out
}

/// The Rust type a scalar buffer element or scalar parameter corresponds to.
pub(crate) fn scalar_type_id(s: ScalarType) -> Option<std::any::TypeId> {
    use std::any::TypeId;
    Some(match s {
        ScalarType::Bool => TypeId::of::<bool>(),
        ScalarType::I32 => TypeId::of::<i32>(),
        ScalarType::I64 => TypeId::of::<i64>(),
        ScalarType::U32 => TypeId::of::<u32>(),
        ScalarType::U64 => TypeId::of::<u64>(),
        ScalarType::F32 => TypeId::of::<f32>(),
        ScalarType::F64 => TypeId::of::<f64>(),
        // Storage-only half floats: any 2-byte type (u16 bits, a `half::f16`) is accepted.
        ScalarType::F16 | ScalarType::BF16 => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spoc_ir::{Field, MemSpace, RecordDef};

    fn kernel_with_records(records: Vec<RecordDef>) -> Kernel {
        Kernel {
            name: "k".into(),
            params: vec![],
            vars: vec![],
            shared: vec![],
            body: vec![],
            records,
            variants: vec![],
            functions: vec![],
        }
    }

    #[test]
    fn record_layout_is_repr_c() {
        let k = kernel_with_records(vec![
            RecordDef {
                name: "P".into(),
                fields: vec![
                    Field {
                        name: "a".into(),
                        ty: Type::Scalar(ScalarType::Bool),
                    },
                    Field {
                        name: "b".into(),
                        ty: Type::F64,
                    },
                    Field {
                        name: "c".into(),
                        ty: Type::I32,
                    },
                ],
            },
            RecordDef {
                name: "Q".into(),
                fields: vec![
                    Field {
                        name: "p".into(),
                        ty: Type::Record("P".into()),
                    },
                    Field {
                        name: "x".into(),
                        ty: Type::Array {
                            elem: std::sync::Arc::new(Type::F32),
                            space: MemSpace::Local,
                            len: Some(3),
                        },
                    },
                ],
            },
        ]);
        #[repr(C)]
        struct P {
            _a: bool,
            _b: f64,
            _c: i32,
        }
        #[repr(C)]
        struct Q {
            _p: P,
            _x: [f32; 3],
        }
        assert_eq!(
            layout(&k, &Type::Record("P".into())),
            Some((std::mem::size_of::<P>(), 8))
        );
        assert_eq!(
            layout(&k, &Type::Record("Q".into())),
            Some((std::mem::size_of::<Q>(), 8))
        );
        assert_eq!(layout(&k, &Type::Record("Nope".into())), None);
    }
}
