//! The intrinsics of the kernel language: thread, block and grid indices and sizes, barriers and
//! memory fences, shared arrays, atomics, warp operations and the warp-level matrix
//! multiply-accumulate ([`mma_sync_m16n8k16_f16`]).
//!
//! Inside a `#[kernel]` or `#[device]` function, `#[kernel]` replaces each call with the
//! backend's own operation (CUDA's `threadIdx.x`, OpenCL's `get_local_id(0)`, …). These Rust
//! functions exist so that kernel source names resolve, show up in documentation and editors, and
//! so that a `#[device]` function stays ordinary Rust.
//!
//! Indices and sizes are `usize` in the kernel language and 32-bit on the device: a grid or block
//! dimension is at most `u32::MAX`.
//!
//! # Panics
//! The thread indices, barriers, shared-array declarations and warp operations panic when called
//! on the host (outside a kernel), always: that is a programming error, not a runtime condition.
//! The atomics and the fences have their one-thread meaning on the host (a `&mut` element is the
//! caller's alone), so a `#[device]` function using them can be called and tested on the host.

macro_rules! index_intrinsics {
    ($( $(#[$doc:meta])* $name:ident ),* $(,)?) => {$(
        $(#[$doc])*
        ///
        /// # Panics
        /// Always, when called on the host: it is only meaningful inside a `#[kernel]` or
        /// `#[device]` function.
        #[inline(never)]
        pub fn $name() -> usize {
            unreachable!(concat!(
                "`", stringify!($name),
                "()` can only be called inside a #[kernel] or #[device] function"
            ))
        }
    )*};
}

index_intrinsics! {
    /// Index of the thread within its block along x (CUDA `threadIdx.x`, OpenCL `get_local_id(0)`).
    thread_idx_x,
    /// Index of the thread within its block along y (CUDA `threadIdx.y`, OpenCL `get_local_id(1)`).
    thread_idx_y,
    /// Index of the thread within its block along z (CUDA `threadIdx.z`, OpenCL `get_local_id(2)`).
    thread_idx_z,
    /// Index of the block within the grid along x (CUDA `blockIdx.x`, OpenCL `get_group_id(0)`).
    block_idx_x,
    /// Index of the block within the grid along y (CUDA `blockIdx.y`, OpenCL `get_group_id(1)`).
    block_idx_y,
    /// Index of the block within the grid along z (CUDA `blockIdx.z`, OpenCL `get_group_id(2)`).
    block_idx_z,
    /// Threads per block along x (CUDA `blockDim.x`, OpenCL `get_local_size(0)`).
    block_dim_x,
    /// Threads per block along y (CUDA `blockDim.y`, OpenCL `get_local_size(1)`).
    block_dim_y,
    /// Threads per block along z (CUDA `blockDim.z`, OpenCL `get_local_size(2)`).
    block_dim_z,
    /// Blocks per grid along x (CUDA `gridDim.x`, OpenCL `get_num_groups(0)`).
    grid_dim_x,
    /// Blocks per grid along y (CUDA `gridDim.y`, OpenCL `get_num_groups(1)`).
    grid_dim_y,
    /// Blocks per grid along z (CUDA `gridDim.z`, OpenCL `get_num_groups(2)`).
    grid_dim_z,
    /// Global index of the thread along x: `block_idx_x() * block_dim_x() + thread_idx_x()`
    /// (CUDA `blockIdx.x * blockDim.x + threadIdx.x`, OpenCL `get_global_id(0)`).
    global_id_x,
    /// Global index of the thread along y (OpenCL `get_global_id(1)`).
    global_id_y,
    /// Global index of the thread along z (OpenCL `get_global_id(2)`).
    global_id_z,
    /// Threads in the whole grid along x: `grid_dim_x() * block_dim_x()`
    /// (CUDA `gridDim.x * blockDim.x`, OpenCL `get_global_size(0)`).
    global_size_x,
    /// Threads in the whole grid along y (OpenCL `get_global_size(1)`).
    global_size_y,
    /// Threads in the whole grid along z (OpenCL `get_global_size(2)`).
    global_size_z,
}

/// Block-wide barrier: every thread of the block waits here, and shared-memory writes made before
/// it are visible to the block after it (CUDA `__syncthreads()`, OpenCL
/// `barrier(CLK_LOCAL_MEM_FENCE)`). A statement: it has no value. Every thread of the block must
/// reach the same `sync_threads()` (not one in each branch of an `if` that threads take
/// differently): the Interpreter reports such a "barrier divergence", GPUs may hang.
///
/// Kernel bodies only: a `#[device]` function cannot call it yet.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` function.
#[inline(never)]
pub fn sync_threads() {
    unreachable!("`sync_threads()` can only be called inside a #[kernel] function")
}

/// Warp-wide barrier: the threads of the warp (32 consecutive threads of the block, see
/// [`lane_id`]) wait for each other (CUDA `__syncwarp()`, OpenCL `sub_group_barrier`). A
/// statement: it has no value.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn sync_warp() {
    unreachable!("`sync_warp()` can only be called inside a #[kernel] or #[device] function")
}

/// Memory fence at block scope: this thread's memory writes before it are seen by the other
/// threads of its block before its writes after it (CUDA `__threadfence_block()`, OpenCL
/// `mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)`). It does not wait for other threads
/// (that is [`sync_threads`]). On the host: a sequentially consistent fence.
#[inline]
pub fn thread_fence_block() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// Memory fence at device scope: this thread's memory writes before it are seen by every thread
/// of the launch before its writes after it (CUDA `__threadfence()`). On the host: a
/// sequentially consistent fence.
#[inline]
pub fn thread_fence() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

// ---- shared memory ----

/// Declares a shared-memory array of `N` elements of `T` (CUDA `__shared__ T a[N];`, OpenCL
/// `__local T a[N];`): one array per block, seen by every thread of the block. Kernel bodies
/// only, as the value of a `let`: `let tile = shared_array::<f32, 256>();`. The elements are
/// writable although the `let` is not `mut` (`tile[i] = x;`); their initial value is
/// unspecified on GPUs (zero on the CPU backends): write before reading, then
/// [`sync_threads`] before other threads read. `T` is a scalar type, `N` an integer literal
/// (or literal arithmetic, `{ 16 * 17 }`), at least 1.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` function.
#[inline(never)]
pub fn shared_array<T: Copy, const N: usize>() -> &'static mut [T; N] {
    unreachable!("`shared_array()` can only be used inside a #[kernel] function")
}

/// Declares a 2-D shared-memory array of `R` rows of `C` elements, indexed `tile[r][c]`
/// (row-major: one array of `R * C` elements, `tile[r][c]` at `r * C + c`; a column index
/// past `C` reads the next row, it is not checked alone). `tile.len()` is `R`. Otherwise as
/// [`shared_array`]: `let tile = shared_array_2d::<f32, 16, 17>();`.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` function.
#[inline(never)]
pub fn shared_array_2d<T: Copy, const R: usize, const C: usize>() -> &'static mut [[T; C]; R] {
    unreachable!("`shared_array_2d()` can only be used inside a #[kernel] function")
}

/// Declares the shared-memory array sized at launch (CUDA `extern __shared__ T a[];`): as many
/// elements of `T` as the `shared_bytes` of `kernel.launch_with_shared(..)` hold
/// (`shared_bytes / size_of::<T>()`; `buf.len()` says how many). One per kernel;
/// `let buf = dynamic_shared::<f32>();`. Otherwise as [`shared_array`]. With a plain `launch`
/// it has no elements.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` function.
#[inline(never)]
pub fn dynamic_shared<T: Copy>() -> &'static mut [T] {
    unreachable!("`dynamic_shared()` can only be used inside a #[kernel] function")
}

// ---- atomics ----

mod sealed {
    pub trait Sealed {}
}

/// Element types of the atomics: `i32`, `u32`, `i64`, `u64` for every operation, and `f32`,
/// `f64` for [`atomic_add`] only ([`AtomicInt`]).
pub trait AtomicValue: Copy + sealed::Sealed {
    /// `self + v` (wrapping on integers).
    #[doc(hidden)]
    fn __add(self, v: Self) -> Self;
}

/// The integer element types of the atomics (`i32`, `u32`, `i64`, `u64`).
pub trait AtomicInt: AtomicValue + Ord + Eq {
    /// `self - v`, wrapping.
    #[doc(hidden)]
    fn __sub(self, v: Self) -> Self;
    /// `self & v`.
    #[doc(hidden)]
    fn __and(self, v: Self) -> Self;
    /// `self | v`.
    #[doc(hidden)]
    fn __or(self, v: Self) -> Self;
    /// `self ^ v`.
    #[doc(hidden)]
    fn __xor(self, v: Self) -> Self;
}

macro_rules! atomic_types {
    (int: $($i:ty),*; float: $($f:ty),*) => {
        $(
            impl sealed::Sealed for $i {}
            impl AtomicValue for $i {
                fn __add(self, v: Self) -> Self { self.wrapping_add(v) }
            }
            impl AtomicInt for $i {
                fn __sub(self, v: Self) -> Self { self.wrapping_sub(v) }
                fn __and(self, v: Self) -> Self { self & v }
                fn __or(self, v: Self) -> Self { self | v }
                fn __xor(self, v: Self) -> Self { self ^ v }
            }
        )*
        $(
            impl sealed::Sealed for $f {}
            impl AtomicValue for $f {
                fn __add(self, v: Self) -> Self { self + v }
            }
        )*
    };
}

atomic_types!(int: i32, u32, i64, u64; float: f32, f64);

/// Replaces `*target` with `f(*target)` and returns the old value.
fn update<T: Copy>(target: &mut T, f: impl FnOnce(T) -> T) -> T {
    let old = *target;
    *target = f(old);
    old
}

/// Atomically adds `value` to the element (wrapping on integers) and returns its previous value
/// (CUDA `atomicAdd`, OpenCL `atomic_add`). The element is `&mut a[i]` with `a` a `&mut [T]`
/// buffer or a shared array; `T` is `i32`, `u32`, `i64`, `u64`, `f32` or `f64` (float atomics
/// need the device's support: OpenCL and Vulkan devices may lack them). The float sum of many
/// threads depends on their order.
pub fn atomic_add<T: AtomicValue>(target: &mut T, value: T) -> T {
    update(target, |x| x.__add(value))
}

/// Atomically subtracts `value` (wrapping) and returns the element's previous value. Integers
/// only; the element as in [`atomic_add`].
pub fn atomic_sub<T: AtomicInt>(target: &mut T, value: T) -> T {
    update(target, |x| x.__sub(value))
}

/// Atomically replaces the element with the smaller of it and `value` (signed or unsigned by
/// `T`) and returns its previous value. Integers only.
pub fn atomic_min<T: AtomicInt>(target: &mut T, value: T) -> T {
    update(target, |x| x.min(value))
}

/// Atomically replaces the element with the larger of it and `value` and returns its previous
/// value. Integers only.
pub fn atomic_max<T: AtomicInt>(target: &mut T, value: T) -> T {
    update(target, |x| x.max(value))
}

/// Atomically stores `value` and returns the element's previous value (CUDA `atomicExch`).
/// Integers only.
pub fn atomic_exchange<T: AtomicInt>(target: &mut T, value: T) -> T {
    update(target, |_| value)
}

/// Atomically stores `new` if the element equals `expected`, and returns the element's previous
/// value either way (CUDA `atomicCAS`): the store happened if the result equals `expected`.
/// Integers only.
pub fn atomic_compare_exchange<T: AtomicInt>(target: &mut T, expected: T, new: T) -> T {
    update(target, |x| if x == expected { new } else { x })
}

/// Atomically replaces the element with `element & value` and returns its previous value.
/// Integers only.
pub fn atomic_and<T: AtomicInt>(target: &mut T, value: T) -> T {
    update(target, |x| x.__and(value))
}

/// Atomically replaces the element with `element | value` and returns its previous value.
/// Integers only.
pub fn atomic_or<T: AtomicInt>(target: &mut T, value: T) -> T {
    update(target, |x| x.__or(value))
}

/// Atomically replaces the element with `element ^ value` and returns its previous value.
/// Integers only.
pub fn atomic_xor<T: AtomicInt>(target: &mut T, value: T) -> T {
    update(target, |x| x.__xor(value))
}

// ---- warps ----

/// Threads per warp (CUDA `warpSize`, OpenCL `get_sub_group_size()`): 32 on NVIDIA GPUs and on
/// the CPU backends, the subgroup size elsewhere.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn warp_size() -> usize {
    unreachable!("`warp_size()` can only be called inside a #[kernel] or #[device] function")
}

/// This thread's lane in its warp, `0..warp_size()`: the linear index of the thread in its
/// block (x fastest) modulo the warp size (CUDA `threadIdx.x % 32` for 1-D blocks, OpenCL
/// `get_sub_group_local_id()`).
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn lane_id() -> usize {
    unreachable!("`lane_id()` can only be called inside a #[kernel] or #[device] function")
}

/// The `value` of lane `src_lane` of this warp (CUDA `__shfl_sync(mask, value, src_lane)`).
/// Every lane of the warp that reaches the call takes part; reading a lane that does not is
/// an error on the Interpreter, undefined on GPUs. `T` is a number (`i32`, `u32`, `i64`, `u64`,
/// `usize`, `f32`, `f64`).
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn shuffle<T: Copy>(value: T, src_lane: usize) -> T {
    let _ = (value, src_lane);
    unreachable!("`shuffle()` can only be called inside a #[kernel] or #[device] function")
}

/// The `value` of lane `lane_id() - delta` (CUDA `__shfl_up_sync`); lanes below `delta` get
/// their own `value`.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn shuffle_up<T: Copy>(value: T, delta: usize) -> T {
    let _ = (value, delta);
    unreachable!("`shuffle_up()` can only be called inside a #[kernel] or #[device] function")
}

/// The `value` of lane `lane_id() + delta` (CUDA `__shfl_down_sync`); lanes whose source is past
/// the warp get their own `value`. The usual tree reduction:
/// `for o in [16, 8, 4, 2, 1] { s += shuffle_down(s, o); }`.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn shuffle_down<T: Copy>(value: T, delta: usize) -> T {
    let _ = (value, delta);
    unreachable!("`shuffle_down()` can only be called inside a #[kernel] or #[device] function")
}

/// The `value` of lane `lane_id() ^ lane_mask` (CUDA `__shfl_xor_sync`): the butterfly exchange
/// of reductions where every lane gets the result.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn shuffle_xor<T: Copy>(value: T, lane_mask: usize) -> T {
    let _ = (value, lane_mask);
    unreachable!("`shuffle_xor()` can only be called inside a #[kernel] or #[device] function")
}

/// `true` if `predicate` holds on any lane of the warp that reaches the call (CUDA
/// `__any_sync`).
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn vote_any(predicate: bool) -> bool {
    let _ = predicate;
    unreachable!("`vote_any()` can only be called inside a #[kernel] or #[device] function")
}

/// `true` if `predicate` holds on every lane of the warp that reaches the call (CUDA
/// `__all_sync`).
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn vote_all(predicate: bool) -> bool {
    let _ = predicate;
    unreachable!("`vote_all()` can only be called inside a #[kernel] or #[device] function")
}

/// A mask with bit `l` set for each lane `l` of the warp that reaches the call with `predicate`
/// true (CUDA `__ballot_sync`).
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn ballot(predicate: bool) -> u32 {
    let _ = predicate;
    unreachable!("`ballot()` can only be called inside a #[kernel] or #[device] function")
}

// ---- warp-level matrix multiply-accumulate (tensor cores) ----

/// The bits of two `f16` in one `u32`: `lo` in bits 0..16, `hi` in bits 16..32 — a register of
/// a matrix fragment ([`mma_sync_m16n8k16_f16`]), where the element of the lower index is in the
/// lower half (PTX's `.f16x2`). Pure, and the same on the host.
#[inline]
pub fn pack_f16x2(lo: crate::prelude::f16, hi: crate::prelude::f16) -> u32 {
    lo.to_bits() as u32 | (hi.to_bits() as u32) << 16
}

/// The bits of two `bf16` in one `u32`, as [`pack_f16x2`] (PTX's `.bf16x2`).
#[inline]
pub fn pack_bf16x2(lo: crate::prelude::bf16, hi: crate::prelude::bf16) -> u32 {
    lo.to_bits() as u32 | (hi.to_bits() as u32) << 16
}

/// The warp-level matrix multiply-accumulate `D = A × B + C` of one tile: `A` 16×16 and `B`
/// 16×8 of `f16`, `C` and `D` 16×8 of `f32`. Every lane of the warp passes its part of each
/// matrix (its *fragments*) and gets its part of `D`; the call must be reached by all 32 lanes
/// of the warp together (not in divergent code, and the block size a multiple of 32).
///
/// On CUDA it is one tensor-core instruction, PTX's
/// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (compute capability 8.0 and newer; an
/// older device refuses the kernel with `FeatureNotSupported`). Native and the Interpreter
/// compute it exactly as documented below; the Interpreter reports a call that only some lanes
/// of a warp reach. OpenCL, HIP and Vulkan refuse it (`FeatureNotSupported`) for now.
///
/// # Fragment layout
///
/// The PTX ISA's, section "Matrix Fragments for mma.m16n8k16 with floating point type" (under
/// "Warp-level matrix multiply-accumulate instructions"). With `g = lane_id() / 4` and
/// `t = lane_id() % 4`, each lane holds:
///
/// | fragment | registers | element `i` is |
/// | --- | --- | --- |
/// | `a: U32x4` | 4 × two `f16` ([`pack_f16x2`]): `a.x` = elements 0, 1; `a.y` = 2, 3; `a.z` = 4, 5; `a.w` = 6, 7 | `A[r][c]`, `r = g` for `i` in 0, 1, 4, 5 and `g + 8` for 2, 3, 6, 7; `c = 2t + i % 2`, plus 8 for `i ≥ 4` |
/// | `b: U32x2` | 2 × two `f16`: `b.x` = elements 0, 1; `b.y` = 2, 3 | `B[k][n]`, `k = 2t + i % 2`, plus 8 for `i ≥ 2`; `n = g` |
/// | `c: F32x4`, result | 4 `f32`: `x y z w` = elements 0 1 2 3 | `C[r][c]`, `r = g` for `i` in 0, 1 and `g + 8` for 2, 3; `c = 2t + i % 2` |
///
/// So lane `l` loads, from a row-major `A` (leading dimension `lda`) and a `B` stored
/// column by column (`B[k][n]` at `n * ldb + k`, PTX's `.col`):
///
/// ```text
/// a.x = pack(A[g][2t],       A[g][2t + 1])         b.x = pack(B[2t][g],     B[2t + 1][g])
/// a.y = pack(A[g + 8][2t],   A[g + 8][2t + 1])     b.y = pack(B[2t + 8][g], B[2t + 9][g])
/// a.z = pack(A[g][2t + 8],   A[g][2t + 9])         c   = (C[g][2t], C[g][2t + 1],
/// a.w = pack(A[g + 8][2t + 8], A[g + 8][2t + 9])          C[g + 8][2t], C[g + 8][2t + 1])
/// ```
///
/// [`crate::matrix`] has these loads (and the store of `D`) for global memory as `#[device]`
/// functions; `tests/mma.rs` a tiled GEMM with them and a tile read from shared memory.
///
/// # Arithmetic
///
/// `D[m][n] = C[m][n] + Σ_k A[m][k] · B[k][n]`. Native and the Interpreter compute it in `f32`
/// starting from `C[m][n]` and adding the products for `k = 0, 1, …, 15` in that order, each
/// sum rounded to nearest even; each product is exact (11 + 11 significant bits fit in `f32`'s
/// 24). Tiles chained through `c` along `k` thus give bit for bit the plain `f32` loop
/// `acc += a * b` over `k`. The PTX ISA does not specify the order or the intermediate rounding
/// of the tensor cores' sum, so a GPU may differ from it in the last bits.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn mma_sync_m16n8k16_f16(a: crate::U32x4, b: crate::U32x2, c: crate::F32x4) -> crate::F32x4 {
    let _ = (a, b, c);
    unreachable!(
        "`mma_sync_m16n8k16_f16()` can only be called inside a #[kernel] or #[device] function"
    )
}

/// [`mma_sync_m16n8k16_f16`] with `bf16` inputs (pack them with [`pack_bf16x2`]): PTX's
/// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`, the same layout and arithmetic. A
/// product of two `bf16` fits in `f32`'s significand but may leave its exponent range (`bf16`
/// has `f32`'s): it then overflows to infinity or is rounded as a subnormal, as `f32`
/// multiplication does.
///
/// # Panics
/// Always, when called on the host: it is only meaningful inside a `#[kernel]` or `#[device]`
/// function.
#[inline(never)]
pub fn mma_sync_m16n8k16_bf16(a: crate::U32x4, b: crate::U32x2, c: crate::F32x4) -> crate::F32x4 {
    let _ = (a, b, c);
    unreachable!(
        "`mma_sync_m16n8k16_bf16()` can only be called inside a #[kernel] or #[device] function"
    )
}

/// Float methods the kernel language has and Rust's `f32`/`f64` lack, so that `#[device]`
/// functions using them stay valid host Rust.
pub trait KernelFloat: Copy {
    /// `1 / sqrt(self)` (CUDA `rsqrtf`, OpenCL `rsqrt`). On the host and on the Native backend
    /// it is computed as `1.0 / self.sqrt()`; GPU backends may differ by a few ULP.
    fn rsqrt(self) -> Self;
}

impl KernelFloat for f32 {
    #[inline]
    fn rsqrt(self) -> f32 {
        1.0 / self.sqrt()
    }
}

impl KernelFloat for f64 {
    #[inline]
    fn rsqrt(self) -> f64 {
        1.0 / self.sqrt()
    }
}

/// What the native code generated by `#[device]` needs. Not a public API.
#[doc(hidden)]
pub mod __native {
    use crate::__private::{GlobalMut, GlobalRef, Trap};

    /// A buffer a helper can read: a `&[T]` parameter of a `#[device]` function accepts both a
    /// kernel's read-only and read-write buffers.
    pub trait ReadBuffer<T>: Copy {
        /// Reads element `index`.
        ///
        /// # Errors
        /// [`Trap::OutOfBounds`] past the end.
        fn load(&self, index: u32) -> Result<T, Trap>;
        /// Length in elements.
        fn len(&self) -> u32;
        /// True if the buffer has no elements.
        fn is_empty(&self) -> bool {
            self.len() == 0
        }
    }

    impl<T: Copy> ReadBuffer<T> for GlobalRef<T> {
        #[inline(always)]
        fn load(&self, index: u32) -> Result<T, Trap> {
            GlobalRef::load(self, index)
        }
        #[inline(always)]
        fn len(&self) -> u32 {
            GlobalRef::len(self)
        }
    }

    impl<T: Copy> ReadBuffer<T> for GlobalMut<T> {
        #[inline(always)]
        fn load(&self, index: u32) -> Result<T, Trap> {
            GlobalMut::load(self, index)
        }
        #[inline(always)]
        fn len(&self) -> u32 {
            GlobalMut::len(self)
        }
    }
}

/// Marks a `for` loop to be unrolled: `for k in unroll(0..N) { … }` (any range form of the
/// kernel language: `unroll((0..N).rev())`, `unroll((0..N).step_by(2))`).
///
/// The code generators of the GPU targets replace the loop by one copy of its body per value
/// of `k`, with `k` a constant in each (the CPU backends run the loop as written, which means
/// the same); so a local array indexed only by unrolled loop variables is indexed by constants,
/// and the GPU compilers keep it in registers. The range's bounds and step must
/// be compile-time constants (literals, const parameters (docs/LANGUAGE.md)
/// of the kernel, arithmetic on them), the body may not `break` or `continue` the unrolled
/// loop, and one loop unrolls to at most 256 iterations: otherwise a compile error at the
/// range. Nested marked loops unroll inner first.
///
/// On the host (a `#[device]` fn called from Rust) it returns `range` unchanged.
pub fn unroll<R: IntoIterator>(range: R) -> R {
    range
}
