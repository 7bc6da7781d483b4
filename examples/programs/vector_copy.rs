//! `vector_copy`: `b = a` over `n` f32 elements, as `F32x4` vectors (one 16-byte load and store
//! per vector, `ld.global.nc.v4.f32` in PTX) with a grid-stride loop; `n` that is not a multiple
//! of 4 is padded with zero lanes (not checked, not counted). 8 bytes moved per element.
//! Checked exactly.

use super::{check_exact, lanes_of, time_it, upload_vec4, Outcome, SplitMix64};
use spoc::prelude::*;

/// `dst[i] = src[i]` for every vector `i < dst.len()`, grid-stride.
#[kernel]
pub fn copy_vec4(src: &[F32x4], dst: &mut [F32x4]) {
    let mut i = global_id_x();
    let stride = grid_dim_x() * block_dim_x();
    while i < dst.len() {
        dst[i] = src[i];
        i += stride;
    }
}

/// Runs `vector_copy` over `size` elements (`size / 4` vectors, rounded up).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size.div_ceil(4) * 4, 4); 2])?;
    let mut rng = SplitMix64::new(0xc0b1_0002);
    let a = rng.f32s(size, -1e6, 1e6);
    let (ab, grid, block) = upload_vec4(dev, &a)?;
    let mut bb = dev.alloc::<F32x4>(ab.len())?;
    copy_vec4.launch(dev, grid, block, (&ab, &mut bb))?; // compiles the kernel
    let seconds = time_it(dev, || copy_vec4.launch(dev, grid, block, (&ab, &mut bb)))?;
    let got = lanes_of(&bb, size)?;
    Ok(Outcome::per_element("vector_copy", size, seconds, 8.0).check(check_exact("b", &got, &a)))
}
