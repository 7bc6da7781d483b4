//! Read-only analyses of IR bodies the emitter needs: sub-expressions, effects, assigned
//! variables, `break`s that would be captured by a C `switch`.

use spoc_ir::idmap::IdSet;
pub(crate) use spoc_ir::visit::{any_expr, for_each_expr};
use spoc_ir::visit::{for_each_stmt, place_root, walk_stmt, Visit};
use spoc_ir::{Block, Expr, ExprKind, Intrinsic, Kernel, MemSpace, Stmt, StmtKind, Type, VarId};
use std::collections::HashSet;

/// True if evaluating `e` may write memory or order memory accesses: atomics, and calls of the
/// helpers in `impure` (see [`impure_functions`]).
pub(crate) fn effectful(e: &Expr, impure: &HashSet<String>) -> bool {
    any_expr(e, &mut |x| effectful_node(x, impure))
}

/// True if `e` itself (not looking into its operands) is an atomic or a call of a helper in
/// `impure`.
pub(crate) fn effectful_node(e: &Expr, impure: &HashSet<String>) -> bool {
    match &e.kind {
        ExprKind::Call { func, .. } => impure.contains(func),
        ExprKind::Intrinsic {
            intrinsic: Intrinsic::Atomic(_),
            ..
        } => true,
        _ => false,
    }
}

/// True if the value of `e` may change when memory is written: it reads a buffer or shared
/// array (directly or in a helper), or has effects itself. Locals cannot be written by a call
/// (helpers take them by value).
pub(crate) fn memory_dependent(e: &Expr, impure: &HashSet<String>) -> bool {
    effectful(e, impure)
        || any_expr(e, &mut |x| match &x.kind {
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
                    let ty = &f.vars[place_root(target).0 as usize].ty;
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

/// The variables some assignment of `block` writes (the root variable of each place).
pub(crate) fn assigned_vars(block: &Block) -> IdSet<VarId> {
    let mut out = IdSet::default();
    for_each_stmt(block, &mut |s| {
        if let StmtKind::Assign { target, .. } = &s.kind {
            out.insert(place_root(target));
        }
    });
    out
}

/// True if `b` holds a `break` that leaves a loop enclosing `b` (not one of a loop inside `b`):
/// such a `break` cannot sit in a C `switch`, which would capture it.
pub(crate) fn escaping_break(b: &Block) -> bool {
    struct Escaping(bool);
    impl Visit<'_> for Escaping {
        fn visit_stmt(&mut self, s: &Stmt) {
            match &s.kind {
                StmtKind::Break => self.0 = true,
                // A `break` in a nested loop leaves that loop.
                StmtKind::While { .. } | StmtKind::For(_) => {}
                _ if !self.0 => walk_stmt(self, s),
                _ => {}
            }
        }
        fn visit_expr(&mut self, _: &Expr) {}
        fn visit_lvalue(&mut self, _: &spoc_ir::LValue) {}
    }
    let mut v = Escaping(false);
    v.visit_block(b);
    v.0
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
            Type::Unit | Type::Pending(_) => false,
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
