//! The backends the registry starts with: the GPU backends (CUDA, HIP, OpenCL, Vulkan, each behind
//! its feature) and the source-only ones (Metal, WebGPU).

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "hip")]
pub mod hip;
#[cfg(feature = "opencl")]
pub mod opencl;
pub mod source_only;
#[cfg(feature = "vulkan")]
pub mod vulkan;

use crate::{interpreter_backend, native, registry, Backend};
use std::sync::Arc;

/// The backends registered when the registry is first used, with their priorities.
pub(crate) fn builtin_backends() -> Vec<(Arc<dyn Backend>, i32)> {
    #[allow(unused_mut)]
    let mut backends = vec![
        (
            Arc::new(native::NativeBackend::new()) as Arc<dyn Backend>,
            registry::priority::NATIVE,
        ),
        (
            Arc::new(interpreter_backend::InterpreterBackend::new()) as Arc<dyn Backend>,
            registry::priority::INTERPRETER,
        ),
    ];
    #[cfg(feature = "opencl")]
    backends.push((
        Arc::new(opencl::OpenClBackend::new()) as Arc<dyn Backend>,
        registry::priority::OPENCL,
    ));
    #[cfg(feature = "cuda")]
    backends.extend([
        (
            Arc::new(cuda::CudaBackend::new(cuda::CudaVariant::Ptx)) as Arc<dyn Backend>,
            registry::priority::CUDA_PTX,
        ),
        (
            Arc::new(cuda::CudaBackend::new(cuda::CudaVariant::C)) as Arc<dyn Backend>,
            registry::priority::CUDA_C,
        ),
    ]);
    #[cfg(feature = "hip")]
    backends.push((
        Arc::new(hip::HipBackend::new()) as Arc<dyn Backend>,
        registry::priority::HIP,
    ));
    #[cfg(feature = "vulkan")]
    backends.push((
        Arc::new(vulkan::VulkanBackend::new()) as Arc<dyn Backend>,
        registry::priority::VULKAN,
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
