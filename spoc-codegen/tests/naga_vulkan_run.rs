//! Runs the generated SPIR-V on a real Vulkan device (lavapipe, `mesa-vulkan-drivers`, on CI)
//! and compares every result with the same computation in Rust: wrapping and `MIN / -1`,
//! shifts, saturating casts, half-away-from-zero rounding, NaN-aware min/max, `powf` special
//! cases, loops that end next to the integer limits, atomics, shared memory, records, variants,
//! f64, f16, subgroups, and no FMA contraction.
//!
//! `SPOC_DUMP=<dir>` writes the SPIR-V of each kernel launched through [`launch_with`] to
//! `<dir>/<kernel>.spv` (for `spirv-dis`).
//!
//! Without a Vulkan device the tests say so and pass, unless `SPOC_REQUIRE_TOOLCHAINS=1` or
//! `SPOC_REQUIRE_BACKENDS` names `vulkan`.
//!
//! On the NVIDIA H200 machine (driver 580.159.04), with this binary built here
//! (`cargo test --release -p spoc-codegen --test naga_vulkan_run --no-run`) and the Vulkan
//! loader carried as `libvulkan1` .deb: `VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/
//! nvidia_icd.json ./naga_vulkan_run --test-threads=1` passed all 15 tests (the driver lacks
//! `shaderDenormPreserveFloat32`, so f32 subnormal cases are reported, not asserted there).

mod naga_support;
mod naga_vk;

use half::f16;
use naga_support::*;
use naga_vk::{bytes_of, from_bytes, scalar_block, Arg};
use spoc_codegen::{Code, Options, Target};
use spoc_ir::Kernel;
use std::hint::black_box;

/// Generates `k` for Vulkan with `block`, runs it over `groups` with the scalar arguments and
/// buffer contents given, and returns the buffers afterwards; `None` when there is no device.
fn launch(
    k: &Kernel,
    block: [u32; 3],
    groups: [u32; 3],
    scalars: &[Arg],
    buffers: Vec<Vec<u8>>,
) -> Option<Vec<Vec<u8>>> {
    launch_with(k, full_caps(), block, groups, scalars, buffers)
}

/// The capabilities the Vulkan backend gives lavapipe: [`full_caps`] with float constants
/// hidden from the driver (`float_controls_ignored`: it folds `0.0 * x` to `0.0`) and `f32`
/// `mul_add` computed in `f64` (its `Fma` is unfused).
fn lavapipe_caps() -> spoc_codegen::Capabilities {
    spoc_codegen::Capabilities {
        float_controls_ignored: true,
        unfused_fma_f32: true,
        ..full_caps()
    }
}

/// The kernel of Rust source `src`, lowered by the `#[kernel]` front end.
fn kernel_of(src: &str) -> Kernel {
    spoc_frontend::lower_kernel_source(src).unwrap_or_else(|e| panic!("{e:?}\n{src}"))
}

/// [`launch`] with the code generated for capabilities `caps`.
fn launch_with(
    k: &Kernel,
    caps: spoc_codegen::Capabilities,
    block: [u32; 3],
    groups: [u32; 3],
    scalars: &[Arg],
    buffers: Vec<Vec<u8>>,
) -> Option<Vec<Vec<u8>>> {
    spoc_ir::validate(k).unwrap();
    let src = spoc_codegen::generate_source_with(
        Target::Vulkan,
        k,
        &Options {
            block: Some(block),
            soa_params: &[],
            caps,
            checked: false,
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}", k.name))
    .unwrap();
    let Code::SpirV(words) = src.code else {
        panic!("SPIR-V expected")
    };
    if let Some(d) = std::env::var_os("SPOC_DUMP") {
        let b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(std::path::Path::new(&d).join(format!("{}.spv", k.name)), b).unwrap();
    }
    let mut bound = Vec::new();
    if !scalars.is_empty() {
        bound.push((0u32, scalar_block(k, scalars)));
    }
    let first = bound.len();
    for (j, b) in buffers.into_iter().enumerate() {
        bound.push((spoc_codegen::naga::buffer_binding(j), b));
    }
    let out = naga_vk::with_device(&k.name, |vk| vk.run(&words, &src.entry, &bound, groups))?
        .unwrap_or_else(|e| panic!("{}: {e}", k.name));
    Some(out[first..].to_vec())
}

/// A deterministic stream of f32 values in [-4, 4).
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
        })
        .collect()
}

fn assert_bits_f32(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "{what}[{i}]: got {g:?} ({:#x}), want {w:?} ({:#x})",
            g.to_bits(),
            w.to_bits()
        );
    }
}

#[test]
fn saxpy_is_exact_and_not_contracted() {
    let n = 1000;
    let k = saxpy();
    let a = 1.1f32 + f32::EPSILON;
    let x = values(n, 1);
    let y = values(n, 2);
    let want: Vec<f32> = x
        .iter()
        .zip(&y)
        .map(|(x, y)| black_box(a) * x + y)
        .collect();
    let fused = x
        .iter()
        .zip(&y)
        .filter(|(x, y)| a.mul_add(**x, **y) != a * **x + **y)
        .count();
    assert!(
        fused > 100,
        "the inputs tell a fused multiply-add apart ({fused})"
    );
    let Some(out) = launch(
        &k,
        [64, 1, 1],
        [16, 1, 1],
        &[Arg::F32(a)],
        vec![bytes_of(&x), bytes_of(&y)],
    ) else {
        return;
    };
    assert_bits_f32(&from_bytes::<f32>(&out[1]), &want, "y");
}

#[test]
fn integer_semantics_match_rust() {
    let k = int_ops();
    for (a, d, u, w, flag) in [
        (i32::MIN, -1, 33u32, i64::MIN, true),
        (7, -3, 5, -5, false),
        (-7, 3, 31, 1 << 40, true),
        (-123_456_789, 1000, 0xdead_beef, -1, false),
    ] {
        let Some(out) = launch(
            &k,
            [64, 1, 1],
            [1, 1, 1],
            &[
                Arg::I32(a),
                Arg::I32(d),
                Arg::U32(u),
                Arg::I64(w),
                Arg::Bool(flag),
            ],
            vec![vec![0; 12 * 4], vec![0; 7 * 4], vec![0; 4 * 8]],
        ) else {
            return;
        };
        let want_i = [
            a.wrapping_div(d),
            a.wrapping_rem(d),
            a.wrapping_shl(u),
            a.wrapping_shr(d as u32),
            a >> (35 & 31),
            a ^ !d,
            a.wrapping_neg(),
            a.wrapping_mul(d),
            if flag { a } else { d },
            (a >= d) as i32,
            a.wrapping_abs(),
            a.max(d),
        ];
        let want_u = [
            u / 7,
            u % 7,
            u.wrapping_shr(w as u32),
            u.wrapping_neg(),
            u | 0x80,
            (u != 3) as u32,
            (flag ^ true) as u32,
        ];
        let want_w = [
            w.wrapping_div(-1),
            w.wrapping_rem(-1),
            w.wrapping_shl(u),
            w.wrapping_mul(0x1_0000_0001),
        ];
        let case = format!("a={a} d={d} u={u} w={w} flag={flag}");
        assert_eq!(from_bytes::<i32>(&out[0]), want_i, "i32 ({case})");
        assert_eq!(from_bytes::<u32>(&out[1]), want_u, "u32 ({case})");
        assert_eq!(from_bytes::<i64>(&out[2]), want_w, "i64 ({case})");
    }
}

/// The `loops` kernel, in Rust.
fn loops_in_rust(n: i32) -> i32 {
    let mut acc: i32 = 0;
    for i in -3..n {
        if i == 5 {
            continue;
        }
        if i > 40 {
            break;
        }
        acc = acc.wrapping_add(i);
    }
    for j in (0..u32::MAX).rev().step_by(1 << 30) {
        acc ^= j as i32;
    }
    for k in (i64::MAX - 10..i64::MAX).step_by(4) {
        acc = acc.wrapping_add(k as i32);
    }
    while acc > 100 {
        acc -= 7;
        if acc == 42 {
            break;
        }
    }
    loop {
        acc += 1;
        if acc % 2 == 0 {
            continue;
        }
        break;
    }
    acc
}

#[test]
fn loops_end_exactly_next_to_the_integer_limits() {
    let k = loops();
    for n in [50, -5, 3, 6, i32::MAX] {
        let Some(out) = launch(
            &k,
            [64, 1, 1],
            [1, 1, 1],
            &[Arg::I32(n)],
            vec![vec![0; 64 * 4]],
        ) else {
            return;
        };
        let want = loops_in_rust(n);
        assert_eq!(from_bytes::<i32>(&out[0]), vec![want; 64], "n = {n}");
    }
}

#[test]
fn casts_saturate_like_rust_as() {
    let k = casts();
    for (f, i, u, flag) in [
        (f32::NAN, -5, 3_000_000_000u32, true),
        (f32::INFINITY, i32::MIN, u32::MAX, false),
        (f32::NEG_INFINITY, 7, 0, true),
        (3e9, -1, 17, false),
        (-2.5, 123_456_789, 1 << 31, true),
        (1e20, i32::MAX, 16_777_217, false),
        (-1e20, 0, 1, true),
        (4_294_967_040.0, -2, 5, false),
        (-0.99, 1, 2, true),
    ] {
        let Some(out) = launch(
            &k,
            [1, 1, 1],
            [1, 1, 1],
            &[Arg::F32(f), Arg::I32(i), Arg::U32(u), Arg::Bool(flag)],
            vec![
                vec![0; 4 * 4],
                vec![0; 3 * 4],
                vec![0; 6 * 4],
                vec![0; 3 * 8],
                vec![0; 2 * 8],
            ],
        ) else {
            return;
        };
        let f = black_box(f);
        let case = format!("f={f} i={i} u={u} flag={flag}");
        assert_eq!(
            from_bytes::<i32>(&out[0]),
            [f as i32, u as i32, flag as i32, (i as i64) as i32],
            "i32 ({case})"
        );
        assert_eq!(
            from_bytes::<u32>(&out[1]),
            [f as u32, i as u32, (f as u64) as u32],
            "u32 ({case})"
        );
        assert_bits_f32(
            &from_bytes::<f32>(&out[2]),
            &[
                i as f32,
                u as f32,
                (u as u64) as f32,
                f32::INFINITY,
                f32::NAN,
                -0.0,
            ],
            &format!("f32 ({case})"),
        );
        assert_eq!(
            from_bytes::<i64>(&out[3]),
            [i as i64, u as i64, f as i64],
            "i64 ({case})"
        );
        assert_eq!(
            from_bytes::<u64>(&out[4]),
            [i as u64, f as u64],
            "u64 ({case})"
        );
    }
}

/// `math_fns` in Rust: the value of output `k`, and whether it must match bit for bit.
fn math_in_rust(x: f32, y: f32, n: i32) -> Vec<(f32, bool)> {
    use spoc_ir::MathFn::*;
    let mut out = vec![(0.0, true); 42];
    for (k, m) in spoc_ir::MathFn::ALL.iter().enumerate() {
        out[k] = match m {
            Sqrt => (x.sqrt(), true),
            Rsqrt => (1.0 / x.sqrt(), false),
            Recip => (x.recip(), true),
            Abs => (x.abs(), true),
            Floor => (x.floor(), true),
            Ceil => (x.ceil(), true),
            Round => (x.round(), true),
            Trunc => (x.trunc(), true),
            Exp => (x.exp(), false),
            Exp2 => (x.exp2(), false),
            Ln => (x.ln(), false),
            Log2 => (x.log2(), false),
            Log10 => (x.log10(), false),
            Sin => (x.sin(), false),
            Cos => (x.cos(), false),
            Tan => (x.tan(), false),
            Asin => (x.asin(), false),
            Acos => (x.acos(), false),
            Atan => (x.atan(), false),
            Sinh => (x.sinh(), false),
            Cosh => (x.cosh(), false),
            Tanh => (x.tanh(), false),
            Signum => (x.signum(), true),
            Min => (x.min(y), true),
            Max => (x.max(y), true),
            Powf => (x.powf(y), false),
            Atan2 => (x.atan2(y), false),
            Hypot => (x.hypot(y), false),
            Copysign => (x.copysign(y), true),
            Powi => (x.powi(n), true),
            MulAdd => (x.mul_add(y, 0.5), true),
        };
    }
    out[40] = (x % y, true);
    out[41] = (((x != y) as u32) as f32, true);
    out
}

/// Relative tolerance of a transcendental: Vulkan lets `asin`/`acos`/`atan` inherit their
/// precision from `atan2`-based formulas (lavapipe's `asin(0.5)` is ~4e-4 off), the others a
/// few ULP.
fn tolerance(name: &str) -> f32 {
    match name {
        "asin" | "acos" => 1e-3,
        "atan" | "atan2" | "tan" | "sinh" | "cosh" | "tanh" | "powf" => 1e-4,
        _ => 4e-6,
    }
}

/// Equal up to relative error `tol`, with NaN, infinities and zeros exact.
fn close(g: f32, w: f32, tol: f32) -> bool {
    if w.is_nan() || g.is_nan() {
        return w.is_nan() && g.is_nan();
    }
    if w.is_infinite() || w == 0.0 {
        return g == w && g.is_sign_negative() == w.is_sign_negative()
            || (w == 0.0 && g.abs() < 1e-6);
    }
    ((g - w) / w).abs() < tol
}

#[test]
fn math_functions_have_rust_semantics() {
    let k = math_fns();
    let mut failures = Vec::new();
    let denorms = naga_vk::preserves_f32_denormals();
    for (x, y, n) in [
        (2.5f32, -0.5f32, 3),
        (-2.5, 0.5, -2),
        (0.499_999_97, f32::NAN, 0),
        (-0.0, 0.0, 5),
        (f32::NAN, 1.0, 1),
        (1e30, 1e30, 2),
        (-3.7, 2.0, 7),
        (0.5, -1.5, -1),
        (-2.0, 3.0, 3),
        (-8.0, 1.0 / 3.0, 1),
        (0.0, -1.0, -3),
        (-0.0, -1.0, 1),
        (-1.0, f32::INFINITY, 0),
        (1.0, f32::NAN, 4),
        (f32::INFINITY, f32::NAN, 2),
        (1.5, 2.5, 9),
        (-0.0, -0.0, 1),
        (30.0, 7.0, 2),
        (-1.0, 0.0, 3),
        (1e30, 3.0, 1),
        (f32::INFINITY, 3.0, 2),
        (2.0, 7.5, -3),
        (-7.25, f32::NEG_INFINITY, 0),
        (5.5, -2.0, 11),
        (1e-40, 3e-41, 2),
    ] {
        let Some(out) = launch(
            &k,
            [1, 1, 1],
            [1, 1, 1],
            &[Arg::F32(x), Arg::F32(y), Arg::I32(n)],
            vec![vec![0; 42 * 4]],
        ) else {
            return;
        };
        let got = from_bytes::<f32>(&out[0]);
        let want = math_in_rust(black_box(x), black_box(y), black_box(n));
        for (k, ((g, (w, exact)), name)) in got
            .iter()
            .zip(&want)
            .zip(
                spoc_ir::MathFn::ALL
                    .iter()
                    .map(|m| m.name())
                    .chain(std::iter::repeat("op")),
            )
            .enumerate()
        {
            if (31..40).contains(&k) {
                continue;
            }
            // Vulkan bounds trigonometry's error on [-pi, pi] only (lavapipe does no range
            // reduction; NVIDIA's cos(30) is 2e-5 off): other finite arguments are not compared.
            if matches!(name, "sin" | "cos" | "tan")
                && x.is_finite()
                && x.abs() > std::f32::consts::PI
            {
                continue;
            }
            // Devices without shaderDenormPreserveFloat32 (NVIDIA's Vulkan driver) flush
            // subnormal operands: not compared there.
            if !denorms && (x.is_subnormal() || y.is_subnormal()) {
                continue;
            }
            // Vulkan may flush subnormals in transcendentals (lavapipe does): not compared.
            if !exact && (x.is_subnormal() || y.is_subnormal()) {
                continue;
            }
            // min/max of -0.0 and +0.0 may return either (Rust documents it so).
            if matches!(name, "min" | "max") && *g == 0.0 && *w == 0.0 {
                continue;
            }
            let ok = if *exact {
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan())
            } else {
                close(*g, *w, tolerance(name))
            };
            if !ok {
                failures.push(format!(
                    "{name} (output {k}) at x={x} y={y} n={n}: got {g:?}, want {w:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn shared_memory_barrier_and_atomics() {
    let k = shared_atomics();
    let n = 256;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let Some(out) = launch(
        &k,
        [64, 1, 1],
        [4, 1, 1],
        &[],
        vec![bytes_of(&x), vec![0; n * 4], bytes_of(&[0u32, 0])],
    ) else {
        return;
    };
    let counter = from_bytes::<u32>(&out[2]);
    assert_eq!(
        counter,
        [n as u32, 7],
        "one atomic add per thread; the CAS of the first"
    );
    let got = from_bytes::<f32>(&out[1]);
    for (g, v) in got.iter().enumerate() {
        // tile[tid ^ 1] is x[g ^ 1] (written before the barrier); prev in 0..=63; hits = 63.
        let rest = v - x[g ^ 1] - 63.0;
        assert!(
            (0.0..=63.0).contains(&rest) && rest.fract() == 0.0,
            "out[{g}] = {v}"
        );
    }
}

#[test]
fn helpers_write_the_buffer_they_are_given() {
    let k = helpers();
    let n = 64;
    let mut a = vec![9.0f32; n];
    a[0] = 1.0;
    a[1] = 2.0;
    let Some(out) = launch(
        &k,
        [64, 1, 1],
        [1, 1, 1],
        &[],
        vec![bytes_of(&a), vec![0; n * 4], vec![0; n * 4]],
    ) else {
        return;
    };
    assert_eq!(from_bytes::<f32>(&out[0]), vec![9.0; n], "put(a, g, 3.0)");
    assert_eq!(from_bytes::<f32>(&out[1]), vec![81.0; n], "put(c, g, a[g])");
    for (g, p) in from_bytes::<i32>(&out[2]).iter().enumerate() {
        // find() sees at least this thread's own write.
        assert!((0..=g as i32).contains(p), "pos[{g}] = {p}");
    }
}

#[test]
fn records_and_variants() {
    let k = records_variants();
    // Point { x: f32, y: f32, id: u32 }, #[repr(C)]: 12 bytes.
    let point = |x: f32, y: f32, id: u32| {
        let mut b = x.to_le_bytes().to_vec();
        b.extend(y.to_le_bytes());
        b.extend(id.to_le_bytes());
        b
    };
    let mut origin = [0u8; 64];
    origin[..12].copy_from_slice(&point(10.0, 0.0, 0));
    for (code, want_out) in [
        (-1, [0.25f32, 0.5, -1.0, 1.0]),
        (0, [10.0, 0.5, 0.75, 1.0]),
        (5, [0.25, 0.25, 0.75, 1.0]),
        (-5, [0.25, 0.25, 0.75, 1.0]),
    ] {
        let mut pts = point(1.0, 2.0, 0);
        pts.extend(point(5.0, 6.0, 1));
        let Some(out) = launch(
            &k,
            [1, 1, 1],
            [1, 1, 1],
            &[Arg::Bytes(origin, 12), Arg::I32(code)],
            vec![pts, bytes_of(&[0.25f32, 0.5, 0.75, 2.0])],
        ) else {
            return;
        };
        let mut want_pts = point(11.0, 2.0, 9);
        want_pts.extend(point(5.0, 6.0, 1));
        assert_eq!(out[0], want_pts, "pts (code {code})");
        assert_eq!(from_bytes::<f32>(&out[1]), want_out, "out (code {code})");
    }
}

#[test]
fn local_arrays_and_2d_indices() {
    let k = local_arrays();
    let Some(out) = launch(&k, [64, 1, 1], [2, 3, 1], &[], vec![vec![0; 384 * 4]]) else {
        return;
    };
    let got = from_bytes::<f32>(&out[0]);
    for (i, v) in got.iter().enumerate() {
        let gx = i % 128;
        assert_eq!(*v, 40.0 + gx as f32, "out[{i}]");
    }
}

#[test]
fn doubles_and_halves() {
    let x = [2.25f64, -7.5, 1e300, 0.5, -0.0, 3.0e18];
    let Some(out) = launch(
        &doubles(),
        [64, 1, 1],
        [1, 1, 1],
        &[],
        vec![bytes_of(&x), vec![0; 12 * 8]],
    ) else {
        return;
    };
    let got = from_bytes::<f64>(&out[1]);
    for (i, x) in x.iter().enumerate() {
        let x = black_box(*x);
        let want = [
            x.sqrt() + x.round(),
            (x as i64) as f64 + x.mul_add(2.0, -0.5).min(f64::INFINITY),
        ];
        for (k, w) in want.iter().enumerate() {
            let g = got[2 * i + k];
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "y[{}] for x={x}: got {g:?}, want {w:?}",
                2 * i + k
            );
        }
    }

    let xs: Vec<f16> = [1.5f32, -2.25, 65504.0, 0.333, -0.0, 1000.7]
        .iter()
        .map(|v| f16::from_f32(*v))
        .collect();
    let scale = f16::from_f32(0.1);
    let Some(out) = launch(
        &halves(),
        [64, 1, 1],
        [1, 1, 1],
        &[Arg::F16(scale.to_bits())],
        vec![bytes_of(&xs), vec![0; 12 * 2]],
    ) else {
        return;
    };
    let got = from_bytes::<f16>(&out[1]);
    for (i, x) in xs.iter().enumerate() {
        let want = [
            f16::from_f32(x.to_f32() * (scale.to_f32() + 1.0)),
            f16::from_f32((x.to_f32() as i32) as f32),
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(
                got[2 * i + k].to_bits(),
                w.to_bits(),
                "y[{}] for x={x}",
                2 * i + k
            );
        }
    }
}

#[test]
fn subgroup_votes_ballot_and_lane_ids() {
    let Some(size) =
        naga_vk::with_device("subgroup_votes_ballot_and_lane_ids", |v| v.subgroup_size)
    else {
        return;
    };
    if size > 32 {
        eprintln!("SKIPPED: subgroup size {size} > 32 (ballot keeps the low 32 lanes)");
        return;
    }
    let n = 64;
    let x = vec![1.0f32; n];
    let Some(out) = launch(
        &warp(),
        [64, 1, 1],
        [1, 1, 1],
        &[],
        vec![bytes_of(&x), vec![0; n * 4], vec![0; n * 4]],
    ) else {
        return;
    };
    let full = if size == 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    for (g, m) in from_bytes::<u32>(&out[2]).iter().enumerate() {
        let want = full
            .wrapping_add(2)
            .wrapping_add(g as u32 % size)
            .wrapping_add(size);
        assert_eq!(*m, want, "mask[{g}] (subgroup size {size})");
    }
}

/// `out[i] = x[i] / y[i]; out[n + i] = sqrt(x[i])` for float type `t`.
fn div_sqrt_kernel(t: spoc_ir::Type) -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", t.clone());
    let y = b.buf("y", t.clone());
    let out = b.buf_mut("out", t.clone());
    let i = b.local("i", spoc_ir::Type::U32, false);
    b.push(let_(&i, gid()));
    b.push(if_(
        lt(i.clone(), len(&x)),
        vec![
            assign(
                at(&out, i.clone()),
                bin(spoc_ir::BinOp::Div, idx(&x, i.clone()), idx(&y, i.clone())),
            ),
            assign(
                at(&out, add(i.clone(), len(&x))),
                math(spoc_ir::MathFn::Sqrt, vec![idx(&x, i.clone())]),
            ),
        ],
        None,
    ));
    b.kernel("div_sqrt")
}

/// A xorshift stream.
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// `n` operand pairs `(x, y)` from `pick` (given how many there are so far), each kept when
/// `usable`.
fn operands<T>(
    n: usize,
    mut pick: impl FnMut(usize) -> (T, T),
    usable: impl Fn(&T, &T) -> bool,
) -> (Vec<T>, Vec<T>) {
    let mut xs = Vec::with_capacity(n);
    let mut ys = Vec::with_capacity(n);
    while xs.len() < n {
        let (x, y) = pick(xs.len());
        if usable(&x, &y) {
            xs.push(x);
            ys.push(y);
        }
    }
    (xs, ys)
}

/// Runs [`div_sqrt_kernel`] of `ty` (the type of `T`) on `xs` and `ys` in blocks of `block`:
/// the quotients, then the square roots of `xs`; `None` without a device.
fn div_sqrt<T: Copy + Default>(
    ty: spoc_ir::Type,
    block: u32,
    xs: &[T],
    ys: &[T],
) -> Option<Vec<T>> {
    let n = xs.len();
    let out = launch(
        &div_sqrt_kernel(ty),
        [block, 1, 1],
        [(n as u32).div_ceil(block), 1, 1],
        &[],
        vec![
            bytes_of(xs),
            bytes_of(ys),
            vec![0; 2 * n * std::mem::size_of::<T>()],
        ],
    )?;
    Some(from_bytes::<T>(&out[2]))
}

#[test]
fn division_and_sqrt_are_correctly_rounded() {
    // Three classes of operands: random bit patterns (any exponent), values near 1, and
    // tiny / ordinary (subnormal quotients); subnormal operands included.
    let n = 3 << 16;
    let mut next = xorshift(0x1234_5678_9abc_def1);
    let (xs, ys) = operands(
        n,
        |k| match k % 3 {
            0 => (
                f32::from_bits(next() as u32 & 0x7fff_ffff),
                f32::from_bits(next() as u32),
            ),
            1 => (
                1.0 + (next() >> 41) as f32 / (1u32 << 23) as f32,
                -1.0 - (next() >> 41) as f32 / (1u32 << 23) as f32,
            ),
            _ => (
                f32::from_bits((next() as u32 & 0x01ff_ffff) | 1),
                f32::from_bits((next() as u32 & 0x41ff_ffff) | 0x3f80_0000),
            ),
        },
        |x, y| x.is_finite() && y.is_finite() && *y != 0.0,
    );
    let Some(got) = div_sqrt(spoc_ir::Type::F32, 256, &xs, &ys) else {
        return;
    };
    let mut bad_div = Vec::new();
    let mut bad_sqrt = Vec::new();
    for i in 0..n {
        let (d, r) = (black_box(xs[i]) / black_box(ys[i]), black_box(xs[i]).sqrt());
        if got[i].to_bits() != d.to_bits() {
            bad_div.push((xs[i], ys[i], got[i], d));
        }
        if got[n + i].to_bits() != r.to_bits() {
            bad_sqrt.push((xs[i], got[n + i], r));
        }
    }
    let normal = |v: &f32| v.is_normal();
    let bad_div_normal = bad_div
        .iter()
        .filter(|(x, y, _, d)| normal(x) && normal(y) && normal(d))
        .count();
    let bad_sqrt_normal = bad_sqrt.iter().filter(|(x, _, _)| normal(x)).count();
    let denorms = naga_vk::preserves_f32_denormals();
    if !denorms {
        eprintln!(
            "the device cannot preserve f32 subnormals: {} divisions and {} square roots with \
             subnormal operands or results differ (not asserted)",
            bad_div.len() - bad_div_normal,
            bad_sqrt.len() - bad_sqrt_normal
        );
    }
    let (nd, ns) = if denorms {
        (bad_div.len(), bad_sqrt.len())
    } else {
        (bad_div_normal, bad_sqrt_normal)
    };
    assert!(
        nd == 0 && ns == 0,
        "f32: {} of {n} divisions and {} square roots differ from IEEE ({} and {} with normal \
         operands and results; first: {:?} / {:?})",
        bad_div.len(),
        bad_sqrt.len(),
        bad_div_normal,
        bad_sqrt_normal,
        bad_div
            .iter()
            .find(|(x, y, _, d)| normal(x) && normal(y) && normal(d))
            .or(bad_div.first()),
        bad_sqrt.first()
    );

    // f64, fewer values.
    let n = 3 << 12;
    let (xs, ys) = operands(
        n,
        |k| match k % 3 {
            0 => (
                f64::from_bits(next() & (u64::MAX >> 1)),
                f64::from_bits(next()),
            ),
            1 => (
                1.0 + (next() >> 12) as f64 / (1u64 << 52) as f64,
                1.0 + (next() >> 12) as f64 / (1u64 << 52) as f64,
            ),
            _ => (
                f64::from_bits((next() & 0x003f_ffff_ffff_ffff) | 1),
                f64::from_bits((next() & 0x403f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000),
            ),
        },
        |x, y| x.is_finite() && y.is_finite() && *y != 0.0,
    );
    let Some(got) = div_sqrt(spoc_ir::Type::F64, 256, &xs, &ys) else {
        return;
    };
    let bad: Vec<usize> = (0..n)
        .filter(|&i| {
            got[i].to_bits() != (black_box(xs[i]) / ys[i]).to_bits()
                || got[n + i].to_bits() != black_box(xs[i]).sqrt().to_bits()
        })
        .collect();
    assert!(
        bad.is_empty(),
        "f64: {} of {n} differ (first: x={:e} y={:e} got {:e}, {:e})",
        bad.len(),
        xs[bad[0]],
        ys[bad[0]],
        got[bad[0]],
        got[n + bad[0]]
    );
}

#[test]
fn report_whether_fma_is_fused() {
    // `mul_add` is the target's `Fma`, which Vulkan may leave unfused (lavapipe does):
    // reported, and required fused on NVIDIA hardware.
    let mut b = B::new();
    let x = b.buf("x", spoc_ir::Type::F32);
    let y = b.buf_mut("y", spoc_ir::Type::F32);
    let v = idx(&x, gid());
    b.push(assign(
        at(&y, gid()),
        math(
            spoc_ir::MathFn::MulAdd,
            vec![
                v.clone(),
                v.clone(),
                un(spoc_ir::UnOp::Neg, mul(v.clone(), v)),
            ],
        ),
    ));
    let xs = [1.1f32, 1.0 + f32::EPSILON, 3.3, 0.1];
    let Some(out) = launch(
        &b.kernel("fma"),
        [4, 1, 1],
        [1, 1, 1],
        &[],
        vec![bytes_of(&xs), vec![0; 16]],
    ) else {
        return;
    };
    let got = from_bytes::<f32>(&out[1]);
    let fused: Vec<f32> = xs.iter().map(|x| x.mul_add(*x, -(x * x))).collect();
    let name = naga_vk::device()
        .lock()
        .map(|g| g.as_ref().map(|v| v.name.clone()).unwrap_or_default())
        .unwrap_or_default();
    let is_fused = got == fused;
    eprintln!("{name}: Fma fused: {is_fused} (got {got:?}, fused {fused:?})");
    if name.contains("NVIDIA") {
        assert!(is_fused, "NVIDIA's Fma should be fused");
    }
}

#[test]
fn dynamic_shared_memory_is_a_specialization_constant() {
    let k = dynamic_shared();
    spoc_ir::validate(&k).unwrap();
    let src = spoc_codegen::generate_source_with(
        Target::Vulkan,
        &k,
        &Options {
            block: Some([64, 1, 1]),
            soa_params: &[],
            caps: full_caps(),
            checked: false,
        },
    )
    .unwrap()
    .unwrap();
    let Code::SpirV(words) = src.code else {
        panic!()
    };
    let n = 256;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let Some(out) = naga_vk::with_device(&k.name, |vk| {
        vk.run_spec(
            &words,
            &src.entry,
            &[(1, bytes_of(&xs)), (2, vec![0; n * 4])],
            [4, 1, 1],
            &[(spoc_codegen::naga::DYNAMIC_SHARED_SPEC_ID, 64)],
        )
        .unwrap()
    }) else {
        return;
    };
    let got = from_bytes::<f32>(&out[1]);
    for (g, v) in got.iter().enumerate() {
        let neighbour = (g / 64) * 64 + (g % 64 + 1) % 64;
        assert_eq!(*v, neighbour as f32 + 64.0, "out[{g}]");
    }
}

#[test]
fn vectors_and_records_have_the_host_layout() {
    let n = 64;
    let Some(out) = launch(
        &vectors(),
        [64, 1, 1],
        [1, 1, 1],
        &[],
        vec![vec![0; n * 12], vec![0; n * 32]],
    ) else {
        return;
    };
    let v = from_bytes::<f32>(&out[0]);
    for g in 0..n {
        assert_eq!(&v[3 * g..3 * g + 3], &[g as f32, 1.0, 2.5], "out[{g}]");
        // `Tagged { id: u32, v: f64x2 }`: `v` aligned to 16 (spoc_ir::layout), stride 32.
        let rec = &out[1][32 * g..32 * (g + 1)];
        assert_eq!(
            u32::from_le_bytes(rec[0..4].try_into().unwrap()),
            g as u32 + 100
        );
        assert_eq!(
            from_bytes::<f64>(&rec[16..32]),
            [0.5, g as f64],
            "tags[{g}].v"
        );
    }
}

/// `x % y` on `f32` and `f64` in a kernel with a barrier after it (difftest/FINDINGS.md F3:
/// lavapipe gave `8.0 % 3.0 == 2.35e-38` there, and the right value without the barrier).
#[test]
fn float_remainder_next_to_a_barrier() {
    let k = kernel_of(
        "fn fmod_barrier(x: &[f32], y: &[f32], o: &mut [f32], xd: &[f64], yd: &[f64], od: &mut [f64]) {
            let i = global_id_x();
            let a: f32 = x[i] % y[i];
            let b: f64 = xd[i] % yd[i];
            sync_threads();
            o[i] = a;
            od[i] = b;
        }",
    );
    let pairs: [(f64, f64); 10] = [
        (8.0, 3.0),
        (100.0, 0.3),
        (8.0, 1e-45),
        (-7.5, 2.0),
        (1e30, 7.0),
        (5.0, 0.0),
        (0.5, 3.0),
        (-0.0, 1.0),
        // NaN operands: NaN, and the routine's loop must not run (on the H200's NVIDIA Vulkan
        // a kernel taking `10.0 % NaN` lost the device before the loop was bounded).
        (10.0, f64::NAN),
        (f64::NAN, 2.0),
    ];
    // Then random operands: any exponents, and quotients near one.
    let mut next = xorshift(0x0f0d_cafe_1234_5678);
    let mut pairs = pairs.to_vec();
    while pairs.len() < 512 {
        let x = f64::from_bits(next() >> 1) * if next() & 1 == 0 { 1.0 } else { -1.0 };
        let y = if pairs.len().is_multiple_of(2) {
            x / (1.0 + (next() >> 40) as f64 / (1u64 << 20) as f64)
        } else {
            f64::from_bits(next() >> 2)
        };
        if x.is_finite() && y.is_finite() && (x as f32).is_finite() && (y as f32).is_finite() {
            pairs.push((x, y));
        }
    }
    let x: Vec<f32> = pairs.iter().map(|p| p.0 as f32).collect();
    let y: Vec<f32> = pairs.iter().map(|p| p.1 as f32).collect();
    let xd: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let yd: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let n = pairs.len();
    let denorms = naga_vk::preserves_f32_denormals();
    for caps in [full_caps(), lavapipe_caps()] {
        let Some(out) = launch_with(
            &k,
            caps,
            [64, 1, 1],
            [n as u32 / 64, 1, 1],
            &[],
            vec![
                bytes_of(&x),
                bytes_of(&y),
                vec![0; n * 4],
                bytes_of(&xd),
                bytes_of(&yd),
                vec![0; n * 8],
            ],
        ) else {
            return;
        };
        let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| black_box(*a) % b).collect();
        // Devices without shaderDenormPreserveFloat32 (NVIDIA's Vulkan driver) flush f32
        // subnormal operands and results (LANGUAGE.md, Vulkan row): those lanes are not compared.
        let got = from_bytes::<f32>(&out[2]);
        let keep = |i: &usize| {
            denorms || !(x[*i].is_subnormal() || y[*i].is_subnormal() || want[*i].is_subnormal())
        };
        let (got, want): (Vec<f32>, Vec<f32>) =
            (0..n).filter(keep).map(|i| (got[i], want[i])).unzip();
        assert_bits_f32(&got, &want, "f32 % (lanes without f32 subnormals)");
        let got = from_bytes::<f64>(&out[5]);
        for i in 0..n {
            let w = black_box(xd[i]) % yd[i];
            assert!(
                got[i].to_bits() == w.to_bits() || (got[i].is_nan() && w.is_nan()),
                "f64 {} % {}: got {:e}, want {:e}",
                xd[i],
                yd[i],
                got[i],
                w
            );
        }
    }
}

/// Ordering of `i32` values sign-extended to `i64` (difftest/FINDINGS.md F4: lavapipe ordered
/// them as if zero-extended: `(-2i32 as i64) < 0` false, `0i64 < (0i32 as i64)` true).
#[test]
fn sign_extended_i32_orders_as_i64() {
    let k = kernel_of(
        "fn sext(x: &[i32], o: &mut [u32], w: &mut [i64]) {
            let i = global_id_x();
            let s: i64 = x[i] as i64;
            let z: i64 = 0i32 as i64;
            let m: i64 = -1i32 as i64;
            let mut r: u32 = 0u32;
            if s < 0i64 { r = r | 1u32; }
            if 0i64 < z { r = r | 2u32; }
            if z > 0i64 { r = r | 4u32; }
            if m < 0i64 { r = r | 8u32; }
            if 0i64 <= m { r = r | 16u32; }
            if s <= -2i64 { r = r | 32u32; }
            if s > 2i64 { r = r | 64u32; }
            match s {
                -2i64..=-2i64 => { r = r | 128u32; }
                2i64 | 3i64 => { r = r | 256u32; }
                _ => {}
            }
            if s.min(0i64) < 0i64 { r = r | 512u32; }
            if s.max(-1i64) >= 0i64 { r = r | 1024u32; }
            if s == -2i64 { r = r | 2048u32; }
            o[i] = r;
            w[i] = s.min(1i64) + s.abs();
        }",
    );
    let x = [-2i32, 2, 3, -3, 0, i32::MIN, i32::MAX, -1];
    let n = x.len();
    let Some(out) = launch_with(
        &k,
        lavapipe_caps(),
        [n as u32, 1, 1],
        [1, 1, 1],
        &[],
        vec![bytes_of(&x), vec![0; n * 4], vec![0; n * 8]],
    ) else {
        return;
    };
    let got = from_bytes::<u32>(&out[1]);
    let wide = from_bytes::<i64>(&out[2]);
    for (i, &xi) in x.iter().enumerate() {
        let s = black_box(xi) as i64;
        let (z, m) = (black_box(0i32) as i64, black_box(-1i32) as i64);
        let bits = [
            s < 0,
            0 < z,
            z > 0,
            m < 0,
            0 <= m,
            s <= -2,
            s > 2,
            s == -2,
            s == 2 || s == 3,
            s.min(0) < 0,
            s.max(-1) >= 0,
            s == -2,
        ];
        let want = bits
            .iter()
            .enumerate()
            .fold(0u32, |r, (b, &on)| r | ((on as u32) << b));
        assert_eq!(got[i], want, "x = {xi}: got {:#b}, want {want:#b}", got[i]);
        assert_eq!(wide[i], s.min(1) + s.abs(), "x = {xi}: min + abs");
    }
}

/// `sqrt` of the values whose correctly rounded root is just below a power of two
/// (difftest/FINDINGS.md F5: `f64::MAX.sqrt()` was one ulp high, `2^512`), f32 and f64.
#[test]
fn sqrt_below_a_power_of_two_is_correctly_rounded() {
    // Per type: the largest value, values just below 1 and 4 (`$below_one`: the bits of one
    // more just below 1), and two powers of two.
    macro_rules! inputs {
        ($t:ident, $below_one:expr) => {
            [
                $t::MAX,
                1.0 - $t::EPSILON / 2.0,
                4.0 - 2.0 * $t::EPSILON,
                $t::from_bits($below_one),
                2.0,
                0.25,
            ]
        };
    }
    let xs32 = inputs!(f32, 0x3f7f_fffe);
    let xs64 = inputs!(f64, 0x3fef_ffff_ffff_fffe);
    let n = xs32.len();
    let Some(got32) = div_sqrt(spoc_ir::Type::F32, n as u32, &xs32, &[1.0f32; 6]) else {
        return;
    };
    let Some(got64) = div_sqrt(spoc_ir::Type::F64, n as u32, &xs64, &[1.0f64; 6]) else {
        return;
    };
    // (input shown, result bits, Rust's bits) per value.
    let rows32 = xs32.iter().enumerate().map(|(i, v)| {
        let want = black_box(*v).sqrt().to_bits() as u64;
        (format!("{v:e}"), got32[n + i].to_bits() as u64, want)
    });
    let rows64 = xs64.iter().enumerate().map(|(i, v)| {
        let want = black_box(*v).sqrt().to_bits();
        (format!("{v:e}"), got64[n + i].to_bits(), want)
    });
    for (v, got, want) in rows32.chain(rows64) {
        assert_eq!(got, want, "sqrt({v}): got bits {got:#x}, want {want:#x}");
    }
}

/// Integer constants converted to floats are hidden from a driver that folds float arithmetic
/// (difftest/FINDINGS.md K2: `1i64 as f32 + (0u32 as f32) * inf` gave 1 on lavapipe, Rust
/// NaN; `(p ^ p) as f64 + (-0.0)` gave `-0.0`, Rust `+0.0`).
#[test]
fn converted_integer_constants_are_not_folded() {
    let k = kernel_of(
        "fn k2(p: u32, x: &[f32], xd: &[f64], o: &mut [f32], od: &mut [f64]) {
            let i = global_id_x();
            let z: f32 = 0u32 as f32;
            o[i * 4usize] = (1i64 as f32) + z * x[i];
            o[i * 4usize + 1usize] = (0i32 as f32) * x[i];
            o[i * 4usize + 2usize] = x[i] - ((p - p) as f32);
            o[i * 4usize + 3usize] = ((p & 0u32) as f32) / x[i];
            od[i * 2usize] = ((p ^ p) as f64) + xd[i];
            od[i * 2usize + 1usize] = (0u64 as f64) * xd[i];
        }",
    );
    let x = [f32::INFINITY, -4.75, -0.0, f32::NAN, f32::NEG_INFINITY, 0.0];
    let xd: Vec<f64> = x.iter().map(|v| *v as f64).collect();
    let n = x.len();
    let Some(out) = launch_with(
        &k,
        lavapipe_caps(),
        [n as u32, 1, 1],
        [1, 1, 1],
        &[Arg::U32(7)],
        vec![
            bytes_of(&x),
            bytes_of(&xd),
            vec![0; n * 16],
            vec![0; n * 16],
        ],
    ) else {
        return;
    };
    let p = black_box(7u32);
    let mut want = Vec::new();
    let mut wantd = Vec::new();
    for v in x {
        let z = black_box(0u32) as f32;
        want.extend([
            (black_box(1i64) as f32) + z * v,
            (black_box(0i32) as f32) * v,
            v - (p.wrapping_sub(black_box(p)) as f32),
            ((p & black_box(0)) as f32) / v,
        ]);
        let vd = v as f64;
        wantd.extend([
            ((p ^ black_box(p)) as f64) + vd,
            (black_box(0u64) as f64) * vd,
        ]);
    }
    assert_bits_f32(&from_bytes::<f32>(&out[2]), &want, "f32");
    let got = from_bytes::<f64>(&out[3]);
    for (i, (g, w)) in got.iter().zip(&wantd).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "f64[{i}] (x = {}): got {g:?}, want {w:?}",
            xd[i / 2]
        );
    }
}
