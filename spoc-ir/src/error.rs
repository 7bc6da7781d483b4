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
    /// A helper call passes one buffer (or shared array) to two parameters of the helper, and
    /// the helper may write through one of them (a `&mut [T]` parameter): Rust's borrow rules
    /// refuse it (`shift(out, out, n)` for `fn shift(src: &[u32], dst: &mut [u32], n: usize)`),
    /// and code generation may assume a helper sees a buffer it writes through one parameter
    /// only. Passing one buffer to two `&[T]` parameters is allowed.
    #[error("{0}")]
    AliasedArgument(Box<AliasedCall>),
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

/// The call of [`IrError::AliasedArgument`]: where it is, what it calls, and the buffer it passes
/// twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid IR in kernel `{kernel}`{}: {}the call of `{callee}` passes `{buffer}` as parameter `{written}`, which the helper writes through, and also as parameter `{other}`; a helper may not see one buffer through two parameters when one of them writes it",
    function.as_ref().map(|f| format!(", helper `{f}`")).unwrap_or_default(),
    line.map(|l| format!("line {l}: ")).unwrap_or_default()
)]
pub struct AliasedCall {
    /// The kernel's name.
    pub kernel: String,
    /// The helper function the call is in, or `None` for the kernel's own body.
    pub function: Option<String>,
    /// The helper called.
    pub callee: String,
    /// The buffer's name in the caller (a parameter, or a shared array).
    pub buffer: String,
    /// The callee's parameter that writes it (a `&mut [T]` or shared-array parameter).
    pub written: String,
    /// The callee's other parameter the buffer is passed as.
    pub other: String,
    /// The source line of the statement holding the call, when known.
    pub line: Option<u32>,
}
