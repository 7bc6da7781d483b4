//! The PTX generator on kernels written with `#[kernel]`: each kernel is lowered by the macro,
//! generated as PTX and assembled by `ptxas -arch=sm_90` (skipped with a message when `ptxas`
//! is missing, a failure with `SPOC_REQUIRE_TOOLCHAINS=1`; `spoc-codegen/tests/support/
//! fetch-ptxas.sh` installs it). `dump_for_device` (ignored) writes the PTX for
//! `spoc-codegen/tests/ptx_device/run_on_gpu.py`, which runs it on a GPU.

/// Kernels and helpers shared with the other generator tests (only `named_irs!` and
/// `source_text` are used here).
#[allow(dead_code)]
mod codegen_kernels;
/// The root kernel corpus (only some of its kernels are used here).
#[allow(dead_code)]
mod corpus;

use corpus::{matmul, saxpy};
use spoc::prelude::*;
use spoc_codegen::{Capabilities, Target};
use spoc_testkit::toolchains::{assert_no_stack, ptxas_and_scratch_dir, ptxas_report};
use std::path::PathBuf;
use std::process::Command;

#[kernel]
fn mandel(out: &mut [u32], width: usize, height: usize, max_iter: u32) {
    let px = global_id_x();
    let py = global_id_y();
    if px >= width || py >= height {
        return;
    }
    let cx = px as f32 / width as f32 * 3.0 - 2.0;
    let cy = py as f32 / height as f32 * 2.0 - 1.0;
    let mut zx = 0.0f32;
    let mut zy = 0.0f32;
    let mut n = 0u32;
    while n < max_iter {
        let t = zx * zx - zy * zy + cx;
        zy = 2.0 * zx * zy + cy;
        zx = t;
        if zx * zx + zy * zy > 4.0 {
            break;
        }
        n += 1;
    }
    out[py * width + px] = n;
}

#[kernel]
fn steps(start: &[u64], count: &mut [u32], odd: &mut [u64]) {
    let i = global_id_x();
    if i >= start.len() {
        return;
    }
    let mut v = start[i];
    let mut c = 0u32;
    let mut o = 0u64;
    loop {
        if v <= 1 {
            break;
        }
        c += 1;
        if v % 2 == 0 {
            v /= 2;
            continue;
        }
        o = o.wrapping_add(v);
        v = 3 * v + 1;
    }
    count[i] = c;
    odd[i] = o;
}

#[device]
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

#[device]
#[allow(clippy::assign_op_pattern)] // the kernel language's `+=` is tested elsewhere
fn bump(dst: &mut [f32], i: usize, v: f32) {
    if i < dst.len() {
        dst[i] = dst[i] + v;
    }
}

#[kernel]
fn blend(x: &[f32], y: &mut [f32], t: f32) {
    let i = global_id_x();
    if i < y.len() {
        let v: f32 = lerp(x[i], y[i], t);
        bump(y, i, v);
    }
}

#[kernel]
fn mixed(flag: bool, x: &[f32], d: &[f64], out: &mut [f32], outd: &mut [f64], ints: &mut [i64]) {
    let i = global_id_x();
    if i >= out.len() {
        return;
    }
    let v = x[i];
    let w = if flag && v > 0.5 {
        let t = v * 2.0;
        t.sqrt() + t.ln()
    } else if v < -0.5 {
        (-v).exp() + v.sin()
    } else {
        v.round() + v.atan2(0.25)
    };
    out[i] = w + v.mul_add(2.0, 1.0) + v.max(0.5).min(3.0) + v.abs().floor() + v.tanh();
    outd[i] = d[i].cos() * d[i].powf(1.5) + (v as f64).powi(3) + d[i].hypot(2.0);
    ints[i] = (v * 1.0e10) as i64 + (d[i] as i32) as i64 + ((v as u32) >> (i % 40)) as i64;
}

/// Integer widening the way Rust does it: by the source's signedness.
#[kernel]
fn widen(u: &[u32], i: &[i32], a: &mut [i64], b: &mut [u64]) {
    let k = global_id_x();
    if k < a.len() {
        a[k] = (u[k] as usize) as i64;
        b[k] = i[k] as u64;
    }
}

/// `u32 as i64` zero-extends and `i32 as u64` sign-extends: the `cvt` carries the source's
/// signedness on both sides (`cvt.s64.u32` sign-extended on the H200: a difftest finding).
#[test]
fn widening_casts_extend_by_the_source_signedness() {
    let text = ptx(widen.ir().unwrap(), None);
    assert!(text.contains("cvt.u64.u32"), "{text}");
    assert!(text.contains("cvt.s64.s32"), "{text}");
    assert!(
        !text.contains("cvt.s64.u32") && !text.contains("cvt.u64.s32"),
        "{text}"
    );
}

type Ir = (&'static str, &'static spoc::ir::Kernel);

fn kernels() -> Vec<Ir> {
    codegen_kernels::named_irs![saxpy, matmul, mandel, steps, blend, mixed]
}

fn ptx(k: &spoc::ir::Kernel, cc: Option<(u32, u32)>) -> String {
    let mut caps = Capabilities::for_target(Target::CudaPtx);
    caps.compute_capability = cc;
    codegen_kernels::source_text(Target::CudaPtx, k, caps)
}

#[test]
fn macro_kernels_assemble_with_ptxas() {
    let Some((ptxas, dir)) = ptxas_and_scratch_dir("macro kernels' PTX through ptxas") else {
        return;
    };
    let mut failures = Vec::new();
    for (name, k) in kernels() {
        for (cc, arch) in [
            (Some((9, 0)), "sm_90"),
            (Some((8, 0)), "sm_80"),
            (None, "sm_70"),
        ] {
            let src = dir.join(format!("{name}_{arch}.ptx"));
            std::fs::write(&src, ptx(k, cc)).unwrap();
            let out = Command::new(&ptxas)
                .arg(format!("-arch={arch}"))
                .arg(&src)
                .arg("-o")
                .arg(dir.join(format!("{name}_{arch}.cubin")))
                .output()
                .expect("ptxas runs");
            if !out.status.success() {
                failures.push(format!(
                    "{name} ({arch}): {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "ptxas rejected:\n{}",
        failures.join("\n")
    );
}

#[test]
fn saxpy_reads_like_the_source() {
    let p = ptx(saxpy.ir().unwrap(), Some((9, 0)));
    assert!(p.contains(".target sm_90"));
    assert!(p.contains(".visible .entry saxpy(\n\t.param .f32 a,\n\t.param .u64 x_ptr,\n"));
    assert!(p.contains("mad.lo.u32"), "{p}");
    assert!(p.contains("ld.global.nc.f32"));
    // a * x[i] + y[i]: a multiply and an add, never fused
    assert!(p.contains("mul.rn.f32") && p.contains("add.rn.f32") && !p.contains("fma"));
    // the source text is in the comments
    assert!(p.contains("y[i] = ((a * x[i]) + y[i]);"), "{p}");
}

#[test]
fn helpers_are_inlined_with_their_names() {
    let p = ptx(blend.ir().unwrap(), None);
    assert!(
        !p.contains("\tcall ") && !p.contains(".func"),
        "helpers are inlined: {p}"
    );
    assert!(p.contains("inlined call of helper `lerp`"));
    assert!(p.contains("inlined call of helper `bump`"));
    assert!(p.contains("%f_lerp1_t"), "{p}");
}

#[test]
#[ignore]
fn dump_for_device() {
    let dir = std::env::var("SPOC_PTX_DUMP").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/spoc-codegen/tests/ptx_device/out"
        )
        .to_string()
    });
    std::fs::create_dir_all(&dir).unwrap();
    for (name, k) in kernels() {
        let path = PathBuf::from(&dir).join(format!("macro_{name}.ptx"));
        std::fs::write(path, ptx(k, None)).unwrap();
    }
}

/// A register-tiled product: `TM x TN` accumulators in a local array, indexed only by unrolled
/// loop variables (`unroll(…)`, const parameters).
#[kernel(instances((4, 4, 8), (8, 8, 8)))]
fn register_tile<const TM: usize, const TN: usize, const K: usize>(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) {
    let t = global_id_x();
    let mut acc = [0.0f32; TM * TN];
    let mut ra = [0.0f32; TM];
    let mut rb = [0.0f32; TN];
    for k in unroll(0..K) {
        for m in unroll(0..TM) {
            ra[m] = a[(t * TM + m) * K + k];
        }
        for n in unroll(0..TN) {
            rb[n] = b[k * TN + n];
        }
        for m in unroll(0..TM) {
            for n in unroll(0..TN) {
                acc[m * TN + n] = ra[m].mul_add(rb[n], acc[m * TN + n]);
            }
        }
    }
    for i in unroll(0..TM * TN) {
        c[t * TM * TN + i] = acc[i];
    }
}

/// `ptxas -v` on an unrolled register tile: the local arrays live in registers (0 bytes of
/// stack frame, no spills), for a 4x4 and an 8x8 tile.
#[test]
fn unrolled_register_tiles_need_no_stack() {
    let Some((ptxas, dir)) = ptxas_and_scratch_dir("register tiles through ptxas -v") else {
        return;
    };
    for (name, k) in [
        ("tile4", register_tile::<4, 4, 8>.ir().unwrap()),
        ("tile8", register_tile::<8, 8, 8>.ir().unwrap()),
    ] {
        let log = ptxas_report(&ptxas, &dir, name, "sm_90", &ptx(k, Some((9, 0))))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_no_stack(name, &log);
    }
}
