//! The interface between `#[kernel]`'s generated native code and the Native backend.
//!
//! For every kernel the macro generates one function of type [`NativeFn`]. It unpacks its
//! arguments once ([`GlobalRef::from_arg`], [`NativeArg::scalar`]) and hands the per-thread body
//! to [`NativeLaunch::run`], which runs it for every thread of every block, blocks in parallel on
//! the CPU cores (rayon), the threads of one block in order. Every array access is bounds-checked
//! and every integer division checked for zero: a fault is a [`Trap`], returned, never a panic.
//!
//! Nothing here is meant to be called by hand: it is reached through `spoc::__private`.

use rayon::prelude::*;
use std::fmt;
use std::marker::PhantomData;

/// The per-thread view of a launch: the index intrinsics of the kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCtx {
    /// `threadIdx` in x, y, z.
    pub thread: [u32; 3],
    /// `blockIdx` in x, y, z.
    pub block: [u32; 3],
    /// `blockDim` in x, y, z.
    pub block_dim: [u32; 3],
    /// `gridDim` in x, y, z.
    pub grid_dim: [u32; 3],
}

impl ThreadCtx {
    /// `block * block_dim + thread` on `axis` (0, 1, 2), wrapping.
    #[inline(always)]
    pub fn global_id(&self, axis: usize) -> u32 {
        self.block[axis]
            .wrapping_mul(self.block_dim[axis])
            .wrapping_add(self.thread[axis])
    }
    /// `grid_dim * block_dim` on `axis`, wrapping.
    #[inline(always)]
    pub fn global_size(&self, axis: usize) -> u32 {
        self.grid_dim[axis].wrapping_mul(self.block_dim[axis])
    }
    /// Lane within the warp of 32 (linear thread index in the block modulo 32).
    #[inline(always)]
    pub fn lane_id(&self) -> u32 {
        let linear = self.thread[0]
            + self.block_dim[0] * (self.thread[1] + self.block_dim[1] * self.thread[2]);
        linear % 32
    }
}

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
    BadArgument { param: &'static str, expected: &'static str },
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trap::OutOfBounds { array, index, len } => {
                write!(f, "index {index} out of bounds for `{array}` of length {len}")
            }
            Trap::DivisionByZero => f.write_str("integer division or remainder by zero"),
            Trap::ZeroStep => f.write_str("`step_by(0)` in a for loop"),
            Trap::BadArgument { param, expected } => {
                write!(f, "argument `{param}` is not a {expected}")
            }
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

    fn buffer<T>(&self, param: &'static str) -> Result<(*mut T, usize), Trap> {
        match *self {
            NativeArg::Buffer {
                ptr,
                len,
                elem_bytes,
            } if elem_bytes == std::mem::size_of::<T>()
                && (ptr as usize) % std::mem::align_of::<T>() == 0 =>
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

/// A read-only global buffer (`&[T]` parameter) inside a native kernel.
#[derive(Debug)]
pub struct GlobalRef<T> {
    ptr: *const T,
    len: usize,
    name: &'static str,
    _t: PhantomData<T>,
}

/// A read-write global buffer (`&mut [T]` parameter) inside a native kernel. Threads write
/// through raw pointers, as GPU threads do: two threads writing one element without an atomic is
/// a race in the kernel, as on a GPU.
#[derive(Debug)]
pub struct GlobalMut<T> {
    ptr: *mut T,
    len: usize,
    name: &'static str,
    _t: PhantomData<T>,
}

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

#[inline(always)]
fn oob(array: &'static str, index: u32, len: usize) -> Trap {
    Trap::OutOfBounds {
        array,
        index: index as u64,
        len: len as u64,
    }
}

impl<T: Copy> GlobalRef<T> {
    /// Views argument `arg` as parameter `name`.
    ///
    /// # Errors
    /// [`Trap::BadArgument`] if `arg` is not a buffer of `T`.
    pub fn from_arg(arg: &NativeArg, name: &'static str) -> Result<Self, Trap> {
        let (ptr, len) = arg.buffer::<T>(name)?;
        Ok(GlobalRef {
            ptr,
            len,
            name,
            _t: PhantomData,
        })
    }
    /// Length in elements (`u32`; launches refuse longer buffers).
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len as u32
    }
    /// True if the buffer has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Reads element `index`.
    #[inline(always)]
    pub fn load(&self, index: u32) -> Result<T, Trap> {
        if (index as usize) < self.len {
            // SAFETY: in bounds of a live buffer borrowed by the launch.
            Ok(unsafe { self.ptr.add(index as usize).read() })
        } else {
            Err(oob(self.name, index, self.len))
        }
    }
}

impl<T: Copy> GlobalMut<T> {
    /// Views argument `arg` as parameter `name`.
    ///
    /// # Errors
    /// [`Trap::BadArgument`] if `arg` is not a buffer of `T`.
    pub fn from_arg(arg: &NativeArg, name: &'static str) -> Result<Self, Trap> {
        let (ptr, len) = arg.buffer::<T>(name)?;
        Ok(GlobalMut {
            ptr,
            len,
            name,
            _t: PhantomData,
        })
    }
    /// Length in elements.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len as u32
    }
    /// True if the buffer has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Reads element `index`.
    #[inline(always)]
    pub fn load(&self, index: u32) -> Result<T, Trap> {
        if (index as usize) < self.len {
            // SAFETY: in bounds of a live buffer borrowed by the launch.
            Ok(unsafe { self.ptr.add(index as usize).read() })
        } else {
            Err(oob(self.name, index, self.len))
        }
    }
    /// Writes element `index`.
    #[inline(always)]
    pub fn store(&self, index: u32, value: T) -> Result<(), Trap> {
        if (index as usize) < self.len {
            // SAFETY: in bounds of a live buffer mutably borrowed by the launch.
            unsafe { self.ptr.add(index as usize).write(value) };
            Ok(())
        } else {
            Err(oob(self.name, index, self.len))
        }
    }
}

/// Reads element `index` of a local array.
#[inline(always)]
pub fn local_load<T: Copy, const N: usize>(
    a: &[T; N],
    index: u32,
    name: &'static str,
) -> Result<T, Trap> {
    a.get(index as usize).copied().ok_or(Trap::OutOfBounds {
        array: name,
        index: index as u64,
        len: N as u64,
    })
}

/// Writes element `index` of a local array.
#[inline(always)]
pub fn local_store<T, const N: usize>(
    a: &mut [T; N],
    index: u32,
    value: T,
    name: &'static str,
) -> Result<(), Trap> {
    match a.get_mut(index as usize) {
        Some(slot) => {
            *slot = value;
            Ok(())
        }
        None => Err(Trap::OutOfBounds {
            array: name,
            index: index as u64,
            len: N as u64,
        }),
    }
}

/// Integer operations with the kernel language's semantics (DESIGN.md §2): wrapping arithmetic,
/// division and remainder by zero trap, `MIN / -1` wraps, shift amounts are taken modulo the width.
pub trait KernelInt: Copy {
    fn k_div(self, rhs: Self) -> Result<Self, Trap>;
    fn k_rem(self, rhs: Self) -> Result<Self, Trap>;
}

macro_rules! kernel_int {
    ($($t:ty),*) => {$(
        impl KernelInt for $t {
            #[inline(always)]
            fn k_div(self, rhs: Self) -> Result<Self, Trap> {
                if rhs == 0 { Err(Trap::DivisionByZero) } else { Ok(self.wrapping_div(rhs)) }
            }
            #[inline(always)]
            fn k_rem(self, rhs: Self) -> Result<Self, Trap> {
                if rhs == 0 { Err(Trap::DivisionByZero) } else { Ok(self.wrapping_rem(rhs)) }
            }
        }
    )*};
}
kernel_int!(i32, i64, u32, u64);

/// Checks the step of a counted `for` loop (`step_by(step)`); the generated code then iterates
/// Rust's own `(start..end).step_by(step)` or `(start..end).rev().step_by(step)`.
///
/// # Errors
/// [`Trap::ZeroStep`] if `step` is 0.
#[inline(always)]
pub fn check_step(step: u32) -> Result<usize, Trap> {
    if step == 0 {
        Err(Trap::ZeroStep)
    } else {
        Ok(step as usize)
    }
}

/// The generated entry point of a native kernel.
pub type NativeFn = fn(&NativeLaunch, &[NativeArg]) -> Result<(), ThreadTrap>;

/// Grid and block of one native launch; runs the per-thread body.
#[derive(Clone, Copy, Debug)]
pub struct NativeLaunch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

impl NativeLaunch {
    /// Runs `body` once per thread: blocks in parallel (rayon), the threads of a block in
    /// x-fastest order. Stops at the first trap and returns it with the faulting coordinates.
    pub fn run<F>(&self, body: F) -> Result<(), ThreadTrap>
    where
        F: Fn(&ThreadCtx) -> Result<(), Trap> + Sync,
    {
        let [gx, gy, gz] = self.grid;
        let blocks = gx as u64 * gy as u64 * gz as u64;
        let block_dim = self.block;
        (0..blocks).into_par_iter().try_for_each(|b| {
            let block = [
                (b % gx as u64) as u32,
                ((b / gx as u64) % gy as u64) as u32,
                (b / (gx as u64 * gy as u64)) as u32,
            ];
            let mut ctx = ThreadCtx {
                thread: [0; 3],
                block,
                block_dim,
                grid_dim: self.grid,
            };
            for tz in 0..block_dim[2] {
                for ty in 0..block_dim[1] {
                    for tx in 0..block_dim[0] {
                        ctx.thread = [tx, ty, tz];
                        if let Err(trap) = body(&ctx) {
                            return Err(ThreadTrap {
                                block,
                                thread: ctx.thread,
                                trap,
                            });
                        }
                    }
                }
            }
            Ok(())
        })
    }
}
