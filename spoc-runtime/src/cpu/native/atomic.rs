//! Atomics of native kernels (`atomic_add(&mut a[i], v)` …) on global buffers and shared
//! arrays: the element is accessed through `std::sync::atomic`'s types (`AtomicU32::from_ptr`
//! and its siblings) on the buffer's own memory, after a bounds check. Integer operations are the
//! hardware read-modify-writes (wrapping add/sub, signed or unsigned min/max by the element
//! type); float `add` is a compare-and-swap loop on the bits. Every operation is `AcqRel`
//! (`Acquire` on a failed compare-exchange), so it also orders the thread's other accesses, as
//! the GPU backends' atomics do at least.

use super::abi::{GlobalMut, Trap};
use super::global::oob;
use spoc_ir::AtomicOp;
use std::sync::atomic::Ordering::{AcqRel, Acquire};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64};

/// Element types with atomic operations: `i32`, `u32`, `i64`, `u64` (every [`AtomicOp`]) and
/// `f32`, `f64` (`Add` and `Exchange`).
pub trait AtomicElem: Copy {
    /// Applies `op` (not `CompareExchange`) with operand `v` to the element at `ptr` and returns
    /// the value it held before.
    ///
    /// # Errors
    /// [`Trap::BadAtomic`] for an operation the type does not have.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes and aligned for the atomic type of `Self`
    /// (checked by the caller), and every concurrent access of the element must be atomic.
    unsafe fn rmw(ptr: *mut Self, op: AtomicOp, v: Self) -> Result<Self, Trap>;

    /// Stores `new` at `ptr` if it holds `expected` (compared as integers), and returns the value
    /// it held before either way.
    ///
    /// # Errors
    /// [`Trap::BadAtomic`] for a type without compare-exchange (floats).
    ///
    /// # Safety
    /// As [`AtomicElem::rmw`].
    unsafe fn cas(ptr: *mut Self, expected: Self, new: Self) -> Result<Self, Trap>;

    /// The alignment the atomic access needs.
    const ALIGN: usize;
}

macro_rules! atomic_int {
    ($($t:ty => $a:ty),*) => {$(
        impl AtomicElem for $t {
            const ALIGN: usize = std::mem::align_of::<$a>();
            #[inline]
            unsafe fn rmw(ptr: *mut $t, op: AtomicOp, v: $t) -> Result<$t, Trap> {
                // SAFETY: the caller's contract (valid, aligned, accessed atomically).
                let a = unsafe { <$a>::from_ptr(ptr) };
                Ok(match op {
                    AtomicOp::Add => a.fetch_add(v, AcqRel),
                    AtomicOp::Sub => a.fetch_sub(v, AcqRel),
                    AtomicOp::Min => a.fetch_min(v, AcqRel),
                    AtomicOp::Max => a.fetch_max(v, AcqRel),
                    AtomicOp::Exchange => a.swap(v, AcqRel),
                    AtomicOp::And => a.fetch_and(v, AcqRel),
                    AtomicOp::Or => a.fetch_or(v, AcqRel),
                    AtomicOp::Xor => a.fetch_xor(v, AcqRel),
                    AtomicOp::CompareExchange => {
                        return Err(Trap::BadAtomic { op, elem: stringify!($t) })
                    }
                })
            }
            #[inline]
            unsafe fn cas(ptr: *mut $t, expected: $t, new: $t) -> Result<$t, Trap> {
                // SAFETY: the caller's contract.
                let a = unsafe { <$a>::from_ptr(ptr) };
                Ok(match a.compare_exchange(expected, new, AcqRel, Acquire) {
                    Ok(old) | Err(old) => old,
                })
            }
        }
    )*};
}
atomic_int!(i32 => AtomicI32, u32 => AtomicU32, i64 => AtomicI64, u64 => AtomicU64);

macro_rules! atomic_float {
    ($($t:ty => $a:ty, $bits:ty),*) => {$(
        impl AtomicElem for $t {
            const ALIGN: usize = std::mem::align_of::<$a>();
            #[inline]
            unsafe fn rmw(ptr: *mut $t, op: AtomicOp, v: $t) -> Result<$t, Trap> {
                // SAFETY: the caller's contract; the float and its bits have one size.
                let a = unsafe { <$a>::from_ptr(ptr as *mut $bits) };
                let old = match op {
                    AtomicOp::Add => {
                        let mut cur = a.load(Acquire);
                        loop {
                            let next = (<$t>::from_bits(cur) + v).to_bits();
                            match a.compare_exchange_weak(cur, next, AcqRel, Acquire) {
                                Ok(prev) => break prev,
                                Err(seen) => cur = seen,
                            }
                        }
                    }
                    AtomicOp::Exchange => a.swap(v.to_bits(), AcqRel),
                    _ => return Err(Trap::BadAtomic { op, elem: stringify!($t) }),
                };
                Ok(<$t>::from_bits(old))
            }
            #[inline]
            unsafe fn cas(_: *mut $t, _: $t, _: $t) -> Result<$t, Trap> {
                Err(Trap::BadAtomic { op: AtomicOp::CompareExchange, elem: stringify!($t) })
            }
        }
    )*};
}
atomic_float!(f32 => AtomicU32, u32, f64 => AtomicU64, u64);

impl<T: AtomicElem> GlobalMut<T> {
    /// The address of element `index`, checked in bounds and aligned for `T`'s atomic.
    #[inline(always)]
    fn atomic_ptr(&self, index: u32) -> Result<*mut T, Trap> {
        if (index as usize) >= self.0.len {
            return Err(oob(self.0.name, index, self.0.len));
        }
        // SAFETY: in bounds of the buffer.
        let p = unsafe { (self.0.ptr as *mut T).add(index as usize) };
        if !(p as usize).is_multiple_of(T::ALIGN) {
            return Err(Trap::Misaligned {
                array: self.0.name,
                index: index as u64,
            });
        }
        Ok(p)
    }

    /// `op` (not `CompareExchange`) on element `index` with operand `v`; returns the element's
    /// previous value (`atomic_add(&mut a[index], v)` …).
    ///
    /// # Errors
    /// [`Trap::OutOfBounds`] past the end; [`Trap::BadAtomic`] for an operation `T` lacks.
    #[inline(always)]
    pub fn atomic(&self, op: AtomicOp, index: u32, v: T) -> Result<T, Trap> {
        let p = self.atomic_ptr(index)?;
        // SAFETY: in bounds and aligned; the kernel's other accesses of the element are its own
        // business, as on a GPU.
        unsafe { T::rmw(p, op, v) }
    }

    /// `atomic_compare_exchange(&mut a[index], expected, new)`: stores `new` if the element
    /// holds `expected`; returns the element's previous value.
    ///
    /// # Errors
    /// [`Trap::OutOfBounds`] past the end; [`Trap::BadAtomic`] on floats.
    #[inline(always)]
    pub fn atomic_cas(&self, index: u32, expected: T, new: T) -> Result<T, Trap> {
        let p = self.atomic_ptr(index)?;
        // SAFETY: as in `atomic`.
        unsafe { T::cas(p, expected, new) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::abi::NativeArg;

    fn view<T: Copy>(v: &mut [T]) -> GlobalMut<T> {
        let arg = NativeArg::Buffer {
            ptr: v.as_mut_ptr() as *mut u8,
            len: v.len(),
            elem_bytes: std::mem::size_of::<T>(),
        };
        GlobalMut::from_arg(&arg, "a").unwrap()
    }

    #[test]
    fn integer_operations_return_the_old_value_and_wrap() {
        let mut d = [5i32, -3, 0, i32::MAX];
        let a = view(&mut d);
        assert_eq!(a.atomic(AtomicOp::Add, 3, 1), Ok(i32::MAX));
        assert_eq!(a.atomic(AtomicOp::Min, 0, -7), Ok(5));
        assert_eq!(a.atomic(AtomicOp::Max, 1, 2), Ok(-3));
        assert_eq!(a.atomic(AtomicOp::Sub, 2, 1), Ok(0));
        assert_eq!(a.atomic_cas(1, 9, 1), Ok(2)); // no match: unchanged
        assert_eq!(a.atomic_cas(1, 2, 11), Ok(2));
        assert_eq!(d, [-7, 11, -1, i32::MIN]);

        let mut u = [6u64, 0b1100, u64::MAX];
        let b = view(&mut u);
        assert_eq!(b.atomic(AtomicOp::Max, 2, 1), Ok(u64::MAX)); // unsigned
        assert_eq!(b.atomic(AtomicOp::Xor, 1, 0b1010), Ok(0b1100));
        assert_eq!(b.atomic(AtomicOp::And, 0, 3), Ok(6));
        assert_eq!(b.atomic(AtomicOp::Or, 0, 8), Ok(2));
        assert_eq!(b.atomic(AtomicOp::Exchange, 2, 4), Ok(u64::MAX));
        assert_eq!(u, [10, 0b0110, 4]);
    }

    #[test]
    fn float_add_is_atomic_across_threads_and_bad_ops_trap() {
        let mut d = [0.0f64, 1.5];
        let a = view(&mut d);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        a.atomic(AtomicOp::Add, 0, 0.5).unwrap();
                    }
                });
            }
        });
        assert_eq!(a.atomic(AtomicOp::Exchange, 1, 2.0), Ok(1.5));
        assert_eq!(
            a.atomic(AtomicOp::Min, 0, 1.0),
            Err(Trap::BadAtomic {
                op: AtomicOp::Min,
                elem: "f64"
            })
        );
        assert!(matches!(
            a.atomic_cas(0, 0.0, 1.0),
            Err(Trap::BadAtomic { .. })
        ));
        assert_eq!(
            a.atomic(AtomicOp::Add, 2, 1.0),
            Err(Trap::OutOfBounds {
                array: "a",
                index: 2,
                len: 2
            })
        );
        assert_eq!(d, [2000.0, 2.0]);
    }
}
