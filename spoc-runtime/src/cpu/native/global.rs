//! Global buffers inside a native kernel: [`GlobalRef`] (`&[T]`) and [`GlobalMut`] (`&mut [T]`),
//! unpacked from a [`NativeArg`] once per launch, every element access bounds-checked.

use super::window::{row_fits, Row, Window, WindowMut};
use crate::kernel_abi::{NativeArg, Trap};
use crate::simt::ThreadCtx;

/// A read-only global buffer (`&[T]` parameter) inside a native kernel.
#[derive(Debug)]
pub struct GlobalRef<T>(Span<T>);

/// A read-write global buffer (`&mut [T]` parameter) inside a native kernel. Threads write
/// through raw pointers, as GPU threads do: two threads writing one element without an atomic is
/// a race in the kernel, as on a GPU.
#[derive(Debug)]
pub struct GlobalMut<T>(pub(super) Span<T>);

/// What both buffer views are: `len` elements of `T` at `ptr`, named `name` in traps. Written
/// through only by [`GlobalMut`] (the memory is the launch's, mutable; a `*const` keeps `T`
/// covariant).
#[derive(Debug)]
pub(super) struct Span<T> {
    pub(super) ptr: *const T,
    pub(super) len: usize,
    pub(super) name: &'static str,
}

impl<T> Clone for Span<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Span<T> {}
impl<T> Clone for GlobalRef<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GlobalRef<T> {}
impl<T> Clone for GlobalMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GlobalMut<T> {}
// SAFETY: see NativeArg; element accesses are bounds-checked.
unsafe impl<T: Send> Send for GlobalRef<T> {}
unsafe impl<T: Sync> Sync for GlobalRef<T> {}
unsafe impl<T: Send> Send for GlobalMut<T> {}
unsafe impl<T: Sync> Sync for GlobalMut<T> {}

impl<T: Copy> Span<T> {
    fn from_arg(arg: &NativeArg, name: &'static str) -> Result<Self, Trap> {
        let (ptr, len) = arg.buffer::<T>(name)?;
        Ok(Span { ptr, len, name })
    }
    #[inline(always)]
    fn load(&self, index: u32) -> Result<T, Trap> {
        if (index as usize) < self.len {
            // SAFETY: in bounds of a live buffer borrowed by the launch.
            Ok(unsafe { self.ptr.add(index as usize).read() })
        } else {
            Err(oob(self.name, index, self.len))
        }
    }
    /// The row window of `base + stride * t` for the threads `t` of `row`, if all are in bounds.
    #[inline(always)]
    fn window(&self, row: &ThreadCtx, base: u32, stride: u32) -> Option<Span<T>> {
        let count = row.block_dim[0];
        row_fits(count, base, stride, self.len as u64).then_some(*self)
    }
}

/// Builds an out-of-bounds trap; out of line and cold, so that the checks stay small.
#[cold]
#[inline(never)]
pub(super) fn oob(array: &'static str, index: u32, len: usize) -> Trap {
    Trap::OutOfBounds {
        array,
        index: index as u64,
        len: len as u64,
    }
}

/// The methods both buffer views have, on their [`Span`]: `from_arg`, `len`, `is_empty`, `load`.
macro_rules! span_reads {
    ($view:ident) => {
        /// Views argument `arg` as parameter `name`.
        ///
        /// # Errors
        /// [`Trap::BadArgument`] if `arg` is not a buffer of `T`.
        pub fn from_arg(arg: &NativeArg, name: &'static str) -> Result<Self, Trap> {
            Span::from_arg(arg, name).map($view)
        }
        /// Length in elements (`u32`; launches refuse longer buffers).
        #[inline(always)]
        pub fn len(&self) -> u32 {
            self.0.len as u32
        }
        /// True if the buffer has no elements.
        #[inline(always)]
        pub fn is_empty(&self) -> bool {
            self.0.len == 0
        }
        /// Reads element `index`.
        #[inline(always)]
        pub fn load(&self, index: u32) -> Result<T, Trap> {
            self.0.load(index)
        }
    };
}

impl<T: Copy> GlobalRef<T> {
    span_reads!(GlobalRef);
    /// The window of the elements `base + stride * t` (exact arithmetic) that thread
    /// `t = thread_idx_x` of `row` reads, for `t` in `0..row.block_dim[0]`: `Some` only if every
    /// one of them is in bounds (and below 2^32, so the kernel's wrapping `u32` index equals the
    /// exact one).
    #[inline(always)]
    pub fn window(&self, row: &ThreadCtx, base: u32, stride: u32) -> Option<Window<T>> {
        let span = self.0.window(row, base, stride)?;
        Some(Window(Row::new(span, row, base, stride)))
    }
}

impl<T> GlobalMut<T> {
    /// A view of `len` elements at `ptr` (a block's shared array).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` elements of `T`, aligned, for as long
    /// as the view (or a copy of it) is used.
    pub(super) unsafe fn from_raw(ptr: *mut T, len: usize, name: &'static str) -> Self {
        GlobalMut(Span { ptr, len, name })
    }
}

impl<T: Copy> GlobalMut<T> {
    span_reads!(GlobalMut);
    /// Writes element `index`.
    #[inline(always)]
    pub fn store(&self, index: u32, value: T) -> Result<(), Trap> {
        let s = &self.0;
        if (index as usize) < s.len {
            // SAFETY: in bounds of a live buffer mutably borrowed by the launch.
            unsafe { (s.ptr as *mut T).add(index as usize).write(value) };
            Ok(())
        } else {
            Err(oob(s.name, index, s.len))
        }
    }
    /// The window of the elements `base + stride * t` that thread `t = thread_idx_x` of `row`
    /// reads and writes, for `t` in `0..row.block_dim[0]`: `Some` only if every one of them is in
    /// bounds (see [`GlobalRef::window`]).
    #[inline(always)]
    pub fn window(&self, row: &ThreadCtx, base: u32, stride: u32) -> Option<WindowMut<T>> {
        let span = self.0.window(row, base, stride)?;
        Some(WindowMut(Row::new(span, row, base, stride)))
    }
}
