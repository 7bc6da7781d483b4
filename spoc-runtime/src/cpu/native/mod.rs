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
use crate::backend::Module;
use crate::backend::{Compiler, DeviceInfo, DeviceMemory, ExecutionModel, LaunchConfig, Platform};
use crate::capabilities::Capabilities;
use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::intrinsics::IntrinsicRegistry;
use crate::kernel_def::KernelDef;
use spoc_ir::{Block, Expr, ExprKind, Intrinsic, Kernel, StmtKind};

/// The Native backend's name.
pub const NAME: &str = "Native";

/// The Native backend. Stateless apart from its intrinsic registry and profiling switch.
pub struct NativeBackend {
    base: CpuBackendBase,
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
        }
    }
}

/// True if `kernel` (with its helpers) needs the SIMT scheduler: it declares a shared array, or
/// has a block or warp barrier or a warp operation (shuffle, vote, ballot). `warp_size()` and
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
                    | Intrinsic::Ballot,
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

impl DeviceMemory for NativeBackend {
    crate::host_memory_methods!();
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
        self.base.timed(NAME, def.name, grid, block, || {
            native(&launch, &native_args).map_err(|t| fault(def.name, t))
        })
    }
}
