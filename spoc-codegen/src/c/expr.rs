//! Expressions. An expression becomes a C expression ([`Code`]); where C cannot say it in one
//! expression with the IR's meaning (a `match`, a `[v; n]`, an operand that must be evaluated
//! before a later operand's side effects), statements computing a temporary are emitted first,
//! at the current position, and the temporary is used.

use super::body::{cat, prec, Body, Code, R};
use super::ctx::field_ident;
use super::dialect::{Dialect, Storage};
use super::prelude;
use spoc_ir::{BinOp, Const, Expr, ExprKind, MemSpace, ScalarType, Type, UnOp};
use std::borrow::Borrow;

impl Body<'_, '_> {
    /// Emits `e`.
    pub(crate) fn expr(&mut self, e: &Expr) -> R<Code> {
        match &e.kind {
            ExprKind::Const(c) => Ok(self.constant(*c)),
            ExprKind::Var(v) => Ok(Code::primary(self.ident(*v))),
            // The common element read of a named array, written at once (as the general case
            // below writes it: a variable operand is never hoisted).
            ExprKind::Index { array, index } if !self.checked() => {
                if let ExprKind::Var(v) = array.kind {
                    let i = self.expr(index)?;
                    return Ok(Code::primary(cat(&[self.ident(v), "[", &i.text, "]"])));
                }
                let ops = self.operands(&[array, index])?;
                Ok(Code::primary(cat(&[
                    &ops[0].at(prec::PRIMARY),
                    "[",
                    &ops[1].text,
                    "]",
                ])))
            }
            ExprKind::Index { array, index } => {
                let ops = self.operands(&[array, index])?;
                self.checked_read(e, array, &ops)
            }
            ExprKind::Field { base, field } => {
                let b = self.expr(base)?;
                Ok(Code::primary(format!(
                    "{}.{}",
                    b.at(prec::PRIMARY),
                    field_ident(field)
                )))
            }
            ExprKind::Unary { .. } | ExprKind::Binary { .. } if wraps_signed(e) => {
                let inner = self.in_unsigned(e)?;
                let ty = self
                    .int_names(e.ty.as_scalar().unwrap_or(ScalarType::I32))
                    .0;
                Ok(Code::new(format!("({ty})({})", inner.text), prec::UNARY))
            }
            ExprKind::Unary { op, operand } => self.unary(*op, operand),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs),
            ExprKind::Intrinsic { intrinsic, args } => self.intrinsic(e, *intrinsic, args),
            ExprKind::Cast { value, to } => self.cast(value, *to),
            ExprKind::Call { func, args } => self.call(func, args),
            ExprKind::Select { cond, then, els } => self.select(e, cond, then, els),
            ExprKind::Match { .. } => {
                let tmp = self.fresh("tmp");
                let d = self.ctx.decl(&e.ty, &tmp, Storage::Value);
                self.line(format!("{d};"));
                self.assign_into(Some(&tmp), e)?;
                Ok(Code::primary(tmp))
            }
            ExprKind::Len(a) => self.len_of(a),
            ExprKind::RecordLit { record, fields } => {
                let ops = self.operands_of(fields)?;
                let ctor = self.ctx.record_ctor(record);
                Ok(call_code(&ctor, &ops))
            }
            ExprKind::VariantLit {
                variant,
                case,
                payload,
            } => {
                let ops = self.operands_of(payload)?;
                let idx = self.ctx.case_index(variant, case);
                let ctor = self.ctx.variant_ctor(variant, idx);
                Ok(call_code(&ctor, &ops))
            }
            ExprKind::ArrayRepeat { .. } => {
                let tmp = self.fresh("tmp");
                let d = self.ctx.decl(&e.ty, &tmp, Storage::Value);
                self.line(format!("{d};"));
                self.assign_into(Some(&tmp), e)?;
                Ok(Code::primary(tmp))
            }
            ExprKind::VectorLit(lanes) => {
                let ops = self.operands_of(lanes)?;
                let elem = lanes
                    .first()
                    .and_then(|l| l.ty.as_scalar())
                    .unwrap_or(ScalarType::F32);
                let ctor = self.ctx.vector_ctor(elem, lanes.len() as u8);
                Ok(call_code(&ctor, &ops))
            }
        }
    }

    /// A constant.
    pub(crate) fn constant(&self, c: Const) -> Code {
        let (text, simple) = self.ctx.literal(c);
        Code::new(text, if simple { prec::PRIMARY } else { prec::UNARY })
    }

    /// [`Body::operands`] of a slice of expressions (call arguments, literal fields).
    pub(crate) fn operands_of(&mut self, es: &[Expr]) -> R<Vec<Code>> {
        self.operands_as(es, |_| false)
    }

    /// Emits operands that C evaluates in no fixed order but the IR evaluates left to right: an
    /// operand that reads memory is stored in a temporary first when a later operand has side
    /// effects.
    pub(crate) fn operands(&mut self, es: &[&Expr]) -> R<Vec<Code>> {
        self.operands_as(es, |_| false)
    }

    /// [`Body::operands`], where an operand `i` with `unsigned(i)` is emitted in the unsigned
    /// type of its width ([`Body::in_unsigned`]).
    fn operands_as<E: Borrow<Expr>>(
        &mut self,
        es: &[E],
        unsigned: impl Fn(usize) -> bool,
    ) -> R<Vec<Code>> {
        // Only an operand evaluated before another one's effect may need hoisting: a single
        // operand never does (and most are single: skip the scan of its tree).
        let last_effect = if es.len() > 1 {
            es.iter().rposition(|e| self.effectful(e.borrow()))
        } else {
            None
        };
        let mut out = Vec::with_capacity(es.len());
        for (i, e) in es.iter().enumerate() {
            let (e, unsigned) = (e.borrow(), unsigned(i));
            let c = if unsigned {
                self.in_unsigned(e)?
            } else {
                self.expr(e)?
            };
            let before_effect = matches!(last_effect, Some(k) if i < k);
            let pointer = matches!(
                e.ty,
                Type::Array {
                    space: MemSpace::Global | MemSpace::Shared,
                    ..
                }
            );
            if before_effect && !pointer && self.memory_dependent(e) {
                let ty = match e.ty.as_scalar() {
                    Some(t) if unsigned => Type::Scalar(Dialect::unsigned_of(t)),
                    _ => e.ty.clone(),
                };
                out.push(self.hoist(&ty, c)?);
            } else {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// Signed `e` as a value of the unsigned type of its width. Chains of signed `+ - *`,
    /// `<<` and negation are computed entirely there and cast back once, which is how they
    /// wrap instead of overflowing (C leaves signed overflow undefined).
    fn in_unsigned(&mut self, e: &Expr) -> R<Code> {
        let t = e.ty.as_scalar().unwrap_or(ScalarType::I32);
        if !wraps_signed(e) {
            if let ExprKind::Const(_) = e.kind {
                let c = self.constant(Const::U32(0));
                return Ok(Code::primary(self.unsigned(e, &c, t)));
            }
            let c = self.expr(e)?;
            return Ok(Code::new(self.unsigned(e, &c, t), prec::UNARY));
        }
        match &e.kind {
            ExprKind::Binary { op, lhs, rhs } if *op == BinOp::Shl => {
                let ops = self.operands_as(&[&**lhs, &**rhs], |i| i == 0)?;
                let bits = if t.size_bytes() == 8 { 64 } else { 32 };
                let amount = self.shift_amount(rhs, &ops[1], bits);
                Ok(Code::new(
                    format!("{} << {amount}", ops[0].at(prec::UNARY)),
                    prec::SHIFT,
                ))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let ops = self.operands_as(&[&**lhs, &**rhs], |_| true)?;
                let p = if *op == BinOp::Mul {
                    prec::MUL
                } else {
                    prec::ADD
                };
                Ok(Code::new(
                    format!("{} {} {}", ops[0].at(p), op.symbol(), ops[1].at(p + 1)),
                    p,
                ))
            }
            ExprKind::Unary { operand, .. } => {
                let o = self.in_unsigned(operand)?;
                let zero = self.constant(if t == ScalarType::I32 {
                    Const::U32(0)
                } else {
                    Const::U64(0)
                });
                Ok(Code::new(
                    format!("{} - {}", zero.text, o.at(prec::MUL)),
                    prec::ADD,
                ))
            }
            _ => unreachable!("wraps_signed covers these forms"),
        }
    }

    /// Stores `c` (of type `ty`) in a fresh temporary and returns the temporary.
    pub(crate) fn hoist(&mut self, ty: &Type, c: Code) -> R<Code> {
        let tmp = self.fresh("tmp");
        let d = self.ctx.decl(ty, &tmp, Storage::Value);
        if matches!(ty, Type::Array { .. }) {
            self.line(format!("{d};"));
            self.copy_array(&tmp, &c.at(prec::PRIMARY), ty);
        } else {
            self.line(format!("{d} = {};", c.text));
        }
        Ok(Code::primary(tmp))
    }

    fn unary(&mut self, op: UnOp, operand: &Expr) -> R<Code> {
        let v = self.expr(operand)?;
        let t = operand.ty.as_scalar().unwrap_or(ScalarType::Bool);
        Ok(match op {
            UnOp::Not if t == ScalarType::Bool => {
                Code::new(format!("!{}", v.at(prec::UNARY)), prec::UNARY)
            }
            UnOp::Not => Code::new(format!("~{}", v.at(prec::UNARY)), prec::UNARY),
            UnOp::Neg if t.is_integer() => Code::new(format!("0 - {}", v.at(prec::MUL)), prec::ADD),
            UnOp::Neg => {
                // `-` before an operand that starts with `-` (a negative literal, another
                // negation) would print C's decrement operator `--`.
                let o = v.at(prec::UNARY);
                let text = if o.starts_with('-') {
                    format!("-({o})")
                } else {
                    format!("-{o}")
                };
                Code::new(text, prec::UNARY)
            }
        })
    }

    /// The C names of signed type `t` and of its unsigned counterpart.
    fn int_names(&self, t: ScalarType) -> (&'static str, &'static str) {
        let d = self.ctx.d;
        (
            d.scalar(t, Storage::Value),
            d.scalar(Dialect::unsigned_of(t), Storage::Value),
        )
    }

    /// `c` converted to the unsigned type of the same width: a constant is re-spelled, anything
    /// else is cast.
    fn unsigned(&self, e: &Expr, c: &Code, t: ScalarType) -> String {
        match e.kind {
            ExprKind::Const(Const::I32(v)) => self.constant(Const::U32(v as u32)).text,
            ExprKind::Const(Const::I64(v)) => self.constant(Const::U64(v as u64)).text,
            _ => format!("({}){}", self.int_names(t).1, c.at(prec::UNARY)),
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> R<Code> {
        if op.is_logical() {
            return self.logical(op, lhs, rhs);
        }
        let ops = self.operands(&[lhs, rhs])?;
        let (l, r) = (&ops[0], &ops[1]);
        let t = lhs.ty.as_scalar().unwrap_or(ScalarType::Bool);
        let d = self.ctx.d;
        let arith = |sym: &str, p: u8| Code::new(cat(&[&l.at(p), " ", sym, " ", &r.at(p + 1)]), p);
        Ok(match op {
            BinOp::Add => arith("+", prec::ADD),
            BinOp::Sub => arith("-", prec::ADD),
            BinOp::Mul => arith("*", prec::MUL),
            // A constant divisor other than 0 and -1 leaves nothing undefined: C's operator.
            BinOp::Div | BinOp::Rem if t.is_integer() && plain_divisor(rhs) => {
                arith(op.symbol(), prec::MUL)
            }
            BinOp::Div | BinOp::Rem if t.is_integer() && self.checked() => {
                let f = prelude::div_rem_checked(self.ctx, t, op == BinOp::Rem);
                let (line, col) = self.loc;
                let mut args = ops.clone();
                args.push(Code::primary(self.fault.clone().unwrap_or_default()));
                args.push(Code::primary(format!("{line}u")));
                args.push(Code::primary(format!("{col}u")));
                args.push(Code::primary(format!("{}u", self.func_index)));
                call_code(&f, &args)
            }
            BinOp::Div | BinOp::Rem if t.is_integer() => {
                let f = prelude::div_rem(self.ctx, t, op == BinOp::Rem);
                call_code(&f, &ops)
            }
            BinOp::Div => arith("/", prec::MUL),
            BinOp::Rem if t.is_float() => {
                let f = match (t, d) {
                    (ScalarType::F32, Dialect::Cuda | Dialect::Hip) => "fmodf",
                    _ => "fmod",
                };
                call_code(f, &ops)
            }
            BinOp::Rem => arith("%", prec::MUL),
            BinOp::BitAnd => bitwise("&", prec::BAND, l, r),
            BinOp::BitOr => bitwise("|", prec::BOR, l, r),
            BinOp::BitXor => bitwise("^", prec::BXOR, l, r),
            BinOp::Shl | BinOp::Shr => {
                let bits = if t.size_bytes() == 8 { 64 } else { 32 };
                let amount = self.shift_amount(rhs, r, bits);
                let sym = op.symbol();
                Code::new(format!("{} {sym} {amount}", l.at(prec::UNARY)), prec::SHIFT)
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let p = if matches!(op, BinOp::Eq | BinOp::Ne) {
                    prec::EQ
                } else {
                    prec::REL
                };
                let (l, r) = (l.at(prec::SHIFT), r.at(prec::SHIFT));
                Code::new(format!("{l} {} {r}", op.symbol()), p)
            }
            BinOp::LogicalAnd | BinOp::LogicalOr => unreachable!("handled above"),
        })
    }

    /// The shift amount taken modulo the bit width, as Rust's wrapping shifts do.
    fn shift_amount(&self, rhs: &Expr, r: &Code, bits: u32) -> String {
        let mask = bits - 1;
        match rhs.kind {
            ExprKind::Const(c) => {
                let v: u64 = match c {
                    Const::I32(v) => v as u32 as u64,
                    Const::I64(v) => v as u64,
                    Const::U32(v) => v.into(),
                    Const::U64(v) => v,
                    _ => 0,
                };
                (v & u64::from(mask)).to_string()
            }
            _ if rhs.ty == Type::U32 => format!("({} & {mask}u)", r.at(prec::UNARY)),
            _ => format!(
                "(({}){} & {mask}u)",
                self.ctx.d.scalar(ScalarType::U32, Storage::Value),
                r.at(prec::UNARY)
            ),
        }
    }

    /// `&&` / `||`, short-circuiting: when the right operand needs statements, they run only
    /// when it is evaluated.
    fn logical(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> R<Code> {
        let l = self.expr(lhs)?;
        let mark = self.lines.len();
        let r = self.expr(rhs)?;
        let p = if op == BinOp::LogicalAnd {
            prec::LAND
        } else {
            prec::LOR
        };
        let operand = |c: &Code| {
            if c.prec == p || c.prec >= prec::EQ {
                c.text.clone()
            } else {
                format!("({})", c.text)
            }
        };
        if self.lines.len() == mark {
            return Ok(Code::new(
                format!("{} {} {}", operand(&l), op.symbol(), operand(&r)),
                p,
            ));
        }
        let captured = self.take_since(mark);
        let tmp = self.fresh("tmp");
        self.line(format!("bool {tmp} = {};", l.text));
        if op == BinOp::LogicalAnd {
            self.line(format!("if ({tmp}) {{"));
        } else {
            self.line(format!("if (!{tmp}) {{"));
        }
        self.put_nested(captured);
        self.indent += 1;
        self.line(format!("{tmp} = {};", r.text));
        self.indent -= 1;
        self.line("}");
        Ok(Code::primary(tmp))
    }

    /// `cond ? then : els`; only the chosen branch is evaluated, also when a branch needs
    /// statements (then it becomes an `if` assigning a temporary).
    fn select(&mut self, e: &Expr, cond: &Expr, then: &Expr, els: &Expr) -> R<Code> {
        let c = self.expr(cond)?;
        let mark = self.lines.len();
        let t = self.expr(then)?;
        let then_lines = self.take_since(mark);
        let f = self.expr(els)?;
        let else_lines = self.take_since(mark);
        if then_lines.is_empty() && else_lines.is_empty() {
            return Ok(conditional(&c, &t, &f));
        }
        let tmp = self.fresh("tmp");
        let d = self.ctx.decl(&e.ty, &tmp, Storage::Value);
        self.line(format!("{d};"));
        self.line(format!("if ({}) {{", c.text));
        self.put_nested(then_lines);
        self.indent += 1;
        self.store(&tmp, &t, &e.ty);
        self.indent -= 1;
        self.line("} else {");
        self.put_nested(else_lines);
        self.indent += 1;
        self.store(&tmp, &f, &e.ty);
        self.indent -= 1;
        self.line("}");
        Ok(Code::primary(tmp))
    }

    /// `dst = c;`, element by element for arrays.
    pub(crate) fn store(&mut self, dst: &str, c: &Code, ty: &Type) {
        if matches!(ty, Type::Array { .. }) {
            self.copy_array(dst, &c.at(prec::PRIMARY), ty);
        } else {
            self.line(format!("{dst} = {};", c.text));
        }
    }

    /// Copies local array `src` into `dst` (both of type `ty`), with one loop per dimension.
    pub(crate) fn copy_array(&mut self, dst: &str, src: &str, ty: &Type) {
        let Type::Array {
            elem, len: Some(n), ..
        } = ty
        else {
            self.line(format!("{dst} = {src};"));
            return;
        };
        let k = self.fresh("k");
        let u = self.ctx.d.scalar(ScalarType::U32, Storage::Value);
        if matches!(**elem, Type::Array { .. }) {
            self.line(format!("for ({u} {k} = 0u; {k} < {n}u; ++{k}) {{"));
            self.indent += 1;
            self.copy_array(&format!("{dst}[{k}]"), &format!("{src}[{k}]"), elem);
            self.indent -= 1;
            self.line("}");
        } else {
            self.line(format!(
                "for ({u} {k} = 0u; {k} < {n}u; ++{k}) {dst}[{k}] = {src}[{k}];"
            ));
        }
        self.release(&k);
    }

    /// The length of an array-typed expression.
    pub(crate) fn len_of(&mut self, a: &Expr) -> R<Code> {
        if let Some((_, _, Some(n))) = a.ty.as_array() {
            if self.effectful(a) {
                let c = self.expr(a)?;
                self.line(format!("(void){};", c.at(prec::UNARY)));
            }
            return Ok(self.constant(Const::U32(n)));
        }
        match &a.kind {
            ExprKind::Var(v) => match self.len_idents.get(v) {
                Some(l) => Ok(Code::primary(l.clone())),
                None => Err(self.ctx.unsupported(
                    format!("`{}.len()`", self.show(a)),
                    "a length parameter for this array",
                )),
            },
            ExprKind::Select { cond, then, els } if !self.effectful(cond) => {
                let c = self.expr(cond)?;
                let t = self.len_of(then)?;
                let f = self.len_of(els)?;
                Ok(conditional(&c, &t, &f))
            }
            _ => Err(self.ctx.unsupported(
                format!("`{}.len()`", self.show(a)),
                "an array expression whose length is known (a parameter or a local array)",
            )),
        }
    }

    /// `x as T` with Rust's semantics.
    fn cast(&mut self, value: &Expr, to: ScalarType) -> R<Code> {
        use ScalarType::*;
        let v = self.expr(value)?;
        let from = value.ty.as_scalar().unwrap_or(to);
        if from == to {
            return Ok(v);
        }
        let d = self.ctx.d;
        let plain = |t: ScalarType| {
            Code::new(
                format!("({}){}", d.scalar(t, Storage::Value), v.at(prec::UNARY)),
                prec::UNARY,
            )
        };
        Ok(match (from, to) {
            // bf16 is bits, the upper half of an f32: widening is a shift, narrowing one
            // rounding (the validator admits f32 as the other side only).
            (BF16, _) => {
                let f = prelude::bf16_to_f32(self.ctx);
                call_code(&f, &[v])
            }
            (_, BF16) => {
                let f = prelude::f32_to_bf16(self.ctx);
                call_code(&f, &[v])
            }
            // f16 is bits: convert through f32 (exact) or round once into f16.
            (F16, F32) => {
                let f = prelude::f16_to_f32(self.ctx);
                call_code(&f, &[v])
            }
            (F16, _) => {
                let f = prelude::f16_to_f32(self.ctx);
                let as_f32 = call_code(&f, &[v]);
                self.convert_code(as_f32, F32, to)
            }
            (F32 | F64, F16) => {
                let f = prelude::float_to_f16(self.ctx, from);
                call_code(&f, &[v])
            }
            // Integers below 2^24 are exact in f32; above, both roundings give infinity.
            (_, F16) => {
                let as_f32 = plain(F32);
                let f = prelude::float_to_f16(self.ctx, F32);
                call_code(&f, &[as_f32])
            }
            _ => self.convert_code(v, from, to),
        })
    }

    /// Conversion between non-`f16` scalars with Rust's `as` semantics.
    fn convert_code(&mut self, v: Code, from: ScalarType, to: ScalarType) -> Code {
        if from.is_float() && to.is_integer() {
            let f = prelude::float_to_int(self.ctx, from, to);
            return call_code(&f, &[v]);
        }
        if from == ScalarType::Bool && to == ScalarType::Bool {
            return v;
        }
        // int <-> int (wraps / extends), int -> float (round to nearest), bool -> int (0 or 1),
        // f32 <-> f64 (round to nearest / exact).
        Code::new(
            format!(
                "({}){}",
                self.ctx.d.scalar(to, Storage::Value),
                v.at(prec::UNARY)
            ),
            prec::UNARY,
        )
    }

    /// A helper-function call: buffers pass their length after them (the ABI of the module
    /// docs).
    fn call(&mut self, func: &str, args: &[Expr]) -> R<Code> {
        let kernel = self.ctx.kernel;
        let Some(f) = kernel.function(func) else {
            return Err(self.ctx.unsupported(
                format!("call of `{func}`"),
                "the helper function in the kernel's function list",
            ));
        };
        let ops = self.operands_of(args)?;
        let mut out = Vec::new();
        for ((p, a), c) in f.params.iter().zip(args).zip(ops) {
            out.push(c);
            if matches!(p.ty, Type::Array { len: None, .. }) {
                let len = self.len_of(a)?;
                out.push(len);
            }
        }
        if let Some(f) = &self.fault {
            out.push(Code::primary(f.clone()));
        }
        Ok(call_code(&crate::names::function_ident(func), &out))
    }
}

/// True if `e` is signed arithmetic that must wrap: `+ - *`, `<<` or negation on `i32`/`i64`.
fn wraps_signed(e: &Expr) -> bool {
    let signed = e.ty.as_scalar().is_some_and(|t| t.is_signed());
    signed
        && match &e.kind {
            ExprKind::Binary { op, .. } => {
                matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl)
            }
            ExprKind::Unary { op, .. } => *op == UnOp::Neg,
            _ => false,
        }
}

/// True if integer divisor `rhs` is a constant other than 0 and -1, so that C's `/` and `%`
/// are defined for every dividend.
fn plain_divisor(rhs: &Expr) -> bool {
    match rhs.kind {
        ExprKind::Const(Const::I32(v)) => v != 0 && v != -1,
        ExprKind::Const(Const::I64(v)) => v != 0 && v != -1,
        ExprKind::Const(Const::U32(v)) => v != 0,
        ExprKind::Const(Const::U64(v)) => v != 0,
        _ => false,
    }
}

/// `f(a, b, …)`.
pub(crate) fn call_code(f: &str, args: &[Code]) -> Code {
    call_named(&[f], args)
}

/// `f(a, b, …)`, the function's name the concatenation of `name`.
pub(crate) fn call_named(name: &[&str], args: &[Code]) -> Code {
    let len = name.iter().map(|n| n.len()).sum::<usize>()
        + 2
        + args.iter().map(|c| c.text.len() + 2).sum::<usize>();
    let mut s = String::with_capacity(len);
    for n in name {
        s.push_str(n);
    }
    s.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&a.text);
    }
    s.push(')');
    Code::primary(s)
}

/// A bitwise operation: operands other than the same operator are parenthesised unless they are
/// primary or unary, so that precedence never needs to be remembered.
fn bitwise(sym: &str, p: u8, l: &Code, r: &Code) -> Code {
    let lhs = if l.prec == p || l.prec >= prec::UNARY {
        l.text.clone()
    } else {
        format!("({})", l.text)
    };
    Code::new(format!("{lhs} {sym} {}", r.at(prec::UNARY)), p)
}

/// The C conditional expression `c ? t : f`.
fn conditional(c: &Code, t: &Code, f: &Code) -> Code {
    Code::new(
        format!(
            "{} ? {} : {}",
            c.at(prec::LOR),
            t.at(prec::LOR),
            f.at(prec::COND)
        ),
        prec::COND,
    )
}
