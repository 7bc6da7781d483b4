//! `stencil_2d`: Jacobi relaxation of Laplace's equation on an `n x n` grid, 5-point stencil,
//! [`ITERATIONS`] sweeps ping-ponging between two buffers; the boundary is fixed (top row 1, the
//! other edges 0). 8 bytes moved per point and sweep. Checked exactly (the same f32 operations
//! in the same order as the host reference).

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64, Work};
use rayon::prelude::*;
use spoc::prelude::*;

/// Sweeps per run (even, so the result ends in the first buffer).
pub const ITERATIONS: usize = 20;

/// One sweep: interior points become the mean of their four neighbours, boundary points are
/// copied.
#[kernel]
pub fn jacobi5(src: &[f32], dst: &mut [f32], n: usize) {
    let x = global_id_x();
    let y = global_id_y();
    if x < n && y < n {
        let i = y * n + x;
        if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
            dst[i] = src[i];
        } else {
            dst[i] = 0.25f32 * (src[i - 1] + src[i + 1] + src[i - n] + src[i + n]);
        }
    }
}

/// The starting grid: top row 1, other edges 0, interior random in `[0, 1)`.
pub fn initial(n: usize) -> Vec<f32> {
    let mut rng = SplitMix64::new(0x57e0_0008);
    let mut g = vec![0.0f32; n * n];
    for y in 0..n {
        for x in 0..n {
            g[y * n + x] = if y == 0 {
                1.0
            } else if x == 0 || x == n - 1 || y == n - 1 {
                0.0
            } else {
                rng.f32_in(0.0, 1.0)
            };
        }
    }
    g
}

/// The host reference: `iterations` sweeps of [`jacobi5`] (rows in parallel).
pub fn host_jacobi(mut g: Vec<f32>, n: usize, iterations: usize) -> Vec<f32> {
    let mut next = g.clone();
    for _ in 0..iterations {
        next.par_chunks_mut(n.max(1))
            .enumerate()
            .for_each(|(y, row)| {
                for (x, d) in row.iter_mut().enumerate() {
                    let i = y * n + x;
                    *d = if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
                        g[i]
                    } else {
                        0.25f32 * (g[i - 1] + g[i + 1] + g[i - n] + g[i + n])
                    };
                }
            });
        std::mem::swap(&mut g, &mut next);
    }
    g
}

/// Runs [`ITERATIONS`] sweeps on a `size x size` grid (blocks of 16 x 16 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let n = size;
    super::need(dev, &[(n * n, 4); 2])?;
    let g0 = initial(n);
    let mut ab = dev.upload(&g0)?;
    let mut bb = dev.upload(&g0)?;
    let grid = dims2d(blocks_for(n, 16), blocks_for(n, 16));
    let block = dims2d(16, 16);
    jacobi5.launch(dev, grid, block, (&ab, &mut bb, n))?; // compiles the kernel
    let sweeps = |ab: &mut spoc::Buffer<f32>, bb: &mut spoc::Buffer<f32>| -> spoc::Result<()> {
        for _ in 0..ITERATIONS / 2 {
            jacobi5.launch(dev, grid, block, (&*ab, &mut *bb, n))?;
            jacobi5.launch(dev, grid, block, (&*bb, &mut *ab, n))?;
        }
        Ok(())
    };
    // Timed back to back (each pass sweeps on), then the sweeps from `g0` for the check.
    let seconds = time_it(dev, || sweeps(&mut ab, &mut bb))?;
    ab.upload_from(&g0)?;
    bb.upload_from(&g0)?;
    sweeps(&mut ab, &mut bb)?;
    let got = ab.to_vec()?;
    Ok(Outcome::new(
        "stencil_2d",
        size,
        format!("{n} x {n}, {ITERATIONS} sweeps"),
        seconds,
        Work::Bytes(8.0 * (n * n * ITERATIONS) as f64),
    )
    .check(check_exact("grid", &got, &host_jacobi(g0, n, ITERATIONS))))
}
