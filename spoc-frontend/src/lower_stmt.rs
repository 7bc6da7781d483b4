//! Lowering of blocks and statements: `let`, assignment and compound assignment, `if`,
//! `while`, `loop`, `for`, `break`, `continue`, `return`, and expressions used as statements.

use crate::errors::{Failed, Loc, Lowered};
use crate::lower::{ident_name, Lowerer, TExpr};
use crate::sig;
use crate::types::{Kind, Ty};
use spoc_ir::{
    Block, Expr, ExprKind, ForDir, ForLoop, LValue, Stmt, StmtKind, Type, VarId, VarKind,
};

impl Lowerer {
    // ---- bodies and blocks ----

    pub(crate) fn fn_body(&mut self, block: &syn::Block) -> Block {
        let mut out = Block::new();
        if self.ret == Ty::Unit {
            let _ = self.stmts(&block.stmts, &mut out, false);
            return out;
        }
        match self.stmts(&block.stmts, &mut out, true) {
            Ok(Some(tail)) => {
                let ret = self.ret;
                let span = tail.span;
                if self
                    .unify_at(ret, tail.ty, span, "mismatched return type")
                    .is_ok()
                {
                    out.push(self.stmt(StmtKind::Return(Some(tail.e)), span));
                }
            }
            Ok(None) => {
                let ends_in_return = matches!(
                    out.last(),
                    Some(Stmt {
                        kind: StmtKind::Return(_),
                        ..
                    })
                );
                if !ends_in_return {
                    let shown = self.tys.show(self.ret);
                    let span = block.brace_token.span.close();
                    self.errs.at(
                        span,
                        format!("this function returns {shown} but its body does not end with a value; end it with an expression or `return`"),
                    );
                }
            }
            Err(Failed) => {}
        }
        out
    }

    /// Lowers `stmts` into `out`. With `want_tail`, a final expression without `;` is lowered as
    /// a value and returned; otherwise it must be of type `()`.
    pub fn stmts(
        &mut self,
        stmts: &[syn::Stmt],
        out: &mut Block,
        want_tail: bool,
    ) -> Lowered<Option<TExpr>> {
        if let Some(first) = stmts.first() {
            self.enter_block(first)?;
        }
        let r = self.stmts_inner(stmts, out, want_tail);
        if !stmts.is_empty() {
            self.block_depth -= 1;
        }
        r
    }

    /// Counts one more level of blocks, refusing more than [`crate::nesting::MAX_BLOCK_DEPTH`]
    /// with an error at `at` (once per function); [`Lowerer::block_depth`] is decremented by
    /// the caller when the block ends, if this succeeded.
    pub(crate) fn enter_block<T: quote::ToTokens>(&mut self, at: &T) -> Lowered<()> {
        let max = crate::nesting::MAX_BLOCK_DEPTH;
        if self.block_depth < max {
            self.block_depth += 1;
            return Ok(());
        }
        if self.too_deep {
            return Err(Failed);
        }
        self.too_deep = true;
        let first = at.to_token_stream().into_iter().next();
        let span = first.map_or_else(proc_macro2::Span::call_site, |t| t.span());
        Err(self.errs.at(
            span,
            format!("blocks are nested more than {max} deep here, more than spoc's backends compile; move the inner part into a #[device] function, or join conditions with `&&`"),
        ))
    }

    fn stmts_inner(
        &mut self,
        stmts: &[syn::Stmt],
        out: &mut Block,
        want_tail: bool,
    ) -> Lowered<Option<TExpr>> {
        let mut ok = true;
        for (i, s) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            match s {
                syn::Stmt::Expr(e, None) if last && want_tail => {
                    return if ok {
                        self.scalar(e, out).map(Some)
                    } else {
                        let _ = self.scalar(e, out);
                        Err(Failed)
                    };
                }
                _ => ok &= self.one_stmt(s, out, last).is_ok(),
            }
        }
        if ok {
            Ok(None)
        } else {
            Err(Failed)
        }
    }

    fn one_stmt(&mut self, s: &syn::Stmt, out: &mut Block, last: bool) -> Lowered<()> {
        match s {
            syn::Stmt::Local(local) => self.local(local, out),
            syn::Stmt::Item(syn::Item::Const(c)) => {
                let name = c.ident.to_string();
                self.body_consts.push((name.clone(), (*c.expr).clone()));
                let ty = &c.ty;
                let ty = quote::quote!(#ty).to_string();
                let msg = if self.is_kernel {
                    format!("`const` items are not supported in kernels yet: make `{name}` a const parameter of the kernel (`fn k<const {name}: {ty}>` with `#[kernel(instances(…))]`) or write its value where it is used")
                } else {
                    format!("`const` items are not supported in #[device] functions yet: write the value of `{name}` where it is used, or pass it as a parameter")
                };
                Err(self.errs.spanned(c, msg))
            }
            syn::Stmt::Item(item) => Err(self.errs.spanned(
                item,
                "items (`fn`, `struct`, `impl`, `use`, …) cannot be declared inside a kernel; declare helpers at module level with #[device]",
            )),
            syn::Stmt::Macro(m) => Err(self.macro_error(&m.mac)),
            syn::Stmt::Expr(e, semi) => self.stmt_expr(e, out, semi.is_none() && last),
        }
    }

    /// A block in statement position, in its own scope.
    fn unit_block(&mut self, b: &syn::Block) -> Lowered<Block> {
        self.push_scope();
        let mut out = Block::new();
        let r = self.stmts(&b.stmts, &mut out, false);
        self.pop_scope();
        r.map(|_| out)
    }

    /// A block used as a value: its statements go to `out`, its final expression is returned.
    pub fn value_block(&mut self, b: &syn::Block, out: &mut Block, what: &str) -> Lowered<TExpr> {
        self.push_scope();
        let r = self.stmts(&b.stmts, out, true);
        self.pop_scope();
        match r? {
            Some(t) => Ok(t),
            None => Err(self.errs.at(
                b.brace_token.span.close(),
                format!("{what} must end with a value (an expression without `;`)"),
            )),
        }
    }

    /// A `let`. When it fails, the names it binds still come into scope, poisoned: uses of
    /// them fail without errors of their own (the `let`'s error says what is wrong).
    fn local(&mut self, local: &syn::Local, out: &mut Block) -> Lowered<()> {
        let r = self.local_inner(local, out);
        if r.is_err() {
            let mut names = Vec::new();
            pattern_names(&local.pat, &mut names);
            for n in names {
                self.declare_poisoned(&n);
            }
        }
        r
    }

    fn local_inner(&mut self, local: &syn::Local, out: &mut Block) -> Lowered<()> {
        let span = Loc::of(&local);
        let (pat, annotated) = match &local.pat {
            syn::Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
            p => (p, None),
        };
        let Some(init) = &local.init else {
            if let Some(t) = annotated.filter(|t| !matches!(t, syn::Type::Array(_))) {
                self.value_type_in_let(t)?;
            }
            return Err(self.errs.at(
                span,
                "declare variables with an initial value (`let x: f32 = 0.0;`); deferred initialization is not supported",
            ));
        };
        if let Some((_, diverge)) = &init.diverge {
            return Err(self
                .errs
                .spanned(diverge, "`let … else` is not supported in kernels"));
        }
        if let Some((call, what)) = self.shared_decl_call(&init.expr) {
            let name = match pat {
                syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    ident_name(&p.ident)
                }
                _ => {
                    return Err(self.errs.spanned(
                        pat,
                        format!(
                            "a shared array is declared with a name: `let tile = {what}::<…>();`"
                        ),
                    ))
                }
            };
            return self.shared_let(&name, call, &what, annotated);
        }
        let declared = match annotated {
            Some(syn::Type::Array(a)) => Some(Err(a)),
            Some(t) => Some(Ok(self.value_type_in_let(t)?)),
            None => None,
        };
        let value = self.value(&init.expr, out)?;
        match declared {
            Some(Ok(d)) => self.unify_at(d, value.ty, value.span, "mismatched types")?,
            Some(Err(a)) => self.local_array_annotation(a, &value)?,
            None => {}
        }
        match self.tys.resolve(value.ty) {
            Ty::Buffer { .. } => {
                return Err(self.errs.at(
                    value.span,
                    "a buffer cannot be used as a value; index it (`x[i]`), take its length (`x.len()`) or pass it to a #[device] function",
                ))
            }
            Ty::Unit => {
                return Err(self
                    .errs
                    .at(value.span, "this expression has no value (it is `()`)"))
            }
            Ty::Array { .. } if !matches!(strip_paren(&init.expr), syn::Expr::Repeat(_)) => {
                return Err(self.errs.at(
                    value.span,
                    "an array cannot be copied into another variable; index it (`a[i]`) or take its length (`a.len()`)",
                ))
            }
            _ => {}
        }
        match pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                let name = ident_name(&p.ident);
                let var = self.declare(&name, value.ty, p.mutability.is_some(), VarKind::Local);
                out.push(self.stmt(
                    StmtKind::Let {
                        var,
                        init: Some(value.e),
                    },
                    span,
                ));
                Ok(())
            }
            syn::Pat::Wild(_) => {
                out.push(self.stmt(StmtKind::Expr(value.e), span));
                Ok(())
            }
            syn::Pat::Tuple(_) => Err(self.errs.spanned(
                pat,
                "tuples are not supported in kernels; declare one variable per value",
            )),
            _ => Err(self.errs.spanned(
                pat,
                "only plain names (`let x`, `let mut x`, `let _`) can be declared in kernels",
            )),
        }
    }

    fn value_type_in_let(&mut self, t: &syn::Type) -> Lowered<Ty> {
        if let syn::Type::Reference(_) = t {
            return Err(self.errs.spanned(
                t,
                "local references are not supported in kernels; buffers are used through their parameter name",
            ));
        }
        sig::value_type(t, &mut self.errs, &mut self.tys)
    }

    // ---- statements ----

    /// An expression in statement position. `tail`: it is the last of a unit block, without `;`.
    pub fn stmt_expr(&mut self, e: &syn::Expr, out: &mut Block, tail: bool) -> Lowered<()> {
        crate::nesting::deep(|| self.stmt_expr_inner(e, out, tail))
    }

    fn stmt_expr_inner(&mut self, e: &syn::Expr, out: &mut Block, tail: bool) -> Lowered<()> {
        let span = Loc::of(&e);
        match e {
            syn::Expr::If(i) => self.if_stmt(i, out),
            syn::Expr::While(w) => self.while_stmt(w, out),
            syn::Expr::Loop(l) => {
                self.no_label(l.label.as_ref())?;
                let body = self.loop_body(&l.body)?;
                let cond = Expr::constant(spoc_ir::Const::Bool(true));
                out.push(self.stmt(StmtKind::While { cond, body }, span));
                Ok(())
            }
            syn::Expr::ForLoop(f) => self.for_stmt(f, out),
            syn::Expr::Block(b) => {
                self.no_label(b.label.as_ref())?;
                let body = self.unit_block(&b.block)?;
                out.push(self.stmt(StmtKind::Block(body), span));
                Ok(())
            }
            syn::Expr::Paren(p) => self.stmt_expr(&p.expr, out, tail),
            syn::Expr::Assign(a) => self.assign(&a.left, &a.right, None, span, out),
            syn::Expr::Binary(b) => match compound_op(&b.op) {
                Some(op) => self.assign(&b.left, &b.right, Some((op, Loc::of(&b.op))), span, out),
                None => self.value_stmt(e, out, tail),
            },
            syn::Expr::Break(b) => {
                if let Some(l) = &b.label {
                    return Err(self.errs.spanned(
                        l,
                        "labeled `break` is not supported in kernels; use a flag variable to leave outer loops",
                    ));
                }
                if let Some(v) = &b.expr {
                    return Err(self.errs.spanned(
                        v,
                        "`break` with a value is not supported; assign to a variable declared before the loop",
                    ));
                }
                self.in_loop(span, "break")?;
                out.push(self.stmt(StmtKind::Break, span));
                Ok(())
            }
            syn::Expr::Continue(c) => {
                if let Some(l) = &c.label {
                    return Err(self.errs.spanned(
                        l,
                        "labeled `continue` is not supported in kernels; use a flag variable",
                    ));
                }
                self.in_loop(span, "continue")?;
                out.push(self.stmt(StmtKind::Continue, span));
                Ok(())
            }
            syn::Expr::Return(r) => self.return_stmt(r, out),
            syn::Expr::Call(c) if self.statement_intrinsic(c).is_some() => {
                let kind = self.statement_intrinsic_call(c)?;
                out.push(self.stmt(kind, span));
                Ok(())
            }
            syn::Expr::Call(c) if self.is_value_intrinsic(c) => {
                // An atomic (or any intrinsic) as a statement: its value is dropped.
                let v = self.call(c, out)?;
                out.push(self.stmt(StmtKind::Expr(v.e), span));
                Ok(())
            }
            syn::Expr::Match(m) => self.match_stmt(m, out),
            syn::Expr::Call(c) => {
                let v = self.call(c, out)?;
                // A call used as a statement must return `()`: a helper's value cannot be
                // silently dropped (the IR keeps call types exact). Write `let _: T = f(..);`.
                self.unify_at(Ty::Unit, v.ty, v.span, "the value of this call is unused; bind it with `let _: T = …;` (mismatched types)")?;
                out.push(self.stmt(StmtKind::Expr(v.e), span));
                Ok(())
            }
            _ => self.value_stmt(e, out, tail),
        }
    }

    fn value_stmt(&mut self, e: &syn::Expr, out: &mut Block, tail: bool) -> Lowered<()> {
        let v = self.scalar(e, out)?;
        if tail {
            let shown = self.tys.show(v.ty);
            return Err(self.errs.at(
                v.span,
                format!(
                    "mismatched types: expected `()`, found {shown}; end the statement with `;`"
                ),
            ));
        }
        out.push(self.stmt(StmtKind::Expr(v.e), v.span));
        Ok(())
    }

    fn no_label(&mut self, label: Option<&syn::Label>) -> Lowered<()> {
        match label {
            Some(l) => Err(self.errs.spanned(
                l,
                "labels are not supported in kernels; use a flag variable to leave outer loops",
            )),
            None => Ok(()),
        }
    }

    fn in_loop(&mut self, span: Loc, what: &str) -> Lowered<()> {
        if self.loop_depth == 0 {
            Err(self.errs.at(span, format!("`{what}` outside of a loop")))
        } else {
            Ok(())
        }
    }

    fn loop_body(&mut self, b: &syn::Block) -> Lowered<Block> {
        self.loop_depth += 1;
        let r = self.unit_block(b);
        self.loop_depth -= 1;
        r
    }

    /// A `bool` condition; its hoisted statements go to `out`.
    fn condition(&mut self, c: &syn::Expr, out: &mut Block, what: &str) -> Lowered<Expr> {
        if let syn::Expr::Let(l) = c {
            return Err(self.errs.spanned(
                l,
                format!("`{what} let` is not supported in kernels; write a plain `bool` condition"),
            ));
        }
        let cond = self.scalar(c, out)?;
        self.unify_at(
            Ty::BOOL,
            cond.ty,
            cond.span,
            &format!("mismatched types: the `{what}` condition must be a `bool`"),
        )?;
        Ok(cond.e)
    }

    fn if_stmt(&mut self, i: &syn::ExprIf, out: &mut Block) -> Lowered<()> {
        let span = Loc::of(&i);
        let cond = self.condition(&i.cond, out, "if");
        let then = self.unit_block(&i.then_branch);
        let els = match &i.else_branch {
            None => Ok(None),
            Some((_, e)) => match &**e {
                syn::Expr::If(nested) => {
                    // `else if` nests the second `if` in the first one's `else` block.
                    self.enter_block(nested)?;
                    let mut b = Block::new();
                    let r = self.if_stmt(nested, &mut b).map(|()| Some(b));
                    self.block_depth -= 1;
                    r
                }
                syn::Expr::Block(b) => self.unit_block(&b.block).map(Some),
                other => Err(self.errs.spanned(other, "expected a block after `else`")),
            },
        };
        let (cond, then, els) = (cond?, then?, els?);
        out.push(self.stmt(StmtKind::If { cond, then, els }, span));
        Ok(())
    }

    fn while_stmt(&mut self, w: &syn::ExprWhile, out: &mut Block) -> Lowered<()> {
        let span = Loc::of(&w);
        self.no_label(w.label.as_ref())?;
        let mut pre = Block::new();
        let cond = self.condition(&w.cond, &mut pre, "while");
        let body = self.loop_body(&w.body);
        let (cond, mut body) = (cond?, body?);
        if pre.is_empty() {
            out.push(self.stmt(StmtKind::While { cond, body }, span));
        } else {
            // The condition needs statements: `loop { pre; if !cond { break } body }`.
            let not = Expr {
                kind: ExprKind::Unary {
                    op: spoc_ir::UnOp::Not,
                    operand: Box::new(cond),
                },
                ty: Type::BOOL,
            };
            let exit = self.stmt(
                StmtKind::If {
                    cond: not,
                    then: vec![self.stmt(StmtKind::Break, span)],
                    els: None,
                },
                span,
            );
            pre.push(exit);
            pre.append(&mut body);
            let cond = Expr::constant(spoc_ir::Const::Bool(true));
            out.push(self.stmt(StmtKind::While { cond, body: pre }, span));
        }
        Ok(())
    }

    fn for_stmt(&mut self, f: &syn::ExprForLoop, out: &mut Block) -> Lowered<()> {
        let span = Loc::of(&f);
        self.no_label(f.label.as_ref())?;
        let name = match &*f.pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                if p.mutability.is_some() {
                    return Err(self.errs.spanned(
                        p,
                        format!("loop variables are immutable in kernels; copy it: `let mut {0} = {0};`", p.ident),
                    ));
                }
                ident_name(&p.ident)
            }
            syn::Pat::Wild(_) => "_".to_string(),
            other => {
                return Err(self
                    .errs
                    .spanned(other, "a `for` loop variable must be a plain name"))
            }
        };
        let range = crate::lower_range::parse(&f.expr, &mut self.errs)?;
        let start = self.scalar(range.start, out);
        let mut epre = Block::new();
        let end = self.scalar(range.end, &mut epre);
        let mut spre = Block::new();
        let step = match range.step {
            Some(s) => self.scalar(s, &mut spre).and_then(|s| {
                self.unify_at(
                    Ty::USIZE,
                    s.ty,
                    s.span,
                    "mismatched types: `step_by` takes a `usize`",
                )
                .map(|()| s)
            }),
            None => Ok(self.mk(
                ExprKind::Const(spoc_ir::Const::U32(1)),
                Ty::USIZE,
                Loc::of(&f.expr),
            )),
        };
        let (mut start, mut end, step) = (start?, end?, step?);
        self.sequence([&mut start], &end, epre, out);
        self.sequence([&mut start, &mut end], &step, spre, out);
        let step = step.e;
        self.unify_at(
            start.ty,
            end.ty,
            end.span,
            "mismatched types: both ends of a range must have one type",
        )?;
        self.constrain_at(
            start.ty,
            Kind::Int,
            start.span,
            "`for` ranges must be integers",
        )?;
        self.push_scope();
        let var = self.declare(&name, start.ty, false, VarKind::Local);
        if range.unroll {
            self.unroll_loops.push((var, Loc::of(&f.expr)));
        }
        let body = self.loop_body(&f.body);
        self.pop_scope();
        let dir = if range.down { ForDir::Down } else { ForDir::Up };
        out.push(self.stmt(
            StmtKind::For(ForLoop {
                var,
                start: start.e,
                end: end.e,
                step,
                dir,
                body: body?,
            }),
            span,
        ));
        Ok(())
    }

    fn return_stmt(&mut self, r: &syn::ExprReturn, out: &mut Block) -> Lowered<()> {
        let span = Loc::of(&r);
        match (&r.expr, self.ret) {
            (None, Ty::Unit) => {
                out.push(self.stmt(StmtKind::Return(None), span));
                Ok(())
            }
            (Some(e), Ty::Unit) => Err(self.errs.spanned(
                e,
                if self.is_kernel {
                    "kernels return nothing; use `return;` and write results into a `&mut [T]` parameter"
                } else {
                    "this function returns nothing; use `return;`"
                },
            )),
            (None, ret) => {
                let shown = self.tys.show(ret);
                Err(self.errs.at(span, format!("this function returns {shown}: write `return value;`")))
            }
            (Some(e), ret) => {
                let v = self.scalar(e, out)?;
                self.unify_at(ret, v.ty, v.span, "mismatched return type")?;
                out.push(self.stmt(StmtKind::Return(Some(v.e)), span));
                Ok(())
            }
        }
    }

    /// `lhs = rhs` or, with `op`, `lhs op= rhs`.
    fn assign(
        &mut self,
        lhs: &syn::Expr,
        rhs: &syn::Expr,
        op: Option<(spoc_ir::BinOp, Loc)>,
        span: Loc,
        out: &mut Block,
    ) -> Lowered<()> {
        let (target, current, value) = match lhs {
            syn::Expr::Paren(p) => return self.assign(&p.expr, rhs, op, span, out),
            syn::Expr::Infer(_) if op.is_none() => {
                let v = self.scalar(rhs, out)?;
                out.push(self.stmt(StmtKind::Expr(v.e), span));
                return Ok(());
            }
            _ => {
                // Rust evaluates the value first, then the place (in a compound assignment on
                // primitives too): the place's statements come after the value's, and the
                // value is settled first if the place could change it.
                let mut ppre = Block::new();
                let (target, current) = self.place(lhs, op.is_some(), &mut ppre)?;
                let mut value = self.scalar(rhs, out)?;
                self.sequence([&mut value], &current, ppre, out);
                // A value that writes memory is computed before the element is read (`+=`) or
                // an index that could see its writes is evaluated, which the generated C would
                // leave unsequenced.
                let exposed = match op {
                    Some(_) => !matches!(target, LValue::Var(_)),
                    None => !self.stable_place(&target),
                };
                if exposed && crate::lower_expr::has_effects(&value.e) {
                    value = self.spill(value, out);
                }
                (target, current, value)
            }
        };
        let value = match op {
            Some((op, op_span)) => {
                let is_vector = |t| matches!(t, crate::types::Ty::Vector(..));
                if is_vector(self.tys.resolve(current.ty)) || is_vector(self.tys.resolve(value.ty))
                {
                    self.vector_binary(op, current, value, op_span, out)?
                } else {
                    self.binary_op(op, current, value, op_span)?
                }
            }
            None => {
                self.unify_at(current.ty, value.ty, value.span, "mismatched types")?;
                value
            }
        };
        out.push(self.stmt(
            StmtKind::Assign {
                target,
                value: value.e,
            },
            span,
        ));
        Ok(())
    }

    /// The place `lhs` denotes (a `let mut` local, a buffer or array element, a field of one of
    /// those) and its current value. `compound`: the place is also read (`+=`), so an index is
    /// evaluated once, into a temporary.
    fn place(
        &mut self,
        lhs: &syn::Expr,
        compound: bool,
        out: &mut Block,
    ) -> Lowered<(LValue, TExpr)> {
        match lhs {
            syn::Expr::Paren(p) => self.place(&p.expr, compound, out),
            syn::Expr::Path(p) => {
                let id = self.assignable_var(p)?;
                let ty = self.vars[id.0 as usize].ty;
                Ok((LValue::Var(id), self.mk(ExprKind::Var(id), ty, Loc::of(&lhs))))
            }
            syn::Expr::Index(ix) => {
                let el = self.element(ix, out)?;
                self.check_writable(&el, &ix.expr)?;
                // `y[i] op= v` reads and writes `y[i]`: evaluate the index once.
                let idx = if compound && !is_simple(&el.index.e) {
                    let idx = &el.index;
                    let t = self.temp(idx.ty);
                    out.push(self.stmt(StmtKind::Let { var: t, init: Some(idx.e.clone()) }, idx.span));
                    self.mk(ExprKind::Var(t), idx.ty, idx.span)
                } else {
                    TExpr { e: el.index.e.clone(), ty: el.index.ty, span: el.index.span }
                };
                let array = self.array_expr(&el, Loc::of(&ix.expr));
                let read = ExprKind::Index {
                    array: Box::new(array.e),
                    index: Box::new(idx.e.clone()),
                };
                let target = LValue::Index {
                    base: Box::new(LValue::Var(el.var)),
                    index: idx.e,
                };
                Ok((target, self.mk(read, el.elem, Loc::of(&lhs))))
            }
            syn::Expr::Field(f) => {
                let name = self.member_name(&f.member)?;
                let (base, read) = match strip_paren(&f.base) {
                    syn::Expr::Path(p) => {
                        let id = self.var_of_path(p)?;
                        let v = &self.vars[id.0 as usize];
                        let vname = v.name.clone();
                        let ty = v.ty;
                        let record = matches!(self.tys.resolve(ty), Ty::Record(_) | Ty::Var(_));
                        if record && v.kind == VarKind::Param {
                            return Err(self.errs.spanned(
                                lhs,
                                format!("cannot assign to a field of parameter `{vname}`; copy it into a local first: `let mut {vname} = {vname};`"),
                            ));
                        }
                        if record && !v.mutable {
                            return Err(self.errs.spanned(
                                lhs,
                                format!("cannot assign to `{vname}.{name}`: `{vname}` is not mutable; declare it with `let mut {vname}`"),
                            ));
                        }
                        (LValue::Var(id), self.mk(ExprKind::Var(id), ty, Loc::of(p)))
                    }
                    b @ (syn::Expr::Index(_) | syn::Expr::Field(_)) => self.place(b, compound, out)?,
                    b => {
                        return Err(self.errs.spanned(
                            b,
                            "assign to a field of a `let mut` record (`q.x = …`) or of a buffer element (`out[i].x = …`)",
                        ))
                    }
                };
                let ty = self.field_ty(read.ty, &name, Loc::of(&f.member))?;
                let target = LValue::Field {
                    base: Box::new(base),
                    field: name.clone(),
                };
                let value = ExprKind::Field {
                    base: Box::new(read.e),
                    field: name,
                };
                Ok((target, self.mk(value, ty, Loc::of(&lhs))))
            }
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => Err(self
                .errs
                .spanned(lhs, "`*` dereference is not supported: kernels have no references")),
            _ => Err(self.errs.spanned(
                lhs,
                "invalid left-hand side of assignment: assign to a `let mut` local, a buffer element `y[i]` or a record field `q.x`",
            )),
        }
    }

    /// True if no write to memory changes which element `l` denotes (its indices are
    /// [`Lowerer::stable`]).
    fn stable_place(&self, l: &LValue) -> bool {
        match l {
            LValue::Var(_) => true,
            LValue::Index { base, index } => self.stable(index) && self.stable_place(base),
            LValue::Field { base, .. } => self.stable_place(base),
        }
    }

    fn assignable_var(&mut self, p: &syn::ExprPath) -> Lowered<VarId> {
        let id = self.var_of_path(p)?;
        let v = &self.vars[id.0 as usize];
        let name = v.name.clone();
        match (v.kind, v.ty, v.mutable) {
            (_, Ty::Buffer { .. }, _) => Err(self.errs.spanned(
                p,
                format!("cannot assign to the whole buffer `{name}`; assign its elements: `{name}[i] = …`"),
            )),
            (_, Ty::Array { .. }, _) => Err(self.errs.spanned(
                p,
                format!("cannot assign to the whole array `{name}`; assign its elements: `{name}[i] = …`"),
            )),
            (VarKind::Param, _, _) => Err(self.errs.spanned(
                p,
                format!("cannot assign to parameter `{name}`; copy it into a local first: `let mut {name} = {name};`"),
            )),
            (_, _, false) => Err(self.errs.spanned(
                p,
                format!("cannot assign twice to immutable variable `{name}`; declare it with `let mut {name}`"),
            )),
            _ => Ok(id),
        }
    }
}

fn compound_op(op: &syn::BinOp) -> Option<spoc_ir::BinOp> {
    use spoc_ir::BinOp as B;
    use syn::BinOp as S;
    Some(match op {
        S::AddAssign(_) => B::Add,
        S::SubAssign(_) => B::Sub,
        S::MulAssign(_) => B::Mul,
        S::DivAssign(_) => B::Div,
        S::RemAssign(_) => B::Rem,
        S::BitXorAssign(_) => B::BitXor,
        S::BitAndAssign(_) => B::BitAnd,
        S::BitOrAssign(_) => B::BitOr,
        S::ShlAssign(_) => B::Shl,
        S::ShrAssign(_) => B::Shr,
        _ => return None,
    })
}

/// `e` without parentheses.
fn strip_paren(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_paren(&p.expr),
        syn::Expr::Group(g) => strip_paren(&g.expr),
        e => e,
    }
}

/// A variable or constant: cheap and free of effects, safe to evaluate twice.
fn is_simple(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Var(_) | ExprKind::Const(_))
}

/// The names a pattern binds (`x`, `(a, b)`, `[p, q]`, `S { f, .. }`, …).
fn pattern_names(p: &syn::Pat, out: &mut Vec<String>) {
    match p {
        syn::Pat::Ident(i) => {
            out.push(ident_name(&i.ident));
            if let Some((_, sub)) = &i.subpat {
                pattern_names(sub, out);
            }
        }
        syn::Pat::Type(t) => pattern_names(&t.pat, out),
        syn::Pat::Paren(p) => pattern_names(&p.pat, out),
        syn::Pat::Reference(r) => pattern_names(&r.pat, out),
        syn::Pat::Tuple(t) => t.elems.iter().for_each(|e| pattern_names(e, out)),
        syn::Pat::TupleStruct(t) => t.elems.iter().for_each(|e| pattern_names(e, out)),
        syn::Pat::Slice(s) => s.elems.iter().for_each(|e| pattern_names(e, out)),
        syn::Pat::Or(o) => o.cases.iter().for_each(|e| pattern_names(e, out)),
        syn::Pat::Struct(s) => s.fields.iter().for_each(|f| pattern_names(&f.pat, out)),
        _ => {}
    }
}
