//! Function bodies: scopes, statements, places, patterns and return paths.

use super::count;
use super::decls::{kind_word, rust_buffer};
use crate::print::Printer;
use crate::{
    Block, Const, Expr, ExprKind, Function, Kernel, LValue, MemSpace, Param, Pattern, SrcLoc, Stmt,
    StmtKind, Type, VarDecl, VarId, VarKind,
};

/// Longest printed node shown in a message; longer ones are cut with `…`.
const MAX_SHOWN: usize = 80;

/// The checker of one body (the kernel's or a helper's).
pub(super) struct Body<'k> {
    pub(super) kernel: &'k Kernel,
    /// `None` for the kernel body.
    pub(super) func: Option<&'k Function>,
    pub(super) vars: &'k [VarDecl],
    pub(super) params: &'k [Param],
    printer: Printer<'k>,
    /// The location of the statement being checked (inherited from the enclosing statement when a
    /// statement has none).
    loc: Option<SrcLoc>,
    /// How many loops enclose the statement being checked.
    loops: u32,
    in_scope: Vec<bool>,
    declared: Vec<bool>,
    /// Locals declared by a `let` without initializer: assignable once even if not `mut`.
    deferred: Vec<bool>,
    /// `for` loop variables: never assignable.
    loop_var: Vec<bool>,
    /// The locals declared in each open scope, innermost last.
    scopes: Vec<Vec<usize>>,
}

pub(super) type Check<T = ()> = Result<T, String>;

pub(super) fn check_kernel_body(kernel: &Kernel) -> Check {
    let mut b = Body::new(kernel, None, &kernel.vars, &kernel.params);
    for s in &kernel.shared {
        b.in_scope[s.var.0 as usize] = true;
    }
    b.block(&kernel.body)
}

pub(super) fn check_function_body(kernel: &Kernel, f: &Function) -> Check {
    let mut b = Body::new(kernel, Some(f), &f.vars, &f.params);
    b.block(&f.body)?;
    if f.ret != Type::Unit && !always_leaves(kernel, &f.body) {
        return Err(format!(
            "`{}` returns `{}`, but the end of its body can be reached without a `return`",
            f.name, f.ret
        ));
    }
    Ok(())
}

impl<'k> Body<'k> {
    fn new(
        kernel: &'k Kernel,
        func: Option<&'k Function>,
        vars: &'k [VarDecl],
        params: &'k [Param],
    ) -> Body<'k> {
        let n = vars.len();
        let mut in_scope = vec![false; n];
        for p in params {
            in_scope[p.var.0 as usize] = true;
        }
        Body {
            kernel,
            func,
            vars,
            params,
            printer: Printer::plain(vars, &kernel.records),
            loc: None,
            loops: 0,
            in_scope,
            declared: vec![false; n],
            deferred: vec![false; n],
            loop_var: vec![false; n],
            scopes: Vec::new(),
        }
    }

    /// An error message about the current statement (prefixed with its line when known).
    pub(super) fn fail(&self, msg: impl AsRef<str>) -> String {
        match self.loc {
            Some(l) => format!("line {}: {}", l.line, msg.as_ref()),
            None => msg.as_ref().to_owned(),
        }
    }

    fn cut(mut s: String) -> String {
        if s.chars().count() > MAX_SHOWN {
            let end = s
                .char_indices()
                .nth(MAX_SHOWN - 1)
                .map_or(s.len(), |(i, _)| i);
            s.truncate(end);
            s.push('…');
        }
        s
    }

    /// `e` as printed text, cut to a readable length.
    pub(super) fn show(&self, e: &Expr) -> String {
        let mut s = String::new();
        self.printer.expr(&mut s, e);
        Self::cut(s)
    }

    pub(super) fn show_place(&self, l: &LValue) -> String {
        let mut s = String::new();
        self.printer.lvalue(&mut s, l);
        Self::cut(s)
    }

    pub(super) fn show_pattern(&self, p: &Pattern) -> String {
        let mut s = String::new();
        self.printer.pattern(&mut s, p);
        Self::cut(s)
    }

    /// `in kernel`/`in helper `f``: the owner, for messages that need it.
    pub(super) fn owner(&self) -> String {
        match self.func {
            Some(f) => format!("helper `{}`", f.name),
            None => "the kernel".into(),
        }
    }

    /// The declaration of `v`, checking that it is in range.
    pub(super) fn decl(&self, v: VarId) -> Check<&'k VarDecl> {
        self.vars.get(v.0 as usize).ok_or_else(|| {
            self.fail(format!(
                "variable #{} does not exist ({} has {} variables)",
                v.0,
                self.owner(),
                self.vars.len()
            ))
        })
    }

    /// Checks that `v` exists and is in scope here, and returns its declaration.
    pub(super) fn use_var(&self, v: VarId) -> Check<&'k VarDecl> {
        let d = self.decl(v)?;
        if !self.in_scope[v.0 as usize] {
            let why = match d.kind {
                VarKind::Param => "it is not in the parameter list",
                VarKind::Shared => "it has no shared array declaration",
                VarKind::Local if self.declared[v.0 as usize] => {
                    "it is used outside the block of its `let`"
                }
                VarKind::Local => "no enclosing `let`, `for` or match arm declares it here",
            };
            return Err(self.fail(format!(
                "`{}` (#{}, a {} variable) is used where it is not in scope: {why}",
                d.name,
                v.0,
                kind_word(d.kind)
            )));
        }
        Ok(d)
    }

    /// The parameter whose variable is `v`, if any.
    pub(super) fn param_of(&self, v: VarId) -> Option<&'k Param> {
        self.params.iter().find(|p| p.var == v)
    }

    /// Declares local `v` in the innermost scope; `what` says by what (`let`, `for`, …).
    fn declare(&mut self, v: VarId, what: &str) -> Check<&'k VarDecl> {
        let d = self.decl(v)?;
        if d.kind != VarKind::Local {
            return Err(self.fail(format!(
                "{what} declares `{}` (#{}), which is a {} variable, not a local",
                d.name,
                v.0,
                kind_word(d.kind)
            )));
        }
        let i = v.0 as usize;
        if self.declared[i] {
            return Err(self.fail(format!(
                "{what} declares `{}` (#{}) a second time; each `let`, `for` and match binding \
                 declares a fresh variable",
                d.name, v.0
            )));
        }
        self.declared[i] = true;
        self.in_scope[i] = true;
        if let Some(s) = self.scopes.last_mut() {
            s.push(i);
        }
        Ok(d)
    }

    pub(super) fn open(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// Checks a `match` arm in a scope of its own: pattern `p` on a `ty` scrutinee (its
    /// bindings declared), then `body`.
    pub(super) fn arm(
        &mut self,
        p: &Pattern,
        ty: &Type,
        body: impl FnOnce(&mut Self) -> Check,
    ) -> Check {
        self.open();
        let r = self.pattern(p, ty, true).and_then(|_| body(self));
        self.close();
        r
    }

    pub(super) fn close(&mut self) {
        for i in self.scopes.pop().unwrap_or_default() {
            self.in_scope[i] = false;
        }
    }

    /// Checks `b` in a scope of its own.
    pub(super) fn block(&mut self, b: &Block) -> Check {
        self.open();
        let r = b.iter().try_for_each(|s| self.stmt(s));
        self.close();
        r
    }

    /// Checks that `e` has type `want`; `what` describes `e`'s role.
    pub(super) fn expect(&self, e: &Expr, want: &Type, what: &str) -> Check {
        if e.ty != *want {
            return Err(self.fail(format!(
                "{what} is `{}`, of type `{}`, but `{want}` is needed",
                self.show(e),
                e.ty
            )));
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Check {
        let outer = self.loc;
        if s.loc.is_some() {
            self.loc = s.loc;
        }
        let r = self.stmt_kind(&s.kind);
        self.loc = outer;
        r
    }

    fn stmt_kind(&mut self, s: &StmtKind) -> Check {
        match s {
            StmtKind::Let { var, init } => {
                if let Some(e) = init {
                    self.expr(e)?;
                }
                let d = self.declare(*var, "a `let`")?;
                if let Some(e) = init {
                    if e.ty != d.ty {
                        return Err(self.fail(format!(
                            "`let {}: {}` is initialised with `{}`, of type `{}`",
                            d.name,
                            d.ty,
                            self.show(e),
                            e.ty
                        )));
                    }
                } else {
                    self.deferred[var.0 as usize] = true;
                }
                Ok(())
            }
            StmtKind::Assign { target, value } => {
                let ty = self.place(target)?;
                self.expr(value)?;
                self.writable(target)?;
                if value.ty != ty {
                    return Err(self.fail(format!(
                        "assignment to `{}` (of type `{ty}`) of `{}`, of type `{}`",
                        self.show_place(target),
                        self.show(value),
                        value.ty
                    )));
                }
                Ok(())
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::If { cond, then, els } => {
                self.expr(cond)?;
                self.expect(cond, &Type::BOOL, "the `if` condition")?;
                self.block(then)?;
                if let Some(b) = els {
                    self.block(b)?;
                }
                Ok(())
            }
            StmtKind::While { cond, body } => {
                self.expr(cond)?;
                self.expect(cond, &Type::BOOL, "the `while` condition")?;
                self.loops += 1;
                let r = self.block(body);
                self.loops -= 1;
                r
            }
            StmtKind::For(l) => {
                self.expr(&l.start)?;
                self.expr(&l.end)?;
                self.expr(&l.step)?;
                let d = self.decl(l.var)?;
                let Some(t) = d.ty.as_scalar().filter(|t| t.is_integer()) else {
                    return Err(self.fail(format!(
                        "the `for` variable `{}` has type `{}`; `for` loops count with an \
                         integer type (i32, i64, u32, u64)",
                        d.name, d.ty
                    )));
                };
                let t = Type::Scalar(t);
                let what = format!("the start of `for {}`", d.name);
                self.expect(&l.start, &t, &what)?;
                let what = format!("the end of `for {}`", d.name);
                self.expect(&l.end, &t, &what)?;
                let what = format!("the step of `for {}`", d.name);
                self.expect(&l.step, &Type::U32, &what)?;
                self.open();
                let r = self.declare(l.var, "a `for` loop").and_then(|_| {
                    self.loop_var[l.var.0 as usize] = true;
                    self.loops += 1;
                    let r = self.block(&l.body);
                    self.loops -= 1;
                    r
                });
                self.close();
                r
            }
            StmtKind::Match { scrutinee, arms } => {
                self.expr(scrutinee)?;
                self.check_scrutinee(scrutinee)?;
                for (p, b) in arms {
                    self.arm(p, &scrutinee.ty, |v| v.block(b))?;
                }
                Ok(())
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.loops == 0 {
                    let w = if matches!(s, StmtKind::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    return Err(self.fail(format!("`{w}` outside of a loop")));
                }
                Ok(())
            }
            StmtKind::Return(value) => self.ret(value.as_ref()),
            StmtKind::Barrier => match self.func {
                Some(f) => Err(self.fail(format!(
                    "`sync_threads()` in helper function `{}`: barriers inside helper \
                     functions are not supported yet (call `sync_threads()` from the kernel \
                     body)",
                    f.name
                ))),
                None => Ok(()),
            },
            StmtKind::WarpBarrier | StmtKind::MemFence(_) => Ok(()),
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Pragma { hints: _, body } => self.block(body),
        }
    }

    fn ret(&mut self, value: Option<&Expr>) -> Check {
        match (self.func, value) {
            (None, None) => Ok(()),
            (None, Some(e)) => {
                self.expr(e)?;
                Err(self.fail(format!(
                    "`return {}`: kernels return no value",
                    self.show(e)
                )))
            }
            (Some(f), None) if f.ret != Type::Unit => Err(self.fail(format!(
                "`return;` without a value in `{}`, which returns `{}`",
                f.name, f.ret
            ))),
            (Some(_), None) => Ok(()),
            (Some(f), Some(e)) => {
                self.expr(e)?;
                if e.ty != f.ret {
                    return Err(self.fail(format!(
                        "`return {}` returns a `{}` from `{}`, which returns `{}`",
                        self.show(e),
                        e.ty,
                        f.name,
                        f.ret
                    )));
                }
                Ok(())
            }
        }
    }

    /// The type of place `l` (checking its variables and index expressions).
    fn place(&mut self, l: &LValue) -> Check<Type> {
        match l {
            LValue::Var(v) => Ok(self.use_var(*v)?.ty.clone()),
            LValue::Index { base, index } => {
                let bt = self.place(base)?;
                self.expr(index)?;
                let Type::Array { elem, .. } = bt else {
                    return Err(self.fail(format!(
                        "`{}` is indexed, but `{}` is a `{bt}`, not an array",
                        self.show_place(l),
                        self.show_place(base)
                    )));
                };
                let what = format!("the index of `{}`", self.show_place(l));
                self.expect(index, &Type::U32, &what)?;
                Ok(std::sync::Arc::unwrap_or_clone(elem))
            }
            LValue::Field { base, field } => {
                let bt = self.place(base)?;
                self.field_type(&bt, field, &self.show_place(base))
            }
        }
    }

    /// The type of field `field` of a value of type `base` (printed as `shown`).
    pub(super) fn field_type(&self, base: &Type, field: &str, shown: &str) -> Check<Type> {
        if let Type::Vector { elem, lanes } = base {
            return match crate::types::lane_index(field) {
                Some(i) if i < usize::from(*lanes) => Ok(Type::Scalar(*elem)),
                _ => Err(self.fail(format!(
                    "`{shown}.{field}`: a `{base}` has the lanes {}",
                    crate::types::LANE_NAMES[..usize::from(*lanes)]
                        .iter()
                        .map(|l| format!("`{l}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            };
        }
        let Type::Record(r) = base else {
            return Err(self.fail(format!(
                "field `.{field}` of `{shown}`, which is a `{base}`, not a record"
            )));
        };
        let Some(def) = self.kernel.record(r) else {
            return Err(self.fail(format!(
                "`{shown}` has type `{r}`, but no record `{r}` is defined in the kernel"
            )));
        };
        match def.fields.iter().find(|f| f.name == field) {
            Some(f) => Ok(f.ty.clone()),
            None => Err(self.fail(format!(
                "`{shown}.{field}`: record `{r}` has no field `{field}` (its fields: {})",
                def.fields
                    .iter()
                    .map(|f| format!("`{}`", f.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Checks that place `l` (already typed by [`Body::place`]) may be assigned.
    fn writable(&self, l: &LValue) -> Check {
        let mut root = l;
        let mut through_index = false;
        loop {
            match root {
                LValue::Var(_) => break,
                LValue::Index { base, .. } => {
                    through_index = true;
                    root = base;
                }
                LValue::Field { base, .. } => root = base,
            }
        }
        let LValue::Var(v) = root else {
            unreachable!("the loop stops at a variable")
        };
        let d = self.decl(*v)?;
        let shown = self.show_place(l);
        let name = &d.name;
        if let Type::Array { elem, space, .. } = &d.ty {
            if !through_index {
                return Err(self.fail(format!(
                    "assignment to the whole array `{shown}`; assign its elements \
                     (`{name}[i] = …`)"
                )));
            }
            match space {
                MemSpace::Shared => return Ok(()),
                MemSpace::Global => {
                    let mutable = self.param_of(*v).is_some_and(|p| p.mutable);
                    if !mutable {
                        return Err(self.fail(format!(
                            "assignment to `{shown}`, but parameter `{name}` is a read-only \
                             buffer (`{}`); declare it `{}`",
                            rust_buffer(elem, false),
                            rust_buffer(elem, true)
                        )));
                    }
                    return Ok(());
                }
                MemSpace::Local => {}
            }
        }
        let i = v.0 as usize;
        if self.loop_var[i] {
            return Err(self.fail(format!(
                "assignment to `{shown}`, but `{name}` is a `for` loop variable, which cannot be \
                 assigned"
            )));
        }
        let mutable = d.mutable
            || self.deferred[i]
            || (d.kind == VarKind::Param && self.param_of(*v).is_some_and(|p| p.mutable));
        if !mutable {
            let how = match d.kind {
                VarKind::Param => format!("declare the parameter `mut {name}`"),
                _ => format!("declare it `let mut {name}`"),
            };
            return Err(self.fail(format!(
                "assignment to `{shown}`, but `{name}` is not mutable ({how})"
            )));
        }
        Ok(())
    }

    /// Checks that `e` can be matched on: an integer or a variant value.
    pub(super) fn check_scrutinee(&self, e: &Expr) -> Check {
        match &e.ty {
            Type::Scalar(t) if t.is_integer() => Ok(()),
            Type::Variant(_) => Ok(()),
            t => Err(self.fail(format!(
                "`match` on `{}`, of type `{t}`: only integers and variants (enums) can be \
                 matched{}",
                self.show(e),
                if *t == Type::BOOL {
                    " (use `if` for a `bool`)"
                } else {
                    ""
                }
            ))),
        }
    }

    /// Checks pattern `p` against a scrutinee of type `ty`, declaring its bindings in the current
    /// scope. `bindings_ok` is false inside `|` alternatives.
    pub(super) fn pattern(&mut self, p: &Pattern, ty: &Type, bindings_ok: bool) -> Check {
        match p {
            Pattern::Wildcard => Ok(()),
            Pattern::Int(c) => self.pattern_const(p, *c, ty),
            Pattern::Range(lo, hi) => {
                self.pattern_const(p, *lo, ty)?;
                self.pattern_const(p, *hi, ty)?;
                if const_value(*lo) > const_value(*hi) {
                    return Err(self.fail(format!(
                        "the range pattern `{}` is empty (its start is above its end)",
                        self.show_pattern(p)
                    )));
                }
                Ok(())
            }
            Pattern::Or(alts) => {
                if alts.is_empty() {
                    return Err(self.fail("an `|` pattern with no alternative"));
                }
                alts.iter().try_for_each(|a| self.pattern(a, ty, false))
            }
            Pattern::Case {
                variant,
                case,
                bindings,
            } => {
                let shown = self.show_pattern(p);
                if *ty != Type::Variant(variant.clone()) {
                    return Err(self.fail(format!(
                        "pattern `{shown}` matches a `{variant}`, but the value matched is a \
                         `{ty}`"
                    )));
                }
                let Some(def) = self.kernel.variant(variant) else {
                    return Err(self.fail(format!(
                        "pattern `{shown}`: no variant `{variant}` is defined in the kernel"
                    )));
                };
                let Some(c) = def.cases.iter().find(|c| &c.name == case) else {
                    return Err(self.fail(format!(
                        "pattern `{shown}`: variant `{variant}` has no case `{case}`"
                    )));
                };
                if !bindings.is_empty() && !bindings_ok {
                    return Err(self.fail(format!(
                        "pattern `{shown}` binds variables inside an `|` pattern, which is not \
                         supported"
                    )));
                }
                if !bindings.is_empty() && bindings.len() != c.payload.len() {
                    return Err(self.fail(format!(
                        "pattern `{shown}` binds {}, but `{variant}::{case}` carries {}",
                        count(bindings.len(), "value"),
                        count(c.payload.len(), "value")
                    )));
                }
                for (b, t) in bindings.iter().zip(&c.payload) {
                    let d = self.declare(*b, &format!("pattern `{shown}`"))?;
                    if d.ty != *t {
                        return Err(self.fail(format!(
                            "pattern `{shown}` binds `{}` of type `{}` to a payload of type `{t}`",
                            d.name, d.ty
                        )));
                    }
                }
                Ok(())
            }
        }
    }

    fn pattern_const(&self, p: &Pattern, c: Const, ty: &Type) -> Check {
        if !c.ty().is_integer() {
            return Err(self.fail(format!(
                "pattern `{}` is a `{}` constant; patterns match integers",
                self.show_pattern(p),
                c.ty()
            )));
        }
        if *ty != Type::Scalar(c.ty()) {
            return Err(self.fail(format!(
                "pattern `{}` is a `{}`, but the value matched is a `{ty}`",
                self.show_pattern(p),
                c.ty()
            )));
        }
        Ok(())
    }
}

/// An integer constant's value (0 for non-integers, which patterns reject first).
pub(super) fn const_value(c: Const) -> i128 {
    c.int_value().unwrap_or(0)
}

/// True if `p` matches every value.
fn irrefutable(p: &Pattern) -> bool {
    match p {
        Pattern::Wildcard => true,
        Pattern::Or(alts) => alts.iter().any(irrefutable),
        _ => false,
    }
}

/// True if the patterns match every value of type `ty` (a variant or an integer).
pub(super) fn exhaustive(kernel: &Kernel, pats: &[&Pattern], ty: &Type) -> bool {
    if pats.iter().any(|p| irrefutable(p)) {
        return true;
    }
    fn flatten<'p>(p: &'p Pattern, out: &mut Vec<&'p Pattern>) {
        match p {
            Pattern::Or(alts) => alts.iter().for_each(|a| flatten(a, out)),
            _ => out.push(p),
        }
    }
    let mut flat = Vec::new();
    for p in pats {
        flatten(p, &mut flat);
    }
    match ty {
        Type::Variant(v) => {
            let Some(def) = kernel.variant(v) else {
                return false;
            };
            def.cases.iter().all(|c| {
                flat.iter()
                    .any(|p| matches!(p, Pattern::Case { case, .. } if *case == c.name))
            })
        }
        Type::Scalar(t) if t.is_integer() => {
            let mut ranges: Vec<(i128, i128)> = flat
                .iter()
                .filter_map(|p| match p {
                    Pattern::Int(c) => Some((const_value(*c), const_value(*c))),
                    Pattern::Range(lo, hi) => Some((const_value(*lo), const_value(*hi))),
                    _ => None,
                })
                .collect();
            ranges.sort_unstable();
            let (min, max) = t.int_range().unwrap_or((0, 0));
            let mut next = min; // the smallest value not yet covered
            for (lo, hi) in ranges {
                if lo > next {
                    return false;
                }
                if hi >= next {
                    if hi >= max {
                        return true;
                    }
                    next = hi + 1;
                }
            }
            false
        }
        _ => false,
    }
}

/// True if control never reaches the end of `b` (every path returns or loops forever).
pub(super) fn always_leaves(kernel: &Kernel, b: &Block) -> bool {
    b.iter().any(|s| stmt_leaves(kernel, &s.kind))
}

fn stmt_leaves(kernel: &Kernel, s: &StmtKind) -> bool {
    match s {
        StmtKind::Return(_) => true,
        StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => always_leaves(kernel, b),
        StmtKind::If {
            then,
            els: Some(els),
            ..
        } => always_leaves(kernel, then) && always_leaves(kernel, els),
        StmtKind::While { cond, body } => {
            matches!(cond.kind, ExprKind::Const(Const::Bool(true))) && !breaks_out(body)
        }
        StmtKind::Match { scrutinee, arms } => {
            let pats: Vec<&Pattern> = arms.iter().map(|(p, _)| p).collect();
            exhaustive(kernel, &pats, &scrutinee.ty)
                && arms.iter().all(|(_, b)| always_leaves(kernel, b))
        }
        _ => false,
    }
}

/// True if `b` contains a `break` of the loop whose body it is.
fn breaks_out(b: &Block) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Break => true,
        StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => breaks_out(b),
        StmtKind::If { then, els, .. } => breaks_out(then) || els.as_ref().is_some_and(breaks_out),
        StmtKind::Match { arms, .. } => arms.iter().any(|(_, b)| breaks_out(b)),
        _ => false,
    })
}
