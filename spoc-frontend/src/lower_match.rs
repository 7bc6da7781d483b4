//! `match` on an integer, as a statement and as a value. Patterns are integer literals (with an
//! optional `-`), the bounds of the scalar types (`u32::MAX`), ranges `a..=b`, `a..b`, `a..` and
//! `..=b`, alternatives `p | q`, and `_`; arms cannot have guards nor bind names.
//!
//! A pattern's constants are typed by the scrutinee, whose type may still be an unsuffixed
//! literal's while lowering: a pattern holds `Const::U64(k)`, an index into
//! [`Lowerer::pat_consts`], until `resolve.rs` replaces it with the constant of the final type.
//! The checks that need final values (constants in range, ranges not empty, every value covered,
//! as rustc checks them) run with the deferred checks ([`Lowerer::check_match`]).

use crate::errors::{Loc, Lowered};
use crate::lower::strip;
use crate::lower::{Deferred, Lowerer, TExpr};
use crate::resolve::literal_const;
use crate::types::{Kind, Scalar, Ty};
use spoc_ir::{Block, Const, ExprKind, LValue, Pattern, StmtKind};

/// How a pattern constant gets its value.
#[derive(Clone, Copy, Debug)]
pub enum PatConstKind {
    /// Pending literal `i` ([`Lowerer::lits`]).
    Lit(usize),
    /// A named constant (`u32::MAX`), already typed.
    Fixed(Const),
    /// The scrutinee type's minimum (`..=b`).
    Min,
    /// The scrutinee type's maximum (`a..`).
    Max,
    /// Pending literal `i` minus one (the end of `a..b`).
    Below(usize),
}

/// A pattern constant, of the scrutinee's type `ty`.
#[derive(Clone, Copy, Debug)]
pub struct PatConst {
    pub kind: PatConstKind,
    pub ty: Ty,
}

/// What [`Lowerer::check_match`] verifies about one `match`.
pub struct MatchCheck {
    /// The scrutinee's type and span.
    pub ty: Ty,
    pub span: Loc,
    /// Some arm is `_` (or an alternative of one).
    pub wildcard: bool,
    /// Every literal or range of the patterns: the indices of its low and high constants in
    /// [`Lowerer::pat_consts`], its span, and whether it is an exclusive range `a..b`.
    pub leaves: Vec<(usize, usize, Loc, bool)>,
}

/// An integer constant's value.
fn value(c: Const) -> i128 {
    c.int_value().unwrap_or(0)
}

/// The range of values of integer type `s`.
fn range_of(s: Scalar) -> (i128, i128) {
    match s {
        Scalar::I32 => (i32::MIN.into(), i32::MAX.into()),
        Scalar::I64 => (i64::MIN.into(), i64::MAX.into()),
        Scalar::U32 | Scalar::Usize => (0, u32::MAX.into()),
        Scalar::U64 => (0, u64::MAX.into()),
        _ => (0, 0),
    }
}

/// The constant of integer type `s` with value `v` (in range).
fn int_const(s: Scalar, v: i128) -> Const {
    match s {
        Scalar::I32 => Const::I32(v as i32),
        Scalar::I64 => Const::I64(v as i64),
        Scalar::U64 => Const::U64(v as u64),
        _ => Const::U32(v as u32),
    }
}

/// `v` as a pattern of type `s` reads (`i32::MIN`, `7`).
fn show_value(s: Scalar, v: i128) -> String {
    let (lo, hi) = range_of(s);
    let name = s.name();
    if v == hi {
        format!("{name}::MAX")
    } else if v == lo && lo != 0 {
        format!("{name}::MIN")
    } else {
        format!("{v}_{name}")
    }
}

impl Lowerer {
    /// The scrutinee of a `match`: an integer.
    fn scrutinee(&mut self, e: &syn::Expr, pre: &mut Block) -> Lowered<TExpr> {
        let s = self.scalar(e, pre)?;
        if self.tys.resolve(s.ty) == Ty::BOOL {
            return Err(self.errs.at(
                s.span,
                "`match` on a `bool` is not supported in kernels; use `if` / `else`",
            ));
        }
        self.constrain_at(
            s.ty,
            Kind::Int,
            s.span,
            "`match` works on integers in kernels (use `if` / `else if` chains for other values)",
        )?;
        Ok(s)
    }

    /// The pattern of `arm`, checked against the scrutinee type `ty`.
    fn arm_pattern(&mut self, arm: &syn::Arm, ty: Ty, check: &mut MatchCheck) -> Lowered<Pattern> {
        if let Some(a) = arm.attrs.first() {
            return Err(self
                .errs
                .spanned(a, "attributes on `match` arms are not supported in kernels"));
        }
        if let Some((_, g)) = &arm.guard {
            return Err(self.errs.spanned(
                g,
                "`match` guards (`pattern if condition`) are not supported in kernels; test the condition inside the arm",
            ));
        }
        self.pattern(&arm.pat, ty, check)
    }

    fn pattern(&mut self, p: &syn::Pat, ty: Ty, check: &mut MatchCheck) -> Lowered<Pattern> {
        let span = Loc::of(p);
        match p {
            syn::Pat::Wild(_) => {
                check.wildcard = true;
                Ok(Pattern::Wildcard)
            }
            syn::Pat::Paren(q) => self.pattern(&q.pat, ty, check),
            syn::Pat::Or(o) => {
                let mut alts = Vec::new();
                let mut ok = true;
                for case in &o.cases {
                    match self.pattern(case, ty, check) {
                        Ok(a) => alts.push(a),
                        Err(_) => ok = false,
                    }
                }
                if ok {
                    Ok(Pattern::Or(alts))
                } else {
                    Err(crate::errors::Failed)
                }
            }
            syn::Pat::Lit(l) => {
                let k = self.pattern_bound(&syn::Expr::Lit(l.clone()), ty)?;
                check.leaves.push((k, k, span, false));
                Ok(Pattern::Int(Const::U64(k as u64)))
            }
            syn::Pat::Path(path) => {
                let k = self.pattern_bound(&syn::Expr::Path(path.clone()), ty)?;
                check.leaves.push((k, k, span, false));
                Ok(Pattern::Int(Const::U64(k as u64)))
            }
            syn::Pat::Range(r) => {
                let exclusive = matches!(r.limits, syn::RangeLimits::HalfOpen(_));
                let lo = match &r.start {
                    Some(e) => self.pattern_bound(e, ty),
                    None => Ok(self.push_pat_const(PatConstKind::Min, ty)),
                };
                let hi = match (&r.end, exclusive) {
                    (Some(e), false) => self.pattern_bound(e, ty),
                    (Some(e), true) => self.pattern_bound(e, ty).inspect(|&k| {
                        if let PatConstKind::Lit(i) = self.pat_consts[k].kind {
                            self.pat_consts[k].kind = PatConstKind::Below(i);
                        }
                    }),
                    (None, _) => Ok(self.push_pat_const(PatConstKind::Max, ty)),
                };
                let (lo, hi) = (lo?, hi?);
                if exclusive && r.end.is_some() {
                    if let PatConstKind::Fixed(c) = self.pat_consts[hi].kind {
                        // `a..u32::MAX`: the end, minus one.
                        let v = value(c) - 1;
                        let s = match c {
                            Const::I32(_) => Scalar::I32,
                            Const::I64(_) => Scalar::I64,
                            Const::U64(_) => Scalar::U64,
                            _ => Scalar::U32,
                        };
                        if v < range_of(s).0 {
                            return Err(self.errs.at(
                                span,
                                "lower range bound must be less than upper",
                            ));
                        }
                        self.pat_consts[hi].kind = PatConstKind::Fixed(int_const(s, v));
                    }
                }
                check.leaves.push((lo, hi, span, exclusive));
                Ok(Pattern::Range(
                    Const::U64(lo as u64),
                    Const::U64(hi as u64),
                ))
            }
            syn::Pat::Ident(i) => {
                let name = crate::lower::ident_name(&i.ident);
                let msg = if name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') {
                    format!("`{name}` is not visible in this kernel: constants declared outside the kernel cannot be used as patterns; write the literal")
                } else {
                    format!("bindings in `match` patterns (`{name}`, `{name} @ 1..=3`) are not supported in kernels; write `_` and use the matched value itself")
                };
                let e = self.errs.spanned(p, msg);
                // Uses of the name in the arm (its scope) add no errors of their own.
                self.declare_poisoned(&name);
                Err(e)
            }
            syn::Pat::TupleStruct(_) | syn::Pat::Struct(_) => Err(self.errs.spanned(
                p,
                "enum and struct patterns are not supported in kernels yet; match integers (a record by one of its fields: `let k: u32 = p.kind; match k { … }`)",
            )),
            _ => Err(self.errs.spanned(
                p,
                "only integer literals, ranges (`a..=b`), alternatives (`a | b`) and `_` can be matched in kernels",
            )),
        }
    }

    fn push_pat_const(&mut self, kind: PatConstKind, ty: Ty) -> usize {
        self.pat_consts.push(PatConst { kind, ty });
        self.pat_consts.len() - 1
    }

    /// A literal pattern or a range bound: an integer literal (`3`, `-1`, `7u32`) or a bound of
    /// a scalar type (`i32::MAX`), of the scrutinee's type `ty`. Returns its pattern constant.
    fn pattern_bound(&mut self, e: &syn::Expr, ty: Ty) -> Lowered<usize> {
        let (lit, negated) = match strip(e) {
            syn::Expr::Lit(l) => (&l.lit, false),
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match strip(&u.expr) {
                syn::Expr::Lit(l) => (&l.lit, true),
                _ => return Err(self.bad_bound(e)),
            },
            syn::Expr::Path(p) if p.qself.is_none() && p.path.segments.len() > 1 => {
                let Some((c, s)) = crate::consts::lookup(&p.path) else {
                    return Err(self.errs.spanned(
                        p,
                        "unknown constant in a pattern: the bounds of the scalar types (`u32::MAX`, `i32::MIN`) are supported; write other values as literals",
                    ));
                };
                self.unify_at(
                    ty,
                    Ty::Scalar(s),
                    Loc::of(p),
                    "mismatched types: this pattern's type is not the matched value's",
                )?;
                return Ok(self.push_pat_const(PatConstKind::Fixed(c), ty));
            }
            syn::Expr::Path(p) => {
                let name = p
                    .path
                    .get_ident()
                    .map(crate::lower::ident_name)
                    .unwrap_or_default();
                return Err(self.errs.spanned(
                    p,
                    format!("`{name}` is not visible in this kernel: constants declared outside the kernel cannot be used as patterns; write the literal"),
                ));
            }
            _ => return Err(self.bad_bound(e)),
        };
        let before = self.lits.len();
        let t = self.literal(lit, negated)?;
        self.unify_at(
            ty,
            t.ty,
            t.span,
            "mismatched types: this pattern's type is not the matched value's",
        )?;
        if self.lits.len() == before + 1 {
            Ok(self.push_pat_const(PatConstKind::Lit(before), ty))
        } else {
            // A `bool` literal: the unification above failed already.
            Err(crate::errors::Failed)
        }
    }

    fn bad_bound(&mut self, e: &syn::Expr) -> crate::errors::Failed {
        self.errs.spanned(
            e,
            "a pattern bound must be an integer literal (`3`, `-1`) or a bound of a scalar type (`u32::MAX`)",
        )
    }

    /// The final constant of pattern constant `k` (once types are settled).
    ///
    /// # Errors
    /// Why it is not a value of the scrutinee's type (out of range, an empty exclusive range).
    pub fn pat_const(&self, k: usize) -> Result<Const, String> {
        let pc = self.pat_consts.get(k).ok_or_else(String::new)?;
        let Ty::Scalar(s) = self.tys.resolve(pc.ty) else {
            return Err("cannot infer the type of this pattern".into());
        };
        let lit = |i: usize| {
            let l = self.lits.get(i).ok_or_else(String::new)?;
            literal_const(&l.digits, l.negated, s)
        };
        let (lo, hi) = range_of(s);
        match pc.kind {
            PatConstKind::Lit(i) => lit(i),
            PatConstKind::Fixed(c) => Ok(c),
            PatConstKind::Min => Ok(int_const(s, lo)),
            PatConstKind::Max => Ok(int_const(s, hi)),
            PatConstKind::Below(i) => {
                let v = value(lit(i)?) - 1;
                if v < lo {
                    Err("lower range bound must be less than upper".into())
                } else {
                    Ok(int_const(s, v))
                }
            }
        }
    }

    /// The checks of one `match` that need final types: every constant in range, no empty
    /// range, every value covered.
    pub fn check_match(&mut self, m: &MatchCheck) {
        let Ty::Scalar(s) = self.tys.resolve(m.ty) else {
            return;
        };
        let mut intervals = Vec::new();
        let mut ok = true;
        for &(lo, hi, span, exclusive) in &m.leaves {
            match (self.pat_const(lo), self.pat_const(hi)) {
                (Ok(a), Ok(b)) => {
                    let (a, b) = (value(a), value(b));
                    if a > b {
                        let msg = if exclusive {
                            "lower range bound must be less than upper"
                        } else {
                            "lower range bound must be less than or equal to upper"
                        };
                        self.errs.at(span, msg);
                        ok = false;
                    } else {
                        intervals.push((a, b));
                    }
                }
                (Err(e), _) | (_, Err(e)) => {
                    self.errs.at(span, e);
                    ok = false;
                }
            }
        }
        if !ok || m.wildcard {
            return;
        }
        intervals.sort_unstable();
        let (min, max) = range_of(s);
        let mut next = min; // the smallest value not known to be covered
        let mut gap = None;
        for (a, b) in intervals {
            if a > next {
                gap = Some((next, a - 1));
                break;
            }
            next = next.max(b + 1);
        }
        if gap.is_none() && next <= max {
            gap = Some((next, max));
        }
        if let Some((a, b)) = gap {
            let missing = if a == b {
                show_value(s, a)
            } else {
                format!("{}..={}", show_value(s, a), show_value(s, b))
            };
            self.errs.at(
                m.span,
                format!("non-exhaustive patterns: `{missing}` not covered; add a `_ => …` arm (a `match` must cover every value)"),
            );
        }
    }

    /// An empty check for the `match` on `s`.
    fn new_check(&self, s: &TExpr) -> MatchCheck {
        MatchCheck {
            ty: s.ty,
            span: s.span,
            wildcard: false,
            leaves: Vec::new(),
        }
    }

    /// `match` as a statement: each arm is a block (or an expression statement) of type `()`.
    pub fn match_stmt(&mut self, m: &syn::ExprMatch, out: &mut Block) -> Lowered<()> {
        let span = Loc::of(m);
        let scrutinee = self.scrutinee(&m.expr, out)?;
        let mut check = self.new_check(&scrutinee);
        let mut arms = Vec::new();
        let mut ok = true;
        for arm in &m.arms {
            self.push_scope();
            let pat = self.arm_pattern(arm, scrutinee.ty, &mut check);
            let body = self.arm_block(&arm.body);
            self.pop_scope();
            match (pat, body) {
                (Ok(p), Ok(b)) => arms.push((p, b)),
                _ => ok = false,
            }
        }
        if !ok {
            return Err(crate::errors::Failed);
        }
        self.deferred.push(Deferred::Match(check));
        out.push(self.stmt(
            StmtKind::Match {
                scrutinee: scrutinee.e,
                arms,
            },
            span,
        ));
        Ok(())
    }

    /// The body of a statement arm, in its own scope.
    fn arm_block(&mut self, body: &syn::Expr) -> Lowered<Block> {
        self.push_scope();
        let mut b = Block::new();
        let r = match strip(body) {
            syn::Expr::Block(blk) if blk.label.is_none() => {
                self.stmts(&blk.block.stmts, &mut b, false).map(|_| ())
            }
            e => self.stmt_expr(e, &mut b, true),
        };
        self.pop_scope();
        r.map(|()| b)
    }

    /// `match` as a value: every arm has a value of one type.
    pub fn match_value(&mut self, m: &syn::ExprMatch, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(m);
        let scrutinee = self.scrutinee(&m.expr, pre)?;
        let mut check = self.new_check(&scrutinee);
        let mut arms: Vec<(Pattern, Block, TExpr)> = Vec::new();
        let mut ok = true;
        let mut ty: Option<Ty> = None;
        for arm in &m.arms {
            self.push_scope();
            let pat = self.arm_pattern(arm, scrutinee.ty, &mut check);
            let mut apre = Block::new();
            let v = match strip(&arm.body) {
                syn::Expr::Block(b) if b.label.is_none() => {
                    self.value_block(&b.block, &mut apre, "a `match` arm used as a value")
                }
                e => self.scalar(e, &mut apre),
            };
            self.pop_scope();
            let v = v.and_then(|v| match ty {
                None => {
                    ty = Some(v.ty);
                    Ok(v)
                }
                Some(t) => {
                    if self.tys.unify(t, v.ty).is_err() {
                        let (a, b) = (self.tys.show(t), self.tys.show(v.ty));
                        return Err(self.errs.at(
                            v.span,
                            format!(
                                "`match` arms have incompatible types: expected {a}, found {b}"
                            ),
                        ));
                    }
                    Ok(v)
                }
            });
            match (pat, v) {
                (Ok(p), Ok(v)) => arms.push((p, apre, v)),
                _ => ok = false,
            }
        }
        if !ok {
            return Err(crate::errors::Failed);
        }
        let Some(ty) = ty else {
            return Err(self
                .errs
                .at(span, "a `match` used as a value needs at least one arm"));
        };
        self.deferred.push(Deferred::Match(check));
        if arms.iter().all(|(_, b, _)| b.is_empty()) {
            let kind = ExprKind::Match {
                scrutinee: Box::new(scrutinee.e),
                arms: arms.into_iter().map(|(p, _, v)| (p, v.e)).collect(),
            };
            return Ok(self.mk(kind, ty, span));
        }
        // Arms with statements: `let t; match s { p => { …; t = v } … _ => { …; t = v } }`.
        // The match is exhaustive (checked with the final types), so the last arm takes what the
        // others leave: as `_`, it shows the generated Rust that `t` is always assigned.
        let t = self.temp(ty);
        pre.push(self.stmt(StmtKind::Let { var: t, init: None }, span));
        if let Some(last) = arms.last_mut() {
            last.0 = Pattern::Wildcard;
        }
        let arms = arms
            .into_iter()
            .map(|(p, mut b, v)| {
                b.push(self.stmt(
                    StmtKind::Assign {
                        target: LValue::Var(t),
                        value: v.e,
                    },
                    v.span,
                ));
                (p, b)
            })
            .collect();
        pre.push(self.stmt(
            StmtKind::Match {
                scrutinee: scrutinee.e,
                arms,
            },
            span,
        ));
        Ok(self.mk(ExprKind::Var(t), ty, span))
    }
}

/// Replaces the placeholder constants of `p` with their final values (`resolve.rs`); a
/// constant that has none was reported by [`Lowerer::check_match`].
pub fn resolve_pattern(l: &Lowerer, p: &mut Pattern) {
    let fix = |c: &mut Const| {
        if let Const::U64(k) = *c {
            if let Ok(v) = l.pat_const(k as usize) {
                *c = v;
            }
        }
    };
    match p {
        Pattern::Int(c) => fix(c),
        Pattern::Range(a, b) => {
            fix(a);
            fix(b);
        }
        Pattern::Or(alts) => alts.iter_mut().for_each(|a| resolve_pattern(l, a)),
        Pattern::Wildcard | Pattern::Case { .. } => {}
    }
}
