//! Scalar operators and casts, with the IR's semantics (see the module documentation of
//! [`super`] for the instruction choices).

use super::asm::{b32_imm, b64_imm, f32_imm, f64_imm, float_imm, ptx_type, Class, Opd};
use super::gen::{Gen, R};
use super::math::Routine;
use spoc_ir::{BinOp, Const, ScalarType, UnOp};

/// The immediate operand of constant `c`.
pub(crate) fn const_opd(c: Const) -> Opd {
    match c {
        Const::Bool(b) => Opd::imm(if b { "1" } else { "0" }, Class::Pred),
        Const::I32(v) => b32_imm(v as i64),
        Const::U32(v) => b32_imm(v as i64),
        Const::I64(v) => b64_imm(v as i128),
        Const::U64(v) => b64_imm(v as i128),
        Const::F16(b) | Const::BF16(b) => Opd::imm(format!("0x{b:04X}"), Class::B16),
        Const::F32(b) => f32_imm(b),
        Const::F64(b) => f64_imm(b),
    }
}

/// `op c` computed now, with the IR's semantics (wrapping integer negation), when exact.
pub(crate) fn fold_unary(op: UnOp, c: Const) -> Option<Const> {
    Some(match (op, c) {
        (UnOp::Neg, Const::I32(v)) => Const::I32(v.wrapping_neg()),
        (UnOp::Neg, Const::I64(v)) => Const::I64(v.wrapping_neg()),
        (UnOp::Neg, Const::U32(v)) => Const::U32(v.wrapping_neg()),
        (UnOp::Neg, Const::U64(v)) => Const::U64(v.wrapping_neg()),
        (UnOp::Neg, Const::F32(b)) => Const::F32(b ^ 0x8000_0000),
        (UnOp::Neg, Const::F64(b)) => Const::F64(b ^ (1 << 63)),
        (UnOp::Not, Const::Bool(v)) => Const::Bool(!v),
        (UnOp::Not, Const::I32(v)) => Const::I32(!v),
        (UnOp::Not, Const::I64(v)) => Const::I64(!v),
        (UnOp::Not, Const::U32(v)) => Const::U32(!v),
        (UnOp::Not, Const::U64(v)) => Const::U64(!v),
        _ => return None,
    })
}

/// `c as to` computed now with Rust's `as` semantics (the IR's), when neither side is `f16`.
pub(crate) fn fold_cast(c: Const, to: ScalarType) -> Option<Const> {
    macro_rules! conv {
        ($v:expr) => {{
            let v = $v;
            match to {
                ScalarType::I32 => Const::I32(v as i32),
                ScalarType::I64 => Const::I64(v as i64),
                ScalarType::U32 => Const::U32(v as u32),
                ScalarType::U64 => Const::U64(v as u64),
                ScalarType::F32 => Const::F32((v as f32).to_bits()),
                ScalarType::F64 => Const::F64((v as f64).to_bits()),
                _ => return None,
            }
        }};
    }
    Some(match c {
        Const::Bool(b) => match to {
            ScalarType::Bool => c,
            _ if to.is_integer() => conv!(b as u8),
            _ => return None,
        },
        Const::I32(v) => conv!(v),
        Const::I64(v) => conv!(v),
        Const::U32(v) => conv!(v),
        Const::U64(v) => conv!(v),
        Const::F32(b) => conv!(f32::from_bits(b)),
        Const::F64(b) => conv!(f64::from_bits(b)),
        Const::F16(_) | Const::BF16(_) => return None,
    })
}

/// The comparison keyword of `op` for `setp` (floats: `!=` is unordered, the rest ordered).
fn cmp_word(op: BinOp, float: bool) -> &'static str {
    match op {
        BinOp::Eq => "eq",
        BinOp::Ne if float => "neu",
        BinOp::Ne => "ne",
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        BinOp::Ge => "ge",
        _ => "eq",
    }
}

impl Gen<'_, '_> {
    /// `op a` on a value of type `t`.
    pub(crate) fn unary(&mut self, op: UnOp, t: ScalarType, a: &Opd) -> R<Opd> {
        let a = self.a.reg(a);
        let c = Class::of(t);
        Ok(match (op, t) {
            (UnOp::Not, ScalarType::Bool) => self.a.un("not.pred", c, &a),
            (UnOp::Not, _) => self
                .a
                .un(format_args!("not{}", super::asm::bit_type(t)), c, &a),
            (UnOp::Neg, _) if t.is_integer() => {
                let bits = t.size_bytes() * 8;
                self.a.un(format_args!("neg.s{bits}"), c, &a)
            }
            (UnOp::Neg, _) => self.a.un(format_args!("neg{}", ptx_type(t)), c, &a),
        })
    }

    /// `a op b`; `lt` is the type of `a` (and of `b`, except for shifts, where `b` has `rt`).
    pub(crate) fn binary(
        &mut self,
        op: BinOp,
        lt: ScalarType,
        a: &Opd,
        rt: ScalarType,
        b: &Opd,
    ) -> R<Opd> {
        let c = Class::of(lt);
        let ty = ptx_type(lt);
        let float = lt.is_float();
        if op == BinOp::Div && float && a.imm && a.text == float_imm(c, 1.0).text {
            // `1.0 / x`: `rcp.rn` is the correctly rounded reciprocal (PTX ISA, "rcp": IEEE 754
            // round-to-nearest, subnormals supported), so it gives the bits `div.rn 1.0, x`
            // gives, in fewer instructions (what NVRTC emits for the same source).
            let b = self.a.reg(b);
            return Ok(self.a.un(format_args!("rcp.rn{ty}"), c, &b));
        }
        let a = self.a.reg(a);
        let bits = lt.size_bytes() * 8;
        if op.is_comparison() {
            return Ok(self.compare(op, lt, &a, b));
        }
        Ok(match op {
            BinOp::Add if float => self.a.bin(format_args!("add.rn{ty}"), c, &a, b),
            BinOp::Sub if float => self.a.bin(format_args!("sub.rn{ty}"), c, &a, b),
            BinOp::Mul if float => self.a.bin(format_args!("mul.rn{ty}"), c, &a, b),
            BinOp::Div if float => self.a.bin(format_args!("div.rn{ty}"), c, &a, b),
            BinOp::Rem if float => {
                let r = if lt == ScalarType::F32 {
                    Routine::FmodF32
                } else {
                    Routine::FmodF64
                };
                let b = self.a.reg(b);
                self.call_routine(r, &[a, b])
            }
            BinOp::Add => self.a.bin(format_args!("add.s{bits}"), c, &a, b),
            BinOp::Sub => self.a.bin(format_args!("sub.s{bits}"), c, &a, b),
            BinOp::Mul => self.a.bin(format_args!("mul.lo.s{bits}"), c, &a, b),
            BinOp::Div | BinOp::Rem => self.int_div(op, lt, &a, b),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                let word = match op {
                    BinOp::BitAnd => "and",
                    BinOp::BitOr => "or",
                    _ => "xor",
                };
                if lt == ScalarType::Bool {
                    let b = self.a.reg(b);
                    self.a.bin(format_args!("{word}.pred"), c, &a, &b)
                } else {
                    self.a.bin(format_args!("{word}.b{bits}"), c, &a, b)
                }
            }
            BinOp::Shl | BinOp::Shr => {
                let amt = self.shift_amount(rt, b, bits as u32);
                let ins = match (op, lt.is_signed()) {
                    (BinOp::Shl, _) => format!("shl.b{bits}"),
                    (_, true) => format!("shr.s{bits}"),
                    (_, false) => format!("shr.u{bits}"),
                };
                self.a.bin(&ins, c, &a, &amt)
            }
            _ => unreachable!("comparisons and logical operators are handled elsewhere"),
        })
    }

    /// The shift amount modulo the width `bits`, as a `u32` operand.
    fn shift_amount(&mut self, rt: ScalarType, b: &Opd, bits: u32) -> Opd {
        if b.imm {
            if let Ok(v) = b.text.parse::<i128>() {
                return b32_imm((v.rem_euclid(bits as i128)) as i64);
            }
        }
        let b = self.a.reg(b);
        let b32 = if rt.size_bytes() == 8 {
            self.a.un("cvt.u32.u64", Class::B32, &b)
        } else {
            b
        };
        self.a
            .bin("and.b32", Class::B32, &b32, &b32_imm(bits as i64 - 1))
    }

    /// Integer `/` and `%`. Signed division guards `b == -1` so that `MIN / -1` is `MIN` (the
    /// wrapping negation) and `MIN % -1` is 0, whatever `div`/`rem` do on overflow; a zero
    /// divisor gives 0 (recorded in checked mode).
    fn int_div(&mut self, op: BinOp, t: ScalarType, a: &Opd, b: &Opd) -> Opd {
        let c = Class::of(t);
        let bits = t.size_bytes() * 8;
        if b.imm && b.text.parse::<i128>().is_ok_and(|v| v != 0) {
            return self.int_div_nonzero(op, t, a, b);
        }
        // A zero divisor gives 0 (the other GPU targets' value; PTX's is unspecified), and
        // checked mode records it.
        let b = self.a.reg(b);
        let zero = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.eq.s{bits} {zero}, {b}, 0"));
        if self.fault.is_some() {
            let nonzero = self.a.un("not.pred", Class::Pred, &zero);
            self.fault_unless_plain(&nonzero, crate::checked::FAULT_DIVISION_BY_ZERO);
        }
        let one = self.a.tri(
            format_args!("selp.b{bits}"),
            c,
            &Opd::imm("1", c),
            &b,
            &zero,
        );
        let q = self.int_div_nonzero(op, t, a, &one);
        self.a.tri(
            format_args!("selp.b{bits}"),
            c,
            &Opd::imm("0", c),
            &q,
            &zero,
        )
    }

    /// [`Self::int_div`] for a divisor that is not 0.
    fn int_div_nonzero(&mut self, op: BinOp, t: ScalarType, a: &Opd, b: &Opd) -> Opd {
        let c = Class::of(t);
        let bits = t.size_bytes() * 8;
        let word = if op == BinOp::Div { "div" } else { "rem" };
        if !t.is_signed() {
            // By a power of two, a shift or a mask: ptxas keeps `div.u32` by an immediate as
            // the generic reciprocal sequence (`I2F`, `MUFU.RCP`, …), NVVM does not emit it.
            let pow2 = b
                .imm
                .then(|| b.text.parse::<u64>().ok())
                .flatten()
                .filter(|v| v.is_power_of_two());
            if let Some(v) = pow2 {
                return if op == BinOp::Div {
                    let k = v.trailing_zeros();
                    self.a
                        .bin(format_args!("shr.b{bits}"), c, a, &b32_imm(i64::from(k)))
                } else {
                    let mask = Opd::imm((v - 1).to_string(), c);
                    self.a.bin(format_args!("and.b{bits}"), c, a, &mask)
                };
            }
            return self.a.bin(format_args!("{word}.u{bits}"), c, a, b);
        }
        if b.imm {
            match b.text.parse::<i128>() {
                Ok(-1) if op == BinOp::Div => return self.a.un(format_args!("neg.s{bits}"), c, a),
                Ok(-1) => return Opd::imm("0", c),
                Ok(_) => return self.a.bin(format_args!("{word}.s{bits}"), c, a, b),
                Err(_) => {}
            }
        }
        let q = self.a.bin(format_args!("{word}.s{bits}"), c, a, b);
        let p = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.eq.s{bits} {p}, {b}, -1"));
        let alt = if op == BinOp::Div {
            self.a.un(format_args!("neg.s{bits}"), c, a)
        } else {
            Opd::imm("0", c)
        };
        self.a.tri(format_args!("selp.b{bits}"), c, &alt, &q, &p)
    }

    /// `a op b` for a comparison operator, as a predicate.
    fn compare(&mut self, op: BinOp, t: ScalarType, a: &Opd, b: &Opd) -> Opd {
        if t == ScalarType::Bool {
            let b = self.a.reg(b);
            return match op {
                BinOp::Eq => {
                    let x = self.a.bin("xor.pred", Class::Pred, a, &b);
                    self.a.un("not.pred", Class::Pred, &x)
                }
                BinOp::Ne => self.a.bin("xor.pred", Class::Pred, a, &b),
                _ => {
                    // false < true: compare as 0/1.
                    let x = self.a.tmp(Class::B32);
                    self.a.ins(format_args!("selp.u32 {x}, 1, 0, {a}"));
                    let y = self.a.tmp(Class::B32);
                    self.a.ins(format_args!("selp.u32 {y}, 1, 0, {b}"));
                    let p = self.a.tmp(Class::Pred);
                    self.a.ins(format_args!(
                        "setp.{}.u32 {p}, {x}, {y}",
                        cmp_word(op, false)
                    ));
                    p
                }
            };
        }
        let p = self.a.tmp(Class::Pred);
        self.a.ins(format_args!(
            "setp.{}{} {p}, {a}, {b}",
            cmp_word(op, t.is_float()),
            ptx_type(t)
        ));
        p
    }

    /// `bf16` bits to `f32`: the bits are the upper half of the `f32`'s, so the conversion is
    /// exact and is a shift (`cvt.f32.bf16` would need sm_90).
    fn bf16_to_f32(&mut self, v: &Opd) -> Opd {
        let w = self.a.un("cvt.u32.u16", Class::B32, v);
        let s = self
            .a
            .bin("shl.b32", Class::B32, &w, &Opd::imm("16", Class::B32));
        self.a.un("mov.b32", Class::F32, &s)
    }

    /// `f32` to `bf16` bits, rounding to nearest, ties to even; overflow gives infinity, a NaN
    /// stays a NaN. sm_80 and newer have the instruction (`cvt.rn.bf16.f32`, PTX ISA 7.0,
    /// §9.7.9.21); older targets get the same rounding on the bits: `x + 0x7fff + lsb`, whose
    /// carry into the upper half is the round-up, with NaN forced quiet (`| 0x40`, as the
    /// `half` crate's `bf16::from_f32` does).
    fn f32_to_bf16(&mut self, v: &Opd) -> Opd {
        if self.cx.sm >= 80 {
            return self.a.un("cvt.rn.bf16.f32", Class::B16, v);
        }
        let x = self.a.un("mov.b32", Class::B32, v);
        let imm = |s: &str| Opd::imm(s, Class::B32);
        let mag = self.a.bin("and.b32", Class::B32, &x, &imm("0x7FFFFFFF"));
        let nan = self.a.tmp(Class::Pred);
        self.a.ins(format_args!(
            "setp.gt.u32 {nan}, {mag}, {}",
            imm("0x7F800000")
        ));
        let hi = self.a.bin("shr.u32", Class::B32, &x, &imm("16"));
        let lsb = self.a.bin("and.b32", Class::B32, &hi, &imm("1"));
        let up = self.a.bin("add.u32", Class::B32, &x, &imm("0x7FFF"));
        let up = self.a.bin("add.u32", Class::B32, &up, &lsb);
        let rounded = self.a.bin("shr.u32", Class::B32, &up, &imm("16"));
        let quiet = self.a.bin("or.b32", Class::B32, &hi, &imm("0x40"));
        let r = self.a.tri("selp.b32", Class::B32, &quiet, &rounded, &nan);
        self.a.un("cvt.u16.u32", Class::B16, &r)
    }

    /// `v as to` (Rust's `as`): integers truncate or extend, floats to integers round toward
    /// zero and saturate (`cvt.rzi` saturates; NaN is forced to 0 with a `setp.nan`/`selp`,
    /// since PTX gives `1 << (bits-1)` for some NaN conversions), integers to floats round to
    /// nearest (`cvt.rn`), `bool` to integers is 0/1.
    pub(crate) fn cast(&mut self, v: &Opd, from: ScalarType, to: ScalarType) -> R<Opd> {
        use ScalarType::*;
        if from == to {
            return Ok(v.clone());
        }
        let v = self.a.reg(v);
        let tc = Class::of(to);
        if from == BF16 || to == BF16 {
            // The validator admits `f32` as the other side only.
            return Ok(if from == BF16 {
                self.bf16_to_f32(&v)
            } else {
                self.f32_to_bf16(&v)
            });
        }
        Ok(match (from, to) {
            (Bool, _) if to.is_integer() => {
                let d = self.a.tmp(tc);
                self.a.ins(format_args!(
                    "selp{} {d}, 1, 0, {v}",
                    ptx_type(to).replace(".s", ".u")
                ));
                d
            }
            (_, _) if from.is_integer() && to.is_integer() => {
                if from.size_bytes() == to.size_bytes() {
                    v
                } else if to.size_bytes() > from.size_bytes() {
                    // Rust extends by the source's signedness whatever the destination's. Both
                    // types of the `cvt` carry the source's signedness: `cvt.s64.u32` sign-extended
                    // on the H200 (difftest, `(x as usize) as i64` for x >= 2^31), `cvt.u64.s32`
                    // is its mirror.
                    let (d, s) = if from.is_signed() {
                        (".s64", ".s32")
                    } else {
                        (".u64", ".u32")
                    };
                    self.a.un(format_args!("cvt{d}{s}"), tc, &v)
                } else {
                    self.a.un("cvt.u32.u64", tc, &v)
                }
            }
            (_, _) if from.is_integer() && to.is_float() => self.a.un(
                format_args!("cvt.rn{}{}", ptx_type(to), ptx_type(from)),
                tc,
                &v,
            ),
            (F16, _) if to.is_integer() => {
                let f = self.a.un("cvt.f32.f16", Class::F32, &v);
                return self.cast(&f, F32, to);
            }
            (_, _) if from.is_float() && to.is_integer() => {
                let r = self.a.un(
                    &format!("cvt.rzi{}{}", ptx_type(to), ptx_type(from)),
                    tc,
                    &v,
                );
                let p = self.a.tmp(Class::Pred);
                self.a
                    .ins(format_args!("setp.nan{} {p}, {v}, {v}", ptx_type(from)));
                let bits = to.size_bytes() * 8;
                self.a
                    .tri(format_args!("selp.b{bits}"), tc, &Opd::imm("0", tc), &r, &p)
            }
            (_, _) if from.is_float() && to.is_float() => {
                let widen = to.size_bytes() > from.size_bytes();
                let rnd = if widen { "" } else { ".rn" };
                self.a.un(
                    &format!("cvt{rnd}{}{}", ptx_type(to), ptx_type(from)),
                    tc,
                    &v,
                )
            }
            _ => {
                return Err(self.cx.unsupported(
                    format!("a cast from `{from}` to `{to}`"),
                    "a cast Rust allows",
                ))
            }
        })
    }
}
