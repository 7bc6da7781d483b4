//! `#[kernel]` kernels on the OpenCL backend (PoCL here and in CI) and the Vulkan backend
//! (lavapipe here and in CI, a GPU driver elsewhere), each compared bit for bit with the
//! Interpreter (the reference) or with plain Rust. One corpus, one test body each, run on
//! every device of each backend as its own test (`opencl::…`, `vulkan::…`, by
//! `spoc_testkit::backend_tests!`), so a failure names the backend.
//!
//! Without a backend every test prints why and passes, unless `SPOC_REQUIRE_BACKENDS` names it
//! (comma-separated, case-insensitive; CI sets it): then a missing backend fails. A device may
//! refuse a kernel only with `Error::FeatureNotSupported`, printed as a skip (lavapipe refuses
//! `mul_add`). Float results are compared as bits (`-0.0` differs from `0.0`), every NaN as one
//! value (NaN payloads are not preserved on GPUs).

#![allow(clippy::manual_clamp)]

/// The root kernel corpus (only some of its kernels are used here).
#[allow(dead_code)]
mod corpus;

mod common;

use common::{blocks_for, pseudo_random};
use corpus::{for_loops, matmul, saxpy, smoothstep};
use spoc::prelude::*;
use spoc::{Buffer, Device, Error, LaunchProblem};

spoc_testkit::backend_tests! {
    backends { opencl: "OpenCL", vulkan: "Vulkan" }
    tests {
        saxpy_is_exact_and_uncontracted,
        integer_kernels_match_interpreter,
        integer_kernels_wrap_like_rust,
        loop_kernels_match_interpreter,
        loops_with_break_and_continue_match_interpreter,
        helper_calls_match_interpreter,
        helper_calls_with_buffers_match_interpreter,
        float_kernels_match_interpreter,
        casts_saturate_and_truncate_like_rust,
        two_dimensional_f64_kernel_matches_interpreter,
        barrier_branch_and_bool_kernels_match_interpreter,
        mul_add_is_fused_or_refused,
        launch_errors_are_typed,
    }
}

fn bits32(v: &Buffer<f32>) -> Vec<u32> {
    spoc_testkit::float::bits32(&v.to_vec().unwrap())
}

fn bits64(v: &Buffer<f64>) -> Vec<u64> {
    spoc_testkit::float::bits64(&v.to_vec().unwrap())
}

// ---------------------------------------------------------------- saxpy

fn saxpy_is_exact_and_uncontracted(dev: &Device, interp: &Device) {
    let inputs = |n: usize, sin: bool| -> (Vec<f32>, Vec<f32>) {
        if sin {
            let x = (0..n).map(|i| (i as f32 * 0.731).sin() * 1e3).collect();
            (x, (0..n).map(|i| (i % 97) as f32 / 7.0 - 3.0).collect())
        } else {
            let x = (0..n).map(|i| (i as f32 * 0.917).cos() * 731.5).collect();
            (x, (0..n).map(|i| (i % 41) as f32 / 9.0 - 2.0).collect())
        }
    };
    for (n, a, sin, blocks) in [
        (10_007, 1.37f32, true, &[128][..]),
        (5003, -2.71, false, &[64, 256]),
    ] {
        let (x, y) = inputs(n, sin);
        let run = |dev: &Device, block: u32| {
            let xb = dev.upload(&x).unwrap();
            let mut yb = dev.upload(&y).unwrap();
            saxpy
                .launch(
                    dev,
                    dims1d(blocks_for(n, block)),
                    dims1d(block),
                    (a, &xb, &mut yb),
                )
                .unwrap();
            bits32(&yb)
        };
        let want = run(interp, 64);
        // Rust's `a * x + y`, two roundings: a fused result would differ for some elements.
        let rust: Vec<u32> = x
            .iter()
            .zip(&y)
            .map(|(x, y)| (a * x + y).to_bits())
            .collect();
        assert_eq!(want, rust);
        // Several block sizes: several pipelines.
        for &block in blocks {
            assert_eq!(run(dev, block), want, "block {block}");
        }
    }
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

fn integer_kernels_match_interpreter(dev: &Device, interp: &Device) {
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
    let (got, want) = (run(dev), run(interp));
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
}

#[kernel]
fn vk_int_mix(
    a: &[i32],
    b: &[i32],
    c: &[u64],
    k: i64,
    oi: &mut [i32],
    ou: &mut [u32],
    o64: &mut [i64],
    ou64: &mut [u64],
) {
    let i = global_id_x();
    if i >= oi.len() {
        return;
    }
    let x = a[i];
    let y = b[i];
    let d = if y == 0 { 7 } else { y };
    oi[i] = x.wrapping_mul(31).wrapping_add(y) ^ (x / d) ^ (x % d) ^ (x << (y & 31)) ^ (x >> 5);
    let u = x as u32;
    let v = y as u32;
    ou[i] = u * 2_654_435_761 + v - (u >> 3) + (v << 7) + !u + u / (v | 1) + u % (v | 1);
    let w = c[i];
    o64[i] = (w as i64).wrapping_mul(k) - (x as i64) * 4_294_967_311
        + ((w as i64) >> 13)
        + (w as i64) / (k | 1);
    ou64[i] = w * 0x9E37_79B9_7F4A_7C15 + (w >> 29) + (w << 3) - (k as u64) + w % ((k as u64) | 1);
}

fn integer_kernels_wrap_like_rust(dev: &Device, interp: &Device) {
    let n = 3001;
    let mut a: Vec<i32> = pseudo_random(11, n).iter().map(|&v| v as i32).collect();
    let mut b: Vec<i32> = pseudo_random(12, n)
        .iter()
        .map(|&v| (v >> 37) as i32)
        .collect();
    // MIN / -1 and MIN % -1 wrap to MIN and 0; a zero divisor is replaced in the kernel.
    a[..5].copy_from_slice(&[i32::MIN, i32::MIN, i32::MAX, -1, 0]);
    b[..5].copy_from_slice(&[-1, 1, -1, i32::MIN, 0]);
    let c: Vec<u64> = pseudo_random(13, n);
    let run = |dev: &Device, k: i64| {
        let (ab, bb, cb) = (
            dev.upload(&a).unwrap(),
            dev.upload(&b).unwrap(),
            dev.upload(&c).unwrap(),
        );
        let mut oi = dev.alloc::<i32>(n).unwrap();
        let mut ou = dev.alloc::<u32>(n).unwrap();
        let mut o64 = dev.alloc::<i64>(n).unwrap();
        let mut ou64 = dev.alloc::<u64>(n).unwrap();
        vk_int_mix
            .launch(
                dev,
                dims1d(blocks_for(n, 128)),
                dims1d(128),
                (&ab, &bb, &cb, k, &mut oi, &mut ou, &mut o64, &mut ou64),
            )
            .unwrap();
        (
            oi.to_vec().unwrap(),
            ou.to_vec().unwrap(),
            o64.to_vec().unwrap(),
            ou64.to_vec().unwrap(),
        )
    };
    for k in [-3i64, i64::MIN, 1 << 40] {
        let want = run(interp, k);
        // Spot-check the Interpreter against Rust on the corner rows.
        let x = i32::MIN;
        assert_eq!(
            want.0[0],
            x.wrapping_mul(31).wrapping_add(-1)
                ^ x.wrapping_div(-1)
                ^ x.wrapping_rem(-1)
                ^ x.wrapping_shl(31)
                ^ (x >> 5)
        );
        assert_eq!(run(dev, k), want, "k = {k}");
    }
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

fn loop_kernels_match_interpreter(dev: &Device, interp: &Device) {
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
    let (got, want) = (run(dev), run(interp));
    assert_eq!(got, want);
    // Plain Rust for the first Collatz start.
    let (mut v, mut steps) = (starts[0], 0u32);
    while v > 1 {
        v = if v % 2 == 1 { 3 * v + 1 } else { v / 2 };
        steps += 1;
    }
    assert_eq!(got.0[0], steps, "collatz steps of {}", starts[0]);
}

#[kernel]
fn vk_loops(seeds: &[u32], limit: u32, out: &mut [u32], trace: &mut [i64]) {
    let i = global_id_x();
    if i >= out.len() {
        return;
    }
    let mut s = seeds[i];
    let mut hits = 0u32;
    let mut acc = 0i64;
    for j in 0..limit {
        s = s * 1_103_515_245 + 12_345;
        if s % 5 == 0 {
            continue;
        }
        if (s >> 16) % 97 == 3 {
            acc -= j as i64;
            break;
        }
        hits += 1;
        acc += (s >> 20) as i64;
    }
    let mut k = 0u32;
    while k < 64 {
        k += 1;
        if k % 4 == 1 {
            continue;
        }
        if k * k > hits + 20 {
            break;
        }
        acc = acc * 3 - k as i64;
    }
    let mut r = 10i32;
    for v in (-r..r).rev().step_by(3) {
        acc += v as i64;
        r -= 1;
    }
    loop {
        if hits == 0 || hits % 7 == 0 {
            break;
        }
        hits -= 1;
    }
    out[i] = hits * 1000 + k;
    trace[i] = acc;
}

fn loops_with_break_and_continue_match_interpreter(dev: &Device, interp: &Device) {
    let n = 700;
    let seeds: Vec<u32> = pseudo_random(21, n).iter().map(|&v| v as u32).collect();
    let run = |dev: &Device, limit: u32| {
        let sb = dev.upload(&seeds).unwrap();
        let mut out = dev.alloc::<u32>(n).unwrap();
        let mut trace = dev.alloc::<i64>(n).unwrap();
        vk_loops
            .launch(
                dev,
                dims1d(blocks_for(n, 32)),
                dims1d(32),
                (&sb, limit, &mut out, &mut trace),
            )
            .unwrap();
        (out.to_vec().unwrap(), trace.to_vec().unwrap())
    };
    for limit in [0, 1, 50, 1000] {
        assert_eq!(run(dev, limit), run(interp, limit), "limit {limit}");
    }
}

// ---------------------------------------------------------------- helper calls

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

fn helper_calls_match_interpreter(dev: &Device, interp: &Device) {
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
    assert_eq!(run(dev), run(interp));
}

#[device]
fn vk_hash(v: u32, rounds: u32) -> u32 {
    let mut h = v;
    for _ in 0..rounds {
        h ^= h >> 15;
        h *= 0x2c1b_3c6d;
        h ^= h >> 12;
    }
    h
}

/// The clamp is spelled as an `if` expression on purpose (a language feature under test).
#[allow(clippy::manual_clamp)]
#[device]
fn vk_lerp(a: f32, b: f32, t: f32) -> f32 {
    let t = if t < 0.0 {
        0.0
    } else if t > 1.0 {
        1.0
    } else {
        t
    };
    a + (b - a) * t
}

#[device]
fn vk_sum_window(x: &[f32], at: usize, width: usize) -> f32 {
    let mut s = 0.0f32;
    for j in 0..width {
        if at + j < x.len() {
            s += x[at + j];
        }
    }
    s
}

#[kernel]
fn vk_helpers(x: &[f32], out: &mut [f32], hashes: &mut [u32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = vk_lerp(-1.0, 3.0, x[i]) + vk_sum_window(x, i, 4);
        hashes[i] = vk_hash(i as u32, 3) ^ vk_hash((x[i] * 1000.0) as u32, 1);
    }
}

fn helper_calls_with_buffers_match_interpreter(dev: &Device, interp: &Device) {
    let n = 999;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.013) - 3.0).collect();
    let run = |dev: &Device| {
        let xb = dev.upload(&x).unwrap();
        let mut out = dev.alloc::<f32>(n).unwrap();
        let mut h = dev.alloc::<u32>(n).unwrap();
        vk_helpers
            .launch(
                dev,
                dims1d(blocks_for(n, 64)),
                dims1d(64),
                (&xb, &mut out, &mut h),
            )
            .unwrap();
        (bits32(&out), h.to_vec().unwrap())
    };
    assert_eq!(run(dev), run(interp));
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

fn float_kernels_match_interpreter(dev: &Device, interp: &Device) {
    if !dev.capabilities.fp64 {
        eprintln!("SKIPPED float_kernels_match_interpreter: {dev} has no f64");
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
    let run = |dev: &Device| -> spoc::Result<_> {
        let (xb, yb, db) = (
            dev.upload(&x).unwrap(),
            dev.upload(&y).unwrap(),
            dev.upload(&d).unwrap(),
        );
        let mut o = dev.alloc::<f32>(n).unwrap();
        let mut od = dev.alloc::<f64>(n).unwrap();
        let mut oi = dev.alloc::<i32>(n).unwrap();
        float_ops.launch(
            dev,
            dims1d(blocks_for(n, 64)),
            dims1d(64),
            (&xb, &yb, &db, &mut o, &mut od, &mut oi),
        )?;
        Ok((bits32(&o), bits64(&od), oi.to_vec()?))
    };
    let want = run(interp).unwrap();
    let got = match run(dev) {
        Ok(got) => got,
        // lavapipe refuses `mul_add` (its `Fma` is unfused).
        Err(Error::FeatureNotSupported { feature, .. }) => {
            eprintln!("SKIPPED float_kernels_match_interpreter on {dev}: refused {feature}");
            return;
        }
        Err(e) => panic!("{dev}: {e}"),
    };
    assert_eq!(
        got.0, want.0,
        "f32 (correctly rounded / and sqrt, no contraction)"
    );
    assert_eq!(got.1, want.1, "f64");
    assert_eq!(got.2, want.2, "saturating casts");
}

// ---------------------------------------------------------------- casts

#[kernel]
fn vk_casts(
    x: &[f32],
    y: &[i64],
    i32s: &mut [i32],
    u32s: &mut [u32],
    i64s: &mut [i64],
    f32s: &mut [f32],
    u64s: &mut [u64],
) {
    let i = global_id_x();
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let w = y[i];
    i32s[i] = v as i32;
    u32s[i] = (v as u32) ^ ((w as u32) << 1);
    i64s[i] = (v as i64) + (w as i32) as i64;
    f32s[i] = (w as f32) + (v as u32) as f32 + ((v as i32) as u32) as f32;
    u64s[i] = (v as u64) + (w as u64) + ((w >> 3) as u32) as u64 + (v < 0.0) as u64;
}

fn casts_saturate_and_truncate_like_rust(dev: &Device, interp: &Device) {
    let mut x: Vec<f32> = (0..500).map(|i| (i as f32 - 250.0) * 1.37e7).collect();
    x.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        0.999_999_9,
        -1.5,
        2.5,
        4_294_967_040.0,
        4_294_967_296.0,
        2_147_483_520.0,
        -2_147_483_648.0,
        1e19,
        1e20,
        -1e19,
    ]);
    let n = x.len();
    let mut y: Vec<i64> = pseudo_random(31, n).iter().map(|&v| v as i64).collect();
    y[..4].copy_from_slice(&[i64::MIN, i64::MAX, -1, 0]);
    let run = |dev: &Device| {
        let (xb, yb) = (dev.upload(&x).unwrap(), dev.upload(&y).unwrap());
        let mut a = dev.alloc::<i32>(n).unwrap();
        let mut b = dev.alloc::<u32>(n).unwrap();
        let mut c = dev.alloc::<i64>(n).unwrap();
        let mut d = dev.alloc::<f32>(n).unwrap();
        let mut e = dev.alloc::<u64>(n).unwrap();
        vk_casts
            .launch(
                dev,
                dims1d(blocks_for(n, 64)),
                dims1d(64),
                (&xb, &yb, &mut a, &mut b, &mut c, &mut d, &mut e),
            )
            .unwrap();
        (
            a.to_vec().unwrap(),
            b.to_vec().unwrap(),
            c.to_vec().unwrap(),
            bits32(&d),
            e.to_vec().unwrap(),
        )
    };
    let want = run(interp);
    // The Interpreter is Rust: NaN -> 0, saturation at the bounds.
    assert_eq!(want.0[500..503], [0, i32::MAX, i32::MIN]);
    assert_eq!(run(dev), want);
}

// ---------------------------------------------------------------- 2-D, f64, barriers, bools

#[kernel]
fn vk_stencil(src: &[f64], w: usize, h: usize, scale: f64, dst: &mut [f64]) {
    let x = global_id_x();
    let y = global_id_y();
    if x >= w || y >= h {
        return;
    }
    let at = y * w + x;
    let mut s = src[at] * 4.0;
    if x > 0 {
        s -= src[at - 1];
    }
    if x + 1 < w {
        s -= src[at + 1];
    }
    if y > 0 {
        s -= src[at - w];
    }
    if y + 1 < h {
        s -= src[at + w];
    }
    dst[at] = (s * scale).abs().sqrt() / (1.0 + src[at].abs());
}

fn two_dimensional_f64_kernel_matches_interpreter(dev: &Device, interp: &Device) {
    if !dev.capabilities.fp64 {
        eprintln!("SKIPPED two_dimensional_f64_kernel_matches_interpreter: {dev} has no f64");
        return;
    }
    let (w, h) = (37usize, 23usize);
    let src: Vec<f64> = pseudo_random(41, w * h)
        .iter()
        .map(|&v| (v >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0)
        .collect();
    let run = |dev: &Device| {
        let sb = dev.upload(&src).unwrap();
        let mut db = dev.alloc::<f64>(w * h).unwrap();
        vk_stencil
            .launch(
                dev,
                dims2d(blocks_for(w, 8), blocks_for(h, 4)),
                dims2d(8, 4),
                (&sb, w, h, 0.37, &mut db),
            )
            .unwrap();
        bits64(&db)
    };
    assert_eq!(run(dev), run(interp));
}

// ---------------------------------------------------------------- barriers, branches, bools

#[kernel]
fn vk_reverse_in_blocks(x: &[u32], scratch: &mut [u32], flip: bool, out: &mut [u32]) {
    let t = thread_idx_x();
    let base = block_idx_x() * block_dim_x();
    scratch[base + t] = x[base + t] + 1;
    sync_threads();
    let from = if flip {
        base + block_dim_x() - 1 - t
    } else {
        base + t
    };
    out[base + t] = scratch[from];
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

fn barrier_branch_and_bool_kernels_match_interpreter(dev: &Device, interp: &Device) {
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
    let (got, want) = (run(dev), run(interp));
    assert_eq!(got, want);
    assert!(got.0.iter().zip(&got.1).all(|(a, b)| *a == -*b));

    // The Interpreter runs threads one after another, so barriers have plain Rust as
    // reference.
    let x: Vec<u32> = (0..512).map(|i| i * 3 + 1).collect();
    for flip in [true, false] {
        let xb = dev.upload(&x).unwrap();
        let mut s = dev.alloc::<u32>(512).unwrap();
        let mut o = dev.alloc::<u32>(512).unwrap();
        vk_reverse_in_blocks
            .launch(dev, dims1d(4), dims1d(128), (&xb, &mut s, flip, &mut o))
            .unwrap();
        let want: Vec<u32> = x
            .chunks(128)
            .flat_map(|c| {
                let c: Vec<u32> = c.iter().map(|v| v + 1).collect();
                if flip {
                    c.into_iter().rev().collect::<Vec<_>>()
                } else {
                    c
                }
            })
            .collect();
        assert_eq!(o.to_vec().unwrap(), want, "flip {flip}");
    }
}

// ---------------------------------------------------------------- mul_add

#[kernel]
fn vk_fma(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = a[i].mul_add(b[i], -1.0);
    }
}

fn mul_add_is_fused_or_refused(dev: &Device, interp: &Device) {
    // (1 + 2^-13)(1 - 2^-13) - 1 is -2^-26 fused, 0 when rounded twice.
    let e = 2f32.powi(-13);
    let a = vec![1.0 + e, 3.0, -0.1];
    let b = vec![1.0 - e, 1.0 / 3.0, 10.0];
    let run = |dev: &Device| -> spoc::Result<Vec<u32>> {
        let (ab, bb) = (dev.upload(&a)?, dev.upload(&b)?);
        let mut o = dev.alloc::<f32>(3)?;
        vk_fma.launch(dev, dims1d(1), dims1d(64), (&ab, &bb, &mut o))?;
        Ok(bits32(&o))
    };
    let want = run(interp).unwrap();
    assert_eq!(f32::from_bits(want[0]), -(e * e));
    match run(dev) {
        Ok(got) => assert_eq!(got, want),
        Err(Error::FeatureNotSupported { feature, .. }) => {
            eprintln!("mul_add refused on {dev}: {feature}");
            assert!(feature.contains("fused f32 multiply-add"), "{feature}");
        }
        Err(other) => panic!("{other}"),
    }
}

// ---------------------------------------------------------------- launch errors

fn launch_errors_are_typed(dev: &Device, interp: &Device) {
    let x = dev.upload(&[1.0f32; 8]).unwrap();
    let mut y = dev.upload(&[1.0f32; 8]).unwrap();
    let caps = dev.capabilities;
    for block in [caps.max_threads_per_block + 1, caps.max_block_dims[0] + 1] {
        let e = saxpy
            .launch(dev, dims1d(1), dims1d(block), (1.0, &x, &mut y))
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidLaunch { .. }),
            "block {block}: {e}"
        );
    }
    let e = saxpy
        .launch(dev, dims1d(0), dims1d(8), (1.0, &x, &mut y))
        .unwrap_err();
    spoc_testkit::assert_matches!(
        e,
        Error::InvalidLaunch {
            problem: LaunchProblem::ZeroDim { .. },
            ..
        }
    );
    // Buffers of another device are refused before anything runs.
    let xi = interp.upload(&[1.0f32; 8]).unwrap();
    let e = saxpy
        .launch(dev, dims1d(1), dims1d(8), (1.0, &xi, &mut y))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    assert_eq!(y.to_vec().unwrap(), vec![1.0; 8], "nothing ran");
}
