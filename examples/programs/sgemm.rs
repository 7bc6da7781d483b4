//! `sgemm`: `C = A * B` for `n x n` f32 matrices, register-tiled as fast GEMMs are: a block of
//! `(BM / TM) x (BN / TN)` threads computes a `BM x BN` tile of `C`, each thread a `TM x TN`
//! sub-tile held in registers (a local array indexed only by `unroll`ed loop variables); the
//! `BK`-deep slices of `A` and `B` are staged in shared memory as 4-vectors (`F32x4`: one
//! 16-byte shared load gives a thread four of its operands, `ld.shared.v4.f32` in PTX),
//! double-buffered: the next slice is loaded into registers before the current one is used and
//! stored to the other buffer after it, one barrier per slice. A thread's `TN` columns are `TN / 4` groups of 4, the groups `BN / (TN / 4)` apart, so
//! the 8 threads of a quarter warp read 8 consecutive vectors of `B` (no bank conflict). The tile
//! sizes are const parameters (`TM` and `TN` multiples of 4). `2 n^3` flops; sizes that are not
//! multiples of the tiles are padded with zeros on load and cut on store.
//!
//! Checked exactly: each element is accumulated with `mul_add` in the order `p = 0, 1, …`, as
//! the fused host reference does (the zero padding adds `+0.0` products, which change nothing).

use super::matrix_mul::run_with;
use super::{blocks_for, Outcome};
use spoc::prelude::*;

/// `c = a * b` for `n x n` row-major matrices; blocks of `(BM / TM) * (BN / TN)` threads along
/// x, a grid of `ceil(n / BN) x ceil(n / BM)` blocks. `TM` and `TN` must be multiples of 4, `BM`
/// and `BN` multiples of 4 and of `TM` and `TN`.
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
    // Two slices each, as 4-vectors: A transposed (`[k][m / 4]`, a vector is 4 rows of one
    // column), B as is (`[k][j / 4]`).
    let a_tile = shared_array::<F32x4, { 2 * BK * BM / 4 }>();
    let b_tile = shared_array::<F32x4, { 2 * BK * BN / 4 }>();
    let tid = thread_idx_x();
    let tx = tid % (BN / TN);
    let ty = tid / (BN / TN);
    let row0 = block_idx_y() * BM;
    let col0 = block_idx_x() * BN;
    let mut acc = [0.0f32; TM * TN];
    let mut ra = [0.0f32; TM];
    let mut rb = [0.0f32; TN];
    // The next slice's vectors, loaded into registers before the current slice is used and
    // stored to shared memory after it (the loads' latency hidden behind the arithmetic).
    let mut ga =
        [0.0f32; 4 * ((BM * BK / 4 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))];
    let mut gb =
        [0.0f32; 4 * ((BK * BN / 4 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))];
    let slices = (n + BK - 1) / BK;
    for s in 0..slices + 1 {
        // Slice `s` is loaded, slice `s - 1` used (from buffer `(s - 1) % 2`), then slice `s`
        // stored into buffer `s % 2`; one barrier.
        if s < slices {
            let k0 = s * BK;
            // A: vector `e` is rows `4 (e / BK)` to `+3` of column `e % BK` (8 consecutive
            // threads read 32 consecutive bytes of a row).
            for l in unroll(0..(BM * BK / 4 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))
            {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                let r = row0 + (e / BK) * 4;
                let q = k0 + e % BK;
                for m in unroll(0..4) {
                    ga[4 * l + m] = if e < BM * BK / 4 && r + m < n && q < n {
                        a[(r + m) * n + q]
                    } else {
                        0.0f32
                    };
                }
            }
            // B: vector `e` is columns `4 (e % (BN / 4))` to `+3` of row `e / (BN / 4)`.
            for l in unroll(0..(BK * BN / 4 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))
            {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                let q = k0 + e / (BN / 4);
                let col = col0 + (e % (BN / 4)) * 4;
                for j in unroll(0..4) {
                    gb[4 * l + j] = if e < BK * BN / 4 && q < n && col + j < n {
                        b[q * n + col + j]
                    } else {
                        0.0f32
                    };
                }
            }
        }
        if s > 0 {
            let cur = (s - 1) % 2;
            for k in unroll(0..BK) {
                for v in unroll(0..TM / 4) {
                    let q = a_tile[cur * (BK * BM / 4) + k * (BM / 4) + ty * (TM / 4) + v];
                    ra[4 * v] = q.x;
                    ra[4 * v + 1] = q.y;
                    ra[4 * v + 2] = q.z;
                    ra[4 * v + 3] = q.w;
                }
                for g in unroll(0..TN / 4) {
                    let q = b_tile[cur * (BK * BN / 4) + k * (BN / 4) + g * (BN / TN) + tx];
                    rb[4 * g] = q.x;
                    rb[4 * g + 1] = q.y;
                    rb[4 * g + 2] = q.z;
                    rb[4 * g + 3] = q.w;
                }
                for m in unroll(0..TM) {
                    for j in unroll(0..TN) {
                        acc[m * TN + j] = ra[m].mul_add(rb[j], acc[m * TN + j]);
                    }
                }
            }
        }
        if s < slices {
            let buf = s % 2;
            for l in unroll(0..(BM * BK / 4 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))
            {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                if e < BM * BK / 4 {
                    a_tile[buf * (BK * BM / 4) + (e % BK) * (BM / 4) + e / BK] =
                        F32x4::new(ga[4 * l], ga[4 * l + 1], ga[4 * l + 2], ga[4 * l + 3]);
                }
            }
            for l in unroll(0..(BK * BN / 4 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))
            {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                if e < BK * BN / 4 {
                    b_tile[buf * (BK * BN / 4) + e] =
                        F32x4::new(gb[4 * l], gb[4 * l + 1], gb[4 * l + 2], gb[4 * l + 3]);
                }
            }
        }
        sync_threads();
    }
    for m in unroll(0..TM) {
        for j in unroll(0..TN) {
            let r = row0 + ty * TM + m;
            let col = col0 + (j / 4) * (BN / (TN / 4)) + tx * 4 + j % 4;
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
