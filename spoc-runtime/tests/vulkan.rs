//! The Vulkan backend on whatever Vulkan device the machine has (lavapipe here and in CI, the
//! NVIDIA driver on a GPU machine). Nothing here assumes lavapipe: limits come from the device.
//!
//! Without a Vulkan device every test prints why and passes, unless `SPOC_REQUIRE_BACKENDS`
//! names `vulkan` (comma-separated, case-insensitive): then a missing backend fails.
#![cfg(feature = "vulkan")]

mod backend_suite;
mod support;

use backend_suite::*;

spoc_testkit::backend_tests! {
    backends { vulkan: "Vulkan" }
    tests {
        memory_round_trips,
        generated_kernels_match_the_interpreter,
        launch_limits_are_errors,
    }
}

use spoc_ir::{Kernel, Type};
use spoc_runtime::backend::{
    Code, CompileOptions, Compiler, DeviceMemory, Platform, SourceLang, Target,
};
use spoc_runtime::executor::Executor;
use spoc_runtime::vulkan::{spirv_words_to_text, DeviceType, FeatureMask, VulkanBackend};
use spoc_runtime::{all_devices, dims1d, init_device, run, Arg, Device, Error, LaunchProblem};
use spoc_testkit::devices::best_device_or_skip;
use support::{run_source, saxpy_args, DYN_ROTATE, IOTA, TAKES_I64};

/// The best Vulkan device, or `None` (printed) when Vulkan is unavailable.
///
/// # Panics
/// If Vulkan is unavailable and `SPOC_REQUIRE_BACKENDS` names it.
fn vulkan(test: &str) -> Option<Device> {
    best_device_or_skip("Vulkan", test, |e| {
        let why = VulkanBackend::new().unavailable_reason();
        why.unwrap_or_else(|| e.to_string())
    })
}

/// The registered backend's view of `dev`.
fn props(dev: &Device) -> spoc_runtime::vulkan::VulkanDeviceProps {
    // The registry's backend is a VulkanBackend; a fresh one enumerates the same devices in
    // the same order.
    VulkanBackend::new()
        .device_properties(dev.backend_id)
        .expect("device properties")
}

/// `x` values in [-64, 64) with few mantissa bits, so `a * x + y` is exact in f32 whether or
/// not a compiler fuses it (external kernels carry no NoContraction decoration).
fn exact_values(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 37) % 256) as f32 * 0.5 - 64.0)
        .collect()
}

/// Launches are batched (timeline semaphores where the device has them; the fence fallback and
/// staging transfers are `vulkan_staging.rs`'s).
#[test]
fn batched_launches_keep_order_arguments_and_buffers() {
    let Some(dev) = vulkan("batched_launches_keep_order_arguments_and_buffers") else {
        return;
    };
    println!("timeline semaphores: {}", props(&dev).timeline_semaphore);
    support::batched_launches_keep_order_arguments_and_buffers(&dev);
}

#[test]
fn device_is_described_and_ranked() {
    let Some(dev) = vulkan("device_is_described_and_ranked") else {
        return;
    };
    let caps = dev.capabilities;
    let p = props(&dev);
    println!("Vulkan device: {dev} {caps:?}\n{p:#?}");
    assert_eq!(dev.framework, "Vulkan");
    assert_eq!(p.name, *dev.name);
    assert!(p.api_version >= (1, 1, 0), "{:?}", p.api_version);
    assert_eq!(caps.max_threads_per_block, p.max_invocations);
    assert_eq!(caps.max_block_dims, p.max_workgroup_size);
    assert_eq!(caps.max_grid_dims, p.max_workgroup_count);
    assert_eq!(caps.shared_mem_per_block, p.shared_memory as usize);
    assert!(
        caps.shared_mem_per_block >= 16384,
        "Vulkan guarantees 16 KiB"
    );
    assert!(p.max_invocations >= 128 && p.max_workgroup_count.iter().all(|&c| c >= 65535));
    assert!(
        p.max_storage_buffer_range >= 1 << 27,
        "Vulkan guarantees 128 MiB"
    );
    assert!(!p.heaps.is_empty() && caps.total_memory > 0);
    assert_eq!(caps.fp64, p.shader_float64);
    assert_eq!(caps.is_cpu, p.device_type == DeviceType::Cpu);
    assert_eq!(caps.discrete, p.device_type == DeviceType::DiscreteGpu);
    assert!(!(caps.is_cpu && caps.is_gpu));
    if p.subgroups_in_compute {
        assert!(p.subgroup_ops.contains(&"basic"), "{:?}", p.subgroup_ops);
        assert!(p.subgroup_size >= 1 && p.subgroup_size.is_power_of_two());
    }
    let backend = dev.backend();
    assert!(backend.is_available());
    assert!(backend.version() >= (1, 1, 0), "{:?}", backend.version());
    assert!(backend.compile_needs_block());
    assert_eq!(
        backend.supported_source_langs(),
        &[SourceLang::SpirV, SourceLang::Glsl]
    );
    // A CPU Vulkan device (lavapipe) ranks below Native; a GPU above it.
    let all = all_devices(None).unwrap();
    let native = all.iter().position(|d| d.framework == "Native").unwrap();
    let vk = all.iter().position(|d| d.framework == "Vulkan").unwrap();
    if caps.is_cpu {
        assert!(native < vk, "{all:?}");
        assert_ne!(init_device(None).unwrap().framework, "Vulkan");
    } else {
        assert!(vk < native, "{all:?}");
    }
}

#[test]
fn buffers_beyond_the_storage_buffer_range_are_refused() {
    let Some(dev) = vulkan("buffers_beyond_the_storage_buffer_range_are_refused") else {
        return;
    };
    let p = props(&dev);
    let limit = p.max_storage_buffer_range.min(p.max_allocation);
    // Nothing is allocated: the size is checked first.
    let e = dev
        .backend()
        .alloc(dev.backend_id, limit as usize + 1)
        .unwrap_err();
    match &e {
        Error::Memory { backend, message } => {
            assert_eq!(backend, "Vulkan");
            assert!(message.contains("maxStorageBufferRange"), "{message}");
            assert!(message.contains(&limit.to_string()), "{message}");
        }
        other => panic!("expected a memory error, got {other}"),
    }
    // Through the typed API too (f32 elements: one more than fits), refused by the runtime
    // with the device's limit before the backend is asked; and `check_buffers` says so first.
    let n = (limit / 4 + 1) as usize;
    let e = dev.alloc::<f32>(n).unwrap_err();
    assert!(
        matches!(&e, Error::BufferTooLarge { limit: l, .. } if *l == limit),
        "{e}"
    );
    assert_eq!(dev.capabilities.max_buffer_bytes, limit);
    assert!(dev.check_buffers(&[limit]).is_ok());
    assert!(dev.check_buffers(&[limit + 1]).is_err());
}

#[test]
fn saxpy_through_run_source_spirv_and_glsl() {
    let Some(dev) = vulkan("saxpy_through_run_source_spirv_and_glsl") else {
        return;
    };
    let n = 1000usize;
    let x = exact_values(n);
    let y0: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    let xb = dev.upload(&x).unwrap();
    let mut yb = dev.upload(&y0).unwrap();

    // SPIR-V: our generator's saxpy, used as an external module (same binding ABI).
    let src = spoc_codegen::generate_source(
        Target::Vulkan,
        &support::saxpy_kernel(),
        Some([64, 1, 1]),
        &[],
    )
    .unwrap()
    .unwrap();
    let Code::SpirV(words) = &src.code else {
        panic!("SPIR-V expected")
    };
    let text = spirv_words_to_text(words);
    let mut want = y0.clone();
    for round in 0..2 {
        // The second round builds nothing (cached) and applies saxpy to the first's output.
        run_source(
            &dev,
            (&text, SourceLang::SpirV, &src.entry),
            dims1d(16),
            dims1d(64),
            &saxpy_args(2.0, &xb, &mut yb),
        )
        .unwrap();
        want = x.iter().zip(&want).map(|(x, y)| 2.0 * x + y).collect();
        assert_eq!(yb.to_vec().unwrap(), want, "SPIR-V round {round}");
    }
    // The declared workgroup size must be the launch's block.
    let e = run_source(
        &dev,
        (&text, SourceLang::SpirV, &src.entry),
        dims1d(32),
        dims1d(32),
        &saxpy_args(2.0, &xb, &mut yb),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidLaunch { problem: LaunchProblem::Rejected { message }, .. } if message.contains("workgroup size")),
        "{e}"
    );
    // A missing entry point names the ones there are.
    let e = run_source(
        &dev,
        (&text, SourceLang::SpirV, "nope"),
        dims1d(1),
        dims1d(64),
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Compile { message, .. } if message.contains(&src.entry)),
        "{e}"
    );

    // GLSL, with two scalars (a, n) in the scalar block.
    const SAXPY_GLSL: &str = r#"
#version 450
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer Params { float a; uint n; } p;
layout(set = 0, binding = 1) readonly buffer X { float x[]; };
layout(set = 0, binding = 2) buffer Y { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n && i < uint(y.length())) {
        y[i] = p.a * x[i] + y[i];
    }
}
"#;
    let mut yb = dev.upload(&y0).unwrap();
    run_source(
        &dev,
        (SAXPY_GLSL, SourceLang::Glsl, "saxpy_glsl"),
        dims1d(8),
        dims1d(128),
        &[
            Arg::F32(-0.5),
            Arg::U32(900),
            Arg::Buffer(xb.raw()),
            Arg::BufferMut(yb.raw_mut()),
        ],
    )
    .unwrap();
    let want: Vec<f32> = (0..n)
        .map(|i| if i < 900 { -0.5 * x[i] + y0[i] } else { y0[i] })
        .collect();
    assert_eq!(yb.to_vec().unwrap(), want);

    // GLSL errors carry the front end's diagnostics.
    let e = run_source(
        &dev,
        (
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared = 1; }\n",
            SourceLang::Glsl,
            "broken",
        ),
        dims1d(1),
        dims1d(1),
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Compile { message, .. } if message.contains("undeclared")),
        "{e}"
    );
}

/// `takes_f64(v: f64, xs: &[f64])`, the f64 twin of the support kernel `takes_i64`.
fn takes_f64_kernel() -> Kernel {
    let mut k = support::takes_i64_kernel();
    k.name = "takes_f64".into();
    k.params[0].ty = Type::F64;
    k.vars[0].ty = Type::F64;
    k.params[1].ty = Type::global_array(Type::F64);
    k.vars[1].ty = Type::global_array(Type::F64);
    spoc_ir::validate(&k).unwrap();
    k
}

#[test]
fn missing_device_features_are_refused_before_anything_runs() {
    if vulkan("missing_device_features_are_refused_before_anything_runs").is_none() {
        return;
    }
    let opts = CompileOptions {
        block: Some(dims1d(64)),
        ..CompileOptions::default()
    };
    // f64 on a device without shaderFloat64: refused by code generation.
    let no_fp64 = VulkanBackend::with_feature_mask(FeatureMask {
        fp64: true,
        ..FeatureMask::default()
    });
    assert!(no_fp64.is_available());
    assert!(!no_fp64.device_properties(0).unwrap().shader_float64);
    assert!(!no_fp64.capabilities(0).unwrap().fp64);
    let k = support::valid(takes_f64_kernel());
    let e = no_fp64.generate_source(&k, opts.block, &[]).unwrap_err();
    match &e {
        Error::FeatureNotSupported { backend, feature } => {
            assert_eq!(backend, "Vulkan");
            assert!(feature.contains("shaderFloat64"), "{feature}");
        }
        other => panic!("expected FeatureNotSupported, got {other}"),
    }
    // The full device compiles it (when it has f64).
    let full = VulkanBackend::new();
    if full.device_properties(0).unwrap().shader_float64 {
        let src = full.generate_source(&k, opts.block, &[]).unwrap().unwrap();
        full.compile(0, &k, &src, &opts).unwrap();
    }

    // i64 without shaderInt64: code generation has no flag for it; the SPIR-V's Int64
    // capability is checked before any Vulkan object is made.
    let no_int64 = VulkanBackend::with_feature_mask(FeatureMask {
        int64: true,
        ..FeatureMask::default()
    });
    let k = support::valid(support::takes_i64_kernel());
    let src = no_int64
        .generate_source(&k, opts.block, &[])
        .unwrap()
        .unwrap();
    let e = no_int64.compile(0, &k, &src, &opts).unwrap_err();
    match &e {
        Error::FeatureNotSupported { feature, .. } => {
            assert!(
                feature.contains("Int64") && feature.contains("shaderInt64"),
                "{feature}"
            )
        }
        other => panic!("expected FeatureNotSupported, got {other}"),
    }
    assert_eq!(no_int64.cached_modules(), 0);

    // External SPIR-V declaring a capability the device lacks: f64 atomic add where the
    // device has none (lavapipe), else i64 on the masked backend.
    let iota = spoc_codegen::generate_source(
        Target::Vulkan,
        &support::iota_kernel("iota", true),
        Some([64, 1, 1]),
        &[],
    )
    .unwrap()
    .unwrap();
    let Code::SpirV(words) = &iota.code else {
        panic!("SPIR-V expected")
    };
    let dev = init_device(Some("Vulkan")).unwrap();
    let mut out = dev.alloc::<u32>(64).unwrap();
    let lacks_f64_add = !full.device_properties(0).unwrap().buffer_float64_atomic_add;
    // OpCapability AtomicFloat64AddEXT (6034) or Int64 (11), after the header.
    let cap = if lacks_f64_add { 6034 } else { 11 };
    let mut patched = words[..5].to_vec();
    patched.extend([(2 << 16) | 17, cap]);
    patched.extend(&words[5..]);
    // The refusal comes before the arguments are looked at (`out` belongs to the registered
    // backend, not to these two).
    let backend: &dyn spoc_runtime::Backend = if lacks_f64_add { &full } else { &no_int64 };
    let e = backend
        .run_source(
            0,
            &spirv_words_to_text(&patched),
            SourceLang::SpirV,
            &iota.entry,
            dims1d(1),
            dims1d(64),
            0,
            &[Arg::U32(1), Arg::BufferMut(out.raw_mut())],
        )
        .unwrap_err();
    match &e {
        Error::FeatureNotSupported { feature, .. } => assert!(
            feature.contains(if lacks_f64_add {
                "AtomicFloat64AddEXT"
            } else {
                "Int64"
            }),
            "{feature}"
        ),
        other => panic!("expected FeatureNotSupported, got {other}"),
    }
    assert!(out.to_vec().unwrap().iter().all(|&v| v == 0), "nothing ran");
}

/// Launches through `run_source` are checked too (the limits every launch path checks are
/// `backend_suite::launch_limits_are_errors`).
#[test]
fn run_source_launch_checks() {
    let Some(dev) = vulkan("run_source_launch_checks") else {
        return;
    };
    let caps = dev.capabilities;
    // The backend checks launches made directly, too.
    let e = run_source(
        &dev,
        (
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
            SourceLang::Glsl,
            "empty",
        ),
        dims1d(1),
        dims1d(caps.max_block_dims[0] + 1),
        &[],
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
}

#[test]
fn wrong_arguments_are_refused() {
    let Some(dev) = vulkan("wrong_arguments_are_refused") else {
        return;
    };
    // A buffer of another backend.
    let native = init_device(Some("Native")).unwrap();
    let nb = native.alloc::<u32>(4).unwrap();
    let mut vb = dev.alloc::<u32>(4).unwrap();
    let e = run_source(&dev, ("#version 450\nlayout(local_size_x = 1) in;\nlayout(set=0,binding=1) buffer B { uint b[]; };\nvoid main() { b[0] = 1u; }\n", SourceLang::Glsl, "one"), dims1d(1), dims1d(1), &[Arg::Buffer(nb.raw())])
        .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    // A usize that does not fit the kernel's 32 bits.
    let e = run(
        &dev,
        &IOTA,
        vec![Arg::Usize(usize::MAX), (&mut vb).into()],
        dims1d(1),
        dims1d(4),
        0,
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    // Type mismatch, caught by the runtime.
    let e = run(
        &dev,
        &TAKES_I64,
        vec![Arg::I32(1), (&vb).into()],
        dims1d(1),
        dims1d(1),
        0,
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
}

#[test]
fn events_and_profiling_time_kernels() {
    let Some(dev) = vulkan("events_and_profiling_time_kernels") else {
        return;
    };
    if props(&dev).timestamp_valid_bits == 0 {
        eprintln!("SKIPPED events_and_profiling_time_kernels: no timestamps on {dev}");
        return;
    }
    let backend = dev.backend();
    let start = backend.create_event(dev.backend_id).unwrap();
    let end = backend.create_event(dev.backend_id).unwrap();
    // Not recorded yet.
    assert!(backend.event_elapsed_ms(&start, &end).is_err());
    let stream = backend.create_stream(dev.backend_id).unwrap();
    let mut out = dev.alloc::<u32>(1 << 16).unwrap();
    backend.record_event(&start, Some(&stream)).unwrap();
    backend.enable_profiling();
    run(
        &dev,
        &IOTA,
        vec![Arg::U32(3), (&mut out).into()],
        dims1d(256),
        dims1d(256),
        0,
    )
    .unwrap();
    backend.disable_profiling();
    backend.record_event(&end, None).unwrap();
    backend.synchronize_stream(&stream).unwrap();
    let ms = backend.event_elapsed_ms(&start, &end).unwrap();
    println!("iota over 65536 elements: {ms} ms between events");
    assert!((0.0..60_000.0).contains(&ms), "{ms}");
    let got = out.to_vec().unwrap();
    assert_eq!(got[65535], 3 + 65535);
    backend.destroy_event(start).unwrap();
    backend.destroy_event(end).unwrap();
    backend.destroy_stream(stream).unwrap();

    // Profiling keeps the last kernel's device time (a backend of our own, to read it).
    let own = VulkanBackend::new();
    assert_eq!(own.last_kernel_ms(), None);
    const SPIN: &str = "#version 450\nlayout(local_size_x = 64) in;\n\
        shared float s[64];\n\
        void main() { float v = float(gl_LocalInvocationID.x);\n\
        for (int i = 0; i < 2000; i++) { v = v * 0.999 + 1.0; }\n\
        s[gl_LocalInvocationID.x] = v; }\n";
    let launch = || {
        own.run_source(
            0,
            SPIN,
            SourceLang::Glsl,
            "spin",
            dims1d(64),
            dims1d(64),
            0,
            &[],
        )
        .unwrap()
    };
    launch();
    assert_eq!(own.last_kernel_ms(), None, "profiling is off");
    own.enable_profiling();
    launch();
    own.disable_profiling();
    let ms = own.last_kernel_ms().expect("a profiled kernel's time");
    println!("spin: {ms} ms on the device");
    assert!(ms > 0.0 && ms < 60_000.0, "{ms}");
    assert_eq!(own.cached_modules(), 1, "one module for both launches");
}

#[test]
fn a_backend_without_a_loader_is_unavailable_not_a_panic() {
    // Whatever the machine: asking never panics, and the answers agree.
    let b = VulkanBackend::new();
    match b.unavailable_reason() {
        None => {
            assert!(b.is_available());
            assert!(!b.devices().unwrap().is_empty());
        }
        Some(why) => {
            assert!(!b.is_available());
            assert!(!why.is_empty());
            assert!(b.devices().is_err() || b.devices().unwrap().is_empty());
            assert!(b.alloc(0, 16).is_err());
        }
    }
}

#[test]
fn shared_memory_sized_at_launch_is_a_specialization() {
    let Some(dev) = vulkan("shared_memory_sized_at_launch_is_a_specialization") else {
        return;
    };
    let (blocks, block) = (3u32, 64u32);
    let n = (blocks * block) as usize;
    // Two lengths, then the first again (its pipeline is kept): len() reports each.
    for extra in [0usize, 10, 0] {
        let mut out = dev.alloc::<u32>(n).unwrap();
        let mut lens = dev.alloc::<u32>(n).unwrap();
        run(
            &dev,
            &DYN_ROTATE,
            vec![(&mut out).into(), (&mut lens).into()],
            dims1d(blocks),
            dims1d(block),
            (block as usize + extra) * 4 + 3,
        )
        .unwrap();
        let want: Vec<u32> = (0..n as u32)
            .map(|g| g / block * block + (g % block + 1) % block)
            .collect();
        assert_eq!(out.to_vec().unwrap(), want, "extra {extra}");
        assert!(
            lens.to_vec()
                .unwrap()
                .iter()
                .all(|&l| l == block + extra as u32),
            "extra {extra}"
        );
    }
    // Less than one element is refused before anything runs.
    let mut out = dev.alloc::<u32>(n).unwrap();
    let mut lens = dev.alloc::<u32>(n).unwrap();
    let e = run(
        &dev,
        &DYN_ROTATE,
        vec![(&mut out).into(), (&mut lens).into()],
        dims1d(blocks),
        dims1d(block),
        3,
    )
    .unwrap_err();
    spoc_testkit::assert_matches!(
        e,
        Error::InvalidLaunch {
            problem: LaunchProblem::Rejected { .. },
            ..
        }
    );
}
