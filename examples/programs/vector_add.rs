//! `vector_add`: `c = a + b` over `n` f32 elements; 12 bytes moved per element. Checked exactly
//! (one IEEE addition per element, the same on every backend).

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64};
use spoc::prelude::*;

/// `c[i] = a[i] + b[i]` for every `i < c.len()`.
#[kernel]
pub fn add_f32(a: &[f32], b: &[f32], c: &mut [f32]) {
    let i = global_id_x();
    if i < c.len() {
        c[i] = a[i] + b[i];
    }
}

/// Runs `vector_add` over `size` elements (blocks of 256 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, 4); 3])?;
    let mut rng = SplitMix64::new(0x0add_0001);
    let a = rng.f32s(size, -1000.0, 1000.0);
    let b = rng.f32s(size, -1000.0, 1000.0);
    let ab = dev.upload(&a)?;
    let bb = dev.upload(&b)?;
    let mut cb = dev.alloc::<f32>(size)?;
    let (grid, block) = (dims1d(blocks_for(size, 256)), dims1d(256));
    add_f32.launch(dev, grid, block, (&ab, &bb, &mut cb))?; // compiles the kernel
    let seconds = time_it(dev, || {
        add_f32.launch(dev, grid, block, (&ab, &bb, &mut cb))
    })?;
    let got = cb.to_vec()?;
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    Ok(
        Outcome::per_element("vector_add", size, seconds, 12.0)
            .check(check_exact("c", &got, &want)),
    )
}
