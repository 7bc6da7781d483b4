//! The part every driver-backed GPU backend (CUDA, HIP, OpenCL, Vulkan) shares: its name, module
//! cache, intrinsic registry and profiling switch, device teardown, the error mapping of driver
//! and memory failures, and code generation for one device's capabilities. (The generic half of
//! `run_source` — language check, launch limits, the external kernel's cache entry, launch and
//! synchronisation — is [`crate::Executor::run_source`]'s default; a backend supplies
//! [`crate::Executor::load_external`].)
//!
//! A backend holds one [`DriverCore`] and forwards the [`crate::backend::Platform`] methods
//! that only touch it with [`crate::driver_core_methods!`] (and `module_cache` to
//! [`DriverCore::cache`]); what is left in the backend is what differs: its driver calls.

use crate::backend::{
    CompileOptions, DeviceInfo, DeviceMem, Event, LaunchConfig, Module, Source, Stream, Target,
};
use crate::cache::ModuleCache;
use crate::capabilities::Capabilities;
use crate::error::{Error, LaunchProblem, Result};
use crate::intrinsics::IntrinsicRegistry;
use spoc_codegen::Code;
use spoc_ir::Kernel;
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a driver-backed backend shares with the others (see the [module](self)).
pub struct DriverCore {
    name: &'static str,
    cache: ModuleCache,
    intrinsics: IntrinsicRegistry,
    profiling: AtomicBool,
}

impl DriverCore {
    /// The core of backend `name`, with an empty cache, every intrinsic, profiling off.
    pub fn new(name: &'static str) -> DriverCore {
        DriverCore {
            name,
            cache: ModuleCache::new(),
            intrinsics: IntrinsicRegistry::all(),
            profiling: AtomicBool::new(false),
        }
    }

    /// The backend's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The backend's module cache.
    pub fn cache(&self) -> &ModuleCache {
        &self.cache
    }

    /// The backend's intrinsics.
    pub fn intrinsics(&self) -> &IntrinsicRegistry {
        &self.intrinsics
    }

    /// True while per-launch profiling is on.
    pub fn profiling(&self) -> bool {
        self.profiling.load(Ordering::Relaxed)
    }

    /// Turns per-launch profiling on or off.
    pub fn set_profiling(&self, on: bool) {
        self.profiling.store(on, Ordering::Relaxed);
    }

    /// Drops backend-local device `device`'s compiled modules (each is released once nothing
    /// uses it any more) and announces the teardown to the runtime's memo and hooks
    /// ([`crate::cache::notify_device_teardown`]); builds in flight for the device fail with
    /// [`Error::DeviceDestroyedDuringBuild`]. Memory and streams stay valid.
    pub fn teardown_device(&self, device: usize) {
        self.cache.teardown_device(device);
        crate::cache::notify_device_teardown(self.name, device);
    }

    /// Number of modules in the backend's cache.
    pub fn cached_modules(&self) -> usize {
        self.cache.len()
    }

    /// [`Error::Driver`] of this backend.
    pub fn driver_err(&self, message: impl Into<String>) -> Error {
        Error::Driver {
            backend: self.name.to_string(),
            message: message.into(),
        }
    }

    /// [`Error::Memory`] of this backend.
    pub fn mem_err(&self, message: impl Into<String>) -> Error {
        Error::Memory {
            backend: self.name.to_string(),
            message: message.into(),
        }
    }

    /// [`Error::Compile`] of this backend for kernel `kernel`.
    pub fn compile_err(&self, kernel: &str, message: impl Into<String>) -> Error {
        Error::Compile {
            backend: self.name.to_string(),
            kernel: kernel.to_string(),
            message: message.into(),
        }
    }

    /// [`Error::BackendUnavailable`] of this backend.
    pub fn unavailable(&self, reason: impl Into<String>) -> Error {
        Error::BackendUnavailable {
            backend: self.name.to_string(),
            reason: reason.into(),
        }
    }

    /// [`Error::NoDevice`] of this backend.
    pub fn no_device(&self) -> Error {
        Error::NoDevice {
            framework: Some(self.name.to_string()),
        }
    }

    /// Checks that `bytes` bytes at byte `offset` lie inside `mem`.
    ///
    /// # Errors
    /// [`Error::Memory`] otherwise.
    pub fn check_range(&self, mem: &DeviceMem, offset: usize, bytes: usize) -> Result<()> {
        match offset.checked_add(bytes) {
            Some(end) if end <= mem.bytes() => Ok(()),
            _ => Err(self.mem_err(format!(
                "{bytes} bytes at offset {offset} exceed an allocation of {} bytes",
                mem.bytes()
            ))),
        }
    }

    /// Checks that `bytes` bytes at byte `offset` lie inside `mem`, for `what` (`"an upload"`).
    ///
    /// # Errors
    /// [`Error::Memory`] naming `what` otherwise.
    pub fn check_span(
        &self,
        mem: &DeviceMem,
        offset: usize,
        bytes: usize,
        what: &str,
    ) -> Result<()> {
        match offset.checked_add(bytes) {
            Some(end) if end <= mem.bytes() => Ok(()),
            _ => Err(self.mem_err(format!(
                "{what} of {bytes} bytes at offset {offset} exceeds the allocation of {} bytes",
                mem.bytes()
            ))),
        }
    }

    /// Checks a transfer of `bytes` bytes at byte `offset` of `mem` ([`DriverCore::check_range`]):
    /// true when there is anything to transfer.
    ///
    /// # Errors
    /// As [`DriverCore::check_range`].
    pub fn check_transfer(&self, mem: &DeviceMem, offset: usize, bytes: usize) -> Result<bool> {
        self.check_range(mem, offset, bytes)?;
        Ok(bytes > 0)
    }

    /// Checks a device-to-device copy of `bytes` bytes from `src` into `dst`: both ranges
    /// ([`DriverCore::check_range`]), then (when there is anything to copy) one device. True
    /// when there is anything to copy.
    ///
    /// # Errors
    /// [`Error::Memory`] for a range outside its allocation, or a copy between two devices
    /// (named as `family`'s, `"CUDA"`).
    pub fn check_d2d(
        &self,
        dst: &DeviceMem,
        src: &DeviceMem,
        bytes: usize,
        family: &str,
    ) -> Result<bool> {
        self.check_range(dst, 0, bytes)?;
        self.check_range(src, 0, bytes)?;
        if bytes == 0 {
            return Ok(false);
        }
        if dst.device() != src.device() {
            return Err(self.mem_err(format!(
                "device-to-device copy between {family} devices {} and {}",
                src.device(),
                dst.device()
            )));
        }
        Ok(true)
    }

    /// `stream`'s handle, an `S`, for work on backend-local device `local`.
    ///
    /// # Errors
    /// [`Error::Driver`] `not_ours` (`"not a CUDA stream"`) for another backend's stream, or
    /// naming both devices for a stream of another device.
    pub fn stream<'s, S: Any>(
        &self,
        stream: &'s Stream,
        local: usize,
        not_ours: &str,
    ) -> Result<&'s S> {
        let handle = stream
            .handle::<S>()
            .ok_or_else(|| self.driver_err(not_ours))?;
        if stream.device() != local {
            return Err(self.driver_err(format!(
                "a stream of device {} used on device {local}",
                stream.device()
            )));
        }
        Ok(handle)
    }

    /// `mem`'s handle, an `M`.
    ///
    /// # Errors
    /// [`Error::Memory`] `not_ours` (`"not a CUDA allocation"`) for another backend's memory.
    pub fn memory<'m, M: Any>(&self, mem: &'m DeviceMem, not_ours: &str) -> Result<&'m M> {
        mem.handle::<M>().ok_or_else(|| self.mem_err(not_ours))
    }

    /// `event`'s handle, an `E`.
    ///
    /// # Errors
    /// [`Error::Driver`] `not_ours` (`"not a CUDA event"`) for another backend's event.
    pub fn event<'e, E: Any>(&self, event: &'e Event, not_ours: &str) -> Result<&'e E> {
        event.handle::<E>().ok_or_else(|| self.driver_err(not_ours))
    }

    /// `module`'s handle, an `M`.
    ///
    /// # Errors
    /// [`Error::Driver`] `not_ours` (`"not a CUDA module"`) for another backend's module.
    pub fn module<'m, M: Any>(&self, module: &'m Module, not_ours: &str) -> Result<&'m M> {
        module
            .handle::<M>()
            .ok_or_else(|| self.driver_err(not_ours))
    }

    /// The handles, `E`s, of events `start` and `end`.
    ///
    /// # Errors
    /// [`Error::Driver`] `not_ours` (`"not a CUDA event"`) if either is another backend's.
    pub fn event_pair<'e, E: Any>(
        &self,
        start: &'e Event,
        end: &'e Event,
        not_ours: &str,
    ) -> Result<(&'e E, &'e E)> {
        match (start.handle::<E>(), end.handle::<E>()) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(self.driver_err(not_ours)),
        }
    }

    /// The [`DeviceInfo`]s of devices given by name and capabilities, in backend-local order.
    pub fn device_infos(
        devices: impl IntoIterator<Item = (String, Capabilities)>,
    ) -> Vec<DeviceInfo> {
        devices
            .into_iter()
            .enumerate()
            .map(|(local_id, (name, capabilities))| DeviceInfo {
                local_id,
                name,
                capabilities,
            })
            .collect()
    }

    /// What devices with code-generation capabilities `caps` can do together, for source
    /// generated before the device is known: the first device's capabilities with `fp64`,
    /// `int64_atomics`, `float_atomic_add` and `subgroups` of any device, `inline_ptx` of all; `target`'s defaults
    /// without devices.
    pub fn union_caps(
        target: Target,
        caps: impl IntoIterator<Item = spoc_codegen::Capabilities>,
    ) -> spoc_codegen::Capabilities {
        let mut caps = caps.into_iter();
        let Some(mut union) = caps.next() else {
            return spoc_codegen::Capabilities::for_target(target);
        };
        for c in caps {
            union.fp64 |= c.fp64;
            union.int64_atomics |= c.int64_atomics;
            union.float_atomic_add |= c.float_atomic_add;
            union.subgroups |= c.subgroups;
            // Inline PTX only where every device takes it.
            union.inline_ptx &= c.inline_ptx;
        }
        union
    }

    /// `shared_mem` bytes of dynamic shared memory as the `u32` a driver's launch takes.
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] ([`LaunchProblem::SharedMemory`] against `limit`, the device's
    /// per-block limit) for kernel `kernel` beyond `u32::MAX`.
    pub fn shared_mem_u32(kernel: &str, shared_mem: usize, limit: usize) -> Result<u32> {
        u32::try_from(shared_mem).map_err(|_| {
            Error::invalid_launch(
                kernel,
                LaunchProblem::SharedMemory {
                    requested: shared_mem,
                    limit,
                },
            )
        })
    }

    /// Runs `launch` of kernel `kernel` as `config` says. While profiling is on it is
    /// bracketed by the two events `events` makes, each recorded with `record` (on the launch's
    /// stream), and the milliseconds `elapsed` (which waits for the end event) measures between
    /// them are logged.
    ///
    /// # Errors
    /// What `events`, `record`, `launch` or `elapsed` returns.
    pub fn profiled<E>(
        &self,
        kernel: &str,
        config: &LaunchConfig<'_>,
        events: impl FnOnce() -> Result<(E, E)>,
        record: impl Fn(&E) -> Result<()>,
        elapsed: impl FnOnce(&E, &E) -> Result<f32>,
        launch: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let events = if self.profiling() {
            Some(events()?)
        } else {
            None
        };
        if let Some((start, _)) = &events {
            record(start)?;
        }
        launch()?;
        if let Some((start, end)) = events {
            record(&end)?;
            let ms = elapsed(&start, &end)?;
            let (grid, block) = (config.grid, config.block);
            tracing::info!(kernel = %kernel, %grid, %block, ms, "{} launch", self.name);
        }
        Ok(())
    }

    /// Generates `target` code for `kernel` with `caps` (the device's own) and `options`
    /// (block, Structure-of-Arrays parameters, checked mode): the one code generation of a
    /// build.
    ///
    /// # Errors
    /// What code generation refuses ([`Error::FeatureNotSupported`] for SoA parameters on any
    /// target but CUDA/PTX, [`Error::Compile`] …).
    pub fn generate(
        &self,
        target: Target,
        kernel: &Kernel,
        caps: spoc_codegen::Capabilities,
        options: &CompileOptions,
    ) -> Result<Option<Source>> {
        options.generate(target, kernel, caps)
    }

    /// Refuses compiler flags, for a build that takes none.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] naming them, if `options` has any.
    pub fn refuse_flags(&self, options: &CompileOptions) -> Result<()> {
        if options.flags.is_empty() {
            return Ok(());
        }
        Err(Error::unsupported(
            self.name,
            format!("compiler flags ({})", options.flags.join(" ")),
        ))
    }

    /// The text of a generated source.
    ///
    /// # Errors
    /// [`Error::Compile`] for SPIR-V words.
    pub fn text<'s>(&self, kernel: &str, source: &'s Source) -> Result<&'s str> {
        match &source.code {
            Code::Text(t) => Ok(t),
            Code::SpirV(_) => Err(self.compile_err(
                kernel,
                format!("expected source text, got {:?} output", source.target),
            )),
        }
    }
}

/// Implements the [`crate::backend::Platform`] methods that only touch a backend's
/// [`DriverCore`] (`enable_profiling`, `disable_profiling`, `intrinsics`), given an expression
/// of the core on `self`. Invoke it inside an `impl Platform for …` block:
/// `spoc_runtime::driver_core_methods!(self.core);`.
#[macro_export]
macro_rules! driver_core_methods {
    ($self:ident . $($core:tt)+) => {
        fn enable_profiling(&$self) {
            $self.$($core)+.set_profiling(true)
        }
        fn disable_profiling(&$self) {
            $self.$($core)+.set_profiling(false)
        }
        fn intrinsics(&$self) -> &$crate::IntrinsicRegistry {
            $self.$($core)+.intrinsics()
        }
    };
}
