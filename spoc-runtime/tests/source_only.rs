//! The Metal and WebGPU backends: registered, never available, generate MSL / WGSL, refuse
//! everything else with `FeatureNotSupported`.

mod support;

use spoc_runtime::backend::{Compiler, DeviceMemory, Platform, Target};
use spoc_runtime::executor::Executor;
use spoc_runtime::source_only::{SourceOnlyBackend, SourceOnlyKind, METAL_NAME, WEBGPU_NAME};
use spoc_runtime::{dims1d, init_device, registry, Error};

fn unsupported(err: Error, backend: &str) {
    match err {
        Error::FeatureNotSupported {
            backend: b,
            feature,
        } => {
            assert_eq!(b, backend);
            assert!(!feature.is_empty());
        }
        other => panic!("expected FeatureNotSupported from {backend}, got {other:?}"),
    }
}

/// The saxpy source of the backend of `kind`, after checking the backend's name and target.
fn saxpy_text(kind: SourceOnlyKind, name: &str, target: Target, what: &str) -> String {
    let b = SourceOnlyBackend::new(kind);
    assert_eq!(b.name(), name);
    assert_eq!(b.codegen_target(), Some(target));
    support::saxpy_source_text(&b, target, what).1
}

#[test]
fn metal_generates_msl() {
    let text = saxpy_text(SourceOnlyKind::Metal, METAL_NAME, Target::Metal, "MSL");
    assert!(text.contains("kernel void"), "not MSL:\n{text}");
    assert!(text.contains("metal"), "not MSL:\n{text}");
}

#[test]
fn webgpu_generates_wgsl() {
    let text = saxpy_text(SourceOnlyKind::WebGpu, WEBGPU_NAME, Target::WebGpu, "WGSL");
    assert!(text.contains("@compute"), "not WGSL:\n{text}");
    assert!(
        text.contains("@workgroup_size(64"),
        "block not embedded:\n{text}"
    );
}

#[test]
fn unavailable_and_refusing() {
    for kind in [SourceOnlyKind::Metal, SourceOnlyKind::WebGpu] {
        let b = SourceOnlyBackend::new(kind);
        let name = b.name();
        assert!(!b.is_available(), "{name} must not be available");
        assert!(b.devices().expect("devices").is_empty());
        unsupported(b.alloc(0, 16).unwrap_err(), name);
        unsupported(b.create_stream(0).unwrap_err(), name);
        unsupported(b.create_event(0).unwrap_err(), name);
        unsupported(b.synchronize(0).unwrap_err(), name);
        let k = support::valid(support::saxpy_kernel());
        let src = b
            .generate_source(&k, Some(dims1d(8)), &[])
            .unwrap()
            .unwrap();
        unsupported(
            b.compile(0, &k, &src, &Default::default()).unwrap_err(),
            name,
        );
        unsupported(
            b.run_source(
                0,
                "",
                spoc_runtime::SourceLang::Wgsl,
                "k",
                dims1d(1),
                dims1d(1),
                0,
                &[],
            )
            .unwrap_err(),
            name,
        );
    }
}

#[test]
fn registered_but_not_selectable() {
    let names: Vec<&str> = registry::backends().iter().map(|(b, _)| b.name()).collect();
    assert!(names.contains(&"Metal"), "{names:?}");
    assert!(names.contains(&"WebGPU"), "{names:?}");
    // Lowest priority: listed last.
    let last_two: Vec<_> = names[names.len() - 2..].to_vec();
    assert!(
        last_two.contains(&"Metal") && last_two.contains(&"WebGPU"),
        "{names:?}"
    );
    for name in ["Metal", "WebGPU"] {
        match init_device(Some(name)) {
            Err(Error::BackendUnavailable { backend, reason }) => {
                assert_eq!(backend, name);
                assert!(reason.contains("not available"), "{reason}");
            }
            other => panic!("init_device({name}) should be unavailable, got {other:?}"),
        }
    }
    // The default device is never one of them.
    if let Ok(d) = init_device(None) {
        let b = d.backend().name();
        assert!(b != "Metal" && b != "WebGPU", "{b}");
    }
}
