//! The Interpreter backend: runs a kernel's IR with [`crate::interpreter`], on host memory. It is
//! the reference every other backend is compared with, and it checks what GPUs do not
//! (out-of-bounds accesses, integer division by zero, barrier divergence, shuffles from inactive
//! lanes). Kernels with barriers, shared memory and warp operations run on the SIMT scheduler
//! ([`crate::simt`]); the launch's dynamic shared memory size goes to the interpreter, which
//! sizes the kernel's `dynamic_shared` array with it.

use crate::args::Arg;
use crate::backend::{
    Compiler, DeviceInfo, DeviceMemory, ExecutionModel, LaunchConfig, Module, Platform,
};
use crate::cpu::CpuBackendBase;
use crate::error::{Error, LaunchProblem, Result};
use crate::executor::Executor;
use crate::interpreter::{self, InterpError, InterpErrorKind};
use crate::intrinsics::IntrinsicRegistry;
use crate::kernel_def::KernelDef;
use spoc_ir::{IrError, Kernel};

/// The Interpreter backend's name.
pub const NAME: &str = "Interpreter";

/// The Interpreter backend.
pub struct InterpreterBackend {
    base: CpuBackendBase,
}

impl Default for InterpreterBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl InterpreterBackend {
    /// An Interpreter backend.
    pub fn new() -> InterpreterBackend {
        InterpreterBackend {
            base: CpuBackendBase::new(IntrinsicRegistry::all()),
        }
    }
}

/// The runtime's error for an Interpreter error: faults of threads (out of bounds, division by
/// zero, barrier divergence, inactive lanes, out of resources) are [`Error::KernelFault`]s with
/// the faulting block and thread.
fn convert(e: InterpError) -> Error {
    match e.kind {
        InterpErrorKind::Unsupported { what } => Error::unsupported(NAME, what),
        InterpErrorKind::InvalidKernel { message } => Error::Ir(IrError::Invalid {
            kernel: e.kernel,
            function: None,
            message,
        }),
        InterpErrorKind::BadArgument { .. } => Error::InvalidLaunch {
            problem: LaunchProblem::Rejected {
                message: e.kind.to_string(),
            },
            kernel: e.kernel,
        },
        _ => {
            interpreter::set_last_report(&e);
            Error::KernelFault {
                message: e.message(),
                kernel: e.kernel,
                block: Some(e.block),
                thread: Some(e.thread),
            }
        }
    }
}

impl Platform for InterpreterBackend {
    cpu_backend_methods!(NAME);

    fn execution_model(&self) -> ExecutionModel {
        ExecutionModel::Custom
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        CpuBackendBase::devices("IR interpreter")
    }
}

impl DeviceMemory for InterpreterBackend {
    crate::host_memory_methods!();
}

impl Compiler for InterpreterBackend {
    fn prepare(&self, device: usize, _def: &KernelDef, kernel: &Kernel) -> Result<Option<Module>> {
        crate::native::check_device(NAME, device)?;
        let prepared = interpreter::CompiledKernel::new(kernel).map_err(convert)?;
        Ok(Some(Module::new(device, Box::new(prepared))))
    }
}

impl Executor for InterpreterBackend {
    fn execute_direct(
        &self,
        device: usize,
        def: &KernelDef,
        kernel: &Kernel,
        prepared: Option<&Module>,
        config: &LaunchConfig<'_>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let (grid, block, shared_mem) = (config.grid, config.block, config.shared_mem_bytes);
        crate::native::check_device(NAME, device)?;
        // A bad SPOC_CHECK_* switch is the runtime's error, not a fault of the kernel.
        interpreter::checks()?;
        let native_args = crate::host::native_args(NAME, args)?;
        let prepared = prepared.and_then(|m| m.handle::<interpreter::CompiledKernel>());
        self.base.timed(NAME, def.name, grid, block, || {
            let (grid, block) = (grid.to_array(), block.to_array());
            match prepared {
                Some(k) => k.execute(grid, block, shared_mem, &native_args),
                None => interpreter::execute(kernel, grid, block, shared_mem, &native_args),
            }
            .map_err(convert)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_faults_become_kernel_faults() {
        let e = InterpError {
            kernel: "k".into(),
            block: [2, 0, 0],
            thread: [5, 1, 0],
            loc: Some(interpreter::SourceLoc {
                file: Some("src/k.rs".into()),
                line: 3,
                column: 9,
                function: None,
            }),
            kind: InterpErrorKind::InactiveLane {
                op: "shuffle_xor".into(),
                site: "`shuffle_xor()` at line 3, column 9".into(),
                lane: 5,
                src_lane: 21,
                absent: false,
            },
        };
        match convert(e) {
            Error::KernelFault {
                kernel,
                block,
                thread,
                message,
            } => {
                assert_eq!(
                    (kernel.as_str(), block, thread),
                    ("k", Some([2, 0, 0]), Some([5, 1, 0]))
                );
                assert_eq!(
                    message,
                    "src/k.rs:3:9: `shuffle_xor()`: lane 5 reads lane 21, which is inactive \
                     (not at this shuffle)"
                );
            }
            other => panic!("{other:?}"),
        }
        let e = InterpError {
            kernel: "k".into(),
            block: [0; 3],
            thread: [0; 3],
            loc: None,
            kind: InterpErrorKind::BarrierDivergence {
                detail: "…".into(),
                groups: vec![],
            },
        };
        assert!(
            matches!(convert(e), Error::KernelFault { message, .. } if message.starts_with("barrier divergence"))
        );
    }
}
