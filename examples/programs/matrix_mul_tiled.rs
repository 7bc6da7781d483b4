//! `matrix_mul_tiled`: `C = A * B` for `n x n` f32 matrices with 16 x 16 tiles of `A` and `B`
//! staged in shared memory (`shared_array_2d`), barriers around each tile; `2 n^3` flops.
//! Checked exactly against the same host reference as `matrix_mul`: each element is still
//! summed in the order `p = 0, 1, …`, and the zero padding of a partial last tile adds only
//! zeros.

use super::matrix_mul::run_with;
use super::{blocks_for, Outcome};
use spoc::prelude::*;

/// Tile side (threads per block along x and y).
pub const TILE: u32 = 16;

/// `c = a * b` for `n x n` row-major matrices, blocks of 16 x 16 threads.
#[kernel]
pub fn matmul_tiled(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    let ta = shared_array_2d::<f32, 16, 16>();
    let tb = shared_array_2d::<f32, 16, 16>();
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let row = block_idx_y() * 16 + ty;
    let col = block_idx_x() * 16 + tx;
    let mut acc = 0.0f32;
    let tiles = (n + 15) / 16;
    for tile in 0..tiles {
        let ac = tile * 16 + tx;
        let br = tile * 16 + ty;
        ta[ty][tx] = if row < n && ac < n {
            a[row * n + ac]
        } else {
            0.0f32
        };
        tb[ty][tx] = if br < n && col < n {
            b[br * n + col]
        } else {
            0.0f32
        };
        sync_threads();
        for k in 0usize..16 {
            acc += ta[ty][k] * tb[k][tx];
        }
        sync_threads();
    }
    if row < n && col < n {
        c[row * n + col] = acc;
    }
}

/// Runs `matrix_mul_tiled` on `size x size` matrices.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let grid = dims2d(blocks_for(size, TILE), blocks_for(size, TILE));
    run_with(dev, size, "matrix_mul_tiled", false, |ab, bb, cb, n| {
        matmul_tiled.launch(dev, grid, dims2d(TILE, TILE), (ab, bb, cb, n))
    })
}
