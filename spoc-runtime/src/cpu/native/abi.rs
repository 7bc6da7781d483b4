//! The interface between `#[kernel]`'s generated native code and the Native backend.
//!
//! For every kernel the macro generates one function of type [`NativeFn`]. It unpacks its
//! arguments once ([`GlobalRef::from_arg`], [`NativeArg::scalar`]) and hands the per-thread body
//! to [`NativeLaunch::run`] or [`NativeLaunch::run_planned`], which run it for every thread of
//! every block, blocks in parallel on the CPU cores (rayon), the threads of one block in order;
//! or, for kernels with barriers, warp operations or shared arrays, to
//! [`NativeLaunch::run_simt`], which runs the threads of a block as coroutines on the SIMT
//! scheduler ([`crate::simt`]) with the block's shared memory. Every array access is
//! bounds-checked and every integer division checked for zero: a fault is a [`Trap`], returned,
//! never a panic. Atomics are [`GlobalMut::atomic`] and [`GlobalMut::atomic_cas`].
//!
//! ## The row plan (fast path)
//!
//! A *row* is the threads of one block that share `thread_idx` y and z: `thread_idx_x` runs
//! over `0..block_dim_x`. When the macro can prove that a buffer access indexes element
//! `base + stride * thread_idx_x` (wrapping `u32` arithmetic) with `base` and `stride` the same
//! for the whole row, it generates three closures instead of one:
//!
//! - a *plan*, run once per row with `thread = [0, ty, tz]`: it evaluates `base` and `stride` of
//!   each such access and builds a [`Window`] / [`WindowMut`] for it, which exists only if the
//!   access is in bounds for *every* thread of the row ([`GlobalRef::window`]); it also checks
//!   comparisons such as `i < n` that then hold for every thread of the row ([`row_below`]).
//!   If any check fails the plan returns `None`;
//! - a *fast body*, run for each thread of a row whose plan succeeded: the per-thread body in
//!   which those accesses go through the windows (no per-element bounds check) and the proven
//!   comparisons are constants. Everything else (other accesses, division) is checked as usual;
//! - the *checked body*, run for each thread of a row whose plan failed.
//!
//! Both bodies have the same observable behaviour on a row whose plan succeeded (an access the
//! plan proved cannot fault), so a kernel's results and faults do not depend on which one ran,
//! and the fast body, free of early exits, is a loop LLVM can vectorize.
//!
//! The pieces live beside this file: `global.rs` (buffers), `window.rs` (the row plan's windows),
//! `local.rs` (local arrays, loop steps), `atomic.rs`, `block.rs` (shared memory, warp operations);
//! the types the generated code exchanges with the runtime are in `core/kernel_abi.rs`. This file
//! runs a launch ([`NativeLaunch`]'s methods) and re-exports the rest under one path.
//!
//! Nothing here is meant to be called by hand: it is reached through `spoc::__private`.

use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

pub use super::atomic::AtomicElem;
pub use super::block::{
    check_stack, warp_ballot, warp_mma_m16n8k16, warp_shuffle, warp_vote, NoSimt, SharedBlock,
    SharedSpec, Simt, WarpValue, MAX_LOCAL_BYTES,
};
pub use super::global::{GlobalMut, GlobalRef};
pub use super::local::{check_step, local_load, local_mut, local_store, KernelInt};
pub use super::window::{row_below, Window, WindowMut};
pub use crate::kernel_abi::{
    FromScalarArg, NativeArg, NativeFn, NativeLaunch, ScalarArg, ThreadTrap, Trap,
};
pub use crate::simt::{SyncHandle, ThreadCtx};

/// Threads one rayon task runs at least (when there are enough blocks for every core), so that
/// the cost of a task (a few hundred nanoseconds) is small next to its work.
const TASK_THREADS: u64 = 1 << 14;

/// Tasks per rayon thread at least, when there are enough blocks: uneven blocks still balance.
const TASKS_PER_CORE: u64 = 8;

/// Rows narrower than this run the checked body without a plan: a plan costs about as much as
/// a few threads.
const MIN_PLANNED_ROW: u32 = 4;

impl NativeLaunch {
    /// Runs `body` once per thread: blocks in parallel (rayon), the threads of a block in
    /// x-fastest order. Stops at the first trap and returns it with the faulting coordinates.
    pub fn run<F>(&self, body: F) -> Result<(), ThreadTrap>
    where
        F: Fn(&ThreadCtx) -> Result<(), Trap> + Sync + Copy,
    {
        self.run_planned(|_| None::<()>, |_, _| Ok(()), body)
    }

    /// Runs every thread of the launch, the rows of a block through a row plan (see the module
    /// documentation): for each row (`thread = [0, ty, tz]`), `plan`; if it returns `Some(p)`,
    /// `fast(ctx, &p)` for each thread of the row, otherwise `body(ctx)`. `fast` must behave as
    /// `body` does on every row whose plan succeeded.
    ///
    /// Blocks run in parallel, in chunks of consecutive blocks (one rayon task each; a launch
    /// of one block runs on the calling thread), the threads of a block in x-fastest order. A thread stops at its first trap; its block stops
    /// there too, other blocks stop at their next block boundary, and the trap is returned with
    /// its coordinates (if several threads trap, one of them).
    ///
    /// # Errors
    /// The first [`ThreadTrap`] of a faulting block.
    pub fn run_planned<P, Plan, Fast, F>(
        &self,
        plan: Plan,
        fast: Fast,
        body: F,
    ) -> Result<(), ThreadTrap>
    where
        Plan: Fn(&ThreadCtx) -> Option<P> + Sync + Copy,
        Fast: Fn(&ThreadCtx, &P) -> Result<(), Trap> + Sync + Copy,
        F: Fn(&ThreadCtx) -> Result<(), Trap> + Sync + Copy,
    {
        let grid = self.grid;
        let block_dim = self.block;
        let blocks = grid.iter().map(|&g| g as u64).product::<u64>();
        let threads = block_dim.iter().map(|&b| b as u64).product::<u64>();
        if blocks == 0 || threads == 0 {
            return Ok(());
        }
        let cores = rayon::current_num_threads().max(1) as u64;
        let chunk = (TASK_THREADS / threads)
            .min(blocks / (cores * TASKS_PER_CORE))
            .max(1);
        let chunks = blocks.div_ceil(chunk);
        let stop = AtomicBool::new(false);
        let run_chunk = |c: u64| {
            // Local copies: their captures then live in registers, not behind a pointer that
            // the kernel's stores might alias.
            let (plan, fast, body) = (plan, fast, body);
            let first = c * chunk;
            let last = (first + chunk).min(blocks);
            let [gx, gy, _] = grid;
            let mut block = [
                (first % gx as u64) as u32,
                ((first / gx as u64) % gy as u64) as u32,
                (first / (gx as u64 * gy as u64)) as u32,
            ];
            for _ in first..last {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if let Err(t) = run_block(block, block_dim, grid, plan, fast, body) {
                    stop.store(true, Ordering::Relaxed);
                    return Err(t);
                }
                next_block(&mut block, grid);
            }
            Ok(())
        };
        if chunks == 1 {
            // One block: run it here rather than wake the pool.
            run_chunk(0)
        } else {
            (0..chunks).into_par_iter().try_for_each(run_chunk)
        }
    }
}

/// The block after `block` in x-fastest order.
#[inline(always)]
fn next_block(block: &mut [u32; 3], grid: [u32; 3]) {
    block[0] += 1;
    if block[0] == grid[0] {
        block[0] = 0;
        block[1] += 1;
        if block[1] == grid[1] {
            block[1] = 0;
            block[2] += 1;
        }
    }
}

/// Runs the threads of block `ctx.block`, row by row (see [`NativeLaunch::run_planned`]).
#[inline(always)]
fn run_block<P, Plan, Fast, F>(
    block: [u32; 3],
    block_dim: [u32; 3],
    grid_dim: [u32; 3],
    plan: Plan,
    fast: Fast,
    body: F,
) -> Result<(), ThreadTrap>
where
    Plan: Fn(&ThreadCtx) -> Option<P>,
    Fast: Fn(&ThreadCtx, &P) -> Result<(), Trap>,
    F: Fn(&ThreadCtx) -> Result<(), Trap>,
{
    let [bx, by, bz] = block_dim;
    // Each thread gets a fresh context that nothing else refers to, so that once the bodies
    // are inlined it lives in registers; and the row's `block_dim[0]` (a window's `count`) is
    // the loop bound itself, so LLVM sees that every window access is inside its row.
    let at = |thread: [u32; 3]| ThreadCtx {
        thread,
        block,
        block_dim,
        grid_dim,
    };
    for tz in 0..bz {
        for ty in 0..by {
            let p = if bx >= MIN_PLANNED_ROW {
                plan(&at([0, ty, tz]))
            } else {
                None
            };
            match p {
                Some(p) => {
                    for tx in 0..bx {
                        if let Err(trap) = fast(&at([tx, ty, tz]), &p) {
                            return Err(thread_trap(block, [tx, ty, tz], trap));
                        }
                    }
                }
                None => {
                    for tx in 0..bx {
                        if let Err(trap) = body(&at([tx, ty, tz])) {
                            return Err(thread_trap(block, [tx, ty, tz], trap));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// `trap` with the coordinates of its thread.
#[cold]
#[inline(never)]
fn thread_trap(block: [u32; 3], thread: [u32; 3], trap: Trap) -> ThreadTrap {
    ThreadTrap {
        block,
        thread,
        trap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::window::row_fits;
    use std::sync::atomic::AtomicU32;

    fn arg_of<T>(v: &mut [T]) -> NativeArg {
        NativeArg::Buffer {
            ptr: v.as_mut_ptr() as *mut u8,
            len: v.len(),
            elem_bytes: std::mem::size_of::<T>(),
        }
    }

    fn row(block_dim_x: u32) -> ThreadCtx {
        ThreadCtx {
            thread: [0; 3],
            block: [0; 3],
            block_dim: [block_dim_x, 1, 1],
            grid_dim: [1; 3],
        }
    }

    #[test]
    fn row_fits_is_exact_and_refuses_wraparound() {
        assert!(row_fits(4, 6, 1, 10)); // 6..=9
        assert!(!row_fits(4, 7, 1, 10)); // 7..=10
        assert!(row_fits(3, 1, 4, 10)); // 1, 5, 9
        assert!(!row_fits(3, 2, 4, 10)); // 2, 6, 10
        assert!(row_fits(0, u32::MAX, u32::MAX, 0)); // no thread, nothing to check
        assert!(row_fits(5, 3, 0, 4)); // every thread reads element 3
                                       // Wrapping u32 indices would come back below the bound; the check is exact.
        assert!(!row_fits(2, u32::MAX, 1, u64::MAX));
        assert!(row_fits(2, 0, u32::MAX, u64::MAX)); // 0, 2^32 - 1: no wrap
        assert!(!row_fits(3, 0, u32::MAX, u64::MAX)); // the third wraps to 2^32 - 2
                                                      // A bound above 2^32 is capped: every index of a row fits in u32.
        assert!(row_fits(1, u32::MAX, 1, u64::MAX));
        assert!(row_fits(2, u32::MAX - 1, 1, 1 << 40));
        assert!(!row_fits(3, u32::MAX - 1, 1, 1 << 40));
    }

    #[test]
    fn windows_exist_only_for_rows_in_bounds_and_read_what_load_reads() {
        let mut data: Vec<i32> = (0..10).map(|i| i * 10).collect();
        let arg = arg_of(&mut data);
        let r = GlobalRef::<i32>::from_arg(&arg, "data").unwrap();
        let m = GlobalMut::<i32>::from_arg(&arg, "data").unwrap();
        assert!(r.window(&row(4), 7, 1).is_none());
        assert!(m.window(&row(4), 7, 1).is_none());
        assert!(r.window(&row(4), 2, 3).is_none()); // 2, 5, 8, 11
        let w = r.window(&row(3), 1, 4).unwrap(); // 1, 5, 9
        let wm = m.window(&row(3), 1, 4).unwrap();
        let mut ctx = row(3);
        for t in 0..3 {
            ctx.thread[0] = t;
            assert_eq!(w.load(&ctx), r.load(1 + 4 * t));
            wm.store(&ctx, -(t as i32)).unwrap();
            assert_eq!(wm.load(&ctx), Ok(-(t as i32)));
        }
        assert_eq!(data[1], 0);
        assert_eq!(data[5], -1);
        assert_eq!(data[9], -2);
        // A thread outside the row is refused, not read.
        ctx.thread[0] = 3;
        assert_eq!(
            w.load(&ctx),
            Err(Trap::OutOfBounds {
                array: "data",
                index: 13,
                len: 10
            })
        );
        assert!(row_below(&row(3), 1, 4, 10).is_some());
        assert!(row_below(&row(3), 1, 4, 9).is_none());
    }

    /// Every (block, thread) of `launch` runs exactly once, through `fast` on the rows where
    /// `plan` (ty even) succeeds and through `body` elsewhere.
    fn check_coverage(grid: [u32; 3], block: [u32; 3]) {
        let launch = NativeLaunch {
            grid,
            block,
            shared_bytes: 0,
            simt: false,
        };
        let total = grid
            .iter()
            .chain(&block)
            .map(|&d| d as usize)
            .product::<usize>();
        let hits: Vec<AtomicU32> = (0..total).map(|_| AtomicU32::new(0)).collect();
        let linear = |c: &ThreadCtx| {
            let g = [0, 1, 2].map(|a| c.global_id(a) as usize);
            let size = [0, 1, 2].map(|a| c.global_size(a) as usize);
            g[0] + size[0] * (g[1] + size[1] * g[2])
        };
        let hits = &hits;
        launch
            .run_planned(
                |row| (row.thread[1] % 2 == 0).then_some(row.thread[1]),
                |c, &ty| {
                    assert_eq!((c.thread[1], ty % 2), (ty, 0));
                    hits[linear(c)].fetch_add(1, Ordering::Relaxed);
                    Ok(())
                },
                |c| {
                    assert!(c.thread[1] % 2 == 1 || block[0] < MIN_PLANNED_ROW);
                    hits[linear(c)].fetch_add(1, Ordering::Relaxed);
                    Ok(())
                },
            )
            .unwrap();
        assert!(
            hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
            "grid {grid:?} block {block:?}"
        );
    }

    #[test]
    fn every_thread_runs_once_whatever_the_shape() {
        for (grid, block) in [
            ([1, 1, 1], [1, 1, 1]),
            ([7, 5, 3], [4, 2, 2]),
            ([300, 1, 1], [64, 1, 1]),
            ([3, 70, 2], [8, 3, 1]),
            ([2, 2, 200], [2, 2, 2]),
            ([1000, 3, 1], [32, 1, 1]),
        ] {
            check_coverage(grid, block);
        }
    }

    #[test]
    fn a_trap_names_the_first_faulting_thread_of_its_block() {
        let launch = NativeLaunch {
            grid: [4, 1, 1],
            block: [16, 2, 1],
            shared_bytes: 0,
            simt: false,
        };
        let fault = |c: &ThreadCtx| {
            if c.block[0] == 2 && c.thread[1] == 1 && c.thread[0] >= 5 {
                Err(Trap::DivisionByZero)
            } else {
                Ok(())
            }
        };
        let want = ThreadTrap {
            block: [2, 0, 0],
            thread: [5, 1, 0],
            trap: Trap::DivisionByZero,
        };
        assert_eq!(launch.run(fault), Err(want.clone()));
        // The same through the fast body of a planned row.
        let r = launch.run_planned(|_| Some(()), move |c, _| fault(c), |_| Ok(()));
        assert_eq!(r, Err(want));
    }
}
