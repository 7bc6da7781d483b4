//! `transpose`: `B = A^T` for a `width x height` f32 matrix (`height` = 3/4 of `width`), naive:
//! one thread per element, reads coalesced, writes strided; 8 bytes moved per element. Checked
//! exactly.

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64, Work};
use spoc::prelude::*;

/// `output[x][y] = input[y][x]`: `input` is `height` rows of `width`, `output` `width` rows of
/// `height`.
#[kernel]
pub fn transpose_naive(input: &[f32], output: &mut [f32], width: usize, height: usize) {
    let x = global_id_x();
    let y = global_id_y();
    if x < width && y < height {
        output[x * height + y] = input[y * width + x];
    }
}

/// The matrix shape for `size`: `(width, height)` with `height = 3 * size / 4` (at least 1).
pub fn shape(size: usize) -> (usize, usize) {
    (size, (size * 3 / 4).max(1))
}

/// The input matrix (row-major `height x width`) and its host transpose.
pub fn input_and_reference(width: usize, height: usize) -> (Vec<f32>, Vec<f32>) {
    let mut rng = SplitMix64::new(0x7a05_0006);
    let a = rng.f32s(width * height, -1.0, 1.0);
    let mut t = vec![0.0f32; width * height];
    for y in 0..height {
        for x in 0..width {
            t[x * height + y] = a[y * width + x];
        }
    }
    (a, t)
}

/// Runs the naive `transpose` (blocks of 16 x 16 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run_naive(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let (w, h) = shape(size);
    let grid = dims2d(blocks_for(w, 16), blocks_for(h, 16));
    run_with(dev, size, "transpose", |ab, tb, w, h| {
        transpose_naive.launch(dev, grid, dims2d(16, 16), (ab, tb, w, h))
    })
}

/// The driver of both transpose programs: makes the input of [`shape`]`(size)`, launches
/// `launch(a, b, width, height)` once untimed (it compiles the kernel) and once timed, and
/// checks `b` against the host transpose.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run_with(
    dev: &Device,
    size: usize,
    name: &'static str,
    mut launch: impl FnMut(&Buffer<f32>, &mut Buffer<f32>, usize, usize) -> spoc::Result<()>,
) -> spoc::Result<Outcome> {
    let (w, h) = shape(size);
    super::need(dev, &[(w * h, 4); 2])?;
    let (a, want) = input_and_reference(w, h);
    let ab = dev.upload(&a)?;
    let mut tb = dev.alloc::<f32>(w * h)?;
    launch(&ab, &mut tb, w, h)?; // compiles the kernel
    let seconds = time_it(dev, || launch(&ab, &mut tb, w, h))?;
    let got = tb.to_vec()?;
    Ok(Outcome::new(
        name,
        size,
        format!("{w} x {h}"),
        seconds,
        Work::Bytes(8.0 * (w * h) as f64),
    )
    .check(check_exact("b", &got, &want)))
}
