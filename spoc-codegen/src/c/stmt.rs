//! Statements: declarations, assignments, control flow, `for` loops without overflow, `match`
//! as `switch` or `if` chains, barriers and fences.

use super::body::{cat, prec, Body, Code, R};
use super::ctx::field_ident;
use super::dialect::{Dialect, Storage};
use super::scan;
use spoc_ir::{
    BinOp, Block, Const, Expr, ExprKind, FenceScope, ForDir, ForLoop, Intrinsic, LValue, Pattern,
    ScalarType, Stmt, StmtKind, Type, VarId,
};
use std::collections::HashSet;

/// What an arm of a `match` does.
#[derive(Clone, Copy)]
enum Arm<'a> {
    /// A statement arm.
    Block(&'a Block),
    /// An expression arm whose value goes to `dst` (or is dropped).
    Expr(&'a Expr, Option<&'a str>),
}

impl Body<'_, '_> {
    /// Emits the statements of `b` at the current indentation.
    pub(crate) fn block(&mut self, b: &Block) -> R<()> {
        b.iter().try_for_each(|s| self.stmt(s))
    }

    /// Emits `b` one level deeper.
    fn nested(&mut self, b: &Block) -> R<()> {
        self.indent += 1;
        let r = self.block(b);
        self.indent -= 1;
        r
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        let outer = self.loc;
        if let Some(l) = s.loc {
            self.loc = (l.line, l.column);
        }
        let r = self.stmt_at(s);
        self.loc = outer;
        r
    }

    /// [`Body::stmt`] with `self.loc` set to the statement's location.
    fn stmt_at(&mut self, s: &Stmt) -> R<()> {
        match &s.kind {
            StmtKind::Let { var, init } => self.let_stmt(*var, init.as_ref()),
            StmtKind::Assign { target, value } => self.assign(target, value),
            StmtKind::Block(b) => {
                self.line("{");
                self.nested(b)?;
                self.line("}");
                Ok(())
            }
            StmtKind::If { cond, then, els } => {
                let c = self.expr(cond)?;
                self.line_of(&["if (", &c.text, ") {"]);
                self.if_rest(then, els.as_ref())
            }
            StmtKind::While { cond, body } => {
                let mark = self.lines.len();
                let c = self.expr(cond)?;
                if self.lines.len() == mark {
                    self.line(format!("while ({}) {{", c.text));
                    self.nested(body)?;
                } else {
                    // The condition needs statements: run them at the top of every iteration.
                    let captured = self.take_since(mark);
                    self.line("while (true) {");
                    self.put_nested(captured);
                    self.indent += 1;
                    self.line(format!("if (!{}) break;", c.at(prec::UNARY)));
                    self.block(body)?;
                    self.indent -= 1;
                }
                self.line("}");
                Ok(())
            }
            StmtKind::For(l) => self.for_stmt(l),
            StmtKind::Match { scrutinee, arms } => {
                let arms: Vec<(&Pattern, Arm)> =
                    arms.iter().map(|(p, b)| (p, Arm::Block(b))).collect();
                self.match_arms(scrutinee, &arms)
            }
            StmtKind::Break => {
                self.line("break;");
                Ok(())
            }
            StmtKind::Continue => {
                self.line("continue;");
                Ok(())
            }
            StmtKind::Return(None) => {
                self.line("return;");
                Ok(())
            }
            StmtKind::Return(Some(e)) => {
                let c = self.expr(e)?;
                self.line(format!("return {};", c.text));
                Ok(())
            }
            StmtKind::Barrier => {
                let b = match self.ctx.d {
                    Dialect::OpenCl => "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
                    _ => "__syncthreads();",
                };
                self.line(b);
                Ok(())
            }
            StmtKind::WarpBarrier => {
                let b = match self.ctx.d {
                    Dialect::Cuda => "__syncwarp();",
                    Dialect::Hip => "__builtin_amdgcn_wave_barrier();",
                    Dialect::OpenCl => {
                        if !self.ctx.caps.subgroups {
                            return Err(self.ctx.unsupported(
                                "warp barrier `sync_warp()`",
                                "subgroups (cl_khr_subgroups)",
                            ));
                        }
                        self.ctx.ext.subgroups = true;
                        "sub_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
                    }
                };
                self.line(b);
                Ok(())
            }
            StmtKind::MemFence(scope) => {
                let f = match (self.ctx.d, scope) {
                    (Dialect::OpenCl, FenceScope::Block) => {
                        "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
                    }
                    // OpenCL 1.2 has no device-scope fence; a global fence is the strongest.
                    (Dialect::OpenCl, FenceScope::Device) => "mem_fence(CLK_GLOBAL_MEM_FENCE);",
                    (_, FenceScope::Block) => "__threadfence_block();",
                    (_, FenceScope::Device) => "__threadfence();",
                };
                self.line(f);
                Ok(())
            }
            StmtKind::Expr(e) => self.assign_into(None, e),
            StmtKind::Pragma { hints, body } => {
                self.line(format!("/* hint: {} */", hints.join(", ")));
                self.line("{");
                self.nested(body)?;
                self.line("}");
                Ok(())
            }
        }
    }

    /// The rest of an `if` after `if (c) {`: the branch, and `else if` chains where the nested
    /// condition needs no statements.
    fn if_rest(&mut self, then: &Block, els: Option<&Block>) -> R<()> {
        self.nested(then)?;
        let Some(b) = els else {
            self.line("}");
            return Ok(());
        };
        if let [Stmt {
            kind:
                StmtKind::If {
                    cond,
                    then: t2,
                    els: e2,
                },
            ..
        }] = &b[..]
        {
            let mark = self.lines.len();
            let c2 = self.expr(cond)?;
            if self.lines.len() == mark {
                self.line(format!("}} else if ({}) {{", c2.text));
                return self.if_rest(t2, e2.as_ref());
            }
            let captured = self.take_since(mark);
            self.line("} else {");
            self.put_nested(captured);
            self.indent += 1;
            self.line(format!("if ({}) {{", c2.text));
            self.if_rest(t2, e2.as_ref())?;
            self.indent -= 1;
            self.line("}");
            return Ok(());
        }
        self.line("} else {");
        self.nested(b)?;
        self.line("}");
        Ok(())
    }

    fn let_stmt(&mut self, var: VarId, init: Option<&Expr>) -> R<()> {
        let ty = self.vars[var.0 as usize].ty.clone();
        let id = self.ident(var).to_string();
        let decl = self.ctx.decl(&ty, &id, Storage::Value);
        match init {
            None => self.line(format!("{decl};")),
            Some(e)
                if matches!(ty, Type::Array { .. }) || matches!(e.kind, ExprKind::Match { .. }) =>
            {
                self.line(format!("{decl};"));
                self.assign_into(Some(&id), e)?;
            }
            Some(e) => {
                let c = self.expr(e)?;
                self.line_of(&[&decl, " = ", &c.text, ";"]);
            }
        }
        Ok(())
    }

    /// Evaluates `e` into `dst` (or for its effects only when `dst` is `None`), with statements
    /// where C has no expression for it (`match`, `[v; n]`, arrays).
    pub(crate) fn assign_into(&mut self, dst: Option<&str>, e: &Expr) -> R<()> {
        let is_array = matches!(e.ty, Type::Array { .. });
        match &e.kind {
            ExprKind::Match { scrutinee, arms } => {
                let arms: Vec<(&Pattern, Arm)> =
                    arms.iter().map(|(p, a)| (p, Arm::Expr(a, dst))).collect();
                self.match_arms(scrutinee, &arms)
            }
            ExprKind::Select { cond, then, els } if is_array || dst.is_none() => {
                let c = self.expr(cond)?;
                self.line(format!("if ({}) {{", c.text));
                self.indent += 1;
                self.assign_into(dst, then)?;
                self.indent -= 1;
                self.line("} else {");
                self.indent += 1;
                self.assign_into(dst, els)?;
                self.indent -= 1;
                self.line("}");
                Ok(())
            }
            ExprKind::ArrayRepeat { value, len } => {
                let Some(dst) = dst else {
                    return self.assign_into(None, value);
                };
                self.repeat_into(dst, value, *len)
            }
            _ => {
                let c = self.expr(e)?;
                match dst {
                    None if self.effectful(e)
                        || scan::any_expr(e, &mut |x| matches!(x.kind, ExprKind::Call { .. })) =>
                    {
                        // A signed 64-bit atomic's result cast is not needed when it is dropped.
                        let text = match e.kind {
                            ExprKind::Intrinsic { .. } => {
                                c.text.strip_prefix("(long long)").unwrap_or(&c.text)
                            }
                            _ => &c.text,
                        };
                        self.line(format!("{text};"));
                    }
                    None => {}
                    Some(d) => self.store(d, &c, &e.ty),
                }
                Ok(())
            }
        }
    }

    /// `dst = [value; len]`: `value` is evaluated once.
    fn repeat_into(&mut self, dst: &str, value: &Expr, len: u32) -> R<()> {
        let u = self.ctx.d.scalar(ScalarType::U32, Storage::Value);
        if matches!(value.ty, Type::Array { .. }) {
            let first = format!("{dst}[0]");
            self.assign_into(Some(&first), value)?;
            if len > 1 {
                let k = self.fresh("k");
                self.line(format!("for ({u} {k} = 1u; {k} < {len}u; ++{k}) {{"));
                self.indent += 1;
                self.copy_array(&format!("{dst}[{k}]"), &first, &value.ty);
                self.indent -= 1;
                self.line("}");
                self.release(&k);
            }
            return Ok(());
        }
        let mut v = self.expr(value)?;
        let simple = matches!(value.kind, ExprKind::Const(_) | ExprKind::Var(_));
        if !simple {
            v = self.hoist(&value.ty, v)?;
        }
        let k = self.fresh("k");
        self.line(format!(
            "for ({u} {k} = 0u; {k} < {len}u; ++{k}) {dst}[{k}] = {};",
            v.text
        ));
        self.release(&k);
        Ok(())
    }

    /// A place as C text. With `hoist_indices`, non-constant indices are stored in temporaries
    /// first, so that the text can be used several times.
    fn place(&mut self, l: &LValue, hoist_indices: bool) -> R<String> {
        Ok(match l {
            LValue::Var(v) => self.ident(*v).to_string(),
            LValue::Index { base, index } => {
                // A named array's element, written at once (a variable's text has no effects
                // to order).
                let named = match **base {
                    LValue::Var(v) => Some(v),
                    _ => None,
                };
                let b = match named {
                    Some(_) => String::new(),
                    None => self.place(base, hoist_indices)?,
                };
                let mut i = self.expr(index)?;
                let constant = matches!(index.kind, ExprKind::Const(_));
                if hoist_indices && !constant {
                    i = self.hoist(&index.ty, i)?;
                }
                let b = named.map_or(b.as_str(), |v| self.ident(v));
                cat(&[b, "[", &i.text, "]"])
            }
            LValue::Field { base, field } => {
                format!(
                    "{}.{}",
                    self.place(base, hoist_indices)?,
                    field_ident(field)
                )
            }
        })
    }

    fn assign(&mut self, target: &LValue, value: &Expr) -> R<()> {
        if matches!(value.ty, Type::Array { .. }) {
            // The value first (Rust's order), then the place, then an element-wise copy.
            let src = match value.kind {
                ExprKind::Var(v) => self.ident(v).to_string(),
                _ => {
                    let tmp = self.fresh("tmp");
                    let d = self.ctx.decl(&value.ty, &tmp, Storage::Value);
                    self.line(format!("{d};"));
                    self.assign_into(Some(&tmp), value)?;
                    tmp
                }
            };
            if self.checked() {
                let (p, checks) = self.checked_place(target)?;
                self.under_checks(&checks, |b| b.copy_array(&p, &src, &value.ty));
                return Ok(());
            }
            let p = self.place(target, true)?;
            self.copy_array(&p, &src, &value.ty);
            return Ok(());
        }
        // Rust evaluates the value before the place: keep that order when it matters.
        let mut v = self.expr(value)?;
        if self.checked() && !matches!(target, LValue::Var(_)) {
            // The value is computed whatever the bounds tests of the place say.
            v = self.once(v, &value.ty)?;
            let (p, checks) = self.checked_place(target)?;
            self.under_checks(&checks, |b| b.line(format!("{p} = {};", v.text)));
            return Ok(());
        }
        if self.effectful(value) && place_reads_memory(target, &self.ctx.impure) {
            v = self.hoist(&value.ty, v)?;
        }
        let p = self.place(target, false)?;
        self.line_of(&[&p, " = ", &v.text, ";"]);
        Ok(())
    }

    /// True if `e`'s value cannot change while a loop runs (the loop's bounds are re-read by C
    /// at each iteration in the plain form).
    fn stable(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) => true,
            ExprKind::Var(v) => !self.assigned.contains(v),
            ExprKind::Len(a) => matches!(a.kind, ExprKind::Var(_)),
            ExprKind::Intrinsic { intrinsic, .. } => {
                intrinsic.is_index() || *intrinsic == Intrinsic::WarpSize
            }
            ExprKind::Unary { operand, .. } => self.stable(operand),
            ExprKind::Cast { value, .. } => self.stable(value),
            ExprKind::Binary { op, lhs, rhs } => {
                !matches!(op, BinOp::Div | BinOp::Rem) && self.stable(lhs) && self.stable(rhs)
            }
            _ => false,
        }
    }

    /// A counted loop. The plain C form is used when it cannot overflow and re-reading the
    /// bounds is harmless; otherwise the trip count is computed once in the unsigned type of
    /// the variable's width and the variable is derived from the iteration number.
    fn for_stmt(&mut self, l: &ForLoop) -> R<()> {
        let (var, dir) = (l.var, l.dir);
        let (start, end, step, body) = (&l.start, &l.end, &l.step, &l.body);
        let t = self.vars[var.0 as usize]
            .ty
            .as_scalar()
            .unwrap_or(ScalarType::I32);
        let d = self.ctx.d;
        let ty = d.scalar(t, Storage::Value);
        let ut = Dialect::unsigned_of(t);
        let u = d.scalar(ut, Storage::Value);
        let i = self.ident(var).to_string();
        let step_one = l.unit_step();
        let bounds_stable = self.stable(start) && self.stable(end);
        if step_one && bounds_stable && (dir == ForDir::Up || !t.is_signed()) {
            let s = self.expr(start)?;
            let e = self.expr(end)?;
            match dir {
                ForDir::Up => self.line(format!(
                    "for ({ty} {i} = {}; {i} < {}; ++{i}) {{",
                    s.text,
                    e.at(prec::SHIFT)
                )),
                // unsigned: `i-- > start` stops at `start`; the final wrap is harmless
                ForDir::Down => self.line(format!(
                    "for ({ty} {i} = {}; {i}-- > {};) {{",
                    e.text,
                    s.at(prec::SHIFT)
                )),
            }
            self.nested(body)?;
            self.line("}");
            return Ok(());
        }

        self.line("{");
        self.indent += 1;
        // start, end and step are evaluated once, in this order; constants and variables that
        // nothing assigns are used directly.
        let bound =
            |this: &mut Self, e: &Expr, name: &str, ty: &Type| -> R<(Code, Option<Const>)> {
                let c = this.expr(e)?;
                match e.kind {
                    ExprKind::Const(k) => return Ok((c, Some(k))),
                    ExprKind::Var(v) if !this.assigned.contains(&v) => return Ok((c, None)),
                    _ => {}
                }
                let n = this.fresh(&format!("{i}_{name}"));
                let decl = this.ctx.decl(ty, &n, Storage::Value);
                this.line(format!("{decl} = {};", c.text));
                Ok((Code::primary(n), None))
            };
        let (s, s_const) = bound(self, start, "start", &Type::Scalar(t))?;
        let (e, e_const) = bound(self, end, "end", &Type::Scalar(t))?;
        let (st, _) = bound(self, step, "step", &Type::U32)?;
        // A bound in the unsigned type of the variable's width.
        let to_u = |this: &Self, c: &Code, k: Option<Const>| -> String {
            match k {
                Some(Const::I32(v)) => this.constant(Const::U32(v as u32)).text,
                Some(Const::I64(v)) => this.constant(Const::U64(v as u64)).text,
                _ if t == ut => c.at(prec::UNARY).into_owned(),
                _ => format!("({u}){}", c.at(prec::UNARY)),
            }
        };
        let (su, eu) = (to_u(self, &s, s_const), to_u(self, &e, e_const));
        let step_u = if ut == ScalarType::U32 {
            st.at(prec::UNARY).into_owned()
        } else {
            format!("({u}){}", st.at(prec::UNARY))
        };
        let (zero, one) = if ut == ScalarType::U32 {
            ("0u", "1u")
        } else if d.is_opencl() {
            ("0ul", "1ul")
        } else {
            ("0ull", "1ull")
        };
        let count = self.fresh(&format!("{i}_count"));
        let (cmp_e, cmp_s) = (e.at(prec::SHIFT), s.at(prec::SHIFT));
        let step_nonzero = matches!(step.kind, ExprKind::Const(Const::U32(n)) if n != 0);
        if step_one {
            self.line(format!(
                "{u} {count} = {cmp_e} > {cmp_s} ? {eu} - {su} : {zero};"
            ));
        } else if step_nonzero {
            self.line(format!(
                "{u} {count} = {cmp_e} > {cmp_s} ? ({eu} - {su} - {one}) / {step_u} + {one} : {zero};"
            ));
        } else {
            // `step_by(0)`: the body runs once (a division by zero would be undefined); checked
            // mode records it.
            if self.checked() {
                let rec = self.fault_call(
                    crate::checked::FAULT_ZERO_STEP,
                    crate::checked::NO_ARRAY,
                    "0u",
                    "0u",
                );
                self.line(format!("if ({step_u} == 0) {rec};"));
            }
            self.line(format!(
                "{u} {count} = {cmp_e} > {cmp_s} ? ({step_u} == 0 ? {one} : ({eu} - {su} - {one}) / {step_u} + {one}) : {zero};"
            ));
        }
        let k = self.fresh(&format!("{i}_k"));
        self.line(format!("for ({u} {k} = {zero}; {k} < {count}; ++{k}) {{"));
        self.indent += 1;
        let scaled = if step_one {
            k.clone()
        } else {
            format!("{k} * {step_u}")
        };
        let value = match dir {
            ForDir::Up => format!("{su} + {scaled}"),
            ForDir::Down => format!("{eu} - {one} - {scaled}"),
        };
        if t == ut {
            self.line(format!("{ty} {i} = {value};"));
        } else {
            self.line(format!("{ty} {i} = ({ty})({value});"));
        }
        self.block(body)?;
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// A `match`: a `switch` when every pattern is a constant (or a variant case) and no arm
    /// breaks out of an enclosing loop (a `switch` would capture the `break`), else an `if`
    /// chain. The arms are tried in order; the scrutinee is evaluated once.
    fn match_arms(&mut self, scrutinee: &Expr, arms: &[(&Pattern, Arm)]) -> R<()> {
        let is_variant = matches!(scrutinee.ty, Type::Variant(_));
        let switchable = arms.iter().all(|(p, a)| {
            switch_pattern(p) && !matches!(a, Arm::Block(b) if scan::escaping_break(b))
        });
        let binds = arms
            .iter()
            .any(|(p, _)| matches!(p, Pattern::Case { bindings, .. } if !bindings.is_empty()));
        let c = self.expr(scrutinee)?;
        let needs_value = !switchable || (is_variant && binds);
        let s = if needs_value && !matches!(scrutinee.kind, ExprKind::Var(_)) {
            self.hoist(&scrutinee.ty, c)?
        } else {
            c
        };
        if switchable {
            let on = if is_variant {
                format!("{}.tag", s.at(prec::PRIMARY))
            } else {
                s.text.clone()
            };
            self.line(format!("switch ({on}) {{"));
            let mut seen: Vec<i128> = Vec::new();
            for (p, arm) in arms {
                let mut labels = Vec::new();
                let wildcard = self.case_labels(p, &mut seen, &mut labels);
                if labels.is_empty() && !wildcard {
                    continue; // unreachable: every value was matched by an earlier arm
                }
                self.indent += 1;
                for (i, l) in labels.iter().enumerate() {
                    let last = i + 1 == labels.len() && !wildcard;
                    self.line(format!("{l}:{}", if last { " {" } else { "" }));
                }
                if wildcard {
                    self.line("default: {");
                }
                self.indent += 1;
                self.arm_body(p, &s, *arm)?;
                self.line("break;");
                self.indent -= 1;
                self.line("}");
                self.indent -= 1;
                if wildcard {
                    break;
                }
            }
            self.line("}");
            return Ok(());
        }
        let mut first = true;
        for (p, arm) in arms {
            match self.pattern_test(p, &s, &scrutinee.ty) {
                None => {
                    // a catch-all arm: the rest is unreachable
                    self.line(if first { "{" } else { "} else {" });
                    self.indent += 1;
                    self.arm_body(p, &s, *arm)?;
                    self.indent -= 1;
                    self.line("}");
                    return Ok(());
                }
                Some(test) => {
                    if first {
                        self.line(format!("if ({test}) {{"));
                    } else {
                        self.line(format!("}} else if ({test}) {{"));
                    }
                    first = false;
                    self.indent += 1;
                    self.arm_body(p, &s, *arm)?;
                    self.indent -= 1;
                }
            }
        }
        if !first {
            self.line("}");
        }
        Ok(())
    }

    /// The `case` labels of pattern `p` not already in `seen`; true if it is a catch-all.
    fn case_labels(&self, p: &Pattern, seen: &mut Vec<i128>, out: &mut Vec<String>) -> bool {
        match p {
            Pattern::Wildcard => true,
            Pattern::Int(c) => {
                let v = const_value(*c);
                if !seen.contains(&v) {
                    seen.push(v);
                    out.push(format!("case {}", self.constant(*c).text));
                }
                false
            }
            Pattern::Case { variant, case, .. } => {
                let idx = self.ctx.case_index(variant, case);
                let v = idx as i128;
                if !seen.contains(&v) {
                    seen.push(v);
                    out.push(format!("case {idx}u /* {case} */"));
                }
                false
            }
            Pattern::Or(alts) => {
                let mut any = false;
                for a in alts {
                    any |= self.case_labels(a, seen, out);
                }
                any
            }
            Pattern::Range(..) => false,
        }
    }

    /// The C condition of pattern `p` on scrutinee `s`; `None` for a catch-all.
    fn pattern_test(&self, p: &Pattern, s: &Code, ty: &Type) -> Option<String> {
        let v = s.at(prec::SHIFT);
        match p {
            Pattern::Wildcard => None,
            Pattern::Int(c) => Some(format!("{v} == {}", self.constant(*c).at(prec::SHIFT))),
            Pattern::Range(lo, hi) => {
                let t = ty.as_scalar().unwrap_or(ScalarType::I32);
                let (min, max) = t.int_range().unwrap_or((0, u64::MAX.into()));
                let mut parts = Vec::new();
                if const_value(*lo) > min {
                    parts.push(format!("{v} >= {}", self.constant(*lo).at(prec::SHIFT)));
                }
                if const_value(*hi) < max {
                    parts.push(format!("{v} <= {}", self.constant(*hi).at(prec::SHIFT)));
                }
                if parts.is_empty() {
                    None
                } else {
                    Some(parts.join(" && "))
                }
            }
            Pattern::Case { variant, case, .. } => {
                let idx = self.ctx.case_index(variant, case);
                Some(format!("{}.tag == {idx}u", s.at(prec::PRIMARY)))
            }
            Pattern::Or(alts) => {
                let mut parts = Vec::new();
                for a in alts {
                    let t = self.pattern_test(a, s, ty)?;
                    parts.push(if t.contains("&&") {
                        format!("({t})")
                    } else {
                        t
                    });
                }
                Some(parts.join(" || "))
            }
        }
    }

    /// An arm: the pattern's bindings, then the statements or the value.
    fn arm_body(&mut self, p: &Pattern, s: &Code, arm: Arm) -> R<()> {
        if let Pattern::Case {
            variant,
            case,
            bindings,
        } = p
        {
            let payload: Vec<Type> = self
                .ctx
                .kernel
                .variant(variant)
                .and_then(|v| v.cases.iter().find(|c| &c.name == case))
                .map(|c| c.payload.clone())
                .unwrap_or_default();
            for (k, (b, t)) in bindings.iter().zip(&payload).enumerate() {
                let id = self.ident(*b).to_string();
                let decl = self.ctx.decl(t, &id, Storage::Value);
                self.line(format!(
                    "{decl} = {}.data.{}.p{k};",
                    s.at(prec::PRIMARY),
                    field_ident(case)
                ));
            }
        }
        match arm {
            Arm::Block(b) => self.block(b),
            Arm::Expr(e, dst) => self.assign_into(dst, e),
        }
    }
}

/// True if `p` can be a `switch` label set.
fn switch_pattern(p: &Pattern) -> bool {
    match p {
        Pattern::Wildcard | Pattern::Int(_) | Pattern::Case { .. } => true,
        Pattern::Or(alts) => alts.iter().all(switch_pattern),
        Pattern::Range(..) => false,
    }
}

fn const_value(c: Const) -> i128 {
    c.int_value().unwrap_or(0)
}

/// True if the place's indices read memory (so a value with side effects must be computed
/// before them).
fn place_reads_memory(l: &LValue, impure: &HashSet<String>) -> bool {
    match l {
        LValue::Var(_) => false,
        LValue::Index { base, index } => {
            place_reads_memory(base, impure) || scan::memory_dependent(index, impure)
        }
        LValue::Field { base, .. } => place_reads_memory(base, impure),
    }
}
