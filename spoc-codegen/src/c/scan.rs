//! Read-only analyses of IR bodies the emitter needs: sub-expressions, effects, assigned
//! variables, `break`s that would be captured by a C `switch`.

use spoc_ir::{
    Block, Expr, ExprKind, Intrinsic, Kernel, LValue, MemSpace, Stmt, StmtKind, Type, VarId,
};
use std::collections::HashSet;

/// The direct sub-expressions of `e`, in evaluation order.
pub(crate) fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Var(_) => vec![],
        ExprKind::Index { array, index } => vec![array, index],
        ExprKind::Field { base, .. } => vec![base],
        ExprKind::Unary { operand, .. } => vec![operand],
        ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
        ExprKind::Intrinsic { args, .. } | ExprKind::Call { args, .. } => args.iter().collect(),
        ExprKind::Cast { value, .. } => vec![value],
        ExprKind::Select { cond, then, els } => vec![cond, then, els],
        ExprKind::Match { scrutinee, arms } => std::iter::once(&**scrutinee)
            .chain(arms.iter().map(|(_, a)| a))
            .collect(),
        ExprKind::Len(a) => vec![a],
        ExprKind::RecordLit { fields, .. } => fields.iter().collect(),
        ExprKind::VariantLit { payload, .. } => payload.iter().collect(),
        ExprKind::ArrayRepeat { value, .. } => vec![value],
        ExprKind::VectorLit(lanes) => lanes.iter().collect(),
    }
}

/// True if `pred` holds for `e` or any expression nested in it.
pub(crate) fn any_expr(e: &Expr, pred: &dyn Fn(&Expr) -> bool) -> bool {
    pred(e) || children(e).into_iter().any(|c| any_expr(c, pred))
}

/// True if evaluating `e` may write memory or order memory accesses: atomics, and calls of the
/// helpers in `impure` (see [`impure_functions`]).
pub(crate) fn effectful(e: &Expr, impure: &HashSet<String>) -> bool {
    any_expr(e, &|x| match &x.kind {
        ExprKind::Call { func, .. } => impure.contains(func),
        ExprKind::Intrinsic {
            intrinsic: Intrinsic::Atomic(_),
            ..
        } => true,
        _ => false,
    })
}

/// True if the value of `e` may change when memory is written: it reads a buffer or shared
/// array (directly or in a helper), or has effects itself. Locals cannot be written by a call
/// (helpers take them by value).
pub(crate) fn memory_dependent(e: &Expr, impure: &HashSet<String>) -> bool {
    effectful(e, impure)
        || any_expr(e, &|x| match &x.kind {
            ExprKind::Index { array, .. } => matches!(
                array.ty,
                Type::Array {
                    space: MemSpace::Global | MemSpace::Shared,
                    ..
                }
            ),
            ExprKind::Call { .. } => true,
            _ => false,
        })
}

/// The helpers whose calls may write memory or order memory accesses: those that assign an
/// element of a buffer or shared-array parameter, use an atomic or a fence, or call such a
/// helper.
pub(crate) fn impure_functions(kernel: &Kernel) -> HashSet<String> {
    let mut impure: HashSet<String> = HashSet::new();
    loop {
        let mut changed = false;
        for f in &kernel.functions {
            if impure.contains(&f.name) {
                continue;
            }
            let mut bad = false;
            for_each_stmt(&f.body, &mut |s| match &s.kind {
                StmtKind::MemFence(_) | StmtKind::WarpBarrier | StmtKind::Barrier => bad = true,
                StmtKind::Assign { target, .. } => {
                    let mut l = target;
                    while let LValue::Index { base, .. } | LValue::Field { base, .. } = l {
                        l = base;
                    }
                    if let LValue::Var(v) = l {
                        let ty = &f.vars[v.0 as usize].ty;
                        if matches!(
                            ty,
                            Type::Array {
                                space: MemSpace::Global | MemSpace::Shared,
                                ..
                            }
                        ) {
                            bad = true;
                        }
                    }
                }
                _ => {}
            });
            for_each_expr(&f.body, &mut |e| {
                if effectful(e, &impure) {
                    bad = true;
                }
            });
            if bad {
                impure.insert(f.name.clone());
                changed = true;
            }
        }
        if !changed {
            return impure;
        }
    }
}

/// Calls `f` on every expression of `block` and of the statements nested in it, sub-expressions
/// included.
pub(crate) fn for_each_expr(block: &Block, f: &mut dyn FnMut(&Expr)) {
    fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
        f(e);
        for c in children(e) {
            walk(c, f);
        }
    }
    fn place(l: &LValue, f: &mut dyn FnMut(&Expr)) {
        match l {
            LValue::Var(_) => {}
            LValue::Index { base, index } => {
                place(base, f);
                walk(index, f);
            }
            LValue::Field { base, .. } => place(base, f),
        }
    }
    for s in block {
        match &s.kind {
            StmtKind::Let { init, .. } => {
                if let Some(e) = init {
                    walk(e, f);
                }
            }
            StmtKind::Assign { target, value } => {
                place(target, f);
                walk(value, f);
            }
            StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => for_each_expr(b, f),
            StmtKind::If { cond, then, els } => {
                walk(cond, f);
                for_each_expr(then, f);
                if let Some(b) = els {
                    for_each_expr(b, f);
                }
            }
            StmtKind::While { cond, body } => {
                walk(cond, f);
                for_each_expr(body, f);
            }
            StmtKind::For {
                start,
                end,
                step,
                body,
                ..
            } => {
                walk(start, f);
                walk(end, f);
                walk(step, f);
                for_each_expr(body, f);
            }
            StmtKind::Match { scrutinee, arms } => {
                walk(scrutinee, f);
                for (_, b) in arms {
                    for_each_expr(b, f);
                }
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => walk(e, f),
            StmtKind::Return(None)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Barrier
            | StmtKind::WarpBarrier
            | StmtKind::MemFence(_) => {}
        }
    }
}

/// Calls `f` on every statement of `block`, nested ones included.
pub(crate) fn for_each_stmt(block: &Block, f: &mut dyn FnMut(&Stmt)) {
    for s in block {
        f(s);
        match &s.kind {
            StmtKind::Block(b)
            | StmtKind::Pragma { body: b, .. }
            | StmtKind::While { body: b, .. }
            | StmtKind::For { body: b, .. } => for_each_stmt(b, f),
            StmtKind::If { then, els, .. } => {
                for_each_stmt(then, f);
                if let Some(b) = els {
                    for_each_stmt(b, f);
                }
            }
            StmtKind::Match { arms, .. } => arms.iter().for_each(|(_, b)| for_each_stmt(b, f)),
            _ => {}
        }
    }
}

/// The variables some assignment of `block` writes (the root variable of each place).
pub(crate) fn assigned_vars(block: &Block) -> HashSet<VarId> {
    let mut out = HashSet::new();
    for_each_stmt(block, &mut |s| {
        if let StmtKind::Assign { target, .. } = &s.kind {
            let mut l = target;
            loop {
                match l {
                    LValue::Var(v) => {
                        out.insert(*v);
                        break;
                    }
                    LValue::Index { base, .. } | LValue::Field { base, .. } => l = base,
                }
            }
        }
    });
    out
}

/// True if `b` holds a `break` that leaves a loop enclosing `b` (not one of a loop inside `b`):
/// such a `break` cannot sit in a C `switch`, which would capture it.
pub(crate) fn escaping_break(b: &Block) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Break => true,
        StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => escaping_break(b),
        StmtKind::If { then, els, .. } => {
            escaping_break(then) || els.as_ref().is_some_and(escaping_break)
        }
        StmtKind::Match { arms, .. } => arms.iter().any(|(_, b)| escaping_break(b)),
        _ => false,
    })
}

/// True if type `ty` holds an `f64` (through records, variants, arrays and vectors).
pub(crate) fn type_has(kernel: &Kernel, ty: &Type, want: spoc_ir::ScalarType) -> bool {
    fn go(
        kernel: &Kernel,
        ty: &Type,
        want: spoc_ir::ScalarType,
        seen: &mut HashSet<String>,
    ) -> bool {
        match ty {
            Type::Unit => false,
            Type::Scalar(s) => *s == want,
            Type::Vector { elem, .. } => *elem == want,
            Type::Array { elem, .. } => go(kernel, elem, want, seen),
            Type::Record(n) => {
                if !seen.insert(n.clone()) {
                    return false;
                }
                kernel
                    .record(n)
                    .is_some_and(|r| r.fields.iter().any(|f| go(kernel, &f.ty, want, seen)))
            }
            Type::Variant(n) => {
                if !seen.insert(n.clone()) {
                    return false;
                }
                kernel.variant(n).is_some_and(|v| {
                    v.cases
                        .iter()
                        .any(|c| c.payload.iter().any(|t| go(kernel, t, want, seen)))
                })
            }
        }
    }
    go(kernel, ty, want, &mut HashSet::new())
}
