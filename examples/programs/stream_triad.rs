//! `stream_triad`: STREAM's triad `a = b + s * c` over `n` f32 elements; 12 bytes moved and 2
//! flops per element. Checked exactly: spoc does not contract `b + s * c` into an FMA, so every
//! backend rounds the product and the sum separately, as the host does.

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64};
use spoc::prelude::*;

/// `a[i] = b[i] + s * c[i]` for every `i < a.len()`.
#[kernel]
pub fn triad(a: &mut [f32], b: &[f32], c: &[f32], s: f32) {
    let i = global_id_x();
    if i < a.len() {
        a[i] = b[i] + s * c[i];
    }
}

/// Runs `stream_triad` over `size` elements with `s = 3.0` (blocks of 256 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4); 3])?;
    let mut rng = SplitMix64::new(0x7c1a_0003);
    let b = rng.f32s(size, -10.0, 10.0);
    let c = rng.f32s(size, -10.0, 10.0);
    let s = 3.0f32;
    let bb = dev.upload(&b)?;
    let cb = dev.upload(&c)?;
    let mut ab = dev.alloc::<f32>(size)?;
    let (grid, block) = (dims1d(blocks_for(size, 256)), dims1d(256));
    triad.launch(dev, grid, block, (&mut ab, &bb, &cb, s))?; // compiles the kernel
    let seconds = time_it(dev, || {
        triad.launch(dev, grid, block, (&mut ab, &bb, &cb, s))
    })?;
    let got = ab.to_vec()?;
    let want: Vec<f32> = b.iter().zip(&c).map(|(b, c)| b + s * c).collect();
    Ok(Outcome::per_element("stream_triad", size, seconds, 12.0)
        .check(check_exact("a", &got, &want)))
}
