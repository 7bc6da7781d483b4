//! Named constants a kernel may use: bounds of the scalar types (`u32::MAX`, `f32::EPSILON`, …)
//! and the float constants of `std::f32::consts` / `std::f64::consts`.
//!
//! `usize::MAX`/`usize::MIN` are those of the kernel's 32-bit `usize`.

use crate::types::Scalar;
use spoc_ir::Const;

/// The constant `path` names, with its type.
pub fn lookup(path: &syn::Path) -> Option<(Const, Scalar)> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    if path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    match segs.as_slice() {
        [ty, name] => bound(Scalar::from_name(ty)?, name),
        [.., ty, consts, name] if consts == "consts" => {
            let prefix_ok =
                segs.len() == 3 || (segs.len() == 4 && matches!(segs[0].as_str(), "std" | "core"));
            if !prefix_ok {
                return None;
            }
            let v = float_const(name)?;
            match ty.as_str() {
                "f32" => Some((Const::f32(v as f32), Scalar::F32)),
                "f64" => Some((Const::f64(v), Scalar::F64)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn bound(s: Scalar, name: &str) -> Option<(Const, Scalar)> {
    let c = match (s, name) {
        (Scalar::I32, "MAX") => Const::I32(i32::MAX),
        (Scalar::I32, "MIN") => Const::I32(i32::MIN),
        (Scalar::I64, "MAX") => Const::I64(i64::MAX),
        (Scalar::I64, "MIN") => Const::I64(i64::MIN),
        (Scalar::U32 | Scalar::Usize, "MAX") => Const::U32(u32::MAX),
        (Scalar::U32 | Scalar::Usize, "MIN") => Const::U32(0),
        (Scalar::U64, "MAX") => Const::U64(u64::MAX),
        (Scalar::U64, "MIN") => Const::U64(0),
        (Scalar::F32, n) => Const::f32(match n {
            "MAX" => f32::MAX,
            "MIN" => f32::MIN,
            "EPSILON" => f32::EPSILON,
            "MIN_POSITIVE" => f32::MIN_POSITIVE,
            "INFINITY" => f32::INFINITY,
            "NEG_INFINITY" => f32::NEG_INFINITY,
            "NAN" => f32::NAN,
            _ => return None,
        }),
        (Scalar::F64, n) => Const::f64(match n {
            "MAX" => f64::MAX,
            "MIN" => f64::MIN,
            "EPSILON" => f64::EPSILON,
            "MIN_POSITIVE" => f64::MIN_POSITIVE,
            "INFINITY" => f64::INFINITY,
            "NEG_INFINITY" => f64::NEG_INFINITY,
            "NAN" => f64::NAN,
            _ => return None,
        }),
        (Scalar::F16 | Scalar::BF16, n) => return half_const(s, n),
        _ => return None,
    };
    Some((c, s))
}

/// The associated constants of the `half` crate's `f16` and `bf16` (their bits; the values are
/// checked against the crate by `tests/half_floats.rs`).
fn half_const(s: Scalar, name: &str) -> Option<(Const, Scalar)> {
    // (name, f16 bits, bf16 bits)
    const TABLE: [(&str, u16, u16); 13] = [
        ("ZERO", 0x0000, 0x0000),
        ("NEG_ZERO", 0x8000, 0x8000),
        ("ONE", 0x3c00, 0x3f80),
        ("NEG_ONE", 0xbc00, 0xbf80),
        ("MAX", 0x7bff, 0x7f7f),
        ("MIN", 0xfbff, 0xff7f),
        ("EPSILON", 0x1400, 0x3c00),
        ("MIN_POSITIVE", 0x0400, 0x0080),
        ("MIN_POSITIVE_SUBNORMAL", 0x0001, 0x0001),
        ("MAX_SUBNORMAL", 0x03ff, 0x007f),
        ("INFINITY", 0x7c00, 0x7f80),
        ("NEG_INFINITY", 0xfc00, 0xff80),
        ("NAN", 0x7e00, 0x7fc0),
    ];
    let &(_, h, b) = TABLE.iter().find(|(n, ..)| *n == name)?;
    Some(if s == Scalar::F16 {
        (Const::F16(h), s)
    } else {
        (Const::BF16(b), s)
    })
}

/// The `f64` value of a `std::f64::consts` name (narrowed to `f32` by the caller: the nearest
/// `f32`, as `std::f32::consts` holds).
fn float_const(name: &str) -> Option<f64> {
    use std::f64::consts::*;
    Some(match name {
        "PI" => PI,
        "TAU" => TAU,
        "E" => E,
        "SQRT_2" => SQRT_2,
        "LN_2" => LN_2,
        "LN_10" => LN_10,
        "LOG2_E" => LOG2_E,
        "LOG10_E" => LOG10_E,
        "LOG2_10" => LOG2_10,
        "LOG10_2" => LOG10_2,
        "FRAC_PI_2" => FRAC_PI_2,
        "FRAC_PI_3" => FRAC_PI_3,
        "FRAC_PI_4" => FRAC_PI_4,
        "FRAC_PI_6" => FRAC_PI_6,
        "FRAC_PI_8" => FRAC_PI_8,
        "FRAC_1_PI" => FRAC_1_PI,
        "FRAC_2_PI" => FRAC_2_PI,
        "FRAC_2_SQRT_PI" => FRAC_2_SQRT_PI,
        "FRAC_1_SQRT_2" => FRAC_1_SQRT_2,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_pi_is_the_std_value() {
        let p: syn::Path = syn::parse_quote!(std::f32::consts::PI);
        assert_eq!(
            lookup(&p),
            Some((Const::f32(std::f32::consts::PI), Scalar::F32))
        );
        let p: syn::Path = syn::parse_quote!(usize::MAX);
        assert_eq!(lookup(&p), Some((Const::U32(u32::MAX), Scalar::Usize)));
        let p: syn::Path = syn::parse_quote!(foo::consts::PI);
        assert_eq!(lookup(&p), None);
    }
}
