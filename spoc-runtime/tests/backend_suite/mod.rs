//! The tests every GPU-style backend passes alike, written once: `opencl.rs` and `vulkan.rs`
//! (the binaries of those backends) each instantiate them with
//! `spoc_testkit::backend_tests!`, as `opencl::memory_round_trips`,
//! `vulkan::memory_round_trips`, …, on every device of the backend. What only one backend
//! has (its source language, its limits, its properties) stays in its own file.

use crate::support::{IOTA, SAXPY};
use spoc_runtime::backend::SourceLang;
use spoc_runtime::{
    compile_kernel, dims1d, dims2d, dims3d, run, run_kernel, set_args, Arg, Buffer, Device,
    DimKind, Dims, Error, LaunchProblem,
};

/// Typed and raw transfers, zeroed allocations, empty buffers, device-to-device copies,
/// transfers at offsets through the backend, more than one staging buffer's worth (16 MiB on
/// a discrete Vulkan GPU), and out-of-range transfers as errors.
pub fn memory_round_trips(dev: &Device, _reference: &Device) {
    // Typed uploads and downloads of several element types.
    let f: Vec<f32> = (0..1001).map(|i| i as f32 / 3.0).collect();
    assert_eq!(dev.upload(&f).unwrap().to_vec().unwrap(), f);
    let l: Vec<i64> = (0..77).map(|i| i64::MIN / 3 + i * 1_000_000_007).collect();
    assert_eq!(dev.upload(&l).unwrap().to_vec().unwrap(), l);
    let b: Vec<u8> = (0..=255).collect();
    assert_eq!(dev.upload(&b).unwrap().to_vec().unwrap(), b);
    // Allocations are zeroed, whatever the device; empty buffers work.
    assert_eq!(
        dev.alloc::<i32>(333).unwrap().to_vec().unwrap(),
        vec![0; 333]
    );
    let z = dev.alloc::<u32>(1000).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|&v| v == 0));
    let empty: Buffer<f64> = dev.alloc(0).unwrap();
    assert_eq!(empty.to_vec().unwrap(), Vec::<f64>::new());
    let e = dev.upload::<f32>(&[]).unwrap();
    assert!(e.to_vec().unwrap().is_empty());
    // Uploads into an existing buffer.
    let data: Vec<i64> = (0..10_000).map(|i| i * i - 7_000_000).collect();
    let mut big_i = dev.upload(&data).unwrap();
    assert_eq!(big_i.to_vec().unwrap(), data);
    let other: Vec<i64> = data.iter().map(|v| v ^ 0x5555).collect();
    big_i.upload_from(&other).unwrap();
    assert_eq!(big_i.to_vec().unwrap(), other);
    // Device to device.
    let src = dev.upload(&l).unwrap();
    let mut dst: Buffer<i64> = dev.alloc(l.len()).unwrap();
    dst.copy_from(&src).unwrap();
    assert_eq!(dst.to_vec().unwrap(), l);
    let mut c = dev.alloc::<i64>(10_000).unwrap();
    c.copy_from(&big_i).unwrap();
    assert_eq!(c.to_vec().unwrap(), other);
    // Raw-pointer transfers.
    let mut raw: Buffer<f32> = dev.alloc(f.len()).unwrap();
    let mut back = vec![0f32; f.len()];
    // SAFETY: both vectors hold `f.len()` elements for the duration of the calls.
    unsafe {
        raw.upload_from_ptr(f.as_ptr(), f.len()).unwrap();
        raw.download_to_ptr(back.as_mut_ptr(), f.len()).unwrap();
    }
    assert_eq!(back, f);
    // Offsets, through the backend.
    let backend = dev.backend();
    let buf = dev.upload(&[1u8, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    backend.copy_h2d(buf.raw().mem(), 3, &[30, 40]).unwrap();
    let mut mid = [0u8; 4];
    backend.copy_d2h(buf.raw().mem(), 2, &mut mid).unwrap();
    assert_eq!(mid, [3, 30, 40, 6]);
    let r = big_i.raw();
    backend.copy_h2d(r.mem(), 8, &[1, 2, 3, 4, 5]).unwrap();
    let mut got = [0u8; 16];
    backend.copy_d2h(r.mem(), 0, &mut got).unwrap();
    let mut want = other[0].to_le_bytes().to_vec();
    want.extend([1, 2, 3, 4, 5]);
    want.extend(&other[1].to_le_bytes()[5..]);
    assert_eq!(got.to_vec(), want);
    // Out-of-range transfers are errors, not crashes.
    for e in [
        backend.copy_h2d(buf.raw().mem(), 7, &[1, 2]).unwrap_err(),
        backend
            .copy_d2h(buf.raw().mem(), 0, &mut [0u8; 9])
            .unwrap_err(),
        backend
            .copy_d2h(r.mem(), r.size_bytes() - 4, &mut got)
            .unwrap_err(),
        backend
            .copy_d2d(
                buf.raw().mem(),
                dev.upload(&[0u8; 4]).unwrap().raw().mem(),
                8,
            )
            .unwrap_err(),
    ] {
        assert!(matches!(e, Error::Memory { .. }), "{e}");
    }
    // More than one staging buffer's worth.
    let big: Vec<u32> = (0..(40 << 20) / 4)
        .map(|i: u32| i.wrapping_mul(2_654_435_761))
        .collect();
    let bb = dev.upload(&big).unwrap();
    assert!(bb.to_vec().unwrap() == big, "40 MiB round trip");
}

/// The support kernels through the generic launch path match the Interpreter and plain Rust
/// (saxpy uncontracted), and a kernel compiled once without a block runs with several
/// blocks, 1-D and 2-D (Vulkan regenerates its pipeline for each).
pub fn generated_kernels_match_the_interpreter(dev: &Device, interp: &Device) {
    let n = 777usize;
    let x: Vec<f32> = (0..n).map(|i| (i as f32).sin() * 100.0).collect();
    let y0: Vec<f32> = (0..n).map(|i| i as f32 * 0.001).collect();
    let mut results = Vec::new();
    for d in [dev, interp] {
        let xb = d.upload(&x).unwrap();
        let mut yb = d.upload(&y0).unwrap();
        run(
            d,
            &SAXPY,
            vec![Arg::F32(0.75), (&xb).into(), (&mut yb).into()],
            dims1d(7),
            dims1d(128),
            0,
        )
        .unwrap();
        let mut ib = d.alloc::<u32>(1000).unwrap();
        run(
            d,
            &IOTA,
            vec![5u32.into(), (&mut ib).into()],
            dims1d(8),
            dims1d(128),
            0,
        )
        .unwrap();
        results.push((yb.to_vec().unwrap(), ib.to_vec().unwrap()));
    }
    assert_eq!(results[0], results[1], "{dev} against the Interpreter");
    let rust: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| 0.75 * x + y).collect();
    assert_eq!(results[0].0, rust);
    assert_eq!(results[0].1[999], 1004);

    // compile_kernel compiles without a block; launching with one specialises for it.
    let ck = compile_kernel(dev, &IOTA).unwrap();
    let mut out = dev.alloc::<u32>(300).unwrap();
    for block in [dims1d(32), dims2d(8, 2), dims1d(32)] {
        let mut args = set_args(dev, vec![Arg::U32(7), (&mut out).into()]).unwrap();
        run_kernel(&ck, &mut args, dims1d(20), block, 0).unwrap();
        let got = out.to_vec().unwrap();
        // global_id_x is block.x * group + x: a 2-D block covers block.x ids per group.
        let covered = 20 * block.x as usize;
        for (i, v) in got.iter().enumerate().take(covered.min(300)) {
            assert_eq!(*v, 7 + i as u32, "block {block:?} index {i}");
        }
    }
}

/// Launches beyond the device's limits are typed errors and run nothing: a block too wide,
/// too many threads in a block, a grid too tall, too much shared memory; and `run_source`
/// refuses a language the backend does not take.
pub fn launch_limits_are_errors(dev: &Device, _reference: &Device) {
    let caps = dev.capabilities;
    let mut out = dev.alloc::<u32>(16).unwrap();
    let mut launch = |grid: Dims, block: Dims, shared: usize| {
        run(
            dev,
            &IOTA,
            vec![Arg::U32(0), (&mut out).into()],
            grid,
            block,
            shared,
        )
        .unwrap_err()
    };
    let e = launch(dims1d(1), dims1d(caps.max_block_dims[0] + 1), 0);
    spoc_testkit::assert_matches!(
        e,
        Error::InvalidLaunch {
            problem: LaunchProblem::DimTooLarge {
                what: DimKind::Block,
                axis: 'x',
                ..
            },
            ..
        }
    );
    // Over the per-block total: within every axis, and as a wide 2-row block.
    let side = (caps.max_threads_per_block as f64).cbrt().ceil() as u32 + 1;
    let cube = Dims {
        x: side.min(caps.max_block_dims[0]),
        y: side.min(caps.max_block_dims[1]),
        z: side.min(caps.max_block_dims[2]),
    };
    let too_many = caps.max_threads_per_block + 1;
    for block in [cube, dims3d(too_many.min(caps.max_block_dims[0]), 2, 1)] {
        if block.count() <= caps.max_threads_per_block as u64 {
            continue;
        }
        let e = launch(dims1d(1), block, 0);
        assert!(
            matches!(
                &e,
                Error::InvalidLaunch {
                    problem: LaunchProblem::TooManyThreads { .. }
                        | LaunchProblem::DimTooLarge { .. },
                    ..
                }
            ),
            "block {block:?}: {e}"
        );
    }
    if caps.max_grid_dims[1] < u32::MAX {
        let e = launch(dims2d(1, caps.max_grid_dims[1] + 1), dims1d(1), 0);
        spoc_testkit::assert_matches!(
            e,
            Error::InvalidLaunch {
                problem: LaunchProblem::DimTooLarge {
                    what: DimKind::Grid,
                    axis: 'y',
                    ..
                },
                ..
            }
        );
    }
    // Shared memory beyond the device's.
    let e = launch(dims1d(1), dims1d(16), caps.shared_mem_per_block + 1);
    spoc_testkit::assert_matches!(
        e,
        Error::InvalidLaunch {
            problem: LaunchProblem::SharedMemory { .. },
            ..
        }
    );
    // Nothing ran.
    assert!(out.to_vec().unwrap().iter().all(|&v| v == 0));
    // A language the backend does not take is refused.
    let e = dev
        .backend()
        .run_source(
            dev.backend_id,
            "",
            SourceLang::Ptx,
            "k",
            dims1d(1),
            dims1d(1),
            0,
            &[],
        )
        .unwrap_err();
    assert!(matches!(e, Error::FeatureNotSupported { .. }), "{e}");
}
