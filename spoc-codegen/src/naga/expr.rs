//! Expressions: constants, variables and places, operators, calls, `if`/`match` expressions,
//! aggregates.

use super::func::{Fb, Slot, R};
use super::types::{variant_member, variant_tag};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, ScalarKind, UnaryOperator as Uo};
use spoc_ir::{
    BinOp, Const, Expr, ExprKind, Intrinsic, LValue, MemSpace, Pattern, ScalarType, Type, UnOp,
};

type H = Handle<Expression>;

/// The literal of integer type `t` with value `v` (wrapped to the type).
pub(super) fn int_lit(t: ScalarType, v: i128) -> Literal {
    match t {
        ScalarType::I32 => Literal::I32(v as i32),
        ScalarType::I64 => Literal::I64(v as i64),
        ScalarType::U64 => Literal::U64(v as u64),
        ScalarType::Bool => Literal::Bool(v != 0),
        _ => Literal::U32(v as u32),
    }
}

/// The literal of float type `t` (`f32` or `f64`) with finite value `v`.
pub(super) fn float_lit(t: ScalarType, v: f64) -> Literal {
    match t {
        ScalarType::F64 => Literal::F64(v),
        _ => Literal::F32(v as f32),
    }
}

/// True if `e` is an integer constant other than 0: a divisor that cannot be zero.
fn nonzero_constant(e: &Expr) -> bool {
    match e.kind {
        ExprKind::Const(Const::I32(v)) => v != 0,
        ExprKind::Const(Const::I64(v)) => v != 0,
        ExprKind::Const(Const::U32(v)) => v != 0,
        ExprKind::Const(Const::U64(v)) => v != 0,
        _ => false,
    }
}

/// The smallest value of integer type `t`.
fn int_min(t: ScalarType) -> i128 {
    match t {
        ScalarType::I32 => i32::MIN.into(),
        ScalarType::I64 => i64::MIN.into(),
        _ => 0,
    }
}

/// An IEEE binary16 value as `f32` (exact).
fn f16_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = (bits >> 10) & 0x1f;
    let mant = (bits & 0x3ff) as f32;
    match exp {
        0 => sign * mant * 2f32.powi(-24),
        0x1f if mant == 0.0 => sign * f32::INFINITY,
        0x1f => f32::NAN,
        e => sign * (1.0 + mant / 1024.0) * 2f32.powi(e as i32 - 15),
    }
}

/// True if lowering `e` has no effect and cannot trap, so it may be evaluated even when the
/// source would not evaluate it (`if` expression branches, right operands of `&&`/`||`).
pub(super) fn is_simple(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Len(_) => true,
        ExprKind::Unary { operand, .. } => is_simple(operand),
        ExprKind::Binary { op, lhs, rhs } => {
            let int_div = matches!(op, BinOp::Div | BinOp::Rem)
                && lhs.ty.as_scalar().is_some_and(|s| s.is_integer());
            !int_div && is_simple(lhs) && is_simple(rhs)
        }
        ExprKind::Cast { value, .. } => is_simple(value),
        ExprKind::Field { base, .. } => is_simple(base),
        ExprKind::Intrinsic { intrinsic, args } => {
            (intrinsic.is_index() || matches!(intrinsic, Intrinsic::Math(_)))
                && args.iter().all(is_simple)
        }
        ExprKind::Select { cond, then, els } => {
            is_simple(cond) && is_simple(then) && is_simple(els)
        }
        ExprKind::RecordLit { fields: items, .. }
        | ExprKind::VariantLit { payload: items, .. }
        | ExprKind::VectorLit(items) => items.iter().all(is_simple),
        ExprKind::Index { .. }
        | ExprKind::Call { .. }
        | ExprKind::Match { .. }
        | ExprKind::ArrayRepeat { .. } => false,
    }
}

impl Fb<'_, '_> {
    /// The value of `e` (which must not be `()`).
    pub fn expr(&mut self, e: &Expr) -> R<H> {
        self.expr_opt(e)?.ok_or_else(|| {
            self.g
                .bug(format!("a `()` value used as an operand ({:?})", e.kind))
        })
    }

    /// The value of `e`, or `None` for `()`-typed expressions (calls of helpers returning
    /// nothing, `if`/`match` expressions of unit type).
    pub fn expr_opt(&mut self, e: &Expr) -> R<Option<H>> {
        Ok(Some(match &e.kind {
            ExprKind::Const(c) => self.constant(*c)?,
            ExprKind::Var(v) => match self.slot(*v)? {
                Slot::Local(l) => {
                    let p = self.local_ptr(l);
                    self.load(p)
                }
                Slot::Global(_) | Slot::Unset => {
                    return Err(self.g.bug(format!(
                        "the array `{}` used as a value",
                        self.decl(*v)?.name
                    )))
                }
            },
            ExprKind::Index { .. } | ExprKind::Field { .. } if self.checked() => {
                let mut checks = Vec::new();
                self.read_checks(e, &mut checks)?;
                if checks.is_empty() {
                    self.element(e)?
                } else {
                    self.guarded(Some(&e.ty), checks, |fb| fb.element(e).map(Some))?
                        .ok_or_else(|| self.g.bug("a checked read without a value".into()))?
                }
            }
            ExprKind::Index { .. } | ExprKind::Field { .. } => self.element(e)?,
            ExprKind::Unary { op, operand } => {
                let st = self.scalar_of(&operand.ty)?;
                let v = self.expr(operand)?;
                self.unary(*op, st, v)
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs)?,
            ExprKind::Intrinsic { intrinsic, args } => self.intrinsic(*intrinsic, args, &e.ty)?,
            ExprKind::Cast { value, to } => {
                let from = self.scalar_of(&value.ty)?;
                let v = self.expr(value)?;
                self.cast(v, from, *to)?
            }
            ExprKind::Call { func, args } => return self.call(func, args),
            ExprKind::Select { cond, then, els } => return self.select(cond, then, els, &e.ty),
            ExprKind::Match { scrutinee, arms } => return self.match_expr(scrutinee, arms, &e.ty),
            ExprKind::Len(a) => self.len(a)?,
            ExprKind::RecordLit { fields, .. } => {
                let ty = self.g.value_ty(&e.ty)?;
                let mut components = Vec::with_capacity(fields.len());
                for f in fields {
                    components.push(self.expr(f)?);
                }
                self.emit(Expression::Compose { ty, components })
            }
            ExprKind::VariantLit {
                variant,
                case,
                payload,
            } => self.variant_lit(variant, case, payload, &e.ty)?,
            ExprKind::VectorLit(lanes) => {
                let ty = self.g.value_ty(&e.ty)?;
                let mut components = Vec::with_capacity(lanes.len());
                for l in lanes {
                    components.push(self.expr(l)?);
                }
                self.emit(Expression::Compose { ty, components })
            }
            ExprKind::ArrayRepeat { value, len } => self.array_repeat(value, *len, &e.ty)?,
        }))
    }

    /// The value of element or field expression `e` (an `Index` or `Field`), unchecked.
    fn element(&mut self, e: &Expr) -> R<H> {
        if let Some(p) = self.place_ptr(e)? {
            return Ok(self.load(p));
        }
        Ok(match &e.kind {
            ExprKind::Index { array, index } => {
                let base = self.expr(array)?;
                let index = self.index_value(index)?;
                self.emit(Expression::Access { base, index })
            }
            ExprKind::Field { base, field } => {
                let index = self.field_index(&base.ty, field)?;
                let base = self.expr(base)?;
                self.emit(Expression::AccessIndex { base, index })
            }
            _ => return Err(self.g.bug(format!("`{:?}` is not an element", e.kind))),
        })
    }

    /// The scalar type of `ty`, or a bug report.
    pub fn scalar_of(&self, ty: &Type) -> R<ScalarType> {
        ty.as_scalar()
            .ok_or_else(|| self.g.bug(format!("`{ty}` used where a scalar is needed")))
    }

    /// A constant. Non-finite floats (which naga literals cannot hold) are bit casts.
    pub fn constant(&mut self, c: Const) -> R<H> {
        if c.ty() != ScalarType::Bool {
            self.g.check_scalar(c.ty())?;
        }
        Ok(match c {
            Const::Bool(b) => self.lit(Literal::Bool(b)),
            Const::I32(v) => self.lit(Literal::I32(v)),
            Const::U32(v) => self.lit(Literal::U32(v)),
            Const::I64(v) => self.lit(Literal::I64(v)),
            Const::U64(v) => self.lit(Literal::U64(v)),
            Const::F32(bits) => self.f32_bits(bits),
            Const::BF16(_) => unreachable!("`check_scalar` refuses `bf16`"),
            Const::F16(bits) => {
                let v = self.f32_bits(f16_to_f32(bits).to_bits());
                self.emit_as(v, ScalarKind::Float, Some(2))
            }
            Const::F64(bits) => {
                let v = f64::from_bits(bits);
                if v.is_finite() {
                    self.lit(Literal::F64(v))
                } else {
                    // ±inf and NaN through f32 (a NaN payload is not kept).
                    let v = self.f32_bits((v as f32).to_bits());
                    self.emit_as(v, ScalarKind::Float, Some(8))
                }
            }
        })
    }

    /// An `f32` constant from its bits.
    pub fn f32_bits(&mut self, bits: u32) -> H {
        let v = f32::from_bits(bits);
        if v.is_finite() {
            self.lit(Literal::F32(v))
        } else {
            let u = self.lit(Literal::U32(bits));
            self.emit_as(u, ScalarKind::Float, None)
        }
    }

    /// A pointer to the place `e` denotes, when `e` is a variable, or an element or field of a
    /// place; `None` (with nothing generated) otherwise.
    pub fn place_ptr(&mut self, e: &Expr) -> R<Option<H>> {
        match &e.kind {
            ExprKind::Var(v) => Ok(Some(self.var_ptr(*v)?)),
            ExprKind::Index { array, index } => {
                let Some(base) = self.place_ptr(array)? else {
                    return Ok(None);
                };
                let index = self.index_value(index)?;
                Ok(Some(self.emit(Expression::Access { base, index })))
            }
            ExprKind::Field { base, field } => {
                if !matches!(
                    base.kind,
                    ExprKind::Var(_) | ExprKind::Index { .. } | ExprKind::Field { .. }
                ) {
                    return Ok(None);
                }
                let index = self.field_index(&base.ty, field)?;
                let Some(b) = self.place_ptr(base)? else {
                    return Ok(None);
                };
                Ok(Some(self.emit(Expression::AccessIndex { base: b, index })))
            }
            _ => Ok(None),
        }
    }

    /// A pointer to variable `v` (a local, a buffer or a shared array).
    pub fn var_ptr(&mut self, v: spoc_ir::VarId) -> R<H> {
        Ok(match self.slot(v)? {
            Slot::Local(l) => self.local_ptr(l),
            Slot::Global(g) => {
                let h = self.g.globals[g].handle;
                self.global_ptr(h)
            }
            Slot::Unset => unreachable!("slot() rejects undeclared variables"),
        })
    }

    /// A pointer to the place `l`, and the place's type.
    pub fn lvalue_ptr(&mut self, l: &LValue) -> R<(H, Type)> {
        match l {
            LValue::Var(v) => {
                let ty = self.decl(*v)?.ty.clone();
                Ok((self.var_ptr(*v)?, ty))
            }
            LValue::Index { base, index } => {
                let (b, bt) = self.lvalue_ptr(base)?;
                let Type::Array { elem, .. } = bt else {
                    return Err(self.g.bug(format!("indexing a `{bt}` place")));
                };
                let index = self.index_value(index)?;
                Ok((
                    self.emit(Expression::Access { base: b, index }),
                    std::sync::Arc::unwrap_or_clone(elem),
                ))
            }
            LValue::Field { base, field } => {
                let (b, bt) = self.lvalue_ptr(base)?;
                let index = self.field_index(&bt, field)?;
                let ty = self.field_type(&bt, field)?;
                Ok((self.emit(Expression::AccessIndex { base: b, index }), ty))
            }
        }
    }

    /// The member index of `field` in record type `ty`, or the lane `field` names in vector
    /// type `ty` (`AccessIndex` selects a vector's lane, on a value or through a pointer, as it
    /// selects a struct's member).
    pub fn field_index(&self, ty: &Type, field: &str) -> R<u32> {
        if let Type::Vector { .. } = ty {
            return self.lane_of(ty, field).map(|(i, _)| i);
        }
        self.field_of(ty, field).map(|(i, _)| i as u32)
    }

    pub(super) fn field_type(&self, ty: &Type, field: &str) -> R<Type> {
        if let Type::Vector { .. } = ty {
            return self.lane_of(ty, field).map(|(_, t)| t);
        }
        self.field_of(ty, field).map(|(_, f)| f.ty.clone())
    }

    /// The lane `field` (`x`, `y`, `z`, `w`) of vector type `ty`, and the lane's type.
    fn lane_of(&self, ty: &Type, field: &str) -> R<(u32, Type)> {
        match (ty, spoc_ir::lane_index(field)) {
            (Type::Vector { elem, lanes }, Some(i)) if i < usize::from(*lanes) => {
                Ok((i as u32, Type::Scalar(*elem)))
            }
            _ => Err(self.g.bug(format!("lane `.{field}` of a `{ty}`"))),
        }
    }

    /// The position and declaration of `field` in record type `ty`.
    fn field_of(&self, ty: &Type, field: &str) -> R<(usize, &spoc_ir::Field)> {
        let Type::Record(r) = ty else {
            return Err(self.g.bug(format!("field `.{field}` of a `{ty}`")));
        };
        self.g
            .kernel
            .record(r)
            .and_then(|d| d.fields.iter().enumerate().find(|(_, f)| f.name == field))
            .ok_or_else(|| self.g.bug(format!("record `{r}` has no field `{field}`")))
    }

    /// The index in `Gen::globals` of the buffer or shared array `e` names.
    pub fn array_binding(&mut self, e: &Expr) -> R<usize> {
        if let ExprKind::Var(v) = e.kind {
            if let Slot::Global(g) = self.slot(v)? {
                return Ok(g);
            }
        }
        Err(self.g.unsupported(
            &format!(
                "an array argument that is not a buffer parameter or shared array ({:?})",
                e.kind
            ),
            "buffers and shared arrays passed by name",
        ))
    }

    fn unary(&mut self, op: UnOp, st: ScalarType, v: H) -> H {
        match op {
            UnOp::Neg if st.is_integer() && !st.is_signed() => {
                let zero = self.lit(int_lit(st, 0));
                self.bin(Bo::Subtract, zero, v)
            }
            // Signed negation on the bits (`0 - u`, wrapping), not `OpSNegate`: `-MIN` is `MIN`
            // with no signed overflow for a driver to assume away.
            UnOp::Neg if st.is_integer() => {
                let u = self.emit_as(v, ScalarKind::Uint, None);
                let zero = self.lit(int_lit(super::types::unsigned_of(st), 0));
                let r = self.bin(Bo::Subtract, zero, u);
                self.emit_as(r, ScalarKind::Sint, None)
            }
            UnOp::Neg => self.emit(Expression::Unary {
                op: Uo::Negate,
                expr: v,
            }),
            UnOp::Not if st == ScalarType::Bool => self.emit(Expression::Unary {
                op: Uo::LogicalNot,
                expr: v,
            }),
            UnOp::Not => self.emit(Expression::Unary {
                op: Uo::BitwiseNot,
                expr: v,
            }),
        }
    }

    /// `left op right`.
    pub fn bin(&mut self, op: Bo, left: H, right: H) -> H {
        self.emit(Expression::Binary { op, left, right })
    }

    pub fn not(&mut self, v: H) -> H {
        self.emit(Expression::Unary {
            op: Uo::LogicalNot,
            expr: v,
        })
    }

    /// `condition ? accept : reject` (both already evaluated).
    pub fn sel(&mut self, condition: H, accept: H, reject: H) -> H {
        self.emit(Expression::Select {
            condition,
            accept,
            reject,
        })
    }

    /// `x != x`, true for NaN (as `!(x == x)`: naga's float `!=` is ordered on SPIR-V).
    pub fn is_nan(&mut self, x: H) -> H {
        let eq = self.bin(Bo::Equal, x, x);
        self.not(eq)
    }

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> R<H> {
        if op.is_logical() {
            return self.logical(op, lhs, rhs);
        }
        let st = self.scalar_of(&lhs.ty)?;
        let l = self.expr(lhs)?;
        let r = self.expr(rhs)?;
        let int = st.is_integer();
        let float = st.is_float();
        let boolean = st == ScalarType::Bool;
        Ok(match op {
            BinOp::Add => self.bin(Bo::Add, l, r),
            BinOp::Sub => self.bin(Bo::Subtract, l, r),
            BinOp::Mul => self.bin(Bo::Multiply, l, r),
            BinOp::Div | BinOp::Rem if int && !nonzero_constant(rhs) => {
                // SPIR-V leaves a division by zero (and `MIN / -1`) undefined: divide by 1
                // instead and give 0, the C targets' value; checked mode records the fault.
                let zero = self.lit(int_lit(st, 0));
                let one = self.lit(int_lit(st, 1));
                let is0 = self.bin(Bo::Equal, r, zero);
                self.fault_if(is0, crate::checked::FAULT_DIVISION_BY_ZERO);
                let r1 = self.sel(is0, one, r);
                let d = if st.is_signed() {
                    self.safe_divisor(st, l, r1)
                } else {
                    r1
                };
                let q = self.int_div(op, st, l, d);
                self.sel(is0, zero, q)
            }
            BinOp::Div if int => {
                let r = if st.is_signed() {
                    self.safe_divisor(st, l, r)
                } else {
                    r
                };
                self.bin(Bo::Divide, l, r)
            }
            BinOp::Div if float => self.float_div(st, l, r)?,
            BinOp::Div => self.bin(Bo::Divide, l, r),
            BinOp::Rem if int && st.is_signed() => {
                let r = self.safe_divisor(st, l, r);
                if self.g.target == crate::Target::Glsl {
                    // GLSL's `%` is undefined for negative operands; its `/` truncates.
                    let q = self.bin(Bo::Divide, l, r);
                    let p = self.bin(Bo::Multiply, q, r);
                    self.bin(Bo::Subtract, l, p)
                } else {
                    self.bin(Bo::Modulo, l, r)
                }
            }
            BinOp::Rem if float => self.float_rem(st, l, r)?,
            BinOp::Rem => self.bin(Bo::Modulo, l, r),
            BinOp::BitAnd if boolean => self.bin(Bo::LogicalAnd, l, r),
            BinOp::BitOr if boolean => self.bin(Bo::LogicalOr, l, r),
            BinOp::BitXor if boolean => self.bin(Bo::NotEqual, l, r),
            BinOp::BitAnd => self.bin(Bo::And, l, r),
            BinOp::BitOr => self.bin(Bo::InclusiveOr, l, r),
            BinOp::BitXor => self.bin(Bo::ExclusiveOr, l, r),
            BinOp::Shl | BinOp::Shr => {
                let rt = self.scalar_of(&rhs.ty)?;
                let amount = self.shift_amount(rhs, r, rt, st)?;
                if op == BinOp::Shl && st.is_signed() {
                    // On the bits: MSL (C++14) leaves shifting a negative `int` left undefined.
                    let u = self.emit_as(l, ScalarKind::Uint, None);
                    let r = self.bin(Bo::ShiftLeft, u, amount);
                    self.emit_as(r, ScalarKind::Sint, None)
                } else {
                    let op = if op == BinOp::Shl {
                        Bo::ShiftLeft
                    } else {
                        Bo::ShiftRight
                    };
                    self.bin(op, l, amount)
                }
            }
            BinOp::Eq => self.bin(Bo::Equal, l, r),
            BinOp::Ne if float => {
                let eq = self.bin(Bo::Equal, l, r);
                self.not(eq)
            }
            BinOp::Ne => self.bin(Bo::NotEqual, l, r),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge if boolean => {
                // false < true: a < b is !a && b, a <= b is !a || b, …
                match op {
                    BinOp::Lt => {
                        let na = self.not(l);
                        self.bin(Bo::LogicalAnd, na, r)
                    }
                    BinOp::Le => {
                        let na = self.not(l);
                        self.bin(Bo::LogicalOr, na, r)
                    }
                    BinOp::Gt => {
                        let nb = self.not(r);
                        self.bin(Bo::LogicalAnd, l, nb)
                    }
                    _ => {
                        let nb = self.not(r);
                        self.bin(Bo::LogicalOr, l, nb)
                    }
                }
            }
            BinOp::Lt => self.bin(Bo::Less, l, r),
            BinOp::Le => self.bin(Bo::LessEqual, l, r),
            BinOp::Gt => self.bin(Bo::Greater, l, r),
            BinOp::Ge => self.bin(Bo::GreaterEqual, l, r),
            BinOp::LogicalAnd | BinOp::LogicalOr => unreachable!("handled above"),
        })
    }

    /// `rhs`, or 1 when `lhs == MIN && rhs == -1` (so that `MIN / -1 == MIN`, `MIN % -1 == 0`).
    /// `l / d` or `l % d` on integers of `st` (`d` nonzero, not `-1` with `l == MIN`); GLSL's
    /// `%` is undefined for negative operands, so signed `%` is `l - (l / d) * d` there.
    fn int_div(&mut self, op: BinOp, st: ScalarType, l: H, d: H) -> H {
        if op == BinOp::Div {
            return self.bin(Bo::Divide, l, d);
        }
        if st.is_signed() && self.g.target == crate::Target::Glsl {
            let q = self.bin(Bo::Divide, l, d);
            let p = self.bin(Bo::Multiply, q, d);
            self.bin(Bo::Subtract, l, p)
        } else {
            self.bin(Bo::Modulo, l, d)
        }
    }

    fn safe_divisor(&mut self, st: ScalarType, l: H, r: H) -> H {
        let min = self.lit(int_lit(st, int_min(st)));
        let m1 = self.lit(int_lit(st, -1));
        let one = self.lit(int_lit(st, 1));
        let a = self.bin(Bo::Equal, l, min);
        let b = self.bin(Bo::Equal, r, m1);
        let both = self.bin(Bo::LogicalAnd, a, b);
        self.sel(both, one, r)
    }

    /// The shift amount as a `u32` taken modulo the width of `st`.
    fn shift_amount(&mut self, rhs: &Expr, r: H, rt: ScalarType, st: ScalarType) -> R<H> {
        let mask = (st.size_bytes() * 8 - 1) as u32;
        if let ExprKind::Const(c) = rhs.kind {
            let v = match c {
                Const::I32(v) => v as u32,
                Const::I64(v) => v as u32,
                Const::U32(v) => v,
                Const::U64(v) => v as u32,
                _ => 0,
            };
            return Ok(self.lit(Literal::U32(v & mask)));
        }
        let r32 = match rt {
            ScalarType::U32 => r,
            ScalarType::I32 => self.emit_as(r, ScalarKind::Uint, None),
            _ => {
                let t = self.emit_as(r, super::build::Gen::kind(rt), Some(4));
                if rt.is_signed() {
                    self.emit_as(t, ScalarKind::Uint, None)
                } else {
                    t
                }
            }
        };
        let m = self.lit(Literal::U32(mask));
        Ok(self.bin(Bo::And, r32, m))
    }

    /// `&&` / `||`, evaluating the right operand only when needed.
    fn logical(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> R<H> {
        let l = self.expr(lhs)?;
        let nop = if op == BinOp::LogicalAnd {
            Bo::LogicalAnd
        } else {
            Bo::LogicalOr
        };
        if is_simple(rhs) {
            let r = self.expr(rhs)?;
            return Ok(self.bin(nop, l, r));
        }
        let tmp = self.temp(&Type::BOOL)?;
        let tp = self.local_ptr(tmp);
        self.store(tp, l);
        self.open();
        let r = self.expr(rhs)?;
        self.store(tp, r);
        let eval = self.close();
        if op == BinOp::LogicalAnd {
            self.if_stmt(l, eval, naga::Block::new());
        } else {
            self.if_stmt(l, naga::Block::new(), eval);
        }
        Ok(self.load(tp))
    }

    /// `if cond { then } else { els }` as an expression.
    fn select(&mut self, cond: &Expr, then: &Expr, els: &Expr, ty: &Type) -> R<Option<H>> {
        let c = self.expr(cond)?;
        if matches!(ty, Type::Scalar(_)) && is_simple(then) && is_simple(els) {
            let t = self.expr(then)?;
            let e = self.expr(els)?;
            return Ok(Some(self.sel(c, t, e)));
        }
        let tmp = if *ty == Type::Unit {
            None
        } else {
            Some(self.temp(ty)?)
        };
        let branch = |fb: &mut Self, e: &Expr| -> R<naga::Block> {
            fb.open();
            let v = fb.expr_opt(e)?;
            if let (Some(t), Some(v)) = (tmp, v) {
                let p = fb.local_ptr(t);
                fb.store(p, v);
            }
            Ok(fb.close())
        };
        let accept = branch(self, then)?;
        let reject = branch(self, els)?;
        self.if_stmt(c, accept, reject);
        Ok(match tmp {
            Some(t) => {
                let p = self.local_ptr(t);
                Some(self.load(p))
            }
            None => None,
        })
    }

    /// `match` as an expression: an `if` chain writing a temporary.
    fn match_expr(
        &mut self,
        scrutinee: &Expr,
        arms: &[(Pattern, Expr)],
        ty: &Type,
    ) -> R<Option<H>> {
        let tmp = if *ty == Type::Unit {
            None
        } else {
            Some(self.temp(ty)?)
        };
        self.match_chain(scrutinee, arms, &mut |fb, e: &Expr| {
            let v = fb.expr_opt(e)?;
            if let (Some(t), Some(v)) = (tmp, v) {
                let p = fb.local_ptr(t);
                fb.store(p, v);
            }
            Ok(())
        })?;
        Ok(match tmp {
            Some(t) => {
                let p = self.local_ptr(t);
                Some(self.load(p))
            }
            None => None,
        })
    }

    /// Lowers a `match`: the scrutinee once, then `if pattern { bindings; arm } else …` in arm
    /// order (`arm` generates one arm's body in the current block).
    pub fn match_chain<A>(
        &mut self,
        scrutinee: &Expr,
        arms: &[(Pattern, A)],
        arm: &mut dyn FnMut(&mut Self, &A) -> R<()>,
    ) -> R<()> {
        let s = self.expr(scrutinee)?;
        self.match_arms(s, arms, arm)
    }

    fn match_arms<A>(
        &mut self,
        s: H,
        arms: &[(Pattern, A)],
        arm: &mut dyn FnMut(&mut Self, &A) -> R<()>,
    ) -> R<()> {
        let Some(((pat, body), rest)) = arms.split_first() else {
            return Ok(());
        };
        match self.pattern_cond(pat, s)? {
            None => {
                self.bind_pattern(pat, s)?;
                arm(self, body)
            }
            Some(cond) => {
                self.open();
                self.bind_pattern(pat, s)?;
                arm(self, body)?;
                let accept = self.close();
                self.open();
                self.match_arms(s, rest, arm)?;
                let reject = self.close();
                self.if_stmt(cond, accept, reject);
                Ok(())
            }
        }
    }

    /// The condition under which `p` matches `s`; `None` when it always does.
    fn pattern_cond(&mut self, p: &Pattern, s: H) -> R<Option<H>> {
        Ok(match p {
            Pattern::Wildcard => None,
            Pattern::Int(c) => {
                let c = self.constant(*c)?;
                Some(self.bin(Bo::Equal, s, c))
            }
            Pattern::Range(lo, hi) => {
                let lo = self.constant(*lo)?;
                let hi = self.constant(*hi)?;
                let a = self.bin(Bo::GreaterEqual, s, lo);
                let b = self.bin(Bo::LessEqual, s, hi);
                Some(self.bin(Bo::LogicalAnd, a, b))
            }
            Pattern::Or(alts) => {
                let mut acc: Option<H> = None;
                for a in alts {
                    match self.pattern_cond(a, s)? {
                        None => return Ok(None),
                        Some(c) => {
                            acc = Some(match acc {
                                None => c,
                                Some(prev) => self.bin(Bo::LogicalOr, prev, c),
                            })
                        }
                    }
                }
                acc
            }
            Pattern::Case { variant, case, .. } => {
                let tag = variant_tag(self.g.kernel, variant, case)
                    .ok_or_else(|| self.g.bug(format!("`{variant}` has no case `{case}`")))?;
                let t = self.emit(Expression::AccessIndex { base: s, index: 0 });
                let want = self.lit(Literal::U32(tag));
                Some(self.bin(Bo::Equal, t, want))
            }
        })
    }

    /// Declares and stores the variables a case pattern binds.
    fn bind_pattern(&mut self, p: &Pattern, s: H) -> R<()> {
        if let Pattern::Case {
            variant,
            case,
            bindings,
        } = p
        {
            for (k, b) in bindings.iter().enumerate() {
                let m = variant_member(self.g.kernel, variant, case, k).ok_or_else(|| {
                    self.g
                        .bug(format!("`{variant}::{case}` has no payload {k}"))
                })?;
                let local = self.declare_local(*b)?;
                let v = self.emit(Expression::AccessIndex { base: s, index: m });
                let lp = self.local_ptr(local);
                self.store(lp, v);
            }
        }
        Ok(())
    }

    /// The length of array `a` (`u32`).
    pub(super) fn len(&mut self, a: &Expr) -> R<H> {
        if let ExprKind::Var(v) = a.kind {
            if let Slot::Global(g) = self.slot(v)? {
                let (handle, len) = (self.g.globals[g].handle, self.g.globals[g].len);
                return Ok(match len {
                    Some(n) => self.lit(Literal::U32(n)),
                    None => {
                        let p = self.global_ptr(handle);
                        self.emit(Expression::ArrayLength(p))
                    }
                });
            }
        }
        match a.ty {
            Type::Array { len: Some(n), .. } => Ok(self.lit(Literal::U32(n))),
            _ => Err(self
                .g
                .bug(format!("the length of a `{}` that is not a variable", a.ty))),
        }
    }

    /// A call of helper `func`; its buffer/shared array arguments select a specialisation.
    fn call(&mut self, func: &str, args: &[Expr]) -> R<Option<H>> {
        let kernel = self.g.kernel;
        let f = kernel
            .function(func)
            .ok_or_else(|| self.g.bug(format!("no helper function `{func}`")))?;
        let mut binds = Vec::with_capacity(args.len());
        let mut arguments = Vec::with_capacity(args.len());
        for (p, a) in f.params.iter().zip(args) {
            match p.ty.as_array() {
                Some((_, MemSpace::Global | MemSpace::Shared, _)) => {
                    binds.push(Some(self.array_binding(a)?));
                }
                _ => {
                    binds.push(None);
                    arguments.push(self.expr(a)?);
                }
            }
        }
        let function = self.g.specialize(func, binds)?;
        let result = if f.ret == Type::Unit {
            None
        } else {
            Some(self.emit(Expression::CallResult(function)))
        };
        self.stmt(naga::Statement::Call {
            function,
            arguments,
            result,
        });
        Ok(result)
    }

    fn variant_lit(&mut self, variant: &str, case: &str, payload: &[Expr], ty: &Type) -> R<H> {
        let kernel = self.g.kernel;
        let def = kernel
            .variant(variant)
            .ok_or_else(|| self.g.bug(format!("no variant `{variant}`")))?;
        let mut given = Vec::with_capacity(payload.len());
        for p in payload {
            given.push(self.expr(p)?);
        }
        let tag = variant_tag(kernel, variant, case)
            .ok_or_else(|| self.g.bug(format!("`{variant}` has no case `{case}`")))?;
        let mut components = vec![self.lit(Literal::U32(tag))];
        for c in &def.cases {
            for (k, t) in c.payload.iter().enumerate() {
                if c.name == case {
                    components.push(given[k]);
                } else {
                    let t = self.g.value_ty(t)?;
                    components.push(self.emit(Expression::ZeroValue(t)));
                }
            }
        }
        let ty = self.g.value_ty(ty)?;
        Ok(self.emit(Expression::Compose { ty, components }))
    }

    /// `[value; len]`: a zero value, a composite of up to 16 copies, or a filling loop.
    fn array_repeat(&mut self, value: &Expr, len: u32, ty: &Type) -> R<H> {
        let t = self.g.value_ty(ty)?;
        let zero = match value.kind {
            ExprKind::Const(c) => match c {
                Const::Bool(b) => !b,
                Const::I32(v) => v == 0,
                Const::I64(v) => v == 0,
                Const::U32(v) => v == 0,
                Const::U64(v) => v == 0,
                Const::F16(v) | Const::BF16(v) => v == 0,
                Const::F32(v) => v == 0,
                Const::F64(v) => v == 0,
            },
            _ => false,
        };
        if zero {
            self.g
                .check_scalar(value.ty.as_scalar().unwrap_or(ScalarType::U32))?;
            return Ok(self.emit(Expression::ZeroValue(t)));
        }
        let v = self.expr(value)?;
        if len <= 16 {
            return Ok(self.emit(Expression::Compose {
                ty: t,
                components: vec![v; len as usize],
            }));
        }
        let tmp = self.new_local("spoc_array", t);
        let counter = self.temp(&Type::U32)?;
        let ap = self.local_ptr(tmp);
        let cp = self.local_ptr(counter);
        let zero = self.lit(Literal::U32(0));
        self.store(cp, zero);
        self.open();
        let i = self.load(cp);
        let n = self.lit(Literal::U32(len));
        let done = self.bin(Bo::GreaterEqual, i, n);
        self.open();
        self.stmt(naga::Statement::Break);
        let brk = self.close();
        self.if_stmt(done, brk, naga::Block::new());
        let elem = self.emit(Expression::Access { base: ap, index: i });
        self.store(elem, v);
        let body = self.close();
        self.open();
        let i = self.load(cp);
        let one = self.lit(Literal::U32(1));
        let next = self.bin(Bo::Add, i, one);
        self.store(cp, next);
        let continuing = self.close();
        self.stmt(naga::Statement::Loop {
            body,
            continuing,
            break_if: None,
        });
        Ok(self.load(ap))
    }
}
