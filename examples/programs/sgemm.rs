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

use super::matrix_mul::{run_with, run_with_elems};
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

/// `c = a * b` for `n x n` row-major matrices held as rows of 4-vectors (`n` a multiple of 4;
/// each buffer `n * n / 4` vectors): the `sgemm` scheme with 16-byte global loads and stores.
/// Blocks of `(BM / TM) * (BN / TN)` threads along x, a grid of `ceil(n / BN) x ceil(n / BM)`.
///
/// A slice of `A` is loaded as 4 x 4 squares (4 rows, 4 consecutive `k`: four vector loads per
/// thread, by the first `BM * BK / 16` threads) and transposed in registers, so that it is stored
/// as whole vectors of the `[k][m / 4]` tile the arithmetic reads; a slice of `B` is one vector
/// per thread and step, stored as it is. Same arithmetic, order and zero padding as `sgemm`; the
/// bounds are checked per vector, exact because `n` is a multiple of 4. (Storing each row's
/// vector of `A` as four lane stores, `a_tile[..].x = ..`, spreads the loads over all threads
/// but needs a `match` on the lane: on the H200 it was 13 % slower through PTX.)
#[kernel(instances((128, 256, 8, 8, 16), (128, 256, 16, 8, 16)))]
pub fn sgemm_v4<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const TM: usize,
    const TN: usize,
>(
    a: &[F32x4],
    b: &[F32x4],
    c: &mut [F32x4],
    n: usize,
) {
    let a_tile = shared_array::<F32x4, { 2 * BK * BM / 4 }>();
    let b_tile = shared_array::<F32x4, { 2 * BK * BN / 4 }>();
    let tid = thread_idx_x();
    let tx = tid % (BN / TN);
    let ty = tid / (BN / TN);
    let row0 = block_idx_y() * BM;
    let col0 = block_idx_x() * BN;
    let n4 = n / 4;
    let mut acc = [0.0f32; TM * TN];
    let mut ra = [0.0f32; TM];
    let mut rb = [0.0f32; TN];
    // The next slice in registers: `ga[16 l + 4 m + i]` is row `m`, lane (k) `i` of square
    // `l`; `gb[4 l + j]` lane `j` of vector `l`.
    let mut ga =
        [0.0f32; 16 * ((BM * BK / 16 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))];
    let mut gb =
        [0.0f32; 4 * ((BK * BN / 4 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))];
    let slices = (n + BK - 1) / BK;
    for s in 0..slices + 1 {
        if s < slices {
            let k0 = s * BK;
            // Square `e`: rows `4 (e / (BK / 4))` to `+3` of the tile, vector column
            // `k0 / 4 + e % (BK / 4)`.
            for l in unroll(0..(BM * BK / 16 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))
            {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                let r = row0 + (e / (BK / 4)) * 4;
                let kv = k0 / 4 + e % (BK / 4);
                for m in unroll(0..4) {
                    let v = if e < BM * BK / 16 && r + m < n && kv < n4 {
                        a[(r + m) * n4 + kv]
                    } else {
                        F32x4::splat(0.0f32)
                    };
                    ga[16 * l + 4 * m] = v.x;
                    ga[16 * l + 4 * m + 1] = v.y;
                    ga[16 * l + 4 * m + 2] = v.z;
                    ga[16 * l + 4 * m + 3] = v.w;
                }
            }
            // Vector `e`: row `k0 + e / (BN / 4)`, vector column `col0 / 4 + e % (BN / 4)`.
            for l in unroll(0..(BK * BN / 4 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))
            {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                let q = k0 + e / (BN / 4);
                let cv = col0 / 4 + e % (BN / 4);
                let v = if e < BK * BN / 4 && q < n && cv < n4 {
                    b[q * n4 + cv]
                } else {
                    F32x4::splat(0.0f32)
                };
                gb[4 * l] = v.x;
                gb[4 * l + 1] = v.y;
                gb[4 * l + 2] = v.z;
                gb[4 * l + 3] = v.w;
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
            for l in unroll(0..(BM * BK / 16 + (BM / TM) * (BN / TN) - 1) / ((BM / TM) * (BN / TN)))
            {
                let e = l * ((BM / TM) * (BN / TN)) + tid;
                if e < BM * BK / 16 {
                    // Column `k = 4 (e % (BK / 4)) + i` of the square: one vector of its 4 rows.
                    let base = buf * (BK * BM / 4) + (e % (BK / 4)) * 4 * (BM / 4) + e / (BK / 4);
                    for i in unroll(0..4) {
                        a_tile[base + i * (BM / 4)] = F32x4::new(
                            ga[16 * l + i],
                            ga[16 * l + 4 + i],
                            ga[16 * l + 8 + i],
                            ga[16 * l + 12 + i],
                        );
                    }
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
        let r = row0 + ty * TM + m;
        for g in unroll(0..TN / 4) {
            let cv = col0 / 4 + g * (BN / TN) + tx;
            if r < n && cv < n4 {
                c[r * n4 + cv] = F32x4::new(
                    acc[m * TN + 4 * g],
                    acc[m * TN + 4 * g + 1],
                    acc[m * TN + 4 * g + 2],
                    acc[m * TN + 4 * g + 3],
                );
            }
        }
    }
}

/// Shared memory of [`sgemm_v4`] with 128 x 256 tiles `BK` deep, double-buffered, in bytes:
/// `2 * BK * (128 + 256) * 4` (49 152 for `BK = 16`, 24 576 for `BK = 8`).
pub const fn sgemm_v4_shared_bytes(bk: usize) -> usize {
    2 * bk * (128 + 256) * 4
}

/// Runs `sgemm` on `size x size` matrices: [`sgemm_v4`] with 128 x 256 tiles (8 x 16 per
/// thread: 256 threads a block) when `size` is a multiple of 4, else [`sgemm`] with 128 x 128
/// tiles (8 deep, 8 x 8 per thread). The `sgemm_v4` slices are 16 deep where the device's
/// shared memory per block holds them ([`sgemm_v4_shared_bytes`]`(16)` = 48 KiB: the H200's
/// CUDA and Vulkan devices; through CuPy on the H200, 16 deep ran 25.4 ms at 8192 where 8 deep ran 26.8), else 8 deep
/// (lavapipe has 32 KiB).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    if size.is_multiple_of(4) {
        let grid = dims2d(blocks_for(size, 256), blocks_for(size, 128));
        let deep = dev.capabilities.shared_mem_per_block >= sgemm_v4_shared_bytes(16);
        return run_with_elems(
            dev,
            size,
            "sgemm",
            true,
            F32x4::from_slice,
            F32x4::flatten,
            |ab, bb, cb, n| {
                if deep {
                    sgemm_v4::<128, 256, 16, 8, 16>.launch(dev, grid, dims1d(256), (ab, bb, cb, n))
                } else {
                    sgemm_v4::<128, 256, 8, 8, 16>.launch(dev, grid, dims1d(256), (ab, bb, cb, n))
                }
            },
        );
    }
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
