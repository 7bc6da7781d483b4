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

// ---------------------------------------------------------------------------------------------
// Tree reductions in shared memory, one per variant that a program or a test needs, so that
// they stand side by side instead of being copied between files.

/// `partial[block] = sum over this block's grid-stride elements of x[i] * y[i]`: the
/// `dot_product` program, blocks of 256 threads.
#[kernel]
pub fn dot_partial(x: &[f32], y: &[f32], partial: &mut [f32]) {
    let s = shared_array::<f32, 256>();
    let t = thread_idx_x();
    let mut acc = 0.0f32;
    let mut i = global_id_x();
    while i < x.len() {
        acc += x[i] * y[i];
        i += global_size_x();
    }
    s[t] = acc;
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
        partial[block_idx_x()] = s[0];
    }
}

/// `partial[block] = wrapping sum of this block's grid-stride elements`: the `reduction`
/// program, blocks of 256 threads.
#[kernel]
pub fn reduce_sum_u32(input: &[u32], partial: &mut [u32]) {
    let s = shared_array::<u32, 256>();
    let t = thread_idx_x();
    let mut acc = 0u32;
    let mut i = global_id_x();
    while i < input.len() {
        acc += input[i];
        i += global_size_x();
    }
    s[t] = acc;
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
        partial[block_idx_x()] = s[0];
    }
}

/// `out[block] = the sum of the block's elements of x` (0 past the end) in a dynamic shared
/// array of `4 * block_dim_x()` bytes: blocks of any power-of-two size
/// (`tests/launch_checks.rs`).
#[kernel]
pub fn block_sum_dynamic_u32(x: &[u32], out: &mut [u32]) {
    let s = dynamic_shared::<u32>();
    let t = thread_idx_x();
    let i = global_id_x();
    s[t] = if i < x.len() { x[i] } else { 0 };
    sync_threads();
    let mut stride = block_dim_x() / 2;
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

/// `out[block] = the sum of the block's elements of x` (0 past the end) in a 1024-element
/// shared array: blocks of any power-of-two size up to 1024 (`tests/native_simt.rs`).
#[kernel]
pub fn block_sum_1024(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 1024>();
    let t = thread_idx_x();
    let i = global_id_x();
    s[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    let mut stride = block_dim_x() / 2;
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

/// `sums[block] = the sum of the block's 256 values`, unguarded (the grid must cover `x`
/// exactly), in a shared array named `tile` (`tests/lang_lowering.rs` looks for it in the IR).
#[kernel]
pub fn tile_sum(x: &[f32], sums: &mut [f32]) {
    let t = thread_idx_x();
    let tile = shared_array::<f32, 256>();
    tile[t] = x[global_id_x()];
    sync_threads();
    let mut s = 128;
    while s > 0 {
        if t < s {
            tile[t] += tile[t + s];
        }
        sync_threads();
        s /= 2;
    }
    if t == 0 {
        sums[block_idx_x()] = tile[0];
    }
}
