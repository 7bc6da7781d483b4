//! Aliasing at helper calls: a call may not pass one array to two parameters of the helper when
//! the helper may write through either of them (a `&mut [T]` buffer, a shared array), as Rust's
//! borrow checker refuses `shift(out, out, n)` for `fn shift(src: &[u32], dst: &mut [u32], n:
//! usize)`. Passing one array to two parameters the helper only reads stays allowed. So inside a
//! helper, a buffer parameter it does not write is memory that no store of the helper's own
//! changes (DESIGN.md §9 says which optimisations use that).

use crate::visit::{walk_expr, walk_stmt, Visit};
use crate::{Block, Expr, ExprKind, Kernel, MemSpace, Param, Stmt, Type, VarDecl, VarId};

/// A call that passes one array to two parameters, one of which the callee writes through.
#[derive(Debug)]
pub(super) struct Aliased {
    /// The helper called.
    pub callee: String,
    /// The array's name in the caller.
    pub buffer: String,
    /// The parameter the helper writes through.
    pub written: String,
    /// The other parameter the array is passed as.
    pub other: String,
    /// The source line of the statement holding the call, when known.
    pub line: Option<u32>,
}

/// The first call in `body` (a function whose variables are `vars`) that passes one array to two
/// parameters of the callee, one of them written through, if any.
pub(super) fn check_calls(kernel: &Kernel, vars: &[VarDecl], body: &Block) -> Option<Aliased> {
    let mut v = Calls {
        kernel,
        vars,
        line: None,
        found: None,
    };
    v.visit_block(body);
    v.found
}

struct Calls<'k> {
    kernel: &'k Kernel,
    vars: &'k [VarDecl],
    line: Option<u32>,
    found: Option<Aliased>,
}

impl<'k> Visit<'k> for Calls<'k> {
    fn visit_stmt(&mut self, s: &'k Stmt) {
        if self.found.is_some() {
            return;
        }
        let outer = self.line;
        if let Some(l) = s.loc {
            self.line = Some(l.line);
        }
        walk_stmt(self, s);
        self.line = outer;
    }

    fn visit_expr(&mut self, e: &'k Expr) {
        if self.found.is_some() {
            return;
        }
        walk_expr(self, e);
        if let ExprKind::Call { func, args } = &e.kind {
            if self.found.is_none() {
                self.found = self.call(func, args);
            }
        }
    }
}

impl Calls<'_> {
    /// The aliasing of the call of `func` with `args`, if any (a call of an unknown helper or
    /// with the wrong arity is the type checks' to report).
    fn call(&self, func: &str, args: &[Expr]) -> Option<Aliased> {
        let f = self.kernel.function(func)?;
        if f.params.len() != args.len() {
            return None;
        }
        // Each array argument's variables (the array it is, or may be).
        let roots: Vec<Vec<VarId>> = f
            .params
            .iter()
            .zip(args)
            .map(|(p, a)| {
                let mut r = Vec::new();
                if p.is_buffer() {
                    roots(a, &mut r);
                }
                r
            })
            .collect();
        for j in 0..args.len() {
            for i in 0..j {
                let Some(&v) = roots[i].iter().find(|v| roots[j].contains(v)) else {
                    continue;
                };
                let (pi, pj) = (&f.params[i], &f.params[j]);
                let (written, other) = if writes(pi) {
                    (pi, pj)
                } else if writes(pj) {
                    (pj, pi)
                } else {
                    continue;
                };
                let buffer = self
                    .vars
                    .get(v.0 as usize)
                    .map_or_else(|| format!("v{}", v.0), |d| d.name.clone());
                return Some(Aliased {
                    callee: func.to_owned(),
                    buffer,
                    written: written.name.clone(),
                    other: other.name.clone(),
                    line: self.line,
                });
            }
        }
        None
    }
}

/// Pushes onto `out` the variables whose array `e` may be: the root of an index or field
/// projection, either branch of a select, any arm of a `match`. A fresh array (a literal, a
/// repeat) is none.
fn roots(e: &Expr, out: &mut Vec<VarId>) {
    match &e.kind {
        ExprKind::Var(v) if !out.contains(v) => out.push(*v),
        ExprKind::Index { array: base, .. } | ExprKind::Field { base, .. } => roots(base, out),
        ExprKind::Select { then, els, .. } => {
            roots(then, out);
            roots(els, out);
        }
        ExprKind::Match { arms, .. } => {
            for (_, a) in arms {
                roots(a, out);
            }
        }
        _ => {}
    }
}

/// True if the helper may write, through its parameter `p`, the caller's array: a `&mut [T]`
/// buffer, a shared array (always writable). A local array is passed by value (a helper that
/// changes it changes its own copy), so it aliases nothing.
fn writes(p: &Param) -> bool {
    match &p.ty {
        Type::Array {
            space: MemSpace::Global,
            ..
        } => p.mutable,
        Type::Array {
            space: MemSpace::Shared,
            ..
        } => true,
        _ => false,
    }
}
