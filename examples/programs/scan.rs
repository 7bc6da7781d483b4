//! `scan`: inclusive prefix sum of `n` u32 (wrapping), over many blocks: each block of 256
//! threads scans its slice in shared memory (Hillis–Steele, barriers between steps) and writes
//! its total; one block scans the totals (256 at a time, carrying the running sum); every block
//! but the first then adds the scanned total of the blocks before it. 16 bytes moved per element.
//! Checked exactly.

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64};
use spoc::prelude::*;

/// Threads per block and elements per block-scan.
pub const BLOCK: u32 = 256;

/// `out[i]` = inclusive scan of `input` within each block of 256; `block_sums[b]` = block `b`'s
/// total. Blocks of 256 threads.
#[kernel]
pub fn scan_blocks(input: &[u32], out: &mut [u32], block_sums: &mut [u32]) {
    let s = shared_array::<u32, 256>();
    let t = thread_idx_x();
    let i = global_id_x();
    s[t] = if i < input.len() { input[i] } else { 0u32 };
    sync_threads();
    let mut offset = 1usize;
    while offset < 256 {
        let v = if t >= offset { s[t - offset] } else { 0u32 };
        sync_threads();
        s[t] += v;
        sync_threads();
        offset *= 2;
    }
    if i < out.len() {
        out[i] = s[t];
    }
    if t == 255 {
        block_sums[block_idx_x()] = s[255];
    }
}

/// Inclusive scan of `sums` in place, by one block of 256 threads, 256 elements at a time with
/// a running carry.
#[kernel]
pub fn scan_block_sums(sums: &mut [u32]) {
    let s = shared_array::<u32, 256>();
    let t = thread_idx_x();
    let n = sums.len();
    let mut carry = 0u32;
    for base in (0usize..n).step_by(256) {
        let i = base + t;
        s[t] = if i < n { sums[i] } else { 0u32 };
        sync_threads();
        let mut offset = 1usize;
        while offset < 256 {
            let v = if t >= offset { s[t - offset] } else { 0u32 };
            sync_threads();
            s[t] += v;
            sync_threads();
            offset *= 2;
        }
        if i < n {
            sums[i] = s[t] + carry;
        }
        carry += s[255];
        sync_threads();
    }
}

/// `out[i] += scanned_sums[b - 1]` for the elements of every block `b > 0`. Blocks of 256.
#[kernel]
pub fn scan_add_block_sums(out: &mut [u32], scanned_sums: &[u32]) {
    let i = global_id_x();
    let b = block_idx_x();
    if b > 0 && i < out.len() {
        out[i] += scanned_sums[b - 1];
    }
}

/// Blocks (and block sums) the scan of `n` elements uses.
pub fn blocks(n: usize) -> usize {
    blocks_for(n, BLOCK) as usize
}

/// `out` = inclusive scan of `input` (same length); `sums` holds [`blocks`]`(n)` elements of
/// scratch.
///
/// # Errors
/// Whatever spoc reports.
pub fn inclusive_scan(
    dev: &Device,
    input: &Buffer<u32>,
    out: &mut Buffer<u32>,
    sums: &mut Buffer<u32>,
) -> spoc::Result<()> {
    let grid = dims1d(blocks(input.len()) as u32);
    let block = dims1d(BLOCK);
    scan_blocks.launch(dev, grid, block, (input, &mut *out, &mut *sums))?;
    if sums.len() > 1 {
        scan_block_sums.launch(dev, dims1d(1), block, (&mut *sums,))?;
        scan_add_block_sums.launch(dev, grid, block, (&mut *out, &*sums))?;
    }
    Ok(())
}

/// Runs `scan` over `size` elements.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4); 2])?;
    let mut rng = SplitMix64::new(0x5ca0_000d);
    let data = rng.u32s(size);
    let db = dev.upload(&data)?;
    let mut ob = dev.alloc::<u32>(size)?;
    let mut sb = dev.alloc::<u32>(blocks(size))?;
    inclusive_scan(dev, &db, &mut ob, &mut sb)?; // compiles the kernels
    let seconds = time_it(dev, || inclusive_scan(dev, &db, &mut ob, &mut sb))?;
    let got = ob.to_vec()?;
    let want: Vec<u32> = data
        .iter()
        .scan(0u32, |acc, &v| {
            *acc = acc.wrapping_add(v);
            Some(*acc)
        })
        .collect();
    Ok(Outcome::per_element("scan", size, seconds, 16.0).check(check_exact("out", &got, &want)))
}
