//! The call graph among helper functions: GPUs have no call stack to speak of, so recursion is
//! rejected.

use crate::{Block, Expr, ExprKind, Kernel, LValue, StmtKind};

/// Calls `f` on every expression of `block`, nested ones included (in places too).
pub(super) fn for_each_expr(block: &Block, f: &mut dyn FnMut(&Expr)) {
    for s in block {
        match &s.kind {
            StmtKind::Let { init, .. } => {
                if let Some(e) = init {
                    walk_expr(e, f);
                }
            }
            StmtKind::Assign { target, value } => {
                walk_lvalue(target, f);
                walk_expr(value, f);
            }
            StmtKind::Block(b) => for_each_expr(b, f),
            StmtKind::If { cond, then, els } => {
                walk_expr(cond, f);
                for_each_expr(then, f);
                if let Some(b) = els {
                    for_each_expr(b, f);
                }
            }
            StmtKind::While { cond, body } => {
                walk_expr(cond, f);
                for_each_expr(body, f);
            }
            StmtKind::For {
                start,
                end,
                step,
                body,
                ..
            } => {
                walk_expr(start, f);
                walk_expr(end, f);
                walk_expr(step, f);
                for_each_expr(body, f);
            }
            StmtKind::Match { scrutinee, arms } => {
                walk_expr(scrutinee, f);
                for (_, b) in arms {
                    for_each_expr(b, f);
                }
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => walk_expr(e, f),
            StmtKind::Pragma { body, .. } => for_each_expr(body, f),
            StmtKind::Return(None)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Barrier
            | StmtKind::WarpBarrier
            | StmtKind::MemFence(_) => {}
        }
    }
}

fn walk_lvalue(l: &LValue, f: &mut dyn FnMut(&Expr)) {
    match l {
        LValue::Var(_) => {}
        LValue::Index { base, index } => {
            walk_lvalue(base, f);
            walk_expr(index, f);
        }
        LValue::Field { base, .. } => walk_lvalue(base, f),
    }
}

fn walk_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Var(_) => {}
        ExprKind::Index { array, index } => {
            walk_expr(array, f);
            walk_expr(index, f);
        }
        ExprKind::Field { base, .. } => walk_expr(base, f),
        ExprKind::Unary { operand, .. } => walk_expr(operand, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            walk_expr(lhs, f);
            walk_expr(rhs, f);
        }
        ExprKind::Intrinsic { args, .. }
        | ExprKind::Call { args, .. }
        | ExprKind::VectorLit(args)
        | ExprKind::RecordLit { fields: args, .. }
        | ExprKind::VariantLit { payload: args, .. } => {
            for a in args {
                walk_expr(a, f);
            }
        }
        ExprKind::Cast { value, .. } | ExprKind::ArrayRepeat { value, .. } => walk_expr(value, f),
        ExprKind::Select { cond, then, els } => {
            walk_expr(cond, f);
            walk_expr(then, f);
            walk_expr(els, f);
        }
        ExprKind::Match { scrutinee, arms } => {
            walk_expr(scrutinee, f);
            for (_, a) in arms {
                walk_expr(a, f);
            }
        }
        ExprKind::Len(a) => walk_expr(a, f),
    }
}

/// The helpers (by index in [`Kernel::functions`]) that `body` calls, in first-call order.
fn callees(kernel: &Kernel, body: &Block) -> Vec<usize> {
    let mut out = Vec::new();
    for_each_expr(body, &mut |e| {
        if let ExprKind::Call { func, .. } = &e.kind {
            if let Some(i) = kernel.functions.iter().position(|f| &f.name == func) {
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        }
    });
    out
}

/// Rejects call cycles among helpers; the error names the helper the cycle was entered through
/// and the cycle itself.
pub(super) fn check_no_recursion(kernel: &Kernel) -> Result<(), (String, String)> {
    let edges: Vec<Vec<usize>> = kernel
        .functions
        .iter()
        .map(|f| callees(kernel, &f.body))
        .collect();
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut state = vec![0u8; edges.len()];
    fn visit(
        i: usize,
        edges: &[Vec<usize>],
        state: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[i] = 1;
        path.push(i);
        for &j in &edges[i] {
            if state[j] == 1 {
                let start = path.iter().position(|&p| p == j).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(j);
                return Some(cycle);
            }
            if state[j] == 0 {
                if let Some(c) = visit(j, edges, state, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        state[i] = 2;
        None
    }
    for i in 0..edges.len() {
        if state[i] == 0 {
            if let Some(cycle) = visit(i, &edges, &mut state, &mut Vec::new()) {
                let names: Vec<String> = cycle
                    .iter()
                    .map(|&k| format!("`{}`", kernel.functions[k].name))
                    .collect();
                let first = kernel.functions[cycle[0]].name.clone();
                let msg = if cycle.len() == 2 {
                    format!(
                        "helper function `{first}` calls itself; recursion is not supported on \
                         GPUs (rewrite it as a loop)"
                    )
                } else {
                    format!(
                        "helper functions call each other recursively ({}); recursion is not \
                         supported on GPUs (rewrite it as a loop)",
                        names.join(" -> ")
                    )
                };
                return Err((first, msg));
            }
        }
    }
    Ok(())
}
