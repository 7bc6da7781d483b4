//! `bitonic_sort`: sorts `n` u32 keys (`n` a power of two: the size is rounded up) with the
//! bitonic network, one launch per compare-exchange step (`log2(n) (log2(n) + 1) / 2` launches),
//! every step in global memory; 8 bytes moved per key and step. Checked exactly against the
//! host's sort.

use super::{blocks_for, check_sorted, time_once, Outcome, SplitMix64, Work};
use spoc::prelude::*;

/// One step of the network: thread `i` compares keys `i` and `i ^ j` (when `i ^ j > i`) and
/// orders them ascending if `i & k == 0`, descending otherwise.
#[kernel]
pub fn bitonic_step(data: &mut [u32], j: usize, k: usize) {
    let i = global_id_x();
    let l = i ^ j;
    if l > i && l < data.len() {
        let a = data[i];
        let b = data[l];
        let ascending = (i & k) == 0;
        if (ascending && a > b) || (!ascending && a < b) {
            data[i] = b;
            data[l] = a;
        }
    }
}

/// Launches every step of the network on `data` (its length a power of two).
///
/// # Errors
/// Whatever spoc reports.
pub fn sort(dev: &Device, data: &mut Buffer<u32>) -> spoc::Result<usize> {
    let n = data.len();
    let block = 256u32.min(n as u32).max(1);
    let grid = dims1d(blocks_for(n, block));
    let mut steps = 0;
    let mut k = 2;
    while k <= n {
        let mut j = k / 2;
        while j > 0 {
            bitonic_step.launch(dev, grid, dims1d(block), (&mut *data, j, k))?;
            steps += 1;
            j /= 2;
        }
        k *= 2;
    }
    Ok(steps)
}

/// Runs `bitonic_sort` on `size.next_power_of_two()` random keys (blocks of 256 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let n = size.next_power_of_two();
    super::need(dev, &[(n, 4)])?;
    let mut rng = SplitMix64::new(0xb170_0009);
    // 24-bit keys, so larger inputs hold duplicates.
    let keys: Vec<u32> = (0..n).map(|_| rng.next_u32() >> 8).collect();
    let mut db = dev.upload(&keys)?;
    sort(dev, &mut db)?; // compiles the kernel
    db.upload_from(&keys)?;
    let mut steps = 0;
    let seconds = time_once(dev, || {
        steps = sort(dev, &mut db)?;
        Ok(())
    })?;
    let got = db.to_vec()?;
    Ok(Outcome::new(
        "bitonic_sort",
        size,
        format!("{n} keys, {steps} steps"),
        seconds,
        Work::Bytes(8.0 * (n * steps) as f64),
    )
    .check(check_sorted(&got, keys)))
}
