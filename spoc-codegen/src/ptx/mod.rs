//! PTX (placeholder; being written).
use crate::{CodegenError, Options, Source};
use spoc_ir::Kernel;

/// Generates PTX for `kernel`.
pub fn generate(kernel: &Kernel, _opts: &Options<'_>) -> Result<Source, CodegenError> {
    Err(CodegenError::FeatureNotSupported {
        backend: "CUDA/PTX".into(),
        feature: format!(
            "code generation (kernel `{}`): not written yet",
            kernel.name
        ),
    })
}
