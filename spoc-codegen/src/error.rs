//! Code-generation errors.

/// Why code could not be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodegenError {
    /// The kernel does not validate.
    #[error(transparent)]
    Invalid(#[from] spoc_ir::IrError),
    /// The target cannot express `node` without `capability` (e.g. `f64` arithmetic on a device
    /// without fp64).
    #[error("{target} cannot express {node} in kernel `{kernel}`: it needs {capability}")]
    Unsupported {
        kernel: String,
        target: &'static str,
        node: String,
        capability: String,
    },
    /// The backend does not offer a feature the request asked for.
    #[error("{backend} does not support {feature}")]
    FeatureNotSupported { backend: String, feature: String },
    /// An internal validator (naga's) rejected the generated module: a code-generator bug.
    #[error("generated {target} code for kernel `{kernel}` failed validation: {message}")]
    Backend {
        kernel: String,
        target: &'static str,
        message: String,
    },
}
