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
use crate::visit::uses;

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
    let start = std::time::Instant::now();
    let mut cur = k.clone();
    let mut inp = inputs.clone();
    let mut st = ShrinkStats::default();
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
            if holds(&cand, &inp) {
                cur = cand;
                st.kept += 1;
                changed = true;
            } else {
                n += 1;
            }
        }
        // Inputs: parameters to zero (else one), then whole buffers to zero; an edit is only
        // tried towards a simpler value, so that no pair of edits undoes each other.
        for slot in 0..input_slots(&cur) {
            for cand in input_edits(&cur, &inp, slot) {
                if out_of_budget(&st) {
                    st.exhausted = true;
                    break 'passes;
                }
                st.tries += 1;
                if holds(&cur, &cand) {
                    inp = cand;
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
    (cur, inp, st)
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
        let i = k.params.iter().position(|&q| q == p).expect("a parameter");
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

    fn stmt(&mut self, s: &mut Stmt) {
        match s {
            Stmt::Let { init, .. } | Stmt::LetArr { init, .. } => self.expr(init),
            Stmt::Assign { place, op, value } => {
                if op.is_some() {
                    if let Some(0) = self.site(1) {
                        *op = None;
                        return;
                    }
                }
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
                if els.is_some() {
                    if let Some(0) = self.site(1) {
                        *els = None;
                        return;
                    }
                }
                self.expr(cond);
                self.block(then);
                if let Some(e) = els {
                    self.block(e);
                }
            }
            Stmt::While {
                limit, cond, body, ..
            } => {
                if *limit > 1 {
                    if let Some(0) = self.site(1) {
                        *limit = 1;
                        return;
                    }
                }
                if cond.is_some() {
                    if let Some(0) = self.site(1) {
                        *cond = None;
                        return;
                    }
                }
                if let Some(c) = cond {
                    self.expr(c);
                }
                self.block(body);
            }
            Stmt::Loop { limit, body, .. } => {
                if *limit > 1 {
                    if let Some(0) = self.site(1) {
                        *limit = 1;
                        return;
                    }
                }
                self.block(body);
            }
            Stmt::For {
                lo,
                hi,
                rev,
                step,
                body,
                ..
            } => {
                if let (ExprKind::Lit(l), false) = (&lo.kind, matches!(hi.kind, ExprKind::Lit(_))) {
                    let one = Val::from_bits(l.ty(), l.bits().wrapping_add(1));
                    {
                        if let Some(0) = self.site(1) {
                            *hi = Expr::lit(one);
                            return;
                        }
                    }
                }
                if *rev {
                    if let Some(0) = self.site(1) {
                        *rev = false;
                        return;
                    }
                }
                if step.is_some() {
                    if let Some(0) = self.site(1) {
                        *step = None;
                        return;
                    }
                }
                self.expr(lo);
                self.expr(hi);
                self.block(body);
            }
            Stmt::Match {
                scrut,
                arms,
                default,
            } => {
                if !arms.is_empty() {
                    if let Some(a) = self.site(arms.len()) {
                        arms.remove(a);
                        return;
                    }
                }
                self.expr(scrut);
                for a in arms.iter_mut() {
                    self.block(&mut a.body);
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
        match &mut e.kind {
            ExprKind::Lit(_)
            | ExprKind::Var(_)
            | ExprKind::Intr(_)
            | ExprKind::OutRead { .. }
            | ExprKind::Len(_) => {}
            ExprKind::Input { index, .. } | ExprKind::ArrRead { index, .. } => self.expr(index),
            ExprKind::SharedRead { index, .. } => {
                if index.is_some() {
                    if let Some(0) = self.site(1) {
                        *index = None;
                        return;
                    }
                }
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
                if !arms.is_empty() {
                    if let Some(a) = self.site(arms.len()) {
                        arms.remove(a);
                        return;
                    }
                }
                self.expr(s);
                for a in arms.iter_mut() {
                    self.block(&mut a.body);
                }
                self.block(d);
            }
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
        Stmt::While { .. } | Stmt::Loop { .. } | Stmt::For { .. } | Stmt::Block(_) => 1,
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
        Stmt::While { body, .. } | Stmt::Loop { body, .. } | Stmt::For { body, .. } => body,
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
    let helpers = k.helpers.clone();
    fn expr(e: &mut Expr, hs: &[Helper]) {
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
        match &mut e.kind {
            ExprKind::Input { index, .. } | ExprKind::ArrRead { index, .. } => expr(index, hs),
            ExprKind::SharedRead { index: Some(i), .. } => expr(i, hs),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => expr(a, hs),
            ExprKind::Binary(_, a, b) => {
                expr(a, hs);
                expr(b, hs);
            }
            ExprKind::Method(_, args) | ExprKind::Call(_, args) => {
                args.iter_mut().for_each(|a| expr(a, hs))
            }
            ExprKind::If(c, a, b) => {
                expr(c, hs);
                block(a, hs);
                block(b, hs);
            }
            ExprKind::Block(b) => block(b, hs),
            ExprKind::Match(s, arms, d) => {
                expr(s, hs);
                arms.iter_mut().for_each(|a| block(&mut a.body, hs));
                block(d, hs);
            }
            _ => {}
        }
    }
    fn block(b: &mut Block, hs: &[Helper]) {
        b.stmts.iter_mut().for_each(|s| stmt(s, hs));
        if let Some(t) = &mut b.tail {
            expr(t, hs);
        }
    }
    fn stmt(s: &mut Stmt, hs: &[Helper]) {
        match s {
            Stmt::Let { init, .. } | Stmt::LetArr { init, .. } => expr(init, hs),
            Stmt::Assign { place, value, .. } => {
                expr(value, hs);
                if let Place::Arr(_, i) = place {
                    expr(i, hs);
                }
            }
            Stmt::Atomic { index, value, .. } => {
                if let Some(i) = index {
                    expr(i, hs);
                }
                expr(value, hs);
            }
            Stmt::If { cond, then, els } => {
                expr(cond, hs);
                block(then, hs);
                if let Some(e) = els {
                    block(e, hs);
                }
            }
            Stmt::While { cond, body, .. } => {
                if let Some(c) = cond {
                    expr(c, hs);
                }
                block(body, hs);
            }
            Stmt::Loop { body, .. } => block(body, hs),
            Stmt::For { lo, hi, body, .. } => {
                expr(lo, hs);
                expr(hi, hs);
                block(body, hs);
            }
            Stmt::Match {
                scrut,
                arms,
                default,
            } => {
                expr(scrut, hs);
                arms.iter_mut().for_each(|a| block(&mut a.body, hs));
                block(default, hs);
            }
            Stmt::Block(b) => block(b, hs),
            Stmt::Warp { value, operand, .. } => {
                expr(value, hs);
                if let Some(o) = operand {
                    expr(o, hs);
                }
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Sync => {}
        }
    }
    c.body.iter_mut().for_each(|s| stmt(s, &helpers));
    c.helpers.clear();
    c
}
