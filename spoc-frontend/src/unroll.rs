//! Unrolling `for k in unroll(a..b)` loops: once types are final, each marked loop whose bounds
//! and step fold to constants is replaced by one copy of its body per value of `k`, in order,
//! with `k` replaced by the value and every variable the body declares made fresh in each copy
//! (the IR declares each variable once). Inner marked loops are unrolled first, so a nest of
//! marked loops becomes straight-line code, and local arrays indexed only by loop variables are
//! indexed by constants: every target (PTX, C, SPIR-V) and the CPU backends get the same
//! unrolled IR, so the meaning cannot differ between them.

use crate::errors::{Errors, Loc};
use spoc_ir::visit::{walk_expr_mut, walk_stmt_mut, VisitMut};
use spoc_ir::{
    BinOp, Block, Const, Expr, ExprKind, ForDir, ForLoop, Pattern, ScalarType, Stmt, StmtKind,
    Type, VarDecl, VarId,
};
use std::collections::HashMap;

/// The most iterations one marked loop may unroll to.
pub const MAX_TRIP: u64 = 256;

/// Unrolls every `for` loop of `body` whose variable is in `marked` (with the span of its
/// `unroll(…)`), adding the fresh variables of the copies to `vars`.
pub fn apply(
    body: &mut Block,
    vars: &mut Vec<VarDecl>,
    marked: &[(VarId, Loc)],
    errs: &mut Errors,
) {
    if marked.is_empty() {
        return;
    }
    let marked: HashMap<VarId, Loc> = marked.iter().copied().collect();
    block(body, vars, &marked, errs);
}

fn block(b: &mut Block, vars: &mut Vec<VarDecl>, marked: &HashMap<VarId, Loc>, errs: &mut Errors) {
    let old = std::mem::take(b);
    for mut s in old {
        // Inner loops first, in every nested block of the statement.
        nested_blocks(&mut s.kind, &mut |inner| block(inner, vars, marked, errs));
        match s.kind {
            StmtKind::For(f) if marked.contains_key(&f.var) => {
                let at = marked[&f.var];
                match unrolled(&f, vars) {
                    Ok(copies) => b.push(Stmt {
                        kind: StmtKind::Block(copies),
                        loc: s.loc,
                    }),
                    Err(msg) => {
                        errs.at(at, msg);
                        b.push(Stmt {
                            kind: StmtKind::For(f),
                            loc: s.loc,
                        });
                    }
                }
            }
            kind => b.push(Stmt { kind, loc: s.loc }),
        }
    }
}

/// Calls `f` on each block directly inside statement `s` (bodies, branches, arms).
fn nested_blocks(s: &mut StmtKind, f: &mut dyn FnMut(&mut Block)) {
    match s {
        StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => f(b),
        StmtKind::If { then, els, .. } => {
            f(then);
            if let Some(e) = els {
                f(e);
            }
        }
        StmtKind::While { body, .. } => f(body),
        StmtKind::For(l) => f(&mut l.body),
        StmtKind::Match { arms, .. } => {
            for (_, body) in arms {
                f(body);
            }
        }
        _ => {}
    }
}

/// The copies of `f`'s body, one per value of its variable, each in a block of its own.
fn unrolled(f: &ForLoop, vars: &mut Vec<VarDecl>) -> Result<Block, String> {
    let bound = |e: &Expr, what: &str| {
        fold(e).ok_or_else(|| {
            format!("`unroll(…)` needs a range whose {what} is a compile-time constant (literals, const parameters and arithmetic on them)")
        })
    };
    let (start, end, step) = (
        bound(&f.start, "start")?,
        bound(&f.end, "end")?,
        bound(&f.step, "step")?,
    );
    if step <= 0 {
        return Err("`unroll(…)` of a range with a step of 0".into());
    }
    if own_break(&f.body) {
        return Err("`break` and `continue` cannot leave an unrolled loop; remove `unroll(…)` or restructure the loop with an `if`".into());
    }
    let trip = if end > start {
        ((end - start) + step - 1) / step
    } else {
        0
    };
    if trip > i128::from(MAX_TRIP) {
        return Err(format!(
            "`unroll(…)` unrolls at most {MAX_TRIP} iterations; this range has {trip}"
        ));
    }
    let Type::Scalar(ty) = vars[f.var.0 as usize].ty.clone() else {
        return Err("`unroll(…)` needs an integer loop variable".into());
    };
    let mut out = Block::new();
    for n in 0..trip {
        let v = match f.dir {
            ForDir::Up => start + n * step,
            ForDir::Down => end - 1 - n * step,
        };
        let mut copy = f.body.clone();
        let mut fresh = Fresh {
            var: f.var,
            value: constant(ty, v).ok_or("`unroll(…)` needs an integer loop variable")?,
            renamed: HashMap::new(),
            vars,
        };
        fresh.visit_block_mut(&mut copy);
        out.push(Stmt {
            kind: StmtKind::Block(copy),
            loc: None,
        });
    }
    Ok(out)
}

/// The value of an integer constant expression: constants, `+ - * / << >>` and casts of them.
fn fold(e: &Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Const(c) => match *c {
            Const::I32(v) => Some(v.into()),
            Const::I64(v) => Some(v.into()),
            Const::U32(v) => Some(v.into()),
            Const::U64(v) => Some(v.into()),
            _ => None,
        },
        ExprKind::Cast { value, .. } => fold(value),
        ExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (fold(lhs)?, fold(rhs)?);
            match op {
                BinOp::Add => l.checked_add(r),
                BinOp::Sub => l.checked_sub(r),
                BinOp::Mul => l.checked_mul(r),
                BinOp::Div if r != 0 => l.checked_div(r),
                BinOp::Shl => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                BinOp::Shr => u32::try_from(r).ok().and_then(|r| l.checked_shr(r)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `v` as a constant expression of integer type `ty`.
fn constant(ty: ScalarType, v: i128) -> Option<Expr> {
    let c = match ty {
        ScalarType::I32 => Const::I32(i32::try_from(v).ok()?),
        ScalarType::I64 => Const::I64(i64::try_from(v).ok()?),
        ScalarType::U32 => Const::U32(u32::try_from(v).ok()?),
        ScalarType::U64 => Const::U64(u64::try_from(v).ok()?),
        _ => return None,
    };
    Some(Expr::constant(c))
}

/// Whether `b` has a `break` or `continue` of its own loop (not of a loop nested in it).
fn own_break(b: &Block) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Break | StmtKind::Continue => true,
        StmtKind::While { .. } | StmtKind::For(_) => false,
        StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => own_break(b),
        StmtKind::If { then, els, .. } => own_break(then) || els.as_ref().is_some_and(own_break),
        StmtKind::Match { arms, .. } => arms.iter().any(|(_, body)| own_break(body)),
        _ => false,
    })
}

/// One copy of a body: the loop variable becomes `value`, each variable the body declares a
/// fresh one (added to `vars`).
struct Fresh<'a> {
    var: VarId,
    value: Expr,
    renamed: HashMap<VarId, VarId>,
    vars: &'a mut Vec<VarDecl>,
}

impl Fresh<'_> {
    fn declare(&mut self, v: &mut VarId) {
        let decl = self.vars[v.0 as usize].clone();
        let new = VarId(self.vars.len() as u32);
        self.vars.push(decl);
        self.renamed.insert(*v, new);
        *v = new;
    }

    fn rename(&self, v: &mut VarId) {
        if let Some(n) = self.renamed.get(v) {
            *v = *n;
        }
    }
}

impl VisitMut for Fresh<'_> {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        // The declaration is renamed before the statement's parts: a `let`'s initialiser cannot
        // name the variable it declares, so renaming it first is safe, and a `for` body sees
        // its own variable renamed.
        match &mut s.kind {
            StmtKind::Let { var, .. } => {
                let mut v = *var;
                walk_stmt_mut(self, s);
                self.declare(&mut v);
                if let StmtKind::Let { var, .. } = &mut s.kind {
                    *var = v;
                }
                return;
            }
            StmtKind::For(f) => self.declare(&mut f.var),
            _ => {}
        }
        walk_stmt_mut(self, s);
    }

    fn visit_lvalue_mut(&mut self, place: &mut spoc_ir::LValue) {
        if let spoc_ir::LValue::Var(v) = place {
            self.rename(v);
        }
        spoc_ir::visit::walk_lvalue_mut(self, place);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let ExprKind::Var(v) = &mut e.kind {
            if *v == self.var {
                let ty = e.ty.clone();
                *e = self.value.clone();
                e.ty = ty;
                return;
            }
            self.rename(v);
        }
        walk_expr_mut(self, e);
    }

    fn visit_pattern_mut(&mut self, p: &mut Pattern) {
        if let Pattern::Case { bindings, .. } = p {
            for b in bindings {
                self.declare(b);
            }
        }
    }
}
