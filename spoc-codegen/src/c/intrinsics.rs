//! Intrinsics: thread indices, math, atomics and warp operations.

use super::body::{prec, Body, Code, R};
use super::dialect::{Dialect, IndexKind};
use super::expr::{call_code, call_named};
use super::prelude;
use spoc_ir::{
    AtomicOp, Expr, HalfKind, Intrinsic, MathFn, MemSpace, ScalarType, ShuffleKind, Type,
};

impl Body<'_, '_> {
    pub(crate) fn intrinsic(&mut self, e: &Expr, i: Intrinsic, args: &[Expr]) -> R<Code> {
        let d = self.ctx.d;
        let index = |k: IndexKind, a| {
            let text = d.index(k, a);
            let p = if matches!(k, IndexKind::Global) && !d.is_opencl() {
                prec::ADD
            } else if matches!(k, IndexKind::GlobalSize) && !d.is_opencl() {
                prec::MUL
            } else if d.is_opencl() {
                prec::UNARY
            } else {
                prec::PRIMARY
            };
            Ok(Code::new(text, p))
        };
        match i {
            Intrinsic::ThreadIdx(a) => index(IndexKind::Thread, a),
            Intrinsic::BlockIdx(a) => index(IndexKind::Block, a),
            Intrinsic::BlockDim(a) => index(IndexKind::BlockDim, a),
            Intrinsic::GridDim(a) => index(IndexKind::GridDim, a),
            Intrinsic::GlobalId(a) => index(IndexKind::Global, a),
            Intrinsic::GlobalSize(a) => index(IndexKind::GlobalSize, a),
            Intrinsic::Math(m) => self.math(m, args),
            Intrinsic::Atomic(op) => self.atomic(e, op, args),
            Intrinsic::WarpSize
            | Intrinsic::LaneId
            | Intrinsic::Shuffle(_)
            | Intrinsic::VoteAny
            | Intrinsic::VoteAll
            | Intrinsic::Ballot => self.warp(e, i, args),
            Intrinsic::PackHalf2(_) => {
                // 16-bit floats are their `unsigned short` bits in every C dialect.
                let ops = self.operands_of(args)?;
                Ok(Code::new(
                    format!(
                        "(unsigned int){} | (unsigned int){} << 16",
                        ops[0].at(prec::UNARY),
                        ops[1].at(prec::UNARY)
                    ),
                    prec::BOR,
                ))
            }
            Intrinsic::MmaM16N8K16(h) => self.mma_m16n8k16(e, h, args),
        }
    }

    /// `mma_sync_m16n8k16_{f16,bf16}`: CUDA C only, on compute capability 8.0 and newer, as a
    /// prelude function around inline PTX `mma.sync.aligned.m16n8k16.row.col.f32.*` (the vectors'
    /// lanes are the PTX fragment registers); HIP and OpenCL C refuse it.
    fn mma_m16n8k16(&mut self, e: &Expr, h: HalfKind, args: &[Expr]) -> R<Code> {
        let node = format!("the warp matrix operation `{}`", self.show(e));
        if self.ctx.d != Dialect::Cuda {
            return Err(self.ctx.unsupported(
                node,
                "NVIDIA tensor cores (`mma.sync`): warp matrix operations are lowered for CUDA only so far",
            ));
        }
        let cc = self.ctx.caps.compute_capability.unwrap_or((7, 0));
        if cc.0 < 8 {
            return Err(self.ctx.unsupported(
                node,
                &format!(
                    "compute capability 8.0 or newer (`mma.sync` with {} inputs and f32 accumulation; the device has {}.{})",
                    h.name(),
                    cc.0,
                    cc.1
                ),
            ));
        }
        let ops = self.operands_of(args)?;
        let f = prelude::mma_m16n8k16(self.ctx, h);
        Ok(call_code(&f, &ops))
    }

    fn math(&mut self, m: MathFn, args: &[Expr]) -> R<Code> {
        let ops = self.operands_of(args)?;
        let t = args
            .first()
            .and_then(|a| a.ty.as_scalar())
            .unwrap_or(ScalarType::F32);
        if t.is_integer() {
            return Ok(match m {
                MathFn::Abs if t.is_signed() => {
                    let f = prelude::abs_signed(self.ctx, t);
                    call_code(&f, &ops)
                }
                MathFn::Abs => ops[0].clone(),
                MathFn::Min | MathFn::Max => {
                    let f = prelude::min_max_int(self.ctx, t, m == MathFn::Max);
                    call_code(&f, &ops)
                }
                _ => {
                    return Err(self
                        .ctx
                        .unsupported(format!("`{}` on `{t}`", m.name()), "a float argument"))
                }
            });
        }
        let f32 = t == ScalarType::F32;
        let one = if f32 { "1.0f" } else { "1.0" };
        let name = match m {
            MathFn::Recip => {
                return Ok(Code::new(
                    format!("{one} / {}", ops[0].at(prec::UNARY)),
                    prec::MUL,
                ))
            }
            MathFn::Signum => {
                let f = prelude::signum(self.ctx, t);
                return Ok(call_code(&f, &ops));
            }
            MathFn::Powi => {
                let f = prelude::powi(self.ctx, t);
                return Ok(call_code(&f, &ops));
            }
            MathFn::Sqrt => "sqrt",
            MathFn::Rsqrt => "rsqrt",
            MathFn::Abs => "fabs",
            MathFn::Floor | MathFn::Ceil | MathFn::Round | MathFn::Trunc
                if self.ctx.d.is_opencl() =>
            {
                let f = match m {
                    MathFn::Floor => "floor",
                    MathFn::Ceil => "ceil",
                    MathFn::Round => "round",
                    _ => "trunc",
                };
                let f = prelude::rounding_nan_safe(self.ctx, t, f);
                return Ok(call_code(&f, &ops));
            }
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Round => "round",
            MathFn::Trunc => "trunc",
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::Ln => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Min => "fmin",
            MathFn::Max => "fmax",
            MathFn::Powf => "pow",
            MathFn::Atan2 => "atan2",
            MathFn::Hypot => "hypot",
            MathFn::Copysign => "copysign",
            MathFn::MulAdd => "fma",
        };
        // OpenCL overloads one name for float and double; CUDA and HIP name the float
        // versions with an `f` suffix.
        let suffix = if f32 && !self.ctx.d.is_opencl() {
            "f"
        } else {
            ""
        };
        Ok(call_named(&[name, suffix], &ops))
    }

    fn atomic(&mut self, e: &Expr, op: AtomicOp, args: &[Expr]) -> R<Code> {
        let d = self.ctx.d;
        let Some((elem, space, _)) = args.first().and_then(|a| a.ty.as_array()) else {
            return Err(self
                .ctx
                .unsupported(format!("`{}`", self.show(e)), "an array operand"));
        };
        let t = elem.as_scalar().unwrap_or(ScalarType::I32);
        let wide = t.size_bytes() == 8;
        if wide && t.is_integer() && !self.ctx.caps.int64_atomics {
            let cap = if d.is_opencl() {
                if is_extended(op) {
                    "64-bit integer atomics (cl_khr_int64_extended_atomics)"
                } else {
                    "64-bit integer atomics (cl_khr_int64_base_atomics)"
                }
            } else {
                "64-bit integer atomics"
            };
            return Err(self.ctx.unsupported(format!("`{}`", self.show(e)), cap));
        }
        let mut ops = self.operands_of(args)?;
        if self.checked() {
            // The index is tested first and used once: a temporary unless it is plain.
            ops[1] = self.once(ops[1].clone(), &Type::U32)?;
            let i = ops[1].text.clone();
            let call = self.atomic_call(e, op, t, space, &ops)?;
            let zero = e.ty.as_scalar().unwrap_or(t);
            return self.checked_atomic(&args[0], &i, call, zero);
        }
        self.atomic_call(e, op, t, space, &ops)
    }

    /// The atomic on `&ops[0][ops[1]]` with the values `ops[2..]`.
    fn atomic_call(
        &mut self,
        e: &Expr,
        op: AtomicOp,
        t: ScalarType,
        space: MemSpace,
        ops: &[Code],
    ) -> R<Code> {
        let d = self.ctx.d;
        let wide = t.size_bytes() == 8;
        let ptr = Code::new(
            format!("&{}[{}]", ops[0].at(prec::PRIMARY), ops[1].text),
            prec::UNARY,
        );
        let vals = &ops[2..];
        if t.is_float() {
            return self.atomic_add_float(e, t, space, ptr, &vals[0]);
        }
        if d.is_opencl() {
            let base = if wide { "atom" } else { "atomic" };
            let name = match op {
                AtomicOp::Add => "add",
                AtomicOp::Sub => "sub",
                AtomicOp::Min => "min",
                AtomicOp::Max => "max",
                AtomicOp::Exchange => "xchg",
                AtomicOp::CompareExchange => "cmpxchg",
                AtomicOp::And => "and",
                AtomicOp::Or => "or",
                AtomicOp::Xor => "xor",
            };
            if wide {
                if is_extended(op) {
                    self.ctx.ext.int64_extended_atomics = true;
                } else {
                    self.ctx.ext.int64_base_atomics = true;
                }
            }
            let mut all = vec![ptr];
            all.extend(vals.iter().cloned());
            return Ok(call_code(&format!("{base}_{name}"), &all));
        }
        // CUDA and HIP.
        let name = match op {
            AtomicOp::Add => "atomicAdd",
            AtomicOp::Sub => "atomicSub",
            AtomicOp::Min => "atomicMin",
            AtomicOp::Max => "atomicMax",
            AtomicOp::Exchange => "atomicExch",
            AtomicOp::CompareExchange => "atomicCAS",
            AtomicOp::And => "atomicAnd",
            AtomicOp::Or => "atomicOr",
            AtomicOp::Xor => "atomicXor",
        };
        if !wide {
            let mut all = vec![ptr];
            all.extend(vals.iter().cloned());
            return Ok(call_code(name, &all));
        }
        let ull = "unsigned long long";
        // Signed 64-bit min/max: CUDA has the `long long` overloads (compute capability 5.0+);
        // HIP gets a compare-and-swap loop. Not a loop on CUDA: under independent thread
        // scheduling the lanes leave such a loop apart, and a warp operation after it then saw
        // only some of them (`__activemask()`), unlike every other backend (difftest, H200).
        if t == ScalarType::I64
            && matches!(op, AtomicOp::Min | AtomicOp::Max)
            && self.ctx.d == Dialect::Hip
        {
            let f = prelude::atomic_minmax_i64_cas(self.ctx, op == AtomicOp::Max);
            let mut all = vec![ptr];
            all.extend(vals.iter().cloned());
            return Ok(call_code(&f, &all));
        }
        // 64-bit: the unsigned overloads, through casts for i64 (two's complement makes add,
        // sub, exchange, CAS and bitwise operations identical); sub as add of the negation.
        let signed = t == ScalarType::I64;
        if signed && matches!(op, AtomicOp::Min | AtomicOp::Max) {
            let mut all = vec![ptr];
            all.extend(vals.iter().cloned());
            return Ok(call_code(name, &all));
        }
        let p = if signed {
            format!("({ull}*){}", ptr.at(prec::UNARY))
        } else {
            ptr.text.clone()
        };
        let val = |c: &Code| {
            if signed {
                format!("({ull}){}", c.at(prec::UNARY))
            } else {
                c.text.clone()
            }
        };
        let (name, vals_text): (&str, Vec<String>) = match op {
            AtomicOp::Sub => {
                let v = if signed {
                    format!("0ull - ({ull}){}", vals[0].at(prec::UNARY))
                } else {
                    format!("0ull - {}", vals[0].at(prec::MUL))
                };
                ("atomicAdd", vec![v])
            }
            _ => (name, vals.iter().map(val).collect()),
        };
        let call = format!("{name}({p}, {})", vals_text.join(", "));
        Ok(if signed {
            Code::new(format!("(long long){call}"), prec::UNARY)
        } else {
            Code::primary(call)
        })
    }

    fn atomic_add_float(
        &mut self,
        e: &Expr,
        t: ScalarType,
        space: MemSpace,
        ptr: Code,
        v: &Code,
    ) -> R<Code> {
        let d = self.ctx.d;
        let wide = t == ScalarType::F64;
        if d.is_opencl() {
            if wide {
                if !self.ctx.caps.int64_atomics {
                    return Err(self.ctx.unsupported(
                        format!(
                            "`{}` (an f64 atomic add is a 64-bit compare-and-swap loop)",
                            self.show(e)
                        ),
                        "64-bit integer atomics (cl_khr_int64_base_atomics)",
                    ));
                }
                self.ctx.ext.int64_base_atomics = true;
            }
            let f = prelude::atomic_add_float_cas(self.ctx, t, space);
            return Ok(call_code(&f, &[ptr, v.clone()]));
        }
        // CUDA's double atomicAdd needs compute capability 6.0.
        let cc_ok = !wide
            || d != Dialect::Cuda
            || self
                .ctx
                .caps
                .compute_capability
                .is_none_or(|cc| cc >= (6, 0));
        if self.ctx.caps.float_atomic_add && cc_ok {
            return Ok(call_code("atomicAdd", &[ptr, v.clone()]));
        }
        if !self.ctx.caps.int64_atomics && wide {
            return Err(self.ctx.unsupported(
                format!("`{}`", self.show(e)),
                "float atomic add or 64-bit atomics",
            ));
        }
        let f = prelude::atomic_add_float_cas(self.ctx, t, space);
        Ok(call_code(&f, &[ptr, v.clone()]))
    }

    fn warp(&mut self, e: &Expr, i: Intrinsic, args: &[Expr]) -> R<Code> {
        let d = self.ctx.d;
        if !self.ctx.caps.subgroups {
            let cap = if d.is_opencl() {
                "subgroups (cl_khr_subgroups)"
            } else {
                "warp operations"
            };
            return Err(self
                .ctx
                .unsupported(format!("warp operation `{}`", self.show(e)), cap));
        }
        let ops = self.operands_of(args)?;
        match d {
            Dialect::OpenCl => {
                self.ctx.ext.subgroups = true;
                Ok(match i {
                    Intrinsic::WarpSize => Code::primary("get_max_sub_group_size()"),
                    Intrinsic::LaneId => Code::primary("get_sub_group_local_id()"),
                    Intrinsic::VoteAny => {
                        Code::new(format!("sub_group_any({}) != 0", ops[0].text), prec::EQ)
                    }
                    Intrinsic::VoteAll => {
                        Code::new(format!("sub_group_all({}) != 0", ops[0].text), prec::EQ)
                    }
                    Intrinsic::Ballot => {
                        self.ctx.ext.subgroup_ballot = true;
                        Code::primary(format!("sub_group_ballot({}).x", ops[0].text))
                    }
                    Intrinsic::Shuffle(k) => {
                        match k {
                            ShuffleKind::Index | ShuffleKind::Xor => {
                                self.ctx.ext.subgroup_shuffle = true
                            }
                            _ => self.ctx.ext.subgroup_shuffle_relative = true,
                        }
                        let t = e.ty.as_scalar().unwrap_or(ScalarType::I32);
                        // Every OpenCL kind goes through a helper (out-of-range sources).
                        let f = prelude::shuffle(self.ctx, k, t).unwrap_or_default();
                        call_code(&f, &ops)
                    }
                    _ => unreachable!("only warp intrinsics come here"),
                })
            }
            Dialect::Cuda | Dialect::Hip => {
                let cuda = d == Dialect::Cuda;
                Ok(match i {
                    Intrinsic::WarpSize => Code::new("(unsigned int)warpSize", prec::UNARY),
                    Intrinsic::LaneId => {
                        let f = prelude::lane_id(self.ctx);
                        Code::primary(format!("{f}()"))
                    }
                    Intrinsic::VoteAny | Intrinsic::VoteAll => {
                        let f = match (i, cuda) {
                            (Intrinsic::VoteAny, true) => "__any_sync(__activemask(), ",
                            (_, true) => "__all_sync(__activemask(), ",
                            (Intrinsic::VoteAny, false) => "__any(",
                            (_, false) => "__all(",
                        };
                        Code::new(format!("{f}{}) != 0", ops[0].text), prec::EQ)
                    }
                    Intrinsic::Ballot if cuda => {
                        Code::primary(format!("__ballot_sync(__activemask(), {})", ops[0].text))
                    }
                    Intrinsic::Ballot => Code::new(
                        format!("(unsigned int)__ballot({})", ops[0].text),
                        prec::UNARY,
                    ),
                    Intrinsic::Shuffle(k) => {
                        let t = e.ty.as_scalar().unwrap_or(ScalarType::I32);
                        if let Some(f) = prelude::shuffle(self.ctx, k, t) {
                            return Ok(call_code(&f, &ops));
                        }
                        let base = match k {
                            ShuffleKind::Index => "__shfl",
                            ShuffleKind::Up => "__shfl_up",
                            ShuffleKind::Down => "__shfl_down",
                            ShuffleKind::Xor => "__shfl_xor",
                        };
                        let lane = if k == ShuffleKind::Index || k == ShuffleKind::Xor {
                            // the lane / lane mask parameter is `int`
                            format!("(int){}", ops[1].at(prec::UNARY))
                        } else {
                            ops[1].text.clone()
                        };
                        let call = if cuda {
                            format!("{base}_sync(0xffffffffu, {}, {lane})", ops[0].text)
                        } else {
                            format!("{base}({}, {lane})", ops[0].text)
                        };
                        Code::primary(call)
                    }
                    _ => unreachable!("only warp intrinsics come here"),
                })
            }
        }
    }
}

/// True for the 64-bit atomics of `cl_khr_int64_extended_atomics` (the rest are in
/// `cl_khr_int64_base_atomics`).
fn is_extended(op: AtomicOp) -> bool {
    matches!(
        op,
        AtomicOp::Min | AtomicOp::Max | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor
    )
}
