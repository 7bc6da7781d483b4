//! Reporting: the faults a thread raises and how a block's failure becomes an [`InterpError`]
//! with source locations.

use super::super::error::{
    invalid, DivergenceGroup, Fault, InterpError, InterpErrorKind, MemorySpace, SourceLoc,
};
use super::super::value::Value;
use super::{BufView, Launch};
use crate::simt::{self, BlockFault, Site, SyncError};
use spoc_ir::BinOp;

#[cold]
pub(super) fn not_u32(v: &Value) -> Fault {
    invalid(format!("a u32 variable holds a {}", v.type_name()))
}

#[cold]
pub(super) fn not_u32_op(op: BinOp) -> Fault {
    invalid(format!("`{}` in a u32 expression", op.symbol()))
}

#[cold]
pub(super) fn div_zero() -> Fault {
    Box::new(InterpErrorKind::DivisionByZero)
}

pub(super) fn oob(space: MemorySpace, array: &str, index: u32, len: usize) -> Fault {
    Box::new(InterpErrorKind::OutOfBounds {
        space,
        array: array.to_string(),
        index: index as u64,
        len: len as u64,
    })
}

/// An out-of-bounds fault on buffer or shared array `buf`.
pub(super) fn oob_buf(buf: &BufView, index: u32) -> Fault {
    let space = if buf.shared {
        MemorySpace::Shared
    } else {
        MemorySpace::Global
    };
    oob(space, &buf.name, index, buf.len)
}

impl Launch<'_> {
    /// The source location numbered `loc`.
    pub(super) fn loc(&self, loc: u32) -> Option<SourceLoc> {
        self.prog.locs.get(loc as usize).cloned()
    }

    /// The location of sync site `s`.
    pub(super) fn site_loc(&self, s: Site) -> Option<SourceLoc> {
        let l = *self.prog.site_locs.get(s.0 as usize)?;
        self.loc(l)
    }

    /// The Interpreter's error for the fault of block `block`.
    pub(super) fn block_fault(&self, block: [u32; 3], f: BlockFault<(Fault, u32)>) -> InterpError {
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
                SyncError::PartialWarp {
                    thread,
                    site: s,
                    op,
                    present,
                    warp_lanes,
                    ..
                } => InterpError::thread(
                    name,
                    block,
                    thread,
                    self.site_loc(s),
                    InterpErrorKind::PartialWarp {
                        op: op.to_string(),
                        site: site(s),
                        present,
                        warp_lanes,
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
}
