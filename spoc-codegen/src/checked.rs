//! The checked mode of the source-generating targets ([`crate::Options::checked`]): what the
//! generated code checks, and the ABI of the *fault record* through which a faulting thread
//! tells the host.
//!
//! # What is checked
//!
//! - Every element access of a buffer (`&[T]`, `&mut [T]`), a shared array (fixed or sized at
//!   launch) and a local array — reads, writes, compound assignments and atomics — tests
//!   `index < length` (lengths are `u32`: the buffer's length parameter, the dynamic shared
//!   array's length, the array's constant). A failed test records [`FAULT_OUT_OF_BOUNDS`] and
//!   *does not access memory*: a read gives the element type's zero, a write or an atomic is
//!   skipped (an atomic's result is 0).
//! - Every integer `/` and `%` tests its divisor; a zero divisor records
//!   [`FAULT_DIVISION_BY_ZERO`] and gives 0.
//! - A counted loop with `step_by(0)` records [`FAULT_ZERO_STEP`] (its body runs once, as in
//!   unchecked code).
//!
//! The faulting thread then carries on (its other accesses are checked too); the launch's error
//! is the first fault recorded. Nothing else changes: unchecked code and checked code compute
//! the same results wherever no check fails.
//!
//! # The fault record
//!
//! One buffer of [`RECORD_WORDS`] little-endian `u32` words, zeroed by the host before the
//! launch and bound after every other argument:
//!
//! | target | how it is passed |
//! | --- | --- |
//! | OpenCL C | one more kernel parameter, `__global uint* spoc_fault`, after the parameters and the dynamic shared array |
//! | CUDA C, HIP | one more kernel parameter, `unsigned int* spoc_fault`, after the parameters |
//! | PTX | one more `.param .u64` (a global address), after the parameters |
//! | SPIR-V | one more storage buffer at binding `1 + (number of buffer parameters)` of set 0 |
//!
//! Helper functions receive the same pointer as an extra last argument (SPIR-V: a global).
//!
//! | word | holds |
//! | --- | --- |
//! | [`W_CODE`] | 0 while no thread has faulted; else the fault kind ([`FAULT_OUT_OF_BOUNDS`], [`FAULT_DIVISION_BY_ZERO`], [`FAULT_ZERO_STEP`]) |
//! | [`W_ARRAY`] | the array: [`array_id`] (function index `<< 16 \|` variable index), [`NO_ARRAY`] for the other kinds |
//! | [`W_INDEX`] | the index used, in elements |
//! | [`W_LEN`] | the array's length, in elements |
//! | [`W_THREAD`]`..+3` | `threadIdx` x, y, z of the faulting thread |
//! | [`W_BLOCK`]`..+3` | `blockIdx` x, y, z |
//! | [`W_LINE`], [`W_COLUMN`] | the statement's line and column in the kernel's source (0: unknown) |
//! | [`W_FUNCTION`] | the function holding the statement: 0 for the kernel, `k + 1` for helper `k` |
//!
//! A faulting thread claims the record with an atomic compare-and-swap of [`W_CODE`] from 0 to
//! its fault kind (OpenCL `atomic_cmpxchg`, CUDA `atomicCAS`, PTX `atom.global.cas.b32`, SPIR-V
//! `OpAtomicCompareExchange`); only the thread that succeeds writes the other words, so the
//! first fault wins and the record is never a mix of two. The host reads it after the launch
//! has finished ([`decode`]).
//!
//! # Cost
//!
//! Per access, one compare of the index with a length the thread already has and a branch that
//! is never taken while the kernel is correct; per division, one compare. Memory traffic is
//! unchanged until a fault. The record is one more argument, zeroed before and read after each
//! launch (a 64-byte transfer each way).

use spoc_ir::{Kernel, VarId};

/// Words in the fault record.
pub const RECORD_WORDS: usize = 16;
/// Bytes in the fault record.
pub const RECORD_BYTES: usize = RECORD_WORDS * 4;

/// Word: the fault kind, 0 while no thread has faulted.
pub const W_CODE: usize = 0;
/// Word: the array ([`array_id`]).
pub const W_ARRAY: usize = 1;
/// Word: the index.
pub const W_INDEX: usize = 2;
/// Word: the array's length.
pub const W_LEN: usize = 3;
/// Words: `threadIdx` x, y, z.
pub const W_THREAD: usize = 4;
/// Words: `blockIdx` x, y, z.
pub const W_BLOCK: usize = 7;
/// Word: the statement's source line (0 when unknown).
pub const W_LINE: usize = 10;
/// Word: the statement's source column (0 when unknown).
pub const W_COLUMN: usize = 11;
/// Word: the function the statement belongs to (0: the kernel, `k + 1`: helper `k` of
/// [`Kernel::functions`]).
pub const W_FUNCTION: usize = 12;

/// Fault kind: an index at or past the array's length.
pub const FAULT_OUT_OF_BOUNDS: u32 = 1;
/// Fault kind: an integer `/` or `%` by zero.
pub const FAULT_DIVISION_BY_ZERO: u32 = 2;
/// Fault kind: a counted loop with `step_by(0)` (its body then runs once, as unchecked code
/// does).
pub const FAULT_ZERO_STEP: u32 = 3;

/// [`W_ARRAY`] of a fault that concerns no array.
pub const NO_ARRAY: u32 = u32::MAX;

/// The identifier of variable `var` of function `function` in the fault record: `function` 0
/// is the kernel itself, `k + 1` the kernel's `k`-th helper ([`Kernel::functions`]).
pub fn array_id(function: usize, var: VarId) -> u32 {
    ((function as u32) << 16) | (var.0 & 0xffff)
}

/// A fault read back from a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// `threadIdx` of the faulting thread.
    pub thread: [u32; 3],
    /// `blockIdx` of the faulting thread.
    pub block: [u32; 3],
    /// The statement's line and column, when the IR had them.
    pub loc: Option<(u32, u32)>,
    /// The helper the statement belongs to (`None`: the kernel's own body).
    pub function: Option<String>,
    /// What went wrong, worded as the Interpreter words it: ``index 4 out of bounds for `x` of
    /// length 4`` (`` shared array `t` ``, `` local array `a` `` for the other memories), or
    /// `integer division or remainder by zero`.
    pub message: String,
}

/// Reads a fault record (`words`, at least [`RECORD_WORDS`] of them) written by `kernel`'s
/// checked code: `None` when no thread faulted.
pub fn decode(kernel: &Kernel, words: &[u32]) -> Option<Fault> {
    let w = |i: usize| words.get(i).copied().unwrap_or(0);
    let code = w(W_CODE);
    if code == 0 {
        return None;
    }
    let id = w(W_ARRAY);
    let (name, space) = if id == NO_ARRAY {
        (None, None)
    } else {
        let (f, v) = ((id >> 16) as usize, (id & 0xffff) as usize);
        let vars = if f == 0 {
            Some(&kernel.vars)
        } else {
            kernel.functions.get(f - 1).map(|h| &h.vars)
        };
        let decl = vars.and_then(|vs| vs.get(v));
        (
            decl.map(|d| d.name.clone()),
            decl.and_then(|d| d.ty.as_array()).map(|(_, s, _)| s),
        )
    };
    let function = match w(W_FUNCTION) as usize {
        0 => None,
        k => kernel.functions.get(k - 1).map(|h| h.name.clone()),
    };
    let message = match code {
        FAULT_OUT_OF_BOUNDS => {
            let what = match space {
                Some(spoc_ir::MemSpace::Shared) => "shared array ",
                Some(spoc_ir::MemSpace::Local) => "local array ",
                _ => "",
            };
            format!(
                "index {} out of bounds for {what}`{}` of length {}",
                w(W_INDEX),
                name.as_deref().unwrap_or("?"),
                w(W_LEN)
            )
        }
        FAULT_DIVISION_BY_ZERO => "integer division or remainder by zero".to_string(),
        FAULT_ZERO_STEP => "`step_by(0)` in a for loop".to_string(),
        other => format!("unknown fault kind {other} in the fault record"),
    };
    let (line, column) = (w(W_LINE), w(W_COLUMN));
    Some(Fault {
        thread: [w(W_THREAD), w(W_THREAD + 1), w(W_THREAD + 2)],
        block: [w(W_BLOCK), w(W_BLOCK + 1), w(W_BLOCK + 2)],
        loc: (line != 0).then_some((line, column)),
        function,
        message,
    })
}
