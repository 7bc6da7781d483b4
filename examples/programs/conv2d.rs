//! `conv2d`: 3 x 3 convolutions of a generated `n x n` grey image (f32 in `[0, 1]`), edges
//! clamped: a blur (`[1 2 1; 2 4 2; 1 2 1] / 16`) and an edge filter (the Laplacian
//! `[0 -1 0; -1 4 -1; 0 -1 0]`); 8 bytes moved per pixel and filter. Checked exactly (the nine
//! products summed in the same order as the host reference). The example writes
//! `target/conv2d_input.png`, `target/conv2d_blur.png` and `target/conv2d_edges.png`.

use super::{blocks_for, check_exact, grey_image, time_it, Outcome, SplitMix64, Work};
use rayon::prelude::*;
use spoc::prelude::*;

/// Blur weights, row-major.
pub const BLUR: [f32; 9] = [
    1.0 / 16.0,
    2.0 / 16.0,
    1.0 / 16.0,
    2.0 / 16.0,
    4.0 / 16.0,
    2.0 / 16.0,
    1.0 / 16.0,
    2.0 / 16.0,
    1.0 / 16.0,
];
/// Laplacian edge weights, row-major.
pub const EDGES: [f32; 9] = [0.0, -1.0, 0.0, -1.0, 4.0, -1.0, 0.0, -1.0, 0.0];

/// `dst[y][x] = sum_{dy, dx in 0..3} weights[3 dy + dx] * src[y + dy - 1][x + dx - 1]`, the
/// source coordinates clamped to the image.
#[kernel]
pub fn conv3x3(src: &[f32], weights: &[f32], dst: &mut [f32], width: usize, height: usize) {
    let x = global_id_x();
    let y = global_id_y();
    if x < width && y < height {
        let mut acc = 0.0f32;
        for dy in 0usize..3 {
            let sy = (y + dy).max(1).min(height) - 1;
            for dx in 0usize..3 {
                let sx = (x + dx).max(1).min(width) - 1;
                acc += weights[dy * 3 + dx] * src[sy * width + sx];
            }
        }
        dst[y * width + x] = acc;
    }
}

/// A test picture: soft rings around the centre, a bright square, a dark diagonal band and a
/// little noise, in `[0, 1]`.
pub fn generate_image(n: usize) -> Vec<f32> {
    let mut rng = SplitMix64::new(0xc04f_0007);
    let c = n as f32 / 2.0;
    let mut img = Vec::with_capacity(n * n);
    for y in 0..n {
        for x in 0..n {
            let (fx, fy) = (x as f32, y as f32);
            let r = ((fx - c).powi(2) + (fy - c).powi(2)).sqrt() / (n as f32 / 12.0);
            let mut v = 0.35 + 0.25 * (r * std::f32::consts::PI).cos();
            if fx > 0.6 * n as f32
                && fx < 0.85 * n as f32
                && fy > 0.1 * n as f32
                && fy < 0.35 * n as f32
            {
                v = 0.95;
            }
            if (fx - fy).abs() < n as f32 / 40.0 {
                v *= 0.3;
            }
            v += rng.f32_in(-0.01, 0.01);
            img.push(v.clamp(0.0, 1.0));
        }
    }
    img
}

/// The host reference of [`conv3x3`] (rows in parallel).
pub fn host_conv(src: &[f32], w: &[f32; 9], width: usize, height: usize) -> Vec<f32> {
    let mut dst = vec![0.0f32; width * height];
    dst.par_chunks_mut(width.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            for (x, d) in row.iter_mut().enumerate() {
                let mut acc = 0.0f32;
                for dy in 0..3 {
                    let sy = (y + dy).clamp(1, height) - 1;
                    for dx in 0..3 {
                        let sx = (x + dx).clamp(1, width) - 1;
                        acc += w[dy * 3 + dx] * src[sy * width + sx];
                    }
                }
                *d = acc;
            }
        });
    dst
}

/// Runs both filters on a `size x size` image (blocks of 16 x 16 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let n = size;
    super::need(dev, &[(n * n, 4); 3])?;
    let img = generate_image(n);
    let srcb = dev.upload(&img)?;
    let blurw = dev.upload(&BLUR)?;
    let edgew = dev.upload(&EDGES)?;
    let mut blurb = dev.alloc::<f32>(n * n)?;
    let mut edgeb = dev.alloc::<f32>(n * n)?;
    let grid = dims2d(blocks_for(n, 16), blocks_for(n, 16));
    let block = dims2d(16, 16);
    let mut pass = || -> spoc::Result<()> {
        conv3x3.launch(dev, grid, block, (&srcb, &blurw, &mut blurb, n, n))?;
        conv3x3.launch(dev, grid, block, (&srcb, &edgew, &mut edgeb, n, n))
    };
    pass()?; // compiles the kernel
    let seconds = time_it(dev, pass)?;
    let blur = blurb.to_vec()?;
    let edges = edgeb.to_vec()?;
    let mut outcome = Outcome::new(
        "conv2d",
        size,
        format!("{n} x {n}, 2 filters"),
        seconds,
        Work::Bytes(2.0 * 8.0 * (n * n) as f64),
    )
    .check(check_exact("blur", &blur, &host_conv(&img, &BLUR, n, n)))
    .check(check_exact("edges", &edges, &host_conv(&img, &EDGES, n, n)));
    let edge_mag: Vec<f32> = edges.iter().map(|v| v.abs()).collect();
    outcome.images = vec![
        grey_image("conv2d_input", n, n, &img, 0.0, 1.0),
        grey_image("conv2d_blur", n, n, &blur, 0.0, 1.0),
        grey_image("conv2d_edges", n, n, &edge_mag, 0.0, 0.25),
    ];
    Ok(outcome)
}
