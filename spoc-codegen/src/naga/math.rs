//! Math functions with Rust's semantics, `as` casts, and the generated math routines (`powf`,
//! `powi`, `hypot`).

use super::expr::{float_lit, int_lit};
use super::func::{Fb, R};
use super::types::unsigned_of;
use crate::Target;
use naga::{
    BinaryOperator as Bo, Expression, Handle, Literal, MathFunction as Mf, ScalarKind, Span,
    Statement,
};
use spoc_ir::{Expr, MathFn, ScalarType, Type};

type H = Handle<Expression>;

/// `log10(2)`, for `log10(x) = log2(x) * log10(2)`.
const LOG10_2: f64 = std::f64::consts::LOG10_2;

/// True for the functions GLSL.std.450 defines on 32-bit floats only.
fn transcendental(m: MathFn) -> bool {
    use MathFn::*;
    matches!(
        m,
        Exp | Exp2
            | Ln
            | Log2
            | Log10
            | Sin
            | Cos
            | Tan
            | Asin
            | Acos
            | Atan
            | Sinh
            | Cosh
            | Tanh
            | Atan2
            | Powf
    )
}

impl Fb<'_, '_> {
    /// `fun(args…)`.
    pub fn m(&mut self, fun: Mf, args: &[H]) -> H {
        self.emit(Expression::Math {
            fun,
            arg: args[0],
            arg1: args.get(1).copied(),
            arg2: args.get(2).copied(),
            arg3: args.get(3).copied(),
        })
    }

    fn flit(&mut self, st: ScalarType, v: f64) -> H {
        self.lit(float_lit(st, v))
    }

    fn bitcast(&mut self, v: H, kind: ScalarKind) -> H {
        self.emit_as(v, kind, None)
    }

    /// A math intrinsic with Rust's semantics (module doc).
    pub fn math(&mut self, m: MathFn, args: &[Expr], ty: &Type) -> R<H> {
        let st = self.scalar_of(ty)?;
        if st == ScalarType::F64
            && transcendental(m)
            && matches!(self.g.target, Target::Vulkan | Target::Glsl)
        {
            return Err(self.g.unsupported(
                &format!("`f64::{}`", m.name()),
                "a 64-bit transcendental (GLSL.std.450 defines it for 32-bit floats only)",
            ));
        }
        let mut a = Vec::with_capacity(args.len());
        for e in args {
            a.push(self.expr(e)?);
        }
        let float = st.is_float();
        let r = self.math_raw(m, st, &a)?;
        Ok(if float {
            self.fix_domain(m, st, &a, r)
        } else {
            r
        })
    }

    /// The math function before [`Fb::fix_domain`].
    fn math_raw(&mut self, m: MathFn, st: ScalarType, a: &[H]) -> R<H> {
        let a = a.to_vec();
        let float = st.is_float();
        Ok(match m {
            MathFn::Sqrt if self.exact_routines(st) => self.routine_call("sqrt", st, &a)?,
            MathFn::Sqrt => self.m(Mf::Sqrt, &a),
            MathFn::Rsqrt => self.m(Mf::InverseSqrt, &a),
            MathFn::Recip => {
                let one = self.flit(st, 1.0);
                self.float_div(st, one, a[0])?
            }
            MathFn::Abs if !float && !st.is_signed() => a[0],
            MathFn::Abs if !float => self.wrapping_abs(st, a[0]),
            MathFn::Abs => self.m(Mf::Abs, &a),
            MathFn::Floor => self.m(Mf::Floor, &a),
            MathFn::Ceil => self.m(Mf::Ceil, &a),
            MathFn::Trunc => self.m(Mf::Trunc, &a),
            MathFn::Round => self.round(st, a[0]),
            MathFn::Exp => self.m(Mf::Exp, &a),
            MathFn::Exp2 => self.m(Mf::Exp2, &a),
            MathFn::Ln => self.m(Mf::Log, &a),
            MathFn::Log2 => self.m(Mf::Log2, &a),
            MathFn::Log10 => {
                let l = self.m(Mf::Log2, &a);
                let k = self.flit(st, LOG10_2);
                self.bin(Bo::Multiply, l, k)
            }
            MathFn::Sin => self.m(Mf::Sin, &a),
            MathFn::Cos => self.m(Mf::Cos, &a),
            MathFn::Tan => self.m(Mf::Tan, &a),
            MathFn::Asin => self.m(Mf::Asin, &a),
            MathFn::Acos => self.m(Mf::Acos, &a),
            MathFn::Atan => self.m(Mf::Atan, &a),
            MathFn::Sinh => self.m(Mf::Sinh, &a),
            MathFn::Cosh => self.m(Mf::Cosh, &a),
            MathFn::Tanh => self.m(Mf::Tanh, &a),
            MathFn::Signum => {
                // ±1 with x's sign (signum(-0.0) == -1.0), NaN for NaN.
                let one = self.flit(st, 1.0);
                let s = self.copysign(st, one, a[0])?;
                let nan = self.is_nan_bits(st, a[0]);
                self.sel(nan, a[0], s)
            }
            MathFn::Min | MathFn::Max => {
                let fun = if m == MathFn::Min { Mf::Min } else { Mf::Max };
                let r = self.m(fun, &a);
                if float {
                    // NaN operands: the other one (Rust's min/max), not SPIR-V's undefined choice.
                    let a_nan = self.is_nan_bits(st, a[0]);
                    let r = self.sel(a_nan, a[1], r);
                    let b_nan = self.is_nan_bits(st, a[1]);
                    self.sel(b_nan, a[0], r)
                } else {
                    r
                }
            }
            MathFn::Powf => self.routine_call("powf", st, &a)?,
            MathFn::Powi => self.routine_call("powi", st, &a)?,
            MathFn::Hypot => self.routine_call("hypot", st, &a)?,
            MathFn::Atan2 => self.routine_call("atan2", st, &a)?,
            MathFn::Copysign => self.copysign(st, a[0], a[1])?,
            MathFn::MulAdd if st == ScalarType::F32 && self.soft_fma_f32() => {
                self.fma_f32_via_f64(a[0], a[1], a[2])
            }
            MathFn::MulAdd => self.m(Mf::Fma, &a),
        })
    }

    /// Rust's results where SPIR-V/GLSL leave a function undefined or loose: NaN in, NaN out;
    /// `sqrt`/`ln` of negatives NaN, `ln(±0) = -inf`, `rsqrt(±0) = ±inf`; trigonometry of ±inf
    /// NaN; `asin`/`acos` outside [-1, 1] NaN; `tanh` of large arguments ±1; `floor`, `ceil`,
    /// `trunc` and `round` keep the argument's sign (also on a zero result).
    fn fix_domain(&mut self, m: MathFn, st: ScalarType, a: &[H], r: H) -> H {
        use MathFn::*;
        let x = a[0];
        match m {
            Rsqrt => {
                let zero = self.flit(st, 0.0);
                let neg = self.bin(Bo::Less, x, zero);
                let nan = self.nan(st);
                let r = self.sel(neg, nan, r);
                let is0 = self.bin(Bo::Equal, x, zero);
                let inf = self.inf(st);
                let sinf = self.copysign_unchecked(st, inf, x);
                self.sel(is0, sinf, r)
            }
            Ln | Log2 | Log10 => {
                let zero = self.flit(st, 0.0);
                let neg = self.bin(Bo::Less, x, zero);
                let isn = self.is_nan_bits(st, x);
                let bad = self.bin(Bo::LogicalOr, neg, isn);
                let nan = self.nan(st);
                let r = self.sel(bad, nan, r);
                let is0 = self.bin(Bo::Equal, x, zero);
                let inf = self.inf(st);
                let ninf = self.emit(Expression::Unary {
                    op: naga::UnaryOperator::Negate,
                    expr: inf,
                });
                self.sel(is0, ninf, r)
            }
            Sin | Cos | Tan => {
                // NaN for NaN and ±inf: `!(|x| < inf)`.
                let ax = self.m(Mf::Abs, &[x]);
                let inf = self.inf(st);
                let fin = self.bin(Bo::Less, ax, inf);
                let nan = self.nan(st);
                self.sel(fin, r, nan)
            }
            Asin | Acos => {
                let ax = self.m(Mf::Abs, &[x]);
                let one = self.flit(st, 1.0);
                let ok = self.bin(Bo::LessEqual, ax, one);
                let nan = self.nan(st);
                self.sel(ok, r, nan)
            }
            Tanh => {
                let ax = self.m(Mf::Abs, &[x]);
                let big = self.flit(st, 20.0);
                let sat = self.bin(Bo::GreaterEqual, ax, big);
                let one = self.flit(st, 1.0);
                let s = self.copysign_unchecked(st, one, x);
                let r = self.sel(sat, s, r);
                let isn = self.is_nan_bits(st, x);
                self.sel(isn, x, r)
            }
            Exp | Exp2 | Atan | Sinh | Cosh => {
                let isn = self.is_nan_bits(st, x);
                self.sel(isn, x, r)
            }
            // The result of every rounding function has the sign of its argument (IEEE 754
            // §5.9; `(-0.3f64).ceil()` is -0.0). Drivers that implement them through
            // `x + 2^52 - 2^52` (lavapipe without SSE4.1's `roundsd`) lose the sign of a zero
            // result, so it is copied back with integer operations, which no driver folds.
            Floor | Ceil | Trunc | Round => self.copysign_unchecked(st, r, x),
            _ => r,
        }
    }

    /// Half-away-from-zero rounding: `trunc(x) + sign(x)` when `|x - trunc(x)| >= 0.5`
    /// (`x - trunc(x)` is exact).
    fn round(&mut self, st: ScalarType, x: H) -> H {
        let t = self.m(Mf::Trunc, &[x]);
        let d = self.bin(Bo::Subtract, x, t);
        let ad = self.m(Mf::Abs, &[d]);
        let half = self.flit(st, 0.5);
        let up = self.bin(Bo::GreaterEqual, ad, half);
        let one = self.flit(st, 1.0);
        let s = self.copysign_unchecked(st, one, x);
        let away = self.bin(Bo::Add, t, s);
        self.sel(up, away, t)
    }

    /// [`Fb::copysign`] where a failed 64-bit check cannot happen (f64 sign bits: `f64` needs
    /// fp64, and every target with fp64 has 64-bit integers; otherwise `-|mag|` by comparison).
    fn copysign_unchecked(&mut self, st: ScalarType, mag: H, sign: H) -> H {
        match self.copysign(st, mag, sign) {
            Ok(h) => h,
            Err(_) => {
                let zero = self.flit(st, 0.0);
                let neg = self.bin(Bo::Less, sign, zero);
                let am = self.m(Mf::Abs, &[mag]);
                let nm = self.emit(Expression::Unary {
                    op: naga::UnaryOperator::Negate,
                    expr: am,
                });
                self.sel(neg, nm, am)
            }
        }
    }

    /// True if `f32` `mul_add` is to be computed in `f64` ([`Fb::fma_f32_via_f64`]): the
    /// device's `Fma` rounds twice and the target has `f64` and 64-bit integers.
    fn soft_fma_f32(&self) -> bool {
        use naga::valid::Capabilities as C;
        self.g.unfused_fma_f32
            && self.g.target == Target::Vulkan
            && self.g.allowed.contains(C::FLOAT64 | C::SHADER_INT64)
    }

    /// `a * b + c` on `f32` with one rounding, on a device whose `Fma` rounds twice: the product
    /// of the widened operands is exact in `f64` (24 + 24 bits), the sum is rounded to odd (its
    /// round-to-nearest `s` with the error `e` of Knuth's TwoSum; an inexact `s` with an even
    /// last bit moves one ulp towards the exact sum), and the `f64` → `f32` conversion rounds
    /// once more to nearest. Rounding to odd with 53 ≥ 24 + 2 bits then to nearest gives the
    /// correctly rounded sum (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
    /// proved algorithms using rounding to odd", IEEE TC 2008), subnormal results included.
    /// NaN and infinities pass through `s` (whose error term is then not used).
    fn fma_f32_via_f64(&mut self, a: H, b: H, c: H) -> H {
        let wide = |fb: &mut Self, x: H| fb.emit_as(x, ScalarKind::Float, Some(8));
        let (a, b, c) = (wide(self, a), wide(self, b), wide(self, c));
        let p = self.bin(Bo::Multiply, a, b);
        let s = self.bin(Bo::Add, p, c);
        let bb = self.bin(Bo::Subtract, s, p);
        let sb = self.bin(Bo::Subtract, s, bb);
        let e1 = self.bin(Bo::Subtract, p, sb);
        let e2 = self.bin(Bo::Subtract, c, bb);
        let e = self.bin(Bo::Add, e1, e2);
        let zero = self.flit(ScalarType::F64, 0.0);
        let exact = self.bin(Bo::Equal, e, zero);
        let inexact = self.not(exact);
        let abs = self.m(Mf::Abs, &[s]);
        let inf = self.inf(ScalarType::F64);
        let finite = self.bin(Bo::Less, abs, inf);
        let bits = self.bitcast(s, ScalarKind::Uint);
        let ebits = self.bitcast(e, ScalarKind::Uint);
        let one = self.lit(Literal::U64(1));
        let low = self.bin(Bo::And, bits, one);
        let z64 = self.lit(Literal::U64(0));
        let even = self.bin(Bo::Equal, low, z64);
        let signs = self.bin(Bo::ExclusiveOr, bits, ebits);
        let top = self.lit(Literal::U32(63));
        let differ = self.bin(Bo::ShiftRight, signs, top);
        let same = self.bin(Bo::Equal, differ, z64);
        let up = self.bin(Bo::Add, bits, one);
        let down = self.bin(Bo::Subtract, bits, one);
        let toward = self.sel(same, up, down);
        let odd = self.bin(Bo::LogicalAnd, inexact, even);
        let adjust = self.bin(Bo::LogicalAnd, odd, finite);
        let r = self.sel(adjust, toward, bits);
        let r = self.bitcast(r, ScalarKind::Float);
        self.emit_as(r, ScalarKind::Float, Some(4))
    }

    /// Rust's `wrapping_abs` of signed `x` (`abs(MIN) == MIN`), on the bits: `s = 0 - (u >> (N -
    /// 1))` is all ones for a negative `x`, and `(u ^ s) - s` its negation, every step an
    /// unsigned operation that wraps (SPIR-V `OpISub`, `OpShiftRightLogical`). GLSL.std.450
    /// `SAbs` is not used: its result for `MIN` is not specified, and NVIDIA's Vulkan driver
    /// folded `x.abs() >= 0` to true for `i32::MIN` and `i64::MIN`.
    pub fn wrapping_abs(&mut self, st: ScalarType, x: H) -> H {
        let ut = unsigned_of(st);
        let top = st.size_bytes() as u32 * 8 - 1;
        let u = self.bitcast(x, ScalarKind::Uint);
        let sh = self.lit(Literal::U32(top));
        let neg = self.bin(Bo::ShiftRight, u, sh);
        let zero = self.lit(int_lit(ut, 0));
        let mask = self.bin(Bo::Subtract, zero, neg);
        let flipped = self.bin(Bo::ExclusiveOr, u, mask);
        let r = self.bin(Bo::Subtract, flipped, mask);
        self.bitcast(r, ScalarKind::Sint)
    }

    /// `mag` with the sign bit of `sign`.
    fn copysign(&mut self, st: ScalarType, mag: H, sign: H) -> R<H> {
        let ut = unsigned_of(st);
        self.g.check_scalar(ut)?;
        let bits = st.size_bytes() as u32 * 8;
        let sign_bit: i128 = 1i128 << (bits - 1);
        let m = self.bitcast(mag, ScalarKind::Uint);
        let s = self.bitcast(sign, ScalarKind::Uint);
        let keep = self.lit(int_lit(ut, sign_bit - 1));
        let sb = self.lit(int_lit(ut, sign_bit));
        let m = self.bin(Bo::And, m, keep);
        let s = self.bin(Bo::And, s, sb);
        let r = self.bin(Bo::InclusiveOr, m, s);
        Ok(self.bitcast(r, ScalarKind::Float))
    }

    /// `value as to` with Rust's semantics.
    pub fn cast(&mut self, v: H, from: ScalarType, to: ScalarType) -> R<H> {
        if from == to {
            return Ok(v);
        }
        self.g.check_scalar(to)?;
        let width = |s: ScalarType| s.size_bytes() as u8;
        let kind = super::build::Gen::kind;
        Ok(if from == ScalarType::Bool {
            let one = self.lit(int_lit(to, 1));
            let zero = self.lit(int_lit(to, 0));
            self.sel(v, one, zero)
        } else if from.is_float() && to.is_integer() {
            self.float_to_int(v, from, to)
        } else if from.is_float() || to.is_float() {
            // An integer the driver could know (a literal, `p ^ p`) must not become a float
            // constant it folds with (difftest/FINDINGS.md K2).
            let v = self.hide_int(v, from);
            self.emit_as(v, ScalarKind::Float, Some(width(to)))
        } else if width(from) == width(to) {
            self.bitcast(v, kind(to))
        } else if from == ScalarType::I32 {
            self.sign_extend_i32(v, to)
        } else {
            // Extend (or truncate) by the source's signedness, then reinterpret.
            let w = self.emit_as(v, kind(from), Some(width(to)));
            if kind(from) == kind(to) {
                w
            } else {
                self.bitcast(w, kind(to))
            }
        })
    }

    /// `v as to` for `i32` `v` and a 64-bit `to`: the bits zero-extended, then `(w ^ 2^31) -
    /// 2^31`, which is the sign extension on 64 bits. SPIR-V's `OpSConvert` is not used:
    /// lavapipe (Mesa 22.3) ordered its results as if they were zero-extended (`(-2i32 as i64)
    /// < 0` false, `0i64 < (0i32 as i64)` true; difftest/FINDINGS.md F4), equality being right.
    fn sign_extend_i32(&mut self, v: H, to: ScalarType) -> H {
        let u = self.bitcast(v, ScalarKind::Uint);
        let w = self.emit_as(u, ScalarKind::Uint, Some(8));
        let bias = self.lit(Literal::U64(1 << 31));
        let flipped = self.bin(Bo::ExclusiveOr, w, bias);
        let r = self.bin(Bo::Subtract, flipped, bias);
        if to.is_signed() {
            self.bitcast(r, ScalarKind::Sint)
        } else {
            r
        }
    }

    /// Saturating float → integer conversion, NaN → 0 (`clamp` first: SPIR-V's conversion is
    /// undefined out of range).
    fn float_to_int(&mut self, v: H, from: ScalarType, to: ScalarType) -> H {
        let (v, from) = if from == ScalarType::F16 {
            let w = self.emit_as(v, ScalarKind::Float, Some(4));
            (w, ScalarType::F32)
        } else {
            (v, from)
        };
        let bits = to.size_bytes() as i32 * 8;
        let k = if to.is_signed() { bits - 1 } else { bits };
        let mant = if from == ScalarType::F32 { 24 } else { 53 };
        let hi = if k <= mant {
            2f64.powi(k) - 1.0
        } else {
            2f64.powi(k) - 2f64.powi(k - mant)
        };
        let lo = if to.is_signed() { -(2f64.powi(k)) } else { 0.0 };
        let nan = self.is_nan_bits(from, v);
        let zero = self.flit(from, 0.0);
        let v0 = self.sel(nan, zero, v);
        let lo = self.flit(from, lo);
        let hi = self.flit(from, hi);
        let c = self.m(Mf::Clamp, &[v0, lo, hi]);
        let r = if from == ScalarType::F32 && to.size_bytes() == 8 {
            self.f32_to_wide_int(c, to)
        } else {
            self.emit_as(c, super::build::Gen::kind(to), Some(to.size_bytes() as u8))
        };
        // `hi` is the largest float below 2^k; from 2^k up the result is the type's MAX.
        let limit = self.flit(from, 2f64.powi(k));
        let over = self.bin(Bo::GreaterEqual, v, limit);
        let max: i128 = (1i128 << k) - 1;
        let max = self.lit(int_lit(to, max));
        self.sel(over, max, r)
    }

    /// `c as u64` / `c as i64` for an `f32` `c` already clamped into the target's range, put
    /// together from two 32-bit conversions rather than one `OpConvertFToU`/`OpConvertFToS` to
    /// 64 bits: NVIDIA's Vulkan driver (580; seen on the H100 and the H200) turns a 64-bit
    /// conversion whose result is only used narrowed (`(x as u64) as u32`) into a saturating
    /// 32-bit conversion, `u32::MAX` instead of the low word for `3.3e18`
    /// (difftest/FINDINGS.md F12; from `f64` it was right). Exact: from 2^32 up an `f32` is a
    /// multiple of 2^9, so the low part `|c| - floor(|c| / 2^32) · 2^32` is an `f32` below
    /// 2^32 with no rounding, and below 2^32 the high part is 0.
    fn f32_to_wide_int(&mut self, c: H, to: ScalarType) -> H {
        let f32 = ScalarType::F32;
        let m = if to.is_signed() {
            self.m(Mf::Abs, &[c])
        } else {
            c
        };
        let down = self.flit(f32, 2f64.powi(-32));
        let scaled = self.bin(Bo::Multiply, m, down);
        let high = self.m(Mf::Floor, &[scaled]);
        let up = self.flit(f32, 2f64.powi(32));
        let high_part = self.bin(Bo::Multiply, high, up);
        let low = self.bin(Bo::Subtract, m, high_part);
        let [high, low] = [high, low].map(|f| {
            let w = self.emit_as(f, ScalarKind::Uint, Some(4));
            self.emit_as(w, ScalarKind::Uint, Some(8))
        });
        let shift = self.lit(Literal::U32(32));
        let high = self.bin(Bo::ShiftLeft, high, shift);
        let u = self.bin(Bo::InclusiveOr, high, low);
        if !to.is_signed() {
            return u;
        }
        // Negative: `0 - u` on the bits (wrapping: -2^63 comes back as i64::MIN).
        let zero = self.lit(Literal::U64(0));
        let negated = self.bin(Bo::Subtract, zero, u);
        let fzero = self.flit(f32, 0.0);
        let negative = self.bin(Bo::Less, c, fzero);
        let r = self.sel(negative, negated, u);
        self.emit_as(r, ScalarKind::Sint, None)
    }

    /// `x / y` on floats, correctly rounded (a generated routine: Vulkan, WGSL and GLSL allow
    /// 2.5 ULP, and NVIDIA's Vulkan driver is 1 ULP off on a quarter of random inputs).
    pub fn float_div(&mut self, st: ScalarType, x: H, y: H) -> R<H> {
        if !self.exact_routines(st) {
            return Ok(self.bin(Bo::Divide, x, y));
        }
        self.routine_call("div", st, &[x, y])
    }

    /// `x % y` on floats: Rust's exact `fmod` (a generated routine; the targets' own remainders
    /// are `x - y * trunc(x / y)`, which rounds).
    pub fn float_rem(&mut self, st: ScalarType, x: H, y: H) -> R<H> {
        if !self.exact_routines(st) {
            return Ok(self.bin(Bo::Modulo, x, y));
        }
        self.routine_call("fmod", st, &[x, y])
    }

    /// Calls generated routine `name` for float type `st`.
    fn routine_call(&mut self, name: &'static str, st: ScalarType, args: &[H]) -> R<H> {
        let function = self.g.routine(name, st)?;
        let result = self.emit(Expression::CallResult(function));
        self.stmt(Statement::Call {
            function,
            arguments: args.to_vec(),
            result: Some(result),
        });
        Ok(result)
    }
}

impl super::build::Gen<'_> {
    /// The naga function of math routine `name` (`powf`, `powi`, `hypot`) for float type `st`,
    /// generated on first use.
    pub(super) fn routine(
        &mut self,
        name: &'static str,
        st: ScalarType,
    ) -> R<Handle<naga::Function>> {
        if let Some(h) = self.routines.get(&(name, st)) {
            return Ok(*h);
        }
        let fty = self.scalar_ty(st)?;
        let ity = self.scalar_ty(ScalarType::I32)?;
        if st == ScalarType::F64 && matches!(name, "div" | "sqrt" | "fmod") {
            // frexp of an f64 yields an i64 exponent.
            self.check_scalar(ScalarType::I64)?;
        }
        let second = if name == "powi" { ity } else { fty };
        let mut fb = Fb::new(self, &[], Vec::new());
        let x = fb.emit(Expression::FunctionArgument(0));
        let y = if name == "sqrt" {
            x
        } else {
            fb.emit(Expression::FunctionArgument(1))
        };
        match name {
            "powf" => fb.powf_body(st, x, y)?,
            "atan2" => fb.atan2_body(st, x, y)?,
            "fmod" => fb.fmod_body(st, x, y)?,
            "div" => fb.div_body(st, x, y)?,
            "sqrt" => fb.sqrt_body(st, x)?,
            "powi" => fb.powi_body(st, x, y)?,
            _ => fb.hypot_body(st, x, y)?,
        }
        let mut function = fb.finish()?;
        function.name = Some(format!("spoc_{name}_{st}"));
        function.arguments = vec![naga::FunctionArgument {
            name: Some("x".into()),
            ty: fty,
            binding: None,
        }];
        if name != "sqrt" {
            function.arguments.push(naga::FunctionArgument {
                name: Some(if name == "powi" { "n" } else { "y" }.into()),
                ty: second,
                binding: None,
            });
        }
        function.result = Some(naga::FunctionResult {
            ty: fty,
            binding: None,
        });
        let h = self.module.functions.append(function, Span::UNDEFINED);
        self.routines.insert((name, st), h);
        Ok(h)
    }
}

impl Fb<'_, '_> {
    fn ret(&mut self, v: H) {
        self.stmt(Statement::Return { value: Some(v) });
    }

    /// `a.is_nan() || b.is_nan()` (`a` tested first).
    fn either_nan(&mut self, st: ScalarType, a: H, b: H) -> H {
        let an = self.is_nan_bits(st, a);
        let bn = self.is_nan_bits(st, b);
        self.bin(Bo::LogicalOr, an, bn)
    }

    fn nan(&mut self, st: ScalarType) -> H {
        let bits = self.f32_bits(f32::NAN.to_bits());
        if st == ScalarType::F64 {
            self.emit_as(bits, ScalarKind::Float, Some(8))
        } else {
            bits
        }
    }

    fn inf(&mut self, st: ScalarType) -> H {
        let bits = self.f32_bits(f32::INFINITY.to_bits());
        if st == ScalarType::F64 {
            self.emit_as(bits, ScalarKind::Float, Some(8))
        } else {
            bits
        }
    }

    /// `pow(x, y)` as IEEE/Rust define it, from `Pow(|x|, y)` (undefined for negative bases).
    fn powf_body(&mut self, st: ScalarType, x: H, y: H) -> R<()> {
        let zero = self.flit(st, 0.0);
        let one = self.flit(st, 1.0);
        let half = self.flit(st, 0.5);
        let inf = self.inf(st);
        let nan = self.nan(st);
        let a = self.m(Mf::Abs, &[x]);
        let r = self.m(Mf::Pow, &[a, y]);
        // |x| == 0: +inf for y < 0, 0 for y > 0.
        let y_neg = self.bin(Bo::Less, y, zero);
        let at_zero = self.sel(y_neg, inf, zero);
        let a_zero = self.bin(Bo::Equal, a, zero);
        let r = self.sel(a_zero, at_zero, r);
        // |x| == 1: 1 (also for y = ±inf).
        let a_one = self.bin(Bo::Equal, a, one);
        let r = self.sel(a_one, one, r);
        // Negative base: odd integer y flips the sign; a non-integer y gives NaN (finite x).
        let ty = self.m(Mf::Trunc, &[y]);
        let y_int = self.bin(Bo::Equal, ty, y);
        let hy = self.bin(Bo::Multiply, y, half);
        let thy = self.m(Mf::Trunc, &[hy]);
        let hy_frac = self.bin(Bo::Equal, thy, hy);
        let hy_frac = self.not(hy_frac);
        let odd = self.bin(Bo::LogicalAnd, y_int, hy_frac);
        let sx = self.copysign(st, one, x)?;
        let x_signed = self.bin(Bo::Less, sx, zero);
        let flip = self.bin(Bo::LogicalAnd, x_signed, odd);
        let neg_r = self.emit(Expression::Unary {
            op: naga::UnaryOperator::Negate,
            expr: r,
        });
        let r = self.sel(flip, neg_r, r);
        let x_neg = self.bin(Bo::Less, x, zero);
        let not_int = self.not(y_int);
        let finite = self.bin(Bo::Less, a, inf);
        let bad = self.bin(Bo::LogicalAnd, x_neg, not_int);
        let bad = self.bin(Bo::LogicalAnd, bad, finite);
        let r = self.sel(bad, nan, r);
        let any_nan = self.either_nan(st, x, y);
        let r = self.sel(any_nan, nan, r);
        // pow(x, 0) == 1 and pow(1, y) == 1, even for NaN.
        let y0 = self.bin(Bo::Equal, y, zero);
        let x1 = self.bin(Bo::Equal, x, one);
        let unit = self.bin(Bo::LogicalOr, y0, x1);
        let r = self.sel(unit, one, r);
        self.ret(r);
        Ok(())
    }

    /// `x.powi(n)` by repeated squaring, as compiler-rt's `__powisf2`/`__powidf2`.
    fn powi_body(&mut self, st: ScalarType, x: H, n: H) -> R<()> {
        let fty = self.g.scalar_ty(st)?;
        let ity = self.g.scalar_ty(ScalarType::I32)?;
        let av = self.new_local("a", fty);
        let bv = self.new_local("b", ity);
        let rv = self.new_local("r", fty);
        let (ap, bp, rp) = (self.local_ptr(av), self.local_ptr(bv), self.local_ptr(rv));
        self.store(ap, x);
        self.store(bp, n);
        let one = self.flit(st, 1.0);
        self.store(rp, one);
        self.open();
        let b = self.load(bp);
        let i1 = self.lit(Literal::I32(1));
        let i0 = self.lit(Literal::I32(0));
        let i2 = self.lit(Literal::I32(2));
        let low = self.bin(Bo::And, b, i1);
        let odd = self.bin(Bo::NotEqual, low, i0);
        self.open();
        let r = self.load(rp);
        let a = self.load(ap);
        let ra = self.bin(Bo::Multiply, r, a);
        self.store(rp, ra);
        let mul = self.close();
        self.if_stmt(odd, mul, naga::Block::new());
        let half = self.bin(Bo::Divide, b, i2);
        self.store(bp, half);
        let done = self.bin(Bo::Equal, half, i0);
        let brk = naga::Block::from_vec(vec![Statement::Break]);
        self.if_stmt(done, brk, naga::Block::new());
        let a = self.load(ap);
        let aa = self.bin(Bo::Multiply, a, a);
        self.store(ap, aa);
        let body = self.close();
        self.stmt(Statement::Loop {
            body,
            continuing: naga::Block::new(),
            break_if: None,
        });
        let r = self.load(rp);
        let recip = self.bin(Bo::Less, n, i0);
        let inv = self.bin(Bo::Divide, one, r);
        let out = self.sel(recip, inv, r);
        self.ret(out);
        Ok(())
    }

    /// The mantissa (in [0.5, 1), with `v`'s sign) and exponent (`i32`) of finite nonzero `v`,
    /// from its bits (naga's `frexp` of an f64 yields an i64 exponent, which SPIR-V's
    /// `FrexpStruct` rejects). Subnormals are first scaled by 2^32 (f32) or 2^64 (f64).
    fn frexp(&mut self, st: ScalarType, v: H) -> (H, H) {
        let ut = unsigned_of(st);
        let (mant, half_bias, mask, shift): (u32, i128, i128, i32) = if st == ScalarType::F64 {
            (52, 1022, 0x7ff, 64)
        } else {
            (23, 126, 0xff, 32)
        };
        let mask_l = self.lit(int_lit(ut, mask));
        let sh = self.lit(Literal::U32(mant));
        let bits = self.bitcast(v, ScalarKind::Uint);
        let field = self.bin(Bo::ShiftRight, bits, sh);
        let field = self.bin(Bo::And, field, mask_l);
        let zero_u = self.lit(int_lit(ut, 0));
        let is_sub = self.bin(Bo::Equal, field, zero_u);
        let scale = self.flit(st, 2f64.powi(shift));
        let scaled = self.bin(Bo::Multiply, v, scale);
        let v2 = self.sel(is_sub, scaled, v);
        let bits2 = self.bitcast(v2, ScalarKind::Uint);
        let field2 = self.bin(Bo::ShiftRight, bits2, sh);
        let field2 = self.bin(Bo::And, field2, mask_l);
        let field_i = self.emit_as(field2, ScalarKind::Sint, Some(4));
        let hb = self.lit(Literal::I32(half_bias as i32));
        let e = self.bin(Bo::Subtract, field_i, hb);
        let adj = self.lit(Literal::I32(shift));
        let zero_i = self.lit(Literal::I32(0));
        let adj = self.sel(is_sub, adj, zero_i);
        let e = self.bin(Bo::Subtract, e, adj);
        let clear = self.lit(int_lit(ut, !(mask << mant)));
        let set = self.lit(int_lit(ut, half_bias << mant));
        let m = self.bin(Bo::And, bits2, clear);
        let m = self.bin(Bo::InclusiveOr, m, set);
        let m = self.bitcast(m, ScalarKind::Float);
        (m, e)
    }

    /// True when the exact `/`, `sqrt` and `%` routines can be generated for `st` (they work
    /// on the bits; f64 needs 64-bit integers, which naga's GLSL lacks).
    fn exact_routines(&self, st: ScalarType) -> bool {
        st != ScalarType::F64
            || self
                .g
                .allowed
                .contains(naga::valid::Capabilities::SHADER_INT64)
    }

    /// Veltkamp's split of `v` into a high and a low half (each product of halves is exact).
    fn split(&mut self, st: ScalarType, v: H) -> (H, H) {
        let c = self.flit(
            st,
            if st == ScalarType::F64 {
                134_217_729.0 // 2^27 + 1
            } else {
                4097.0 // 2^12 + 1
            },
        );
        let t = self.bin(Bo::Multiply, c, v);
        let d = self.bin(Bo::Subtract, t, v);
        let hi = self.bin(Bo::Subtract, t, d);
        let lo = self.bin(Bo::Subtract, v, hi);
        (hi, lo)
    }

    /// `a - c * b`, exactly when the result is representable (`c * b` close to `a`), else
    /// rounded once (its sign exact): Dekker's product `c * b = p + e` without `fma` (Vulkan
    /// may leave `Fma` unfused, as lavapipe does), then `(a - p) - e` with `a - p` exact by
    /// Sterbenz's lemma. Every operation is correctly rounded and never contracted.
    fn exact_rem(&mut self, st: ScalarType, a: H, c: H, b: H) -> H {
        let p = self.bin(Bo::Multiply, c, b);
        let (ch, cl) = self.split(st, c);
        let (bh, bl) = self.split(st, b);
        let hh = self.bin(Bo::Multiply, ch, bh);
        let e = self.bin(Bo::Subtract, hh, p);
        let hl = self.bin(Bo::Multiply, ch, bl);
        let e = self.bin(Bo::Add, e, hl);
        let lh = self.bin(Bo::Multiply, cl, bh);
        let e = self.bin(Bo::Add, e, lh);
        let ll = self.bin(Bo::Multiply, cl, bl);
        let e = self.bin(Bo::Add, e, ll);
        let d = self.bin(Bo::Subtract, a, p);
        self.bin(Bo::Subtract, d, e)
    }

    /// The ULP of positive normal `v` and the (half as large at a power of two) ULP below it.
    fn ulps(&mut self, st: ScalarType, v: H) -> (H, H) {
        let p = if st == ScalarType::F64 { 53 } else { 24 };
        let (m, e) = self.frexp(st, v);
        let pl = self.lit(Literal::I32(p));
        let ue = self.bin(Bo::Subtract, e, pl);
        let one = self.flit(st, 1.0);
        let ulp = self.m(Mf::Ldexp, &[one, ue]);
        let half = self.flit(st, 0.5);
        let at_pow2 = self.bin(Bo::Equal, m, half);
        let half_ulp = self.bin(Bo::Multiply, ulp, half);
        let ulp_dn = self.sel(at_pow2, half_ulp, ulp);
        (ulp, ulp_dn)
    }

    /// Correctly rounded `x / y`. Special operands (zeros, infinities, NaN) get IEEE's results
    /// directly. Otherwise both are scaled to [0.5, 1) (exactly, from their bits): `A / B`.
    /// The hardware quotient `Q` is refined by one Newton step with the exact remainder
    /// `r = A - Q*B` ([`Fb::exact_rem`]); `Q` is then faithful, so its remainder is exactly
    /// representable, and `Q` is moved up one ULP when `r > ulp*B/2` (the midpoint above lies
    /// below `A/B`), down when `r < -ulp_below*B/2` (a quotient is never exactly a midpoint).
    /// The result is `Q * 2^(ea - eb)` with the sign of `x * y`, a subnormal one rounded from
    /// `A/B` directly ([`Fb::subnormal_quotient`]).
    fn div_body(&mut self, st: ScalarType, x: H, y: H) -> R<()> {
        let zero = self.flit(st, 0.0);
        let one = self.flit(st, 1.0);
        let half = self.flit(st, 0.5);
        let inf = self.inf(st);
        let nan = self.nan(st);
        let ax = self.m(Mf::Abs, &[x]);
        let ay = self.m(Mf::Abs, &[y]);
        let sx = self.copysign_unchecked(st, one, x);
        let sy = self.copysign_unchecked(st, one, y);
        let sign = self.bin(Bo::Multiply, sx, sy);
        let x_fin = self.bin(Bo::Less, ax, inf);
        let y_fin = self.bin(Bo::Less, ay, inf);
        let x0 = self.bin(Bo::Equal, ax, zero);
        let y0 = self.bin(Bo::Equal, ay, zero);
        // Special operands: NaN for NaN, 0/0 and inf/inf; inf for inf/y and x/0; else 0.
        let both_fin = self.bin(Bo::LogicalAnd, x_fin, y_fin);
        let some_zero = self.bin(Bo::LogicalOr, x0, y0);
        let no_zero = self.not(some_zero);
        let regular = self.bin(Bo::LogicalAnd, both_fin, no_zero);
        self.open();
        {
            let xn = self.is_nan_bits(st, x);
            let yn = self.is_nan_bits(st, y);
            let zz = self.bin(Bo::LogicalAnd, x0, y0);
            let x_inf = self.not(x_fin);
            let y_inf = self.not(y_fin);
            let ii = self.bin(Bo::LogicalAnd, x_inf, y_inf);
            let n1 = self.bin(Bo::LogicalOr, xn, yn);
            let n2 = self.bin(Bo::LogicalOr, zz, ii);
            let is_nan = self.bin(Bo::LogicalOr, n1, n2);
            let big = self.bin(Bo::LogicalOr, x_inf, y0);
            let mag = self.sel(big, inf, zero);
            let signed = self.copysign_unchecked(st, mag, sign);
            let r = self.sel(is_nan, nan, signed);
            self.ret(r);
        }
        let special = self.close();
        self.if_stmt(regular, naga::Block::new(), special);
        let (a, ea) = self.frexp(st, ax);
        let (b, eb) = self.frexp(st, ay);
        let k = self.bin(Bo::Subtract, ea, eb);
        let q = self.bin(Bo::Divide, a, b);
        let rb = self.bin(Bo::Divide, one, b);
        let r = self.exact_rem(st, a, q, b);
        let step = self.bin(Bo::Multiply, r, rb);
        let q = self.bin(Bo::Add, q, step);
        let r = self.exact_rem(st, a, q, b);
        let (ulp, ulp_dn) = self.ulps(st, q);
        let ub = self.bin(Bo::Multiply, ulp, b);
        let hub = self.bin(Bo::Multiply, ub, half);
        let db = self.bin(Bo::Multiply, ulp_dn, b);
        let hdb = self.bin(Bo::Multiply, db, half);
        let nhdb = self.emit(Expression::Unary {
            op: naga::UnaryOperator::Negate,
            expr: hdb,
        });
        let go_up = self.bin(Bo::Greater, r, hub);
        let go_dn = self.bin(Bo::Less, r, nhdb);
        let up = self.bin(Bo::Add, q, ulp);
        let dn = self.bin(Bo::Subtract, q, ulp_dn);
        let q = self.sel(go_up, up, q);
        let q = self.sel(go_dn, dn, q);
        let q = self.subnormal_quotient(st, q, k, a, b);
        let q = self.m(Mf::Ldexp, &[q, k]);
        let r = self.bin(Bo::Multiply, q, sign);
        self.ret(r);
        Ok(())
    }

    /// When `q * 2^k` (`q = RN(A/B)`) falls below the normal range, `q` rounded instead to
    /// the subnormal grid `h = 2^(emin_sub - k)` straight from `A/B` (rounding `q` again would
    /// round twice): `c = floor(q/h) * h`, then `c + h` when `A/B` lies above the midpoint
    /// `c + h/2`, or on it with `c/h` odd (ties to even). `q` is kept otherwise.
    fn subnormal_quotient(&mut self, st: ScalarType, q: H, k: H, a: H, b: H) -> H {
        let (min_e, sub_e) = if st == ScalarType::F64 {
            (-1021, -1074)
        } else {
            (-125, -149)
        };
        let zero = self.flit(st, 0.0);
        let one = self.flit(st, 1.0);
        let half = self.flit(st, 0.5);
        let (_, qe) = self.frexp(st, q);
        let re = self.bin(Bo::Add, qe, k);
        let min_l = self.lit(Literal::I32(min_e));
        let sub = self.bin(Bo::Less, re, min_l);
        // hk = sub_e - k (only meaningful when `sub`; 0 otherwise keeps ldexp in range).
        let sub_l = self.lit(Literal::I32(sub_e));
        let hk = self.bin(Bo::Subtract, sub_l, k);
        let zero_i = self.lit(Literal::I32(0));
        let hk = self.sel(sub, hk, zero_i);
        let nhk = self.emit(Expression::Unary {
            op: naga::UnaryOperator::Negate,
            expr: hk,
        });
        let h = self.m(Mf::Ldexp, &[one, hk]);
        let scaled = self.m(Mf::Ldexp, &[q, nhk]);
        let n = self.m(Mf::Floor, &[scaled]);
        let c = self.m(Mf::Ldexp, &[n, hk]);
        let hh = self.bin(Bo::Multiply, h, half);
        let mid = self.bin(Bo::Add, c, hh);
        let rm = self.exact_rem(st, a, mid, b);
        let above = self.bin(Bo::Greater, rm, zero);
        let tie = self.bin(Bo::Equal, rm, zero);
        let hn = self.bin(Bo::Multiply, n, half);
        let fl = self.m(Mf::Floor, &[hn]);
        let odd = self.bin(Bo::NotEqual, fl, hn);
        let tie_up = self.bin(Bo::LogicalAnd, tie, odd);
        let pick_up = self.bin(Bo::LogicalOr, above, tie_up);
        let ch = self.bin(Bo::Add, c, h);
        let qs = self.sel(pick_up, ch, c);
        self.sel(sub, qs, q)
    }

    /// Correctly rounded `sqrt(x)`: NaN below zero, `x` for ±0, +inf and NaN. Otherwise
    /// `x = m * 2^e` with `e` even and `m` in [0.5, 2) (exact), the hardware root of `m` is
    /// refined by a Newton step and rounded by Tuckerman's test: with `s` faithful, the midpoint
    /// to the float above lies below the root exactly when `m - s * up > 0`, and the one below
    /// lies above it when `m - down * s < 0` (signs exact by [`Fb::exact_rem`]). The result is
    /// `s * 2^(e/2)`, never subnormal.
    fn sqrt_body(&mut self, st: ScalarType, x: H) -> R<()> {
        let zero = self.flit(st, 0.0);
        let inf = self.inf(st);
        let nan = self.nan(st);
        let neg = self.bin(Bo::Less, x, zero);
        self.open();
        self.ret(nan);
        let ret_nan = self.close();
        self.if_stmt(neg, ret_nan, naga::Block::new());
        let is0 = self.bin(Bo::Equal, x, zero);
        let fin = self.bin(Bo::Less, x, inf);
        let not0 = self.not(is0);
        let regular = self.bin(Bo::LogicalAnd, fin, not0);
        self.open();
        self.ret(x);
        let ret_x = self.close();
        self.if_stmt(regular, naga::Block::new(), ret_x);
        let (m, e) = self.frexp(st, x);
        let one_i = self.lit(Literal::I32(1));
        let odd = self.bin(Bo::And, e, one_i);
        let m2 = self.m(Mf::Ldexp, &[m, odd]);
        let e2 = self.bin(Bo::Subtract, e, odd);
        let two_i = self.lit(Literal::I32(2));
        let half_e = self.bin(Bo::Divide, e2, two_i);
        let s = self.m(Mf::Sqrt, &[m2]);
        let rs = self.m(Mf::InverseSqrt, &[m2]);
        let r = self.exact_rem(st, m2, s, s);
        let half = self.flit(st, 0.5);
        let hrs = self.bin(Bo::Multiply, rs, half);
        let step = self.bin(Bo::Multiply, r, hrs);
        let s = self.bin(Bo::Add, s, step);
        let (ulp, ulp_dn) = self.ulps(st, s);
        let up = self.bin(Bo::Add, s, ulp);
        let dn = self.bin(Bo::Subtract, s, ulp_dn);
        let r_up = self.exact_rem(st, m2, s, up);
        let r_dn = self.exact_rem(st, m2, dn, s);
        let go_up = self.bin(Bo::Greater, r_up, zero);
        let go_dn = self.bin(Bo::LessEqual, r_dn, zero);
        let s = self.sel(go_up, up, s);
        let s = self.sel(go_dn, dn, s);
        let r = self.m(Mf::Ldexp, &[s, half_e]);
        self.ret(r);
        Ok(())
    }

    /// `atan2(y, x)` (`y.atan2(x)` in Rust) with IEEE's special cases, which GLSL leaves
    /// undefined: both zero gives ±0 or ±π by the signs, both infinite ±π/4 or ±3π/4, NaN NaN.
    fn atan2_body(&mut self, st: ScalarType, y: H, x: H) -> R<()> {
        use std::f64::consts::{FRAC_PI_4, PI};
        let r = self.m(Mf::Atan2, &[y, x]);
        let zero = self.flit(st, 0.0);
        let one = self.flit(st, 1.0);
        let pi = self.flit(st, PI);
        let y0 = self.bin(Bo::Equal, y, zero);
        let x0 = self.bin(Bo::Equal, x, zero);
        let both0 = self.bin(Bo::LogicalAnd, y0, x0);
        let sx = self.copysign(st, one, x)?;
        let x_neg = self.bin(Bo::Less, sx, zero);
        let at0 = self.sel(x_neg, pi, zero);
        let at0 = self.copysign(st, at0, y)?;
        let r = self.sel(both0, at0, r);
        let inf = self.inf(st);
        let ay = self.m(Mf::Abs, &[y]);
        let ax = self.m(Mf::Abs, &[x]);
        let yi = self.bin(Bo::Equal, ay, inf);
        let xi = self.bin(Bo::Equal, ax, inf);
        let both_inf = self.bin(Bo::LogicalAnd, yi, xi);
        let q1 = self.flit(st, FRAC_PI_4);
        let q3 = self.flit(st, 3.0 * FRAC_PI_4);
        let x_pos = self.bin(Bo::Greater, x, zero);
        let ati = self.sel(x_pos, q1, q3);
        let ati = self.copysign(st, ati, y)?;
        let r = self.sel(both_inf, ati, r);
        let n = self.either_nan(st, y, x);
        let nan = self.nan(st);
        let r = self.sel(n, nan, r);
        self.ret(r);
        Ok(())
    }

    /// Exact `fmod(x, y)` (Rust's float `%`): NaN for NaN operands, infinite `x` or zero `y`;
    /// `x` when `|x| < |y|`; otherwise `|y|` scaled by powers of two is subtracted from `|x|`
    /// (each subtraction exact, each lowering the exponent), and the result takes `x`'s sign.
    ///
    /// The routine has one `return`, at its end, and the special cases are selected there: the
    /// loop runs only for regular operands. lavapipe miscompiled the earlier form, whose special
    /// cases returned early, in kernels with a barrier (`8.0 % 3.0` gave `2.35e-38`:
    /// difftest/FINDINGS.md F3).
    fn fmod_body(&mut self, st: ScalarType, x: H, y: H) -> R<()> {
        let fty = self.g.scalar_ty(st)?;
        let zero = self.flit(st, 0.0);
        let inf = self.inf(st);
        let nan = self.nan(st);
        let a = self.m(Mf::Abs, &[x]);
        let b = self.m(Mf::Abs, &[y]);
        let xn = self.is_nan_bits(st, x);
        let yn = self.is_nan_bits(st, y);
        let a_fin = self.bin(Bo::Less, a, inf);
        let a_inf = self.not(a_fin);
        let y0 = self.bin(Bo::Equal, b, zero);
        let bad = self.bin(Bo::LogicalOr, xn, yn);
        let bad = self.bin(Bo::LogicalOr, bad, a_inf);
        let bad = self.bin(Bo::LogicalOr, bad, y0);
        let small = self.bin(Bo::Less, a, b);
        let skip = self.bin(Bo::LogicalOr, bad, small);
        let av = self.new_local("a", fty);
        let ap = self.local_ptr(av);
        self.store(ap, a);
        // Each step lowers the exponent of `a` by at least one, so the exponent range bounds
        // the steps (f32: 277, f64: 2098); the counter ends the loop whatever a driver makes
        // of the tests above (a loop that never ends loses the device).
        let uty = self.g.scalar_ty(ScalarType::U32)?;
        let nv = self.new_local("n", uty);
        let np = self.local_ptr(nv);
        let zero_u = self.lit(Literal::U32(0));
        self.store(np, zero_u);
        let limit = self.lit(Literal::U32(if st == ScalarType::F64 { 2100 } else { 280 }));
        self.open();
        self.open();
        let cur = self.load(ap);
        let done = self.bin(Bo::Less, cur, b);
        let n = self.load(np);
        let spent = self.bin(Bo::GreaterEqual, n, limit);
        let done = self.bin(Bo::LogicalOr, done, spent);
        let brk = naga::Block::from_vec(vec![Statement::Break]);
        self.if_stmt(done, brk, naga::Block::new());
        let one_u = self.lit(Literal::U32(1));
        let n1 = self.bin(Bo::Add, n, one_u);
        self.store(np, n1);
        let (_, ea) = self.frexp(st, cur);
        let (_, eb) = self.frexp(st, b);
        let e = self.bin(Bo::Subtract, ea, eb);
        let t = self.m(Mf::Ldexp, &[b, e]);
        let one = self.lit(Literal::I32(1));
        let e1 = self.bin(Bo::Subtract, e, one);
        let t1 = self.m(Mf::Ldexp, &[b, e1]);
        let over = self.bin(Bo::Greater, t, cur);
        let t = self.sel(over, t1, t);
        let next = self.bin(Bo::Subtract, cur, t);
        self.store(ap, next);
        let body = self.close();
        self.stmt(Statement::Loop {
            body,
            continuing: naga::Block::new(),
            break_if: None,
        });
        let reduce = self.close();
        let regular = self.not(skip);
        self.if_stmt(regular, reduce, naga::Block::new());
        let r = self.load(ap);
        let r = self.copysign(st, r, x)?;
        let r = self.sel(small, x, r);
        let r = self.sel(bad, nan, r);
        self.ret(r);
        Ok(())
    }

    /// `x` is NaN, tested on its bits (exponent all ones, mantissa not zero) where the target
    /// has the unsigned integer of `x`'s width, so that no float folding can change the answer
    /// (NVIDIA's Vulkan driver took `x == x` as true for a NaN its constant folding produced:
    /// difftest/FINDINGS.md F18, F19); else `x != x`. Every NaN test of the generator is this
    /// one.
    fn is_nan_bits(&mut self, st: ScalarType, x: H) -> H {
        let ut = unsigned_of(st);
        if self.g.check_scalar(ut).is_err() {
            return self.is_nan(x);
        }
        let bits = st.size_bytes() as u32 * 8;
        let magnitude: i128 = (1i128 << (bits - 1)) - 1;
        let inf_bits: i128 = if st == ScalarType::F64 {
            0x7ff0_0000_0000_0000
        } else {
            0x7f80_0000
        };
        let u = self.bitcast(x, ScalarKind::Uint);
        let keep = self.lit(int_lit(ut, magnitude));
        let inf = self.lit(int_lit(ut, inf_bits));
        let m = self.bin(Bo::And, u, keep);
        self.bin(Bo::Greater, m, inf)
    }

    /// `hypot(x, y) = hi * sqrt(1 + (lo/hi)^2)`, without intermediate overflow; `inf` if either
    /// is infinite (even with a NaN), NaN if either is NaN, 0 for two zeros.
    fn hypot_body(&mut self, st: ScalarType, x: H, y: H) -> R<()> {
        let zero = self.flit(st, 0.0);
        let one = self.flit(st, 1.0);
        let inf = self.inf(st);
        let nan = self.nan(st);
        let a = self.m(Mf::Abs, &[x]);
        let b = self.m(Mf::Abs, &[y]);
        let hi = self.m(Mf::Max, &[a, b]);
        let lo = self.m(Mf::Min, &[a, b]);
        let q = self.bin(Bo::Divide, lo, hi);
        let qq = self.bin(Bo::Multiply, q, q);
        let s = self.bin(Bo::Add, one, qq);
        let s = self.m(Mf::Sqrt, &[s]);
        let r = self.bin(Bo::Multiply, hi, s);
        let hz = self.bin(Bo::Equal, hi, zero);
        let r = self.sel(hz, zero, r);
        let n = self.either_nan(st, x, y);
        let r = self.sel(n, nan, r);
        let ai = self.bin(Bo::Equal, a, inf);
        let bi = self.bin(Bo::Equal, b, inf);
        let i = self.bin(Bo::LogicalOr, ai, bi);
        let r = self.sel(i, inf, r);
        self.ret(r);
        Ok(())
    }
}
