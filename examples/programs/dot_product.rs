//! `dot_product`: `x · y` over `n` f32 elements. Each block sums a grid-stride slice into shared
//! memory and reduces it as a tree (256 threads, barriers between levels); the host adds the
//! per-block partial sums (in f64; the download and the host sum are timed). 8 bytes moved per
//! element. Checked within the worst-case rounding bound of the device's summation order:
//! `|got - want| <= (m + 10) * f32::EPSILON * sum |x_i y_i|`, `m` the elements per thread.

use super::kernels::dot_partial;
use super::{blocks_for, check_close, Outcome, SplitMix64};
use spoc::prelude::*;
use std::time::Instant;

/// Threads per block (the shared array's length).
pub const BLOCK: u32 = 256;
/// Most blocks launched; larger inputs give each thread more elements.
pub const MAX_BLOCKS: u32 = 1024;

/// Runs `dot_product` over `size` elements.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4); 2])?;
    let mut rng = SplitMix64::new(0xd070_000a);
    let x = rng.f32s(size, -1.0, 1.0);
    let y = rng.f32s(size, -1.0, 1.0);
    let xb = dev.upload(&x)?;
    let yb = dev.upload(&y)?;
    let blocks = blocks_for(size, BLOCK).min(MAX_BLOCKS);
    let mut pb = dev.alloc::<f32>(blocks as usize)?;
    let (grid, block) = (dims1d(blocks), dims1d(BLOCK));
    let mut pass = || -> spoc::Result<f32> {
        dot_partial.launch(dev, grid, block, (&xb, &yb, &mut pb))?;
        Ok(pb.to_vec()?.iter().map(|&p| p as f64).sum::<f64>() as f32)
    };
    pass()?; // compiles the kernel
    dev.synchronize()?;
    let t0 = Instant::now();
    let got = pass()?;
    let seconds = t0.elapsed().as_secs_f64();

    let want: f64 = x.iter().zip(&y).map(|(&a, &b)| a as f64 * b as f64).sum();
    let scale: f64 = x
        .iter()
        .zip(&y)
        .map(|(&a, &b)| (a as f64 * b as f64).abs())
        .sum();
    let per_thread = size.div_ceil((blocks * BLOCK) as usize);
    let rel = (per_thread + 10) as f64 * f32::EPSILON as f64;
    Ok(
        Outcome::per_element("dot_product", size, seconds, 8.0).check(check_close(
            "dot",
            &[got],
            &[want],
            &[scale],
            rel,
            0.0,
        )),
    )
}
