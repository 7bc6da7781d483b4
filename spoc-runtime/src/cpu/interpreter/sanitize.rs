//! The Interpreter's memory checks beyond bounds: data races on shared memory, reads of shared
//! memory never written, and (opt-in) data races on global memory within one launch. See the
//! module documentation of [`crate::interpreter`] for the model.
//!
//! Each checked element has a shadow: its last write (thread, barrier epoch, warp-barrier count,
//! statement, plain or atomic) and up to two reads of the current epoch by distinct threads. An
//! access by thread `t` conflicts with a recorded access by thread `u != t` unless the two are
//! ordered: a block barrier between them (`u`'s epoch is older; threads of one block only), or a
//! warp barrier both passed after `u`'s access (lanes of one warp only). A conflict where at
//! least one side writes and not both are atomic is a race.

use super::error::AccessKind;
use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// Which of the Interpreter's optional checks run. Bounds, integer division by zero, barrier
/// divergence and shuffles from inactive lanes are always checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Checks {
    /// Data races on shared arrays: two threads of a block touch one element between two
    /// barriers, at least one writing, not both atomically. On by default.
    pub shared_races: bool,
    /// Reads (and atomic updates) of shared-array elements no thread of the block has written
    /// in this launch. On by default.
    pub uninit_shared: bool,
    /// Data races on global buffers within one launch (threads of different blocks are never
    /// ordered). Off by default: it keeps about 80 bytes of shadow per element of every buffer
    /// argument for the duration of each launch, and takes a lock per global access.
    pub global_races: bool,
}

impl Checks {
    /// Every check on.
    pub const ALL: Checks = Checks {
        shared_races: true,
        uninit_shared: true,
        global_races: true,
    };
    /// Every optional check off: the Interpreter's unchecked fast path.
    pub const NONE: Checks = Checks {
        shared_races: false,
        uninit_shared: false,
        global_races: false,
    };
    /// The defaults: shared-memory checks on, global races off.
    pub const DEFAULT: Checks = Checks {
        shared_races: true,
        uninit_shared: true,
        global_races: false,
    };

    /// Whether a shared-memory check is on.
    pub(crate) fn shared(&self) -> bool {
        self.shared_races || self.uninit_shared
    }
}

impl Default for Checks {
    fn default() -> Checks {
        Checks::DEFAULT
    }
}

/// 0: follow the environment; 1: off; 2: on. For shared checks (both) and global races.
static SHARED: AtomicU8 = AtomicU8::new(0);
static GLOBAL: AtomicU8 = AtomicU8::new(0);

/// The checks of every launch on the Interpreter that does not name its own
/// ([`crate::interpreter::CompiledKernel::execute_with`]): [`Checks::DEFAULT`], with the
/// `SPOC_CHECK_SHARED` switch turning the shared-memory checks off and
/// `SPOC_CHECK_GLOBAL_RACES` turning global races on (both read once, with the values
/// `spoc::env` accepts), overridden by [`set_shared_checks`], [`set_global_race_check`] and
/// [`set_checks`].
///
/// # Errors
/// [`crate::Error::InvalidEnvironment`] if either switch is neither on nor off.
pub fn checks() -> crate::Result<Checks> {
    use crate::env::OnceSwitch;
    static ENV_SHARED: OnceSwitch = OnceSwitch::new("SPOC_CHECK_SHARED", true);
    static ENV_GLOBAL: OnceSwitch = OnceSwitch::new("SPOC_CHECK_GLOBAL_RACES", false);
    let (env_shared, env_global) = (ENV_SHARED.get()?, ENV_GLOBAL.get()?);
    let pick = |a: &AtomicU8, env: bool| match a.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => env,
    };
    let shared = pick(&SHARED, env_shared);
    Ok(Checks {
        shared_races: shared,
        uninit_shared: shared,
        global_races: pick(&GLOBAL, env_global),
    })
}

/// Turns the data-race check on global memory on or off for every later Interpreter launch of
/// the process (overrides `SPOC_CHECK_GLOBAL_RACES`).
pub fn set_global_race_check(on: bool) {
    GLOBAL.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Turns the shared-memory checks (races and never-written reads) on or off for every later
/// Interpreter launch of the process (overrides `SPOC_CHECK_SHARED`).
pub fn set_shared_checks(on: bool) {
    SHARED.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Sets every optional check at once. `shared_races` and `uninit_shared` are set together
/// (both on if either is).
pub fn set_checks(c: Checks) {
    set_shared_checks(c.shared());
    set_global_race_check(c.global_races);
}

/// "No thread".
pub(crate) const NONE: u32 = u32::MAX;
const GNONE: u64 = u64::MAX;

fn kind_code(k: AccessKind) -> u8 {
    match k {
        AccessKind::Read => 0,
        AccessKind::Write => 1,
        AccessKind::Atomic => 2,
    }
}

fn code_kind(c: u8) -> AccessKind {
    match c {
        0 => AccessKind::Read,
        1 => AccessKind::Write,
        _ => AccessKind::Atomic,
    }
}

/// The accessing thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Me {
    /// Linear index in the block.
    pub linear: u32,
    /// Linear index in the grid (`block_linear * threads_per_block + linear`).
    pub global: u64,
    /// Block barriers passed.
    pub epoch: u32,
    /// The warp's warp-barrier release this thread passed last (0: none).
    pub wep: u32,
}

/// What a check found: a race with an earlier access (its thread, kind and location), or a read
/// of an element never written.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Finding {
    /// `thread` is linear in the block (shared) or in the grid (global).
    Race {
        thread: u64,
        kind: AccessKind,
        loc: u32,
    },
    Uninit,
}

/// How many shadow cells an element of `elem_size` bytes has: one per 4-byte word (at least
/// one), so that accesses to different lanes of a vector or fields of a record by different
/// threads touch different bytes and are no race, as on a GPU; a whole-element access checks
/// every cell.
pub(crate) fn cells_per_element(elem_size: usize) -> usize {
    elem_size.div_ceil(4).max(1)
}

/// One recorded access to a shared element.
#[derive(Clone, Copy, Debug)]
struct Rec {
    tid: u32,
    epoch: u32,
    wep: u32,
    loc: u32,
    kind: u8,
}

const EMPTY: Rec = Rec {
    tid: NONE,
    epoch: 0,
    wep: 0,
    loc: NONE,
    kind: 0,
};

/// The shadow of one shared element: its last write and up to two reads.
#[derive(Debug)]
pub(crate) struct SCell {
    w: Cell<Rec>,
    r: [Cell<Rec>; 2],
}

impl SCell {
    fn new() -> SCell {
        SCell {
            w: Cell::new(EMPTY),
            r: [Cell::new(EMPTY), Cell::new(EMPTY)],
        }
    }
}

/// The check state of one block (lives on the OS thread that runs the block's coroutines).
pub(crate) struct BlockCheck {
    /// The shadow of each shared array (empty when the shared checks are off).
    arrays: Vec<Box<[SCell]>>,
    /// Per thread (linear): the last warp-barrier release it passed.
    wep: Box<[Cell<u32>]>,
    races: bool,
    uninit: bool,
}

/// Whether recorded access `r` (by thread `r_tid` of the same block) is ordered before the
/// access of `me`; `wep_of(u)` is thread `u`'s last warp-barrier release.
#[inline]
fn ordered_in_block(
    r_tid: u32,
    r_epoch: u32,
    r_wep: u32,
    me: &Me,
    wep_of: impl Fn(u32) -> u32,
) -> bool {
    r_tid == me.linear
        || r_epoch != me.epoch
        || (r_tid / crate::simt::WARP_SIZE == me.linear / crate::simt::WARP_SIZE
            && r_wep < me.wep
            && r_wep < wep_of(r_tid))
}

impl BlockCheck {
    /// The state of a block of `nthreads` threads whose shared arrays have `lens` elements.
    pub(crate) fn new(nthreads: usize, lens: &[usize], checks: &Checks) -> BlockCheck {
        let arrays = if checks.shared() {
            lens.iter()
                .map(|&n| (0..n).map(|_| SCell::new()).collect())
                .collect()
        } else {
            Vec::new()
        };
        BlockCheck {
            arrays,
            wep: (0..nthreads).map(|_| Cell::new(0)).collect(),
            races: checks.shared_races,
            uninit: checks.uninit_shared,
        }
    }

    /// Notes release `r` of the warp of thread `linear`: every lane it released passed it,
    /// including those that have not resumed yet.
    pub(crate) fn warp_released(&self, linear: u32, r: crate::simt::WarpRelease) {
        let base = linear - linear % crate::simt::WARP_SIZE;
        for l in 0..crate::simt::WARP_SIZE {
            if r.lanes & (1 << l) != 0 {
                if let Some(c) = self.wep.get((base + l) as usize) {
                    c.set(c.get().max(r.number));
                }
            }
        }
    }

    /// Thread `u`'s last warp-barrier release.
    pub(crate) fn wep_of(&self, u: u32) -> u32 {
        self.wep.get(u as usize).map_or(0, Cell::get)
    }

    fn ordered(&self, r: &Rec, me: &Me) -> bool {
        r.tid == NONE || ordered_in_block(r.tid, r.epoch, r.wep, me, |u| self.wep_of(u))
    }

    /// Checks and records an access of `me` to element `i` of shared array `array` (in
    /// bounds) at statement `loc`.
    pub(crate) fn access(
        &self,
        array: usize,
        i: usize,
        me: &Me,
        kind: AccessKind,
        loc: u32,
    ) -> Result<(), Finding> {
        let Some(cell) = self.arrays.get(array).and_then(|a| a.get(i)) else {
            return Ok(());
        };
        let race = |r: &Rec| Finding::Race {
            thread: r.tid as u64,
            kind: code_kind(r.kind),
            loc: r.loc,
        };
        let rec = Rec {
            tid: me.linear,
            epoch: me.epoch,
            wep: me.wep,
            loc,
            kind: kind_code(kind),
        };
        let w = cell.w.get();
        match kind {
            AccessKind::Read => {
                if w.tid == me.linear
                    && w.epoch == me.epoch
                    && w.wep == me.wep
                    && w.kind == kind_code(AccessKind::Write)
                {
                    // Its own plain write, with no barrier since: any later access of another
                    // thread that conflicts with this read conflicts with that write already.
                    return Ok(());
                }
                if self.races && !self.ordered(&w, me) {
                    return Err(race(&w));
                }
                if self.uninit && w.tid == NONE {
                    return Err(Finding::Uninit);
                }
                if self.races {
                    let (r0, r1) = (cell.r[0].get(), cell.r[1].get());
                    let stale = |r: &Rec| r.tid == NONE || r.epoch != me.epoch;
                    if r0.tid == me.linear || (r1.tid != me.linear && stale(&r0)) {
                        cell.r[0].set(rec);
                    } else if r1.tid == me.linear || stale(&r1) {
                        cell.r[1].set(rec);
                    }
                }
            }
            AccessKind::Write | AccessKind::Atomic => {
                let atomic = kind == AccessKind::Atomic;
                if atomic && self.uninit && w.tid == NONE {
                    return Err(Finding::Uninit);
                }
                if self.races {
                    let both_atomic = atomic && w.kind == kind_code(AccessKind::Atomic);
                    if !both_atomic && !self.ordered(&w, me) {
                        return Err(race(&w));
                    }
                    for r in &cell.r {
                        let r = r.get();
                        if !self.ordered(&r, me) {
                            return Err(race(&r));
                        }
                    }
                }
                cell.w.set(rec);
            }
        }
        Ok(())
    }
}

/// One recorded access to a global element.
#[derive(Clone, Copy, Debug)]
struct GRec {
    gid: u64,
    epoch: u32,
    wep: u32,
    loc: u32,
    kind: u8,
}

const GEMPTY_REC: GRec = GRec {
    gid: GNONE,
    epoch: 0,
    wep: 0,
    loc: NONE,
    kind: 0,
};

/// The shadow of one global element.
#[derive(Clone, Copy, Debug)]
struct GCell {
    w: GRec,
    r: [GRec; 2],
}

const GEMPTY: GCell = GCell {
    w: GEMPTY_REC,
    r: [GEMPTY_REC; 2],
};

/// The global-race shadow of one launch, shared by the blocks running in parallel.
pub(crate) struct GlobalCheck {
    /// Per global buffer (by buffer number), one lock per element.
    bufs: Vec<Box<[Mutex<GCell>]>>,
    /// Threads per block.
    tpb: u64,
}

impl GlobalCheck {
    /// A shadow for buffers of `lens` elements, for blocks of `tpb` threads.
    pub(crate) fn new(lens: &[usize], tpb: u64) -> GlobalCheck {
        GlobalCheck {
            bufs: lens
                .iter()
                .map(|&n| (0..n).map(|_| Mutex::new(GEMPTY)).collect())
                .collect(),
            tpb: tpb.max(1),
        }
    }

    /// Threads per block.
    pub(crate) fn threads_per_block(&self) -> u64 {
        self.tpb
    }

    /// Checks and records an access of `me` to element `i` of buffer `buf`; `wep_of(u)` is the
    /// last warp-barrier release of thread `u` (linear) of `me`'s block.
    pub(crate) fn access(
        &self,
        buf: usize,
        i: usize,
        me: &Me,
        kind: AccessKind,
        loc: u32,
        wep_of: &dyn Fn(u32) -> u32,
    ) -> Result<(), Finding> {
        let Some(m) = self.bufs.get(buf).and_then(|b| b.get(i)) else {
            return Ok(());
        };
        let mut c = m.lock().unwrap_or_else(|e| e.into_inner());
        let tpb = self.tpb;
        let ordered = |r: &GRec| {
            r.gid == GNONE
                || r.gid == me.global
                || (r.gid / tpb == me.global / tpb
                    && ordered_in_block((r.gid % tpb) as u32, r.epoch, r.wep, me, wep_of))
        };
        let race = |r: &GRec| Finding::Race {
            thread: r.gid,
            kind: code_kind(r.kind),
            loc: r.loc,
        };
        let rec = GRec {
            gid: me.global,
            epoch: me.epoch,
            wep: me.wep,
            loc,
            kind: kind_code(kind),
        };
        match kind {
            AccessKind::Read => {
                if !ordered(&c.w) {
                    return Err(race(&c.w));
                }
                let stale = |r: &GRec| ordered(r) && r.gid != me.global;
                if c.r[0].gid == me.global {
                    c.r[0] = rec;
                } else if c.r[1].gid == me.global {
                    c.r[1] = rec;
                } else if c.r[0].gid == GNONE || stale(&c.r[0]) {
                    c.r[0] = rec;
                } else if c.r[1].gid == GNONE || stale(&c.r[1]) {
                    c.r[1] = rec;
                }
            }
            AccessKind::Write | AccessKind::Atomic => {
                let atomic = kind == AccessKind::Atomic;
                let both_atomic = atomic && c.w.kind == kind_code(AccessKind::Atomic);
                if !both_atomic && !ordered(&c.w) {
                    return Err(race(&c.w));
                }
                for r in &c.r {
                    if !ordered(r) {
                        return Err(race(r));
                    }
                }
                c.w = rec;
            }
        }
        Ok(())
    }
}
