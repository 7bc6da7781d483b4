//! Float comparison: distances in units in the last place (ULP), tolerances, and bit patterns
//! that compare `-0.0` unequal to `0.0` but every NaN equal to every other.

/// Distance between two `f64` in ULP: how many steps between representable values lead from
/// one to the other (0 for equal values; `0.0` and `-0.0` are 0 apart). Meaningless when
/// either is NaN.
pub fn ulp_distance_f64(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let bits = x.to_bits() as i64;
        if bits < 0 {
            i64::MIN - bits
        } else {
            bits
        }
    };
    key(a).abs_diff(key(b))
}

/// Distance between two `f32` in ULP (see [`ulp_distance_f64`]).
pub fn ulp_distance_f32(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let bits = x.to_bits() as i32 as i64;
        if bits < 0 {
            i32::MIN as i64 - bits
        } else {
            bits
        }
    };
    key(a).abs_diff(key(b))
}

/// How closely a result must match its reference.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Largest allowed distance in units in the last place (0: bit-exact).
    pub ulps: u64,
    /// Largest allowed absolute error, for backends whose transcendentals are specified by an
    /// absolute bound (Vulkan/GLSL `sin`/`cos`: 2^-11 on [-π, π]); 0 when not used.
    pub abs: f64,
}

impl Tolerance {
    /// Bit-exact (but any NaN matches any NaN).
    pub const EXACT: Tolerance = Tolerance { ulps: 0, abs: 0.0 };

    /// Within `ulps` units in the last place.
    pub const fn ulps(ulps: u64) -> Tolerance {
        Tolerance { ulps, abs: 0.0 }
    }

    /// True if `got` is close enough to `want`, `ulps` apart: NaN matches NaN only; otherwise
    /// within the ULP bound, the absolute bound, or equal (`0.0 == -0.0` only then).
    pub fn accepts(self, got: f64, want: f64, ulps: u64) -> bool {
        if got.is_nan() || want.is_nan() {
            return got.is_nan() && want.is_nan();
        }
        ulps <= self.ulps || (self.abs > 0.0 && (got - want).abs() <= self.abs) || got == want
    }

    /// [`Tolerance::accepts`] for two `f32`.
    pub fn accepts_f32(self, got: f32, want: f32) -> bool {
        self.accepts(got as f64, want as f64, ulp_distance_f32(got, want))
    }

    /// [`Tolerance::accepts`] for two `f64`.
    pub fn accepts_f64(self, got: f64, want: f64) -> bool {
        self.accepts(got, want, ulp_distance_f64(got, want))
    }
}

/// `f32` values as bits, every NaN as the one canonical NaN (payloads differ between devices:
/// NVIDIA's OpenCL returns 0x7fffffff where the host propagates the operand's payload).
pub fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter()
        .map(|x| if x.is_nan() { f32::NAN } else { *x }.to_bits())
        .collect()
}

/// `f64` values as bits, every NaN as the one canonical NaN (see [`bits32`]).
pub fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter()
        .map(|x| if x.is_nan() { f64::NAN } else { *x }.to_bits())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(ulp_distance_f32(1.0, 1.0), 0);
        assert_eq!(ulp_distance_f32(0.0, -0.0), 0);
        assert_eq!(ulp_distance_f32(f32::from_bits(1), -f32::from_bits(1)), 2);
        assert_eq!(
            ulp_distance_f32(1.0, f32::from_bits(1.0f32.to_bits() + 3)),
            3
        );
        assert_eq!(
            ulp_distance_f64(-1.0, f64::from_bits((-1.0f64).to_bits() + 2)),
            2
        );
        assert_eq!(
            ulp_distance_f64(f64::MIN_POSITIVE, -f64::MIN_POSITIVE),
            2 * (1 << 52)
        );
    }

    #[test]
    fn tolerances() {
        let t = Tolerance::ulps(2);
        assert!(t.accepts_f32(1.0, f32::from_bits(1.0f32.to_bits() + 2)));
        assert!(!t.accepts_f32(1.0, f32::from_bits(1.0f32.to_bits() + 3)));
        assert!(Tolerance::EXACT.accepts_f64(f64::NAN, -f64::NAN));
        assert!(!Tolerance::ulps(u64::MAX).accepts_f64(f64::NAN, 1.0));
        assert!(Tolerance { ulps: 0, abs: 0.5 }.accepts_f64(1.0, 1.25));
        assert_eq!(bits32(&[f32::NAN, -0.0]), [f32::NAN.to_bits(), 0x8000_0000]);
    }
}
