//! `#[kernel]` kernels on the Vulkan backend (lavapipe here and in CI, a GPU driver elsewhere),
//! each compared bit for bit with the Interpreter, the reference.
//!
//! Without a Vulkan device every test prints why and passes, unless `SPOC_REQUIRE_BACKENDS`
//! names `vulkan` (comma-separated, case-insensitive): then a missing backend fails.

mod common;

use common::{blocks_for, pseudo_random};
use spoc::prelude::*;
use spoc::{Buffer, Device, Error, LaunchProblem};

fn required() -> bool {
    std::env::var("SPOC_REQUIRE_BACKENDS").is_ok_and(|v| {
        v.split([',', ' '])
            .any(|b| b.trim().eq_ignore_ascii_case("vulkan"))
    })
}

/// (Vulkan device, Interpreter device), or `None` (printed) without Vulkan.
///
/// # Panics
/// If Vulkan is unavailable and `SPOC_REQUIRE_BACKENDS` names it.
fn devices(test: &str) -> Option<(Device, Device)> {
    let interp = spoc::init_device(Some("Interpreter")).expect("the Interpreter always runs");
    match spoc::init_device(Some("Vulkan")) {
        Ok(vk) => Some((vk, interp)),
        Err(e) => {
            if required() {
                panic!("SPOC_REQUIRE_BACKENDS names vulkan, but Vulkan is unavailable: {e}");
            }
            eprintln!("SKIPPED {test}: Vulkan is unavailable: {e}");
            None
        }
    }
}

fn f32_bits(b: &Buffer<f32>) -> Vec<u32> {
    b.to_vec().unwrap().iter().map(|v| v.to_bits()).collect()
}

fn f64_bits(b: &Buffer<f64>) -> Vec<u64> {
    b.to_vec().unwrap().iter().map(|v| v.to_bits()).collect()
}

// ---------------------------------------------------------------- saxpy

#[kernel]
fn vk_saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[test]
fn saxpy_is_exact_and_uncontracted() {
    let Some((vk, interp)) = devices("saxpy_is_exact_and_uncontracted") else {
        return;
    };
    let n = 5003;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.917).cos() * 731.5).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 41) as f32 / 9.0 - 2.0).collect();
    let run = |dev: &Device, block: u32| {
        let xb = dev.upload(&x).unwrap();
        let mut yb = dev.upload(&y).unwrap();
        vk_saxpy
            .launch(
                dev,
                dims1d(blocks_for(n, block)),
                dims1d(block),
                (-2.71, &xb, &mut yb),
            )
            .unwrap();
        f32_bits(&yb)
    };
    let want = run(&interp, 64);
    // Rust's `a * x + y`, two roundings: a fused result would differ for some elements.
    let rust: Vec<u32> = x
        .iter()
        .zip(&y)
        .map(|(x, y)| (-2.71f32 * x + y).to_bits())
        .collect();
    assert_eq!(want, rust);
    // Two block sizes: two pipelines.
    assert_eq!(run(&vk, 64), want);
    assert_eq!(run(&vk, 256), want);
}

// ---------------------------------------------------------------- wrapping integers

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

#[test]
fn integer_kernels_wrap_like_rust() {
    let Some((vk, interp)) = devices("integer_kernels_wrap_like_rust") else {
        return;
    };
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
        let want = run(&interp, k);
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
        assert_eq!(run(&vk, k), want, "k = {k}");
    }
}

// ---------------------------------------------------------------- loops

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

#[test]
fn loops_with_break_and_continue_match_interpreter() {
    let Some((vk, interp)) = devices("loops_with_break_and_continue_match_interpreter") else {
        return;
    };
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
        assert_eq!(run(&vk, limit), run(&interp, limit), "limit {limit}");
    }
}

// ---------------------------------------------------------------- helper calls

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

#[test]
fn helper_calls_match_interpreter() {
    let Some((vk, interp)) = devices("helper_calls_match_interpreter") else {
        return;
    };
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
        (f32_bits(&out), h.to_vec().unwrap())
    };
    assert_eq!(run(&vk), run(&interp));
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

#[test]
fn casts_saturate_and_truncate_like_rust() {
    let Some((vk, interp)) = devices("casts_saturate_and_truncate_like_rust") else {
        return;
    };
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
            f32_bits(&d),
            e.to_vec().unwrap(),
        )
    };
    let want = run(&interp);
    // The Interpreter is Rust: NaN -> 0, saturation at the bounds.
    assert_eq!(want.0[500..503], [0, i32::MAX, i32::MIN]);
    assert_eq!(run(&vk), want);
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

#[test]
fn two_dimensional_f64_kernel_matches_interpreter() {
    let Some((vk, interp)) = devices("two_dimensional_f64_kernel_matches_interpreter") else {
        return;
    };
    if !vk.capabilities.fp64 {
        eprintln!("SKIPPED two_dimensional_f64_kernel_matches_interpreter: {vk} has no f64");
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
        f64_bits(&db)
    };
    assert_eq!(run(&vk), run(&interp));
}

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

/// The Interpreter runs threads one after another, so barriers have plain Rust as reference.
#[test]
fn barrier_and_bool_kernel_matches_rust() {
    let Some((vk, _)) = devices("barrier_and_bool_kernel_matches_rust") else {
        return;
    };
    let x: Vec<u32> = (0..512).map(|i| i * 3 + 1).collect();
    for flip in [true, false] {
        let xb = vk.upload(&x).unwrap();
        let mut s = vk.alloc::<u32>(512).unwrap();
        let mut o = vk.alloc::<u32>(512).unwrap();
        vk_reverse_in_blocks
            .launch(&vk, dims1d(4), dims1d(128), (&xb, &mut s, flip, &mut o))
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

#[test]
fn mul_add_is_fused_or_refused() {
    let Some((vk, interp)) = devices("mul_add_is_fused_or_refused") else {
        return;
    };
    // (1 + 2^-13)(1 - 2^-13) - 1 is -2^-26 fused, 0 when rounded twice.
    let e = 2f32.powi(-13);
    let a = vec![1.0 + e, 3.0, -0.1];
    let b = vec![1.0 - e, 1.0 / 3.0, 10.0];
    let run = |dev: &Device| -> spoc::Result<Vec<u32>> {
        let (ab, bb) = (dev.upload(&a)?, dev.upload(&b)?);
        let mut o = dev.alloc::<f32>(3)?;
        vk_fma.launch(dev, dims1d(1), dims1d(64), (&ab, &bb, &mut o))?;
        Ok(f32_bits(&o))
    };
    let want = run(&interp).unwrap();
    assert_eq!(f32::from_bits(want[0]), -(e * e));
    match run(&vk) {
        Ok(got) => assert_eq!(got, want),
        Err(Error::FeatureNotSupported { feature, .. }) => {
            eprintln!("mul_add refused on {vk}: {feature}");
            assert!(feature.contains("fused f32 multiply-add"), "{feature}");
        }
        Err(other) => panic!("{other}"),
    }
}

// ---------------------------------------------------------------- launch errors

#[test]
fn launch_errors_are_typed() {
    let Some((vk, _)) = devices("launch_errors_are_typed") else {
        return;
    };
    let x = vk.upload(&[1.0f32; 8]).unwrap();
    let mut y = vk.upload(&[1.0f32; 8]).unwrap();
    let caps = vk.capabilities;
    let e = vk_saxpy
        .launch(
            &vk,
            dims1d(1),
            dims1d(caps.max_threads_per_block + 1),
            (1.0, &x, &mut y),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    let e = vk_saxpy
        .launch(&vk, dims1d(0), dims1d(8), (1.0, &x, &mut y))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidLaunch {
                problem: LaunchProblem::ZeroDim { .. },
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(y.to_vec().unwrap(), vec![1.0; 8], "nothing ran");
    // A buffer of another device.
    let interp = spoc::init_device(Some("Interpreter")).unwrap();
    let xi = interp.upload(&[1.0f32; 8]).unwrap();
    let e = vk_saxpy
        .launch(&vk, dims1d(1), dims1d(8), (1.0, &xi, &mut y))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
}
