//! The call graph among helper functions: GPUs have no call stack to speak of, so recursion is
//! rejected.

use crate::visit::for_each_expr;
use crate::{Block, ExprKind, Kernel};

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
