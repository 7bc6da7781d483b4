//! Running a compiled kernel: argument binding, the grid of blocks on the CPU cores, and the
//! evaluation of statements and expressions for one thread.
//!
//! Kernels without barriers, shared arrays or warp operations run their threads one after
//! another, each to completion, reusing one [`Thread`] per worker. The others
//! ([`Program::simt`]) run each block through [`crate::simt::run_block`]: one coroutine per
//! thread, the block's shared arrays allocated (zero-filled) per block and bound as extra
//! buffers after the launch's.
//!
//! The work is split by concern: [`bind`] (arguments to views and values), [`schedule`]
//! (blocks and threads), [`eval`] (statements and expressions), [`access`] (memory: reads,
//! writes, atomics, the sanitizer's records) and [`report`] (faults and the errors they become).
//! This file holds what they share: the bound launch, the running thread and the buffer views.

mod access;
mod bind;
mod eval;
mod report;
mod schedule;

pub(crate) use schedule::run;

use super::compile::Program;
use super::sanitize::{BlockCheck, Checks, GlobalCheck, Me};
use super::value::Value;
use crate::native::abi::ThreadCtx;
use crate::simt::SyncHandle;

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

impl Launch<'_> {
    /// The buffer `b` of the thread's buffer table `bufs` ([`Thread::bufs`]).
    #[inline(always)]
    fn view<'v>(&self, bufs: &'v [BufView], b: u32) -> &'v BufView {
        &bufs[b as usize]
    }
}
