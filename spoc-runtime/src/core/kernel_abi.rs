//! The native kernel ABI: what the code `#[kernel]` generates for the CPU exchanges with the
//! runtime. Its entry point ([`NativeFn`]) with the launch shape ([`NativeLaunch`]) and the
//! arguments ([`NativeArg`], [`ScalarArg`]), and the faults it returns ([`Trap`],
//! [`ThreadTrap`], with the SIMT scheduler's [`SyncError`]s). Every layer sees these (a
//! [`crate::KernelDef`] holds a [`NativeFn`], arguments become [`NativeArg`]s, records divide
//! with [`Trap`]s); running them is the CPU backends' work ([`crate::native`], [`crate::simt`]).
//! Reached through `spoc_runtime::native::abi` and `spoc_runtime::simt`.

pub use spoc_ir::ShuffleKind;
use std::fmt;

/// A fault raised by one thread of a native kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trap {
    /// `array[index]` with `index >= len`.
    OutOfBounds {
        array: &'static str,
        index: u64,
        len: u64,
    },
    /// Integer `/` or `%` by zero.
    DivisionByZero,
    /// A `for` loop with `step_by(0)`.
    ZeroStep,
    /// An argument that does not match the kernel's parameter (launch checks make this
    /// unreachable through the typed API).
    BadArgument {
        param: &'static str,
        expected: &'static str,
    },
    /// An atomic operation the element type does not have (the validator refuses it: only
    /// `atomic_add` and `atomic_exchange` exist on floats).
    BadAtomic {
        op: spoc_ir::AtomicOp,
        elem: &'static str,
    },
    /// An atomic on an element whose address is not aligned for the hardware atomic (host
    /// buffers and shared arrays are 16-byte aligned, so this is unreachable in practice).
    Misaligned { array: &'static str, index: u64 },
    /// A `match` expression on a value none of its patterns matches (the validator makes
    /// expression matches exhaustive).
    NoMatchingArm,
    /// A barrier or warp operation ran in a launch without the SIMT scheduler: the runtime did
    /// not see that the kernel needs it (an internal error).
    NotSimt { what: &'static str },
    /// The SIMT scheduler found a synchronisation error: a barrier not reached by every thread
    /// of the block, a shuffle from an inactive lane, … ([`SyncError`]).
    Sync(SyncError),
    /// The block is being torn down after another thread's fault; never reported.
    Aborted,
    /// A body's local arrays do not fit on the rest of its (coroutine) stack.
    StackTooSmall { needed: u64, available: u64 },
    /// `trap`, raised by the kernel statement at `file:line:column` (the file the `#[kernel]`
    /// or `#[device]` fn is in, as `file!()` gives it; line and column from 1), as the
    /// Interpreter reports its faults.
    Located {
        file: &'static str,
        line: u32,
        column: u32,
        trap: Box<Trap>,
    },
}

impl Trap {
    /// What the generated code maps a statement's traps through: each gets the statement's
    /// location, unless it has one already (a fault inside a helper keeps the helper's
    /// statement) or is a block's teardown ([`Trap::Aborted`], never reported).
    pub fn located(file: &'static str, line: u32, column: u32) -> impl FnOnce(Trap) -> Trap {
        move |trap| trap.at(file, line, column)
    }

    #[cold]
    #[inline(never)]
    fn at(self, file: &'static str, line: u32, column: u32) -> Trap {
        match self {
            Trap::Located { .. } | Trap::Aborted => self,
            trap => Trap::Located {
                file,
                line,
                column,
                trap: Box::new(trap),
            },
        }
    }
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trap::OutOfBounds { array, index, len } => {
                write!(
                    f,
                    "index {index} out of bounds for `{array}` of length {len}"
                )
            }
            Trap::DivisionByZero => f.write_str("integer division or remainder by zero"),
            Trap::ZeroStep => f.write_str("`step_by(0)` in a for loop"),
            Trap::BadArgument { param, expected } => {
                write!(f, "argument `{param}` is not a {expected}")
            }
            Trap::BadAtomic { op, elem } => {
                write!(f, "`{}` is not defined on `{elem}` elements", op.name())
            }
            Trap::Misaligned { array, index } => write!(
                f,
                "element {index} of `{array}` is not aligned for an atomic operation"
            ),
            Trap::NoMatchingArm => f.write_str("no arm of a `match` matches the value"),
            Trap::NotSimt { what } => write!(
                f,
                "`{what}` in a launch run without the SIMT scheduler (the runtime did not \
                 detect that the kernel needs it)"
            ),
            Trap::Sync(e) => write!(f, "{e}"),
            Trap::Aborted => f.write_str("the block was aborted after a fault in another thread"),
            Trap::Located {
                file,
                line,
                column,
                trap,
            } => write!(f, "{file}:{line}:{column}: {trap}"),
            Trap::StackTooSmall { needed, available } => write!(
                f,
                "the local arrays need {needed} bytes of stack, but only {available} are left \
                 on the thread's stack (use a buffer instead of a large local array)"
            ),
        }
    }
}

/// A [`Trap`] with the coordinates of the thread that raised it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadTrap {
    pub block: [u32; 3],
    pub thread: [u32; 3],
    pub trap: Trap,
}

/// A scalar argument value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarArg {
    Bool(bool),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}

/// One argument of a native launch.
#[derive(Clone, Copy, Debug)]
pub enum NativeArg {
    /// A scalar passed by value.
    Scalar(ScalarArg),
    /// A buffer in host memory: `len` elements of `elem_bytes` bytes at `ptr`.
    Buffer {
        ptr: *mut u8,
        len: usize,
        elem_bytes: usize,
    },
}

// SAFETY: a NativeArg is a view the runtime creates for the duration of one launch over memory
// the launch borrows; kernels access it only through the bounds-checked wrappers below.
unsafe impl Send for NativeArg {}
unsafe impl Sync for NativeArg {}

/// Scalar types a native kernel can receive.
pub trait FromScalarArg: Sized {
    const NAME: &'static str;
    fn from_scalar(v: ScalarArg) -> Option<Self>;
}

macro_rules! from_scalar {
    ($($t:ty => $v:ident),*) => {$(
        impl FromScalarArg for $t {
            const NAME: &'static str = stringify!($t);
            #[inline]
            fn from_scalar(v: ScalarArg) -> Option<Self> {
                match v { ScalarArg::$v(x) => Some(x), _ => None }
            }
        }
    )*};
}
from_scalar!(bool => Bool, i32 => I32, i64 => I64, u32 => U32, u64 => U64, f32 => F32, f64 => F64);

impl NativeArg {
    /// The scalar value of parameter `param`.
    ///
    /// # Errors
    /// [`Trap::BadArgument`] if the argument is not a `T`.
    #[inline]
    pub fn scalar<T: FromScalarArg>(&self, param: &'static str) -> Result<T, Trap> {
        match self {
            NativeArg::Scalar(v) => T::from_scalar(*v),
            NativeArg::Buffer { .. } => None,
        }
        .ok_or(Trap::BadArgument {
            param,
            expected: T::NAME,
        })
    }

    pub(crate) fn buffer<T>(&self, param: &'static str) -> Result<(*mut T, usize), Trap> {
        match *self {
            NativeArg::Buffer {
                ptr,
                len,
                elem_bytes,
            } if elem_bytes == std::mem::size_of::<T>()
                && (ptr as usize).is_multiple_of(std::mem::align_of::<T>()) =>
            {
                Ok((ptr as *mut T, len))
            }
            _ => Err(Trap::BadArgument {
                param,
                expected: "buffer of the right element type",
            }),
        }
    }
}

/// The generated entry point of a native kernel.
pub type NativeFn = fn(&NativeLaunch, &[NativeArg]) -> Result<(), ThreadTrap>;

/// Grid and block of one native launch; runs the per-thread body.
#[derive(Clone, Copy, Debug)]
pub struct NativeLaunch {
    /// Blocks per grid in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory per block: the length of a kernel's shared array sized
    /// at launch is `shared_bytes / size_of::<T>()` (see [`NativeLaunch::run_simt`]).
    pub shared_bytes: usize,
    /// True if the kernel, with the helpers it calls, needs the SIMT scheduler (barriers, warp
    /// operations, shared memory). The generated code of a kernel whose own body needs it runs
    /// through [`NativeLaunch::run_simt`] whatever this says; a kernel that calls helpers reads
    /// it, since only the linked kernel shows whether a helper uses warp operations.
    pub simt: bool,
}

/// Identifies one sync point of a kernel (one barrier statement, one warp-operation call). Two
/// threads are "at the same barrier" exactly when their sites are equal. The caller chooses the
/// numbering (e.g. the statement's index in a table it keeps to describe sites in messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site(pub u32);

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "site #{}", self.0)
    }
}

/// A vote over the active lanes of a warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VoteKind {
    /// `true` if the predicate holds on any active lane (`vote_any`).
    Any,
    /// `true` if the predicate holds on every active lane (`vote_all`).
    All,
}

/// A warp operation, as one lane asked for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpOpKind {
    /// A shuffle: `operand` is the source lane (`Index`), the delta (`Up`, `Down`) or the lane
    /// mask (`Xor`).
    Shuffle(ShuffleKind),
    /// A vote.
    Vote(VoteKind),
    /// A ballot.
    Ballot,
    /// The warp-level matrix multiply-accumulate `mma_sync_m16n8k16_f16` (`bf16: false`) or
    /// `mma_sync_m16n8k16_bf16` (`bf16: true`): every lane of the warp must take part.
    Mma {
        /// The inputs are `bf16` (else `f16`).
        bf16: bool,
    },
}

impl fmt::Display for WarpOpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WarpOpKind::Shuffle(ShuffleKind::Index) => "shuffle",
            WarpOpKind::Shuffle(ShuffleKind::Up) => "shuffle_up",
            WarpOpKind::Shuffle(ShuffleKind::Down) => "shuffle_down",
            WarpOpKind::Shuffle(ShuffleKind::Xor) => "shuffle_xor",
            WarpOpKind::Vote(VoteKind::Any) => "vote_any",
            WarpOpKind::Vote(VoteKind::All) => "vote_all",
            WarpOpKind::Ballot => "ballot",
            WarpOpKind::Mma { bf16: false } => "mma_sync_m16n8k16_f16",
            WarpOpKind::Mma { bf16: true } => "mma_sync_m16n8k16_bf16",
        })
    }
}

/// Where a thread was when a block barrier could not be released.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Whereabouts {
    /// Waiting at the block barrier at this site.
    Barrier(Site),
    /// The thread had finished (returned from the kernel).
    Finished,
}

/// Why a source lane of a shuffle could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MissingLane {
    /// The lane exists but is not at this shuffle (it diverged, waits elsewhere or finished).
    Inactive,
    /// The lane does not exist: beyond the last thread of the block (a partial last warp) or
    /// outside `0..32` (for `shuffle` and `shuffle_xor`).
    Absent,
}

/// A sync error found by the scheduler. Thread coordinates are `threadIdx` `[x, y, z]`; `block`
/// is `blockIdx`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// The live threads of a block are not all at one block barrier, or some wait at one while
    /// others have finished. `groups` holds each distinct whereabouts with its threads (in
    /// linear order), barriers first by site, finished threads last.
    #[error("barrier divergence in block ({}, {}, {}): {}", block[0], block[1], block[2], describe_groups(groups, |s| s.to_string()))]
    BarrierDivergence {
        /// `blockIdx` of the block.
        block: [u32; 3],
        /// Where the threads were, and which.
        groups: Vec<(Whereabouts, Vec<[u32; 3]>)>,
    },
    /// A shuffle read a lane that is not active at that shuffle, or does not exist.
    #[error(
        "{op} at {site} in block ({}, {}, {}), thread ({}, {}, {}) (lane {lane}): source lane {src_lane} is {}",
        block[0], block[1], block[2], thread[0], thread[1], thread[2],
        match missing { MissingLane::Inactive => "inactive", MissingLane::Absent => "absent" }
    )]
    InactiveLane {
        /// `blockIdx` of the block.
        block: [u32; 3],
        /// The thread that asked.
        thread: [u32; 3],
        /// Its lane.
        lane: u32,
        /// The shuffle's site.
        site: Site,
        /// Which shuffle.
        op: WarpOpKind,
        /// The lane it would have read.
        src_lane: u32,
        /// Why it could not.
        missing: MissingLane,
    },
    /// Lanes of one warp reached the same site with different operations (the caller numbered
    /// two different operations alike).
    #[error(
        "lanes of warp {warp} in block ({}, {}, {}) are at {site} with different operations ({first} and {second})",
        block[0], block[1], block[2]
    )]
    MixedWarpOps {
        /// `blockIdx` of the block.
        block: [u32; 3],
        /// The warp (linear thread index / 32).
        warp: u32,
        /// The site.
        site: Site,
        /// One operation seen there.
        first: WarpOpKind,
        /// Another one.
        second: WarpOpKind,
    },
    /// A warp operation that needs every lane of its warp (a matrix multiply-accumulate) was
    /// reached by only some of them: the others diverged, wait elsewhere, have finished, or do
    /// not exist (the block's last warp is partial).
    #[error(
        "{op} at {site} in block ({}, {}, {}), warp {warp}: reached by lanes {present:#010x} only; every lane of the warp must take part{}",
        block[0], block[1], block[2],
        if *warp_lanes < 32 { format!(" (the warp has only {warp_lanes} lanes: make the block size a multiple of 32)") } else { String::new() }
    )]
    PartialWarp {
        /// `blockIdx` of the block.
        block: [u32; 3],
        /// The warp (linear thread index / 32).
        warp: u32,
        /// The first thread of the warp at the operation.
        thread: [u32; 3],
        /// The operation's site.
        site: Site,
        /// Which operation.
        op: WarpOpKind,
        /// The lanes at it (bit `l` for lane `l`).
        present: u32,
        /// The lanes the warp has (32 but in a partial last warp).
        warp_lanes: u32,
    },
    /// A coroutine stack could not be allocated (the OS refused the memory mapping).
    #[error("cannot allocate a {bytes}-byte coroutine stack: {message}")]
    Stack {
        /// The requested size.
        bytes: usize,
        /// The OS error.
        message: String,
    },
}

/// At most this many threads are listed per group in messages.
const LIST_MAX: usize = 4;

/// The groups of a [`SyncError::BarrierDivergence`] as a phrase (`"100 threads [(0, 0, 0), …]
/// wait at the barrier at site #3; 28 threads […] wait at …"`), each site shown by `site_name`
/// (which gets `"the barrier at "` in front of it), at most four threads listed per group.
pub fn describe_groups(
    groups: &[(Whereabouts, Vec<[u32; 3]>)],
    site_name: impl Fn(Site) -> String,
) -> String {
    let mut parts = Vec::with_capacity(groups.len());
    for (w, threads) in groups {
        let mut list: Vec<String> = threads
            .iter()
            .take(LIST_MAX)
            .map(|[x, y, z]| format!("({x}, {y}, {z})"))
            .collect();
        if threads.len() > LIST_MAX {
            list.push(format!("… {} more", threads.len() - LIST_MAX));
        }
        let n = threads.len();
        let s = if n == 1 { "" } else { "s" };
        let verb = if n == 1 { "waits" } else { "wait" };
        parts.push(match w {
            Whereabouts::Barrier(site) => {
                format!(
                    "{n} thread{s} [{}] {verb} at the barrier at {}",
                    list.join(", "),
                    site_name(*site)
                )
            }
            Whereabouts::Finished => format!(
                "{n} thread{s} [{}] ha{} finished",
                list.join(", "),
                if n == 1 { "s" } else { "ve" }
            ),
        });
    }
    parts.join("; ")
}
