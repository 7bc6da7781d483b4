//! `saxpy_vec4`: `y = a * x + y` over `n` f32 elements, four at a time: the buffers are
//! `F32x4` vectors (one 16-byte load per operand per thread and step, `ld.global.v4.f32` in
//! PTX), and a grid-stride loop takes each thread over several vectors. 12 bytes moved per
//! element. `n` that is not a multiple of 4 is padded with zero lanes (not checked, not
//! counted). Checked against `a * x + y` on the host within one rounding (a GPU may contract
//! the multiply-add into an fma).

use super::{check_close, lanes_of, time_it, upload_vec4, Outcome, SplitMix64};
use spoc::prelude::*;

/// `y[i] = a * x[i] + y[i]` lane by lane for every vector `i < y.len()`, grid-stride.
#[kernel]
pub fn saxpy_vec4(a: f32, x: &[F32x4], y: &mut [F32x4]) {
    let mut i = global_id_x();
    let stride = grid_dim_x() * block_dim_x();
    while i < y.len() {
        let xv = x[i];
        let yv = y[i];
        y[i] = F32x4::new(
            a * xv.x + yv.x,
            a * xv.y + yv.y,
            a * xv.z + yv.z,
            a * xv.w + yv.w,
        );
        i += stride;
    }
}

/// Runs `saxpy_vec4` over `size` f32 elements (`size / 4` vectors, rounded up).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size.div_ceil(4) * 4, 4); 2])?;
    let mut rng = SplitMix64::new(0x5a4_0004);
    let x = rng.f32s(size, -1000.0, 1000.0);
    let y = rng.f32s(size, -1000.0, 1000.0);
    let a = 1.5f32;
    let (xb, grid, block) = upload_vec4(dev, &x)?;
    let (mut yb, _, _) = upload_vec4(dev, &y)?;
    // One untimed pass compiles the kernel; the passes are timed back to back (each updates
    // `y` again), then one pass on the original `y` for the check: y = a x + y.
    saxpy_vec4.launch(dev, grid, block, (a, &xb, &mut yb))?;
    let seconds = time_it(dev, || {
        saxpy_vec4.launch(dev, grid, block, (a, &xb, &mut yb))
    })?;
    yb = upload_vec4(dev, &y)?.0;
    saxpy_vec4.launch(dev, grid, block, (a, &xb, &mut yb))?;
    let got = lanes_of(&yb, size)?;
    let want: Vec<f64> = (0..size).map(|i| f64::from(a * x[i] + y[i])).collect();
    let scale: Vec<f64> = (0..size)
        .map(|i| f64::from((a * x[i]).abs()) + f64::from(y[i].abs()))
        .collect();
    Ok(
        Outcome::per_element("saxpy_vec4", size, seconds, 12.0).check(check_close(
            "y",
            &got,
            &want,
            &scale,
            4.0 * f64::from(f32::EPSILON),
            0.0,
        )),
    )
}
