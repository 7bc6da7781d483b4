//! The SIMT scheduler of the CPU backends (Native and Interpreter): runs the threads of one block
//! of a kernel that needs block barriers, warp barriers or warp operations, as stackful coroutines
//! ([`corosensei`]) on the calling OS thread.
//!
//! # Execution model
//!
//! - Thread `t` of a block has the linear index `tx + dx * (ty + dy * tz)`; its lane is
//!   `linear % 32` and its warp `linear / 32` ([`WARP_SIZE`]).
//! - The runner ([`run_block`]) resumes every runnable thread, in linear order, until it suspends
//!   at a sync point (a call on its [`SyncHandle`]) or finishes. Then, warp by warp:
//!   - the lanes suspended at the same warp-operation [`Site`] form that operation's active mask
//!     and get their results (shuffle: the source lane's value; an inactive or absent source
//!     lane is a [`SyncError::InactiveLane`], except that `shuffle_up`/`shuffle_down` whose
//!     source falls outside `0..32` return the lane's own value, as PTX `shfl` with clamping);
//!   - the lanes suspended at warp barriers ([`SyncHandle::warp_barrier`]) are released;
//!   - a matrix multiply-accumulate ([`SyncHandle::mma_m16n8k16`]) needs every lane of the warp
//!     (32 of them) at its site: it is resolved when all are there ([`crate::mma`] computes it);
//!     while other lanes of the warp are released by the steps above it waits for them, and
//!     when none is, the block fails with [`SyncError::PartialWarp`].
//! - When no thread can run any more, every live thread waits at a block barrier: if all wait at
//!   the same [`Site`] and no thread of the block has finished, all are released; otherwise the
//!   block fails with [`SyncError::BarrierDivergence`], which names the waiting threads, where
//!   they wait, and the threads that finished.
//! - The first thread body to return an error stops the block: the runner resumes every other
//!   started thread once more with its pending sync call answering [`Aborted`] (and every later
//!   sync call of that thread answers [`Aborted`] at once), expects each body to return, and
//!   reports the first error ([`BlockFault::Thread`]). Threads not started yet never start.
//!
//! Coroutine stacks ([`STACK_BYTES`] each, with a guard page) are pooled per OS thread (so per
//! rayon worker) and reused by later blocks; a stack overflow hits the guard page and kills the
//! process, so bodies that recurse deeply should check [`SyncHandle::stack_remaining`].
//!
//! [`run_grid`] runs the blocks of a grid in parallel on the rayon pool and returns the fault of
//! the lowest faulting block.

pub use crate::kernel_abi::{
    describe_groups, MissingLane, ShuffleKind, Site, SyncError, VoteKind, WarpOpKind, Whereabouts,
};
use crate::mma::MmaLane;
use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use rayon::prelude::*;
use std::cell::RefCell;
use std::fmt;

/// The per-thread view of a launch: the index intrinsics of the kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCtx {
    /// `threadIdx` in x, y, z.
    pub thread: [u32; 3],
    /// `blockIdx` in x, y, z.
    pub block: [u32; 3],
    /// `blockDim` in x, y, z.
    pub block_dim: [u32; 3],
    /// `gridDim` in x, y, z.
    pub grid_dim: [u32; 3],
}

impl ThreadCtx {
    /// `block * block_dim + thread` on `axis` (0, 1, 2), wrapping.
    #[inline(always)]
    pub fn global_id(&self, axis: usize) -> u32 {
        self.block[axis]
            .wrapping_mul(self.block_dim[axis])
            .wrapping_add(self.thread[axis])
    }
    /// `grid_dim * block_dim` on `axis`, wrapping.
    #[inline(always)]
    pub fn global_size(&self, axis: usize) -> u32 {
        self.grid_dim[axis].wrapping_mul(self.block_dim[axis])
    }
    /// Lane within the warp of 32 (linear thread index in the block modulo 32).
    #[inline(always)]
    pub fn lane_id(&self) -> u32 {
        let linear = self.thread[0]
            + self.block_dim[0] * (self.thread[1] + self.block_dim[1] * self.thread[2]);
        linear % 32
    }
}

/// Threads per warp on the CPU backends.
pub const WARP_SIZE: u32 = 32;

/// Usable bytes of each coroutine stack (a guard page comes on top): 256 KiB in optimized
/// builds, 1 MiB in builds with debug assertions, whose unoptimized frames are about ten times
/// larger. Only the pages a thread touches take memory.
pub const STACK_BYTES: usize = if cfg!(debug_assertions) {
    1024 * 1024
} else {
    256 * 1024
};

/// One release of the lanes of a warp waiting at warp barriers
/// ([`SyncHandle::warp_barrier_release`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WarpRelease {
    /// 1 for the warp's first release, 2 for its second, …
    pub number: u32,
    /// The lanes it released (bit `l` for lane `l`), the caller's included.
    pub lanes: u32,
}

/// The answer of a sync call while the block is being torn down (another thread failed, or the
/// scheduler found a sync error). The body should return promptly (its result is discarded);
/// every further sync call answers `Aborted` at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the block was aborted")]
pub struct Aborted;

/// How a block failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockFault<E> {
    /// A thread body returned `error` (the first to do so, in scheduling order: the earliest
    /// round, then the lowest linear index).
    Thread {
        /// `threadIdx` of that thread.
        thread: [u32; 3],
        /// What it returned.
        error: E,
    },
    /// The scheduler found a sync error.
    Sync(SyncError),
}

impl<E: fmt::Display> fmt::Display for BlockFault<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockFault::Thread { thread, error } => write!(
                f,
                "thread ({}, {}, {}): {error}",
                thread[0], thread[1], thread[2]
            ),
            BlockFault::Sync(e) => write!(f, "{e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for BlockFault<E> {}

/// What a suspended thread waits for.
#[derive(Clone, Copy, Debug)]
enum Suspend {
    Barrier(Site),
    WarpBarrier,
    Op {
        site: Site,
        kind: WarpOpKind,
        bits: u64,
        operand: u32,
    },
    /// A matrix multiply-accumulate (`bf16` inputs, else `f16`) with this lane's fragments.
    Mma {
        site: Site,
        bf16: bool,
        frag: MmaLane,
    },
}

/// What a resumed thread is told.
#[derive(Clone, Copy, Debug)]
enum Resume {
    /// Start, or go on past a barrier.
    Go,
    /// The result of a warp operation.
    Value(u64),
    /// The lane's `D` fragment of a matrix multiply-accumulate.
    Mma([f32; 4]),
    /// Tear down.
    Abort,
}

/// A thread's handle on the scheduler: every sync point of the kernel is a call on it. Each call
/// suspends the thread until the scheduler resolves it.
pub struct SyncHandle<'y> {
    yielder: &'y Yielder<Resume, Suspend>,
    aborted: bool,
    lane: u32,
    linear: u32,
    /// Lowest usable address of the coroutine stack.
    stack_limit: usize,
}

impl SyncHandle<'_> {
    #[inline]
    fn suspend(&mut self, s: Suspend) -> Result<Resume, Aborted> {
        if self.aborted {
            return Err(Aborted);
        }
        match self.yielder.suspend(s) {
            Resume::Abort => {
                self.aborted = true;
                Err(Aborted)
            }
            r => Ok(r),
        }
    }

    /// A block barrier (`sync_threads`): returns once every thread of the block waits at a
    /// barrier of the same `site` (else the block fails with a barrier divergence).
    ///
    /// # Errors
    /// [`Aborted`] when the block is torn down.
    #[inline]
    pub fn barrier(&mut self, site: Site) -> Result<(), Aborted> {
        self.suspend(Suspend::Barrier(site)).map(|_| ())
    }

    /// A warp barrier (`sync_warp`): returns once no lane of the warp can run further (each has
    /// finished, or waits at a warp barrier, a block barrier or a warp operation).
    ///
    /// # Errors
    /// [`Aborted`] when the block is torn down.
    #[inline]
    pub fn warp_barrier(&mut self, site: Site) -> Result<(), Aborted> {
        self.warp_barrier_release(site).map(|_| ())
    }

    /// [`SyncHandle::warp_barrier`], returning which release of this warp's warp barriers let
    /// the thread go and which lanes it released (the race checks use it to tell which lanes a
    /// warp barrier ordered).
    ///
    /// # Errors
    /// [`Aborted`] when the block is torn down.
    #[inline]
    pub fn warp_barrier_release(&mut self, site: Site) -> Result<WarpRelease, Aborted> {
        // Lanes at different warp-barrier sites synchronise with each other (as `__syncwarp`
        // does on Volta and later): the site is not needed to resolve it.
        let _ = site;
        match self.suspend(Suspend::WarpBarrier)? {
            Resume::Value(v) => Ok(WarpRelease {
                number: (v >> 32) as u32,
                lanes: v as u32,
            }),
            _ => Ok(WarpRelease {
                number: 0,
                lanes: 1 << self.lane,
            }),
        }
    }

    /// A warp shuffle: returns `bits` of the source lane (see the module docs for the source of
    /// each `kind`). Values narrower than 64 bits travel in the low bits.
    ///
    /// # Errors
    /// [`Aborted`] when the block is torn down, including when this shuffle's source is inactive
    /// or absent (the block then fails with [`SyncError::InactiveLane`]).
    pub fn shuffle(
        &mut self,
        site: Site,
        kind: ShuffleKind,
        bits: u64,
        operand: u32,
    ) -> Result<u64, Aborted> {
        self.op(site, WarpOpKind::Shuffle(kind), bits, operand)
    }

    /// A vote over the active lanes of the warp (those at this `site`).
    ///
    /// # Errors
    /// [`Aborted`] when the block is torn down.
    pub fn vote(&mut self, site: Site, kind: VoteKind, pred: bool) -> Result<bool, Aborted> {
        self.op(site, WarpOpKind::Vote(kind), pred as u64, 0)
            .map(|v| v != 0)
    }

    /// A ballot: bit `l` is set for each active lane `l` (those at this `site`) whose `pred`
    /// holds.
    ///
    /// # Errors
    /// [`Aborted`] when the block is torn down.
    pub fn ballot(&mut self, site: Site, pred: bool) -> Result<u32, Aborted> {
        self.op(site, WarpOpKind::Ballot, pred as u64, 0)
            .map(|v| v as u32)
    }

    /// The warp-level matrix multiply-accumulate `D = A × B + C` of one 16×8×16 tile, with this
    /// lane's fragments (`bf16` inputs, else `f16`; [`crate::mma`] has the layout and the
    /// arithmetic). Returns once every lane of the warp has called it at `site`.
    ///
    /// # Errors
    /// [`Aborted`] when the block is torn down, including when some lanes of the warp cannot
    /// reach this operation (the block then fails with [`SyncError::PartialWarp`]).
    pub fn mma_m16n8k16(
        &mut self,
        site: Site,
        bf16: bool,
        frag: MmaLane,
    ) -> Result<[f32; 4], Aborted> {
        match self.suspend(Suspend::Mma { site, bf16, frag })? {
            Resume::Mma(d) => Ok(d),
            _ => Err(Aborted),
        }
    }

    #[inline]
    fn op(
        &mut self,
        site: Site,
        kind: WarpOpKind,
        bits: u64,
        operand: u32,
    ) -> Result<u64, Aborted> {
        match self.suspend(Suspend::Op {
            site,
            kind,
            bits,
            operand,
        })? {
            Resume::Value(v) => Ok(v),
            // The scheduler always answers an operation with a value.
            _ => Err(Aborted),
        }
    }

    /// This thread's lane (linear index in the block modulo 32).
    pub fn lane_id(&self) -> u32 {
        self.lane
    }

    /// This thread's linear index in the block (`tx + dx * (ty + dy * tz)`).
    pub fn linear_id(&self) -> u32 {
        self.linear
    }

    /// Whether the block is being torn down (a sync call answered [`Aborted`]).
    pub fn is_aborted(&self) -> bool {
        self.aborted
    }

    /// Bytes of coroutine stack left below the caller's frame (approximately). Deeply recursive
    /// bodies should stop with an error of their own below a margin rather than overflow.
    #[inline(never)]
    pub fn stack_remaining(&self) -> usize {
        let marker = 0u8;
        let here = std::ptr::addr_of!(marker) as usize;
        here.saturating_sub(self.stack_limit)
    }
}

/// A coroutine stack whose usable top is moved down by a per-stack multiple of 64 bytes (its
/// colour), so that the hot top frames of the threads of a block fall in different cache sets
/// (the stacks themselves are page-aligned mappings at a fixed stride, whose tops would all map
/// to the same sets and evict each other at every switch).
struct ColoredStack {
    inner: DefaultStack,
    /// The inner stack's base, lowered by the colour.
    base: corosensei::stack::StackPointer,
}

/// Distinct colours (cache lines of offset).
const COLORS: usize = 64;

// SAFETY: the base stays within the inner stack's usable memory (the offset, at most
// `COLORS * 64` bytes, is far below `STACK_BYTES`) and keeps its 16-byte alignment; the limit
// (and so the guard page) is the inner stack's.
unsafe impl Stack for ColoredStack {
    #[inline]
    fn base(&self) -> corosensei::stack::StackPointer {
        self.base
    }
    #[inline]
    fn limit(&self) -> corosensei::stack::StackPointer {
        self.inner.limit()
    }
}

thread_local! {
    /// Stacks of finished coroutines, reused by later blocks on this OS thread.
    static POOL: RefCell<Vec<ColoredStack>> = const { RefCell::new(Vec::new()) };
    /// Stacks allocated on this OS thread so far (picks the next colour).
    static ALLOCATED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn take_stacks(n: usize) -> Result<Vec<ColoredStack>, SyncError> {
    let mut stacks = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let keep = p.len().saturating_sub(n);
        p.split_off(keep)
    });
    while stacks.len() < n {
        match DefaultStack::new(STACK_BYTES) {
            Ok(inner) => {
                let k = ALLOCATED.with(|a| {
                    let k = a.get();
                    a.set(k + 1);
                    k
                });
                let top = inner.base().get() - (k % COLORS) * 64;
                match corosensei::stack::StackPointer::new(top) {
                    Some(base) => stacks.push(ColoredStack { inner, base }),
                    None => stacks.push(ColoredStack {
                        base: inner.base(),
                        inner,
                    }),
                }
            }
            Err(e) => {
                give_back(stacks);
                return Err(SyncError::Stack {
                    bytes: STACK_BYTES,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(stacks)
}

fn give_back(stacks: Vec<ColoredStack>) {
    POOL.with(|p| p.borrow_mut().extend(stacks));
}

/// The state of one thread in the scheduler.
#[derive(Clone, Copy, Debug)]
enum St {
    /// Will be resumed with this value in the next round.
    Ready(Resume),
    Waiting(Suspend),
    Done,
}

type Co<E> = Coroutine<Resume, Suspend, Result<(), E>, ColoredStack>;

/// `threadIdx` of linear index `i` in a block of `dim`.
fn coords(i: u32, dim: [u32; 3]) -> [u32; 3] {
    [i % dim[0], (i / dim[0]) % dim[1], i / (dim[0] * dim[1])]
}

/// Runs the threads of block `block` (of `block_dim` threads, in a grid of `grid_dim` blocks) as
/// coroutines, each calling `body` with its [`ThreadCtx`] and a [`SyncHandle`], as the module
/// docs describe. A block with a zero dimension runs nothing.
///
/// `body` runs on coroutine stacks of [`STACK_BYTES`] bytes.
///
/// # Errors
/// The first thread error ([`BlockFault::Thread`]) or sync error ([`BlockFault::Sync`]); threads
/// may have run (and written memory) before it.
///
/// # Panics
/// A panic of `body` propagates (after the other threads' stacks are unwound).
pub fn run_block<E, F>(
    block: [u32; 3],
    block_dim: [u32; 3],
    grid_dim: [u32; 3],
    body: &F,
) -> Result<(), BlockFault<E>>
where
    F: Fn(&ThreadCtx, &mut SyncHandle<'_>) -> Result<(), E>,
{
    let n64 = block_dim.iter().map(|&d| d as u64).product::<u64>();
    if n64 == 0 {
        return Ok(());
    }
    let n = u32::try_from(n64).map_err(|_| {
        BlockFault::Sync(SyncError::Stack {
            bytes: STACK_BYTES,
            message: format!("a block of {n64} threads is too large"),
        })
    })?;
    let stacks = take_stacks(n as usize).map_err(BlockFault::Sync)?;
    let mut cos: Vec<Co<E>> = Vec::with_capacity(n as usize);
    for (i, stack) in (0..n).zip(stacks) {
        let ctx = ThreadCtx {
            thread: coords(i, block_dim),
            block,
            block_dim,
            grid_dim,
        };
        let stack_limit = stack.limit().get();
        let f = move |y: &Yielder<Resume, Suspend>, first: Resume| -> Result<(), E> {
            if matches!(first, Resume::Abort) {
                return Ok(());
            }
            let mut h = SyncHandle {
                yielder: y,
                aborted: false,
                lane: i % WARP_SIZE,
                linear: i,
                stack_limit,
            };
            body(&ctx, &mut h)
        };
        // SAFETY: the closure borrows `body` (and nothing else of a shorter life). Every
        // coroutine lives in `cos`, which is dropped (each coroutine run to completion or
        // force-unwound by its `Drop`) before this function returns or unwinds, and is never
        // leaked, so the borrow outlives every use.
        cos.push(unsafe { Co::with_stack_unchecked(stack, f) });
    }
    let mut sched = Sched {
        block,
        block_dim,
        st: vec![St::Ready(Resume::Go); n as usize],
        cos,
        fault: None,
        releases: vec![0; n.div_ceil(WARP_SIZE) as usize],
        at_barrier: 0,
        barrier_site: None,
        mixed_sites: false,
        done: 0,
        at_warp: 0,
    };
    let r = sched.run();
    // Every coroutine is done here (a normal end, or the teardown): keep their stacks.
    let cos = std::mem::take(&mut sched.cos);
    give_back(
        cos.into_iter()
            .filter(|c| c.done())
            .map(|c| c.into_stack())
            .collect(),
    );
    r
}

struct Sched<E> {
    block: [u32; 3],
    block_dim: [u32; 3],
    st: Vec<St>,
    cos: Vec<Co<E>>,
    fault: Option<BlockFault<E>>,
    /// Per warp: how many times warp-barrier lanes were released.
    releases: Vec<u32>,
    /// Threads waiting at a block barrier (since the last release).
    at_barrier: usize,
    /// The site of the first of them.
    barrier_site: Option<Site>,
    /// Whether some of them wait at another site.
    mixed_sites: bool,
    /// Threads that finished.
    done: usize,
    /// Threads that suspended at a warp barrier or warp operation since the warps were last
    /// resolved (resolving answers every one of them or fails the block).
    at_warp: usize,
}

impl<E> Sched<E> {
    fn run(&mut self) -> Result<(), BlockFault<E>> {
        loop {
            // One round: every ready thread runs to its next sync point or its end.
            for i in 0..self.st.len() {
                if let St::Ready(r) = self.st[i] {
                    self.step(i, r);
                    if self.fault.is_some() {
                        return self.teardown();
                    }
                    self.note(i);
                }
            }
            if self.at_warp > 0 {
                self.at_warp = 0;
                let mut progress = false;
                for w in 0..self.st.len().div_ceil(WARP_SIZE as usize) {
                    match self.resolve_warp(w) {
                        Ok(p) => progress |= p,
                        Err(e) => {
                            self.fault = Some(BlockFault::Sync(e));
                            return self.teardown();
                        }
                    }
                }
                if progress {
                    continue;
                }
            }
            // Nothing can run: every live thread waits at a block barrier. The common case,
            // every thread at one site, needs no scan.
            if self.at_barrier == self.st.len() && !self.mixed_sites {
                self.st.fill(St::Ready(Resume::Go));
                self.clear_barrier();
                continue;
            }
            if self.done == self.st.len() {
                return Ok(());
            }
            let r = self.release_barrier();
            self.clear_barrier();
            if let Err(e) = r {
                if e.is_none() {
                    return Ok(());
                }
                self.fault = e.map(BlockFault::Sync);
                return self.teardown();
            }
        }
    }

    /// Forgets the threads waiting at block barriers (they were released).
    fn clear_barrier(&mut self) {
        self.at_barrier = 0;
        self.barrier_site = None;
        self.mixed_sites = false;
    }

    /// Counts thread `i`, just stepped, where it stopped.
    #[inline]
    fn note(&mut self, i: usize) {
        match self.st[i] {
            St::Waiting(Suspend::Barrier(site)) => {
                self.at_barrier += 1;
                match self.barrier_site {
                    None => self.barrier_site = Some(site),
                    Some(s0) => self.mixed_sites |= s0 != site,
                }
            }
            St::Waiting(_) => self.at_warp += 1,
            St::Done => self.done += 1,
            St::Ready(_) => {}
        }
    }

    /// Resumes thread `i` with `r` and records where it stopped.
    #[inline(always)]
    fn step(&mut self, i: usize, r: Resume) {
        match self.cos[i].resume(r) {
            CoroutineResult::Yield(s) => self.st[i] = St::Waiting(s),
            CoroutineResult::Return(res) => {
                self.st[i] = St::Done;
                if let Err(error) = res {
                    if self.fault.is_none() {
                        self.fault = Some(BlockFault::Thread {
                            thread: coords(i as u32, self.block_dim),
                            error,
                        });
                    }
                }
            }
        }
    }

    /// Resumes every live thread with `Abort` until it ends, then returns the recorded fault.
    fn teardown(&mut self) -> Result<(), BlockFault<E>> {
        for i in 0..self.st.len() {
            while !matches!(self.st[i], St::Done) {
                self.step(i, Resume::Abort);
            }
        }
        match self.fault.take() {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    /// Resolves the warp operations and warp barriers of warp `w` (all its threads are
    /// suspended or done). Returns whether a lane was released.
    fn resolve_warp(&mut self, w: usize) -> Result<bool, SyncError> {
        let lo = w * WARP_SIZE as usize;
        let hi = (lo + WARP_SIZE as usize).min(self.st.len());
        let mut progress = false;
        // Sites of warp operations, each resolved once.
        let mut done_sites: [Option<Site>; WARP_SIZE as usize] = [None; WARP_SIZE as usize];
        let mut ndone = 0;
        let mut lanes = 0u32;
        for i in lo..hi {
            if let St::Waiting(Suspend::WarpBarrier) = self.st[i] {
                lanes |= 1 << (i - lo);
            }
        }
        if lanes != 0 {
            self.releases[w] += 1;
            let v = (self.releases[w] as u64) << 32 | lanes as u64;
            for i in lo..hi {
                if let St::Waiting(Suspend::WarpBarrier) = self.st[i] {
                    self.st[i] = St::Ready(Resume::Value(v));
                }
            }
            progress = true;
        }
        for i in lo..hi {
            if let St::Waiting(Suspend::Op { site, .. }) = self.st[i] {
                if done_sites[..ndone].contains(&Some(site)) {
                    continue;
                }
                done_sites[ndone] = Some(site);
                ndone += 1;
                self.resolve_op(w, lo, hi, site)?;
                progress = true;
            }
        }
        // Matrix operations need the whole warp at one site.
        let mut first_mma = None;
        let mut present = 0u32;
        for i in lo..hi {
            if let St::Waiting(Suspend::Mma { site, bf16, .. }) = self.st[i] {
                let (s0, _, _) = *first_mma.get_or_insert((site, bf16, i));
                if s0 == site {
                    present |= 1 << (i - lo);
                }
            }
        }
        if let Some((site, bf16, first)) = first_mma {
            if hi - lo == WARP_SIZE as usize && present == u32::MAX {
                self.resolve_mma(lo, site, bf16);
                progress = true;
            } else if progress {
                // Other lanes of the warp move on: they may still come to this operation.
                self.at_warp += 1;
            } else {
                return Err(SyncError::PartialWarp {
                    block: self.block,
                    warp: w as u32,
                    thread: coords(first as u32, self.block_dim),
                    site,
                    op: WarpOpKind::Mma { bf16 },
                    present,
                    warp_lanes: (hi - lo) as u32,
                });
            }
        }
        Ok(progress)
    }

    /// Computes the matrix multiply-accumulate of the 32 lanes of the warp starting at thread
    /// `lo`, all waiting at `site`, and readies each lane with its `D` fragment.
    fn resolve_mma(&mut self, lo: usize, site: Site, bf16: bool) {
        let mut lanes = [MmaLane::default(); WARP_SIZE as usize];
        for (l, f) in lanes.iter_mut().enumerate() {
            if let St::Waiting(Suspend::Mma { frag, .. }) = self.st[lo + l] {
                *f = frag;
            }
        }
        let d = crate::mma::m16n8k16(&lanes, bf16);
        let _ = site;
        for (l, v) in d.iter().enumerate() {
            self.st[lo + l] = St::Ready(Resume::Mma(*v));
        }
    }

    /// Resolves the operation at `site` for the lanes of warp `w` (threads `lo..hi`).
    fn resolve_op(&mut self, w: usize, lo: usize, hi: usize, site: Site) -> Result<(), SyncError> {
        // Per lane: the (kind, bits, operand) of the lanes at `site`.
        let mut at: [Option<(WarpOpKind, u64, u32)>; WARP_SIZE as usize] =
            [None; WARP_SIZE as usize];
        let mut kind0 = None;
        for i in lo..hi {
            if let St::Waiting(Suspend::Op {
                site: s,
                kind,
                bits,
                operand,
            }) = self.st[i]
            {
                if s != site {
                    continue;
                }
                match kind0 {
                    None => kind0 = Some(kind),
                    Some(k) if k != kind => {
                        return Err(SyncError::MixedWarpOps {
                            block: self.block,
                            warp: w as u32,
                            site,
                            first: k,
                            second: kind,
                        })
                    }
                    _ => {}
                }
                at[i - lo] = Some((kind, bits, operand));
            }
        }
        let Some(kind) = kind0 else { return Ok(()) };
        let nlanes = (hi - lo) as u32;
        let mut results = [0u64; WARP_SIZE as usize];
        match kind {
            WarpOpKind::Shuffle(sk) => {
                for lane in 0..nlanes {
                    let Some((_, own, operand)) = at[lane as usize] else {
                        continue;
                    };
                    // `None`: the lane's own value (up/down clamping).
                    let src: Option<u64> = match sk {
                        ShuffleKind::Index => Some(operand as u64),
                        ShuffleKind::Xor => Some((lane ^ operand) as u64),
                        ShuffleKind::Up => lane.checked_sub(operand).map(u64::from),
                        ShuffleKind::Down => {
                            let s = lane as u64 + operand as u64;
                            (s < WARP_SIZE as u64).then_some(s)
                        }
                    };
                    results[lane as usize] = match src {
                        None => own,
                        Some(s) => match at.get(s as usize).copied().flatten() {
                            Some((_, v, _)) if (s as u32) < nlanes => v,
                            _ => {
                                let i = lo + lane as usize;
                                return Err(SyncError::InactiveLane {
                                    block: self.block,
                                    thread: coords(i as u32, self.block_dim),
                                    lane,
                                    site,
                                    op: kind,
                                    src_lane: s.min(u32::MAX as u64) as u32,
                                    missing: if s < nlanes as u64 {
                                        MissingLane::Inactive
                                    } else {
                                        MissingLane::Absent
                                    },
                                });
                            }
                        },
                    };
                }
            }
            // Matrix operations suspend as `Suspend::Mma`, never as `Suspend::Op`.
            WarpOpKind::Mma { .. } => {}
            WarpOpKind::Vote(_) | WarpOpKind::Ballot => {
                let (mut any, mut all, mut mask) = (false, true, 0u32);
                for lane in 0..nlanes {
                    if let Some((_, bits, _)) = at[lane as usize] {
                        let p = bits != 0;
                        any |= p;
                        all &= p;
                        if p {
                            mask |= 1 << lane;
                        }
                    }
                }
                let r = match kind {
                    WarpOpKind::Vote(VoteKind::Any) => any as u64,
                    WarpOpKind::Vote(VoteKind::All) => all as u64,
                    _ => mask as u64,
                };
                results = [r; WARP_SIZE as usize];
            }
        }
        for lane in 0..nlanes as usize {
            if at[lane].is_some() {
                self.st[lo + lane] = St::Ready(Resume::Value(results[lane]));
            }
        }
        Ok(())
    }

    /// With no thread able to run: releases a block barrier all live threads wait at
    /// (`Ok`), or reports that all have finished (`Err(None)`) or a divergence
    /// (`Err(Some(..))`).
    fn release_barrier(&mut self) -> Result<(), Option<SyncError>> {
        let mut site0 = None;
        let mut uniform = true;
        let mut finished = 0usize;
        for s in &self.st {
            match *s {
                St::Waiting(Suspend::Barrier(site)) => match site0 {
                    None => site0 = Some(site),
                    Some(s0) if s0 != site => uniform = false,
                    _ => {}
                },
                St::Done => finished += 1,
                // Warp operations and warp barriers were resolved before this is called.
                _ => uniform = false,
            }
        }
        if site0.is_none() && uniform {
            return Err(None);
        }
        if uniform && finished == 0 {
            for s in &mut self.st {
                *s = St::Ready(Resume::Go);
            }
            return Ok(());
        }
        let mut groups: Vec<(Whereabouts, Vec<[u32; 3]>)> = Vec::new();
        let mut finished_threads = Vec::new();
        for (i, s) in self.st.iter().enumerate() {
            let c = coords(i as u32, self.block_dim);
            match *s {
                St::Waiting(Suspend::Barrier(site)) => {
                    let w = Whereabouts::Barrier(site);
                    match groups.iter_mut().find(|(g, _)| *g == w) {
                        Some((_, ts)) => ts.push(c),
                        None => groups.push((w, vec![c])),
                    }
                }
                St::Done => finished_threads.push(c),
                _ => {}
            }
        }
        groups.sort_by_key(|(w, _)| match w {
            Whereabouts::Barrier(s) => *s,
            Whereabouts::Finished => Site(u32::MAX),
        });
        if !finished_threads.is_empty() {
            groups.push((Whereabouts::Finished, finished_threads));
        }
        Err(Some(SyncError::BarrierDivergence {
            block: self.block,
            groups,
        }))
    }
}

/// Runs `block_fn` for every block of `grid` (x fastest), blocks in parallel on the rayon pool;
/// `block_fn` typically allocates the block's shared memory and calls [`run_block`]. A grid with
/// a zero dimension runs nothing.
///
/// # Errors
/// The fault of the lowest-indexed faulting block, with that block's `blockIdx`. Other blocks
/// may have run (and written memory) meanwhile.
pub fn run_grid<E, F>(grid: [u32; 3], block_fn: F) -> Result<(), ([u32; 3], BlockFault<E>)>
where
    E: Send,
    F: Fn([u32; 3]) -> Result<(), BlockFault<E>> + Sync,
{
    let [gx, gy, gz] = grid.map(u64::from);
    let nblocks = gx * gy * gz;
    if nblocks == 0 {
        return Ok(());
    }
    let err = (0..nblocks)
        .into_par_iter()
        .map(|b| {
            let idx = [
                (b % gx) as u32,
                ((b / gx) % gy) as u32,
                (b / (gx * gy)) as u32,
            ];
            block_fn(idx).err().map(|e| (idx, e))
        })
        .find_map_first(|e| e);
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    const B0: [u32; 3] = [0, 0, 0];
    const G1: [u32; 3] = [1, 1, 1];

    fn lin(c: &ThreadCtx) -> usize {
        (c.thread[0] + c.block_dim[0] * (c.thread[1] + c.block_dim[1] * c.thread[2])) as usize
    }

    #[test]
    fn barrier_orders_writes_before_reads_256() {
        let n = 256usize;
        let data: Vec<Cell<u32>> = (0..n).map(|_| Cell::new(0)).collect();
        let out: Vec<Cell<u32>> = (0..n).map(|_| Cell::new(0)).collect();
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), String> {
            let i = lin(c);
            data[i].set(i as u32 + 1);
            h.barrier(Site(0)).map_err(|e| e.to_string())?;
            // Read the neighbour's value, written before the barrier.
            out[i].set(data[(i + 1) % n].get());
            h.barrier(Site(1)).map_err(|e| e.to_string())?;
            data[i].set(0);
            Ok(())
        };
        run_block(B0, [n as u32, 1, 1], G1, &body).unwrap();
        for (i, o) in out.iter().enumerate() {
            assert_eq!(o.get(), ((i + 1) % n) as u32 + 1, "thread {i}");
        }
    }

    #[test]
    fn tree_reduction_with_barriers_3d_block_1024() {
        let dim = [16u32, 8, 8];
        let n = 1024usize;
        let s: Vec<Cell<u64>> = (0..n).map(|_| Cell::new(0)).collect();
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            let i = lin(c);
            s[i].set(i as u64);
            h.barrier(Site(0))?;
            let mut stride = n / 2;
            while stride > 0 {
                if i < stride {
                    s[i].set(s[i].get() + s[i + stride].get());
                }
                h.barrier(Site(1))?;
                stride /= 2;
            }
            Ok(())
        };
        run_block([3, 1, 0], dim, [4, 2, 1], &body).unwrap();
        assert_eq!(s[0].get(), (n as u64 - 1) * n as u64 / 2);
    }

    #[test]
    fn butterfly_shuffle_xor_reduction() {
        let n = 96usize; // three full warps
        let sums: Vec<Cell<u64>> = (0..n).map(|_| Cell::new(0)).collect();
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            let i = lin(c);
            let mut v = (i * i) as u64;
            for m in [16, 8, 4, 2, 1] {
                v += h.shuffle(Site(7), ShuffleKind::Xor, v, m)?;
            }
            sums[i].set(v);
            Ok(())
        };
        run_block(B0, [n as u32, 1, 1], G1, &body).unwrap();
        for (i, s) in sums.iter().enumerate() {
            let w = i / 32;
            let expect: u64 = (w * 32..w * 32 + 32).map(|j| (j * j) as u64).sum();
            assert_eq!(s.get(), expect, "thread {i}");
        }
    }

    #[test]
    fn shuffle_up_down_index_and_clamping() {
        let n = 32usize;
        let got: RefCell<Vec<(u64, u64, u64)>> = RefCell::new(vec![(0, 0, 0); n]);
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            let i = lin(c);
            let v = 100 + i as u64;
            let up = h.shuffle(Site(0), ShuffleKind::Up, v, 3)?;
            let down = h.shuffle(Site(1), ShuffleKind::Down, v, 5)?;
            let idx = h.shuffle(Site(2), ShuffleKind::Index, v, 7)?;
            got.borrow_mut()[i] = (up, down, idx);
            Ok(())
        };
        run_block(B0, [n as u32, 1, 1], G1, &body).unwrap();
        for (i, &(up, down, idx)) in got.borrow().iter().enumerate() {
            let v = 100 + i as u64;
            assert_eq!(up, if i >= 3 { v - 3 } else { v }, "up, lane {i}");
            assert_eq!(down, if i + 5 < 32 { v + 5 } else { v }, "down, lane {i}");
            assert_eq!(idx, 107, "index, lane {i}");
        }
    }

    #[test]
    fn vote_and_ballot_over_active_lanes() {
        let n = 64usize;
        let got: RefCell<Vec<Option<(bool, bool, u32)>>> = RefCell::new(vec![None; n]);
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            let i = lin(c);
            let lane = h.lane_id();
            // Only even lanes take part; lanes 0, 4, 8, … vote true.
            if lane.is_multiple_of(2) {
                let p = lane.is_multiple_of(4);
                let any = h.vote(Site(0), VoteKind::Any, p)?;
                let all = h.vote(Site(1), VoteKind::All, p || i >= 32)?;
                let b = h.ballot(Site(2), p)?;
                got.borrow_mut()[i] = Some((any, all, b));
            }
            Ok(())
        };
        run_block(B0, [n as u32, 1, 1], G1, &body).unwrap();
        let mask = (0..32).step_by(4).fold(0u32, |m, l| m | 1 << l);
        for (i, g) in got.borrow().iter().enumerate() {
            if i % 2 == 0 {
                assert_eq!(*g, Some((true, i >= 32, mask)), "thread {i}");
            } else {
                assert_eq!(*g, None);
            }
        }
    }

    #[test]
    fn divergent_barrier_is_detected() {
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            if lin(c) < 100 {
                h.barrier(Site(3))
            } else {
                h.barrier(Site(4))
            }
        };
        let err = run_block([1, 0, 0], [128, 1, 1], [2, 1, 1], &body).unwrap_err();
        let BlockFault::Sync(SyncError::BarrierDivergence { block, groups }) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*block, [1, 0, 0]);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].0, Whereabouts::Barrier(Site(3)));
        assert_eq!(groups[0].1.len(), 100);
        assert_eq!(groups[1].0, Whereabouts::Barrier(Site(4)));
        assert_eq!(groups[1].1[0], [100, 0, 0]);
        let msg = err.to_string();
        assert!(
            msg.contains("barrier divergence in block (1, 0, 0)"),
            "{msg}"
        );
        assert!(msg.contains("100 threads"), "{msg}");
        assert!(msg.contains("site #4"), "{msg}");
    }

    #[test]
    fn barrier_after_some_threads_finished_is_divergence() {
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            if c.thread[1] == 1 {
                return Ok(());
            }
            h.barrier(Site(0))
        };
        let err = run_block(B0, [4, 2, 1], G1, &body).unwrap_err();
        let BlockFault::Sync(SyncError::BarrierDivergence { groups, .. }) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(groups[1].0, Whereabouts::Finished);
        assert_eq!(
            groups[1].1,
            vec![[0, 1, 0], [1, 1, 0], [2, 1, 0], [3, 1, 0]]
        );
        assert!(err.to_string().contains("4 threads"), "{err}");
    }

    #[test]
    fn shuffle_from_inactive_lane_is_detected() {
        let body = |_: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            let lane = h.lane_id();
            if lane < 16 {
                h.shuffle(Site(9), ShuffleKind::Xor, lane as u64, 16)?;
            }
            Ok(())
        };
        let err = run_block(B0, [32, 1, 1], G1, &body).unwrap_err();
        assert_eq!(
            err,
            BlockFault::Sync(SyncError::InactiveLane {
                block: B0,
                thread: [0, 0, 0],
                lane: 0,
                site: Site(9),
                op: WarpOpKind::Shuffle(ShuffleKind::Xor),
                src_lane: 16,
                missing: MissingLane::Inactive,
            })
        );
    }

    #[test]
    fn shuffle_from_absent_lane_of_partial_warp_is_detected() {
        let body = |_: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            h.shuffle(Site(0), ShuffleKind::Down, 1, 4)?;
            Ok(())
        };
        // 40 threads: warp 1 has lanes 0..8; lane 4 reads lane 8, absent.
        let err = run_block(B0, [40, 1, 1], G1, &body).unwrap_err();
        let BlockFault::Sync(SyncError::InactiveLane {
            thread, missing, ..
        }) = err
        else {
            panic!("{err:?}")
        };
        assert_eq!(thread, [36, 0, 0]);
        assert_eq!(missing, MissingLane::Absent);
    }

    #[test]
    fn mma_waits_for_lanes_still_at_other_warp_operations() {
        let got: RefCell<Vec<[f32; 4]>> = RefCell::new(vec![[0.0; 4]; 64]);
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            let lane = h.lane_id();
            if lane < 16 {
                // The first half of each warp shuffles among itself first.
                h.shuffle(Site(1), ShuffleKind::Xor, lane as u64, 1)?;
                h.warp_barrier(Site(2))?;
            }
            // A and B are zero: D = C, element by element in each lane.
            let frag = MmaLane {
                c: [lane as f32, 1.0, -2.0, c.thread[0] as f32],
                ..MmaLane::default()
            };
            let d = h.mma_m16n8k16(Site(0), true, frag)?;
            got.borrow_mut()[lin(c)] = d;
            Ok(())
        };
        run_block(B0, [64, 1, 1], G1, &body).unwrap();
        for (i, d) in got.borrow().iter().enumerate() {
            assert_eq!(*d, [(i % 32) as f32, 1.0, -2.0, i as f32], "thread {i}");
        }
    }

    #[test]
    fn mma_reached_by_part_of_a_warp_is_detected() {
        let body = |_: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            if h.lane_id() < 16 {
                return Ok(());
            }
            h.mma_m16n8k16(Site(4), false, MmaLane::default())?;
            Ok(())
        };
        let err = run_block(B0, [32, 1, 1], G1, &body).unwrap_err();
        assert_eq!(
            err,
            BlockFault::Sync(SyncError::PartialWarp {
                block: B0,
                warp: 0,
                thread: [16, 0, 0],
                site: Site(4),
                op: WarpOpKind::Mma { bf16: false },
                present: 0xffff_0000,
                warp_lanes: 32,
            })
        );
        // A partial last warp, every lane of it there.
        let body = |_: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
            h.mma_m16n8k16(Site(0), false, MmaLane::default())?;
            Ok(())
        };
        let err = run_block(B0, [40, 1, 1], G1, &body).unwrap_err();
        let BlockFault::Sync(SyncError::PartialWarp {
            warp,
            present,
            warp_lanes,
            ..
        }) = err
        else {
            panic!("{err:?}")
        };
        assert_eq!((warp, present, warp_lanes), (1, 0xff, 8));
        assert!(err.to_string().contains("only 8 lanes"), "{err}");
    }

    #[test]
    fn thread_error_aborts_the_block_and_reports_the_first() {
        let after: Cell<u32> = Cell::new(0);
        let started: Cell<u32> = Cell::new(0);
        let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), String> {
            started.set(started.get() + 1);
            if c.thread[0] == 5 || c.thread[0] == 9 {
                return Err(format!("boom {}", c.thread[0]));
            }
            match h.barrier(Site(0)) {
                Ok(()) => after.set(after.get() + 1),
                Err(Aborted) => return Err("aborted".into()),
            }
            Ok(())
        };
        let err = run_block(B0, [64, 1, 1], G1, &body).unwrap_err();
        assert_eq!(
            err,
            BlockFault::Thread {
                thread: [5, 0, 0],
                error: "boom 5".into()
            }
        );
        assert_eq!(after.get(), 0);
        // The round in which thread 5 failed stops there: later threads never start.
        assert_eq!(started.get(), 6);
    }

    #[test]
    fn warp_barrier_releases_and_stacks_are_reused() {
        for _ in 0..3 {
            let order = RefCell::new(Vec::new());
            let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), Aborted> {
                order.borrow_mut().push((0, lin(c)));
                h.warp_barrier(Site(0))?;
                order.borrow_mut().push((1, lin(c)));
                Ok(())
            };
            run_block(B0, [64, 1, 1], G1, &body).unwrap();
            let o = order.into_inner();
            // Every thread passes phase 0 before any passes phase 1.
            let first_1 = o.iter().position(|p| p.0 == 1).unwrap();
            assert_eq!(first_1, 64);
            assert_eq!(o.len(), 128);
        }
        assert!(POOL.with(|p| p.borrow().len()) >= 64);
    }

    #[test]
    fn stack_remaining_is_within_the_stack() {
        let body = |_: &ThreadCtx, h: &mut SyncHandle| -> Result<(), ()> {
            let r = h.stack_remaining();
            // The usable size is rounded up to whole pages.
            assert!(r > STACK_BYTES / 2 && r <= STACK_BYTES + 8192, "{r}");
            Ok(())
        };
        run_block(B0, [2, 1, 1], G1, &body).unwrap();
    }

    #[test]
    fn run_grid_reports_the_lowest_faulting_block() {
        let r = run_grid([4, 3, 1], |b| {
            let body = |c: &ThreadCtx, h: &mut SyncHandle| -> Result<(), String> {
                h.barrier(Site(0)).map_err(|e| e.to_string())?;
                if c.block[1] >= 1 && c.block[0] == 2 && c.thread[0] == 1 {
                    return Err("fault".into());
                }
                Ok(())
            };
            run_block(b, [8, 1, 1], [4, 3, 1], &body)
        });
        assert_eq!(
            r,
            Err((
                [2, 1, 0],
                BlockFault::Thread {
                    thread: [1, 0, 0],
                    error: "fault".into()
                }
            ))
        );
    }
}
