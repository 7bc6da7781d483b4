//! `stream_triad`: STREAM's triad `a = b + s * c` over `n` f32 elements, as `F32x4` vectors
//! (16-byte loads and stores, whole-vector arithmetic) with a grid-stride loop; `n` that is not
//! a multiple of 4 is padded with zero lanes (not checked, not counted). 12 bytes moved and 2
//! flops per element. Checked exactly: spoc does not contract `b + s * c` into an FMA, so every
//! backend rounds the product and the sum separately, as the host does.

use super::{check_exact, lanes_of, time_it, upload_vec4, Outcome, SplitMix64};
use spoc::prelude::*;

/// `a[i] = b[i] + s * c[i]` for every `i < a.len()`, one element per thread (the scalar form;
/// `examples/checked_overhead.rs` measures it).
#[kernel]
pub fn triad(a: &mut [f32], b: &[f32], c: &[f32], s: f32) {
    let i = global_id_x();
    if i < a.len() {
        a[i] = b[i] + s * c[i];
    }
}

/// `a[i] = b[i] + s * c[i]` for every vector `i < a.len()`, grid-stride.
#[kernel]
pub fn triad_vec4(a: &mut [F32x4], b: &[F32x4], c: &[F32x4], s: f32) {
    let mut i = global_id_x();
    let stride = grid_dim_x() * block_dim_x();
    while i < a.len() {
        a[i] = b[i] + s * c[i];
        i += stride;
    }
}

/// Runs `stream_triad` over `size` elements with `s = 3.0` (`size / 4` vectors, rounded up).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size.div_ceil(4) * 4, 4); 3])?;
    let mut rng = SplitMix64::new(0x7c1a_0003);
    let b = rng.f32s(size, -10.0, 10.0);
    let c = rng.f32s(size, -10.0, 10.0);
    let s = 3.0f32;
    let (bb, grid, block) = upload_vec4(dev, &b)?;
    let (cb, _, _) = upload_vec4(dev, &c)?;
    let mut ab = dev.alloc::<F32x4>(bb.len())?;
    triad_vec4.launch(dev, grid, block, (&mut ab, &bb, &cb, s))?; // compiles the kernel
    let seconds = time_it(dev, || {
        triad_vec4.launch(dev, grid, block, (&mut ab, &bb, &cb, s))
    })?;
    let got = lanes_of(&ab, size)?;
    let want: Vec<f32> = b.iter().zip(&c).map(|(b, c)| b + s * c).collect();
    Ok(Outcome::per_element("stream_triad", size, seconds, 12.0)
        .check(check_exact("a", &got, &want)))
}
