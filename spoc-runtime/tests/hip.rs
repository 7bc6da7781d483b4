//! The HIP backend without an AMD GPU (none is reachable where this runs): it builds against
//! the HIP headers and libamdhip64, registers at priority 380, reports itself unavailable with
//! the reason, refuses every device operation with an error (never a panic), and still
//! generates HIP C.
//!
//! If an AMD GPU is present, the unavailability checks are skipped (printing why) and the
//! device is described instead.
#![cfg(feature = "hip")]

mod support;

use spoc_runtime::backend::{Compiler, DeviceMemory, Platform, Target};
use spoc_runtime::executor::Executor;
use spoc_runtime::hip::{HipBackend, NAME};
use spoc_runtime::{dims1d, init_device, registry, Error};

#[test]
fn registered_with_its_priority() {
    let all = registry::backends();
    let hip = all.iter().find(|(b, _)| b.name() == NAME);
    let (b, prio) = hip.expect("HIP is registered with the `hip` feature");
    assert_eq!(*prio, registry::priority::HIP);
    assert_eq!(*prio, 380);
    assert_eq!(b.codegen_target(), Some(Target::Hip));
}

#[test]
fn unavailable_without_a_device_and_nothing_panics() {
    let b = HipBackend::new();
    if b.is_available() {
        let devs = b.devices().expect("devices");
        eprintln!("skipped: an AMD GPU is present: {devs:?}");
        assert!(!devs.is_empty());
        return;
    }
    let why = b.unavailable_reason().expect("a reason when unavailable");
    eprintln!("HIP unavailable: {why}");
    assert!(
        why.contains("hipGetDeviceCount") || why.contains("no device"),
        "{why}"
    );
    assert_eq!(b.version(), (0, 0, 0));
    let unavailable = |e: Error| match e {
        Error::BackendUnavailable { backend, reason } => {
            assert_eq!(backend, NAME);
            assert_eq!(reason, why);
        }
        other => panic!("expected BackendUnavailable, got {other:?}"),
    };
    unavailable(b.devices().unwrap_err());
    unavailable(b.capabilities(0).unwrap_err());
    unavailable(b.alloc(0, 64).unwrap_err());
    unavailable(b.create_stream(0).unwrap_err());
    unavailable(b.create_event(0).unwrap_err());
    unavailable(b.synchronize(0).unwrap_err());
    unavailable(b.arch(0).unwrap_err());
    let k = support::valid(support::saxpy_kernel());
    let src = b.generate_source(&k, None, &[]).unwrap().unwrap();
    unavailable(b.compile(0, &k, &src, &Default::default()).unwrap_err());
    unavailable(
        b.run_source(
            0,
            "extern \"C\" __global__ void k() {}",
            spoc_runtime::SourceLang::HipC,
            "k",
            dims1d(1),
            dims1d(1),
            0,
            &[],
        )
        .unwrap_err(),
    );
    // Unsupported languages are refused as such, before any device is looked at.
    assert!(matches!(
        b.run_source(
            0,
            "",
            spoc_runtime::SourceLang::Ptx,
            "k",
            dims1d(1),
            dims1d(1),
            0,
            &[]
        ),
        Err(Error::FeatureNotSupported { .. })
    ));

    match init_device(Some("HIP")) {
        Err(Error::BackendUnavailable { backend, reason }) => {
            assert_eq!(backend, NAME);
            assert!(reason.contains("not available"), "{reason}");
        }
        other => panic!("init_device(HIP) should be unavailable, got {other:?}"),
    }
    // No `init_device(None)` here: it would start PoCL, whose LLVM and hiprtc's (comgr's)
    // abort the process when both are loaded (another test here compiles with hiprtc).
}

#[test]
fn generates_hip_c_without_a_device() {
    let b = HipBackend::new();
    let src = b
        .generate_source(
            &support::valid(support::saxpy_kernel()),
            Some(dims1d(64)),
            &[],
        )
        .expect("HIP C generation")
        .expect("a source");
    assert_eq!(src.target, Target::Hip);
    let text = src.text().expect("HIP C is text");
    assert!(text.contains("__global__"), "{text}");
    assert!(text.contains(&src.entry), "{text}");
    assert!(
        text.contains("unsigned int"),
        "buffer length parameters:\n{text}"
    );
    assert!(text.contains("fp contract(off)"), "{text}");
}

#[test]
fn compile_options_name_the_arch_and_forbid_fma_contraction() {
    assert_eq!(
        HipBackend::compile_options("gfx1100", &["-O2".into()]),
        ["--offload-arch=gfx1100", "-ffp-contract=off", "-O2"]
    );
}

/// hiprtc needs no device: the HIP C generated for the support kernels compiles to an AMDGPU
/// code object (ELF) for a wave64 (CDNA2) and a wave32 (RDNA2) architecture. (Not gfx1100:
/// Debian's hiprtc 5.2 does not know it and crashes, SIGSEGV, instead of reporting an error.)
#[test]
fn generated_hip_c_compiles_with_hiprtc_for_amd_archs() {
    let b = HipBackend::new();
    let kernels = [
        support::saxpy_kernel(),
        support::iota_kernel("iota", true),
        support::flags_kernel(),
        support::barrier_kernel(),
        support::takes_i64_kernel(),
    ]
    .map(support::valid);
    for k in &kernels {
        let src = b.generate_source(k, None, &[]).unwrap().unwrap();
        let text = src.text().unwrap();
        for arch in ["gfx90a", "gfx1030"] {
            let image = HipBackend::compile_to_code_object(text, &src.entry, arch, &[])
                .unwrap_or_else(|e| panic!("{} for {arch}: {e}\n{text}", k.name));
            assert!(
                image.len() > 64,
                "{} for {arch}: {} bytes",
                k.name,
                image.len()
            );
            assert_eq!(&image[..4], b"\x7fELF", "{} for {arch}", k.name);
        }
    }
}

#[test]
fn hiprtc_errors_carry_the_log() {
    let err = HipBackend::compile_to_code_object(
        "extern \"C\" __global__ void broken(float* x) { x[0] = undeclared_name; }",
        "broken",
        "gfx90a",
        &[],
    )
    .unwrap_err();
    match err {
        Error::Compile {
            backend,
            kernel,
            message,
        } => {
            assert_eq!(backend, NAME);
            assert_eq!(kernel, "broken");
            assert!(message.contains("--offload-arch=gfx90a"), "{message}");
            assert!(message.contains("-ffp-contract=off"), "{message}");
            assert!(message.contains("undeclared_name"), "no log: {message}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}
