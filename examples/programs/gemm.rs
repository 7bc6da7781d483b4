//! `gemm_bf16`, `gemm_f16`: `C = A * B` with 16-bit float inputs and `f32` accumulation and
//! output, on the warp-level matrix multiply-accumulate (`mma_sync_m16n8k16_bf16` /
//! `mma_sync_m16n8k16_f16`: tensor cores on CUDA sm_80 and newer, an exact emulation on Native
//! and the Interpreter). `A` is `m x k`, `B` is `k x n`, `C` is `m x n`, all row-major (as
//! `torch.matmul` takes them); `C` is overwritten (`beta = 0`, no `alpha`: a pass does not read
//! what it writes, so the timing passes can repeat it). `2 m n k` flops.
//!
//! ## The kernel
//!
//! A block of `(BM / WM) x (BN / WN)` warps computes a `BM x BN` tile of `C`; each warp a
//! `WM x WN` sub-tile as `(WM / 16) x (WN / 8)` accumulators of the `m16n8k16` shape (four
//! `f32` a lane each, in registers: a local array indexed only by `unroll`ed loop variables).
//! Along `k` the block walks `BK`-deep slices of `A` and `B`, staged through shared memory as
//! *pairs*: each `u32` of shared memory holds two consecutive-`k` values packed as the fragment
//! registers want them (`pack_bf16x2(lo, hi)`), so a lane reads each fragment register with one
//! 32-bit shared load:
//!
//! - `A` slice: `a_tile[r][kp]`, row `r` of the tile, pair `kp` (columns `2 kp`, `2 kp + 1`),
//!   rows `BK / 2 + 4` words apart: the 32 lanes reading a fragment register (rows `g`, pairs
//!   `t`, with `g = lane / 4`, `t = lane % 4`) hit 32 different banks;
//! - `B` slice: `b_tile[kp][c]`, pair `kp` (rows `2 kp`, `2 kp + 1` of `B`) of column `c`,
//!   `BN + 8` words a pair-row: a fragment register (column `g`, pair `t`) is again 32 banks,
//!   and the stores of consecutive columns are consecutive words.
//!
//! The slices are double-buffered as in `sgemm`: the next slice is loaded from global memory
//! into registers before the current one is multiplied, stored to the other buffer after it,
//! one barrier per slice. Sizes that are not multiples of the tiles are handled by zero-filled
//! loads outside the matrices (a pair half outside `k` is `0`) and guarded stores, so any
//! `m, n, k >= 1` works; the zero products change no sum (see below).
//!
//! Instances: [`Tiles::Big`] (`128 x 128` tiles, 32 deep, 8 warps of `64 x 32`: 16 accumulators,
//! 37 KB of shared memory) where the device's shared memory per block holds it, else
//! [`Tiles::Small`] (`64 x 64`, 32 deep, 4 warps of `32 x 32`, 19.5 KB). Both are tested on the CPU
//! backends (`examples/tests/gemm.rs`).
//!
//! ## Checking
//!
//! The inputs are uniform in `[-1, 1)` rounded to the 16-bit type; the host reference
//! accumulates the exact `f32` products (a product of two `bf16` or two `f16` values is exact in
//! `f32`) in `k` order from `+0.0`, rounding each sum to `f32`. Native and the Interpreter
//! emulate the `mma` as exactly that order (`docs/LANGUAGE.md`, "Warp-level matrix
//! multiply-accumulate"), and the zero padding adds `±0` to a sum that is never `-0`, so they are
//! checked **bit for bit**. A GPU's tensor cores add in an order and with an intermediate
//! rounding the PTX ISA leaves unspecified: there each element must be within
//! `(k + 1) · ε · Σ|a·b|` of the reference (`ε = 2^-23`), the classical bound on the error of
//! a sum of `k` terms in any order. Products above [`FULL_CHECK_MAX`]`³` check
//! [`SAMPLED_ROWS`] rows.
//!
//! Devices that do not lower the `mma` refuse the launch with `Error::FeatureNotSupported`
//! (OpenCL, Vulkan, HIP, Metal/WebGPU: not lowered; CUDA below compute capability 8.0): the
//! driver returns the error, which the programs test and `bench` list as *skipped* with its
//! reason.
//!
//! ## Eight values a load: the `v8` kernels
//!
//! Where `k` and `n` are multiples of 8 ([`vectors_fit`]) the program runs [`gemm_bf16_v8`] /
//! [`gemm_f16_v8`] instead: the same tiles, fragments and `mma`, but `A` and `B` are uploaded as
//! `U32x4`s (eight 16-bit values in memory order, the pairs of a row packed as `pack_*x2`
//! packs them) and each thread loads 16 bytes at a time: a 4-vector of `A` is four pairs of one
//! row as they go to shared memory; two 4-vectors of `B` (rows `q` and `q + 1`, the same eight
//! columns) are re-paired by column with shifts and masks. A row outside `m`, a vector outside
//! `k` or `n` loads zeros (the multiples of 8 make every vector all in or all out).
//!
//! A thread now writes four (`A`) or eight (`B`) consecutive words of a tile row, so with the
//! unswizzled layouts the lanes of a warp would write 4 (`A`) and 8 (`B`) words to one bank at
//! a time. Both tiles are stored swizzled, each word moving only inside its group of four
//! (`A`) or eight (`B`), by an XOR with a value the row gives: pair `p` of tile row `r` of `A`
//! at `(p & !3) | ((p & 3) ^ (r % 4))`; column `c = 8 cv + i` of pair-row `kp` of `B` at
//! `8 cv + (i ^ (cv / 4 + (BN / 32) * (kp % (256 / BN))))`. With rows `BK / 2 + 4` and
//! `BN + 8` words apart, the stores of a warp and the fragment reads (rows `g`, pairs `t`;
//! columns `g`, pairs `t`) then hit 32 different banks each (the derivation is the comment in
//! the kernel; the CPU backends check the layout bit for bit in `examples/tests/gemm.rs`).
//!
//! ## What a faster version needs (not here)
//!
//! The fragments are read from shared memory one 32-bit load per register; the CUDA peers
//! (cuBLAS) reach their speed with `ldmatrix` (a fragment in one instruction), `cp.async`
//! (global to shared without registers, several stages in flight), and on Hopper `wgmma`
//! (warpgroup-wide, operands straight from shared memory through matrix descriptors) with TMA
//! bulk copies. None of these is in spoc's language yet (issue 14).
//!
//! When this program was written no GPU was at hand: it ran on Native and the Interpreter (bit
//! for bit), its PTX was assembled by `ptxas` for sm_80 and sm_90 (the 128 x 128 instance: 128
//! registers, no stack, no spills) and its CUDA C checked by clang's CUDA front end
//! (`examples/tests/gemm.rs`); its first GPU run and timings are still to come.

use super::matrix_mul::{FULL_CHECK_MAX, SAMPLED_ROWS};
use super::{blocks_for, check_close, check_exact, need, time_it, Outcome, SplitMix64, Work};
use rayon::prelude::*;
use spoc::prelude::*;

/// Writes the tiled kernel `$name` for the 16-bit type `$half`, packed by `$pack` and multiplied
/// by `$mma`: [`gemm_bf16`] and [`gemm_f16`] are this one body, the same bit for bit but for
/// the type.
macro_rules! gemm_kernel {
    ($(#[$doc:meta])* $name:ident, $half:ident, $pack:ident, $mma:ident) => {
        $(#[$doc])*
        ///
        /// Const parameters: the block tile `BM x BN`, its depth `BK` (a multiple of 16) and a
        /// warp's tile `WM x WN` (multiples of 16 and 8); `BM * BK / 2` and `BK * BN / 2` must
        /// be multiples of the block's thread count, `32 * (BM / WM) * (BN / WN)`. Launch: blocks
        /// of that many threads along x, a grid of `ceil(n / BN) x ceil(m / BM)` blocks.
        #[kernel(instances((128, 128, 32, 64, 32), (64, 64, 32, 32, 32), (128, 128, 32, 64, 64)))]
        pub fn $name<
            const BM: usize,
            const BN: usize,
            const BK: usize,
            const WM: usize,
            const WN: usize,
        >(
            m: usize,
            n: usize,
            k: usize,
            a: &[$half],
            b: &[$half],
            c: &mut [f32],
        ) {
            // Two slices each (double buffer), as packed pairs along k.
            let a_tile = shared_array::<u32, { 2 * BM * (BK / 2 + 4) }>();
            let b_tile = shared_array::<u32, { 2 * (BK / 2) * (BN + 8) }>();
            let tid = thread_idx_x();
            let lane = tid % 32;
            let warp = tid / 32;
            let g = lane / 4;
            let t = lane % 4;
            // This warp's sub-tile: rows `wr`, columns `wc` of the tile.
            let wr = (warp / (BN / WN)) * WM;
            let wc = (warp % (BN / WN)) * WN;
            let row0 = block_idx_y() * BM;
            let col0 = block_idx_x() * BN;
            // Accumulator (i, j) (rows wr + 16 i, columns wc + 8 j) is acc[4 (i (WN / 8) + j)..].
            let mut acc = [0.0f32; 4 * (WM / 16) * (WN / 8)];
            let mut fa = [0u32; 4 * (WM / 16)];
            let mut fb = [0u32; 2 * (WN / 8)];
            // The next slice's pairs, loaded before the current slice is multiplied.
            let mut ga = [0u32; BM * BK / 2 / (32 * (BM / WM) * (BN / WN))];
            let mut gb = [0u32; BK * BN / 2 / (32 * (BM / WM) * (BN / WN))];
            let slices = (k + BK - 1) / BK;
            for s in 0..slices + 1 {
                // Slice `s` is loaded, slice `s - 1` multiplied (buffer `(s - 1) % 2`), then
                // slice `s` stored into buffer `s % 2`; one barrier.
                if s < slices {
                    let k0 = s * BK;
                    // A: pair `e` is row `e / (BK / 2)`, pair `e % (BK / 2)` (16 consecutive
                    // threads read 64 consecutive bytes of a row).
                    for l in unroll(0..BM * BK / 2 / (32 * (BM / WM) * (BN / WN))) {
                        let e = l * (32 * (BM / WM) * (BN / WN)) + tid;
                        let r = row0 + e / (BK / 2);
                        let q = k0 + 2 * (e % (BK / 2));
                        let lo = if r < m && q < k { a[r * k + q] } else { $half::ZERO };
                        let hi = if r < m && q + 1 < k { a[r * k + q + 1] } else { $half::ZERO };
                        ga[l] = $pack(lo, hi);
                    }
                    // B: pair `e` is pair-row `e / BN`, column `e % BN` (consecutive threads,
                    // consecutive columns of two rows).
                    for l in unroll(0..BK * BN / 2 / (32 * (BM / WM) * (BN / WN))) {
                        let e = l * (32 * (BM / WM) * (BN / WN)) + tid;
                        let q = k0 + 2 * (e / BN);
                        let col = col0 + e % BN;
                        let lo = if q < k && col < n { b[q * n + col] } else { $half::ZERO };
                        let hi = if q + 1 < k && col < n {
                            b[(q + 1) * n + col]
                        } else {
                            $half::ZERO
                        };
                        gb[l] = $pack(lo, hi);
                    }
                }
                if s > 0 {
                    let at = ((s - 1) % 2) * (BM * (BK / 2 + 4));
                    let bt = ((s - 1) % 2) * ((BK / 2) * (BN + 8));
                    for ks in unroll(0..BK / 16) {
                        let kp = ks * 8 + t;
                        // A fragment i: rows g and g + 8 of the 16, pairs t and t + 4.
                        for i in unroll(0..WM / 16) {
                            let top = at + (wr + 16 * i + g) * (BK / 2 + 4) + kp;
                            let bottom = top + 8 * (BK / 2 + 4);
                            fa[4 * i] = a_tile[top];
                            fa[4 * i + 1] = a_tile[bottom];
                            fa[4 * i + 2] = a_tile[top + 4];
                            fa[4 * i + 3] = a_tile[bottom + 4];
                        }
                        // B fragment j: column g of the 8, pairs t and t + 4.
                        for j in unroll(0..WN / 8) {
                            let at_b = bt + kp * (BN + 8) + wc + 8 * j + g;
                            fb[2 * j] = b_tile[at_b];
                            fb[2 * j + 1] = b_tile[at_b + 4 * (BN + 8)];
                        }
                        for i in unroll(0..WM / 16) {
                            for j in unroll(0..WN / 8) {
                                let x = 4 * (i * (WN / 8) + j);
                                let frag_a = U32x4::new(
                                    fa[4 * i],
                                    fa[4 * i + 1],
                                    fa[4 * i + 2],
                                    fa[4 * i + 3],
                                );
                                let d = $mma(
                                    frag_a,
                                    U32x2::new(fb[2 * j], fb[2 * j + 1]),
                                    F32x4::new(acc[x], acc[x + 1], acc[x + 2], acc[x + 3]),
                                );
                                acc[x] = d.x;
                                acc[x + 1] = d.y;
                                acc[x + 2] = d.z;
                                acc[x + 3] = d.w;
                            }
                        }
                    }
                }
                if s < slices {
                    let at = (s % 2) * (BM * (BK / 2 + 4));
                    let bt = (s % 2) * ((BK / 2) * (BN + 8));
                    for l in unroll(0..BM * BK / 2 / (32 * (BM / WM) * (BN / WN))) {
                        let e = l * (32 * (BM / WM) * (BN / WN)) + tid;
                        a_tile[at + (e / (BK / 2)) * (BK / 2 + 4) + e % (BK / 2)] = ga[l];
                    }
                    for l in unroll(0..BK * BN / 2 / (32 * (BM / WM) * (BN / WN))) {
                        let e = l * (32 * (BM / WM) * (BN / WN)) + tid;
                        b_tile[bt + (e / BN) * (BN + 8) + e % BN] = gb[l];
                    }
                }
                sync_threads();
            }
            // Accumulator (i, j): this lane's elements are rows g, g + 8 and columns 2t, 2t + 1
            // of its 16 x 8 tile.
            for i in unroll(0..WM / 16) {
                for j in unroll(0..WN / 8) {
                    let x = 4 * (i * (WN / 8) + j);
                    let r = row0 + wr + 16 * i + g;
                    let col = col0 + wc + 8 * j + 2 * t;
                    if r < m && col < n {
                        c[r * n + col] = acc[x];
                    }
                    if r < m && col + 1 < n {
                        c[r * n + col + 1] = acc[x + 1];
                    }
                    if r + 8 < m && col < n {
                        c[(r + 8) * n + col] = acc[x + 2];
                    }
                    if r + 8 < m && col + 1 < n {
                        c[(r + 8) * n + col + 1] = acc[x + 3];
                    }
                }
            }
        }
    };
}

gemm_kernel!(
    /// `c = a * b` for row-major `bf16` matrices `a` (`m x k`) and `b` (`k x n`) into the
    /// row-major `f32` `c` (`m x n`), through `mma_sync_m16n8k16_bf16` (module docs).
    gemm_bf16,
    bf16,
    pack_bf16x2,
    mma_sync_m16n8k16_bf16
);

gemm_kernel!(
    /// [`gemm_bf16`] on `f16` inputs, through `mma_sync_m16n8k16_f16`.
    gemm_f16,
    f16,
    pack_f16x2,
    mma_sync_m16n8k16_f16
);

macro_rules! gemm_v8_kernel {
    ($(#[$doc:meta])* $name:ident, $mma:ident) => {
        $(#[$doc])*
        #[kernel(instances((128, 128, 32, 64, 32), (64, 64, 32, 32, 32), (128, 128, 32, 64, 64)))]
        pub fn $name<
            const BM: usize,
            const BN: usize,
            const BK: usize,
            const WM: usize,
            const WN: usize,
        >(
            m: usize,
            n: usize,
            k: usize,
            a: &[U32x4],
            b: &[U32x4],
            c: &mut [f32],
        ) {
            let a_tile = shared_array::<u32, { 2 * BM * (BK / 2 + 4) }>();
            let b_tile = shared_array::<u32, { 2 * (BK / 2) * (BN + 8) }>();
            let tid = thread_idx_x();
            let lane = tid % 32;
            let warp = tid / 32;
            let g = lane / 4;
            let t = lane % 4;
            let wr = (warp / (BN / WN)) * WM;
            let wc = (warp % (BN / WN)) * WN;
            let row0 = block_idx_y() * BM;
            let col0 = block_idx_x() * BN;
            let k8 = k / 8;
            let n8 = n / 8;
            // Every address below is a per-thread part, computed here once, plus a constant of
            // the unrolled copy (`ptxas` folds it into the load's or store's offset).
            //
            // The swizzles (module docs). `A`: tile row `r` keeps pair `p` of a group of four at
            // `p ^ (r % 4)`. A store of word `w` by the 32 lanes (rows `r0 + lane / 4`, vectors
            // `lane % 4`) hits bank `(20 r + 4 v + (w ^ r % 4)) % 32` (`BK = 32`): `20 r + 4 v`
            // takes each multiple of 4 for four lanes, whose rows are `{x, x + 1, x + 2, x + 3}`
            // mod 4: four different XORs, 32 banks. A lane reads rows with `r % 4 == g % 4`.
            // `B`: pair-row `kp` keeps column `8 cv + i` at `8 cv + (i ^ f)`, `f = cv / 4 +
            // (BN / 32) * (kp % R)`, `R = 256 / BN` pair-rows a warp stores at once (`BN / 8`
            // vectors each); rows are `BN + 8 = 8 (mod 32)` words apart, so word `w` of the lanes
            // goes to bank `8 (kp + cv) + (w ^ f) (mod 32)`: the eight lanes of one
            // `(kp + cv) % 4` have eight different `f`. A fragment read (column `g` of vector
            // `cv`, pair-row `8 ks + t`, so `kp % R == t % R`) hits `8 (t + cv) + (g ^ f)`: for
            // each `t` a permutation of eight banks. A warp's columns `wc + 8 j` (`wc` a multiple
            // of 32) have `cv / 4 == wc / 32 + j / 4`.
            let a_frag = (wr + g) * (BK / 2 + 4) + (t ^ (g % 4));
            let b_row = t * (BN + 8) + wc;
            let b_f = wc / 32 + (BN / 32) * (t % (256 / BN));
            // Global loads and tile stores: thread `tid` takes 4-vector `tid` of each group of
            // `THREADS` (`A`: `BK / 8` a row; `B`: `BN / 8` a pair-row).
            let a_r = tid / (BK / 8);
            let a_v = tid % (BK / 8);
            let a_store = a_r * (BK / 2 + 4) + 4 * a_v;
            let a_sw = a_r % 4;
            let b_kp = tid / (BN / 8);
            let b_v = tid % (BN / 8);
            let b_store = b_kp * (BN + 8) + 8 * b_v;
            let b_sw = b_v / 4 + (BN / 32) * (b_kp % (256 / BN));
            let mut acc = [0.0f32; 4 * (WM / 16) * (WN / 8)];
            let mut fa = [0u32; 4 * (WM / 16)];
            let mut fb = [0u32; 2 * (WN / 8)];
            let mut ga = [0u32; 4 * (BM * BK / 8 / (32 * (BM / WM) * (BN / WN)))];
            let mut gb = [0u32; 8 * (BK * BN / 16 / (32 * (BM / WM) * (BN / WN)))];
            let slices = (k + BK - 1) / BK;
            for s in 0..slices + 1 {
                if s < slices {
                    // `A`: one 4-vector (eight values of a row, four pairs) a load.
                    for l in unroll(0..BM * BK / 8 / (32 * (BM / WM) * (BN / WN))) {
                        let r = row0 + a_r + l * ((32 * (BM / WM) * (BN / WN)) / (BK / 8));
                        let kv = s * (BK / 8) + a_v;
                        let v = if r < m && kv < k8 {
                            a[r * k8 + kv]
                        } else {
                            U32x4::splat(0u32)
                        };
                        ga[4 * l] = v.x;
                        ga[4 * l + 1] = v.y;
                        ga[4 * l + 2] = v.z;
                        ga[4 * l + 3] = v.w;
                    }
                    // `B`: eight columns of rows `q` and `q + 1`, re-paired by column.
                    for l in unroll(0..BK * BN / 16 / (32 * (BM / WM) * (BN / WN))) {
                        let q = s * BK + 2 * (b_kp + l * ((32 * (BM / WM) * (BN / WN)) / (BN / 8)));
                        let cv = col0 / 8 + b_v;
                        let inside = q < k && cv < n8;
                        let x = if inside { b[q * n8 + cv] } else { U32x4::splat(0u32) };
                        let y = if inside {
                            b[(q + 1) * n8 + cv]
                        } else {
                            U32x4::splat(0u32)
                        };
                        gb[8 * l] = (x.x & 0xffff) | (y.x << 16);
                        gb[8 * l + 1] = (x.x >> 16) | (y.x & 0xffff_0000);
                        gb[8 * l + 2] = (x.y & 0xffff) | (y.y << 16);
                        gb[8 * l + 3] = (x.y >> 16) | (y.y & 0xffff_0000);
                        gb[8 * l + 4] = (x.z & 0xffff) | (y.z << 16);
                        gb[8 * l + 5] = (x.z >> 16) | (y.z & 0xffff_0000);
                        gb[8 * l + 6] = (x.w & 0xffff) | (y.w << 16);
                        gb[8 * l + 7] = (x.w >> 16) | (y.w & 0xffff_0000);
                    }
                }
                if s > 0 {
                    let at = ((s - 1) % 2) * (BM * (BK / 2 + 4)) + a_frag;
                    let bt = ((s - 1) % 2) * ((BK / 2) * (BN + 8)) + b_row;
                    for ks in unroll(0..BK / 16) {
                        for i in unroll(0..WM / 16) {
                            let top = at + (16 * i * (BK / 2 + 4) + ks * 8);
                            let bottom = at + ((16 * i + 8) * (BK / 2 + 4) + ks * 8);
                            fa[4 * i] = a_tile[top];
                            fa[4 * i + 1] = a_tile[bottom];
                            fa[4 * i + 2] = a_tile[top + 4];
                            fa[4 * i + 3] = a_tile[bottom + 4];
                        }
                        for j in unroll(0..WN / 8) {
                            let at_b = bt + (g ^ (b_f + j / 4)) + (ks * 8 * (BN + 8) + 8 * j);
                            fb[2 * j] = b_tile[at_b];
                            fb[2 * j + 1] = b_tile[at_b + 4 * (BN + 8)];
                        }
                        for i in unroll(0..WM / 16) {
                            for j in unroll(0..WN / 8) {
                                let x = 4 * (i * (WN / 8) + j);
                                let d = $mma(
                                    U32x4::new(fa[4 * i], fa[4 * i + 1], fa[4 * i + 2], fa[4 * i + 3]),
                                    U32x2::new(fb[2 * j], fb[2 * j + 1]),
                                    F32x4::new(acc[x], acc[x + 1], acc[x + 2], acc[x + 3]),
                                );
                                acc[x] = d.x;
                                acc[x + 1] = d.y;
                                acc[x + 2] = d.z;
                                acc[x + 3] = d.w;
                            }
                        }
                    }
                }
                if s < slices {
                    let at = (s % 2) * (BM * (BK / 2 + 4)) + a_store;
                    let bt = (s % 2) * ((BK / 2) * (BN + 8)) + b_store;
                    for l in unroll(0..BM * BK / 8 / (32 * (BM / WM) * (BN / WN))) {
                        let rows = l * ((32 * (BM / WM) * (BN / WN)) / (BK / 8)) * (BK / 2 + 4);
                        for w in unroll(0..4) {
                            a_tile[at + (w ^ a_sw) + rows] = ga[4 * l + w];
                        }
                    }
                    for l in unroll(0..BK * BN / 16 / (32 * (BM / WM) * (BN / WN))) {
                        let rows = l * ((32 * (BM / WM) * (BN / WN)) / (BN / 8)) * (BN + 8);
                        for w in unroll(0..8) {
                            b_tile[bt + (w ^ b_sw) + rows] = gb[8 * l + w];
                        }
                    }
                }
                sync_threads();
            }
            for i in unroll(0..WM / 16) {
                for j in unroll(0..WN / 8) {
                    let x = 4 * (i * (WN / 8) + j);
                    let r = row0 + wr + 16 * i + g;
                    let col = col0 + wc + 8 * j + 2 * t;
                    if r < m && col < n {
                        c[r * n + col] = acc[x];
                    }
                    if r < m && col + 1 < n {
                        c[r * n + col + 1] = acc[x + 1];
                    }
                    if r + 8 < m && col < n {
                        c[(r + 8) * n + col] = acc[x + 2];
                    }
                    if r + 8 < m && col + 1 < n {
                        c[(r + 8) * n + col + 1] = acc[x + 3];
                    }
                }
            }
        }
    };
}

gemm_v8_kernel!(
    /// [`gemm_bf16`] for `k` and `n` multiples of 8, reading `a` and `b` as 4-vectors of
    /// packed `bf16` pairs (eight values a load; `a` is `m x k / 8`, `b` is `k x n / 8`).
    gemm_bf16_v8,
    mma_sync_m16n8k16_bf16
);

gemm_v8_kernel!(
    /// [`gemm_bf16_v8`] on `f16` inputs.
    gemm_f16_v8,
    mma_sync_m16n8k16_f16
);

/// The input type of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    /// `bfloat16` (8 exponent bits, 7 fraction bits).
    Bf16,
    /// IEEE binary16 (5 exponent bits, 10 fraction bits).
    F16,
}

impl Half {
    /// `x` rounded to this type (to nearest, ties to even), as an `f32`.
    pub fn round(self, x: f32) -> f32 {
        match self {
            Half::Bf16 => bf16::from_f32(x).to_f32(),
            Half::F16 => f16::from_f32(x).to_f32(),
        }
    }

    /// `"bf16"` or `"f16"`.
    pub fn name(self) -> &'static str {
        match self {
            Half::Bf16 => "bf16",
            Half::F16 => "f16",
        }
    }
}

/// The tile configurations the kernels are instantiated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiles {
    /// `128 x 128` tiles 32 deep, 8 warps of `64 x 32` (16 accumulators a warp): 37 888 bytes
    /// of shared memory.
    Big,
    /// `64 x 64` tiles 32 deep, 4 warps of `32 x 32` (8 accumulators a warp): 19 456 bytes.
    Small,
    /// `128 x 128` tiles 32 deep, 4 warps of `64 x 64` (32 accumulators a warp, 128 `f32`
    /// registers a lane): the shared memory of [`Tiles::Big`], two thirds of its fragment reads
    /// per `mma`, half its warps.
    Wide,
}

impl Tiles {
    /// `(BM, BN, BK, WM, WN)` (see [`gemm_bf16`]).
    pub const fn dims(self) -> (usize, usize, usize, usize, usize) {
        match self {
            Tiles::Big => (128, 128, 32, 64, 32),
            Tiles::Small => (64, 64, 32, 32, 32),
            Tiles::Wide => (128, 128, 32, 64, 64),
        }
    }

    /// Threads a block.
    pub const fn threads(self) -> usize {
        let (bm, bn, _, wm, wn) = self.dims();
        32 * (bm / wm) * (bn / wn)
    }

    /// Shared memory a block, in bytes: two slices of `A` and of `B` as packed pairs.
    pub const fn shared_bytes(self) -> usize {
        let (bm, bn, bk, _, _) = self.dims();
        4 * 2 * (bm * (bk / 2 + 4) + (bk / 2) * (bn + 8))
    }

    /// The tiles [`run_bf16`] and [`run_f16`] use on `dev`: [`Tiles::Big`] where its shared
    /// memory fits a block, else [`Tiles::Small`].
    pub fn for_device(dev: &Device) -> Tiles {
        if dev.capabilities.shared_mem_per_block >= Tiles::Big.shared_bytes() {
            Tiles::Big
        } else {
            Tiles::Small
        }
    }
}

/// Runs `gemm_bf16` on `size x size` matrices (`m = n = k = size`).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]); `FeatureNotSupported` on a device that does not
/// lower the `mma`.
pub fn run_bf16(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    run_shape(dev, Half::Bf16, Tiles::for_device(dev), (size, size, size))
}

/// Runs `gemm_f16` on `size x size` matrices (`m = n = k = size`).
///
/// # Errors
/// As [`run_bf16`].
pub fn run_f16(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    run_shape(dev, Half::F16, Tiles::for_device(dev), (size, size, size))
}

/// Runs `gemm_bf16` with [`Tiles::Wide`] where its shared memory fits a block (else as
/// [`run_bf16`]): the bench's side-by-side of the two tile shapes.
///
/// # Errors
/// As [`run_bf16`].
pub fn run_bf16_wide(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let tiles = match Tiles::for_device(dev) {
        Tiles::Big => Tiles::Wide,
        other => other,
    };
    run_shape(dev, Half::Bf16, tiles, (size, size, size))
}

/// The host reference of rows `rows` of `a * b` (`a` `m x k`, `b` `k x n`, row-major, the
/// widened 16-bit inputs): each element accumulated in `f32` from `+0.0` over `p = 0..k` in
/// order, and each element's `Σ|a·b|` (for the GPU tolerance). Rows in parallel.
pub fn host_gemm_rows(
    a: &[f32],
    b: &[f32],
    (n, k): (usize, usize),
    rows: &[usize],
) -> (Vec<f32>, Vec<f64>) {
    let mut want = vec![0.0f32; rows.len() * n];
    let mut scale = vec![0.0f64; rows.len() * n];
    want.par_chunks_mut(n.max(1))
        .zip(scale.par_chunks_mut(n.max(1)))
        .zip(rows.par_iter())
        .for_each(|((row, mag), &r)| {
            for p in 0..k {
                let arp = a[r * k + p];
                for (col, (acc, s)) in row.iter_mut().zip(mag.iter_mut()).enumerate() {
                    let prod = arp * b[p * n + col]; // exact: 16-bit significands
                    *acc += prod;
                    *s += prod.abs() as f64;
                }
            }
        });
    (want, scale)
}

/// Whether [`run_shape`] takes the `v8` kernels ([`gemm_bf16_v8`], [`gemm_f16_v8`]): `k` and `n`
/// multiples of 8, so that every row of `A` and `B` is whole 4-vectors of pairs.
pub fn vectors_fit(n: usize, k: usize) -> bool {
    n.is_multiple_of(8) && k.is_multiple_of(8)
}

/// Runs the `half` kernel with tiles `tiles` on `m x k` and `k x n` inputs (the `v8` kernel where
/// [`vectors_fit`]), checks `c` (module
/// docs) and times it. The outcome is named `gemm_bf16` or `gemm_f16`.
///
/// # Errors
/// As [`run_bf16`].
pub fn run_shape(
    dev: &Device,
    half: Half,
    tiles: Tiles,
    (m, n, k): (usize, usize, usize),
) -> spoc::Result<Outcome> {
    need(dev, &[(m * k, 2), (k * n, 2), (m * n, 4)])?;
    let mut rng = SplitMix64::new(0x6e33_0014);
    let a: Vec<f32> = (0..m * k)
        .map(|_| half.round(rng.f32_in(-1.0, 1.0)))
        .collect();
    let b: Vec<f32> = (0..k * n)
        .map(|_| half.round(rng.f32_in(-1.0, 1.0)))
        .collect();
    let mut cb = dev.alloc::<f32>(m * n)?;
    let (bm, bn, bk, wm, wn) = tiles.dims();
    let grid = dims2d(blocks_for(n, bn as u32), blocks_for(m, bm as u32));
    let block = dims1d(tiles.threads() as u32);
    let vectors = vectors_fit(n, k);
    // Eight 16-bit values a 4-vector, in memory order: the `v8` kernels' element type.
    let packed = |bits: Vec<u16>| {
        let words: Vec<u32> = bits
            .chunks_exact(2)
            .map(|p| u32::from(p[0]) | (u32::from(p[1]) << 16))
            .collect();
        U32x4::from_slice(&words)
    };
    macro_rules! time_kernels {
        ($half:ident, $scalar:ident, $v8:ident) => {{
            let halves = |v: &[f32]| v.iter().map(|&x| $half::from_f32(x)).collect::<Vec<_>>();
            if vectors {
                let bits = |v: &[f32]| halves(v).iter().map(|h| h.to_bits()).collect::<Vec<_>>();
                let ab = dev.upload(&packed(bits(&a)))?;
                let bb = dev.upload(&packed(bits(&b)))?;
                let mut launch = || {
                    let args = (m, n, k, &ab, &bb, &mut cb);
                    match tiles {
                        Tiles::Big => $v8::<128, 128, 32, 64, 32>.launch(dev, grid, block, args),
                        Tiles::Small => $v8::<64, 64, 32, 32, 32>.launch(dev, grid, block, args),
                        Tiles::Wide => $v8::<128, 128, 32, 64, 64>.launch(dev, grid, block, args),
                    }
                };
                launch()?; // compiles the kernel
                time_it(dev, launch)?
            } else {
                let (ab, bb) = (dev.upload(&halves(&a))?, dev.upload(&halves(&b))?);
                let mut launch = || {
                    let args = (m, n, k, &ab, &bb, &mut cb);
                    match tiles {
                        Tiles::Big => {
                            $scalar::<128, 128, 32, 64, 32>.launch(dev, grid, block, args)
                        }
                        Tiles::Small => {
                            $scalar::<64, 64, 32, 32, 32>.launch(dev, grid, block, args)
                        }
                        Tiles::Wide => {
                            $scalar::<128, 128, 32, 64, 64>.launch(dev, grid, block, args)
                        }
                    }
                };
                launch()?;
                time_it(dev, launch)?
            }
        }};
    }
    let seconds = match half {
        Half::Bf16 => time_kernels!(bf16, gemm_bf16, gemm_bf16_v8),
        Half::F16 => time_kernels!(f16, gemm_f16, gemm_f16_v8),
    };
    let got = cb.to_vec()?;
    let name = match half {
        Half::Bf16 => "gemm_bf16",
        Half::F16 => "gemm_f16",
    };
    let outcome = Outcome::new(
        name,
        m.max(n).max(k),
        format!("{m} x {n} x {k}"),
        seconds,
        Work::Flops(2.0 * m as f64 * n as f64 * k as f64),
    )
    .note(format!(
        "{name}: {} in, f32 out; {bm} x {bn} tiles {bk} deep, {} warps of {wm} x {wn}; {}",
        half.name(),
        tiles.threads() / 32,
        if vectors {
            "8 values a global load (the v8 kernel)"
        } else {
            "one value a global load"
        }
    ));
    let full = (m as f64) * (n as f64) * (k as f64) <= (FULL_CHECK_MAX as f64).powi(3);
    let rows: Vec<usize> = if full || m <= SAMPLED_ROWS {
        (0..m).collect()
    } else {
        (0..SAMPLED_ROWS)
            .map(|i| i * (m - 1) / (SAMPLED_ROWS - 1))
            .collect()
    };
    let (want, scale) = host_gemm_rows(&a, &b, (n, k), &rows);
    let got: Vec<f32> = rows
        .iter()
        .flat_map(|&r| got[r * n..(r + 1) * n].iter().copied())
        .collect();
    let what = if rows.len() == m {
        "c".to_string()
    } else {
        format!("c ({} of {m} rows)", rows.len())
    };
    let check = if matches!(dev.framework, "Native" | "Interpreter") {
        check_exact(&what, &got, &want)
    } else {
        let want: Vec<f64> = want.iter().map(|&w| w as f64).collect();
        check_close(
            &what,
            &got,
            &want,
            &scale,
            (k as f64 + 1.0) * f32::EPSILON as f64,
            0.0,
        )
    };
    Ok(outcome.check(check))
}
