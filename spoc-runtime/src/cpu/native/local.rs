//! Local arrays and loop steps inside a native kernel: bounds-checked element access and the
//! `step_by` check.

use crate::kernel_abi::Trap;

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

/// The element `index` of a local array, for writing (the place of `a[i] = v` and of nested
/// `a[i][j] = v`).
///
/// # Errors
/// [`Trap::OutOfBounds`] past the end.
#[inline(always)]
pub fn local_mut<'a, T, const N: usize>(
    a: &'a mut [T; N],
    index: u32,
    name: &'static str,
) -> Result<&'a mut T, Trap> {
    a.get_mut(index as usize).ok_or(Trap::OutOfBounds {
        array: name,
        index: index as u64,
        len: N as u64,
    })
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
