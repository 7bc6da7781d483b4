//! Walks over the AST: every expression and statement of a kernel, and what a kernel uses (so
//! that the printer and the harness agree on its parameter list).

use crate::ast::*;

/// A visitor over statements and expressions (each called outer before inner).
pub struct Walk<'f, 'a> {
    /// Called on every statement.
    pub on_stmt: &'f mut dyn FnMut(&'a Stmt),
    /// Called on every expression.
    pub on_expr: &'f mut dyn FnMut(&'a Expr),
}

impl<'a> Walk<'_, 'a> {
    /// Walks a block.
    pub fn block(&mut self, b: &'a Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
        if let Some(t) = &b.tail {
            self.expr(t);
        }
    }

    /// Walks a statement.
    pub fn stmt(&mut self, s: &'a Stmt) {
        (self.on_stmt)(s);
        match s {
            Stmt::Let { init, .. } | Stmt::LetArr { init, .. } => self.expr(init),
            Stmt::Assign { place, value, .. } => {
                self.expr(value);
                if let Place::Arr(_, i) = place {
                    self.expr(i);
                }
            }
            Stmt::Atomic { index, value, .. } => {
                if let Some(i) = index {
                    self.expr(i);
                }
                self.expr(value);
            }
            Stmt::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                if let Some(e) = els {
                    self.block(e);
                }
            }
            Stmt::While { cond, body, .. } => {
                if let Some(c) = cond {
                    self.expr(c);
                }
                self.block(body);
            }
            Stmt::Loop { body, .. } => self.block(body),
            Stmt::For { lo, hi, body, .. } => {
                self.expr(lo);
                self.expr(hi);
                self.block(body);
            }
            Stmt::Match {
                scrut,
                arms,
                default,
            } => {
                self.expr(scrut);
                for a in arms {
                    self.block(&a.body);
                }
                self.block(default);
            }
            Stmt::Block(b) => self.block(b),
            Stmt::Warp { value, operand, .. } => {
                self.expr(value);
                if let Some(o) = operand {
                    self.expr(o);
                }
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Sync => {}
        }
    }

    /// Walks an expression.
    pub fn expr(&mut self, e: &'a Expr) {
        (self.on_expr)(e);
        match &e.kind {
            ExprKind::Lit(_)
            | ExprKind::Var(_)
            | ExprKind::Intr(_)
            | ExprKind::OutRead { .. }
            | ExprKind::Len(_) => {}
            ExprKind::Input { index, .. } | ExprKind::ArrRead { index, .. } => self.expr(index),
            ExprKind::SharedRead { index, .. } => {
                if let Some(i) = index {
                    self.expr(i);
                }
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Method(_, args) | ExprKind::Call(_, args) => {
                for a in args {
                    self.expr(a);
                }
            }
            ExprKind::If(c, a, b) => {
                self.expr(c);
                self.block(a);
                self.block(b);
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::Match(s, arms, d) => {
                self.expr(s);
                for a in arms {
                    self.block(&a.body);
                }
                self.block(d);
            }
        }
    }
}

/// Calls `on_stmt` and `on_expr` on everything in `b`.
pub fn walk_block<'a>(
    b: &'a Block,
    on_stmt: &mut dyn FnMut(&'a Stmt),
    on_expr: &mut dyn FnMut(&'a Expr),
) {
    Walk { on_stmt, on_expr }.block(b)
}

/// Calls `f` on every expression in `e` (itself included).
pub fn exprs_in<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    Walk {
        on_stmt: &mut |_| {},
        on_expr: f,
    }
    .expr(e)
}

/// What a kernel uses: its parameter list is made of these, in this order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Uses {
    /// Scalar parameters used (kernel parameters only), in id order.
    pub params: Vec<VarId>,
    /// Input buffer element types used, in [`Ty::BUF`] order.
    pub inputs: Vec<Ty>,
    /// Output buffer element types used, in [`Ty::BUF`] order.
    pub outputs: Vec<Ty>,
    /// Accumulators used.
    pub accs: Vec<usize>,
    /// Shared arrays used.
    pub shared: Vec<usize>,
    /// Whether `gid` is needed.
    pub gid: bool,
    /// Helpers called.
    pub helpers: Vec<usize>,
}

/// What kernel `k` uses.
pub fn uses(k: &Kernel) -> Uses {
    let mut params = vec![];
    let mut inputs = vec![];
    let mut outputs = vec![];
    let mut accs = vec![];
    let mut shared = vec![];
    let mut helpers = vec![];
    let mut gid = false;
    let body = Block {
        stmts: k.body.clone(),
        tail: None,
    };
    let mut on_expr = |e: &Expr| match &e.kind {
        ExprKind::Var(v) if k.vars[v.0 as usize].kind == VarKind::Param => params.push(*v),
        ExprKind::Intr(Intr::Gid) => gid = true,
        ExprKind::Input { .. } => inputs.push(e.ty),
        ExprKind::Len(LenOf::Input(t)) => inputs.push(*t),
        ExprKind::OutRead { .. } => {
            outputs.push(e.ty);
            gid = true;
        }
        ExprKind::Len(LenOf::Output(t)) => outputs.push(*t),
        ExprKind::SharedRead { sh, .. } | ExprKind::Len(LenOf::Shared(sh)) => shared.push(*sh),
        ExprKind::Call(h, _) => helpers.push(*h),
        _ => {}
    };
    let mut stmt_uses: Vec<(Option<Ty>, Option<usize>, Option<usize>)> = vec![];
    let mut on_stmt = |s: &Stmt| match s {
        Stmt::Assign {
            place: Place::Out(t, _),
            ..
        } => stmt_uses.push((Some(*t), None, None)),
        Stmt::Assign {
            place: Place::Shared(sh),
            ..
        } => stmt_uses.push((None, None, Some(*sh))),
        Stmt::Atomic { target, .. } => match target {
            AtomTarget::Acc(a) => stmt_uses.push((None, Some(*a), None)),
            AtomTarget::Shared(sh) => stmt_uses.push((None, None, Some(*sh))),
        },
        _ => {}
    };
    walk_block(&body, &mut on_stmt, &mut on_expr);
    for (t, a, sh) in stmt_uses {
        if let Some(t) = t {
            outputs.push(t);
            gid = true;
        }
        accs.extend(a);
        shared.extend(sh);
    }
    // Helpers calling helpers.
    let mut i = 0;
    while i < helpers.len() {
        let h = helpers[i];
        let mut calls = vec![];
        walk_block(&k.helpers[h].body, &mut |_| {}, &mut |e| {
            if let ExprKind::Call(g, _) = &e.kind {
                calls.push(*g);
            }
        });
        helpers.extend(calls);
        i += 1;
    }
    params.sort();
    params.dedup();
    let order = |v: &mut Vec<Ty>| {
        v.sort_by_key(|t| t.buf_index());
        v.dedup();
    };
    order(&mut inputs);
    order(&mut outputs);
    accs.sort();
    accs.dedup();
    shared.sort();
    shared.dedup();
    helpers.sort();
    helpers.dedup();
    Uses {
        params,
        inputs,
        outputs,
        accs,
        shared,
        gid,
        helpers,
    }
}
