//! Expression typing.

use super::count;
use super::decls::{is_plain_data, rust_buffer};
use super::stmt::{exhaustive, Body, Check};
use crate::{
    AtomicOp, BinOp, Expr, ExprKind, Intrinsic, MathFn, MemSpace, Param, Pattern, ScalarType, Type,
    UnOp,
};

/// Why an operator on `f16`/`bf16` is refused (`{}` is the type).
fn half_note(t: ScalarType) -> String {
    format!("`{t}` is a storage-only type in the IR: cast it to `f32` (`as f32`) before computing with it (the front end lowers `{t}` arithmetic so)")
}

impl<'k> Body<'k> {
    /// Checks that `e` is well-typed: its children first, then the node, whose `ty` must be what
    /// it yields.
    pub(super) fn expr(&mut self, e: &Expr) -> Check {
        let ty = self.expr_type(e)?;
        if e.ty != ty {
            return Err(self.fail(format!(
                "`{}` is typed `{}` in the IR, but it yields a `{ty}`",
                self.show(e),
                e.ty
            )));
        }
        Ok(())
    }

    /// The type node `e` yields, given its (checked) children.
    fn expr_type(&mut self, e: &Expr) -> Check<Type> {
        match &e.kind {
            ExprKind::Const(c) => Ok(Type::Scalar(c.ty())),
            ExprKind::Var(v) => Ok(self.use_var(*v)?.ty.clone()),
            ExprKind::Index { array, index } => {
                self.expr(array)?;
                self.expr(index)?;
                let Type::Array { elem, .. } = &array.ty else {
                    return Err(self.fail(format!(
                        "`{}` indexes `{}`, which is a `{}`, not an array",
                        self.show(e),
                        self.show(array),
                        array.ty
                    )));
                };
                let what = format!("the index of `{}`", self.show(e));
                self.expect(index, &Type::U32, &what)?;
                Ok((**elem).clone())
            }
            ExprKind::Field { base, field } => {
                self.expr(base)?;
                self.field_type(&base.ty, field, &self.show(base))
            }
            ExprKind::Unary { op, operand } => {
                self.expr(operand)?;
                let t = operand.ty.as_scalar();
                let ok = match (op, t) {
                    (_, Some(h)) if h.is_half() => {
                        return Err(self.fail(format!("`{}`: {}", self.show(e), half_note(h))))
                    }
                    (UnOp::Neg, Some(t)) => t.is_arithmetic(),
                    (UnOp::Not, Some(t)) => t.is_integer() || t == ScalarType::Bool,
                    (_, None) => false,
                };
                if !ok {
                    let need = match op {
                        UnOp::Neg => "`-` needs a number",
                        UnOp::Not => "`!` needs a `bool` or an integer",
                    };
                    return Err(self.fail(format!(
                        "`{}`: {need}, not a `{}`",
                        self.show(e),
                        operand.ty
                    )));
                }
                Ok(operand.ty.clone())
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.expr(lhs)?;
                self.expr(rhs)?;
                self.binary(e, *op, lhs, rhs)
            }
            ExprKind::Intrinsic { intrinsic, args } => {
                for a in args {
                    self.expr(a)?;
                }
                self.intrinsic(e, *intrinsic, args)
            }
            ExprKind::Cast { value, to } => {
                self.expr(value)?;
                let Some(from) = value.ty.as_scalar() else {
                    return Err(self.fail(format!(
                        "`{}` casts a `{}`; only scalars can be cast with `as`",
                        self.show(e),
                        value.ty
                    )));
                };
                if *to == ScalarType::Bool && from != ScalarType::Bool {
                    return Err(self.fail(format!(
                        "`{}` casts a `{from}` to `bool`, which Rust does not allow (compare \
                         with `!= 0` instead)",
                        self.show(e)
                    )));
                }
                let bf16 = ScalarType::BF16;
                if (from == bf16 || *to == bf16)
                    && !matches!(
                        (from, *to),
                        (ScalarType::F32, _)
                            | (_, ScalarType::F32)
                            | (ScalarType::BF16, ScalarType::BF16)
                    )
                {
                    return Err(self.fail(format!(
                        "`{}` casts a `{from}` to `{to}`: `bf16` converts to and from `f32` only \
                         (go through `f32`)",
                        self.show(e)
                    )));
                }
                if from == ScalarType::Bool && to.is_float() {
                    return Err(self.fail(format!(
                        "`{}` casts a `bool` to `{to}`, which Rust does not allow (cast to an \
                         integer first)",
                        self.show(e)
                    )));
                }
                Ok(Type::Scalar(*to))
            }
            ExprKind::Call { func, args } => {
                for a in args {
                    self.expr(a)?;
                }
                self.call(e, func, args)
            }
            ExprKind::Select { cond, then, els } => {
                self.expr(cond)?;
                self.expr(then)?;
                self.expr(els)?;
                let what = format!("the condition of `{}`", self.show(e));
                self.expect(cond, &Type::BOOL, &what)?;
                if then.ty != els.ty {
                    return Err(self.fail(format!(
                        "the branches of `{}` have different types, `{}` and `{}`",
                        self.show(e),
                        then.ty,
                        els.ty
                    )));
                }
                Ok(then.ty.clone())
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee)?;
                self.check_scrutinee(scrutinee)?;
                if arms.is_empty() {
                    return Err(self.fail(format!(
                        "`match` expression on `{}` has no arm",
                        self.show(scrutinee)
                    )));
                }
                for (p, a) in arms {
                    self.arm(p, &scrutinee.ty, |v| v.expr(a).map(|_| ()))?;
                    if a.ty != arms[0].1.ty {
                        return Err(self.fail(format!(
                            "the arms of `{}` have different types, `{}` and `{}`",
                            self.show(e),
                            arms[0].1.ty,
                            a.ty
                        )));
                    }
                }
                let pats: Vec<&Pattern> = arms.iter().map(|(p, _)| p).collect();
                if !exhaustive(self.kernel, &pats, &scrutinee.ty) {
                    return Err(self.fail(format!(
                        "the `match` expression `{}` does not cover every value of `{}` (add a \
                         `_` arm)",
                        self.show(e),
                        scrutinee.ty
                    )));
                }
                Ok(arms[0].1.ty.clone())
            }
            ExprKind::Len(a) => {
                self.expr(a)?;
                if !matches!(a.ty, Type::Array { .. }) {
                    return Err(self.fail(format!(
                        "`{}`: the length of `{}`, a `{}`, which is not an array",
                        self.show(e),
                        self.show(a),
                        a.ty
                    )));
                }
                Ok(Type::U32)
            }
            ExprKind::RecordLit { record, fields } => {
                for f in fields {
                    self.expr(f)?;
                }
                let Some(def) = self.kernel.record(record) else {
                    return Err(self.fail(format!(
                        "`{}` builds a `{record}`, but no record `{record}` is defined in the \
                         kernel",
                        self.show(e)
                    )));
                };
                if def.fields.len() != fields.len() {
                    return Err(self.fail(format!(
                        "`{}` gives {}, but record `{record}` has {}",
                        self.show(e),
                        count(fields.len(), "field value"),
                        count(def.fields.len(), "field")
                    )));
                }
                for (d, v) in def.fields.iter().zip(fields) {
                    let what = format!("field `{}` of `{record}`", d.name);
                    self.expect(v, &d.ty, &what)?;
                }
                Ok(Type::Record(record.clone()))
            }
            ExprKind::VariantLit {
                variant,
                case,
                payload,
            } => {
                for p in payload {
                    self.expr(p)?;
                }
                let Some(def) = self.kernel.variant(variant) else {
                    return Err(self.fail(format!(
                        "`{}` builds a `{variant}`, but no variant `{variant}` is defined in the \
                         kernel",
                        self.show(e)
                    )));
                };
                let Some(c) = def.cases.iter().find(|c| &c.name == case) else {
                    return Err(self.fail(format!(
                        "`{}`: variant `{variant}` has no case `{case}`",
                        self.show(e)
                    )));
                };
                if c.payload.len() != payload.len() {
                    return Err(self.fail(format!(
                        "`{}` gives {}, but `{variant}::{case}` carries {}",
                        self.show(e),
                        count(payload.len(), "value"),
                        count(c.payload.len(), "value")
                    )));
                }
                for (i, (t, v)) in c.payload.iter().zip(payload).enumerate() {
                    let what = format!("payload {i} of `{variant}::{case}`");
                    self.expect(v, t, &what)?;
                }
                Ok(Type::Variant(variant.clone()))
            }
            ExprKind::ArrayRepeat { value, len } => {
                self.expr(value)?;
                if *len == 0 {
                    return Err(self.fail(format!(
                        "`{}`: arrays of length 0 are not supported",
                        self.show(e)
                    )));
                }
                let ok = is_plain_data(&value.ty)
                    || matches!(
                        value.ty,
                        Type::Array {
                            space: MemSpace::Local,
                            ..
                        }
                    );
                if !ok {
                    return Err(self.fail(format!(
                        "`{}` repeats a `{}`; local arrays hold scalars, vectors, records or \
                         local arrays",
                        self.show(e),
                        value.ty
                    )));
                }
                Ok(Type::Array {
                    elem: std::sync::Arc::new(value.ty.clone()),
                    space: MemSpace::Local,
                    len: Some(*len),
                })
            }
            ExprKind::VectorLit(lanes) => {
                for l in lanes {
                    self.expr(l)?;
                }
                if !(2..=4).contains(&lanes.len()) {
                    return Err(self.fail(format!(
                        "`{}` has {}; vectors have 2, 3 or 4",
                        self.show(e),
                        count(lanes.len(), "lane")
                    )));
                }
                let elem = match lanes[0].ty.as_scalar() {
                    Some(t) if t != ScalarType::Bool => t,
                    _ => {
                        return Err(self.fail(format!(
                            "`{}`: vector lanes are non-`bool` scalars, not `{}`",
                            self.show(e),
                            lanes[0].ty
                        )))
                    }
                };
                for l in &lanes[1..] {
                    self.expect(l, &Type::Scalar(elem), "a vector lane")?;
                }
                Ok(Type::Vector {
                    elem,
                    lanes: lanes.len() as u8,
                })
            }
        }
    }

    fn binary(&self, e: &Expr, op: BinOp, lhs: &Expr, rhs: &Expr) -> Check<Type> {
        let (lt, rt) = (&lhs.ty, &rhs.ty);
        let sym = op.symbol();
        let shown = self.show(e);
        let int = |t: &Type| t.as_scalar().filter(|s| s.is_integer());
        if let Some(h) = [lt, rt]
            .iter()
            .filter_map(|t| t.as_scalar())
            .find(|s| s.is_half())
        {
            return Err(self.fail(format!("`{shown}`: {}", half_note(h))));
        }
        if op.is_shift() {
            if int(lt).is_none() || int(rt).is_none() {
                return Err(self.fail(format!(
                    "`{shown}`: `{sym}` needs integer operands, not `{lt}` and `{rt}`"
                )));
            }
            return Ok(lt.clone());
        }
        if op.is_logical() {
            if *lt != Type::BOOL || *rt != Type::BOOL {
                return Err(self.fail(format!(
                    "`{shown}`: `{sym}` needs `bool` operands, not `{lt}` and `{rt}`"
                )));
            }
            return Ok(Type::BOOL);
        }
        if lt != rt {
            return Err(self.fail(format!(
                "`{shown}`: the operands of `{sym}` have different types, `{lt}` and `{rt}` \
                 (convert one with `as`)"
            )));
        }
        let Some(t) = lt.as_scalar() else {
            return Err(self.fail(format!(
                "`{shown}`: `{sym}` needs scalar operands, not `{lt}`"
            )));
        };
        if op.is_comparison() {
            return Ok(Type::BOOL);
        }
        match op {
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                if !(t.is_integer() || t == ScalarType::Bool) {
                    return Err(self.fail(format!(
                        "`{shown}`: `{sym}` needs integer or `bool` operands, not `{t}`"
                    )));
                }
            }
            _ => {
                if !t.is_arithmetic() {
                    return Err(self.fail(format!(
                        "`{shown}`: `{sym}` needs numeric operands, not `{t}`"
                    )));
                }
            }
        }
        Ok(lt.clone())
    }

    fn arity(&self, e: &Expr, args: &[Expr], n: usize) -> Check {
        if args.len() != n {
            return Err(self.fail(format!(
                "`{}` has {}; it takes {n}",
                self.show(e),
                count(args.len(), "argument")
            )));
        }
        Ok(())
    }

    /// The read-only buffer parameter `e` names, if it is one.
    fn readonly_buffer(&self, e: &Expr) -> Option<&'k Param> {
        match e.kind {
            ExprKind::Var(v) => self
                .param_of(v)
                .filter(|p| p.is_buffer() && !p.mutable && p.ty.as_array().is_some()),
            _ => None,
        }
    }

    fn intrinsic(&self, e: &Expr, i: Intrinsic, args: &[Expr]) -> Check<Type> {
        let shown = self.show(e);
        match i {
            Intrinsic::ThreadIdx(_)
            | Intrinsic::BlockIdx(_)
            | Intrinsic::BlockDim(_)
            | Intrinsic::GridDim(_)
            | Intrinsic::GlobalId(_)
            | Intrinsic::GlobalSize(_)
            | Intrinsic::WarpSize
            | Intrinsic::LaneId => {
                self.arity(e, args, 0)?;
                Ok(Type::U32)
            }
            Intrinsic::Math(m) => {
                self.arity(e, args, m.arity())?;
                let first = &args[0].ty;
                let ok = match first.as_scalar() {
                    Some(h) if h.is_half() => {
                        return Err(self.fail(format!("`{shown}`: {}", half_note(h))))
                    }
                    Some(ScalarType::F32 | ScalarType::F64) => true,
                    Some(t) if t.is_integer() => m.allows_integers(),
                    _ => false,
                };
                if !ok {
                    let on = if m.allows_integers() {
                        "`f32`, `f64` and integers"
                    } else {
                        "`f32` and `f64`"
                    };
                    return Err(self.fail(format!(
                        "`{shown}`: `{}` is defined on {on}, not on `{first}`",
                        m.name()
                    )));
                }
                for (k, a) in args.iter().enumerate().skip(1) {
                    let want = if m == MathFn::Powi && k == 1 {
                        Type::I32
                    } else {
                        first.clone()
                    };
                    let what = format!("argument {} of `{}`", k + 1, m.name());
                    self.expect(a, &want, &what)?;
                }
                Ok(first.clone())
            }
            Intrinsic::Atomic(op) => {
                let n = if op == AtomicOp::CompareExchange {
                    4
                } else {
                    3
                };
                self.arity(e, args, n)?;
                let (array, index) = (&args[0], &args[1]);
                let Some((elem, space, _)) = array.ty.as_array() else {
                    return Err(self.fail(format!(
                        "`{shown}`: the first argument of `{}` must be a buffer or a shared \
                         array, not a `{}`",
                        op.name(),
                        array.ty
                    )));
                };
                if space == MemSpace::Local {
                    return Err(self.fail(format!(
                        "`{shown}`: atomics work on buffers and shared arrays, not on the local \
                         array `{}`",
                        self.show(array)
                    )));
                }
                if let Some(p) = self.readonly_buffer(array) {
                    return Err(self.fail(format!(
                        "`{shown}` modifies `{}`, but parameter `{}` is a read-only buffer \
                         (`{}`); declare it `{}`",
                        self.show(array),
                        p.name,
                        rust_buffer(elem, false),
                        rust_buffer(elem, true)
                    )));
                }
                let ok = match elem.as_scalar() {
                    Some(ScalarType::I32 | ScalarType::U32 | ScalarType::I64 | ScalarType::U64) => {
                        true
                    }
                    Some(ScalarType::F32 | ScalarType::F64) => op == AtomicOp::Add,
                    _ => false,
                };
                if !ok {
                    let on = op.element_types();
                    return Err(self.fail(format!(
                        "`{shown}`: `{}` works on elements of type {on}, not `{elem}`",
                        op.name()
                    )));
                }
                let what = format!("the index of `{}`", op.name());
                self.expect(index, &Type::U32, &what)?;
                for a in &args[2..] {
                    let what = format!("the value of `{}`", op.name());
                    self.expect(a, elem, &what)?;
                }
                Ok(elem.clone())
            }
            Intrinsic::Shuffle(_) => {
                self.arity(e, args, 2)?;
                let v = &args[0].ty;
                match v.as_scalar() {
                    Some(h) if h.is_half() => {
                        return Err(self.fail(format!("`{shown}`: {}", half_note(h))))
                    }
                    Some(t) if t.is_arithmetic() => {}
                    _ => {
                        return Err(self.fail(format!(
                            "`{shown}`: `{}` moves numbers (i32, u32, i64, u64, f32, f64), not a \
                             `{v}`",
                            i.name()
                        )))
                    }
                }
                let what = format!("the lane argument of `{}`", i.name());
                self.expect(&args[1], &Type::U32, &what)?;
                Ok(v.clone())
            }
            Intrinsic::VoteAny | Intrinsic::VoteAll | Intrinsic::Ballot => {
                self.arity(e, args, 1)?;
                let what = format!("the predicate of `{}`", i.name());
                self.expect(&args[0], &Type::BOOL, &what)?;
                Ok(if i == Intrinsic::Ballot {
                    Type::U32
                } else {
                    Type::BOOL
                })
            }
            Intrinsic::PackHalf2(h) => {
                self.arity(e, args, 2)?;
                let t = Type::Scalar(h.scalar());
                let what = format!("an operand of `{}`", i.name());
                self.expect(&args[0], &t, &what)?;
                self.expect(&args[1], &t, &what)?;
                Ok(Type::U32)
            }
            Intrinsic::MmaM16N8K16(_) => {
                self.arity(e, args, 3)?;
                let vector = |elem, lanes| Type::Vector { elem, lanes };
                let name = i.name();
                self.expect(
                    &args[0],
                    &vector(ScalarType::U32, 4),
                    &format!("the A fragment of `{name}`"),
                )?;
                self.expect(
                    &args[1],
                    &vector(ScalarType::U32, 2),
                    &format!("the B fragment of `{name}`"),
                )?;
                let acc = vector(ScalarType::F32, 4);
                self.expect(&args[2], &acc, &format!("the C fragment of `{name}`"))?;
                Ok(acc)
            }
        }
    }

    fn call(&self, e: &Expr, func: &str, args: &[Expr]) -> Check<Type> {
        let Some(f) = self.kernel.function(func) else {
            return Err(self.fail(format!(
                "`{}` calls `{func}`, but the kernel has no helper function `{func}` (helpers \
                 must be device functions linked into the kernel)",
                self.show(e)
            )));
        };
        if f.params.len() != args.len() {
            return Err(self.fail(format!(
                "`{}` passes {}, but `{func}` takes {}",
                self.show(e),
                count(args.len(), "argument"),
                f.params.len()
            )));
        }
        for (p, a) in f.params.iter().zip(args) {
            let matches = a.ty == p.ty
                || match (p.ty.as_array(), a.ty.as_array()) {
                    (Some((pe, ps, None)), Some((ae, as_, _))) => pe == ae && ps == as_,
                    _ => false,
                };
            if !matches {
                return Err(self.fail(format!(
                    "`{}`: parameter `{}` of `{func}` has type `{}`, but the argument `{}` is a \
                     `{}`",
                    self.show(e),
                    p.name,
                    p.ty,
                    self.show(a),
                    a.ty
                )));
            }
            if p.is_buffer() && p.mutable {
                if let Some(ro) = self.readonly_buffer(a) {
                    let elem = ro
                        .ty
                        .as_array()
                        .map(|(t, _, _)| t.clone())
                        .unwrap_or(Type::Unit);
                    return Err(self.fail(format!(
                        "`{}` passes the read-only buffer `{}` (`{}`) as parameter `{}` of \
                         `{func}`, which is `{}`",
                        self.show(e),
                        ro.name,
                        rust_buffer(&elem, false),
                        p.name,
                        rust_buffer(&elem, true)
                    )));
                }
            }
        }
        Ok(f.ret.clone())
    }
}
