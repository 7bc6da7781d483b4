//! The backends the registry starts with: the GPU backends (CUDA, HIP, OpenCL, Vulkan, each behind
//! its feature) and the source-only ones (Metal, WebGPU).

pub(crate) mod checked_mode;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod driver_core;
#[cfg(feature = "hip")]
pub mod hip;
#[cfg(feature = "opencl")]
pub mod opencl;
pub mod source_only;
#[cfg(feature = "vulkan")]
pub mod vulkan;

use crate::{interpreter_backend, native, Backend};
use std::sync::Arc;

/// The built-in priorities (higher is preferred).
pub mod priority {
    /// CUDA through PTX.
    pub const CUDA_PTX: i32 = 400;
    /// CUDA through CUDA C and NVRTC.
    pub const CUDA_C: i32 = 390;
    /// HIP.
    pub const HIP: i32 = 380;
    /// Vulkan (on a GPU; see [`CPU_DEMOTION`]).
    pub const VULKAN: i32 = 360;
    /// OpenCL (on a GPU; see [`CPU_DEMOTION`]).
    pub const OPENCL: i32 = 340;
    /// The Native backend.
    pub const NATIVE: i32 = 200;
    /// The IR Interpreter: last resort, the reference.
    pub const INTERPRETER: i32 = 0;
    /// Subtracted from the priority of a CPU device of a backend ranked above [`NATIVE`].
    pub const CPU_DEMOTION: i32 = 300;
}

/// The backends registered when the registry is first used, with their priorities.
pub(crate) fn builtin_backends() -> Vec<(Arc<dyn Backend>, i32)> {
    #[allow(unused_mut)]
    let mut backends = vec![
        (
            Arc::new(native::NativeBackend::new()) as Arc<dyn Backend>,
            priority::NATIVE,
        ),
        (
            Arc::new(interpreter_backend::InterpreterBackend::new()) as Arc<dyn Backend>,
            priority::INTERPRETER,
        ),
    ];
    #[cfg(feature = "opencl")]
    backends.push((
        Arc::new(opencl::OpenClBackend::new()) as Arc<dyn Backend>,
        priority::OPENCL,
    ));
    #[cfg(feature = "cuda")]
    backends.extend([
        (
            Arc::new(cuda::CudaBackend::new(cuda::CudaVariant::Ptx)) as Arc<dyn Backend>,
            priority::CUDA_PTX,
        ),
        (
            Arc::new(cuda::CudaBackend::new(cuda::CudaVariant::C)) as Arc<dyn Backend>,
            priority::CUDA_C,
        ),
    ]);
    #[cfg(feature = "hip")]
    backends.push((
        Arc::new(hip::HipBackend::new()) as Arc<dyn Backend>,
        priority::HIP,
    ));
    #[cfg(feature = "vulkan")]
    backends.push((
        Arc::new(vulkan::VulkanBackend::new()) as Arc<dyn Backend>,
        priority::VULKAN,
    ));
    backends.extend([
        (
            Arc::new(source_only::SourceOnlyBackend::new(
                source_only::SourceOnlyKind::Metal,
            )) as Arc<dyn Backend>,
            source_only::SOURCE_ONLY_PRIORITY,
        ),
        (
            Arc::new(source_only::SourceOnlyBackend::new(
                source_only::SourceOnlyKind::WebGpu,
            )) as Arc<dyn Backend>,
            source_only::SOURCE_ONLY_PRIORITY,
        ),
    ]);
    backends
}
