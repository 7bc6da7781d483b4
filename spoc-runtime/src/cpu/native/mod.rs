//! The Native backend: runs the Rust code `#[kernel]` compiles into the program
//! ([`KernelDef::native`]) on the host, blocks in parallel on rayon's threads. One device,
//! `CPU (N threads)`; host memory.
//!
//! Two ways to run a block:
//! - kernels without barriers, warp operations or shared memory run the threads of a block one
//!   after the other, through the row plan ([`abi::NativeLaunch::run_planned`]);
//! - kernels that have them ("need SIMT": a block barrier, a warp barrier, a shuffle, vote or
//!   ballot, or a shared array, in the kernel or a helper it calls) run each block on the SIMT
//!   scheduler ([`crate::simt`]): every thread of the block a coroutine on one OS thread, the
//!   block's shared arrays allocated per block ([`abi::NativeLaunch::run_simt`]). A barrier that
//!   not every thread of the block reaches is a [`Error::KernelFault`], never a hang.
//!
//! Atomics work on buffers and shared arrays (`std::sync::atomic` on the memory itself), fences
//! are `std::sync::atomic::fence`, local arrays are Rust arrays with bounds-checked indexing, and
//! `match` on integers is Rust's `match`; records are the user's `#[derive(Record)]` structs.
//! Kernels using constructs with no native code yet (variants, vectors: IR the Rust front end
//! does not produce) have no native entry point; Native refuses them with
//! [`Error::FeatureNotSupported`] when they are compiled.

pub mod abi;
mod atomic;
mod block;
mod global;
mod local;
mod window;

use super::CpuBackendBase;
use crate::args::Arg;
use crate::backend::{
    Compiler, DeviceInfo, DeviceMem, DeviceMemory, Event, ExecutionModel, LaunchConfig, Module,
    Platform, Stream,
};
use crate::capabilities::Capabilities;
use crate::cpu::worker::{self, Worker};
use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::intrinsics::IntrinsicRegistry;
use crate::kernel_def::KernelDef;
use spoc_ir::{Block, Expr, ExprKind, Intrinsic, Kernel, StmtKind};
use std::sync::{Mutex, Weak};

/// The Native backend's name.
pub const NAME: &str = "Native";

/// The Native backend. Stateless apart from its intrinsic registry and profiling switch.
pub struct NativeBackend {
    base: CpuBackendBase,
    /// The workers of the streams created (for [`DeviceMemory::synchronize`]).
    streams: Mutex<Vec<Weak<worker::Shared>>>,
}

impl Default for NativeBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl NativeBackend {
    /// A Native backend.
    pub fn new() -> NativeBackend {
        NativeBackend {
            // Every intrinsic runs natively: warp operations on the SIMT scheduler.
            base: CpuBackendBase::new(IntrinsicRegistry::all_except(|_| false)),
            streams: Mutex::new(Vec::new()),
        }
    }
}

/// True if `kernel` (with its helpers) needs the SIMT scheduler: it declares a shared array, or
/// has a block or warp barrier or a warp operation (shuffle, vote, ballot, matrix
/// multiply-accumulate). `warp_size()` and
/// `lane_id()` alone do not need it.
pub fn needs_simt(kernel: &Kernel) -> bool {
    let barrier = |b: &Block| {
        let mut found = false;
        spoc_ir::visit::for_each_stmt(b, &mut |s| {
            found |= matches!(s.kind, StmtKind::Barrier | StmtKind::WarpBarrier);
        });
        found
    };
    let warp_op = |e: &Expr| {
        matches!(
            &e.kind,
            ExprKind::Intrinsic {
                intrinsic: Intrinsic::Shuffle(_)
                    | Intrinsic::VoteAny
                    | Intrinsic::VoteAll
                    | Intrinsic::Ballot
                    | Intrinsic::MmaM16N8K16(_),
                ..
            }
        )
    };
    !kernel.shared.is_empty()
        || spoc_ir::visit::bodies(kernel)
            .any(|b| barrier(b) || spoc_ir::visit::block_any_expr(b, &mut |e| warp_op(e)))
}

/// The capabilities of the host as a CPU-backend device.
pub(crate) fn host_capabilities() -> Capabilities {
    Capabilities::cpu(
        rayon::current_num_threads() as u32,
        crate::host::total_memory(),
    )
}

/// Converts a native kernel's trap into [`Error::KernelFault`] naming `kernel`.
pub fn fault(kernel: &str, t: abi::ThreadTrap) -> Error {
    Error::KernelFault {
        kernel: kernel.to_string(),
        block: Some(t.block),
        thread: Some(t.thread),
        message: t.trap.to_string(),
    }
}

pub(crate) fn check_device(backend: &str, device: usize) -> Result<()> {
    if device == 0 {
        Ok(())
    } else {
        Err(Error::NoDevice {
            framework: Some(backend.to_string()),
        })
    }
}

impl Platform for NativeBackend {
    cpu_backend_methods!(NAME);

    fn execution_model(&self) -> ExecutionModel {
        ExecutionModel::Direct
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        CpuBackendBase::devices("CPU")
    }
}

impl NativeBackend {
    /// The workers of the streams still alive.
    fn live_streams(&self) -> Vec<std::sync::Arc<worker::Shared>> {
        let mut live = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|s| s.strong_count() > 0);
        live.iter().filter_map(|s| s.upgrade()).collect()
    }

    /// Before work of the default stream (a transfer, a free, a launch): waits for the work
    /// queued on every stream, as CUDA's legacy default stream does, so that no stream's job
    /// can touch memory the default stream frees or reads. A stream's failure is that
    /// stream's to report.
    fn wait_for_streams(&self) {
        for s in self.live_streams() {
            let _ = s.wait();
        }
    }
}

/// The worker of a Native stream.
fn worker(stream: &Stream) -> Result<&Worker> {
    check_device(NAME, stream.device())?;
    stream.handle::<Worker>().ok_or_else(|| Error::Driver {
        backend: NAME.into(),
        message: "not a stream of the Native backend".into(),
    })
}

/// Host memory pointers a copy job carries to the worker thread.
struct CopyJob {
    src: *const u8,
    dst: *mut u8,
    bytes: usize,
}

// SAFETY: the pointers are host memory that stays valid, and untouched by the host, until the
// stream has run the job (the caller's contract of `copy_*_async`, which the runtime's use
// tracking keeps).
unsafe impl Send for CopyJob {}

/// Queues `job` on `stream`'s worker.
fn queue_copy(stream: &Stream, job: CopyJob) -> Result<()> {
    worker(stream)?.submit(Box::new(move || job.run()));
    Ok(())
}

impl CopyJob {
    fn run(self) -> Result<()> {
        if self.bytes > 0 {
            // SAFETY: both ranges valid for `bytes` bytes (checked or guaranteed when queued);
            // host and device memory of distinct allocations do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(self.src, self.dst, self.bytes) };
        }
        Ok(())
    }
}

/// Streams run on worker threads of their own (`cpu/worker.rs`): a launch or copy on a
/// stream returns once queued, and two streams run side by side. The default stream runs work
/// as it is called, after waiting for every stream (CUDA's legacy default stream): transfers,
/// frees and launches through the backend's own methods can never race a stream's job.
impl DeviceMemory for NativeBackend {
    crate::host_memory_methods!(memory, wait_for_streams);

    fn create_stream(&self, device: usize) -> Result<Stream> {
        check_device(NAME, device)?;
        let w = Worker::start(NAME, "spoc-native-stream")?;
        let mut live = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|s| s.strong_count() > 0);
        live.push(w.watch());
        drop(live);
        Ok(Stream::new(device, Box::new(w)))
    }

    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        worker(stream)?.wait()
    }

    fn destroy_stream(&self, stream: Stream) -> Result<()> {
        let waited = worker(&stream)?.wait();
        drop(stream); // the worker joins its thread
        waited
    }

    /// Waits for every stream of the device; returns the first failure one reports.
    fn synchronize(&self, device: usize) -> Result<()> {
        check_device(NAME, device)?;
        let mut first = Ok(());
        for s in self.live_streams() {
            let r = s.wait();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    unsafe fn copy_h2d_async(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
        stream: &Stream,
    ) -> Result<()> {
        let dst = crate::host::range(NAME, dst, offset, bytes)?;
        queue_copy(stream, CopyJob { src, dst, bytes })
    }

    unsafe fn copy_d2h_async(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
        stream: &Stream,
    ) -> Result<()> {
        let src = crate::host::range(NAME, src, offset, bytes)?;
        queue_copy(stream, CopyJob { src, dst, bytes })
    }

    fn create_event(&self, device: usize) -> Result<Event> {
        check_device(NAME, device)?;
        Ok(Event::new(
            device,
            Box::new(crate::host::CpuEvent::default()),
        ))
    }

    /// On a stream: stamped when the stream's worker reaches it.
    fn record_event(&self, event: &Event, stream: Option<&Stream>) -> Result<()> {
        let stamp = crate::host::event_stamp(NAME, event)?;
        match stream {
            Some(s) => worker(s)?.submit(Box::new(move || {
                stamp();
                Ok(())
            })),
            None => stamp(),
        }
        Ok(())
    }

    fn event_elapsed_ms(&self, start: &Event, end: &Event) -> Result<f32> {
        crate::host::elapsed_ms(NAME, start, end)
    }
}

impl Compiler for NativeBackend {
    fn check_kernel(&self, def: &KernelDef, _kernel: &Kernel) -> Result<()> {
        match def.native {
            Some(_) => Ok(()),
            None => Err(Error::unsupported(
                NAME,
                format!(
                    "kernel `{}`: it has no native code: it uses a construct the Native backend \
                     cannot run yet (variants or vectors, in the kernel or a helper it calls); the \
                     Interpreter and the GPU backends run it",
                    def.name
                ),
            )),
        }
    }
}

impl Executor for NativeBackend {
    fn execute_direct(
        &self,
        device: usize,
        def: &KernelDef,
        kernel: &Kernel,
        _prepared: Option<&Module>,
        config: &LaunchConfig<'_>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let (grid, block, shared_mem) = (config.grid, config.block, config.shared_mem_bytes);
        check_device(NAME, device)?;
        self.check_kernel(def, kernel)?;
        let native = def
            .native
            .ok_or_else(|| Error::unsupported(NAME, "a kernel without native code"))?;
        let native_args = crate::host::native_args(NAME, args)?;
        // A walk of the IR (well under a microsecond for kernels of a few hundred nodes), so
        // that Native keeps no per-kernel state.
        let simt = needs_simt(kernel);
        let launch = abi::NativeLaunch {
            grid: grid.to_array(),
            block: block.to_array(),
            shared_bytes: shared_mem,
            simt,
        };
        if let Some(stream) = config.stream {
            // Queued: the buffers stay valid until the stream has run it (use tracking).
            let name = def.name;
            worker(stream)?.submit(Box::new(move || {
                native(&launch, &native_args).map_err(|t| fault(name, t))
            }));
            return Ok(());
        }
        self.wait_for_streams();
        self.base.timed(NAME, def.name, grid, block, || {
            native(&launch, &native_args).map_err(|t| fault(def.name, t))
        })
    }
}
