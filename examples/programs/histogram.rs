//! `histogram`: a 256-bin histogram of the bytes of `n` u32 words (4 bytes each, roughly
//! triangular around 128, so bins contend). Each block counts into a shared histogram with
//! `atomic_add`, then adds its non-zero bins to the global one with `atomic_add`. 4 bytes moved
//! per word. Checked exactly.

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64, Work};
use spoc::prelude::*;

/// Threads per block (one per bin).
pub const BLOCK: u32 = 256;
/// Most blocks; larger inputs give each thread more words.
pub const MAX_BLOCKS: u32 = 512;

/// Adds the bytes of `data` (grid-stride) to `hist` (256 bins, which must start at zero or at
/// the counts to add to). Blocks of 256 threads.
#[kernel]
pub fn histogram256(data: &[u32], hist: &mut [u32]) {
    let h = shared_array::<u32, 256>();
    let t = thread_idx_x();
    h[t] = 0u32;
    sync_threads();
    let mut i = global_id_x();
    while i < data.len() {
        let w = data[i];
        atomic_add(&mut h[(w & 255u32) as usize], 1u32);
        atomic_add(&mut h[((w >> 8) & 255u32) as usize], 1u32);
        atomic_add(&mut h[((w >> 16) & 255u32) as usize], 1u32);
        atomic_add(&mut h[(w >> 24) as usize], 1u32);
        i += global_size_x();
    }
    sync_threads();
    let c = h[t];
    if c > 0u32 {
        atomic_add(&mut hist[t], c);
    }
}

/// Runs `histogram` over `size` words.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4)])?;
    let mut rng = SplitMix64::new(0x4157_000e);
    let mut byte = || ((rng.next_u32() & 255) + (rng.next_u32() & 255)) / 2;
    let data: Vec<u32> = (0..size)
        .map(|_| byte() | byte() << 8 | byte() << 16 | byte() << 24)
        .collect();
    let db = dev.upload(&data)?;
    let mut hb = dev.alloc::<u32>(256)?;
    let grid = dims1d(blocks_for(size, BLOCK).min(MAX_BLOCKS));
    histogram256.launch(dev, grid, dims1d(BLOCK), (&db, &mut hb))?; // compiles the kernel
                                                                    // Timed back to back (the counts pile up), then one pass from zero for the check.
    let seconds = time_it(dev, || {
        histogram256.launch(dev, grid, dims1d(BLOCK), (&db, &mut hb))
    })?;
    hb.upload_from(&[0u32; 256])?;
    histogram256.launch(dev, grid, dims1d(BLOCK), (&db, &mut hb))?;
    let got = hb.to_vec()?;
    let mut want = vec![0u32; 256];
    for w in &data {
        for k in 0..4 {
            want[((w >> (8 * k)) & 255) as usize] += 1;
        }
    }
    Ok(Outcome::new(
        "histogram",
        size,
        format!("{size} words, 256 bins"),
        seconds,
        Work::Bytes(4.0 * size as f64),
    )
    .check(check_exact("hist", &got, &want)))
}
