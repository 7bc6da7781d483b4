//! Running a compiled kernel: argument binding, the grid of blocks on the CPU cores, and the
//! evaluation of statements and expressions for one thread.
//!
//! Kernels without barriers, shared arrays or warp operations run their threads one after
//! another, each to completion, reusing one [`Thread`] per worker. The others
//! ([`Program::simt`]) run each block through [`crate::simt::run_block`]: one coroutine per
//! thread, the block's shared arrays allocated (zero-filled) per block and bound as extra
//! buffers after the launch's.

use super::compile::{
    CExpr, CPath, CPattern, CStmt, IOp, ParamKind, Program, SStmt, Special, Step, ISTACK,
    MAX_INDICES, NO_LOC,
};
use super::error::{
    invalid, unsupported, AccessKind, DivergenceGroup, Fault, InterpError, InterpErrorKind,
    MemorySpace, RaceAccess, SourceLoc,
};
use super::layout::Layout;
use super::sanitize::{BlockCheck, Checks, Finding, GlobalCheck, Me};
use super::value::{self, Agg, Value};
use crate::native::abi::{NativeArg, ScalarArg, ThreadCtx};
use crate::simt::{self, Aborted, BlockFault, Site, SyncError, SyncHandle, WarpOpKind};
use rayon::prelude::*;
use spoc_ir::{AtomicOp, BinOp, ForDir, ScalarType};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering::SeqCst};

/// Helper calls nested deeper than this are refused (the validator rejects recursion; this
/// keeps an unvalidated recursive kernel from exhausting memory).
const MAX_CALL_DEPTH: u32 = 256;

/// In SIMT kernels, a helper call with less coroutine stack left than this is refused (an error,
/// not an overflow of the stack).
const STACK_MARGIN: usize = 96 * 1024;

/// A global buffer bound to a launch, or a shared array bound to a block.
#[derive(Clone, Debug)]
pub(crate) struct BufView {
    ptr: *mut u8,
    /// Length in elements.
    len: usize,
    elem_size: usize,
    /// Element layout id (see [`Program::layouts`]).
    elem: u32,
    mutable: bool,
    /// The kernel parameter's name.
    name: Box<str>,
    /// Whether it is a shared array.
    shared: bool,
    /// Which shadow checks its accesses.
    shadow: Shadow,
}

/// The shadow memory of a [`BufView`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shadow {
    /// Unchecked.
    None,
    /// Shared array `.0` of the block's [`BlockCheck`].
    Shared(u32),
    /// Global buffer `.0` of the launch's [`GlobalCheck`].
    Global(u32),
}

// SAFETY: a BufView is a view of memory the launch borrows for its duration (the contract of
// `NativeArg`); every access is bounds-checked and done with atomic loads and stores.
unsafe impl Send for BufView {}
unsafe impl Sync for BufView {}

/// One launch's bound arguments.
struct Launch<'a> {
    prog: &'a Program,
    /// The global buffers (buffer numbers `0..bufs.len()`; the block's shared arrays follow
    /// them in [`Thread::bufs`]).
    bufs: Vec<BufView>,
    /// Initial values of the kernel's parameter slots (and of its shared-array slots).
    params: Vec<(usize, Value)>,
    /// The optional checks of this launch.
    checks: Checks,
    /// The global-race shadow, when that check is on.
    gcheck: Option<GlobalCheck>,
}

/// The state of the thread being run.
struct Thread<'s, 'y> {
    /// Variable slots: the kernel's frame first, then one frame per active helper call.
    stack: Vec<Value>,
    /// Start of the current frame in `stack`.
    base: usize,
    depth: u32,
    ctx: ThreadCtx,
    /// Every buffer the thread can reach, indexed by buffer number: the launch's global
    /// buffers, then (in SIMT kernels) the block's shared arrays.
    bufs: &'s [BufView],
    /// The scheduler, in SIMT kernels.
    sync: Option<&'s mut SyncHandle<'y>>,
    /// Who the thread is and which barriers it passed, for the race checks.
    me: Me,
    /// The block's check state, in SIMT kernels with checks on.
    bcheck: Option<&'s BlockCheck>,
    /// The location of the innermost statement that faulted ([`NO_LOC`] until one does).
    fault_loc: u32,
}

/// What a statement asks of the enclosing ones.
enum Flow {
    Next,
    Break,
    Continue,
    Return(Value),
}

fn bad_arg(param: &str, expected: impl Into<String>) -> InterpErrorKind {
    InterpErrorKind::BadArgument {
        param: param.to_string(),
        expected: expected.into(),
    }
}

fn scalar_arg(s: ScalarType, a: ScalarArg) -> Option<Value> {
    Some(match (s, a) {
        (ScalarType::Bool, ScalarArg::Bool(v)) => Value::Bool(v),
        (ScalarType::I32, ScalarArg::I32(v)) => Value::I32(v),
        (ScalarType::I64, ScalarArg::I64(v)) => Value::I64(v),
        (ScalarType::U32, ScalarArg::U32(v)) => Value::U32(v),
        (ScalarType::U64, ScalarArg::U64(v)) => Value::U64(v),
        (ScalarType::F32, ScalarArg::F32(v)) => Value::F32(v),
        (ScalarType::F64, ScalarArg::F64(v)) => Value::F64(v),
        _ => return None,
    })
}

/// Runs `prog` over `grid` x `block` with `shared_bytes` of dynamic shared memory per block,
/// with the optional `checks`.
pub(crate) fn run(
    prog: &Program,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: usize,
    args: &[NativeArg],
    checks: Checks,
) -> Result<(), InterpError> {
    let mut launch = bind(prog, args).map_err(|k| InterpError::launch(&prog.name, k))?;
    let [gx, gy, gz] = grid.map(u64::from);
    let nblocks = gx * gy * gz;
    if nblocks == 0 || block.contains(&0) {
        return Ok(());
    }
    launch.checks = checks;
    if checks.global_races {
        let lens: Vec<usize> = launch.bufs.iter().map(|b| b.len).collect();
        let tpb = block.iter().map(|&d| d as u64).product();
        launch.gcheck = Some(GlobalCheck::new(&lens, tpb));
        for (k, b) in launch.bufs.iter_mut().enumerate() {
            b.shadow = Shadow::Global(k as u32);
        }
    }
    if prog.simt {
        return launch.run_simt(grid, block, shared_bytes);
    }
    let nslots = prog.kernel.nslots;
    let err = (0..nblocks)
        .into_par_iter()
        .map_init(
            || Thread {
                stack: vec![Value::Unit; nslots],
                base: 0,
                depth: 0,
                ctx: ThreadCtx {
                    thread: [0; 3],
                    block: [0; 3],
                    block_dim: block,
                    grid_dim: grid,
                },
                bufs: &launch.bufs,
                sync: None,
                me: Me {
                    linear: 0,
                    global: 0,
                    epoch: 0,
                    wep: 0,
                },
                bcheck: None,
                fault_loc: NO_LOC,
            },
            |th, b| {
                th.ctx.block = [
                    (b % gx) as u32,
                    ((b / gx) % gy) as u32,
                    (b / (gx * gy)) as u32,
                ];
                launch.run_block(th).err()
            },
        )
        .find_map_first(|e| e);
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Checks the arguments against the kernel's parameters and binds them.
fn bind<'a>(prog: &'a Program, args: &[NativeArg]) -> Result<Launch<'a>, InterpErrorKind> {
    if args.len() != prog.params.len() {
        return Err(bad_arg(
            "(argument list)",
            format!("{} arguments, got {}", prog.params.len(), args.len()),
        ));
    }
    let mut bufs = Vec::new();
    let mut params = Vec::with_capacity(args.len());
    for (p, a) in prog.params.iter().zip(args) {
        let v = match (&p.kind, *a) {
            (ParamKind::Scalar(s), NativeArg::Scalar(v)) => {
                scalar_arg(*s, v).ok_or_else(|| bad_arg(&p.name, format!("a {s}, got {v:?}")))?
            }
            (
                ParamKind::Buffer { elem, mutable },
                NativeArg::Buffer {
                    ptr,
                    len,
                    elem_bytes,
                },
            ) => {
                let l = &prog.layouts[*elem as usize];
                if elem_bytes != l.size() {
                    return Err(bad_arg(
                        &p.name,
                        format!(
                            "a buffer of {}-byte elements, got {elem_bytes}-byte elements",
                            l.size()
                        ),
                    ));
                }
                if !(ptr as usize).is_multiple_of(l.align()) {
                    return Err(bad_arg(
                        &p.name,
                        format!("a buffer aligned to {} bytes", l.align()),
                    ));
                }
                if len > u32::MAX as usize {
                    return Err(bad_arg(&p.name, "a buffer of at most 2^32 - 1 elements"));
                }
                bufs.push(BufView {
                    ptr,
                    len,
                    elem_size: elem_bytes,
                    elem: *elem,
                    mutable: *mutable,
                    name: p.name.as_str().into(),
                    shared: false,
                    shadow: Shadow::None,
                });
                Value::Buffer((bufs.len() - 1) as u32)
            }
            (
                ParamKind::Record(l),
                NativeArg::Buffer {
                    ptr,
                    len,
                    elem_bytes,
                },
            ) => {
                if len < 1 || elem_bytes != l.size() || !(ptr as usize).is_multiple_of(l.align()) {
                    return Err(bad_arg(
                        &p.name,
                        format!(
                            "a record: one element of {} bytes aligned to {}",
                            l.size(),
                            l.align()
                        ),
                    ));
                }
                // SAFETY: checked size and alignment of a buffer the launch borrows.
                unsafe { l.load(ptr) }
            }
            (ParamKind::Scalar(s), NativeArg::Buffer { .. }) => {
                return Err(bad_arg(&p.name, format!("a {s}, got a buffer")))
            }
            (_, NativeArg::Scalar(v)) => {
                return Err(bad_arg(&p.name, format!("a buffer, got {v:?}")))
            }
        };
        params.push((p.slot as usize, v));
    }
    for (k, s) in prog.shared.iter().enumerate() {
        params.push((s.slot as usize, Value::Buffer((bufs.len() + k) as u32)));
    }
    Ok(Launch {
        prog,
        bufs,
        params,
        checks: Checks::NONE,
        gcheck: None,
    })
}

#[cold]
fn not_u32(v: &Value) -> Fault {
    invalid(format!("a u32 variable holds a {}", v.type_name()))
}

#[cold]
fn not_u32_op(op: BinOp) -> Fault {
    invalid(format!("`{}` in a u32 expression", op.symbol()))
}

#[cold]
fn div_zero() -> Fault {
    Box::new(InterpErrorKind::DivisionByZero)
}

/// The fault a sync call answers while the block is torn down (the scheduler discards it).
fn aborted(_: Aborted) -> Fault {
    invalid("the block was aborted")
}

/// The scheduler handle of a SIMT thread.
#[inline]
fn handle<'a, 'y>(th: &'a mut Thread<'_, 'y>) -> Result<&'a mut SyncHandle<'y>, Fault> {
    th.sync
        .as_deref_mut()
        .ok_or_else(|| invalid("a barrier or warp operation outside the SIMT scheduler"))
}

/// A scalar as the bits a shuffle moves.
fn to_bits(v: &Value) -> Result<u64, Fault> {
    Ok(match *v {
        Value::Bool(b) => b as u64,
        Value::I32(x) => x as u32 as u64,
        Value::U32(x) => x as u64,
        Value::I64(x) => x as u64,
        Value::U64(x) => x,
        Value::F16(x) => x as u64,
        Value::F32(x) => x.to_bits() as u64,
        Value::F64(x) => x.to_bits(),
        _ => return Err(invalid(format!("a shuffle of a {}", v.type_name()))),
    })
}

/// Shuffled `bits` as a value of the type of `like` (every lane at one site has that type).
fn from_bits(like: &Value, bits: u64) -> Value {
    match like {
        Value::Bool(_) => Value::Bool(bits != 0),
        Value::I32(_) => Value::I32(bits as u32 as i32),
        Value::U32(_) => Value::U32(bits as u32),
        Value::I64(_) => Value::I64(bits as i64),
        Value::F16(_) => Value::F16(bits as u16),
        Value::F32(_) => Value::F32(f32::from_bits(bits as u32)),
        Value::F64(_) => Value::F64(f64::from_bits(bits)),
        _ => Value::U64(bits),
    }
}

fn oob(space: MemorySpace, array: &str, index: u32, len: usize) -> Fault {
    Box::new(InterpErrorKind::OutOfBounds {
        space,
        array: array.to_string(),
        index: index as u64,
        len: len as u64,
    })
}

/// An out-of-bounds fault on buffer or shared array `buf`.
fn oob_buf(buf: &BufView, index: u32) -> Fault {
    let space = if buf.shared {
        MemorySpace::Shared
    } else {
        MemorySpace::Global
    };
    oob(space, &buf.name, index, buf.len)
}

/// `threadIdx` of linear index `i` in a block of `dim`.
fn coords(i: u64, dim: [u32; 3]) -> [u32; 3] {
    let [dx, dy, _] = dim.map(u64::from);
    [
        (i % dx) as u32,
        ((i / dx) % dy) as u32,
        (i / (dx * dy).max(1)) as u32,
    ]
}

/// Where a place lives.
enum Loc<'v> {
    Local(&'v Value),
    /// Byte offset `off` in `buf`.
    Global(&'v BufView, usize),
}

impl Launch<'_> {
    /// The buffer `b` of the thread's buffer table `bufs` ([`Thread::bufs`]).
    #[inline(always)]
    fn view<'v>(&self, bufs: &'v [BufView], b: u32) -> &'v BufView {
        &bufs[b as usize]
    }

    /// Runs a SIMT kernel: blocks in parallel, the threads of each as coroutines.
    fn run_simt(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: usize,
    ) -> Result<(), InterpError> {
        let prog = self.prog;
        // (bytes to allocate, length in elements) of each shared array.
        let mut sizes = Vec::with_capacity(prog.shared.len());
        for s in &prog.shared {
            let l = &prog.layouts[s.elem as usize];
            let (bytes, len) = match s.len {
                Some(n) => (n as usize * l.size(), n as usize),
                None => (shared_bytes, shared_bytes / l.size().max(1)),
            };
            if len > u32::MAX as usize {
                return Err(InterpError::launch(
                    &prog.name,
                    InterpErrorKind::BadArgument {
                        param: s.name.clone(),
                        expected: "a shared array of at most 2^32 - 1 elements".into(),
                    },
                ));
            }
            sizes.push((bytes, len));
        }
        let nslots = prog.kernel.nslots;
        let lens: Vec<usize> = sizes.iter().map(|&(_, len)| len).collect();
        let nthreads = block.iter().map(|&d| d as usize).product::<usize>();
        let tpb = nthreads as u64;
        let checked_shared = self.checks.shared();
        let need_check = checked_shared || self.gcheck.is_some();
        let body_of_block = |b: [u32; 3]| -> Result<(), BlockFault<(Fault, u32)>> {
            // Zero-filled, 8-byte aligned (the largest scalar alignment).
            let mut mem: Vec<Vec<u64>> = sizes
                .iter()
                .map(|(bytes, _)| vec![0u64; bytes.div_ceil(8)])
                .collect();
            let mut views: Vec<BufView> = self.bufs.clone();
            views.extend(
                prog.shared
                    .iter()
                    .zip(sizes.iter())
                    .zip(mem.iter_mut())
                    .enumerate()
                    .map(|(k, ((s, (_, len)), m))| BufView {
                        ptr: m.as_mut_ptr().cast(),
                        len: *len,
                        elem_size: prog.layouts[s.elem as usize].size(),
                        elem: s.elem,
                        mutable: true,
                        name: s.name.as_str().into(),
                        shared: true,
                        shadow: if checked_shared {
                            Shadow::Shared(k as u32)
                        } else {
                            Shadow::None
                        },
                    }),
            );
            let bcheck = need_check.then(|| BlockCheck::new(nthreads, &lens, &self.checks));
            let block_linear =
                b[0] as u64 + grid[0] as u64 * (b[1] as u64 + grid[1] as u64 * b[2] as u64);
            let body = |ctx: &ThreadCtx, h: &mut SyncHandle<'_>| -> Result<(), (Fault, u32)> {
                let linear = h.linear_id();
                let mut th = Thread {
                    stack: vec![Value::Unit; nslots],
                    base: 0,
                    depth: 0,
                    ctx: *ctx,
                    bufs: &views,
                    sync: Some(h),
                    me: Me {
                        linear,
                        global: block_linear * tpb + linear as u64,
                        epoch: 0,
                        wep: 0,
                    },
                    bcheck: bcheck.as_ref(),
                    fault_loc: NO_LOC,
                };
                self.run_thread(&mut th).map_err(|f| (f, th.fault_loc))
            };
            let r = simt::run_block(b, block, grid, &body);
            drop(views);
            drop(mem);
            r
        };
        simt::run_grid(grid, body_of_block).map_err(|(b, f)| self.block_fault(b, f))
    }

    /// The source location numbered `loc`.
    fn loc(&self, loc: u32) -> Option<SourceLoc> {
        self.prog.locs.get(loc as usize).cloned()
    }

    /// The location of sync site `s`.
    fn site_loc(&self, s: Site) -> Option<SourceLoc> {
        let l = *self.prog.site_locs.get(s.0 as usize)?;
        self.loc(l)
    }

    /// The Interpreter's error for the fault of block `block`.
    fn block_fault(&self, block: [u32; 3], f: BlockFault<(Fault, u32)>) -> InterpError {
        let name = &self.prog.name;
        let site = |s: Site| -> String {
            self.prog
                .sites
                .get(s.0 as usize)
                .cloned()
                .unwrap_or_else(|| s.to_string())
        };
        match f {
            BlockFault::Thread {
                thread,
                error: (error, loc),
            } => InterpError::thread(name, block, thread, self.loc(loc), *error),
            BlockFault::Sync(e) => match e {
                SyncError::BarrierDivergence { groups, .. } => {
                    let first = groups
                        .first()
                        .and_then(|g| g.1.first())
                        .copied()
                        .unwrap_or_default();
                    let loc = groups.first().and_then(|g| match g.0 {
                        simt::Whereabouts::Barrier(s) => self.site_loc(s),
                        simt::Whereabouts::Finished => None,
                    });
                    let structured = groups
                        .iter()
                        .map(|(w, threads)| match *w {
                            simt::Whereabouts::Barrier(s) => DivergenceGroup {
                                at: self.site_loc(s),
                                site: site(s),
                                threads: threads.clone(),
                            },
                            simt::Whereabouts::Finished => DivergenceGroup {
                                at: None,
                                site: "finished".into(),
                                threads: threads.clone(),
                            },
                        })
                        .collect();
                    InterpError::thread(
                        name,
                        block,
                        first,
                        loc,
                        InterpErrorKind::BarrierDivergence {
                            detail: simt::describe_groups(&groups, site),
                            groups: structured,
                        },
                    )
                }
                SyncError::InactiveLane {
                    thread,
                    lane,
                    site: s,
                    op,
                    src_lane,
                    missing,
                    ..
                } => InterpError::thread(
                    name,
                    block,
                    thread,
                    self.site_loc(s),
                    InterpErrorKind::InactiveLane {
                        op: op.to_string(),
                        site: site(s),
                        lane,
                        src_lane,
                        absent: missing == simt::MissingLane::Absent,
                    },
                ),
                SyncError::MixedWarpOps { site: s, .. } => InterpError::thread(
                    name,
                    block,
                    [0; 3],
                    self.site_loc(s),
                    InterpErrorKind::InvalidKernel {
                        message: e.to_string(),
                    },
                ),
                SyncError::Stack { .. } => InterpError::thread(
                    name,
                    block,
                    [0; 3],
                    None,
                    InterpErrorKind::OutOfResources {
                        what: e.to_string(),
                    },
                ),
            },
        }
    }

    /// Runs every thread of the block `th.ctx.block`, x fastest; stops at the first fault.
    fn run_block(&self, th: &mut Thread) -> Result<(), InterpError> {
        let [bx, by, bz] = th.ctx.block_dim;
        let [gx, gy, _] = th.ctx.grid_dim.map(u64::from);
        let [cx, cy, cz] = th.ctx.block.map(u64::from);
        let block_linear = cx + gx * (cy + gy * cz);
        let tpb = bx as u64 * by as u64 * bz as u64;
        for tz in 0..bz {
            for ty in 0..by {
                for tx in 0..bx {
                    th.ctx.thread = [tx, ty, tz];
                    th.me.linear = tx + bx * (ty + by * tz);
                    th.me.global = block_linear * tpb + th.me.linear as u64;
                    if let Err(kind) = self.run_thread(th) {
                        return Err(InterpError::thread(
                            &self.prog.name,
                            th.ctx.block,
                            th.ctx.thread,
                            self.loc(th.fault_loc),
                            *kind,
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn run_thread(&self, th: &mut Thread) -> Result<(), Fault> {
        th.stack.truncate(self.prog.kernel.nslots);
        th.base = 0;
        th.depth = 0;
        th.fault_loc = NO_LOC;
        th.me.epoch = 0;
        th.me.wep = 0;
        for (slot, v) in &self.params {
            th.stack[*slot] = v.clone();
        }
        self.block(&self.prog.kernel.body, th)?;
        Ok(())
    }

    fn block(&self, b: &[SStmt], th: &mut Thread) -> Result<Flow, Fault> {
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
    fn loop_body(&self, body: &[SStmt], th: &mut Thread) -> Result<Option<Flow>, Fault> {
        Ok(match self.block(body, th)? {
            Flow::Next | Flow::Continue => None,
            Flow::Break => Some(Flow::Next),
            r @ Flow::Return(_) => Some(r),
        })
    }

    fn stmt(&self, s: &CStmt, th: &mut Thread) -> Result<Flow, Fault> {
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
    fn matches(&self, p: &CPattern, v: &Value, th: &mut Thread) -> Result<bool, Fault> {
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
    fn len_of(&self, bufs: &[BufView], v: &Value) -> Result<u32, Fault> {
        match v {
            Value::Buffer(b) => Ok(self.view(bufs, *b).len as u32),
            v => match v.as_array() {
                Some(a) => Ok(a.len() as u32),
                None => Err(invalid(format!("length of a {}", v.type_name()))),
            },
        }
    }

    fn special(s: Special, c: &ThreadCtx) -> u32 {
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
                linear % super::WARP_SIZE
            }
        }
    }

    /// Evaluates `e`. Variables and constants, the most frequent operands, are read here,
    /// inlined into the caller, without a call.
    #[inline(always)]
    fn eval(&self, e: &CExpr, th: &mut Thread) -> Result<Value, Fault> {
        match e {
            CExpr::Var(s) => Ok(th.stack[th.base + *s as usize].clone()),
            CExpr::Const(v) => Ok(v.clone()),
            _ => self.eval_node(e, th),
        }
    }

    /// Evaluates a `u32` arithmetic expression (postfix, at most [`ISTACK`] deep: checked when
    /// it was compiled).
    #[inline]
    fn ieval(&self, ops: &[IOp], th: &Thread) -> Result<u32, Fault> {
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
    fn affine(a: u32, k: u32, b: u32, th: &Thread) -> Result<u32, Fault> {
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
    fn index(&self, e: &CExpr, th: &mut Thread) -> Result<u32, Fault> {
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
    fn eval_node(&self, e: &CExpr, th: &mut Thread) -> Result<Value, Fault> {
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
                                Layout::Scalar(s) => super::layout::load_scalar(*s, p),
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
    fn eval_cold(&self, e: &CExpr, th: &mut Thread) -> Result<Value, Fault> {
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
                }
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
    fn call(&self, func: u32, args: &[CExpr], th: &mut Thread) -> Result<Value, Fault> {
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
    fn eval_indices(
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

    /// Checks and records an access to element `i` (in bounds) of `buf` at statement `loc`,
    /// when `buf` is checked.
    #[inline(always)]
    fn note(
        &self,
        buf: &BufView,
        i: u32,
        kind: AccessKind,
        loc: u32,
        th: &Thread,
    ) -> Result<(), Fault> {
        if buf.shadow == Shadow::None {
            return Ok(());
        }
        self.note_checked(buf, i, kind, loc, th)
    }

    #[inline(never)]
    fn note_checked(
        &self,
        buf: &BufView,
        i: u32,
        kind: AccessKind,
        loc: u32,
        th: &Thread,
    ) -> Result<(), Fault> {
        let found = match buf.shadow {
            Shadow::None => return Ok(()),
            Shadow::Shared(k) => match th.bcheck {
                Some(c) => c.access(k as usize, i as usize, &th.me, kind, loc),
                None => Ok(()),
            },
            Shadow::Global(k) => match &self.gcheck {
                Some(g) => {
                    let wep_of = |u: u32| th.bcheck.map_or(0, |c| c.wep_of(u));
                    g.access(k as usize, i as usize, &th.me, kind, loc, &wep_of)
                }
                None => Ok(()),
            },
        };
        let Err(finding) = found else { return Ok(()) };
        let (space, len) = (
            if buf.shared {
                MemorySpace::Shared
            } else {
                MemorySpace::Global
            },
            buf.len as u64,
        );
        Err(Box::new(match finding {
            Finding::Uninit => InterpErrorKind::UninitializedShared {
                array: buf.name.to_string(),
                index: i as u64,
                len,
            },
            Finding::Race {
                thread,
                kind: first_kind,
                loc: first_loc,
            } => {
                let (first_block, first_thread) = match buf.shadow {
                    Shadow::Global(_) => {
                        let tpb = self.gcheck.as_ref().map_or(1, |g| g.threads_per_block());
                        (
                            coords(thread / tpb, th.ctx.grid_dim),
                            coords(thread % tpb, th.ctx.block_dim),
                        )
                    }
                    _ => (th.ctx.block, coords(thread, th.ctx.block_dim)),
                };
                InterpErrorKind::DataRace {
                    space,
                    array: buf.name.to_string(),
                    index: i as u64,
                    len,
                    first: RaceAccess {
                        block: first_block,
                        thread: first_thread,
                        kind: first_kind,
                        loc: self.loc(first_loc),
                    },
                    second: RaceAccess {
                        block: th.ctx.block,
                        thread: th.ctx.thread,
                        kind,
                        loc: self.loc(loc),
                    },
                }
            }
        }))
    }

    /// Walks `p` from its root value, bounds-checking each index.
    fn locate<'v>(
        &'v self,
        p: &CPath,
        idx: &[u32],
        bufs: &'v [BufView],
        root: &'v Value,
    ) -> Result<Loc<'v>, Fault> {
        let mut cur = Loc::Local(root);
        let mut k = 0;
        for s in p.steps.iter() {
            cur = match (s, cur) {
                (Step::Index(_), Loc::Local(Value::Buffer(b))) => {
                    let buf = self.view(bufs, *b);
                    if Some(buf.elem) != p.elem {
                        return Err(invalid("buffer element type mismatch"));
                    }
                    let i = idx[k];
                    k += 1;
                    if (i as usize) < buf.len {
                        Loc::Global(buf, i as usize * buf.elem_size)
                    } else {
                        return Err(oob_buf(buf, i));
                    }
                }
                (Step::Index(_), Loc::Local(v)) => {
                    let a = v
                        .as_array()
                        .ok_or_else(|| invalid(format!("indexing a {}", v.type_name())))?;
                    let i = idx[k];
                    k += 1;
                    match a.get(i as usize) {
                        Some(v) => Loc::Local(v),
                        None => return Err(oob(MemorySpace::Local, &p.name, i, a.len())),
                    }
                }
                (Step::Field { index, .. }, Loc::Local(v)) => {
                    match v.as_record().and_then(|fs| fs.get(*index as usize)) {
                        Some(x) => Loc::Local(x),
                        None => return Err(invalid(format!("field of a {}", v.type_name()))),
                    }
                }
                (Step::Field { offset, .. }, Loc::Global(buf, off)) => {
                    Loc::Global(buf, off + offset)
                }
                (Step::Index(_), Loc::Global(..)) => {
                    return Err(invalid("indexing an element of a buffer"))
                }
            };
        }
        Ok(cur)
    }

    fn read_path(&self, p: &CPath, th: &mut Thread) -> Result<Value, Fault> {
        let mut idx = [0u32; MAX_INDICES];
        self.eval_indices(p, th, &mut idx)?;
        match self.locate(p, &idx, th.bufs, &th.stack[th.base + p.root as usize])? {
            Loc::Local(v) => Ok(v.clone()),
            Loc::Global(buf, off) => {
                let leaf = p
                    .leaf
                    .as_ref()
                    .ok_or_else(|| invalid("global place without layout"))?;
                let i = (off / buf.elem_size.max(1)) as u32;
                self.note(buf, i, AccessKind::Read, p.loc, th)?;
                // SAFETY: `off` is an element start plus static field offsets of the buffer's
                // own element layout (checked in `locate`), so it is in bounds and aligned.
                Ok(unsafe { leaf.load(buf.ptr.add(off)) })
            }
        }
    }

    fn write_path(&self, p: &CPath, th: &mut Thread, v: Value) -> Result<(), Fault> {
        let mut idx = [0u32; MAX_INDICES];
        self.eval_indices(p, th, &mut idx)?;
        if let (Value::Buffer(b), Some(Step::Index(_))) =
            (&th.stack[th.base + p.root as usize], p.steps.first())
        {
            let buf = self.view(th.bufs, *b);
            return self.store_global(p, buf, idx[0], &p.steps[1..], &v, th);
        }
        let mut cur: &mut Value = &mut th.stack[th.base + p.root as usize];
        let mut k = 0;
        for s in p.steps.iter() {
            let ty = cur.type_name();
            match s {
                Step::Index(_) => {
                    if let Value::Buffer(_) = *cur {
                        return Err(invalid("indexing an element of a buffer"));
                    }
                    let i = idx[k];
                    k += 1;
                    let a = cur
                        .as_array_mut()
                        .ok_or_else(|| invalid(format!("assignment into an element of a {ty}")))?;
                    let len = a.len();
                    cur = a
                        .get_mut(i as usize)
                        .ok_or_else(|| oob(MemorySpace::Local, &p.name, i, len))?;
                }
                Step::Field { index, .. } => {
                    cur = cur
                        .as_record_mut()
                        .and_then(|fs| fs.get_mut(*index as usize))
                        .ok_or_else(|| invalid(format!("assignment into a field of a {ty}")))?;
                }
            }
        }
        *cur = v;
        Ok(())
    }

    /// Stores `v` into element `i` of buffer `buf`, then through the field steps `rest`.
    fn store_global(
        &self,
        p: &CPath,
        buf: &BufView,
        i: u32,
        rest: &[Step],
        v: &Value,
        th: &Thread,
    ) -> Result<(), Fault> {
        if Some(buf.elem) != p.elem {
            return Err(invalid("buffer element type mismatch"));
        }
        if !buf.mutable {
            return Err(invalid(format!("write to read-only buffer `{}`", buf.name)));
        }
        if i as usize >= buf.len {
            return Err(oob_buf(buf, i));
        }
        self.note(buf, i, AccessKind::Write, p.loc, th)?;
        let mut off = i as usize * buf.elem_size;
        for s in rest {
            match s {
                Step::Field { offset, .. } => off += offset,
                Step::Index(_) => return Err(invalid("indexing an element of a buffer")),
            }
        }
        let leaf = p
            .leaf
            .as_ref()
            .ok_or_else(|| invalid("global place without layout"))?;
        // SAFETY: `off` is an element start plus static field offsets of the buffer's own
        // element layout (checked above), so it is in bounds and aligned.
        unsafe { leaf.store(buf.ptr.add(off), v) }
    }

    fn atomic(
        &self,
        op: AtomicOp,
        p: &CPath,
        operands: &[CExpr],
        th: &mut Thread,
    ) -> Result<Value, Fault> {
        let mut idx = [0u32; MAX_INDICES];
        self.eval_indices(p, th, &mut idx)?;
        let a = self.eval(&operands[0], th)?;
        let b = match operands.get(1) {
            Some(e) => Some(self.eval(e, th)?),
            None => None,
        };
        let (buf, off) =
            match self.locate(p, &idx, th.bufs, &th.stack[th.base + p.root as usize])? {
                Loc::Global(buf, off) => (buf, off),
                Loc::Local(_) => return Err(unsupported("atomics on a local array")),
            };
        if !buf.mutable {
            return Err(invalid(format!(
                "atomic on read-only buffer `{}`",
                buf.name
            )));
        }
        let s = match p.leaf {
            Some(Layout::Scalar(s)) => s,
            _ => return Err(invalid("atomic on a non-scalar element")),
        };
        let i = (off / buf.elem_size.max(1)) as u32;
        self.note(buf, i, AccessKind::Atomic, p.loc, th)?;
        // SAFETY: in bounds and aligned (see `read_path`).
        unsafe { atomic_rmw(op, s, buf.ptr.add(off), a, b) }
    }
}

/// An atomic read-modify-write at `p`; returns the previous value.
///
/// # Safety
/// `p` is aligned to and valid for a `s`.
unsafe fn atomic_rmw(
    op: AtomicOp,
    s: ScalarType,
    p: *mut u8,
    a: Value,
    b: Option<Value>,
) -> Result<Value, Fault> {
    let mismatch = || {
        invalid(format!(
            "`{}` operands do not match a buffer of {s}",
            op.name()
        ))
    };
    macro_rules! int {
        ($atomic:ty, $variant:ident) => {{
            let x = match a {
                Value::$variant(x) => x,
                _ => return Err(mismatch()),
            };
            let at = <$atomic>::from_ptr(p.cast());
            Value::$variant(match op {
                AtomicOp::Add => at.fetch_add(x, SeqCst),
                AtomicOp::Sub => at.fetch_sub(x, SeqCst),
                AtomicOp::Min => at.fetch_min(x, SeqCst),
                AtomicOp::Max => at.fetch_max(x, SeqCst),
                AtomicOp::Exchange => at.swap(x, SeqCst),
                AtomicOp::And => at.fetch_and(x, SeqCst),
                AtomicOp::Or => at.fetch_or(x, SeqCst),
                AtomicOp::Xor => at.fetch_xor(x, SeqCst),
                AtomicOp::CompareExchange => {
                    let n = match b {
                        Some(Value::$variant(n)) => n,
                        _ => return Err(mismatch()),
                    };
                    match at.compare_exchange(x, n, SeqCst, SeqCst) {
                        Ok(v) | Err(v) => v,
                    }
                }
            })
        }};
    }
    macro_rules! float {
        ($atomic:ty, $variant:ident, $f:ty) => {{
            let x: $f = match a {
                Value::$variant(x) => x,
                _ => return Err(mismatch()),
            };
            let at = <$atomic>::from_ptr(p.cast());
            let update = |g: fn($f, $f) -> $f| match at.fetch_update(SeqCst, SeqCst, |bits| {
                Some(g(<$f>::from_bits(bits), x).to_bits())
            }) {
                Ok(v) | Err(v) => v,
            };
            let prev = match op {
                AtomicOp::Add => update(|old, x| old + x),
                AtomicOp::Sub => update(|old, x| old - x),
                AtomicOp::Min => update(<$f>::min),
                AtomicOp::Max => update(<$f>::max),
                AtomicOp::Exchange => at.swap(x.to_bits(), SeqCst),
                // Compares bit patterns, as CUDA's atomicCAS does.
                AtomicOp::CompareExchange => {
                    let n: $f = match b {
                        Some(Value::$variant(n)) => n,
                        _ => return Err(mismatch()),
                    };
                    match at.compare_exchange(x.to_bits(), n.to_bits(), SeqCst, SeqCst) {
                        Ok(v) | Err(v) => v,
                    }
                }
                AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => return Err(mismatch()),
            };
            Value::$variant(<$f>::from_bits(prev))
        }};
    }
    Ok(match s {
        ScalarType::I32 => int!(AtomicI32, I32),
        ScalarType::U32 => int!(AtomicU32, U32),
        ScalarType::I64 => int!(AtomicI64, I64),
        ScalarType::U64 => int!(AtomicU64, U64),
        ScalarType::F32 => float!(AtomicU32, F32, f32),
        ScalarType::F64 => float!(AtomicU64, F64, f64),
        _ => return Err(mismatch()),
    })
}
