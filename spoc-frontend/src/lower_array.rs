//! Arrays: shared arrays (`shared_array::<T, N>()`, `shared_array_2d::<T, R, C>()`,
//! `dynamic_shared::<T>()`), local arrays (`[v; N]`), and element access on them and on buffer
//! parameters (`x[i]`, `tile[r][c]`, as values, assignment targets and atomic targets).
//!
//! A shared array is hoisted to the kernel ([`spoc_ir::Kernel::shared`], a variable of
//! [`VarKind::Shared`]); its `let` emits no statement. A 2-D shared array is a 1-D IR array of
//! `rows * cols` elements, and `tile[r][c]` is `tile[r * cols + c]`.

use crate::errors::{Loc, Lowered};
use crate::lower::strip;
use crate::lower::{ident_name, Lowerer, TExpr};
use crate::types::{ArraySpace, Kind, Scalar, Ty};
use spoc_ir::{BinOp, Block, Const, ExprKind, SharedDecl, VarId, VarKind};

/// The names that declare shared arrays.
pub const SHARED_DECLS: [&str; 3] = ["shared_array", "shared_array_2d", "dynamic_shared"];

/// How an element's array may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A buffer parameter, `&mut [T]` if `mutable`.
    Buffer { mutable: bool },
    /// A shared array: writable by every thread.
    Shared,
    /// A local array: writable if its `let` is `let mut`.
    Local,
}

/// An element of an array (`x[i]`, `tile[r][c]`), its index flattened.
pub struct ElemRef {
    /// The array's variable.
    pub var: VarId,
    /// The array's checker type (a buffer or an array).
    pub array_ty: Ty,
    /// The element's checker type.
    pub elem: Ty,
    /// The flattened index, `usize`.
    pub index: TExpr,
    pub access: Access,
}

impl Lowerer {
    /// The shared-array declaration `init` is (`shared_array::<f32, 256>()`, …), if it is one:
    /// the call and the declaring function's name.
    pub fn shared_decl_call<'a>(&self, init: &'a syn::Expr) -> Option<(&'a syn::ExprCall, String)> {
        let syn::Expr::Call(c) = strip(init) else {
            return None;
        };
        let syn::Expr::Path(p) = &*c.func else {
            return None;
        };
        if p.qself.is_some() {
            return None;
        }
        let name = crate::lower_call::intrinsic_name(&p.path)?;
        SHARED_DECLS.contains(&name.as_str()).then_some((c, name))
    }

    /// `let name = shared_array::<T, N>();` (or `shared_array_2d`, `dynamic_shared`): declares
    /// the shared array `name`. `annotated`: the `let` has a type annotation (refused).
    pub fn shared_let(
        &mut self,
        name: &str,
        call: &syn::ExprCall,
        what: &str,
        annotated: Option<&syn::Type>,
    ) -> Lowered<()> {
        if !self.is_kernel {
            return Err(self.errs.spanned(
                call,
                format!("shared memory can only be declared in a kernel: `{what}` cannot be used in a #[device] function; declare the array in the #[kernel] body (helpers cannot take shared arrays yet)"),
            ));
        }
        if let Some(t) = annotated {
            return Err(self.errs.spanned(
                t,
                format!("remove the type annotation: the type of a shared array is given by `{what}::<…>()`"),
            ));
        }
        if !call.args.is_empty() {
            return Err(self
                .errs
                .spanned(&call.args, format!("`{what}` takes no arguments")));
        }
        let usage = match what {
            "shared_array" => "`shared_array::<T, N>()` (element type, length)",
            "shared_array_2d" => "`shared_array_2d::<T, ROWS, COLS>()`",
            _ => "`dynamic_shared::<T>()` (element type; the length is set at launch)",
        };
        let syn::Expr::Path(p) = &*call.func else {
            return Err(self.errs.spanned(call, format!("write {usage}")));
        };
        let args: Vec<&syn::GenericArgument> = match p.path.segments.last().map(|s| &s.arguments) {
            Some(syn::PathArguments::AngleBracketed(a)) => a.args.iter().collect(),
            _ => Vec::new(),
        };
        let dims = match what {
            "shared_array" => 1,
            "shared_array_2d" => 2,
            _ => 0,
        };
        if args.len() != dims + 1 {
            return Err(self.errs.spanned(
                call,
                format!(
                    "`{what}` needs its element type and sizes as generic arguments: write {usage}"
                ),
            ));
        }
        let elem = match args[0] {
            syn::GenericArgument::Type(t) => match crate::sig::vector_type(t) {
                Some((s, l)) => Ty::Vector(s, l),
                None => Ty::Scalar(crate::sig::scalar_type(t, &mut self.errs)?),
            },
            other => {
                return Err(self.errs.spanned(
                    other,
                    format!(
                        "the first generic argument of `{what}` is the element type: write {usage}"
                    ),
                ))
            }
        };
        let mut sizes = Vec::new();
        for a in &args[1..] {
            sizes.push(self.array_length(a, what)?);
        }
        let (len, cols) = match sizes.as_slice() {
            [] => {
                if self.shared.iter().any(|s| s.len.is_none()) {
                    return Err(self.errs.spanned(
                        call,
                        "a kernel can declare one `dynamic_shared` array (every one would start at the same address); declare one and index it at different offsets",
                    ));
                }
                (None, None)
            }
            [n] => (Some(*n), None),
            [r, c] => match r.checked_mul(*c) {
                Some(n) => (Some(n), Some(*c)),
                None => {
                    return Err(self.errs.spanned(
                        call,
                        format!("a shared array of {r} * {c} elements is too large (at most `u32::MAX` elements)"),
                    ))
                }
            },
            _ => return Err(self.errs.spanned(call, format!("write {usage}"))),
        };
        let span = Loc::of(call);
        let elem_var = self.tys.fresh(Kind::Any, span);
        let Ty::Var(ev) = elem_var else {
            return Err(crate::errors::Failed);
        };
        let _ = self.tys.unify(elem_var, elem);
        let ty = Ty::Array {
            elem: ev,
            space: ArraySpace::Shared,
            len,
            cols,
        };
        let var = self.declare(name, ty, false, VarKind::Shared);
        self.shared.push(SharedDecl {
            var,
            elem: self.tys.ir_type(elem).ok_or(crate::errors::Failed)?,
            len,
        });
        Ok(())
    }

    /// A length given as a generic argument (`256`, `{ 16 * 17 }`): a positive `u32`.
    fn array_length(&mut self, a: &syn::GenericArgument, what: &str) -> Lowered<u32> {
        let expr = match a {
            syn::GenericArgument::Const(e) => e,
            syn::GenericArgument::Type(syn::Type::Path(tp)) => {
                // A `const` item of the body (refused where it is declared) parses as a type.
                if let Some(i) = tp.path.get_ident().filter(|_| tp.qself.is_none()) {
                    let as_expr: syn::Expr = syn::parse_quote!(#i);
                    if self.body_const(&i.to_string()).is_some() {
                        return self.const_length(&as_expr);
                    }
                }
                let name = tp.path.get_ident().map_or_else(String::new, |i| {
                    format!("`{}` is not visible here: ", ident_name(i))
                });
                return Err(self.errs.spanned(
                    a,
                    format!("{name}write the length as an integer literal (`256`, or `{{ 16 * 16 }}`) or a const parameter of the kernel (`fn k<const N: usize>` with `#[kernel(instances(…))]`): constants declared outside the kernel are not visible to it"),
                ));
            }
            _ => {
                return Err(self.errs.spanned(
                    a,
                    format!(
                        "the sizes of `{what}` are integer literals (`256`, or `{{ 16 * 16 }}`)"
                    ),
                ))
            }
        };
        self.const_length(expr)
    }

    /// An array length: an integer literal, or `+ - * /` of them, positive and within `u32`.
    pub fn const_length(&mut self, e: &syn::Expr) -> Lowered<u32> {
        match const_eval(e, &self.body_consts) {
            Ok(0) => Err(self.errs.spanned(e, "arrays of length 0 are not supported")),
            Ok(n) if n > u128::from(u32::MAX) => Err(self.errs.spanned(e, bad_length(n))),
            // The `const` item it names is refused where it is declared, and its value fits.
            Ok(_) if uses_body_const(e, &self.body_consts) => Err(crate::errors::Failed),
            Ok(n) => u32::try_from(n).map_err(|_| self.errs.spanned(e, bad_length(n))),
            Err(msg) => Err(self.errs.spanned(e, msg)),
        }
    }

    /// The value of the body's `const` item `name`, if there is one.
    fn body_const(&self, name: &str) -> Option<&syn::Expr> {
        self.body_consts
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, e)| e)
    }

    /// `[value; len]`: a local array of `len` copies of `value`.
    pub fn local_array(&mut self, r: &syn::ExprRepeat, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&r);
        if let syn::Expr::Repeat(_) | syn::Expr::Array(_) = strip(&r.expr) {
            return Err(self.errs.spanned(
                &r.expr,
                "arrays of arrays are not supported in kernels; declare one array of `rows * cols` elements and index it as `a[r * cols + c]`",
            ));
        }
        let value = self.scalar(&r.expr, pre);
        let len = self.const_length(&r.len);
        let (value, len) = (value?, len?);
        let elem_var = self.tys.fresh(Kind::Any, value.span);
        let Ty::Var(ev) = elem_var else {
            return Err(crate::errors::Failed);
        };
        self.unify_at(elem_var, value.ty, value.span, "mismatched types")?;
        let ty = Ty::Array {
            elem: ev,
            space: ArraySpace::Local,
            len: Some(len),
            cols: None,
        };
        let kind = ExprKind::ArrayRepeat {
            value: Box::new(value.e),
            len,
        };
        Ok(self.mk(kind, ty, span))
    }

    /// The checker type of a local array annotation `[T; N]`, unified with `value` (which must
    /// be a local array of the same length).
    pub fn local_array_annotation(&mut self, t: &syn::TypeArray, value: &TExpr) -> Lowered<()> {
        let elem = crate::sig::scalar_type(&t.elem, &mut self.errs)?;
        let len = self.const_length(&t.len)?;
        match self.tys.resolve(value.ty) {
            Ty::Array {
                elem: ev,
                space: ArraySpace::Local,
                len: Some(n),
                ..
            } if n == len => self.unify_at(
                Ty::Scalar(elem),
                Ty::Var(ev),
                value.span,
                "mismatched types",
            ),
            other => {
                let found = self.tys.show(other);
                Err(self.errs.at(
                    value.span,
                    format!(
                        "mismatched types: expected `[{}; {len}]`, found {found}",
                        elem.name()
                    ),
                ))
            }
        }
    }

    /// The array variable `base` names (a buffer parameter, a shared or a local array).
    fn array_var(&mut self, base: &syn::Expr) -> Lowered<(VarId, Ty)> {
        match strip(base) {
            syn::Expr::Path(p) => {
                let id = self.var_of_path(p)?;
                let ty = self.vars[id.0 as usize].ty;
                match ty {
                    Ty::Buffer { .. } | Ty::Array { .. } => Ok((id, ty)),
                    t => {
                        let shown = self.tys.show(t);
                        Err(self.errs.spanned(p, format!("cannot index into a value of type {shown}; only buffers (`&[T]`, `&mut [T]`), shared arrays and local arrays can be indexed")))
                    }
                }
            }
            _ => Err(self.errs.spanned(
                base,
                "only buffers and arrays can be indexed, by name (`x[i]`)",
            )),
        }
    }

    /// The element `ix` denotes: `x[i]` on a buffer or a 1-D array, `tile[r][c]` on a 2-D
    /// shared array (flattened to `tile[r * cols + c]`).
    pub fn element(&mut self, ix: &syn::ExprIndex, pre: &mut Block) -> Lowered<ElemRef> {
        let (var, array_ty, index) = match strip(&ix.expr) {
            syn::Expr::Index(inner) => {
                let (var, ty) = self.array_var(&inner.expr)?;
                if let Ty::Array { cols: None, .. } = ty {
                    let name = self.vars[var.0 as usize].name.clone();
                    return Err(self.errs.spanned(
                        &ix.expr,
                        format!("`{name}` has one dimension: index it once (`{name}[i]`); a 2-D shared array is declared with `shared_array_2d::<T, ROWS, COLS>()`"),
                    ));
                }
                let Ty::Array {
                    cols: Some(cols), ..
                } = ty
                else {
                    return Err(self.errs.spanned(
                        &ix.expr,
                        "slices of slices are not supported; flatten the data into one buffer and index it as `x[row * width + col]`",
                    ));
                };
                let (r, c) = self.operands(&inner.index, &ix.index, Self::index_expr, pre)?;
                let span = Loc::of(&ix);
                let width = self.mk(ExprKind::Const(Const::U32(cols)), Ty::USIZE, span);
                let row = self.binary_op(BinOp::Mul, r, width, span)?;
                let flat = self.binary_op(BinOp::Add, row, c, span)?;
                (var, ty, flat)
            }
            base => {
                let (var, ty) = self.array_var(base)?;
                if let Ty::Array { cols: Some(_), .. } = ty {
                    let name = self.vars[var.0 as usize].name.clone();
                    return Err(self.errs.spanned(
                        ix,
                        format!("`{name}` is a 2-D shared array: index it as `{name}[row][col]`"),
                    ));
                }
                let i = self.index_expr(&ix.index, pre)?;
                (var, ty, i)
            }
        };
        let (elem, access) = match array_ty {
            Ty::Buffer { elem, mutable } => (elem.ty(), Access::Buffer { mutable }),
            Ty::Array {
                elem,
                space: ArraySpace::Shared,
                ..
            } => (Ty::Var(elem), Access::Shared),
            Ty::Array { elem, .. } => (Ty::Var(elem), Access::Local),
            _ => return Err(crate::errors::Failed),
        };
        Ok(ElemRef {
            var,
            array_ty,
            elem,
            index,
            access,
        })
    }

    /// Reports an element of `e` that cannot be written (`base`: the array expression, where the
    /// error points).
    pub fn check_writable(&mut self, e: &ElemRef, base: &syn::Expr) -> Lowered<()> {
        let v = &self.vars[e.var.0 as usize];
        let name = v.name.clone();
        match e.access {
            Access::Buffer { mutable: false } => {
                let elem = match e.array_ty {
                    Ty::Buffer { elem, .. } => self.tys.elem_name(elem),
                    _ => "T".to_string(),
                };
                Err(self.errs.spanned(
                    base,
                    format!("cannot assign to `{name}[..]`: `{name}` is a read-only `&[{elem}]` buffer; declare the parameter as `&mut [{elem}]`"),
                ))
            }
            Access::Local if !v.mutable => Err(self.errs.spanned(
                base,
                format!("cannot assign to `{name}[..]`: `{name}` is not mutable; declare it with `let mut {name}`"),
            )),
            _ => Ok(()),
        }
    }

    /// The IR array expression of `e`'s variable.
    pub fn array_expr(&self, e: &ElemRef, span: Loc) -> TExpr {
        self.mk(ExprKind::Var(e.var), e.array_ty, span)
    }

    /// `x[i]` as a value.
    pub fn index(&mut self, ix: &syn::ExprIndex, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&ix);
        let e = self.element(ix, pre)?;
        let array = self.array_expr(&e, Loc::of(&ix.expr));
        let kind = ExprKind::Index {
            array: Box::new(array.e),
            index: Box::new(e.index.e),
        };
        Ok(self.mk(kind, e.elem, span))
    }

    /// `a.len()` on a shared or local array: the number of elements (rows, for a 2-D shared
    /// array, as `[[T; C]; R]::len` is), a constant except for the `dynamic_shared` array.
    pub fn array_len(&mut self, recv: TExpr, span: Loc) -> TExpr {
        match self.tys.resolve(recv.ty) {
            Ty::Array {
                len: Some(n), cols, ..
            } => {
                let n = cols.map_or(n, |c| n / c.max(1));
                self.mk(ExprKind::Const(Const::U32(n)), Ty::USIZE, span)
            }
            _ => self.mk(ExprKind::Len(Box::new(recv.e)), Ty::USIZE, span),
        }
    }
}

/// The message for an array length outside `0..=u32::MAX`, naming it (`-4`).
fn bad_length(value: impl std::fmt::Display) -> String {
    format!(
        "an array length must be a non-negative integer that fits `u32` (at most {}); this one is {value}",
        u32::MAX
    )
}

/// True if `e` names one of the body's `const` items.
fn uses_body_const(e: &syn::Expr, consts: &[(String, syn::Expr)]) -> bool {
    struct Finds<'a>(&'a [(String, syn::Expr)], bool);
    impl<'ast> syn::visit::Visit<'ast> for Finds<'_> {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            if let Some(i) = p.get_ident() {
                self.1 |= self.0.iter().any(|(n, _)| i == n);
            }
        }
    }
    let mut f = Finds(consts, false);
    syn::visit::Visit::visit_expr(&mut f, e);
    f.1
}

/// The value of an integer constant expression made of literals (`256`, `16 * 17`, `{ 1 << 10 }`),
/// or of the body's `const` items (`consts`, refused where declared: here only to say what is
/// wrong with a length). Computed in `u128`, as `usize` arithmetic in a `const` is: a
/// subtraction below zero is an error, not a wrap.
fn const_eval(e: &syn::Expr, consts: &[(String, syn::Expr)]) -> Result<u128, String> {
    eval_length(e, consts, false)
}

/// [`const_eval`]; `cast`: under `as usize` (or `as u32`), where literals of every integer type
/// are accepted.
fn eval_length(e: &syn::Expr, consts: &[(String, syn::Expr)], cast: bool) -> Result<u128, String> {
    const HELP: &str = "an array length must be an integer literal (`256`), arithmetic on literals (`{ 16 * 17 }`) or on const parameters of the kernel (`fn k<const N: usize>` with `#[kernel(instances(…))]`); constants declared outside the kernel are not visible to it";
    let eval = |e: &syn::Expr| eval_length(e, consts, cast);
    match e {
        // `N as usize`, with `N` a const parameter of another integer type.
        syn::Expr::Cast(c) if matches!(&*c.ty, syn::Type::Path(t) if t.path.is_ident("usize") || t.path.is_ident("u32")) => {
            eval_length(&c.expr, consts, true)
        }
        syn::Expr::Paren(p) => eval(&p.expr),
        syn::Expr::Group(g) => eval(&g.expr),
        syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            syn::Stmt::Expr(e, None) => eval(e),
            _ => Err(HELP.into()),
        },
        // `-4` (a const parameter of a signed type replaced by a negative value is `(-4i32)`):
        // the length's sign is what is wrong, whatever the literal's type.
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            let v = match &*u.expr {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i
                    .base10_parse::<u128>()
                    .map_err(|_| bad_length(format!("-{}", i.base10_digits())))?,
                other => eval(other)?,
            };
            if v == 0 {
                Ok(0)
            } else {
                Err(bad_length(format!("-{v}")))
            }
        }
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => {
            let fits = match i.suffix() {
                "" | "usize" | "u32" => true,
                // Converted by the `as usize` around it.
                "i32" | "i64" | "u64" => cast,
                _ => false,
            };
            if !fits {
                return Err(format!(
                    "an array length is a `usize`, not a `{}`",
                    i.suffix()
                ));
            }
            i.base10_parse::<u128>()
                .map_err(|_| bad_length(i.base10_digits()))
        }
        syn::Expr::Binary(b) => {
            let (l, r) = (eval(&b.left)?, eval(&b.right)?);
            let too_big = || bad_length("larger than that");
            match b.op {
                syn::BinOp::Add(_) => l.checked_add(r).ok_or_else(too_big),
                syn::BinOp::Sub(_) => l
                    .checked_sub(r)
                    .ok_or_else(|| bad_length(format!("{l} - {r} = -{}", r - l))),
                syn::BinOp::Mul(_) => l.checked_mul(r).ok_or_else(too_big),
                syn::BinOp::Div(_) if r != 0 => Ok(l / r),
                syn::BinOp::Shl(_) => u32::try_from(r)
                    .ok()
                    .filter(|&r| r < 64)
                    .and_then(|r| l.checked_mul(1u128 << r))
                    .ok_or_else(too_big),
                _ => Err(HELP.into()),
            }
        }
        syn::Expr::Path(p) => match p.path.get_ident() {
            // A `const` item's value sees the items declared before it only (no cycles).
            Some(i) => match consts.iter().rposition(|(n, _)| i == n) {
                Some(k) => eval_length(&consts[k].1, &consts[..k], cast)
                    .map_err(|m| format!("{m} (the value of `{}`)", consts[k].0)),
                None => Err(format!("`{}` is not visible here: {HELP}", ident_name(i))),
            },
            None => Err(HELP.into()),
        },
        _ => Err(HELP.into()),
    }
}

/// The element scalar of an atomic's target, once known (`None` while it is a type variable).
pub fn elem_scalar(l: &Lowerer, e: &ElemRef) -> Option<Scalar> {
    match l.tys.resolve(e.elem) {
        Ty::Scalar(s) => Some(s),
        _ => None,
    }
}
