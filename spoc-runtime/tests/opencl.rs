//! The OpenCL backend on whatever OpenCL platform the machine has (PoCL here and in CI).
//!
//! Without OpenCL every test prints why and passes, unless `SPOC_REQUIRE_BACKENDS` names
//! `opencl` (comma-separated, case-insensitive; CI sets it): then a missing backend fails.
#![cfg(feature = "opencl")]

mod backend_suite;
mod support;

use backend_suite::*;

spoc_testkit::backend_tests! {
    backends { opencl: "OpenCL" }
    tests {
        memory_round_trips,
        generated_kernels_match_the_interpreter,
        launch_limits_are_errors,
    }
}

use spoc_runtime::backend::{Code, SourceLang};
use spoc_runtime::opencl::OpenClBackend;
use spoc_runtime::{
    all_devices, compile_kernel, dims1d, dims3d, init_device, run, Arg, Device, Error,
    LaunchConfig, LaunchProblem,
};
use spoc_testkit::devices::best_device_or_skip;
use std::sync::Arc;
use support::{run_source, saxpy_args, BALLOTS, DYN_REVERSE, SAXPY, TAKES_I64, WITH_BARRIER};

/// The first OpenCL device, or `None` (printed) when OpenCL is unavailable.
///
/// # Panics
/// If OpenCL is unavailable and `SPOC_REQUIRE_BACKENDS` names it.
fn opencl(test: &str) -> Option<Device> {
    best_device_or_skip("OpenCL", test, |e| {
        let why = OpenClBackend::new().unavailable_reason();
        why.unwrap_or_else(|| e.to_string())
    })
}

const SAXPY_CL: &str = r#"
#pragma OPENCL FP_CONTRACT OFF
__kernel void ext_saxpy(float a, __global const float* x, uint x_len, __global float* y,
                        uint y_len) {
    size_t i = get_global_id(0);
    if (i < y_len) {
        y[i] = a * x[i] + y[i];
    }
}
"#;

fn saxpy_want(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| a * x + y).collect()
}

#[test]
fn device_is_described_and_ranked() {
    let Some(dev) = opencl("device_is_described_and_ranked") else {
        return;
    };
    for d in all_devices(Some("OpenCL")).unwrap() {
        let caps = d.capabilities;
        let platform = OpenClBackend::new().platform_name(d.backend_id).unwrap();
        println!("OpenCL device: {d} on {platform}: {caps:?}");
        assert_eq!(d.framework, "OpenCL");
        assert!(caps.max_threads_per_block >= 1);
        assert!(caps.max_block_dims.iter().all(|&b| b >= 1));
        assert!(caps.shared_mem_per_block > 0);
        assert!(caps.compute_units >= 1);
        assert!(!(caps.is_cpu && caps.is_gpu));
    }
    let caps = dev.capabilities;
    let backend = dev.backend();
    assert!(backend.is_available());
    assert!(backend.version().0 >= 1, "{:?}", backend.version());
    assert_eq!(backend.supported_source_langs(), &[SourceLang::OpenClC]);
    // A CPU OpenCL device (PoCL) ranks below Native.
    if caps.is_cpu {
        let best = init_device(None).unwrap();
        assert_ne!(best.framework, "OpenCL", "best device {best}");
        let all = all_devices(None).unwrap();
        let native = all.iter().position(|d| d.framework == "Native").unwrap();
        let cl = all.iter().position(|d| d.framework == "OpenCL").unwrap();
        assert!(native < cl, "{all:?}");
    }
}

#[test]
fn saxpy_through_run_source() {
    let Some(dev) = opencl("saxpy_through_run_source") else {
        return;
    };
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 50.0).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 17) as f32 / 7.0).collect();
    let xb = dev.upload(&x).unwrap();
    let mut yb = dev.upload(&y0).unwrap();
    for round in 0..2 {
        // The second round builds nothing (cached) and applies saxpy to the first's output.
        run_source(
            &dev,
            (SAXPY_CL, SourceLang::OpenClC, "ext_saxpy"),
            dims1d(16),
            dims1d(64),
            &saxpy_args(1.5, &xb, &mut yb),
        )
        .unwrap();
        let mut want = y0.clone();
        for _ in 0..=round {
            want = saxpy_want(1.5, &x, &want);
        }
        assert_eq!(yb.to_vec().unwrap(), want, "round {round}");
    }
    // A usize argument is a `uint`; one that does not fit is refused before anything runs.
    const FILL: &str = "__kernel void fill(__global uint* out, uint out_len, uint v) {
        if (get_global_id(0) < out_len) out[get_global_id(0)] = v;
    }";
    let mut out = dev.alloc::<u32>(10).unwrap();
    for (v, ok) in [(7usize, true), (1usize << 33, false)] {
        let r = run_source(
            &dev,
            (FILL, SourceLang::OpenClC, "fill"),
            dims1d(1),
            dims1d(16),
            &[Arg::BufferMut(out.raw_mut()), Arg::Usize(v)],
        );
        match (r, ok) {
            (Ok(()), true) => {}
            (
                Err(Error::InvalidLaunch {
                    problem: LaunchProblem::Rejected { .. },
                    ..
                }),
                false,
            ) => {}
            (r, _) => panic!("usize {v}: {r:?}"),
        }
    }
    assert_eq!(out.to_vec().unwrap(), vec![7; 10]);
}

#[test]
fn run_source_with_local_memory_reverses_blocks() {
    let Some(dev) = opencl("run_source_with_local_memory_reverses_blocks") else {
        return;
    };
    const SRC: &str = r#"
__kernel void rev(__global const int* in, uint in_len, __global int* out, uint out_len,
                  __local int* tmp) {
    size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    tmp[l] = in[g * n + l];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g * n + l] = tmp[n - 1 - l];
}
"#;
    let input: Vec<i32> = (0..256).map(|i| i * 3 - 100).collect();
    let ib = dev.upload(&input).unwrap();
    let mut ob = dev.alloc::<i32>(256).unwrap();
    dev.backend()
        .run_source(
            dev.backend_id,
            SRC,
            SourceLang::OpenClC,
            "rev",
            dims1d(4),
            dims1d(64),
            64 * 4,
            &[Arg::Buffer(ib.raw()), Arg::BufferMut(ob.raw_mut())],
        )
        .unwrap();
    let want: Vec<i32> = input
        .chunks(64)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    assert_eq!(ob.to_vec().unwrap(), want);
}

#[test]
fn build_error_carries_the_log() {
    let Some(dev) = opencl("build_error_carries_the_log") else {
        return;
    };
    let src = "__kernel void broken(__global int* p) { p[0] = undeclared_thing + 1; }";
    let e = run_source(
        &dev,
        (src, SourceLang::OpenClC, "broken"),
        dims1d(1),
        dims1d(1),
        &[],
    )
    .unwrap_err();
    match &e {
        Error::Compile {
            backend,
            kernel,
            message,
        } => {
            assert_eq!(backend, "OpenCL");
            assert_eq!(kernel, "broken");
            assert!(message.contains("build log"), "{message}");
            assert!(message.contains("undeclared_thing"), "{message}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    // A kernel name the program lacks.
    let e = run_source(
        &dev,
        (SAXPY_CL, SourceLang::OpenClC, "not_there"),
        dims1d(1),
        dims1d(1),
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Compile { message, .. } if message.contains("ext_saxpy")),
        "{e}"
    );
}

#[test]
fn oversized_allocation_names_the_limit() {
    let Some(dev) = opencl("oversized_allocation_names_the_limit") else {
        return;
    };
    let backend = OpenClBackend::new();
    let max = backend.max_alloc_bytes(dev.backend_id).unwrap();
    println!("CL_DEVICE_MAX_MEM_ALLOC_SIZE = {max}");
    let Ok(too_big) = usize::try_from(max + 1) else {
        return;
    };
    let e = dev.backend().alloc(dev.backend_id, too_big).unwrap_err();
    match e {
        Error::Memory { backend, message } => {
            assert_eq!(backend, "OpenCL");
            assert!(
                message.contains("CL_DEVICE_MAX_MEM_ALLOC_SIZE"),
                "{message}"
            );
            assert!(message.contains(&max.to_string()), "{message}");
        }
        other => panic!("expected a memory error, got {other:?}"),
    }
}

/// What only OpenCL shows of the generated kernels (the shared half is
/// `backend_suite::generated_kernels_match_the_interpreter`).
#[test]
fn generated_kernels_are_opencl_c() {
    let Some(dev) = opencl("generated_kernels_are_opencl_c") else {
        return;
    };
    // The barrier kernel has no native code but runs on OpenCL.
    let k = compile_kernel(&dev, &WITH_BARRIER).unwrap();
    assert!(k.module().is_some());
    // Compiling again hits the memo.
    assert!(Arc::ptr_eq(
        &k,
        &compile_kernel(&dev, &WITH_BARRIER).unwrap()
    ));
    // The generated source is OpenCL C.
    let src = dev
        .backend()
        .generate_source(SAXPY.valid().unwrap(), None, &[])
        .unwrap()
        .unwrap();
    assert!(
        matches!(&src.code, Code::Text(t) if t.contains("__kernel") && t.contains("FP_CONTRACT OFF")),
        "{src:?}"
    );
    // i64 scalars by value.
    let xs = dev.upload(&[1i64, 2, 3]).unwrap();
    run(
        &dev,
        &TAKES_I64,
        vec![(-5i64).into(), (&xs).into()],
        dims1d(1),
        dims1d(1),
        0,
    )
    .unwrap();
}

/// Launches through `run_source` are checked too (the limits every launch path checks are
/// `backend_suite::launch_limits_are_errors`).
#[test]
fn run_source_launch_checks() {
    let Some(dev) = opencl("run_source_launch_checks") else {
        return;
    };
    // run_source checks too.
    let e = run_source(
        &dev,
        (SAXPY_CL, SourceLang::OpenClC, "ext_saxpy"),
        dims3d(1, 0, 1),
        dims1d(1),
        &[],
    )
    .unwrap_err();
    spoc_testkit::assert_matches!(
        e,
        Error::InvalidLaunch {
            problem: LaunchProblem::ZeroDim { .. },
            ..
        }
    );
    // A wrong argument list for an external kernel is refused by OpenCL, as an error.
    let e = run_source(
        &dev,
        (SAXPY_CL, SourceLang::OpenClC, "ext_saxpy"),
        dims1d(1),
        dims1d(1),
        &[Arg::F64(1.0)],
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::InvalidLaunch { .. } | Error::Driver { .. }),
        "{e}"
    );
}

#[test]
fn events_and_streams() {
    let Some(dev) = opencl("events_and_streams") else {
        return;
    };
    let backend = dev.backend();
    let local = dev.backend_id;
    let start = backend.create_event(local).unwrap();
    let end = backend.create_event(local).unwrap();
    // Elapsed time of an event never recorded is an error.
    assert!(backend.event_elapsed_ms(&start, &end).is_err());

    let n = 1 << 16;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y0 = vec![1.0f32; n];
    let xb = dev.upload(&x).unwrap();
    let mut yb = dev.upload(&y0).unwrap();
    let k = compile_kernel(&dev, &SAXPY).unwrap();
    let module = k.module().unwrap();
    let stream = backend.create_stream(local).unwrap();
    backend.record_event(&start, Some(&stream)).unwrap();
    backend
        .launch(
            module,
            &LaunchConfig {
                grid: dims1d((n / 256) as u32),
                block: dims1d(256),
                shared_mem_bytes: 0,
                stream: Some(&stream),
            },
            &saxpy_args(2.0, &xb, &mut yb),
        )
        .unwrap();
    backend.record_event(&end, Some(&stream)).unwrap();
    backend.synchronize_stream(&stream).unwrap();
    let ms = backend.event_elapsed_ms(&start, &end).unwrap();
    println!("saxpy of {n} elements: {ms} ms");
    assert!(ms >= 0.0 && ms.is_finite(), "{ms}");
    assert_eq!(yb.to_vec().unwrap(), saxpy_want(2.0, &x, &y0));
    backend.destroy_stream(stream).unwrap();
    // Events on the default queue.
    backend.record_event(&start, None).unwrap();
    backend.record_event(&end, None).unwrap();
    backend.synchronize(local).unwrap();
    assert!(backend.event_elapsed_ms(&start, &end).unwrap() >= 0.0);
    backend.destroy_event(start).unwrap();
    backend.destroy_event(end).unwrap();
    // Profiling mode logs and still computes.
    backend.enable_profiling();
    let mut yb = dev.upload(&y0).unwrap();
    run(
        &dev,
        &SAXPY,
        vec![2.0f32.into(), (&xb).into(), (&mut yb).into()],
        dims1d((n / 256) as u32),
        dims1d(256),
        0,
    )
    .unwrap();
    backend.disable_profiling();
    assert_eq!(yb.to_vec().unwrap(), saxpy_want(2.0, &x, &y0));
}

#[test]
fn shared_memory_sized_at_launch() {
    let Some(dev) = opencl("shared_memory_sized_at_launch") else {
        return;
    };
    let (blocks, block) = (3u32, 64u32);
    let n = (blocks * block) as usize;
    for extra in [0usize, 4 * 10] {
        // The array holds block + 10 elements in the second round: its length says so.
        let shared = block as usize * 4 + extra;
        let mut out = dev.alloc::<u32>(n).unwrap();
        let mut lens = dev.alloc::<u32>(n).unwrap();
        run(
            &dev,
            &DYN_REVERSE,
            vec![(&mut out).into(), (&mut lens).into()],
            dims1d(blocks),
            dims1d(block),
            shared,
        )
        .unwrap();
        let want: Vec<u32> = (0..n as u32)
            .map(|g| (g / block) * block + (block - 1 - g % block))
            .collect();
        assert_eq!(out.to_vec().unwrap(), want);
        assert_eq!(lens.to_vec().unwrap(), vec![(shared / 4) as u32; n]);
    }
}

#[test]
fn features_the_device_lacks_are_refused_before_anything_runs() {
    let Some(dev) = opencl("features_the_device_lacks_are_refused_before_anything_runs") else {
        return;
    };
    let mut out = dev.alloc::<u32>(32).unwrap();
    let r = run(
        &dev,
        &BALLOTS,
        vec![(&mut out).into()],
        dims1d(1),
        dims1d(32),
        0,
    );
    if dev.capabilities.subgroups {
        r.unwrap();
        assert_eq!(out.to_vec().unwrap()[0] & 1, 1);
    } else {
        let e = r.unwrap_err();
        println!("refused: {e}");
        assert!(
            matches!(&e, Error::FeatureNotSupported { backend, feature }
                if backend == "OpenCL" && feature.contains("subgroup")),
            "{e}"
        );
        assert_eq!(out.to_vec().unwrap(), vec![0; 32], "nothing ran");
    }
}
