//! `matrix_mul_tiled`: `C = A * B` for `n x n` f32 matrices with 16 x 16 tiles of `A` and `B`
//! staged in shared memory (`shared_array_2d`), barriers around each tile; `2 n^3` flops.
//! Checked exactly against the same host reference as `matrix_mul`: each element is still
//! summed in the order `p = 0, 1, …`, and the zero padding of a partial last tile adds only
//! zeros.

use super::matrix_mul::{host_matmul, inputs};
use super::{blocks_for, check_exact, time_it, Outcome, Work};
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
    let n = size;
    super::need(dev, &[(n * n, 4); 3])?;
    let (a, b) = inputs(n);
    let ab = dev.upload(&a)?;
    let bb = dev.upload(&b)?;
    let mut cb = dev.alloc::<f32>(n * n)?;
    let grid = dims2d(blocks_for(n, TILE), blocks_for(n, TILE));
    let block = dims2d(TILE, TILE);
    matmul_tiled.launch(dev, grid, block, (&ab, &bb, &mut cb, n))?; // compiles the kernel
    let seconds = time_it(dev, || {
        matmul_tiled.launch(dev, grid, block, (&ab, &bb, &mut cb, n))
    })?;
    let got = cb.to_vec()?;
    Ok(Outcome::new(
        "matrix_mul_tiled",
        size,
        format!("{n} x {n}"),
        seconds,
        Work::Flops(2.0 * (n as f64).powi(3)),
    )
    .check(check_exact("c", &got, &host_matmul(&a, &b, n))))
}
