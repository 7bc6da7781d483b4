//! The end of lowering: defaulting of literal types, the checks that needed final types, and the
//! substitution of every placeholder type and pending literal in the IR.

use crate::errors::Errors;
use crate::lower::{CallCheck, Deferred, LoweredFn, Lowerer, PendingLit};
use crate::types::{Kind, Scalar, Ty};
use spoc_ir::visit::{walk_block_mut, walk_expr_mut, walk_stmt_mut, VisitMut};
use spoc_ir::{Block, Const, Expr, ExprKind, FieldPath, Param, PendingType, Stmt, Type, VarDecl};
use std::collections::{HashMap, HashSet};

impl Lowerer {
    /// Finishes inference and builds the lowered function.
    ///
    /// # Errors
    /// Every error found while lowering, or, if there was none, while resolving types.
    pub fn finish(mut self, mut params: Vec<Param>, mut body: Block) -> Result<LoweredFn, Errors> {
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        self.solve_fields();
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        self.settle_helper_literals();
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        let paths = self.field_paths();
        let generic = self.generic_fields(&paths);
        let field_vars: HashSet<u32> = self
            .field_uses
            .iter()
            .filter_map(|u| match self.tys.resolve(u.ty) {
                Ty::Var(v) => Some(v),
                _ => None,
            })
            .collect();
        self.check_generic_uses(&generic);
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        for (origin, kind) in self.tys.apply_defaults(&|v| field_vars.contains(&v)) {
            let msg = if kind == Kind::Record {
                "cannot infer the record type of this value (a record's field types are not visible to the kernel macro); annotate it: `let v: Particle = …;`"
            } else {
                "cannot infer the type of this call's result; annotate the type: `let r: f32 = foo(..);`"
            };
            self.errs.at(origin, msg);
        }
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        self.run_deferred();
        self.split_helper_instances(&mut body);
        let mut errs = std::mem::take(&mut self.errs);
        {
            let mut z = Resolver {
                l: &self,
                errs: &mut errs,
                generic: &generic,
            };
            z.visit_block_mut(&mut body);
            for p in &mut params {
                z.ty(&mut p.ty);
            }
        }
        let vars: Vec<VarDecl> = self
            .vars
            .iter()
            .map(|v| VarDecl {
                name: v.name.clone(),
                ty: self.final_ir(v.ty, &generic),
                mutable: v.mutable,
                kind: v.kind,
            })
            .collect();
        if errs.is_empty() {
            crate::lower_range::mark_unrolled(&mut body, &self.unroll_loops, &mut errs);
            // `f16`/`bf16` arithmetic becomes `f32` arithmetic between conversions.
            spoc_ir::half::widen_block(&mut body);
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let calls = self.call_checks();
        let field_checks = self.field_checks(&paths);
        Ok(LoweredFn {
            params,
            vars,
            body,
            ret: self.final_ir(self.ret, &generic),
            shared: self.shared,
            helpers: self.helpers,
            calls,
            param_tys: Vec::new(),
            ret_ty: Ty::Unit,
            records: std::mem::take(&mut self.tys.records),
            field_checks,
            record_lits: self.record_lits,
        })
    }

    /// The final IR type of `t`: generic field types become [`PendingType::Field`] placeholders.
    fn final_ir(&self, t: Ty, generic: &HashMap<u32, String>) -> Type {
        match self.tys.resolve(t) {
            Ty::Var(v) => generic
                .get(&v)
                .and_then(|p| FieldPath::parse(p))
                .map_or(Type::Unit, |p| {
                    Type::Pending(PendingType::Field(Box::new(p)))
                }),
            Ty::Array {
                elem, space, len, ..
            } => Type::Array {
                elem: std::sync::Arc::new(self.final_ir(Ty::Var(elem), generic)),
                space: space.ir(),
                len,
            },
            t => self.tys.ir_type(t).unwrap_or(Type::Unit),
        }
    }

    /// Helper calls and `match` need types the kernel knows: a generic field type (one only the
    /// record's declaration fixes) passed to or returned by a helper, or matched on, is an error
    /// asking for an annotation.
    fn check_generic_uses(&mut self, generic: &HashMap<u32, String>) {
        let generic_of = |l: &Lowerer, t: Ty| match l.tys.resolve(t) {
            Ty::Var(v) => generic.get(&v).cloned(),
            _ => None,
        };
        let mut reports = Vec::new();
        for c in &self.helper_calls {
            let name = self
                .helpers
                .get(c.helper)
                .map_or("foo", |h| h.name.as_str());
            for a in &c.args {
                if let Some(p) = generic_of(self, a.ty) {
                    reports.push((a.span, format!("cannot infer the type of this argument: it has the type of field `{p}`, and neither a record's field types nor a #[device] function's parameter types are visible to the kernel macro; bind it to a variable annotated with the type `{p}` is declared with first (`let v: T = …;`, `T` being that type)")));
                }
            }
            if let Some(p) = generic_of(self, c.ret) {
                // The field's type is unknown here: name it, never guess one (a guessed `f32`
                // misled for a `u32` field).
                reports.push((c.span, format!("cannot infer the type of this call's result: it is used as field `{p}`, whose type the kernel macro cannot see; bind the result to a variable annotated with the type `{p}` is declared with first (`let r: T = {name}(..);`, `T` being that type)")));
            }
        }
        for d in &self.deferred {
            if let Deferred::Match(m) = d {
                if let Some(p) = generic_of(self, m.ty) {
                    reports.push((m.span, format!("cannot infer the type matched on: it is field `{p}`, whose type the kernel macro cannot see; annotate it first: `let v: u32 = …;`")));
                }
            }
        }
        for (span, msg) in reports {
            self.errs.at(span, msg);
        }
    }

    /// An integer or float literal (or untyped variable) passed to a helper, untyped by anything
    /// else, takes the one type of its class (float or integer) among the call's other arguments
    /// and its result: `smoothstep(0.0, 1.0, x)` with `x: f32` passes `f32`s. A helper's
    /// signature is not visible here, so this is a guess, and it is checked: every call is
    /// verified against the helper's real parameter types at compile time (`checks.rs`), and a
    /// wrong guess is an error at the argument asking for a suffix or an annotation. With no
    /// single candidate, it is an error here.
    fn settle_helper_literals(&mut self) {
        let mut calls = std::mem::take(&mut self.helper_calls);
        // Which arguments are untyped before any guess (a variable passed twice is guessed once,
        // but both of its uses get the "guessed" hint).
        for call in &mut calls {
            for a in &mut call.args {
                a.guessed = matches!(self.tys.resolve(a.ty), Ty::Var(_));
            }
        }
        for call in &calls {
            for (i, arg) in call.args.iter().enumerate() {
                let (ty, span) = (arg.ty, arg.span);
                let Ty::Var(v) = self.tys.resolve(ty) else {
                    continue;
                };
                let kind = self.tys.kind_of(v);
                let fits = |s: Scalar| match kind {
                    Kind::Float => s.is_float(),
                    Kind::Int => s.is_int(),
                    _ => false,
                };
                let others = call
                    .args
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, a)| a.ty);
                let mut candidates: Vec<Scalar> = Vec::new();
                for t in others.chain(std::iter::once(call.ret)) {
                    if let Ty::Scalar(s) = self.tys.resolve(t) {
                        if fits(s) && !candidates.contains(&s) {
                            candidates.push(s);
                        }
                    }
                }
                match candidates.as_slice() {
                    [s] => {
                        let _ = self.tys.unify(ty, Ty::Scalar(*s));
                    }
                    _ if !matches!(arg.hint, crate::lower::ArgHint::Literal(_))
                        && !matches!(kind, Kind::Float | Kind::Int) =>
                    {
                        self.errs.at(
                            span,
                            "cannot infer the type of this argument: a #[device] function's parameter types are not visible to its callers (nor a record's field types to the kernel macro); bind it to an annotated variable first (`let v: f32 = …;`)",
                        );
                    }
                    _ => {
                        let example = if kind == Kind::Float {
                            "`1.0f32`"
                        } else {
                            "`2usize`, `1i32`"
                        };
                        self.errs.at(
                            span,
                            format!("cannot infer the type of this argument: a #[device] function's parameter types are not visible to its callers; give the literal a suffix ({example}) or annotate a variable"),
                        );
                    }
                }
            }
        }
        self.helper_calls = calls;
    }

    /// One [`crate::lower::HelperUse`] per helper and instance: a generic `#[device]` helper
    /// called at two types (`twice(x_f32)`, `twice(n_i32)`) calls two of its instances, but the
    /// generated code reaches one instance per helper entry (`paths::resolver` picks it from the
    /// entry's first call). So the calls of one helper whose final argument and result types
    /// differ from its first call's get an entry of their own, with the same path and a name no
    /// Rust identifier has (`twice#2`), and their IR calls are renamed to it; `rename_table`
    /// maps it to that instance's own name (`twice_i32`) before linking. A call is found in the
    /// body by its result's type, the fresh variable `lower_call.rs` made for it.
    fn split_helper_instances(&mut self, body: &mut Block) {
        /// The tags and record names of a call's argument and result types.
        type Key = (Vec<u8>, Vec<String>);
        let key = |l: &Lowerer, c: &crate::lower::HelperCall| -> Key {
            let tys: Vec<Ty> = c
                .args
                .iter()
                .map(|a| a.ty)
                .chain(std::iter::once(c.ret))
                .map(|t| l.tys.resolve(t))
                .collect();
            let tags: Vec<u8> = tys.iter().map(|t| crate::checks::tag(*t)).collect();
            let recs: Vec<String> = tys
                .iter()
                .map(|t| crate::checks::record_name(*t, &l.tys.records))
                .collect();
            (tags, recs)
        };
        // (original helper, key) -> entry
        let mut entries: Vec<(usize, Key, usize)> = Vec::new();
        // the result variable of each moved call -> the entry's name
        let mut moved: HashMap<u32, String> = HashMap::new();
        let mut unfound: Vec<crate::errors::Loc> = Vec::new();
        let mut calls = std::mem::take(&mut self.helper_calls);
        for c in &mut calls {
            let k = key(self, c);
            let orig = c.helper;
            let entry = if let Some(e) = entries.iter().find(|e| e.0 == orig && e.1 == k) {
                e.2
            } else if !entries.iter().any(|e| e.0 == orig) {
                entries.push((orig, k, orig));
                orig
            } else {
                let Some(h) = self.helpers.get(orig).cloned() else {
                    continue;
                };
                let n = 1 + entries.iter().filter(|e| e.0 == orig).count();
                self.helpers.push(crate::lower::HelperUse {
                    name: format!("{}#{n}", h.name),
                    path: h.path,
                    span: c.span,
                });
                let e = self.helpers.len() - 1;
                entries.push((orig, k, e));
                e
            };
            if entry != orig {
                let name = self.helpers[entry].name.clone();
                match c.ret {
                    Ty::Var(v) => {
                        moved.insert(v, name);
                    }
                    _ => unfound.push(c.span),
                }
                c.helper = entry;
            }
        }
        self.helper_calls = calls;
        if moved.is_empty() && unfound.is_empty() {
            return;
        }
        let mut found: HashSet<u32> = HashSet::new();
        spoc_ir::visit::for_each_expr_mut(body, &mut |e| {
            if let (ExprKind::Call { func, .. }, Type::Pending(PendingType::Var(v))) =
                (&mut e.kind, &e.ty)
            {
                if let Some(name) = moved.get(v) {
                    *func = name.clone();
                    found.insert(*v);
                }
            }
        });
        for c in &self.helper_calls {
            if let Ty::Var(v) = c.ret {
                if moved.contains_key(&v) && !found.contains(&v) {
                    unfound.push(c.span);
                }
            }
        }
        for span in unfound {
            // Not expected: every call's IR carries its result variable until substitution.
            self.errs.at(
                span,
                "this call of a generic #[device] function uses another instance than the function's first call of it, and the kernel macro lost track of it; call the helper at one type per function (bind the other calls' arguments with `as`), and report this",
            );
        }
    }

    /// The pairs of arguments of call `c` that name one buffer: for each later argument, the
    /// first one before it naming its buffer.
    fn same_buffers(&self, c: &crate::lower::HelperCall) -> Vec<crate::lower::SameBuffer> {
        let mut out = Vec::new();
        for (j, b) in c.args.iter().enumerate() {
            let Some(v) = b.buffer else { continue };
            if let Some(i) = c.args[..j].iter().position(|a| a.buffer == Some(v)) {
                let name = self
                    .vars
                    .get(v.0 as usize)
                    .map_or_else(String::new, |d| d.name.clone());
                out.push(crate::lower::SameBuffer {
                    first: i,
                    second: j,
                    name,
                });
            }
        }
        out
    }

    /// The helper calls with their final types (after defaults).
    fn call_checks(&self) -> Vec<CallCheck> {
        let fin = |t: Ty| self.tys.resolve(t);
        self.helper_calls
            .iter()
            .map(|c| CallCheck {
                helper: c.helper,
                span: c.span,
                args: c
                    .args
                    .iter()
                    .map(|a| (fin(a.ty), a.span, a.hint.clone(), a.guessed))
                    .collect(),
                ret: fin(c.ret),
                same_buffers: self.same_buffers(c),
            })
            .collect()
    }

    fn run_deferred(&mut self) {
        let deferred = std::mem::take(&mut self.deferred);
        for d in deferred {
            match d {
                Deferred::Signed { ty, span, what } => {
                    if let Ty::Scalar(s) = self.tys.resolve(ty) {
                        if s.is_unsigned() {
                            self.errs
                                .at(span, format!("cannot apply {what} to type `{}`", s.name()));
                        }
                    }
                }
                Deferred::Match(m) => self.check_match(&m),
                Deferred::NotHalf { ty, span, advice } => {
                    if let Ty::Scalar(s) = self.tys.resolve(ty) {
                        if s.is_half() {
                            let advice = advice.replace("{T}", s.name());
                            self.errs.at(span, advice);
                        }
                    }
                }
                Deferred::Cast { from, to, span } => {
                    let Ty::Scalar(from) = self.tys.resolve(from) else {
                        continue;
                    };
                    if from.is_half() {
                        self.errs.at(
                            span,
                            format!("`as` cannot convert {} (Rust's `as` is for primitive types): write `x.to_f32()`", from.a_name()),
                        );
                    } else if to == Scalar::Bool && from != Scalar::Bool {
                        self.errs.at(
                            span,
                            format!(
                                "cannot cast `{}` as `bool`; compare instead: `x != 0`",
                                from.name()
                            ),
                        );
                    } else if from == Scalar::Bool && to.is_float() {
                        self.errs.at(
                            span,
                            format!("casting `bool` as `{}` is invalid; cast to an integer first (`b as u32 as {0}`) or write `if b {{ 1.0 }} else {{ 0.0 }}`", to.name()),
                        );
                    }
                }
            }
        }
    }
}

/// Replaces placeholders with final types and pending literals with constants.
struct Resolver<'a> {
    l: &'a Lowerer,
    errs: &'a mut Errors,
    /// Generic field types: root variable -> field path text.
    generic: &'a HashMap<u32, String>,
}

impl Resolver<'_> {
    fn ty(&mut self, t: &mut Type) {
        match t {
            Type::Pending(PendingType::Var(v)) => {
                *t = self.l.final_ir(Ty::Var(*v), self.generic);
            }
            Type::Array { elem, .. } => self.ty(std::sync::Arc::make_mut(elem)),
            _ => {}
        }
    }

    fn expr_inner(&mut self, e: &mut Expr) {
        if let Type::Pending(PendingType::Literal(i)) = e.ty {
            let i = i as usize;
            if let Some(g) = self.generic_literal(i) {
                *e = g;
            } else if let Some(c) = self.literal(i) {
                *e = Expr::constant(c);
            }
            return;
        }
        self.ty(&mut e.ty);
        walk_expr_mut(self, e);
        if let ExprKind::Cast { value, to } = &mut e.kind {
            // `usize` and `u32` are one IR type: a cast between them is no cast.
            if value.ty == Type::Scalar(*to) {
                let inner = std::mem::replace(&mut **value, Expr::constant(Const::Bool(false)));
                *e = inner;
            }
        }
    }
}

impl VisitMut for Resolver<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        crate::nesting::deep(|| walk_block_mut(self, b))
    }

    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        crate::nesting::deep(|| walk_stmt_mut(self, s))
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        crate::nesting::deep(|| self.expr_inner(e))
    }

    fn visit_pattern_mut(&mut self, p: &mut spoc_ir::Pattern) {
        crate::lower_match::resolve_pattern(self.l, p);
    }
}

impl Resolver<'_> {
    /// Pending literal `i` when its type is a generic field type: a constant whose type is the
    /// [`PendingType::FieldLiteral`] placeholder, made at load time (`spoc_ir::resolve`).
    fn generic_literal(&self, i: usize) -> Option<Expr> {
        let lit: &PendingLit = self.l.lits.get(i)?;
        let Ty::Var(v) = self.l.tys.resolve(lit.ty) else {
            return None;
        };
        let field = FieldPath::parse(self.generic.get(&v)?)?;
        let sign = if lit.negated { "-" } else { "" };
        Some(Expr {
            kind: ExprKind::Const(Const::U64(0)),
            ty: Type::Pending(PendingType::FieldLiteral {
                digits: format!("{sign}{}", lit.digits).into(),
                field: Box::new(field),
            }),
        })
    }

    /// The constant of pending literal `i`, or `None` after reporting why it does not fit.
    fn literal(&mut self, i: usize) -> Option<Const> {
        let lit: &PendingLit = self.l.lits.get(i)?;
        let Ty::Scalar(s) = self.l.tys.resolve(lit.ty) else {
            self.errs
                .at(lit.span, "cannot infer the type of this literal");
            return None;
        };
        match literal_const(&lit.digits, lit.negated, s) {
            Ok(c) => Some(c),
            Err(msg) => {
                self.errs.at(lit.span, msg);
                None
            }
        }
    }
}

/// The constant of type `s` that literal `digits` (negated if `negated`) denotes.
pub fn literal_const(digits: &str, negated: bool, s: Scalar) -> Result<Const, String> {
    let out_of_range = || {
        let note = if s == Scalar::Usize {
            " (`usize` is 32-bit in kernels)"
        } else {
            ""
        };
        format!("literal out of range for `{}`{note}", s.name())
    };
    if s.is_float() {
        let c = if s == Scalar::F32 {
            let v: f32 = digits.parse().map_err(|_| out_of_range())?;
            let v = if negated { -v } else { v };
            v.is_finite().then(|| Const::f32(v))
        } else {
            let v: f64 = digits.parse().map_err(|_| out_of_range())?;
            let v = if negated { -v } else { v };
            v.is_finite().then(|| Const::f64(v))
        };
        return c.ok_or_else(out_of_range);
    }
    if negated && s.is_unsigned() {
        return Err(format!(
            "cannot apply unary operator `-` to type `{}`",
            s.name()
        ));
    }
    let v: u128 = digits.parse().map_err(|_| out_of_range())?;
    let signed = |max: u128| -> Result<i128, String> {
        let limit = if negated { max + 1 } else { max };
        if v > limit {
            Err(out_of_range())
        } else if negated {
            Ok(-(v as i128))
        } else {
            Ok(v as i128)
        }
    };
    let unsigned = |max: u128| if v > max { Err(out_of_range()) } else { Ok(v) };
    Ok(match s {
        Scalar::I32 => Const::I32(signed(i32::MAX as u128)? as i32),
        Scalar::I64 => Const::I64(signed(i64::MAX as u128)? as i64),
        Scalar::U32 | Scalar::Usize => Const::U32(unsigned(u32::MAX as u128)? as u32),
        Scalar::U64 => Const::U64(unsigned(u64::MAX as u128)? as u64),
        Scalar::Bool | Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 => {
            return Err(out_of_range())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_ranges() {
        assert_eq!(
            literal_const("2147483648", true, Scalar::I32),
            Ok(Const::I32(i32::MIN))
        );
        assert!(literal_const("2147483648", false, Scalar::I32).is_err());
        assert!(literal_const("4294967296", false, Scalar::Usize)
            .unwrap_err()
            .contains("32-bit"));
        assert_eq!(
            literal_const("4294967295", false, Scalar::U32),
            Ok(Const::U32(u32::MAX))
        );
        assert!(literal_const("1", true, Scalar::U32).is_err());
        assert_eq!(
            literal_const("0.1", false, Scalar::F32),
            Ok(Const::f32(0.1f32))
        );
        assert_eq!(
            literal_const("1e3", true, Scalar::F64),
            Ok(Const::f64(-1000.0))
        );
        assert!(literal_const("1e39", false, Scalar::F32).is_err());
    }
}
