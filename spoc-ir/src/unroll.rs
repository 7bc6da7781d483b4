//! Unrolling the loops `for k in unroll(a..b)` marks: the front end checks the loop
//! ([`trip_count`]) and wraps it in a [`StmtKind::Pragma`] with the hint [`UNROLL`]; the code
//! generators of the GPU targets take [`unrolled`], where each marked loop is one
//! copy of its body per value of `k`, in order, `k` replaced by the value and every variable the
//! body declares made fresh in each copy (the IR declares each variable once). Inner marked
//! loops are unrolled first, so a nest of them becomes straight-line code and a local array
//! indexed only by their variables is indexed by constants (registers, not local memory). The
//! CPU backends run the loop as written (a pragma is a block to them): the meaning is the same,
//! and the Native backend's generated Rust stays small.

use crate::idmap::IdMap;
use crate::visit::{walk_expr_mut, walk_stmt_mut, VisitMut};
use crate::{
    BinOp, Block, Const, Expr, ExprKind, ForDir, ForLoop, Kernel, Pattern, ScalarType, Stmt,
    StmtKind, Type, UnOp, VarDecl, VarId,
};

/// The hint of a marked loop's [`StmtKind::Pragma`].
pub const UNROLL: &str = "unroll";

/// The most iterations one marked loop may unroll to.
pub const MAX_TRIP: u64 = 256;

/// The most copies of one body that nested marked loops may make together (the product of
/// their trip counts): past it the straight-line code gets too long for the GPU compilers.
pub const MAX_COPIES: u64 = 4096;

/// Whether `s` is a loop marked for unrolling: a pragma [`UNROLL`] around one `for`.
fn marked(s: &Stmt) -> Option<&ForLoop> {
    match &s.kind {
        StmtKind::Pragma { hints, body } if hints.iter().any(|h| h == UNROLL) => {
            match body.as_slice() {
                [Stmt {
                    kind: StmtKind::For(f),
                    ..
                }] => Some(f),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `kernel` (valid) with its marked loops unrolled (see the [module](self)), or `None` if it has
/// none. A marked loop whose [`trip_count`] fails stays a loop. Each copy declares fresh
/// variables and the loop variable becomes a constant of its type, so a valid kernel stays
/// valid.
pub fn unrolled(kernel: &Kernel) -> Option<Kernel> {
    let any = |b: &Block| {
        let mut found = false;
        crate::visit::for_each_stmt(b, &mut |s| found |= marked(s).is_some());
        found
    };
    if !any(&kernel.body) && !kernel.functions.iter().any(|f| any(&f.body)) {
        return None;
    }
    let mut k = kernel.clone();
    block(&mut k.body, &mut k.vars);
    for f in &mut k.functions {
        block(&mut f.body, &mut f.vars);
    }
    Some(k)
}

/// How many times marked loop `f` runs.
///
/// # Errors
/// Why it cannot be unrolled: a bound or step that is not a compile-time constant, a step of 0,
/// a `break` or `continue` of the loop itself, more than [`MAX_TRIP`] iterations.
pub fn trip_count(f: &ForLoop) -> Result<u64, String> {
    let bound = |e: &Expr, what: &str| {
        fold(e).ok_or_else(|| {
            format!("`unroll(…)` needs a range whose {what} is a compile-time constant (literals, const parameters and `+ - * / << >>` on them that neither wrap nor change under a cast)")
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
    Ok(trip as u64)
}

/// Unrolls the marked loops of `b` (inner ones first), adding the copies' variables to `vars`.
fn block(b: &mut Block, vars: &mut Vec<VarDecl>) {
    for s in b.iter_mut() {
        nested_blocks(&mut s.kind, &mut |inner| block(inner, vars));
        if let Some(copies) = marked(s).and_then(|f| copies(f, vars)) {
            s.kind = StmtKind::Block(copies);
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
fn copies(f: &ForLoop, vars: &mut Vec<VarDecl>) -> Option<Block> {
    let trip = trip_count(f).ok()?;
    let Type::Scalar(ty) = vars.get(f.var.0 as usize)?.ty.clone() else {
        return None;
    };
    let (start, end, step) = (fold(&f.start)?, fold(&f.end)?, fold(&f.step)?);
    let mut out = Block::with_capacity(trip as usize);
    for n in 0..i128::from(trip) {
        let v = match f.dir {
            ForDir::Up => start + n * step,
            ForDir::Down => end - 1 - n * step,
        };
        let mut fresh = Fresh {
            var: f.var,
            value: constant(ty, v)?,
            renamed: IdMap::default(),
            vars,
        };
        out.push(Stmt {
            kind: StmtKind::Block(fresh.block(&f.body)),
            loc: None,
        });
    }
    Some(out)
}

/// The value of an integer constant expression: constants, `+ - * / << >>` and casts of them,
/// exactly as the kernel computes it. Anything whose value would wrap, or be changed by a cast,
/// or shift by the type's width or more, is not folded (`None`: the loop is refused), so the
/// unrolled trip count can never differ from the loop's on the CPU backends.
pub(crate) fn fold(e: &Expr) -> Option<i128> {
    let v = match &e.kind {
        ExprKind::Const(c) => match *c {
            Const::I32(v) => v.into(),
            Const::I64(v) => v.into(),
            Const::U32(v) => v.into(),
            Const::U64(v) => v.into(),
            _ => return None,
        },
        ExprKind::Cast { value, .. } => fold(value)?,
        // `%` is folded by `fold_constants` only: `unroll(…)` bounds and counted steps take
        // `+ - * / << >>`.
        ExprKind::Binary { op, lhs, rhs } if *op != BinOp::Rem => {
            checked_op(*op, fold(lhs)?, fold(rhs)?, bits(&e.ty)?)?
        }
        _ => return None,
    };
    fits(&e.ty, v).then_some(v)
}

/// `l op r` for integer `+ - * / % << >>` on a type of `width` bits, computed in `i128`:
/// `None` for another operator, a zero divisor, a shift by `width` or more, or a result that
/// overflows `i128` (whether it fits the type is the caller's [`fits`]).
fn checked_op(op: BinOp, l: i128, r: i128, width: i128) -> Option<i128> {
    match op {
        BinOp::Add => l.checked_add(r),
        BinOp::Sub => l.checked_sub(r),
        BinOp::Mul => l.checked_mul(r),
        BinOp::Div if r != 0 => l.checked_div(r),
        BinOp::Rem if r != 0 => l.checked_rem(r),
        BinOp::Shl if (0..width).contains(&r) => l.checked_shl(r as u32),
        BinOp::Shr if (0..width).contains(&r) => l.checked_shr(r as u32),
        _ => None,
    }
}

/// The width in bits of integer type `ty`.
fn bits(ty: &Type) -> Option<i128> {
    match ty {
        Type::Scalar(ScalarType::I32 | ScalarType::U32) => Some(32),
        Type::Scalar(ScalarType::I64 | ScalarType::U64) => Some(64),
        _ => None,
    }
}

/// Whether `v` is a value of integer type `ty`.
fn fits(ty: &Type, v: i128) -> bool {
    let (lo, hi): (i128, i128) = match ty {
        Type::Scalar(ScalarType::I32) => (i32::MIN.into(), i32::MAX.into()),
        Type::Scalar(ScalarType::I64) => (i64::MIN.into(), i64::MAX.into()),
        Type::Scalar(ScalarType::U32) => (0, u32::MAX.into()),
        Type::Scalar(ScalarType::U64) => (0, u64::MAX.into()),
        _ => return false,
    };
    (lo..=hi).contains(&v)
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
/// fresh one (added to `vars`), and the constant arithmetic that leaves is folded.
struct Fresh<'a> {
    var: VarId,
    value: Expr,
    renamed: IdMap<VarId, VarId>,
    vars: &'a mut Vec<VarDecl>,
}

impl Fresh<'_> {
    /// A fresh variable for `v` (declared by the body), remembered for the references after it.
    fn declare(&mut self, v: VarId) -> VarId {
        let decl = self.vars[v.0 as usize].clone();
        let new = VarId(self.vars.len() as u32);
        self.vars.push(decl);
        self.renamed.insert(v, new);
        new
    }

    /// What a reference to `v` becomes.
    fn rename(&self, v: VarId) -> VarId {
        self.renamed.get(&v).copied().unwrap_or(v)
    }

    /// The copy of `b`. Built in one pass, node by node, rather than cloned and then rewritten:
    /// the copies of an unrolled SGEMM are most of its IR. Variables are declared in the order
    /// of [`crate::visit`] (a statement's expressions before its blocks, a `let`'s initialiser
    /// before its variable, a `for`'s variable before its bounds, a pattern before its arm), so
    /// the fresh ids are those an in-place rewrite would give.
    fn block(&mut self, b: &[Stmt]) -> Block {
        b.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Stmt {
        let kind = match &s.kind {
            // A `let`'s initialiser cannot name the variable it declares: it is copied first.
            StmtKind::Let { var, init } => {
                let init = init.as_ref().map(|e| self.expr(e));
                StmtKind::Let {
                    var: self.declare(*var),
                    init,
                }
            }
            StmtKind::Assign { target, value } => StmtKind::Assign {
                target: self.place(target),
                value: self.expr(value),
            },
            StmtKind::Block(b) => StmtKind::Block(self.block(b)),
            StmtKind::Pragma { hints, body } => StmtKind::Pragma {
                hints: hints.clone(),
                body: self.block(body),
            },
            StmtKind::If { cond, then, els } => StmtKind::If {
                cond: self.expr(cond),
                then: self.block(then),
                els: els.as_ref().map(|b| self.block(b)),
            },
            StmtKind::While { cond, body } => StmtKind::While {
                cond: self.expr(cond),
                body: self.block(body),
            },
            // A `for` body sees its own variable renamed.
            StmtKind::For(f) => StmtKind::For(ForLoop {
                var: self.declare(f.var),
                start: self.expr(&f.start),
                end: self.expr(&f.end),
                step: self.expr(&f.step),
                dir: f.dir,
                body: self.block(&f.body),
            }),
            StmtKind::Match { scrutinee, arms } => StmtKind::Match {
                scrutinee: self.expr(scrutinee),
                arms: arms
                    .iter()
                    .map(|(p, b)| (self.pattern(p), self.block(b)))
                    .collect(),
            },
            StmtKind::Return(e) => StmtKind::Return(e.as_ref().map(|e| self.expr(e))),
            StmtKind::Expr(e) => StmtKind::Expr(self.expr(e)),
            StmtKind::Break => StmtKind::Break,
            StmtKind::Continue => StmtKind::Continue,
            StmtKind::Barrier => StmtKind::Barrier,
            StmtKind::WarpBarrier => StmtKind::WarpBarrier,
            StmtKind::MemFence(scope) => StmtKind::MemFence(*scope),
        };
        Stmt { kind, loc: s.loc }
    }

    fn place(&mut self, place: &crate::LValue) -> crate::LValue {
        use crate::LValue;
        match place {
            LValue::Var(v) => LValue::Var(self.rename(*v)),
            LValue::Index { base, index } => LValue::Index {
                base: Box::new(self.place(base)),
                index: self.expr(index),
            },
            LValue::Field { base, field } => LValue::Field {
                base: Box::new(self.place(base)),
                field: field.clone(),
            },
        }
    }

    fn pattern(&mut self, p: &Pattern) -> Pattern {
        match p {
            Pattern::Case {
                variant,
                case,
                bindings,
            } => Pattern::Case {
                variant: variant.clone(),
                case: case.clone(),
                bindings: bindings.iter().map(|b| self.declare(*b)).collect(),
            },
            other => other.clone(),
        }
    }

    fn exprs(&mut self, es: &[Expr]) -> Vec<Expr> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn boxed(&mut self, e: &Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn expr(&mut self, e: &Expr) -> Expr {
        let kind = match &e.kind {
            // The loop variable: its value, with the variable's type.
            ExprKind::Var(v) if *v == self.var => {
                return Expr {
                    kind: self.value.kind.clone(),
                    ty: e.ty.clone(),
                }
            }
            ExprKind::Var(v) => ExprKind::Var(self.rename(*v)),
            ExprKind::Const(c) => ExprKind::Const(*c),
            ExprKind::Index { array, index } => ExprKind::Index {
                array: self.boxed(array),
                index: self.boxed(index),
            },
            ExprKind::Field { base, field } => ExprKind::Field {
                base: self.boxed(base),
                field: field.clone(),
            },
            ExprKind::Unary { op, operand } => ExprKind::Unary {
                op: *op,
                operand: self.boxed(operand),
            },
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: self.boxed(lhs),
                rhs: self.boxed(rhs),
            },
            ExprKind::Intrinsic { intrinsic, args } => ExprKind::Intrinsic {
                intrinsic: *intrinsic,
                args: self.exprs(args),
            },
            ExprKind::Cast { value, to } => ExprKind::Cast {
                value: self.boxed(value),
                to: *to,
            },
            ExprKind::Call { func, args } => ExprKind::Call {
                func: func.clone(),
                args: self.exprs(args),
            },
            ExprKind::Select { cond, then, els } => ExprKind::Select {
                cond: self.boxed(cond),
                then: self.boxed(then),
                els: self.boxed(els),
            },
            ExprKind::Match { scrutinee, arms } => ExprKind::Match {
                scrutinee: self.boxed(scrutinee),
                arms: arms
                    .iter()
                    .map(|(p, a)| (self.pattern(p), self.expr(a)))
                    .collect(),
            },
            ExprKind::Len(a) => ExprKind::Len(self.boxed(a)),
            ExprKind::RecordLit { record, fields } => ExprKind::RecordLit {
                record: record.clone(),
                fields: self.exprs(fields),
            },
            ExprKind::VariantLit {
                variant,
                case,
                payload,
            } => ExprKind::VariantLit {
                variant: variant.clone(),
                case: case.clone(),
                payload: self.exprs(payload),
            },
            ExprKind::ArrayRepeat { value, len } => ExprKind::ArrayRepeat {
                value: self.boxed(value),
                len: *len,
            },
            ExprKind::VectorLit(lanes) => ExprKind::VectorLit(self.exprs(lanes)),
        };
        let mut out = Expr {
            kind,
            ty: e.ty.clone(),
        };
        // The copies are full of constant arithmetic once the loop variable is a constant
        // (`acc[m * TN + j]`): folded here, the copies that an enclosing unrolled loop makes of
        // this one are that much smaller.
        fold_node(&mut out);
        out
    }
}

/// How far [`auto_unrolled`] unrolls the loops that `unroll(…)` does not mark: what a C
/// compiler's loop unroller does for the targets whose downstream compiler does not (`ptxas`
/// unrolls little and leaves a loop's loads one iteration at a time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoUnroll {
    /// A `for` whose bounds and step are compile-time constants ([`trip_count`]) with at most
    /// this many iterations becomes straight-line code…
    pub full_max_trip: u64,
    /// …when its trip count times its body's [`cost`] is at most this.
    pub full_max_cost: usize,
    /// An innermost `for` over an unsigned range with a step of 1 and unknown bounds runs
    /// this many copies of its body per iteration of a main loop, then the rest one at a time
    /// (1: off).
    pub partial_factor: u32,
    /// …when its body's [`cost`] is at most this.
    pub partial_max_cost: usize,
}

impl AutoUnroll {
    /// The settings of the CUDA/PTX target: full unrolling of up to 16 iterations, 4 copies of
    /// a small innermost loop (what NVRTC's optimiser gives the same loops). The partial limit
    /// admits the all-pairs loop of `nbody` (cost 70: a 7-field record load, a square root, a
    /// reciprocal), which NVRTC runs four copies of too; the copies' record loads go first
    /// (`hoist_readonly_loads`): with the copies alone CUDA/PTX was 0.82x CUDA/C on the
    /// H200, with the loads first 1.00x on an H100.
    pub const PTX: AutoUnroll = AutoUnroll {
        full_max_trip: 16,
        full_max_cost: 640,
        partial_factor: 4,
        partial_max_cost: 96,
    };
}

/// The size of `b` for the unrolling limits: one per statement and per expression node, a
/// helper call 24 (the PTX generator inlines helpers).
pub fn cost(b: &Block) -> usize {
    let mut n = 0;
    crate::visit::for_each_stmt(b, &mut |_| n += 1);
    crate::visit::for_each_expr(b, &mut |e| {
        n += match e.kind {
            ExprKind::Call { .. } => 24,
            _ => 1,
        }
    });
    n
}

/// [`cost`], counted only as far as `cap`: the cost when it is at most `cap`, some larger
/// value otherwise (what lies past `cap` is not visited: the loops around an unrolled body are
/// far over every limit, and counting all of it would walk the body once per enclosing loop).
fn cost_capped(b: &Block, cap: usize) -> usize {
    struct Count {
        n: usize,
        cap: usize,
    }
    impl<'ir> crate::visit::Visit<'ir> for Count {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            if self.n <= self.cap {
                self.n += 1;
                crate::visit::walk_stmt(self, s);
            }
        }
        fn visit_expr(&mut self, e: &'ir Expr) {
            if self.n <= self.cap {
                self.n += match e.kind {
                    ExprKind::Call { .. } => 24,
                    _ => 1,
                };
                crate::visit::walk_expr(self, e);
            }
        }
    }
    let mut c = Count { n: 0, cap };
    crate::visit::Visit::visit_block(&mut c, b);
    c.n
}

/// `kernel` with the loops `unroll(…)` does not mark unrolled as `opts` allows (inner loops
/// first), or `None` if no loop qualifies. A *counted* `while` (`let mut v =
/// c; while v < n { …; v = v * 2 }` with constants) is a `for` of known trip count to these
/// limits, and unrolled fully the same way. The meaning is unchanged: a fully unrolled loop is
/// its copies in order, as for a marked one; a partially unrolled
/// `for k in a..b { body }` becomes
///
/// ```text
/// { let lo = a; let hi = b; let mut mid = lo;
///   if lo < hi { mid = lo + ((hi - lo) & !(F - 1)); }
///   for j in (lo..mid).step_by(F) { body[k := j]; body[k := j + 1]; … body[k := j + F - 1] }
///   for k in mid..hi { body } }
/// ```
///
/// (bounds evaluated once, in order, as Rust does; no value wraps). A body with a barrier,
/// a warp operation, a loop, or its own `break`/`continue` is not partially unrolled: which
/// lanes take which copy could change what a warp operation sees.
pub fn auto_unrolled(kernel: &Kernel, opts: &AutoUnroll) -> Option<Kernel> {
    let mut k = kernel.clone();
    auto_unroll(&mut k, opts).then_some(k)
}

/// [`auto_unrolled`] in place; whether anything changed.
pub fn auto_unroll(k: &mut Kernel, opts: &AutoUnroll) -> bool {
    let readonly = readonly_buffers(&k.params);
    let mut changed = auto_block(&mut k.body, &mut k.vars, opts, &readonly);
    for f in &mut k.functions {
        // No helper parameter is known read-only: a call may pass one buffer as both a `&[T]`
        // and a `&mut [T]` argument (nothing borrow-checks a kernel body), so a helper's loads
        // stay where its stores can precede them.
        changed |= auto_block(&mut f.body, &mut f.vars, opts, &[]);
    }
    changed
}

/// The `&[T]` buffer parameters of a kernel: memory nothing writes while it runs (a launch
/// borrows each argument, so no `&mut [T]` argument can be the same buffer).
fn readonly_buffers(params: &[crate::Param]) -> Vec<VarId> {
    params
        .iter()
        .filter(|p| !p.mutable && matches!(p.ty, Type::Array { .. }))
        .map(|p| p.var)
        .collect()
}

/// [`auto_unrolled`] on one block; whether anything changed.
fn auto_block(
    b: &mut Block,
    vars: &mut Vec<VarDecl>,
    opts: &AutoUnroll,
    readonly: &[VarId],
) -> bool {
    let mut changed = false;
    // Past this, a body is over every limit below whatever its exact cost.
    let cap = opts.full_max_cost.max(opts.partial_max_cost);
    // In place, one statement at a time: a replacement is one statement too, and rebuilding
    // every block would move the whole (large, once unrolled) tree in memory.
    for i in 0..b.len() {
        let (before, rest) = b.split_at_mut(i);
        let s = &mut rest[0];
        nested_blocks(&mut s.kind, &mut |inner| {
            changed |= auto_block(inner, vars, opts, readonly)
        });
        let replacement = match &s.kind {
            StmtKind::While { cond, body } => counted_while(before.last(), cond, body, vars)
                .filter(|w| {
                    (w.values.len() as u64) <= opts.full_max_trip
                        && w.values.len().saturating_mul(cost_capped(body, cap))
                            <= opts.full_max_cost
                })
                .and_then(|w| counted_copies(&w, body, vars)),
            StmtKind::For(f) => {
                let body_cost = cost_capped(&f.body, cap);
                let full = trip_count(f).ok().filter(|&t| {
                    t <= opts.full_max_trip
                        && (t as usize).saturating_mul(body_cost) <= opts.full_max_cost
                });
                match full {
                    Some(_) => copies(f, vars),
                    None if body_cost <= opts.partial_max_cost => {
                        partial(f, vars, opts.partial_factor, readonly)
                    }
                    None => None,
                }
            }
            _ => None,
        };
        if let Some(r) = replacement {
            changed = true;
            s.kind = StmtKind::Block(r);
        }
    }
    changed
}

/// Whether a partially unrolled copy of `body` could behave differently: a loop, a barrier or
/// fence, a warp operation, a `break`/`continue` of its own.
fn unsafe_to_interleave(body: &Block) -> bool {
    let mut bad = own_break(body);
    crate::visit::for_each_stmt(body, &mut |s| {
        bad |= matches!(
            s.kind,
            StmtKind::For(_)
                | StmtKind::While { .. }
                | StmtKind::Barrier
                | StmtKind::WarpBarrier
                | StmtKind::MemFence(_)
        )
    });
    crate::visit::for_each_expr(body, &mut |e| {
        bad |= matches!(&e.kind, ExprKind::Intrinsic { intrinsic, .. } if intrinsic.is_warp())
            || matches!(e.kind, ExprKind::Call { .. })
    });
    bad
}

/// The partially unrolled form of `f` (see [`auto_unrolled`]), or `None` if `f` does not
/// qualify: counting up by 1 over `u32` or `u64`, a factor of at least 2 that is a power of two.
fn partial(f: &ForLoop, vars: &mut Vec<VarDecl>, factor: u32, readonly: &[VarId]) -> Option<Block> {
    if factor < 2 || !factor.is_power_of_two() || f.dir != ForDir::Up || !f.unit_step() {
        return None;
    }
    let ty = match vars.get(f.var.0 as usize)?.ty {
        Type::Scalar(t @ (ScalarType::U32 | ScalarType::U64)) => t,
        _ => return None,
    };
    if unsafe_to_interleave(&f.body) {
        return None;
    }
    let t = Type::Scalar(ty);
    let mut local = |name: &str, mutable: bool| {
        let id = VarId(vars.len() as u32);
        vars.push(VarDecl {
            name: name.into(),
            ty: t.clone(),
            mutable,
            kind: crate::VarKind::Local,
        });
        id
    };
    let (lo, hi, mid, j) = (
        local("unroll_lo", false),
        local("unroll_hi", false),
        local("unroll_mid", true),
        local("unroll_j", false),
    );
    let var = |v: VarId| Expr::var(v, t.clone());
    let bin = |op: BinOp, l: Expr, r: Expr| Expr {
        ty: if op.is_comparison() {
            Type::Scalar(ScalarType::Bool)
        } else {
            l.ty.clone()
        },
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(l),
            rhs: Box::new(r),
        },
    };
    let c = |v: u64| constant(ty, v.into());
    let let_ = |v: VarId, init: Expr| {
        Stmt::new(StmtKind::Let {
            var: v,
            init: Some(init),
        })
    };
    // mid = lo + ((hi - lo) & !(factor - 1)), only when lo < hi (no wrap).
    let span = bin(BinOp::Sub, var(hi), var(lo));
    let mask = match ty {
        ScalarType::U32 => c(u64::from(!(factor - 1))),
        _ => c(!u64::from(factor - 1)),
    }?;
    let set_mid = Stmt::new(StmtKind::Assign {
        target: crate::LValue::Var(mid),
        value: bin(BinOp::Add, var(lo), bin(BinOp::BitAnd, span, mask)),
    });
    let mut copies = Vec::new();
    for k in 0..factor {
        let value = if k == 0 {
            var(j)
        } else {
            bin(BinOp::Add, var(j), c(k.into())?)
        };
        let mut fresh = Fresh {
            var: f.var,
            value,
            renamed: IdMap::default(),
            vars,
        };
        copies.push(fresh.block(&f.body));
    }
    let mut main_body = hoist_readonly_loads(&mut copies, readonly);
    main_body.extend(copies.into_iter().map(|c| Stmt::new(StmtKind::Block(c))));
    let main = ForLoop {
        var: j,
        start: var(lo),
        end: var(mid),
        step: Expr::constant(Const::U32(factor)),
        dir: ForDir::Up,
        body: main_body,
    };
    let rest = ForLoop {
        start: var(mid),
        end: var(hi),
        ..f.clone()
    };
    Some(vec![
        let_(lo, f.start.clone()),
        let_(hi, f.end.clone()),
        let_(mid, var(lo)),
        Stmt::new(StmtKind::If {
            cond: bin(BinOp::Lt, var(lo), var(hi)),
            then: vec![set_mid],
            els: None,
        }),
        Stmt::new(StmtKind::For(main)),
        Stmt::new(StmtKind::For(rest)),
    ])
}

/// Takes out of the `copies` of a partially unrolled body (in order) every top-level
/// `let v = buf[i];` that reads a read-only buffer (`readonly`) at an index computed from
/// constants and variables the copies neither declare nor assign (the loop variable, values
/// from before the loop) with `+ - * & | ^ << >>`, negation and casts: the statements to run
/// before the copies, in their order.
///
/// The meaning is unchanged: the copies have no exit (no `return`; no `break`, `continue`,
/// loop, barrier, warp operation or call, see [`unsafe_to_interleave`]), so every such load
/// ran anyway, of the same element (its index's variables hold the same values), from memory
/// nothing writes during the launch; only when it runs changes. What it buys: `ptxas` keeps
/// the order of loads around a square root or division (whose slow paths are branches in
/// SASS), so loads placed before the first copy's arithmetic are all in flight together, as
/// NVRTC's optimiser places them; in `nbody`'s all-pairs loop each copy's record load
/// otherwise waited for the copy before it.
fn hoist_readonly_loads(copies: &mut [Block], readonly: &[VarId]) -> Block {
    let mut hoisted = Block::new();
    if readonly.is_empty() {
        return hoisted;
    }
    let mut exits = false;
    let mut declared = std::collections::HashSet::new();
    for c in copies.iter() {
        crate::visit::for_each_stmt(c, &mut |s| match &s.kind {
            StmtKind::Return(_) => exits = true,
            StmtKind::Let { var, .. } => {
                declared.insert(*var);
            }
            StmtKind::Assign { target, .. } => {
                declared.insert(crate::visit::place_root(target));
            }
            _ => {}
        });
    }
    if exits {
        return hoisted;
    }
    let stable_index = |e: &Expr| {
        !crate::visit::any_expr(e, &mut |x| match &x.kind {
            ExprKind::Const(_) | ExprKind::Cast { .. } | ExprKind::Unary { .. } => false,
            ExprKind::Var(v) => declared.contains(v),
            ExprKind::Binary { op, .. } => matches!(op, BinOp::Div | BinOp::Rem),
            _ => true,
        })
    };
    for c in copies.iter_mut() {
        let mut kept = Block::with_capacity(c.len());
        for s in c.drain(..) {
            let load = match &s.kind {
                StmtKind::Let {
                    init: Some(init), ..
                } => match &init.kind {
                    ExprKind::Index { array, index } => {
                        matches!(array.kind, ExprKind::Var(b) if readonly.contains(&b))
                            && stable_index(index)
                    }
                    _ => false,
                },
                _ => false,
            };
            if load {
                hoisted.push(s);
            } else {
                kept.push(s);
            }
        }
        *c = kept;
    }
    hoisted
}

/// A `while` loop whose iterations are known at compile time (see [`counted_while`]).
struct CountedWhile {
    /// The counter.
    var: VarId,
    /// Its type.
    ty: ScalarType,
    /// Its value in each iteration, in order.
    values: Vec<i128>,
    /// Its value after the loop.
    last: i128,
}

/// The iterations of `while cond { body }` when the statement before it, `prev`, sets a
/// counter `v` to a constant (`let mut v = c;` or `v = c;`), `cond` compares `v` with a
/// constant (`<`, `<=`, `>`, `>=`, `!=`, `==`), the last statement of `body` is the only one to
/// assign `v`, as `v = v op c` (`+ - * / << >>`), and `body` has no `break` or `continue` of its
/// own. `None` when a step would wrap or leave the type (as [`fold`]), or after more than
/// [`MAX_TRIP`] iterations.
fn counted_while(
    prev: Option<&Stmt>,
    cond: &Expr,
    body: &Block,
    vars: &[VarDecl],
) -> Option<CountedWhile> {
    let (var, init) = match &prev?.kind {
        StmtKind::Let {
            var,
            init: Some(init),
        } => (*var, init),
        StmtKind::Assign {
            target: crate::LValue::Var(var),
            value,
        } => (*var, value),
        _ => return None,
    };
    let Type::Scalar(ty) = vars.get(var.0 as usize)?.ty else {
        return None;
    };
    let is_var = |e: &Expr| matches!(e.kind, ExprKind::Var(v) if v == var);
    let ExprKind::Binary { op: cmp, lhs, rhs } = &cond.kind else {
        return None;
    };
    let limit = fold(rhs)?;
    if !is_var(lhs) || !cmp.is_comparison() {
        return None;
    }
    let update = body.last()?;
    let StmtKind::Assign {
        target: crate::LValue::Var(target),
        value,
    } = &update.kind
    else {
        return None;
    };
    let ExprKind::Binary {
        op: step_op,
        lhs: step_lhs,
        rhs: step_rhs,
    } = &value.kind
    else {
        return None;
    };
    let step = fold(step_rhs)?;
    if *target != var || !is_var(step_lhs) || own_break(body) {
        return None;
    }
    // The update is the only assignment of the counter.
    let mut assignments = 0;
    crate::visit::for_each_stmt(body, &mut |s| {
        if matches!(&s.kind, StmtKind::Assign { target, .. }
            if crate::visit::place_root(target) == var)
        {
            assignments += 1;
        }
    });
    if assignments != 1 {
        return None;
    }
    let width = bits(&value.ty)?;
    let t = Type::Scalar(ty);
    let mut v = fold(init)?;
    let mut values = Vec::new();
    loop {
        let go = match cmp {
            BinOp::Lt => v < limit,
            BinOp::Le => v <= limit,
            BinOp::Gt => v > limit,
            BinOp::Ge => v >= limit,
            BinOp::Ne => v != limit,
            BinOp::Eq => v == limit,
            _ => return None,
        };
        if !go {
            break;
        }
        if values.len() as u64 >= MAX_TRIP {
            return None;
        }
        values.push(v);
        v = match step_op {
            BinOp::Rem => return None,
            op => checked_op(*op, v, step, width)?,
        };
        if !fits(&t, v) {
            return None;
        }
    }
    Some(CountedWhile {
        var,
        ty,
        values,
        last: v,
    })
}

/// The unrolled form of a counted `while`: one copy of the body but its last statement (the
/// counter's update) per iteration, the counter replaced by its value, then `v = last` (the
/// value the loop leaves).
fn counted_copies(w: &CountedWhile, body: &Block, vars: &mut Vec<VarDecl>) -> Option<Block> {
    let (_, rest) = body.split_last()?;
    let mut out = Block::new();
    for &v in &w.values {
        let mut fresh = Fresh {
            var: w.var,
            value: constant(w.ty, v)?,
            renamed: IdMap::default(),
            vars,
        };
        out.push(Stmt::new(StmtKind::Block(fresh.block(rest))));
    }
    out.push(Stmt::new(StmtKind::Assign {
        target: crate::LValue::Var(w.var),
        value: constant(w.ty, w.last)?,
    }));
    Some(out)
}

/// The most elements of a local array that [`for_ptx`] promotes to registers.
pub const PTX_REGISTER_ARRAY_MAX: u32 = 128;

/// What the CUDA/PTX generator is given: `kernel` with its loops unrolled as
/// [`AutoUnroll::PTX`] allows, then its local arrays that only constant indexes reach promoted
/// to one local per element ([`crate::registers::promoted`], at most
/// [`PTX_REGISTER_ARRAY_MAX`] elements), then the array indexes in loops regrouped around the
/// loop variable ([`crate::affine`]); `None` if no step changed it. Same meaning.
pub fn for_ptx(kernel: &Kernel) -> Option<Kernel> {
    let mut k = kernel.clone();
    prepare_for_ptx(&mut k).then_some(k)
}

/// [`for_ptx`] in place; whether anything changed.
pub fn prepare_for_ptx(k: &mut Kernel) -> bool {
    let mut changed = auto_unroll(k, &AutoUnroll::PTX);
    changed |= fold_constants(k);
    changed |= crate::registers::promote(k, PTX_REGISTER_ARRAY_MAX);
    changed |= crate::affine::regroup_loop_indexes(k);
    changed
}

/// Replaces every integer `+ - * / % << >>` (and cast) of constants in `kernel` by its value,
/// where it neither wraps nor changes under a cast (as the trip counts fold; `%` with a
/// non-zero divisor), and every exactly defined `f32`/`f64` operation of constants (`+ - * /`,
/// negation, `sqrt`, `recip`, `abs`, rounding, `mul_add`, casts to a float; not a NaN result)
/// by Rust's value, and every `bool` operation that constants decide (`!` of a `bool`
/// constant; a comparison of two integer, `bool`, `f32` or `f64` constants of one type, IEEE
/// on floats: NaN operands included, `-0.0 == 0.0`; `&&`/`||` with a constant left operand:
/// `true && x` becomes `x`, `false && x` becomes `false`) by its value or the operand that
/// gives it; whether anything was folded. Children fold first, so nested forms fold
/// completely (`!(1u32 == 2u32) && 2.0 < 3.0` is `true`). The meaning is unchanged: these are
/// the values the operations have in Rust, and an operand dropped is one Rust never evaluates.
/// The copies of an unrolled body are full of them (`4 * 2 + 1`), a constant index is what
/// lets [`crate::registers::promoted`] and the generators' immediate offsets see it, and a
/// constant condition is what [`fold_constant_branches`] removes.
pub fn fold_constants(kernel: &mut Kernel) -> bool {
    struct Fold(bool);
    impl VisitMut for Fold {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            walk_expr_mut(self, e);
            self.0 |= fold_node(e);
        }
    }
    let mut f = Fold(false);
    f.visit_block_mut(&mut kernel.body);
    for func in &mut kernel.functions {
        f.visit_block_mut(&mut func.body);
    }
    f.0
}

/// Replaces every `if` statement and `if` expression ([`ExprKind::Select`]) whose condition is
/// a `bool` constant, after the `if`s inside it are folded, by the branch it takes (a
/// statement's branch stays a block: its variables keep their scope; an `if false` without
/// `else` becomes an empty block); whether anything changed. Each expression is also folded as
/// [`fold_constants`] folds it, after its operands, so an operation that a taken `if`
/// expression leaves on constants (`(if true { 1u32 } else { 2u32 }) == 1u32`) becomes a
/// constant and the `if` it decides goes too; on a kernel [`fold_constants`] has folded,
/// nothing else changes. The meaning is unchanged: the other branch could never run.
///
/// The SPIR-V generator's input gets this: NVIDIA's Vulkan driver (580, H100 and H200) kills
/// the process while creating the pipeline of a kernel whose `if true { … }` holds a `match`
/// arm with an early `return` followed by a loop without effects, and runs it with a run-time
/// condition instead (difftest/FINDINGS.md F20).
pub fn fold_constant_branches(kernel: &mut Kernel) -> bool {
    struct Branches(bool);
    impl VisitMut for Branches {
        // Children first: a condition that is itself a constant `if` (`if (if true { true }
        // else { false })`) is a constant once folded.
        fn visit_stmt_mut(&mut self, s: &mut Stmt) {
            walk_stmt_mut(self, s);
            if let StmtKind::If { cond, then, els } = &mut s.kind {
                if let ExprKind::Const(Const::Bool(taken)) = cond.kind {
                    let branch = if taken {
                        std::mem::take(then)
                    } else {
                        els.take().unwrap_or_default()
                    };
                    s.kind = StmtKind::Block(branch);
                    self.0 = true;
                }
            }
        }
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            walk_expr_mut(self, e);
            if let ExprKind::Select { cond, then, els } = &mut e.kind {
                if let ExprKind::Const(Const::Bool(taken)) = cond.kind {
                    let branch = if taken { then } else { els };
                    *e = std::mem::replace(&mut **branch, Expr::constant(Const::Bool(false)));
                    self.0 = true;
                }
            }
            // An `if` expression taken may leave an operation of constants (`(if true { 1 }
            // else { 2 }) == 1`): folded here, an enclosing condition is a constant too.
            self.0 |= fold_node(e);
        }
    }
    let mut b = Branches(false);
    b.visit_block_mut(&mut kernel.body);
    for func in &mut kernel.functions {
        b.visit_block_mut(&mut func.body);
    }
    b.0
}

/// Replaces `e` by its value when it is a float operation of constants [`fold_float`] folds,
/// an integer `+ - * / % << >>` of two constants or a cast of a constant whose value neither
/// wraps nor changes under the cast ([`fold`]; `%` with a non-zero divisor), or a `bool`
/// operation [`fold_bool`] folds (`!`, comparisons, `&&`/`||` with a constant left operand);
/// whether it did. Its operands are not looked into: callers fold bottom-up, so a nested form
/// (`!(1u32 == 2u32) && !false`) folds completely.
fn fold_node(e: &mut Expr) -> bool {
    let Type::Scalar(ty) = e.ty else { return false };
    // Only operations fold (most nodes of an unrolled body are variables, constants and
    // indexing): the rest is not looked at.
    if !matches!(
        e.kind,
        ExprKind::Unary { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Intrinsic { .. }
    ) {
        return false;
    }
    if fold_bool(e) {
        return true;
    }
    if let Some(c) = fold_float(e) {
        *e = Expr::constant(c);
        return true;
    }
    let value = match &e.kind {
        ExprKind::Binary { op, lhs, rhs }
            if matches!(lhs.kind, ExprKind::Const(_)) && matches!(rhs.kind, ExprKind::Const(_)) =>
        {
            match op {
                BinOp::Rem => fold(lhs)
                    .zip(fold(rhs))
                    .zip(bits(&e.ty))
                    .and_then(|((l, r), width)| checked_op(BinOp::Rem, l, r, width))
                    .filter(|&v| fits(&e.ty, v)),
                _ => fold(e),
            }
        }
        ExprKind::Cast { value, .. } if matches!(value.kind, ExprKind::Const(_)) => fold(e),
        _ => None,
    };
    match value.and_then(|v| constant(ty, v)) {
        Some(c) => {
            *e = c;
            true
        }
        None => false,
    }
}

/// Replaces `e` by what it is when it is a `bool` operation decided by constants, with Rust's
/// meaning; whether it did:
/// - `!c` of a `bool` constant;
/// - `l == != < <= > >= r` of two constants of one type: integers compared as that type,
///   `bool`s as Rust orders them (`false < true`), `f32`/`f64` with IEEE semantics on their
///   values (NaN is unordered and unequal to everything, `-0.0 == 0.0`);
/// - `c && x` and `c || x` with a constant `c`: `false && x` is `false` and `true || x` is
///   `true` (Rust never evaluates `x` there), `true && x` and `false || x` are `x` (evaluated
///   once, as before). `x && c` and `x || c` stay: `x` runs first and may have effects.
///
/// `f16`/`bf16` comparisons stay operations.
fn fold_bool(e: &mut Expr) -> bool {
    if e.ty != Type::BOOL {
        return false;
    }
    let folded = match &mut e.kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => match operand.kind {
            ExprKind::Const(Const::Bool(b)) => Expr::constant(Const::Bool(!b)),
            _ => return false,
        },
        ExprKind::Binary {
            op: op @ (BinOp::LogicalAnd | BinOp::LogicalOr),
            lhs,
            rhs,
        } => {
            let ExprKind::Const(Const::Bool(l)) = lhs.kind else {
                return false;
            };
            // `false && x` and `true || x` are decided by `l`; otherwise the value is `x`'s.
            if l == (*op == BinOp::LogicalOr) {
                Expr::constant(Const::Bool(l))
            } else {
                std::mem::replace(&mut **rhs, Expr::constant(Const::Bool(false)))
            }
        }
        ExprKind::Binary { op, lhs, rhs } if op.is_comparison() => {
            let (ExprKind::Const(l), ExprKind::Const(r)) = (&lhs.kind, &rhs.kind) else {
                return false;
            };
            match compare(*op, *l, *r) {
                Some(v) => Expr::constant(Const::Bool(v)),
                None => return false,
            }
        }
        _ => return false,
    };
    *e = folded;
    true
}

/// `l op r` for a comparison `op` of two constants of one type, as Rust computes it (see
/// [`fold_bool`]); `None` for another operator, operands of different types, or `f16`/`bf16`.
fn compare(op: BinOp, l: Const, r: Const) -> Option<bool> {
    fn cmp<T: PartialOrd>(op: BinOp, l: T, r: T) -> Option<bool> {
        Some(match op {
            BinOp::Eq => l == r,
            BinOp::Ne => l != r,
            BinOp::Lt => l < r,
            BinOp::Le => l <= r,
            BinOp::Gt => l > r,
            BinOp::Ge => l >= r,
            _ => return None,
        })
    }
    match (l, r) {
        (Const::Bool(a), Const::Bool(b)) => cmp(op, a, b),
        (Const::F32(a), Const::F32(b)) => cmp(op, f32::from_bits(a), f32::from_bits(b)),
        (Const::F64(a), Const::F64(b)) => cmp(op, f64::from_bits(a), f64::from_bits(b)),
        // Every value of each integer type is exact in `i128`, in the same order.
        _ if l.ty() == r.ty() => cmp(op, l.int_value()?, r.int_value()?),
        _ => None,
    }
}

/// The value of `e` when it is an `f32`/`f64` operation whose operands are all constants and
/// whose result Rust defines exactly, computed as Rust computes it (IEEE 754, round to nearest
/// even): `+ - * /`, negation, `sqrt`, `recip`, `abs`, `floor`, `ceil`, `round`, `trunc`,
/// `mul_add` (one rounding) and `as f32`/`as f64` of an integer or float constant; `None` for
/// anything else or a NaN result (whose bits a device need not reproduce). Folding these is
/// not only smaller code: NVIDIA's compiler behind the PTX JIT and the Vulkan driver folded
/// `0.125 - 3146032.0` (a tie) toward zero on the H200 (difftest/FINDINGS.md F16), so a kernel
/// handed constants the driver folds itself may compute the wrong value.
fn fold_float(e: &Expr) -> Option<Const> {
    let c = match &e.kind {
        ExprKind::Intrinsic {
            intrinsic: crate::Intrinsic::Math(m),
            args,
        } => {
            let consts: Option<Vec<Const>> = args
                .iter()
                .map(|a| match a.kind {
                    ExprKind::Const(c) => Some(c),
                    _ => None,
                })
                .collect();
            float_math(*m, &consts?)?
        }
        ExprKind::Unary {
            op: UnOp::Neg,
            operand,
        } => match operand.kind {
            ExprKind::Const(Const::F32(b)) => Const::F32(b ^ (1 << 31)),
            ExprKind::Const(Const::F64(b)) => Const::F64(b ^ (1 << 63)),
            _ => return None,
        },
        ExprKind::Cast { value, to } => match value.kind {
            ExprKind::Const(c) => cast_to_float(c, *to)?,
            _ => return None,
        },
        ExprKind::Binary { op, lhs, rhs } => {
            let (ExprKind::Const(l), ExprKind::Const(r)) = (&lhs.kind, &rhs.kind) else {
                return None;
            };
            macro_rules! arith {
                ($a:expr, $b:expr) => {
                    match op {
                        BinOp::Add => $a + $b,
                        BinOp::Sub => $a - $b,
                        BinOp::Mul => $a * $b,
                        BinOp::Div => $a / $b,
                        _ => return None,
                    }
                };
            }
            match (*l, *r) {
                (Const::F32(a), Const::F32(b)) => {
                    Const::f32(arith!(f32::from_bits(a), f32::from_bits(b)))
                }
                (Const::F64(a), Const::F64(b)) => {
                    Const::f64(arith!(f64::from_bits(a), f64::from_bits(b)))
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    let nan = match c {
        Const::F32(b) => f32::from_bits(b).is_nan(),
        Const::F64(b) => f64::from_bits(b).is_nan(),
        _ => return None,
    };
    (!nan && Type::Scalar(c.ty()) == e.ty).then_some(c)
}

/// Math function `m` of constant arguments, where Rust's result is exactly defined (correctly
/// rounded or exact): see [`fold_float`].
fn float_math(m: crate::MathFn, args: &[Const]) -> Option<Const> {
    use crate::MathFn as M;
    macro_rules! unary {
        ($x:expr) => {
            match m {
                M::Sqrt => $x.sqrt(),
                M::Recip => $x.recip(),
                M::Abs => $x.abs(),
                M::Floor => $x.floor(),
                M::Ceil => $x.ceil(),
                M::Round => $x.round(),
                M::Trunc => $x.trunc(),
                _ => return None,
            }
        };
    }
    Some(match *args {
        [Const::F32(x)] => Const::f32(unary!(f32::from_bits(x))),
        [Const::F64(x)] => Const::f64(unary!(f64::from_bits(x))),
        [Const::F32(a), Const::F32(b), Const::F32(c)] if m == M::MulAdd => {
            Const::f32(f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c)))
        }
        [Const::F64(a), Const::F64(b), Const::F64(c)] if m == M::MulAdd => {
            Const::f64(f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)))
        }
        _ => return None,
    })
}

/// `c as f32` / `c as f64` with Rust's rounding (to nearest even, one rounding from the
/// source type), for an integer or `f32`/`f64` constant; `None` for another target or source.
fn cast_to_float(c: Const, to: ScalarType) -> Option<Const> {
    macro_rules! to {
        ($v:expr) => {
            match to {
                ScalarType::F32 => Const::f32($v as f32),
                ScalarType::F64 => Const::f64($v as f64),
                _ => return None,
            }
        };
    }
    Some(match c {
        Const::I32(v) => to!(v),
        Const::I64(v) => to!(v),
        Const::U32(v) => to!(v),
        Const::U64(v) => to!(v),
        Const::F32(b) => to!(f32::from_bits(b)),
        Const::F64(b) => to!(f64::from_bits(b)),
        _ => return None,
    })
}
