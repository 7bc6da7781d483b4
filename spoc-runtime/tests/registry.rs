//! The backend registry: priorities and ranks, family names, `SPOC_DISABLE_*` switches, errors,
//! global ids.

mod support;

use spoc_runtime::registry::{disable_var, priority};
use spoc_runtime::{
    all_devices, device_is_of_backend, init_device, register_backend, Capabilities, Device, Error,
};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use support::{register, TestBackend};

/// The registry and the environment are process-global: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn gpu() -> Capabilities {
    Capabilities {
        is_cpu: false,
        is_gpu: true,
        discrete: true,
        ..Capabilities::cpu(100, 1 << 30)
    }
}

/// A GPU family with two refinements, an OpenCL-like backend on a CPU, an empty backend and an
/// unavailable one.
fn setup() -> [Arc<TestBackend>; 5] {
    // The real GPU-class backends (present when their drivers are: PoCL, lavapipe, CUDA) would
    // join the ranking; these tests rank the test backends only.
    for real in ["CUDA", "HIP", "Vulkan", "OpenCL"] {
        std::env::set_var(disable_var(real), "1");
    }
    [
        register("Acme/PTX", priority::CUDA_PTX, || {
            TestBackend::new("Acme/PTX", 2).with_caps(gpu())
        }),
        register("Acme/C", priority::CUDA_C, || {
            TestBackend::new("Acme/C", 1).with_caps(gpu())
        }),
        register("CpuCl", priority::OPENCL, || TestBackend::new("CpuCl", 1)),
        register("Empty", 10, || TestBackend::new("Empty", 0)),
        register("Gone", 1000, || {
            let b = TestBackend::new("Gone", 1).with_caps(gpu());
            b.available.store(false, Ordering::SeqCst);
            b
        }),
    ]
}

/// Runs `f` with the environment variables `vars` set to "1", then removes them.
fn with_env<R>(vars: &[&str], f: impl FnOnce() -> R) -> R {
    for v in vars {
        std::env::set_var(v, "1");
    }
    let r = f();
    for v in vars {
        std::env::remove_var(v);
    }
    r
}

fn names(devs: &[Device]) -> Vec<&'static str> {
    devs.iter().map(|d| d.framework).collect()
}

#[test]
fn devices_are_ordered_by_rank() {
    let _g = serial();
    setup();
    let best = init_device(None).unwrap();
    assert_eq!((best.framework, best.backend_id), ("Acme/PTX", 0));
    let all = all_devices(None).unwrap();
    // GPU backends, then Native, then a CPU device of a GPU-class backend, then the
    // Interpreter; "Empty" has no device and "Gone" is unavailable.
    assert_eq!(
        names(&all),
        [
            "Acme/PTX",
            "Acme/PTX",
            "Acme/C",
            "Native",
            "CpuCl",
            "Empty",
            "Interpreter"
        ]
        .into_iter()
        .filter(|n| *n != "Empty")
        .collect::<Vec<_>>()
    );
    assert_eq!((all[0].backend_id, all[1].backend_id), (0, 1));
    // Ids: unique, and stable from one query to the next.
    let mut ids: Vec<usize> = all.iter().map(|d| d.id).collect();
    let again: Vec<usize> = all_devices(None).unwrap().iter().map(|d| d.id).collect();
    assert_eq!(ids, again);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), all.len());
}

#[test]
fn family_names_select_every_refinement() {
    let _g = serial();
    setup();
    assert_eq!(init_device(Some("Acme")).unwrap().framework, "Acme/PTX");
    assert_eq!(init_device(Some("acme/c")).unwrap().framework, "Acme/C");
    let acme = all_devices(Some("ACME")).unwrap();
    assert_eq!(names(&acme), ["Acme/PTX", "Acme/PTX", "Acme/C"]);
    for d in &acme {
        assert!(device_is_of_backend("Acme", d));
        assert_eq!(device_is_of_backend("Acme/C", d), d.framework == "Acme/C");
        assert!(!device_is_of_backend("Native", d));
    }
    let native = init_device(Some("Native")).unwrap();
    assert!(device_is_of_backend("native", &native));
    assert!(!device_is_of_backend("Nat", &native));
}

#[test]
fn disable_switches_hide_backends_and_gpus() {
    let _g = serial();
    setup();
    assert_eq!(disable_var("Acme/PTX"), "SPOC_DISABLE_ACME_PTX");
    let best = |vars: &[&str]| with_env(vars, || init_device(None).map(|d| d.framework));
    assert_eq!(best(&["SPOC_DISABLE_ACME_PTX"]).unwrap(), "Acme/C");
    assert_eq!(best(&["SPOC_DISABLE_ACME"]).unwrap(), "Native");
    assert_eq!(best(&["SPOC_DISABLE_GPU"]).unwrap(), "Native");
    assert_eq!(
        best(&["SPOC_DISABLE_GPU", "SPOC_DISABLE_NATIVE"]).unwrap(),
        "CpuCl"
    );
    assert_eq!(
        best(&[
            "SPOC_DISABLE_GPU",
            "SPOC_DISABLE_NATIVE",
            "SPOC_DISABLE_CPUCL"
        ])
        .unwrap(),
        "Interpreter"
    );
    // "0", "false", "off" and the empty string leave a backend on.
    for off in ["0", "false", "off", ""] {
        std::env::set_var("SPOC_DISABLE_ACME_PTX", off);
        assert_eq!(init_device(None).unwrap().framework, "Acme/PTX", "{off:?}");
    }
    std::env::remove_var("SPOC_DISABLE_ACME_PTX");
    // Asking for a disabled backend says why.
    let r = with_env(&["SPOC_DISABLE_ACME"], || init_device(Some("Acme")));
    match r {
        Err(Error::BackendUnavailable { backend, reason }) => {
            assert_eq!(backend, "Acme/PTX, Acme/C");
            assert!(reason.contains("SPOC_DISABLE_ACME"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        with_env(&["SPOC_DISABLE_ACME"], || all_devices(Some("Acme")))
            .unwrap()
            .is_empty()
    );
    let r = with_env(&["SPOC_DISABLE_GPU"], || init_device(Some("Acme/C")));
    assert!(matches!(r, Err(Error::NoDevice { .. })), "{r:?}");
    // Switches are read at every query: everything is back.
    assert_eq!(init_device(None).unwrap().framework, "Acme/PTX");
}

#[test]
fn errors_name_what_is_missing() {
    let _g = serial();
    setup();
    match init_device(Some("Nope")) {
        Err(Error::BackendNotFound { name, registered }) => {
            assert_eq!(name, "Nope");
            for b in ["Native", "Interpreter", "Acme/PTX"] {
                assert!(registered.contains(b), "{registered}");
            }
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        all_devices(Some("Nope")),
        Err(Error::BackendNotFound { .. })
    ));
    match init_device(Some("Empty")) {
        Err(Error::NoDevice { framework }) => assert_eq!(framework.as_deref(), Some("Empty")),
        other => panic!("{other:?}"),
    }
    match init_device(Some("Gone")) {
        Err(Error::BackendUnavailable { backend, reason }) => {
            assert_eq!(backend, "Gone");
            assert!(reason.contains("not available"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let dup = register_backend(Arc::new(TestBackend::new("native", 1)), 5);
    assert!(
        matches!(&dup, Err(Error::BackendAlreadyRegistered { name }) if name == "native"),
        "{dup:?}"
    );
}
