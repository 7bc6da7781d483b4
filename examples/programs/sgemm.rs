//! `sgemm`: `C = A * B` for `n x n` f32 matrices, register-tiled as fast GEMMs are: a block of
//! `(BM / TM) x (BN / TN)` threads computes a `BM x BN` tile of `C`, each thread a `TM x TN`
//! sub-tile held in registers (a local array indexed only by `unroll`ed loop variables); the
//! `BK`-deep slices of `A` and `B` are staged in shared memory, double-buffered (the next slice
//! is loaded while the current one is used, one barrier per slice). The tile sizes are const
//! parameters. `2 n^3` flops; sizes that are not multiples of the tiles are padded with zeros
//! on load and cut on store.
//!
//! Checked exactly: each element is accumulated with `mul_add` in the order `p = 0, 1, …`, as
//! the fused host reference does (the zero padding adds `+0.0` products, which change nothing).

use super::matrix_mul::run_with;
use super::{blocks_for, Outcome};
use spoc::prelude::*;

/// `c = a * b` for `n x n` row-major matrices; blocks of `(BM / TM) * (BN / TN)` threads along
/// x, a grid of `ceil(n / BN) x ceil(n / BM)` blocks. `BM * BK` and `BK * BN` must be multiples
/// of the block's thread count.
#[kernel(instances((128, 128, 8, 8, 8), (64, 64, 8, 4, 4)))]
pub fn sgemm<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const TM: usize,
    const TN: usize,
>(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    n: usize,
) {
    // Two slices each: A transposed (`[k][m]`, so a thread's TM values are consecutive), B as is.
    let a_tile = shared_array::<f32, { 2 * BK * BM }>();
    let b_tile = shared_array::<f32, { 2 * BK * BN }>();
    let tid = thread_idx_x();
    let tx = tid % (BN / TN);
    let ty = tid / (BN / TN);
    let row0 = block_idx_y() * BM;
    let col0 = block_idx_x() * BN;
    let mut acc = [0.0f32; TM * TN];
    let mut ra = [0.0f32; TM];
    let mut rb = [0.0f32; TN];
    let slices = (n + BK - 1) / BK;
    // Slice 0 into buffer 0.
    for l in unroll(0..(BM * BK) / ((BM / TM) * (BN / TN))) {
        let e = l * ((BM / TM) * (BN / TN)) + tid;
        let m = e / BK;
        let k = e % BK;
        let r = row0 + m;
        let q = k;
        a_tile[k * BM + m] = if r < n && q < n { a[r * n + q] } else { 0.0f32 };
    }
    for l in unroll(0..(BK * BN) / ((BM / TM) * (BN / TN))) {
        let e = l * ((BM / TM) * (BN / TN)) + tid;
        let k = e / BN;
        let j = e % BN;
        let q = k;
        let col = col0 + j;
        b_tile[k * BN + j] = if q < n && col < n {
            b[q * n + col]
        } else {
            0.0f32
        };
    }
    sync_threads();
    for s in 0..slices {
        let cur = s % 2;
        // The next slice into the other buffer, while this one is read.
        if s + 1 < slices {
            let nxt = 1 - cur;
            let k0 = (s + 1) * BK;
            for l in unroll(0..(BM * BK) / ((BM / TM) * (BN / TN))) {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                let m = e / BK;
                let k = e % BK;
                let r = row0 + m;
                let q = k0 + k;
                a_tile[nxt * BK * BM + k * BM + m] =
                    if r < n && q < n { a[r * n + q] } else { 0.0f32 };
            }
            for l in unroll(0..(BK * BN) / ((BM / TM) * (BN / TN))) {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                let k = e / BN;
                let j = e % BN;
                let q = k0 + k;
                let col = col0 + j;
                b_tile[nxt * BK * BN + k * BN + j] = if q < n && col < n {
                    b[q * n + col]
                } else {
                    0.0f32
                };
            }
        }
        for k in unroll(0..BK) {
            for m in unroll(0..TM) {
                ra[m] = a_tile[cur * BK * BM + k * BM + ty * TM + m];
            }
            for j in unroll(0..TN) {
                rb[j] = b_tile[cur * BK * BN + k * BN + tx * TN + j];
            }
            for m in unroll(0..TM) {
                for j in unroll(0..TN) {
                    acc[m * TN + j] = ra[m].mul_add(rb[j], acc[m * TN + j]);
                }
            }
        }
        sync_threads();
    }
    for m in unroll(0..TM) {
        for j in unroll(0..TN) {
            let r = row0 + ty * TM + m;
            let col = col0 + tx * TN + j;
            if r < n && col < n {
                c[r * n + col] = acc[m * TN + j];
            }
        }
    }
}

/// Runs `sgemm` with 128 x 128 tiles (8 deep, 8 x 8 per thread: 256 threads a block) on
/// `size x size` matrices.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let grid = dims2d(blocks_for(size, 128), blocks_for(size, 128));
    run_with(dev, size, "sgemm", true, |ab, bb, cb, n| {
        sgemm::<128, 128, 8, 8, 8>.launch(dev, grid, dims1d(256), (ab, bb, cb, n))
    })
}

/// Runs `sgemm` with 64 x 64 tiles (8 deep, 4 x 4 per thread: 256 threads a block).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run_64(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let grid = dims2d(blocks_for(size, 64), blocks_for(size, 64));
    run_with(dev, size, "sgemm_64", true, |ab, bb, cb, n| {
        sgemm::<64, 64, 8, 4, 4>.launch(dev, grid, dims1d(256), (ab, bb, cb, n))
    })
}
