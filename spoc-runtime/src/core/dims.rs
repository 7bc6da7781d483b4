//! Launch dimensions.

use crate::capabilities::Capabilities;
use crate::error::{DimKind, Error, LaunchProblem, Result};
use std::fmt;

/// A size in up to three dimensions: a grid (blocks per launch) or a block (threads per block).
/// Unused axes are 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dims {
    /// Size along x.
    pub x: u32,
    /// Size along y.
    pub y: u32,
    /// Size along z.
    pub z: u32,
}

impl Dims {
    /// `Dims { x, y, z }`.
    pub const fn new(x: u32, y: u32, z: u32) -> Dims {
        Dims { x, y, z }
    }

    /// The number of elements, `x * y * z`, saturating at `u64::MAX` (reached only when the
    /// product exceeds 2^64, e.g. three axes near `u32::MAX`).
    pub const fn count(&self) -> u64 {
        (self.x as u64 * self.y as u64).saturating_mul(self.z as u64)
    }

    /// `[x, y, z]`.
    pub const fn to_array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

/// `Dims { x, y: 1, z: 1 }`.
pub const fn dims1d(x: u32) -> Dims {
    Dims { x, y: 1, z: 1 }
}

/// `Dims { x, y, z: 1 }`.
pub const fn dims2d(x: u32, y: u32) -> Dims {
    Dims { x, y, z: 1 }
}

/// `Dims { x, y, z }`.
pub const fn dims3d(x: u32, y: u32, z: u32) -> Dims {
    Dims { x, y, z }
}

impl From<[u32; 3]> for Dims {
    fn from([x, y, z]: [u32; 3]) -> Dims {
        Dims { x, y, z }
    }
}

impl From<Dims> for [u32; 3] {
    fn from(d: Dims) -> [u32; 3] {
        d.to_array()
    }
}

impl From<u32> for Dims {
    fn from(x: u32) -> Dims {
        dims1d(x)
    }
}

impl From<(u32, u32)> for Dims {
    fn from((x, y): (u32, u32)) -> Dims {
        dims2d(x, y)
    }
}

impl From<(u32, u32, u32)> for Dims {
    fn from((x, y, z): (u32, u32, u32)) -> Dims {
        dims3d(x, y, z)
    }
}

impl fmt::Display for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.x, self.y, self.z)
    }
}

const AXES: [char; 3] = ['x', 'y', 'z'];

/// Grid and block against zero and the device's limits; shared memory against its limit.
pub(crate) fn check_dims(
    name: &str,
    caps: &Capabilities,
    grid: Dims,
    block: Dims,
    shared_bytes: usize,
) -> Result<()> {
    // Every launch passes this: the same checks as below, without naming a problem and
    // without branches (`v - 1 < limit`: `v` is neither 0 nor above `limit`).
    let (g, b) = (grid.to_array(), block.to_array());
    let (mg, mb) = (caps.max_grid_dims, caps.max_block_dims);
    let mut fine = (shared_bytes <= caps.shared_mem_per_block)
        & (block.count() <= caps.max_threads_per_block as u64);
    for i in 0..3 {
        fine &= (g[i].wrapping_sub(1) < mg[i])
            & (b[i].wrapping_sub(1) < mb[i])
            & (g[i] as u64 * b[i] as u64 <= u32::MAX as u64);
    }
    if fine {
        return Ok(());
    }
    dims_problem(name, caps, grid, block, shared_bytes)
}

/// [`check_dims`]'s error: the first problem, in the order grid, block, global size,
/// threads per block, shared memory.
#[cold]
fn dims_problem(
    name: &str,
    caps: &Capabilities,
    grid: Dims,
    block: Dims,
    shared_bytes: usize,
) -> Result<()> {
    let bad = |problem| Err(Error::invalid_launch(name, problem));
    for (what, d, limits) in [
        (DimKind::Grid, grid, caps.max_grid_dims),
        (DimKind::Block, block, caps.max_block_dims),
    ] {
        for ((value, limit), axis) in d.to_array().into_iter().zip(limits).zip(AXES) {
            if value == 0 {
                return bad(LaunchProblem::ZeroDim { what, axis });
            }
            if value > limit {
                return bad(LaunchProblem::DimTooLarge {
                    what,
                    axis,
                    value,
                    limit,
                });
            }
        }
    }
    for ((g, b), axis) in grid.to_array().into_iter().zip(block.to_array()).zip(AXES) {
        let total = g as u64 * b as u64;
        if total > u32::MAX as u64 {
            return bad(LaunchProblem::GlobalSizeOverflow {
                axis,
                grid: g,
                block: b,
                total,
                max: u32::MAX,
            });
        }
    }
    if block.count() > caps.max_threads_per_block as u64 {
        return bad(LaunchProblem::TooManyThreads {
            threads: block.count(),
            limit: caps.max_threads_per_block,
        });
    }
    if shared_bytes > caps.shared_mem_per_block {
        return bad(LaunchProblem::SharedMemory {
            requested: shared_bytes,
            limit: caps.shared_mem_per_block,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_fill_unused_axes_with_one() {
        assert_eq!(dims1d(7), Dims::new(7, 1, 1));
        assert_eq!(dims2d(7, 3), Dims::new(7, 3, 1));
        assert_eq!(dims3d(7, 3, 2).count(), 42);
        assert_eq!(
            dims3d(u32::MAX, u32::MAX, 1).count(),
            (u32::MAX as u64).pow(2)
        );
        assert_eq!(dims3d(u32::MAX, u32::MAX, 2).count(), u64::MAX);
        assert_eq!(Dims::from((4u32, 5u32)).to_array(), [4, 5, 1]);
    }
}
