//! The oracle: evaluates a kernel AST with Rust's own operators (`wrapping_*`, `as`,
//! `f32::sqrt`, …), with the kernel language's definitions where Rust has none (`usize` is 32
//! bits; integer arithmetic wraps; shift amounts are taken modulo the width). Threads of a block
//! run phase by phase (a phase is the code between two top-level barriers), each thread in turn;
//! the generated kernels' cross-thread traffic is race-free and order-independent, so any
//! interleaving gives what this order gives, and the oracle checks that it is (shared-memory
//! races and reads of unwritten shared elements are reported, as the Interpreter does, so a
//! shrunk kernel cannot drift outside the defined subset).
//!
//! Where Rust leaves a result unspecified, the oracle says so instead of picking one
//! ([`Fault::Unspecified`]): `min`/`max` of zeros of opposite signs, `copysign` with a NaN sign.

use crate::ast::*;

/// Why the oracle has no result.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// Rust does not specify the result.
    Unspecified(String),
    /// The kernel hits an active exclusion (a known open bug).
    Known(&'static str),
    /// The kernel is outside the defined subset (a race, an unwritten shared read, a barrier
    /// some threads skip, too many loop iterations): only a shrinking step can produce one.
    Invalid(String),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Unspecified(s) => write!(f, "unspecified in Rust: {s}"),
            Fault::Known(s) => write!(f, "hits known bug {s}"),
            Fault::Invalid(s) => write!(f, "outside the subset: {s}"),
        }
    }
}

/// A kernel's inputs: parameter values and the initial contents of every buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// One value per kernel parameter (`Kernel::params` order).
    pub params: Vec<Val>,
    /// Input buffers, per [`Ty::BUF`] type, [`IN_LEN`] elements each.
    pub inputs: Vec<Vec<Val>>,
    /// Output buffers' initial contents, per [`Ty::BUF`] type, `THREADS * SLOTS` each.
    pub outputs: Vec<Vec<Val>>,
    /// Accumulators' initial contents, [`ACC_LEN`] each.
    pub accs: Vec<Vec<Val>>,
}

/// Final memory: outputs per [`Ty::BUF`] type and accumulators.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    /// Output buffers, per [`Ty::BUF`] type.
    pub outputs: Vec<Vec<Val>>,
    /// Accumulators.
    pub accs: Vec<Vec<Val>>,
}

impl Memory {
    /// The same contents ([`Val::same`]: equal bits, or NaN and NaN).
    pub fn same(&self, other: &Memory) -> bool {
        let eq = |a: &Vec<Vec<Val>>, b: &Vec<Vec<Val>>| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.same(*q)))
        };
        eq(&self.outputs, &other.outputs) && eq(&self.accs, &other.accs)
    }
}

/// Which active exclusions the oracle enforces.
#[derive(Clone, Copy, Debug, Default)]
pub struct Excl {
    /// `abs-int-min`: taking `abs` of a signed MIN is [`Fault::Known`].
    pub abs_int_min: bool,
    /// `vulkan-fast-math`: a float `+ - * / %`, comparison or method (`abs`, `floor`, …) with
    /// an operand the driver can see at compile time to be ±0, NaN or ±inf (one converted
    /// from an integer constant: float literals are hidden) is [`Fault::Known`] (lavapipe folds
    /// such operations as if signed zeros, NaN and infinities did not exist).
    pub vulkan_fast_math: bool,
    /// `f32-subnormals`: f32 arithmetic on or giving a subnormal is [`Fault::Known`].
    pub f32_subnormals: bool,
    /// `vulkan-sext-compare`: an ordering comparison (`<`, `<=`, `>`, `>=`, a range pattern,
    /// `min`, `max`, `abs`) of a sign-extended `i32` (`x as i64`, `x as u64`, unchanged since)
    /// is [`Fault::Known`].
    pub vulkan_sext_compare: bool,
    /// `vulkan-sqrt-max`: a `sqrt` whose result is the largest finite square root (of
    /// `f32::MAX`, `f64::MAX` and the values next to them) is [`Fault::Known`].
    pub vulkan_sqrt_max: bool,
}

/// Loop iterations a thread may run before the kernel counts as runaway.
const ITER_BUDGET: u64 = 200_000;

/// Where a value comes from, as far as some exclusions need to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prov {
    /// A compiler could know it at compile time (it derives from literals only, along this
    /// path): see [`Excl::vulkan_fast_math`].
    konst: bool,
    /// It is an `i32` sign-extended to 64 bits, unchanged since: see
    /// [`Excl::vulkan_sext_compare`].
    sext: bool,
    /// A Vulkan driver can see it as a constant: `konst`, and not derived from a float literal
    /// (spoc hides float literals from drivers that fold them, since `9a18c7a`), so an integer
    /// constant converted to a float (`0u32 as f32`) is visible, `0.0f32` is not.
    vis: bool,
}

/// Known at compile time.
const K: Prov = Prov {
    konst: true,
    sext: false,
    vis: true,
};
/// A float literal: known at compile time, hidden from the driver.
const KF: Prov = Prov {
    konst: true,
    sext: false,
    vis: false,
};
/// Known at run time only.
const RT: Prov = Prov {
    konst: false,
    sext: false,
    vis: false,
};

impl Prov {
    /// The provenance of an operation's result on values of provenance `self` and `o`.
    fn both(self, o: Prov) -> Prov {
        Prov {
            konst: self.konst && o.konst,
            sext: false,
            vis: self.vis && o.vis,
        }
    }
    /// A value passed on (a branch's) under a condition of provenance `c`.
    fn under(self, c: Prov) -> Prov {
        Prov {
            konst: self.konst && c.konst,
            sext: self.sext,
            vis: self.vis && c.vis,
        }
    }
}

/// A variable's value and provenance.
#[derive(Clone, Debug)]
enum Slot {
    Empty,
    Scalar(Val, Prov),
    Array(Vec<Val>, Vec<Prov>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Who {
    None,
    One(u32),
    Many,
}

impl Who {
    fn add(self, t: u32) -> Who {
        match self {
            Who::None => Who::One(t),
            Who::One(x) if x == t => self,
            _ => Who::Many,
        }
    }
    fn other_than(self, t: u32) -> bool {
        match self {
            Who::None => false,
            Who::One(x) => x != t,
            Who::Many => true,
        }
    }
    fn any(self) -> bool {
        self != Who::None
    }
}

#[derive(Clone, Copy, Debug)]
struct Access {
    phase: u32,
    readers: Who,
    writers: Who,
    atomics: Who,
}

struct SharedArr {
    vals: Vec<Option<Val>>,
    acc: Vec<Access>,
}

enum Flow {
    Normal,
    Break,
    Continue,
    Return,
}

struct Machine<'k> {
    k: &'k Kernel,
    excl: Excl,
    mem: Memory,
    inputs: &'k Inputs,
    shared: Vec<SharedArr>,
    block: u32,
    tid: u32,
    phase: u32,
    iters: u64,
    /// Per output element: whether its value is known at compile time.
    out_konst: Vec<Vec<Prov>>,
    /// Lanes per warp.
    warp: u32,
}

type R<T> = Result<T, Fault>;

/// Runs kernel `k` on `inputs` for the whole launch ([`GRID`] blocks of [`BLOCK`] threads).
///
/// # Errors
/// A [`Fault`] when Rust leaves the result unspecified, the kernel hits an active exclusion,
/// or it is outside the defined subset.
pub fn run(k: &Kernel, inputs: &Inputs, excl: Excl) -> Result<Memory, Fault> {
    run_warp(k, inputs, excl, 32)
}

/// A piece of a kernel body between sync points.
enum Seg<'a> {
    /// Statements, and how many barriers precede them.
    Code(&'a [Stmt], u32),
    /// A warp operation.
    Warp(&'a Stmt),
}

/// [`run`] for a device whose warps have `warp` lanes (what `lane_id()`, `warp_size()` and the
/// warp operations see).
///
/// # Errors
/// As [`run`].
pub fn run_warp(k: &Kernel, inputs: &Inputs, excl: Excl, warp: u32) -> Result<Memory, Fault> {
    let mut m = Machine {
        k,
        excl,
        mem: Memory {
            outputs: inputs.outputs.clone(),
            accs: inputs.accs.clone(),
        },
        inputs,
        shared: vec![],
        block: 0,
        tid: 0,
        phase: 0,
        iters: 0,
        out_konst: inputs.outputs.iter().map(|o| vec![RT; o.len()]).collect(),
        warp: warp.max(1),
    };
    // Segments: the body split at top-level barriers and warp operations.
    let mut segs: Vec<Seg<'_>> = vec![];
    let (mut start, mut barriers) = (0, 0);
    for (i, s) in k.body.iter().enumerate() {
        match s {
            Stmt::Sync => {
                segs.push(Seg::Code(&k.body[start..i], barriers));
                barriers += 1;
                start = i + 1;
            }
            Stmt::Warp { .. } => {
                segs.push(Seg::Code(&k.body[start..i], barriers));
                segs.push(Seg::Warp(s));
                start = i + 1;
            }
            _ => {}
        }
    }
    segs.push(Seg::Code(&k.body[start..], barriers));
    for b in 0..GRID {
        m.block = b;
        m.shared = k
            .shared
            .iter()
            .map(|_| SharedArr {
                vals: vec![None; BLOCK as usize],
                acc: vec![
                    Access {
                        phase: u32::MAX,
                        readers: Who::None,
                        writers: Who::None,
                        atomics: Who::None,
                    };
                    BLOCK as usize
                ],
            })
            .collect();
        let mut frames: Vec<Vec<Slot>> = (0..BLOCK)
            .map(|_| vec![Slot::Empty; k.vars.len()])
            .collect();
        for (i, &p) in k.params.iter().enumerate() {
            for f in frames.iter_mut() {
                f[p.0 as usize] = Slot::Scalar(inputs.params[i], RT);
            }
        }
        let mut returned = vec![false; BLOCK as usize];
        for (si, seg) in segs.iter().enumerate() {
            match seg {
                Seg::Code(stmts, phase) => {
                    m.phase = *phase;
                    for t in 0..BLOCK {
                        if returned[t as usize] {
                            continue;
                        }
                        m.tid = t;
                        m.iters = 0;
                        let frame = &mut frames[t as usize];
                        match m.stmts(stmts, frame)? {
                            Flow::Return => {
                                returned[t as usize] = true;
                                if si + 1 < segs.len() {
                                    // On a GPU a barrier or warp operation would wait for it
                                    // forever (or not at all).
                                    return Err(Fault::Invalid(format!(
                                        "thread {t} of block {b} returns before a sync point"
                                    )));
                                }
                            }
                            Flow::Normal => {}
                            _ => return Err(Fault::Invalid("break outside a loop".into())),
                        }
                    }
                }
                Seg::Warp(s) => m.warp_op(s, &mut frames)?,
            }
        }
    }
    Ok(m.mem)
}

fn scalar(f: &[Slot], v: VarId) -> R<(Val, Prov)> {
    match &f[v.0 as usize] {
        Slot::Scalar(x, k) => Ok((*x, *k)),
        _ => Err(Fault::Invalid(format!("variable {} read unset", v.0))),
    }
}

impl Machine<'_> {
    fn gid(&self) -> u32 {
        self.block * BLOCK + self.tid
    }

    /// A warp operation: every thread's value and operand (in thread order), then each thread's
    /// result from the lanes of its warp.
    fn warp_op(&mut self, s: &Stmt, frames: &mut [Vec<Slot>]) -> R<()> {
        let Stmt::Warp {
            var,
            op,
            value,
            operand,
        } = s
        else {
            return Ok(());
        };
        let mut vals = vec![];
        let mut opers = vec![];
        for t in 0..BLOCK {
            self.tid = t;
            self.iters = 0;
            let f = &mut frames[t as usize];
            vals.push(self.expr(value, f)?);
            opers.push(match operand {
                Some(o) => match self.expr(o, f)? {
                    Val::Usize(x) => x as u64,
                    v => return Err(Fault::Invalid(format!("warp operand {v:?}"))),
                },
                None => 0,
            });
        }
        let w = self.warp as u64;
        for t in 0..BLOCK as u64 {
            let (lane, base) = (t % w, t - t % w);
            // Lanes of this warp present in the block.
            let present = |l: u64| base + l < BLOCK as u64;
            let pick = |l: u64| -> R<Val> {
                if present(l) {
                    Ok(vals[(base + l) as usize])
                } else {
                    Err(Fault::Invalid(format!(
                        "lane {l} of the warp is not in the block"
                    )))
                }
            };
            let own = vals[t as usize];
            let d = opers[t as usize];
            let r = match op {
                WarpOp::Shuffle => pick(d)?,
                WarpOp::Xor => pick(lane ^ d)?,
                WarpOp::Up => {
                    if d <= lane {
                        pick(lane - d)?
                    } else {
                        own
                    }
                }
                WarpOp::Down => {
                    if lane + d < w && present(lane + d) {
                        pick(lane + d)?
                    } else {
                        own
                    }
                }
                WarpOp::Any | WarpOp::All | WarpOp::Ballot => {
                    let bits: Vec<bool> = (0..w)
                        .filter(|&l| present(l))
                        .map(|l| vals[(base + l) as usize] == Val::Bool(true))
                        .collect();
                    match op {
                        WarpOp::Any => Val::Bool(bits.iter().any(|&b| b)),
                        WarpOp::All => Val::Bool(bits.iter().all(|&b| b)),
                        _ => Val::U32(
                            bits.iter()
                                .enumerate()
                                .filter(|(l, &b)| b && *l < 32)
                                .fold(0u32, |m, (l, _)| m | 1 << l),
                        ),
                    }
                }
            };
            frames[t as usize][var.0 as usize] = Slot::Scalar(r, RT);
        }
        Ok(())
    }

    fn stmts(&mut self, ss: &[Stmt], f: &mut Vec<Slot>) -> R<Flow> {
        for s in ss {
            match self.stmt(s, f)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn block(&mut self, b: &Block, f: &mut Vec<Slot>) -> R<Flow> {
        self.stmts(&b.stmts, f)
    }

    fn tick(&mut self, n: u64) -> R<()> {
        self.iters += n;
        if self.iters > ITER_BUDGET {
            return Err(Fault::Invalid("too many loop iterations".into()));
        }
        Ok(())
    }

    fn shared_access(&mut self, sh: usize, i: u32, kind: u8) -> R<()> {
        // kind: 0 read, 1 write, 2 atomic.
        let (t, phase) = (self.tid, self.phase);
        let a = &mut self.shared[sh].acc[i as usize];
        if a.phase != phase {
            *a = Access {
                phase,
                readers: Who::None,
                writers: Who::None,
                atomics: Who::None,
            };
        }
        let race = match kind {
            0 => a.writers.other_than(t) || a.atomics.other_than(t),
            1 => a.writers.other_than(t) || a.readers.other_than(t) || a.atomics.other_than(t),
            _ => a.writers.other_than(t) || a.readers.other_than(t),
        };
        let mixed = kind == 2 && (a.writers.any() || a.readers.any())
            || kind != 2 && a.atomics.any() && a.atomics.other_than(t);
        if race || mixed {
            return Err(Fault::Invalid(format!(
                "race on sh{sh}[{i}] in phase {phase} (thread {t})"
            )));
        }
        match kind {
            0 => a.readers = a.readers.add(t),
            1 => a.writers = a.writers.add(t),
            _ => a.atomics = a.atomics.add(t),
        }
        if kind != 1 && self.shared[sh].vals[i as usize].is_none() {
            return Err(Fault::Invalid(format!("sh{sh}[{i}] read before any write")));
        }
        Ok(())
    }

    fn index(&mut self, e: &Expr, len: u32, f: &mut Vec<Slot>) -> R<u32> {
        match self.expr(e, f)? {
            Val::Usize(i) => Ok(i % len),
            v => Err(Fault::Invalid(format!("index of type {:?}", v.ty()))),
        }
    }

    fn arr_len(&self, a: VarId) -> u32 {
        match self.k.vars[a.0 as usize].kind {
            VarKind::Array { len } => len,
            _ => 1,
        }
    }

    /// A `while` or `loop` with hidden `counter`: runs `body` while the counter is below
    /// `limit` (and `cond` holds), the counter incremented first thing in each trip.
    fn counted(
        &mut self,
        counter: VarId,
        limit: u32,
        cond: Option<&Expr>,
        body: &Block,
        f: &mut Vec<Slot>,
    ) -> R<Flow> {
        let c = counter.0 as usize;
        f[c] = Slot::Scalar(Val::U32(0), K);
        loop {
            let n = match f[c] {
                Slot::Scalar(Val::U32(n), _) => n,
                _ => return Err(Fault::Invalid("counter".into())),
            };
            if n >= limit {
                break;
            }
            if let Some(e) = cond {
                if !self.bool(e, f)? {
                    break;
                }
            }
            self.tick(1)?;
            f[c] = Slot::Scalar(Val::U32(n + 1), K);
            match self.block(body, f)? {
                Flow::Break => break,
                Flow::Return => return Ok(Flow::Return),
                Flow::Normal | Flow::Continue => {}
            }
        }
        Ok(Flow::Normal)
    }

    /// A `for` loop: the range's bounds evaluated once, before the first trip.
    fn for_loop(&mut self, l: &ForLoop, f: &mut Vec<Slot>) -> R<Flow> {
        let (lo_v, lo_k) = self.ev(&l.lo, f)?;
        let (hi_v, hi_k) = self.ev(&l.hi, f)?;
        let ty = lo_v.ty();
        let (a, b) = (wide(lo_v), wide(hi_v));
        let s = l.step.unwrap_or(1).max(1) as i128;
        if b <= a {
            return Ok(Flow::Normal);
        }
        let trips = ((b - a) + s - 1) / s;
        if trips as u64 > ITER_BUDGET {
            return Err(Fault::Invalid("too many loop iterations".into()));
        }
        for n in 0..trips {
            self.tick(1)?;
            let x = if l.rev { b - 1 - n * s } else { a + n * s };
            f[l.var.0 as usize] = Slot::Scalar(Val::from_bits(ty, x as u64), lo_k.both(hi_k));
            match self.block(&l.body, f)? {
                Flow::Break => break,
                Flow::Return => return Ok(Flow::Return),
                Flow::Normal | Flow::Continue => {}
            }
        }
        Ok(Flow::Normal)
    }

    fn stmt(&mut self, s: &Stmt, f: &mut Vec<Slot>) -> R<Flow> {
        match s {
            Stmt::Let { var, init } => {
                let (v, k) = self.ev(init, f)?;
                f[var.0 as usize] = Slot::Scalar(v, k);
            }
            Stmt::LetArr { var, init } => {
                let (v, k) = self.ev(init, f)?;
                let n = self.arr_len(*var) as usize;
                f[var.0 as usize] = Slot::Array(vec![v; n], vec![k; n]);
            }
            Stmt::Assign { place, op, value } => {
                // Rust evaluates the value first, then the place (also for compound
                // assignments of primitive types).
                let (v, vk) = self.ev(value, f)?;
                let combine = |this: &mut Self, old: (Val, Prov)| -> R<(Val, Prov)> {
                    match op {
                        None => Ok((v, vk)),
                        Some(o) => {
                            this.fast_math(*o, old, (v, vk))?;
                            let r = this.binop(*o, old.0, v, value)?;
                            this.subnormal(&[old.0, v, r])?;
                            Ok((r, old.1.both(vk)))
                        }
                    }
                };
                match place {
                    Place::Var(x) => {
                        let old = scalar(f, *x)?;
                        let (new, k) = combine(self, old)?;
                        f[x.0 as usize] = Slot::Scalar(new, k);
                    }
                    Place::Arr(a, i) => {
                        let len = self.arr_len(*a);
                        let i = self.index(i, len, f)? as usize;
                        let old = match &f[a.0 as usize] {
                            Slot::Array(xs, ks) => (xs[i], ks[i]),
                            _ => return Err(Fault::Invalid("array unset".into())),
                        };
                        let (new, k) = combine(self, old)?;
                        if let Slot::Array(xs, ks) = &mut f[a.0 as usize] {
                            xs[i] = new;
                            ks[i] = k;
                        }
                    }
                    Place::Out(t, slot) => {
                        let b = t.buf_index().expect("a buffer type");
                        let i = (self.gid() * SLOTS + slot) as usize;
                        let old = (self.mem.outputs[b][i], self.out_konst[b][i]);
                        let (new, k) = combine(self, old)?;
                        self.mem.outputs[b][i] = new;
                        self.out_konst[b][i] = k;
                    }
                    Place::Shared(sh) => {
                        let t = self.tid;
                        if op.is_some() {
                            self.shared_access(*sh, t, 0)?;
                        }
                        self.shared_access(*sh, t, 1)?;
                        let old = self.shared[*sh].vals[t as usize].unwrap_or(v);
                        let (new, _) = combine(self, (old, RT))?;
                        self.shared[*sh].vals[t as usize] = Some(new);
                    }
                }
            }
            Stmt::Atomic {
                target,
                op,
                index,
                value,
            } => {
                // A call: `&mut a[i]` (the index) first, then the value.
                let len = match target {
                    AtomTarget::Acc(_) => ACC_LEN,
                    AtomTarget::Shared(_) => BLOCK,
                };
                let i = match index {
                    Some(e) => self.index(e, len, f)?,
                    None => match target {
                        AtomTarget::Acc(_) => 0,
                        AtomTarget::Shared(_) => self.tid,
                    },
                };
                let v = self.expr(value, f)?;
                let old = match target {
                    AtomTarget::Acc(a) => self.mem.accs[*a][i as usize],
                    AtomTarget::Shared(sh) => {
                        self.shared_access(*sh, i, 2)?;
                        self.shared[*sh].vals[i as usize].expect("checked")
                    }
                };
                let new = atomic(*op, old, v)?;
                match target {
                    AtomTarget::Acc(a) => self.mem.accs[*a][i as usize] = new,
                    AtomTarget::Shared(sh) => self.shared[*sh].vals[i as usize] = Some(new),
                }
            }
            Stmt::If { cond, then, els } => {
                let c = self.bool(cond, f)?;
                if c {
                    return self.block(then, f);
                } else if let Some(e) = els {
                    return self.block(e, f);
                }
            }
            Stmt::While {
                counter,
                limit,
                cond,
                body,
            } => return self.counted(*counter, *limit, cond.as_ref(), body, f),
            Stmt::Loop {
                counter,
                limit,
                body,
            } => return self.counted(*counter, *limit, None, body, f),
            Stmt::For(l) => return self.for_loop(l, f),
            Stmt::Match {
                scrut,
                arms,
                default,
            } => {
                let (v, ks) = self.ev(scrut, f)?;
                self.sext_range(ks, arms)?;
                for a in arms {
                    if a.pats.iter().any(|p| matches_pat(p, v)) {
                        return self.block(&a.body, f);
                    }
                }
                return self.block(default, f);
            }
            Stmt::Block(b) => return self.block(b, f),
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Return => return Ok(Flow::Return),
            Stmt::Sync | Stmt::Warp { .. } => {
                return Err(Fault::Invalid(
                    "a barrier or warp operation below the top level".into(),
                ))
            }
        }
        Ok(Flow::Normal)
    }

    fn bool(&mut self, e: &Expr, f: &mut Vec<Slot>) -> R<bool> {
        match self.expr(e, f)? {
            Val::Bool(b) => Ok(b),
            v => Err(Fault::Invalid(format!("condition of type {:?}", v.ty()))),
        }
    }

    fn expr(&mut self, e: &Expr, f: &mut Vec<Slot>) -> R<Val> {
        Ok(self.ev(e, f)?.0)
    }

    /// A value block's value and whether it is known at compile time: its statements must run
    /// to the end (no `break`/`return` crosses it).
    fn value_block_k(&mut self, b: &Block, f: &mut Vec<Slot>) -> R<(Val, Prov)> {
        match self.stmts(&b.stmts, f)? {
            Flow::Normal => {}
            _ => return Err(Fault::Invalid("control flow out of a value block".into())),
        }
        match &b.tail {
            Some(t) => self.ev(t, f),
            None => Err(Fault::Invalid("value block without a value".into())),
        }
    }

    /// `e`'s value, and whether a compiler could know it at compile time.
    fn ev(&mut self, e: &Expr, f: &mut Vec<Slot>) -> R<(Val, Prov)> {
        let k = self.k;
        Ok(match &e.kind {
            ExprKind::Lit(v) => (*v, if v.ty().is_float() { KF } else { K }),
            ExprKind::Var(v) => scalar(f, *v)?,
            ExprKind::Intr(i) => (
                Val::Usize(match i {
                    Intr::Gid => self.gid(),
                    Intr::Tid => self.tid,
                    Intr::BlockIdx => self.block,
                    Intr::BlockDim => BLOCK,
                    Intr::GridDim => GRID,
                    Intr::GlobalSize => THREADS,
                    Intr::LaneId => self.tid % self.warp,
                    Intr::WarpSize => self.warp,
                }),
                // Vulkan embeds the block size in the shader.
                Prov {
                    konst: *i == Intr::BlockDim,
                    sext: false,
                    vis: *i == Intr::BlockDim,
                },
            ),
            ExprKind::Input { index, .. } => {
                let i = self.index(index, IN_LEN, f)?;
                let b = e.ty.buf_index().expect("a buffer type");
                (self.inputs.inputs[b][i as usize], RT)
            }
            ExprKind::OutRead { slot } => {
                let b = e.ty.buf_index().expect("a buffer type");
                let i = (self.gid() * SLOTS + slot) as usize;
                (self.mem.outputs[b][i], self.out_konst[b][i])
            }
            ExprKind::ArrRead { arr, index } => {
                let len = self.arr_len(*arr);
                let i = self.index(index, len, f)?;
                match &f[arr.0 as usize] {
                    Slot::Array(xs, ks) => (xs[i as usize], ks[i as usize]),
                    _ => return Err(Fault::Invalid("array unset".into())),
                }
            }
            ExprKind::SharedRead { sh, index } => {
                let i = match index {
                    Some(ix) => self.index(ix, BLOCK, f)?,
                    None => self.tid,
                };
                self.shared_access(*sh, i, 0)?;
                (self.shared[*sh].vals[i as usize].expect("checked"), RT)
            }
            ExprKind::Len(l) => match l {
                LenOf::Input(_) => (Val::Usize(IN_LEN), RT),
                LenOf::Output(_) => (Val::Usize(THREADS * SLOTS), RT),
                LenOf::Array(a) => (Val::Usize(self.arr_len(*a)), K),
                LenOf::Shared(_) => (Val::Usize(BLOCK), K),
            },
            ExprKind::Unary(op, a) => {
                let (a, k) = self.ev(a, f)?;
                let r = unary(*op, a);
                // A negation is arithmetic to a flushing device too (NVIDIA's Vulkan driver
                // gave -(-1e-40) as 0.0 on the H200).
                self.subnormal(&[a, r])?;
                (r, k.both(K))
            }
            ExprKind::Binary(op, a, b) => match op {
                BinOp::LogicalAnd | BinOp::LogicalOr => {
                    let (x, kx) = self.ev(a, f)?;
                    let short = matches!(
                        (op, x),
                        (BinOp::LogicalAnd, Val::Bool(false)) | (BinOp::LogicalOr, Val::Bool(true))
                    );
                    if short {
                        (x, kx)
                    } else {
                        let (y, ky) = self.ev(b, f)?;
                        if !matches!(y, Val::Bool(_)) {
                            return Err(Fault::Invalid("a non-bool operand of && or ||".into()));
                        }
                        (y, kx.both(ky))
                    }
                }
                _ => {
                    let x = self.ev(a, f)?;
                    let y = self.ev(b, f)?;
                    self.fast_math(*op, x, y)?;
                    self.sext_compare(*op, x, y)?;
                    let r = self.binop(*op, x.0, y.0, b)?;
                    self.subnormal(&[x.0, y.0, r])?;
                    let mut p = x.1.both(y.1);
                    if folds_to_constant(*op, (a, x), (b, y)) {
                        p.konst = true;
                        p.vis = true;
                    }
                    (r, p)
                }
            },
            ExprKind::Cast(a) => {
                let (v, k) = self.ev(a, f)?;
                let r = cast(v, e.ty);
                self.subnormal(&[v, r])?;
                let sext = v.ty() == Ty::I32 && matches!(e.ty, Ty::I64 | Ty::U64);
                (
                    r,
                    Prov {
                        konst: k.konst,
                        sext,
                        vis: k.vis,
                    },
                )
            }
            ExprKind::Method(m, args) => {
                let mut vs = Vec::with_capacity(args.len());
                let mut k = K;
                // `x.wrapping_sub(x)` is 0 whatever `x` is.
                let same = *m == Method::WrappingSub && args.len() == 2 && args[0] == args[1];
                for a in args {
                    let (v, ka) = self.ev(a, f)?;
                    if ka.sext && matches!(m, Method::Min | Method::Max | Method::Abs) {
                        self.sext_compare(BinOp::Lt, (v, ka), (v, ka))?;
                    }
                    // lavapipe also folds `(-0.0).abs()` to -0.0.
                    self.fast_math(BinOp::Add, (v, ka), (v, RT))?;
                    vs.push(v);
                    k = k.both(ka);
                }
                let r = self.method(*m, &vs)?;
                vs.push(r);
                self.subnormal(&vs)?;
                if same && r.ty().is_int() {
                    k.konst = true;
                    k.vis = true;
                }
                (r, k)
            }
            ExprKind::If(c, a, b) => {
                let (c, kc) = self.ev(c, f)?;
                let (v, kv) = if c == Val::Bool(true) {
                    self.value_block_k(a, f)?
                } else {
                    self.value_block_k(b, f)?
                };
                (v, kv.under(kc))
            }
            ExprKind::Block(b) => self.value_block_k(b, f)?,
            ExprKind::Match(s, arms, d) => {
                let (v, ks) = self.ev(s, f)?;
                self.sext_range(ks, arms)?;
                let (r, kr) = match arms
                    .iter()
                    .find(|a| a.pats.iter().any(|p| matches_pat(p, v)))
                {
                    Some(a) => self.value_block_k(&a.body, f)?,
                    None => self.value_block_k(d, f)?,
                };
                (r, kr.under(ks))
            }
            ExprKind::Call(h, args) => {
                let helper = &k.helpers[*h];
                let mut frame = vec![Slot::Empty; k.vars.len()];
                for (p, a) in helper.params.iter().zip(args) {
                    let (v, ka) = self.ev(a, f)?;
                    frame[p.0 as usize] = Slot::Scalar(v, ka);
                }
                self.value_block_k(&helper.body, &mut frame)?
            }
        })
    }

    /// [`Excl::vulkan_sext_compare`]: refuses an ordering comparison of a sign-extended `i32`.
    fn sext_compare(&self, op: BinOp, x: (Val, Prov), y: (Val, Prov)) -> R<()> {
        if self.excl.vulkan_sext_compare
            && matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
            && (x.1.sext || y.1.sext)
        {
            return Err(Fault::Known("vulkan-sext-compare"));
        }
        Ok(())
    }

    /// [`Excl::vulkan_sext_compare`] for a `match` with range patterns.
    fn sext_range(&self, scrut: Prov, arms: &[Arm]) -> R<()> {
        if self.excl.vulkan_sext_compare
            && scrut.sext
            && arms
                .iter()
                .any(|a| a.pats.iter().any(|p| matches!(p, Pat::Range(..))))
        {
            return Err(Fault::Known("vulkan-sext-compare"));
        }
        Ok(())
    }

    /// [`Excl::f32_subnormals`]: refuses f32 arithmetic on or giving a subnormal.
    fn subnormal(&self, vals: &[Val]) -> R<()> {
        if self.excl.f32_subnormals
            && vals
                .iter()
                .any(|v| matches!(v, Val::F32(x) if x.is_subnormal()))
        {
            return Err(Fault::Known("f32-subnormals"));
        }
        Ok(())
    }

    /// [`Excl::vulkan_fast_math`]: refuses a float operation on an operand known at compile time
    /// to be ±0, NaN or ±inf.
    fn fast_math(&self, op: BinOp, x: (Val, Prov), y: (Val, Prov)) -> R<()> {
        if !self.excl.vulkan_fast_math || !x.0.ty().is_float() || op.is_shift() {
            return Ok(());
        }
        let special = |(v, k): (Val, Prov)| {
            k.vis
                && match v {
                    Val::F32(a) => a == 0.0 || !a.is_finite(),
                    Val::F64(a) => a == 0.0 || !a.is_finite(),
                    _ => false,
                }
        };
        if special(x) || special(y) {
            return Err(Fault::Known("vulkan-fast-math"));
        }
        Ok(())
    }

    /// `x op y`, where `rhs` is the right operand's expression (a divisor is guarded unless it
    /// is a non-zero literal, as the printer writes it).
    fn binop(&mut self, op: BinOp, x: Val, y: Val, rhs: &Expr) -> R<Val> {
        if op.is_shift() {
            return Ok(shift(op, x, y.bits() as u32));
        }
        if op.is_comparison() {
            return Ok(Val::Bool(compare(op, x, y)));
        }
        let y = match op {
            BinOp::Div | BinOp::Rem if x.ty().is_int() && !divisor_is_plain(rhs) => {
                Val::from_bits(y.ty(), y.bits() | 1)
            }
            _ => y,
        };
        Ok(arith(op, x, y))
    }

    fn method(&mut self, m: Method, a: &[Val]) -> R<Val> {
        macro_rules! fl {
            ($x:expr, $y:expr, $z:expr, $V:ident, $MAX:expr) => {{
                let (x, y, z) = ($x, $y, $z);
                let max = $MAX;
                Val::$V(match m {
                    Method::Abs => x.abs(),
                    Method::Min | Method::Max => {
                        if x == 0.0 && y == 0.0 && x.to_bits() != y.to_bits() {
                            return Err(Fault::Unspecified(format!(
                                "{}({x:?}, {y:?}) of zeros of opposite signs",
                                m.name()
                            )));
                        }
                        if m == Method::Min {
                            x.min(y)
                        } else {
                            x.max(y)
                        }
                    }
                    Method::Sqrt => {
                        let r = x.sqrt();
                        if self.excl.vulkan_sqrt_max && r == max.sqrt() {
                            return Err(Fault::Known("vulkan-sqrt-max"));
                        }
                        r
                    }
                    Method::Floor => x.floor(),
                    Method::Ceil => x.ceil(),
                    Method::Round => x.round(),
                    Method::Trunc => x.trunc(),
                    Method::Signum => x.signum(),
                    Method::Recip => x.recip(),
                    Method::Copysign => {
                        if y.is_nan() {
                            return Err(Fault::Unspecified("copysign with a NaN sign".into()));
                        }
                        x.copysign(y)
                    }
                    Method::MulAdd => x.mul_add(y, z),
                    _ => return Err(Fault::Invalid(format!("{} on a float", m.name()))),
                })
            }};
        }
        macro_rules! int {
            ($x:expr, $y:expr, $V:ident, $signed:expr, $min:expr) => {{
                let (x, y) = ($x, $y);
                Val::$V(match m {
                    Method::Abs if $signed => {
                        if self.excl.abs_int_min && x == $min {
                            return Err(Fault::Known("abs-int-min"));
                        }
                        x.wrapping_abs_()
                    }
                    Method::Min => x.min(y),
                    Method::Max => x.max(y),
                    Method::WrappingAdd => x.wrapping_add(y),
                    Method::WrappingSub => x.wrapping_sub(y),
                    Method::WrappingMul => x.wrapping_mul(y),
                    _ => return Err(Fault::Invalid(format!("{} on an integer", m.name()))),
                })
            }};
        }
        let second = a.get(1).copied().unwrap_or(a[0]);
        let third = a.get(2).copied().unwrap_or(a[0]);
        Ok(match (a[0], second, third) {
            (Val::F32(x), Val::F32(y), Val::F32(z)) => fl!(x, y, z, F32, f32::MAX),
            (Val::F64(x), Val::F64(y), Val::F64(z)) => fl!(x, y, z, F64, f64::MAX),
            (Val::I32(x), Val::I32(y), _) => int!(x, y, I32, true, i32::MIN),
            (Val::I64(x), Val::I64(y), _) => int!(x, y, I64, true, i64::MIN),
            (Val::U32(x), Val::U32(y), _) => int!(x, y, U32, false, 0),
            (Val::U64(x), Val::U64(y), _) => int!(x, y, U64, false, 0),
            (Val::Usize(x), Val::Usize(y), _) => int!(x, y, Usize, false, 0),
            _ => return Err(Fault::Invalid(format!("{} on mixed types", m.name()))),
        })
    }
}

/// `wrapping_abs`, with unsigned types' identity so one macro serves every integer type.
trait WrappingAbs {
    fn wrapping_abs_(self) -> Self;
}
impl WrappingAbs for i32 {
    fn wrapping_abs_(self) -> Self {
        self.wrapping_abs()
    }
}
impl WrappingAbs for i64 {
    fn wrapping_abs_(self) -> Self {
        self.wrapping_abs()
    }
}
impl WrappingAbs for u32 {
    fn wrapping_abs_(self) -> Self {
        self
    }
}
impl WrappingAbs for u64 {
    fn wrapping_abs_(self) -> Self {
        self
    }
}

/// Whether a compiler can fold integer `a op b` to a constant whatever the operands are
/// (`x ^ x`, `x - x`, `x == x`, `x & 0`, `x * 0`, `x | !0`), so that its result is known at
/// compile time although the operands are not.
fn folds_to_constant(op: BinOp, a: (&Expr, (Val, Prov)), b: (&Expr, (Val, Prov))) -> bool {
    let (ea, (va, pa)) = a;
    let (eb, (vb, pb)) = b;
    if !va.ty().is_int() || va.ty() != vb.ty() {
        return false;
    }
    let zero = |v: Val, p: Prov| p.konst && v.bits() == 0;
    let ones = |v: Val, p: Prov| p.konst && v == Val::from_bits(v.ty(), u64::MAX);
    match op {
        BinOp::Sub
        | BinOp::BitXor
        | BinOp::Eq
        | BinOp::Ne
        | BinOp::Lt
        | BinOp::Le
        | BinOp::Gt
        | BinOp::Ge => ea == eb,
        BinOp::BitAnd | BinOp::Mul => zero(va, pa) || zero(vb, pb),
        BinOp::BitOr => ones(va, pa) || ones(vb, pb),
        _ => false,
    }
}

fn wide(v: Val) -> i128 {
    match v {
        Val::I32(x) => x as i128,
        Val::I64(x) => x as i128,
        Val::U32(x) | Val::Usize(x) => x as i128,
        Val::U64(x) => x as i128,
        Val::Bool(b) => b as i128,
        Val::F32(x) => x as i128,
        Val::F64(x) => x as i128,
    }
}

fn matches_pat(p: &Pat, v: Val) -> bool {
    match p {
        Pat::Lit(x) => x.same(v),
        Pat::Range(a, b) => wide(*a) <= wide(v) && wide(v) <= wide(*b),
    }
}

/// `op a` with Rust's semantics (signed `-` wraps).
pub fn unary(op: UnOp, a: Val) -> Val {
    match (op, a) {
        (UnOp::Neg, Val::I32(x)) => Val::I32(x.wrapping_neg()),
        (UnOp::Neg, Val::I64(x)) => Val::I64(x.wrapping_neg()),
        (UnOp::Neg, Val::F32(x)) => Val::F32(-x),
        (UnOp::Neg, Val::F64(x)) => Val::F64(-x),
        (UnOp::Not, Val::Bool(x)) => Val::Bool(!x),
        (UnOp::Not, v) => Val::from_bits(v.ty(), !v.bits()),
        (UnOp::Neg, v) => v,
    }
}

/// `a as to` with Rust's semantics, `usize` being 32 bits.
pub fn cast(v: Val, to: Ty) -> Val {
    macro_rules! to {
        ($x:expr) => {
            match to {
                Ty::I32 => Val::I32($x as i32),
                Ty::U32 => Val::U32($x as u32),
                Ty::I64 => Val::I64($x as i64),
                Ty::U64 => Val::U64($x as u64),
                Ty::F32 => Val::F32($x as f32),
                Ty::F64 => Val::F64($x as f64),
                Ty::Usize => Val::Usize($x as u32),
                Ty::Bool => Val::Bool($x as u64 != 0),
            }
        };
    }
    match v {
        Val::Bool(b) => to!(b as u8),
        Val::I32(x) => to!(x),
        Val::U32(x) | Val::Usize(x) => to!(x),
        Val::I64(x) => to!(x),
        Val::U64(x) => to!(x),
        Val::F32(x) => to!(x),
        Val::F64(x) => to!(x),
    }
}

fn shift(op: BinOp, x: Val, amount: u32) -> Val {
    macro_rules! sh {
        ($x:expr, $V:ident) => {
            Val::$V(if op == BinOp::Shl {
                $x.wrapping_shl(amount)
            } else {
                $x.wrapping_shr(amount)
            })
        };
    }
    match x {
        Val::I32(x) => sh!(x, I32),
        Val::I64(x) => sh!(x, I64),
        Val::U32(x) => sh!(x, U32),
        Val::U64(x) => sh!(x, U64),
        Val::Usize(x) => sh!(x, Usize),
        v => v,
    }
}

fn compare(op: BinOp, x: Val, y: Val) -> bool {
    macro_rules! cmp {
        ($x:expr, $y:expr) => {
            match op {
                BinOp::Eq => $x == $y,
                BinOp::Ne => $x != $y,
                BinOp::Lt => $x < $y,
                BinOp::Le => $x <= $y,
                BinOp::Gt => $x > $y,
                _ => $x >= $y,
            }
        };
    }
    match (x, y) {
        (Val::Bool(a), Val::Bool(b)) => cmp!(a, b),
        (Val::I32(a), Val::I32(b)) => cmp!(a, b),
        (Val::I64(a), Val::I64(b)) => cmp!(a, b),
        (Val::U32(a), Val::U32(b)) | (Val::Usize(a), Val::Usize(b)) => cmp!(a, b),
        (Val::U64(a), Val::U64(b)) => cmp!(a, b),
        (Val::F32(a), Val::F32(b)) => cmp!(a, b),
        (Val::F64(a), Val::F64(b)) => cmp!(a, b),
        _ => false,
    }
}

/// `x op y` for the arithmetic and bitwise operators (integer divisors already non-zero).
pub fn arith(op: BinOp, x: Val, y: Val) -> Val {
    macro_rules! int {
        ($x:expr, $y:expr, $V:ident) => {
            Val::$V(match op {
                BinOp::Add => $x.wrapping_add($y),
                BinOp::Sub => $x.wrapping_sub($y),
                BinOp::Mul => $x.wrapping_mul($y),
                BinOp::Div => $x.wrapping_div($y),
                BinOp::Rem => $x.wrapping_rem($y),
                BinOp::BitAnd => $x & $y,
                BinOp::BitOr => $x | $y,
                _ => $x ^ $y,
            })
        };
    }
    macro_rules! fl {
        ($x:expr, $y:expr, $V:ident) => {
            Val::$V(match op {
                BinOp::Add => $x + $y,
                BinOp::Sub => $x - $y,
                BinOp::Mul => $x * $y,
                BinOp::Div => $x / $y,
                _ => $x % $y,
            })
        };
    }
    match (x, y) {
        (Val::Bool(a), Val::Bool(b)) => Val::Bool(match op {
            BinOp::BitAnd => a & b,
            BinOp::BitOr => a | b,
            _ => a ^ b,
        }),
        (Val::I32(a), Val::I32(b)) => int!(a, b, I32),
        (Val::I64(a), Val::I64(b)) => int!(a, b, I64),
        (Val::U32(a), Val::U32(b)) => int!(a, b, U32),
        (Val::Usize(a), Val::Usize(b)) => int!(a, b, Usize),
        (Val::U64(a), Val::U64(b)) => int!(a, b, U64),
        (Val::F32(a), Val::F32(b)) => fl!(a, b, F32),
        (Val::F64(a), Val::F64(b)) => fl!(a, b, F64),
        (a, _) => a,
    }
}

fn atomic(op: AtomOp, old: Val, v: Val) -> R<Val> {
    Ok(match op {
        AtomOp::Add => match (old, v) {
            (Val::F32(a), Val::F32(b)) => Val::F32(a + b),
            (Val::F64(a), Val::F64(b)) => Val::F64(a + b),
            _ => arith(BinOp::Add, old, v),
        },
        AtomOp::Sub => arith(BinOp::Sub, old, v),
        AtomOp::And => arith(BinOp::BitAnd, old, v),
        AtomOp::Or => arith(BinOp::BitOr, old, v),
        AtomOp::Xor => arith(BinOp::BitXor, old, v),
        AtomOp::Min | AtomOp::Max => {
            let lt = compare(BinOp::Lt, v, old);
            if (op == AtomOp::Min) == lt {
                v
            } else {
                old
            }
        }
    })
}
