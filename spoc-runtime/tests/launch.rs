//! Launches on the CPU backends, and every launch check with the error it gives.

mod support;

use spoc_runtime::__private::launch_def;
use spoc_runtime::{
    compile_kernel, dims1d, dims2d, dims3d, init_device, run, run_kernel, set_args, Arg, Device,
    DimKind, Dims, Error, LaunchProblem,
};
use support::{FLAGS, IOTA, IOTA_UNCHECKED, SAXPY, TAKES_I64, WITH_BARRIER};

fn cpu_devices() -> Vec<Device> {
    ["Native", "Interpreter"]
        .into_iter()
        .map(|n| init_device(Some(n)).unwrap())
        .collect()
}

fn native() -> Device {
    init_device(Some("Native")).unwrap()
}

fn saxpy_want(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| a * x + y).collect()
}

/// The launch problem of an `InvalidLaunch` of `kernel`.
fn problem(r: Result<(), Error>, kernel: &str) -> LaunchProblem {
    match r {
        Err(Error::InvalidLaunch { kernel: k, problem }) => {
            assert_eq!(k, kernel);
            problem
        }
        other => panic!("expected an invalid launch of `{kernel}`, got {other:?}"),
    }
}

#[test]
fn saxpy_runs_on_both_cpu_backends_through_every_entry_point() {
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 11) as f32 / 3.0).collect();
    for dev in cpu_devices() {
        let xb = dev.upload(&x).unwrap();
        // run()
        let mut yb = dev.upload(&y0).unwrap();
        run(
            &dev,
            &SAXPY,
            vec![2.5f32.into(), (&xb).into(), (&mut yb).into()],
            dims1d(8),
            dims1d(128),
            0,
        )
        .unwrap();
        assert_eq!(yb.to_vec().unwrap(), saxpy_want(2.5, &x, &y0), "{dev}");
        // compile_kernel + set_args + run_kernel, twice (the second on the first's output).
        let k = compile_kernel(&dev, &SAXPY).unwrap();
        let mut yb = dev.upload(&y0).unwrap();
        {
            let mut args =
                set_args(&dev, vec![Arg::F32(-1.0), (&xb).into(), (&mut yb).into()]).unwrap();
            run_kernel(&k, &mut args, dims1d(4), dims1d(256), 0).unwrap();
            run_kernel(&k, &mut args, dims1d(4), dims1d(256), 0).unwrap();
        }
        let once = saxpy_want(-1.0, &x, &y0);
        assert_eq!(yb.to_vec().unwrap(), saxpy_want(-1.0, &x, &once), "{dev}");
        // The macro's entry point, with a 2-D grid covering the buffer. Its y extent is 1:
        // blocks with the same x and different y would update the same elements, and the
        // Interpreter runs blocks on several threads, so their order (and the result) would be
        // a race (CI saw one application instead of two).
        let mut yb = dev.upload(&y0).unwrap();
        launch_def(
            &dev,
            &SAXPY,
            dims2d(8, 1),
            dims1d(128),
            0,
            &mut [Arg::F32(1.0), (&xb).into(), (&mut yb).into()],
        )
        .unwrap();
        let want = saxpy_want(1.0, &x, &y0);
        assert_eq!(yb.to_vec().unwrap(), want, "{dev}");
    }
}

#[test]
fn usize_arguments_become_the_kernel_usize() {
    for dev in cpu_devices() {
        let mut out = dev.alloc::<u32>(50).unwrap();
        run(
            &dev,
            &IOTA,
            vec![7usize.into(), (&mut out).into()],
            dims1d(1),
            dims1d(64),
            0,
        )
        .unwrap();
        assert_eq!(
            out.to_vec().unwrap(),
            (7..57).collect::<Vec<u32>>(),
            "{dev}"
        );
        let big = u32::MAX as usize + 1;
        let p = problem(
            run(
                &dev,
                &IOTA,
                vec![big.into(), (&mut out).into()],
                dims1d(1),
                dims1d(64),
                0,
            ),
            "iota",
        );
        assert_eq!(
            p,
            LaunchProblem::UsizeOverflow {
                index: 0,
                param: "base".into(),
                value: big as u64
            }
        );
    }
}

#[test]
fn dims_are_checked_against_the_device() {
    let dev = native();
    let caps = dev.capabilities;
    let x = dev.upload(&[1.0f32; 8]).unwrap();
    let mut y = dev.upload(&[1.0f32; 8]).unwrap();
    let mut go = |grid: Dims, block: Dims, shared: usize| {
        problem(
            run(
                &dev,
                &SAXPY,
                vec![1.0f32.into(), (&x).into(), (&mut y).into()],
                grid,
                block,
                shared,
            ),
            "saxpy",
        )
    };
    assert_eq!(
        go(dims3d(1, 0, 1), dims1d(1), 0),
        LaunchProblem::ZeroDim {
            what: DimKind::Grid,
            axis: 'y'
        }
    );
    assert_eq!(
        go(dims1d(1), dims3d(1, 1, 0), 0),
        LaunchProblem::ZeroDim {
            what: DimKind::Block,
            axis: 'z'
        }
    );
    assert_eq!(
        go(dims2d(1, 65536), dims1d(1), 0),
        LaunchProblem::DimTooLarge {
            what: DimKind::Grid,
            axis: 'y',
            value: 65536,
            limit: 65535
        }
    );
    assert_eq!(
        go(dims1d(1 << 31), dims1d(1), 0),
        LaunchProblem::DimTooLarge {
            what: DimKind::Grid,
            axis: 'x',
            value: 1 << 31,
            limit: (1 << 31) - 1
        }
    );
    assert_eq!(
        go(dims1d(1), dims3d(1, 1, 65), 0),
        LaunchProblem::DimTooLarge {
            what: DimKind::Block,
            axis: 'z',
            value: 65,
            limit: 64
        }
    );
    assert_eq!(
        go(dims1d(1), dims1d(1025), 0),
        LaunchProblem::DimTooLarge {
            what: DimKind::Block,
            axis: 'x',
            value: 1025,
            limit: 1024
        }
    );
    assert_eq!(
        go(dims1d(1), dims2d(64, 32), 0),
        LaunchProblem::TooManyThreads {
            threads: 2048,
            limit: caps.max_threads_per_block
        }
    );
    // 4194305 blocks of 1024 threads number 2^32 + 1024 threads: global ids would wrap.
    assert_eq!(
        go(dims1d(4_194_305), dims1d(1024), 0),
        LaunchProblem::GlobalSizeOverflow {
            axis: 'x',
            grid: 4_194_305,
            block: 1024,
            total: 4_294_968_320,
            max: u32::MAX
        }
    );
    assert_eq!(
        go(dims1d(1), dims1d(1), 48 * 1024 + 1),
        LaunchProblem::SharedMemory {
            requested: 48 * 1024 + 1,
            limit: 48 * 1024
        }
    );
    // A block of the maximum size and the maximum shared memory pass the checks (and run:
    // threads 8.. are idle).
    run(
        &dev,
        &SAXPY,
        vec![1.0f32.into(), (&x).into(), (&mut y).into()],
        dims1d(1),
        dims1d(1024),
        48 * 1024,
    )
    .unwrap();
    // Nothing ran for the refused launches: y went through exactly one saxpy.
    assert_eq!(y.to_vec().unwrap(), vec![2.0f32; 8]);
}

#[test]
fn arguments_are_checked_against_the_parameters() {
    for dev in cpu_devices() {
        let x = dev.upload(&[1.0f32; 4]).unwrap();
        let mut y = dev.upload(&[1.0f32; 4]).unwrap();
        let ints = dev.upload(&[1i32; 4]).unwrap();
        let g = (dims1d(1), dims1d(4));
        let go = |args: Vec<Arg<'_>>| problem(run(&dev, &SAXPY, args, g.0, g.1, 0), "saxpy");
        assert_eq!(
            go(vec![1.0f32.into(), (&x).into()]),
            LaunchProblem::ArgCount {
                expected: 3,
                got: 2
            }
        );
        let ty = |p: LaunchProblem| match p {
            LaunchProblem::ArgType {
                index,
                param,
                expected,
                got,
            } => (index, param, expected, got),
            other => panic!("expected ArgType, got {other:?}"),
        };
        let (i, p, e, got) = ty(go(vec![1.0f64.into(), (&x).into(), (&mut y).into()]));
        assert_eq!(
            (i, p.as_str(), e.as_str(), got.as_str()),
            (0, "a", "f32", "f64")
        );
        let (i, p, e, got) = ty(go(vec![1.0f32.into(), (&ints).into(), (&mut y).into()]));
        assert_eq!(
            (i, p.as_str(), e.as_str(), got.as_str()),
            (1, "x", "&[f32]", "&buffer of i32")
        );
        let (i, p, ..) = ty(go(vec![1.0f32.into(), 3i32.into(), (&mut y).into()]));
        assert_eq!((i, p.as_str()), (1, "x"));
        let (i, p, e, _) = ty(go(vec![(&x).into(), (&x).into(), (&mut y).into()]));
        assert_eq!((i, p.as_str(), e.as_str()), (0, "a", "f32"));
        // A shared borrow for a `&mut` parameter.
        assert_eq!(
            go(vec![1.0f32.into(), (&x).into(), (&y).into()]),
            LaunchProblem::ReadOnlyBuffer { param: "y".into() }
        );
        // One buffer on `x` and on the `&mut` `y`: only reachable through untyped arguments.
        assert_eq!(
            go(vec![1.0f32.into(), (&y).into(), (&y).into()]),
            LaunchProblem::AliasedBuffer {
                first: "x".into(),
                second: "y".into(),
                mutable: "y".into()
            }
        );
        // The same buffer on two read-only parameters is fine.
        let xs = dev.upload(&[3i64; 2]).unwrap();
        run(
            &dev,
            &TAKES_I64,
            vec![1i64.into(), (&xs).into()],
            g.0,
            g.1,
            0,
        )
        .unwrap();
        let p = problem(
            run(
                &dev,
                &TAKES_I64,
                vec![1u64.into(), (&xs).into()],
                g.0,
                g.1,
                0,
            ),
            "takes_i64",
        );
        assert!(
            matches!(p, LaunchProblem::ArgType { index: 0, .. }),
            "{p:?}"
        );
        assert_eq!(y.to_vec().unwrap(), vec![1.0f32; 4], "nothing ran on {dev}");
    }
}

#[test]
fn buffers_must_live_on_the_launch_device() {
    let [nat, interp] = <[Device; 2]>::try_from(cpu_devices()).unwrap();
    let x = interp.upload(&[1.0f32; 4]).unwrap();
    let mut y = nat.upload(&[1.0f32; 4]).unwrap();
    let p = problem(
        run(
            &nat,
            &SAXPY,
            vec![1.0f32.into(), (&x).into(), (&mut y).into()],
            dims1d(1),
            dims1d(4),
            0,
        ),
        "saxpy",
    );
    assert_eq!(
        p,
        LaunchProblem::WrongDevice {
            param: "x".into(),
            buffer_device: interp.id,
            device: nat.id
        }
    );
    let r = set_args(&nat, vec![(&x).into()]);
    assert!(
        matches!(r, Err(Error::WrongDevice { buffer_device, device }) if buffer_device == interp.id && device == nat.id)
    );
    // Arguments set for one device, kernel compiled for another.
    let xi = interp.upload(&[1.0f32; 4]).unwrap();
    let mut yi = interp.upload(&[1.0f32; 4]).unwrap();
    let mut args = set_args(&interp, vec![1.0f32.into(), (&xi).into(), (&mut yi).into()]).unwrap();
    let k = compile_kernel(&nat, &SAXPY).unwrap();
    let p = problem(run_kernel(&k, &mut args, dims1d(1), dims1d(4), 0), "saxpy");
    assert_eq!(
        p,
        LaunchProblem::ArgsForOtherDevice {
            args_device: interp.id,
            kernel_device: nat.id
        }
    );
}

#[test]
fn buffers_longer_than_u32_indexing_are_refused() {
    let dev = native();
    // 2^32 one-byte elements: reserved, never touched (the allocation is lazily zeroed).
    let big = match dev.alloc::<bool>(1 << 32) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("skipping: cannot reserve 4 GiB here: {e}");
            return;
        }
    };
    let p = problem(
        run(&dev, &FLAGS, vec![(&big).into()], dims1d(1), dims1d(1), 0),
        "flags",
    );
    assert_eq!(
        p,
        LaunchProblem::BufferTooLong {
            param: "f".into(),
            len: 1 << 32
        }
    );
    let small = dev.alloc::<bool>(16).unwrap();
    run(&dev, &FLAGS, vec![(&small).into()], dims1d(1), dims1d(1), 0).unwrap();
}

#[test]
fn native_refuses_kernels_without_native_code() {
    let dev = native();
    let r = compile_kernel(&dev, &WITH_BARRIER);
    assert!(
        matches!(&r, Err(Error::FeatureNotSupported { backend, feature }) if backend == "Native" && feature.contains("with_barrier")),
        "{r:?}"
    );
    let mut out = dev.alloc::<f32>(4).unwrap();
    let r = run(
        &dev,
        &WITH_BARRIER,
        vec![(&mut out).into()],
        dims1d(1),
        dims1d(4),
        0,
    );
    assert!(matches!(r, Err(Error::FeatureNotSupported { .. })), "{r:?}");
}

#[test]
fn out_of_bounds_accesses_are_kernel_faults_naming_the_thread() {
    for dev in cpu_devices() {
        let mut out = dev.alloc::<u32>(100).unwrap();
        let r = run(
            &dev,
            &IOTA_UNCHECKED,
            vec![0u32.into(), (&mut out).into()],
            dims1d(2),
            dims1d(64),
            0,
        );
        let (kernel, block, thread, message) = spoc_testkit::devices::kernel_fault(r, &dev);
        assert_eq!(kernel, "iota_unchecked", "{dev}");
        // Global id 100 = block 1, thread 36 is the first faulting thread of the only
        // faulting block.
        assert_eq!(
            (block, thread),
            (Some([1, 0, 0]), Some([36, 0, 0])),
            "{dev}"
        );
        assert!(
            message.contains("out") && message.contains("100"),
            "{dev}: {message}"
        );
        // Block 0 ran completely.
        assert_eq!(
            out.to_vec().unwrap()[..64],
            (0..64).collect::<Vec<u32>>()[..],
            "{dev}"
        );
    }
}

#[test]
fn every_scalar_converts_into_its_argument() {
    let cases: Vec<(Arg<'_>, &str)> = vec![
        (true.into(), "bool"),
        (1i32.into(), "i32"),
        (1i64.into(), "i64"),
        (1u32.into(), "u32"),
        (1u64.into(), "u64"),
        (1f32.into(), "f32"),
        (1f64.into(), "f64"),
        (1usize.into(), "usize"),
    ];
    for (a, want) in cases {
        assert_eq!(a.describe(), want);
        assert!(a.scalar().is_some() && a.buffer().is_none());
    }
}

/// Per-launch overhead of the memoized path on Native (run with `--ignored --nocapture` in
/// release); asserts only a generous bound.
#[test]
#[ignore]
fn launch_overhead() {
    let dev = native();
    let x = dev.upload(&[1.0f32]).unwrap();
    let mut y = dev.upload(&[0.0f32]).unwrap();
    let n = 200_000;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        launch_def(
            &dev,
            &SAXPY,
            dims1d(1),
            dims1d(1),
            0,
            &mut [Arg::F32(1.0), (&x).into(), (&mut y).into()],
        )
        .unwrap();
    }
    let per = t0.elapsed().as_nanos() as f64 / n as f64;
    eprintln!("{per:.0} ns per launch");
    assert_eq!(y.to_vec().unwrap(), [n as f32]);
    assert!(per < 100_000.0);
}
