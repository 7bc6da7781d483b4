//! The OpenCL backend (feature `opencl`, on by default): OpenCL C from `spoc_codegen`, built and
//! run through [opencl3](https://docs.rs/opencl3) on every device of every OpenCL platform
//! (PoCL on a CPU, GPU drivers).
//!
//! # Loading
//! libOpenCL is loaded at run time (opencl3's `dynamic` feature): the crate builds without
//! OpenCL, and on a machine without the library or without any platform (ICD)
//! [`Platform::is_available`] is false and [`OpenClBackend::unavailable_reason`] says why;
//! nothing panics. Devices are enumerated once, on first use.
//!
//! # Devices, queues, events
//! Each device gets a context of its own and a default in-order command queue; a
//! [`Stream`] is another in-order queue on the same context. Every queue is created with
//! `CL_QUEUE_PROFILING_ENABLE`, because events are timed with profiling timestamps: an
//! [`Event`] records a marker (`clEnqueueMarkerWithWaitList`) and
//! [`DeviceMemory::event_elapsed_ms`] is the difference of the two markers' end times.
//! [`Platform::enable_profiling`] additionally makes every launch wait for its kernel and log
//! its duration (`tracing`, level info).
//!
//! Launches, device-to-device copies and fills are asynchronous on their queue; host
//! transfers are blocking. Work on the default queue is therefore ordered with uploads and
//! downloads; work on another [`Stream`] is not: call [`DeviceMemory::synchronize_stream`] first.
//!
//! # Memory
//! Allocations are `CL_MEM_READ_WRITE` buffers, zeroed at allocation (the registry treats a CPU
//! device's memory as zeroed, and PoCL is one). An allocation larger than the device's
//! `CL_DEVICE_MAX_MEM_ALLOC_SIZE` is refused with [`Error::Memory`] naming the limit (PoCL
//! derives it from host memory; many GPU drivers allow a quarter of device memory).
//!
//! # Kernels
//! [`Compiler::generate_source`] emits OpenCL C for the union of the devices' capabilities;
//! [`Compiler::compile`] regenerates it for the device's own capabilities (`cl_khr_fp64`,
//! `cl_khr_int64_base_atomics` + `cl_khr_int64_extended_atomics`, and for subgroups
//! `cl_khr_subgroups` + `cl_khr_subgroup_shuffle` + `cl_khr_subgroup_shuffle_relative` +
//! `cl_khr_subgroup_ballot` with OpenCL C 2.0 or 3.0), so a kernel the device cannot run is an
//! [`Error::FeatureNotSupported`] before anything is built or enqueued. Programs are built with
//! `-cl-fp32-correctly-rounded-divide-sqrt` (when the device supports it; a warning otherwise),
//! `-cl-std=CL2.0` (or `CL3.0`) for subgroup kernels, then [`CompileOptions::flags`]. A failed
//! build is an [`Error::Compile`] carrying the build log. Compiled modules live in a per-device
//! [`ModuleCache`](crate::cache::ModuleCache); [`OpenClBackend::teardown_device`] drops a device's modules and notifies the
//! runtime's cache hooks.
//!
//! A launch runs `grid * block` work-items in work-groups of `block` (global size =
//! grid × block per axis, local size = block), after checking the block against the device's
//! `CL_DEVICE_MAX_WORK_GROUP_SIZE` ([`LaunchProblem::TooManyThreads`]) and the kernel's
//! `CL_KERNEL_WORK_GROUP_SIZE` (queried after the build). NVIDIA's OpenCL reports 256 for every
//! kernel although its devices run 1024 (seen on the H200, driver 580), so a block over the
//! kernel's figure but within the device's is tried, and the driver's refusal
//! (`CL_INVALID_WORK_GROUP_SIZE`, `CL_OUT_OF_RESOURCES`) is
//! [`LaunchProblem::KernelTooManyThreads`], which names the limit. The argument ABI of
//! generated kernels is `spoc_codegen::c`'s; [`Executor::run_source`] runs external OpenCL C with
//! the same buffer and scalar order (see [`OpenClBackend`]).

mod device;
mod program;

use crate::args::Arg;
use crate::backend::{
    CompileOptions, Compiler, DeviceInfo, DeviceMem, DeviceMemory, Event, LaunchConfig, Module,
    Platform, Source, SourceLang, Stream, Target,
};
use crate::dims::Dims;
use crate::driver_core::DriverCore;
use crate::error::{Error, LaunchProblem, Result};
use crate::executor::Executor;
use device::{ClDevice, Enumeration};
use opencl3::command_queue::CommandQueue;
use opencl3::error_codes::ClError;
use opencl3::memory::{Buffer as ClBuffer, ClMem as _, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, CL_BLOCKING};
use program::{Abi, ClModule};
use spoc_codegen::Code;
use spoc_ir::ValidKernel;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Mutex, OnceLock};

/// The OpenCL backend's name.
pub const NAME: &str = "OpenCL";

/// The build option that makes single-precision `/` and `sqrt` correctly rounded.
const CORRECTLY_ROUNDED: &str = "-cl-fp32-correctly-rounded-divide-sqrt";

/// An [`Error::Driver`] for a failed OpenCL call.
pub(crate) fn cl_err(what: &str, e: ClError) -> Error {
    Error::Driver {
        backend: NAME.to_string(),
        message: format!("{what}: {e} ({})", e.0),
    }
}

/// The handle of an OpenCL allocation ([`DeviceMem::handle`]).
pub(crate) struct ClMem(ClBuffer<u8>);

impl ClMem {
    fn cl_mem(&self) -> cl_mem {
        self.0.get()
    }
}

/// The handle of a [`Stream`]: an in-order command queue.
struct ClStream(CommandQueue);

/// The handle of an [`Event`]: the marker it was last recorded as.
struct ClEvent(Mutex<Option<opencl3::event::Event>>);

/// The OpenCL backend.
///
/// # External kernels
/// [`Executor::run_source`] accepts [`SourceLang::OpenClC`]. The kernel takes its arguments in
/// the order of generated kernels (and of the CUDA backend's external kernels): a buffer as a
/// `__global T*` followed by its length in elements as `uint`, a scalar by value (`bool` as
/// `uchar`, [`Arg::Usize`] as `uint`, refused if it does not fit); a non-zero `shared_mem`
/// appends one `__local` pointer of that many bytes. The source is built with the same options as generated kernels, cached by
/// content, and the call waits for the kernel to finish.
pub struct OpenClBackend {
    state: OnceLock<std::result::Result<Enumeration, String>>,
    core: DriverCore,
}

impl Default for OpenClBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenClBackend {
    /// An OpenCL backend. Cheap: nothing is loaded or enumerated until first use.
    pub fn new() -> OpenClBackend {
        OpenClBackend {
            state: OnceLock::new(),
            // Device-dependent refusals (f64, 64-bit atomics, subgroups) come from the code
            // generator with the device's capabilities.
            core: DriverCore::new(NAME),
        }
    }

    fn state(&self) -> &std::result::Result<Enumeration, String> {
        self.state.get_or_init(device::enumerate)
    }

    /// Why the backend is unavailable (no libOpenCL, no platform, enumeration failure), or
    /// `None` if it is available.
    pub fn unavailable_reason(&self) -> Option<String> {
        self.state().as_ref().err().cloned()
    }

    fn devices_slice(&self) -> Result<&[ClDevice]> {
        match self.state() {
            Ok(e) => Ok(&e.devices),
            Err(reason) => Err(self.core.unavailable(reason.clone())),
        }
    }

    fn dev(&self, local: usize) -> Result<&ClDevice> {
        self.devices_slice()?
            .get(local)
            .ok_or_else(|| self.core.no_device())
    }

    fn cl_mem_of<'m>(&self, mem: &'m DeviceMem) -> Result<&'m ClMem> {
        self.core.memory(mem, "an allocation of another backend")
    }

    /// The platform name of backend-local device `local`.
    ///
    /// # Errors
    /// [`Error::BackendUnavailable`]; [`Error::NoDevice`] if there is no such device.
    pub fn platform_name(&self, local: usize) -> Result<String> {
        Ok(self.dev(local)?.platform.clone())
    }

    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE` of backend-local device `local`: the largest single
    /// allocation, in bytes.
    ///
    /// # Errors
    /// [`Error::BackendUnavailable`]; [`Error::NoDevice`] if there is no such device.
    pub fn max_alloc_bytes(&self, local: usize) -> Result<u64> {
        Ok(self.dev(local)?.max_alloc)
    }

    /// Tears backend-local device `local` down as far as compiled code goes: waits for its
    /// default queue, drops its modules from the cache (builds in flight fail with
    /// [`Error::DeviceDestroyedDuringBuild`]) and notifies the runtime
    /// ([`crate::cache::notify_device_teardown`]), which drops its compiled kernels. Memory
    /// and streams stay valid.
    ///
    /// # Errors
    /// [`Error::NoDevice`]; a driver error while waiting for the queue (the teardown still
    /// happens).
    pub fn teardown_device(&self, local: usize) -> Result<()> {
        let dev = self.dev(local)?;
        let finished = dev.queue.finish().map_err(|e| cl_err("clFinish", e));
        self.core.teardown_device(local);
        finished
    }

    fn queue<'a>(
        &'a self,
        dev: &'a ClDevice,
        stream: Option<&'a Stream>,
    ) -> Result<&'a CommandQueue> {
        match stream {
            None => Ok(&dev.queue),
            Some(s) => {
                if s.device() != dev.info.local_id {
                    return Err(self.core.driver_err(format!(
                        "a stream of device {} used for device {}",
                        s.device(),
                        dev.info.local_id
                    )));
                }
                s.handle::<ClStream>()
                    .map(|q| &q.0)
                    .ok_or_else(|| self.core.driver_err("a stream of another backend"))
            }
        }
    }

    /// The build options for `source` on `dev`.
    fn build_options(
        &self,
        dev: &ClDevice,
        name: &str,
        source: &str,
        flags: &[String],
    ) -> Result<String> {
        let mut opts: Vec<&str> = Vec::new();
        if dev.correctly_rounded_div_sqrt {
            opts.push(CORRECTLY_ROUNDED);
        } else {
            tracing::warn!(
                "OpenCL device {} lacks correctly rounded f32 divide/sqrt: kernel `{name}` may \
                 round `/` and `sqrt` differently from the other backends",
                dev.info.name
            );
        }
        if source.contains("cl_khr_subgroups : enable") {
            match dev.subgroup_std {
                Some(std) => opts.push(std),
                None => {
                    return Err(Error::unsupported(
                        NAME,
                        format!(
                            "kernel `{name}`: subgroup operations (device {} lacks the subgroup \
                             extensions or OpenCL C 2.0)",
                            dev.info.name
                        ),
                    ))
                }
            }
        }
        opts.extend(flags.iter().map(String::as_str));
        Ok(opts.join(" "))
    }

    /// Enqueues `module` on `queue` with `args`; waits for it if `wait` or profiling is on.
    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        &self,
        dev: &ClDevice,
        module: &ClModule,
        queue: &CommandQueue,
        grid: Dims,
        block: Dims,
        shared_mem: usize,
        args: &[Arg<'_>],
        wait: bool,
    ) -> Result<()> {
        module.check_block(dev, block.count())?;
        let over_kernel_limit = block.count() > module.max_work_group as u64;
        let mut global = [0usize; 3];
        let local = block.to_array().map(|b| b as usize);
        for (i, (g, b)) in grid.to_array().into_iter().zip(local).enumerate() {
            global[i] = (g as usize).checked_mul(b).ok_or_else(|| {
                Error::invalid_launch(
                    &module.name,
                    LaunchProblem::Rejected {
                        message: format!("global size {g} × {b} overflows size_t"),
                    },
                )
            })?;
        }
        let profiling = self.core.profiling();
        // Checked mode: a zeroed fault record for this launch, read back after it.
        let record = match &module.checked {
            Some(c) => {
                let mut rec = c.take(dev)?;
                let zeros = [0u8; spoc_codegen::checked::RECORD_BYTES];
                // SAFETY: a blocking write of the whole record from a live array.
                unsafe { queue.enqueue_write_buffer(&mut rec, CL_BLOCKING, 0, &zeros, &[]) }
                    .map_err(|e| cl_err("zeroing the fault record", e))?;
                Some(rec)
            }
            None => None,
        };
        let event = module.with_args(
            args,
            shared_mem,
            record.as_ref().map(|r| r.get()),
            |kernel| {
                // SAFETY: three-element size arrays for a 3-dimensional range; the kernel's
                // arguments are all set (OpenCL refuses the launch otherwise).
                unsafe {
                    queue.enqueue_nd_range_kernel(
                        kernel.get(),
                        3,
                        ptr::null(),
                        global.as_ptr(),
                        local.as_ptr(),
                        &[],
                    )
                }
                .map_err(|e| {
                    // CL_INVALID_WORK_GROUP_SIZE / CL_OUT_OF_RESOURCES for a block over the
                    // kernel's reported limit: the driver meant that limit after all.
                    if over_kernel_limit && (e.0 == -54 || e.0 == -5) {
                        module.refused(dev, block.count())
                    } else {
                        cl_err(&format!("launching kernel `{}`", module.name), e)
                    }
                })
            },
        )?;
        if wait || profiling {
            event
                .wait()
                .map_err(|e| cl_err(&format!("running kernel `{}`", module.name), e))?;
        }
        if let (Some(c), Some(rec)) = (&module.checked, record) {
            // A blocking read on the kernel's in-order queue: it waits for the kernel.
            let mut bytes = [0u8; spoc_codegen::checked::RECORD_BYTES];
            // SAFETY: a blocking read of the whole record into a live array.
            let read = unsafe { queue.enqueue_read_buffer(&rec, CL_BLOCKING, 0, &mut bytes, &[]) };
            c.give_back(rec);
            read.map_err(|e| cl_err(&format!("running kernel `{}`", module.name), e))?;
            crate::checked_mode::check_record(&c.kernel, &bytes)?;
        }
        if profiling {
            let ms = match (
                event.profiling_command_start(),
                event.profiling_command_end(),
            ) {
                (Ok(s), Ok(e)) => e.saturating_sub(s) as f64 / 1e6,
                _ => f64::NAN,
            };
            tracing::info!(
                kernel = module.name,
                device = dev.info.name,
                %grid,
                %block,
                ms,
                "OpenCL launch"
            );
        }
        Ok(())
    }
}

impl Platform for OpenClBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    /// The highest OpenCL version among the platforms, `(major, minor, 0)`; `(0, 0, 0)` when
    /// unavailable.
    fn version(&self) -> (u32, u32, u32) {
        match self.state() {
            Ok(e) => (e.version.0, e.version.1, 0),
            Err(_) => (0, 0, 0),
        }
    }

    fn is_available(&self) -> bool {
        self.state().is_ok()
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        Ok(self
            .devices_slice()?
            .iter()
            .map(|d| d.info.clone())
            .collect())
    }

    crate::driver_core_methods!(self.core);
}

impl DeviceMemory for OpenClBackend {
    fn create_stream(&self, device: usize) -> Result<Stream> {
        let q = self.dev(device)?.new_queue()?;
        Ok(Stream::new(device, Box::new(ClStream(q))))
    }

    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        let dev = self.dev(stream.device())?;
        self.queue(dev, Some(stream))?
            .finish()
            .map_err(|e| cl_err("clFinish", e))
    }

    fn destroy_stream(&self, stream: Stream) -> Result<()> {
        let r = self.synchronize_stream(&stream);
        drop(stream);
        r
    }

    fn synchronize(&self, device: usize) -> Result<()> {
        self.dev(device)?
            .queue
            .finish()
            .map_err(|e| cl_err("clFinish", e))
    }

    /// Allocates a zeroed buffer (see the [module docs](self)).
    fn alloc(&self, device: usize, bytes: usize) -> Result<DeviceMem> {
        let dev = self.dev(device)?;
        if bytes as u64 > dev.max_alloc {
            return Err(self.core.mem_err(format!(
                "cannot allocate {bytes} bytes on {}: the device's largest allocation \
                 (CL_DEVICE_MAX_MEM_ALLOC_SIZE) is {} bytes ({:.2} GiB); split the data into \
                 several buffers",
                dev.info.name,
                dev.max_alloc,
                dev.max_alloc as f64 / (1u64 << 30) as f64
            )));
        }
        // OpenCL refuses empty buffers: an empty allocation holds one byte nobody reads.
        let size = bytes.max(1);
        // SAFETY: no host pointer.
        let mut buf = unsafe {
            ClBuffer::<u8>::create(&dev.context, CL_MEM_READ_WRITE, size, ptr::null_mut())
        }
        .map_err(|e| {
            self.core.mem_err(format!(
                "clCreateBuffer of {bytes} bytes failed: {e} ({})",
                e.0
            ))
        })?;
        // Zero it; waiting surfaces a failed (lazy) allocation here rather than at first use.
        let zero = [0u8];
        let filled = if dev.version >= (1, 2) {
            // SAFETY: the whole buffer, with a one-byte pattern.
            unsafe { dev.queue.enqueue_fill_buffer(&mut buf, &zero, 0, size, &[]) }
        } else {
            let zeros = vec![0u8; size];
            // SAFETY: a blocking write from a live host vector of `size` bytes.
            unsafe {
                dev.queue
                    .enqueue_write_buffer(&mut buf, CL_BLOCKING, 0, &zeros, &[])
            }
        };
        filled.and_then(|ev| ev.wait()).map_err(|e| {
            self.core
                .mem_err(format!("allocating {bytes} bytes failed: {e} ({})", e.0))
        })?;
        Ok(DeviceMem::new(device, bytes, Box::new(ClMem(buf))))
    }

    unsafe fn copy_h2d_ptr(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
    ) -> Result<()> {
        self.core.check_span(dst, offset, bytes, "an upload")?;
        if bytes == 0 {
            return Ok(());
        }
        let dev = self.dev(dst.device())?;
        let mem = self.cl_mem_of(dst)?;
        // SAFETY: a blocking write; the caller guarantees `src` is readable for `bytes` bytes
        // for the duration of the call, and the range fits the allocation.
        unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                dev.queue.get(),
                mem.cl_mem(),
                CL_BLOCKING,
                offset,
                bytes,
                src as *const c_void,
                0,
                ptr::null(),
            )
        }
        .map(|ev| drop(opencl3::event::Event::new(ev)))
        .map_err(|e| {
            self.core.mem_err(format!(
                "upload of {bytes} bytes failed: {} ({e})",
                ClError(e)
            ))
        })
    }

    unsafe fn copy_d2h_ptr(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
    ) -> Result<()> {
        self.core.check_span(src, offset, bytes, "a download")?;
        if bytes == 0 {
            return Ok(());
        }
        let dev = self.dev(src.device())?;
        let mem = self.cl_mem_of(src)?;
        // SAFETY: a blocking read; the caller guarantees `dst` is writable for `bytes` bytes.
        unsafe {
            opencl3::command_queue::enqueue_read_buffer(
                dev.queue.get(),
                mem.cl_mem(),
                CL_BLOCKING,
                offset,
                bytes,
                dst as *mut c_void,
                0,
                ptr::null(),
            )
        }
        .map(|ev| drop(opencl3::event::Event::new(ev)))
        .map_err(|e| {
            self.core.mem_err(format!(
                "download of {bytes} bytes failed: {} ({e})",
                ClError(e)
            ))
        })
    }

    fn copy_d2d(&self, dst: &DeviceMem, src: &DeviceMem, bytes: usize) -> Result<()> {
        self.core
            .check_span(dst, 0, bytes, "a device-to-device copy")?;
        self.core
            .check_span(src, 0, bytes, "a device-to-device copy")?;
        if dst.device() != src.device() {
            return Err(self.core.mem_err(format!(
                "a device-to-device copy between OpenCL devices {} and {}",
                src.device(),
                dst.device()
            )));
        }
        if bytes == 0 || dst.id() == src.id() {
            return Ok(());
        }
        let dev = self.dev(dst.device())?;
        // SAFETY: both ranges fit their allocations; distinct allocations cannot overlap.
        unsafe {
            opencl3::command_queue::enqueue_copy_buffer(
                dev.queue.get(),
                self.cl_mem_of(src)?.cl_mem(),
                self.cl_mem_of(dst)?.cl_mem(),
                0,
                0,
                bytes,
                0,
                ptr::null(),
            )
        }
        .map(|ev| drop(opencl3::event::Event::new(ev)))
        .map_err(|e| {
            self.core.mem_err(format!(
                "device-to-device copy of {bytes} bytes failed: {} ({e})",
                ClError(e)
            ))
        })
    }

    fn free(&self, mem: DeviceMem) -> Result<()> {
        // Releasing the buffer is safe with commands still queued: OpenCL frees it after them.
        drop(mem);
        Ok(())
    }

    fn create_event(&self, device: usize) -> Result<Event> {
        self.dev(device)?;
        Ok(Event::new(device, Box::new(ClEvent(Mutex::new(None)))))
    }

    fn record_event(&self, event: &Event, stream: Option<&Stream>) -> Result<()> {
        let dev = self.dev(event.device())?;
        let queue = self.queue(dev, stream)?;
        let slot = self
            .core
            .event::<ClEvent>(event, "an event of another backend")?;
        // SAFETY: a marker with no wait list.
        let marker = unsafe { queue.enqueue_marker_with_wait_list(&[]) }
            .map_err(|e| cl_err("clEnqueueMarkerWithWaitList", e))?;
        *slot.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(marker);
        Ok(())
    }

    fn event_elapsed_ms(&self, start: &Event, end: &Event) -> Result<f32> {
        let time = |e: &Event, which: &str| -> Result<u64> {
            let slot = self
                .core
                .event::<ClEvent>(e, "an event of another backend")?;
            let guard = slot.0.lock().unwrap_or_else(|e| e.into_inner());
            let ev = guard.as_ref().ok_or_else(|| {
                self.core
                    .driver_err(format!("the {which} event was never recorded"))
            })?;
            ev.wait().map_err(|e| cl_err("clWaitForEvents", e))?;
            ev.profiling_command_end()
                .map_err(|e| cl_err("reading the event's profiling time", e))
        };
        let (t0, t1) = (time(start, "start")?, time(end, "end")?);
        Ok(((t1 as i128 - t0 as i128) as f64 / 1e6) as f32)
    }
}

impl Compiler for OpenClBackend {
    fn codegen_target(&self) -> Option<Target> {
        Some(Target::OpenCl)
    }

    /// The device's own capabilities; for an unknown device what any device of this backend
    /// has (their union).
    fn codegen_caps(&self, device: Option<usize>) -> Result<spoc_codegen::Capabilities> {
        Ok(match device {
            Some(d) => self.dev(d)?.codegen_caps.clone(),
            None => DriverCore::union_caps(
                Target::OpenCl,
                self.devices_slice()
                    .unwrap_or(&[])
                    .iter()
                    .map(|d| d.codegen_caps.clone()),
            ),
        })
    }

    fn supports_checked_mode(&self) -> bool {
        true
    }

    fn compile(
        &self,
        device: usize,
        kernel: &ValidKernel,
        source: &Source,
        options: &CompileOptions,
    ) -> Result<Module> {
        let dev = self.dev(device)?;
        let Code::Text(text) = &source.code else {
            return Err(Error::unsupported(
                NAME,
                format!(
                    "kernel `{}` as {:?} (OpenCL builds OpenCL C)",
                    kernel.name, source.target
                ),
            ));
        };
        let opts = self.build_options(dev, &kernel.name, text, &options.flags)?;
        let mut module = program::build(
            dev,
            device,
            &kernel.name,
            text,
            &source.entry,
            &opts,
            Abi::Generated(source.abi.clone()),
        )?;
        if source.abi.has_fault_record() {
            module.checked = Some(program::Checked::new(kernel.kernel().clone()));
        }
        Ok(Module::new(device, Box::new(module)))
    }

    fn module_cache(&self) -> Option<&crate::cache::ModuleCache> {
        Some(self.core.cache())
    }
}

impl Executor for OpenClBackend {
    /// On a stream, the launch first waits for the work of the device's default queue (the
    /// order CUDA's legacy default stream gives: the runtime's use tracking covers the other
    /// direction); queues are otherwise independent in OpenCL.
    fn launch(&self, module: &Module, config: &LaunchConfig<'_>, args: &[Arg<'_>]) -> Result<()> {
        let (grid, block, shared_mem) = (config.grid, config.block, config.shared_mem_bytes);
        let m = self
            .core
            .module::<ClModule>(module, "a module of another backend")?;
        let dev = self.dev(m.device)?;
        if config.stream.is_some() {
            dev.queue.finish().map_err(|e| cl_err("clFinish", e))?;
        }
        let queue = self.queue(dev, config.stream)?;
        self.enqueue(dev, m, queue, grid, block, shared_mem, args, false)
    }

    fn supported_source_langs(&self) -> &[SourceLang] {
        &[SourceLang::OpenClC]
    }

    /// Builds external OpenCL C for the device with the options of generated kernels;
    /// [`Executor::run_source`] caches, checks, launches (binding the arguments as the backend's
    /// docs say) and waits.
    fn load_external(
        &self,
        device: usize,
        _lang: SourceLang,
        source: &str,
        kernel_name: &str,
    ) -> Result<Module> {
        let dev = self.dev(device)?;
        let opts = self.build_options(dev, kernel_name, source, &[])?;
        let m = program::build(
            dev,
            device,
            kernel_name,
            source,
            kernel_name,
            &opts,
            Abi::External,
        )?;
        Ok(Module::new(device, Box::new(m)))
    }
}
