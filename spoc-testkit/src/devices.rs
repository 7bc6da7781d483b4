//! Device loops: a test body run on every device of a backend, with the strictness of
//! [`crate::backends`] (a missing backend is a printed skip, or a failure when required).

use crate::backends;
use spoc_runtime::Device;

/// Every device of `backend`, or `None` after [`backends::skip`] when it has none.
///
/// # Panics
/// If `backend` has no device and `SPOC_REQUIRE_BACKENDS` names it.
pub fn devices_of(backend: &str, test: &str) -> Option<Vec<Device>> {
    match spoc_runtime::all_devices(Some(backend)) {
        Ok(devs) if !devs.is_empty() => Some(devs),
        Ok(_) => {
            // The registry lists no device; asking for one says why.
            let why = spoc_runtime::init_device(Some(backend))
                .err()
                .map_or_else(|| format!("no {backend} device"), |e| e.to_string());
            backends::skip(backend, test, &why);
            None
        }
        Err(e) => {
            backends::skip(backend, test, &e);
            None
        }
    }
}

/// The best device of `backend` (`spoc_runtime::init_device`), or `None` after
/// [`backends::skip`] when it has none.
///
/// # Panics
/// If `backend` has no device and `SPOC_REQUIRE_BACKENDS` names it.
pub fn best_device(backend: &str, test: &str) -> Option<Device> {
    best_device_or_skip(backend, test, |e| e.to_string())
}

/// [`best_device`], skipping with the reason `why` gives for the error (a backend's own
/// probe, such as its `unavailable_reason()`, says more than the registry's error).
///
/// # Panics
/// If `backend` has no device and `SPOC_REQUIRE_BACKENDS` names it.
pub fn best_device_or_skip(
    backend: &str,
    test: &str,
    why: impl FnOnce(&spoc_runtime::Error) -> String,
) -> Option<Device> {
    match spoc_runtime::init_device(Some(backend)) {
        Ok(dev) => Some(dev),
        Err(e) => {
            backends::skip(backend, test, &why(&e));
            None
        }
    }
}

/// Runs `f` on every device of `backend`, naming each on stderr (`<test> on <device>`).
///
/// # Panics
/// If `backend` has no device and `SPOC_REQUIRE_BACKENDS` names it; and whatever `f` panics
/// with.
pub fn each_device(backend: &str, test: &str, mut f: impl FnMut(&Device)) {
    for dev in devices_of(backend, test).unwrap_or_default() {
        eprintln!("{test} on {dev}");
        f(&dev);
    }
}

/// The Interpreter, the reference backend (always present).
///
/// # Panics
/// If it does not come up.
pub fn interpreter() -> Device {
    spoc_runtime::init_device(Some("Interpreter")).expect("the Interpreter always runs")
}

/// [`each_device`] with the Interpreter as second argument, for tests that compare a device
/// with the reference.
pub fn each_device_with_reference(backend: &str, test: &str, mut f: impl FnMut(&Device, &Device)) {
    let reference = interpreter();
    each_device(backend, test, |dev| f(dev, &reference));
}

/// A kernel fault's `(kernel, block, thread, message)`.
pub type Fault = (String, Option<[u32; 3]>, Option<[u32; 3]>, String);

/// The parts of the [`spoc_runtime::Error::KernelFault`] that `r` must be.
///
/// # Panics
/// If `r` is anything else (naming `what`, the device for instance).
#[track_caller]
pub fn kernel_fault(r: spoc_runtime::Result<()>, what: &dyn std::fmt::Display) -> Fault {
    match r {
        Err(spoc_runtime::Error::KernelFault {
            kernel,
            block,
            thread,
            message,
        }) => (kernel, block, thread, message),
        other => panic!("{what}: expected a kernel fault, got {other:?}"),
    }
}
