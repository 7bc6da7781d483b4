//! Intrinsics: thread indices, atomics, warp operations, math.

use super::asm::{f32_imm, float_imm, ptx_type, Class, Opd};
use super::expr::scalar_ty;
use super::gen::{Gen, R};
use super::math::Routine;
use super::value::{Place, Val};
use spoc_ir::{AtomicOp, Axis, Expr, HalfKind, Intrinsic, MathFn, ScalarType, ShuffleKind};

impl<'k> Gen<'k, '_> {
    /// Evaluates intrinsic `i` with arguments `args` (the whole call is `e`).
    pub(crate) fn intrinsic(&mut self, e: &'k Expr, i: Intrinsic, args: &'k [Expr]) -> R<Val> {
        let u32v = |o: Opd| Ok(Val::Scalar(o, ScalarType::U32));
        match i {
            Intrinsic::ThreadIdx(a) => u32v(self.special("tid", a)),
            Intrinsic::BlockIdx(a) => u32v(self.special("ctaid", a)),
            Intrinsic::BlockDim(a) => u32v(self.special("ntid", a)),
            Intrinsic::GridDim(a) => u32v(self.special("nctaid", a)),
            Intrinsic::GlobalId(a) => {
                let b = self.special("ctaid", a);
                let n = self.special("ntid", a);
                let t = self.special("tid", a);
                u32v(self.a.tri("mad.lo.u32", Class::B32, &b, &n, &t))
            }
            Intrinsic::GlobalSize(a) => {
                let g = self.special("nctaid", a);
                let n = self.special("ntid", a);
                u32v(self.a.bin("mul.lo.u32", Class::B32, &g, &n))
            }
            Intrinsic::WarpSize => {
                let d = self.a.tmp(Class::B32);
                self.a.ins(format_args!("mov.u32 {d}, WARP_SZ"));
                u32v(d)
            }
            Intrinsic::LaneId => {
                let d = self.a.tmp(Class::B32);
                self.a.ins(format_args!("mov.u32 {d}, %laneid"));
                u32v(d)
            }
            Intrinsic::Math(m) => {
                let t = scalar_ty(&args[0].ty);
                // The operands in order; up to three (`mul_add`) on the stack.
                let r = match args {
                    [a] => {
                        let a = self.scalar(a)?;
                        self.math(m, t, &[a])?
                    }
                    [a, b] => {
                        let a = self.scalar(a)?;
                        let b = self.scalar(b)?;
                        self.math(m, t, &[a, b])?
                    }
                    [a, b, c] => {
                        let a = self.scalar(a)?;
                        let b = self.scalar(b)?;
                        let c = self.scalar(c)?;
                        self.math(m, t, &[a, b, c])?
                    }
                    _ => {
                        let mut ops = Vec::new();
                        for a in args {
                            ops.push(self.scalar(a)?);
                        }
                        self.math(m, t, &ops)?
                    }
                };
                Ok(Val::Scalar(r, t))
            }
            Intrinsic::Atomic(op) => self.atomic(e, op, args),
            Intrinsic::Shuffle(kind) => {
                let t = scalar_ty(&args[0].ty);
                let v = self.scalar(&args[0])?;
                let lane = self.scalar(&args[1])?;
                self.need_subgroups(e)?;
                let r = self.shuffle(kind, t, &v, &lane);
                Ok(Val::Scalar(r, t))
            }
            Intrinsic::VoteAny | Intrinsic::VoteAll | Intrinsic::Ballot => {
                let p = self.scalar(&args[0])?;
                self.need_subgroups(e)?;
                let p = self.pred_reg(&p);
                let mask = self.warp_mask();
                Ok(match i {
                    Intrinsic::Ballot => {
                        let d = self.a.tmp(Class::B32);
                        self.a
                            .ins(format_args!("vote.sync.ballot.b32 {d}, {p}, {mask}"));
                        Val::Scalar(d, ScalarType::U32)
                    }
                    _ => {
                        let mode = if i == Intrinsic::VoteAny {
                            "any"
                        } else {
                            "all"
                        };
                        let d = self.a.tmp(Class::Pred);
                        self.a
                            .ins(format_args!("vote.sync.{mode}.pred {d}, {p}, {mask}"));
                        Val::Scalar(d, ScalarType::Bool)
                    }
                })
            }
            Intrinsic::PackHalf2(_) => {
                let lo = self.scalar(&args[0])?;
                let hi = self.scalar(&args[1])?;
                let (lo, hi) = (self.a.reg(&lo), self.a.reg(&hi));
                let d = self.a.tmp(Class::B32);
                self.a.ins(format!("mov.b32 {d}, {{{lo}, {hi}}}"));
                Ok(Val::Scalar(d, ScalarType::U32))
            }
            Intrinsic::MmaM16N8K16(h) => self.mma_m16n8k16(e, h, args),
        }
    }

    /// `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32` (PTX ISA 7.0, sm_80+):
    /// the fragments are the vectors' lanes, in the layout of the PTX ISA's "Matrix Fragments
    /// for mma.m16n8k16 with floating point type" (the kernel language's is the same).
    fn mma_m16n8k16(&mut self, e: &'k Expr, h: HalfKind, args: &'k [Expr]) -> R<Val> {
        if self.cx.sm < 80 {
            return Err(self.cx.unsupported(
                format!("the warp matrix operation `{}`", self.show(e)),
                format!(
                    "sm_80 or newer (`mma.sync` with {} inputs and f32 accumulation; the target is sm_{})",
                    h.name(),
                    self.cx.sm
                ),
            ));
        }
        let mut regs: Vec<Vec<Opd>> = Vec::new();
        for a in args {
            let Val::Vector(_, lanes) = self.expr(a)? else {
                return Err(self.cx.unsupported(
                    format!("`{}` where a vector is needed", self.show(a)),
                    "a vector value",
                ));
            };
            regs.push(lanes.iter().map(|l| self.a.reg(l)).collect());
        }
        let d: Vec<Opd> = (0..4).map(|_| self.a.tmp(Class::F32)).collect();
        let list = |os: &[Opd]| {
            os.iter()
                .map(|o| o.text.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let t = h.name();
        self.a.ins(format!(
            "mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 {{{}}}, {{{}}}, {{{}}}, {{{}}}",
            list(&d),
            list(&regs[0]),
            list(&regs[1]),
            list(&regs[2])
        ));
        Ok(Val::Vector(ScalarType::F32, d))
    }

    /// `mov.u32 d, %<reg>.<axis>`.
    fn special(&mut self, reg: &str, a: Axis) -> Opd {
        let d = self.a.tmp(Class::B32);
        self.a
            .ins(format_args!("mov.u32 {d}, %{reg}.{}", a.letter()));
        d
    }

    fn need_subgroups(&self, e: &Expr) -> R<()> {
        if !self.cx.opts.caps.subgroups {
            return Err(self.cx.unsupported(
                format!("the warp operation `{}`", self.show(e)),
                "warp operations (the device reports no subgroup support)",
            ));
        }
        Ok(())
    }

    /// The member mask of warp operations (sm_70+; older targets have no member masks and get
    /// the full warp). Where the warp is converged ([`Gen::warp_converged`]: no conditional
    /// region encloses the operation), the mask names every lane that entered the kernel
    /// ([`Gen::entry_warp_mask`]): `shfl.sync`/`vote.sync` wait for all of them that have not
    /// exited (PTX ISA §9.7.8.6, §9.7.8.7), so lanes that left a divergent region early cannot
    /// run the operation without the others, as they could with `activemask` (Volta's
    /// independent thread scheduling need not reconverge a warp after a branch; difftest F15).
    /// Inside a conditional region the mask is the lanes active there (`activemask`): docs/
    /// LANGUAGE.md's "lanes that reach the operation together".
    fn warp_mask(&mut self) -> Opd {
        if self.cx.sm < 70 {
            return Opd::imm("-1", Class::B32);
        }
        if self.warp_converged() {
            return self.entry_warp_mask();
        }
        let m = self.a.tmp(Class::B32);
        self.a.ins(format_args!("activemask.b32 {m}"));
        m
    }

    /// The lanes of this warp that entered the kernel: `activemask` at the start of the
    /// body, where the warp has not branched yet (computed there the first time it is needed).
    fn entry_warp_mask(&mut self) -> Opd {
        if let Some(m) = &self.entry_mask {
            return m.clone();
        }
        let m = self.a.named(Class::B32, "spoc_warp_lanes");
        self.a
            .ins_at(self.body_start, format!("activemask.b32 {m}"));
        self.entry_mask = Some(m.clone());
        m
    }

    /// A warp shuffle of a 32- or 64-bit value (64-bit values move as two halves), with
    /// docs/LANGUAGE.md's semantics: `shfl.sync` takes the lane operand modulo 32 (PTX ISA
    /// §9.7.8.6: `bval = b[4:0]`), so a `shuffle_up`/`shuffle_down` delta or a `shuffle_xor`
    /// mask of 32 or more would read another lane; the lane's own value is selected instead
    /// (its source is outside the warp). `shuffle` keeps the modulo, as CUDA's `__shfl_sync`.
    fn shuffle(&mut self, kind: ShuffleKind, t: ScalarType, v: &Opd, lane: &Opd) -> Opd {
        let d = self.shuffle_raw(kind, t, v, lane);
        if kind == ShuffleKind::Index {
            return d;
        }
        if lane.imm {
            match lane.text.parse::<u64>() {
                Ok(n) if n < 32 => return d,
                Ok(_) => return self.a.copy(v),
                Err(_) => {}
            }
        }
        let lane = self.a.reg(lane);
        let p = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.lt.u32 {p}, {lane}, 32"));
        let c = Class::of(t);
        let ty = if t.size_bytes() == 4 { ".b32" } else { ".b64" };
        let v = self.a.reg(v);
        self.a.tri(format_args!("selp{ty}"), c, &d, &v, &p)
    }

    /// `shfl.sync` itself (see [`Self::shuffle`]).
    fn shuffle_raw(&mut self, kind: ShuffleKind, t: ScalarType, v: &Opd, lane: &Opd) -> Opd {
        let (mode, clamp) = match kind {
            ShuffleKind::Index => ("idx", 31),
            ShuffleKind::Up => ("up", 0),
            ShuffleKind::Down => ("down", 31),
            ShuffleKind::Xor => ("bfly", 31),
        };
        let mask = self.warp_mask();
        let v = self.a.reg(v);
        let c = Class::of(t);
        if t.size_bytes() == 4 {
            let d = self.a.tmp(c);
            self.a.ins(format_args!(
                "shfl.sync.{mode}.b32 {d}, {v}, {lane}, {clamp}, {mask}"
            ));
            return d;
        }
        let lo = self.a.tmp(Class::B32);
        let hi = self.a.tmp(Class::B32);
        self.a.ins(format_args!("mov.b64 {{{lo}, {hi}}}, {v}"));
        let lo2 = self.a.tmp(Class::B32);
        let hi2 = self.a.tmp(Class::B32);
        self.a.ins(format_args!(
            "shfl.sync.{mode}.b32 {lo2}, {lo}, {lane}, {clamp}, {mask}"
        ));
        self.a.ins(format_args!(
            "shfl.sync.{mode}.b32 {hi2}, {hi}, {lane}, {clamp}, {mask}"
        ));
        let d = self.a.tmp(c);
        self.a.ins(format_args!("mov.b64 {d}, {{{lo2}, {hi2}}}"));
        d
    }

    /// An atomic read-modify-write on an element of a global buffer or shared array; returns
    /// the previous value.
    fn atomic(&mut self, e: &'k Expr, op: AtomicOp, args: &'k [Expr]) -> R<Val> {
        let t = scalar_ty(&e.ty);
        let wide = t.size_bytes() == 8;
        let caps = &self.cx.opts.caps;
        if wide && t.is_integer() && !caps.int64_atomics {
            return Err(self.cx.unsupported(
                format!("the 64-bit atomic `{}`", self.show(e)),
                "64-bit integer atomics",
            ));
        }
        if t.is_float() && !caps.float_atomic_add {
            return Err(self.cx.unsupported(
                format!("the float atomic `{}`", self.show(e)),
                "float atomic add",
            ));
        }
        if t == ScalarType::F64 && self.cx.sm < 60 {
            return Err(self.cx.unsupported(
                format!("the f64 atomic `{}`", self.show(e)),
                "compute capability 6.0 (atom.add.f64)",
            ));
        }
        let Val::Array(arr) = self.expr(&args[0])? else {
            return Err(self
                .cx
                .unsupported(format!("`{}` on a non-array", self.show(e)), "an array"));
        };
        let idx = self.scalar(&args[1])?;
        let mut vals = Vec::new();
        for a in &args[2..] {
            let v = self.scalar(a)?;
            vals.push(self.a.reg(&v));
        }
        let Place::Mem(addr, _) = self.index_place(&arr, &idx)? else {
            return Err(self.cx.unsupported(
                format!("`{}` on a Structure-of-Arrays parameter", self.show(e)),
                "an array of scalars",
            ));
        };
        let bits = t.size_bytes() * 8;
        let c = Class::of(t);
        let (word, ty) = match op {
            AtomicOp::Add | AtomicOp::Sub => match t {
                ScalarType::I32 => ("add", ".s32".to_string()),
                ScalarType::F32 | ScalarType::F64 => ("add", ptx_type(t).to_string()),
                _ => ("add", format!(".u{bits}")),
            },
            AtomicOp::Min => ("min", ptx_type(t).to_string()),
            AtomicOp::Max => ("max", ptx_type(t).to_string()),
            AtomicOp::Exchange => ("exch", format!(".b{bits}")),
            AtomicOp::CompareExchange => ("cas", format!(".b{bits}")),
            AtomicOp::And => ("and", format!(".b{bits}")),
            AtomicOp::Or => ("or", format!(".b{bits}")),
            AtomicOp::Xor => ("xor", format!(".b{bits}")),
        };
        if op == AtomicOp::Sub {
            vals[0] = self.a.un(format_args!("neg.s{bits}"), c, &vals[0]);
        }
        let d = self.a.tmp(c);
        let operands: Vec<&str> = vals.iter().map(|v| v.text.as_str()).collect();
        // Checked mode: the atomic runs only for an index inside the array; else 0.
        let at = match &addr.guard {
            Some(g) => {
                self.a.ins(format_args!("mov.b{bits} {d}, 0"));
                format!("@{g} ")
            }
            None => String::new(),
        };
        self.a.ins(format_args!(
            "{at}atom{}.{word}{ty} {d}, {}, {}",
            addr.space.atom(),
            addr.operand(),
            operands.join(", ")
        ));
        Ok(Val::Scalar(d, t))
    }

    /// Integer `max(a, b)` (`is_max`) or `min(a, b)` as a compare and a select, not PTX
    /// `max`/`min`: ptxas 13.0 (the JIT of driver 580, H200) fuses two of those into a 3-input
    /// `VIMNMX3` and drops a `neg` folded into one operand, so `x.abs().max(y)` or
    /// `a.max(-b).max(c)` came out wrong (ptxas 13.5 is right; measured on the H200 with
    /// hand-written PTX for `neg`, `sub 0`, `mul -1` and `abs`-then-max: every `max`/`min` form
    /// of the pattern was wrong, every `setp`/`selp` form right). ptxas still makes a 2-input
    /// `VIMNMX` of the select.
    fn int_min_max(&mut self, is_max: bool, t: ScalarType, a: &Opd, b: &Opd) -> Opd {
        let bits = t.size_bytes() * 8;
        let cmp = if is_max { "gt" } else { "lt" };
        let p = self.a.tmp(Class::Pred);
        self.a
            .ins(format_args!("setp.{cmp}{} {p}, {a}, {b}", ptx_type(t)));
        let d = self.a.tmp(Class::of(t));
        self.a.ins(format_args!("selp.b{bits} {d}, {a}, {b}, {p}"));
        d
    }

    /// A math function on operands of type `t`.
    pub(crate) fn math(&mut self, m: MathFn, t: ScalarType, x: &[Opd]) -> R<Opd> {
        let c = Class::of(t);
        let ty = ptx_type(t);
        let a0 = self.a.reg(&x[0]);
        if t.is_integer() {
            let bits = t.size_bytes() * 8;
            return Ok(match m {
                MathFn::Abs if t.is_signed() => {
                    // Wrapping: |MIN| is MIN, as `wrapping_abs`.
                    let n = self.a.un(format_args!("neg.s{bits}"), c, &a0);
                    self.int_min_max(true, t, &a0, &n)
                }
                MathFn::Abs => a0,
                MathFn::Min => self.int_min_max(false, t, &a0, &x[1]),
                MathFn::Max => self.int_min_max(true, t, &a0, &x[1]),
                _ => {
                    return Err(self
                        .cx
                        .unsupported(format!("`{}` on `{t}`", m.name()), "a float argument"))
                }
            });
        }
        let f64t = t == ScalarType::F64;
        Ok(match m {
            MathFn::Sqrt => self.a.un(format_args!("sqrt.rn{ty}"), c, &a0),
            MathFn::Recip => self.a.un(format_args!("rcp.rn{ty}"), c, &a0),
            MathFn::Rsqrt => {
                let s = self.a.un(format_args!("sqrt.rn{ty}"), c, &a0);
                self.a.un(format_args!("rcp.rn{ty}"), c, &s)
            }
            MathFn::Abs => self.a.un(format_args!("abs{ty}"), c, &a0),
            MathFn::Floor => self.a.un(format_args!("cvt.rmi{ty}{ty}"), c, &a0),
            MathFn::Ceil => self.a.un(format_args!("cvt.rpi{ty}{ty}"), c, &a0),
            MathFn::Trunc => self.a.un(format_args!("cvt.rzi{ty}{ty}"), c, &a0),
            MathFn::Round => self.round_half_away(t, &a0),
            MathFn::Min => self.a.bin(format_args!("min{ty}"), c, &a0, &x[1]),
            MathFn::Max => self.a.bin(format_args!("max{ty}"), c, &a0, &x[1]),
            // PTX `copysign d, a, b` gives b's magnitude with a's sign.
            MathFn::Copysign => {
                let b = self.a.reg(&x[1]);
                self.a.bin(format_args!("copysign{ty}"), c, &b, &a0)
            }
            MathFn::Signum => {
                let one = float_imm(c, 1.0);
                let s = self.a.bin(format_args!("copysign{ty}"), c, &a0, &one);
                let p = self.a.tmp(Class::Pred);
                self.a.ins(format_args!("setp.nan{ty} {p}, {a0}, {a0}"));
                self.a.tri(format_args!("selp{ty}"), c, &a0, &s, &p)
            }
            MathFn::MulAdd => {
                let b = self.a.reg(&x[1]);
                self.a.tri(("fma.rn", ty), c, &a0, &b, &x[2])
            }
            MathFn::Powi => {
                let r = if f64t {
                    Routine::PowiF64
                } else {
                    Routine::PowiF32
                };
                let n = self.a.reg(&x[1]);
                self.call_routine(r, &[a0, n])
            }
            MathFn::Hypot if !f64t => {
                // Exact squares and a sum with 29 spare bits in f64, one sqrt, one rounding.
                let a = self.a.un("cvt.f64.f32", Class::F64, &a0);
                let b1 = self.a.reg(&x[1]);
                let b = self.a.un("cvt.f64.f32", Class::F64, &b1);
                let bb = self.a.bin("mul.rn.f64", Class::F64, &b, &b);
                let s = self.a.tri("fma.rn.f64", Class::F64, &a, &a, &bb);
                let r = self.a.un("sqrt.rn.f64", Class::F64, &s);
                let r = self.a.un("cvt.rn.f32.f64", Class::F32, &r);
                // hypot(±inf, NaN) is +inf.
                let (ia, ib) = (self.a.tmp(Class::Pred), self.a.tmp(Class::Pred));
                let (aa, ab) = (
                    self.a.un("abs.f32", Class::F32, &a0),
                    self.a.un("abs.f32", Class::F32, &b1),
                );
                let inf = f32_imm(0x7F80_0000);
                self.a.ins(format_args!("setp.eq.f32 {ia}, {aa}, {inf}"));
                self.a.ins(format_args!("setp.eq.f32 {ib}, {ab}, {inf}"));
                self.a.ins(format_args!("or.pred {ia}, {ia}, {ib}"));
                self.a.tri("selp.f32", Class::F32, &inf, &r, &ia)
            }
            _ => {
                let r = Routine::for_math(m).ok_or_else(|| {
                    self.cx
                        .unsupported(format!("`{}` on `{t}`", m.name()), "a math routine")
                })?;
                if f64t {
                    let mut args = vec![a0];
                    for o in &x[1..] {
                        args.push(self.a.reg(o));
                    }
                    self.call_routine(r, &args)
                } else {
                    // f32: computed by the f64 routine, rounded once.
                    let mut args = vec![self.a.un("cvt.f64.f32", Class::F64, &a0)];
                    for o in &x[1..] {
                        let o = self.a.reg(o);
                        args.push(self.a.un("cvt.f64.f32", Class::F64, &o));
                    }
                    let r = self.call_routine(r, &args);
                    self.a.un("cvt.rn.f32.f64", Class::F32, &r)
                }
            }
        })
    }

    /// Rust's `round`: half away from zero (`cvt.rni` would round half to even).
    /// `t = trunc(x)`; if `|x - t| >= 0.5` (exact) step one away from zero.
    fn round_half_away(&mut self, t: ScalarType, x: &Opd) -> Opd {
        let c = Class::of(t);
        let ty = ptx_type(t);
        let tr = self.a.un(format_args!("cvt.rzi{ty}{ty}"), c, x);
        let d = self.a.bin(format_args!("sub.rn{ty}"), c, x, &tr);
        let ad = self.a.un(format_args!("abs{ty}"), c, &d);
        let p = self.a.tmp(Class::Pred);
        let half = float_imm(c, 0.5);
        self.a.ins(format_args!("setp.ge{ty} {p}, {ad}, {half}"));
        let one = float_imm(c, 1.0);
        let s = self.a.bin(format_args!("copysign{ty}"), c, x, &one);
        let up = self.a.bin(format_args!("add.rn{ty}"), c, &tr, &s);
        self.a.tri(format_args!("selp{ty}"), c, &up, &tr, &p)
    }
}
