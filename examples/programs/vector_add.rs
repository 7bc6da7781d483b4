//! `vector_add`: `c = a + b` over `n` f32 elements, as `F32x4` vectors (16-byte loads and
//! stores, whole-vector `+`) with a grid-stride loop; `n` that is not a multiple of 4 is padded
//! with zero lanes (not checked, not counted). 12 bytes moved per element. Checked exactly (one
//! IEEE addition per element, the same on every backend).

use super::{check_exact, lanes_of, time_it, upload_vec4, Outcome, SplitMix64};
use spoc::prelude::*;

/// `c[i] = a[i] + b[i]` for every vector `i < c.len()`, grid-stride.
#[kernel]
pub fn add_vec4(a: &[F32x4], b: &[F32x4], c: &mut [F32x4]) {
    let mut i = global_id_x();
    let stride = grid_dim_x() * block_dim_x();
    while i < c.len() {
        c[i] = a[i] + b[i];
        i += stride;
    }
}

/// Runs `vector_add` over `size` elements (`size / 4` vectors, rounded up).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size.div_ceil(4) * 4, 4); 3])?;
    let mut rng = SplitMix64::new(0x0add_0001);
    let a = rng.f32s(size, -1000.0, 1000.0);
    let b = rng.f32s(size, -1000.0, 1000.0);
    let (ab, grid, block) = upload_vec4(dev, &a)?;
    let (bb, _, _) = upload_vec4(dev, &b)?;
    let mut cb = dev.alloc::<F32x4>(ab.len())?;
    add_vec4.launch(dev, grid, block, (&ab, &bb, &mut cb))?; // compiles the kernel
    let seconds = time_it(dev, || {
        add_vec4.launch(dev, grid, block, (&ab, &bb, &mut cb))
    })?;
    let got = lanes_of(&cb, size)?;
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    Ok(
        Outcome::per_element("vector_add", size, seconds, 12.0)
            .check(check_exact("c", &got, &want)),
    )
}
