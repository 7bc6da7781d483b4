//! Walks over the AST: every expression and statement of a kernel, and what a kernel uses (so
//! that the printer and the harness agree on its parameter list).

use crate::ast::*;

/// A direct part of a statement or an expression: an expression or a block.
pub enum Part<'a> {
    /// An operand, initializer, index, condition, …
    Expr(&'a mut Expr),
    /// A body, branch, arm, …
    Block(&'a mut Block),
}

impl Stmt {
    /// The statement's direct parts, in the order they are evaluated (an assignment's value
    /// before its place's index).
    pub fn parts(&mut self) -> Vec<Part<'_>> {
        let mut v = vec![];
        match self {
            Stmt::Let { init, .. } | Stmt::LetArr { init, .. } => v.push(Part::Expr(init)),
            Stmt::Assign { place, value, .. } => {
                v.push(Part::Expr(value));
                if let Place::Arr(_, i) = place {
                    v.push(Part::Expr(i));
                }
            }
            Stmt::Atomic { index, value, .. } => {
                v.extend(index.as_mut().map(Part::Expr));
                v.push(Part::Expr(value));
            }
            Stmt::If { cond, then, els } => {
                v.push(Part::Expr(cond));
                v.push(Part::Block(then));
                v.extend(els.as_mut().map(Part::Block));
            }
            Stmt::While { cond, body, .. } => {
                v.extend(cond.as_mut().map(Part::Expr));
                v.push(Part::Block(body));
            }
            Stmt::Loop { body, .. } => v.push(Part::Block(body)),
            Stmt::For(l) => {
                v.push(Part::Expr(&mut l.lo));
                v.push(Part::Expr(&mut l.hi));
                v.push(Part::Block(&mut l.body));
            }
            Stmt::Match {
                scrut,
                arms,
                default,
            } => {
                v.push(Part::Expr(scrut));
                v.extend(arms.iter_mut().map(|a| Part::Block(&mut a.body)));
                v.push(Part::Block(default));
            }
            Stmt::Block(b) => v.push(Part::Block(b)),
            Stmt::Warp { value, operand, .. } => {
                v.push(Part::Expr(value));
                v.extend(operand.as_mut().map(Part::Expr));
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Sync => {}
        }
        v
    }
}

impl Expr {
    /// The expression's direct parts, in the order they are evaluated.
    pub fn parts(&mut self) -> Vec<Part<'_>> {
        let mut v = vec![];
        match &mut self.kind {
            ExprKind::Lit(_)
            | ExprKind::Var(_)
            | ExprKind::Intr(_)
            | ExprKind::OutRead { .. }
            | ExprKind::Len(_) => {}
            ExprKind::Input { index, .. } | ExprKind::ArrRead { index, .. } => {
                v.push(Part::Expr(index))
            }
            ExprKind::SharedRead { index, .. } => v.extend(index.as_mut().map(|i| Part::Expr(i))),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => v.push(Part::Expr(a)),
            ExprKind::Binary(_, a, b) => {
                v.push(Part::Expr(a));
                v.push(Part::Expr(b));
            }
            ExprKind::Method(_, args) | ExprKind::Call(_, args) => {
                v.extend(args.iter_mut().map(Part::Expr))
            }
            ExprKind::If(c, a, b) => {
                v.push(Part::Expr(c));
                v.push(Part::Block(a));
                v.push(Part::Block(b));
            }
            ExprKind::Block(b) => v.push(Part::Block(b)),
            ExprKind::Match(s, arms, d) => {
                v.push(Part::Expr(s));
                v.extend(arms.iter_mut().map(|a| Part::Block(&mut a.body)));
                v.push(Part::Block(d));
            }
        }
        v
    }
}

/// A visitor over statements and expressions, each called before its parts (and walked into
/// after, as the callback left it: a callback may replace the node).
pub struct Walk<'f> {
    /// Called on every statement.
    pub on_stmt: &'f mut dyn FnMut(&mut Stmt),
    /// Called on every expression.
    pub on_expr: &'f mut dyn FnMut(&mut Expr),
}

impl Walk<'_> {
    /// Walks a block.
    pub fn block(&mut self, b: &mut Block) {
        for s in &mut b.stmts {
            self.stmt(s);
        }
        if let Some(t) = &mut b.tail {
            self.expr(t);
        }
    }

    /// Walks a statement.
    pub fn stmt(&mut self, s: &mut Stmt) {
        (self.on_stmt)(s);
        for p in s.parts() {
            self.part(p);
        }
    }

    /// Walks an expression.
    pub fn expr(&mut self, e: &mut Expr) {
        (self.on_expr)(e);
        for p in e.parts() {
            self.part(p);
        }
    }

    fn part(&mut self, p: Part<'_>) {
        match p {
            Part::Expr(e) => self.expr(e),
            Part::Block(b) => self.block(b),
        }
    }
}

/// Calls `on_stmt` and `on_expr` on everything in `b` (walking a copy).
pub fn walk_block(b: &Block, on_stmt: &mut dyn FnMut(&Stmt), on_expr: &mut dyn FnMut(&Expr)) {
    Walk {
        on_stmt: &mut |s| on_stmt(s),
        on_expr: &mut |e| on_expr(e),
    }
    .block(&mut b.clone())
}

/// [`walk_block`] over the statements of a kernel's body.
pub fn walk_body(k: &Kernel, on_stmt: &mut dyn FnMut(&Stmt), on_expr: &mut dyn FnMut(&Expr)) {
    let body = Block {
        stmts: k.body.clone(),
        tail: None,
    };
    walk_block(&body, on_stmt, on_expr)
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
    walk_body(k, &mut on_stmt, &mut on_expr);
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
