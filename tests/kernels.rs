//! The kernel corpus of the foundation: each kernel runs on every required CPU backend (Native and
//! Interpreter) and must match a plain-Rust reference exactly.

mod common;

use common::{blocks_for, devices, pseudo_random};
use spoc::prelude::*;

// ---------------------------------------------------------------- saxpy (f32)

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[test]
fn saxpy_matches_reference() {
    let n = 10_000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 100.0).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 13) as f32 / 3.0).collect();
    let want: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| 1.5f32 * x + y).collect();
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut yb = dev.upload(&y0).unwrap();
        saxpy
            .launch(&dev, dims1d(blocks_for(n, 128)), dims1d(128), (1.5, &xb, &mut yb))
            .unwrap();
        assert_eq!(yb.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- element-wise i32

#[kernel]
fn ops_i32(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        let y = b[i] | 1;
        out[i] = x * y + x / y - x % y + (x & 0xff) - (y ^ 0x55) + (x >> 3) + (y << 2) - -x;
    }
}

#[test]
fn elementwise_i32() {
    let n = 4096;
    let a: Vec<i32> = pseudo_random(1, n).iter().map(|&v| v as i32).collect();
    let b: Vec<i32> = pseudo_random(2, n).iter().map(|&v| (v >> 40) as i32).collect();
    let want: Vec<i32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &b)| {
            let y = b | 1;
            x.wrapping_mul(y)
                .wrapping_add(x.wrapping_div(y))
                .wrapping_sub(x.wrapping_rem(y))
                .wrapping_add(x & 0xff)
                .wrapping_sub(y ^ 0x55)
                .wrapping_add(x >> 3)
                .wrapping_add(y.wrapping_shl(2))
                .wrapping_sub(x.wrapping_neg())
        })
        .collect();
    for dev in devices() {
        let ab = dev.upload(&a).unwrap();
        let bb = dev.upload(&b).unwrap();
        let mut out = dev.upload(&vec![0i32; n]).unwrap();
        ops_i32
            .launch(&dev, dims1d(blocks_for(n, 64)), dims1d(64), (&ab, &bb, &mut out))
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- element-wise u32

#[kernel]
fn ops_u32(a: &[u32], b: &[u32], out: &mut [u32]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        let s = b[i] % 32;
        let mut h = x ^ (x >> 16);
        h = h * 0x45d9f3b;
        h ^= h >> 16;
        out[i] = h + (x << s) + (x >> (31 - s)) + !b[i] + b[i] / (s + 1);
    }
}

#[test]
fn elementwise_u32() {
    let n = 3000;
    let a: Vec<u32> = pseudo_random(3, n).iter().map(|&v| v as u32).collect();
    let b: Vec<u32> = pseudo_random(4, n).iter().map(|&v| (v >> 32) as u32).collect();
    let want: Vec<u32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &b)| {
            let s = b % 32;
            let mut h = x ^ (x >> 16);
            h = h.wrapping_mul(0x45d9f3b);
            h ^= h >> 16;
            h.wrapping_add(x << s)
                .wrapping_add(x >> (31 - s))
                .wrapping_add(!b)
                .wrapping_add(b / (s + 1))
        })
        .collect();
    for dev in devices() {
        let ab = dev.upload(&a).unwrap();
        let bb = dev.upload(&b).unwrap();
        let mut out = dev.alloc::<u32>(n).unwrap();
        ops_u32
            .launch(&dev, dims1d(blocks_for(n, 100)), dims1d(100), (&ab, &bb, &mut out))
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- element-wise i64

#[kernel]
fn ops_i64(a: &[i64], k: i64, out: &mut [i64]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        out[i] = x * k - (x >> 7) + x % 1_000_003 + (i as i64) * 4_294_967_296;
    }
}

#[test]
fn elementwise_i64() {
    let n = 2500;
    let a: Vec<i64> = pseudo_random(5, n).iter().map(|&v| v as i64).collect();
    let k = -77_777_777_777i64;
    let want: Vec<i64> = a
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            x.wrapping_mul(k)
                .wrapping_sub(x >> 7)
                .wrapping_add(x % 1_000_003)
                .wrapping_add((i as i64).wrapping_mul(4_294_967_296))
        })
        .collect();
    for dev in devices() {
        let ab = dev.upload(&a).unwrap();
        let mut out = dev.alloc::<i64>(n).unwrap();
        ops_i64
            .launch(&dev, dims1d(blocks_for(n, 32)), dims1d(32), (&ab, k, &mut out))
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- element-wise f64

#[kernel]
fn ops_f64(a: &[f64], b: &[f64], out: &mut [f64]) {
    let i = global_id_x();
    if i < out.len() {
        let x = a[i];
        let y = b[i];
        out[i] = (x * x + y * y).sqrt() / (1.0 + y.abs()) - x.mul_add(y, 0.5) + x.min(y) * x.max(y);
    }
}

#[test]
fn elementwise_f64() {
    let n = 2048;
    let a: Vec<f64> = (0..n).map(|i| (i as f64 - 1000.0) * 0.37).collect();
    let b: Vec<f64> = (0..n).map(|i| ((i * 7919) % 2003) as f64 * -0.011).collect();
    let want: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| {
            (x * x + y * y).sqrt() / (1.0 + y.abs()) - x.mul_add(y, 0.5) + x.min(y) * x.max(y)
        })
        .collect();
    for dev in devices() {
        let ab = dev.upload(&a).unwrap();
        let bb = dev.upload(&b).unwrap();
        let mut out = dev.alloc::<f64>(n).unwrap();
        ops_f64
            .launch(&dev, dims1d(blocks_for(n, 256)), dims1d(256), (&ab, &bb, &mut out))
            .unwrap();
        let got = out.to_vec().unwrap();
        for i in 0..n {
            assert_eq!(got[i].to_bits(), want[i].to_bits(), "element {i} on {}", dev.framework);
        }
    }
}

// ---------------------------------------------------------------- 2-D naive matrix multiply

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
fn matmul_2d() {
    let (n, m, k) = (37usize, 29usize, 19usize);
    let a: Vec<f32> = (0..n * k).map(|i| ((i * 31) % 17) as f32 - 8.0).collect();
    let b: Vec<f32> = (0..k * m).map(|i| ((i * 13) % 11) as f32 * 0.5).collect();
    let mut want = vec![0.0f32; n * m];
    for r in 0..n {
        for c in 0..m {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc += a[r * k + p] * b[p * m + c];
            }
            want[r * m + c] = acc;
        }
    }
    for dev in devices() {
        let ab = dev.upload(&a).unwrap();
        let bb = dev.upload(&b).unwrap();
        let mut cb = dev.alloc::<f32>(n * m).unwrap();
        matmul
            .launch(
                &dev,
                dims2d(blocks_for(m, 8), blocks_for(n, 8)),
                dims2d(8, 8),
                (&ab, &bb, &mut cb, n, m, k),
            )
            .unwrap();
        assert_eq!(cb.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- mandelbrot

#[kernel]
fn mandelbrot(out: &mut [u32], width: usize, height: usize, max_iter: u32) {
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

fn mandelbrot_ref(w: usize, h: usize, max_iter: u32) -> Vec<u32> {
    let mut out = vec![0u32; w * h];
    for py in 0..h {
        for px in 0..w {
            let cx = -2.0f32 + 3.0 * (px as f32) / (w as f32);
            let cy = -1.25f32 + 2.5 * (py as f32) / (h as f32);
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
            out[py * w + px] = it;
        }
    }
    out
}

#[test]
fn mandelbrot_image() {
    let (w, h, iters) = (96usize, 64usize, 200u32);
    let want = mandelbrot_ref(w, h, iters);
    assert!(want.iter().any(|&v| v == iters) && want.iter().any(|&v| v < 5));
    for dev in devices() {
        let mut out = dev.alloc::<u32>(w * h).unwrap();
        mandelbrot
            .launch(
                &dev,
                dims2d(blocks_for(w, 16), blocks_for(h, 16)),
                dims2d(16, 16),
                (&mut out, w, h, iters),
            )
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- loops with break / continue

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
        n += 1;
        if v % 2 == 0 {
            v /= 2;
            continue;
        }
        odd += v;
        v = 3 * v + 1;
    }
    let mut j = 0u32;
    let mut skipped = 0u32;
    while j < 100 {
        j += 1;
        if j % 3 == 0 {
            continue;
        }
        if j > n + 10 {
            break;
        }
        skipped += 1;
    }
    steps[i] = n * 1000 + skipped;
    odd_sum[i] = odd;
}

#[test]
fn loops_break_continue() {
    let n = 700;
    let start: Vec<u64> = (0..n as u64).map(|i| i * 3 + 1).collect();
    let mut want_steps = vec![0u32; n];
    let mut want_odd = vec![0u64; n];
    for i in 0..n {
        let (mut v, mut s, mut odd) = (start[i], 0u32, 0u64);
        while v > 1 {
            s += 1;
            if v % 2 == 0 {
                v /= 2;
            } else {
                odd += v;
                v = 3 * v + 1;
            }
        }
        let mut skipped = 0;
        for j in 1..=100u32 {
            if j % 3 == 0 {
                continue;
            }
            if j > s + 10 {
                break;
            }
            skipped += 1;
        }
        want_steps[i] = s * 1000 + skipped;
        want_odd[i] = odd;
    }
    for dev in devices() {
        let sb = dev.upload(&start).unwrap();
        let mut steps = dev.alloc::<u32>(n).unwrap();
        let mut odd = dev.alloc::<u64>(n).unwrap();
        collatz
            .launch(&dev, dims1d(blocks_for(n, 64)), dims1d(64), (&sb, &mut steps, &mut odd))
            .unwrap();
        assert_eq!(steps.to_vec().unwrap(), want_steps, "on {}", dev.framework);
        assert_eq!(odd.to_vec().unwrap(), want_odd, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- helper functions

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

#[kernel]
fn apply_smoothstep(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = smoothstep(-1.0, 2.0, x[i]);
    }
}

#[test]
fn helper_function_calls() {
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.005 - 2.0).collect();
    let want: Vec<f32> = x
        .iter()
        .map(|&x| {
            let t = ((x - -1.0f32) / (2.0f32 - -1.0)).clamp(0.0, 1.0);
            t * t * (3.0 - 2.0 * t)
        })
        .collect();
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut out = dev.alloc::<f32>(n).unwrap();
        apply_smoothstep
            .launch(&dev, dims1d(blocks_for(n, 128)), dims1d(128), (&xb, &mut out))
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- if as an expression

#[kernel]
fn classify(x: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i < x.len() {
        let v = x[i];
        let sign = if v > 0 {
            1
        } else if v < 0 {
            -1
        } else {
            0
        };
        let mag = if v.abs() > 100 {
            let big = v / 100;
            big * big
        } else {
            v
        };
        out[i] = sign * 1_000_000 + mag;
    }
}

#[test]
fn if_expressions() {
    let x: Vec<i32> = (-500..500).map(|v| v * 3).collect();
    let want: Vec<i32> = x
        .iter()
        .map(|&v| {
            let sign = v.signum();
            let mag = if v.abs() > 100 { (v / 100) * (v / 100) } else { v };
            sign * 1_000_000 + mag
        })
        .collect();
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut out = dev.alloc::<i32>(x.len()).unwrap();
        classify
            .launch(&dev, dims1d(blocks_for(x.len(), 128)), dims1d(128), (&xb, &mut out))
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- casts across all scalar types

#[kernel]
fn casts(x: &[f64], ints: &mut [i64], uints: &mut [u64], f32s: &mut [f32], flags: &mut [u32]) {
    let i = global_id_x();
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let a = v as i32;
    let b = v as u32;
    let c = v as i64;
    let d = v as u64;
    let e = v as f32;
    let f = a as u32;
    let g = b as i32;
    let h = c as i32;
    let k = d as u32;
    let back = (e as f64) as f32;
    let z = (a as f64) + (b as f64) + (k as f32) as f64;
    ints[i * 3] = a as i64 + g as i64;
    ints[i * 3 + 1] = c + h as i64;
    ints[i * 3 + 2] = z as i64;
    uints[i * 2] = d + f as u64;
    uints[i * 2 + 1] = (c as u64) ^ (b as u64);
    f32s[i] = back + (f as f32) + (g as f32);
    let neg = v < 0.0;
    flags[i] = (neg as u32) + ((v > 1e9) as u32) * 2;
}

#[test]
fn casts_all_scalar_types() {
    let x: Vec<f64> = vec![
        0.0, -0.0, 1.5, -1.5, 2.9, -2.9, 255.7, -129.3, 65_536.25, 3e9, -3e9, 5e18, -5e18, 2e19,
        -2e19, 1e30, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 4_294_967_295.9, 123_456_789.123,
    ];
    let n = x.len();
    let mut ints = vec![0i64; n * 3];
    let mut uints = vec![0u64; n * 2];
    let mut f32s = vec![0f32; n];
    let mut flags = vec![0u32; n];
    for (i, &v) in x.iter().enumerate() {
        let (a, b, c, d, e) = (v as i32, v as u32, v as i64, v as u64, v as f32);
        let (f, g, h, k) = (a as u32, b as i32, c as i32, d as u32);
        let back = (e as f64) as f32;
        let z = (a as f64) + (b as f64) + (k as f32) as f64;
        ints[i * 3] = a as i64 + g as i64;
        ints[i * 3 + 1] = c.wrapping_add(h as i64);
        ints[i * 3 + 2] = z as i64;
        uints[i * 2] = d.wrapping_add(f as u64);
        uints[i * 2 + 1] = (c as u64) ^ (b as u64);
        f32s[i] = back + (f as f32) + (g as f32);
        flags[i] = (v < 0.0) as u32 + ((v > 1e9) as u32) * 2;
    }
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut ib = dev.alloc::<i64>(n * 3).unwrap();
        let mut ub = dev.alloc::<u64>(n * 2).unwrap();
        let mut fb = dev.alloc::<f32>(n).unwrap();
        let mut gb = dev.alloc::<u32>(n).unwrap();
        casts
            .launch(&dev, dims1d(1), dims1d(32), (&xb, &mut ib, &mut ub, &mut fb, &mut gb))
            .unwrap();
        assert_eq!(ib.to_vec().unwrap(), ints, "on {}", dev.framework);
        assert_eq!(ub.to_vec().unwrap(), uints, "on {}", dev.framework);
        let got: Vec<u32> = fb.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
        let want: Vec<u32> = f32s.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "on {}", dev.framework);
        assert_eq!(gb.to_vec().unwrap(), flags, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- wrapping integer overflow

#[kernel]
fn overflow(out_i32: &mut [i32], out_u32: &mut [u32], out_i64: &mut [i64], out_u64: &mut [u64]) {
    let i = global_id_x();
    if i >= out_i32.len() {
        return;
    }
    let k = i as i32;
    out_i32[i] = 2_147_483_000 + k * 1000 - (-2_147_483_647 - 1) / -1 * (k % 2);
    out_u32[i] = 0u32 - (i as u32) + 4_000_000_000 * (i as u32);
    out_i64[i] = 9_223_372_036_854_775_000 + (i as i64) * 1_000;
    out_u64[i] = (i as u64) * 0x9E37_79B9_7F4A_7C15 - 1;
}

#[test]
fn wrapping_integer_overflow() {
    let n = 64;
    let mut w32 = vec![0i32; n];
    let mut wu32 = vec![0u32; n];
    let mut w64 = vec![0i64; n];
    let mut wu64 = vec![0u64; n];
    for i in 0..n {
        let k = i as i32;
        w32[i] = 2_147_483_000i32
            .wrapping_add(k.wrapping_mul(1000))
            .wrapping_sub(i32::MIN.wrapping_div(-1).wrapping_mul(k % 2));
        wu32[i] = 0u32.wrapping_sub(i as u32).wrapping_add(4_000_000_000u32.wrapping_mul(i as u32));
        w64[i] = 9_223_372_036_854_775_000i64.wrapping_add((i as i64).wrapping_mul(1000));
        wu64[i] = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_sub(1);
    }
    for dev in devices() {
        let mut a = dev.alloc::<i32>(n).unwrap();
        let mut b = dev.alloc::<u32>(n).unwrap();
        let mut c = dev.alloc::<i64>(n).unwrap();
        let mut d = dev.alloc::<u64>(n).unwrap();
        overflow
            .launch(&dev, dims1d(2), dims1d(32), (&mut a, &mut b, &mut c, &mut d))
            .unwrap();
        assert_eq!(a.to_vec().unwrap(), w32, "on {}", dev.framework);
        assert_eq!(b.to_vec().unwrap(), wu32, "on {}", dev.framework);
        assert_eq!(c.to_vec().unwrap(), w64, "on {}", dev.framework);
        assert_eq!(d.to_vec().unwrap(), wu64, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- for loops: step_by, rev

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
    for _v in hi..lo {
        acc += 1_000_000;
    }
    out[i] = acc;
}

#[test]
fn for_loops_step_by_rev() {
    let (lo, hi) = (-13i32, 17i32);
    let n = 9;
    let want: Vec<i64> = (0..n)
        .map(|i| {
            let s = i + 1;
            let mut acc = 0i64;
            for v in (lo..hi).step_by(s) {
                acc = acc.wrapping_mul(3).wrapping_add(v as i64);
            }
            for v in (lo..hi).rev() {
                acc = acc.wrapping_mul(7).wrapping_sub(v as i64);
            }
            for v in (lo..hi).rev().step_by(s) {
                acc = acc.wrapping_mul(5).wrapping_add(v as i64);
            }
            acc
        })
        .collect();
    for dev in devices() {
        let mut out = dev.alloc::<i64>(n).unwrap();
        for_loops.launch(&dev, dims1d(1), dims1d(16), (&mut out, lo, hi)).unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "on {}", dev.framework);
    }
}

// ---------------------------------------------------------------- f32 math methods

#[kernel]
fn math_f32(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < x.len() {
        let v = x[i];
        out[i] = v.sin() + v.cos() * v.exp().ln() + v.abs().sqrt() + v.floor() - v.ceil()
            + v.tanh()
            + v.atan2(1.5)
            + v.abs().powf(0.3)
            + v.powi(3)
            + v.round()
            + v.trunc()
            + v.mul_add(0.5, -1.0);
    }
}

#[test]
fn math_methods_f32() {
    let x: Vec<f32> = (0..500).map(|i| i as f32 * 0.037 - 9.0).collect();
    let want: Vec<u32> = x
        .iter()
        .map(|&v| {
            (v.sin() + v.cos() * v.exp().ln() + v.abs().sqrt() + v.floor() - v.ceil()
                + v.tanh()
                + v.atan2(1.5)
                + v.abs().powf(0.3)
                + v.powi(3)
                + v.round()
                + v.trunc()
                + v.mul_add(0.5, -1.0))
            .to_bits()
        })
        .collect();
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut out = dev.alloc::<f32>(x.len()).unwrap();
        math_f32
            .launch(&dev, dims1d(blocks_for(x.len(), 64)), dims1d(64), (&xb, &mut out))
            .unwrap();
        let got: Vec<u32> = out.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
        // Native and Interpreter both evaluate with Rust's own f32 methods: bit-exact.
        assert_eq!(got, want, "on {}", dev.framework);
    }
}
