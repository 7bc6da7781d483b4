//! `transpose_tiled`: `B = A^T` for the same `width x height` f32 matrix as `transpose`,
//! through 32 x 32 tiles in shared memory padded to 33 columns (`shared_array_2d::<f32, 32,
//! 33>`, so that reading a tile's column hits distinct banks): blocks of 32 x 8 threads, each
//! moving 4 rows, reads and writes both coalesced. 8 bytes moved per element. Checked exactly.

use super::transpose::{run_with, shape};
use super::{blocks_for, Outcome};
use spoc::prelude::*;

/// `output[x][y] = input[y][x]`, `input` `height` rows of `width`; blocks of 32 x 8 threads,
/// one 32 x 32 tile each.
#[kernel]
pub fn transpose_tiled32(input: &[f32], output: &mut [f32], width: usize, height: usize) {
    let tile = shared_array_2d::<f32, 32, 33>();
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let bx = block_idx_x() * 32;
    let by = block_idx_y() * 32;
    for j in (0usize..32).step_by(8) {
        let x = bx + tx;
        let y = by + ty + j;
        if x < width && y < height {
            tile[ty + j][tx] = input[y * width + x];
        }
    }
    sync_threads();
    for j in (0usize..32).step_by(8) {
        let x = by + tx;
        let y = bx + ty + j;
        if x < height && y < width {
            output[y * height + x] = tile[tx][ty + j];
        }
    }
}

/// Runs `transpose_tiled` (see [`shape`] for the matrix's shape).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let (w, h) = shape(size);
    let grid = dims2d(blocks_for(w, 32), blocks_for(h, 32));
    run_with(dev, size, "transpose_tiled", |ab, tb, w, h| {
        transpose_tiled32.launch(dev, grid, dims2d(32, 8), (ab, tb, w, h))
    })
}
