//! The CUDA backends (cargo feature `cuda`, on by default): **CUDA/PTX**, which loads the PTX
//! that `spoc_codegen` writes directly (`cuModuleLoadData`, no NVRTC), and **CUDA/C**, which
//! compiles the generated CUDA C with NVRTC (`--fmad=false --gpu-architecture=sm_XY` of the
//! device). Both run on the same driver, devices and primary contexts; the driver and NVRTC are
//! loaded at run time through cudarc, so the program builds and starts without CUDA, and a
//! missing driver makes [`Platform::is_available`] false (never a panic).
//!
//! # Devices
//! One device per CUDA device, in driver order, named as the driver names it. Capabilities
//! come from the device's attributes: threads per block, block and grid limits, warp size,
//! multiprocessors, total memory, and shared memory per block *with opt-in* (227 KiB on
//! Hopper): a launch asking for more than the default 48 KiB opts its kernel in
//! (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`) before launching. `fp64`, 64-bit atomics
//! and warp operations are always on. Code generation gets the device's compute capability
//! ([`CudaBackend::compute_capability`]).
//!
//! # Argument ABI (generated and external kernels alike)
//! Each argument in order: a buffer is its device address (`u64`) followed by its length in
//! elements (`u32`); a scalar is passed by value (`bool` as one byte, [`Arg::Usize`] as a `u32`,
//! refused if it does not fit). For a CUDA C kernel with a shared array sized at launch, its
//! length in elements (`shared_mem / size_of::<T>()`, as a `u32`) follows. PTX kernels read the
//! dynamic shared size themselves.
//!
//! A Structure-of-Arrays record buffer ([`crate::SoaBuffer`], [`Arg::Soa`] / [`Arg::SoaMut`];
//! CUDA/PTX only) is one device address (`u64`) per field, in the record's declaration order,
//! then the length in elements (`u32`): the PTX generator's `name__soa_<field>` … `name__soa_len`
//! parameters, which it emits for the parameters named in [`CompileOptions::soa_params`] (the
//! runtime names every parameter given an SoA argument there). CUDA/C refuses SoA options with
//! [`Error::FeatureNotSupported`].
//!
//! # Streams, memory and synchronisation
//! Launches without a stream go to the legacy default stream, and transfers are synchronous
//! driver copies on it, so a download after a launch sees the launch's writes. Launches are
//! asynchronous: a kernel's own fault (an illegal address) surfaces at the next synchronising
//! call. [`Executor::run_source`] synchronises before returning. Streams made by
//! [`DeviceMemory::create_stream`] block on the default stream (`CU_STREAM_DEFAULT`).
//!
//! # Faults
//! A kernel's device-side fault breaks its context: the first call that sees it (a download,
//! a synchronise, the next launch) and every later call on the device return
//! [`Error::KernelFault`] naming the kernels launched since the last successful
//! synchronisation (the faulting thread is not known), with the driver's message.
//! `spoc::Device::reset()` recovers the device ([`Platform::recover`]): the broken context is
//! reset, every buffer, module, stream and event of it is gone — each refuses further use with
//! [`Error::ContextReset`] and is not freed again — and new ones work.
//!
//! # Caches
//! Each backend keeps a [`ModuleCache`](crate::cache::ModuleCache) keyed by (backend-local device, kernel name, IR hash,
//! options); [`CudaBackend::teardown_device`] drops a device's modules (unloading them once the
//! last user lets go) and announces it through [`crate::cache::notify_device_teardown`], so the
//! runtime's memo drops them too and builds in flight fail with
//! [`Error::DeviceDestroyedDuringBuild`].

mod driver;
mod nvrtc;
mod probe;

use crate::args::Arg;
use crate::backend::{
    CompileOptions, Compiler, DeviceInfo, DeviceMem, DeviceMemory, Event, GraphExec, LaunchConfig,
    Module, PinnedMem, Platform, Source, SourceLang, Stream, Target,
};
use crate::bind::Word;
use crate::checked_mode::RecordPool;
use crate::driver_core::DriverCore;
use crate::error::{Error, LaunchProblem, Result};
use crate::executor::Executor;
use cudarc::driver::sys::{self, CUstream};
use driver::{describe, CudaDevice, CudaEvent, CudaKernel, CudaMem, CudaStream};
use spoc_codegen::Abi;
use spoc_ir::{Kernel, ValidKernel};
use std::ffi::c_void;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The CUDA/PTX backend's name.
pub const PTX_NAME: &str = "CUDA/PTX";
/// The CUDA/C backend's name.
pub const C_NAME: &str = "CUDA/C";

/// Which way a [`CudaBackend`] turns kernels into modules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CudaVariant {
    /// PTX from `spoc_codegen`, loaded by the driver.
    Ptx,
    /// CUDA C from `spoc_codegen`, compiled by NVRTC.
    C,
}

/// The module handle of a kernel compiled in checked mode: the kernel, its IR (to name what
/// faulted) and the fault records (device allocations of
/// [`spoc_codegen::checked::RECORD_BYTES`]) not in use.
struct CheckedKernel {
    kernel: CudaKernel,
    ir: Kernel,
    records: RecordPool<u64>,
}

impl CheckedKernel {
    /// A fault record for one launch (the device's context is current).
    fn take(&self, b: &CudaBackend) -> Result<u64> {
        self.records.take(|| {
            let mut ptr = 0u64;
            // SAFETY: a valid out-pointer; the context is current.
            let r = unsafe { sys::cuMemAlloc_v2(&mut ptr, spoc_codegen::checked::RECORD_BYTES) };
            b.check(self.kernel.device, r, "allocating the fault record")?;
            Ok(ptr)
        })
    }
}

impl Drop for CheckedKernel {
    fn drop(&mut self) {
        // The records died with a context that a reset destroyed (as the module did).
        if self.kernel.device.generation() == self.kernel.generation
            && self.kernel.device.bind().is_ok()
        {
            for r in self.records.drain() {
                // SAFETY: allocated by cuMemAlloc for this context, freed once.
                unsafe { sys::cuMemFree_v2(r) };
            }
        }
    }
}

/// A CUDA backend: [`CudaVariant::Ptx`] (`"CUDA/PTX"`) or [`CudaVariant::C`] (`"CUDA/C"`).
pub struct CudaBackend {
    variant: CudaVariant,
    core: DriverCore,
    /// Per device, the context generation this backend's cached modules belong to.
    seen_generation: std::sync::Mutex<Vec<u64>>,
}

/// Kernel parameters whose values and pointers a launch keeps on the stack (more use the heap):
/// every kernel of the examples and tests (at most 16 slots, a checked kernel's fault record
/// one more), and each array zeroed per launch stays short.
const INLINE_PARAMS: usize = 24;

/// The first `n` elements of `inline` (`n <= INLINE_PARAMS`), or `n` copies of `v` in `heap`:
/// a launch's parameter array without an allocation for every usual kernel. (Plain arrays,
/// not a `SmallVec`: building and moving one cost a `memset` and a `memcpy` per launch.)
#[inline(always)]
fn params<'a, T: Copy>(
    n: usize,
    inline: &'a mut [T; INLINE_PARAMS],
    heap: &'a mut Vec<T>,
    v: T,
) -> &'a mut [T] {
    if n <= INLINE_PARAMS {
        &mut inline[..n]
    } else {
        heap.resize(n, v);
        heap
    }
}

/// Why a launch's arguments could not be turned into the driver's parameters.
enum BindFailure {
    /// A launch problem ([`Error::InvalidLaunch`] naming the kernel).
    Problem(LaunchProblem),
    /// Another error (a buffer of a context a reset destroyed).
    Error(Error),
}

impl From<LaunchProblem> for BindFailure {
    fn from(p: LaunchProblem) -> BindFailure {
        BindFailure::Problem(p)
    }
}

impl CudaBackend {
    /// A backend of `variant`. Nothing is loaded until it is first asked something.
    pub fn new(variant: CudaVariant) -> CudaBackend {
        CudaBackend {
            variant,
            core: DriverCore::new(match variant {
                CudaVariant::Ptx => PTX_NAME,
                CudaVariant::C => C_NAME,
            }),
            seen_generation: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The variant.
    pub fn variant(&self) -> CudaVariant {
        self.variant
    }

    fn target(&self) -> Target {
        match self.variant {
            CudaVariant::Ptx => Target::CudaPtx,
            CudaVariant::C => Target::CudaC,
        }
    }

    fn drv(&self) -> Result<&'static driver::Driver> {
        driver::driver().map_err(|r| self.core.unavailable(r))
    }

    fn device(&self, local: usize) -> Result<&'static CudaDevice> {
        self.drv()?
            .devices
            .get(local)
            .ok_or_else(|| self.core.no_device())
    }

    fn bind(&self, local: usize) -> Result<&'static CudaDevice> {
        self.bind_device(self.device(local)?)
    }

    /// [`CudaBackend::bind`] of a device already looked up (a kernel's or a stream's).
    fn bind_device(&self, d: &'static CudaDevice) -> Result<&'static CudaDevice> {
        if let Some(f) = d.lost() {
            return Err(self.fault_error(f));
        }
        d.bind().map_err(|m| self.core.driver_err(m))?;
        Ok(d)
    }

    /// The error a device fault is reported as: [`Error::KernelFault`] naming the kernels in
    /// flight (the thread is not known), with the driver's message.
    fn fault_error(&self, f: driver::Fault) -> Error {
        let mut kernel = f.kernels.join(", ");
        if f.more > 0 {
            kernel = format!("{kernel} (and {} launched before them)", f.more);
        }
        if kernel.is_empty() {
            kernel = "(none launched since the last synchronisation)".into();
        }
        Error::KernelFault {
            kernel,
            block: None,
            thread: None,
            message: f.message,
        }
    }

    /// Ok for success; the device's fault for a sticky status (see [`driver`]'s "Faults and
    /// recovery"); else `other("<what>: <driver message>")`.
    fn status(
        &self,
        dev: &'static CudaDevice,
        r: sys::CUresult,
        what: &str,
        other: impl FnOnce(String) -> Error,
    ) -> Result<()> {
        if r == sys::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        if driver::is_sticky(r) {
            return Err(self.fault_error(dev.faulted(r, what)));
        }
        Err(other(format!(
            "{what}: {}",
            describe(r).unwrap_or_default()
        )))
    }

    /// [`CudaBackend::status`] with [`Error::Driver`] for other failures.
    fn check(&self, dev: &'static CudaDevice, r: sys::CUresult, what: &str) -> Result<()> {
        self.status(dev, r, what, |m| self.core.driver_err(m))
    }

    /// [`CudaBackend::status`] with [`Error::Memory`] for other failures.
    fn mem_check(&self, dev: &'static CudaDevice, r: sys::CUresult, what: &str) -> Result<()> {
        self.status(dev, r, what, |m| self.core.mem_err(m))
    }

    /// Refuses a resource of a context that a reset destroyed.
    fn current(&self, dev: &CudaDevice, generation: u64, resource: &'static str) -> Result<()> {
        if generation == dev.generation() {
            Ok(())
        } else {
            Err(Error::ContextReset {
                backend: self.name().to_string(),
                resource,
            })
        }
    }

    /// After a device fault: resets every faulted device's context (shared by CUDA/PTX and
    /// CUDA/C) and drops this backend's modules of every device whose context changed.
    fn recover_contexts(&self) -> Result<()> {
        let drv = match driver::driver() {
            Ok(d) => d,
            Err(_) => return Ok(()),
        };
        let mut seen = self
            .seen_generation
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        seen.resize(drv.devices.len(), 0);
        let mut first_err = None;
        for (local, dev) in drv.devices.iter().enumerate() {
            if let Err(m) = dev.recover() {
                first_err.get_or_insert_with(|| self.core.driver_err(m));
            }
            if dev.generation() != seen[local] {
                seen[local] = dev.generation();
                self.teardown_device(local);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// The compute capability (major, minor) of backend-local device `device`.
    ///
    /// # Errors
    /// [`Error::BackendUnavailable`] without a driver; [`Error::NoDevice`] for a bad index.
    pub fn compute_capability(&self, device: usize) -> Result<(u32, u32)> {
        Ok(self.device(device)?.cc)
    }

    /// The lowest compute capability among the devices: what [`Compiler::generate_source`]
    /// generates for when it is not told the device (the driver JIT-compiles PTX forward).
    fn default_cc(&self) -> Option<(u32, u32)> {
        driver::driver().ok()?.devices.iter().map(|d| d.cc).min()
    }

    /// Runs a checked kernel: a zeroed fault record ([`spoc_codegen::checked`]) as the last
    /// argument, read back after the launch (a synchronous copy, so checked launches wait for
    /// their kernel); a fault is [`Error::KernelFault`].
    fn launch_checked(
        &self,
        c: &CheckedKernel,
        local: usize,
        config: &LaunchConfig<'_>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        self.bind(local)?;
        let rec = c.take(self)?;
        let zeros = [0u8; spoc_codegen::checked::RECORD_BYTES];
        // SAFETY: `rec` is a live allocation of RECORD_BYTES on this device (context current).
        let r = unsafe { sys::cuMemcpyHtoD_v2(rec, zeros.as_ptr().cast(), zeros.len()) };
        let zeroed = self.check(c.kernel.device, r, "zeroing the fault record");
        let launched =
            zeroed.and_then(|()| self.launch_kernel(&c.kernel, local, config, args, Some(rec)));
        let mut bytes = [0u8; spoc_codegen::checked::RECORD_BYTES];
        let read = launched.and_then(|()| {
            if let Some(s) = config.stream {
                self.synchronize_stream(s)?;
            }
            // SAFETY: as above; `bytes` is writable for RECORD_BYTES. A synchronous copy on the
            // default stream: it waits for the kernel.
            let r = unsafe { sys::cuMemcpyDtoH_v2(bytes.as_mut_ptr().cast(), rec, bytes.len()) };
            self.check(
                c.kernel.device,
                r,
                &format!("running kernel `{}`", c.kernel.name),
            )
        });
        c.records.give_back(rec);
        read?;
        crate::checked_mode::check_record(&c.ir, &bytes)
    }

    /// Drops backend-local device `device`'s compiled modules (each is unloaded once nothing
    /// uses it any more) and announces the teardown to the runtime's memo and hooks
    /// ([`crate::cache::notify_device_teardown`]); builds in flight for the device fail with
    /// [`Error::DeviceDestroyedDuringBuild`]. Memory and streams stay valid.
    pub fn teardown_device(&self, device: usize) {
        self.core.teardown_device(device);
    }

    /// Number of modules in this backend's cache.
    pub fn cached_modules(&self) -> usize {
        self.core.cached_modules()
    }

    /// Loads an image (NUL-terminated PTX, or a cubin) as a kernel.
    fn load(
        &self,
        device: usize,
        kernel_name: &str,
        image: &[u8],
        entry: &str,
        abi: Option<Abi>,
    ) -> Result<CudaKernel> {
        let dev = self.device(device)?;
        let (module, function) = driver::load_module(dev, image, entry)
            .map_err(|message| self.core.compile_err(kernel_name, message))?;
        Ok(CudaKernel {
            device: dev,
            module,
            function,
            name: entry.to_string(),
            id: driver::next_kernel_id(),
            abi,
            dyn_shared_optin: AtomicUsize::new(0),
            generation: dev.generation(),
        })
    }

    /// Compiles CUDA C with NVRTC for `device` and loads it.
    fn load_cuda_c(
        &self,
        device: usize,
        kernel_name: &str,
        src: &str,
        entry: &str,
        flags: &[String],
        abi: Option<Abi>,
    ) -> Result<CudaKernel> {
        let cc = self.device(device)?.cc;
        let image = nvrtc::compile(src, entry, cc, flags)
            .map_err(|message| self.core.compile_err(kernel_name, message))?;
        tracing::debug!(kernel = kernel_name, arch = %image.arch, "NVRTC compiled");
        self.load(device, kernel_name, &image.bytes, entry, abi)
    }

    /// Binds `args` per the module's ABI (the generated kernel's [`Abi`], or for an external
    /// kernel the [module's ABI](self) read off the arguments; a checked kernel's fault record,
    /// the device address `fault`, last) and launches.
    fn launch_kernel(
        &self,
        k: &CudaKernel,
        local: usize,
        config: &LaunchConfig<'_>,
        args: &[Arg<'_>],
        fault: Option<u64>,
    ) -> Result<()> {
        let shared_mem = config.shared_mem_bytes;
        let bad = |problem| Err(Error::invalid_launch(&k.name, problem));
        self.current(k.device, k.generation, "module")?;
        let abi = crate::bind::abi_or_external(k.abi.as_ref(), args);
        // One u64 per parameter, the value zero-extended (the driver reads the parameter's
        // width from the kernel's signature; little-endian, so a narrower value is its first
        // bytes), written as each slot is bound. Inline for up to `INLINE_PARAMS` parameters
        // (every usual kernel): no allocation per launch.
        let slots = abi.arguments().len();
        let (mut inline_values, mut heap_values) = ([0u64; INLINE_PARAMS], Vec::new());
        let values = params(slots, &mut inline_values, &mut heap_values, 0);
        let (vals, mut next) = (&mut *values, 0);
        let bound = crate::bind::each_word(&abi, args, shared_mem, |b| {
            // One call per slot, in order.
            vals[next] = match b {
                Word::Value(v) => v,
                Word::Mem { mem, arg } => {
                    let cm = crate::bind::device_buffer::<CudaMem>(mem, arg, local, "CUDA")?;
                    self.current(k.device, cm.generation, "buffer")
                        .map_err(BindFailure::Error)?;
                    cm.ptr
                }
                Word::FaultRecord => match fault {
                    Some(rec) => rec,
                    None => {
                        return Err(BindFailure::Problem(LaunchProblem::Rejected {
                            message: "a checked kernel launched without its fault record".into(),
                        }))
                    }
                },
                Word::Local(_) => {
                    return Err(BindFailure::Problem(LaunchProblem::Rejected {
                        message: "a `__local` argument (OpenCL only)".into(),
                    }))
                }
            };
            next += 1;
            Ok(())
        });
        match bound {
            Ok(()) => {}
            Err(BindFailure::Problem(problem)) => return bad(problem),
            Err(BindFailure::Error(e)) => return Err(e),
        }
        // The driver reads parameter `i` through pointer `i`; `values` stays put until the
        // launch returns.
        let null = std::ptr::null_mut::<c_void>();
        let (mut inline_ptrs, mut heap_ptrs) = ([null; INLINE_PARAMS], Vec::new());
        let ptrs = params(slots, &mut inline_ptrs, &mut heap_ptrs, null);
        for (p, v) in ptrs.iter_mut().zip(values.iter_mut()) {
            *p = (v as *mut u64).cast();
        }

        // The kernel's device is backend-local device `local` (its module was loaded there).
        let dev = self.bind_device(k.device)?;
        let cu_stream = self.stream_of(config.stream, local)?;
        let shared =
            DriverCore::shared_mem_u32(&k.name, shared_mem, dev.caps.shared_mem_per_block)?;
        if shared_mem > k.dyn_shared_optin.load(Ordering::Relaxed) {
            // SAFETY: a live function of the current context.
            let r = unsafe {
                sys::cuFuncSetAttribute(
                    k.function,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared as i32,
                )
            };
            if let Some(m) = describe(r) {
                return bad(LaunchProblem::Rejected {
                    message: format!("{shared_mem} bytes of dynamic shared memory: {m}"),
                });
            }
            k.dyn_shared_optin.fetch_max(shared_mem, Ordering::Relaxed);
        }
        let record = |e: &CudaEvent| {
            // SAFETY: a live event and stream of the current context.
            let r = unsafe { sys::cuEventRecord(e.event, cu_stream) };
            self.check(dev, r, "cuEventRecord")
        };
        let elapsed = |start: &CudaEvent, end: &CudaEvent| self.elapsed_ms(dev, start, end);
        if !self.core.profiling() {
            // Inlined here (a closure called from two places is not): no environment built
            // and read back per launch.
            return self.cu_launch(k, dev, config, shared, cu_stream, ptrs);
        }
        let launch = || self.cu_launch(k, dev, config, shared, cu_stream, ptrs);
        let events = || Ok((self.new_event(dev)?, self.new_event(dev)?));
        self.core
            .profiled(&k.name, config, events, record, elapsed, launch)
    }

    /// `cuLaunchKernel` of `k` on `dev` (its context current) with `config`'s grid and block,
    /// `shared` bytes of dynamic shared memory, on `cu_stream`, each parameter read through
    /// its pointer in `ptrs`; the kernel noted as launched.
    #[inline(always)]
    fn cu_launch(
        &self,
        k: &CudaKernel,
        dev: &'static CudaDevice,
        config: &LaunchConfig<'_>,
        shared: u32,
        cu_stream: CUstream,
        ptrs: &mut [*mut c_void],
    ) -> Result<()> {
        let (g, b) = (config.grid.to_array(), config.block.to_array());
        // SAFETY: `ptrs` holds one pointer per kernel parameter, each to a value of the
        // parameter's type and size (the ABI, `launch_kernel`), alive until the call returns
        // (the driver copies them); the function belongs to the current context; device
        // addresses belong to this device's allocations, kept alive by the caller's borrows.
        let r = unsafe {
            sys::cuLaunchKernel(
                k.function,
                g[0],
                g[1],
                g[2],
                b[0],
                b[1],
                b[2],
                shared,
                cu_stream,
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            // Named only on failure: formatting on every launch was 7 % of its host time.
            self.check(dev, r, &format!("cuLaunchKernel(`{}`)", k.name))?;
        }
        dev.launched_kernel(k.id, &k.name);
        Ok(())
    }

    /// Waits for `end`, then returns the milliseconds between the two events (of `dev`'s
    /// current context).
    fn elapsed_ms(
        &self,
        dev: &'static CudaDevice,
        start: &CudaEvent,
        end: &CudaEvent,
    ) -> Result<f32> {
        let mut ms = 0f32;
        // SAFETY: live events of the current context; valid out-pointer.
        unsafe {
            self.check(
                dev,
                sys::cuEventSynchronize(end.event),
                "cuEventSynchronize",
            )?;
            self.check(
                dev,
                sys::cuEventElapsedTime(&mut ms, start.event, end.event),
                "cuEventElapsedTime",
            )?;
        }
        Ok(ms)
    }

    /// Queues `copy` (given the device address at `offset` of `mem` and the stream) after
    /// checking `offset + bytes` against the allocation; `what` names the driver call.
    fn copy_async(
        &self,
        mem: &DeviceMem,
        offset: usize,
        bytes: usize,
        stream: &Stream,
        what: &str,
        copy: impl FnOnce(sys::CUdeviceptr, CUstream) -> sys::CUresult,
    ) -> Result<()> {
        let (m, dev) = self.cmem(mem)?;
        if !self.core.check_transfer(mem, offset, bytes)? {
            return Ok(());
        }
        let s = self.stream_of(Some(stream), mem.device())?;
        self.bind(mem.device())?;
        let r = copy(m.ptr + offset as u64, s);
        self.mem_check(dev, r, &format!("{what} of {bytes} bytes"))
    }

    fn stream_of(&self, stream: Option<&Stream>, local: usize) -> Result<CUstream> {
        match stream {
            None => Ok(std::ptr::null_mut()),
            Some(s) => {
                let cs: &CudaStream = self.core.stream(s, local, "not a CUDA stream")?;
                self.current(cs.device, cs.generation, "stream")?;
                Ok(cs.stream)
            }
        }
    }

    fn new_event(&self, dev: &'static CudaDevice) -> Result<CudaEvent> {
        let mut ev: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the device's context is current.
        self.check(
            dev,
            unsafe { sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DEFAULT as u32) },
            "cuEventCreate",
        )?;
        Ok(CudaEvent {
            device: dev,
            event: ev,
            generation: dev.generation(),
        })
    }

    /// The CUDA allocation of `mem` and its device, if it belongs to the device's current
    /// context.
    fn cmem<'m>(&self, mem: &'m DeviceMem) -> Result<(&'m CudaMem, &'static CudaDevice)> {
        let m = self.core.memory::<CudaMem>(mem, "not a CUDA allocation")?;
        let dev = self.device(mem.device())?;
        self.current(dev, m.generation, "buffer")?;
        Ok((m, dev))
    }
}

impl Platform for CudaBackend {
    fn name(&self) -> &'static str {
        match self.variant {
            CudaVariant::Ptx => PTX_NAME,
            CudaVariant::C => C_NAME,
        }
    }

    /// CUDA/PTX: the driver's CUDA version; CUDA/C: NVRTC's version. (0, 0, 0) when absent.
    fn version(&self) -> (u32, u32, u32) {
        match self.variant {
            CudaVariant::Ptx => driver::driver().map(|d| d.version).unwrap_or((0, 0, 0)),
            CudaVariant::C => nvrtc::nvrtc()
                .map(|n| (n.version.0, n.version.1, 0))
                .unwrap_or((0, 0, 0)),
        }
    }

    fn is_available(&self) -> bool {
        let drv = match driver::driver() {
            Ok(d) => d,
            Err(why) => {
                tracing::debug!("{}: {why}", self.name());
                return false;
            }
        };
        match self.variant {
            CudaVariant::Ptx => !drv.devices.is_empty(),
            CudaVariant::C => match nvrtc::nvrtc() {
                Ok(_) => !drv.devices.is_empty(),
                Err(why) => {
                    tracing::debug!("{}: {why}", self.name());
                    false
                }
            },
        }
    }

    fn unavailable_reason(&self) -> Option<String> {
        let drv = match driver::driver() {
            Ok(d) => d,
            Err(why) => return Some(why.to_string()),
        };
        if drv.devices.is_empty() {
            return Some("the CUDA driver reports no device".into());
        }
        match self.variant {
            CudaVariant::Ptx => None,
            CudaVariant::C => nvrtc::nvrtc().err().map(str::to_string),
        }
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        let devices = self.drv()?.devices.iter();
        Ok(DriverCore::device_infos(
            devices.map(|d| (d.name.clone(), d.caps)),
        ))
    }

    fn capabilities(&self, device: usize) -> Result<crate::Capabilities> {
        Ok(self.device(device)?.caps)
    }

    /// Resets the context of every device a kernel fault broke (the module docs' "Faults").
    fn recover(&self) -> Result<()> {
        self.recover_contexts()
    }

    crate::driver_core_methods!(self.core);
}

impl DeviceMemory for CudaBackend {
    fn create_stream(&self, device: usize) -> Result<Stream> {
        let dev = self.bind(device)?;
        let mut s: CUstream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the device's context is current.
        self.check(
            dev,
            unsafe { sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_DEFAULT as u32) },
            "cuStreamCreate",
        )?;
        Ok(Stream::new(
            device,
            Box::new(CudaStream {
                device: dev,
                stream: s,
                generation: dev.generation(),
            }),
        ))
    }

    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        let s = self.stream_of(Some(stream), stream.device())?;
        let dev = self.bind(stream.device())?;
        // SAFETY: a live stream of the current context.
        self.check(
            dev,
            unsafe { sys::cuStreamSynchronize(s) },
            "cuStreamSynchronize",
        )
    }

    fn destroy_stream(&self, stream: Stream) -> Result<()> {
        self.stream_of(Some(&stream), stream.device())?;
        drop(stream); // CudaStream destroys itself
        Ok(())
    }

    /// `cuStreamBeginCapture` (thread-local mode: only this thread's unsafe calls break it),
    /// `issue`, `cuStreamEndCapture` (always, so the stream leaves capture mode whatever
    /// happened), `cuGraphInstantiateWithFlags`; the `CUgraph` is destroyed once instantiated.
    fn capture_graph(
        &self,
        stream: &Stream,
        issue: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<GraphExec>> {
        driver::graphs().map_err(|m| Error::unsupported(self.name(), format!("graphs ({m})")))?;
        let s = self.stream_of(Some(stream), stream.device())?;
        let dev = self.bind(stream.device())?;
        // SAFETY: a live stream of the current context.
        self.check(
            dev,
            unsafe {
                sys::cuStreamBeginCapture_v2(
                    s,
                    sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                )
            },
            "cuStreamBeginCapture",
        )?;
        let issued = issue();
        let mut graph: sys::CUgraph = std::ptr::null_mut();
        // SAFETY: the stream is capturing (begun above, on this thread); valid out-pointer.
        let ended = unsafe { sys::cuStreamEndCapture(s, &mut graph) };
        let destroy_graph = |g: sys::CUgraph| {
            if !g.is_null() {
                // SAFETY: the graph the capture returned, destroyed once.
                if let Some(m) = describe(unsafe { sys::cuGraphDestroy(g) }) {
                    tracing::warn!("cuGraphDestroy: {m}");
                }
            }
        };
        if let Err(e) = issued {
            destroy_graph(graph);
            return Err(e);
        }
        if let Err(e) = self.check(dev, ended, "cuStreamEndCapture") {
            destroy_graph(graph);
            return Err(e);
        }
        let mut exec: sys::CUgraphExec = std::ptr::null_mut();
        // SAFETY: a graph of the current context; valid out-pointer.
        let r = unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) };
        destroy_graph(graph);
        self.check(dev, r, "cuGraphInstantiate")?;
        Ok(Some(GraphExec::new(
            stream.device(),
            Box::new(driver::CudaGraph {
                device: dev,
                exec,
                generation: dev.generation(),
            }),
        )))
    }

    /// `cuGraphLaunch` on the stream.
    fn launch_graph(&self, graph: &GraphExec, stream: &Stream) -> Result<()> {
        let g: &driver::CudaGraph = graph
            .handle()
            .ok_or_else(|| self.core.driver_err("not a CUDA graph"))?;
        let s = self.stream_of(Some(stream), stream.device())?;
        let dev = self.bind(stream.device())?;
        self.current(dev, g.generation, "graph")?;
        if !std::ptr::eq(dev, g.device) {
            return Err(self.core.driver_err("a graph of another device"));
        }
        // SAFETY: a live graph exec and stream of the current context.
        self.check(
            dev,
            unsafe { sys::cuGraphLaunch(g.exec, s) },
            "cuGraphLaunch",
        )
    }

    /// Waits for every launch on the device; a kernel's device fault is reported here (as
    /// [`Error::KernelFault`] naming the kernels launched since the last synchronisation).
    fn synchronize(&self, device: usize) -> Result<()> {
        let dev = self.bind(device)?;
        // SAFETY: the device's context is current.
        self.check(dev, unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")?;
        dev.synchronized();
        Ok(())
    }

    /// Allocates with `cuMemAlloc` (contents unspecified); a 0-byte allocation owns nothing.
    fn alloc(&self, device: usize, bytes: usize) -> Result<DeviceMem> {
        let dev = self.bind(device)?;
        let mut ptr = 0;
        if bytes > 0 {
            // SAFETY: valid out-pointer; the device's context is current.
            let r = unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) };
            self.mem_check(dev, r, &format!("cuMemAlloc of {bytes} bytes"))?;
        }
        let generation = dev.generation();
        Ok(DeviceMem::new(
            device,
            bytes,
            Box::new(CudaMem { ptr, generation }),
        ))
    }

    unsafe fn copy_h2d_ptr(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
    ) -> Result<()> {
        let (m, dev) = self.cmem(dst)?;
        if !self.core.check_transfer(dst, offset, bytes)? {
            return Ok(());
        }
        self.bind(dst.device())?;
        // SAFETY: the caller guarantees `src` is readable for `bytes`; the range is inside the
        // allocation (checked above).
        let r = unsafe { sys::cuMemcpyHtoD_v2(m.ptr + offset as u64, src.cast(), bytes) };
        self.mem_check(dev, r, &format!("cuMemcpyHtoD of {bytes} bytes"))
    }

    unsafe fn copy_d2h_ptr(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
    ) -> Result<()> {
        let (m, dev) = self.cmem(src)?;
        if !self.core.check_transfer(src, offset, bytes)? {
            return Ok(());
        }
        self.bind(src.device())?;
        // SAFETY: the caller guarantees `dst` is writable for `bytes`; the range is inside the
        // allocation.
        let r = unsafe { sys::cuMemcpyDtoH_v2(dst.cast(), m.ptr + offset as u64, bytes) };
        // A download on the legacy default stream waits for every launch before it: a kernel's
        // device fault is reported here.
        self.mem_check(dev, r, &format!("cuMemcpyDtoH of {bytes} bytes"))?;
        dev.synchronized();
        Ok(())
    }

    /// `cuMemcpyHtoDAsync` on the stream (asynchronous when `src` is page-locked).
    unsafe fn copy_h2d_async(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.copy_async(dst, offset, bytes, stream, "cuMemcpyHtoDAsync", |d, s| {
            // SAFETY: the caller keeps `src` readable for `bytes` until the stream passes the
            // copy; `d` is inside the allocation (checked); `s` is a live stream.
            unsafe { sys::cuMemcpyHtoDAsync_v2(d, src.cast(), bytes, s) }
        })
    }

    /// `cuMemcpyDtoHAsync` on the stream (asynchronous when `dst` is page-locked).
    unsafe fn copy_d2h_async(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.copy_async(src, offset, bytes, stream, "cuMemcpyDtoHAsync", |d, s| {
            // SAFETY: the caller keeps `dst` writable for `bytes`, and untouched by the host,
            // until the stream passes the copy; `d` is inside the allocation.
            unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), d, bytes, s) }
        })
    }

    /// `cuStreamWaitEvent`: the stream waits on the device.
    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<bool> {
        let ev = self.core.event::<CudaEvent>(event, "not a CUDA event")?;
        let s = self.stream_of(Some(stream), stream.device())?;
        let dev = self.bind(stream.device())?;
        self.current(dev, ev.generation, "event")?;
        // SAFETY: a live stream and event of the current context.
        self.check(
            dev,
            unsafe { sys::cuStreamWaitEvent(s, ev.event, 0) },
            "cuStreamWaitEvent",
        )?;
        Ok(true)
    }

    /// `cuMemHostAlloc` (page-locked, portable across contexts), zeroed.
    fn alloc_pinned(&self, device: usize, bytes: usize) -> Result<Option<PinnedMem>> {
        let dev = self.bind(device)?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        if bytes > 0 {
            // SAFETY: valid out-pointer; the device's context is current.
            let r = unsafe { sys::cuMemHostAlloc(&mut ptr, bytes, sys::CU_MEMHOSTALLOC_PORTABLE) };
            self.mem_check(dev, r, &format!("cuMemHostAlloc of {bytes} bytes"))?;
            // SAFETY: `ptr` is a fresh allocation of `bytes` bytes.
            unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        }
        Ok(Some(PinnedMem {
            ptr: ptr.cast(),
            bytes,
            device,
            handle: Box::new(dev.generation()),
        }))
    }

    /// `cuMemFreeHost`; memory of a context that a reset destroyed is gone with it.
    fn free_pinned(&self, mem: PinnedMem) -> Result<()> {
        let dev = self.device(mem.device)?;
        let generation = mem.handle.downcast_ref::<u64>().copied();
        if mem.ptr.is_null() || generation != Some(dev.generation()) {
            return Ok(());
        }
        let dev = self.bind(mem.device)?;
        // SAFETY: allocated by cuMemHostAlloc and freed once (`mem` is consumed).
        let r = unsafe { sys::cuMemFreeHost(mem.ptr.cast()) };
        self.mem_check(dev, r, "cuMemFreeHost")
    }

    fn copy_d2d(&self, dst: &DeviceMem, src: &DeviceMem, bytes: usize) -> Result<()> {
        let ((d, dev), (s, _)) = (self.cmem(dst)?, self.cmem(src)?);
        if !self.core.check_d2d(dst, src, bytes, "CUDA")? {
            return Ok(());
        }
        self.bind(dst.device())?;
        // SAFETY: both ranges lie inside live allocations of the current context.
        let r = unsafe { sys::cuMemcpyDtoD_v2(d.ptr, s.ptr, bytes) };
        self.mem_check(dev, r, &format!("cuMemcpyDtoD of {bytes} bytes"))
    }

    /// Frees with `cuMemFree`; an allocation of a context that a reset destroyed is gone with
    /// it and is not freed again.
    fn free(&self, mem: DeviceMem) -> Result<()> {
        let m = self.core.memory::<CudaMem>(&mem, "not a CUDA allocation")?;
        let dev = self.device(mem.device())?;
        if m.ptr == 0 || m.generation != dev.generation() {
            return Ok(());
        }
        self.bind(mem.device())?;
        // SAFETY: allocated by cuMemAlloc in the current context and freed once (`mem` is
        // consumed).
        let r = unsafe { sys::cuMemFree_v2(m.ptr) };
        self.mem_check(dev, r, "cuMemFree")
    }

    fn create_event(&self, device: usize) -> Result<Event> {
        let dev = self.bind(device)?;
        Ok(Event::new(device, Box::new(self.new_event(dev)?)))
    }

    fn record_event(&self, event: &Event, stream: Option<&Stream>) -> Result<()> {
        let ev = self.core.event::<CudaEvent>(event, "not a CUDA event")?;
        let s = self.stream_of(stream, event.device())?;
        let dev = self.bind(event.device())?;
        self.current(dev, ev.generation, "event")?;
        // SAFETY: a live event and stream of the current context.
        self.check(
            dev,
            unsafe { sys::cuEventRecord(ev.event, s) },
            "cuEventRecord",
        )
    }

    /// Waits for `end`, then returns the milliseconds between the two events.
    fn event_elapsed_ms(&self, start: &Event, end: &Event) -> Result<f32> {
        let (a, b) = self
            .core
            .event_pair::<CudaEvent>(start, end, "not a CUDA event")?;
        let dev = self.bind(end.device())?;
        self.current(dev, a.generation, "event")?;
        self.current(dev, b.generation, "event")?;
        self.elapsed_ms(dev, a, b)
    }
}

impl Compiler for CudaBackend {
    fn codegen_target(&self) -> Option<Target> {
        Some(self.target())
    }

    /// The device's compute capability (for PTX's `.target` and NVRTC's architecture); for an
    /// unknown device the lowest among the devices (the driver JIT-compiles PTX forward).
    fn codegen_caps(&self, device: Option<usize>) -> Result<spoc_codegen::Capabilities> {
        let mut caps = spoc_codegen::Capabilities::for_target(self.target());
        caps.compute_capability = match device {
            Some(d) => Some(self.device(d)?.cc),
            None => self.default_cc(),
        };
        Ok(caps)
    }

    /// CUDA/PTX lowers Structure-of-Arrays parameters; CUDA/C does not.
    fn supports_soa_params(&self) -> bool {
        self.variant == CudaVariant::Ptx
    }

    fn supports_checked_mode(&self) -> bool {
        true
    }

    /// Loads the PTX, or compiles the CUDA C with NVRTC for the device; the module binds its
    /// launches from `source.abi`.
    fn compile(
        &self,
        device: usize,
        kernel: &ValidKernel,
        source: &Source,
        options: &CompileOptions,
    ) -> Result<Module> {
        self.device(device)?;
        let text = self.core.text(&kernel.name, source)?;
        let abi = Some(source.abi.clone());
        let k = match self.variant {
            CudaVariant::Ptx => {
                self.core.refuse_flags(options)?;
                let mut image = text.as_bytes().to_vec();
                image.push(0);
                self.load(device, &kernel.name, &image, &source.entry, abi)?
            }
            CudaVariant::C => self.load_cuda_c(
                device,
                &kernel.name,
                text,
                &source.entry,
                &options.flags,
                abi,
            )?,
        };
        if source.abi.has_fault_record() {
            return Ok(Module::new(
                device,
                Box::new(CheckedKernel {
                    kernel: k,
                    ir: kernel.kernel().clone(),
                    records: RecordPool::new(),
                }),
            ));
        }
        Ok(Module::new(device, Box::new(k)))
    }

    fn module_cache(&self) -> Option<&crate::cache::ModuleCache> {
        Some(self.core.cache())
    }
}

impl Executor for CudaBackend {
    fn launch(&self, module: &Module, config: &LaunchConfig<'_>, args: &[Arg<'_>]) -> Result<()> {
        if let Some(k) = module.handle::<CudaKernel>() {
            return self.launch_kernel(k, module.device(), config, args, None);
        }
        let c = self
            .core
            .module::<CheckedKernel>(module, "not a CUDA module")?;
        self.launch_checked(c, module.device(), config, args)
    }

    fn supported_source_langs(&self) -> &[SourceLang] {
        &[SourceLang::Ptx, SourceLang::CudaC]
    }

    /// Loads an external PTX kernel, or compiles external CUDA C with NVRTC for the device,
    /// named `kernel_name` (an `extern "C"` name for CUDA C); [`Executor::run_source`] caches,
    /// checks, launches (binding the arguments per the [module's ABI](self)) and waits.
    fn load_external(
        &self,
        device: usize,
        lang: SourceLang,
        source: &str,
        kernel_name: &str,
    ) -> Result<Module> {
        let k = match lang {
            SourceLang::Ptx => {
                let mut image = source.as_bytes().to_vec();
                image.push(0);
                self.load(device, kernel_name, &image, kernel_name, None)?
            }
            _ => self.load_cuda_c(device, kernel_name, source, kernel_name, &[], None)?,
        };
        Ok(Module::new(device, Box::new(k)))
    }
}
