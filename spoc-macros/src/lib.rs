//! # spoc-macros
//!
//! `#[kernel]` and `#[device]`: Rust functions checked and lowered to spoc's IR at compile time
//! (DESIGN.md §2–§3). Use them through the `spoc` crate (`spoc::prelude::*`); the generated code
//! names only `::spoc::…` paths. The kernel language itself (what a body may contain and what
//! it means on every backend) is described in `docs/LANGUAGE.md` in the repository; the
//! attributes' own documentation ([`macro@kernel`], [`macro@device`]) is the reference for
//! what they generate.
//!
//! - `#[kernel] fn name(params) { body }` becomes a unit struct `name` (the kernel handle) with
//!   `name.launch(&dev, grid, block, (args…))`, `name.ir()`, `name.source(target)`,
//!   `name.name()` and `name::DEF`.
//! - `#[device] fn helper(params) -> T { body }` stays callable on the host, and gains a hidden
//!   companion: an empty enum of the same name (types and functions live in different
//!   namespaces) holding its IR, its native code and its signature, so that kernels and other
//!   `#[device]` functions can call `helper(..)`.
//!
//! The body language is a subset of Rust. Everything outside it is a compile error pointing at
//! the construct, with a sentence saying what to write instead. The macros never panic on user
//! input.
//!
//! # Calling helpers
//!
//! - Only `#[device]` functions can be called from kernel and `#[device]` bodies (besides
//!   spoc's intrinsics such as `global_id_x()`, and the math methods of `f32`/`f64`). Calling
//!   any other function is the compile error "`f` is not a #[device] function".
//! - Call a helper by path (`geometry::norm2(..)`), or import it by name (`use m::helper;`),
//!   under another name (`use m::helper as h;`) or by a glob (`use m::*;`): importing the fn
//!   imports its companion with it.
//! - A helper's signature is not visible where it is called (it is another item). So an
//!   unsuffixed literal or an untyped variable passed to it takes its type from the call's other
//!   arguments or its result (`smoothstep(0.0, 1.0, x)` with `x: f32` passes `f32`s), a call's
//!   result must be typed by its use (`let r: f32 = helper(..);`), and every call is checked
//!   against the helper's real signature at compile time. A wrong argument type, arity or
//!   result type is reported at the argument (or the call) in spoc's words; rustc shows it as
//!   `error[E0080]: evaluation panicked: mismatched types: argument 3 of `put` is `i32`, found
//!   `usize`; …`, because the check is a compile-time evaluation.
//! - Two different helpers may have the same name (`a::g` and `b::g`): the IR links helpers by
//!   identity, and the one linked second is renamed `g_2` in the generated sources. One
//!   function cannot call two different helpers of one name directly: import one under another
//!   name.
//! - Helpers cannot be recursive (GPUs have no call stack to speak of).
//!
//! # Records
//!
//! `#[derive(Record)]` structs are values of the kernel language: buffer elements (`&[P]`),
//! locals and literals (`P { x: 1.0, y: 2.0 }`, any field order), `#[device]` arguments and
//! results, with field reads and updates (`p.x`, `b.pos.x`, `q.x += 1.0`, `out[i].m = 2.0`).
//! The struct is another item, so a field's type is inferred from its use (`lower_record.rs`)
//! and checked at compile time against the derive's field table (`record_checks.rs`:
//! "mismatched types: field `x` of `Particle` is `f32`, but it is used as `f64`"). A type only
//! the declaration fixes (`q.x += 1.0`) stays a placeholder in the IR, resolved when the kernel
//! is loaded with the records' definitions (`spoc_ir::resolve`), and is named
//! `<P as FieldOf<hash>>::T` in native code. Kernels cannot take a record by value yet.
//!
//! # Generic kernels and helpers
//!
//! `fn k<T: Float>` (or `Int`, `Number`) is lowered once per type of the bound, `T` replaced in
//! the fn's tokens (`generic.rs`): a kernel's instances are kernels `k_f32`, … whose handle
//! launches the one the argument tuple selects; a helper's instances are companions the caller
//! picks by the argument and result types it inferred (`spoc::__private::InstanceAt`), and its
//! host copy dispatches to per-type copies of the body. One type parameter, one bound.
//!
//! # Not visible to kernel bodies
//!
//! Constants and statics declared outside the kernel (`const SCALE: f32 = 2.0;`) are not
//! visible to it: the macro sees only the function's own tokens. Using one is a compile error
//! saying so; pass the value as a kernel parameter, or write the literal. The bounds of the
//! scalar types (`u32::MAX`, `f32::EPSILON`) and the float constants of `std::f32::consts` /
//! `std::f64::consts` are supported.
//!
//! # What rustc does not check in kernel bodies
//!
//! A `#[kernel]` body is not compiled by rustc as written: the macro replaces it with generated
//! code. rustc's lints therefore do not run on it (unused variables, needless `mut`, unreachable
//! code), and neither does its constant evaluation: `4_000_000_000u32 + 500_000_000` is not
//! the "this arithmetic operation will overflow" error it is in Rust. Integer `+`, `-`, `*`,
//! unary `-` and shifts wrap on every backend (DESIGN.md §2), in debug builds too; integer
//! division by zero is an error on the CPU backends. The host copy of a `#[device]` function
//! is ordinary Rust: rustc lints it, and its arithmetic panics on overflow in debug builds when
//! called on the host.
//!
//! The work is done by `spoc-frontend` (a plain library, so that tests and fuzzers can run it
//! in-process): this crate is the proc-macro shell around it.

use proc_macro::TokenStream;

/// Turns a function into a GPU kernel.
///
/// ```ignore
/// use spoc::prelude::*;
///
/// /// `y = a * x + y`.
/// #[kernel]
/// fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
///     let i = global_id_x();
///     if i < y.len() {
///         y[i] = a * x[i] + y[i];
///     }
/// }
///
/// fn main() -> spoc::Result<()> {
///     let dev = spoc::init_device(None)?; // the best device present; the CPU without a GPU
///     let x = dev.upload(&[1.0f32, 2.0, 3.0])?;
///     let mut y = dev.upload(&[10.0f32; 3])?;
///     // 1 block of 32 threads; threads 3..32 fail the `i < y.len()` test and do nothing.
///     saxpy.launch(&dev, dims1d(1), dims1d(32), (2.0, &x, &mut y))?;
///     assert_eq!(y.to_vec()?, [12.0, 14.0, 16.0]);
///     Ok(())
/// }
/// ```
///
/// (This example is also `kernel_attribute_doc_example` in `tests/macro_smoke.rs`.)
///
/// # What it generates
///
/// The function is replaced by a unit struct of the same name, the kernel handle (`Copy`), with:
/// - `launch(&self, dev: &Device, grid: Dims, block: Dims, args) -> spoc::Result<()>`: runs
///   `grid` blocks of `block` threads each (`dims1d(n)`, `dims2d(x, y)`, `dims3d(x, y, z)`)
///   on `dev`, compiling the kernel for the device on first use (cached);
/// - `launch_with_shared(&self, dev, grid, block, shared_bytes: usize, args)`: the same with
///   `shared_bytes` bytes of dynamic shared memory per block (the kernel's
///   `dynamic_shared::<T>()` array has `shared_bytes / size_of::<T>()` elements); `launch` is
///   this with 0;
/// - `ir()`: the kernel's IR, linked with its helpers and validated; `source(target)`: the
///   source a code generator makes for it (PTX, CUDA C, OpenCL C, SPIR-V, …); `name()`;
///   `def()` and `DEF`, the definition the runtime takes.
///
/// The struct's documentation is the fn's, followed by the launch tuple spelled out.
///
/// # Parameters and the launch tuple
///
/// `args` is a tuple with one element per parameter, in order; a wrong arity or type is a
/// compile error at the `launch` call. A kernel with one parameter takes a 1-tuple `(x,)`, one
/// without parameters takes `()`.
///
/// | parameter | launch tuple element |
/// | --- | --- |
/// | `v: bool`, `i32`, `i64`, `u32`, `u64`, `f32`, `f64` | the value, of that type |
/// | `n: usize` | a `usize` value; in kernels `usize` is 32 bits (indices and lengths are `u32` on devices), and a value above `u32::MAX` is a launch error |
/// | `x: &[T]` (read-only buffer) | `&Buffer<T>` |
/// | `y: &mut [T]` (read-write buffer) | `&mut Buffer<T>` |
///
/// `T` is a scalar type other than `usize`, or a record (`#[derive(Record)]`; see the crate
/// documentation, "Records"). A record by value (`p: Particle`) is refused: pass a one-element
/// buffer. Parameters are plain names (`mut x: f32` and
/// patterns are refused: copy into a local, `let mut x = x;`).
///
/// # The body
///
/// A subset of Rust with the same meaning on every backend, described in `docs/LANGUAGE.md`
/// (repository): `let`/`let mut` of scalars, assignment and compound assignment to locals and to
/// `y[i]`, `if`/`else` (also as a value), `while`, `loop`, `for i in a..b` (with `.rev()` and
/// `.step_by(s)`), `break`, `continue`, `return`; integer, float and `bool` operators and `as`
/// casts; `x.len()` on buffers; the math methods of `f32`/`f64` (`x.sqrt()`, `a.max(b)`,
/// `x.mul_add(a, b)`, …) and `abs`/`min`/`max`/`wrapping_*` on integers; the thread-index
/// intrinsics (`global_id_x()`, `thread_idx_x()`, `block_idx_x()`, `block_dim_x()`,
/// `grid_dim_x()`, and `_y`/`_z`); calls of `#[device]` functions (see the crate
/// documentation for how those calls are checked); and the constructs below. Unsuffixed
/// integer literals default to `i32` and float literals to `f64`, as in Rust, unless their use
/// fixes the type.
///
/// | construct | meaning |
/// | --- | --- |
/// | `let tile = shared_array::<f32, 256>();` | a shared array (one per block), kernels only; elements writable without `mut`; the length a literal or literal arithmetic (`{ 16 * 17 }`) |
/// | `let tile = shared_array_2d::<f32, 16, 17>();` | indexed `tile[r][c]`: one array of `16 * 17`, element `r * 17 + c`; `tile.len()` is 16 |
/// | `let buf = dynamic_shared::<f32>();` | sized at launch by `launch_with_shared` (`buf.len()` elements); one per kernel |
/// | `sync_threads();` `sync_warp();` | block and warp barriers (statements; `sync_threads` in kernels only) |
/// | `thread_fence_block();` `thread_fence();` | memory fences at block and device scope |
/// | `atomic_add(&mut a[i], v)`, `atomic_sub`, `atomic_min`, `atomic_max`, `atomic_exchange`, `atomic_and`, `atomic_or`, `atomic_xor` | on an element of a `&mut [T]` buffer or shared array; the previous value. `T` an integer type, or a float for `atomic_add` |
/// | `atomic_compare_exchange(&mut a[i], expected, new)` | stores `new` if the element is `expected`; the previous value |
/// | `warp_size()`, `lane_id()` | `usize` |
/// | `shuffle(v, lane)`, `shuffle_up(v, d)`, `shuffle_down(v, d)`, `shuffle_xor(v, mask)` | `v` a number, the lane argument a `usize`; the value of the other lane |
/// | `vote_any(p)`, `vote_all(p)`, `ballot(p)` | `p: bool`; `bool`, `bool`, `u32` mask |
/// | `let mut a = [0.0f32; 16];` `a[i] = v;` `a.len()` | a per-thread local array (a literal length) |
/// | `match n { 0 => …, 1 \| 2 => …, 3..=9 => …, _ => … }` | on integers, statement or value; must cover every value; no guards, no bindings |
///
/// A `#[device]` function accepts all of them except the shared-array declarations and
/// `sync_threads()`; shared and local arrays cannot be passed to a `#[device]` function yet.
///
/// Kernels return nothing: results are written into `&mut [T]` parameters. A kernel must be a
/// free function (at module level or in a function body): in an `impl` block rustc rejects the
/// generated struct ("struct is not supported in `trait`s or `impl`s"). It cannot be `async`,
/// `unsafe`, `const` or `extern`, nor take lifetime parameters (buffers are `&[T]`). Other
/// attributes than docs, `cfg` and `allow`/`expect` are refused.
///
/// # Generic kernels
///
/// `#[kernel] fn axpy<T: Float>(a: T, x: &[T], y: &mut [T])` (bounds `Float`: `f32`, `f64`;
/// `Int`: `i32`, `u32`, `i64`, `u64`; `Number`: both) is one kernel per type, `axpy_f32` and
/// `axpy_f64` (`axpy::INSTANCES`). `axpy.launch(&dev, grid, block, (2.0, &x, &mut y))` launches
/// the instance whose launch tuple the arguments are (a tuple no instance takes is a compile
/// error); `axpy.ir::<f32>()`, `axpy.def::<f32>()`, `axpy.source::<f32>(target)` reach one
/// instance. Each instance is checked alone; an error in one names it ("… (in the instance
/// `T = i32`)").
///
/// # Errors
///
/// Everything outside the kernel language is a compile error at the construct, with a sentence
/// saying what to write instead; the macro reports every error it finds, not only the first,
/// and a name whose `let` failed adds no further errors. On errors the kernel handle still
/// exists (its `launch` accepts anything), so uses of the kernel elsewhere add no errors of
/// their own. Checks of `#[device]` calls read `error[E0080]: evaluation panicked: …`.
/// rustc's lints do not run on the body and integer arithmetic wraps (see the crate
/// documentation). At run time, `launch` returns `Err` (a missing device, a launch the device
/// cannot run, a compile error of the generated source, or, on the CPU backends, a thread's
/// out-of-bounds access or integer division by zero, with the thread's coordinates); it does
/// not panic.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    spoc_frontend::expand_kernel(attr.into(), item.into()).into()
}

/// Marks a helper function callable from kernels and from other `#[device]` functions.
///
/// ```ignore
/// use spoc::prelude::*;
///
/// mod shading {
///     use spoc::prelude::*;
///
///     #[device]
///     pub fn clamp01(v: f32) -> f32 {
///         v.max(0.0).min(1.0)
///     }
///
///     #[device]
///     pub fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
///         let t = clamp01((x - e0) / (e1 - e0));
///         t * t * (3.0 - 2.0 * t)
///     }
/// }
///
/// use shading::smoothstep; // importing the fn by name is enough
///
/// #[kernel]
/// fn apply(x: &[f32], out: &mut [f32]) {
///     let i = global_id_x();
///     if i < out.len() {
///         out[i] = smoothstep(-1.0, 2.0, x[i]); // the literals take `f32` from `x[i]`
///     }
/// }
/// ```
///
/// The function stays an ordinary host function (`smoothstep(0.0, 1.0, 0.5)` works on the
/// host), written in the kernel language. Parameters are scalars, records and buffers as for
/// [`macro@kernel`] (`&[T]`, `&mut [T]`, which a kernel passes its buffer parameters to); the
/// result is a scalar, a record or nothing. It may be generic (`fn lerp<T: Float>(a: T, b: T,
/// t: T) -> T`): one instance per type of the bound (`lerp_f32`, …), a call using the instance of
/// its argument and result types; on the host, `lerp` is a generic fn dispatching to per-type
/// copies of the body. Next to it the macro generates a hidden companion, an empty
/// enum of the same name with the helper's IR (`ir()`), native code (`native(..)`) and
/// signature; callers reach it through the same path they call the fn by.
///
/// The body may use everything a kernel body may (atomics on its `&mut [T]` parameters' elements,
/// warp operations, `sync_warp()`, fences, local arrays, `match`) except shared-array
/// declarations ("shared memory can only be declared in a kernel") and `sync_threads()`. On the
/// host, the atomics and fences do what they say; the warp operations panic.
///
/// Calls are checked against the signature at compile time, in spoc's words, at the call (see
/// the crate documentation, "Calling helpers"); a call of a function that is not `#[device]` is
/// the error "`f` is not a #[device] function". A `#[device]` fn with an error in its body stays
/// a host function, and the errors are reported where they are.
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    spoc_frontend::expand_device(attr.into(), item.into()).into()
}

/// Makes a `#[repr(C)]` struct of scalars and records a *record*: a type kernels can take in
/// buffers (`&[Particle]`), hold in locals, pass to and return from `#[device]` functions, and
/// read and update field by field (`p.x += 1.0`).
///
/// ```ignore
/// use spoc::prelude::*;
///
/// #[derive(Clone, Copy, Debug, Default, Record)]
/// #[repr(C)]
/// pub struct Particle {
///     pub x: f32,
///     pub y: f32,
///     pub mass: f32,
/// }
/// ```
///
/// Fields are scalars (`bool i32 u32 i64 u64 f32 f64`) or other records; the struct must be
/// `#[repr(C)]`, non-generic, with named fields, and `Copy` (derive `Clone, Copy`). The derive
/// implements `spoc::DeviceCopy`, `spoc::FieldType` and `spoc::Record`.
///
/// # Errors
/// A compile error on a struct that is not `#[repr(C)]`, is generic, has unnamed or no fields,
/// or has a field of another type.
#[proc_macro_derive(Record)]
pub fn derive_record(item: TokenStream) -> TokenStream {
    spoc_frontend::expand_record(item.into()).into()
}
