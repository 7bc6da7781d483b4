//! `reduction` and `reduction_max`: the sum of `n` u32 (wrapping, checked exactly) and the
//! maximum of `n` f32 (checked exactly: `max` does not round). Two passes of one kernel: blocks
//! reduce grid-stride slices in shared memory to one value each, then a single block reduces the
//! partials. The sum uses a fixed-size shared array; the maximum a dynamic one sized at launch
//! (`launch_with_shared`). 4 bytes moved per element.

use super::kernels::reduce_sum_u32;
use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64};
use spoc::prelude::*;

/// Threads per block.
pub const BLOCK: u32 = 256;
/// Most blocks of the first pass (the second pass reduces their partials in one block).
pub const MAX_BLOCKS: u32 = 1024;

/// `partial[block] = max of this block's grid-stride elements` (`-inf` for none); blocks of a
/// power-of-two size, with `4 * block_dim_x()` bytes of dynamic shared memory.
#[kernel]
pub fn reduce_max_f32(input: &[f32], partial: &mut [f32]) {
    let s = dynamic_shared::<f32>();
    let t = thread_idx_x();
    let mut acc = f32::NEG_INFINITY;
    let mut i = global_id_x();
    while i < input.len() {
        acc = acc.max(input[i]);
        i += global_size_x();
    }
    s[t] = acc;
    sync_threads();
    let mut stride = block_dim_x() / 2;
    while stride > 0 {
        if t < stride {
            s[t] = s[t].max(s[t + stride]);
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        partial[block_idx_x()] = s[0];
    }
}

/// Runs the u32 sum over `size` elements.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run_sum(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4)])?;
    let mut rng = SplitMix64::new(0x5e3d_000b);
    let data = rng.u32s(size);
    let db = dev.upload(&data)?;
    let blocks = blocks_for(size, BLOCK).min(MAX_BLOCKS);
    let mut pb = dev.alloc::<u32>(blocks as usize)?;
    let mut total = dev.alloc::<u32>(1)?;
    let mut pass = || -> spoc::Result<()> {
        reduce_sum_u32.launch(dev, dims1d(blocks), dims1d(BLOCK), (&db, &mut pb))?;
        reduce_sum_u32.launch(dev, dims1d(1), dims1d(BLOCK), (&pb, &mut total))
    };
    pass()?; // compiles the kernel
    let seconds = time_it(dev, pass)?;
    let got = total.to_vec()?;
    let want = data.iter().fold(0u32, |a, &b| a.wrapping_add(b));
    Ok(
        Outcome::per_element("reduction", size, seconds, 4.0).check(check_exact(
            "sum",
            &got,
            &[want],
        )),
    )
}

/// Runs the f32 maximum over `size` elements.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run_max(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4)])?;
    let mut rng = SplitMix64::new(0x3a8e_000c);
    let mut data = rng.f32s(size, -1e6, 1e6);
    // The maximum at a random place.
    let at = rng.below(size as u32) as usize;
    data[at] = 2.5e6;
    let db = dev.upload(&data)?;
    let blocks = blocks_for(size, BLOCK).min(MAX_BLOCKS);
    let shared = BLOCK as usize * std::mem::size_of::<f32>();
    let mut pb = dev.alloc::<f32>(blocks as usize)?;
    let mut best = dev.alloc::<f32>(1)?;
    let mut pass = || -> spoc::Result<()> {
        reduce_max_f32.launch_with_shared(
            dev,
            dims1d(blocks),
            dims1d(BLOCK),
            shared,
            (&db, &mut pb),
        )?;
        reduce_max_f32.launch_with_shared(dev, dims1d(1), dims1d(BLOCK), shared, (&pb, &mut best))
    };
    pass()?; // compiles the kernel
    let seconds = time_it(dev, pass)?;
    let got = best.to_vec()?;
    let want = data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    Ok(
        Outcome::per_element("reduction_max", size, seconds, 4.0).check(check_exact(
            "max",
            &got,
            &[want],
        )),
    )
}
