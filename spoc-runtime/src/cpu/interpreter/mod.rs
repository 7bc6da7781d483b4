//! The IR Interpreter: runs a kernel's IR on the CPU. It is the reference backend (every other
//! backend's results are compared with its) and a sanitizer: it checks what GPUs do not, and
//! reports each fault as an [`InterpError`] naming the kernel, the block and thread, the
//! statement's `file:line:column` ([`SourceLoc`]) and what went wrong ([`InterpErrorKind`]). The
//! user's guide is `docs/SANITIZER.md`.
//!
//! # Checks
//!
//! Always on:
//! - out-of-bounds reads and writes on buffers, shared arrays and local arrays
//!   ([`InterpErrorKind::OutOfBounds`], with the [`MemorySpace`], array, index and length);
//! - integer `/` and `%` by zero, `step_by(0)`;
//! - barrier divergence: a `sync_threads()` reached by part of a block, or different
//!   `sync_threads()` statements reached by different threads
//!   ([`InterpErrorKind::BarrierDivergence`], every group of threads with its barrier);
//! - warp operations whose source lane is not at the operation or does not exist
//!   ([`InterpErrorKind::InactiveLane`]);
//! - a matrix multiply-accumulate (`mma_sync_m16n8k16_*`) that not every lane of its warp
//!   reaches ([`InterpErrorKind::PartialWarp`]).
//!
//! On by default, [`Checks`] (and [`set_shared_checks`], `SPOC_CHECK_SHARED=0`) turn them off:
//! - data races on shared memory ([`InterpErrorKind::DataRace`] with both threads, both
//!   accesses and both statements): two different threads of a block touch one element between
//!   two block barriers, at least one writes, and not both atomically; lanes of one warp are
//!   ordered by a `sync_warp()` both passed after the first access (see below);
//! - reads of shared memory never written in this launch
//!   ([`InterpErrorKind::UninitializedShared`]): each block's shared memory starts unwritten,
//!   element by element; an atomic update of an unwritten element counts as a read.
//!
//! Opt-in ([`set_global_race_check`], `SPOC_CHECK_GLOBAL_RACES=1`): data races on global buffers
//! within one launch. Only a block barrier orders two threads (of the same block); threads of
//! different blocks are never ordered. The shadow (about 80 bytes and a lock per element of
//! every buffer argument) lives for the launch; blocks still run in parallel.
//!
//! The race checks are happens-before checks, not observations of an interleaving: each checked
//! element keeps its last write and up to two reads of the current barrier interval (thread,
//! barrier count, warp-barrier count, statement, plain or atomic), and an access that conflicts
//! with a recorded access of another thread it is not ordered after is reported, whatever order
//! the interpreter happened to run them in. Atomics do not order other accesses (no
//! acquire/release modelling), and neither do memory fences: flag- or counter-based handshakes
//! between blocks (the "last block" reduction after `thread_fence()`) are reported by the
//! global-race check. Reports are per element: a record element is one element.
//!
//! # Execution model
//!
//! - The kernel is first prepared ([`CompiledKernel::new`]): variables become slot indices,
//!   helpers, fields and cases are resolved, array accesses become place paths, `u32` index
//!   arithmetic becomes small postfix programs, barriers and warp operations get site numbers,
//!   statements get their source locations; nodes not run yet are refused here, before any
//!   thread runs.
//! - Blocks run in parallel on the CPU cores (rayon). In a kernel without barriers, shared
//!   arrays or warp operations the threads of a block run one after another in x-fastest order,
//!   each to completion; the first fault (lowest block index, then first thread in that order)
//!   is returned. These kernels pay nothing for the shared-memory checks.
//! - A kernel with block or warp barriers, shared arrays or warp operations runs the threads of
//!   each block as coroutines on the scheduler of [`crate::simt`]: each runs until its next
//!   barrier or warp operation. Warps are 32 lanes of consecutive linear thread indices.
//!   Barriers release when every thread of the block is at the same one; warp operations resolve
//!   over the lanes of the warp at the same operation (their active mask); `sync_warp()`
//!   releases the lanes of a warp waiting at any `sync_warp()` once no lane of the warp can run
//!   further. Shared arrays are allocated per block, zero-filled (what a read returns when the
//!   checks are off), bounds-checked; the one sized at launch (`SharedDecl { len: None }`) holds
//!   `shared_mem_bytes / size_of::<T>()` elements.
//! - Global buffers and shared arrays are accessed through raw pointers, bounds-checked, with
//!   relaxed atomic loads and stores; record elements use `#[repr(C)]` layout; atomics are real
//!   atomic read-modify-writes (sequentially consistent), on buffers and shared arrays alike;
//!   memory fences are sequentially consistent fences.
//!
//! ## Coroutines, not lockstep
//!
//! The lanes of a warp are not run in per-instruction lockstep: between two sync points lane 0
//! runs its whole stretch of code, then lane 1, and so on; the lanes converge at warp
//! operations and barriers only. What that means for the checks:
//! - races inside a warp are found as anywhere else: lanes are not ordered without
//!   `sync_warp()` (the CUDA memory model since Volta's independent thread scheduling), so
//!   warp-synchronous code that relies on lockstep (a `volatile` shared-memory reduction over
//!   the last 32 elements without `__syncwarp()`) is reported. A lockstep simulator would run such
//!   code "correctly" and say nothing; pre-Volta GPUs did too, current ones need the
//!   `sync_warp()`;
//! - with the race checks off, a racy kernel reads what this order produces (lane 1 sees all of
//!   lane 0's writes of the stretch), which lockstep hardware would not;
//! - the active mask of a warp operation is the set of lanes that reached the same operation in
//!   the same scheduling round, not the same dynamic instance: a lane that skips a shuffle in
//!   one loop iteration and reaches it in the next, while another lane reaches it in the first,
//!   takes part in the same shuffle here, where a lockstep machine (reconverging after the
//!   `if`) would have run them as two shuffles with partial masks. A shuffle from a lane that
//!   is not at the operation is an error either way; votes and ballots count the lanes present;
//! - barrier divergence is decided per barrier statement: all live threads must wait at the
//!   same `sync_threads()`. Hardware with one barrier resource may let two different
//!   `sync_threads()` statements pair up; the programming model calls that undefined, and so is
//!   it reported here.
//!
//! Per-instruction lockstep would cost a coroutine switch per statement per lane (or a second,
//! warp-vectorised evaluator); it is not done.
//!
//! Vectors (`f32x4`, …) run as the record of their lanes (`x`, `y`, `z`, `w`), laid out in
//! memory as `lanes` packed scalars (2- and 4-lane ones aligned to their size); a vector by
//! value is passed like a record, as a one-element buffer of those bytes.
//!
//! Not supported yet (an [`InterpErrorKind::Unsupported`] error, never a wrong result): atomics
//! on local arrays, local arrays passed by mutable reference to helpers.

// An `InterpError` (kind, location, both sides of a race) is built once per failed launch;
// its size does not matter, and boxing it would only make matching on it clumsier.
#![allow(clippy::result_large_err)]

pub mod backend;
mod compile;
mod error;
mod exec;
mod layout;
mod sanitize;
pub(crate) mod source;
mod value;

#[cfg(test)]
mod tests;

pub use error::{
    AccessKind, DivergenceGroup, InterpError, InterpErrorKind, MemorySpace, RaceAccess, SourceLoc,
};
pub use sanitize::{checks, set_checks, set_global_race_check, set_shared_checks, Checks};
#[doc(hidden)]
pub use source::{__register_helper_file, __register_kernel_file};

use std::cell::RefCell;

thread_local! {
    static LAST_REPORT: RefCell<Option<InterpError>> = const { RefCell::new(None) };
}

/// The full report of the last Interpreter launch on this OS thread that a thread fault ended
/// (through the runtime: `kernel.launch(..)` on the Interpreter, or a checked launch with
/// `SPOC_CHECK=1`), taken (a second call returns `None`). The runtime's
/// `Error::KernelFault` carries the same report as a message; this is the typed form (kind,
/// location, both sides of a race).
pub fn take_last_report() -> Option<InterpError> {
    LAST_REPORT.with(|r| r.borrow_mut().take())
}

/// Keeps `e` for [`take_last_report`].
pub(crate) fn set_last_report(e: &InterpError) {
    LAST_REPORT.with(|r| *r.borrow_mut() = Some(e.clone()));
}

use crate::native::abi::NativeArg;
use spoc_ir::Kernel;

/// Threads per warp as the Interpreter reports them (`warp_size()`), and the modulus of
/// `lane_id()`.
pub const WARP_SIZE: u32 = crate::simt::WARP_SIZE;

/// A kernel prepared for interpretation; prepare once, launch many times.
#[derive(Debug)]
pub struct CompiledKernel {
    prog: compile::Program,
}

impl CompiledKernel {
    /// Prepares `kernel`.
    ///
    /// # Errors
    /// [`InterpErrorKind::Unsupported`] for nodes the Interpreter does not run yet,
    /// [`InterpErrorKind::InvalidKernel`] for IR that does not resolve (unknown variables,
    /// helpers, fields, cases); both with block and thread `[0, 0, 0]`.
    pub fn new(kernel: &Kernel) -> Result<CompiledKernel, InterpError> {
        compile::compile(kernel)
            .map(|prog| CompiledKernel { prog })
            .map_err(|k| InterpError::launch(&kernel.name, *k))
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.prog.name
    }

    /// Runs the kernel over `grid` blocks of `block` threads (x, y, z) with `args`, one per
    /// parameter in order: scalars by value, buffers (and records and vectors by value, as a
    /// one-element buffer of their `#[repr(C)]` bytes) as host memory.
    ///
    /// `shared_mem_bytes` is the dynamic shared memory per block: the kernel's shared array
    /// sized at launch, if any, holds `shared_mem_bytes / size_of::<T>()` elements. A grid or
    /// block with a zero dimension runs nothing.
    ///
    /// Every buffer argument must point to `len` live elements of `elem_bytes` bytes for the
    /// whole call, writable if the parameter is `&mut`, not accessed by anything else meanwhile
    /// (the contract of [`NativeArg`], which the runtime upholds).
    ///
    /// # Errors
    /// [`InterpErrorKind::BadArgument`] before any thread runs if the arguments do not fit the
    /// parameters (count, scalar type, element size, alignment, length over `u32::MAX`); else the
    /// first fault of a thread, with its block and thread coordinates (for a barrier divergence
    /// or a shuffle from an inactive lane, the scheduler's error, see the module docs). Threads
    /// of other blocks may have run (and written memory) when an error is returned.
    pub fn execute(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_mem_bytes: usize,
        args: &[NativeArg],
    ) -> Result<(), InterpError> {
        let checks = checks().map_err(|e| {
            InterpError::launch(
                self.name(),
                InterpErrorKind::InvalidEnvironment {
                    message: e.to_string(),
                },
            )
        })?;
        self.execute_with(grid, block, shared_mem_bytes, args, checks)
    }

    /// [`CompiledKernel::execute`] with the optional checks `checks` instead of the process's
    /// settings ([`checks()`]).
    ///
    /// # Errors
    /// As [`CompiledKernel::execute`], plus the reports of the checks that are on
    /// ([`InterpErrorKind::DataRace`], [`InterpErrorKind::UninitializedShared`]).
    pub fn execute_with(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_mem_bytes: usize,
        args: &[NativeArg],
        checks: Checks,
    ) -> Result<(), InterpError> {
        exec::run(&self.prog, grid, block, shared_mem_bytes, args, checks)
    }
}

/// Prepares `kernel` and runs it once: [`CompiledKernel::new`] then [`CompiledKernel::execute`].
///
/// # Errors
/// As those two.
pub fn execute(
    kernel: &Kernel,
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem_bytes: usize,
    args: &[NativeArg],
) -> Result<(), InterpError> {
    CompiledKernel::new(kernel)?.execute(grid, block, shared_mem_bytes, args)
}
