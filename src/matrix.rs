//! Fragment loads and stores of the warp-level matrix multiply-accumulate
//! ([`mma_sync_m16n8k16_f16`], [`mma_sync_m16n8k16_bf16`]) from and to global
//! memory: ordinary `#[device]` functions, which compute this lane's elements from `lane_id()`
//! in the PTX ISA's layout ("Matrix Fragments for mma.m16n8k16 with floating point type"; the
//! table is in the doc comment of `mma_sync_m16n8k16_f16`). With `g = lane_id() / 4` and
//! `t = lane_id() % 4`, a lane holds rows `g` and `g + 8` of `A`, `C` and `D`, columns
//! `2t, 2t + 1` (and `2t + 8, 2t + 9` of `A`), and column `g`, rows `2t, 2t + 1, 2t + 8, 2t + 9`
//! of `B`.
//!
//! Layouts: `A` row-major (element `(r, c)` at `r * lda + c`), `B` column by column (element
//! `(k, n)` at `n * ldb + k`, i.e. the row-major `Bᵀ`: PTX's `.col`, which makes each register's
//! two values adjacent), `C`/`D` row-major. Every index is bounds-checked as any buffer access.
//! Shared arrays cannot be passed to a `#[device]` function yet: for a tile in shared memory,
//! write the same indexing in the kernel (`tests/mma.rs` has one).
//!
//! On the host these functions panic (they call `lane_id()`), like the intrinsics.
//!
//! ```
//! use spoc::prelude::*;
//!
//! /// `c += a × b`: `a` row-major `m × k`, `b` column by column (`n × k`), `c` row-major
//! /// `m × n`; `m`, `n`, `k` multiples of 16, 8, 16. One 16×8 tile of `c` per warp.
//! #[kernel]
//! fn gemm(m: u32, n: u32, k: u32, a: &[f16], bt: &[f16], c: &mut [f32]) {
//!     let n = n as usize;
//!     let k = k as usize;
//!     let warp = global_id_x() / 32;
//!     if warp < (m as usize / 16) * (n / 8) {
//!         let row0 = warp / (n / 8) * 16;
//!         let col0 = warp % (n / 8) * 8;
//!         let mut acc = mma_load_c(c, row0, col0, n);
//!         for k0 in (0..k).step_by(16) {
//!             acc = mma_sync_m16n8k16_f16(
//!                 mma_load_a_f16(a, row0, k0, k),
//!                 mma_load_b_f16(bt, k0, col0, k),
//!                 acc,
//!             );
//!         }
//!         mma_store_c(c, row0, col0, n, acc);
//!     }
//! }
//!
//! # fn main() -> spoc::Result<()> {
//! let dev = spoc::init_device(Some("Interpreter"))?;
//! let (m, n, k) = (32, 16, 32);
//! let a: Vec<f16> = (0..m * k).map(|i| f16::from_f32((i % 7) as f32 - 3.0)).collect();
//! let bt: Vec<f16> = (0..n * k).map(|i| f16::from_f32((i % 5) as f32 * 0.5)).collect();
//! let (ab, bb) = (dev.upload(&a)?, dev.upload(&bt)?);
//! let mut c = dev.upload(&vec![1.0f32; m * n])?;
//! // 8 tiles, 2 warps a block.
//! gemm.launch(&dev, dims1d(4), dims1d(64), (m as u32, n as u32, k as u32, &ab, &bb, &mut c))?;
//! let c = c.to_vec()?;
//! for i in 0..m {
//!     for j in 0..n {
//!         let dot: f32 = (0..k).map(|kk| a[i * k + kk].to_f32() * bt[j * k + kk].to_f32()).sum();
//!         assert_eq!(c[i * n + j], 1.0 + dot); // small integers: exact in any order
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use crate::prelude::*;

/// This lane's `A` fragment of the 16×16 tile whose top-left element is `(row0, col0)` of the
/// row-major `a` (leading dimension `lda`): `pack_f16x2(A[g][2t], A[g][2t + 1])`, the same for
/// row `g + 8`, then both again for columns `2t + 8, 2t + 9`.
#[device]
pub fn mma_load_a_f16(a: &[f16], row0: usize, col0: usize, lda: usize) -> U32x4 {
    let lane = lane_id();
    let top = (row0 + lane / 4) * lda + col0 + 2 * (lane % 4);
    let bottom = top + 8 * lda;
    U32x4::new(
        pack_f16x2(a[top], a[top + 1]),
        pack_f16x2(a[bottom], a[bottom + 1]),
        pack_f16x2(a[top + 8], a[top + 9]),
        pack_f16x2(a[bottom + 8], a[bottom + 9]),
    )
}

/// [`mma_load_a_f16`] for `bf16`.
#[device]
pub fn mma_load_a_bf16(a: &[bf16], row0: usize, col0: usize, lda: usize) -> U32x4 {
    let lane = lane_id();
    let top = (row0 + lane / 4) * lda + col0 + 2 * (lane % 4);
    let bottom = top + 8 * lda;
    U32x4::new(
        pack_bf16x2(a[top], a[top + 1]),
        pack_bf16x2(a[bottom], a[bottom + 1]),
        pack_bf16x2(a[top + 8], a[top + 9]),
        pack_bf16x2(a[bottom + 8], a[bottom + 9]),
    )
}

/// This lane's `B` fragment of the 16×8 tile whose top-left element is `(k0, col0)` of `B`
/// stored column by column in `bt` (`B[k][n]` at `n * ldb + k`): `pack_f16x2(B[2t][g],
/// B[2t + 1][g])` and `pack_f16x2(B[2t + 8][g], B[2t + 9][g])`, columns counted from `col0`.
#[device]
pub fn mma_load_b_f16(bt: &[f16], k0: usize, col0: usize, ldb: usize) -> U32x2 {
    let lane = lane_id();
    let at = (col0 + lane / 4) * ldb + k0 + 2 * (lane % 4);
    U32x2::new(
        pack_f16x2(bt[at], bt[at + 1]),
        pack_f16x2(bt[at + 8], bt[at + 9]),
    )
}

/// [`mma_load_b_f16`] for `bf16`.
#[device]
pub fn mma_load_b_bf16(bt: &[bf16], k0: usize, col0: usize, ldb: usize) -> U32x2 {
    let lane = lane_id();
    let at = (col0 + lane / 4) * ldb + k0 + 2 * (lane % 4);
    U32x2::new(
        pack_bf16x2(bt[at], bt[at + 1]),
        pack_bf16x2(bt[at + 8], bt[at + 9]),
    )
}

/// This lane's accumulator of the 16×8 tile whose top-left element is `(row0, col0)` of the
/// row-major `c` (leading dimension `ldc`): `C[g][2t]`, `C[g][2t + 1]`, `C[g + 8][2t]`,
/// `C[g + 8][2t + 1]`.
#[device]
pub fn mma_load_c(c: &[f32], row0: usize, col0: usize, ldc: usize) -> F32x4 {
    let lane = lane_id();
    let top = (row0 + lane / 4) * ldc + col0 + 2 * (lane % 4);
    let bottom = top + 8 * ldc;
    F32x4::new(c[top], c[top + 1], c[bottom], c[bottom + 1])
}

/// Stores this lane's accumulator `d` into the 16×8 tile whose top-left element is
/// `(row0, col0)` of the row-major `c` (leading dimension `ldc`): the places
/// [`mma_load_c`] reads.
#[device]
pub fn mma_store_c(c: &mut [f32], row0: usize, col0: usize, ldc: usize, d: F32x4) {
    let lane = lane_id();
    let top = (row0 + lane / 4) * ldc + col0 + 2 * (lane % 4);
    let bottom = top + 8 * ldc;
    c[top] = d.x;
    c[top + 1] = d.y;
    c[bottom] = d.z;
    c[bottom + 1] = d.w;
}
