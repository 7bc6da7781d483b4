//! Lowering of expressions (operators, literals, variables, casts, indexing, `if` values, block
//! values). Statements an expression needs first (a block's `let`s, an `if` whose branches hold
//! statements) are hoisted into `pre`, the block being built.

use crate::errors::Loc;
use crate::errors::Lowered;
use crate::lower::{Deferred, Lowerer, PendingLit, TExpr};
use crate::native::plan::children;
use crate::types::{Kind, Scalar, Ty};
use spoc_ir::{BinOp, Block, Const, Expr, ExprKind, Intrinsic, LValue, StmtKind, UnOp, VarId};

impl Lowerer {
    /// A value of scalar or record type (not a buffer, an array or `()`).
    pub fn scalar(&mut self, e: &syn::Expr, pre: &mut Block) -> Lowered<TExpr> {
        let v = self.value(e, pre)?;
        match self.tys.resolve(v.ty) {
            Ty::Buffer { .. } => Err(self.errs.at(
                v.span,
                "a buffer cannot be used as a value; index it (`x[i]`), take its length (`x.len()`) or pass it to a #[device] function",
            )),
            Ty::Array { .. } => Err(self.errs.at(
                v.span,
                "an array cannot be used as a value; index it (`a[i]`) or take its length (`a.len()`)",
            )),
            Ty::Unit => Err(self.errs.at(v.span, "this expression has no value (it is `()`)")),
            _ => Ok(v),
        }
    }

    /// Any value, buffers included. A value nested deeper than [`SPILL_DEPTH`] is bound to a
    /// temporary first (in `pre`, so only where it is evaluated): however long the source's
    /// chain (`a + a + … + a`), the IR's expressions stay shallow, as the backends, which
    /// recurse over them, and the C compilers behind them need.
    pub fn value(&mut self, e: &syn::Expr, pre: &mut Block) -> Lowered<TExpr> {
        let v = crate::nesting::deep(|| self.value_inner(e, pre))?;
        if !deeper_than(&v.e, SPILL_DEPTH) {
            return Ok(v);
        }
        match self.tys.resolve(v.ty) {
            Ty::Buffer { .. } | Ty::Array { .. } | Ty::Unit => Ok(v),
            _ => Ok(self.spill(v, pre)),
        }
    }

    /// `v` evaluated into a new temporary (a `let` pushed on `pre`), and read from it.
    pub(crate) fn spill(&mut self, v: TExpr, pre: &mut Block) -> TExpr {
        let t = self.temp(v.ty);
        pre.push(self.stmt(
            StmtKind::Let {
                var: t,
                init: Some(v.e),
            },
            v.span,
        ));
        self.mk(ExprKind::Var(t), v.ty, v.span)
    }

    /// Lowers the operands `left` then `right`, each by `lower`, into `pre`: both even when
    /// `left` fails (so that both report their errors), `left`'s value kept from what
    /// `right` does ([`Self::sequence`]).
    pub(crate) fn operands(
        &mut self,
        left: &syn::Expr,
        right: &syn::Expr,
        lower: fn(&mut Self, &syn::Expr, &mut Block) -> Lowered<TExpr>,
        pre: &mut Block,
    ) -> Lowered<(TExpr, TExpr)> {
        let l = lower(self, left, pre);
        let mut rpre = Block::new();
        let r = lower(self, right, &mut rpre);
        let (mut l, r) = (l?, r?);
        self.sequence([&mut l], &r, rpre, pre);
        Ok((l, r))
    }

    /// Keeps Rust's left-to-right order of operands: `later` is the operand right of
    /// `earlier` (already lowered, their statements already in `pre`), and `later_pre` the
    /// statements it needs first. If those statements, or `later` itself, may change memory,
    /// every earlier operand whose value they could change is first evaluated into a
    /// temporary; then `later_pre` joins `pre`. (Two effects in one IR expression would also be
    /// unsequenced in the C the GPU backends generate.)
    pub(crate) fn sequence<'t>(
        &mut self,
        earlier: impl IntoIterator<Item = &'t mut TExpr>,
        later: &TExpr,
        mut later_pre: Block,
        pre: &mut Block,
    ) {
        if later_pre.is_empty() && !has_effects(&later.e) {
            return;
        }
        for x in earlier {
            if self.stable(&x.e) {
                continue;
            }
            if let Ty::Buffer { .. } | Ty::Array { .. } | Ty::Unit = self.tys.resolve(x.ty) {
                continue;
            }
            let v = std::mem::replace(
                x,
                self.mk(ExprKind::Const(Const::Bool(false)), Ty::BOOL, x.span),
            );
            *x = self.spill(v, pre);
        }
        pre.append(&mut later_pre);
    }

    /// True if no statement can change the value of `e` nor make its evaluation fault: a
    /// constant, an immutable variable, a length, an index intrinsic, and operators and math
    /// on those (but integer division, which can fault).
    pub(crate) fn stable(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Len(_) => true,
            ExprKind::Var(id) => self.vars.get(id.0 as usize).is_some_and(|v| !v.mutable),
            ExprKind::Intrinsic { intrinsic, args } => match intrinsic {
                Intrinsic::Math(_) => args.iter().all(|a| self.stable(a)),
                i => i.is_index() || matches!(i, Intrinsic::WarpSize | Intrinsic::LaneId),
            },
            ExprKind::Binary { op, lhs, rhs } => {
                !matches!(op, BinOp::Div | BinOp::Rem) && self.stable(lhs) && self.stable(rhs)
            }
            ExprKind::Unary { operand, .. } => self.stable(operand),
            ExprKind::Cast { value, .. } => self.stable(value),
            ExprKind::Select { cond, then, els } => {
                self.stable(cond) && self.stable(then) && self.stable(els)
            }
            ExprKind::Field { base, .. } => self.stable(base),
            _ => false,
        }
    }

    fn value_inner(&mut self, e: &syn::Expr, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&e);
        match e {
            syn::Expr::Lit(l) => self.literal(&l.lit, false),
            syn::Expr::Paren(p) => self.value(&p.expr, pre).map(|v| TExpr { span, ..v }),
            syn::Expr::Group(g) => self.value(&g.expr, pre),
            syn::Expr::Path(p) => self.path_value(p),
            syn::Expr::Binary(b) => self.binary(b, pre),
            syn::Expr::Unary(u) => self.unary(u, pre),
            syn::Expr::Cast(c) => self.cast(c, pre),
            syn::Expr::Index(ix) => self.index(ix, pre),
            syn::Expr::If(i) => self.if_value(i, pre),
            syn::Expr::Block(b) => {
                if let Some(l) = &b.label {
                    return Err(self
                        .errs
                        .spanned(l, "labeled blocks are not supported in kernels"));
                }
                self.value_block(&b.block, pre, "a block used as a value")
            }
            syn::Expr::Call(c) => self.call(c, pre),
            syn::Expr::MethodCall(m) => self.method_call(m, pre),
            syn::Expr::Repeat(r) => self.local_array(r, pre),
            syn::Expr::Match(m) => self.match_value(m, pre),
            syn::Expr::Field(f) => self.field_value(f, pre),
            syn::Expr::Struct(s) => self.record_lit(s, pre),
            syn::Expr::Macro(m) => Err(self.macro_error(&m.mac)),
            _ => Err(self.unsupported(e)),
        }
    }

    /// The error for an expression form kernels do not support.
    fn unsupported(&mut self, e: &syn::Expr) -> crate::errors::Failed {
        let msg = match e {
            syn::Expr::Closure(_) => "closures are not supported in kernels; write a #[device] function and call it",
            syn::Expr::Reference(_) => "references (`&x`) are not supported in kernels; use the value itself (buffers are passed by name)",
            syn::Expr::Tuple(_) => "tuples are not supported in kernels; use one variable per value",
            syn::Expr::Unsafe(_) => "`unsafe` is not allowed in kernels: every access in a kernel is checked",
            syn::Expr::Async(_) | syn::Expr::Await(_) => "`async`/`.await` are not supported in kernels",
            syn::Expr::Array(_) => "array literals `[a, b, …]` are not supported in kernels; declare `let mut t = [0.0f32; N];` and assign its elements",
            syn::Expr::Range(_) => "ranges can only be used as the bounds of a `for` loop (`for i in a..b`)",
            syn::Expr::Try(_) => "`?` is not supported in kernels",
            syn::Expr::Let(_) => "`let` in a condition (`if let`, `while let`) is not supported in kernels",
            syn::Expr::Assign(_) => "an assignment has no value; use it as a statement",
            syn::Expr::While(_) | syn::Expr::Loop(_) | syn::Expr::ForLoop(_) => {
                "a loop has no value in kernels; use it as a statement"
            }
            syn::Expr::Break(_) | syn::Expr::Continue(_) | syn::Expr::Return(_) => {
                "`break`, `continue` and `return` can only be used as statements in kernels"
            }
            syn::Expr::Infer(_) => "`_` is not a value",
            _ => "this expression is not supported in kernels",
        };
        self.errs.spanned(e, msg)
    }

    /// The error for a macro invocation.
    pub fn macro_error(&mut self, mac: &syn::Macro) -> crate::errors::Failed {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let msg = if name == "vec" {
            format!("`vec!` allocates, and kernels cannot allocate; {ALLOCATION_ADVICE}")
        } else if matches!(name.as_str(), "format" | "write" | "writeln") {
            format!("`{name}!` builds a string, and kernels compute on numbers and `bool`s only: write results into a `&mut [T]` buffer")
        } else {
            format!("macros (`{name}!`) are not supported in kernels; write the code out, or call a #[device] function")
        };
        self.errs.spanned(mac, msg)
    }

    // ---- literals, variables, constants ----

    /// A numeric or bool literal; `negated` folds a leading `-` into it.
    pub fn literal(&mut self, lit: &syn::Lit, negated: bool) -> Lowered<TExpr> {
        let span = Loc::of(&lit);
        let (mut digits, suffix, float) = match lit {
            syn::Lit::Bool(b) => {
                return Ok(self.mk(ExprKind::Const(Const::Bool(b.value)), Ty::BOOL, span))
            }
            syn::Lit::Int(i) => (i.base10_digits(), i.suffix(), false),
            syn::Lit::Float(f) => (f.base10_digits(), f.suffix(), true),
            syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => {
                return Err(self.errs.at(span, "string literals are not supported in kernels: kernels compute on numbers and `bool`s"))
            }
            syn::Lit::Char(_) | syn::Lit::Byte(_) => {
                return Err(self.errs.at(span, "character literals are not supported in kernels: kernels compute on numbers and `bool`s; write the code as an integer"))
            }
            _ => return Err(self.errs.at(span, "unsupported literal in a kernel")),
        };
        // A negative literal of a pattern (`-1 => …`) carries its sign.
        let mut negated = negated;
        if let Some(d) = digits.strip_prefix('-') {
            digits = d;
            negated = !negated;
        }
        let ty = match suffix {
            "" if float => self.tys.fresh(Kind::Float, span),
            "" => self.tys.fresh(Kind::Int, span),
            s => match Scalar::from_name(s) {
                Some(sc) if sc != Scalar::Bool && (!float || sc.is_float()) => Ty::Scalar(sc),
                _ => {
                    return Err(self
                        .errs
                        .at(span, format!("invalid suffix `{s}` for a number literal")))
                }
            },
        };
        let idx = self.lits.len();
        self.lits.push(PendingLit {
            digits: digits.to_string(),
            negated,
            ty,
            span,
        });
        Ok(TExpr {
            e: spoc_ir::Expr {
                kind: ExprKind::Const(Const::U64(idx as u64)),
                ty: spoc_ir::Type::Pending(spoc_ir::PendingType::Literal(idx as u32)),
            },
            ty,
            span,
        })
    }

    /// The variable a single-name path refers to.
    pub fn var_of_path(&mut self, p: &syn::ExprPath) -> Lowered<VarId> {
        let Some(ident) = p.path.get_ident().filter(|_| p.qself.is_none()) else {
            return Err(self.errs.spanned(p, "expected a variable name"));
        };
        let name = crate::lower::ident_name(ident);
        match self.lookup(&name) {
            // Its `let` failed and was reported: no second error.
            Some(id) if self.vars[id.0 as usize].poisoned => Err(crate::errors::Failed),
            Some(id) => Ok(id),
            None if is_constant_name(&name) => Err(self.errs.spanned(
                ident,
                format!("cannot find value `{name}` in this kernel: constants and statics declared outside the kernel (`const {name}: f32 = …;`) are not visible to #[kernel] and #[device] bodies; pass the value as a parameter, or write the literal (with its suffix: `2.0f32`)"),
            )),
            None => Err(self
                .errs
                .spanned(ident, format!("cannot find value `{name}` in this scope"))),
        }
    }

    fn path_value(&mut self, p: &syn::ExprPath) -> Lowered<TExpr> {
        let span = Loc::of(&p);
        if p.qself.is_none() && p.path.segments.len() > 1 {
            return match crate::consts::lookup(&p.path) {
                Some((c, s)) => Ok(self.mk(ExprKind::Const(c), Ty::Scalar(s), span)),
                None => Err(self.errs.spanned(
                    p,
                    "unknown constant in a kernel: supported are `f32::MAX`-style bounds of scalar types and `std::f32::consts::PI`-style float constants; constants declared outside the kernel are not visible to it (pass the value as a parameter, make it a const parameter of the kernel — `fn k<const N: u32>` with `#[kernel(instances(…))]` — or write the literal)",
                )),
            };
        }
        let id = self.var_of_path(p)?;
        let ty = self.vars[id.0 as usize].ty;
        Ok(self.mk(ExprKind::Var(id), ty, span))
    }

    // ---- operators ----

    fn binary(&mut self, b: &syn::ExprBinary, pre: &mut Block) -> Lowered<TExpr> {
        use syn::BinOp as S;
        let op = match b.op {
            S::Add(_) => BinOp::Add,
            S::Sub(_) => BinOp::Sub,
            S::Mul(_) => BinOp::Mul,
            S::Div(_) => BinOp::Div,
            S::Rem(_) => BinOp::Rem,
            S::And(_) => return self.short_circuit(b, BinOp::LogicalAnd, pre),
            S::Or(_) => return self.short_circuit(b, BinOp::LogicalOr, pre),
            S::BitXor(_) => BinOp::BitXor,
            S::BitAnd(_) => BinOp::BitAnd,
            S::BitOr(_) => BinOp::BitOr,
            S::Shl(_) => BinOp::Shl,
            S::Shr(_) => BinOp::Shr,
            S::Eq(_) => BinOp::Eq,
            S::Lt(_) => BinOp::Lt,
            S::Le(_) => BinOp::Le,
            S::Ne(_) => BinOp::Ne,
            S::Ge(_) => BinOp::Ge,
            S::Gt(_) => BinOp::Gt,
            _ => {
                return Err(self.errs.spanned(
                    b,
                    "a compound assignment (`+=`, …) has no value; use it as a statement",
                ))
            }
        };
        let (l, r) = self.operands(&b.left, &b.right, Self::scalar, pre)?;
        let span = Loc::of(&b);
        let is_vector = |t: Ty| matches!(t, Ty::Vector(..));
        if is_vector(self.tys.resolve(l.ty)) || is_vector(self.tys.resolve(r.ty)) {
            return self.vector_binary(op, l, r, span, pre);
        }
        self.binary_op(op, l, r, span).map(|v| TExpr { span, ..v })
    }

    /// `l op r` when an operand is a vector (`F32x4`, …): lane by lane, as a `VectorLit` of the
    /// lanes' `op` (`a + b`, `a - b`, `a * b`, `a / b`, `a % b`), or with a scalar of the lane type on either side of `*` and on the right of `/` (in
    /// every lane). Each operand is evaluated once, left first. One operand must be a vector.
    pub(crate) fn vector_binary(
        &mut self,
        op: BinOp,
        l: TExpr,
        r: TExpr,
        span: Loc,
        pre: &mut Block,
    ) -> Lowered<TExpr> {
        let vector = |t: Ty| match t {
            Ty::Vector(s, n) => Some((s, n)),
            _ => None,
        };
        let (lt, rt) = (self.tys.resolve(l.ty), self.tys.resolve(r.ty));
        let Some((lane, lanes)) = vector(lt).or(vector(rt)) else {
            unreachable!("one operand is a vector")
        };
        let tname = crate::types::vector_name(lane, lanes);
        let sym = op.symbol();
        let arith = matches!(
            op,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem
        );
        if !arith {
            return Err(self.operator_refused(op, span, &format!("`{tname}` vectors"), "lanes"));
        }
        // Which sides are vectors; a scalar side must be the lane type.
        let (lv, rv) = (vector(lt).is_some(), vector(rt).is_some());
        let scalar_ok = match (lv, rv) {
            (true, true) => true,
            (true, false) => matches!(op, BinOp::Mul | BinOp::Div),
            (false, true) => op == BinOp::Mul,
            (false, false) => unreachable!("one side is a vector"),
        };
        let vty = Ty::Vector(lane, lanes);
        let what = if scalar_ok && !(lv && rv) {
            format!(
                "mismatched types: `{sym}` of a `{tname}` and a scalar needs a `{}`",
                lane.name()
            )
        } else {
            format!("mismatched types: `{sym}` on vectors needs two `{tname}`s (a scalar may multiply a vector, or divide it from the right)")
        };
        let check = |me: &mut Self, side: &TExpr, is_vec: bool| {
            let want = if is_vec || !scalar_ok {
                vty
            } else {
                Ty::Scalar(lane)
            };
            me.unify_at(want, side.ty, side.span, &what)
        };
        check(self, &l, lv)?;
        check(self, &r, rv)?;
        // Evaluated once each, in order.
        let once = |me: &mut Self, v: TExpr, pre: &mut Block| {
            if matches!(v.e.kind, ExprKind::Var(_) | ExprKind::Const(_)) {
                v
            } else {
                me.spill(v, pre)
            }
        };
        let l = once(self, l, pre);
        let r = once(self, r, pre);
        let lane_of = |me: &mut Self, v: &TExpr, is_vec: bool, i: usize| {
            if !is_vec {
                return TExpr {
                    e: v.e.clone(),
                    ty: v.ty,
                    span: v.span,
                };
            }
            let kind = ExprKind::Field {
                base: Box::new(v.e.clone()),
                field: spoc_ir::LANE_NAMES[i].into(),
            };
            me.mk(kind, Ty::Scalar(lane), v.span)
        };
        let mut out = Vec::with_capacity(usize::from(lanes));
        for i in 0..usize::from(lanes) {
            let (a, b) = (lane_of(self, &l, lv, i), lane_of(self, &r, rv, i));
            out.push(self.binary_op(op, a, b, span)?.e);
        }
        Ok(self.mk(ExprKind::VectorLit(out), vty, span))
    }

    /// The error for operator `op` on values it is not defined on (`on`: "records (`P`)",
    /// "`F32x4` vectors"), advising to compare or use their `parts` ("fields", "lanes").
    fn operator_refused(
        &mut self,
        op: BinOp,
        span: Loc,
        on: &str,
        parts: &str,
    ) -> crate::errors::Failed {
        let verb = if op.is_comparison() { "compare" } else { "use" };
        self.errs.at(
            span,
            format!(
                "`{}` cannot be applied to {on}; {verb} their {parts}",
                op.symbol()
            ),
        )
    }

    /// Type-checks `l op r` and builds it. `span` is where a type error is reported.
    pub fn binary_op(&mut self, op: BinOp, l: TExpr, r: TExpr, span: Loc) -> Lowered<TExpr> {
        let sym = op.symbol();
        let result = if op.is_shift() {
            self.constrain_at(
                l.ty,
                Kind::Int,
                l.span,
                &format!("`{sym}` needs integer operands"),
            )?;
            self.constrain_at(
                r.ty,
                Kind::Int,
                r.span,
                &format!("`{sym}` needs integer operands"),
            )?;
            l.ty
        } else {
            let hint = self.half_literal_hint(l.ty, r.ty);
            if self.tys.unify(l.ty, r.ty).is_err() {
                let (a, b) = (self.tys.show(l.ty), self.tys.show(r.ty));
                let advice = if hint.is_empty() {
                    "; convert one with `as`".to_string()
                } else {
                    hint
                };
                return Err(self.errs.at(
                    span,
                    format!("mismatched types: `{sym}` needs operands of one type, found {a} and {b}{advice}"),
                ));
            }
            let is_record = match self.tys.resolve(l.ty) {
                Ty::Record(_) => true,
                Ty::Var(v) => self.tys.kind_of(v) == Kind::Record,
                _ => false,
            };
            if is_record {
                let shown = format!("records ({})", self.tys.show(l.ty));
                return Err(self.operator_refused(op, span, &shown, "fields"));
            }
            let (kind, what) = match op {
                BinOp::Eq | BinOp::Ne => (Kind::Any, "scalars"),
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                    (Kind::IntOrBool, "integers or `bool`s")
                }
                _ => (Kind::Numeric, "numbers"),
            };
            self.constrain_at(l.ty, kind, span, &format!("`{sym}` needs {what}"))?;
            if op.is_comparison() {
                Ty::BOOL
            } else {
                l.ty
            }
        };
        let kind = ExprKind::Binary {
            op,
            lhs: Box::new(l.e),
            rhs: Box::new(r.e),
        };
        Ok(self.mk(kind, result, span))
    }

    /// `a && b` / `a || b`. When `b` needs hoisted statements, they must run only if `b` is
    /// evaluated: `let t = a; if t { …; t = b }` (`if !t` for `||`).
    fn short_circuit(&mut self, b: &syn::ExprBinary, op: BinOp, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&b);
        let sym = op.symbol();
        let l = self.scalar(&b.left, pre);
        let mut rpre = Block::new();
        let r = self.scalar(&b.right, &mut rpre);
        let (l, r) = (l?, r?);
        let what = format!("mismatched types: `{sym}` needs `bool` operands");
        self.unify_at(Ty::BOOL, l.ty, l.span, &what)?;
        self.unify_at(Ty::BOOL, r.ty, r.span, &what)?;
        if rpre.is_empty() {
            let kind = ExprKind::Binary {
                op,
                lhs: Box::new(l.e),
                rhs: Box::new(r.e),
            };
            return Ok(self.mk(kind, Ty::BOOL, span));
        }
        let t = self.temp(Ty::BOOL);
        pre.push(self.stmt(
            StmtKind::Let {
                var: t,
                init: Some(l.e),
            },
            span,
        ));
        let mut cond = self.mk(ExprKind::Var(t), Ty::BOOL, span);
        if op == BinOp::LogicalOr {
            cond = self.mk(
                ExprKind::Unary {
                    op: UnOp::Not,
                    operand: Box::new(cond.e),
                },
                Ty::BOOL,
                span,
            );
        }
        rpre.push(self.stmt(
            StmtKind::Assign {
                target: LValue::Var(t),
                value: r.e,
            },
            span,
        ));
        pre.push(self.stmt(
            StmtKind::If {
                cond: cond.e,
                then: rpre,
                els: None,
            },
            span,
        ));
        Ok(self.mk(ExprKind::Var(t), Ty::BOOL, span))
    }

    fn unary(&mut self, u: &syn::ExprUnary, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&u);
        match u.op {
            syn::UnOp::Neg(_) => {
                if let syn::Expr::Lit(syn::ExprLit {
                    lit: lit @ (syn::Lit::Int(_) | syn::Lit::Float(_)),
                    ..
                }) = &*u.expr
                {
                    let v = self.literal(lit, true)?;
                    return Ok(TExpr { span, ..v });
                }
                let v = self.scalar(&u.expr, pre)?;
                self.constrain_at(v.ty, Kind::Numeric, span, "cannot apply unary operator `-`")?;
                self.deferred.push(Deferred::Signed {
                    ty: v.ty,
                    span,
                    what: "unary operator `-`",
                });
                let kind = ExprKind::Unary {
                    op: UnOp::Neg,
                    operand: Box::new(v.e),
                };
                Ok(self.mk(kind, v.ty, span))
            }
            syn::UnOp::Not(_) => {
                let v = self.scalar(&u.expr, pre)?;
                self.constrain_at(
                    v.ty,
                    Kind::IntOrBool,
                    span,
                    "cannot apply unary operator `!`",
                )?;
                let kind = ExprKind::Unary {
                    op: UnOp::Not,
                    operand: Box::new(v.e),
                };
                Ok(self.mk(kind, v.ty, span))
            }
            _ => Err(self.errs.spanned(
                u,
                "`*` dereference is not supported: kernels have no references",
            )),
        }
    }

    fn cast(&mut self, c: &syn::ExprCast, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&c);
        let v = self.scalar(&c.expr, pre);
        let to = crate::sig::scalar_type(&c.ty, &mut self.errs);
        let (v, to) = (v?, to?);
        if to.is_half() {
            return Err(self.errs.spanned(
                c,
                format!("`as` cannot convert to `{0}` (Rust's `as` is for primitive types, and `{0}` is the `half` crate's): write `{0}::from_f32(x)`", to.name()),
            ));
        }
        if let Ty::Scalar(h) = self.tys.resolve(v.ty) {
            if h.is_half() {
                let via = if to == Scalar::F32 {
                    String::new()
                } else {
                    format!(" as {}", to.name())
                };
                return Err(self.errs.spanned(
                    c,
                    format!("`as` cannot convert {} (Rust's `as` is for primitive types, and `{}` is the `half` crate's): write `x.to_f32(){via}`", h.a_name(), h.name()),
                ));
            }
        }
        self.deferred.push(Deferred::Cast {
            from: v.ty,
            to,
            span,
        });
        let kind = ExprKind::Cast {
            value: Box::new(v.e),
            to: to.ir(),
        };
        Ok(self.mk(kind, Ty::Scalar(to), span))
    }

    // ---- indices ----

    /// An index: a `usize` value.
    pub fn index_expr(&mut self, index: &syn::Expr, pre: &mut Block) -> Lowered<TExpr> {
        if let syn::Expr::Range(_) = index {
            return Err(self.errs.spanned(
                index,
                "slicing (`x[a..b]`) is not supported in kernels; index one element at a time",
            ));
        }
        let i = self.scalar(index, pre)?;
        self.unify_at(
            Ty::USIZE,
            i.ty,
            i.span,
            "mismatched types: buffers are indexed by `usize` (convert with `as usize`)",
        )?;
        Ok(i)
    }

    // ---- `if` as a value ----

    fn if_value(&mut self, i: &syn::ExprIf, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&i);
        let Some((_, els)) = &i.else_branch else {
            return Err(self.errs.spanned(
                i,
                "`if` without `else` has no value; add an `else` branch or use it as a statement",
            ));
        };
        if let syn::Expr::Let(l) = &*i.cond {
            return Err(self.errs.spanned(
                l,
                "`if let` is not supported in kernels; write a plain `bool` condition",
            ));
        }
        let cond = self.scalar(&i.cond, pre);
        let mut then_pre = Block::new();
        let then = self.value_block(
            &i.then_branch,
            &mut then_pre,
            "a branch of an `if` used as a value",
        );
        let mut else_pre = Block::new();
        let els = match &**els {
            syn::Expr::Block(b) => self.value_block(
                &b.block,
                &mut else_pre,
                "a branch of an `if` used as a value",
            ),
            e @ syn::Expr::If(_) => self.scalar(e, &mut else_pre),
            e => Err(self.errs.spanned(e, "expected a block after `else`")),
        };
        let (cond, then, els) = (cond?, then?, els?);
        self.unify_at(
            Ty::BOOL,
            cond.ty,
            cond.span,
            "mismatched types: the `if` condition must be a `bool`",
        )?;
        for b in [&then, &els] {
            if let Ty::Buffer { .. } = self.tys.resolve(b.ty) {
                return Err(self.errs.at(
                    b.span,
                    "an `if` cannot choose between buffers; index them in each branch",
                ));
            }
        }
        if self.tys.unify(then.ty, els.ty).is_err() {
            let (a, b) = (self.tys.show(then.ty), self.tys.show(els.ty));
            return Err(self.errs.at(
                els.span,
                format!("`if` and `else` have incompatible types: {a} and {b}"),
            ));
        }
        let ty = then.ty;
        // A select may evaluate both sides on some targets (SPIR-V's `OpSelect`): a branch that
        // writes memory takes the statement form.
        let pure = !has_effects(&then.e) && !has_effects(&els.e);
        if pure && then_pre.is_empty() && else_pre.is_empty() {
            let kind = ExprKind::Select {
                cond: Box::new(cond.e),
                then: Box::new(then.e),
                els: Box::new(els.e),
            };
            return Ok(self.mk(kind, ty, span));
        }
        // Branches with statements: `let t; if c { …; t = a } else { …; t = b }`.
        let t = self.temp(ty);
        pre.push(self.stmt(StmtKind::Let { var: t, init: None }, span));
        then_pre.push(self.stmt(
            StmtKind::Assign {
                target: LValue::Var(t),
                value: then.e,
            },
            then.span,
        ));
        else_pre.push(self.stmt(
            StmtKind::Assign {
                target: LValue::Var(t),
                value: els.e,
            },
            els.span,
        ));
        pre.push(self.stmt(
            StmtKind::If {
                cond: cond.e,
                then: then_pre,
                els: Some(else_pre),
            },
            span,
        ));
        Ok(self.mk(ExprKind::Var(t), ty, span))
    }
}

/// True for a name written like a constant or static (`SCALE`, `N_2`): upper case, digits and
/// underscores, with at least one letter.
fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// What to write instead of a `Vec` in a kernel.
pub(crate) const ALLOCATION_ADVICE: &str = "for scratch space per thread, declare a local array with a literal length (`let mut a = [0.0f32; 16];`); for data in and out, take a `&mut [T]` buffer parameter";

/// How deep an IR expression may nest before [`Lowerer::value`] binds it to a temporary.
const SPILL_DEPTH: u32 = 24;

/// True if `e` nests deeper than `n` levels (looking no deeper than that).
fn deeper_than(e: &Expr, n: u32) -> bool {
    n == 0 || children(e).any(|c| deeper_than(c, n - 1))
}

/// True if evaluating `e` can change memory: it calls a helper (which may write buffers) or is
/// an atomic.
pub(crate) fn has_effects(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Call { .. }
            | ExprKind::Intrinsic {
                intrinsic: Intrinsic::Atomic(_),
                ..
            }
    ) || children(e).any(has_effects)
}
