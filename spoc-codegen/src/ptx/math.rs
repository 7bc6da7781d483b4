//! The math library: PTX `.func` routines for what PTX has no (accurate) instruction for.
//!
//! PTX has transcendental instructions only for `f32`, and only approximate ones (`ex2.approx`,
//! `lg2.approx`, `sin.approx`: absolute errors around 2^-22, so relative errors of thousands of
//! ULP near zeros of the function). spoc does not use them. Instead every transcendental is an
//! `f64` routine built from correctly rounded `add/sub/mul/div/sqrt.rn` and `fma.rn`:
//!
//! - argument reduction with constants split in two or three `f64` parts (computed from their
//!   defining series, to 80 digits), applied with `fma`;
//! - Taylor polynomials whose coefficients (`1/k!`, `1/(2k+1)`, …) are computed exactly when the
//!   routine is generated, evaluated with Horner's rule on `fma`, with enough terms that the
//!   truncation error is below 2^-60 relative on the reduced interval.
//!
//! `f32` transcendentals convert to `f64` (exactly), call the `f64` routine and round once
//! (`cvt.rn.f32.f64`): the result is within 1 ULP (usually correctly rounded) of the true value,
//! at the device's `f64` throughput. Measured errors of the `f64` routines are stated in the
//! module documentation of [`super`] (at most 3 ULP; `powf` 14).
//!
//! Routines are emitted only when a kernel uses them, before the entry, and called with `call`.

use super::asm::{b32_imm, b64_imm, f64_imm, float_imm, Asm, Class, Opd};
use super::gen::Gen;
use spoc_ir::MathFn;

/// A routine of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Routine {
    ExpF64,
    Exp2F64,
    LnF64,
    Log2F64,
    Log10F64,
    SinF64,
    CosF64,
    TanF64,
    AsinF64,
    AcosF64,
    AtanF64,
    Atan2F64,
    SinhF64,
    CoshF64,
    TanhF64,
    PowF64,
    HypotF64,
    FmodF32,
    FmodF64,
    PowiF32,
    PowiF64,
}

impl Routine {
    /// The routine implementing math function `m` on `f64` (or `None` for the functions that
    /// are single instructions).
    pub(crate) fn for_math(m: MathFn) -> Option<Routine> {
        Some(match m {
            MathFn::Exp => Routine::ExpF64,
            MathFn::Exp2 => Routine::Exp2F64,
            MathFn::Ln => Routine::LnF64,
            MathFn::Log2 => Routine::Log2F64,
            MathFn::Log10 => Routine::Log10F64,
            MathFn::Sin => Routine::SinF64,
            MathFn::Cos => Routine::CosF64,
            MathFn::Tan => Routine::TanF64,
            MathFn::Asin => Routine::AsinF64,
            MathFn::Acos => Routine::AcosF64,
            MathFn::Atan => Routine::AtanF64,
            MathFn::Atan2 => Routine::Atan2F64,
            MathFn::Sinh => Routine::SinhF64,
            MathFn::Cosh => Routine::CoshF64,
            MathFn::Tanh => Routine::TanhF64,
            MathFn::Powf => Routine::PowF64,
            MathFn::Hypot => Routine::HypotF64,
            _ => return None,
        })
    }

    /// The routine's PTX name.
    pub(crate) fn name(self) -> &'static str {
        use Routine::*;
        match self {
            ExpF64 => "spoc_math_exp_f64",
            Exp2F64 => "spoc_math_exp2_f64",
            LnF64 => "spoc_math_ln_f64",
            Log2F64 => "spoc_math_log2_f64",
            Log10F64 => "spoc_math_log10_f64",
            SinF64 => "spoc_math_sin_f64",
            CosF64 => "spoc_math_cos_f64",
            TanF64 => "spoc_math_tan_f64",
            AsinF64 => "spoc_math_asin_f64",
            AcosF64 => "spoc_math_acos_f64",
            AtanF64 => "spoc_math_atan_f64",
            Atan2F64 => "spoc_math_atan2_f64",
            SinhF64 => "spoc_math_sinh_f64",
            CoshF64 => "spoc_math_cosh_f64",
            TanhF64 => "spoc_math_tanh_f64",
            PowF64 => "spoc_math_pow_f64",
            HypotF64 => "spoc_math_hypot_f64",
            FmodF32 => "spoc_math_fmod_f32",
            FmodF64 => "spoc_math_fmod_f64",
            PowiF32 => "spoc_math_powi_f32",
            PowiF64 => "spoc_math_powi_f64",
        }
    }

    /// Parameter classes.
    pub(crate) fn params(self) -> Vec<Class> {
        use Routine::*;
        match self {
            Atan2F64 | PowF64 | HypotF64 | FmodF64 => vec![Class::F64, Class::F64],
            FmodF32 => vec![Class::F32, Class::F32],
            PowiF32 => vec![Class::F32, Class::B32],
            PowiF64 => vec![Class::F64, Class::B32],
            _ => vec![Class::F64],
        }
    }

    /// Result class.
    pub(crate) fn ret(self) -> Class {
        match self {
            Routine::FmodF32 | Routine::PowiF32 => Class::F32,
            _ => Class::F64,
        }
    }
}

fn param_type(c: Class) -> &'static str {
    match c {
        Class::F32 => ".f32",
        Class::F64 => ".f64",
        Class::B32 => ".b32",
        Class::B64 => ".b64",
        Class::B16 => ".b16",
        Class::Pred => ".pred",
    }
}

impl Gen<'_, '_> {
    /// Calls routine `r` with `args` (registers of its parameter classes); returns the result.
    pub(crate) fn call_routine(&mut self, r: Routine, args: &[Opd]) -> Opd {
        self.routines.insert(r);
        call(&mut self.a, r, args)
    }
}

/// Emits a call of `r` into `a`.
fn call(a: &mut Asm, r: Routine, args: &[Opd]) -> Opd {
    let d = a.tmp(r.ret());
    a.open();
    let ps = r.params();
    for (i, c) in ps.iter().enumerate() {
        a.raw(format!(".param {} arg{i};", param_type(*c)));
    }
    a.raw(format!(".param {} res;", param_type(r.ret())));
    for (i, (c, v)) in ps.iter().zip(args).enumerate() {
        a.ins(format_args!("st.param{} [arg{i}], {v}", param_type(*c)));
    }
    let names: Vec<String> = (0..ps.len()).map(|i| format!("arg{i}")).collect();
    a.ins(format_args!(
        "call (res), {}, ({})",
        r.name(),
        names.join(", ")
    ));
    a.ins(format_args!("ld.param{} {d}, [res]", param_type(r.ret())));
    a.close();
    d
}

// ---------------------------------------------------------------- constants

const LN2_HI: u64 = 0x3FE62E42FEFA39EF;
const LN2_LO: u64 = 0x3C7ABC9E3B39803F;
const LOG2E: u64 = 0x3FF71547652B82FE;
const LOG10E: u64 = 0x3FDBCB7B1526E50E;
const LOG10_2_HI: u64 = 0x3FD34413509F79FF;
const LOG10_2_LO: u64 = 0xBC49DC1DA994FD21;
const PI_HI: u64 = 0x400921FB54442D18;
const PI_LO: u64 = 0x3CA1A62633145C07;
const PI_2_HI: u64 = 0x3FF921FB54442D18;
const PI_2_LO: u64 = 0x3C91A62633145C07;
const PI_2_LO2: u64 = 0xB91F1976B7ED8FBC;
const PI_4_HI: u64 = 0x3FE921FB54442D18;
const PI_4_LO: u64 = 0x3C81A62633145C07;
const TWO_OVER_PI: u64 = 0x3FE45F306DC9C883;
const SQRT2: u64 = 0x3FF6A09E667F3BCD;
const TAN_PI_8: u64 = 0x3FDA827999FCEF32;

/// The `.const` table of the bits of 2/π used by Payne–Hanek reduction.
const TWO_OVER_PI_TABLE: &str = "spoc_math_two_over_pi";

/// Bits 1..1408 of 2/π, 64 per word, most significant first (computed from Machin's formula to
/// 500 digits).
const TWO_OVER_PI_BITS: [u64; 22] = [
    0xA2F9836E4E441529,
    0xFC2757D1F534DDC0,
    0xDB6295993C439041,
    0xFE5163ABDEBBC561,
    0xB7246E3A424DD2E0,
    0x06492EEA09D1921C,
    0xFE1DEB1CB129A73E,
    0xE88235F52EBB4484,
    0xE99C7026B45F7E41,
    0x3991D639835339F4,
    0x9C845F8BBDF9283B,
    0x1FF897FFDE05980F,
    0xEF2F118B5A0A6D1F,
    0x6D367ECF27CB09B7,
    0x4F463F669E5FEA2D,
    0x7527BAC7EBE5F17B,
    0x3D0739F78A5292EA,
    0x6BFB5FB11F8D5D08,
    0x56033046FC7B6BAB,
    0xF0CFBC209AF4361D,
    0xA9E391615EE61B08,
    0x6599855F14A06840,
];

/// Module-scope declarations the routines in `used` need (the 2/π table for sin/cos/tan), to be
/// emitted before them.
pub(crate) fn prelude(used: &std::collections::BTreeSet<Routine>) -> String {
    let trig = [Routine::SinF64, Routine::CosF64, Routine::TanF64];
    if !trig.iter().any(|r| used.contains(r)) {
        return String::new();
    }
    // A leading zero word stands for the bits at and before the binary point.
    let words: Vec<String> = std::iter::once(0u64)
        .chain(TWO_OVER_PI_BITS)
        .map(|w| format!("0x{w:016X}"))
        .collect();
    let mut s = format!(
        ".const .align 8 .u64 {TWO_OVER_PI_TABLE}[{}] = {{\n",
        words.len()
    );
    for chunk in words.chunks(4) {
        s.push_str(&format!("\t{},\n", chunk.join(", ")));
    }
    s.truncate(s.len() - 2);
    s.push_str("\n};\n\n");
    s
}

fn k(bits: u64) -> Opd {
    f64_imm(bits)
}

fn c(v: f64) -> Opd {
    float_imm(Class::F64, v)
}

/// `n!` as an `f64` (exact for `n <= 22`).
fn factorial(n: u32) -> f64 {
    (1..=n).map(f64::from).product()
}

/// Emission helpers for `f64` routine bodies.
struct M<'a> {
    a: &'a mut Asm,
}

impl M<'_> {
    fn op2(&mut self, op: &str, x: &Opd, y: &Opd) -> Opd {
        let x = self.a.reg(x);
        self.a.bin(op, Class::F64, &x, y)
    }
    fn add(&mut self, x: &Opd, y: &Opd) -> Opd {
        self.op2("add.rn.f64", x, y)
    }
    fn sub(&mut self, x: &Opd, y: &Opd) -> Opd {
        self.op2("sub.rn.f64", x, y)
    }
    fn mul(&mut self, x: &Opd, y: &Opd) -> Opd {
        self.op2("mul.rn.f64", x, y)
    }
    fn div(&mut self, x: &Opd, y: &Opd) -> Opd {
        self.op2("div.rn.f64", x, y)
    }
    fn fma(&mut self, x: &Opd, y: &Opd, z: &Opd) -> Opd {
        let x = self.a.reg(x);
        self.a.tri("fma.rn.f64", Class::F64, &x, y, z)
    }
    fn un(&mut self, op: &str, x: &Opd) -> Opd {
        let x = self.a.reg(x);
        self.a.un(op, Class::F64, &x)
    }
    fn abs(&mut self, x: &Opd) -> Opd {
        self.un("abs.f64", x)
    }
    fn neg(&mut self, x: &Opd) -> Opd {
        self.un("neg.f64", x)
    }
    /// A predicate `x <cmp> y`.
    fn setp(&mut self, cmp: &str, x: &Opd, y: &Opd) -> Opd {
        let x = self.a.reg(x);
        let p = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.{cmp}.f64 {p}, {x}, {y}"));
        p
    }
    /// `p ? x : y`.
    fn sel(&mut self, p: &Opd, x: &Opd, y: &Opd) -> Opd {
        self.a.tri("selp.f64", Class::F64, x, y, p)
    }
    /// `x` with the sign of `s`.
    fn copysign(&mut self, x: &Opd, s: &Opd) -> Opd {
        let s = self.a.reg(s);
        self.a.bin("copysign.f64", Class::F64, &s, x)
    }
    fn or(&mut self, p: &Opd, q: &Opd) -> Opd {
        self.a.bin("or.pred", Class::Pred, p, q)
    }
    fn and(&mut self, p: &Opd, q: &Opd) -> Opd {
        self.a.bin("and.pred", Class::Pred, p, q)
    }
    fn isnan(&mut self, x: &Opd) -> Opd {
        let p = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.nan.f64 {p}, {x}, {x}"));
        p
    }
    /// `sum c[i] * z^i` by Horner's rule.
    fn poly(&mut self, z: &Opd, coef: &[f64]) -> Opd {
        let mut r = c(*coef.last().expect("a polynomial has coefficients"));
        for &ci in coef.iter().rev().skip(1) {
            r = self.fma(&r, z, &c(ci));
        }
        self.a.reg(&r)
    }
    fn bits(&mut self, x: &Opd) -> Opd {
        self.a.un("mov.b64", Class::B64, x)
    }
    fn as_f64(&mut self, x: &Opd) -> Opd {
        self.a.un("mov.b64", Class::F64, x)
    }

    /// `2^k` for `-1022 <= k <= 1023` (`k` a 32-bit register).
    fn pow2(&mut self, k: &Opd) -> Opd {
        let e = self.a.bin("add.s32", Class::B32, k, &b32_imm(1023));
        let e64 = self.a.un("cvt.u64.u32", Class::B64, &e);
        let b = self.a.bin("shl.b64", Class::B64, &e64, &b32_imm(52));
        self.as_f64(&b)
    }

    /// `e^x`: `x = k ln2 + r` (two-part ln 2, `fma`), `e^r` by its Taylor series to `r^13`,
    /// scaled by `2^k` in two steps (so that subnormal results round once). NaN passes through.
    fn exp(&mut self, x: &Opd) -> Opd {
        let xc = self.op2("min.f64", x, &c(710.0));
        let xc = self.op2("max.f64", &xc, &c(-746.0));
        let t = self.mul(&xc, &k(LOG2E));
        let kf = self.un("cvt.rni.f64.f64", &t);
        let nk = self.neg(&kf);
        let r = self.fma(&nk, &k(LN2_HI), &xc);
        let r = self.fma(&nk, &k(LN2_LO), &r);
        self.exp_finish(x, &kf, &r)
    }

    /// `2^x`: `x = k + f`, `2^f = e^(f ln 2)`.
    fn exp2(&mut self, x: &Opd) -> Opd {
        let xc = self.op2("min.f64", x, &c(1025.0));
        let xc = self.op2("max.f64", &xc, &c(-1077.0));
        let kf = self.un("cvt.rni.f64.f64", &xc);
        let f = self.sub(&xc, &kf);
        let lo = self.mul(&f, &k(LN2_LO));
        let r = self.fma(&f, &k(LN2_HI), &lo);
        self.exp_finish(x, &kf, &r)
    }

    fn exp_finish(&mut self, x: &Opd, kf: &Opd, r: &Opd) -> Opd {
        let coef: Vec<f64> = (0..=13).map(|n| 1.0 / factorial(n)).collect();
        let p = self.poly(r, &coef);
        let ki = self.a.un("cvt.rni.s32.f64", Class::B32, kf);
        let k1 = self.a.bin("shr.s32", Class::B32, &ki, &b32_imm(1));
        let k2 = self.a.bin("sub.s32", Class::B32, &ki, &k1);
        let s1 = self.pow2(&k1);
        let s2 = self.pow2(&k2);
        let v = self.mul(&p, &s1);
        let v = self.mul(&v, &s2);
        let nan = self.isnan(x);
        self.sel(&nan, x, &v)
    }

    /// `x = 2^e (1 + f)` for `x > 0` finite, `sqrt(1/2) <= 1 + f < sqrt(2)`: returns `e` (as
    /// an `f64`) and `f` (exact).
    fn log_reduce(&mut self, x: &Opd) -> (Opd, Opd) {
        // Subnormals: scale by 2^54 first.
        let tiny = self.setp("lt", x, &k(0x0010_0000_0000_0000));
        let xs = self.mul(x, &k(0x4350_0000_0000_0000)); // 2^54
        let xs = self.sel(&tiny, &xs, x);
        let adj = self.a.tmp(Class::B32);
        self.a.ins(format_args!("selp.s32 {adj}, -54, 0, {tiny}"));
        let b = self.bits(&xs);
        let eb = self.a.bin("shr.u64", Class::B64, &b, &b32_imm(52));
        let eb = self.a.un("cvt.u32.u64", Class::B32, &eb);
        let e = self.a.bin("sub.s32", Class::B32, &eb, &b32_imm(1023));
        let e = self.a.bin("add.s32", Class::B32, &e, &adj);
        let mb = self
            .a
            .bin("and.b64", Class::B64, &b, &b64_imm(0x000F_FFFF_FFFF_FFFF));
        let mb = self
            .a
            .bin("or.b64", Class::B64, &mb, &b64_imm(0x3FF0_0000_0000_0000));
        let m = self.as_f64(&mb);
        let big = self.setp("gt", &m, &k(SQRT2));
        let mh = self.mul(&m, &c(0.5));
        let m = self.sel(&big, &mh, &m);
        let e1 = self.a.bin("add.s32", Class::B32, &e, &b32_imm(1));
        let e = self.a.tri("selp.s32", Class::B32, &e1, &e, &big);
        let ef = self.a.un("cvt.rn.f64.s32", Class::F64, &e);
        let f = self.sub(&m, &c(1.0));
        (ef, f)
    }

    /// `2/3 + 2/5 z + 2/7 z² + …` (the `atanh` series after its first term, in `z = s²`).
    fn atanh_tail(&mut self, z: &Opd) -> Opd {
        let coef: Vec<f64> = (1..=12).map(|n| 2.0 / (2 * n + 1) as f64).collect();
        self.poly(z, &coef)
    }

    /// The parts of a logarithm of `x > 0` finite: `(e, L)` with `x = 2^e (1 + f)` and
    /// `L = ln(1 + f)` computed as `f - (f²/2 - s (f²/2 + R(s²)))`, `s = f / (2 + f)`, `R` the
    /// `atanh` series.
    fn log_parts(&mut self, x: &Opd) -> (Opd, Opd) {
        let (ef, f) = self.log_reduce(x);
        let d = self.add(&f, &c(2.0));
        let s = self.div(&f, &d);
        let z = self.mul(&s, &s);
        let rz = self.atanh_tail(&z);
        let r = self.mul(&z, &rz);
        let hf = self.mul(&f, &f);
        let hfsq = self.mul(&hf, &c(0.5));
        let t = self.add(&hfsq, &r);
        let st = self.mul(&s, &t);
        let inner = self.sub(&hfsq, &st);
        let l = self.sub(&f, &inner);
        (ef, l)
    }

    /// `ln(x)` for `x > 0` finite as a double-double `hi + lo` (relative error about 2^-60):
    /// `s = f / (2 + f)` and `2 + f` carried in two parts, `ln(1 + f) = 2s + s³ R(s²)`,
    /// `e ln 2` as an exact product plus the low part of ln 2, summed with TwoSum.
    fn ln_dd(&mut self, x: &Opd) -> (Opd, Opd) {
        let (e, f) = self.log_reduce(x);
        let dh = self.add(&f, &c(2.0));
        let t = self.sub(&dh, &c(2.0));
        let dl = self.sub(&f, &t);
        let sh = self.div(&f, &dh);
        let nsh = self.neg(&sh);
        let r = self.fma(&nsh, &dh, &f);
        let r = self.fma(&nsh, &dl, &r);
        let sl = self.div(&r, &dh);
        let z = self.mul(&sh, &sh);
        let p = self.atanh_tail(&z);
        let sz = self.mul(&sh, &z);
        let tail = self.mul(&sz, &p);
        let lh = self.add(&sh, &sh);
        let ll = self.fma(&sl, &c(2.0), &tail);
        let ph = self.mul(&e, &k(LN2_HI));
        let nph = self.neg(&ph);
        let pl = self.fma(&e, &k(LN2_HI), &nph);
        let pl = self.fma(&e, &k(LN2_LO), &pl);
        // TwoSum(ph, lh)
        let s = self.add(&ph, &lh);
        let bb = self.sub(&s, &ph);
        let sb = self.sub(&s, &bb);
        let e1 = self.sub(&ph, &sb);
        let e2 = self.sub(&lh, &bb);
        let err = self.add(&e1, &e2);
        let lo = self.add(&pl, &ll);
        let lo = self.add(&err, &lo);
        let hi = self.add(&s, &lo);
        let back = self.sub(&hi, &s);
        let lo = self.sub(&lo, &back);
        (hi, lo)
    }

    /// Overrides a logarithm result `v` for `x` outside `(0, inf)`: `x < 0` is NaN, `±0` is
    /// `-inf`, `+inf` is `+inf`, NaN stays NaN.
    fn log_specials(&mut self, x: &Opd, v: &Opd) -> Opd {
        let neg = self.setp("lt", x, &c(0.0));
        let v = self.sel(&neg, &k(0x7FF8_0000_0000_0000), v);
        let zero = self.setp("eq", x, &c(0.0));
        let v = self.sel(&zero, &k(0xFFF0_0000_0000_0000), &v);
        let inf = self.setp("eq", x, &k(0x7FF0_0000_0000_0000));
        let v = self.sel(&inf, x, &v);
        let nan = self.isnan(x);
        self.sel(&nan, x, &v)
    }

    /// `ln(x)` for `x > 0` finite (no special cases).
    fn ln_core(&mut self, x: &Opd) -> Opd {
        let (e, l) = self.log_parts(x);
        let lo = self.fma(&e, &k(LN2_LO), &l);
        self.fma(&e, &k(LN2_HI), &lo)
    }

    /// `sin` and `cos` of the reduced argument, and the quadrant: `x = q π/2 + r`,
    /// `|r| <= π/4`. Below 2^26, π/2 in three parts applied by `fma` (Cody–Waite); from 2^26 on,
    /// Payne–Hanek ([`M::payne_hanek`]). Infinities and NaN give NaN.
    fn sincos_parts(&mut self, x: &Opd) -> (Opd, Opd, Opd) {
        let r = self.a.tmp(Class::F64);
        let q = self.a.tmp(Class::B32);
        let ax = self.abs(x);
        let big = self.setp("ge", &ax, &k(0x4190_0000_0000_0000)); // 2^26
        let ph = self.a.label("sincos_ph");
        let join = self.a.label("sincos_join");
        self.a.bra_if(&big, true, &ph);
        let t = self.mul(x, &k(TWO_OVER_PI));
        let kf = self.un("cvt.rni.f64.f64", &t);
        let nk = self.neg(&kf);
        let r1 = self.fma(&nk, &k(PI_2_HI), x);
        let r1 = self.fma(&nk, &k(PI_2_LO), &r1);
        let r1 = self.fma(&nk, &k(PI_2_LO2), &r1);
        let q1 = self.a.un("cvt.rni.s32.f64", Class::B32, &kf);
        self.a.mov_to(&r, &r1);
        self.a.mov_to(&q, &q1);
        self.a.bra(&join);
        self.a.put(&ph);
        let (r2, q2) = self.payne_hanek(x, &ax);
        self.a.mov_to(&r, &r2);
        self.a.mov_to(&q, &q2);
        self.a.put(&join);
        let q = self.a.bin("and.b32", Class::B32, &q, &b32_imm(3));
        let z = self.mul(&r, &r);
        let sc: Vec<f64> = (1..=9)
            .map(|n| (if n % 2 == 1 { -1.0 } else { 1.0 }) / factorial(2 * n + 1))
            .collect();
        let ps = self.poly(&z, &sc);
        let rz = self.mul(&r, &z);
        let s = self.fma(&rz, &ps, &r);
        let cc: Vec<f64> = (1..=10)
            .map(|n| (if n % 2 == 1 { -1.0 } else { 1.0 }) / factorial(2 * n))
            .collect();
        let pc = self.poly(&z, &cc);
        let co = self.fma(&z, &pc, &c(1.0));
        (s, co, q)
    }

    /// Payne–Hanek reduction of `|x| >= 2^26` (`ax = |x|`): with `|x| = m 2^(e-52)`, the 192
    /// bits of 2/π that matter from bit `e - 53` on are multiplied by the 53-bit `m`; the top two
    /// bits of the low 192 bits of the product are the quadrant, the rest the fraction (128 bits
    /// kept, rounded to the nearest quadrant so that `|f| <= 1/2`), and `r = f π/2`.
    fn payne_hanek(&mut self, x: &Opd, ax: &Opd) -> (Opd, Opd) {
        let a = &mut *self.a;
        let b = a.un("mov.b64", Class::B64, ax);
        let eb = a.bin("shr.u64", Class::B64, &b, &b32_imm(52));
        let eb = a.un("cvt.u32.u64", Class::B32, &eb);
        // e + 10 = (e_biased - 1023) + 10, clamped for infinities (their result is NaN anyway).
        let eb = a.bin("min.u32", Class::B32, &eb, &b32_imm(2046));
        let pos = a.bin("sub.s32", Class::B32, &eb, &b32_imm(1013));
        let kw = a.bin("shr.u32", Class::B32, &pos, &b32_imm(6));
        let sh = a.bin("and.b32", Class::B32, &pos, &b32_imm(63));
        let rs = a.bin("sub.s32", Class::B32, &b32_imm(64), &sh);
        let off = a.bin("mul.wide.u32", Class::B64, &kw, &b32_imm(8));
        let tab = a.tmp(Class::B64);
        a.ins(format_args!("mov.u64 {tab}, {TWO_OVER_PI_TABLE}"));
        let addr = a.bin("add.s64", Class::B64, &tab, &off);
        let t: Vec<Opd> = (0..4)
            .map(|i| {
                let d = a.tmp(Class::B64);
                a.ins(format_args!("ld.const.u64 {d}, [{addr}+{}]", 8 * i));
                d
            })
            .collect();
        let mut w = Vec::new();
        for i in 0..3 {
            let hi = a.bin("shl.b64", Class::B64, &t[i], &sh);
            let lo = a.bin("shr.u64", Class::B64, &t[i + 1], &rs);
            w.push(a.bin("or.b64", Class::B64, &hi, &lo));
        }
        let m = a.bin("and.b64", Class::B64, &b, &b64_imm(0x000F_FFFF_FFFF_FFFF));
        let m = a.bin("or.b64", Class::B64, &m, &b64_imm(0x0010_0000_0000_0000));
        let lo2 = a.bin("mul.lo.u64", Class::B64, &m, &w[2]);
        let hi2 = a.bin("mul.hi.u64", Class::B64, &m, &w[2]);
        let lo1 = a.bin("mul.lo.u64", Class::B64, &m, &w[1]);
        let hi1 = a.bin("mul.hi.u64", Class::B64, &m, &w[1]);
        let lo0 = a.bin("mul.lo.u64", Class::B64, &m, &w[0]);
        let word1 = a.bin("add.cc.u64", Class::B64, &hi2, &lo1);
        let word2 = a.bin("addc.u64", Class::B64, &hi1, &lo0);
        let word0 = lo2;
        let q = a.bin("shr.u64", Class::B64, &word2, &b32_imm(62));
        let q = a.un("cvt.u32.u64", Class::B32, &q);
        let g1 = a.bin("shl.b64", Class::B64, &word2, &b32_imm(2));
        let g2 = a.bin("shr.u64", Class::B64, &word1, &b32_imm(62));
        let g = a.bin("or.b64", Class::B64, &g1, &g2);
        let l1 = a.bin("shl.b64", Class::B64, &word1, &b32_imm(2));
        let l2 = a.bin("shr.u64", Class::B64, &word0, &b32_imm(62));
        let l = a.bin("or.b64", Class::B64, &l1, &l2);
        // A fraction of 1/2 or more rounds up to the next quadrant (g is then negative).
        let up = a.bin("shr.u64", Class::B64, &g, &b32_imm(63));
        let up = a.un("cvt.u32.u64", Class::B32, &up);
        let q = a.bin("add.s32", Class::B32, &q, &up);
        let fh = a.un("cvt.rn.f64.s64", Class::F64, &g);
        let fl = a.un("cvt.rn.f64.u64", Class::F64, &l);
        let fh = self.mul(&fh, &k(0x3BF0_0000_0000_0000)); // 2^-64
        let f = self.fma(&fl, &k(0x37F0_0000_0000_0000), &fh); // 2^-128
        let rl = self.mul(&f, &k(PI_2_LO));
        let r = self.fma(&f, &k(PI_2_HI), &rl);
        // x < 0: sin(-x) = -sin(x): negate r and the quadrant.
        let xb = self.bits(x);
        let neg = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.lt.s64 {neg}, {xb}, 0"));
        let nr = self.neg(&r);
        let r = self.sel(&neg, &nr, &r);
        let nq = self.a.un("neg.s32", Class::B32, &q);
        let q = self.a.tri("selp.b32", Class::B32, &nq, &q, &neg);
        // Infinities: x - x is NaN.
        let d = self.sub(x, x);
        let r = self.add(&r, &d);
        (r, q)
    }

    /// Predicates `q & bit != 0` for a quadrant register.
    fn qbit(&mut self, q: &Opd, bit: i64) -> Opd {
        let t = self.a.bin("and.b32", Class::B32, q, &b32_imm(bit));
        let p = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.ne.u32 {p}, {t}, 0"));
        p
    }

    /// `atan(q)` for `q >= 0` (or NaN, or +inf): `q > 1` uses `π/2 - atan(1/q)`, then
    /// `t > tan(π/8)` uses `π/4 + atan((t-1)/(t+1))`, then the Taylor series to `u^41`.
    fn atan_pos(&mut self, q: &Opd) -> Opd {
        let inv = self.setp("gt", q, &c(1.0));
        let rq = self.div(&c(1.0), q);
        let t = self.sel(&inv, &rq, q);
        let big = self.setp("gt", &t, &k(TAN_PI_8));
        let num = self.sub(&t, &c(1.0));
        let den = self.add(&t, &c(1.0));
        let u2 = self.div(&num, &den);
        let u = self.sel(&big, &u2, &t);
        let z = self.mul(&u, &u);
        let coef: Vec<f64> = (1..=20)
            .map(|n| (if n % 2 == 1 { -1.0 } else { 1.0 }) / (2 * n + 1) as f64)
            .collect();
        let p = self.poly(&z, &coef);
        let uz = self.mul(&u, &z);
        let a = self.fma(&uz, &p, &u);
        let a4 = self.add(&a, &k(PI_4_LO));
        let a4 = self.add(&a4, &k(PI_4_HI));
        let a = self.sel(&big, &a4, &a);
        let a2 = self.sub(&k(PI_2_LO), &a);
        let a2 = self.add(&a2, &k(PI_2_HI));
        self.sel(&inv, &a2, &a)
    }

    /// `atan2(y, x)` with IEEE special cases (signed zeros, infinities).
    fn atan2(&mut self, y: &Opd, x: &Opd) -> Opd {
        let ax = self.abs(x);
        let ay = self.abs(y);
        let q = self.div(&ay, &ax);
        let inf = k(0x7FF0_0000_0000_0000);
        let xi = self.setp("eq", &ax, &inf);
        let yi = self.setp("eq", &ay, &inf);
        let both_inf = self.and(&xi, &yi);
        let q = self.sel(&both_inf, &c(1.0), &q);
        let a = self.atan_pos(&q);
        let xz = self.setp("eq", &ax, &c(0.0));
        let yz = self.setp("eq", &ay, &c(0.0));
        let both_zero = self.and(&xz, &yz);
        let a = self.sel(&both_zero, &c(0.0), &a);
        // x negative (sign bit, so -0 counts): π - a.
        let xb = self.bits(x);
        let xneg = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.lt.s64 {xneg}, {xb}, 0"));
        let pa = self.sub(&k(PI_LO), &a);
        let pa = self.add(&pa, &k(PI_HI));
        let a = self.sel(&xneg, &pa, &a);
        self.copysign(&a, y)
    }

    /// `sqrt((1 - x)(1 + x))`.
    fn cos_of_asin(&mut self, x: &Opd) -> Opd {
        let a = self.sub(&c(1.0), x);
        let b = self.add(&c(1.0), x);
        let p = self.mul(&a, &b);
        self.un("sqrt.rn.f64", &p)
    }

    /// Taylor series of `sinh(a)` for `|a| < 1`, to `a^21`.
    fn sinh_small(&mut self, a: &Opd) -> Opd {
        let z = self.mul(a, a);
        let coef: Vec<f64> = (1..=10).map(|n| 1.0 / factorial(2 * n + 1)).collect();
        let p = self.poly(&z, &coef);
        let az = self.mul(a, &z);
        self.fma(&az, &p, a)
    }
}

/// The PTX text of routine `r` (a `.func` definition).
pub(crate) fn emit(r: Routine) -> String {
    let mut a = Asm::new();
    let ps = r.params();
    let pnames = ["x", "y"];
    let mut args = Vec::new();
    for (i, cl) in ps.iter().enumerate() {
        let d = a.tmp(*cl);
        a.ins(format_args!(
            "ld.param{} {d}, [{}]",
            param_type(*cl),
            pnames[i]
        ));
        args.push(d);
    }
    let res = body(&mut a, r, &args);
    a.ins(format_args!("st.param{} [ret], {res}", param_type(r.ret())));
    a.ins("ret");
    let sig: Vec<String> = ps
        .iter()
        .enumerate()
        .map(|(i, cl)| format!(".param {} {}", param_type(*cl), pnames[i]))
        .collect();
    format!(
        ".func (.param {} ret) {}({})\n{{\n{}{}}}\n",
        param_type(r.ret()),
        r.name(),
        sig.join(", "),
        a.decls("\t"),
        a.body()
    )
}

/// Emits the body of `r` on arguments `x`; returns the result register.
fn body(a: &mut Asm, r: Routine, x: &[Opd]) -> Opd {
    use Routine::*;
    let mut m = M { a };
    let x0 = &x[0];
    match r {
        ExpF64 => m.exp(x0),
        Exp2F64 => m.exp2(x0),
        LnF64 => {
            let v = m.ln_core(x0);
            m.log_specials(x0, &v)
        }
        Log2F64 => {
            let (e, l) = m.log_parts(x0);
            let v = m.fma(&l, &k(LOG2E), &e);
            m.log_specials(x0, &v)
        }
        Log10F64 => {
            let (e, l) = m.log_parts(x0);
            let lo = m.mul(&e, &k(LOG10_2_LO));
            let lo = m.fma(&l, &k(LOG10E), &lo);
            let v = m.fma(&e, &k(LOG10_2_HI), &lo);
            m.log_specials(x0, &v)
        }
        SinF64 | CosF64 | TanF64 => {
            let (s, co, q) = m.sincos_parts(x0);
            let odd = m.qbit(&q, 1);
            let v = match r {
                SinF64 => {
                    let v = m.sel(&odd, &co, &s);
                    let neg = m.qbit(&q, 2);
                    let nv = m.neg(&v);
                    m.sel(&neg, &nv, &v)
                }
                CosF64 => {
                    let v = m.sel(&odd, &s, &co);
                    let q1 = m.a.bin("add.s32", Class::B32, &q, &b32_imm(1));
                    let neg = m.qbit(&q1, 2);
                    let nv = m.neg(&v);
                    m.sel(&neg, &nv, &v)
                }
                _ => {
                    let t = m.div(&s, &co);
                    let ct = m.div(&co, &s);
                    let nct = m.neg(&ct);
                    m.sel(&odd, &nct, &t)
                }
            };
            if r == CosF64 {
                v
            } else {
                // sin(±0) and tan(±0) keep the sign of zero.
                let z = m.setp("eq", x0, &c(0.0));
                m.sel(&z, x0, &v)
            }
        }
        AtanF64 => {
            let ax = m.abs(x0);
            let v = m.atan_pos(&ax);
            m.copysign(&v, x0)
        }
        Atan2F64 => m.atan2(x0, &x[1]),
        AsinF64 => {
            let co = m.cos_of_asin(x0);
            m.atan2(x0, &co)
        }
        AcosF64 => {
            let si = m.cos_of_asin(x0);
            m.atan2(&si, x0)
        }
        SinhF64 | CoshF64 => {
            let ax = m.abs(x0);
            let large = m.setp("ge", &ax, &c(20.0));
            let half = m.mul(&ax, &c(0.5));
            let arg = m.sel(&large, &half, &ax);
            let e = m.exp(&arg);
            let re = m.un("rcp.rn.f64", &e);
            let eh = m.mul(&e, &c(0.5));
            let big = m.mul(&eh, &e);
            let mid = if r == SinhF64 {
                m.sub(&e, &re)
            } else {
                m.add(&e, &re)
            };
            let mid = m.mul(&mid, &c(0.5));
            let v = m.sel(&large, &big, &mid);
            if r == SinhF64 {
                let small = m.setp("lt", &ax, &c(1.0));
                let sv = m.sinh_small(&ax);
                let v = m.sel(&small, &sv, &v);
                m.copysign(&v, x0)
            } else {
                v
            }
        }
        TanhF64 => {
            let ax = m.abs(x0);
            let small = m.setp("lt", &ax, &c(0.625));
            let twice = m.add(&ax, &ax);
            let arg = m.sel(&small, &ax, &twice);
            let e = m.exp(&arg);
            // small: sinh(a) / cosh(a)
            let sh = m.sinh_small(&ax);
            let re = m.un("rcp.rn.f64", &e);
            let ch = m.add(&e, &re);
            let ch = m.mul(&ch, &c(0.5));
            let sv = m.div(&sh, &ch);
            // otherwise: 1 - 2 / (e^(2a) + 1)
            let d = m.add(&e, &c(1.0));
            let q = m.div(&c(2.0), &d);
            let lv = m.sub(&c(1.0), &q);
            let v = m.sel(&small, &sv, &lv);
            m.copysign(&v, x0)
        }
        PowF64 => pow(&mut m, x0, &x[1]),
        HypotF64 => {
            let y0 = &x[1];
            let ax = m.abs(x0);
            let ay = m.abs(y0);
            let hi = m.op2("max.f64", &ax, &ay);
            let lo = m.op2("min.f64", &ax, &ay);
            let q = m.div(&lo, &hi);
            let s = m.fma(&q, &q, &c(1.0));
            let s = m.un("sqrt.rn.f64", &s);
            let v = m.mul(&hi, &s);
            let zero = m.setp("eq", &hi, &c(0.0));
            let v = m.sel(&zero, &c(0.0), &v);
            let nx = m.isnan(x0);
            let ny = m.isnan(y0);
            let nan = m.or(&nx, &ny);
            let v = m.sel(&nan, &k(0x7FF8_0000_0000_0000), &v);
            let inf = k(0x7FF0_0000_0000_0000);
            let ix = m.setp("eq", &ax, &inf);
            let iy = m.setp("eq", &ay, &inf);
            let i = m.or(&ix, &iy);
            m.sel(&i, &inf, &v)
        }
        FmodF32 => fmod(m.a, &x[0], &x[1], false),
        FmodF64 => fmod(m.a, &x[0], &x[1], true),
        PowiF32 => powi(m.a, &x[0], &x[1], Class::F32),
        PowiF64 => powi(m.a, &x[0], &x[1], Class::F64),
    }
}

/// `x^y` as `e^(y ln|x|)`, `ln|x|` and the product carried in double-double so that the
/// result is within a few ULP, with C99/IEEE special cases: `y == 0` or `x == 1` give 1 (even for
/// NaN), `x == -1` with `y = ±inf` gives 1, a negative `x` with an odd integer `y` negates, a
/// finite negative `x` with a finite non-integer `y` is NaN.
fn pow(m: &mut M<'_>, x: &Opd, y: &Opd) -> Opd {
    let ax = m.abs(x);
    // ln|x| in two parts, with its own special values: ln 0 = -inf, ln inf = inf, NaN.
    let (l, ll) = m.ln_dd(&ax);
    let z = m.setp("eq", &ax, &c(0.0));
    let l = m.sel(&z, &k(0xFFF0_0000_0000_0000), &l);
    let inf = k(0x7FF0_0000_0000_0000);
    let xi = m.setp("eq", &ax, &inf);
    let l = m.sel(&xi, &inf, &l);
    let xnan = m.isnan(&ax);
    let l = m.sel(&xnan, &ax, &l);
    // y ln|x| = t + tl (exact product error by fma), e^(t + tl) = e^t (1 + tl).
    let t = m.mul(y, &l);
    let nt = m.neg(&t);
    let tl = m.fma(y, &l, &nt);
    let tl = m.fma(y, &ll, &tl);
    let v0 = m.exp(&t);
    let v1 = m.fma(&v0, &tl, &v0);
    // Keep e^t where the correction cannot apply: e^t infinite or NaN, or tl NaN (t infinite).
    let fin = m.setp("lt", &v0, &k(0x7FF0_0000_0000_0000));
    let tln = m.setp("num", &tl, &tl);
    let ok = m.and(&fin, &tln);
    let v = m.sel(&ok, &v1, &v0);
    // y integer / odd integer (finite y only).
    let ty = m.un("cvt.rzi.f64.f64", y);
    let yint = m.setp("eq", &ty, y);
    let ay = m.abs(y);
    let yfin = m.setp("lt", &ay, &inf);
    let yint = m.and(&yint, &yfin);
    let hy = m.mul(y, &c(0.5));
    let thy = m.un("cvt.rzi.f64.f64", &hy);
    let half_frac = m.setp("ne", &thy, &hy);
    let yodd = m.and(&yint, &half_frac);
    let xb = m.bits(x);
    let xneg = m.a.tmp(Class::Pred);
    m.a.ins(format_args!("setp.lt.s64 {xneg}, {xb}, 0"));
    let flip = m.and(&xneg, &yodd);
    let nv = m.neg(&v);
    let v = m.sel(&flip, &nv, &v);
    // Negative finite x, finite non-integer y: NaN.
    let xlt = m.setp("lt", x, &c(0.0));
    let xfin = m.setp("lt", &ax, &inf);
    let xbad = m.and(&xlt, &xfin);
    let ynonint = m.setp("ne", &ty, y);
    let ynonint = m.and(&ynonint, &yfin);
    let bad = m.and(&xbad, &ynonint);
    let v = m.sel(&bad, &k(0x7FF8_0000_0000_0000), &v);
    // |x| == 1 and y = ±inf: 1.
    let one = m.setp("eq", &ax, &c(1.0));
    let yinf = m.setp("eq", &ay, &inf);
    let p = m.and(&one, &yinf);
    let v = m.sel(&p, &c(1.0), &v);
    // y == 0 or x == 1: 1.
    let y0 = m.setp("eq", y, &c(0.0));
    let x1 = m.setp("eq", x, &c(1.0));
    let p = m.or(&y0, &x1);
    m.sel(&p, &c(1.0), &v)
}

/// `x.powi(n)` as compiler-rt's `__powi*f2` computes it (binary powering in the type's own
/// precision, reciprocal at the end for negative `n`), so results are bit-identical to Rust's.
fn powi(a: &mut Asm, x: &Opd, n: &Opd, cl: Class) -> Opd {
    let ty = if cl == Class::F32 { ".f32" } else { ".f64" };
    let base = a.copy(x);
    let e = a.copy(n);
    let r = a.tmp(cl);
    a.mov_to(&r, &float_imm(cl, 1.0));
    let recip = a.tmp(Class::Pred);
    a.ins(format_args!("setp.lt.s32 {recip}, {e}, 0"));
    let head = a.label("powi_loop");
    let done = a.label("powi_done");
    a.put(&head);
    let bit = a.bin("and.b32", Class::B32, &e, &b32_imm(1));
    let p = a.tmp(Class::Pred);
    a.ins(format_args!("setp.ne.u32 {p}, {bit}, 0"));
    a.ins(format_args!("@{p} mul.rn{ty} {r}, {r}, {base}"));
    a.ins(format_args!("div.s32 {e}, {e}, 2"));
    let z = a.tmp(Class::Pred);
    a.ins(format_args!("setp.eq.s32 {z}, {e}, 0"));
    a.bra_if(&z, true, &done);
    a.ins(format_args!("mul.rn{ty} {base}, {base}, {base}"));
    a.bra(&head);
    a.put(&done);
    let one = float_imm(cl, 1.0);
    let inv = a.tmp(cl);
    a.ins(format_args!("div.rn{ty} {inv}, {one}, {r}"));
    a.tri(format_args!("selp{ty}"), cl, &inv, &r, &recip)
}

/// Rust's `%` on floats (C's `fmod`): exact, by long division of the integer significands.
/// NaN for `y == 0`, infinite `x` or a NaN operand; `x` itself when `|x| < |y|` or `y` is
/// infinite; the sign of `x` always.
fn fmod(a: &mut Asm, x: &Opd, y: &Opd, wide: bool) -> Opd {
    let (ic, fc) = if wide {
        (Class::B64, Class::F64)
    } else {
        (Class::B32, Class::F32)
    };
    let w = if wide { 64 } else { 32 };
    let mbits: i64 = if wide { 52 } else { 23 };
    let sign: i128 = 1 << (w - 1);
    let imm = |v: i128| {
        if wide {
            b64_imm(v)
        } else {
            b32_imm(v as u32 as i32 as i64)
        }
    };
    let bt = format!(".b{w}");
    let ut = format!(".u{w}");
    let st = format!(".s{w}");
    let exp_mask = imm(if wide {
        0x7FF0_0000_0000_0000
    } else {
        0x7F80_0000
    });
    let mant_mask = imm((1i128 << mbits) - 1);
    let implicit = imm(1i128 << mbits);
    let nan = imm(if wide {
        0x7FF8_0000_0000_0000
    } else {
        0x7FC0_0000
    });

    let ux = a.un(format_args!("mov{bt}"), ic, x);
    let uy = a.un(format_args!("mov{bt}"), ic, y);
    let sx = a.bin(format_args!("and{bt}"), ic, &ux, &imm(sign));
    let ax = a.bin(
        &format!("and{bt}"),
        ic,
        &ux,
        &imm(!sign & ((1i128 << w) - 1)),
    );
    let ay = a.bin(
        &format!("and{bt}"),
        ic,
        &uy,
        &imm(!sign & ((1i128 << w) - 1)),
    );
    let res = a.tmp(ic);
    let done = a.label("fmod_done");
    // NaN cases.
    let p = a.tmp(Class::Pred);
    let q = a.tmp(Class::Pred);
    a.ins(format_args!("setp.eq{ut} {p}, {ay}, 0"));
    a.ins(format_args!("setp.ge{ut} {q}, {ax}, {exp_mask}"));
    a.ins(format_args!("or.pred {p}, {p}, {q}"));
    a.ins(format_args!("setp.gt{ut} {q}, {ay}, {exp_mask}"));
    a.ins(format_args!("or.pred {p}, {p}, {q}"));
    a.mov_to(&res, &nan);
    a.bra_if(&p, true, &done);
    // |x| < |y| (this includes y = ±inf): x.
    a.mov_to(&res, &ux);
    a.ins(format_args!("setp.lt{ut} {p}, {ax}, {ay}"));
    a.bra_if(&p, true, &done);
    // |x| == |y|: ±0.
    a.mov_to(&res, &sx);
    a.ins(format_args!("setp.eq{ut} {p}, {ax}, {ay}"));
    a.bra_if(&p, true, &done);
    // Unpack significands and exponents (normalising subnormals).
    let unpack = |a: &mut Asm, v: &Opd| -> (Opd, Opd) {
        let eb = a.bin(format_args!("shr{ut}"), ic, v, &b32_imm(mbits));
        let e = if wide {
            a.un("cvt.u32.u64", Class::B32, &eb)
        } else {
            eb
        };
        let e = a.copy(&e);
        let m = a.bin(format_args!("and{bt}"), ic, v, &mant_mask);
        let m = a.copy(&m);
        let sub = a.tmp(Class::Pred);
        a.ins(format_args!("setp.eq.u32 {sub}, {e}, 0"));
        // normal: add the implicit bit
        a.ins(format_args!("@!{sub} or{bt} {m}, {m}, {implicit}"));
        // subnormal: shift left so that the top set bit lands on the implicit position
        let lz = a.un(format_args!("clz{bt}"), Class::B32, v);
        let sh = a.bin("sub.s32", Class::B32, &lz, &b32_imm(w - 1 - mbits));
        a.ins(format_args!("@{sub} shl{bt} {m}, {m}, {sh}"));
        a.ins(format_args!("@{sub} sub.s32 {e}, 1, {sh}"));
        (m, e)
    };
    let (mx, ex) = unpack(a, &ax);
    let (my, ey) = unpack(a, &ay);
    let head = a.label("fmod_loop");
    let tail = a.label("fmod_tail");
    let zero = a.label("fmod_zero");
    let d = a.tmp(ic);
    a.put(&head);
    a.ins(format_args!("setp.le.s32 {p}, {ex}, {ey}"));
    a.bra_if(&p, true, &tail);
    a.ins(format_args!("sub{st} {d}, {mx}, {my}"));
    a.ins(format_args!("setp.ge{st} {p}, {d}, 0"));
    a.ins(format_args!("@{p} mov{bt} {mx}, {d}"));
    a.ins(format_args!("setp.eq{ut} {q}, {mx}, 0"));
    a.bra_if(&q, true, &zero);
    a.ins(format_args!("shl{bt} {mx}, {mx}, 1"));
    a.ins(format_args!("sub.s32 {ex}, {ex}, 1"));
    a.bra(&head);
    a.put(&tail);
    a.ins(format_args!("sub{st} {d}, {mx}, {my}"));
    a.ins(format_args!("setp.ge{st} {p}, {d}, 0"));
    a.ins(format_args!("@{p} mov{bt} {mx}, {d}"));
    a.ins(format_args!("setp.eq{ut} {q}, {mx}, 0"));
    a.bra_if(&q, true, &zero);
    // Normalise: the top bit to the implicit position.
    let lz = a.un(format_args!("clz{bt}"), Class::B32, &mx);
    let sh = a.bin("sub.s32", Class::B32, &lz, &b32_imm(w - 1 - mbits));
    a.ins(format_args!("shl{bt} {mx}, {mx}, {sh}"));
    a.ins(format_args!("sub.s32 {ex}, {ex}, {sh}"));
    // Normal result: exponent field and significand; subnormal: shift right by 1 - ex.
    let normal = a.label("fmod_normal");
    a.ins(format_args!("setp.gt.s32 {p}, {ex}, 0"));
    a.bra_if(&p, true, &normal);
    let rs = a.tmp(Class::B32);
    a.ins(format_args!("sub.s32 {rs}, 1, {ex}"));
    a.ins(format_args!("shr{ut} {res}, {mx}, {rs}"));
    a.ins(format_args!("or{bt} {res}, {res}, {sx}"));
    a.bra(&done);
    a.put(&normal);
    let e64 = if wide {
        a.un("cvt.u64.u32", Class::B64, &ex)
    } else {
        ex.clone()
    };
    let ef = a.bin(format_args!("shl{bt}"), ic, &e64, &b32_imm(mbits));
    let mm = a.bin(format_args!("and{bt}"), ic, &mx, &mant_mask);
    a.ins(format_args!("or{bt} {res}, {ef}, {mm}"));
    a.ins(format_args!("or{bt} {res}, {res}, {sx}"));
    a.bra(&done);
    a.put(&zero);
    a.mov_to(&res, &sx);
    a.put(&done);
    a.un(format_args!("mov{bt}"), fc, &res)
}
