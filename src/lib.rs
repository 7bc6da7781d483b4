//! # spoc — GPU kernels written as plain Rust
//!
//! `#[kernel]` lowers a Rust function into spoc's IR at compile time; the runtime finds devices,
//! moves memory, compiles kernels per device (with caching) and launches them. The same kernel
//! runs on every backend: NVIDIA GPUs (CUDA), OpenCL and Vulkan devices, and the CPU through the
//! Native backend and the IR Interpreter, so `cargo test` checks kernels on any machine.
//!
//! ```
//! use spoc::prelude::*;
//!
//! #[kernel]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     let i = global_id_x();
//!     if i < y.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! # fn main() -> spoc::Result<()> {
//! let dev = spoc::init_device(None)?;
//! let x = dev.upload(&vec![1.0f32; 1024])?;
//! let mut y = dev.upload(&vec![2.0f32; 1024])?;
//! saxpy.launch(&dev, dims1d(4), dims1d(256), (2.0, &x, &mut y))?;
//! assert!(y.to_vec()?.iter().all(|&v| v == 4.0));
//! # Ok(())
//! # }
//! ```
//!
//! The kernel language (what a kernel body may contain, and what each construct means on every
//! backend) is described in `docs/LANGUAGE.md` in the repository; the architecture in
//! `docs/DESIGN.md`.
//!
//! # A short tour
//!
//! **Devices.** [`init_device`]`(None)` returns the best device present: a GPU if there is one,
//! else the Native backend on the CPU. [`init_device`]`(Some("OpenCL"))` picks the best device of
//! one backend (`"CUDA"` matches both `"CUDA/PTX"` and `"CUDA/C"`), and [`all_devices`] lists
//! them all. Each [`Device`] has a global `id`, a `name`, its backend's name in `framework`, and
//! its [`Capabilities`]. A backend can be hidden with the environment variable
//! `SPOC_DISABLE_<NAME>=1`, `<NAME>` being its name upper-cased with other characters replaced by
//! `_` (`SPOC_DISABLE_NATIVE`, `SPOC_DISABLE_CUDA_PTX`, `SPOC_DISABLE_CUDA` for both CUDA
//! backends); `SPOC_DISABLE_GPU=1` hides every GPU device.
//!
//! **Buffers.** A [`Buffer<T>`] is typed memory on one device, freed on drop:
//! [`Device::upload`] copies a slice in, [`Device::alloc`] makes a zeroed buffer,
//! [`Buffer::to_vec`] and [`Buffer::download`] read it back, [`Buffer::upload_from`] overwrites it.
//!
//! **Launch.** `kernel.launch(&dev, grid, block, (args…))` runs `grid` blocks of `block`
//! threads ([`dims1d`], [`dims2d`], [`dims3d`]). The argument tuple is typed by the kernel's
//! signature: a scalar parameter takes its value, `&[T]` takes `&Buffer<T>`, `&mut [T]` takes
//! `&mut Buffer<T>`. Each kernel is compiled once per device and cached.
//!
//! **Streams.** [`Device::new_stream`] gives a [`Stream`]: `kernel.launch_on(&stream, grid,
//! block, (args…))`, [`Stream::upload`] and [`Stream::download`] (between a [`Buffer`] and a
//! [`HostBuffer`], page-locked on CUDA) queue work and return; work on one stream runs in order,
//! two streams overlap, and [`Stream::record`] / [`Stream::wait_for`] order them with an
//! [`Event`] (which also times: [`Event::elapsed_ms`]). Buffers remember the queued work that
//! uses them: a later host access, a free, or conflicting work on another stream waits for it,
//! so nothing needs an explicit synchronize to be correct:
//!
//! ```
//! use spoc::prelude::*;
//! use spoc::HostBuffer;
//!
//! #[kernel]
//! fn double(y: &mut [f32]) {
//!     let i = global_id_x();
//!     if i < y.len() {
//!         y[i] = 2.0 * y[i];
//!     }
//! }
//!
//! # fn main() -> spoc::Result<()> {
//! let dev = spoc::init_device(None)?;
//! let (s0, s1) = (dev.new_stream()?, dev.new_stream()?);
//! let input = HostBuffer::from_slice(&dev, &[1.0f32, 2.0, 3.0])?;
//! let mut y = dev.alloc::<f32>(3)?;
//! s0.upload(&input, &mut y)?;
//! double.launch_on(&s0, dims1d(1), dims1d(32), (&mut y,))?;
//! let doubled = s0.record()?;
//! s1.wait_for(&doubled)?;
//! double.launch_on(&s1, dims1d(1), dims1d(32), (&mut y,))?;
//! let mut out = HostBuffer::new(&dev, 3)?;
//! s1.download(&y, &mut out)?;
//! assert_eq!(out.as_slice()?, [4.0, 8.0, 12.0]); // waits for the download
//! # Ok(())
//! # }
//! ```
//!
//! **Graphs.** [`Stream::capture`] records the launches and copies a closure queues on a
//! stream, without running them, into a [`Graph`]; [`Graph::launch`] replays them all (CUDA
//! stream capture and `cuGraphLaunch`; a replay list on the other backends). The graph holds
//! the buffers it uses, and each replay is tracked like any work on a stream:
//!
//! ```
//! # use spoc::prelude::*;
//! # #[kernel]
//! # fn double(y: &mut [f32]) {
//! #     let i = global_id_x();
//! #     if i < y.len() {
//! #         y[i] = 2.0 * y[i];
//! #     }
//! # }
//! # fn main() -> spoc::Result<()> {
//! let dev = spoc::init_device(None)?;
//! let s = dev.new_stream()?;
//! let mut y = dev.upload(&[1.0f32, 2.0, 3.0])?;
//! let graph = s.capture(|s| {
//!     double.launch_on(s, dims1d(1), dims1d(32), (&mut y,))?;
//!     double.launch_on(s, dims1d(1), dims1d(32), (&mut y,))
//! })?;
//! assert_eq!(y.to_vec()?, [1.0, 2.0, 3.0]); // capturing runs nothing
//! for _ in 0..3 {
//!     graph.launch(&s)?;
//! }
//! assert_eq!(y.to_vec()?, [64.0, 128.0, 192.0]); // waits for the replays
//! # Ok(())
//! # }
//! ```
//!
//! **Errors.** Every fallible function returns [`Result`]; nothing panics on bad input or a
//! missing driver. A launch the device cannot run is [`Error::InvalidLaunch`] (with a
//! [`LaunchProblem`]) before anything runs; a backend lacking a feature is
//! [`Error::FeatureNotSupported`]. On the CPU backends every buffer access and every integer
//! division is checked, and a faulting thread is reported with its coordinates:
//!
//! ```
//! use spoc::prelude::*;
//!
//! #[kernel]
//! fn shift_left(x: &[f32], y: &mut [f32]) {
//!     let i = global_id_x();
//!     if i < y.len() {
//!         y[i] = x[i + 1]; // reads one past the end in the last thread
//!     }
//! }
//!
//! # fn main() -> spoc::Result<()> {
//! let dev = spoc::init_device(Some("Interpreter"))?;
//! let x = dev.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
//! let mut y = dev.alloc::<f32>(4)?;
//! let err = shift_left.launch(&dev, dims1d(1), dims1d(4), (&x, &mut y)).unwrap_err();
//! assert!(matches!(err, spoc::Error::KernelFault { thread: Some([3, 0, 0]), .. }));
//! assert!(err.to_string().contains("index 4 out of bounds for `x` of length 4"));
//!
//! let err = shift_left.launch(&dev, dims1d(0), dims1d(4), (&x, &mut y)).unwrap_err();
//! assert!(matches!(err, spoc::Error::InvalidLaunch { .. }));
//! # Ok(())
//! # }
//! ```
//!
//! # Backends
//!
//! | backend | runs on | needs at run time | cargo feature of `spoc-runtime` |
//! | --- | --- | --- | --- |
//! | `Native` | the CPU: the kernel compiled as Rust, blocks in parallel (rayon) | nothing | always |
//! | `Interpreter` | the CPU: runs the IR, the reference semantics | nothing | always |
//! | `CUDA/PTX` | NVIDIA GPUs: PTX written by spoc, loaded by the driver | the NVIDIA driver | `cuda` (default) |
//! | `CUDA/C` | NVIDIA GPUs: CUDA C compiled by NVRTC | the driver and NVRTC | `cuda` (default) |
//! | `OpenCL` | any OpenCL device (PoCL on the CPU) | an OpenCL ICD | `opencl` (default) |
//! | `Vulkan` | any Vulkan device: SPIR-V through naga (lavapipe on the CPU) | a Vulkan loader and driver | `vulkan` (default) |
//! | HIP, Metal, WebGPU | source generation only ([`Target`], `kernel.source(target)`) | — | — |
//!
//! Building needs none of the drivers: a backend whose driver is absent is unavailable at run
//! time, never a build failure or a panic. Every backend runs the whole kernel language
//! (shared memory, barriers, atomics, warp operations, records); a feature a device lacks (f64,
//! 64-bit atomics, subgroups) is an [`Error::FeatureNotSupported`] naming it. With
//! `SPOC_CHECK=1` ([`set_checking`]) every launch first runs on the checking Interpreter.

// `#[device]` functions of this crate (`matrix`) expand to `::spoc::…` paths.
extern crate self as spoc;

pub mod intrinsics;
pub mod matrix;

pub use spoc_macros::{device, kernel, Record};
pub use spoc_runtime::*;

/// The IR, for users who want to look at what a kernel was lowered to.
pub use spoc_ir as ir;

/// The code generators, for users who want source for a target with capabilities of their own
/// choosing (`spoc::codegen::generate_source_with`); launches never need this.
pub use spoc_codegen as codegen;

/// Everything a kernel file needs: the attributes, the launch types and the intrinsics (the
/// warp-level matrix multiply-accumulate `mma_sync_m16n8k16_f16`/`_bf16` and its
/// `pack_f16x2`/`pack_bf16x2` included).
pub mod prelude {
    pub use crate::intrinsics::*;
    pub use crate::matrix::*;
    pub use crate::{
        device, dims1d, dims2d, dims3d, init_device, kernel, Buffer, Device, Dims, F32x2, F32x4,
        Float, I32x2, I32x4, Int, Number, Record, U32x2, U32x4,
    };
    /// The 16-bit float types of the kernel language: the `half` crate's IEEE-754 binary16
    /// `f16` and bfloat16 `bf16` (see `docs/LANGUAGE.md`, "16-bit floats").
    pub use spoc_runtime::{bf16, f16};
}

/// Paths the code generated by `#[kernel]` and `#[device]` names. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use spoc_ir;
    pub use spoc_runtime::__private::*;
    pub use spoc_runtime::native::abi::*;
    pub use spoc_runtime::KernelDef;
    pub use spoc_runtime::{bf16, f16};
}
