//! Expression lowering, places, loads and stores.

use super::asm::{b32_imm, Class, Opd};
use super::gen::{Gen, R};
use super::value::{Addr, ArrRef, Base, Len, Place, Space, Store, Val};
use spoc_ir::{
    lane_index, BinOp, Const, Expr, ExprKind, Intrinsic, LValue, MathFn, ScalarType, Type,
};

impl<'k> Gen<'k, '_> {
    /// Evaluates `e` to a scalar operand.
    pub(crate) fn scalar(&mut self, e: &'k Expr) -> R<Opd> {
        // A scalar variable (most operands): its register, without copying the whole value.
        if let ExprKind::Var(v) = e.kind {
            if let Some(Some(Val::Scalar(o, _))) = self.frame().vals.get(v.0 as usize) {
                return Ok(o.clone());
            }
        }
        match self.expr(e)? {
            Val::Scalar(o, _) => Ok(o),
            _ => Err(self.cx.unsupported(
                format!("`{}` where a scalar is needed", self.show(e)),
                "a scalar value",
            )),
        }
    }

    /// `e` printed as Rust-like text (for messages and comments).
    pub(crate) fn show(&self, e: &Expr) -> String {
        self.frame().show.expr(e)
    }

    /// Evaluates `e`.
    pub(crate) fn expr(&mut self, e: &'k Expr) -> R<Val> {
        if let ExprKind::Var(v) = e.kind {
            return self.var_val(v);
        }
        if let Some(p) = self.expr_place(e)? {
            return self.load(&p);
        }
        match &e.kind {
            ExprKind::Const(c) => Ok(Val::Scalar(self.const_opd(*c), c.ty())),
            ExprKind::Var(v) => self.var_val(*v),
            ExprKind::Index { .. } => unreachable!("indexing is a place"),
            ExprKind::Field { base, field } => {
                let b = self.expr(base)?;
                self.field_of(&b, &base.ty, field)
            }
            ExprKind::Unary { op, operand } => {
                if let ExprKind::Const(c) = operand.kind {
                    if let Some(k) = super::ops::fold_unary(*op, c) {
                        return Ok(Val::Scalar(self.const_opd(k), k.ty()));
                    }
                }
                let t = scalar_ty(&operand.ty);
                let a = self.scalar(operand)?;
                let r = self.unary(*op, t, &a)?;
                Ok(Val::Scalar(r, t))
            }
            ExprKind::Binary { op, lhs, rhs } if op.is_logical() => {
                let r = self.logical(*op == BinOp::LogicalAnd, lhs, rhs)?;
                Ok(Val::Scalar(r, ScalarType::Bool))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let lt = scalar_ty(&lhs.ty);
                let rt = scalar_ty(&rhs.ty);
                let a = self.scalar(lhs)?;
                let b = self.scalar(rhs)?;
                let r = self.binary(*op, lt, &a, rt, &b)?;
                let t = scalar_ty(&e.ty);
                Ok(Val::Scalar(r, t))
            }
            ExprKind::Intrinsic { intrinsic, args } => self.intrinsic(e, *intrinsic, args),
            ExprKind::Cast { value, to } => {
                if let ExprKind::Const(c) = value.kind {
                    if let Some(k) = super::ops::fold_cast(c, *to) {
                        return Ok(Val::Scalar(self.const_opd(k), k.ty()));
                    }
                }
                let from = scalar_ty(&value.ty);
                let v = self.scalar(value)?;
                let r = self.cast(&v, from, *to)?;
                Ok(Val::Scalar(r, *to))
            }
            ExprKind::Call { func, args } => {
                let Some(f) = self.cx.kernel.function(func) else {
                    return Err(self.cx.unsupported(
                        format!("a call of the unknown helper `{func}`"),
                        "helpers linked into the kernel",
                    ));
                };
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.expr(a)?);
                }
                self.inline_call(f, vals)
            }
            ExprKind::Select { cond, then, els } => self.select(e, cond, then, els),
            ExprKind::Match { scrutinee, arms } => {
                let sv = self.expr(scrutinee)?;
                let res = self.fresh_val(&e.ty, None)?;
                let end = self.a.label("mend");
                for (pat, arm) in arms {
                    let next = self.a.label("arm");
                    self.pattern_test(&sv, &scrutinee.ty, pat, &next)?;
                    let v = self.diverged(|g| g.expr(arm))?;
                    self.assign_val(&res, &v)?;
                    self.a.bra(&end);
                    self.a.put(&next);
                }
                // Exhaustive by validation: falling out of every arm cannot happen.
                self.a.put(&end);
                Ok(res)
            }
            ExprKind::Len(a) => {
                let Val::Array(arr) = self.expr(a)? else {
                    return Err(self.cx.unsupported(
                        format!("`{}`: the length of a non-array", self.show(e)),
                        "an array",
                    ));
                };
                let n = self.array_len(&arr)?;
                Ok(Val::Scalar(n, ScalarType::U32))
            }
            ExprKind::RecordLit { record, fields } => {
                let mut vs = Vec::new();
                for f in fields {
                    vs.push(self.expr(f)?);
                }
                Ok(Val::Record(record.clone(), vs))
            }
            ExprKind::VariantLit {
                variant,
                case,
                payload,
            } => {
                let def = self.cx.variant(variant)?.clone();
                let idx = def.case_index(case).unwrap_or(0);
                let mut vs = Vec::new();
                for p in payload {
                    vs.push(self.expr(p)?);
                }
                let cases = (0..def.cases.len())
                    .map(|i| if i == idx { Some(vs.clone()) } else { None })
                    .collect();
                Ok(Val::Variant {
                    name: variant.clone(),
                    tag: b32_imm(idx as i64),
                    cases,
                })
            }
            ExprKind::ArrayRepeat { value, .. } => {
                let v = self.expr(value)?;
                let arr = self.fresh_val(&e.ty, Some("tmp"))?;
                if let Val::Array(a) = &arr {
                    self.fill_array(a, &v)?;
                }
                Ok(arr)
            }
            ExprKind::VectorLit(lanes) => {
                let t = lanes
                    .first()
                    .map(|l| scalar_ty(&l.ty))
                    .unwrap_or(ScalarType::F32);
                let mut os = Vec::new();
                for l in lanes {
                    os.push(self.scalar(l)?);
                }
                Ok(Val::Vector(t, os))
            }
        }
    }

    /// The length of `arr` as a `u32` operand.
    pub(crate) fn array_len(&mut self, arr: &ArrRef) -> R<Opd> {
        match &arr.len {
            Len::DynShared => {
                let size = self.cx.layout(&arr.elem)?.size.max(1);
                let bytes = self.a.tmp(Class::B32);
                self.a
                    .ins(format_args!("mov.u32 {bytes}, %dynamic_smem_size"));
                Ok(self
                    .a
                    .bin("div.u32", Class::B32, &bytes, &b32_imm(size as i64)))
            }
            l => self.len_opd(l),
        }
    }

    /// Field `field` of the record value `v` (of type `ty`), or lane `field` (`x`, `y`, `z`,
    /// `w`) of the vector value `v`.
    fn field_of(&mut self, v: &Val, ty: &Type, field: &str) -> R<Val> {
        if let (Val::Vector(t, ls), Type::Vector { .. }) = (v, ty) {
            return match lane_index(field).and_then(|i| ls.get(i)) {
                Some(o) => Ok(Val::Scalar(o.clone(), *t)),
                None => Err(self.cx.unsupported(
                    format!("lane `.{field}` of a `{ty}`"),
                    "an existing lane (`x`, `y`, `z`, `w`)",
                )),
            };
        }
        let (Val::Record(_, fs), Type::Record(name)) = (v, ty) else {
            return Err(self.cx.unsupported(
                format!("field `.{field}` of a non-record"),
                "a record value",
            ));
        };
        let def = self.cx.record(name)?;
        let i = def
            .fields
            .iter()
            .position(|f| f.name == field)
            .ok_or_else(|| {
                self.cx
                    .unsupported(format!("field `.{field}` of `{name}`"), "an existing field")
            })?;
        Ok(fs[i].clone())
    }

    /// The place `e` denotes, if it is an element of an array (or a field of one).
    pub(crate) fn expr_place(&mut self, e: &'k Expr) -> R<Option<Place>> {
        match &e.kind {
            ExprKind::Index { array, index } => {
                let Val::Array(arr) = self.expr(array)? else {
                    return Err(self.cx.unsupported(
                        format!("`{}`: indexing a non-array", self.show(e)),
                        "an array",
                    ));
                };
                Ok(Some(self.index_expr_place(&arr, index)?))
            }
            ExprKind::Field { base, field } => match self.expr_place(base)? {
                Some(p) => Ok(Some(self.field_place(&p, &base.ty, field)?)),
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// The place an assignment writes.
    pub(crate) fn lvalue_place(&mut self, l: &'k LValue) -> R<Place> {
        match l {
            LValue::Var(v) => Ok(Place::Reg(self.var_val(*v)?)),
            LValue::Index { base, index } => {
                let bp = self.lvalue_place(base)?;
                let arr = match bp {
                    Place::Reg(Val::Array(a)) => a,
                    Place::Mem(addr, Type::Array { elem, len, .. }) => ArrRef {
                        elem: std::sync::Arc::unwrap_or_clone(elem),
                        len: len.map(Len::Const).unwrap_or(Len::Const(0)),
                        id: addr.array,
                        store: Store::Mem(addr),
                    },
                    _ => {
                        return Err(self
                            .cx
                            .unsupported("an indexed assignment to a non-array", "an array place"))
                    }
                };
                self.index_expr_place(&arr, index)
            }
            LValue::Field { base, field } => {
                let bp = self.lvalue_place(base)?;
                let bty = self.place_type(&bp, base)?;
                self.field_place(&bp, &bty, field)
            }
        }
    }

    /// The type of the value at place `p` (which `l` denotes).
    fn place_type(&self, p: &Place, l: &LValue) -> R<Type> {
        Ok(match p {
            Place::Mem(_, t) => t.clone(),
            Place::Soa { ty, .. } => ty.clone(),
            Place::Reg(v) => match v {
                Val::Record(n, _) => Type::Record(n.clone()),
                Val::Scalar(_, t) => Type::Scalar(*t),
                Val::Vector(t, ls) => Type::Vector {
                    elem: *t,
                    lanes: ls.len() as u8,
                },
                _ => {
                    return Err(self.cx.unsupported(
                        format!("a field of `{l}`, which is not a record"),
                        "a record place",
                    ))
                }
            },
        })
    }

    /// Element `i` of `arr`. In checked mode the index is tested against the array's length
    /// first: a failing test records the fault, and the place's guard (the tests of this
    /// index and of the indices the array came from) keeps the access from happening.
    /// The place of element `index` of `arr`. Outside checked mode, for shared memory, the
    /// constant addends of an index `x + c` (nested `+`, either side) go into the address's
    /// immediate offset, so that `s[t + 1]`, `s[t + 2]`, … share one address register, as
    /// NVVM's output does. Exact: shared addresses are 32-bit, so `(x + c) * size` and
    /// `x * size + c * size` wrap alike; the other addends are evaluated in their order.
    pub(crate) fn index_expr_place(&mut self, arr: &ArrRef, index: &'k Expr) -> R<Place> {
        let split = match (&self.fault, &arr.store) {
            (None, Store::Mem(a)) if a.space == Space::Shared => split_const_addend(index),
            _ => None,
        };
        let size = self.cx.layout(&arr.elem)?.size;
        let split = split.filter(|(_, c)| c.checked_mul(size).is_some_and(|b| b < 1 << 24));
        let Some((terms, c)) = split else {
            let i = self.scalar(index)?;
            return self.index_place(arr, &i);
        };
        let mut i: Option<Opd> = None;
        for t in terms {
            let v = self.scalar(t)?;
            i = Some(match i {
                None => v,
                Some(acc) => self.a.bin("add.s32", Class::B32, &acc, &v),
            });
        }
        let i = i.unwrap_or_else(|| b32_imm(0));
        Ok(match self.index_place(arr, &i)? {
            Place::Mem(a, t) => Place::Mem(a.plus(c * size), t),
            p => p,
        })
    }

    pub(crate) fn index_place(&mut self, arr: &ArrRef, i: &Opd) -> R<Place> {
        let guard = self.bounds_check(arr, i)?;
        match &arr.store {
            Store::Soa(leaves) => Ok(Place::Soa {
                leaves: leaves.clone(),
                index: self.a.reg(i),
                ty: arr.elem.clone(),
                guard,
            }),
            Store::Mem(addr) => {
                let size = self.cx.layout(&arr.elem)?.size;
                if i.imm {
                    if let Ok(k) = i.text.parse::<u64>() {
                        let mut a = addr.plus(k * size);
                        a.guard = guard;
                        a.array = arr.id;
                        return Ok(Place::Mem(a, arr.elem.clone()));
                    }
                }
                // Shared memory is a 32-bit window: its addresses stay 32-bit, as NVVM's
                // (PTX ISA 6.4.1: a `.shared` address may be a 32-bit register).
                let (c, wide, mul, add) = match addr.space {
                    Space::Shared => (Class::B32, "u32", "mul.lo.u32", "add.s32"),
                    _ => (Class::B64, "u64", "mul.wide.u32", "add.s64"),
                };
                let off = self.a.bin(mul, c, i, &b32_imm(size as i64));
                let base = match &addr.base {
                    Base::Reg(r) => r.clone(),
                    Base::Sym(s) => {
                        let r = self.a.tmp(c);
                        self.a.ins(format_args!("mov.{wide} {r}, {s}"));
                        r
                    }
                };
                let a = self.a.bin(add, c, &base, &off);
                Ok(Place::Mem(
                    Addr {
                        space: addr.space,
                        base: Base::Reg(a),
                        offset: addr.offset,
                        guard,
                        array: arr.id,
                    },
                    arr.elem.clone(),
                ))
            }
        }
    }

    /// Checked mode: tests `i < len(arr)`, records a failure, and returns the predicate under
    /// which the element may be accessed (combined with the guard `arr` already has); `None`
    /// outside checked mode, or for a constant index of a fixed array that is inside it.
    fn bounds_check(&mut self, arr: &ArrRef, i: &Opd) -> R<Option<Opd>> {
        let Some(_) = self.fault else {
            return Ok(None);
        };
        let outer = match &arr.store {
            Store::Mem(a) => a.guard.clone(),
            Store::Soa(_) => None,
        };
        if let (Len::Const(n), true) = (&arr.len, i.imm) {
            if i.text.parse::<u64>().is_ok_and(|k| k < *n as u64) {
                return Ok(outer);
            }
        }
        let len = self.array_len(arr)?;
        let len = self.a.reg(&len);
        let idx = self.a.reg(i);
        let ok = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.lt.u32 {ok}, {idx}, {len}"));
        let ok = match outer {
            Some(g) => self.a.bin("and.pred", Class::Pred, &g, &ok),
            None => ok,
        };
        self.fault_unless(&ok, crate::checked::FAULT_OUT_OF_BOUNDS, arr.id, &idx, &len);
        Ok(Some(ok))
    }

    /// Field `field` of the record at place `p` (of type `ty`), or lane `field` of the vector
    /// there (in memory at byte offset `lane * size(elem)`).
    pub(crate) fn field_place(&mut self, p: &Place, ty: &Type, field: &str) -> R<Place> {
        if let Type::Vector { elem, lanes } = ty {
            let lane = lane_index(field)
                .filter(|&l| l < *lanes as usize)
                .ok_or_else(|| {
                    self.cx.unsupported(
                        format!("lane `.{field}` of a `{ty}`"),
                        "an existing lane (`x`, `y`, `z`, `w`)",
                    )
                })?;
            return match p {
                Place::Mem(addr, _) => Ok(Place::Mem(
                    addr.plus(lane as u64 * elem.size_bytes() as u64),
                    Type::Scalar(*elem),
                )),
                Place::Reg(v) => Ok(Place::Reg(self.field_of(v, ty, field)?)),
                Place::Soa { .. } => Err(self.cx.unsupported(
                    format!("lane `.{field}` of a vector in a Structure-of-Arrays parameter"),
                    "flat records of scalars",
                )),
            };
        }
        let Type::Record(rec) = ty else {
            return Err(self
                .cx
                .unsupported(format!("field `.{field}` of a `{ty}`"), "a record"));
        };
        match p {
            Place::Mem(addr, _) => {
                let (off, fty) = self.cx.field_offset(rec, field)?;
                Ok(Place::Mem(addr.plus(off), fty))
            }
            Place::Soa {
                leaves,
                index,
                guard,
                ..
            } => {
                let (_, fty) = self.cx.field_offset(rec, field)?;
                let leaves = leaves
                    .iter()
                    .filter(|l| l.field == field)
                    .cloned()
                    .collect();
                Ok(Place::Soa {
                    leaves,
                    index: index.clone(),
                    ty: fty,
                    guard: guard.clone(),
                })
            }
            Place::Reg(v) => Ok(Place::Reg(self.field_of(v, ty, field)?)),
        }
    }

    /// Loads the value at place `p`.
    pub(crate) fn load(&mut self, p: &Place) -> R<Val> {
        match p {
            Place::Reg(v) => Ok(v.clone()),
            Place::Mem(addr, ty) => self.load_mem(addr, ty),
            Place::Soa {
                leaves,
                index,
                ty,
                guard,
            } => match ty {
                Type::Scalar(s) => {
                    let leaf = leaves
                        .first()
                        .ok_or_else(|| self.cx.unsupported("an empty SoA place", "a field"))?;
                    let mut addr = self.soa_addr(leaf.base.clone(), index, *s, leaf.readonly);
                    addr.guard = guard.clone();
                    Ok(Val::Scalar(self.load_scalar(&addr, *s), *s))
                }
                Type::Record(name) => {
                    let def = self.cx.record(name)?.clone();
                    let mut fs = Vec::new();
                    for f in &def.fields {
                        let fp = self.field_place(p, ty, &f.name)?;
                        fs.push(self.load(&fp)?);
                    }
                    Ok(Val::Record(name.clone(), fs))
                }
                _ => Err(self.cx.unsupported(
                    format!("a `{ty}` field of a Structure-of-Arrays parameter"),
                    "flat records of scalars",
                )),
            },
        }
    }

    /// The address of element `index` of one SoA field array.
    fn soa_addr(&mut self, base: Opd, index: &Opd, t: ScalarType, readonly: bool) -> Addr {
        let off = self.a.bin(
            "mul.wide.u32",
            Class::B64,
            index,
            &b32_imm(t.size_bytes() as i64),
        );
        let a = self.a.bin("add.s64", Class::B64, &base, &off);
        Addr {
            space: Space::Global { readonly },
            base: Base::Reg(a),
            offset: 0,
            guard: None,
            array: crate::checked::NO_ARRAY,
        }
    }

    fn load_mem(&mut self, addr: &Addr, ty: &Type) -> R<Val> {
        Ok(match ty {
            Type::Scalar(s) => Val::Scalar(self.load_scalar(addr, *s), *s),
            Type::Vector { elem, lanes } => {
                Val::Vector(*elem, self.load_vector(addr, *elem, *lanes))
            }
            Type::Record(name) => {
                let def = self.cx.record(name)?.clone();
                let mut fs = Vec::new();
                for f in &def.fields {
                    let (off, fty) = self.cx.field_offset(name, &f.name)?;
                    fs.push(self.load_mem(&addr.plus(off), &fty)?);
                }
                Val::Record(name.clone(), fs)
            }
            Type::Array {
                elem, len: Some(n), ..
            } => Val::Array(ArrRef {
                elem: (**elem).clone(),
                len: Len::Const(*n),
                store: Store::Mem(addr.clone()),
                id: addr.array,
            }),
            _ => {
                return Err(self.cx.unsupported(
                    format!("a load of a `{ty}` from memory"),
                    "scalars, vectors, records and fixed-length arrays in memory",
                ))
            }
        })
    }

    /// `ld` of one scalar; `bool` is a byte (nonzero is true), `f16` 16 bits.
    /// Under a guard (checked mode), the load happens only when the guard holds, and the
    /// value is 0 otherwise.
    pub(crate) fn load_scalar(&mut self, addr: &Addr, t: ScalarType) -> Opd {
        let ld = addr.space.ld();
        let a = addr.operand();
        let at = addr.guard_prefix();
        match t {
            ScalarType::Bool => {
                let b = self.a.tmp(Class::B32);
                if addr.guard.is_some() {
                    self.a.ins(format_args!("mov.u32 {b}, 0"));
                }
                self.a.ins(format_args!("{at}{ld}.u8 {b}, {a}"));
                let p = self.a.tmp(Class::Pred);
                self.a.ins(format_args!("setp.ne.u32 {p}, {b}, 0"));
                p
            }
            _ => {
                let d = self.a.tmp(Class::of(t));
                if addr.guard.is_some() {
                    self.a
                        .ins(format_args!("mov.b{} {d}, 0", t.size_bytes() * 8));
                }
                self.a.ins(format_args!("{at}{ld}{} {d}, {a}", mem_type(t)));
                d
            }
        }
    }

    /// `st` of one scalar.
    /// Under a guard (checked mode), the store happens only when the guard holds.
    pub(crate) fn store_scalar(&mut self, addr: &Addr, t: ScalarType, v: &Opd) {
        let st = addr.space.st();
        let a = addr.operand();
        let at = addr.guard_prefix();
        match t {
            ScalarType::Bool => {
                let p = self.pred_reg(v);
                let b = self.a.tmp(Class::B32);
                self.a.ins(format_args!("selp.u32 {b}, 1, 0, {p}"));
                self.a.ins(format_args!("{at}{st}.u8 {a}, {b}"));
            }
            _ => {
                let v = self.a.reg(v);
                self.a.ins(format_args!("{at}{st}{} {a}, {v}", mem_type(t)));
            }
        }
    }

    /// Loads the `lanes` lanes of a vector of `t` at `addr`: one `ld.v2`/`ld.v4` per (at
    /// most 16-byte) chunk when [`vector_chunk`] allows it, lane by lane otherwise. Under a
    /// guard the lanes are 0 unless it holds, as for [`Gen::load_scalar`].
    pub(crate) fn load_vector(&mut self, addr: &Addr, t: ScalarType, lanes: u8) -> Vec<Opd> {
        let n = t.size_bytes() as u64;
        let Some(k) = vector_chunk(addr, t, lanes) else {
            return (0..lanes as u64)
                .map(|l| self.load_scalar(&addr.plus(l * n), t))
                .collect();
        };
        let ld = addr.space.ld();
        let at = addr.guard_prefix();
        let mut out = Vec::new();
        for c in (0..lanes as usize).step_by(k) {
            let ds: Vec<Opd> = (0..k).map(|_| self.a.tmp(Class::of(t))).collect();
            if addr.guard.is_some() {
                for d in &ds {
                    self.a.ins(format_args!("mov.b{} {d}, 0", n * 8));
                }
            }
            let a = addr.plus(c as u64 * n).operand();
            self.a.ins(format_args!(
                "{at}{ld}.v{k}{} {}, {a}",
                mem_type(t),
                vector_operand(&ds)
            ));
            out.extend(ds);
        }
        out
    }

    /// Stores the lanes `ls` of a vector of `t` at `addr`: `st.v2`/`st.v4` as
    /// [`Gen::load_vector`] loads.
    pub(crate) fn store_vector(&mut self, addr: &Addr, t: ScalarType, ls: &[Opd]) {
        let n = t.size_bytes() as u64;
        let Some(k) = u8::try_from(ls.len())
            .ok()
            .and_then(|lanes| vector_chunk(addr, t, lanes))
        else {
            for (l, o) in ls.iter().enumerate() {
                self.store_scalar(&addr.plus(l as u64 * n), t, o);
            }
            return;
        };
        let st = addr.space.st();
        let at = addr.guard_prefix();
        for (c, chunk) in ls.chunks(k).enumerate() {
            let vs: Vec<Opd> = chunk.iter().map(|o| self.a.reg(o)).collect();
            let a = addr.plus((c * k) as u64 * n).operand();
            self.a.ins(format_args!(
                "{at}{st}.v{k}{} {a}, {}",
                mem_type(t),
                vector_operand(&vs)
            ));
        }
    }

    /// Stores `v` at place `p`.
    pub(crate) fn store(&mut self, p: &Place, v: &Val) -> R<()> {
        match p {
            Place::Reg(dst) => self.assign_val(dst, v),
            Place::Mem(addr, ty) => self.store_mem(addr, ty, v),
            Place::Soa {
                leaves,
                index,
                ty,
                guard,
            } => match (ty, v) {
                (Type::Scalar(s), Val::Scalar(o, _)) => {
                    let leaf = leaves
                        .first()
                        .ok_or_else(|| self.cx.unsupported("an empty SoA place", "a field"))?;
                    let mut addr = self.soa_addr(leaf.base.clone(), index, *s, false);
                    addr.guard = guard.clone();
                    self.store_scalar(&addr, *s, o);
                    Ok(())
                }
                (Type::Record(name), Val::Record(_, fs)) => {
                    let def = self.cx.record(name)?.clone();
                    for (f, fv) in def.fields.iter().zip(fs) {
                        let fp = self.field_place(p, ty, &f.name)?;
                        self.store(&fp, fv)?;
                    }
                    Ok(())
                }
                _ => Err(self.cx.unsupported(
                    format!("a store of a `{ty}` into a Structure-of-Arrays parameter"),
                    "flat records of scalars",
                )),
            },
        }
    }

    fn store_mem(&mut self, addr: &Addr, ty: &Type, v: &Val) -> R<()> {
        match (ty, v) {
            (Type::Scalar(s), Val::Scalar(o, _)) => {
                self.store_scalar(addr, *s, o);
                Ok(())
            }
            (Type::Vector { elem, .. }, Val::Vector(_, ls)) => {
                self.store_vector(addr, *elem, ls);
                Ok(())
            }
            (Type::Record(name), Val::Record(_, fs)) => {
                let def = self.cx.record(name)?.clone();
                for (f, fv) in def.fields.iter().zip(fs) {
                    let (off, fty) = self.cx.field_offset(name, &f.name)?;
                    self.store_mem(&addr.plus(off), &fty, fv)?;
                }
                Ok(())
            }
            (
                Type::Array {
                    elem, len: Some(n), ..
                },
                Val::Array(src),
            ) => {
                let dst = ArrRef {
                    elem: (**elem).clone(),
                    len: Len::Const(*n),
                    store: Store::Mem(addr.clone()),
                    id: addr.array,
                };
                self.copy_array(&dst, src)
            }
            _ => Err(self.cx.unsupported(
                format!("a store of a `{ty}` to memory"),
                "scalars, vectors, records and fixed-length arrays in memory",
            )),
        }
    }

    /// `a && b` / `a || b` as a value: `b` is evaluated only when needed (it is computed
    /// unconditionally only when it is pure and cheap, see [`Gen::pure`]).
    fn logical(&mut self, is_and: bool, lhs: &'k Expr, rhs: &'k Expr) -> R<Opd> {
        let a = self.scalar(lhs)?;
        if self.pure(rhs) {
            let b = self.scalar(rhs)?;
            let (a, b) = (self.pred_reg(&a), self.pred_reg(&b));
            let op = if is_and { "and.pred" } else { "or.pred" };
            return Ok(self.a.bin(op, Class::Pred, &a, &b));
        }
        let res = self.a.tmp(Class::Pred);
        self.a.mov_to(&res, &a);
        let end = self.a.label(if is_and { "and_end" } else { "or_end" });
        self.a.bra_if(&res, !is_and, &end);
        let b = self.diverged(|g| g.scalar(rhs))?;
        self.a.mov_to(&res, &b);
        self.a.put(&end);
        Ok(res)
    }

    /// `if c { t } else { e }` as a value. When both arms are pure and cheap and the value is
    /// a non-`bool` scalar, both are computed and `selp` picks one; otherwise only the chosen arm
    /// runs, behind a branch.
    fn select(&mut self, e: &'k Expr, c: &'k Expr, t: &'k Expr, f: &'k Expr) -> R<Val> {
        let scalar_non_bool = matches!(e.ty, Type::Scalar(s) if s != ScalarType::Bool);
        if scalar_non_bool && self.pure(t) && self.pure(f) {
            let p = self.scalar(c)?;
            let p = self.pred_reg(&p);
            let a = self.scalar(t)?;
            let b = self.scalar(f)?;
            let s = scalar_ty(&e.ty);
            let cl = Class::of(s);
            let ty = super::asm::ptx_type(s)
                .replace(".s", ".b")
                .replace(".u", ".b");
            let ty = if s.is_half() { ".b16".to_string() } else { ty };
            let r = self.a.tmp(cl);
            self.a.ins(format_args!("selp{ty} {r}, {a}, {b}, {p}"));
            return Ok(Val::Scalar(r, s));
        }
        if let Some(v) = self.guarded_load(e, c, t, f)? {
            return Ok(v);
        }
        let res = self.fresh_val(&e.ty, None)?;
        let else_l = self.a.label("sel_else");
        let end = self.a.label("sel_end");
        self.branch(c, false, &else_l)?;
        self.diverged(|g| {
            let v = g.expr(t)?;
            g.assign_val(&res, &v)
        })?;
        self.a.bra(&end);
        self.a.put(&else_l);
        self.diverged(|g| {
            let v = g.expr(f)?;
            g.assign_val(&res, &v)
        })?;
        self.a.put(&end);
        Ok(res)
    }

    /// `if c { a[i] } else { 0 }` (a scalar element of a buffer or shared array, `c` and `i`
    /// pure, checked mode off) as one predicated load, `mov d, 0; @c ld d, [a + i]`, as NVRTC
    /// emits it: the address is computed whatever `c` is (arithmetic only), the memory is read
    /// only when `c` holds. `None` (nothing emitted) for any other select.
    fn guarded_load(
        &mut self,
        e: &'k Expr,
        c: &'k Expr,
        t: &'k Expr,
        f: &'k Expr,
    ) -> R<Option<Val>> {
        let Type::Scalar(s) = e.ty else {
            return Ok(None);
        };
        // All-zero bits (`+0.0`, not `-0.0`): what the predicated load leaves when `c` fails.
        let zero = match f.kind {
            ExprKind::Const(Const::I32(0) | Const::U32(0) | Const::I64(0) | Const::U64(0)) => true,
            ExprKind::Const(Const::F32(bits)) => bits == 0,
            ExprKind::Const(Const::F64(bits)) => bits == 0,
            _ => false,
        };
        let ExprKind::Index { array, index } = &t.kind else {
            return Ok(None);
        };
        let plain_array = matches!(array.kind, ExprKind::Var(_))
            && matches!(array.ty, Type::Array { ref elem, .. } if **elem == Type::Scalar(s));
        if s == ScalarType::Bool
            || !zero
            || !plain_array
            || self.fault.is_some()
            || !self.pure(c)
            || !self.pure(index)
        {
            return Ok(None);
        }
        let Val::Array(arr) = self.expr(array)? else {
            return Ok(None);
        };
        if !matches!(arr.store, Store::Mem(_)) {
            return Ok(None);
        }
        let p = self.scalar(c)?;
        let p = self.pred_reg(&p);
        let Place::Mem(mut addr, _) = self.index_expr_place(&arr, index)? else {
            return Ok(None);
        };
        addr.guard = Some(p);
        Ok(Some(Val::Scalar(self.load_scalar(&addr, s), s)))
    }

    /// True if evaluating `e` has no effect, cannot fault and is cheap: constants, variables,
    /// arithmetic other than integer division, casts, comparisons, thread indices. Such operands
    /// may be evaluated even when Rust would not evaluate them (for `selp` and `and.pred`).
    pub(crate) fn pure(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Var(_) => true,
            ExprKind::Unary { operand, .. } => self.pure(operand),
            ExprKind::Binary { op, lhs, rhs } => {
                let int_div = matches!(op, BinOp::Div | BinOp::Rem)
                    && lhs.ty.as_scalar().is_some_and(|t| t.is_integer());
                let float_rem = *op == BinOp::Rem;
                !int_div && !float_rem && self.pure(lhs) && self.pure(rhs)
            }
            ExprKind::Cast { value, .. } => self.pure(value),
            ExprKind::Field { base, .. } => {
                !matches!(base.kind, ExprKind::Index { .. }) && self.pure(base)
            }
            ExprKind::Intrinsic { intrinsic, args } => match intrinsic {
                i if i.is_index() => true,
                Intrinsic::WarpSize | Intrinsic::LaneId => true,
                Intrinsic::Math(
                    MathFn::Abs
                    | MathFn::Min
                    | MathFn::Max
                    | MathFn::Copysign
                    | MathFn::Floor
                    | MathFn::Ceil
                    | MathFn::Trunc
                    | MathFn::MulAdd,
                ) => args.iter().all(|a| self.pure(a)),
                _ => false,
            },
            _ => false,
        }
    }
}

/// The scalar type of `t` (`i32` if it is not a scalar; the validator ensures it is).
pub(crate) fn scalar_ty(t: &Type) -> ScalarType {
    t.as_scalar().unwrap_or(ScalarType::I32)
}

/// How many lanes one `ld`/`st` moves of a vector of `lanes` `t`s at `addr`: all of them (2 or
/// 4) when the vector is at most 16 bytes, 2 for the 4-lane 64-bit vectors (two 16-byte
/// halves); `None` (lane by lane) for 3 lanes, `bool` lanes, or an address whose constant
/// offset is not a multiple of the chunk's size. PTX requires a vector access to be aligned to
/// its size: the layout aligns 2- and 4-lane vectors to their size, buffers start at least
/// 256-byte aligned, and shared and local arrays are declared with their element's alignment
/// (the dynamic shared array with 16), so every chunk is.
fn vector_chunk(addr: &Addr, t: ScalarType, lanes: u8) -> Option<usize> {
    if t == ScalarType::Bool || !matches!(lanes, 2 | 4) {
        return None;
    }
    let n = t.size_bytes() as u64;
    let k = (lanes as u64).min(16 / n);
    (k >= 2 && addr.offset.is_multiple_of(k * n)).then_some(k as usize)
}

/// The PTX vector operand `{a, b, c, d}`.
fn vector_operand(os: &[Opd]) -> String {
    let names: Vec<&str> = os.iter().map(|o| o.text.as_str()).collect();
    format!("{{{}}}", names.join(", "))
}

/// The `ld`/`st`/`.param` type suffix of scalar `t` (`bool` is a byte, `.u8`).
pub(crate) fn mem_type(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => ".u8",
        ScalarType::I32 => ".s32",
        ScalarType::U32 => ".u32",
        ScalarType::I64 => ".s64",
        ScalarType::U64 => ".u64",
        ScalarType::F16 | ScalarType::BF16 => ".b16",
        ScalarType::F32 => ".f32",
        ScalarType::F64 => ".f64",
    }
}

/// `index` (a `u32` element index) as the sum of its non-constant addends (in order) and its
/// constant ones, through nested `+`. `None` when it has no constant addend.
fn split_const_addend(index: &Expr) -> Option<(Vec<&Expr>, u64)> {
    fn go<'e>(e: &'e Expr, terms: &mut Vec<&'e Expr>, c: &mut u64) -> Option<()> {
        if let Some(v) = const_u32(e) {
            *c = c.checked_add(v)?;
            return Some(());
        }
        match &e.kind {
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } if e.ty == Type::Scalar(ScalarType::U32) => {
                go(lhs, terms, c)?;
                go(rhs, terms, c)
            }
            _ => {
                terms.push(e);
                Some(())
            }
        }
    }
    let (mut terms, mut c) = (Vec::new(), 0);
    go(index, &mut terms, &mut c)?;
    (c > 0).then_some((terms, c))
}

/// The value of `e` if it is a `u32` constant expression of literals and `+ *` that does not
/// wrap.
fn const_u32(e: &Expr) -> Option<u64> {
    match &e.kind {
        ExprKind::Const(Const::U32(v)) => Some(u64::from(*v)),
        ExprKind::Binary { op, lhs, rhs } if e.ty == Type::Scalar(ScalarType::U32) => {
            let (l, r) = (const_u32(lhs)?, const_u32(rhs)?);
            let v = match op {
                BinOp::Add => l.checked_add(r)?,
                BinOp::Mul => l.checked_mul(r)?,
                _ => return None,
            };
            (v <= u64::from(u32::MAX)).then_some(v)
        }
        _ => None,
    }
}
