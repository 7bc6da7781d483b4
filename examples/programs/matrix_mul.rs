//! `matrix_mul`: `C = A * B` for `n x n` f32 matrices, naive: one thread per element of `C`,
//! reading a row of `A` and a column of `B` from global memory; `2 n^3` flops. Checked exactly:
//! each element is summed in the order `p = 0, 1, …, n - 1` without FMA, as the host reference
//! does.

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64, Work};
use rayon::prelude::*;
use spoc::prelude::*;

/// `c[row][col] = sum_p a[row][p] * b[p][col]` for `n x n` row-major matrices.
#[kernel]
pub fn matmul_naive(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    let row = global_id_y();
    let col = global_id_x();
    if row < n && col < n {
        let mut acc = 0.0f32;
        for p in 0..n {
            acc += a[row * n + p] * b[p * n + col];
        }
        c[row * n + col] = acc;
    }
}

/// The inputs of both matrix programs: two `n x n` matrices with entries in `[-1, 1)`.
pub fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let mut rng = SplitMix64::new(0x3a73_0005);
    (rng.f32s(n * n, -1.0, 1.0), rng.f32s(n * n, -1.0, 1.0))
}

/// The host reference: each `c[r][col]` accumulated in `f32` over `p = 0..n` in order (rows in
/// parallel), each step `acc + a * b` rounded twice, or once with `fused` (`a.mul_add(b, acc)`,
/// as `sgemm` computes).
pub fn host_matmul(a: &[f32], b: &[f32], n: usize, fused: bool) -> Vec<f32> {
    let rows: Vec<usize> = (0..n).collect();
    host_matmul_rows(a, b, n, fused, &rows)
}

/// Rows `rows` of the `n x n` product `a * b` (row-major), one after the other, accumulated as
/// [`host_matmul`] does.
pub fn host_matmul_rows(a: &[f32], b: &[f32], n: usize, fused: bool, rows: &[usize]) -> Vec<f32> {
    let mut c = vec![0.0f32; rows.len() * n];
    c.par_chunks_mut(n.max(1))
        .zip(rows.par_iter())
        .for_each(|(row, &r)| {
            for p in 0..n {
                let arp = a[r * n + p];
                for (col, acc) in row.iter_mut().enumerate() {
                    *acc = if fused {
                        arp.mul_add(b[p * n + col], *acc)
                    } else {
                        *acc + arp * b[p * n + col]
                    };
                }
            }
        });
    c
}

/// Above this side the matrix programs check [`SAMPLED_ROWS`] rows, not all: the host
/// reference of a 16384² product is hours of CPU time.
pub const FULL_CHECK_MAX: usize = 2048;

/// How many rows (evenly spaced, the first and the last among them) a large product checks.
pub const SAMPLED_ROWS: usize = 64;

/// Runs the naive `matrix_mul` on `size x size` matrices (blocks of 16 x 16 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run_naive(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    let grid = dims2d(blocks_for(size, 16), blocks_for(size, 16));
    run_with(dev, size, "matrix_mul", false, |ab, bb, cb, n| {
        matmul_naive.launch(dev, grid, dims2d(16, 16), (ab, bb, cb, n))
    })
}

/// The driver of the matrix programs: makes the inputs, launches `launch(a, b, c, n)` once
/// untimed (it compiles the kernel) and once timed, and checks `c` against [`host_matmul`]
/// (`fused`: the kernel accumulates with `mul_add`).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run_with(
    dev: &Device,
    size: usize,
    name: &'static str,
    fused: bool,
    launch: impl FnMut(&Buffer<f32>, &Buffer<f32>, &mut Buffer<f32>, usize) -> spoc::Result<()>,
) -> spoc::Result<Outcome> {
    run_with_elems(
        dev,
        size,
        name,
        fused,
        <[f32]>::to_vec,
        <[f32]>::to_vec,
        launch,
    )
}

/// [`run_with`] for kernels whose buffers hold the matrices as elements `E` (`f32`, or rows of
/// 4-vectors `F32x4` when `n` is a multiple of 4): `pack` turns the row-major `f32` matrices into
/// the uploaded elements, `unpack` the downloaded result back.
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run_with_elems<E: spoc::DeviceCopy>(
    dev: &Device,
    size: usize,
    name: &'static str,
    fused: bool,
    pack: fn(&[f32]) -> Vec<E>,
    unpack: fn(&[E]) -> Vec<f32>,
    mut launch: impl FnMut(&Buffer<E>, &Buffer<E>, &mut Buffer<E>, usize) -> spoc::Result<()>,
) -> spoc::Result<Outcome> {
    let n = size;
    super::need(dev, &[(n * n, 4); 3])?;
    let (a, b) = inputs(n);
    let ab = dev.upload(&pack(&a))?;
    let bb = dev.upload(&pack(&b))?;
    let mut cb = dev.upload(&pack(&vec![0.0f32; n * n]))?;
    launch(&ab, &bb, &mut cb, n)?; // compiles the kernel
    let seconds = time_it(dev, || launch(&ab, &bb, &mut cb, n))?;
    let got = unpack(&cb.to_vec()?);
    let outcome = Outcome::new(
        name,
        size,
        format!("{n} x {n}"),
        seconds,
        Work::Flops(2.0 * (n as f64).powi(3)),
    );
    if n <= FULL_CHECK_MAX {
        return Ok(outcome.check(check_exact("c", &got, &host_matmul(&a, &b, n, fused))));
    }
    let rows: Vec<usize> = (0..SAMPLED_ROWS)
        .map(|k| k * (n - 1) / (SAMPLED_ROWS - 1))
        .collect();
    let sampled: Vec<f32> = rows
        .iter()
        .flat_map(|&r| got[r * n..(r + 1) * n].iter().copied())
        .collect();
    let want = host_matmul_rows(&a, &b, n, fused, &rows);
    let what = format!("c ({SAMPLED_ROWS} of {n} rows)");
    Ok(outcome.check(check_exact(&what, &sampled, &want)))
}
