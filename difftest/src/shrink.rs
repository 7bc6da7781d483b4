//! Shrinking: reduces a kernel (and its inputs) while a predicate — "the same disagreement
//! persists" — holds. Edits, tried in order, outermost first: delete a statement; replace a
//! statement by one of its inner blocks (an `if` by its branch, a `match` by an arm, a loop by
//! its body); cut a loop's trip count, its extra condition, `.rev()` and `.step_by()`; drop an
//! `else`; replace an expression by `0`, by `1`, or by one of its operands of the same type;
//! then set parameters and buffers to zero. Greedy: an accepted edit is kept and the next edit
//! at the same position tried, until a whole pass changes nothing or the budget is spent.
//!
//! A kernel with `#[device]` helpers is first turned into one without ([`inline_helpers`]), so
//! that it can be lowered at run time.

use crate::ast::*;
use crate::oracle::Inputs;
use crate::visit::{uses, Part, Walk};

/// Limits of one shrink.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most predicate calls.
    pub tries: usize,
    /// Most wall-clock time.
    pub time: std::time::Duration,
}

/// What a shrink did.
#[derive(Clone, Debug, Default)]
pub struct ShrinkStats {
    /// Predicate calls.
    pub tries: usize,
    /// Edits kept.
    pub kept: usize,
    /// The budget ran out before a pass changed nothing.
    pub exhausted: bool,
}

/// Shrinks `(k, inputs)` while `holds` is true of the result (it is assumed true of the start).
pub fn shrink(
    k: &Kernel,
    inputs: &Inputs,
    budget: Budget,
    holds: &mut dyn FnMut(&Kernel, &Inputs) -> bool,
) -> (Kernel, Inputs, ShrinkStats) {
    let (k, inp, st, _) = shrink_traced(k, inputs, budget, &mut |k, inp, _| holds(k, inp));
    (k, inp, st)
}

/// One step of a shrink: which candidate of the kernel or inputs it kept. A list of them
/// from the start ([`replay`]) names a shrunk kernel without printing or parsing it, so
/// that another process can rebuild it from the drawn one (a predicate that runs each
/// candidate in a child process, because a driver's crash kills the process that meets it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Kernel edit number `n` ([`apply`]).
    Kernel(usize),
    /// Candidate `choice` of input slot `slot` (`input_edits`: parameters to zero or one,
    /// buffers to zero).
    Input {
        /// The slot.
        slot: usize,
        /// The candidate.
        choice: usize,
    },
}

/// `edits` as text: `k12,i3.0,k4` ([`parse_edits`] reads it back; empty for none).
pub fn format_edits(edits: &[Edit]) -> String {
    let one = |e: &Edit| match e {
        Edit::Kernel(n) => format!("k{n}"),
        Edit::Input { slot, choice } => format!("i{slot}.{choice}"),
    };
    edits.iter().map(one).collect::<Vec<_>>().join(",")
}

/// The edits [`format_edits`] wrote.
///
/// # Errors
/// The first piece that is not `k<n>` or `i<slot>.<choice>`.
pub fn parse_edits(text: &str) -> Result<Vec<Edit>, String> {
    let bad = |p: &str| format!("`{p}` is not an edit (k<n> or i<slot>.<choice>)");
    text.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let p = p.trim();
            if let Some(n) = p.strip_prefix('k') {
                return n.parse().map(Edit::Kernel).map_err(|_| bad(p));
            }
            let (slot, choice) = p
                .strip_prefix('i')
                .and_then(|r| r.split_once('.'))
                .ok_or_else(|| bad(p))?;
            Ok(Edit::Input {
                slot: slot.parse().map_err(|_| bad(p))?,
                choice: choice.parse().map_err(|_| bad(p))?,
            })
        })
        .collect()
}

/// `(k, inputs)` after `edits`, each applied to the result of the ones before, as
/// [`shrink_traced`] applied them; `None` if one does not exist there (edits of another
/// kernel).
pub fn replay(k: &Kernel, inputs: &Inputs, edits: &[Edit]) -> Option<(Kernel, Inputs)> {
    let (mut k, mut inp) = (k.clone(), inputs.clone());
    for e in edits {
        match *e {
            Edit::Kernel(n) => k = apply(&k, n)?,
            Edit::Input { slot, choice } => {
                inp = input_edits(&k, &inp, slot).into_iter().nth(choice)?;
            }
        }
    }
    Some((k, inp))
}

/// [`shrink`], telling `holds` the edits from the start to each candidate and returning the
/// kept ones: `replay(k, inputs, &edits)` is the shrunk pair.
pub fn shrink_traced(
    k: &Kernel,
    inputs: &Inputs,
    budget: Budget,
    holds: &mut dyn FnMut(&Kernel, &Inputs, &[Edit]) -> bool,
) -> (Kernel, Inputs, ShrinkStats, Vec<Edit>) {
    let start = std::time::Instant::now();
    let mut cur = k.clone();
    let mut inp = inputs.clone();
    let mut st = ShrinkStats::default();
    let mut kept: Vec<Edit> = Vec::new();
    let tried = |kept: &[Edit], e: Edit| -> Vec<Edit> { kept.iter().copied().chain([e]).collect() };
    // Every kernel tried, so that no cycle of edits can spend the budget.
    let mut seen = std::collections::HashSet::new();
    seen.insert(crate::print::kernel_fn(&cur, false));
    let out_of_budget =
        |st: &ShrinkStats| st.tries >= budget.tries || start.elapsed() >= budget.time;
    'passes: loop {
        let mut changed = false;
        let mut n = 0;
        while let Some(cand) = apply(&cur, n) {
            if out_of_budget(&st) {
                st.exhausted = true;
                break 'passes;
            }
            if cand == cur || !seen.insert(crate::print::kernel_fn(&cand, false)) {
                n += 1;
                continue;
            }
            st.tries += 1;
            let path = tried(&kept, Edit::Kernel(n));
            if holds(&cand, &inp, &path) {
                cur = cand;
                kept = path;
                st.kept += 1;
                changed = true;
            } else {
                n += 1;
            }
        }
        // Inputs: parameters to zero (else one), then whole buffers to zero; an edit is only
        // tried towards a simpler value, so that no pair of edits undoes each other.
        for slot in 0..input_slots(&cur) {
            for (choice, cand) in input_edits(&cur, &inp, slot).into_iter().enumerate() {
                if out_of_budget(&st) {
                    st.exhausted = true;
                    break 'passes;
                }
                st.tries += 1;
                let path = tried(&kept, Edit::Input { slot, choice });
                if holds(&cur, &cand, &path) {
                    inp = cand;
                    kept = path;
                    st.kept += 1;
                    changed = true;
                    break;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (cur, inp, st, kept)
}

/// Number of input slots [`input_edits`] knows for `k`: used parameters, then used input and
/// output buffers.
fn input_slots(k: &Kernel) -> usize {
    let u = uses(k);
    u.params.len() + 2 * (u.inputs.len() + u.outputs.len())
}

/// Simpler values for input slot `slot`, simplest first (none when it is already simplest).
fn input_edits(k: &Kernel, inp: &Inputs, slot: usize) -> Vec<Inputs> {
    let u = uses(k);
    let mut out = vec![];
    if slot < u.params.len() {
        let p = u.params[slot];
        let i = k.param_index(p);
        let (zero, one) = (Val::zero(k.ty_of(p)), Val::from_bits(k.ty_of(p), 1));
        let cur = inp.params[i];
        for v in [zero, one] {
            if cur.same(zero) || cur.same(v) {
                break;
            }
            let mut c = inp.clone();
            c.params[i] = v;
            out.push(c);
        }
        return out;
    }
    let j = (slot - u.params.len()) / 2;
    let outputs = (slot - u.params.len()) % 2 == 1;
    let list = if outputs { &u.outputs } else { &u.inputs };
    let Some(&t) = list.get(j) else {
        return out;
    };
    let b = t.buf_index().expect("a buffer type");
    let mut c = inp.clone();
    let bufs = if outputs {
        &mut c.outputs
    } else {
        &mut c.inputs
    };
    if bufs[b].iter().all(|v| v.same(Val::zero(t))) {
        return out;
    }
    bufs[b].iter_mut().for_each(|v| *v = Val::zero(t));
    out.push(c);
    out
}

/// Applies edit number `n` to a copy of `k`; `None` when there are fewer edits.
pub fn apply(k: &Kernel, n: usize) -> Option<Kernel> {
    let mut c = k.clone();
    let mut e = Editor {
        left: n,
        done: false,
    };
    e.stmts(&mut c.body);
    if e.done {
        Some(c)
    } else {
        None
    }
}

struct Editor {
    left: usize,
    done: bool,
}

impl Editor {
    /// Whether this site's alternative `alt` of `m` is the one to apply; moves on otherwise.
    fn site(&mut self, m: usize) -> Option<usize> {
        if self.done {
            return None;
        }
        if self.left < m {
            self.done = true;
            Some(self.left)
        } else {
            self.left -= m;
            None
        }
    }

    fn stmts(&mut self, ss: &mut Vec<Stmt>) {
        let mut j = 0;
        while j < ss.len() {
            if self.done {
                return;
            }
            let inner = inner_blocks(&ss[j]);
            // 0: delete; 1..: splice an inner block's statements in its place.
            if let Some(a) = self.site(1 + inner) {
                if a == 0 {
                    ss.remove(j);
                } else {
                    let b = take_inner(&mut ss[j], a - 1);
                    ss.splice(j..j + 1, b);
                }
                return;
            }
            self.stmt(&mut ss[j]);
            j += 1;
        }
    }

    fn block(&mut self, b: &mut Block) {
        self.stmts(&mut b.stmts);
        if let Some(t) = &mut b.tail {
            self.expr(t);
        }
    }

    /// Applies the site's edit if it is the chosen one (see [`Editor::site`]).
    fn edit(&mut self, applies: bool, f: impl FnOnce()) -> bool {
        if applies && self.site(1) == Some(0) {
            f();
            return true;
        }
        false
    }

    fn parts(&mut self, parts: Vec<Part<'_>>) {
        for p in parts {
            match p {
                Part::Expr(e) => self.expr(e),
                Part::Block(b) => self.block(b),
            }
        }
    }

    fn stmt(&mut self, s: &mut Stmt) {
        let edited = match s {
            Stmt::Assign { op, .. } => self.edit(op.is_some(), || *op = None),
            Stmt::If { els, .. } => self.edit(els.is_some(), || *els = None),
            Stmt::While { limit, cond, .. } => {
                self.edit(*limit > 1, || *limit = 1) || self.edit(cond.is_some(), || *cond = None)
            }
            Stmt::Loop { limit, .. } => self.edit(*limit > 1, || *limit = 1),
            Stmt::For(ForLoop {
                lo, hi, rev, step, ..
            }) => {
                // A literal `lo` with a computed `hi`: one trip.
                let one = match (&lo.kind, &hi.kind) {
                    (ExprKind::Lit(l), k) if !matches!(k, ExprKind::Lit(_)) => {
                        Some(Val::from_bits(l.ty(), l.bits().wrapping_add(1)))
                    }
                    _ => None,
                };
                self.edit(one.is_some(), || *hi = Expr::lit(one.expect("a bound")))
                    || self.edit(*rev, || *rev = false)
                    || self.edit(step.is_some(), || *step = None)
            }
            Stmt::Match { arms, .. } => self.drop_arm(arms),
            _ => false,
        };
        if !edited {
            self.parts(s.parts());
        }
    }

    /// Removes one of `arms` if this is the chosen site.
    fn drop_arm(&mut self, arms: &mut Vec<Arm>) -> bool {
        if arms.is_empty() {
            return false;
        }
        match self.site(arms.len()) {
            Some(a) => {
                arms.remove(a);
                true
            }
            None => false,
        }
    }

    fn expr(&mut self, e: &mut Expr) {
        if self.done {
            return;
        }
        let mut alts: Vec<Expr> = vec![];
        let zero = Expr::lit(Val::zero(e.ty));
        let one = Expr::lit(Val::from_bits(e.ty, 1));
        if *e != zero {
            alts.push(zero);
        }
        if *e != one && !matches!(e.kind, ExprKind::Lit(_)) {
            alts.push(one);
        }
        alts.extend(same_typed_children(e));
        if let Some(a) = self.site(alts.len()) {
            *e = alts.swap_remove(a);
            return;
        }
        let edited = match &mut e.kind {
            ExprKind::SharedRead { index, .. } => self.edit(index.is_some(), || *index = None),
            ExprKind::Match(_, arms, _) => self.drop_arm(arms),
            _ => false,
        };
        if !edited {
            self.parts(e.parts());
        }
    }
}

/// The operands of `e` of `e`'s own type (and the tails of its value blocks).
fn same_typed_children(e: &Expr) -> Vec<Expr> {
    let mut v = vec![];
    let mut push = |x: &Expr| {
        if x.ty == e.ty {
            v.push(x.clone());
        }
    };
    match &e.kind {
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => push(a),
        ExprKind::Binary(_, a, b) => {
            push(a);
            push(b);
        }
        ExprKind::Method(_, args) => args.iter().for_each(push),
        ExprKind::If(_, a, b) => {
            for b in [a, b] {
                if let (true, Some(t)) = (b.stmts.is_empty(), &b.tail) {
                    push(t);
                }
            }
        }
        ExprKind::Block(b) => {
            if let (true, Some(t)) = (b.stmts.is_empty(), &b.tail) {
                push(t);
            }
        }
        _ => {}
    }
    v
}

fn inner_blocks(s: &Stmt) -> usize {
    match s {
        Stmt::If { els, .. } => 1 + els.is_some() as usize,
        Stmt::While { .. } | Stmt::Loop { .. } | Stmt::For(_) | Stmt::Block(_) => 1,
        Stmt::Match { arms, .. } => 1 + arms.len().min(3),
        _ => 0,
    }
}

fn take_inner(s: &mut Stmt, i: usize) -> Vec<Stmt> {
    let b = match s {
        Stmt::If { then, els, .. } => {
            if i == 0 {
                then
            } else {
                els.as_mut().expect("an else")
            }
        }
        Stmt::While { body, .. } | Stmt::Loop { body, .. } | Stmt::For(ForLoop { body, .. }) => {
            body
        }
        Stmt::Block(b) => b,
        Stmt::Match { arms, default, .. } => {
            if i == 0 {
                default
            } else {
                &mut arms[i - 1].body
            }
        }
        _ => unreachable!("no inner block"),
    };
    std::mem::take(&mut b.stmts)
}

/// `k` with every helper call replaced by a block binding the arguments to the helper's
/// parameters, then the helper's body (helpers are pure: no outputs, shared memory, atomics
/// or `return`), so that the kernel can be lowered at run time. Evaluation order is kept:
/// arguments left to right, then the body.
pub fn inline_helpers(k: &Kernel) -> Kernel {
    let mut c = k.clone();
    for h in &k.helpers {
        for &p in &h.params {
            c.vars[p.0 as usize].kind = VarKind::Local { mutable: false };
        }
    }
    let hs = &k.helpers;
    let mut walk = Walk {
        on_stmt: &mut |_| {},
        on_expr: &mut |e| {
            if let ExprKind::Call(h, args) = &mut e.kind {
                let helper = &hs[*h];
                let mut stmts: Vec<Stmt> = helper
                    .params
                    .iter()
                    .zip(args.drain(..))
                    .map(|(&p, a)| Stmt::Let { var: p, init: a })
                    .collect();
                let mut body = helper.body.clone();
                stmts.append(&mut body.stmts);
                *e = Expr {
                    ty: e.ty,
                    kind: ExprKind::Block(Box::new(Block {
                        stmts,
                        tail: body.tail,
                    })),
                };
            }
        },
    };
    c.body.iter_mut().for_each(|s| walk.stmt(s));
    c.helpers.clear();
    c
}
