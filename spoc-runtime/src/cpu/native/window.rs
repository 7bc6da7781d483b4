//! The row plan's windows (see [`super::abi`], "The row plan"): a [`Window`] / [`WindowMut`]
//! is an access `base + stride * thread_idx_x` proven in bounds for a whole row, and
//! [`row_below`] a comparison proven for it.

use super::global::{oob, Span};
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
/// `t < count` when the window was made ([`GlobalRef::window`](super::abi::GlobalRef::window)).
#[derive(Debug)]
pub struct Window<T>(pub(super) Row<T>);

/// The part of a read-write buffer that the threads of one row access at one access of the
/// kernel (see [`Window`], [`GlobalMut::window`](super::abi::GlobalMut::window)).
#[derive(Debug)]
pub struct WindowMut<T>(pub(super) Row<T>);

/// What both windows are: a buffer and the row's access `base + stride * t`, `t < count`.
#[derive(Debug)]
pub(super) struct Row<T> {
    span: Span<T>,
    base: usize,
    stride: usize,
    count: u32,
}

impl<T> Clone for Row<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Row<T> {}
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

impl<T> Row<T> {
    /// The window of `span` for the threads of `row` (its caller checked [`row_fits`]).
    #[inline(always)]
    pub(super) fn new(span: Span<T>, row: &ThreadCtx, base: u32, stride: u32) -> Self {
        Row {
            span,
            base: base as usize,
            stride: stride as usize,
            count: row.block_dim[0],
        }
    }

    /// The element of thread `ctx.thread[0]`, or the trap of a thread outside the row.
    #[inline(always)]
    fn element(&self, ctx: &ThreadCtx) -> Result<*const T, Trap> {
        let t = ctx.thread[0];
        if t < self.count {
            // SAFETY: `window` checked `base + stride * t < len` for every `t < count`.
            Ok(unsafe { self.span.ptr.add(self.base + self.stride * t as usize) })
        } else {
            Err(outside_window(
                self.span.name,
                self.base,
                self.stride,
                t,
                self.span.len,
            ))
        }
    }
}

impl<T: Copy> Window<T> {
    /// Reads the element of thread `ctx.thread[0]`.
    ///
    /// # Errors
    /// [`Trap::OutOfBounds`] if `ctx.thread[0]` is not a thread of the window's row.
    #[inline(always)]
    pub fn load(&self, ctx: &ThreadCtx) -> Result<T, Trap> {
        // SAFETY: an element of the row, in bounds of a live buffer borrowed by the launch.
        self.0.element(ctx).map(|p| unsafe { p.read() })
    }
}

impl<T: Copy> WindowMut<T> {
    /// Reads the element of thread `ctx.thread[0]`.
    ///
    /// # Errors
    /// [`Trap::OutOfBounds`] if `ctx.thread[0]` is not a thread of the window's row.
    #[inline(always)]
    pub fn load(&self, ctx: &ThreadCtx) -> Result<T, Trap> {
        // SAFETY: as in `Window::load`.
        self.0.element(ctx).map(|p| unsafe { p.read() })
    }
    /// Writes the element of thread `ctx.thread[0]`.
    ///
    /// # Errors
    /// [`Trap::OutOfBounds`] if `ctx.thread[0]` is not a thread of the window's row.
    #[inline(always)]
    pub fn store(&self, ctx: &ThreadCtx, value: T) -> Result<(), Trap> {
        // SAFETY: an element of the row, in bounds; the buffer is mutably borrowed by the launch.
        self.0
            .element(ctx)
            .map(|p| unsafe { (p as *mut T).write(value) })
    }
}
