//! The OpenCL backend's module cache and device teardown, in a process of their own: a teardown
//! announces the device to the runtime, which fails the builds in flight for it (as it should),
//! so it must not race the other OpenCL tests.
//!
//! Skips (printing why) without OpenCL, unless `SPOC_REQUIRE_BACKENDS` names `opencl`.
#![cfg(feature = "opencl")]

mod support;

use spoc_runtime::cache::{on_device_teardown, remove_hook};
use spoc_runtime::opencl::OpenClBackend;
use spoc_runtime::{CompileOptions, Compiler, DeviceMemory, Error};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use support::SAXPY;

/// The first OpenCL device, or `None` (printed) when OpenCL is unavailable.
///
/// # Panics
/// If OpenCL is unavailable and `SPOC_REQUIRE_BACKENDS` names it.
fn opencl(test: &str) -> Option<spoc_runtime::Device> {
    spoc_testkit::devices::best_device_or_skip("OpenCL", test, |e| {
        let why = OpenClBackend::new().unavailable_reason();
        why.unwrap_or_else(|| e.to_string())
    })
}

#[test]
fn module_cache_and_teardown() {
    let Some(dev) = opencl("module_cache_and_teardown") else {
        return;
    };
    // A backend of our own, so that tearing it down does not disturb the other tests.
    let backend = OpenClBackend::new();
    let kernel = SAXPY.valid().unwrap();
    let hash = kernel.content_hash();
    let src = backend.generate_source(kernel, None, &[]).unwrap().unwrap();
    let opts = CompileOptions::default();
    let local = dev.backend_id;
    let a = backend
        .compile_cached(local, kernel, hash, &src, &opts)
        .unwrap();
    let b = backend
        .compile_cached(local, kernel, hash, &src, &opts)
        .unwrap();
    assert!(Arc::ptr_eq(&a, &b));

    let seen: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let hook = {
        let (seen, calls) = (seen.clone(), calls.clone());
        on_device_teardown(move |name, local| {
            calls.fetch_add(1, Ordering::SeqCst);
            seen.lock().unwrap().push((name.to_string(), local));
        })
    };
    backend.teardown_device(local).unwrap();
    assert!(remove_hook(hook));
    assert!(calls.load(Ordering::SeqCst) >= 1);
    assert!(seen
        .lock()
        .unwrap()
        .contains(&("OpenCL".to_string(), local)));
    let c = backend
        .compile_cached(local, kernel, hash, &src, &opts)
        .unwrap();
    assert!(!Arc::ptr_eq(&a, &c), "teardown must drop the cached module");
    // A device that does not exist.
    assert!(matches!(
        backend.teardown_device(usize::MAX),
        Err(Error::NoDevice { .. })
    ));
    assert!(matches!(
        backend.alloc(usize::MAX, 4),
        Err(Error::NoDevice { .. })
    ));
}
