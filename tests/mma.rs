//! The warp-level matrix multiply-accumulate (`mma_sync_m16n8k16_f16` / `_bf16`, issue 14's first
//! slice) on every device: one 16×8×16 tile with `A` staged through shared memory (its fragment
//! read in the kernel), and tiled GEMMs (32×16×48 and 48×24×32) whose fragments `spoc::matrix`'s
//! `#[device]` helpers load from global memory in the PTX ISA's layout
//! (`spoc::intrinsics::mma_sync_m16n8k16_f16` documents it).
//!
//! The reference is the `f32` loop `acc = c; for k in 0..K { acc += a[m][k] * b[k][n] }` over the
//! 16-bit inputs widened to `f32`: Native and the Interpreter must match it bit for bit (their
//! emulation adds the exact products in that order); a GPU's tensor cores sum in an order and
//! with an intermediate rounding the PTX ISA does not specify, so GPUs are compared within
//! `(K + 1) · ε · (|c| + Σ|a·b|)`. Devices that do not lower the operation (OpenCL, Vulkan, a CUDA
//! device below compute capability 8.0) refuse it with `FeatureNotSupported`: printed, skipped.
//!
//! The sanitizer part: an `mma` reached by only some lanes of a warp is reported by the
//! Interpreter (and by Native, whose scheduler is the same) at the call's line.

mod common;

use spoc::prelude::*;
use spoc_testkit::devices::{check_each_device, label, DeviceCheck};

/// One 16×8×16 tile, `A` (row-major) staged through shared memory and read back in the
/// fragment layout; `d = a × b + c`.
#[kernel]
fn tile_f16(a: &[f16], bt: &[f16], c: &[f32], d: &mut [f32]) {
    let sa = shared_array::<f16, 256>();
    let lane = lane_id();
    for i in 0..8 {
        sa[lane * 8 + i] = a[lane * 8 + i];
    }
    sync_threads();
    let g = lane / 4;
    let t = lane % 4;
    let frag_a = U32x4::new(
        pack_f16x2(sa[g * 16 + 2 * t], sa[g * 16 + 2 * t + 1]),
        pack_f16x2(sa[(g + 8) * 16 + 2 * t], sa[(g + 8) * 16 + 2 * t + 1]),
        pack_f16x2(sa[g * 16 + 2 * t + 8], sa[g * 16 + 2 * t + 9]),
        pack_f16x2(sa[(g + 8) * 16 + 2 * t + 8], sa[(g + 8) * 16 + 2 * t + 9]),
    );
    let acc = mma_sync_m16n8k16_f16(
        frag_a,
        mma_load_b_f16(bt, 0usize, 0usize, 16usize),
        mma_load_c(c, 0usize, 0usize, 8usize),
    );
    d[g * 8 + 2 * t] = acc.x;
    d[g * 8 + 2 * t + 1] = acc.y;
    d[(g + 8) * 8 + 2 * t] = acc.z;
    d[(g + 8) * 8 + 2 * t + 1] = acc.w;
}

/// `c = a × b + c` for row-major `a` (`m × k`), `b` column by column (`bt`: `n × k`) and
/// row-major `c` (`m × n`), `m` a multiple of 16, `n` of 8, `k` of 16: each warp computes one
/// 16×8 tile of `c`, along `k` in steps of 16.
#[kernel]
fn gemm_f16(m: u32, n: u32, k: u32, a: &[f16], bt: &[f16], c: &mut [f32]) {
    let m = m as usize;
    let n = n as usize;
    let k = k as usize;
    let warp = (block_idx_x() * block_dim_x() + thread_idx_x()) / 32;
    let tiles_n = n / 8;
    if warp < (m / 16) * tiles_n {
        let row0 = (warp / tiles_n) * 16;
        let col0 = (warp % tiles_n) * 8;
        let mut acc = mma_load_c(c, row0, col0, n);
        for k0 in (0..k).step_by(16) {
            acc = mma_sync_m16n8k16_f16(
                mma_load_a_f16(a, row0, k0, k),
                mma_load_b_f16(bt, k0, col0, k),
                acc,
            );
        }
        mma_store_c(c, row0, col0, n, acc);
    }
}

/// [`gemm_f16`] on `bf16` inputs.
#[kernel]
fn gemm_bf16(m: u32, n: u32, k: u32, a: &[bf16], bt: &[bf16], c: &mut [f32]) {
    let m = m as usize;
    let n = n as usize;
    let k = k as usize;
    let warp = (block_idx_x() * block_dim_x() + thread_idx_x()) / 32;
    let tiles_n = n / 8;
    if warp < (m / 16) * tiles_n {
        let row0 = (warp / tiles_n) * 16;
        let col0 = (warp % tiles_n) * 8;
        let mut acc = mma_load_c(c, row0, col0, n);
        for k0 in (0..k).step_by(16) {
            acc = mma_sync_m16n8k16_bf16(
                mma_load_a_bf16(a, row0, k0, k),
                mma_load_b_bf16(bt, k0, col0, k),
                acc,
            );
        }
        mma_store_c(c, row0, col0, n, acc);
    }
}

/// Only the lanes below 16 reach the `mma`: the sanitizer's case.
#[kernel]
fn divergent_mma(a: &[f16], bt: &[f16], d: &mut [f32]) {
    let lane = lane_id();
    if lane < 16 {
        // the divergent mma
        let acc = mma_sync_m16n8k16_f16(
            mma_load_a_f16(a, 0usize, 0usize, 16usize),
            mma_load_b_f16(bt, 0usize, 0usize, 16usize),
            F32x4::splat(0.0),
        );
        d[lane] = acc.x;
    }
}

/// Pseudo-random values in about `[-2, 2)` with few significant bits, and a few exact zeros.
fn inputs(seed: u64, len: usize) -> Vec<f32> {
    common::pseudo_random(seed, len)
        .iter()
        .map(|&w| {
            if w % 17 == 0 {
                0.0
            } else {
                ((w >> 8) % 4096) as f32 / 1024.0 - 2.0 + ((w >> 40) % 1000) as f32 * 1e-6
            }
        })
        .collect()
}

/// The reference `c + a × b` over the widened inputs, `k` ascending, and each element's bound
/// `(k + 1) · ε · (|c| + Σ|a·b|)` for GPUs.
fn reference(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    bt: &[f32],
    c: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    let (mut want, mut tol) = (vec![0f32; m * n], vec![0f32; m * n]);
    for i in 0..m {
        for j in 0..n {
            let mut acc = c[i * n + j];
            let mut mag = acc.abs();
            for kk in 0..k {
                let p = a[i * k + kk] * bt[j * k + kk];
                acc += p;
                mag += p.abs();
            }
            want[i * n + j] = acc;
            tol[i * n + j] = (k as f32 + 1.0) * f32::EPSILON * mag;
        }
    }
    (want, tol)
}

fn is_cpu(dev: &Device) -> bool {
    matches!(dev.framework, "Native" | "Interpreter")
}

/// Compares `got` with `want`: bit for bit on the CPU backends, within `tol` elsewhere.
fn compare(
    dev: &Device,
    check: &mut DeviceCheck,
    what: &str,
    got: &[f32],
    want: &[f32],
    tol: &[f32],
) {
    let exact = is_cpu(dev);
    let bad: Vec<String> = (0..want.len())
        .filter(|&i| {
            if exact {
                got[i].to_bits() != want[i].to_bits()
            } else {
                got[i].is_nan() || (got[i] - want[i]).abs() > tol[i]
            }
        })
        .take(4)
        .map(|i| {
            format!(
                "[{i}] got {:?}, want {:?} (bound {:?})",
                got[i], want[i], tol[i]
            )
        })
        .collect();
    if !bad.is_empty() {
        check.wrong(format!("{what}: {}", bad.join(", ")));
    }
}

/// `Ok(true)` after printing why if `r` is a refusal of the operation.
fn refused(dev: &Device, check: &mut DeviceCheck, r: spoc::Result<()>) -> spoc::Result<bool> {
    match r {
        Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
            assert!(
                !is_cpu(dev),
                "{}: the CPU backends must run mma: {feature}",
                label(dev)
            );
            check.skip(format!("mma refused: {feature}"));
            Ok(true)
        }
        r => r.map(|()| false),
    }
}

#[test]
fn one_tile_from_shared_memory() {
    let a32: Vec<f32> = inputs(0x3a, 256)
        .iter()
        .map(|&x| f16::from_f32(x).to_f32())
        .collect();
    let b32: Vec<f32> = inputs(0x3b, 128)
        .iter()
        .map(|&x| f16::from_f32(x).to_f32())
        .collect();
    let c: Vec<f32> = inputs(0x3c, 128);
    let (want, tol) = reference(16, 8, 16, &a32, &b32, &c);
    let a: Vec<f16> = a32.iter().map(|&x| f16::from_f32(x)).collect();
    let bt: Vec<f16> = b32.iter().map(|&x| f16::from_f32(x)).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let (ab, bb, cb) = (dev.upload(&a)?, dev.upload(&bt)?, dev.upload(&c)?);
        let mut d = dev.alloc::<f32>(128)?;
        let r = tile_f16.launch(dev, dims1d(1), dims1d(32), (&ab, &bb, &cb, &mut d));
        if refused(dev, check, r)? {
            return Ok(());
        }
        compare(dev, check, "16x8x16 f16", &d.to_vec()?, &want, &tol);
        Ok(())
    });
}

fn gemm_case(bf16_in: bool, (m, n, k): (usize, usize, usize), seed: u64) {
    let round = |x: f32| {
        if bf16_in {
            bf16::from_f32(x).to_f32()
        } else {
            f16::from_f32(x).to_f32()
        }
    };
    let a32: Vec<f32> = inputs(seed, m * k).into_iter().map(round).collect();
    let b32: Vec<f32> = inputs(seed + 1, n * k).into_iter().map(round).collect();
    let c: Vec<f32> = inputs(seed + 2, m * n);
    let (want, tol) = reference(m, n, k, &a32, &b32, &c);
    let what = format!("{m}x{n}x{k} {}", if bf16_in { "bf16" } else { "f16" });
    // Two warps a block, one 16x8 tile a warp (the last block may have an idle warp).
    let tiles = (m / 16 * (n / 8)) as u32;
    let grid = dims1d(tiles.div_ceil(2));
    let dims = (m as u32, n as u32, k as u32);
    check_each_device(common::devices(), 2, |dev, check| {
        let mut cb = dev.upload(&c)?;
        let r = if bf16_in {
            let a: Vec<bf16> = a32.iter().map(|&x| bf16::from_f32(x)).collect();
            let bt: Vec<bf16> = b32.iter().map(|&x| bf16::from_f32(x)).collect();
            let (ab, bb) = (dev.upload(&a)?, dev.upload(&bt)?);
            gemm_bf16.launch(
                dev,
                grid,
                dims1d(64),
                (dims.0, dims.1, dims.2, &ab, &bb, &mut cb),
            )
        } else {
            let a: Vec<f16> = a32.iter().map(|&x| f16::from_f32(x)).collect();
            let bt: Vec<f16> = b32.iter().map(|&x| f16::from_f32(x)).collect();
            let (ab, bb) = (dev.upload(&a)?, dev.upload(&bt)?);
            gemm_f16.launch(
                dev,
                grid,
                dims1d(64),
                (dims.0, dims.1, dims.2, &ab, &bb, &mut cb),
            )
        };
        if refused(dev, check, r)? {
            return Ok(());
        }
        compare(dev, check, &what, &cb.to_vec()?, &want, &tol);
        Ok(())
    });
}

#[test]
fn tiled_gemm_f16_32x16x48() {
    gemm_case(false, (32, 16, 48), 0x100);
}

#[test]
fn tiled_gemm_bf16_32x16x48() {
    gemm_case(true, (32, 16, 48), 0x200);
}

#[test]
fn tiled_gemm_f16_and_bf16_48x24x32() {
    // 18 tiles: nine blocks of two warps.
    gemm_case(false, (48, 24, 32), 0x300);
    gemm_case(true, (48, 24, 32), 0x400);
}

/// The emulation against the host model of `spoc::mma` (the layout's per-lane coordinates),
/// independently of the helpers above: lane `l` packs the elements the PTX ISA assigns it.
#[test]
fn host_model_agrees_with_the_reference_loop() {
    use spoc::mma::{a_coords, b_coords, c_coords, m16n8k16, MmaLane};
    let a32: Vec<f32> = inputs(0x51, 256)
        .iter()
        .map(|&x| f16::from_f32(x).to_f32())
        .collect();
    let b32: Vec<f32> = inputs(0x52, 128)
        .iter()
        .map(|&x| f16::from_f32(x).to_f32())
        .collect();
    let c: Vec<f32> = inputs(0x53, 128);
    let (want, _) = reference(16, 8, 16, &a32, &b32, &c);
    let bits = |x: f32| f16::from_f32(x).to_bits() as u32;
    let mut lanes = [MmaLane::default(); 32];
    for (l, f) in (0u32..).zip(lanes.iter_mut()) {
        for i in 0..8 {
            let (r, kk) = a_coords(l, i);
            f.a[(i / 2) as usize] |= bits(a32[(r * 16 + kk) as usize]) << (16 * (i % 2));
        }
        for i in 0..4 {
            let (kk, nn) = b_coords(l, i);
            f.b[(i / 2) as usize] |= bits(b32[(nn * 16 + kk) as usize]) << (16 * (i % 2));
            let (r, nn) = c_coords(l, i);
            f.c[i as usize] = c[(r * 8 + nn) as usize];
        }
    }
    let d = m16n8k16(&lanes, false);
    for (l, out) in (0u32..).zip(d.iter()) {
        for i in 0..4 {
            let (r, nn) = c_coords(l, i);
            assert_eq!(
                out[i as usize].to_bits(),
                want[(r * 8 + nn) as usize].to_bits()
            );
        }
    }
}

#[test]
fn mma_in_divergent_code_is_reported() {
    let a = vec![f16::from_f32(1.0); 256];
    let bt = vec![f16::from_f32(1.0); 128];
    for dev in common::checking_devices() {
        let (ab, bb) = (dev.upload(&a).unwrap(), dev.upload(&bt).unwrap());
        let mut d = dev.alloc::<f32>(32).unwrap();
        let err = divergent_mma
            .launch(&dev, dims1d(1), dims1d(32), (&ab, &bb, &mut d))
            .unwrap_err();
        let msg = err.to_string();
        println!("{}: {msg}", label(&dev));
        assert!(matches!(err, spoc::Error::KernelFault { .. }), "{msg}");
        assert!(msg.contains("mma_sync_m16n8k16_f16"), "{msg}");
        assert!(msg.contains("0x0000ffff"), "{msg}");
        if dev.framework == "Interpreter" {
            // The statement of the call, the line after the marker comment.
            let marker = include_str!("mma.rs")
                .lines()
                .position(|l| l.trim() == "// the divergent mma")
                .expect("the marker");
            let at = format!("tests/mma.rs:{}:9", marker + 2);
            assert!(msg.contains(&at), "want {at}: {msg}");
        }
    }
}

#[test]
fn a_partial_last_warp_is_reported() {
    let a = vec![f16::from_f32(1.0); 512];
    let bt = vec![f16::from_f32(1.0); 128];
    for dev in common::checking_devices() {
        let (ab, bb) = (dev.upload(&a).unwrap(), dev.upload(&bt).unwrap());
        let mut c = dev.upload(&vec![0f32; 256]).unwrap();
        // 48 threads: the second warp has 16 lanes, and its tile (the second of 32x8) is there.
        let err = gemm_f16
            .launch(&dev, dims1d(1), dims1d(48), (32, 8, 16, &ab, &bb, &mut c))
            .unwrap_err();
        let msg = err.to_string();
        println!("{}: {msg}", label(&dev));
        assert!(msg.contains("only 16 lanes"), "{msg}");
    }
}

/// The PTX of these kernels (helpers linked, loops, checked loads) assembles with `ptxas` for
/// sm_80 and sm_90, plain and in checked mode; below sm_80 the kernels are refused.
#[test]
fn ptx_of_the_gemm_kernels_assembles() {
    use spoc::codegen::{generate_source_with, Capabilities, Options, Target};
    let kernels = [
        ("tile_f16", tile_f16.ir().unwrap()),
        ("gemm_f16", gemm_f16.ir().unwrap()),
        ("gemm_bf16", gemm_bf16.ir().unwrap()),
    ];
    let ptx = |k, cc, checked| {
        let mut caps = Capabilities::for_target(Target::CudaPtx);
        caps.compute_capability = cc;
        let opts = Options {
            block: None,
            soa_params: &[],
            caps,
            checked,
        };
        generate_source_with(Target::CudaPtx, k, &opts)
            .map(|s| s.expect("PTX").text().expect("text").to_string())
    };
    for (name, k) in &kernels {
        let err = ptx(*k, Some((7, 5)), false).unwrap_err();
        assert!(err.to_string().contains("sm_80 or newer"), "{name}: {err}");
    }
    let Some((ptxas, dir)) =
        spoc_testkit::toolchains::ptxas_and_scratch_dir("the mma kernels' PTX through ptxas")
    else {
        return;
    };
    for (name, k) in &kernels {
        for (cc, arch) in [((8, 0), "sm_80"), ((9, 0), "sm_90")] {
            for checked in [false, true] {
                let text = ptx(*k, Some(cc), checked).unwrap();
                assert!(
                    text.contains("mma.sync.aligned.m16n8k16.row.col.f32"),
                    "{name}"
                );
                let file = format!("{name}_{arch}{}", if checked { "_checked" } else { "" });
                if let Err(diag) =
                    spoc_testkit::toolchains::ptxas_report(&ptxas, &dir, &file, arch, &text)
                {
                    panic!("{file}: ptxas rejected the PTX:\n{diag}\n{text}");
                }
            }
        }
    }
}
