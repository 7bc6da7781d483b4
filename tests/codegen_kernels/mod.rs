//! Kernels and `#[device]` helpers shared by the root generator tests (`codegen_c.rs`,
//! `codegen_naga.rs`) and `macro_smoke.rs`, written once. The kernels of the root corpus
//! (`tests/corpus`) are reached through that module instead.

use spoc::prelude::*;

/// `min(v, 1)`, and 0 for negative `v` (an early `return` in a helper).
#[device]
pub fn clamp01(v: f32) -> f32 {
    if v < 0.0 {
        return 0.0;
    }
    v.min(1.0)
}

/// `x[0] + … + x[n - 1]` (a loop over a buffer in a helper).
#[device]
pub fn sum_first(x: &[f32], n: usize) -> f32 {
    let mut s = 0.0f32;
    for j in 0..n {
        s += x[j];
    }
    s
}

/// A barrier after a conditional read; `out[i % out.len()] = x[i]` (0 past the end).
#[kernel]
pub fn block_reduce(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    let mut s = 0.0f32;
    if i < x.len() {
        s = x[i];
    }
    sync_threads();
    out[i % out.len()] = s;
}
