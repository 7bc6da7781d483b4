//! `mandelbrot`: escape counts of the Mandelbrot set over `[-2, 1] x [-1.25, 1.25]`, at most 256
//! iterations per pixel; 8 flops counted per iteration. Checked exactly (the same f32 operations
//! in the same order as the host reference). The example writes `target/mandelbrot.png`.

use super::{blocks_for, check_exact, palette, time_it, Image, Outcome, Work};
use rayon::prelude::*;
use spoc::prelude::*;

/// Iteration cap.
pub const MAX_ITER: u32 = 256;

/// The kernel, shared with the root tests' corpus.
pub use crate::kernels::mandelbrot as mandel;
use crate::kernels::mandelbrot_escape;

/// The host reference of [`mandel`] (rows in parallel).
pub fn host_mandel(width: usize, height: usize, max_iter: u32) -> Vec<u32> {
    let mut out = vec![0u32; width * height];
    out.par_chunks_mut(width.max(1))
        .enumerate()
        .for_each(|(py, row)| {
            for (px, o) in row.iter_mut().enumerate() {
                *o = mandelbrot_escape(px, py, width, height, max_iter);
            }
        });
    out
}

/// Runs `mandelbrot` on a `size x (5 size / 6)` image (blocks of 16 x 16 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let (w, h) = (size, (size * 5 / 6).max(1));
    super::need(dev, &[(w * h, 4)])?;
    let mut ob = dev.alloc::<u32>(w * h)?;
    let grid = dims2d(blocks_for(w, 16), blocks_for(h, 16));
    let block = dims2d(16, 16);
    mandel.launch(dev, grid, block, (&mut ob, w, h, MAX_ITER))?; // compiles the kernel
    let seconds = time_it(dev, || {
        mandel.launch(dev, grid, block, (&mut ob, w, h, MAX_ITER))
    })?;
    let got = ob.to_vec()?;
    let iterations: f64 = got.iter().map(|&i| i as f64).sum();
    let rgb = got
        .iter()
        .flat_map(|&it| {
            if it >= MAX_ITER {
                [0, 0, 0]
            } else {
                palette((it as f32 / MAX_ITER as f32).sqrt())
            }
        })
        .collect();
    let mut outcome = Outcome::new(
        "mandelbrot",
        size,
        format!("{w} x {h}"),
        seconds,
        Work::Flops(8.0 * iterations),
    )
    .check(check_exact("out", &got, &host_mandel(w, h, MAX_ITER)));
    outcome.images.push(Image {
        file: "mandelbrot",
        width: w as u32,
        height: h as u32,
        rgb,
    });
    Ok(outcome)
}
