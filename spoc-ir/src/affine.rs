//! Index arithmetic in loops, regrouped around the loop variable: inside `for j in …`, an array
//! index built from `j`, variables and constants with `+ - *` on `u32` (the device's `usize`) is
//! rewritten as `j * c + d` (or `j + d`), `c` and `d` free of `j`. The copies of an unrolled
//! body (`(j + 1) * n + col`, `(j + 2) * n + col`, …) then share one product `j * n` and each
//! add an offset (`n + col`, `2 * n + col`) that does not change across iterations, which
//! `ptxas` computes once, before the loop. Without it the PTX recomputes every index with its
//! own multiply-add per copy and iteration, where NVVM's strength reduction gives CUDA C one add
//! (the naive `matrix_mul`'s inner loop). The meaning is unchanged: `+ - *` on `u32` wrap
//! (docs/LANGUAGE.md), so they form a ring and any regrouping gives the same bits; only
//! expressions without side effects or faults (constants, variables, `+ - *`) are regrouped.

use crate::unroll::fold;
use crate::visit::{walk_expr_mut, walk_lvalue_mut, walk_stmt_mut, VisitMut};
use crate::{
    BinOp, Const, Expr, ExprKind, Kernel, LValue, ScalarType, Stmt, StmtKind, Type, VarId,
};

/// Regroups the array indexes of every loop in `k` (see the [module](self)); whether any
/// changed.
pub fn regroup_loop_indexes(k: &mut Kernel) -> bool {
    let mut pass = Regroup {
        loops: Vec::new(),
        changed: false,
    };
    pass.visit_block_mut(&mut k.body);
    for f in &mut k.functions {
        pass.visit_block_mut(&mut f.body);
    }
    pass.changed
}

struct Regroup {
    /// The variables of the enclosing `for` loops, innermost last.
    loops: Vec<VarId>,
    changed: bool,
}

impl VisitMut for Regroup {
    fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
        if let StmtKind::For(f) = &mut stmt.kind {
            self.visit_expr_mut(&mut f.start);
            self.visit_expr_mut(&mut f.end);
            self.visit_expr_mut(&mut f.step);
            self.loops.push(f.var);
            self.visit_block_mut(&mut f.body);
            self.loops.pop();
        } else {
            walk_stmt_mut(self, stmt);
        }
    }

    fn visit_lvalue_mut(&mut self, place: &mut LValue) {
        walk_lvalue_mut(self, place);
        if let LValue::Index { index, .. } = place {
            self.regroup(index);
        }
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        walk_expr_mut(self, e);
        if let ExprKind::Index { index, .. } = &mut e.kind {
            self.regroup(index);
        }
    }
}

impl Regroup {
    /// `index` as `j * c + d` for the innermost loop's `j`, where it has that form and the
    /// regrouped expression differs.
    fn regroup(&mut self, index: &mut Expr) {
        let Some(&j) = self.loops.last() else { return };
        let Some(Affine { coef, rest }) = affine(index, j) else {
            return;
        };
        let jv = Expr::var(j, u32_ty());
        let term = match coef {
            // `j` cancelled out: leave it as written.
            None => return,
            Some(c) if is_const(&c, 0) => return,
            Some(c) if is_const(&c, 1) => jv,
            Some(c) => bin(BinOp::Mul, jv, c),
        };
        let new = match rest {
            Some(d) => bin(BinOp::Add, term, d),
            None => term,
        };
        if new != *index {
            *index = new;
            self.changed = true;
        }
    }
}

/// `j * coef + rest`; `None` parts are zero.
struct Affine {
    coef: Option<Expr>,
    rest: Option<Expr>,
}

fn u32_ty() -> Type {
    Type::Scalar(ScalarType::U32)
}

fn is_u32(e: &Expr) -> bool {
    e.ty == u32_ty()
}

fn is_const(e: &Expr, v: i128) -> bool {
    matches!(&e.kind, ExprKind::Const(c) if c.int_value() == Some(v))
}

/// `e` as [`Affine`] in `j`: `e` and every sub-expression a `u32` constant, variable, `+`, `-`
/// or `*`, and no product of two factors that both contain `j`.
fn affine(e: &Expr, j: VarId) -> Option<Affine> {
    if !is_u32(e) {
        return None;
    }
    match &e.kind {
        ExprKind::Const(_) => Some(Affine {
            coef: None,
            rest: Some(e.clone()),
        }),
        ExprKind::Var(v) if *v == j => Some(Affine {
            coef: Some(Expr::constant(Const::U32(1))),
            rest: None,
        }),
        ExprKind::Var(_) => Some(Affine {
            coef: None,
            rest: Some(e.clone()),
        }),
        ExprKind::Binary { op, lhs, rhs } if matches!(op, BinOp::Add | BinOp::Sub) => {
            let (l, r) = (affine(lhs, j)?, affine(rhs, j)?);
            Some(Affine {
                coef: combine(*op, l.coef, r.coef),
                rest: combine(*op, l.rest, r.rest),
            })
        }
        ExprKind::Binary {
            op: BinOp::Mul,
            lhs,
            rhs,
        } => {
            let (l, r) = (affine(lhs, j)?, affine(rhs, j)?);
            // One factor must be free of `j`: that factor is its `rest`.
            let (var, factor) = match (l.coef.is_none(), r.coef.is_none()) {
                (_, true) => (l, r.rest),
                (true, false) => (r, l.rest),
                (false, false) => return None,
            };
            let Some(factor) = factor else {
                // A factor of zero.
                return Some(Affine {
                    coef: None,
                    rest: None,
                });
            };
            Some(Affine {
                coef: var.coef.map(|c| times(c, factor.clone())),
                rest: var.rest.map(|d| times(d, factor)),
            })
        }
        _ => None,
    }
}

/// `a op b` (`+` or `-`) with either side possibly zero.
fn combine(op: BinOp, a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (a, None) => a,
        (None, Some(b)) if op == BinOp::Add => Some(b),
        (None, Some(b)) => Some(bin(BinOp::Sub, Expr::constant(Const::U32(0)), b)),
        (Some(a), Some(b)) => Some(bin(op, a, b)),
    }
}

/// `a * b`, without a factor of one, constants folded.
fn times(a: Expr, b: Expr) -> Expr {
    if is_const(&a, 1) {
        b
    } else if is_const(&b, 1) {
        a
    } else {
        bin(BinOp::Mul, a, b)
    }
}

/// A `u32` binary expression, folded to a constant where both sides are constants.
fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let e = Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        ty: u32_ty(),
    };
    match (&e.kind, fold(&e)) {
        (ExprKind::Binary { lhs, rhs, .. }, Some(v))
            if matches!(lhs.kind, ExprKind::Const(_)) && matches!(rhs.kind, ExprKind::Const(_)) =>
        {
            u32::try_from(v)
                .map(|v| Expr::constant(Const::U32(v)))
                .unwrap_or(e)
        }
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(i: u32) -> Expr {
        Expr::var(VarId(i), u32_ty())
    }
    fn c(v: u32) -> Expr {
        Expr::constant(Const::U32(v))
    }
    fn eval(e: &Expr, vals: &[u32]) -> u32 {
        match &e.kind {
            ExprKind::Const(Const::U32(v)) => *v,
            ExprKind::Var(VarId(i)) => vals[*i as usize],
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (eval(lhs, vals), eval(rhs, vals));
                match op {
                    BinOp::Add => a.wrapping_add(b),
                    BinOp::Sub => a.wrapping_sub(b),
                    BinOp::Mul => a.wrapping_mul(b),
                    _ => unreachable!(),
                }
            }
            _ => unreachable!(),
        }
    }
    fn regrouped(e: &Expr) -> Expr {
        let mut pass = Regroup {
            loops: vec![VarId(0)],
            changed: false,
        };
        let mut e = e.clone();
        pass.regroup(&mut e);
        e
    }

    /// `(j + 2) * n + col` (j = 0, n = 1, col = 2) becomes `j * n + (2 * n + col)`, and the
    /// value is the same for wrapping inputs.
    #[test]
    fn an_unrolled_copy_shares_the_loop_product() {
        let e = bin(
            BinOp::Add,
            bin(BinOp::Mul, bin(BinOp::Add, var(0), c(2)), var(1)),
            var(2),
        );
        let r = regrouped(&e);
        let want = bin(
            BinOp::Add,
            bin(BinOp::Mul, var(0), var(1)),
            bin(BinOp::Add, bin(BinOp::Mul, c(2), var(1)), var(2)),
        );
        assert_eq!(r, want);
        for vals in [
            [0, 1, 2],
            [7, 4096, 33],
            [u32::MAX, 3, u32::MAX - 1],
            [1 << 31, 2, 5],
        ] {
            assert_eq!(eval(&r, &vals), eval(&e, &vals), "{vals:?}");
        }
    }

    /// `row * n - (j - 1)` regroups with a negated coefficient; `j * j` and a division are
    /// left alone; `j - j` too.
    #[test]
    fn differences_regroup_and_other_forms_are_left_alone() {
        let e = bin(
            BinOp::Sub,
            bin(BinOp::Mul, var(1), var(2)),
            bin(BinOp::Sub, var(0), c(1)),
        );
        let r = regrouped(&e);
        assert_ne!(r, e);
        for vals in [[0, 1, 2], [9, u32::MAX, 3], [u32::MAX, 0, 0]] {
            assert_eq!(eval(&r, &vals), eval(&e, &vals), "{vals:?}");
        }
        for e in [
            bin(BinOp::Mul, var(0), var(0)),
            bin(BinOp::Sub, var(0), var(0)),
            Expr {
                kind: ExprKind::Binary {
                    op: BinOp::Div,
                    lhs: Box::new(var(0)),
                    rhs: Box::new(c(3)),
                },
                ty: u32_ty(),
            },
        ] {
            assert_eq!(regrouped(&e), e);
        }
    }
}
