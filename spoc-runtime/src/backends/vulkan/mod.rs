//! The Vulkan backend (cargo feature `vulkan`, on by default): SPIR-V from `spoc_codegen`
//! ([`Target::Vulkan`]) run as compute pipelines through [ash](https://docs.rs/ash).
//!
//! # Loading
//! The Vulkan loader (`libvulkan.so.1`) is loaded at run time (`ash::Entry::load`): the crate
//! builds without Vulkan, and without a loader, an instance or a device
//! [`Platform::is_available`] is false and [`VulkanBackend::unavailable_reason`] says why;
//! nothing panics. The instance asks for Vulkan 1.2 (1.1 if the loader is older). Every
//! physical device with a compute queue and Vulkan 1.1 becomes a device, with a logical
//! device of its own on which the features kernels may need are enabled when the device
//! offers them: `shaderFloat64`, `shaderInt64`, `shaderInt16`, 16- and 8-bit storage,
//! `shaderFloat16`/`shaderInt8`, 64-bit integer atomics (`VK_KHR_shader_atomic_int64`, core
//! in 1.2) and float atomics (`VK_EXT_shader_atomic_float`). The loader finds the drivers
//! itself; `VK_ICD_FILENAMES` may restrict it (to lavapipe's
//! `/usr/share/vulkan/icd.d/lvp_icd.x86_64.json`, for instance) but is never needed.
//!
//! # Devices
//! Names, limits and features come from the device: [`VulkanBackend::device_properties`] has
//! the whole picture ([`VulkanDeviceProps`]: workgroup size, count and invocation limits,
//! shared memory, subgroup size and operations, fp64/int64/f16, 64-bit and float atomics,
//! device type, heaps, `timestampPeriod`, `maxStorageBufferRange`); [`crate::Capabilities`]
//! gets what fits it. A CPU device (lavapipe) is `is_cpu`, so the registry ranks it below
//! Native; a GPU ranks below CUDA and HIP.
//!
//! # Memory
//! An allocation is one storage buffer in device-local memory, zeroed. On CPU and integrated
//! devices whose device-local memory is host-visible and coherent it stays mapped and
//! transfers are copies; otherwise transfers go through a per-device staging buffer (16 MiB
//! at a time, `vkCmdCopyBuffer`). `SPOC_VULKAN_FORCE_STAGING=1` (read when the devices are
//! opened) makes every device use staging, as a discrete GPU does. A buffer larger than the device's `maxStorageBufferRange`
//! (128 MiB on lavapipe) or `maxMemoryAllocationSize` is refused with [`Error::Memory`], since
//! a kernel could not see it whole. Each buffer is its own `vkAllocateMemory`, so the number
//! of live buffers is bounded by the driver's `maxMemoryAllocationCount` (at least 4096).
//!
//! # Kernels
//! [`Compiler::compile_needs_block`] is true: the workgroup size is part of the SPIR-V, so the
//! runtime compiles per block size, and a module launched with another block is regenerated
//! for it (kept with the module). Code is generated with the device's capabilities, so a
//! kernel that needs `f64`, 64-bit or float atomics or subgroup operations the device lacks is
//! an [`Error::FeatureNotSupported`] before anything is created; the SPIR-V's declared
//! capabilities (`Int64`, `Float16`, storage widths, subgroup operations, …) and version are
//! checked against the device the same way. Vulkan lets GLSL.std.450 `Fma` round twice, but
//! Rust's `mul_add` rounds once: when a device is opened the backend measures whether its f32
//! and f64 `Fma` are fused ([`VulkanDeviceProps::fused_fma_f32`], `…_f64`; lavapipe's f64 one is
//! not), and a generated kernel whose SPIR-V has an unfused `Fma` is refused the same way
//! rather than run with different results. A module is a compute pipeline with its layouts, a
//! descriptor set and a host-visible scalar block; the argument ABI is
//! [`spoc_codegen::naga`]'s: descriptor set 0, binding 0 the scalar parameters as a storage
//! buffer (present only if the kernel has scalar parameters), binding `1 + j` the j-th buffer,
//! bound with exactly its bytes (a kernel's `len()` is the bound range over the element
//! size). Modules live in a per-device [`ModuleCache`](crate::cache::ModuleCache).
//!
//! # Launches, streams, events
//! Launches and device-side copies are **batched** (`submit.rs`): each is recorded into the
//! device's open command buffer behind a global memory barrier (so it is ordered after all
//! earlier work and sees its writes) and returns; the batch is submitted to the compute queue
//! when its results are needed — a host transfer, a free, [`DeviceMemory::synchronize`] or
//! `synchronize_stream`, an event, a timed (profiling) or checked-mode launch — or when it
//! holds 128 commands (`SPOC_VULKAN_BATCH_CAP`, read when the devices are opened,
//! sets another number in 1..=4096). A value these three variables do not take (a switch
//! neither on nor off, a cap out of range) makes the backend unavailable, its reason naming
//! the variable, rather than being read as something else. Submissions signal a timeline semaphore (Vulkan 1.2)
//! and a sync point waits once for the value it needs; a device without timeline semaphores
//! ([`VulkanDeviceProps::timeline_semaphore`]; `SPOC_VULKAN_NO_TIMELINE=1`, read when the
//! devices are opened, pretends every device lacks them) waits for a fence after each batch.
//! A failure
//! of a deferred submission or wait (device lost) is reported by the next sync point.
//! Submissions to one device are serialised by a lock. A [`Stream`] orders nothing beyond
//! that (every device's work is one queue in launch order): it is accepted by launches and
//! events, and synchronising it synchronises the device.
//!
//! A kernel's shared array sized at launch is a specialization constant of its SPIR-V
//! (`spoc_codegen::naga::DYNAMIC_SHARED_SPEC_ID`): the launch's dynamic shared size over the
//! element size gives its length (at least 1), and a pipeline per (block, length) is made on
//! first use and kept with the module; for other kernels the dynamic size is unused. The float
//! controls the generated SPIR-V declares (`DenormPreserve`, `SignedZeroInfNanPreserve`) are
//! kept only where the device supports them ([`VulkanDeviceProps::denorm_preserve`]). Events are timestamp
//! queries (`vkCmdWriteTimestamp`), scaled by `timestampPeriod`; a queue without timestamps
//! has no events. [`Platform::enable_profiling`] brackets every dispatch with two timestamps
//! and logs the kernel's time (`tracing`, info), also kept in
//! [`VulkanBackend::last_kernel_ms`]. A kernel that never ends blocks the next sync point.
//!
//! # External kernels
//! [`Executor::run_source`] takes [`SourceLang::SpirV`] (the module's words as hexadecimal
//! text, see [`spirv_words_to_text`]; [`VulkanBackend::run_spirv`] takes the words
//! themselves) and [`SourceLang::Glsl`] (GLSL 4.50 compute, compiled by naga's GLSL front end;
//! its entry point is `main`, whatever `kernel_name` says). Arguments bind as for generated
//! kernels: binding 0 holds the scalar arguments if there are any, packed in order as a
//! `#[repr(C)]` struct (`bool` as a `u32`, [`Arg::Usize`] as a `u32`, 64-bit values aligned to
//! 8), binding `1 + j` the j-th buffer argument. The shader's declared workgroup size must
//! equal the launch's block. Modules are cached by source, entry point, block and argument
//! kinds.

mod device;
mod external;
mod glsl;
mod kernels;
mod memory;
mod pipeline;
mod probe;
mod spv;
mod submit;

pub use device::{DeviceType, MemoryHeap, VulkanDeviceProps};
pub use external::{spirv_text_to_words, spirv_words_to_text};
pub(crate) use kernels::retain_supported_float_controls;

use crate::args::Arg;
use crate::backend::{
    CompileOptions, Compiler, DeviceInfo, DeviceMem, DeviceMemory, Event, LaunchConfig, Module,
    Platform, Source, SourceLang, Stream, Target,
};
use crate::dims::Dims;
use crate::driver_core::DriverCore;
use crate::error::{Error, LaunchProblem, Result};
use crate::executor::Executor;
use ash::vk;
use device::{Enumeration, VkDev};
use memory::VkBuffer;
use pipeline::VkKernel;
use spoc_ir::ValidKernel;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The Vulkan backend's name.
pub const NAME: &str = "Vulkan";

/// Device features a [`VulkanBackend`] pretends its devices lack (`true` hides the feature):
/// neither reported, nor enabled, nor used by generated code. For exercising what happens on
/// lesser devices; [`FeatureMask::default`] hides nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeatureMask {
    /// `shaderFloat64`.
    pub fp64: bool,
    /// `shaderInt64` (and so 64-bit atomics).
    pub int64: bool,
    /// `shaderFloat16` and 16-bit storage.
    pub float16: bool,
    /// 64-bit integer atomics.
    pub int64_atomics: bool,
    /// Float atomics.
    pub float_atomics: bool,
    /// Subgroup operations.
    pub subgroups: bool,
    /// Timeline semaphores: each batch of commands is then submitted and waited for with a
    /// fence (the fallback of drivers without them).
    pub timeline_semaphore: bool,
}

impl FeatureMask {
    fn apply(self, p: &mut VulkanDeviceProps) {
        if self.fp64 {
            p.shader_float64 = false;
            p.buffer_float64_atomic_add = false;
        }
        if self.int64 || self.int64_atomics {
            p.buffer_int64_atomics = false;
            p.shared_int64_atomics = false;
        }
        if self.int64 {
            p.shader_int64 = false;
        }
        if self.float16 {
            p.shader_float16 = false;
            p.storage_16bit = (false, false);
        }
        if self.float_atomics {
            p.buffer_float32_atomic_add = false;
            p.buffer_float32_atomics = false;
            p.shared_float32_atomic_add = false;
            p.buffer_float64_atomic_add = false;
        }
        if self.subgroups {
            p.subgroups_in_compute = false;
            p.subgroup_ops.clear();
        }
        if self.timeline_semaphore {
            p.timeline_semaphore = false;
        }
    }
}

/// The handle of a [`Stream`] (the device's one queue orders everything: it orders nothing more).
struct VkStream;

/// The handle of an [`Event`]: one timestamp query.
struct VkEvent {
    dev: Arc<VkDev>,
    pool: vk::QueryPool,
    recorded: AtomicBool,
}

// SAFETY: a query pool handle is an identifier, used under the device's lock.
unsafe impl Send for VkEvent {}
// SAFETY: as above.
unsafe impl Sync for VkEvent {}

impl Drop for VkEvent {
    fn drop(&mut self) {
        // SAFETY: recording waits for its submission, so no pending command uses the pool.
        unsafe { self.dev.device.destroy_query_pool(self.pool, None) };
    }
}

/// The Vulkan backend. Devices are opened on first use and live as long as the backend (and
/// whatever was made on them).
pub struct VulkanBackend {
    mask: FeatureMask,
    state: OnceLock<std::result::Result<Enumeration, String>>,
    core: DriverCore,
    /// The last profiled kernel's duration (f64 bits; NaN before the first).
    last_ms: AtomicU64,
}

impl Default for VulkanBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl VulkanBackend {
    /// A backend over every Vulkan device. Nothing is loaded until it is first asked something.
    pub fn new() -> VulkanBackend {
        VulkanBackend::with_feature_mask(FeatureMask::default())
    }

    /// A backend whose devices pretend to lack the features `mask` hides.
    pub fn with_feature_mask(mask: FeatureMask) -> VulkanBackend {
        VulkanBackend {
            mask,
            state: OnceLock::new(),
            core: DriverCore::new(NAME),
            last_ms: AtomicU64::new(f64::NAN.to_bits()),
        }
    }

    fn state(&self) -> &std::result::Result<Enumeration, String> {
        self.state.get_or_init(|| {
            let r = device::enumerate(self.mask);
            match &r {
                Ok(e) => tracing::debug!("Vulkan: {} device(s)", e.devices.len()),
                Err(why) => tracing::debug!("Vulkan unavailable: {why}"),
            }
            r
        })
    }

    /// Why the backend is unavailable (no loader, no driver, no device), or `None` if it is
    /// available.
    pub fn unavailable_reason(&self) -> Option<String> {
        match self.state() {
            Err(why) => Some(why.clone()),
            Ok(e) if e.devices.is_empty() => {
                Some("the Vulkan loader found no device with a compute queue and Vulkan 1.1".into())
            }
            Ok(_) => None,
        }
    }

    fn devs(&self) -> Result<&[Arc<VkDev>]> {
        match self.state() {
            Ok(e) => Ok(&e.devices),
            Err(why) => Err(self.core.unavailable(why.clone())),
        }
    }

    fn dev(&self, local: usize) -> Result<&Arc<VkDev>> {
        self.devs()?.get(local).ok_or_else(|| self.core.no_device())
    }

    /// Everything known about backend-local device `device`.
    ///
    /// # Errors
    /// [`Error::BackendUnavailable`] without Vulkan; [`Error::NoDevice`] for a bad index.
    pub fn device_properties(&self, device: usize) -> Result<VulkanDeviceProps> {
        Ok(self.dev(device)?.props.clone())
    }

    /// Drops backend-local device `device`'s compiled modules (each is destroyed once nothing
    /// uses it) and announces the teardown to the runtime's memo and hooks
    /// ([`crate::cache::notify_device_teardown`]); builds in flight for the device fail with
    /// [`Error::DeviceDestroyedDuringBuild`]. Memory stays valid.
    pub fn teardown_device(&self, device: usize) {
        self.core.teardown_device(device);
    }

    /// Number of modules in this backend's cache.
    pub fn cached_modules(&self) -> usize {
        self.core.cached_modules()
    }

    /// The duration of the last kernel launched while profiling was on, in milliseconds
    /// (device timestamps), or `None` before the first.
    pub fn last_kernel_ms(&self) -> Option<f64> {
        let v = f64::from_bits(self.last_ms.load(Ordering::Relaxed));
        (!v.is_nan()).then_some(v)
    }

    fn vk_mem<'m>(&self, mem: &'m DeviceMem) -> Result<&'m VkBuffer> {
        self.core.memory(mem, "not a Vulkan allocation")
    }

    fn check_stream(&self, stream: Option<&Stream>, device: usize) -> Result<()> {
        match stream {
            None => Ok(()),
            Some(s) if s.handle::<VkStream>().is_none() => {
                Err(self.core.driver_err("not a Vulkan stream"))
            }
            Some(s) if s.device() != device => Err(self.core.driver_err(format!(
                "a stream of Vulkan device {} used on device {device}",
                s.device()
            ))),
            Some(_) => Ok(()),
        }
    }
}

impl Platform for VulkanBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    /// The Vulkan version the loader offers; (0, 0, 0) without one.
    fn version(&self) -> (u32, u32, u32) {
        match self.state() {
            Ok(e) => e.version,
            Err(_) => (0, 0, 0),
        }
    }

    fn is_available(&self) -> bool {
        self.unavailable_reason().is_none()
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        let devices = self.devs()?.iter();
        Ok(DriverCore::device_infos(
            devices.map(|d| (d.props.name.clone(), d.caps)),
        ))
    }

    fn capabilities(&self, device: usize) -> Result<crate::Capabilities> {
        Ok(self.dev(device)?.caps)
    }

    crate::driver_core_methods!(self.core);
}

impl DeviceMemory for VulkanBackend {
    fn create_stream(&self, device: usize) -> Result<Stream> {
        self.dev(device)?;
        Ok(Stream::new(device, Box::new(VkStream)))
    }

    /// Synchronises the stream's device (its one queue carries every stream's work).
    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        self.check_stream(Some(stream), stream.device())?;
        self.synchronize(stream.device())
    }

    fn destroy_stream(&self, stream: Stream) -> Result<()> {
        self.synchronize_stream(&stream)
    }

    /// Submits the device's open batch and waits for everything submitted.
    fn synchronize(&self, device: usize) -> Result<()> {
        self.dev(device)?
            .sync()
            .map_err(|e| self.core.driver_err(format!("synchronize: {e}")))
    }

    /// Allocates a zeroed storage buffer (see the [module docs](self)).
    fn alloc(&self, device: usize, bytes: usize) -> Result<DeviceMem> {
        let dev = self.dev(device)?;
        let p = &dev.props;
        let limit = p.max_storage_buffer_range.min(if p.max_allocation > 0 {
            p.max_allocation
        } else {
            u64::MAX
        });
        if bytes as u64 > limit {
            let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
            return Err(self.core.mem_err(format!(
                "cannot allocate {bytes} bytes ({:.1} MiB) on {}: a Vulkan kernel sees at most \
                 {limit} bytes ({:.1} MiB) of one buffer on this device (maxStorageBufferRange \
                 {}, maxMemoryAllocationSize {}); split the data into several buffers",
                mib(bytes as u64),
                p.name,
                mib(limit),
                p.max_storage_buffer_range,
                p.max_allocation
            )));
        }
        let buf = VkBuffer::alloc(dev, bytes as u64).map_err(|e| {
            self.core
                .mem_err(format!("allocating {bytes} bytes on {}: {e}", p.name))
        })?;
        Ok(DeviceMem::new(device, bytes, Box::new(buf)))
    }

    unsafe fn copy_h2d_ptr(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
    ) -> Result<()> {
        let b = self.vk_mem(dst)?;
        self.core.check_span(dst, offset, bytes, "upload")?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller guarantees `src` for `bytes`; the range is inside the buffer.
        unsafe { b.write(offset as u64, src, bytes as u64) }
            .map_err(|e| self.core.mem_err(format!("upload of {bytes} bytes: {e}")))
    }

    unsafe fn copy_d2h_ptr(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
    ) -> Result<()> {
        let b = self.vk_mem(src)?;
        self.core.check_span(src, offset, bytes, "download")?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller guarantees `dst` for `bytes`; the range is inside the buffer.
        unsafe { b.read(offset as u64, dst, bytes as u64) }
            .map_err(|e| self.core.mem_err(format!("download of {bytes} bytes: {e}")))
    }

    fn copy_d2d(&self, dst: &DeviceMem, src: &DeviceMem, bytes: usize) -> Result<()> {
        let (d, s) = (self.vk_mem(dst)?, self.vk_mem(src)?);
        self.core
            .check_span(dst, 0, bytes, "device-to-device copy")?;
        self.core
            .check_span(src, 0, bytes, "device-to-device copy")?;
        if !Arc::ptr_eq(&d.dev, &s.dev) {
            return Err(self.core.mem_err(format!(
                "device-to-device copy between Vulkan devices {} and {}",
                src.device(),
                dst.device()
            )));
        }
        if bytes == 0 || dst.id() == src.id() {
            return Ok(());
        }
        d.copy_from(s, bytes as u64).map_err(|e| {
            self.core
                .mem_err(format!("device-to-device copy of {bytes} bytes: {e}"))
        })
    }

    /// Waits for the last batch that used the buffer, then frees it (a failed wait is
    /// reported, and the buffer leaked rather than freed under the device).
    fn free(&self, mem: DeviceMem) -> Result<()> {
        self.vk_mem(&mem)?
            .settle()
            .map_err(|e| self.core.driver_err(format!("free: {e}")))?;
        drop(mem); // VkBuffer frees itself
        Ok(())
    }

    /// An event is a timestamp query; [`Error::FeatureNotSupported`] if the device's compute
    /// queue has no timestamps.
    fn create_event(&self, device: usize) -> Result<Event> {
        let dev = self.dev(device)?;
        if dev.props.timestamp_valid_bits == 0 {
            return Err(Error::unsupported(
                NAME,
                format!(
                    "events on {} (its compute queue has no timestamps)",
                    dev.props.name
                ),
            ));
        }
        // SAFETY: a valid create info on a live device.
        let pool = unsafe {
            dev.device.create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(1),
                None,
            )
        }
        .map_err(|e| self.core.driver_err(format!("vkCreateQueryPool: {e}")))?;
        Ok(Event::new(
            device,
            Box::new(VkEvent {
                dev: dev.clone(),
                pool,
                recorded: AtomicBool::new(false),
            }),
        ))
    }

    /// Writes the device's current timestamp into the event after all earlier work, submits
    /// the open batch and waits for it.
    fn record_event(&self, event: &Event, stream: Option<&Stream>) -> Result<()> {
        let ev = self.core.event::<VkEvent>(event, "not a Vulkan event")?;
        self.check_stream(stream, event.device())?;
        let pool = ev.pool;
        ev.dev
            .lock()
            .run(|d, cb| {
                // SAFETY: recording into the locked command buffer; the pool is live.
                unsafe {
                    d.cmd_reset_query_pool(cb, pool, 0, 1);
                    d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 0);
                }
            })
            .map_err(|m| self.core.driver_err(m))?;
        ev.recorded.store(true, Ordering::Release);
        Ok(())
    }

    fn event_elapsed_ms(&self, start: &Event, end: &Event) -> Result<f32> {
        let (a, b) = self
            .core
            .event_pair::<VkEvent>(start, end, "not a Vulkan event")?;
        if !Arc::ptr_eq(&a.dev, &b.dev) {
            return Err(self
                .core
                .driver_err("events of two different Vulkan devices"));
        }
        if !a.recorded.load(Ordering::Acquire) || !b.recorded.load(Ordering::Acquire) {
            return Err(self.core.driver_err("an event was not recorded"));
        }
        let read = |pool| {
            let mut t = [0u64; 1];
            // SAFETY: the query was written by a finished submission.
            unsafe {
                a.dev.device.get_query_pool_results(
                    pool,
                    0,
                    &mut t,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                )
            }
            .map(|_| t[0])
            .map_err(|e| self.core.driver_err(format!("vkGetQueryPoolResults: {e}")))
        };
        let (ta, tb) = (read(a.pool)?, read(b.pool)?);
        Ok(pipeline::ticks_to_ms(&a.dev.props, ta, tb) as f32)
    }
}

impl Compiler for VulkanBackend {
    fn compile_needs_block(&self) -> bool {
        true
    }

    fn codegen_target(&self) -> Option<Target> {
        Some(Target::Vulkan)
    }

    fn supports_checked_mode(&self) -> bool {
        true
    }

    /// The device's own capabilities (its features and the float behaviour measured when it
    /// was opened); for an unknown device what any device of the backend has (their union).
    fn codegen_caps(&self, device: Option<usize>) -> Result<spoc_codegen::Capabilities> {
        Ok(match device {
            Some(d) => self.dev(d)?.props.codegen_caps(),
            None => DriverCore::union_caps(
                Target::Vulkan,
                self.devs()
                    .unwrap_or(&[])
                    .iter()
                    .map(|d| d.props.codegen_caps()),
            ),
        })
    }

    fn compile(
        &self,
        device: usize,
        kernel: &ValidKernel,
        source: &Source,
        options: &CompileOptions,
    ) -> Result<Module> {
        self.core.refuse_flags(options)?;
        let dev = self.dev(device)?;
        let k = self.build_generated(dev, kernel, source, options, None)?;
        Ok(Module::new(device, Box::new(k)))
    }

    fn module_cache(&self) -> Option<&crate::cache::ModuleCache> {
        Some(self.core.cache())
    }
}

impl Executor for VulkanBackend {
    /// Runs the module over `grid` workgroups and waits for it. A block other than the one the
    /// module was compiled for regenerates the kernel for it (kept with the module).
    fn launch(&self, module: &Module, config: &LaunchConfig<'_>, args: &[Arg<'_>]) -> Result<()> {
        let (grid, block, shared_mem) = (config.grid, config.block, config.shared_mem_bytes);
        let k = self
            .core
            .module::<VkKernel>(module, "not a Vulkan module")?;
        self.check_stream(config.stream, module.device())?;
        crate::dims::check_dims(&k.name, &k.dev.caps, grid, block, shared_mem)?;
        let dyn_len = match k.origin.as_ref().and_then(|o| o.dyn_elem) {
            None => None,
            Some(elem) => match u32::try_from(shared_mem / elem as usize) {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    return Err(Error::invalid_launch(
                        &k.name,
                        LaunchProblem::Rejected {
                            message: format!(
                                "{shared_mem} bytes of dynamic shared memory: the kernel's \
                                 shared array sized at launch needs at least one {elem}-byte \
                                 element (Vulkan has no empty workgroup arrays)"
                            ),
                        },
                    ))
                }
            },
        };
        let shape = (block.to_array(), dyn_len);
        if shape == (k.block, k.dyn_len) {
            self.dispatch(k, grid, args)
        } else {
            let v = self.variant(k, shape)?;
            self.dispatch(&v, grid, args)
        }
    }

    fn supported_source_langs(&self) -> &[SourceLang] {
        &[SourceLang::SpirV, SourceLang::Glsl]
    }

    /// Runs external SPIR-V (hexadecimal words, see [`spirv_words_to_text`]; entry point
    /// `kernel_name`) or GLSL compute (entry point `main`) per the [module's ABI](self),
    /// as [`VulkanBackend::run_spirv`] does.
    fn run_source(
        &self,
        device: usize,
        source: &str,
        lang: SourceLang,
        kernel_name: &str,
        grid: Dims,
        block: Dims,
        shared_mem: usize,
        args: &[Arg<'_>],
    ) -> Result<()> {
        self.run_external_source(
            device,
            source,
            lang,
            kernel_name,
            (grid, block, shared_mem),
            args,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spirv_text_round_trips() {
        let words = [0x0723_0203, 0x0001_0500, 0, 7, 0, 0xdead_beef, 1, 2, 3];
        let text = spirv_words_to_text(&words);
        assert_eq!(text.lines().count(), 2);
        assert_eq!(spirv_text_to_words(&text).unwrap(), words);
        assert_eq!(
            spirv_text_to_words("0x07230203, 0X10 ff").unwrap(),
            vec![0x0723_0203, 0x10, 0xff]
        );
        assert!(matches!(
            spirv_text_to_words("07230203 xyz"),
            Err(Error::Compile { .. })
        ));
    }

    #[test]
    fn fma_widths_are_found_in_naga_spirv() {
        let src = "#version 450\nlayout(local_size_x = 4, local_size_y = 2) in;\n\
                   layout(set = 0, binding = 1) buffer F { float f[]; };\n\
                   void main() { f[3] = fma(f[0], f[1], f[2]); }\n";
        let c = glsl::compile(src, (1, 3)).unwrap();
        let s = spv::scan(&c.words).unwrap();
        assert_eq!(s.fma_widths, vec![32]);
        assert_eq!(s.version, (1, 3));
        assert_eq!(c.local_size, [4, 2, 1]);
        assert_eq!(s.entry_points.len(), 1);
        assert_eq!(s.entry_points[0].local_size, Some([4, 2, 1]));
        let plain = glsl::compile(
            "#version 450\nlayout(local_size_x = 1) in;\n\
             layout(set = 0, binding = 1) buffer F { float f[]; };\n\
             void main() { f[3] = f[0] * f[1] + f[2]; }\n",
            (1, 3),
        )
        .unwrap();
        assert!(spv::scan(&plain.words).unwrap().fma_widths.is_empty());
    }

    #[test]
    fn external_scalar_blocks_are_repr_c() {
        let block = |args: &[Arg<'_>]| {
            let abi = spoc_codegen::Abi::external_bindings(crate::bind::external_params(args));
            crate::bind::bindings(&abi, args).unwrap().block.len()
        };
        assert_eq!(block(&[]), 0);
        assert_eq!(block(&[Arg::F32(1.0)]), 4);
        // f32 at 0, f64 at 8, bool at 16: 20 rounded to 24.
        assert_eq!(block(&[Arg::F32(1.0), Arg::F64(2.0), Arg::Bool(true)]), 24);
    }
}
