//! The Native backend: runs the Rust code `#[kernel]` compiles into the program
//! ([`KernelDef::native`]) on the host, blocks in parallel on rayon's threads, the threads of a
//! block in order ([`abi::NativeLaunch::run`]). One device, `CPU (N threads)`; host memory.
//!
//! Kernels that need the threads of a block to run concurrently (barriers, shared memory,
//! warp operations) have no native code; Native refuses them with
//! [`Error::FeatureNotSupported`] when they are compiled.

pub mod abi;

use crate::args::Arg;
use crate::backend::{Backend, DeviceInfo, ExecutionModel};
use crate::device::Capabilities;
use crate::dims::Dims;
use crate::error::{Error, Result};
use crate::intrinsics::IntrinsicRegistry;
use crate::kernel_def::KernelDef;
use spoc_ir::{Intrinsic, Kernel};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The Native backend's name.
pub const NAME: &str = "Native";

/// The Native backend. Stateless apart from its intrinsic registry and profiling switch.
pub struct NativeBackend {
    intrinsics: IntrinsicRegistry,
    profiling: AtomicBool,
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
            // Threads of a block run one after the other: no cross-lane warp operations.
            intrinsics: IntrinsicRegistry::all_except(|i| {
                matches!(
                    i,
                    Intrinsic::Shuffle(_)
                        | Intrinsic::VoteAny
                        | Intrinsic::VoteAll
                        | Intrinsic::Ballot
                )
            }),
            profiling: AtomicBool::new(false),
        }
    }
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
        block: t.block,
        thread: t.thread,
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

impl Backend for NativeBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn version(&self) -> (u32, u32, u32) {
        crate::crate_version()
    }

    fn is_available(&self) -> bool {
        true
    }

    fn execution_model(&self) -> ExecutionModel {
        ExecutionModel::Direct
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        let caps = host_capabilities();
        Ok(vec![DeviceInfo {
            local_id: 0,
            name: format!("CPU ({} threads)", caps.compute_units),
            capabilities: caps,
        }])
    }

    crate::host_memory_methods!();

    fn check_kernel(&self, def: &KernelDef, _kernel: &Kernel) -> Result<()> {
        match def.native {
            Some(_) => Ok(()),
            None => Err(Error::unsupported(
                NAME,
                format!(
                    "kernel `{}`: it has no native code: it uses a construct the Native backend \
                     cannot run yet, such as a barrier (`sync_threads()`). Kernels with barriers \
                     run today on the GPU backends only (CUDA/PTX, CUDA/C, OpenCL, Vulkan): the \
                     Interpreter refuses them too, and CPU support for them comes with the \
                     language work planned in docs/LANGUAGE.md",
                    def.name
                ),
            )),
        }
    }

    fn execute_direct(
        &self,
        device: usize,
        def: &KernelDef,
        kernel: &Kernel,
        _prepared: Option<&crate::backend::Module>,
        grid: Dims,
        block: Dims,
        _shared_mem: usize,
        args: &[Arg<'_>],
    ) -> Result<()> {
        check_device(NAME, device)?;
        self.check_kernel(def, kernel)?;
        let native = def
            .native
            .ok_or_else(|| Error::unsupported(NAME, "a kernel without native code"))?;
        let native_args = crate::host::native_args(NAME, args)?;
        let launch = abi::NativeLaunch {
            grid: grid.to_array(),
            block: block.to_array(),
        };
        let t0 = self.profiling.load(Ordering::Relaxed).then(Instant::now);
        let result = native(&launch, &native_args).map_err(|t| fault(def.name, t));
        if let Some(t0) = t0 {
            tracing::info!(
                kernel = def.name,
                %grid,
                %block,
                ms = t0.elapsed().as_secs_f64() * 1e3,
                "Native launch"
            );
        }
        result
    }

    fn enable_profiling(&self) {
        self.profiling.store(true, Ordering::Relaxed);
    }

    fn disable_profiling(&self) {
        self.profiling.store(false, Ordering::Relaxed);
    }

    fn intrinsics(&self) -> &IntrinsicRegistry {
        &self.intrinsics
    }
}
