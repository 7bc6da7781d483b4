//! Local arrays as registers: a local array that the kernel only ever indexes with constants
//! (typically after [`crate::unroll`] has turned its loops into straight-line code, as for the
//! register tile of a GEMM) becomes one local variable per element. For a target whose own
//! compiler does not do it (PTX: its generator gives every local array `.local` storage and
//! an address computation per access, which `ptxas` then has to undo), this is the scalar
//! replacement of aggregates that NVVM does for CUDA C. The meaning is unchanged: every index
//! is a compile-time constant within bounds, so no access could fault.

use crate::idmap::IdMap;
use crate::unroll::fold;
use crate::visit::{walk_expr, walk_expr_mut, walk_lvalue, walk_lvalue_mut, Visit, VisitMut};
use crate::{
    Block, Expr, ExprKind, Kernel, LValue, MemSpace, Stmt, StmtKind, Type, VarDecl, VarId,
};

/// `kernel` with its local arrays of at most `max_len` elements that qualify (see the
/// [module](self)) replaced by one local per element, or `None` if none qualifies. An array
/// qualifies when it is declared with `let a = [v; n]` where `v` is a constant or a variable,
/// and every other use of it is `a[k]` or `a[k] = …` with `k` a constant expression
/// ([`crate::unroll::trip_count`]'s folding: no wrapping) below its length.
pub fn promoted(kernel: &Kernel, max_len: u32) -> Option<Kernel> {
    let mut k = kernel.clone();
    promote(&mut k, max_len).then_some(k)
}

/// [`promoted`] in place; whether anything changed.
pub fn promote(k: &mut Kernel, max_len: u32) -> bool {
    let mut changed = body(&mut k.body, &mut k.vars, max_len);
    for f in &mut k.functions {
        changed |= body(&mut f.body, &mut f.vars, max_len);
    }
    changed
}

/// [`promoted`] on one function body with its variables; whether anything changed.
fn body(b: &mut Block, vars: &mut Vec<VarDecl>, max_len: u32) -> bool {
    let mut candidates: IdMap<VarId, u32> = vars
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match &d.ty {
            Type::Array {
                space: MemSpace::Local,
                len: Some(n),
                elem,
            } if d.kind == crate::VarKind::Local
                && *n <= max_len
                && !matches!(**elem, Type::Array { .. }) =>
            {
                Some((VarId(i as u32), *n))
            }
            _ => None,
        })
        .collect();
    if candidates.is_empty() {
        return false;
    }
    let mut uses = Uses {
        candidates: &mut candidates,
        declared: Vec::new(),
    };
    uses.visit_block(b);
    let declared = std::mem::take(&mut uses.declared);
    candidates.retain(|a, _| declared.contains(a));
    if candidates.is_empty() {
        return false;
    }
    // One fresh local per element.
    let mut elements: IdMap<VarId, Vec<VarId>> = IdMap::default();
    for (&a, &n) in &candidates {
        let d = vars[a.0 as usize].clone();
        let Type::Array { elem, .. } = &d.ty else {
            unreachable!("candidates are arrays")
        };
        let ids = (0..n)
            .map(|k| {
                let id = VarId(vars.len() as u32);
                vars.push(VarDecl {
                    name: format!("{}_{k}", d.name),
                    ty: (**elem).clone(),
                    mutable: d.mutable,
                    kind: crate::VarKind::Local,
                });
                id
            })
            .collect();
        elements.insert(a, ids);
    }
    let mut r = Replace {
        elements: &elements,
        vars,
    };
    r.visit_block_mut(b);
    true
}

/// The constant index of `a[index]` when it is within `len`.
fn const_index(index: &Expr, len: u32) -> Option<u32> {
    fold(index)
        .filter(|&k| (0..i128::from(len)).contains(&k))
        .map(|k| k as u32)
}

/// Drops from `candidates` every array used in any other way than declared from `[v; n]` and
/// indexed by in-bounds constants.
struct Uses<'a> {
    candidates: &'a mut IdMap<VarId, u32>,
    /// The candidates seen declared from `[v; n]`.
    declared: Vec<VarId>,
}

impl<'ir> Visit<'ir> for Uses<'_> {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        if let StmtKind::Let {
            var,
            init: Some(init),
        } = &s.kind
        {
            if self.candidates.contains_key(var) {
                let ok = matches!(&init.kind, ExprKind::ArrayRepeat { value, .. }
                    if matches!(value.kind, ExprKind::Const(_) | ExprKind::Var(_)));
                if ok {
                    self.declared.push(*var);
                } else {
                    self.candidates.remove(var);
                }
            }
        } else if let StmtKind::Let { var, init: None } = &s.kind {
            self.candidates.remove(var);
        }
        crate::visit::walk_stmt(self, s);
    }

    fn visit_lvalue(&mut self, place: &'ir LValue) {
        match place {
            LValue::Var(v) => {
                self.candidates.remove(v);
            }
            LValue::Index { base, index } => {
                if let LValue::Var(a) = &**base {
                    if let Some(&n) = self.candidates.get(a) {
                        if const_index(index, n).is_none() {
                            self.candidates.remove(a);
                        }
                        self.visit_expr(index);
                        return;
                    }
                }
                walk_lvalue(self, place);
            }
            LValue::Field { .. } => walk_lvalue(self, place),
        }
    }

    fn visit_expr(&mut self, e: &'ir Expr) {
        match &e.kind {
            ExprKind::Var(v) => {
                self.candidates.remove(v);
            }
            ExprKind::Index { array, index } => {
                if let ExprKind::Var(a) = array.kind {
                    if let Some(&n) = self.candidates.get(&a) {
                        if const_index(index, n).is_none() {
                            self.candidates.remove(&a);
                        }
                        self.visit_expr(index);
                        return;
                    }
                }
                walk_expr(self, e);
            }
            _ => walk_expr(self, e),
        }
    }
}

/// Rewrites the qualifying arrays' declarations and accesses to their element locals.
struct Replace<'a> {
    elements: &'a IdMap<VarId, Vec<VarId>>,
    vars: &'a [VarDecl],
}

impl Replace<'_> {
    fn element(&self, array: VarId, index: &Expr) -> Option<VarId> {
        let ids = self.elements.get(&array)?;
        let k = const_index(index, ids.len() as u32)?;
        Some(ids[k as usize])
    }
}

impl VisitMut for Replace<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        let declares = |s: &Stmt| matches!(&s.kind, StmtKind::Let { var, init: Some(_) } if self.elements.contains_key(var));
        if !b.iter().any(declares) {
            // Nothing to split: rewritten in place (rebuilding would move the whole tree).
            for s in b.iter_mut() {
                self.visit_stmt_mut(s);
            }
            return;
        }
        let old = std::mem::take(b);
        b.reserve(old.len());
        for mut s in old {
            // `let a = [v; n];` becomes `let a_0 = v; … let a_{n-1} = v;` in the same scope.
            if let StmtKind::Let {
                var,
                init: Some(init),
            } = &s.kind
            {
                if let (Some(ids), ExprKind::ArrayRepeat { value, .. }) =
                    (self.elements.get(var), &init.kind)
                {
                    for &id in ids {
                        b.push(Stmt {
                            kind: StmtKind::Let {
                                var: id,
                                init: Some((**value).clone()),
                            },
                            loc: s.loc,
                        });
                    }
                    continue;
                }
            }
            self.visit_stmt_mut(&mut s);
            b.push(s);
        }
    }

    fn visit_lvalue_mut(&mut self, place: &mut LValue) {
        if let LValue::Index { base, index } = place {
            if let LValue::Var(a) = **base {
                if let Some(id) = self.element(a, index) {
                    *place = LValue::Var(id);
                    return;
                }
            }
        }
        walk_lvalue_mut(self, place);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let ExprKind::Index { array, index } = &e.kind {
            if let ExprKind::Var(a) = array.kind {
                if let Some(id) = self.element(a, index) {
                    *e = Expr::var(id, self.vars[id.0 as usize].ty.clone());
                    return;
                }
            }
        }
        walk_expr_mut(self, e);
    }
}
