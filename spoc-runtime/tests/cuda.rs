//! The CUDA backends (CUDA/PTX and CUDA/C) on a real GPU: external PTX and CUDA C kernels,
//! memory round trips, events and streams, launch-limit errors, and IR kernels through
//! compile + launch.
//!
//! Without a CUDA driver every GPU test prints `skipped: no CUDA driver` and passes, unless
//! `SPOC_REQUIRE_BACKENDS` names `cuda` (or `cuda/ptx`, `cuda/c`; comma- or space-separated, as
//! the GPU machine's runner sets it): then a backend that does not come up fails the test.

mod support;

use spoc_ir::{
    BinOp, Const, Expr, ExprKind, Intrinsic, IrError, Kernel, LValue, MemSpace, Param, SharedDecl,
    Stmt, StmtKind, Type, VarDecl, VarId, VarKind,
};
use spoc_runtime::backend::SourceLang;
use spoc_runtime::cuda::{CudaBackend, CudaVariant};
use spoc_runtime::{
    compile_kernel, dims1d, dims3d, init_device, registry, run, Arg, Buffer, CompileOptions,
    Compiler, Device, DeviceMemory, DimKind, Error, Executor, KernelDef, LaunchConfig,
    LaunchProblem, Platform,
};
use std::sync::OnceLock;
use support::{run_source, saxpy_args};

// True if `SPOC_REQUIRE_BACKENDS` names `backend` or its family.
use spoc_testkit::backends::is_required as required;

/// The best device of `backend`, or `None` (after saying so) when CUDA is absent and not
/// required.
///
/// # Panics
/// If the backend is required (see the module docs) and does not come up.
fn device(backend: &str) -> Option<Device> {
    match init_device(Some(backend)) {
        Ok(d) => Some(d),
        Err(e) if required(backend) => {
            panic!("required backend {backend} did not come up (SPOC_REQUIRE_BACKENDS): {e}")
        }
        Err(e) => {
            eprintln!("skipped: no CUDA driver ({backend}: {e})");
            None
        }
    }
}

/// Serialises the tests that compile through the runtime's memo with the one that announces a
/// device teardown (which fails builds in flight for that device).
static MEMO_USERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    MEMO_USERS.lock().unwrap_or_else(|e| e.into_inner())
}

const PTX: &str = "CUDA/PTX";
const CUDA_C: &str = "CUDA/C";

/// `saxpy(a, x, y)`: `y[i] = a * x[i] + y[i]`, rounded twice (no FMA), written by hand in PTX
/// with the backends' ABI (buffer = address + u32 length).
const SAXPY_PTX: &str = r#"
.version 7.8
.target sm_70
.address_size 64

.visible .entry saxpy_ext(
    .param .f32 a,
    .param .u64 x_ptr,
    .param .u32 x_len,
    .param .u64 y_ptr,
    .param .u32 y_len
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<8>;

    ld.param.f32 %f1, [a];
    ld.param.u64 %rd1, [x_ptr];
    ld.param.u64 %rd2, [y_ptr];
    ld.param.u32 %r1, [y_len];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.u32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.u32 %rd5, %r5, 4;
    add.u64 %rd6, %rd3, %rd5;
    add.u64 %rd7, %rd4, %rd5;
    ld.global.f32 %f2, [%rd6];
    ld.global.f32 %f3, [%rd7];
    mul.rn.f32 %f4, %f1, %f2;
    add.rn.f32 %f4, %f4, %f3;
    st.global.f32 [%rd7], %f4;
DONE:
    ret;
}
"#;

/// The same in CUDA C, plus a `u64` scalar it adds to `flags[i]` (ABI of scalars by value).
const SAXPY_CU: &str = r#"
extern "C" __global__ void saxpy_cu(float a, const float* x, unsigned int x_len,
                                    float* y, unsigned int y_len,
                                    unsigned long long k, unsigned long long* out,
                                    unsigned int out_len, bool flag) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < y_len && i < x_len) {
        y[i] = a * x[i] + y[i];
    }
    if (i < out_len) {
        out[i] = k + i + (flag ? 1000u : 0u) + (x_len == y_len ? 0u : 7u);
    }
}
"#;

/// Dynamic shared memory above the default 48 KiB (100 000 bytes): rotates lane values through
/// shared memory.
const SMEM_CU: &str = r#"
extern "C" __global__ void smem_rot(unsigned int* out, unsigned int out_len) {
    extern __shared__ unsigned int s[];
    unsigned int n = blockDim.x, t = threadIdx.x;
    s[t] = t * 3u;
    s[24000u + t] = 1u;
    __syncthreads();
    if (t < out_len) out[t] = s[(t + 1u) % n] + s[24000u + t];
}
"#;

/// Spins for about `iters` iterations (something for events to time).
const SPIN_CU: &str = r#"
extern "C" __global__ void spin(unsigned int* out, unsigned int out_len, unsigned int iters) {
    unsigned int acc = threadIdx.x;
    for (unsigned int j = 0; j < iters; ++j) acc = acc * 1664525u + 1013904223u;
    if (threadIdx.x < out_len) out[threadIdx.x] = acc;
}
"#;

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.37 - 11.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * -1.3 + 0.125).collect();
    (x, y)
}

fn saxpy_host(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    // Two roundings, as the kernels (no FMA).
    x.iter().zip(y).map(|(&x, &y)| a * x + y).collect()
}

#[test]
fn registered_with_priorities_and_probing_never_panics() {
    let all = registry::backends();
    let prio = |n: &str| all.iter().find(|(b, _)| b.name() == n).map(|(_, p)| *p);
    assert_eq!(prio(PTX), Some(registry::priority::CUDA_PTX));
    assert_eq!(prio(CUDA_C), Some(registry::priority::CUDA_C));
    let top = all.iter().map(|(_, p)| *p).max().unwrap();
    assert_eq!(top, registry::priority::CUDA_PTX, "CUDA/PTX ranks first");
    for (b, _) in all.iter().filter(|(b, _)| b.name().starts_with("CUDA")) {
        let avail = b.is_available();
        eprintln!(
            "{}: available = {avail}, version = {:?}",
            b.name(),
            b.version()
        );
        if !avail {
            assert!(b.devices().is_err() || b.devices().unwrap().is_empty());
            assert!(matches!(
                init_device(Some(b.name())),
                Err(Error::BackendUnavailable { .. } | Error::NoDevice { .. })
            ));
            assert!(
                !required(b.name()),
                "{} is required but unavailable",
                b.name()
            );
        }
    }
    // A standalone backend probes the same way, without panicking.
    let standalone = CudaBackend::new(CudaVariant::Ptx);
    if !standalone.is_available() {
        assert!(matches!(
            standalone.alloc(0, 16),
            Err(Error::BackendUnavailable { .. })
        ));
    }
}

#[test]
fn capabilities_are_the_devices() {
    let _serial = serial();
    let Some(dev) = device(PTX) else { return };
    let c = dev.capabilities;
    let cc = CudaBackend::new(CudaVariant::Ptx)
        .compute_capability(dev.backend_id)
        .unwrap();
    eprintln!(
        "{dev}: cc {}.{}, {} SMs, warp {}, {} threads/block, block {:?}, grid {:?}, \
         {} B shared/block, {} MiB",
        cc.0,
        cc.1,
        c.compute_units,
        c.warp_size,
        c.max_threads_per_block,
        c.max_block_dims,
        c.max_grid_dims,
        c.shared_mem_per_block,
        c.total_memory >> 20
    );
    assert!(c.is_gpu && !c.is_cpu && c.fp64 && c.subgroups);
    assert_eq!(c.warp_size, 32);
    assert_eq!(c.max_threads_per_block, 1024);
    assert_eq!(c.max_block_dims, [1024, 1024, 64]);
    assert_eq!(c.max_grid_dims, [i32::MAX as u32, 65535, 65535]);
    assert!(c.shared_mem_per_block >= 48 * 1024);
    assert!(c.compute_units > 0 && c.total_memory > (1 << 30));
    assert!(cc >= (5, 0));
    // The best device overall is a CUDA/PTX one.
    assert_eq!(init_device(None).unwrap().framework, PTX);
    // Generated PTX targets the device (sm_90 on Hopper and newer).
    let k = support::saxpy_ir().unwrap();
    let src = dev
        .backend()
        .generate_source(k, None, &[])
        .unwrap()
        .unwrap();
    let text = src.text().unwrap();
    let want = if cc >= (9, 0) {
        ".target sm_90".to_string()
    } else {
        format!(".target sm_{}{}", cc.0, cc.1)
    };
    assert!(text.contains(&want), "expected `{want}` in:\n{text}");
}

#[test]
fn saxpy_external_ptx_and_cuda_c() {
    for backend in [PTX, CUDA_C] {
        let Some(dev) = device(backend) else { return };
        let n = (1 << 20) + 3;
        let (x, y0) = inputs(n);
        let a = 2.5f32;
        let xb = dev.upload(&x).unwrap();
        let mut yb = dev.upload(&y0).unwrap();
        let grid = dims1d((n as u32).div_ceil(256));
        run_source(
            &dev,
            (SAXPY_PTX, SourceLang::Ptx, "saxpy_ext"),
            grid,
            dims1d(256),
            &saxpy_args(a, &xb, &mut yb),
        )
        .unwrap();
        let want = saxpy_host(a, &x, &y0);
        let got = yb.to_vec().unwrap();
        assert_eq!(got, want, "{backend}: PTX saxpy");

        let mut out = dev.alloc::<u64>(n).unwrap();
        run_source(
            &dev,
            (SAXPY_CU, SourceLang::CudaC, "saxpy_cu"),
            grid,
            dims1d(256),
            &[
                Arg::F32(a),
                Arg::Buffer(xb.raw()),
                Arg::BufferMut(yb.raw_mut()),
                Arg::U64(1 << 40),
                Arg::BufferMut(out.raw_mut()),
                Arg::Bool(true),
            ],
        )
        .unwrap();
        let want2 = saxpy_host(a, &x, &want);
        assert_eq!(yb.to_vec().unwrap(), want2, "{backend}: CUDA C saxpy");
        let out = out.to_vec().unwrap();
        for i in [0, 1, 4097, n - 1] {
            assert_eq!(
                out[i],
                (1u64 << 40) + i as u64 + 1000,
                "{backend}: out[{i}]"
            );
        }
        eprintln!("{backend}: external PTX and CUDA C saxpy on {n} elements: ok");
    }
}

#[test]
fn memory_round_trips() {
    let Some(dev) = device(PTX) else { return };
    let b = dev.backend();
    let data: Vec<u32> = (0..100_003u32)
        .map(|i| i.wrapping_mul(2654435761))
        .collect();
    let buf = dev.upload(&data).unwrap();
    assert_eq!(buf.to_vec().unwrap(), data);

    // Device to device (Buffer::copy_from and the backend's copy_d2d).
    let mut copy: Buffer<u32> = dev.alloc(data.len()).unwrap();
    assert_eq!(copy.to_vec().unwrap(), vec![0; data.len()], "alloc zeroes");
    copy.copy_from(&buf).unwrap();
    assert_eq!(copy.to_vec().unwrap(), data);
    let half: Buffer<u32> = dev.alloc(data.len()).unwrap();
    b.copy_d2d(half.raw().mem(), buf.raw().mem(), 4 * 1000)
        .unwrap();
    let h = half.to_vec().unwrap();
    assert_eq!(&h[..1000], &data[..1000]);
    assert!(h[1000..].iter().all(|&v| v == 0));

    // Offsets and raw pointers.
    let mem = copy.raw().mem();
    b.copy_h2d(mem, 8, &[0xAB; 12]).unwrap();
    let mut back = [0u8; 20];
    b.copy_d2h(mem, 4, &mut back).unwrap();
    assert_eq!(&back[..4], &data[1].to_le_bytes());
    assert_eq!(&back[4..16], &[0xAB; 12]);
    assert_eq!(&back[16..], &data[5].to_le_bytes());
    let mut raw = vec![0u32; 10];
    // SAFETY: `raw` has room for 10 elements.
    unsafe { buf.download_to_ptr(raw.as_mut_ptr(), 10).unwrap() };
    assert_eq!(raw, data[..10]);

    // Out of range is an error, not a fault.
    let too_far = b.copy_h2d(mem, buf.raw().size_bytes() - 2, &[1, 2, 3]);
    assert!(matches!(too_far, Err(Error::Memory { .. })), "{too_far:?}");
    assert!(b
        .copy_d2d(half.raw().mem(), buf.raw().mem(), usize::MAX)
        .is_err());

    // Empty buffers and a large one.
    let empty: Buffer<f64> = dev.upload(&[]).unwrap();
    assert!(empty.to_vec().unwrap().is_empty());
    let big: Buffer<u8> = dev.alloc(1 << 30).unwrap();
    drop(big);
    let huge = b.alloc(dev.backend_id, usize::MAX / 2);
    assert!(matches!(huge, Err(Error::Memory { .. })), "{huge:?}");
}

#[test]
fn events_and_streams() {
    let Some(dev) = device(PTX) else { return };
    let b = dev.backend();
    let l = dev.backend_id;
    let stream = b.create_stream(l).unwrap();
    let (start, end) = (b.create_event(l).unwrap(), b.create_event(l).unwrap());
    let mut out = dev.alloc::<u32>(256).unwrap();
    // Warm up (compiles and caches the module), then time a launch on the default stream.
    let spin = |iters: u32, out: &mut Buffer<u32>| {
        b.run_source(
            l,
            SPIN_CU,
            SourceLang::CudaC,
            "spin",
            dims1d(1),
            dims1d(256),
            0,
            &[Arg::BufferMut(out.raw_mut()), Arg::U32(iters)],
        )
    };
    spin(1, &mut out).unwrap();
    // Profiling on: the launch is timed with events and logged (and still correct).
    b.enable_profiling();
    spin(1, &mut out).unwrap();
    b.disable_profiling();
    assert_eq!(
        out.to_vec().unwrap()[3],
        3u32.wrapping_mul(1664525).wrapping_add(1013904223)
    );
    b.record_event(&start, None).unwrap();
    spin(2_000_000, &mut out).unwrap();
    b.record_event(&end, None).unwrap();
    let ms = b.event_elapsed_ms(&start, &end).unwrap();
    eprintln!("events: spin(2e6) took {ms:.3} ms");
    assert!(ms.is_finite() && ms > 0.01 && ms < 10_000.0, "{ms}");
    let mut acc = 0u32;
    for _ in 0..2_000_000u32 {
        acc = acc.wrapping_mul(1664525).wrapping_add(1013904223);
    }
    assert_eq!(out.to_vec().unwrap()[0], acc);

    // Events on a stream of our own.
    b.record_event(&start, Some(&stream)).unwrap();
    b.record_event(&end, Some(&stream)).unwrap();
    b.synchronize_stream(&stream).unwrap();
    let ms = b.event_elapsed_ms(&start, &end).unwrap();
    assert!((0.0..1000.0).contains(&ms), "{ms}");
    b.destroy_event(start).unwrap();
    b.destroy_event(end).unwrap();
    b.destroy_stream(stream).unwrap();
    dev.synchronize().unwrap();
}

#[test]
fn dynamic_shared_memory_above_48k() {
    let Some(dev) = device(PTX) else { return };
    let mut out = dev.alloc::<u32>(512).unwrap();
    // One block of 512 threads rotating `out` through `shared` bytes of shared memory.
    let smem_rot = |shared: usize, out: &mut spoc_runtime::Buffer<u32>| {
        dev.backend().run_source(
            dev.backend_id,
            SMEM_CU,
            SourceLang::CudaC,
            "smem_rot",
            dims1d(1),
            dims1d(512),
            shared,
            &[Arg::BufferMut(out.raw_mut())],
        )
    };
    smem_rot(100_000, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    let want: Vec<u32> = (0..512u32).map(|t| ((t + 1) % 512) * 3 + 1).collect();
    assert_eq!(got, want);
    // Over the device's limit: refused before launch.
    let limit = dev.capabilities.shared_mem_per_block;
    let r = smem_rot(limit + 1, &mut out);
    assert!(
        matches!(
            r,
            Err(Error::InvalidLaunch {
                problem: LaunchProblem::SharedMemory { .. },
                ..
            })
        ),
        "{r:?}"
    );
}

#[test]
fn launch_limits_are_errors() {
    let _serial = serial();
    let Some(dev) = device(PTX) else { return };
    let x = dev.upload(&[1.0f32; 64]).unwrap();
    let mut y = dev.upload(&[1.0f32; 64]).unwrap();
    // Through the runtime's checks (compiled IR kernel).
    let r = run(
        &dev,
        &support::SAXPY,
        saxpy_args(1.0, &x, &mut y).into(),
        dims1d(1),
        dims1d(2048),
        0,
    );
    assert!(
        matches!(
            r,
            Err(Error::InvalidLaunch {
                problem: LaunchProblem::DimTooLarge {
                    what: DimKind::Block,
                    axis: 'x',
                    value: 2048,
                    limit: 1024
                },
                ..
            })
        ),
        "{r:?}"
    );
    let r = run(
        &dev,
        &support::SAXPY,
        saxpy_args(1.0, &x, &mut y).into(),
        dims1d(1),
        dims3d(64, 32, 1),
        0,
    );
    assert!(
        matches!(
            r,
            Err(Error::InvalidLaunch {
                problem: LaunchProblem::TooManyThreads {
                    threads: 2048,
                    limit: 1024
                },
                ..
            })
        ),
        "{r:?}"
    );
    // Through run_source.
    let r = run_source(
        &dev,
        (SAXPY_PTX, SourceLang::Ptx, "saxpy_ext"),
        dims1d(1),
        dims1d(2048),
        &saxpy_args(1.0, &x, &mut y),
    );
    assert!(matches!(r, Err(Error::InvalidLaunch { .. })), "{r:?}");
    // Nothing ran.
    assert_eq!(y.to_vec().unwrap(), vec![1.0; 64]);
    // Bad sources are compile errors carrying the driver's / NVRTC's log.
    let r = run_source(
        &dev,
        (
            ".version 7.8\n.target sm_70\n.address_size 64\n.visible .entry broken() { bogus; }",
            SourceLang::Ptx,
            "broken",
        ),
        dims1d(1),
        dims1d(1),
        &[],
    );
    assert!(matches!(r, Err(Error::Compile { .. })), "{r:?}");
    let r = run_source(
        &dev,
        (
            "extern \"C\" __global__ void broken() { undefined_thing(); }",
            SourceLang::CudaC,
            "broken",
        ),
        dims1d(1),
        dims1d(1),
        &[],
    );
    match r {
        Err(Error::Compile { message, .. }) => assert!(message.contains("undefined_thing")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ir_kernels_compile_and_launch() {
    let _serial = serial();
    for backend in [PTX, CUDA_C] {
        let Some(dev) = device(backend) else { return };
        let n = 10_007;
        let (x, y0) = inputs(n);
        let xb = dev.upload(&x).unwrap();
        let mut yb = dev.upload(&y0).unwrap();
        let grid = dims1d((n as u32).div_ceil(128));
        run(
            &dev,
            &support::SAXPY,
            saxpy_args(-0.75, &xb, &mut yb).into(),
            grid,
            dims1d(128),
            0,
        )
        .unwrap_or_else(|e| panic!("{backend}: saxpy: {e}"));
        assert_eq!(
            yb.to_vec().unwrap(),
            saxpy_host(-0.75, &x, &y0),
            "{backend}"
        );

        let mut out = dev.alloc::<u32>(1000).unwrap();
        run(
            &dev,
            &support::IOTA,
            vec![Arg::Usize(7), Arg::BufferMut(out.raw_mut())],
            dims1d(8),
            dims1d(128),
            0,
        )
        .unwrap_or_else(|e| panic!("{backend}: iota: {e}"));
        let want: Vec<u32> = (0..1000).map(|i| 7 + i).collect();
        assert_eq!(out.to_vec().unwrap(), want, "{backend}");

        let mut f = dev.alloc::<f32>(4).unwrap();
        run(
            &dev,
            &support::WITH_BARRIER,
            vec![Arg::BufferMut(f.raw_mut())],
            dims1d(2),
            dims1d(64),
            0,
        )
        .unwrap_or_else(|e| panic!("{backend}: barrier kernel: {e}"));
        dev.synchronize().unwrap();

        // The memo and the backend cache hand back the same compiled kernel.
        let a = compile_kernel(&dev, &support::SAXPY).unwrap();
        let b = compile_kernel(&dev, &support::SAXPY).unwrap();
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert!(a.module().is_some());
        eprintln!("{backend}: IR saxpy, iota and barrier kernels: ok");
    }
}

#[test]
fn module_cache_and_teardown() {
    let _serial = serial();
    let Some(dev) = device(PTX) else { return };
    let backend = CudaBackend::new(CudaVariant::Ptx);
    let k = support::iota_ir().unwrap();
    let src = backend.generate_source(k, None, &[]).unwrap().unwrap();
    let opts = CompileOptions::default();
    let h = k.content_hash();
    let m1 = backend
        .compile_cached(dev.backend_id, k, h, &src, &opts)
        .unwrap();
    let m2 = backend
        .compile_cached(dev.backend_id, k, h, &src, &opts)
        .unwrap();
    assert!(std::sync::Arc::ptr_eq(&m1, &m2));
    assert_eq!(backend.cached_modules(), 1);
    backend.teardown_device(dev.backend_id);
    assert_eq!(backend.cached_modules(), 0);
    // The old module still works while held; a new compile builds afresh.
    let mut out = dev.alloc::<u32>(4).unwrap();
    backend
        .launch(
            &m1,
            &LaunchConfig::new(dims1d(1), dims1d(4), 0),
            &[Arg::U32(3), Arg::BufferMut(out.raw_mut())],
        )
        .unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![3, 4, 5, 6]);
    let m3 = backend
        .compile_cached(dev.backend_id, k, h, &src, &opts)
        .unwrap();
    assert!(!std::sync::Arc::ptr_eq(&m1, &m3));
    // Structure-of-Arrays options are honoured or refused, never ignored, and refused where
    // code generation decides it (`spoc_codegen::abi::refuse_soa`), which the build runs once
    // for the device: `out` is a buffer of `u32`, not of records, so CUDA/PTX refuses to lower
    // it as SoA, and CUDA/C refuses SoA altogether.
    let soa = CompileOptions {
        soa_params: vec!["out".into()],
        ..CompileOptions::default()
    };
    let caps = backend.codegen_caps(Some(dev.backend_id)).unwrap();
    let got = backend.generate(k, &caps, &soa);
    assert!(
        matches!(got, Err(Error::FeatureNotSupported { .. })),
        "CUDA/PTX, SoA options naming a non-record buffer: {got:?}"
    );
    let c = CudaBackend::new(CudaVariant::C);
    let caps = c.codegen_caps(Some(dev.backend_id)).unwrap();
    let got = c.generate(k, &caps, &soa);
    assert!(
        matches!(got, Err(Error::FeatureNotSupported { .. })),
        "CUDA/C, SoA options: {got:?}"
    );
    // The module binds what its source declares: an AoS module never takes SoA arguments as
    // if they were its buffers (the launch is refused, nothing runs).
    assert!(src
        .abi
        .params
        .iter()
        .all(|p| !matches!(p.kind, spoc_codegen::abi::ParamKind::Soa { .. })));
}

/// `rot(out: &mut [u32])` with a launch-sized shared array `s: [u32]`:
/// `s[t] = 3 t; sync; if t < out.len() { out[t] = s[(t + 1) % s.len()] }` (t = thread_idx_x).
/// `s.len()` is the dynamic size over 4: PTX reads `%dynamic_smem_size`, CUDA C gets it as an
/// extra `u32` after the parameters.
fn dyn_shared_kernel() -> Kernel {
    let out_ty = Type::global_array(Type::U32);
    let s_ty = Type::Array {
        elem: std::sync::Arc::new(Type::U32),
        space: MemSpace::Shared,
        len: None,
    };
    let (out, s, t) = (VarId(0), VarId(1), VarId(2));
    let v = |id, ty: &Type| Expr::var(id, ty.clone());
    let bin = |op, l: Expr, r: Expr, ty: Type| Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(l),
            rhs: Box::new(r),
        },
        ty,
    };
    let len = |e: Expr| Expr {
        kind: ExprKind::Len(Box::new(e)),
        ty: Type::U32,
    };
    let index = |a: Expr, i: Expr| Expr {
        kind: ExprKind::Index {
            array: Box::new(a),
            index: Box::new(i),
        },
        ty: Type::U32,
    };
    let store = |a: VarId, i: Expr, value: Expr| {
        Stmt::new(StmtKind::Assign {
            target: LValue::Index {
                base: Box::new(LValue::Var(a)),
                index: i,
            },
            value,
        })
    };
    let tid = Expr {
        kind: ExprKind::Intrinsic {
            intrinsic: Intrinsic::ThreadIdx(spoc_ir::Axis::X),
            args: vec![],
        },
        ty: Type::U32,
    };
    let t_e = || v(t, &Type::U32);
    let u = |n| Expr::constant(Const::U32(n));
    let body = vec![
        Stmt::new(StmtKind::Let {
            var: t,
            init: Some(tid),
        }),
        store(s, t_e(), bin(BinOp::Mul, t_e(), u(3), Type::U32)),
        Stmt::new(StmtKind::Barrier),
        Stmt::new(StmtKind::If {
            cond: bin(BinOp::Lt, t_e(), len(v(out, &out_ty)), Type::BOOL),
            then: vec![store(
                out,
                t_e(),
                index(
                    v(s, &s_ty),
                    bin(
                        BinOp::Rem,
                        bin(BinOp::Add, t_e(), u(1), Type::U32),
                        len(v(s, &s_ty)),
                        Type::U32,
                    ),
                ),
            )],
            els: None,
        }),
    ];
    let decl = |name: &str, ty: &Type, kind| VarDecl {
        name: name.into(),
        ty: ty.clone(),
        mutable: false,
        kind,
    };
    Kernel {
        name: "dyn_rot".into(),
        params: vec![Param {
            var: out,
            name: "out".into(),
            ty: out_ty.clone(),
            mutable: true,
        }],
        vars: vec![
            decl("out", &out_ty, VarKind::Param),
            decl("s", &s_ty, VarKind::Shared),
            decl("t", &Type::U32, VarKind::Local),
        ],
        shared: vec![SharedDecl {
            var: s,
            elem: Type::U32,
            len: None,
        }],
        body,
        records: vec![],
        variants: vec![],
        functions: vec![],
    }
}

fn dyn_shared_ir() -> Result<&'static spoc_ir::ValidKernel, IrError> {
    static K: OnceLock<Result<spoc_ir::ValidKernel, IrError>> = OnceLock::new();
    K.get_or_init(|| {
        let k = dyn_shared_kernel();
        spoc_ir::ValidKernel::new(k)
    })
    .as_ref()
    .map_err(Clone::clone)
}

static DYN_ROT: KernelDef = KernelDef {
    name: "dyn_rot",
    ir: dyn_shared_ir,
    native: None,
};

#[test]
fn ir_kernel_with_dynamic_shared_memory() {
    let expect = |block: u32, elems: u32| -> Vec<u32> {
        (0..block).map(|t| ((t + 1) % elems) * 3).collect()
    };
    // The kernel's sources, for inspection (`--nocapture`) and a check that both generate.
    for target in [spoc_runtime::Target::CudaPtx, spoc_runtime::Target::CudaC] {
        let src = spoc_codegen::generate_source(target, dyn_shared_ir().unwrap(), None, &[])
            .unwrap()
            .unwrap();
        if std::env::var_os("SPOC_TEST_PRINT_SOURCES").is_some() {
            println!("----- {target:?}\n{}", src.text().unwrap());
        }
    }
    let _serial = serial();
    for backend in [PTX, CUDA_C] {
        let Some(dev) = device(backend) else { return };
        // 256 threads, shared array of 256 and of 300 elements (s.len() differs from the block).
        for elems in [256u32, 300] {
            let mut out = dev.alloc::<u32>(256).unwrap();
            run(
                &dev,
                &DYN_ROT,
                vec![Arg::BufferMut(out.raw_mut())],
                dims1d(1),
                dims1d(256),
                elems as usize * 4,
            )
            .unwrap_or_else(|e| panic!("{backend}: {e}"));
            let mut want = expect(256, elems);
            if elems > 256 {
                // s[256] is never written: thread 255 reads uninitialised shared memory.
                want.pop();
                let got = out.to_vec().unwrap();
                assert_eq!(&got[..255], &want[..], "{backend}, {elems} elements");
            } else {
                assert_eq!(out.to_vec().unwrap(), want, "{backend}, {elems} elements");
            }
        }
        eprintln!("{backend}: IR kernel with dynamic shared memory: ok");
    }
}
