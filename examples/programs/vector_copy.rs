//! `vector_copy`: `b = a` over `n` f32 elements; 8 bytes moved per element. Checked exactly.

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64};
use spoc::prelude::*;

/// `dst[i] = src[i]` for every `i < dst.len()`.
#[kernel]
pub fn copy_f32(src: &[f32], dst: &mut [f32]) {
    let i = global_id_x();
    if i < dst.len() {
        dst[i] = src[i];
    }
}

/// Runs `vector_copy` over `size` elements (blocks of 256 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4); 2])?;
    let mut rng = SplitMix64::new(0xc0b1_0002);
    let a = rng.f32s(size, -1e6, 1e6);
    let ab = dev.upload(&a)?;
    let mut bb = dev.alloc::<f32>(size)?;
    let (grid, block) = (dims1d(blocks_for(size, 256)), dims1d(256));
    copy_f32.launch(dev, grid, block, (&ab, &mut bb))?; // compiles the kernel
    let seconds = time_it(dev, || copy_f32.launch(dev, grid, block, (&ab, &mut bb)))?;
    let got = bb.to_vec()?;
    Ok(Outcome::per_element("vector_copy", size, seconds, 8.0).check(check_exact("b", &got, &a)))
}
