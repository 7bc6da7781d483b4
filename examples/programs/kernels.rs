//! Kernels shared beyond one program, written once: the examples and benchmarks use them
//! through `programs::kernels`, the root package's tests include this file as a module of
//! their corpus (`tests/corpus`, `tests/sanitizer.rs`, …), so that no copy can drift.
//!
//! The file is self-contained (it uses the prelude alone) for that reason.

use spoc::prelude::*;

/// `y[i] = a * x[i] + y[i]` for `i < y.len()`: two roundings, never an FMA.
#[kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// `out[block] = the sum of the block's elements of x` (0 past the end), by a tree in a
/// 256-element shared array: blocks of 256 threads.
#[kernel]
pub fn block_sum(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 256>();
    let t = thread_idx_x();
    let i = global_id_x();
    s[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    let mut stride = 128usize;
    while stride > 0 {
        if t < stride {
            s[t] += s[t + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx_x()] = s[0];
    }
}

/// `out[py * width + px]`: iterations before `|z| > 2` for `c` at the pixel's position in
/// `[-2, 1] x [-1.25, 1.25]`, at most `max_iter`.
#[kernel]
pub fn mandelbrot(out: &mut [u32], width: usize, height: usize, max_iter: u32) {
    let px = global_id_x();
    let py = global_id_y();
    if px >= width || py >= height {
        return;
    }
    let cx = -2.0f32 + 3.0 * (px as f32) / (width as f32);
    let cy = -1.25f32 + 2.5 * (py as f32) / (height as f32);
    let mut x = 0.0f32;
    let mut y = 0.0f32;
    let mut it = 0u32;
    while it < max_iter {
        let xx = x * x;
        let yy = y * y;
        if xx + yy > 4.0 {
            break;
        }
        y = 2.0 * x * y + cy;
        x = xx - yy + cx;
        it += 1;
    }
    out[py * width + px] = it;
}

/// The host reference of [`mandelbrot`] for one pixel: the same `f32` operations in the same
/// order, so the counts agree exactly.
#[allow(dead_code)] // not every test binary that includes this file checks mandelbrot
pub fn mandelbrot_escape(px: usize, py: usize, width: usize, height: usize, max_iter: u32) -> u32 {
    let cx = -2.0f32 + 3.0 * (px as f32) / (width as f32);
    let cy = -1.25f32 + 2.5 * (py as f32) / (height as f32);
    let (mut x, mut y, mut it) = (0.0f32, 0.0f32, 0u32);
    while it < max_iter {
        let (xx, yy) = (x * x, y * y);
        if xx + yy > 4.0 {
            break;
        }
        y = 2.0 * x * y + cy;
        x = xx - yy + cx;
        it += 1;
    }
    it
}
