//! The runtime's error type: every fallible public function returns [`Result`].

use std::fmt;

/// The result type of the runtime.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong between picking a device and reading a result back.
///
/// Nothing in the runtime panics on bad input or on a missing driver: each failure is one of
/// these values.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No registered backend has this name (or is a `<name>/<variant>` refinement of it).
    #[error("no backend named `{name}` is registered (registered: {registered})")]
    BackendNotFound {
        /// The name asked for.
        name: String,
        /// The registered backends' names, comma-separated.
        registered: String,
    },
    /// A backend of this name is already registered.
    #[error("a backend named `{name}` is already registered")]
    BackendAlreadyRegistered {
        /// The duplicate name.
        name: String,
    },
    /// The backends asked for are present and enabled but expose no device.
    #[error("no device available{}", framework.as_ref().map(|f| format!(" for backend `{f}`")).unwrap_or_default())]
    NoDevice {
        /// The framework filter, if one was given.
        framework: Option<String>,
    },
    /// The backend cannot be used: its driver is missing, it failed to initialise, or it was
    /// disabled by an environment switch (`SPOC_DISABLE_<NAME>`, `SPOC_DISABLE_GPU`).
    #[error("backend `{backend}` is unavailable: {reason}")]
    BackendUnavailable {
        /// The backend's name.
        backend: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The backend does not implement what was asked (an operation, a kernel construct, a
    /// source language).
    #[error("backend `{backend}` does not support {feature}")]
    FeatureNotSupported {
        /// The backend's name.
        backend: String,
        /// What it lacks, as a phrase ("streams", "kernel `k` without native code", …).
        feature: String,
    },
    /// An operation that cannot be part of a graph, asked for while a stream captures one
    /// ([`crate::Stream::capture`]): a synchronize or an event on the capturing stream,
    /// default-stream work on its device from the capturing thread, a launch with
    /// Structure-of-Arrays arguments, a nested capture. Nothing of it ran; ending the capture
    /// with the error leaves the stream as it was.
    #[error("not capturable in a graph: {operation}")]
    NotCapturable {
        /// What was refused.
        operation: String,
    },
    /// A [`crate::Graph`] replay that would copy into a [`crate::HostBuffer`] while a slice of
    /// it lives (or out of one while a mutable slice lives): drop the slice first. (Also any
    /// copy of a host buffer whose slice guard was forgotten with `std::mem::forget`.)
    #[error("{operation}: a host buffer the graph copies is borrowed by a live slice")]
    HostBufferBorrowed {
        /// The refused operation.
        operation: &'static str,
    },
    /// A launch refused before anything ran; `problem` says which check failed.
    #[error("invalid launch of kernel `{kernel}`: {problem}")]
    InvalidLaunch {
        /// The kernel's name.
        kernel: String,
        /// The failed check.
        problem: LaunchProblem,
    },
    /// A kernel faulted: on a CPU backend or in a checked launch, a thread's out-of-bounds
    /// access, integer division by zero or `step_by(0)`, with that thread's coordinates; on a
    /// GPU, a fault the device reported (an illegal address, a trap), where the thread is not
    /// known and `kernel` names the kernel(s) in flight. Nothing after the fault is guaranteed
    /// to have run.
    #[error("kernel `{kernel}` faulted{}: {message}", at(block, thread))]
    KernelFault {
        /// The kernel's name (for a device fault: the kernels launched since the last
        /// synchronisation, most recent last, comma-separated).
        kernel: String,
        /// `blockIdx` of the faulting thread, when known.
        block: Option<[u32; 3]>,
        /// `threadIdx` of the faulting thread, when known.
        thread: Option<[u32; 3]>,
        /// What went wrong (names the buffer and index for out-of-bounds accesses).
        message: String,
    },
    /// A buffer, module, stream or event of a device context that [`crate::Device::reset`]
    /// destroyed to recover from a device fault: it is gone with the context.
    #[error("this {resource} belonged to a {backend} context that Device::reset() destroyed after a device fault; make it again")]
    ContextReset {
        /// The backend's name.
        backend: String,
        /// `"buffer"`, `"module"`, `"stream"`, `"event"` or `"graph"`.
        resource: &'static str,
    },
    /// The device was torn down (or the global device ids retired by [`crate::Device::reset`])
    /// while this kernel was being compiled for it; nothing was cached.
    #[error("device {device} was torn down while kernel `{kernel}` was being compiled for it")]
    DeviceDestroyedDuringBuild {
        /// The kernel's name.
        kernel: String,
        /// The device id the build was for (global for the runtime's memo, backend-local for a
        /// backend's cache).
        device: usize,
    },
    /// A compile cache was cleared while this kernel was being compiled; nothing was cached.
    /// Retrying after the clear succeeds.
    #[error("the compile cache was cleared while kernel `{kernel}` was being compiled")]
    CacheClearedDuringBuild {
        /// The kernel's name.
        kernel: String,
    },
    /// The device value predates [`crate::Device::reset`]; get a new one from
    /// [`crate::init_device`] or [`crate::all_devices`].
    #[error("device {device} predates Device::reset(); obtain a new device")]
    DeviceReset {
        /// The retired global id.
        device: usize,
    },
    /// The kernel's IR does not decode, link or validate.
    #[error(transparent)]
    Ir(#[from] spoc_ir::IrError),
    /// An allocation or transfer failed, or its sizes do not fit.
    #[error("memory error on backend `{backend}`: {message}")]
    Memory {
        /// The backend's name.
        backend: String,
        /// What failed.
        message: String,
    },
    /// A buffer (or a set of buffers) larger than the device takes: refused before anything
    /// is allocated.
    #[error("cannot make {what} {} ({bytes} bytes): {limit_name} is {} ({limit} bytes) on {device}", mib(*bytes), mib(*limit))]
    BufferTooLarge {
        /// The device, as it prints (`#3 llvmpipe [Vulkan]`).
        device: String,
        /// `"a buffer of"` or `"buffers totalling"`.
        what: &'static str,
        /// The size asked for, in bytes.
        bytes: u64,
        /// The device's limit, in bytes.
        limit: u64,
        /// Which limit (`"the largest buffer the device takes"`, `"the device's memory"`).
        limit_name: &'static str,
    },
    /// A host slice and a buffer (or two buffers) of different lengths in a transfer.
    #[error(
        "length mismatch in {operation}: the buffer has {expected} elements, the other side {got}"
    )]
    LengthMismatch {
        /// The transfer (`"download"`, `"upload_from"`, `"copy_from"`, …).
        operation: &'static str,
        /// The buffer's length in elements.
        expected: usize,
        /// The other side's length in elements.
        got: usize,
    },
    /// A buffer of `len` elements viewed as vectors of `lanes` lanes
    /// ([`crate::Buffer::into_vectors`]) when `len` is not a multiple of `lanes`.
    #[error("a buffer of {len} elements cannot be viewed as `{vector}` vectors: {len} is not a multiple of {lanes}")]
    NotVectors {
        /// The buffer's length in elements.
        len: usize,
        /// The vector's lanes.
        lanes: usize,
        /// The vector type (`"F32x4"`, …).
        vector: &'static str,
    },
    /// A buffer used with a device other than the one it lives on.
    #[error("buffer of device {buffer_device} used with device {device}")]
    WrongDevice {
        /// The global id of the buffer's device.
        buffer_device: usize,
        /// The global id of the device it was used with.
        device: usize,
    },
    /// Code generation or a driver's compiler rejected a kernel.
    #[error("cannot compile kernel `{kernel}` for backend `{backend}`: {message}")]
    Compile {
        /// The backend's name.
        backend: String,
        /// The kernel's name.
        kernel: String,
        /// The compiler's message.
        message: String,
    },
    /// An environment variable of spoc's has a value it does not understand (see
    /// `spoc::env`): a switch set to something other than on or off, or a `SPOC_DEVICE` that
    /// names no backend.
    #[error("environment variable {variable}=`{value}` is not understood: expected {expected}")]
    InvalidEnvironment {
        /// The variable's name.
        variable: String,
        /// Its value.
        value: String,
        /// What it accepts.
        expected: String,
    },
    /// A driver call failed.
    #[error("driver error on backend `{backend}`: {message}")]
    Driver {
        /// The backend's name.
        backend: String,
        /// The driver's message.
        message: String,
    },
}

/// `12.0 MiB`, `3.5 GiB`.
fn mib(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    }
}

/// ` in block (x, y, z), thread (x, y, z)` where the coordinates are known.
fn at(block: &Option<[u32; 3]>, thread: &Option<[u32; 3]>) -> String {
    let c = |v: &[u32; 3]| format!("({}, {}, {})", v[0], v[1], v[2]);
    match (block, thread) {
        (Some(b), Some(t)) => format!(" in block {}, thread {}", c(b), c(t)),
        (Some(b), None) => format!(" in block {}", c(b)),
        (None, Some(t)) => format!(" in thread {}", c(t)),
        (None, None) => String::new(),
    }
}

impl From<spoc_codegen::CodegenError> for Error {
    fn from(e: spoc_codegen::CodegenError) -> Error {
        use spoc_codegen::CodegenError as C;
        match e {
            C::Invalid(ir) => Error::Ir(ir),
            C::Unsupported {
                kernel,
                target,
                node,
                capability,
            } => Error::FeatureNotSupported {
                backend: target.to_string(),
                feature: format!("{node} in kernel `{kernel}` (it needs {capability})"),
            },
            C::FeatureNotSupported { backend, feature } => {
                Error::FeatureNotSupported { backend, feature }
            }
            C::Backend {
                kernel,
                target,
                message,
            } => Error::Compile {
                backend: target.to_string(),
                kernel,
                message,
            },
        }
    }
}

impl Error {
    /// A [`Error::FeatureNotSupported`].
    pub fn unsupported(backend: &str, feature: impl Into<String>) -> Error {
        Error::FeatureNotSupported {
            backend: backend.to_string(),
            feature: feature.into(),
        }
    }

    /// An [`Error::InvalidLaunch`].
    pub fn invalid_launch(kernel: &str, problem: LaunchProblem) -> Error {
        Error::InvalidLaunch {
            kernel: kernel.to_string(),
            problem,
        }
    }
}

/// Grid or block, in a [`LaunchProblem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimKind {
    /// The grid (blocks per launch).
    Grid,
    /// The block (threads per block).
    Block,
}

impl fmt::Display for DimKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DimKind::Grid => "grid",
            DimKind::Block => "block",
        })
    }
}

/// Which launch check failed, with the values involved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchProblem {
    /// A grid or block dimension is 0.
    #[error("{what} dimension {axis} is 0")]
    ZeroDim {
        /// Grid or block.
        what: DimKind,
        /// `'x'`, `'y'` or `'z'`.
        axis: char,
    },
    /// A grid or block dimension exceeds the device's limit on that axis.
    #[error("{what} dimension {axis} is {value}, the device allows at most {limit}")]
    DimTooLarge {
        /// Grid or block.
        what: DimKind,
        /// `'x'`, `'y'` or `'z'`.
        axis: char,
        /// The requested size.
        value: u32,
        /// The device's limit.
        limit: u32,
    },
    /// `grid * block` on an axis exceeds `u32::MAX` threads: `global_id_*()` and
    /// `global_size_*()` are 32-bit (the kernel language's `usize`) and would wrap.
    #[error(
        "grid {axis} ({grid}) times block {axis} ({block}) is {total} threads, over the {max} that 32-bit global ids can number"
    )]
    GlobalSizeOverflow {
        /// `'x'`, `'y'` or `'z'`.
        axis: char,
        /// Blocks on that axis.
        grid: u32,
        /// Threads per block on that axis.
        block: u32,
        /// Their product.
        total: u64,
        /// `u32::MAX`.
        max: u32,
    },
    /// The block has more threads than the device allows per block.
    #[error("the block has {threads} threads, the device allows at most {limit} per block")]
    TooManyThreads {
        /// `block.x * block.y * block.z`.
        threads: u64,
        /// The device's limit.
        limit: u32,
    },
    /// The block has more threads than this compiled kernel can run with on the device: a
    /// per-kernel limit below the device's own (`max_threads_per_block`), which a driver derives
    /// from the kernel's registers and private memory (OpenCL's `CL_KERNEL_WORK_GROUP_SIZE`,
    /// OpenCL 1.2 §5.9.3, queried with `clGetKernelWorkGroupInfo` after the build).
    #[error(
        "the block has {threads} threads, but this kernel runs with at most {limit} per block on          the device ({limit_name}; the device itself allows {device_limit})"
    )]
    KernelTooManyThreads {
        /// `block.x * block.y * block.z`.
        threads: u64,
        /// The kernel's limit on the device.
        limit: u32,
        /// Where the limit comes from (`"CL_KERNEL_WORK_GROUP_SIZE"`).
        limit_name: &'static str,
        /// The device's own limit (`CL_DEVICE_MAX_WORK_GROUP_SIZE` on OpenCL).
        device_limit: u32,
    },
    /// Static plus dynamic shared memory exceed the device's per-block limit.
    #[error(
        "the kernel needs {requested} bytes of shared memory per block, the device has {limit}"
    )]
    SharedMemory {
        /// Static shared arrays plus the dynamic size asked at launch, in bytes.
        requested: usize,
        /// The device's per-block limit, in bytes.
        limit: usize,
    },
    /// The number of arguments differs from the number of parameters.
    #[error("the kernel takes {expected} argument(s), {got} given")]
    ArgCount {
        /// The kernel's parameter count.
        expected: usize,
        /// The argument count.
        got: usize,
    },
    /// An argument's kind or type does not match its parameter.
    #[error("argument {index} (`{param}`) should be {expected}, got {got}")]
    ArgType {
        /// 0-based position.
        index: usize,
        /// The parameter's name.
        param: String,
        /// The parameter's type, as the kernel declares it.
        expected: String,
        /// What was passed.
        got: String,
    },
    /// A `usize` argument that does not fit the kernel's 32-bit `usize`.
    #[error(
        "argument {index} (`{param}`) is {value}, which does not fit the kernel's 32-bit usize"
    )]
    UsizeOverflow {
        /// 0-based position.
        index: usize,
        /// The parameter's name.
        param: String,
        /// The value passed.
        value: u64,
    },
    /// A buffer longer than kernels can index (indices are `u32`).
    #[error(
        "buffer `{param}` has {len} elements, kernels index at most {} (u32::MAX)",
        u32::MAX
    )]
    BufferTooLong {
        /// The parameter's name.
        param: String,
        /// The buffer's length in elements.
        len: usize,
    },
    /// One buffer passed to two parameters, at least one of them `&mut`.
    #[error("one buffer is passed to `{first}` and to `{second}`, and `{mutable}` is `&mut`")]
    AliasedBuffer {
        /// The first parameter's name.
        first: String,
        /// The second parameter's name.
        second: String,
        /// The `&mut` one of the two.
        mutable: String,
    },
    /// A buffer passed by shared reference to a `&mut` parameter.
    #[error("parameter `{param}` is `&mut`: pass the buffer as `&mut` (Arg::BufferMut)")]
    ReadOnlyBuffer {
        /// The parameter's name.
        param: String,
    },
    /// A buffer that lives on another device than the launch's.
    #[error("buffer `{param}` lives on device {buffer_device}, the launch is on device {device}")]
    WrongDevice {
        /// The parameter's name.
        param: String,
        /// Global id of the buffer's device.
        buffer_device: usize,
        /// Global id of the launch's device.
        device: usize,
    },
    /// A Structure-of-Arrays argument that does not fit its parameter: its record or fields
    /// differ from the kernel's record, or the kernel was compiled without (or with) the
    /// parameter in `CompileOptions::soa_params` and given an array-of-structures (or SoA)
    /// buffer.
    #[error("SoA argument for `{param}`: {message}")]
    SoaMismatch {
        /// The parameter's name.
        param: String,
        /// What differs.
        message: String,
    },
    /// The backend refused the arguments for a reason the runtime's checks do not cover.
    #[error("the backend rejected the arguments: {message}")]
    Rejected {
        /// The backend's message.
        message: String,
    },
    /// Launch arguments built for another device than the compiled kernel's.
    #[error("arguments were set for device {args_device}, the kernel is compiled for device {kernel_device}")]
    ArgsForOtherDevice {
        /// Global id of the device given to `set_args`.
        args_device: usize,
        /// Global id of the compiled kernel's device.
        kernel_device: usize,
    },
}
