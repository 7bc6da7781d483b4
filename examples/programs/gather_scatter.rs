//! `gather_scatter`: through a random permutation `perm` of `0..n`, a gather
//! `out[i] = src[perm[i]]` and a scatter `dst[perm[i]] = src[i]`; 12 bytes moved per element and
//! direction (index, source, destination). Checked exactly.

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64};
use spoc::prelude::*;

/// `out[i] = src[perm[i]]`.
#[kernel]
pub fn gather(src: &[f32], perm: &[u32], out: &mut [f32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = src[perm[i] as usize];
    }
}

/// `dst[perm[i]] = src[i]` (`perm` must be a permutation, so no two threads write one element).
#[kernel]
pub fn scatter(src: &[f32], perm: &[u32], dst: &mut [f32]) {
    let i = global_id_x();
    if i < src.len() {
        dst[perm[i] as usize] = src[i];
    }
}

/// Runs the gather and the scatter over `size` elements (blocks of 256 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4); 4])?;
    let mut rng = SplitMix64::new(0x9a75_0004);
    let src = rng.f32s(size, -1.0, 1.0);
    let perm = rng.permutation(size);
    let srcb = dev.upload(&src)?;
    let permb = dev.upload(&perm)?;
    let mut outb = dev.alloc::<f32>(size)?;
    let mut dstb = dev.alloc::<f32>(size)?;
    let (grid, block) = (dims1d(blocks_for(size, 256)), dims1d(256));
    let mut pass = || -> spoc::Result<()> {
        gather.launch(dev, grid, block, (&srcb, &permb, &mut outb))?;
        scatter.launch(dev, grid, block, (&srcb, &permb, &mut dstb))
    };
    pass()?; // compiles the kernels
    let seconds = time_it(dev, pass)?;
    let got_out = outb.to_vec()?;
    let got_dst = dstb.to_vec()?;
    let want_out: Vec<f32> = perm.iter().map(|&p| src[p as usize]).collect();
    let mut want_dst = vec![0.0f32; size];
    for (i, &p) in perm.iter().enumerate() {
        want_dst[p as usize] = src[i];
    }
    Ok(Outcome::per_element("gather_scatter", size, seconds, 24.0)
        .check(check_exact("out (gather)", &got_out, &want_out))
        .check(check_exact("dst (scatter)", &got_dst, &want_dst)))
}
