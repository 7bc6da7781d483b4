//! Errors of the IR layer.

/// An IR-level error: a kernel that fails validation, bytes that do not decode, or helpers that
/// do not link.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrError {
    /// The kernel is ill-formed; `function` names the helper when the fault is inside one.
    #[error("invalid IR in kernel `{kernel}`{}: {message}", function.as_ref().map(|f| format!(", helper `{f}`")).unwrap_or_default())]
    Invalid {
        /// The kernel's name.
        kernel: String,
        /// The helper function the fault is in, or `None` for the kernel's own body.
        function: Option<String>,
        /// What is wrong, as a sentence naming the node (variable, operator, statement).
        message: String,
    },
    /// Serialized IR could not be read.
    #[error("cannot decode embedded IR: {0}")]
    Decode(String),
    /// Helper functions could not be linked into a kernel.
    #[error("cannot link helper functions into kernel `{kernel}`: {message}")]
    Link {
        /// The kernel's name.
        kernel: String,
        /// Why linking failed: two different helpers, records or variants share a name.
        message: String,
    },
}
