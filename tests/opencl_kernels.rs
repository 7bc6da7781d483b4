//! `#[kernel]` kernels on the OpenCL backend (PoCL here and in CI), each compared bit for bit
//! with the Interpreter, the reference.
//!
//! Without OpenCL every test prints why and passes, unless `SPOC_REQUIRE_BACKENDS` names
//! `opencl` (comma-separated, case-insensitive; CI sets it): then a missing backend fails.

#![allow(clippy::manual_clamp)]

mod common;

use common::{blocks_for, pseudo_random};
use spoc::prelude::*;
use spoc::{Buffer, Device, Error};

fn required() -> bool {
    std::env::var("SPOC_REQUIRE_BACKENDS").is_ok_and(|v| {
        v.split([',', ' '])
            .any(|b| b.trim().eq_ignore_ascii_case("opencl"))
    })
}

/// Runs `f(opencl_device, interpreter)` for every OpenCL device, or prints why there is none.
///
/// # Panics
/// If OpenCL is unavailable and `SPOC_REQUIRE_BACKENDS` names it.
fn each_opencl(test: &str, f: impl Fn(&Device, &Device)) {
    let interp = spoc::init_device(Some("Interpreter")).expect("the Interpreter always runs");
    let devs = match spoc::all_devices(Some("OpenCL")) {
        Ok(d) if !d.is_empty() => d,
        other => {
            let why = match other {
                Err(e) => e.to_string(),
                Ok(_) => "no OpenCL device".into(),
            };
            if required() {
                panic!("SPOC_REQUIRE_BACKENDS names opencl, but OpenCL is unavailable: {why}");
            }
            eprintln!("SKIPPED {test}: OpenCL is unavailable: {why}");
            return;
        }
    };
    for cl in &devs {
        eprintln!("{test} on {cl}");
        f(cl, &interp);
    }
}

/// Float results as bits, so that -0.0 differs from 0.0; every NaN is one value (NaN payloads
/// differ between devices: NVIDIA's OpenCL returns 0x7fffffff where the host propagates the
/// operand's payload).
fn bits32(v: &Buffer<f32>) -> Vec<u32> {
    v.to_vec()
        .unwrap()
        .iter()
        .map(|x| if x.is_nan() { f32::NAN } else { *x }.to_bits())
        .collect()
}

fn bits64(v: &Buffer<f64>) -> Vec<u64> {
    v.to_vec()
        .unwrap()
        .iter()
        .map(|x| if x.is_nan() { f64::NAN } else { *x }.to_bits())
        .collect()
}

// ---------------------------------------------------------------- saxpy

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[test]
fn saxpy_matches_interpreter() {
    each_opencl("saxpy_matches_interpreter", |cl, interp| {
        let n = 10_007;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.731).sin() * 1e3).collect();
        let y0: Vec<f32> = (0..n).map(|i| (i % 97) as f32 / 7.0 - 3.0).collect();
        let run = |dev: &Device| {
            let xb = dev.upload(&x).unwrap();
            let mut yb = dev.upload(&y0).unwrap();
            saxpy
                .launch(
                    dev,
                    dims1d(blocks_for(n, 128)),
                    dims1d(128),
                    (1.37, &xb, &mut yb),
                )
                .unwrap();
            bits32(&yb)
        };
        let got = run(cl);
        assert_eq!(got, run(interp));
        // Not contracted into an FMA: exactly Rust's `a * x + y`.
        let want: Vec<u32> = x
            .iter()
            .zip(&y0)
            .map(|(x, y)| (1.37f32 * x + y).to_bits())
            .collect();
        assert_eq!(got, want);
    });
}

// ---------------------------------------------------------------- integers

#[kernel]
fn int_ops(a: &[i32], b: &[i32], u: &[u32], out_i: &mut [i32], out_u: &mut [u32]) {
    let i = global_id_x();
    if i < out_i.len() {
        let x = a[i];
        let y = b[i] | 1;
        out_i[i] = x * y + x / y - x % y + (x & 0xff) - (y ^ 0x55) + (x >> 3) + (y << 2) - -x;
        let v = u[i];
        let s = v % 32;
        let mut h = v ^ (v >> 16);
        h = h * 0x45d9f3b;
        h ^= h >> 16;
        out_u[i] = h + (v << s) + (v >> (31 - s)) + !v + v / (s + 1) + v % (s + 3);
    }
}

#[kernel]
fn int64_ops(a: &[i64], k: i64, m: u64, out: &mut [i64], out_u: &mut [u64]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        out[i] = x * k - (x >> 7) + x % 1_000_003 + (i as i64) * 4_294_967_296 + x / (k | 1);
        let y = x as u64;
        out_u[i] = y * m + (y >> 11) + y / (m | 1) + (y ^ m);
    }
}

#[test]
fn integer_kernels_match_interpreter() {
    each_opencl("integer_kernels_match_interpreter", |cl, interp| {
        let n = 4099;
        let mut a: Vec<i32> = pseudo_random(1, n).iter().map(|&v| v as i32).collect();
        let mut b: Vec<i32> = pseudo_random(2, n)
            .iter()
            .map(|&v| (v >> 40) as i32)
            .collect();
        // The corners: MIN / -1 wraps, MIN % -1 is 0.
        a[..4].copy_from_slice(&[i32::MIN, i32::MIN, i32::MAX, -1]);
        b[..4].copy_from_slice(&[-1, 1, -1, i32::MIN]);
        let u: Vec<u32> = pseudo_random(3, n).iter().map(|&v| v as u32).collect();
        let a64: Vec<i64> = pseudo_random(4, n).iter().map(|&v| v as i64).collect();
        let run = |dev: &Device| {
            let (ab, bb, ub) = (
                dev.upload(&a).unwrap(),
                dev.upload(&b).unwrap(),
                dev.upload(&u).unwrap(),
            );
            let mut oi = dev.alloc::<i32>(n).unwrap();
            let mut ou = dev.alloc::<u32>(n).unwrap();
            let grid = dims1d(blocks_for(n, 64));
            int_ops
                .launch(dev, grid, dims1d(64), (&ab, &bb, &ub, &mut oi, &mut ou))
                .unwrap();
            let a64b = dev.upload(&a64).unwrap();
            let mut o64 = dev.alloc::<i64>(n).unwrap();
            let mut ou64 = dev.alloc::<u64>(n).unwrap();
            int64_ops
                .launch(
                    dev,
                    grid,
                    dims1d(64),
                    (
                        &a64b,
                        -7_777_777_777i64,
                        0x9e37_79b9_7f4a_7c15u64,
                        &mut o64,
                        &mut ou64,
                    ),
                )
                .unwrap();
            (
                oi.to_vec().unwrap(),
                ou.to_vec().unwrap(),
                o64.to_vec().unwrap(),
                ou64.to_vec().unwrap(),
            )
        };
        let (got, want) = (run(cl), run(interp));
        assert_eq!(got.0, want.0, "i32");
        assert_eq!(got.1, want.1, "u32");
        assert_eq!(got.2, want.2, "i64");
        assert_eq!(got.3, want.3, "u64");
        // And against plain Rust for the i32 corners.
        let x = i32::MIN;
        let y = -1i32;
        let corner = x
            .wrapping_mul(y)
            .wrapping_add(x.wrapping_div(y))
            .wrapping_sub(x.wrapping_rem(y))
            .wrapping_add(x & 0xff)
            .wrapping_sub(y ^ 0x55)
            .wrapping_add(x >> 3)
            .wrapping_add(y << 2)
            .wrapping_sub(x.wrapping_neg());
        assert_eq!(got.0[0], corner);
    });
}

// ---------------------------------------------------------------- loops

#[kernel]
fn collatz(start: &[u64], steps: &mut [u32], odd_sum: &mut [u64]) {
    let i = global_id_x();
    if i >= steps.len() {
        return;
    }
    let mut v = start[i];
    let mut n = 0u32;
    let mut odd = 0u64;
    loop {
        if v <= 1 {
            break;
        }
        if v % 2 == 1 {
            odd += v;
            v = 3 * v + 1;
        } else {
            v /= 2;
        }
        n += 1;
        if n > 10_000 {
            break;
        }
    }
    steps[i] = n;
    odd_sum[i] = odd;
}

#[kernel]
fn for_loops(out: &mut [i64], lo: i32, hi: i32) {
    let i = global_id_x();
    if i >= out.len() {
        return;
    }
    let s = i + 1;
    let mut acc = 0i64;
    for v in (lo..hi).step_by(s) {
        acc = acc * 3 + v as i64;
    }
    for v in (lo..hi).rev() {
        acc = acc * 7 - v as i64;
    }
    for v in (lo..hi).rev().step_by(s) {
        acc = acc * 5 + v as i64;
    }
    let mut k = 0i32;
    while k < hi {
        k += 3;
        if k % 5 == 0 {
            continue;
        }
        acc += k as i64;
    }
    out[i] = acc;
}

#[kernel]
fn matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize, m: usize, k: usize) {
    let row = global_id_y();
    let col = global_id_x();
    if row < n && col < m {
        let mut acc = 0.0f32;
        for p in 0..k {
            acc += a[row * k + p] * b[p * m + col];
        }
        c[row * m + col] = acc;
    }
}

#[test]
fn loop_kernels_match_interpreter() {
    each_opencl("loop_kernels_match_interpreter", |cl, interp| {
        let n = 1000;
        let starts: Vec<u64> = (1..=n as u64).map(|v| v * 7919).collect();
        let (rows, cols, inner) = (37usize, 29usize, 53usize);
        let a: Vec<f32> = (0..rows * inner)
            .map(|i| (i % 17) as f32 * 0.3 - 2.0)
            .collect();
        let b: Vec<f32> = (0..inner * cols)
            .map(|i| (i % 11) as f32 * 0.7 - 3.5)
            .collect();
        let run = |dev: &Device| {
            let sb = dev.upload(&starts).unwrap();
            let mut steps = dev.alloc::<u32>(n).unwrap();
            let mut odd = dev.alloc::<u64>(n).unwrap();
            collatz
                .launch(
                    dev,
                    dims1d(blocks_for(n, 64)),
                    dims1d(64),
                    (&sb, &mut steps, &mut odd),
                )
                .unwrap();
            let mut fl = dev.alloc::<i64>(9).unwrap();
            for_loops
                .launch(dev, dims1d(1), dims1d(16), (&mut fl, -13, 17))
                .unwrap();
            let (ab, bb) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
            let mut cb = dev.alloc::<f32>(rows * cols).unwrap();
            matmul
                .launch(
                    dev,
                    dims2d(blocks_for(cols, 8), blocks_for(rows, 8)),
                    dims2d(8, 8),
                    (&ab, &bb, &mut cb, rows, cols, inner),
                )
                .unwrap();
            (
                steps.to_vec().unwrap(),
                odd.to_vec().unwrap(),
                fl.to_vec().unwrap(),
                bits32(&cb),
            )
        };
        let (got, want) = (run(cl), run(interp));
        assert_eq!(got, want);
        // Plain Rust for the first Collatz start.
        let (mut v, mut steps) = (starts[0], 0u32);
        while v > 1 {
            v = if v % 2 == 1 { 3 * v + 1 } else { v / 2 };
            steps += 1;
        }
        assert_eq!(got.0[0], steps, "collatz steps of {}", starts[0]);
    });
}

// ---------------------------------------------------------------- helper calls

#[device]
fn clamp01(v: f32) -> f32 {
    if v < 0.0 {
        0.0
    } else if v > 1.0 {
        1.0
    } else {
        v
    }
}

#[device]
fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = clamp01((x - e0) / (e1 - e0));
    t * t * (3.0 - 2.0 * t)
}

#[device]
fn mix_bits(v: u32, rounds: u32) -> u32 {
    let mut h = v;
    for _ in 0..rounds {
        h = (h ^ (h >> 15)) * 0x2c1b_3c6d;
    }
    h
}

#[kernel]
fn helpers(x: &[f32], out: &mut [f32], hashes: &mut [u32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = smoothstep(-1.0, 2.0, x[i]);
        hashes[i] = mix_bits(i as u32, 3);
    }
}

#[test]
fn helper_calls_match_interpreter() {
    each_opencl("helper_calls_match_interpreter", |cl, interp| {
        let n = 1000;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.005 - 2.0).collect();
        let run = |dev: &Device| {
            let xb = dev.upload(&x).unwrap();
            let mut ob = dev.alloc::<f32>(n).unwrap();
            let mut hb = dev.alloc::<u32>(n).unwrap();
            helpers
                .launch(
                    dev,
                    dims1d(blocks_for(n, 100)),
                    dims1d(100),
                    (&xb, &mut ob, &mut hb),
                )
                .unwrap();
            (bits32(&ob), hb.to_vec().unwrap())
        };
        assert_eq!(run(cl), run(interp));
    });
}

// ---------------------------------------------------------------- floats: rounding, casts

#[kernel]
fn float_ops(
    x: &[f32],
    y: &[f32],
    d: &[f64],
    out: &mut [f32],
    out_d: &mut [f64],
    ints: &mut [i32],
) {
    let i = global_id_x();
    if i < out.len() {
        let a = x[i];
        let b = y[i];
        out[i] = a / b + (a * a + b * b).sqrt() - a.mul_add(b, 0.25) + a.min(b) * a.max(b).abs();
        let v = d[i];
        out_d[i] = (v * v + 1.0).sqrt() / (1.0 + v.abs()) - v.mul_add(3.0, -0.5);
        ints[i] = (a / b) as i32 + (v as i32) / 2;
    }
}

#[test]
fn float_kernels_match_interpreter() {
    each_opencl("float_kernels_match_interpreter", |cl, interp| {
        if !cl.capabilities.fp64 {
            eprintln!("SKIPPED float_kernels_match_interpreter: {cl} has no f64");
            return;
        }
        let n = 3000;
        let r = pseudo_random(9, 3 * n);
        let x: Vec<f32> = r[..n]
            .iter()
            .map(|&v| f32::from_bits((v as u32 & 0x3fff_ffff) | 0x3000_0000) - 1.0)
            .collect();
        let mut y: Vec<f32> = r[n..2 * n]
            .iter()
            .map(|&v| (v % 100_000) as f32 / 777.0 - 64.0)
            .collect();
        // Division by zero, NaN and infinities convert and propagate the same way.
        y[..3].copy_from_slice(&[0.0, -0.0, f32::NAN]);
        let mut d: Vec<f64> = r[2 * n..]
            .iter()
            .map(|&v| (v as i64) as f64 / 1e9)
            .collect();
        d[..3].copy_from_slice(&[f64::NAN, f64::INFINITY, -1e300]);
        let run = |dev: &Device| {
            let (xb, yb, db) = (
                dev.upload(&x).unwrap(),
                dev.upload(&y).unwrap(),
                dev.upload(&d).unwrap(),
            );
            let mut o = dev.alloc::<f32>(n).unwrap();
            let mut od = dev.alloc::<f64>(n).unwrap();
            let mut oi = dev.alloc::<i32>(n).unwrap();
            float_ops
                .launch(
                    dev,
                    dims1d(blocks_for(n, 64)),
                    dims1d(64),
                    (&xb, &yb, &db, &mut o, &mut od, &mut oi),
                )
                .unwrap();
            (bits32(&o), bits64(&od), oi.to_vec().unwrap())
        };
        let (got, want) = (run(cl), run(interp));
        assert_eq!(
            got.0, want.0,
            "f32 (correctly rounded / and sqrt, no contraction)"
        );
        assert_eq!(got.1, want.1, "f64");
        assert_eq!(got.2, want.2, "saturating casts");
    });
}

// ---------------------------------------------------------------- barriers, branches, bools

#[kernel]
fn reverse_blocks(x: &[i32], tmp: &mut [i32], out: &mut [i32]) {
    let t = thread_idx_x();
    let base = block_idx_x() * block_dim_x();
    tmp[base + t] = x[base + t] * 2;
    sync_threads();
    out[base + t] = tmp[base + block_dim_x() - 1 - t];
}

#[kernel]
fn classify(x: &[i32], negate: bool, out: &mut [i32]) {
    let i = global_id_x();
    if i < x.len() {
        let v = x[i];
        let r = v % 4;
        let class = if r == 0 {
            10
        } else if r == 1 || r == -1 {
            20
        } else if r == 2 {
            let w = v / 2;
            w + 1
        } else {
            -v
        };
        out[i] = if negate { -class } else { class };
    }
}

#[test]
fn barrier_branch_and_bool_kernels_match_interpreter() {
    each_opencl(
        "barrier_branch_and_bool_kernels_match_interpreter",
        |cl, interp| {
            let n = 512;
            let x: Vec<i32> = pseudo_random(11, n)
                .iter()
                .map(|&v| (v % 2001) as i32 - 1000)
                .collect();
            let run = |dev: &Device| {
                let xb = dev.upload(&x).unwrap();
                let mut c1 = dev.alloc::<i32>(n).unwrap();
                let mut c2 = dev.alloc::<i32>(n).unwrap();
                classify
                    .launch(dev, dims1d(8), dims1d(64), (&xb, false, &mut c1))
                    .unwrap();
                classify
                    .launch(dev, dims1d(8), dims1d(64), (&xb, true, &mut c2))
                    .unwrap();
                (c1.to_vec().unwrap(), c2.to_vec().unwrap())
            };
            let (got, want) = (run(cl), run(interp));
            assert_eq!(got, want);
            assert!(got.0.iter().zip(&got.1).all(|(a, b)| *a == -*b));

            // The Interpreter runs no barriers yet: plain Rust is the reference.
            let xb = cl.upload(&x).unwrap();
            let mut tmp = cl.alloc::<i32>(n).unwrap();
            let mut out = cl.alloc::<i32>(n).unwrap();
            reverse_blocks
                .launch(cl, dims1d(4), dims1d(128), (&xb, &mut tmp, &mut out))
                .unwrap();
            let rev: Vec<i32> = x
                .chunks(128)
                .flat_map(|c| c.iter().rev().map(|v| v * 2))
                .collect();
            assert_eq!(out.to_vec().unwrap(), rev);
        },
    );
}

// ---------------------------------------------------------------- launch errors

#[test]
fn launch_errors_are_typed() {
    each_opencl("launch_errors_are_typed", |cl, _interp| {
        let x = cl.upload(&[1.0f32; 8]).unwrap();
        let mut y = cl.upload(&[0.0f32; 8]).unwrap();
        let too_big = cl.capabilities.max_block_dims[0] + 1;
        let e = saxpy
            .launch(cl, dims1d(1), dims1d(too_big), (1.0, &x, &mut y))
            .unwrap_err();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
        // Buffers of another device are refused before anything runs.
        let interp = spoc::init_device(Some("Interpreter")).unwrap();
        let xi = interp.upload(&[1.0f32; 8]).unwrap();
        let e = saxpy
            .launch(cl, dims1d(1), dims1d(8), (1.0, &xi, &mut y))
            .unwrap_err();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    });
}
