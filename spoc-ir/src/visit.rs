//! Walking statements and expressions.
//!
//! [`Visit`] (shared, `&`) and [`VisitMut`] (mutable, `&mut`) have one method per node kind —
//! block, statement, place, expression, pattern — whose default recurses into the node's children
//! through the matching `walk_*` function. A pass overrides only the methods for the nodes it cares
//! about, and calls the `walk_*` function from its override when it wants the children visited too
//! (before or after its own work, or not at all to prune).
//!
//! Order: children are visited in evaluation order — a statement's expressions before its blocks,
//! an assignment's place before its value (the place's index expressions included), a `for`'s
//! `start`, `end`, `step`, then its body; a `match`'s scrutinee, then each arm's pattern and
//! block/value.
//!
//! For the common one-closure passes: [`for_each_expr`], [`for_each_stmt`], [`any_expr`],
//! [`for_each_expr_mut`], and [`children`] (the direct sub-expressions of one expression).

use crate::{Block, Expr, ExprKind, Function, Kernel, LValue, Pattern, Stmt, StmtKind};

/// A read-only pass over IR nodes; see the [module documentation](self).
pub trait Visit<'ir> {
    /// Visits a block; by default each statement in order.
    fn visit_block(&mut self, block: &'ir Block) {
        walk_block(self, block);
    }
    /// Visits a statement; by default its expressions, places, patterns and blocks.
    fn visit_stmt(&mut self, stmt: &'ir Stmt) {
        walk_stmt(self, stmt);
    }
    /// Visits an assigned place; by default its base and index expressions.
    fn visit_lvalue(&mut self, place: &'ir LValue) {
        walk_lvalue(self, place);
    }
    /// Visits an expression; by default its sub-expressions (and `match` patterns).
    fn visit_expr(&mut self, expr: &'ir Expr) {
        walk_expr(self, expr);
    }
    /// Visits a `match` pattern (statement or expression); by default nothing.
    fn visit_pattern(&mut self, _pattern: &'ir Pattern) {}
}

/// Visits every statement of `block` in order.
pub fn walk_block<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, block: &'ir Block) {
    for s in block {
        v.visit_stmt(s);
    }
}

/// The one walk behind [`walk_lvalue`] and [`walk_lvalue_mut`]: `$place` is already a shared
/// or mutable reference, and its children go to `$v`'s visit methods.
macro_rules! walk_lvalue_children {
    ($v:ident, $place:ident, $lvalue:ident, $expr:ident) => {
        match $place {
            LValue::Var(_) => {}
            LValue::Index { base, index } => {
                $v.$lvalue(base);
                $v.$expr(index);
            }
            LValue::Field { base, .. } => $v.$lvalue(base),
        }
    };
}

/// The one walk behind [`walk_stmt`] and [`walk_stmt_mut`]: matches `$stmt.kind` through the
/// borrow `$r` (`&` or `&mut`) and hands each child to `$v`'s visit method of its kind.
macro_rules! walk_stmt_children {
    ($v:ident, $stmt:ident, [$($r:tt)+], $block:ident, $lvalue:ident, $expr:ident, $pattern:ident) => {
        match $($r)+ $stmt.kind {
            StmtKind::Let { init, .. } => {
                if let Some(e) = init {
                    $v.$expr(e);
                }
            }
            StmtKind::Assign { target, value } => {
                $v.$lvalue(target);
                $v.$expr(value);
            }
            StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => $v.$block(b),
            StmtKind::If { cond, then, els } => {
                $v.$expr(cond);
                $v.$block(then);
                if let Some(b) = els {
                    $v.$block(b);
                }
            }
            StmtKind::While { cond, body } => {
                $v.$expr(cond);
                $v.$block(body);
            }
            StmtKind::For(l) => {
                $v.$expr($($r)+ l.start);
                $v.$expr($($r)+ l.end);
                $v.$expr($($r)+ l.step);
                $v.$block($($r)+ l.body);
            }
            StmtKind::Match { scrutinee, arms } => {
                $v.$expr(scrutinee);
                for (p, b) in arms {
                    $v.$pattern(p);
                    $v.$block(b);
                }
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => $v.$expr(e),
            StmtKind::Return(None)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Barrier
            | StmtKind::WarpBarrier
            | StmtKind::MemFence(_) => {}
        }
    };
}

/// Visits the children of `stmt`.
pub fn walk_stmt<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, stmt: &'ir Stmt) {
    walk_stmt_children!(v, stmt, [&], visit_block, visit_lvalue, visit_expr, visit_pattern)
}

/// Visits the children of a place: its base place and its index expressions.
pub fn walk_lvalue<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, place: &'ir LValue) {
    walk_lvalue_children!(v, place, visit_lvalue, visit_expr)
}

/// Visits the sub-expressions of `expr` in evaluation order (and the patterns of a `match`).
pub fn walk_expr<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, expr: &'ir Expr) {
    match &expr.kind {
        ExprKind::Match { scrutinee, arms } => {
            v.visit_expr(scrutinee);
            for (p, a) in arms {
                v.visit_pattern(p);
                v.visit_expr(a);
            }
        }
        _ => {
            for c in children(expr) {
                v.visit_expr(c);
            }
        }
    }
}

/// The direct sub-expressions of `e`, in evaluation order (a `match`'s scrutinee, then each
/// arm's value).
pub fn children(e: &Expr) -> Children<'_> {
    let mut c = Children {
        fixed: [None; 3],
        next: 0,
        args: [].iter(),
        arms: [].iter(),
    };
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Var(_) => {}
        ExprKind::Index { array, index } => c.fixed = [Some(array), Some(index), None],
        ExprKind::Field { base, .. } | ExprKind::Unary { operand: base, .. } => {
            c.fixed[0] = Some(base)
        }
        ExprKind::Binary { lhs, rhs, .. } => c.fixed = [Some(lhs), Some(rhs), None],
        ExprKind::Intrinsic { args, .. }
        | ExprKind::Call { args, .. }
        | ExprKind::RecordLit { fields: args, .. }
        | ExprKind::VariantLit { payload: args, .. }
        | ExprKind::VectorLit(args) => c.args = args.iter(),
        ExprKind::Cast { value, .. }
        | ExprKind::ArrayRepeat { value, .. }
        | ExprKind::Len(value) => c.fixed[0] = Some(value),
        ExprKind::Select { cond, then, els } => c.fixed = [Some(cond), Some(then), Some(els)],
        ExprKind::Match { scrutinee, arms } => {
            c.fixed[0] = Some(scrutinee);
            c.arms = arms.iter();
        }
    }
    c
}

/// The iterator [`children`] returns: up to three operands held inline, then an argument list
/// or a `match`'s arms, so that walking an expression tree allocates nothing.
#[derive(Clone, Debug)]
pub struct Children<'a> {
    fixed: [Option<&'a Expr>; 3],
    next: usize,
    args: std::slice::Iter<'a, Expr>,
    arms: std::slice::Iter<'a, (Pattern, Expr)>,
}

impl<'a> Iterator for Children<'a> {
    type Item = &'a Expr;

    fn next(&mut self) -> Option<&'a Expr> {
        while self.next < self.fixed.len() {
            let c = self.fixed[self.next];
            self.next += 1;
            if c.is_some() {
                return c;
            }
        }
        self.args
            .next()
            .or_else(|| self.arms.next().map(|(_, a)| a))
    }
}

/// A pass that rewrites IR nodes in place; see the [module documentation](self).
pub trait VisitMut {
    /// Visits a block; by default each statement in order.
    fn visit_block_mut(&mut self, block: &mut Block) {
        walk_block_mut(self, block);
    }
    /// Visits a statement; by default its expressions, places, patterns and blocks.
    fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
        walk_stmt_mut(self, stmt);
    }
    /// Visits an assigned place; by default its base and index expressions.
    fn visit_lvalue_mut(&mut self, place: &mut LValue) {
        walk_lvalue_mut(self, place);
    }
    /// Visits an expression; by default its sub-expressions (and `match` patterns).
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        walk_expr_mut(self, expr);
    }
    /// Visits a `match` pattern (statement or expression); by default nothing.
    fn visit_pattern_mut(&mut self, _pattern: &mut Pattern) {}
}

/// Visits every statement of `block` in order.
pub fn walk_block_mut<V: VisitMut + ?Sized>(v: &mut V, block: &mut Block) {
    for s in block {
        v.visit_stmt_mut(s);
    }
}

/// Visits the children of `stmt`.
pub fn walk_stmt_mut<V: VisitMut + ?Sized>(v: &mut V, stmt: &mut Stmt) {
    walk_stmt_children!(
        v,
        stmt,
        [&mut],
        visit_block_mut,
        visit_lvalue_mut,
        visit_expr_mut,
        visit_pattern_mut
    )
}

/// Visits the children of a place: its base place and its index expressions.
pub fn walk_lvalue_mut<V: VisitMut + ?Sized>(v: &mut V, place: &mut LValue) {
    walk_lvalue_children!(v, place, visit_lvalue_mut, visit_expr_mut)
}

/// Visits the sub-expressions of `expr` in evaluation order (and the patterns of a `match`).
pub fn walk_expr_mut<V: VisitMut + ?Sized>(v: &mut V, expr: &mut Expr) {
    match &mut expr.kind {
        ExprKind::Const(_) | ExprKind::Var(_) => {}
        ExprKind::Index { array, index } => {
            v.visit_expr_mut(array);
            v.visit_expr_mut(index);
        }
        ExprKind::Field { base, .. }
        | ExprKind::Unary { operand: base, .. }
        | ExprKind::Cast { value: base, .. }
        | ExprKind::ArrayRepeat { value: base, .. }
        | ExprKind::Len(base) => v.visit_expr_mut(base),
        ExprKind::Binary { lhs, rhs, .. } => {
            v.visit_expr_mut(lhs);
            v.visit_expr_mut(rhs);
        }
        ExprKind::Intrinsic { args, .. }
        | ExprKind::Call { args, .. }
        | ExprKind::RecordLit { fields: args, .. }
        | ExprKind::VariantLit { payload: args, .. }
        | ExprKind::VectorLit(args) => {
            for a in args {
                v.visit_expr_mut(a);
            }
        }
        ExprKind::Select { cond, then, els } => {
            v.visit_expr_mut(cond);
            v.visit_expr_mut(then);
            v.visit_expr_mut(els);
        }
        ExprKind::Match { scrutinee, arms } => {
            v.visit_expr_mut(scrutinee);
            for (p, a) in arms {
                v.visit_pattern_mut(p);
                v.visit_expr_mut(a);
            }
        }
    }
}

/// Calls `f` on every expression of `block` — nested statements, places and sub-expressions
/// included — each before its sub-expressions.
pub fn for_each_expr<'ir>(block: &'ir Block, f: &mut dyn FnMut(&'ir Expr)) {
    struct Each<'f, 'ir>(&'f mut dyn FnMut(&'ir Expr));
    impl<'ir> Visit<'ir> for Each<'_, 'ir> {
        fn visit_expr(&mut self, e: &'ir Expr) {
            (self.0)(e);
            walk_expr(self, e);
        }
    }
    Each(f).visit_block(block);
}

/// Calls `f` on every statement of `block`, nested ones included, each before the statements
/// nested in it.
pub fn for_each_stmt<'ir>(block: &'ir Block, f: &mut dyn FnMut(&'ir Stmt)) {
    struct Each<'f, 'ir>(&'f mut dyn FnMut(&'ir Stmt));
    impl<'ir> Visit<'ir> for Each<'_, 'ir> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            (self.0)(s);
            walk_stmt(self, s);
        }
        // Statements hold no statements inside expressions: skip the expression trees.
        fn visit_expr(&mut self, _: &'ir Expr) {}
        fn visit_lvalue(&mut self, _: &'ir LValue) {}
    }
    Each(f).visit_block(block);
}

/// Calls `f` on every expression of `block` (as [`for_each_expr`]), mutably. `f` runs on an
/// expression before its sub-expressions, so the sub-expressions visited are those `f` left.
pub fn for_each_expr_mut(block: &mut Block, f: &mut dyn FnMut(&mut Expr)) {
    struct Each<'f>(&'f mut dyn FnMut(&mut Expr));
    impl VisitMut for Each<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            (self.0)(e);
            walk_expr_mut(self, e);
        }
    }
    Each(f).visit_block_mut(block);
}

/// True if `pred` holds for `e` or for an expression nested in it (stops at the first).
pub fn any_expr(e: &Expr, pred: &mut dyn FnMut(&Expr) -> bool) -> bool {
    pred(e) || children(e).any(|c| any_expr(c, pred))
}

/// True if `pred` holds for some expression of `block` (nested statements and places included).
pub fn block_any_expr(block: &Block, pred: &mut dyn FnMut(&Expr) -> bool) -> bool {
    struct Any<'f> {
        pred: &'f mut dyn FnMut(&Expr) -> bool,
        found: bool,
    }
    impl<'ir> Visit<'ir> for Any<'_> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            if !self.found {
                walk_stmt(self, s);
            }
        }
        fn visit_expr(&mut self, e: &'ir Expr) {
            if !self.found && any_expr(e, self.pred) {
                self.found = true;
            }
        }
    }
    let mut v = Any { pred, found: false };
    v.visit_block(block);
    v.found
}

/// The bodies of a kernel: its own, then each helper's, in [`Kernel::functions`] order.
pub fn bodies(kernel: &Kernel) -> impl Iterator<Item = &Block> {
    std::iter::once(&kernel.body).chain(kernel.functions.iter().map(|f: &Function| &f.body))
}

/// The variable an expression of place form reads from (the root of its index and field
/// projections, `a` in `a[i].f`); `None` for any other expression.
pub fn expr_root(e: &Expr) -> Option<crate::VarId> {
    match &e.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::Index { array: base, .. } | ExprKind::Field { base, .. } => expr_root(base),
        _ => None,
    }
}

/// The variable a place writes into (the root of its index and field projections).
pub fn place_root(place: &LValue) -> crate::VarId {
    let mut l = place;
    loop {
        match l {
            LValue::Var(v) => return *v,
            LValue::Index { base, .. } | LValue::Field { base, .. } => l = base,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BinOp, Const, ForDir, ForLoop, Type, VarId};

    fn c(v: u32) -> Expr {
        Expr::constant(Const::U32(v))
    }

    fn add(a: Expr, b: Expr) -> Expr {
        Expr {
            kind: ExprKind::Binary {
                op: BinOp::Add,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            ty: Type::U32,
        }
    }

    fn call(f: &str, args: Vec<Expr>) -> Expr {
        Expr {
            kind: ExprKind::Call {
                func: f.into(),
                args,
            },
            ty: Type::U32,
        }
    }

    /// `let v0 = 1 + 2; v1[3] = f(4); for v2 in 5..6 step 7 { if 8 { v1[9] = 10 } }
    /// match 11 { _ => return g(12) }`
    fn body() -> Block {
        let store = |i: u32, v: Expr| {
            Stmt::new(StmtKind::Assign {
                target: LValue::Index {
                    base: Box::new(LValue::Var(VarId(1))),
                    index: c(i),
                },
                value: v,
            })
        };
        vec![
            Stmt::new(StmtKind::Let {
                var: VarId(0),
                init: Some(add(c(1), c(2))),
            }),
            store(3, call("f", vec![c(4)])),
            Stmt::new(StmtKind::For(ForLoop {
                var: VarId(2),
                start: c(5),
                end: c(6),
                step: c(7),
                dir: ForDir::Up,
                body: vec![Stmt::new(StmtKind::If {
                    cond: Expr::constant(Const::Bool(true)),
                    then: vec![store(9, c(10))],
                    els: None,
                })],
            })),
            Stmt::new(StmtKind::Match {
                scrutinee: c(11),
                arms: vec![(
                    Pattern::Wildcard,
                    vec![Stmt::new(StmtKind::Return(Some(call("g", vec![c(12)]))))],
                )],
            }),
        ]
    }

    fn constants(b: &Block) -> Vec<u32> {
        let mut out = Vec::new();
        for_each_expr(b, &mut |e| {
            if let ExprKind::Const(Const::U32(v)) = e.kind {
                out.push(v);
            }
        });
        out
    }

    #[test]
    fn expressions_are_visited_in_evaluation_order() {
        assert_eq!(
            constants(&body()),
            (1..=12).filter(|&v| v != 8).collect::<Vec<_>>()
        );
        let mut kinds = Vec::new();
        for_each_stmt(&body(), &mut |s| {
            kinds.push(std::mem::discriminant(&s.kind));
        });
        assert_eq!(kinds.len(), 7, "4 top-level, the if, its store, the return");
        assert!(block_any_expr(&body(), &mut |e| e.kind == ExprKind::Const(Const::U32(12))));
        assert!(!block_any_expr(&body(), &mut |e| e.kind == ExprKind::Const(Const::U32(13))));
    }

    #[test]
    fn a_mutable_pass_rewrites_and_an_override_prunes() {
        let mut b = body();
        for_each_expr_mut(&mut b, &mut |e| {
            if let ExprKind::Const(Const::U32(v)) = &mut e.kind {
                *v *= 10;
            }
        });
        assert_eq!(
            constants(&b),
            constants(&body())
                .iter()
                .map(|v| v * 10)
                .collect::<Vec<_>>()
        );

        // Calls whose arguments are not visited: only the callee names are seen.
        struct Calls(Vec<String>);
        impl Visit<'_> for Calls {
            fn visit_expr(&mut self, e: &Expr) {
                match &e.kind {
                    ExprKind::Call { func, .. } => self.0.push(func.clone()),
                    _ => walk_expr(self, e),
                }
            }
        }
        let mut calls = Calls(Vec::new());
        calls.visit_block(&body());
        assert_eq!(calls.0, ["f", "g"]);
        assert_eq!(
            place_root(&LValue::Field {
                base: Box::new(LValue::Index {
                    base: Box::new(LValue::Var(VarId(7))),
                    index: c(0),
                }),
                field: "x".into(),
            }),
            VarId(7)
        );
    }
}
