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
//!
//! The kernels read `A` and `B` as `U32x4`s: eight 16-bit values of a row in memory order, the
//! rows padded with zeros to a multiple of eight values ([`pack_rows`]), so a thread loads 16
//! bytes at a time and any `m, n, k >= 1` works (a row outside `m`, a vector outside the padded
//! row, a row of `B` outside `k` load zeros; the stores of `C` are guarded; the zero products
//! change no sum, see below).
//!
//! Along `k` the block walks `BK`-deep slices of `A` and `B`, staged through shared memory as
//! *pairs*: each `u32` of shared memory holds two consecutive-`k` values packed as the fragment
//! registers want them (as `pack_bf16x2(lo, hi)` packs them), so a lane reads each fragment
//! register with one 32-bit shared load:
//!
//! - `A` slice: `a_tile[r][kp]`, row `r` of the tile, pair `kp` (columns `2 kp`, `2 kp + 1`),
//!   rows `BK / 2 + 4` words apart (the 32 lanes reading a fragment register, rows `g` and pairs
//!   `t` with `g = lane / 4`, `t = lane % 4`, hit 32 different banks). A 4-vector of `A` is four
//!   pairs of one row, stored as they are;
//! - `B` slice: `b_tile[kp][c]`, pair `kp` (rows `2 kp`, `2 kp + 1` of `B`) of column `c`,
//!   `BN + 8` words a pair-row. Two 4-vectors of `B` (rows `q` and `q + 1`, the same eight
//!   columns) are re-paired by column with shifts and masks.
//!
//! A thread writes four (`A`) or eight (`B`) consecutive words of a tile row, so with these
//! layouts as they are the lanes of a warp would write 4 (`A`) and 8 (`B`) words to one bank
//! at a time. Both tiles are stored swizzled, each word moving only inside its group of four
//! (`A`) or eight (`B`), by an XOR with a value the row gives: pair `p` of tile row `r` of `A`
//! at `(p & !3) | ((p & 3) ^ (r % 4))`; column `c = 8 cv + i` of pair-row `kp` of `B` at
//! `8 cv + (i ^ (cv / 4 + (BN / 32) * (kp % (256 / BN))))`. The stores of a warp and the
//! fragment reads then hit 32 different banks each (the derivation is the comment in the
//! kernel; the CPU backends check the layout bit for bit in `examples/tests/gemm.rs`). Every
//! tile address is a per-thread part computed once plus a constant of the unrolled copy, which
//! `ptxas` folds into the shared load's offset.
//!
//! The slices are double-buffered as in `sgemm`: the next slice is loaded from global memory
//! into registers before the current one is multiplied, stored to the other buffer after it,
//! one barrier per slice.
//!
//! Instances: [`Tiles::Big`] (`128 x 128` tiles, 32 deep, 8 warps of `64 x 32`: 16 accumulators,
//! 37 KB of shared memory) where the device's shared memory per block holds it, else
//! [`Tiles::Small`] (`64 x 64`, 32 deep, 4 warps of `32 x 32`, 19.5 KB); [`Tiles::Wide`]
//! (`128 x 128`, 4 warps of `64 x 64`) for the bench's `gemm_bf16_wide`. All are tested on the
//! CPU backends (`examples/tests/gemm.rs`).
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
//! ## What a faster version needs (not here)
//!
//! The fragments are read from shared memory one 32-bit load per register; the CUDA peers
//! (cuBLAS) reach their speed with `ldmatrix` (a fragment in one instruction), `cp.async`
//! (global to shared without registers, several stages in flight), and on Hopper `wgmma`
//! (warpgroup-wide, operands straight from shared memory through matrix descriptors) with TMA
//! bulk copies. None of these is in spoc's language yet (issue 14).
//!
//! `docs/BENCHMARKS.md` has its timings beside cuBLAS and Triton (0.28x cuBLAS at 8192³ on an
//! H100, 2026-12-06; 0.16x with one 16-bit global load a value, before the 4-vectors).

use super::matrix_mul::{FULL_CHECK_MAX, SAMPLED_ROWS};
use super::{blocks_for, check_close, check_exact, need, time_it, Outcome, SplitMix64, Work};
use rayon::prelude::*;
use spoc::prelude::*;

/// Writes the tiled kernel `$name` for the 16-bit type `$half`, packed by `$pack` and multiplied
/// by `$mma`: [`gemm_bf16`] and [`gemm_f16`] are this one body, the same bit for bit but for
/// the type.
macro_rules! gemm_kernel {
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
            let k8 = (k + 7) / 8;
            let n8 = (n + 7) / 8;
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
                        let x = if q < k && cv < n8 {
                            b[q * n8 + cv]
                        } else {
                            U32x4::splat(0u32)
                        };
                        let y = if q + 1 < k && cv < n8 {
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

gemm_kernel!(
    /// `c = a * b` for row-major `bf16` matrices `a` (`m x k`) and `b` (`k x n`) into the
    /// row-major `f32` `c` (`m x n`), through `mma_sync_m16n8k16_bf16` (module docs). `a` and
    /// `b` hold their rows as 4-vectors of packed pairs, each row padded with zeros to a multiple
    /// of eight values ([`pack_rows`]): `a` is `m x ceil(k / 8)`, `b` is `k x ceil(n / 8)`.
    gemm_bf16,
    mma_sync_m16n8k16_bf16
);

gemm_kernel!(
    /// [`gemm_bf16`] on `f16` inputs, through `mma_sync_m16n8k16_f16`.
    gemm_f16,
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

    /// Whether the kernel's swizzles read back what they stored with these tiles (the kernel's
    /// comment): the warps' columns start at multiples of 32 (`wc / 32 + j / 4` is the stored
    /// `cv / 4`) and their rows at multiples of 4 (`g % 4` is the row's `r % 4`); the pair-rows a
    /// warp stores at once, `R = 256 / BN`, divide 4 (a lane's pair-rows `8 ks + t` and
    /// `8 ks + t + 4` have the `kp % R` of `t`); and one round of the block's threads covers
    /// whole multiples of 4 rows of `A` and of `R` pair-rows of `B` (the store's per-thread
    /// XOR holds for every round).
    const fn swizzles_hold(self) -> bool {
        let (_, bn, bk, wm, wn) = self.dims();
        let threads = self.threads();
        wn.is_multiple_of(32)
            && wm.is_multiple_of(4)
            && 256usize.is_multiple_of(bn)
            && 4usize.is_multiple_of(256 / bn)
            && (threads / (bk / 8)).is_multiple_of(4)
            && (threads / (bn / 8)).is_multiple_of(256 / bn)
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

// Every configuration the program launches keeps the swizzles consistent (checked when the
// program compiles; a new configuration that breaks them does not build).
const _: () = assert!(
    Tiles::Big.swizzles_hold() && Tiles::Small.swizzles_hold() && Tiles::Wide.swizzles_hold()
);

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

/// The rows of the `rows x cols` row-major matrix of 16-bit values `bits` as the kernels read
/// them: each row padded with zeros to `8 * ceil(cols / 8)` values, eight values a `U32x4` in
/// memory order (value `2 i` in the low half of word `i`, as `pack_bf16x2` packs a pair).
pub fn pack_rows(bits: &[u16], rows: usize, cols: usize) -> Vec<U32x4> {
    let c8 = cols.div_ceil(8);
    let mut words = vec![0u32; rows * c8 * 4];
    for r in 0..rows {
        for c in 0..cols {
            words[r * c8 * 4 + c / 2] |= u32::from(bits[r * cols + c]) << (16 * (c % 2));
        }
    }
    U32x4::from_slice(&words)
}

/// Runs the `half` kernel with tiles `tiles` on `m x k` and `k x n` inputs, checks `c` (module
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
    need(
        dev,
        &[(m * k.div_ceil(8), 16), (k * n.div_ceil(8), 16), (m * n, 4)],
    )?;
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
    macro_rules! time_kernel {
        ($half:ident, $kernel:ident) => {{
            let bits = |v: &[f32]| {
                v.iter()
                    .map(|&x| $half::from_f32(x).to_bits())
                    .collect::<Vec<_>>()
            };
            let ab = dev.upload(&pack_rows(&bits(&a), m, k))?;
            let bb = dev.upload(&pack_rows(&bits(&b), k, n))?;
            let mut launch = || {
                let args = (m, n, k, &ab, &bb, &mut cb);
                match tiles {
                    Tiles::Big => $kernel::<128, 128, 32, 64, 32>.launch(dev, grid, block, args),
                    Tiles::Small => $kernel::<64, 64, 32, 32, 32>.launch(dev, grid, block, args),
                    Tiles::Wide => $kernel::<128, 128, 32, 64, 64>.launch(dev, grid, block, args),
                }
            };
            launch()?; // compiles the kernel
            time_it(dev, launch)?
        }};
    }
    let seconds = match half {
        Half::Bf16 => time_kernel!(bf16, gemm_bf16),
        Half::F16 => time_kernel!(f16, gemm_f16),
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
        "{name}: {} in, f32 out; {bm} x {bn} tiles {bk} deep, {} warps of {wm} x {wn}",
        half.name(),
        tiles.threads() / 32
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
