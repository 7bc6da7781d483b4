//! Facts about a kernel the runtime needs before launching it, computed once per kernel: the
//! intrinsics it calls, the layout of its types, its static shared memory.

use spoc_ir::{Block, Expr, ExprKind, Intrinsic, Kernel, LValue, ScalarType, StmtKind, Type};
use std::collections::HashSet;

/// Size and alignment in bytes of a value of `ty` in memory (`#[repr(C)]` for records), or
/// `None` for types without a fixed layout (global buffers, variants).
pub(crate) fn layout(kernel: &Kernel, ty: &Type) -> Option<(usize, usize)> {
    layout_depth(kernel, ty, 0)
}

fn layout_depth(kernel: &Kernel, ty: &Type, depth: u32) -> Option<(usize, usize)> {
    if depth > 64 {
        return None; // a recursive record: the validator rejects it; do not overflow the stack
    }
    match ty {
        Type::Unit => Some((0, 1)),
        Type::Scalar(s) => Some((s.size_bytes(), s.size_bytes())),
        Type::Record(name) => {
            let rec = kernel.record(name)?;
            let (mut size, mut align) = (0usize, 1usize);
            for f in &rec.fields {
                let (fs, fa) = layout_depth(kernel, &f.ty, depth + 1)?;
                size = size.checked_next_multiple_of(fa)?.checked_add(fs)?;
                align = align.max(fa);
            }
            Some((size.checked_next_multiple_of(align)?, align))
        }
        Type::Array {
            elem, len: Some(n), ..
        } => {
            let (es, ea) = layout_depth(kernel, elem, depth + 1)?;
            Some((es.checked_mul(*n as usize)?, ea))
        }
        Type::Vector { elem, lanes } => {
            Some((elem.size_bytes() * *lanes as usize, elem.size_bytes()))
        }
        Type::Array { len: None, .. } | Type::Variant(_) => None,
    }
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
    block(&kernel.body, &mut out);
    for f in &kernel.functions {
        block(&f.body, &mut out);
    }
    out
}

fn block(b: &Block, out: &mut HashSet<Intrinsic>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { init, .. } => init.iter().for_each(|e| expr(e, out)),
            StmtKind::Assign { target, value } => {
                lvalue(target, out);
                expr(value, out);
            }
            StmtKind::Block(b) => block(b, out),
            StmtKind::If { cond, then, els } => {
                expr(cond, out);
                block(then, out);
                els.iter().for_each(|b| block(b, out));
            }
            StmtKind::While { cond, body } => {
                expr(cond, out);
                block(body, out);
            }
            StmtKind::For {
                start,
                end,
                step,
                body,
                ..
            } => {
                for e in [start, end, step] {
                    expr(e, out);
                }
                block(body, out);
            }
            StmtKind::Match { scrutinee, arms } => {
                expr(scrutinee, out);
                arms.iter().for_each(|(_, b)| block(b, out));
            }
            StmtKind::Return(e) => e.iter().for_each(|e| expr(e, out)),
            StmtKind::Expr(e) => expr(e, out),
            StmtKind::Pragma { body, .. } => block(body, out),
            StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Barrier
            | StmtKind::WarpBarrier
            | StmtKind::MemFence(_) => {}
        }
    }
}

fn lvalue(l: &LValue, out: &mut HashSet<Intrinsic>) {
    match l {
        LValue::Var(_) => {}
        LValue::Index { base, index } => {
            lvalue(base, out);
            expr(index, out);
        }
        LValue::Field { base, .. } => lvalue(base, out),
    }
}

fn expr(e: &Expr, out: &mut HashSet<Intrinsic>) {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Var(_) => {}
        ExprKind::Index { array, index } => {
            expr(array, out);
            expr(index, out);
        }
        ExprKind::Field { base, .. } => expr(base, out),
        ExprKind::Unary { operand, .. } => expr(operand, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            expr(lhs, out);
            expr(rhs, out);
        }
        ExprKind::Intrinsic { intrinsic, args } => {
            out.insert(*intrinsic);
            args.iter().for_each(|a| expr(a, out));
        }
        ExprKind::Cast { value, .. } => expr(value, out),
        ExprKind::Call { args, .. } | ExprKind::RecordLit { fields: args, .. } => {
            args.iter().for_each(|a| expr(a, out))
        }
        ExprKind::VariantLit { payload, .. } => payload.iter().for_each(|a| expr(a, out)),
        ExprKind::VectorLit(items) => items.iter().for_each(|a| expr(a, out)),
        ExprKind::Select { cond, then, els } => {
            for x in [cond, then, els] {
                expr(x, out);
            }
        }
        ExprKind::Match { scrutinee, arms } => {
            expr(scrutinee, out);
            arms.iter().for_each(|(_, a)| expr(a, out));
        }
        ExprKind::Len(a) => expr(a, out),
        ExprKind::ArrayRepeat { value, .. } => expr(value, out),
    }
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
        ScalarType::F16 => return None,
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
                            elem: Box::new(Type::F32),
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
