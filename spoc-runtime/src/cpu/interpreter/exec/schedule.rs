//! Scheduling: the grid of blocks on the CPU cores; the threads of a block one after another,
//! or (SIMT kernels) as coroutines on [`crate::simt`] with the block's shared arrays.

use super::super::compile::{Program, NO_LOC};
use super::super::error::{Fault, InterpError, InterpErrorKind};
use super::super::sanitize::{cells_per_element, BlockCheck, Checks, GlobalCheck, Me};
use super::super::value::Value;
use super::{BufView, Launch, Shadow, Thread};
use crate::native::abi::{NativeArg, ThreadCtx};
use crate::simt::{self, BlockFault, SyncHandle};
use rayon::prelude::*;

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
    let mut launch =
        super::bind::bind(prog, args).map_err(|k| InterpError::launch(&prog.name, k))?;
    let [gx, gy, gz] = grid.map(u64::from);
    let nblocks = gx * gy * gz;
    if nblocks == 0 || block.contains(&0) {
        return Ok(());
    }
    launch.checks = checks;
    if checks.global_races {
        let lens: Vec<usize> = launch
            .bufs
            .iter()
            .map(|b| b.len * cells_per_element(b.elem_size))
            .collect();
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

impl Launch<'_> {
    /// Runs a SIMT kernel: blocks in parallel, the threads of each as coroutines.
    pub(super) fn run_simt(
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
        // Shadow cells, one per 4-byte word of an element.
        let lens: Vec<usize> = prog
            .shared
            .iter()
            .zip(&sizes)
            .map(|(s, &(_, len))| len * cells_per_element(prog.layouts[s.elem as usize].size()))
            .collect();
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

    /// Runs every thread of the block `th.ctx.block`, x fastest; stops at the first fault.
    pub(super) fn run_block(&self, th: &mut Thread) -> Result<(), InterpError> {
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
    pub(super) fn run_thread(&self, th: &mut Thread) -> Result<(), Fault> {
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
}
