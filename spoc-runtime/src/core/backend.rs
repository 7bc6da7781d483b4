//! Three of the four traits every backend implements ([`Platform`], [`DeviceMemory`],
//! [`Compiler`]), and the opaque handles they trade in. The fourth, [`crate::Executor`] (which
//! takes kernel arguments, [`crate::Arg`], of the memory layer), and the umbrella
//! [`crate::Backend`] are in `memory/executor.rs`.
//!
//! The runtime talks to a backend only through these traits, as an `Arc<dyn Backend>`: device
//! enumeration, streams, memory, events, kernel compilation and launch, profiling, source
//! generation, direct execution (Native, Interpreter), its intrinsic registry and external
//! sources. Handles (memory, streams, events, modules) are opaque boxes the backend downcasts;
//! device memory is never assumed to be host memory.
//!
//! Device ids a backend sees are its own, *backend-local* indices (0, 1, …); the runtime maps
//! them to global ids ([`crate::Device::id`]).

use crate::cache::ModuleCache;
use crate::capabilities::Capabilities;
use crate::dims::Dims;
use crate::error::{Error, Result};
use crate::intrinsics::IntrinsicRegistry;
use crate::kernel_def::KernelDef;
use spoc_ir::{ContentHash, Kernel, ValidKernel};
use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How a backend runs kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecutionModel {
    /// Generates source from the IR, compiles it with a driver ([`Compiler::compile`]) and
    /// launches the module ([`Executor::launch`](crate::Executor::launch)): CUDA, HIP, OpenCL, Vulkan.
    Jit,
    /// Runs code compiled into the program ([`KernelDef::native`]) through
    /// [`Executor::execute_direct`](crate::Executor::execute_direct): the Native backend.
    Direct,
    /// Runs the IR itself through [`Executor::execute_direct`](crate::Executor::execute_direct): the Interpreter.
    Custom,
}

/// One device as a backend reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// Backend-local index (0, 1, …).
    pub local_id: usize,
    /// Human-readable name.
    pub name: String,
    /// Limits and features.
    pub capabilities: Capabilities,
}

/// An opaque, backend-owned handle.
pub type Handle = Box<dyn Any + Send + Sync>;

static NEXT_ALLOCATION: AtomicU64 = AtomicU64::new(1);

/// A device allocation: the backend's handle, the backend-local device it lives on and its size
/// in bytes. Each allocation has a process-unique [`DeviceMem::id`].
pub struct DeviceMem {
    id: u64,
    device: usize,
    bytes: usize,
    handle: Handle,
}

impl DeviceMem {
    /// Wraps a backend's allocation handle of `bytes` bytes on backend-local device `device`.
    pub fn new(device: usize, bytes: usize, handle: Handle) -> DeviceMem {
        DeviceMem {
            id: NEXT_ALLOCATION.fetch_add(1, Ordering::Relaxed),
            device,
            bytes,
            handle,
        }
    }
    /// A process-unique identity of this allocation (never reused).
    pub fn id(&self) -> u64 {
        self.id
    }
    /// The backend-local device.
    pub fn device(&self) -> usize {
        self.device
    }
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// The backend's handle, if it is an `H`.
    pub fn handle<H: Any>(&self) -> Option<&H> {
        self.handle.downcast_ref()
    }
}

impl fmt::Debug for DeviceMem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceMem")
            .field("id", &self.id)
            .field("device", &self.device)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

/// Page-locked host memory from [`DeviceMemory::alloc_pinned`]: `bytes` bytes at `ptr`, for
/// the backend-local device `device`, with the backend's handle for
/// [`DeviceMemory::free_pinned`].
pub struct PinnedMem {
    /// The first byte (aligned to at least [`crate::MAX_ELEM_ALIGN`]).
    pub ptr: *mut u8,
    /// Size in bytes.
    pub bytes: usize,
    /// The backend-local device.
    pub device: usize,
    /// The backend's handle.
    pub handle: Handle,
}

// SAFETY: the memory is plain bytes owned by this value; who reads or writes it is decided by
// its owner (`HostBuffer`), which synchronises with the device first.
unsafe impl Send for PinnedMem {}
// SAFETY: as above; `&PinnedMem` gives no access to the bytes by itself.
unsafe impl Sync for PinnedMem {}

impl fmt::Debug for PinnedMem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedMem")
            .field("bytes", &self.bytes)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

macro_rules! opaque_handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name {
            device: usize,
            handle: Handle,
        }
        impl $name {
            /// Wraps a backend's handle for backend-local device `device`.
            pub fn new(device: usize, handle: Handle) -> Self {
                Self { device, handle }
            }
            /// The backend-local device.
            pub fn device(&self) -> usize {
                self.device
            }
            /// The backend's handle, if it is an `H`.
            pub fn handle<H: Any>(&self) -> Option<&H> {
                self.handle.downcast_ref()
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("device", &self.device)
                    .finish_non_exhaustive()
            }
        }
    };
}

opaque_handle!(
    /// An execution stream (CUDA stream, OpenCL command queue, a Native worker thread; the
    /// Interpreter's and Vulkan's run work as it is queued).
    Stream
);
opaque_handle!(
    /// A timing event.
    Event
);
opaque_handle!(
    /// A graph the driver instantiated from a stream capture ([`DeviceMemory::capture_graph`];
    /// CUDA's `CUgraphExec`), launched whole with [`DeviceMemory::launch_graph`].
    GraphExec
);
opaque_handle!(
    /// A compiled kernel module, ready to launch on its device.
    Module
);

/// A source language for generated or external kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceLang {
    /// CUDA C (NVRTC).
    CudaC,
    /// PTX assembly.
    Ptx,
    /// HIP C (hiprtc).
    HipC,
    /// OpenCL C.
    OpenClC,
    /// SPIR-V binary (words).
    SpirV,
    /// GLSL compute shader.
    Glsl,
    /// WGSL (WebGPU).
    Wgsl,
    /// Metal Shading Language.
    Msl,
}

/// Generated source: its target, entry point and code (text, or SPIR-V words). The type of
/// `spoc_codegen`, which produces it.
pub use spoc_codegen::{Code, Source, Target};

/// Options that change what a compile produces; part of both cache keys. The default is what
/// [`crate::compile_kernel`] uses.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// The block size, for backends that embed it in the module
    /// ([`Compiler::compile_needs_block`]); `None` otherwise.
    pub block: Option<Dims>,
    /// Record-buffer parameters lowered as structure-of-arrays (CUDA/PTX only, see
    /// [`Compiler::supports_soa_params`]; code generation refuses them everywhere else), in
    /// parameter order. A launch fills it with the
    /// parameters given an [`Arg::Soa`](crate::Arg::Soa) / [`Arg::SoaMut`](crate::Arg::SoaMut) argument.
    pub soa_params: Vec<String>,
    /// Backend-specific compiler flags.
    pub flags: Vec<String>,
    /// Checked mode ([`spoc_codegen::checked`]): bounds checks on every array access and zero
    /// checks on every integer division in the generated code, a fault reported as
    /// [`crate::Error::KernelFault`] after the launch. `None` is the device's default (on for
    /// CPU-resident devices, `SPOC_BOUNDS_CHECK`), which the runtime resolves before compiling:
    /// a backend sees `Some` for generated kernels. Only backends with
    /// [`Compiler::supports_checked_mode`] honour it; the CPU backends always check.
    pub checked: Option<bool>,
}

impl CompileOptions {
    /// True if the kernel is compiled in checked mode.
    pub fn is_checked(&self) -> bool {
        self.checked == Some(true)
    }

    /// [`CompileOptions::soa_params`] as the `&str`s code generation takes.
    pub fn soa_names(&self) -> Vec<&str> {
        self.soa_params.iter().map(String::as_str).collect()
    }

    /// Generates `target` code for `kernel` with `caps` and these options (block,
    /// Structure-of-Arrays parameters, checked mode): what [`Compiler::generate`] and
    /// [`crate::driver_core::DriverCore::generate`] share.
    pub(crate) fn generate(
        &self,
        target: Target,
        kernel: &Kernel,
        caps: spoc_codegen::Capabilities,
    ) -> Result<Option<Source>> {
        let soa = self.soa_names();
        Ok(spoc_codegen::generate_source_with(
            target,
            kernel,
            &spoc_codegen::Options {
                block: self.block.map(Dims::to_array),
                soa_params: &soa,
                caps,
                checked: self.is_checked(),
            },
        )?)
    }
}

/// Where and how wide a launch runs: what every launch entry point of a [`Backend`](crate::Backend) takes.
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig<'s> {
    /// Blocks in the grid, per axis.
    pub grid: Dims,
    /// Threads per block, per axis.
    pub block: Dims,
    /// Dynamic shared memory per block, in bytes (the kernel's statically sized shared arrays
    /// not included).
    pub shared_mem_bytes: usize,
    /// The stream to launch on; `None` is the device's default stream.
    pub stream: Option<&'s Stream>,
}

impl LaunchConfig<'_> {
    /// A launch of `grid` blocks of `block` threads with `shared_mem_bytes` bytes of dynamic
    /// shared memory, on the default stream.
    pub fn new(grid: Dims, block: Dims, shared_mem_bytes: usize) -> LaunchConfig<'static> {
        LaunchConfig {
            grid,
            block,
            shared_mem_bytes,
            stream: None,
        }
    }
}

/// What a backend is: its name, version and availability, how it runs kernels, its devices
/// and their capabilities, its intrinsics, fault recovery and profiling.
///
/// A missing driver makes [`Platform::is_available`] false rather than panicking. Device ids
/// are backend-local.
pub trait Platform: Send + Sync + 'static {
    /// The backend's name: `"Native"`, `"Interpreter"`, `"CUDA/PTX"`, … A `"<family>/<variant>"`
    /// name also answers to its family (see [`crate::device_is_of_backend`]).
    fn name(&self) -> &'static str;

    /// The backend's version (its own, or its driver's).
    fn version(&self) -> (u32, u32, u32);

    /// True if the backend can be used on this machine (driver present, initialised). Must not
    /// panic when the driver is missing.
    fn is_available(&self) -> bool;

    /// Why [`Platform::is_available`] is false, in words (`"no CUDA driver library found"`),
    /// for the errors of device queries. The default has no reason to give.
    fn unavailable_reason(&self) -> Option<String> {
        None
    }

    /// How the backend runs kernels. The default is [`ExecutionModel::Jit`] (the GPU and
    /// source-only backends); Native and the Interpreter say otherwise.
    fn execution_model(&self) -> ExecutionModel {
        ExecutionModel::Jit
    }

    /// The backend's devices, in backend-local order.
    ///
    /// # Errors
    /// A driver error while enumerating.
    fn devices(&self) -> Result<Vec<DeviceInfo>>;

    /// The capabilities of backend-local device `device`.
    ///
    /// # Errors
    /// [`Error::NoDevice`] if there is no such device.
    fn capabilities(&self, device: usize) -> Result<Capabilities> {
        self.devices()?
            .into_iter()
            .find(|d| d.local_id == device)
            .map(|d| d.capabilities)
            .ok_or(Error::NoDevice {
                framework: Some(self.name().to_string()),
            })
    }

    /// Recovers devices that a fault left unusable (a CUDA context after an illegal address),
    /// for [`crate::Device::reset`]: their memory, modules, streams and events are lost, and
    /// those of the broken state are refused afterwards ([`Error::ContextReset`]). Healthy
    /// devices are left as they are. The default does nothing.
    ///
    /// # Errors
    /// A driver error if a device could not be reset.
    fn recover(&self) -> Result<()> {
        Ok(())
    }

    /// Turns per-launch profiling on. The default does nothing.
    fn enable_profiling(&self) {}

    /// Turns per-launch profiling off. The default does nothing.
    fn disable_profiling(&self) {}

    /// The intrinsics this backend implements.
    fn intrinsics(&self) -> &IntrinsicRegistry;
}

/// Device and memory: streams, allocation, transfers (device memory is never assumed to be
/// host memory) and timing events. Methods with a default body refuse with
/// [`Error::FeatureNotSupported`] (streams, events, device-to-device copies) or do nothing
/// meaningful for synchronous CPU backends ([`crate::host_memory_methods!`] implements them
/// with host memory).
pub trait DeviceMemory: Platform {
    /// Creates a stream on `device`.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] by default.
    fn create_stream(&self, device: usize) -> Result<Stream> {
        let _ = device;
        Err(Error::unsupported(self.name(), "streams"))
    }

    /// Waits until everything queued on `stream` has finished.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] by default.
    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        let _ = stream;
        Err(Error::unsupported(self.name(), "streams"))
    }

    /// Destroys a stream.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] by default.
    fn destroy_stream(&self, stream: Stream) -> Result<()> {
        drop(stream);
        Err(Error::unsupported(self.name(), "streams"))
    }

    /// Waits until all work on `device` has finished. The default does nothing (synchronous
    /// backends).
    ///
    /// # Errors
    /// A driver error.
    fn synchronize(&self, device: usize) -> Result<()> {
        let _ = device;
        Ok(())
    }

    /// Allocates `bytes` bytes on `device`. Contents are unspecified unless the backend
    /// documents otherwise (the CPU backends zero them).
    ///
    /// # Errors
    /// [`Error::Memory`] if the allocation fails.
    fn alloc(&self, device: usize, bytes: usize) -> Result<DeviceMem>;

    /// Allocates `size` elements of `elem_size` bytes each.
    ///
    /// # Errors
    /// [`Error::Memory`] if the size overflows or the allocation fails.
    fn alloc_custom(&self, device: usize, size: usize, elem_size: usize) -> Result<DeviceMem> {
        let bytes = size.checked_mul(elem_size).ok_or_else(|| Error::Memory {
            backend: self.name().to_string(),
            message: format!("{size} elements of {elem_size} bytes overflow usize"),
        })?;
        self.alloc(device, bytes)
    }

    /// Copies `bytes` bytes from host memory at `src` into `dst` at byte `offset`.
    ///
    /// # Safety
    /// `src` must be valid for reads of `bytes` bytes for the duration of the call.
    ///
    /// # Errors
    /// [`Error::Memory`] if `offset + bytes` exceeds the allocation.
    unsafe fn copy_h2d_ptr(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
    ) -> Result<()>;

    /// Copies `bytes` bytes of `src`, from byte `offset`, into host memory at `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `bytes` bytes for the duration of the call and not
    /// overlap the allocation.
    ///
    /// # Errors
    /// [`Error::Memory`] if `offset + bytes` exceeds the allocation.
    unsafe fn copy_d2h_ptr(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
    ) -> Result<()>;

    /// Copies a host byte slice into `dst` at byte `offset`.
    ///
    /// # Errors
    /// [`Error::Memory`] if it does not fit.
    fn copy_h2d(&self, dst: &DeviceMem, offset: usize, src: &[u8]) -> Result<()> {
        // SAFETY: a slice is valid for reads of its length.
        unsafe { self.copy_h2d_ptr(dst, offset, src.as_ptr(), src.len()) }
    }

    /// Copies bytes of `src` from byte `offset` into a host slice (its whole length).
    ///
    /// # Errors
    /// [`Error::Memory`] if the allocation is too short.
    fn copy_d2h(&self, src: &DeviceMem, offset: usize, dst: &mut [u8]) -> Result<()> {
        // SAFETY: a mutable slice is valid for writes of its length and cannot alias `src`'s
        // memory, which the backend owns.
        unsafe { self.copy_d2h_ptr(src, offset, dst.as_mut_ptr(), dst.len()) }
    }

    /// Queues a copy of `bytes` bytes from host memory at `src` into `dst` at byte `offset` on
    /// `stream`, after the work queued on it before ([`crate::Stream::upload`]). The default
    /// waits for the stream and copies synchronously (correct on every backend; CUDA and HIP
    /// queue it: `cuMemcpyHtoDAsync`).
    ///
    /// # Safety
    /// `src` must stay valid for reads of `bytes` bytes, and unwritten, until the stream has
    /// passed the copy (the runtime's [`crate::HostBuffer`] tracks that).
    ///
    /// # Errors
    /// [`Error::Memory`] if `offset + bytes` exceeds the allocation; a driver error.
    unsafe fn copy_h2d_async(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.synchronize_stream(stream)?;
        // SAFETY: as the caller guarantees.
        unsafe { self.copy_h2d_ptr(dst, offset, src, bytes) }
    }

    /// Queues a copy of `bytes` bytes of `src`, from byte `offset`, into host memory at `dst` on
    /// `stream` ([`crate::Stream::download`]). The default waits for the stream and copies
    /// synchronously; CUDA and HIP queue it (`cuMemcpyDtoHAsync`).
    ///
    /// # Safety
    /// `dst` must stay valid for writes of `bytes` bytes, and be neither read nor written by
    /// the host, until the stream has passed the copy.
    ///
    /// # Errors
    /// [`Error::Memory`] if `offset + bytes` exceeds the allocation; a driver error.
    unsafe fn copy_d2h_async(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.synchronize_stream(stream)?;
        // SAFETY: as the caller guarantees.
        unsafe { self.copy_d2h_ptr(src, offset, dst, bytes) }
    }

    /// Makes the work queued on `stream` after this call wait, on the device, until `event`
    /// (recorded on another stream of the same device) has passed (`cuStreamWaitEvent`).
    /// Returns `false` if the backend cannot wait on the device (the default): the caller then
    /// waits on the host ([`crate::Stream::wait_for`] does).
    ///
    /// # Errors
    /// A driver error.
    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<bool> {
        let _ = (stream, event);
        Ok(false)
    }

    /// Allocates `bytes` bytes of page-locked host memory for `device`'s asynchronous copies
    /// (`cuMemHostAlloc`), zeroed. `Ok(None)` (the default) if the backend has none: the
    /// runtime's [`crate::HostBuffer`] then uses ordinary host memory.
    ///
    /// # Errors
    /// A driver error.
    fn alloc_pinned(&self, device: usize, bytes: usize) -> Result<Option<PinnedMem>> {
        let _ = (device, bytes);
        Ok(None)
    }

    /// Releases what [`DeviceMemory::alloc_pinned`] returned.
    ///
    /// # Errors
    /// A driver error (the runtime logs it).
    fn free_pinned(&self, mem: PinnedMem) -> Result<()> {
        drop(mem);
        Ok(())
    }

    /// Copies the first `bytes` bytes of `src` into `dst` (both on this backend, same device).
    ///
    /// # Errors
    /// [`Error::Memory`] if either is too short; [`Error::FeatureNotSupported`] by default.
    fn copy_d2d(&self, dst: &DeviceMem, src: &DeviceMem, bytes: usize) -> Result<()> {
        let _ = (dst, src, bytes);
        Err(Error::unsupported(self.name(), "device-to-device copies"))
    }

    /// Releases an allocation.
    ///
    /// # Errors
    /// A driver error (the runtime logs it; memory is not reused either way).
    fn free(&self, mem: DeviceMem) -> Result<()>;

    /// Creates a timing event on `device`.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] by default.
    fn create_event(&self, device: usize) -> Result<Event> {
        let _ = device;
        Err(Error::unsupported(self.name(), "events"))
    }

    /// Records `event` on `stream` (the device's default stream if `None`).
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] by default.
    fn record_event(&self, event: &Event, stream: Option<&Stream>) -> Result<()> {
        let _ = (event, stream);
        Err(Error::unsupported(self.name(), "events"))
    }

    /// Milliseconds between two recorded events.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] by default; a driver error if either was not recorded.
    fn event_elapsed_ms(&self, start: &Event, end: &Event) -> Result<f32> {
        let _ = (start, end);
        Err(Error::unsupported(self.name(), "events"))
    }

    /// Destroys an event. The default drops it (the GPU backends' event handles release
    /// themselves on drop).
    ///
    /// # Errors
    /// A driver error.
    fn destroy_event(&self, event: Event) -> Result<()> {
        drop(event);
        Ok(())
    }

    /// Captures the work `issue` queues on `stream` into a graph the driver replays whole
    /// ([`crate::Graph`]; CUDA: `cuStreamBeginCapture`, `cuStreamEndCapture`,
    /// `cuGraphInstantiate`). The capture ends whatever `issue` returns, leaving the stream
    /// as it was. `Ok(None)` (the default) says the backend has no such graphs: the runtime
    /// then replays its own list of the work, op by op, and `issue` is not called.
    ///
    /// # Errors
    /// What `issue` returned; [`Error::FeatureNotSupported`] where the driver lacks graphs; a
    /// driver error (an operation the driver cannot capture, an instantiation failure).
    fn capture_graph(
        &self,
        stream: &Stream,
        issue: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<GraphExec>> {
        let _ = (stream, issue);
        Ok(None)
    }

    /// Queues one replay of `graph` on `stream` (CUDA: `cuGraphLaunch`).
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] by default (no backend gives a graph without it); a
    /// driver error.
    fn launch_graph(&self, graph: &GraphExec, stream: &Stream) -> Result<()> {
        let _ = (graph, stream);
        Err(Error::unsupported(self.name(), "graphs"))
    }

    /// Destroys a graph once no replay of it is in flight. The default drops it (CUDA's
    /// handle destroys itself on drop).
    ///
    /// # Errors
    /// A driver error.
    fn destroy_graph(&self, graph: GraphExec) -> Result<()> {
        drop(graph);
        Ok(())
    }
}

/// The compiler: code generation for one device's capabilities ([`Compiler::generate`], once
/// per build), the driver's compile of the generated [`Source`] ([`Compiler::compile`]),
/// the module cache, and the per-kernel checks and preparation of the CPU backends.
pub trait Compiler: Platform {
    /// True if compiled modules depend on the block size (Vulkan embeds the workgroup size):
    /// the runtime then puts the launch's block in [`CompileOptions::block`].
    fn compile_needs_block(&self) -> bool {
        false
    }

    /// True if the backend compiles record-buffer parameters named in
    /// [`CompileOptions::soa_params`] as Structure-of-Arrays and binds [`Arg::Soa`](crate::Arg::Soa) /
    /// [`Arg::SoaMut`](crate::Arg::SoaMut) arguments ([`crate::SoaBuffer`]): CUDA/PTX only. Every other target
    /// refuses SoA arguments and options with [`Error::FeatureNotSupported`], before compiling or
    /// launching anything, in code generation ([`spoc_codegen::abi::refuse_soa`], which the
    /// runtime also asks for the backends that generate no code). The default is false.
    fn supports_soa_params(&self) -> bool {
        false
    }

    /// True if the backend compiles [`CompileOptions::checked`] kernels: bounds and division
    /// checks in the generated code, the fault record ([`spoc_codegen::checked`]) bound as one
    /// more argument and read after each launch, a fault returned as
    /// [`crate::Error::KernelFault`]. The default is false (the CPU backends check every
    /// access anyway).
    fn supports_checked_mode(&self) -> bool {
        false
    }

    /// The `spoc_codegen` target [`Compiler::generate`] generates for (`None`, the default: no
    /// source, as for Direct and Custom backends).
    fn codegen_target(&self) -> Option<Target> {
        None
    }

    /// What code generation may assume of backend-local `device` (`Some`: the device a build
    /// is for), or, with `None`, of a device of this backend not yet known (what
    /// [`Compiler::generate_source`] generates for: the backend's devices together, or the
    /// target's defaults). The default is the target's defaults.
    ///
    /// # Errors
    /// [`Error::NoDevice`] for a bad device; a driver error.
    fn codegen_caps(&self, device: Option<usize>) -> Result<spoc_codegen::Capabilities> {
        let _ = device;
        Ok(match self.codegen_target() {
            Some(t) => spoc_codegen::Capabilities::for_target(t),
            None => spoc_codegen::Capabilities::for_target(Target::Native),
        })
    }

    /// Generates the source [`Compiler::compile`] gets for `kernel` with `caps` (the device's
    /// own, [`Compiler::codegen_caps`]) and `options` (block, Structure-of-Arrays parameters,
    /// checked mode): the one code generation of a build. The default generates for
    /// [`Compiler::codegen_target`] (`Ok(None)` without one: Direct and Custom backends), checked
    /// when `options.is_checked()`.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] for a construct the target or device lacks, or for
    /// Structure-of-Arrays parameters on any target but CUDA/PTX
    /// ([`spoc_codegen::abi::refuse_soa`]); [`Error::Compile`] for code generation errors.
    fn generate(
        &self,
        kernel: &ValidKernel,
        caps: &spoc_codegen::Capabilities,
        options: &CompileOptions,
    ) -> Result<Option<Source>> {
        let Some(target) = self.codegen_target() else {
            return Ok(None);
        };
        options.generate(target, kernel, caps.clone())
    }

    /// Generates unchecked source for `kernel` for a device of this backend not yet known
    /// ([`Compiler::codegen_caps`] of `None`), to inspect or hand to [`Compiler::compile`]:
    /// [`Compiler::generate`] with `block` and `soa_params`.
    ///
    /// # Errors
    /// As [`Compiler::generate`].
    fn generate_source(
        &self,
        kernel: &ValidKernel,
        block: Option<Dims>,
        soa_params: &[&str],
    ) -> Result<Option<Source>> {
        let options = CompileOptions {
            block,
            soa_params: soa_params.iter().map(|s| s.to_string()).collect(),
            ..CompileOptions::default()
        };
        self.generate(kernel, &self.codegen_caps(None)?, &options)
    }

    /// Compiles `source` (generated from `kernel` by [`Compiler::generate`]) for `device`,
    /// uncached: the driver's step only (the source is not generated again; its
    /// [`Source::abi`] is what launches bind the arguments from).
    ///
    /// # Errors
    /// [`Error::Compile`] if the driver rejects it; [`Error::FeatureNotSupported`] by default.
    fn compile(
        &self,
        device: usize,
        kernel: &ValidKernel,
        source: &Source,
        options: &CompileOptions,
    ) -> Result<Module> {
        let _ = (device, source, options);
        Err(Error::unsupported(
            self.name(),
            format!("compiling kernel `{}`", kernel.name),
        ))
    }

    /// The backend's own module cache, if it has one ([`Compiler::compile_cached`] uses it).
    fn module_cache(&self) -> Option<&ModuleCache> {
        None
    }

    /// Compiles through the backend's cache, keyed by (backend-local device, kernel name,
    /// `hash`, options). The default uses [`Compiler::module_cache`] when it is `Some`, and
    /// compiles every time otherwise.
    ///
    /// # Errors
    /// As [`Compiler::compile`]; [`Error::CacheClearedDuringBuild`] or
    /// [`Error::DeviceDestroyedDuringBuild`] if the cache was cleared or the device torn down
    /// while compiling.
    fn compile_cached(
        &self,
        device: usize,
        kernel: &ValidKernel,
        hash: ContentHash,
        source: &Source,
        options: &CompileOptions,
    ) -> Result<Arc<Module>> {
        match self.module_cache() {
            Some(cache) => {
                let key =
                    crate::cache::CacheKey::new(device, kernel.name.clone(), hash, options.clone());
                cache.get_or_build(key, || {
                    self.compile(device, kernel, source, options).map(Arc::new)
                })
            }
            None => self.compile(device, kernel, source, options).map(Arc::new),
        }
    }

    /// Drops the backend's module cache (failing builds in flight). The default clears
    /// [`Compiler::module_cache`].
    fn clear_cache(&self) {
        if let Some(cache) = self.module_cache() {
            cache.clear();
        }
    }

    /// Checks, once per kernel and device, that this backend can run `def` (before any
    /// compile or launch). The default accepts everything.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] naming what the backend lacks.
    fn check_kernel(&self, def: &KernelDef, kernel: &Kernel) -> Result<()> {
        let _ = (def, kernel);
        Ok(())
    }

    /// For Direct and Custom backends: work done once per kernel and device before its first
    /// run (the Interpreter resolves the IR into its executable form). The result is kept with
    /// the runtime's compiled kernel and handed back to [`Executor::execute_direct`](crate::Executor::execute_direct). The
    /// default prepares nothing.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] for constructs the backend does not run.
    fn prepare(&self, device: usize, def: &KernelDef, kernel: &Kernel) -> Result<Option<Module>> {
        let _ = (device, def, kernel);
        Ok(None)
    }
}
