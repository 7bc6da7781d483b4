//! Kernels and data shared by the stream and graph suites (`tests/streams.rs`,
//! `tests/graphs.rs`).

use spoc::prelude::*;

/// `y = 2 y + 1`, `iters` times (a kernel that takes a while when `iters` is large).
#[kernel]
pub fn twice_plus_one(y: &mut [f32], iters: u32) {
    let i = global_id_x();
    if i < y.len() {
        let mut v = y[i];
        let mut k = 0;
        while k < iters {
            v = v * 2.0 + 1.0;
            k += 1;
        }
        y[i] = v;
    }
}

/// `out = y - x`.
#[kernel]
pub fn minus(y: &[f32], x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        out[i] = y[i] - x[i];
    }
}

pub fn twice_plus_one_host(v: f32, iters: u32) -> f32 {
    (0..iters).fold(v, |v, _| v * 2.0 + 1.0)
}

pub fn data(n: usize) -> Vec<f32> {
    (0..n).map(|k| (k % 13) as f32 * 0.25 - 1.0).collect()
}

pub const N: usize = 300;

pub fn grid() -> Dims {
    dims1d(crate::common::blocks_for(N, 64))
}
