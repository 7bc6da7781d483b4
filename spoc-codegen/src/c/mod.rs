//! CUDA C, HIP C, OpenCL C (placeholder; being written).
use crate::{CodegenError, Options, Source, Target};
use spoc_ir::Kernel;

/// Generates C-family source for `kernel`.
pub fn generate(
    target: Target,
    kernel: &Kernel,
    _opts: &Options<'_>,
) -> Result<Source, CodegenError> {
    Err(CodegenError::FeatureNotSupported {
        backend: target.backend_name().into(),
        feature: format!(
            "code generation (kernel `{}`): not written yet",
            kernel.name
        ),
    })
}
