//! The IR Interpreter: runs a kernel's IR on the CPU. It is the reference backend: every other
//! backend's results are compared with its, and it checks what GPUs do not — out-of-bounds
//! accesses, integer division by zero and `step_by(0)` are errors naming the kernel, the faulting
//! block and thread, and (for accesses) the array and the index.
//!
//! How it runs a launch:
//! - the kernel is first prepared ([`CompiledKernel::new`]): variables become slot indices,
//!   helpers, fields and cases are resolved, array accesses become place paths, barriers and
//!   warp operations get site numbers; nodes not run yet are refused here, before any thread
//!   runs;
//! - blocks run in parallel on the CPU cores (rayon). In a kernel without barriers, shared
//!   arrays or warp operations the threads of a block run one after another in x-fastest order,
//!   each to completion; the first fault (lowest block index, then first thread in that order)
//!   is returned;
//! - a kernel with block or warp barriers, shared arrays or warp operations (shuffles, votes,
//!   ballot) runs the threads of each block as coroutines on the scheduler of [`crate::simt`]:
//!   each runs until its next barrier or warp operation; barriers release when every thread of
//!   the block is at the same one (else [`InterpErrorKind::BarrierDivergence`]); warp operations
//!   resolve over the lanes at the same operation (a shuffle from a lane not there is
//!   [`InterpErrorKind::InactiveLane`]). Warps are 32 lanes of consecutive linear thread
//!   indices. Shared arrays are allocated per block, zero-filled, bounds-checked; the one sized
//!   at launch (`SharedDecl { len: None }`) holds `shared_mem_bytes / size_of::<T>()` elements;
//! - global buffers and shared arrays are accessed through raw pointers, bounds-checked, with
//!   relaxed atomic loads and stores; record elements use `#[repr(C)]` layout; atomics are real
//!   atomic read-modify-writes (sequentially consistent), on buffers and shared arrays alike;
//!   memory fences are sequentially consistent fences.
//!
//! Not supported yet (an [`InterpErrorKind::Unsupported`] error, never a wrong result): vector
//! values, atomics on local arrays, local arrays passed by mutable reference to helpers.

// An `InterpError` (kind, location, both sides of a race) is built once per failed launch;
// its size does not matter, and boxing it would only make matching on it clumsier.
#![allow(clippy::result_large_err)]

mod compile;
mod error;
mod exec;
mod layout;
mod sanitize;
mod source;
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
    /// parameter in order: scalars by value, buffers (and records by value, as a one-element
    /// buffer of their `#[repr(C)]` bytes) as host memory.
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
        self.execute_with(grid, block, shared_mem_bytes, args, checks())
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
