//! The **HIP** backend (cargo feature `hip`, off by default): the AMD twin of
//! [`crate::cuda`]'s CUDA/C. It compiles the HIP C that `spoc_codegen` writes
//! ([`Target::Hip`]) with hiprtc (`--offload-arch=<gcnArchName> -ffp-contract=off`), loads the
//! code object with `hipModuleLoadData` and launches with `hipModuleLaunchKernel`.
//!
//! # Untested on hardware
//! No AMD GPU was reachable while this backend was written: it is built and checked against
//! Debian's ROCm 5.2 headers and `libamdhip64` (`hip-sys` 0.1, whose bindings match 5.2's
//! `hipDeviceProp_t` layout), and its tests only exercise the path without a device, where
//! [`Platform::is_available`] is false and [`HipBackend::unavailable_reason`] says why. Every
//! HIP and hiprtc call's status is checked and turned into an [`Error`]; none panics.
//!
//! # Building and linking
//! `hip-sys` needs the HIP headers at build time (`HIP_PATH`/`ROCM_PATH`, or `/usr`; Debian:
//! `libamdhip64-dev`) and links `libamdhip64`, so a program built with `hip` needs that library
//! to start (unlike the CUDA, OpenCL and Vulkan backends, which load their drivers at run time).
//! hiprtc is taken from `libamdhip64` too, as in ROCm 5.x.
//!
//! # Known hiprtc problems (Debian's ROCm 5.2)
//! - hiprtc and PoCL (the OpenCL CPU platform) cannot share a process: each brings its own
//!   LLVM, and whichever loads second aborts the process ("Option ... registered more than
//!   once"). Lavapipe (Vulkan) is not affected. Nothing in this backend can catch that.
//! - Two compiles at once abort the same way, so compiles are serialised.
//! - The HIP runtime must be initialised before the first compile (done here).
//! - An architecture hiprtc does not know (`gfx1100` on 5.2) crashes it (SIGSEGV) instead of
//!   failing; a device's own `gcnArchName` is always known to its runtime.
//!
//! # Devices
//! One device per HIP device, in runtime order, named by `hipDeviceProp_t::name`.
//! Capabilities come from `hipGetDeviceProperties`: threads per block, block and grid limits,
//! shared memory per block (64 KiB on current AMD GPUs), the wavefront size (`warp_size`, 64 on
//! most AMD GPUs, 32 on RDNA in wave32 mode), compute units, total memory, and `fp64`, 64-bit
//! atomics and warp operations from the architecture flags. [`HipBackend::arch`] gives the
//! `gcnArchName` hiprtc compiles for.
//!
//! # Argument ABI (generated and external kernels alike)
//! As CUDA/C's: each argument in order; a buffer is its device address (8 bytes) followed by
//! its length in elements (`unsigned int`); a scalar by value (`bool` as one byte,
//! [`Arg::Usize`] as an `unsigned int`, refused if it does not fit). For a generated kernel
//! with a shared array sized at launch, its length in elements (`unsigned int`) follows. The
//! arguments are packed into one buffer, each at its natural alignment, and passed through
//! `hipModuleLaunchKernel`'s `extra` (`HIP_LAUNCH_PARAM_BUFFER_POINTER`), the form HIP
//! documents for module launches.
//!
//! # Streams, memory and synchronisation
//! Launches without a stream go to the null stream, and transfers are synchronous
//! `hipMemcpy{HtoD,DtoH,DtoD}`, so a download after a launch sees its writes. A kernel's own
//! fault surfaces at the next synchronising call; [`Executor::run_source`] synchronises before
//! returning. Allocations are `hipMalloc` (contents unspecified).
//!
//! # Caches
//! A [`ModuleCache`](crate::cache::ModuleCache) keyed by (backend-local device, kernel name, IR hash, options);
//! [`HipBackend::teardown_device`] drops a device's modules and announces it through
//! [`crate::cache::notify_device_teardown`].

mod hiprtc;
mod runtime;

use crate::args::Arg;
use crate::backend::{
    CompileOptions, Compiler, DeviceInfo, DeviceMem, DeviceMemory, Event, LaunchConfig, Module,
    Platform, Source, SourceLang, Stream, Target,
};
use crate::driver_core::DriverCore;
use crate::error::{Error, Result};
use crate::executor::Executor;
use hip_sys::hiprt;
use runtime::{check, HipDevice, HipEvent, HipKernel, HipMem, HipStream};
use spoc_ir::ValidKernel;
use std::ffi::c_void;

/// The HIP backend's name.
pub const NAME: &str = "HIP";

/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `HIP_LAUNCH_PARAM_BUFFER_SIZE`, `HIP_LAUNCH_PARAM_END`
/// (`hip_runtime_api.h`: the pointers 1, 2 and 3).
const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
const LAUNCH_PARAM_END: usize = 3;

/// The HIP backend (`"HIP"`). Nothing is asked of the runtime until it is first used.
pub struct HipBackend {
    core: DriverCore,
}

impl Default for HipBackend {
    fn default() -> Self {
        HipBackend::new()
    }
}

impl HipBackend {
    /// A new backend.
    pub fn new() -> HipBackend {
        HipBackend {
            core: DriverCore::new(NAME),
        }
    }

    /// Why the backend is unavailable (`hipGetDeviceCount`'s error, or no device), or `None`
    /// when it has at least one device.
    pub fn unavailable_reason(&self) -> Option<String> {
        runtime::runtime().err().map(str::to_string)
    }

    /// The `gcnArchName` of backend-local device `device` (`gfx90a:sramecc+:xnack-`), which
    /// hiprtc compiles for.
    ///
    /// # Errors
    /// [`Error::BackendUnavailable`] without a device; [`Error::NoDevice`] for a bad index.
    pub fn arch(&self, device: usize) -> Result<String> {
        Ok(self.device(device)?.arch.clone())
    }

    /// The hiprtc options a compile for `arch` with extra `flags` uses, in order
    /// (`--offload-arch=<arch>`, `-ffp-contract=off`, then `flags`).
    pub fn compile_options(arch: &str, flags: &[String]) -> Vec<String> {
        hiprtc::options(arch, flags)
    }

    /// Compiles HIP C `source` with hiprtc for the GPU architecture `arch` (`gfx90a`,
    /// `gfx1100`, or a full `gcnArchName` with features) and returns the code object (an ELF
    /// image that `hipModuleLoadData` accepts). Needs hiprtc but no device, so generated code can
    /// be checked on a machine without an AMD GPU. `name` names the program in messages.
    ///
    /// # Errors
    /// [`Error::Compile`] with hiprtc's status, options and log.
    pub fn compile_to_code_object(
        source: &str,
        name: &str,
        arch: &str,
        flags: &[String],
    ) -> Result<Vec<u8>> {
        hiprtc::compile(source, name, arch, flags).map_err(|message| Error::Compile {
            backend: NAME.to_string(),
            kernel: name.to_string(),
            message,
        })
    }

    /// Drops backend-local device `device`'s compiled modules (each is unloaded once nothing
    /// uses it) and announces the teardown ([`crate::cache::notify_device_teardown`]); builds
    /// in flight for the device fail with [`Error::DeviceDestroyedDuringBuild`].
    pub fn teardown_device(&self, device: usize) {
        self.core.teardown_device(device);
    }

    /// Number of modules in this backend's cache.
    pub fn cached_modules(&self) -> usize {
        self.core.cached_modules()
    }

    fn rt(&self) -> Result<&'static runtime::Runtime> {
        runtime::runtime().map_err(|reason| self.core.unavailable(reason))
    }

    fn device(&self, local: usize) -> Result<&'static HipDevice> {
        self.rt()?
            .devices
            .get(local)
            .ok_or_else(|| self.core.no_device())
    }

    /// Makes backend-local `local` current on this thread.
    fn bind(&self, local: usize) -> Result<&'static HipDevice> {
        let d = self.device(local)?;
        runtime::bind(d.ordinal).map_err(|m| self.core.driver_err(m))?;
        Ok(d)
    }

    fn check(&self, r: hiprt::hipError_t, what: &str) -> Result<()> {
        check(r, what).map_err(|m| self.core.driver_err(m))
    }

    /// Compiles HIP C with hiprtc for `device` and loads it.
    fn load_hip_c(
        &self,
        device: usize,
        kernel_name: &str,
        src: &str,
        entry: &str,
        flags: &[String],
        abi: Option<spoc_codegen::Abi>,
    ) -> Result<HipKernel> {
        let dev = self.device(device)?;
        let compile_err = |message| self.core.compile_err(kernel_name, message);
        let image = hiprtc::compile(src, entry, &dev.arch, flags).map_err(compile_err)?;
        tracing::debug!(kernel = kernel_name, arch = %dev.arch, bytes = image.len(), "hiprtc compiled");
        let (module, function) =
            runtime::load_module(dev.ordinal, &image, entry).map_err(compile_err)?;
        Ok(HipKernel {
            ordinal: dev.ordinal,
            module,
            function,
            name: entry.to_string(),
            abi,
        })
    }

    /// Packs `args` per the module's ABI (the generated kernel's, or for an external kernel
    /// the [module's ABI](self) read off the arguments) into one argument buffer, each value at
    /// its natural alignment ([`crate::bind::pack_natural`]).
    fn pack_args(
        &self,
        k: &HipKernel,
        local: usize,
        shared_mem: usize,
        args: &[Arg<'_>],
    ) -> Result<Vec<u8>> {
        if args.iter().any(|a| a.soa().is_some()) {
            return Err(Error::unsupported(
                self.name(),
                "Structure-of-Arrays buffer arguments (only CUDA/PTX lowers them)",
            ));
        }
        let abi = crate::bind::abi_or_external(k.abi.as_ref(), args);
        let bad = |problem| Error::invalid_launch(&k.name, problem);
        let bound = crate::bind::arguments(&abi, args, shared_mem).map_err(bad)?;
        let packed = crate::bind::pack_natural(
            &bound,
            |mem, i| Ok(crate::bind::device_buffer::<HipMem>(mem, i, local, "HIP")?.ptr as u64),
            None,
        );
        packed.map_err(bad)
    }

    /// Binds `args` per the [module's ABI](self) and launches.
    fn launch_kernel(
        &self,
        k: &HipKernel,
        local: usize,
        config: &LaunchConfig<'_>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let (grid, block, shared_mem) = (config.grid, config.block, config.shared_mem_bytes);
        let mut packed = self.pack_args(k, local, shared_mem, args)?;
        let dev = self.bind(local)?;
        let hip_stream = self.stream_of(config.stream, local)?;
        let shared =
            DriverCore::shared_mem_u32(&k.name, shared_mem, dev.caps.shared_mem_per_block)?;
        let events = || {
            let ev = |o| HipEvent::new(o).map_err(|m| self.core.driver_err(m));
            Ok((ev(dev.ordinal)?, ev(dev.ordinal)?))
        };
        let record = |e: &HipEvent| {
            // SAFETY: a live event and stream of the current device.
            let r = unsafe { hiprt::hipEventRecord(e.event, hip_stream) };
            self.check(r, "hipEventRecord")
        };
        let launch = || {
            let mut size = packed.len();
            let mut extra: [*mut c_void; 5] = [
                LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
                packed.as_mut_ptr().cast(),
                LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
                (&mut size as *mut usize).cast(),
                LAUNCH_PARAM_END as *mut c_void,
            ];
            let (g, b) = (grid.to_array(), block.to_array());
            // SAFETY: `extra` describes the packed argument buffer (each argument at its
            // natural alignment, in the kernel's parameter order, per the ABI above) and its
            // size, both alive until the call returns (HIP copies them); the function belongs
            // to the current device; device addresses belong to this device's allocations,
            // kept alive by the caller's borrows.
            let r = unsafe {
                hiprt::hipModuleLaunchKernel(
                    k.function,
                    g[0],
                    g[1],
                    g[2],
                    b[0],
                    b[1],
                    b[2],
                    shared,
                    hip_stream,
                    std::ptr::null_mut(),
                    extra.as_mut_ptr(),
                )
            };
            self.check(r, &format!("hipModuleLaunchKernel(`{}`)", k.name))
        };
        let elapsed = |start: &HipEvent, end: &HipEvent| self.elapsed_ms(start, end);
        self.core
            .profiled(&k.name, config, events, record, elapsed, launch)
    }

    /// Waits for `end`, then returns the milliseconds between the two events.
    fn elapsed_ms(&self, start: &HipEvent, end: &HipEvent) -> Result<f32> {
        let mut ms = 0f32;
        // SAFETY: live events; valid out-pointer.
        unsafe {
            self.check(hiprt::hipEventSynchronize(end.event), "hipEventSynchronize")?;
            self.check(
                hiprt::hipEventElapsedTime(&mut ms, start.event, end.event),
                "hipEventElapsedTime",
            )?;
        }
        Ok(ms)
    }

    fn stream_of(&self, stream: Option<&Stream>, local: usize) -> Result<hiprt::hipStream_t> {
        match stream {
            None => Ok(std::ptr::null_mut()),
            Some(s) => Ok(self
                .core
                .stream::<HipStream>(s, local, "not a HIP stream")?
                .stream),
        }
    }

    fn hmem<'m>(&self, mem: &'m DeviceMem) -> Result<&'m HipMem> {
        self.core.memory(mem, "not a HIP allocation")
    }
}

impl Platform for HipBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    /// The HIP runtime's version; (0, 0, 0) without a device.
    fn version(&self) -> (u32, u32, u32) {
        runtime::runtime().map(|r| r.version).unwrap_or((0, 0, 0))
    }

    /// True when the HIP runtime reports at least one device and hiprtc answers.
    fn is_available(&self) -> bool {
        if let Err(why) = runtime::runtime() {
            tracing::debug!("HIP: {why}");
            return false;
        }
        match hiprtc::version() {
            Ok(_) => true,
            Err(why) => {
                tracing::debug!("HIP: {why}");
                false
            }
        }
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        let devices = self.rt()?.devices.iter();
        Ok(DriverCore::device_infos(
            devices.map(|d| (d.name.clone(), d.caps)),
        ))
    }

    fn capabilities(&self, device: usize) -> Result<crate::Capabilities> {
        Ok(self.device(device)?.caps)
    }

    crate::driver_core_methods!(self.core);
}

impl DeviceMemory for HipBackend {
    fn create_stream(&self, device: usize) -> Result<Stream> {
        let dev = self.bind(device)?;
        let mut s: hiprt::hipStream_t = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the device is current.
        self.check(unsafe { hiprt::hipStreamCreate(&mut s) }, "hipStreamCreate")?;
        Ok(Stream::new(
            device,
            Box::new(HipStream {
                ordinal: dev.ordinal,
                stream: s,
            }),
        ))
    }

    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        let s = self.stream_of(Some(stream), stream.device())?;
        self.bind(stream.device())?;
        // SAFETY: a live stream of the current device.
        self.check(
            unsafe { hiprt::hipStreamSynchronize(s) },
            "hipStreamSynchronize",
        )
    }

    fn destroy_stream(&self, stream: Stream) -> Result<()> {
        self.stream_of(Some(&stream), stream.device())?;
        drop(stream); // HipStream destroys itself
        Ok(())
    }

    fn synchronize(&self, device: usize) -> Result<()> {
        self.bind(device)?;
        // SAFETY: the device is current.
        self.check(
            unsafe { hiprt::hipDeviceSynchronize() },
            "hipDeviceSynchronize",
        )
    }

    /// Allocates with `hipMalloc` (contents unspecified); a 0-byte allocation owns nothing.
    fn alloc(&self, device: usize, bytes: usize) -> Result<DeviceMem> {
        self.bind(device)?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        if bytes > 0 {
            // SAFETY: valid out-pointer; the device is current.
            let r = unsafe { hiprt::hipMalloc(&mut ptr, bytes) };
            check(r, &format!("hipMalloc of {bytes} bytes")).map_err(|m| self.core.mem_err(m))?;
            if ptr.is_null() {
                return Err(self
                    .core
                    .mem_err(format!("hipMalloc of {bytes} bytes returned null")));
            }
        }
        Ok(DeviceMem::new(
            device,
            bytes,
            Box::new(HipMem { ptr: ptr as usize }),
        ))
    }

    unsafe fn copy_h2d_ptr(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
    ) -> Result<()> {
        let m = self.hmem(dst)?;
        if !self.core.check_transfer(dst, offset, bytes)? {
            return Ok(());
        }
        self.bind(dst.device())?;
        // SAFETY: the caller guarantees `src` is readable for `bytes`; the range is inside the
        // allocation (checked above). HIP's signature takes `*mut` but only reads.
        let r = unsafe { hiprt::hipMemcpyHtoD(m.at(offset), src as *mut c_void, bytes) };
        check(r, &format!("hipMemcpyHtoD of {bytes} bytes")).map_err(|e| self.core.mem_err(e))
    }

    unsafe fn copy_d2h_ptr(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
    ) -> Result<()> {
        let m = self.hmem(src)?;
        if !self.core.check_transfer(src, offset, bytes)? {
            return Ok(());
        }
        self.bind(src.device())?;
        // SAFETY: the caller guarantees `dst` is writable for `bytes`; the range is inside the
        // allocation.
        let r = unsafe { hiprt::hipMemcpyDtoH(dst.cast(), m.at(offset), bytes) };
        check(r, &format!("hipMemcpyDtoH of {bytes} bytes")).map_err(|e| self.core.mem_err(e))
    }

    fn copy_d2d(&self, dst: &DeviceMem, src: &DeviceMem, bytes: usize) -> Result<()> {
        let (d, s) = (self.hmem(dst)?, self.hmem(src)?);
        if !self.core.check_d2d(dst, src, bytes, "HIP")? {
            return Ok(());
        }
        self.bind(dst.device())?;
        // SAFETY: both ranges lie inside live allocations of the current device.
        let r = unsafe { hiprt::hipMemcpyDtoD(d.at(0), s.at(0), bytes) };
        check(r, &format!("hipMemcpyDtoD of {bytes} bytes")).map_err(|e| self.core.mem_err(e))
    }

    fn free(&self, mem: DeviceMem) -> Result<()> {
        let m = self.hmem(&mem)?;
        if m.ptr == 0 {
            return Ok(());
        }
        self.bind(mem.device())?;
        // SAFETY: allocated by hipMalloc and freed once (`mem` is consumed).
        let r = unsafe { hiprt::hipFree(m.at(0)) };
        check(r, "hipFree").map_err(|e| self.core.mem_err(e))
    }

    fn create_event(&self, device: usize) -> Result<Event> {
        let dev = self.device(device)?;
        let ev = HipEvent::new(dev.ordinal).map_err(|m| self.core.driver_err(m))?;
        Ok(Event::new(device, Box::new(ev)))
    }

    fn record_event(&self, event: &Event, stream: Option<&Stream>) -> Result<()> {
        let ev = self.core.event::<HipEvent>(event, "not a HIP event")?;
        let s = self.stream_of(stream, event.device())?;
        self.bind(event.device())?;
        // SAFETY: a live event and stream of the current device.
        self.check(
            unsafe { hiprt::hipEventRecord(ev.event, s) },
            "hipEventRecord",
        )
    }

    /// Waits for `end`, then returns the milliseconds between the two events.
    fn event_elapsed_ms(&self, start: &Event, end: &Event) -> Result<f32> {
        let (a, b) = self
            .core
            .event_pair::<HipEvent>(start, end, "not a HIP event")?;
        self.bind(end.device())?;
        self.elapsed_ms(a, b)
    }
}

impl Compiler for HipBackend {
    fn codegen_target(&self) -> Option<Target> {
        Some(Target::Hip)
    }

    /// The device's own capabilities (`f64`, 64-bit atomics, warp operations), so what it
    /// lacks is refused by code generation instead of failing in hiprtc; for an unknown device
    /// a capable AMD GPU.
    fn codegen_caps(&self, device: Option<usize>) -> Result<spoc_codegen::Capabilities> {
        let mut caps = spoc_codegen::Capabilities::for_target(Target::Hip);
        if let Some(d) = device {
            let d = self.device(d)?;
            caps.fp64 = d.caps.fp64;
            caps.int64_atomics = d.caps.int64_atomics;
            caps.subgroups = d.caps.subgroups;
        }
        Ok(caps)
    }

    fn compile(
        &self,
        device: usize,
        kernel: &ValidKernel,
        source: &Source,
        options: &CompileOptions,
    ) -> Result<Module> {
        self.device(device)?;
        let text = self.core.text(&kernel.name, source)?;
        let k = self.load_hip_c(
            device,
            &kernel.name,
            text,
            &source.entry,
            &options.flags,
            Some(source.abi.clone()),
        )?;
        Ok(Module::new(device, Box::new(k)))
    }

    fn module_cache(&self) -> Option<&crate::cache::ModuleCache> {
        Some(self.core.cache())
    }
}

impl Executor for HipBackend {
    fn launch(&self, module: &Module, config: &LaunchConfig<'_>, args: &[Arg<'_>]) -> Result<()> {
        let k = self.core.module::<HipKernel>(module, "not a HIP module")?;
        self.launch_kernel(k, module.device(), config, args)
    }

    fn supported_source_langs(&self) -> &[SourceLang] {
        &[SourceLang::HipC, SourceLang::CudaC]
    }

    /// Compiles external HIP C or CUDA C (the subset HIP accepts) with hiprtc for the device,
    /// kernel `kernel_name` (an `extern "C"` name); [`Executor::run_source`] caches, checks,
    /// launches (binding the arguments per the [module's ABI](self), no trailing shared length)
    /// and waits.
    fn load_external(
        &self,
        device: usize,
        _lang: SourceLang,
        source: &str,
        kernel_name: &str,
    ) -> Result<Module> {
        let k = self.load_hip_c(device, kernel_name, source, kernel_name, &[], None)?;
        Ok(Module::new(device, Box::new(k)))
    }
}

#[cfg(test)]
mod tests {
    use crate::bind::pack_natural;
    use crate::Arg;
    use spoc_codegen::abi::{Abi, AbiParam, ParamKind};
    use spoc_ir::ScalarType;

    #[test]
    fn arguments_are_packed_at_natural_alignment() {
        let scalar = |t| AbiParam {
            name: String::new(),
            kind: ParamKind::Scalar(t),
        };
        let abi = Abi::external_arguments(
            vec![
                scalar(ScalarType::Bool),
                scalar(ScalarType::U32),
                scalar(ScalarType::U64),
                scalar(ScalarType::Bool),
                scalar(ScalarType::F64),
                scalar(ScalarType::U32),
            ],
            false,
        );
        let args = [
            Arg::Bool(true),  // at 0
            Arg::U32(7),      // at 4
            Arg::U64(9),      // at 8
            Arg::Bool(false), // at 16
            Arg::F64(2.5),    // at 24
            Arg::U32(3),      // at 32
        ];
        let bound = crate::bind::arguments(&abi, &args, 0).unwrap();
        let v = pack_natural(&bound, |_, _| unreachable!(), None).unwrap();
        assert_eq!(v.len(), 40);
        assert_eq!(v[0], 1);
        assert_eq!(&v[1..4], &[0, 0, 0]);
        assert_eq!(u32::from_ne_bytes(v[4..8].try_into().unwrap()), 7);
        assert_eq!(u64::from_ne_bytes(v[8..16].try_into().unwrap()), 9);
        assert_eq!(v[16], 0);
        assert_eq!(f64::from_ne_bytes(v[24..32].try_into().unwrap()), 2.5);
        assert_eq!(u32::from_ne_bytes(v[32..36].try_into().unwrap()), 3);
    }
}
