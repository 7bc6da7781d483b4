//! Checked mode ([`crate::checked`]) for the C dialects: bounds checks on every array access,
//! zero checks on every integer division, and the calls that record a fault.
//!
//! - A read `a[i]` of a scalar element is `(i < n ? a[i] : (spoc_record_fault(…), 0))`; of a
//!   record, vector or variant element, a temporary filled by an `if` (zeroed field by field on
//!   a fault); of an array element (a row of a local 2-D array), the row at a clamped index
//!   (`a[i < n ? i : (spoc_record_fault(…), 0u)]`, local arrays are never empty).
//! - A write `a[i] = v` evaluates `v`, then `if (i < n) a[i] = v; else spoc_record_fault(…);`
//!   (one test per index of the place, in order).
//! - An atomic is `(i < n ? atomic(&a[i], v) : (spoc_record_fault(…), 0))`.
//! - Integer `/` and `%` by a divisor that is not a nonzero constant call
//!   `spoc_<op>_<type>_chk(a, b, fault, line, column)`, which records a zero divisor.
//!
//! Indices and lengths that are not plain identifiers or literals are stored in temporaries
//! first, so that each is evaluated once.

use super::body::{prec, Body, Code, R};
use super::dialect::Storage;
use super::prelude;
use crate::checked::{array_id, FAULT_OUT_OF_BOUNDS, NO_ARRAY};
use spoc_ir::{Const, Expr, LValue, ScalarType, Type, VarId};

/// One bounds test of a place: the index, the length and the array's identifier.
pub(crate) struct Check {
    index: String,
    len: String,
    array: u32,
}

impl Body<'_, '_> {
    /// True in checked mode.
    pub(crate) fn checked(&self) -> bool {
        self.fault.is_some()
    }

    /// `c` itself if it is an identifier or a literal, else a temporary of type `ty` holding it.
    pub(crate) fn once(&mut self, c: Code, ty: &Type) -> R<Code> {
        let simple = c.prec == prec::PRIMARY
            && c.text
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.');
        if simple {
            Ok(c)
        } else {
            self.hoist(ty, c)
        }
    }

    /// The call recording fault `code` for `array` (a [`array_id`]) at `index` of `len`, at the
    /// current statement.
    pub(crate) fn fault_call(&mut self, code: u32, array: u32, index: &str, len: &str) -> String {
        let f = prelude::record_fault(self.ctx);
        let (line, col) = self.loc;
        let rec = self.fault.clone().unwrap_or_default();
        let func = self.func_index;
        format!("{f}({rec}, {code}u, {array}u, {index}, {len}, {line}u, {col}u, {func}u)")
    }

    /// The identifier of the array `e` reads from (its root variable), for the fault record.
    fn array_of(&self, e: &Expr) -> u32 {
        spoc_ir::visit::expr_root(e).map_or(NO_ARRAY, |v| self.array_var(v))
    }

    fn array_var(&self, v: VarId) -> u32 {
        array_id(self.func_index, v)
    }

    /// The zero of scalar type `s`.
    fn scalar_zero(&self, s: ScalarType) -> Code {
        self.constant(match s {
            ScalarType::Bool => Const::Bool(false),
            ScalarType::I32 => Const::I32(0),
            ScalarType::I64 => Const::I64(0),
            ScalarType::U32 => Const::U32(0),
            ScalarType::U64 => Const::U64(0),
            ScalarType::F16 => Const::F16(0),
            ScalarType::BF16 => Const::BF16(0),
            ScalarType::F32 => Const::F32(0),
            ScalarType::F64 => Const::F64(0),
        })
    }

    /// Statements storing the zero of `ty` into `dst`, leaf by leaf.
    fn zero_into(&mut self, dst: &str, ty: &Type) {
        match ty {
            // A validated kernel has no pending types.
            Type::Unit | Type::Pending(_) => {}
            Type::Scalar(s) => {
                let z = self.scalar_zero(*s);
                self.line(format!("{dst} = {};", z.text));
            }
            Type::Record(r) => {
                let fields: Vec<(String, Type)> = self
                    .ctx
                    .kernel
                    .record(r)
                    .map(|d| {
                        d.fields
                            .iter()
                            .map(|f| (super::ctx::field_ident(&f.name), f.ty.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                for (f, t) in fields {
                    self.zero_into(&format!("{dst}.{f}"), &t);
                }
            }
            Type::Vector { elem, lanes } => {
                for l in &["x", "y", "z", "w"][..*lanes as usize] {
                    self.zero_into(&format!("{dst}.{l}"), &Type::Scalar(*elem));
                }
            }
            Type::Variant(_) => self.line(format!("{dst}.tag = 0u;")),
            Type::Array { elem, len, .. } => {
                let n = len.unwrap_or(0);
                let k = self.fresh("k");
                let u = self.ctx.d.scalar(ScalarType::U32, Storage::Value);
                self.line(format!("for ({u} {k} = 0u; {k} < {n}u; ++{k}) {{"));
                self.indent += 1;
                self.zero_into(&format!("{dst}[{k}]"), elem);
                self.indent -= 1;
                self.line("}");
                self.release(&k);
            }
        }
    }

    /// A checked read of `array[index]` (`e`), whose operands are already emitted (`ops`).
    pub(crate) fn checked_read(&mut self, e: &Expr, array: &Expr, ops: &[Code]) -> R<Code> {
        let u = Type::U32;
        let i = self.once(ops[1].clone(), &u)?;
        let len = self.len_of(array)?;
        let len = self.once(len, &u)?;
        let arr = ops[0].at(prec::PRIMARY);
        let id = self.array_of(array);
        let rec = self.fault_call(FAULT_OUT_OF_BOUNDS, id, &i.text, &len.text);
        let (i, len) = (i.text, len.text);
        Ok(match &e.ty {
            Type::Array { .. } => Code::primary(format!("{arr}[{i} < {len} ? {i} : ({rec}, 0u)]")),
            Type::Scalar(s) => {
                let z = self.scalar_zero(*s);
                Code::new(
                    format!("{i} < {len} ? {arr}[{i}] : ({rec}, {})", z.text),
                    prec::COND,
                )
            }
            ty => {
                let tmp = self.fresh("tmp");
                let d = self.ctx.decl(ty, &tmp, Storage::Value);
                self.line(format!("{d};"));
                self.line(format!("if ({i} < {len}) {{"));
                self.line(format!("    {tmp} = {arr}[{i}];"));
                self.line("} else {");
                self.indent += 1;
                self.line(format!("{rec};"));
                self.zero_into(&tmp, ty);
                self.indent -= 1;
                self.line("}");
                Code::primary(tmp)
            }
        })
    }

    /// A checked atomic on `&arr[i]`: `call` is the atomic's text, `zero` its result type's zero.
    pub(crate) fn checked_atomic(
        &mut self,
        array: &Expr,
        i: &str,
        call: Code,
        zero: ScalarType,
    ) -> R<Code> {
        let len = self.len_of(array)?;
        let len = self.once(len, &Type::U32)?;
        let id = self.array_of(array);
        let rec = self.fault_call(FAULT_OUT_OF_BOUNDS, id, i, &len.text);
        let z = self.scalar_zero(zero);
        Ok(Code::new(
            format!(
                "{i} < {} ? {} : ({rec}, {})",
                len.text,
                call.at(prec::LOR),
                z.text
            ),
            prec::COND,
        ))
    }

    /// The type of the value place `l` denotes.
    fn lvalue_type(&self, l: &LValue) -> Type {
        match l {
            LValue::Var(v) => self.vars[v.0 as usize].ty.clone(),
            LValue::Index { base, .. } => match self.lvalue_type(base) {
                Type::Array { elem, .. } => std::sync::Arc::unwrap_or_clone(elem),
                t => t,
            },
            LValue::Field { base, field } => match self.lvalue_type(base) {
                Type::Record(r) => self
                    .ctx
                    .kernel
                    .record(&r)
                    .and_then(|d| d.fields.iter().find(|f| &f.name == field))
                    .map(|f| f.ty.clone())
                    .unwrap_or(Type::Unit),
                // A lane of a vector.
                Type::Vector { elem, .. } => Type::Scalar(elem),
                t => t,
            },
        }
    }

    /// The root variable of place `l`.
    fn lvalue_root(l: &LValue) -> VarId {
        match l {
            LValue::Var(v) => *v,
            LValue::Index { base, .. } | LValue::Field { base, .. } => Self::lvalue_root(base),
        }
    }

    /// Place `l` as C text with every index evaluated once (in temporaries where needed), and
    /// the bounds test of each index, outermost first.
    pub(crate) fn checked_place(&mut self, l: &LValue) -> R<(String, Vec<Check>)> {
        let mut checks = Vec::new();
        let p = self.checked_place_into(l, &mut checks)?;
        Ok((p, checks))
    }

    fn checked_place_into(&mut self, l: &LValue, checks: &mut Vec<Check>) -> R<String> {
        Ok(match l {
            LValue::Var(v) => self.ident(*v).to_string(),
            LValue::Index { base, index } => {
                let b = self.checked_place_into(base, checks)?;
                let i = self.expr(index)?;
                let i = self.once(i, &Type::U32)?;
                let len = match self.lvalue_type(base) {
                    Type::Array { len: Some(n), .. } => format!("{n}u"),
                    _ => match &**base {
                        LValue::Var(v) => match self.len_idents.get(v) {
                            Some(n) => n.clone(),
                            None => {
                                return Err(self.ctx.unsupported(
                                    "a bounds check of an array without a length".to_string(),
                                    "a length parameter for this array",
                                ))
                            }
                        },
                        _ => {
                            return Err(self.ctx.unsupported(
                                "a bounds check of an array of unknown length".to_string(),
                                "an array whose length is known",
                            ))
                        }
                    },
                };
                checks.push(Check {
                    index: i.text.clone(),
                    len,
                    array: self.array_var(Self::lvalue_root(base)),
                });
                format!("{b}[{}]", i.text)
            }
            LValue::Field { base, field } => {
                format!(
                    "{}.{}",
                    self.checked_place_into(base, checks)?,
                    super::ctx::field_ident(field)
                )
            }
        })
    }

    /// Emits `body` under the place's bounds tests: `if (tests) { body } else { record the
    /// first failing test }`.
    pub(crate) fn under_checks(&mut self, checks: &[Check], body: impl FnOnce(&mut Self)) {
        if checks.is_empty() {
            body(self);
            return;
        }
        let cond: Vec<String> = checks
            .iter()
            .map(|c| format!("{} < {}", c.index, c.len))
            .collect();
        self.line(format!("if ({}) {{", cond.join(" && ")));
        self.indent += 1;
        body(self);
        self.indent -= 1;
        self.line("} else {");
        self.indent += 1;
        let n = checks.len();
        for (k, c) in checks.iter().enumerate() {
            let rec = self.fault_call(FAULT_OUT_OF_BOUNDS, c.array, &c.index, &c.len);
            if n == 1 {
                self.line(format!("{rec};"));
                continue;
            }
            let test = format!("!({} < {})", c.index, c.len);
            if k == 0 {
                self.line(format!("if ({test}) {{"));
            } else if k + 1 < n {
                self.line(format!("}} else if ({test}) {{"));
            } else {
                self.line("} else {");
            }
            self.line(format!("    {rec};"));
        }
        if n > 1 {
            self.line("}");
        }
        self.indent -= 1;
        self.line("}");
    }
}
