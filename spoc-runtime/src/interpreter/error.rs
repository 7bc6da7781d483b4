//! Errors of the Interpreter.

use std::fmt;

/// What went wrong in an interpreted launch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterpErrorKind {
    /// `array[index]` with `index >= len`. `array` is the kernel parameter's name for a global
    /// buffer, the variable's name for a local array.
    #[error("index {index} out of bounds for `{array}` of length {len}")]
    OutOfBounds {
        /// The buffer parameter's or local array's name.
        array: String,
        /// The index used, in elements.
        index: u64,
        /// The array's length, in elements.
        len: u64,
    },
    /// Integer `/` or `%` by zero.
    #[error("integer division or remainder by zero")]
    DivisionByZero,
    /// A counted `for` loop with `step_by(0)`.
    #[error("`step_by(0)` in a for loop")]
    ZeroStep,
    /// A launch argument that does not fit the kernel's parameter (wrong count, wrong scalar type,
    /// wrong element size, misaligned or too long buffer).
    #[error("bad argument `{param}`: expected {expected}")]
    BadArgument {
        /// The parameter's name.
        param: String,
        /// What the parameter takes, as a phrase (`"a buffer of at most 2^32 - 1 elements"`, …).
        expected: String,
    },
    /// The threads of a block do not all reach the same block barrier: some wait at another
    /// one, or have finished while others wait. The error's thread is the first waiting one.
    #[error("barrier divergence: {detail}")]
    BarrierDivergence {
        /// Which threads wait where and which have finished, as a phrase (a few threads of each
        /// group are listed).
        detail: String,
    },
    /// A warp shuffle read a lane that does not take part in it: a lane of the warp that is not
    /// at this shuffle (it diverged, waits elsewhere or finished), or a lane that does not exist
    /// (beyond the last thread of the block, or outside `0..32` for `shuffle`/`shuffle_xor`).
    #[error(
        "{site}: lane {lane} reads lane {src_lane}, which is {}",
        if *absent { "absent" } else { "inactive (not at this shuffle)" }
    )]
    InactiveLane {
        /// The operation (`"shuffle_xor"`, …).
        op: String,
        /// Where it is (`` `shuffle_xor()` at line 7, column 13 ``).
        site: String,
        /// The reading lane.
        lane: u32,
        /// The lane it would read.
        src_lane: u32,
        /// True if that lane does not exist, false if it is inactive.
        absent: bool,
    },
    /// The host could not provide what a launch needs (coroutine stacks of the threads of a
    /// kernel with barriers, deep helper calls on them).
    #[error("out of resources: {what}")]
    OutOfResources {
        /// What ran out, as a phrase.
        what: String,
    },
    /// A node the Interpreter does not run yet (vectors, atomics on local arrays, …).
    #[error("not supported by the interpreter yet: {what}")]
    Unsupported {
        /// The construct and why, as a phrase (`"vector values"`, …).
        what: String,
    },
    /// The kernel's IR is ill-formed or ill-typed in a way the validator should have rejected
    /// (an operator applied to the wrong types, an unknown variable, helper, field or case).
    #[error("ill-formed kernel IR: {message}")]
    InvalidKernel {
        /// What is wrong, naming the node.
        message: String,
    },
}

/// An error of an interpreted launch: the kernel, the coordinates of the faulting thread and what
/// went wrong.
///
/// Errors found before any thread runs (a bad argument; an unsupported or ill-formed node found
/// while preparing the kernel, which is then not run at all) carry block and thread `[0, 0, 0]`;
/// the `Display` of a [`InterpErrorKind::BadArgument`] omits the coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterpError {
    /// The kernel's name.
    pub kernel: String,
    /// `blockIdx` of the faulting thread.
    pub block: [u32; 3],
    /// `threadIdx` of the faulting thread.
    pub thread: [u32; 3],
    /// What went wrong.
    pub kind: InterpErrorKind,
}

impl InterpError {
    /// An error found before any thread ran.
    pub(crate) fn launch(kernel: &str, kind: InterpErrorKind) -> InterpError {
        InterpError {
            kernel: kernel.to_string(),
            block: [0; 3],
            thread: [0; 3],
            kind,
        }
    }

    /// An error raised by thread `thread` of block `block`.
    pub(crate) fn thread(
        kernel: &str,
        block: [u32; 3],
        thread: [u32; 3],
        kind: InterpErrorKind,
    ) -> InterpError {
        InterpError {
            kernel: kernel.to_string(),
            block,
            thread,
            kind,
        }
    }
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if matches!(self.kind, InterpErrorKind::BadArgument { .. }) {
            write!(f, "kernel `{}`: {}", self.kernel, self.kind)
        } else {
            let [bx, by, bz] = self.block;
            let [tx, ty, tz] = self.thread;
            write!(
                f,
                "kernel `{}`, block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz}): {}",
                self.kernel, self.kind
            )
        }
    }
}

impl std::error::Error for InterpError {}

/// The internal error type of evaluation: boxed to keep `Result<Value, Fault>` small.
pub(crate) type Fault = Box<InterpErrorKind>;

/// An [`InterpErrorKind::InvalidKernel`] fault.
pub(crate) fn invalid(message: impl Into<String>) -> Fault {
    Box::new(InterpErrorKind::InvalidKernel {
        message: message.into(),
    })
}

/// An [`InterpErrorKind::Unsupported`] fault.
pub(crate) fn unsupported(what: impl Into<String>) -> Fault {
    Box::new(InterpErrorKind::Unsupported { what: what.into() })
}
