//! Short vectors of 32-bit scalars: the host side of the kernel language's vector types
//! (`F32x4`, `U32x2`, …; `spoc_ir::Type::Vector` in the IR).
//!
//! Each is a `#[repr(C)]` struct of its lanes `x`, `y` (, `z`, `w`), aligned to its whole size
//! (8 bytes for two lanes, 16 for four), as CUDA's `float2`/`float4`, OpenCL C's `float4` and a
//! std430 `vec4` are, and as [`spoc_ir::layout`] lays vectors out: so a buffer of them is an
//! array the GPU moves one vector per instruction (`ld.global.v4.f32` in PTX, a 128-bit load
//! in CUDA C, a `vec4<f32>` in SPIR-V).
//!
//! In a kernel: `x: &[F32x4]` / `y: &mut [F32x4]` buffers, `let v = x[i];`, lane reads and
//! writes `v.x`, `y[i].w = 0.0`, `F32x4::new(a, b, c, d)` and `F32x4::splat(a)`, shared and
//! local arrays of vectors. On the host they are plain values: upload a `Vec<F32x4>` with
//! [`crate::Device::upload`], or view a `Vec<f32>` of a multiple of 4 elements as one with
//! [`F32x4::from_slice`].

macro_rules! vectors {
    ($($(#[$doc:meta])* $name:ident: $t:ty, $align:literal, [$($lane:ident),+];)*) => {$(
        $(#[$doc])*
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name {
            $(
                #[allow(missing_docs)]
                pub $lane: $t,
            )+
        }

        impl $name {
            /// The number of lanes.
            pub const LANES: usize = [$(stringify!($lane)),+].len();

            /// The vector of these lanes, in order.
            #[allow(clippy::too_many_arguments)]
            pub const fn new($($lane: $t),+) -> Self {
                Self { $($lane),+ }
            }

            /// The vector with `v` in every lane.
            pub const fn splat(v: $t) -> Self {
                Self { $($lane: v),+ }
            }

            /// The lanes as an array (`[x, y, …]`).
            pub const fn to_array(self) -> [$t; Self::LANES] {
                [$(self.$lane),+]
            }

            /// The vector of an array's elements (`[x, y, …]`).
            pub const fn from_array(a: [$t; Self::LANES]) -> Self {
                let [$($lane),+] = a;
                Self { $($lane),+ }
            }

            /// `v` read as vectors: `v.len() / LANES` of them, lane by lane.
            ///
            /// # Panics
            /// If `v.len()` is not a multiple of [`Self::LANES`].
            pub fn from_slice(v: &[$t]) -> Vec<Self> {
                assert!(
                    v.len() % Self::LANES == 0,
                    "{}::from_slice: {} elements are not a multiple of {}",
                    stringify!($name),
                    v.len(),
                    Self::LANES
                );
                v.chunks_exact(Self::LANES)
                    .map(|c| {
                        let mut a = [<$t>::default(); Self::LANES];
                        a.copy_from_slice(c);
                        Self::from_array(a)
                    })
                    .collect()
            }

            /// The lanes of `v`, one vector after the other (the inverse of
            /// [`Self::from_slice`]).
            pub fn flatten(v: &[Self]) -> Vec<$t> {
                v.iter().flat_map(|x| x.to_array()).collect()
            }
        }

        impl From<[$t; $name::LANES]> for $name {
            fn from(a: [$t; $name::LANES]) -> Self {
                Self::from_array(a)
            }
        }

        impl From<$name> for [$t; $name::LANES] {
            fn from(v: $name) -> Self {
                v.to_array()
            }
        }

        // SAFETY: `#[repr(C)]` lanes of one plain 32-bit scalar type; the alignment equals the
        // size (no padding), every bit pattern is a valid value and so is all-zero.
        unsafe impl crate::buffer::DeviceCopy for $name {}

        const _: () = assert!(
            std::mem::size_of::<$name>() == $align && std::mem::align_of::<$name>() == $align
        );
    )*};
}

vectors! {
    /// Two `f32` lanes (CUDA's `float2`), 8 bytes, 8-aligned.
    F32x2: f32, 8, [x, y];
    /// Four `f32` lanes (CUDA's `float4`), 16 bytes, 16-aligned.
    F32x4: f32, 16, [x, y, z, w];
    /// Two `i32` lanes (CUDA's `int2`), 8 bytes, 8-aligned.
    I32x2: i32, 8, [x, y];
    /// Four `i32` lanes (CUDA's `int4`), 16 bytes, 16-aligned.
    I32x4: i32, 16, [x, y, z, w];
    /// Two `u32` lanes (CUDA's `uint2`), 8 bytes, 8-aligned.
    U32x2: u32, 8, [x, y];
    /// Four `u32` lanes (CUDA's `uint4`), 16 bytes, 16-aligned.
    U32x4: u32, 16, [x, y, z, w];
}

mod sealed {
    pub trait Sealed {}
}

/// A vector type whose lanes are `T` (`F32x4: VectorOf<f32>`, …): what a `Buffer<T>` can be
/// viewed as without a copy ([`crate::Buffer::into_vectors`]). Sealed: the vector types of this
/// module only (their layout is `LANES` lanes of `T` with no padding, and any bit pattern of
/// the lanes is a vector).
pub trait VectorOf<T: crate::buffer::DeviceCopy>:
    crate::buffer::DeviceCopy + sealed::Sealed
{
    /// Lanes per vector.
    const LANES: usize;
    /// The type's name (`"F32x4"`), for errors.
    const NAME: &'static str;
}

macro_rules! vector_of {
    ($($name:ident: $t:ty, $n:literal;)*) => {$(
        impl sealed::Sealed for $name {}
        impl VectorOf<$t> for $name {
            const LANES: usize = $n;
            const NAME: &'static str = stringify!($name);
        }
        const _: () = assert!(
            std::mem::size_of::<$name>() == $n * std::mem::size_of::<$t>()
        );
    )*};
}

vector_of! {
    F32x2: f32, 2;
    F32x4: f32, 4;
    I32x2: i32, 2;
    I32x4: i32, 4;
    U32x2: u32, 2;
    U32x4: u32, 4;
}

/// Lane-by-lane arithmetic on the host, as a kernel computes it (`a + b`, `a * s`, `s * a`,
/// `a / s`, and the `+=`-style forms): IEEE for `f32` lanes, wrapping for integer lanes, `/`
/// and `%` by an integer zero panic (a kernel reports `Trap::DivisionByZero`). For `#[device]`
/// helpers called from host Rust; a kernel's own arithmetic is lowered lane by lane.
macro_rules! vector_ops {
    ($($name:ident: $t:ty, [$($lane:ident),+], $add:ident, $sub:ident, $mul:ident;)*) => {$(
        vector_ops!(@op $name, Add, add, Self, |a, b| a.$add(b), [$($lane),+]);
        vector_ops!(@op $name, Sub, sub, Self, |a, b| a.$sub(b), [$($lane),+]);
        vector_ops!(@op $name, Mul, mul, Self, |a, b| a.$mul(b), [$($lane),+]);
        vector_ops!(@op $name, Div, div, Self, |a, b| a / b, [$($lane),+]);
        vector_ops!(@op $name, Rem, rem, Self, |a, b| a % b, [$($lane),+]);
        vector_ops!(@scalar $name, $t, Mul, mul, |a, s| a.$mul(s), [$($lane),+]);
        vector_ops!(@scalar $name, $t, Div, div, |a, s| a / s, [$($lane),+]);
        impl std::ops::Mul<$name> for $t {
            type Output = $name;
            fn mul(self, v: $name) -> $name {
                v * self
            }
        }
        vector_ops!(@assign $name, Self, AddAssign, add_assign, +);
        vector_ops!(@assign $name, Self, SubAssign, sub_assign, -);
        vector_ops!(@assign $name, Self, MulAssign, mul_assign, *);
        vector_ops!(@assign $name, $t, MulAssign, mul_assign, *);
        vector_ops!(@assign $name, Self, DivAssign, div_assign, /);
        vector_ops!(@assign $name, $t, DivAssign, div_assign, /);
    )*};
    (@op $name:ident, $tr:ident, $f:ident, $rhs:ty, |$a:ident, $b:ident| $e:expr, [$($lane:ident),+]) => {
        impl std::ops::$tr<$rhs> for $name {
            type Output = Self;
            fn $f(self, r: $rhs) -> Self {
                Self { $($lane: { let ($a, $b) = (self.$lane, r.$lane); $e }),+ }
            }
        }
    };
    (@scalar $name:ident, $t:ty, $tr:ident, $f:ident, |$a:ident, $s:ident| $e:expr, [$($lane:ident),+]) => {
        impl std::ops::$tr<$t> for $name {
            type Output = Self;
            fn $f(self, $s: $t) -> Self {
                Self { $($lane: { let $a = self.$lane; $e }),+ }
            }
        }
    };
    (@assign $name:ident, $rhs:ty, $tr:ident, $f:ident, $op:tt) => {
        impl std::ops::$tr<$rhs> for $name {
            fn $f(&mut self, r: $rhs) {
                *self = *self $op r;
            }
        }
    };
}

/// `f32` lanes: the operators themselves.
trait FloatLane: Sized {
    fn f_add(self, r: Self) -> Self;
    fn f_sub(self, r: Self) -> Self;
    fn f_mul(self, r: Self) -> Self;
}

impl FloatLane for f32 {
    fn f_add(self, r: f32) -> f32 {
        self + r
    }
    fn f_sub(self, r: f32) -> f32 {
        self - r
    }
    fn f_mul(self, r: f32) -> f32 {
        self * r
    }
}

vector_ops! {
    F32x2: f32, [x, y], f_add, f_sub, f_mul;
    F32x4: f32, [x, y, z, w], f_add, f_sub, f_mul;
    I32x2: i32, [x, y], wrapping_add, wrapping_sub, wrapping_mul;
    I32x4: i32, [x, y, z, w], wrapping_add, wrapping_sub, wrapping_mul;
    U32x2: u32, [x, y], wrapping_add, wrapping_sub, wrapping_mul;
    U32x4: u32, [x, y, z, w], wrapping_add, wrapping_sub, wrapping_mul;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_arithmetic_is_lane_by_lane() {
        let (a, b) = (F32x4::new(1.0, 2.0, 3.0, 4.0), F32x4::splat(0.5));
        assert_eq!(a + b, F32x4::new(1.5, 2.5, 3.5, 4.5));
        assert_eq!(a * 2.0, 2.0 * a);
        assert_eq!(a / 2.0, a * b);
        let mut c = a;
        c -= b;
        assert_eq!(c, F32x4::new(0.5, 1.5, 2.5, 3.5));
        assert_eq!(U32x2::new(u32::MAX, 1) + U32x2::splat(1), U32x2::new(0, 2));
        assert_eq!(I32x2::new(7, -7) % I32x2::splat(3), I32x2::new(1, -1));
    }

    #[test]
    fn layout_matches_the_ir() {
        use spoc_ir::{layout::Layouts, ScalarType, Type};
        let l = Layouts::new(&[], &[]);
        let ir = |elem, lanes| {
            let t = Type::Vector { elem, lanes };
            let x = l.layout(&t).unwrap();
            (x.size as usize, x.align as usize)
        };
        let rust = |s: usize, a: usize| (s, a);
        assert_eq!(
            ir(ScalarType::F32, 4),
            rust(size_of::<F32x4>(), align_of::<F32x4>())
        );
        assert_eq!(
            ir(ScalarType::U32, 2),
            rust(size_of::<U32x2>(), align_of::<U32x2>())
        );
        assert_eq!(
            ir(ScalarType::I32, 4),
            rust(size_of::<I32x4>(), align_of::<I32x4>())
        );
    }

    #[test]
    fn slices_round_trip() {
        let v: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let q = F32x4::from_slice(&v);
        assert_eq!(
            q,
            [
                F32x4::new(0.0, 1.0, 2.0, 3.0),
                F32x4::new(4.0, 5.0, 6.0, 7.0)
            ]
        );
        assert_eq!(F32x4::flatten(&q), v);
        assert_eq!(U32x2::splat(7).to_array(), [7, 7]);
    }

    #[test]
    #[should_panic(expected = "not a multiple of 4")]
    fn from_slice_refuses_a_ragged_length() {
        F32x4::from_slice(&[1.0; 6]);
    }
}
