//! Finding devices: the best one, every one, and retiring the global id space.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::registry;

impl Device {
    /// Recovers devices that a kernel fault left unusable, and retires the global id space.
    ///
    /// - A device whose context a kernel fault broke (a CUDA illegal address: every call then
    ///   returns [`Error::KernelFault`]) gets a fresh context
    ///   ([`Platform::recover`](crate::Platform::recover)); its buffers, modules, streams and
    ///   events are lost with the old one, and each refuses further use with
    ///   [`Error::ContextReset`]. A device that cannot be recovered keeps failing (the
    ///   reason is logged through `tracing`): CUDA drivers refuse a new context in the process
    ///   after an illegal address or a trap (measured on the H200, driver 580; CUDA documents
    ///   such faults as needing a new process), and every later call on that device returns
    ///   [`Error::KernelFault`] saying so.
    /// - Devices obtained afterwards get fresh ids (ids are never reused), the runtime's kernel
    ///   memo is dropped, compiles in flight fail with [`Error::DeviceDestroyedDuringBuild`],
    ///   and `Device` values obtained before fail with [`Error::DeviceReset`] on compile and
    ///   launch.
    ///
    /// Healthy devices, their memory and their caches are untouched: buffers allocated before
    /// stay valid and can be used with the new `Device` of the same hardware.
    pub fn reset() {
        for (backend, _) in registry::backends() {
            if let Err(e) = backend.recover() {
                tracing::warn!("Device::reset: {} could not recover: {e}", backend.name());
            }
        }
        registry::reset();
    }
}

/// The environment variable that names the backend [`init_device`]`(None)` picks.
pub const DEVICE_VAR: &str = "SPOC_DEVICE";

/// The best available device, by backend priority (see [`crate::registry`]); with
/// `framework`, the best device of that backend (or family: `"CUDA"` matches `"CUDA/PTX"` and
/// `"CUDA/C"`, case-insensitive). Without `framework`, the environment variable `SPOC_DEVICE`
/// ([`DEVICE_VAR`]), when set and not empty, is the framework (`SPOC_DEVICE=Interpreter`); an
/// explicit `framework` wins over it.
///
/// # Errors
/// [`Error::BackendNotFound`] if no registered backend answers to `framework`;
/// [`Error::InvalidEnvironment`] if none answers to `SPOC_DEVICE` (the message lists the
/// registered backends), or a `SPOC_DISABLE_*` switch is neither on nor off;
/// [`Error::BackendUnavailable`] if all that answer are disabled or unavailable;
/// [`Error::NoDevice`] if none has a device.
pub fn init_device(framework: Option<&str>) -> Result<Device> {
    if framework.is_some() {
        return registry::best_device(framework);
    }
    match crate::env::text(DEVICE_VAR)? {
        None => registry::best_device(None),
        Some(name) => registry::best_device(Some(&name)).map_err(|e| match e {
            Error::BackendNotFound { registered, .. } => Error::InvalidEnvironment {
                variable: DEVICE_VAR.to_string(),
                value: name,
                expected: format!("a backend or family name (registered: {registered})"),
            },
            other => other,
        }),
    }
}

/// Every available device (of `framework`, if given), best first.
///
/// # Errors
/// [`Error::BackendNotFound`] if no registered backend answers to `framework`; a backend whose
/// enumeration fails is skipped when `framework` is `None` and reported otherwise.
pub fn all_devices(framework: Option<&str>) -> Result<Vec<Device>> {
    registry::devices(framework)
}
