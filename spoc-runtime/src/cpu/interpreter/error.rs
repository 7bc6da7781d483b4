//! Errors of the Interpreter: what went wrong ([`InterpErrorKind`]), where in the kernel's source
//! ([`SourceLoc`]) and in which thread ([`InterpError`]).

use std::fmt;

/// A place in a kernel's Rust source: the statement a report is about.
///
/// `file` is the path `file!()` gives for the file holding the `#[kernel]` (or the `#[device]`
/// helper), as recorded by the macro; it is `None` for kernels whose IR was built by hand (or by a
/// macro that did not record it). Lines and columns are 1-based; the column is the statement's
/// first character (in characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    /// The source file, when known (`"tests/sanitizer.rs"`).
    pub file: Option<String>,
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub column: u32,
    /// The `#[device]` helper the statement belongs to; `None` for the kernel's own body.
    pub function: Option<String>,
}

impl fmt::Display for SourceLoc {
    /// `tests/sanitizer.rs:42:9`, or `line 42, column 9` when the file is unknown, followed by
    /// ` (in helper `h`)` for a statement of a helper.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{file}:{}:{}", self.line, self.column)?,
            None => write!(f, "line {}, column {}", self.line, self.column)?,
        }
        if let Some(h) = &self.function {
            write!(f, " (in helper `{h}`)")?;
        }
        Ok(())
    }
}

/// Which memory an array lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemorySpace {
    /// A global buffer (a `&[T]` / `&mut [T]` parameter).
    Global,
    /// A shared array of the block (`shared_array`, `dynamic_shared`).
    Shared,
    /// A thread's local array (`[v; N]`) or a temporary array value.
    Local,
}

impl fmt::Display for MemorySpace {
    /// `buffer`, `shared array`, `local array`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemorySpace::Global => "buffer",
            MemorySpace::Shared => "shared array",
            MemorySpace::Local => "local array",
        })
    }
}

/// How a thread touched a memory element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// A plain read.
    Read,
    /// A plain write (an assignment, compound assignments included).
    Write,
    /// An atomic read-modify-write (`atomic_add`, …).
    Atomic,
}

impl AccessKind {
    /// The verb of a report: `reads`, `writes`, `atomically updates`.
    pub fn verb(self) -> &'static str {
        match self {
            AccessKind::Read => "reads",
            AccessKind::Write => "writes",
            AccessKind::Atomic => "atomically updates",
        }
    }
}

/// One side of a data race: which thread touched the element, how, and at which statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RaceAccess {
    /// `blockIdx` of the thread.
    pub block: [u32; 3],
    /// `threadIdx` of the thread.
    pub thread: [u32; 3],
    /// What it did.
    pub kind: AccessKind,
    /// The statement, when the IR carries its location.
    pub loc: Option<SourceLoc>,
}

impl fmt::Display for RaceAccess {
    /// `thread (3, 0, 0) of block (0, 0, 0) writes it at tests/sanitizer.rs:42:9`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [tx, ty, tz] = self.thread;
        let [bx, by, bz] = self.block;
        write!(
            f,
            "thread ({tx}, {ty}, {tz}) of block ({bx}, {by}, {bz}) {} it",
            self.kind.verb()
        )?;
        if let Some(l) = &self.loc {
            write!(f, " at {l}")?;
        }
        Ok(())
    }
}

/// A group of threads in a [`InterpErrorKind::BarrierDivergence`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DivergenceGroup {
    /// The barrier they wait at (`None`: they have finished; also `None` for a barrier whose
    /// statement has no location, see `site`).
    pub at: Option<SourceLoc>,
    /// The barrier as a phrase (`` `sync_threads()` at tests/k.rs:12:9 ``), or `"finished"`.
    pub site: String,
    /// Their `threadIdx`, in linear order.
    pub threads: Vec<[u32; 3]>,
}

/// What went wrong in an interpreted launch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterpErrorKind {
    /// `array[index]` with `index >= len`, on a buffer, a shared array or a local array. The
    /// message names buffers as `` `x` `` and the others as `` shared array `tile` `` and
    /// `` local array `a` ``.
    #[error(
        "index {index} out of bounds for {}`{array}` of length {len}",
        match space {
            MemorySpace::Global => "",
            MemorySpace::Shared => "shared array ",
            MemorySpace::Local => "local array ",
        }
    )]
    OutOfBounds {
        /// Where the array lives.
        space: MemorySpace,
        /// The buffer parameter's, shared array's or local array's name.
        array: String,
        /// The index used, in elements.
        index: u64,
        /// The array's length, in elements.
        len: u64,
    },
    /// Two different threads touched the same element with no barrier between them, at least
    /// one of them writing, not both atomically. `second` is the access that revealed the race:
    /// its thread is the error's thread. On shared memory a block barrier (`sync_threads()`)
    /// orders the accesses before it before those after it, and `sync_warp()` orders the
    /// accesses of lanes of one warp that both passed it; on global memory only a block barrier
    /// orders threads of one block, and nothing orders threads of different blocks.
    #[error(
        "data race on {space} `{array}` element {index} (length {len}): {first}, and {second}, \
         with no barrier between them"
    )]
    DataRace {
        /// [`MemorySpace::Shared`] or [`MemorySpace::Global`].
        space: MemorySpace,
        /// The array's name.
        array: String,
        /// The element, in elements.
        index: u64,
        /// The array's length, in elements.
        len: u64,
        /// The earlier access (in the interpreter's schedule).
        first: RaceAccess,
        /// The later one, by the reporting thread.
        second: RaceAccess,
    },
    /// A read (or atomic update) of a shared-array element that no thread of the block has
    /// written yet in this launch: on a GPU it reads whatever the memory held.
    #[error(
        "read of shared array `{array}` element {index} (length {len}), which no thread of this \
         block has written yet (a missing barrier after the writes, or a missing initialisation)"
    )]
    UninitializedShared {
        /// The shared array's name.
        array: String,
        /// The element.
        index: u64,
        /// The array's length.
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
    /// One of the Interpreter's environment switches (`SPOC_CHECK_SHARED`,
    /// `SPOC_CHECK_GLOBAL_RACES`) has a value that is neither on nor off; nothing ran.
    #[error("{message}")]
    InvalidEnvironment {
        /// The runtime's message, naming the variable and its value.
        message: String,
    },
    /// The threads of a block do not all reach the same block barrier: some wait at another
    /// one, or have finished while others wait. The error's thread is the first waiting one, its
    /// location that thread's barrier.
    #[error("barrier divergence: {detail}")]
    BarrierDivergence {
        /// Which threads wait where and which have finished, as a phrase (a few threads of each
        /// group are listed).
        detail: String,
        /// The same, structured: barriers first (by site number), finished threads last.
        groups: Vec<DivergenceGroup>,
    },
    /// A warp shuffle read a lane that does not take part in it: a lane of the warp that is not
    /// at this shuffle (it diverged, waits elsewhere or finished), or a lane that does not exist
    /// (beyond the last thread of the block, or outside `0..32` for `shuffle`/`shuffle_xor`).
    #[error(
        "`{op}()`: lane {lane} reads lane {src_lane}, which is {}",
        if *absent { "absent" } else { "inactive (not at this shuffle)" }
    )]
    InactiveLane {
        /// The operation (`"shuffle_xor"`, …).
        op: String,
        /// Where it is (`` `shuffle_xor()` at tests/k.rs:7:13 ``); the error's location is the
        /// same place, structured.
        site: String,
        /// The reading lane.
        lane: u32,
        /// The lane it would read.
        src_lane: u32,
        /// True if that lane does not exist, false if it is inactive.
        absent: bool,
    },
    /// A warp operation that needs every lane of its warp (a matrix multiply-accumulate) was
    /// reached by only some of them (the others diverged, wait elsewhere or finished), or the
    /// warp is partial (the block size is not a multiple of 32).
    #[error(
        "`{op}()` is reached by lanes {present:#010x} of the warp only; every lane must take part (it is not allowed in divergent code){}",
        if *warp_lanes < 32 { format!("; this warp has only {warp_lanes} lanes (make the block size a multiple of 32)") } else { String::new() }
    )]
    PartialWarp {
        /// The operation (`"mma_sync_m16n8k16_f16"`, …).
        op: String,
        /// Where it is (`` `mma_sync_m16n8k16_f16()` at tests/k.rs:7:13 ``).
        site: String,
        /// The lanes at it (bit `l` for lane `l`).
        present: u32,
        /// The lanes of the warp (32 but in a partial last warp).
        warp_lanes: u32,
    },
    /// The host could not provide what a launch needs (coroutine stacks of the threads of a
    /// kernel with barriers, deep helper calls on them).
    #[error("out of resources: {what}")]
    OutOfResources {
        /// What ran out, as a phrase.
        what: String,
    },
    /// A node the Interpreter does not run yet (atomics on local arrays, …).
    #[error("not supported by the interpreter yet: {what}")]
    Unsupported {
        /// The construct and why, as a phrase (`"atomics on a local array"`, …).
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

/// An error of an interpreted launch: the kernel, the coordinates of the faulting thread, the
/// statement it was running and what went wrong.
///
/// Errors found before any thread runs (a bad argument; an unsupported or ill-formed node found
/// while preparing the kernel, which is then not run at all) carry block and thread `[0, 0, 0]`
/// and no location; the `Display` of a [`InterpErrorKind::BadArgument`] omits the coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterpError {
    /// The kernel's name.
    pub kernel: String,
    /// `blockIdx` of the faulting thread.
    pub block: [u32; 3],
    /// `threadIdx` of the faulting thread.
    pub thread: [u32; 3],
    /// The statement the thread was running (for a barrier divergence, the first waiting
    /// thread's barrier; for an inactive lane, the shuffle), when the IR carries locations.
    pub loc: Option<SourceLoc>,
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
            loc: None,
            kind,
        }
    }

    /// An error raised by thread `thread` of block `block` at `loc`.
    pub(crate) fn thread(
        kernel: &str,
        block: [u32; 3],
        thread: [u32; 3],
        loc: Option<SourceLoc>,
        kind: InterpErrorKind,
    ) -> InterpError {
        InterpError {
            kernel: kernel.to_string(),
            block,
            thread,
            loc,
            kind,
        }
    }

    /// What went wrong, where: `tests/k.rs:12:9: index 9 out of bounds …` (the kind's message
    /// alone when the location is unknown). The runtime's `Error::KernelFault` message.
    pub fn message(&self) -> String {
        match &self.loc {
            Some(l) => format!("{l}: {}", self.kind),
            None => self.kind.to_string(),
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
                self.kernel,
                self.message()
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
