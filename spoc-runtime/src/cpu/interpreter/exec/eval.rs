//! Evaluation: the statements and expressions of one thread, helper calls and warp operations.

use super::super::compile::{
    CExpr, CPath, CPattern, CStmt, IOp, SStmt, Special, Step, ISTACK, MAX_INDICES, NO_LOC,
};
use super::super::error::{invalid, unsupported, AccessKind, Fault, InterpErrorKind, MemorySpace};
use super::super::layout::Layout;
use super::super::value::{self, Agg, Value};
use super::{access::*, report::*};
use super::{BufView, Flow, Launch, Thread, MAX_CALL_DEPTH, STACK_MARGIN};
use crate::native::abi::ThreadCtx;
use crate::simt::{self, Aborted, Site, SyncHandle, WarpOpKind};
use spoc_ir::{BinOp, ForDir};
use std::sync::atomic::Ordering::SeqCst;

/// The fault a sync call answers while the block is torn down (the scheduler discards it).
pub(super) fn aborted(_: Aborted) -> Fault {
    invalid("the block was aborted")
}

/// The scheduler handle of a SIMT thread.
#[inline]
pub(super) fn handle<'a, 'y>(th: &'a mut Thread<'_, 'y>) -> Result<&'a mut SyncHandle<'y>, Fault> {
    th.sync
        .as_deref_mut()
        .ok_or_else(|| invalid("a barrier or warp operation outside the SIMT scheduler"))
}

/// The `N` lanes of vector value `v`, each read by `lane`.
fn lanes<T: Copy + Default, const N: usize>(
    v: &Value,
    lane: impl Fn(&Value) -> Option<T>,
) -> Result<[T; N], Fault> {
    let fields = v.as_record().filter(|f| f.len() == N).ok_or_else(|| {
        invalid(format!(
            "a matrix fragment is a {}, not a vector",
            v.type_name()
        ))
    })?;
    let mut out = [T::default(); N];
    for (o, f) in out.iter_mut().zip(fields) {
        *o = lane(f)
            .ok_or_else(|| invalid(format!("a matrix fragment lane is a {}", f.type_name())))?;
    }
    Ok(out)
}

/// A scalar as the bits a shuffle moves.
pub(super) fn to_bits(v: &Value) -> Result<u64, Fault> {
    Ok(match *v {
        Value::Bool(b) => b as u64,
        Value::I32(x) => x as u32 as u64,
        Value::U32(x) => x as u64,
        Value::I64(x) => x as u64,
        Value::U64(x) => x,
        Value::F16(x) | Value::BF16(x) => x as u64,
        Value::F32(x) => x.to_bits() as u64,
        Value::F64(x) => x.to_bits(),
        _ => return Err(invalid(format!("a shuffle of a {}", v.type_name()))),
    })
}

/// Shuffled `bits` as a value of the type of `like` (every lane at one site has that type).
pub(super) fn from_bits(like: &Value, bits: u64) -> Value {
    match like {
        Value::Bool(_) => Value::Bool(bits != 0),
        Value::I32(_) => Value::I32(bits as u32 as i32),
        Value::U32(_) => Value::U32(bits as u32),
        Value::I64(_) => Value::I64(bits as i64),
        Value::F16(_) => Value::F16(bits as u16),
        Value::BF16(_) => Value::BF16(bits as u16),
        Value::F32(_) => Value::F32(f32::from_bits(bits as u32)),
        Value::F64(_) => Value::F64(f64::from_bits(bits)),
        _ => Value::U64(bits),
    }
}

impl Launch<'_> {
    pub(super) fn block(&self, b: &[SStmt], th: &mut Thread) -> Result<Flow, Fault> {
        for s in b {
            match self.stmt(&s.s, th) {
                Ok(Flow::Next) => {}
                Ok(other) => return Ok(other),
                Err(e) => {
                    // The innermost statement names the fault.
                    if th.fault_loc == NO_LOC {
                        th.fault_loc = s.loc;
                    }
                    return Err(e);
                }
            }
        }
        Ok(Flow::Next)
    }

    /// Runs a loop body; `Some(flow)` when the loop must stop with `flow`.
    #[inline]
    pub(super) fn loop_body(&self, body: &[SStmt], th: &mut Thread) -> Result<Option<Flow>, Fault> {
        Ok(match self.block(body, th)? {
            Flow::Next | Flow::Continue => None,
            Flow::Break => Some(Flow::Next),
            r @ Flow::Return(_) => Some(r),
        })
    }

    pub(super) fn stmt(&self, s: &CStmt, th: &mut Thread) -> Result<Flow, Fault> {
        match s {
            CStmt::Let { slot, init } => {
                if let Some(e) = init {
                    let v = self.eval(e, th)?;
                    th.stack[th.base + *slot as usize] = v;
                }
            }
            CStmt::AssignVar { slot, value } => {
                let v = self.eval(value, th)?;
                th.stack[th.base + *slot as usize] = v;
            }
            CStmt::AssignPath { path, value } => {
                // Rust evaluates the assigned value before the place.
                let v = self.eval(value, th)?;
                self.write_path(path, th, v)?;
            }
            CStmt::Block(b) => return self.block(b, th),
            CStmt::If { cond, then, els } => {
                return if self.eval(cond, th)?.as_bool()? {
                    self.block(then, th)
                } else {
                    self.block(els, th)
                }
            }
            CStmt::While { cond, body } => {
                while self.eval(cond, th)?.as_bool()? {
                    if let Some(f) = self.loop_body(body, th)? {
                        return Ok(f);
                    }
                }
            }
            CStmt::For {
                slot,
                ty,
                start,
                end,
                step,
                dir,
                body,
            } => {
                let int = |v: Value| {
                    v.as_i128().ok_or_else(|| {
                        invalid(format!(
                            "a `for` bound is a {}, not an integer",
                            v.type_name()
                        ))
                    })
                };
                let start = int(self.eval(start, th)?)?;
                let end = int(self.eval(end, th)?)?;
                let step = self.eval(step, th)?.as_index()?;
                if step == 0 {
                    return Err(Box::new(InterpErrorKind::ZeroStep));
                }
                let step = step as i128;
                let slot = *slot as usize;
                // i128 holds every value of the loop's type plus a step: no overflow.
                match dir {
                    ForDir::Up => {
                        let mut i = start;
                        while i < end {
                            th.stack[th.base + slot] = Value::from_i128(*ty, i);
                            if let Some(f) = self.loop_body(body, th)? {
                                return Ok(f);
                            }
                            i += step;
                        }
                    }
                    ForDir::Down => {
                        let mut i = end - 1;
                        while i >= start {
                            th.stack[th.base + slot] = Value::from_i128(*ty, i);
                            if let Some(f) = self.loop_body(body, th)? {
                                return Ok(f);
                            }
                            i -= step;
                        }
                    }
                }
            }
            CStmt::Match { scrutinee, arms } => {
                let v = self.eval(scrutinee, th)?;
                for (p, body) in arms.iter() {
                    if self.matches(p, &v, th)? {
                        return self.block(body, th);
                    }
                }
            }
            CStmt::Break => return Ok(Flow::Break),
            CStmt::Continue => return Ok(Flow::Continue),
            CStmt::Return(e) => {
                let v = match e {
                    Some(e) => self.eval(e, th)?,
                    None => Value::Unit,
                };
                return Ok(Flow::Return(v));
            }
            CStmt::Expr(e) => {
                self.eval(e, th)?;
            }
            CStmt::Barrier(site) => {
                handle(th)?.barrier(Site(*site)).map_err(aborted)?;
                th.me.epoch += 1;
            }
            CStmt::WarpBarrier(site) => {
                let r = handle(th)?
                    .warp_barrier_release(Site(*site))
                    .map_err(aborted)?;
                th.me.wep = r.number;
                if let Some(c) = th.bcheck {
                    c.warp_released(th.me.linear, r);
                }
            }
            CStmt::Fence => std::sync::atomic::fence(SeqCst),
        }
        Ok(Flow::Next)
    }

    /// Whether `v` matches `p`; binds a matching case's payload.
    pub(super) fn matches(&self, p: &CPattern, v: &Value, th: &mut Thread) -> Result<bool, Fault> {
        Ok(match p {
            CPattern::Wildcard => true,
            CPattern::Int(k) => v.as_i128() == Some(*k),
            CPattern::Range(lo, hi) => v.as_i128().is_some_and(|x| *lo <= x && x <= *hi),
            CPattern::Or(ps) => {
                for p in ps.iter() {
                    if self.matches(p, v, th)? {
                        return Ok(true);
                    }
                }
                false
            }
            CPattern::Case { case, bindings } => match v {
                Value::Agg(a) if matches!(**a, Agg::Variant { .. }) => match &**a {
                    Agg::Variant { case: c, payload } if c == case => {
                        for (slot, x) in bindings.iter().zip(payload.iter()) {
                            th.stack[th.base + *slot as usize] = x.clone();
                        }
                        true
                    }
                    _ => false,
                },
                other => {
                    return Err(invalid(format!(
                        "a variant pattern matched against a {}",
                        other.type_name()
                    )))
                }
            },
        })
    }

    /// Length of an array value (a local array, a buffer or a shared array).
    pub(super) fn len_of(&self, bufs: &[BufView], v: &Value) -> Result<u32, Fault> {
        match v {
            Value::Buffer(b) => Ok(self.view(bufs, *b).len as u32),
            v => match v.as_array() {
                Some(a) => Ok(a.len() as u32),
                None => Err(invalid(format!("length of a {}", v.type_name()))),
            },
        }
    }

    pub(super) fn special(s: Special, c: &ThreadCtx) -> u32 {
        match s {
            Special::ThreadIdx(a) => c.thread[a],
            Special::BlockIdx(a) => c.block[a],
            Special::BlockDim(a) => c.block_dim[a],
            Special::GridDim(a) => c.grid_dim[a],
            Special::GlobalId(a) => c.global_id(a),
            Special::GlobalSize(a) => c.global_size(a),
            Special::LaneId => {
                let [tx, ty, tz] = c.thread;
                let [dx, dy, _] = c.block_dim;
                let linear = tx.wrapping_add(dx.wrapping_mul(ty.wrapping_add(dy.wrapping_mul(tz))));
                linear % super::super::WARP_SIZE
            }
        }
    }

    /// Evaluates `e`. Variables and constants, the most frequent operands, are read here,
    /// inlined into the caller, without a call.
    #[inline(always)]
    pub(super) fn eval(&self, e: &CExpr, th: &mut Thread) -> Result<Value, Fault> {
        match e {
            CExpr::Var(s) => Ok(th.stack[th.base + *s as usize].clone()),
            CExpr::Const(v) => Ok(v.clone()),
            _ => self.eval_node(e, th),
        }
    }

    /// Evaluates a `u32` arithmetic expression (postfix, at most [`ISTACK`] deep: checked when
    /// it was compiled).
    #[inline]
    pub(super) fn ieval(&self, ops: &[IOp], th: &Thread) -> Result<u32, Fault> {
        let mut st = [0u32; ISTACK];
        let mut n = 0usize;
        for op in ops {
            let v = match *op {
                IOp::Var(s) => match th.stack[th.base + s as usize] {
                    Value::U32(v) => v,
                    ref v => return Err(not_u32(v)),
                },
                IOp::Const(c) => c,
                IOp::Special(s) => Self::special(s, &th.ctx),
                IOp::Bin(op) => {
                    n -= 1;
                    let (a, b) = (st[n - 1], st[n]);
                    st[n - 1] = match op {
                        BinOp::Add => a.wrapping_add(b),
                        BinOp::Sub => a.wrapping_sub(b),
                        BinOp::Mul => a.wrapping_mul(b),
                        BinOp::Div => a.checked_div(b).ok_or_else(div_zero)?,
                        BinOp::Rem => a.checked_rem(b).ok_or_else(div_zero)?,
                        BinOp::BitAnd => a & b,
                        BinOp::BitOr => a | b,
                        BinOp::BitXor => a ^ b,
                        BinOp::Shl => a.wrapping_shl(b),
                        BinOp::Shr => a.wrapping_shr(b),
                        _ => return Err(not_u32_op(op)),
                    };
                    continue;
                }
            };
            st[n] = v;
            n += 1;
        }
        Ok(st[0])
    }

    /// `a * k + b` on `u32` variable slots `a`, `b`.
    #[inline(always)]
    pub(super) fn affine(a: u32, k: u32, b: u32, th: &Thread) -> Result<u32, Fault> {
        match (
            &th.stack[th.base + a as usize],
            &th.stack[th.base + b as usize],
        ) {
            (Value::U32(x), Value::U32(y)) => Ok(x.wrapping_mul(k).wrapping_add(*y)),
            (Value::U32(_), v) | (v, _) => Err(not_u32(v)),
        }
    }

    /// Evaluates an index expression.
    #[inline(always)]
    pub(super) fn index(&self, e: &CExpr, th: &mut Thread) -> Result<u32, Fault> {
        match e {
            CExpr::U32(ops) => self.ieval(ops, th),
            CExpr::Affine { a, k, b } => Self::affine(*a, *k, *b, th),
            CExpr::Var(s) => match th.stack[th.base + *s as usize] {
                Value::U32(v) => Ok(v),
                ref v => v.as_index(),
            },
            CExpr::Const(Value::U32(v)) => Ok(*v),
            _ => self.eval(e, th)?.as_index(),
        }
    }

    /// Evaluates the common expression forms.
    pub(super) fn eval_node(&self, e: &CExpr, th: &mut Thread) -> Result<Value, Fault> {
        Ok(match e {
            CExpr::U32(ops) => Value::U32(self.ieval(ops, th)?),
            CExpr::Affine { a, k, b } => Value::U32(Self::affine(*a, *k, *b, th)?),
            CExpr::Const(v) => v.clone(),
            CExpr::Var(s) => th.stack[th.base + *s as usize].clone(),
            CExpr::Load(p) => return self.read_path(p, th),
            CExpr::LenVar(slot) => {
                Value::U32(self.len_of(th.bufs, &th.stack[th.base + *slot as usize])?)
            }
            CExpr::LoadIndex {
                root,
                index,
                name,
                elem,
                loc,
            } => {
                let i = self.index(index, th)?;
                match &th.stack[th.base + *root as usize] {
                    Value::Buffer(b) => {
                        let buf = self.view(th.bufs, *b);
                        // `elem` is the static element layout id: the buffer must hold it.
                        if Some(buf.elem) != *elem {
                            return Err(invalid("buffer element type mismatch"));
                        }
                        if i as usize >= buf.len {
                            return Err(oob_buf(buf, i));
                        }
                        self.note(buf, i, AccessKind::Read, *loc, th)?;
                        let l = &self.prog.layouts[buf.elem as usize];
                        let p = buf.ptr.wrapping_add(i as usize * buf.elem_size);
                        // SAFETY: in bounds; the layout is the buffer's own.
                        unsafe {
                            match l {
                                Layout::Scalar(s) => super::super::layout::load_scalar(*s, p),
                                _ => l.load(p),
                            }
                        }
                    }
                    v => match v.as_array() {
                        Some(a) => match a.get(i as usize) {
                            Some(x) => x.clone(),
                            None => return Err(oob(MemorySpace::Local, name, i, a.len())),
                        },
                        None => return Err(invalid(format!("indexing a {}", v.type_name()))),
                    },
                }
            }
            CExpr::Unary { op, operand } => {
                let a = self.eval(operand, th)?;
                return value::unary(*op, a);
            }
            CExpr::Binary { op, lhs, rhs } => {
                let a = self.eval(lhs, th)?;
                let b = self.eval(rhs, th)?;
                return value::binary(*op, a, b);
            }
            CExpr::And(l, r) => {
                if self.eval(l, th)?.as_bool()? {
                    Value::Bool(self.eval(r, th)?.as_bool()?)
                } else {
                    Value::Bool(false)
                }
            }
            CExpr::Or(l, r) => {
                if self.eval(l, th)?.as_bool()? {
                    Value::Bool(true)
                } else {
                    Value::Bool(self.eval(r, th)?.as_bool()?)
                }
            }
            CExpr::Special(s) => Value::U32(Self::special(*s, &th.ctx)),
            CExpr::Math1(f, a) => {
                let a = self.eval(a, th)?;
                return value::math1(*f, a);
            }
            CExpr::Math2(f, args) => {
                let a = self.eval(&args[0], th)?;
                let b = self.eval(&args[1], th)?;
                return value::math2(*f, a, b);
            }
            CExpr::Cast { value, to } => {
                let v = self.eval(value, th)?;
                return value::cast(v, *to);
            }
            CExpr::Call { func, args } => return self.call(*func, args, th),
            CExpr::Select { cond, then, els } => {
                if self.eval(cond, th)?.as_bool()? {
                    return self.eval(then, th);
                } else {
                    return self.eval(els, th);
                }
            }
            _ => return self.eval_cold(e, th),
        })
    }

    /// The expression forms that are rare in hot loops, kept out of [`Launch::eval_node`] so
    /// that its frame stays small.
    #[inline(never)]
    pub(super) fn eval_cold(&self, e: &CExpr, th: &mut Thread) -> Result<Value, Fault> {
        Ok(match e {
            CExpr::IndexOf {
                base,
                index,
                leaf,
                loc,
            } => {
                let a = self.eval(base, th)?;
                let i = self.eval(index, th)?.as_index()?;
                match a {
                    Value::Agg(mut agg) if matches!(*agg, Agg::Array(_)) => {
                        let a = match &mut *agg {
                            Agg::Array(a) => a,
                            _ => unreachable!("checked by the guard"),
                        };
                        let len = a.len();
                        match a.get_mut(i as usize) {
                            Some(v) => std::mem::replace(v, Value::Unit),
                            None => {
                                return Err(oob(MemorySpace::Local, "(temporary array)", i, len))
                            }
                        }
                    }
                    Value::Buffer(b) => {
                        let buf = self.view(th.bufs, b);
                        let leaf = leaf
                            .as_ref()
                            .ok_or_else(|| invalid("indexing a buffer value"))?;
                        if *leaf != self.prog.layouts[buf.elem as usize] {
                            return Err(invalid("buffer element type mismatch"));
                        }
                        if i as usize >= buf.len {
                            return Err(oob_buf(buf, i));
                        }
                        self.note(buf, i, AccessKind::Read, *loc, th)?;
                        // SAFETY: in bounds; the layout is the buffer's, checked at binding.
                        unsafe { leaf.load(buf.ptr.add(i as usize * buf.elem_size)) }
                    }
                    other => return Err(invalid(format!("indexing a {}", other.type_name()))),
                }
            }
            CExpr::FieldOf { base, field } => {
                let mut v = self.eval(base, th)?;
                match v.as_record_mut().and_then(|fs| fs.get_mut(*field as usize)) {
                    Some(f) => std::mem::replace(f, Value::Unit),
                    None => return Err(invalid(format!("field of a {}", v.type_name()))),
                }
            }
            CExpr::LenPath(p) => {
                let mut idx = [0u32; MAX_INDICES];
                self.eval_indices(p, th, &mut idx)?;
                let len =
                    match self.locate(p, &idx, th.bufs, &th.stack[th.base + p.root as usize])? {
                        Loc::Local(v) => self.len_of(th.bufs, v)?,
                        Loc::Global(..) => return Err(invalid("length of a buffer element")),
                    };
                Value::U32(len)
            }
            CExpr::LenOf(a) => {
                let v = self.eval(a, th)?;
                Value::U32(self.len_of(th.bufs, &v)?)
            }
            CExpr::Warp { site, kind, args } => {
                let v = self.eval(&args[0], th)?;
                let site = Site(*site);
                match *kind {
                    WarpOpKind::Shuffle(k) => {
                        let lane = match args.get(1) {
                            Some(e) => self.eval(e, th)?.as_index()?,
                            None => return Err(invalid("a shuffle without a lane operand")),
                        };
                        let bits = to_bits(&v)?;
                        let r = handle(th)?.shuffle(site, k, bits, lane).map_err(aborted)?;
                        from_bits(&v, r)
                    }
                    WarpOpKind::Vote(k) => {
                        let p = v.as_bool()?;
                        Value::Bool(handle(th)?.vote(site, k, p).map_err(aborted)?)
                    }
                    WarpOpKind::Ballot => {
                        let p = v.as_bool()?;
                        Value::U32(handle(th)?.ballot(site, p).map_err(aborted)?)
                    }
                    WarpOpKind::Mma { bf16 } => {
                        let (Some(b), Some(c)) = (args.get(1), args.get(2)) else {
                            return Err(invalid("a matrix multiply-accumulate without B or C"));
                        };
                        let b = self.eval(b, th)?;
                        let c = self.eval(c, th)?;
                        let frag = crate::mma::MmaLane {
                            a: lanes(&v, |x| match *x {
                                Value::U32(u) => Some(u),
                                _ => None,
                            })?,
                            b: lanes(&b, |x| match *x {
                                Value::U32(u) => Some(u),
                                _ => None,
                            })?,
                            c: lanes(&c, |x| match *x {
                                Value::F32(f) => Some(f),
                                _ => None,
                            })?,
                        };
                        let d = handle(th)?
                            .mma_m16n8k16(site, bf16, frag)
                            .map_err(aborted)?;
                        Value::record(d.iter().map(|&x| Value::F32(x)).collect())
                    }
                }
            }
            CExpr::PackHalf2(ops) => {
                let [lo, hi] = &**ops;
                let half = |v: Value| match v {
                    Value::F16(b) | Value::BF16(b) => Ok(b as u32),
                    v => Err(invalid(format!(
                        "packing a {}, not a 16-bit float",
                        v.type_name()
                    ))),
                };
                let lo = half(self.eval(lo, th)?)?;
                let hi = half(self.eval(hi, th)?)?;
                Value::U32(lo | hi << 16)
            }
            CExpr::Math3(f, args) => {
                let x = self.eval(&args[0], th)?;
                let a = self.eval(&args[1], th)?;
                let b = self.eval(&args[2], th)?;
                return value::math3(*f, x, a, b);
            }
            CExpr::Atomic { op, path, operands } => return self.atomic(*op, path, operands, th),
            CExpr::Match { scrutinee, arms } => {
                let v = self.eval(scrutinee, th)?;
                for (p, e) in arms.iter() {
                    if self.matches(p, &v, th)? {
                        return self.eval(e, th);
                    }
                }
                return Err(invalid("no arm of a `match` expression matched"));
            }
            CExpr::Record(fields) => {
                let mut vs = Vec::with_capacity(fields.len());
                for f in fields.iter() {
                    vs.push(self.eval(f, th)?);
                }
                Value::record(vs.into_boxed_slice())
            }
            CExpr::Variant { case, payload } => {
                let mut vs = Vec::with_capacity(payload.len());
                for f in payload.iter() {
                    vs.push(self.eval(f, th)?);
                }
                Value::Agg(Box::new(Agg::Variant {
                    case: *case,
                    payload: vs.into_boxed_slice(),
                }))
            }
            CExpr::Repeat { value, len } => {
                let v = self.eval(value, th)?;
                Value::array(vec![v; *len as usize].into_boxed_slice())
            }
            _ => unreachable!("hot expression forms are handled by `eval_node`"),
        })
    }

    /// Calls helper `func`: a new frame above the caller's, arguments written straight into
    /// the callee's parameter slots (nested calls in the arguments use the stack above it).
    pub(super) fn call(&self, func: u32, args: &[CExpr], th: &mut Thread) -> Result<Value, Fault> {
        let f = &self.prog.functions[func as usize];
        if th.depth >= MAX_CALL_DEPTH {
            return Err(unsupported(format!(
                "helper calls nested deeper than {MAX_CALL_DEPTH} (recursion?)"
            )));
        }
        if let Some(h) = th.sync.as_deref() {
            if h.stack_remaining() < STACK_MARGIN {
                return Err(Box::new(InterpErrorKind::OutOfResources {
                    what: format!(
                        "helper calls nested {} deep exhaust the {} KiB stack of a thread of a \
                         kernel with barriers or warp operations",
                        th.depth,
                        simt::STACK_BYTES / 1024
                    ),
                }));
            }
        }
        let new_base = th.stack.len();
        th.stack.resize(new_base + f.nslots, Value::Unit);
        for ((a, slot), elem) in args.iter().zip(f.params.iter()).zip(f.param_elems.iter()) {
            let v = self.eval(a, th)?;
            if let (Some(elem), Value::Buffer(b)) = (elem, &v) {
                if self.view(th.bufs, *b).elem != *elem {
                    return Err(invalid("buffer passed to a helper of another element type"));
                }
            }
            th.stack[new_base + *slot as usize] = v;
        }
        let saved = th.base;
        th.base = new_base;
        th.depth += 1;
        let flow = self.block(&f.body, th)?;
        th.depth -= 1;
        th.base = saved;
        th.stack.truncate(new_base);
        Ok(match flow {
            Flow::Return(v) => v,
            _ => Value::Unit,
        })
    }

    /// Evaluates the index expressions of `p`, in order, into `idx`.
    ///
    /// All indices of a place are evaluated before any is bounds-checked: when a later index
    /// expression faults too, that fault is the one reported.
    #[inline]
    pub(super) fn eval_indices(
        &self,
        p: &CPath,
        th: &mut Thread,
        idx: &mut [u32; MAX_INDICES],
    ) -> Result<(), Fault> {
        if p.nindex == 0 {
            return Ok(());
        }
        let mut k = 0;
        for s in p.steps.iter() {
            if let Step::Index(e) = s {
                idx[k] = self.index(e, th)?;
                k += 1;
            }
        }
        Ok(())
    }
}
