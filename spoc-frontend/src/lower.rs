//! Lowering of a function body to IR, with type checking: the shared state ([`Lowerer`]) and the
//! entry point ([`lower_fn`]). Statements are in `lower_stmt.rs`, expressions in `lower_expr.rs`,
//! calls and methods in `lower_call.rs`, `for` ranges in `lower_range.rs`, shared and local
//! arrays in `lower_array.rs`, atomics, fences and warp operations in `lower_intrinsic.rs`,
//! `match` in `lower_match.rs`, and the final substitution of inferred types in `resolve.rs`.
//!
//! While lowering, an IR expression whose type is not known yet carries a placeholder type
//! (`Type::Pending(PendingType::Var(N))` for type variable N, `PendingType::Literal(N)` for
//! pending literal N);
//! `resolve.rs` replaces every placeholder once inference is done. No placeholder survives a
//! successful [`lower_fn`].

use crate::errors::{Errors, Loc, Lowered};
use crate::sig::{self, ParamSig};
use crate::types::{Kind, Scalar, Ty, Unifier};
use spoc_ir::{
    Block, Expr, ExprKind, Param, SharedDecl, SrcLoc, Stmt, StmtKind, Type, VarDecl, VarId, VarKind,
};

/// A variable while lowering.
pub struct VarInfo {
    pub name: String,
    pub ty: Ty,
    pub mutable: bool,
    pub kind: VarKind,
    /// Declared by a `let` that failed to lower: uses of it fail silently, so that one error
    /// does not bring "cannot find value" errors after it.
    pub poisoned: bool,
}

/// A call of a `#[device]` helper: the IR knows it by `name`; the generated Rust reaches it through
/// `path` (as written, the helper's own name last).
#[derive(Clone)]
pub struct HelperUse {
    pub name: String,
    pub path: syn::Path,
    pub span: Loc,
}

/// The types at one call of a helper.
pub struct HelperCall {
    /// Index of the callee in [`Lowerer::helpers`].
    pub helper: usize,
    /// The call's function path (where "not a `#[device]` function" and arity errors point).
    pub span: Loc,
    pub args: Vec<CallArg>,
    pub ret: Ty,
}

/// One argument of a helper call.
pub struct CallArg {
    pub ty: Ty,
    pub span: Loc,
    /// What the argument is, for the hint of a type mismatch.
    pub hint: ArgHint,
    /// Its type was untyped before the call settled it (see `resolve.rs`): a mismatch means the
    /// guess was wrong, and the hint asks for a suffix or an annotation.
    pub guessed: bool,
    /// The buffer variable the argument names (a buffer parameter of the function), if it is
    /// one: two arguments naming one buffer are checked against the helper's `&mut [T]`
    /// parameters (`checks.rs`).
    pub buffer: Option<spoc_ir::VarId>,
}

/// Two arguments of one helper call that name the same buffer (`shift(out, out, n)`): an
/// error if the helper takes either as `&mut [T]`, which only its signature tells (`checks.rs`).
pub struct SameBuffer {
    /// The index of the first argument naming it.
    pub first: usize,
    /// The index of a later argument naming it (where the error points).
    pub second: usize,
    /// The buffer's name.
    pub name: String,
}

/// What an argument expression is, for error hints.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgHint {
    /// A numeric literal without suffix: its digits as written (with a leading `-` if negated).
    Literal(String),
    /// A variable.
    Var(String),
    Other,
}

/// A checked call of a helper, with final types: what `checks.rs` verifies against the
/// helper's real signature at compile time.
pub struct CallCheck {
    /// Index of the callee in [`LoweredFn::helpers`].
    pub helper: usize,
    pub span: Loc,
    /// Each argument's final type, span, hint and whether its type was guessed.
    pub args: Vec<(Ty, Loc, ArgHint, bool)>,
    /// The type the call's result is used as (`Unit` for a call statement).
    pub ret: Ty,
    /// The pairs of arguments that name one buffer.
    pub same_buffers: Vec<SameBuffer>,
}

/// An integer or float literal whose IR constant is made once its type is known.
pub struct PendingLit {
    /// Base-10 digits (and exponent, for floats) as written, without suffix or underscores.
    pub digits: String,
    pub negated: bool,
    pub ty: Ty,
    pub span: Loc,
}

/// A check that needs the final types.
pub enum Deferred {
    /// Unary `-` or `abs` on an unsigned type is an error.
    Signed {
        ty: Ty,
        span: Loc,
        what: &'static str,
    },
    /// `value as to`: `bool` targets, and `bool` to float, are errors.
    Cast { from: Ty, to: Scalar, span: Loc },
    /// An operation the 16-bit floats do not have (a shuffle, an atomic, `abs`): an error if
    /// `ty` turns out `f16` or `bf16`; `advice` follows "`f16` …".
    NotHalf { ty: Ty, span: Loc, advice: String },
    /// A `match` on an integer: its patterns' constants must fit the scrutinee's type, its
    /// ranges must not be empty, and its arms must cover every value (`lower_match.rs`).
    Match(crate::lower_match::MatchCheck),
}

/// An expression with its checker type.
pub struct TExpr {
    pub e: Expr,
    pub ty: Ty,
    pub span: Loc,
}

/// The lowering state of one function.
pub struct Lowerer {
    pub errs: Errors,
    pub tys: Unifier,
    pub vars: Vec<VarInfo>,
    scopes: Vec<Vec<(String, VarId)>>,
    pub helpers: Vec<HelperUse>,
    pub lits: Vec<PendingLit>,
    pub deferred: Vec<Deferred>,
    /// Every helper call's argument and result types: a helper's signature is invisible here, so
    /// an untyped literal argument is settled from its call (see `resolve.rs`), never defaulted.
    pub helper_calls: Vec<HelperCall>,
    /// The function's own name (a call of it is recursion).
    pub own_name: String,
    /// `Unit` for kernels.
    pub ret: Ty,
    pub is_kernel: bool,
    pub(crate) loop_depth: u32,
    /// How many blocks the statement being lowered sits in.
    pub(crate) block_depth: u32,
    /// The "blocks nested too deeply" error has been reported.
    pub(crate) too_deep: bool,
    /// The shared arrays the kernel declares (hoisted to the kernel: [`spoc_ir::Kernel::shared`]).
    pub shared: Vec<SharedDecl>,
    /// The constants of `match` patterns, made once the scrutinee's type is known; a pattern
    /// holds `Const::U64(k)` for entry `k` until `resolve.rs` replaces it.
    pub pat_consts: Vec<crate::lower_match::PatConst>,
    /// The first access of each record field (`lower_record.rs`).
    pub field_uses: Vec<crate::lower_record::FieldUse>,
    /// Every record literal.
    pub record_lits: Vec<crate::lower_record::RecordLitUse>,
    /// The variables of the `for k in unroll(…)` loops, with the span of the range
    /// (`spoc_ir::unroll`).
    pub unroll_loops: Vec<(VarId, Loc)>,
    /// The `const` items of the body, by name, with their values (refused where declared; an
    /// array length naming one is checked against its value, `lower_array.rs`).
    pub body_consts: Vec<(String, syn::Expr)>,
}

/// A lowered function: what a [`spoc_ir::Kernel`] or [`spoc_ir::Function`] is built from.
pub struct LoweredFn {
    pub params: Vec<Param>,
    pub vars: Vec<VarDecl>,
    pub body: Block,
    pub ret: Type,
    /// The shared arrays a kernel declares (none for device functions).
    pub shared: Vec<SharedDecl>,
    /// Helpers called directly, each name once, in first-call order (and a generic helper once
    /// more for each other instance its calls use, `resolve.rs`).
    pub helpers: Vec<HelperUse>,
    /// Every helper call, with final types.
    pub calls: Vec<CallCheck>,
    /// The checker types of the parameters and of the result.
    pub param_tys: Vec<Ty>,
    pub ret_ty: Ty,
    /// The record types the function names (`Ty::Record` indexes them).
    pub records: Vec<crate::types::RecordUse>,
    /// The compile-time checks of its field accesses.
    pub field_checks: Vec<crate::lower_record::FieldCheck>,
    /// Its record literals (each must give every field).
    pub record_lits: Vec<crate::lower_record::RecordLitUse>,
}

/// Checks and lowers `item` (a kernel if `is_kernel`, else a device function).
///
/// # Errors
/// Every problem found, each with its span.
pub fn lower_fn(item: &syn::ItemFn, is_kernel: bool) -> Result<LoweredFn, Errors> {
    lower_fn_noted(item, is_kernel, None)
}

/// [`lower_fn`], every error message ending with `note` (the instance of a generic fn).
///
/// # Errors
/// Every problem found, each with its span.
pub fn lower_fn_noted(
    item: &syn::ItemFn,
    is_kernel: bool,
    note: Option<String>,
) -> Result<LoweredFn, Errors> {
    let mut errs = Errors::with_note(note);
    if !ascii_names(item, &mut errs) | !body_attributes(&item.block, &mut errs) {
        return Err(errs);
    }
    let what = if is_kernel {
        "kernel"
    } else {
        "device function"
    };
    let mut tys = Unifier::default();
    let common = sig::check_common(&item.sig, what, &mut errs);
    let params = sig::params(&item.sig, &mut errs, &mut tys);
    let ret = if is_kernel {
        sig::kernel_return(&item.sig, &mut errs).map(|()| Ty::Unit)
    } else {
        sig::device_return(&item.sig, &mut errs, &mut tys)
    };
    let (Ok(()), Ok(params), Ok(ret)) = (common, params, ret) else {
        return Err(errs);
    };
    if is_kernel {
        let mut ok = true;
        for p in &params {
            if let Ty::Scalar(h) = p.ty {
                if h.is_half() {
                    errs.at(
                        p.span,
                        format!("`{0}` kernel parameters are not supported yet (buffers `&[{0}]` are); pass an `f32` and convert it in the kernel: `let {1} = {0}::from_f32({1});`", h.name(), p.name),
                    );
                    ok = false;
                }
            }
            if let Ty::Record(r) = p.ty {
                let name = tys.record_name(r).to_string();
                errs.at(
                    p.span,
                    format!("records cannot be passed by value to a kernel yet; pass a one-element buffer (`{0}: &[{name}]`, launched with `&dev.upload(&[value])?`) and read `{0}[0]`", p.name),
                );
                ok = false;
            }
        }
        if !ok {
            return Err(errs);
        }
    }
    let mut l = Lowerer::new(item.sig.ident.to_string(), is_kernel, ret, errs, tys);
    let param_tys: Vec<Ty> = params.iter().map(|p| p.ty).collect();
    let params: Vec<Param> = params.iter().map(|p| l.declare_param(p)).collect();
    let body = l.fn_body(&item.block);
    l.finish(params, body).map(|mut f| {
        f.param_tys = param_tys;
        f.ret_ty = ret;
        f
    })
}

impl Lowerer {
    fn new(own_name: String, is_kernel: bool, ret: Ty, errs: Errors, tys: Unifier) -> Lowerer {
        Lowerer {
            errs,
            tys,
            vars: Vec::new(),
            scopes: vec![Vec::new()],
            helpers: Vec::new(),
            lits: Vec::new(),
            deferred: Vec::new(),
            helper_calls: Vec::new(),
            own_name,
            ret,
            is_kernel,
            loop_depth: 0,
            block_depth: 0,
            too_deep: false,
            shared: Vec::new(),
            pat_consts: Vec::new(),
            field_uses: Vec::new(),
            record_lits: Vec::new(),
            unroll_loops: Vec::new(),
            body_consts: Vec::new(),
        }
    }

    fn declare_param(&mut self, p: &ParamSig) -> Param {
        let name = ident_name(&p.name);
        let var = self.declare(&name, p.ty, false, VarKind::Param);
        let (ty, mutable) = match p.ty {
            Ty::Buffer { mutable, .. } => (self.ir_ty(p.ty), mutable),
            t => (self.ir_ty(t), false),
        };
        Param {
            var,
            name,
            ty,
            mutable,
        }
    }

    /// Adds a variable and brings it into scope under `name`.
    pub fn declare(&mut self, name: &str, ty: Ty, mutable: bool, kind: VarKind) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(VarInfo {
            name: name.to_string(),
            ty,
            mutable,
            kind,
            poisoned: false,
        });
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((name.to_string(), id));
        }
        id
    }

    /// Brings `name` into scope as a variable whose declaration failed (its error is already
    /// reported): later uses of it fail without errors of their own.
    pub fn declare_poisoned(&mut self, name: &str) {
        let ty = self
            .tys
            .fresh(Kind::Any, Loc::from(proc_macro2::Span::call_site()));
        let id = self.declare(name, ty, true, VarKind::Local);
        self.vars[id.0 as usize].poisoned = true;
    }

    /// A compiler-made mutable local, not nameable from the source.
    pub fn temp(&mut self, ty: Ty) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(VarInfo {
            name: "tmp".into(),
            ty,
            mutable: true,
            kind: VarKind::Local,
            poisoned: false,
        });
        id
    }

    /// The innermost variable called `name`.
    pub fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|&(_, id)| id)
    }

    pub(crate) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(crate) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// The IR type of `t`, or a placeholder naming its type variable.
    pub fn ir_ty(&self, t: Ty) -> Type {
        match self.tys.ir_type(t) {
            Some(ty) => ty,
            None => match self.tys.resolve(t) {
                Ty::Var(v) => Type::Pending(spoc_ir::PendingType::Var(v)),
                Ty::Array {
                    elem, space, len, ..
                } => Type::Array {
                    elem: std::sync::Arc::new(self.ir_ty(Ty::Var(elem))),
                    space: space.ir(),
                    len,
                },
                _ => Type::Unit,
            },
        }
    }

    /// The call of intrinsic `intrinsic` on `args`, of type `ty`, at `span`.
    pub fn mk_intrinsic(
        &self,
        intrinsic: spoc_ir::Intrinsic,
        args: Vec<Expr>,
        ty: Ty,
        span: Loc,
    ) -> TExpr {
        self.mk(ExprKind::Intrinsic { intrinsic, args }, ty, span)
    }

    /// An IR expression of checker type `ty`.
    pub fn mk(&self, kind: ExprKind, ty: Ty, span: Loc) -> TExpr {
        TExpr {
            e: Expr {
                kind,
                ty: self.ir_ty(ty),
            },
            ty,
            span,
        }
    }

    /// Unifies, reporting a mismatch at `span` as `what: expected …, found …`.
    pub fn unify_at(&mut self, expected: Ty, found: Ty, span: Loc, what: &str) -> Lowered<()> {
        let hint = self.half_literal_hint(expected, found);
        match self.tys.unify(expected, found) {
            Ok(()) => Ok(()),
            Err(m) => Err(self.errs.at(span, format!("{what}: {m}{hint}"))),
        }
    }

    /// When one of `a`, `b` is `f16`/`bf16` and the other an unsuffixed literal's type, the
    /// advice to make the 16-bit value with `from_f32` (Rust has no 16-bit float literals);
    /// else `""`.
    pub fn half_literal_hint(&self, a: Ty, b: Ty) -> String {
        for (x, y) in [(a, b), (b, a)] {
            if let (Ty::Scalar(h), Ty::Var(v)) = (self.tys.resolve(x), self.tys.resolve(y)) {
                if h.is_half() && matches!(self.tys.kind_of(v), Kind::Float | Kind::Int) {
                    let t = h.name();
                    return format!("; `{t}` has no literals: write `{t}::from_f32(1.0)`");
                }
            }
        }
        String::new()
    }

    /// Requires `t` to be of `kind`, reporting `what` at `span` otherwise.
    pub fn constrain_at(&mut self, t: Ty, kind: Kind, span: Loc, what: &str) -> Lowered<()> {
        match self.tys.constrain(t, kind) {
            Ok(()) => Ok(()),
            Err(m) => Err(self.errs.at(span, format!("{what}: {m}"))),
        }
    }

    /// A statement with the source location of `span`.
    pub fn stmt(&self, kind: StmtKind, span: Loc) -> Stmt {
        Stmt {
            kind,
            loc: src_loc(span),
        }
    }
}

/// The variable's name as written (`r#type` is `type`).
pub fn ident_name(i: &syn::Ident) -> String {
    let s = i.to_string();
    s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
}

/// The source location of `span` (1-based line and column), when the compiler provides one.
pub fn src_loc(span: Loc) -> Option<SrcLoc> {
    let lc = span.first.start();
    (lc.line > 0).then(|| SrcLoc {
        line: lc.line as u32,
        column: lc.column as u32 + 1,
    })
}

/// Reports each identifier of `item` that is not ASCII (once per name); false if there was one.
/// The names of a kernel, its parameters, locals, helpers and records end up in the generated
/// C, PTX and SPIR-V and in the IR, whose identifiers are ASCII (`[A-Za-z_][A-Za-z0-9_]*`);
/// refusing them here, at the name, is better than a kernel that compiles and then fails at
/// every launch (docs/LANGUAGE.md, "Names").
pub fn ascii_names(item: &syn::ItemFn, errs: &mut Errors) -> bool {
    struct Names<'e> {
        errs: &'e mut Errors,
        seen: Vec<String>,
    }
    impl<'ast> syn::visit::Visit<'ast> for Names<'_> {
        fn visit_ident(&mut self, i: &'ast syn::Ident) {
            let name = ident_name(i);
            if !name.is_ascii() && !self.seen.contains(&name) {
                self.errs.spanned(
                    i,
                    format!("`{name}` is not an ASCII identifier: spoc compiles kernels to C, PTX and SPIR-V, whose names are ASCII; rename it with ASCII letters, digits and `_`"),
                );
                self.seen.push(name);
            }
        }
    }
    let mut v = Names {
        errs,
        seen: Vec::new(),
    };
    syn::visit::Visit::visit_item_fn(&mut v, item);
    v.seen.is_empty()
}

/// Reports each attribute in `body` other than lint levels, docs and `rustfmt::…`; false if
/// there was one.
/// The macro lowers the body as written, so an attribute that changes code (`#[cfg]`, which
/// rustc evaluates inside an attribute macro's input only after the macro ran) would be
/// silently ignored.
pub fn body_attributes(body: &syn::Block, errs: &mut Errors) -> bool {
    struct Attrs<'e> {
        errs: &'e mut Errors,
        ok: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for Attrs<'_> {
        fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
            let p = a.path();
            let lint = ["allow", "expect", "warn", "deny", "doc"]
                .iter()
                .any(|n| p.is_ident(n))
                || p.segments.first().is_some_and(|s| s.ident == "rustfmt");
            if !lint {
                self.errs.spanned(
                    a,
                    "attributes inside a kernel body are not supported, but lint levels (`#[allow(..)]`), docs and `#[rustfmt::skip]`: the macro lowers the body as written, so `#[cfg]` and the like would be ignored",
                );
                self.ok = false;
            }
        }
    }
    let mut v = Attrs { errs, ok: true };
    syn::visit::Visit::visit_block(&mut v, body);
    v.ok
}

/// `e` without the parentheses and invisible groups around it.
pub(crate) fn strip(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip(&p.expr),
        syn::Expr::Group(g) => strip(&g.expr),
        e => e,
    }
}
