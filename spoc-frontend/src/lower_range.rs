//! The ranges a `for` loop may iterate: `a..b`, `(a..b).rev()`, `(a..b).step_by(s)` and
//! `(a..b).rev().step_by(s)`.

use crate::errors::{Errors, Lowered};
use crate::lower::strip;

/// A recognised `for` range, borrowing its parts from the source.
pub struct RangeSpec<'a> {
    pub start: &'a syn::Expr,
    pub end: &'a syn::Expr,
    pub step: Option<&'a syn::Expr>,
    /// `.rev()`: from `end - 1` down to `start`.
    pub down: bool,
    /// Written as `unroll(range)`: the loop is unrolled (`spoc_ir::unroll`).
    pub unroll: bool,
}

const FORMS: &str =
    "a `for` loop iterates over a range: `a..b`, `(a..b).rev()`, `(a..b).step_by(s)` or `(a..b).rev().step_by(s)`";

fn method<'a>(e: &'a syn::Expr, name: &str, args: usize) -> Option<&'a syn::ExprMethodCall> {
    match strip(e) {
        syn::Expr::MethodCall(m)
            if m.method == name && m.args.len() == args && m.turbofish.is_none() =>
        {
            Some(m)
        }
        _ => None,
    }
}

/// Recognises the iterable of a `for` loop: one of the range forms, or `unroll(…)` of one.
pub fn parse<'a>(e: &'a syn::Expr, errs: &mut Errors) -> Lowered<RangeSpec<'a>> {
    if let syn::Expr::Call(c) = strip(e) {
        let is_unroll = matches!(&*c.func, syn::Expr::Path(p) if p.qself.is_none()
            && crate::lower_call::intrinsic_name(&p.path).as_deref() == Some("unroll"));
        if is_unroll {
            let [inner] = c.args.iter().collect::<Vec<_>>()[..] else {
                return Err(errs.spanned(c, "`unroll` takes one range: `for k in unroll(0..N)`"));
            };
            if let syn::Expr::Call(_) = strip(inner) {
                return Err(errs.spanned(inner, "write `unroll(…)` once"));
            }
            return range(inner, errs).map(|r| RangeSpec { unroll: true, ..r });
        }
    }
    range(e, errs)
}

fn range<'a>(e: &'a syn::Expr, errs: &mut Errors) -> Lowered<RangeSpec<'a>> {
    if let Some(step) = method(e, "step_by", 1) {
        let (inner, down) = match method(&step.receiver, "rev", 0) {
            Some(rev) => (&*rev.receiver, true),
            None => (&*step.receiver, false),
        };
        let (start, end) = half_open(inner, errs)?;
        return Ok(RangeSpec {
            start,
            end,
            step: step.args.first(),
            down,
            unroll: false,
        });
    }
    if let Some(rev) = method(e, "rev", 0) {
        if method(&rev.receiver, "step_by", 1).is_some() {
            return Err(errs.spanned(
                e,
                "`(a..b).step_by(s).rev()` is not supported (its first value depends on the step); write `(a..b).rev().step_by(s)` to count down from `b - 1`",
            ));
        }
        let (start, end) = half_open(&rev.receiver, errs)?;
        return Ok(RangeSpec {
            start,
            end,
            step: None,
            down: true,
            unroll: false,
        });
    }
    let (start, end) = half_open(e, errs)?;
    Ok(RangeSpec {
        start,
        end,
        step: None,
        down: false,
        unroll: false,
    })
}

fn half_open<'a>(e: &'a syn::Expr, errs: &mut Errors) -> Lowered<(&'a syn::Expr, &'a syn::Expr)> {
    let syn::Expr::Range(r) = strip(e) else {
        return Err(errs.spanned(e, FORMS));
    };
    if let syn::RangeLimits::Closed(_) = r.limits {
        return Err(errs.spanned(
            r,
            "inclusive ranges `a..=b` are not supported in kernels; write the half-open range `a..b + 1`",
        ));
    }
    match (&r.start, &r.end) {
        (Some(s), Some(t)) => Ok((s, t)),
        _ => Err(errs.spanned(
            r,
            "a `for` range needs both ends (`a..b`); open ranges are not supported",
        )),
    }
}

/// Checks each `for` of `body` whose variable is in `marked` (with the span of its
/// `unroll(…)`) with [`spoc_ir::unroll::trip_count`] and wraps it in the pragma that has the
/// GPU code generators unroll it; a loop that cannot be unrolled is an error at its range.
pub fn mark_unrolled(
    body: &mut spoc_ir::Block,
    marked: &[(spoc_ir::VarId, crate::errors::Loc)],
    errs: &mut Errors,
) {
    use spoc_ir::visit::{walk_block_mut, VisitMut};
    use spoc_ir::{Stmt, StmtKind};
    struct Mark<'a> {
        marked: &'a [(spoc_ir::VarId, crate::errors::Loc)],
        errs: &'a mut Errors,
    }
    impl VisitMut for Mark<'_> {
        fn visit_block_mut(&mut self, block: &mut spoc_ir::Block) {
            walk_block_mut(self, block);
            for s in block.iter_mut() {
                let StmtKind::For(f) = &s.kind else { continue };
                let Some(&(_, at)) = self.marked.iter().find(|(v, _)| *v == f.var) else {
                    continue;
                };
                if let Err(msg) = spoc_ir::unroll::trip_count(f) {
                    self.errs.at(at, msg);
                    continue;
                }
                let inner = Stmt {
                    kind: std::mem::replace(&mut s.kind, StmtKind::Break),
                    loc: s.loc,
                };
                s.kind = StmtKind::Pragma {
                    hints: vec![spoc_ir::unroll::UNROLL.to_string()],
                    body: vec![inner],
                };
            }
        }
    }
    if !marked.is_empty() {
        Mark { marked, errs }.visit_block_mut(body);
        nested_copies(body, marked, errs);
    }
}

/// The most copies of one body that the marked loops of `block` make (1 without any), with an
/// error at the `unroll(…)` of a marked loop whose nest makes more than
/// [`spoc_ir::unroll::MAX_COPIES`] (reported once per nest, at the innermost loop that passes it).
fn nested_copies(
    block: &spoc_ir::Block,
    marked: &[(spoc_ir::VarId, crate::errors::Loc)],
    errs: &mut Errors,
) -> u64 {
    use spoc_ir::StmtKind;
    let mut most = 1u64;
    for s in block {
        let n = match &s.kind {
            StmtKind::Pragma { hints, body }
                if hints.iter().any(|h| h == spoc_ir::unroll::UNROLL) =>
            {
                let [spoc_ir::Stmt {
                    kind: StmtKind::For(f),
                    ..
                }] = body.as_slice()
                else {
                    continue;
                };
                let inner = nested_copies(&f.body, marked, errs);
                let trip = spoc_ir::unroll::trip_count(f).unwrap_or(1).max(1);
                let copies = trip.saturating_mul(inner);
                if copies > spoc_ir::unroll::MAX_COPIES && inner <= spoc_ir::unroll::MAX_COPIES {
                    if let Some(&(_, at)) = marked.iter().find(|(v, _)| *v == f.var) {
                        errs.at(
                            at,
                            format!(
                                "these nested `unroll(…)` loops make {copies} copies of the innermost body (at most {}); unroll fewer of them",
                                spoc_ir::unroll::MAX_COPIES
                            ),
                        );
                    }
                }
                copies
            }
            StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => nested_copies(b, marked, errs),
            StmtKind::If { then, els, .. } => nested_copies(then, marked, errs)
                .max(els.as_ref().map_or(1, |e| nested_copies(e, marked, errs))),
            StmtKind::While { body, .. } => nested_copies(body, marked, errs),
            StmtKind::For(f) => nested_copies(&f.body, marked, errs),
            StmtKind::Match { arms, .. } => arms
                .iter()
                .map(|(_, b)| nested_copies(b, marked, errs))
                .max()
                .unwrap_or(1),
            _ => 1,
        };
        most = most.max(n);
    }
    most
}
