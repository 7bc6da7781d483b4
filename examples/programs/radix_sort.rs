//! `radix_sort`: stable LSD radix sort of `n` u32 keys, 4 bits per pass (8 passes). Each pass:
//! every block of 256 keys counts its digits into a 16-bin shared histogram with `atomic_add`
//! and stores it digit-major (`hist[digit * blocks + block]`); the histograms are scanned with
//! `scan`'s kernels; each key then goes to `scanned - hist` (the exclusive offset of its block
//! and digit) plus its rank among the keys of its block with the same digit before it (counted
//! through the block's digits in shared memory), which keeps the sort stable. 12 bytes moved
//! per key and pass. Checked exactly against the host's sort.

use super::scan::{blocks as scan_blocks, inclusive_scan};
use super::{blocks_for, check_sorted, time_once, Outcome, SplitMix64, Work};
use spoc::prelude::*;

/// Keys per block.
pub const BLOCK: u32 = 256;
/// Bits per pass.
pub const BITS: u32 = 4;

/// `hist[d * nblocks + block]` = keys of this block whose digit `(key >> shift) & 15` is `d`.
/// Blocks of 256 threads, one key each.
#[kernel]
pub fn radix_histogram(keys: &[u32], hist: &mut [u32], shift: u32, nblocks: usize) {
    let counts = shared_array::<u32, 16>();
    let t = thread_idx_x();
    if t < 16 {
        counts[t] = 0u32;
    }
    sync_threads();
    let i = global_id_x();
    if i < keys.len() {
        atomic_add(&mut counts[((keys[i] >> shift) & 15u32) as usize], 1u32);
    }
    sync_threads();
    if t < 16 {
        hist[t * nblocks + block_idx_x()] = counts[t];
    }
}

/// Moves each key of `keys_in` to its place for this pass in `keys_out`: `scanned[k] - hist[k]`
/// (`k = digit * nblocks + block`) plus its rank among the same-digit keys before it in the
/// block. Blocks of 256 threads, one key each.
#[kernel]
pub fn radix_scatter(
    keys_in: &[u32],
    keys_out: &mut [u32],
    hist: &[u32],
    scanned: &[u32],
    shift: u32,
    nblocks: usize,
) {
    let digits = shared_array::<u32, 256>();
    let t = thread_idx_x();
    let i = global_id_x();
    let mut key = 0u32;
    let mut d = 16u32; // no key: matches no digit
    if i < keys_in.len() {
        key = keys_in[i];
        d = (key >> shift) & 15u32;
    }
    digits[t] = d;
    sync_threads();
    if i < keys_in.len() {
        let mut rank = 0u32;
        for j in 0usize..t {
            if digits[j] == d {
                rank += 1u32;
            }
        }
        let k = (d as usize) * nblocks + block_idx_x();
        keys_out[(scanned[k] - hist[k] + rank) as usize] = key;
    }
}

/// Sorts `keys` in place (`tmp` the same length; `hist`, `scanned` `16 * blocks` elements,
/// `sums` `scan::blocks(16 * blocks)`).
///
/// # Errors
/// Whatever spoc reports.
pub fn sort(
    dev: &Device,
    keys: &mut Buffer<u32>,
    tmp: &mut Buffer<u32>,
    hist: &mut Buffer<u32>,
    scanned: &mut Buffer<u32>,
    sums: &mut Buffer<u32>,
) -> spoc::Result<()> {
    let n = keys.len();
    let nblocks = blocks_for(n, BLOCK) as usize;
    let (grid, block) = (dims1d(nblocks as u32), dims1d(BLOCK));
    for pass in 0..32 / BITS {
        let shift = pass * BITS;
        let (src, dst) = if pass % 2 == 0 {
            (&mut *keys, &mut *tmp)
        } else {
            (&mut *tmp, &mut *keys)
        };
        radix_histogram.launch(dev, grid, block, (&*src, &mut *hist, shift, nblocks))?;
        inclusive_scan(dev, hist, scanned, sums)?;
        radix_scatter.launch(
            dev,
            grid,
            block,
            (&*src, dst, &*hist, &*scanned, shift, nblocks),
        )?;
    }
    Ok(())
}

/// Runs `radix_sort` on `size` random keys.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let n = size;
    super::need(dev, &[(n, 4); 2])?;
    let mut rng = SplitMix64::new(0x4ad1_000f);
    let keys: Vec<u32> = rng.u32s(n);
    let nblocks = blocks_for(n, BLOCK) as usize;
    let mut kb = dev.upload(&keys)?;
    let mut tmp = dev.alloc::<u32>(n)?;
    let mut hist = dev.alloc::<u32>(16 * nblocks)?;
    let mut scanned = dev.alloc::<u32>(16 * nblocks)?;
    let mut sums = dev.alloc::<u32>(scan_blocks(16 * nblocks))?;
    sort(dev, &mut kb, &mut tmp, &mut hist, &mut scanned, &mut sums)?; // compiles the kernels
    kb.upload_from(&keys)?;
    let seconds = time_once(dev, || {
        sort(dev, &mut kb, &mut tmp, &mut hist, &mut scanned, &mut sums)
    })?;
    let got = kb.to_vec()?;
    Ok(Outcome::new(
        "radix_sort",
        size,
        format!("{n} keys, {} passes", 32 / BITS),
        seconds,
        Work::Bytes(12.0 * (n as u64 * (32 / BITS) as u64) as f64),
    )
    .check(check_sorted(&got, keys)))
}
