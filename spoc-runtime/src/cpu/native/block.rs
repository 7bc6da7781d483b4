//! Native kernels that need the threads of a block to run together (barriers, warp operations,
//! shared memory): [`NativeLaunch::run_simt`] runs each block on the SIMT scheduler
//! ([`crate::simt`]: every thread a stackful coroutine, the block's threads on one OS thread,
//! blocks in parallel), with the block's shared arrays allocated and zero-filled per block.
//!
//! Generated code reaches the scheduler through [`Simt`]: a kernel body holds a
//! `&mut SyncHandle` (or, outside the scheduler, a `&mut NoSimt`), and passes it on to helper
//! functions as `&mut dyn Simt`. Sync points are numbered by the generator (a [`crate::simt::Site`]
//! per barrier statement or warp-operation call).

use super::abi::{GlobalMut, NativeLaunch, ThreadCtx, ThreadTrap, Trap};
use crate::mma::MmaLane;
use crate::simt::{self, BlockFault, Site, SyncError, SyncHandle, VoteKind};
use crate::{F32x4, U32x2, U32x4};
use spoc_ir::ShuffleKind;

/// What a native body calls at its sync points. Implemented by the scheduler's
/// [`SyncHandle`] and by [`NoSimt`]. `site` numbers the sync point (see the module docs).
pub trait Simt {
    /// `sync_threads()`.
    ///
    /// # Errors
    /// [`Trap::Aborted`] when the block is torn down; [`Trap::NotSimt`] outside the scheduler.
    fn barrier(&mut self, site: u32) -> Result<(), Trap>;
    /// `sync_warp()`.
    ///
    /// # Errors
    /// As [`Simt::barrier`].
    fn warp_barrier(&mut self, site: u32) -> Result<(), Trap>;
    /// A shuffle of a value's `bits` (see [`warp_shuffle`]).
    ///
    /// # Errors
    /// As [`Simt::barrier`].
    fn shuffle_bits(
        &mut self,
        site: u32,
        kind: ShuffleKind,
        bits: u64,
        operand: u32,
    ) -> Result<u64, Trap>;
    /// `vote_all(pred)` if `all`, else `vote_any(pred)`.
    ///
    /// # Errors
    /// As [`Simt::barrier`].
    fn vote(&mut self, site: u32, all: bool, pred: bool) -> Result<bool, Trap>;
    /// `ballot(pred)`.
    ///
    /// # Errors
    /// As [`Simt::barrier`].
    fn ballot(&mut self, site: u32, pred: bool) -> Result<u32, Trap>;
    /// `mma_sync_m16n8k16_{f16,bf16}` (see [`warp_mma_m16n8k16`]).
    ///
    /// # Errors
    /// As [`Simt::barrier`].
    fn mma_m16n8k16(&mut self, site: u32, bf16: bool, frag: MmaLane) -> Result<[f32; 4], Trap>;
    /// Bytes of stack left below the caller (`usize::MAX` when unknown: an OS thread's stack).
    fn stack_remaining(&self) -> usize;
}

/// Stack a body needs beyond its local arrays (frames of the generated code and the runtime).
const STACK_MARGIN: usize = 16 * 1024;

/// The most bytes of local arrays one body (a kernel's or a helper's) may declare: CUDA's limit
/// of local memory per thread, and well within the 2 MiB stacks of rayon's threads.
pub const MAX_LOCAL_BYTES: usize = 512 * 1024;

/// Checks that `needed` bytes of local arrays (at most [`MAX_LOCAL_BYTES`]) and a margin fit on
/// the rest of the stack, so that a kernel with large local arrays fails with an error rather
/// than overflowing a stack (which would kill the process). Called before entering a body with
/// large local arrays (whose frame would already overflow).
///
/// # Errors
/// [`Trap::StackTooSmall`] if they do not fit.
#[inline]
pub fn check_stack<S: Simt + ?Sized>(needed: usize, simt: &mut S) -> Result<(), Trap> {
    let available = simt.stack_remaining().min(MAX_LOCAL_BYTES + STACK_MARGIN);
    if needed.saturating_add(STACK_MARGIN) <= available {
        Ok(())
    } else {
        Err(Trap::StackTooSmall {
            needed: needed as u64,
            available: available as u64,
        })
    }
}

fn aborted(_: simt::Aborted) -> Trap {
    Trap::Aborted
}

impl Simt for SyncHandle<'_> {
    #[inline]
    fn barrier(&mut self, site: u32) -> Result<(), Trap> {
        SyncHandle::barrier(self, Site(site)).map_err(aborted)
    }
    #[inline]
    fn warp_barrier(&mut self, site: u32) -> Result<(), Trap> {
        SyncHandle::warp_barrier(self, Site(site)).map_err(aborted)
    }
    #[inline]
    fn shuffle_bits(
        &mut self,
        site: u32,
        kind: ShuffleKind,
        bits: u64,
        operand: u32,
    ) -> Result<u64, Trap> {
        SyncHandle::shuffle(self, Site(site), kind, bits, operand).map_err(aborted)
    }
    #[inline]
    fn vote(&mut self, site: u32, all: bool, pred: bool) -> Result<bool, Trap> {
        let kind = if all { VoteKind::All } else { VoteKind::Any };
        SyncHandle::vote(self, Site(site), kind, pred).map_err(aborted)
    }
    #[inline]
    fn ballot(&mut self, site: u32, pred: bool) -> Result<u32, Trap> {
        SyncHandle::ballot(self, Site(site), pred).map_err(aborted)
    }
    #[inline]
    fn mma_m16n8k16(&mut self, site: u32, bf16: bool, frag: MmaLane) -> Result<[f32; 4], Trap> {
        SyncHandle::mma_m16n8k16(self, Site(site), bf16, frag).map_err(aborted)
    }
    fn stack_remaining(&self) -> usize {
        SyncHandle::stack_remaining(self)
    }
}

/// The [`Simt`] of a launch run without the scheduler (threads of a block one after the other):
/// every sync point is [`Trap::NotSimt`]. The runtime runs every kernel that reaches one on the
/// scheduler, so this only reports an internal error instead of running wrong code.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSimt;

impl Simt for NoSimt {
    fn barrier(&mut self, _: u32) -> Result<(), Trap> {
        Err(Trap::NotSimt {
            what: "sync_threads()",
        })
    }
    fn warp_barrier(&mut self, _: u32) -> Result<(), Trap> {
        Err(Trap::NotSimt {
            what: "sync_warp()",
        })
    }
    fn shuffle_bits(&mut self, _: u32, _: ShuffleKind, _: u64, _: u32) -> Result<u64, Trap> {
        Err(Trap::NotSimt { what: "shuffle" })
    }
    fn vote(&mut self, _: u32, _: bool, _: bool) -> Result<bool, Trap> {
        Err(Trap::NotSimt { what: "vote" })
    }
    fn ballot(&mut self, _: u32, _: bool) -> Result<u32, Trap> {
        Err(Trap::NotSimt { what: "ballot" })
    }
    fn mma_m16n8k16(&mut self, _: u32, _: bool, _: MmaLane) -> Result<[f32; 4], Trap> {
        Err(Trap::NotSimt {
            what: "mma_sync_m16n8k16",
        })
    }
    fn stack_remaining(&self) -> usize {
        usize::MAX
    }
}

/// Values a shuffle moves: the numeric scalars, as their bits in a `u64`.
pub trait WarpValue: Copy {
    /// The value's bits, zero-extended.
    fn to_bits64(self) -> u64;
    /// The value of the low bits of `bits`.
    fn from_bits64(bits: u64) -> Self;
}

macro_rules! warp_value {
    ($($t:ty => |$v:ident| $to:expr, |$b:ident| $from:expr);* $(;)?) => {$(
        impl WarpValue for $t {
            #[inline(always)]
            fn to_bits64(self) -> u64 { let $v = self; $to }
            #[inline(always)]
            fn from_bits64($b: u64) -> Self { $from }
        }
    )*};
}
warp_value! {
    i32 => |v| v as u32 as u64, |b| b as u32 as i32;
    u32 => |v| v as u64, |b| b as u32;
    i64 => |v| v as u64, |b| b as i64;
    u64 => |v| v, |b| b;
    f32 => |v| v.to_bits() as u64, |b| f32::from_bits(b as u32);
    f64 => |v| v.to_bits(), |b| f64::from_bits(b);
}

/// `shuffle(v, lane)`, `shuffle_up(v, delta)`, `shuffle_down(v, delta)`, `shuffle_xor(v, mask)`
/// at sync point `site` (`kind` says which; `operand` is the lane, delta or mask). The handle
/// comes last so that `v` may itself contain warp operations.
///
/// # Errors
/// [`Trap::Aborted`] when the block is torn down (for instance because the source lane is
/// inactive); [`Trap::NotSimt`] outside the scheduler.
#[inline]
pub fn warp_shuffle<T: WarpValue, S: Simt + ?Sized>(
    v: T,
    operand: u32,
    kind: ShuffleKind,
    site: u32,
    simt: &mut S,
) -> Result<T, Trap> {
    simt.shuffle_bits(site, kind, v.to_bits64(), operand)
        .map(T::from_bits64)
}

/// `vote_all(pred)` (`all`) or `vote_any(pred)` at sync point `site`.
///
/// # Errors
/// As [`warp_shuffle`].
#[inline]
pub fn warp_vote<S: Simt + ?Sized>(
    pred: bool,
    all: bool,
    site: u32,
    simt: &mut S,
) -> Result<bool, Trap> {
    simt.vote(site, all, pred)
}

/// `ballot(pred)` at sync point `site`.
///
/// # Errors
/// As [`warp_shuffle`].
#[inline]
pub fn warp_ballot<S: Simt + ?Sized>(pred: bool, site: u32, simt: &mut S) -> Result<u32, Trap> {
    simt.ballot(site, pred)
}

/// `mma_sync_m16n8k16_f16(a, b, c)` (`bf16` false) or `mma_sync_m16n8k16_bf16(a, b, c)` at sync
/// point `site`: this lane's `D` fragment, once every lane of the warp has called it
/// ([`crate::mma`] has the layout and the arithmetic).
///
/// # Errors
/// [`Trap::Aborted`] when the block is torn down (for instance because some lanes of the warp
/// do not reach the operation); [`Trap::NotSimt`] outside the scheduler.
#[inline]
pub fn warp_mma_m16n8k16<S: Simt + ?Sized>(
    a: U32x4,
    b: U32x2,
    c: F32x4,
    bf16: bool,
    site: u32,
    simt: &mut S,
) -> Result<F32x4, Trap> {
    let frag = MmaLane {
        a: [a.x, a.y, a.z, a.w],
        b: [b.x, b.y],
        c: [c.x, c.y, c.z, c.w],
    };
    let [x, y, z, w] = simt.mma_m16n8k16(site, bf16, frag)?;
    Ok(F32x4 { x, y, z, w })
}

/// A shared array a kernel declares: its element size and its length, `None` for the array
/// sized at launch (dynamic shared memory: `shared_bytes / elem_bytes` elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedSpec {
    /// The array's name in the kernel (for out-of-bounds messages).
    pub name: &'static str,
    /// Bytes per element.
    pub elem_bytes: usize,
    /// Elements, or `None` when sized at launch.
    pub len: Option<u32>,
}

/// Alignment of every shared array in a block's memory (enough for any atomic).
const SHARED_ALIGN: usize = 16;

/// Where each shared array lives in a block's memory.
#[derive(Debug)]
struct SharedLayout {
    /// Per array: byte offset, elements, name.
    arrays: Vec<(usize, usize, &'static str, usize)>,
    /// Total bytes, a multiple of 16.
    bytes: usize,
}

impl SharedLayout {
    fn new(specs: &[SharedSpec], dynamic_bytes: usize) -> Result<SharedLayout, Trap> {
        let mut arrays = Vec::with_capacity(specs.len());
        let mut bytes = 0usize;
        let too_big = || Trap::BadArgument {
            param: "shared memory",
            expected: "size that fits in the address space",
        };
        for s in specs {
            let elem = s.elem_bytes.max(1);
            let len = match s.len {
                Some(n) => n as usize,
                None => dynamic_bytes / elem,
            };
            let size = len.checked_mul(elem).ok_or_else(too_big)?;
            arrays.push((bytes, len, s.name, s.elem_bytes));
            bytes = bytes
                .checked_add(size)
                .and_then(|b| b.checked_next_multiple_of(SHARED_ALIGN))
                .ok_or_else(too_big)?;
        }
        Ok(SharedLayout { arrays, bytes })
    }
}

/// The shared memory of one block, as the body of [`NativeLaunch::run_simt`] sees it.
#[derive(Debug)]
pub struct SharedBlock<'a> {
    base: *mut u8,
    layout: &'a SharedLayout,
}

impl SharedBlock<'_> {
    /// The shared array `k` of the kernel (in the order of the specs given to
    /// [`NativeLaunch::run_simt`]), as a read-write view every thread of the block shares.
    ///
    /// # Errors
    /// [`Trap::BadArgument`] if there is no array `k` or its elements are not `T`s.
    #[inline]
    pub fn array<T: Copy>(&self, k: usize) -> Result<GlobalMut<T>, Trap> {
        match self.layout.arrays.get(k) {
            Some(&(offset, len, name, elem)) if elem == std::mem::size_of::<T>() => {
                // SAFETY: the block's memory holds `len` elements of `T` at `offset`, 16-byte
                // aligned, and outlives every thread of the block (run_simt).
                Ok(unsafe { GlobalMut::from_raw(self.base.add(offset) as *mut T, len, name) })
            }
            _ => Err(Trap::BadArgument {
                param: "shared array",
                expected: "shared array of the right element type",
            }),
        }
    }
}

/// Calls `body` in a frame of its own, entered only after the stack check (the frame holds the
/// body's local arrays when it is inlined here).
#[inline(never)]
fn enter<F>(
    body: &F,
    ctx: &ThreadCtx,
    h: &mut SyncHandle<'_>,
    sh: &SharedBlock<'_>,
) -> Result<(), Trap>
where
    F: Fn(&ThreadCtx, &mut SyncHandle<'_>, &SharedBlock<'_>) -> Result<(), Trap>,
{
    body(ctx, h, sh)
}

/// `threadIdx` to report for a sync error.
fn sync_thread(e: &SyncError) -> [u32; 3] {
    match e {
        SyncError::InactiveLane { thread, .. } | SyncError::PartialWarp { thread, .. } => *thread,
        SyncError::BarrierDivergence { groups, .. } => groups
            .first()
            .and_then(|(_, ts)| ts.first().copied())
            .unwrap_or([0; 3]),
        _ => [0; 3],
    }
}

impl NativeLaunch {
    /// Runs every block of the launch on the SIMT scheduler ([`crate::simt::run_grid`] and
    /// [`crate::simt::run_block`]): blocks in parallel on rayon's threads, the threads of a
    /// block as coroutines on one of them, each calling `body` with its context, its sync handle
    /// and the block's shared memory. `shared` lists the kernel's shared arrays; each block gets
    /// them zero-filled, the one sized at launch holding `self.shared_bytes / elem_bytes`
    /// elements.
    ///
    /// # Errors
    /// The fault of the lowest faulting block: a thread's [`Trap`] with its coordinates, or a
    /// synchronisation error ([`Trap::Sync`]: a barrier not reached by every thread of the
    /// block, a shuffle reading an inactive lane) with the coordinates of a thread it names.
    ///
    /// `local_bytes` is the size of the body's local arrays: each thread checks that they fit on
    /// its coroutine stack ([`check_stack`]) before it enters the body.
    pub fn run_simt<F>(
        &self,
        shared: &[SharedSpec],
        local_bytes: usize,
        body: F,
    ) -> Result<(), ThreadTrap>
    where
        F: Fn(&ThreadCtx, &mut SyncHandle<'_>, &SharedBlock<'_>) -> Result<(), Trap> + Sync,
    {
        let layout = SharedLayout::new(shared, self.shared_bytes).map_err(|trap| ThreadTrap {
            block: [0; 3],
            thread: [0; 3],
            trap,
        })?;
        let (grid, block_dim) = (self.grid, self.block);
        let words = layout.bytes / SHARED_ALIGN;
        let r = simt::run_grid(grid, |b| {
            let mut mem = vec![0u128; words];
            let sh = SharedBlock {
                base: mem.as_mut_ptr() as *mut u8,
                layout: &layout,
            };
            let run = |ctx: &ThreadCtx, h: &mut SyncHandle<'_>| {
                if local_bytes > 0 {
                    check_stack(local_bytes, h)?;
                }
                enter(&body, ctx, h, &sh)
            };
            simt::run_block(b, block_dim, grid, &run)
        });
        r.map_err(|(block, fault)| match fault {
            BlockFault::Thread { thread, error } => ThreadTrap {
                block,
                thread,
                trap: error,
            },
            BlockFault::Sync(e) => ThreadTrap {
                block,
                thread: sync_thread(&e),
                trap: Trap::Sync(e),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn launch(grid: [u32; 3], block: [u32; 3], shared_bytes: usize) -> NativeLaunch {
        NativeLaunch {
            grid,
            block,
            shared_bytes,
            simt: true,
        }
    }

    #[test]
    fn shared_layout_aligns_and_sizes_the_dynamic_array() {
        let specs = [
            SharedSpec {
                name: "a",
                elem_bytes: 4,
                len: Some(3),
            },
            SharedSpec {
                name: "d",
                elem_bytes: 8,
                len: None,
            },
        ];
        let l = SharedLayout::new(&specs, 100).unwrap();
        assert_eq!(l.arrays, vec![(0, 3, "a", 4), (16, 12, "d", 8)]);
        assert_eq!(l.bytes, 16 + 96);
    }

    /// A shared-memory tree reduction per block, through the generated-code interface.
    #[test]
    fn tree_reduction_in_shared_memory() {
        let blocks = 6u32;
        let n = 256u32;
        let out: Vec<AtomicU32> = (0..blocks).map(|_| AtomicU32::new(0)).collect();
        let specs = [SharedSpec {
            name: "s",
            elem_bytes: 4,
            len: Some(n),
        }];
        launch([blocks, 1, 1], [n, 1, 1], 0)
            .run_simt(&specs, 0, |ctx, h, sh| {
                let s = sh.array::<u32>(0)?;
                let t = ctx.thread[0];
                s.store(t, ctx.global_id(0))?;
                Simt::barrier(h, 0)?;
                let mut stride = n / 2;
                while stride > 0 {
                    if t < stride {
                        s.store(t, s.load(t)? + s.load(t + stride)?)?;
                    }
                    Simt::barrier(h, 1)?;
                    stride /= 2;
                }
                if t == 0 {
                    out[ctx.block[0] as usize].store(s.load(0)?, Ordering::Relaxed);
                }
                Ok(())
            })
            .unwrap();
        for (b, o) in out.iter().enumerate() {
            let lo = b as u32 * n;
            let want: u32 = (lo..lo + n).sum();
            assert_eq!(o.load(Ordering::Relaxed), want, "block {b}");
        }
    }

    #[test]
    fn shuffles_votes_and_faults_carry_coordinates() {
        let l = launch([2, 1, 1], [64, 1, 1], 0);
        let sums: Vec<AtomicU32> = (0..128).map(|_| AtomicU32::new(0)).collect();
        l.run_simt(&[], 0, |ctx, h, _| {
            let mut v = ctx.global_id(0) as f32;
            for m in [16, 8, 4, 2, 1] {
                v += warp_shuffle(v, m, ShuffleKind::Xor, 7, h)?;
            }
            let b = warp_ballot(ctx.thread[0] % 2 == 0, 8, h)?;
            assert_eq!(b, 0x5555_5555);
            assert!(warp_vote(true, true, 9, h)?);
            sums[ctx.global_id(0) as usize].store(v as u32, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
        for (i, s) in sums.iter().enumerate() {
            let w = i / 32 * 32;
            let want: usize = (w..w + 32).sum();
            assert_eq!(s.load(Ordering::Relaxed) as usize, want);
        }
        // A thread's trap.
        let r = l.run_simt(&[], 0, |ctx, _, _| {
            if ctx.block[0] == 1 && ctx.thread[0] == 9 {
                Err(Trap::DivisionByZero)
            } else {
                Ok(())
            }
        });
        assert_eq!(
            r,
            Err(ThreadTrap {
                block: [1, 0, 0],
                thread: [9, 0, 0],
                trap: Trap::DivisionByZero
            })
        );
        // A barrier only part of the block reaches.
        let r = l.run_simt(&[], 0, |ctx, h, _| {
            if ctx.thread[0] >= 40 {
                Simt::barrier(h, 3)?;
            }
            Ok(())
        });
        let t = r.unwrap_err();
        assert_eq!((t.block, t.thread), ([0, 0, 0], [40, 0, 0]));
        assert!(
            t.trap.to_string().contains("barrier divergence"),
            "{}",
            t.trap
        );
        // Local arrays too large for a coroutine stack are an error, not an overflow: the body
        // (whose frame would hold them) is not entered.
        let entered = AtomicU32::new(0);
        let r = l.run_simt(&[], 1 << 30, |_, _, _| {
            entered.fetch_add(1, Ordering::Relaxed);
            Ok(())
        });
        let t = r.unwrap_err();
        assert!(
            matches!(t.trap, Trap::StackTooSmall { needed, .. } if needed == 1 << 30),
            "{t:?}"
        );
        assert!(t.trap.to_string().contains("local arrays"), "{}", t.trap);
        assert_eq!(entered.load(Ordering::Relaxed), 0);
        l.run_simt(&[], 4096, |_, h, _| check_stack(4096, h))
            .unwrap();
        assert!(check_stack(MAX_LOCAL_BYTES, &mut NoSimt).is_ok());
        assert!(check_stack(MAX_LOCAL_BYTES + 1, &mut NoSimt).is_err());
        // NoSimt refuses.
        assert!(matches!(
            warp_ballot(true, 0, &mut NoSimt),
            Err(Trap::NotSimt { .. })
        ));
    }
}
