//! The row plan's windows (see [`super::abi`], "The row plan"): a [`Window`] / [`WindowMut`]
//! is an access `base + stride * thread_idx_x` proven in bounds for a whole row, and
//! [`row_below`] a comparison proven for it.

use super::global::oob;
use crate::kernel_abi::Trap;
use crate::simt::ThreadCtx;

/// True if `base + stride * t < bound` for every `t < count`, computed exactly, with
/// `bound` capped at 2^32 (so that no index of the row wraps around in `u32`).
#[inline(always)]
pub(super) fn row_fits(count: u32, base: u32, stride: u32, bound: u64) -> bool {
    // At most (2^32 - 1) + (2^32 - 1)^2 < 2^64: no overflow.
    let last = base as u64 + stride as u64 * (count as u64).saturating_sub(1);
    count == 0 || last < bound.min(1 << 32)
}

/// `Some(())` if `base + stride * t < bound` for every thread `t = thread_idx_x` of `row`
/// (exact arithmetic, no `u32` wraparound): the kernel's comparison `index < bound` is then
/// true for the whole row. Used by row plans.
#[inline(always)]
pub fn row_below(row: &ThreadCtx, base: u32, stride: u32, bound: u32) -> Option<()> {
    row_fits(row.block_dim[0], base, stride, bound as u64).then_some(())
}

/// The part of a read-only buffer that the threads of one row read at one access of the kernel:
/// thread `t = thread_idx_x` reads element `base + stride * t`, proven in bounds for every
/// `t < count` when the window was made ([`GlobalRef::window`]).
#[derive(Debug)]
pub struct Window<T> {
    pub(super) ptr: *const T,
    pub(super) base: usize,
    pub(super) stride: usize,
    pub(super) count: u32,
    pub(super) len: usize,
    pub(super) name: &'static str,
}

/// The part of a read-write buffer that the threads of one row access at one access of the
/// kernel (see [`Window`], [`GlobalMut::window`]).
#[derive(Debug)]
pub struct WindowMut<T> {
    pub(super) ptr: *mut T,
    pub(super) base: usize,
    pub(super) stride: usize,
    pub(super) count: u32,
    pub(super) len: usize,
    pub(super) name: &'static str,
}

impl<T> Clone for Window<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Window<T> {}
impl<T> Clone for WindowMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for WindowMut<T> {}

/// The trap of a window used by a thread outside its row (`t >= count`); the generated code
/// never does this, and the runtime's loop lets LLVM see that it cannot happen.
#[cold]
#[inline(never)]
fn outside_window(name: &'static str, base: usize, stride: usize, t: u32, len: usize) -> Trap {
    let index = base.wrapping_add(stride.wrapping_mul(t as usize)) as u32;
    oob(name, index, len)
}

impl<T: Copy> Window<T> {
    /// Reads the element of thread `ctx.thread[0]`.
    ///
    /// # Errors
    /// [`Trap::OutOfBounds`] if `ctx.thread[0]` is not a thread of the window's row.
    #[inline(always)]
    pub fn load(&self, ctx: &ThreadCtx) -> Result<T, Trap> {
        let t = ctx.thread[0];
        if t < self.count {
            // SAFETY: `window` checked `base + stride * t < len` for every `t < count`.
            Ok(unsafe { self.ptr.add(self.base + self.stride * t as usize).read() })
        } else {
            Err(outside_window(
                self.name,
                self.base,
                self.stride,
                t,
                self.len,
            ))
        }
    }
}

impl<T: Copy> WindowMut<T> {
    /// Reads the element of thread `ctx.thread[0]`.
    ///
    /// # Errors
    /// [`Trap::OutOfBounds`] if `ctx.thread[0]` is not a thread of the window's row.
    #[inline(always)]
    pub fn load(&self, ctx: &ThreadCtx) -> Result<T, Trap> {
        let t = ctx.thread[0];
        if t < self.count {
            // SAFETY: `window` checked `base + stride * t < len` for every `t < count`.
            Ok(unsafe { self.ptr.add(self.base + self.stride * t as usize).read() })
        } else {
            Err(outside_window(
                self.name,
                self.base,
                self.stride,
                t,
                self.len,
            ))
        }
    }
    /// Writes the element of thread `ctx.thread[0]`.
    ///
    /// # Errors
    /// [`Trap::OutOfBounds`] if `ctx.thread[0]` is not a thread of the window's row.
    #[inline(always)]
    pub fn store(&self, ctx: &ThreadCtx, value: T) -> Result<(), Trap> {
        let t = ctx.thread[0];
        if t < self.count {
            // SAFETY: `window` checked `base + stride * t < len` for every `t < count`; the
            // buffer is mutably borrowed by the launch.
            unsafe {
                self.ptr
                    .add(self.base + self.stride * t as usize)
                    .write(value)
            };
            Ok(())
        } else {
            Err(outside_window(
                self.name,
                self.base,
                self.stride,
                t,
                self.len,
            ))
        }
    }
}
