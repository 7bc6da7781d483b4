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
use spoc_ir::{BinOp, Block, Const, ExprKind, SharedDecl, Type, VarId, VarKind};

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
            syn::GenericArgument::Type(t) => crate::sig::scalar_type(t, &mut self.errs)?,
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
        let _ = self.tys.unify(elem_var, Ty::Scalar(elem));
        let ty = Ty::Array {
            elem: ev,
            space: ArraySpace::Shared,
            len,
            cols,
        };
        let var = self.declare(name, ty, false, VarKind::Shared);
        self.shared.push(SharedDecl {
            var,
            elem: Type::Scalar(elem.ir()),
            len,
        });
        Ok(())
    }

    /// A length given as a generic argument (`256`, `{ 16 * 17 }`): a positive `u32`.
    fn array_length(&mut self, a: &syn::GenericArgument, what: &str) -> Lowered<u32> {
        let expr = match a {
            syn::GenericArgument::Const(e) => e,
            syn::GenericArgument::Type(syn::Type::Path(_)) => {
                return Err(self.errs.spanned(
                    a,
                    "write the length as an integer literal (`256`, or `{ 16 * 16 }`) or a const parameter of the kernel (`fn k<const N: usize>` with `#[kernel(instances(…))]`): constants declared outside the kernel are not visible to it",
                ))
            }
            _ => {
                return Err(self.errs.spanned(
                    a,
                    format!("the sizes of `{what}` are integer literals (`256`, or `{{ 16 * 16 }}`)"),
                ))
            }
        };
        self.const_length(expr)
    }

    /// An array length: an integer literal, or `+ - * /` of them, positive and within `u32`.
    pub fn const_length(&mut self, e: &syn::Expr) -> Lowered<u32> {
        match const_eval(e) {
            Ok(0) => Err(self.errs.spanned(e, "arrays of length 0 are not supported")),
            Ok(n) => u32::try_from(n).map_err(|_| {
                self.errs
                    .spanned(e, "an array length must be at most `u32::MAX`")
            }),
            Err(msg) => Err(self.errs.spanned(e, msg)),
        }
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
                let r = self.index_expr(&inner.index, pre);
                let mut cpre = Block::new();
                let c = self.index_expr(&ix.index, &mut cpre);
                let (mut r, c) = (r?, c?);
                self.sequence([&mut r], &c, cpre, pre);
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

/// The value of an integer constant expression made of literals (`256`, `16 * 17`, `{ 1 << 10 }`).
fn const_eval(e: &syn::Expr) -> Result<u64, String> {
    const HELP: &str = "an array length must be an integer literal (`256`), arithmetic on literals (`{ 16 * 17 }`) or on const parameters of the kernel (`fn k<const N: usize>` with `#[kernel(instances(…))]`); constants declared outside the kernel are not visible to it";
    match e {
        syn::Expr::Paren(p) => const_eval(&p.expr),
        syn::Expr::Group(g) => const_eval(&g.expr),
        syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            syn::Stmt::Expr(e, None) => const_eval(e),
            _ => Err(HELP.into()),
        },
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => {
            if !matches!(i.suffix(), "" | "usize" | "u32") {
                return Err(format!(
                    "an array length is a `usize`, not a `{}`",
                    i.suffix()
                ));
            }
            i.base10_parse::<u64>()
                .map_err(|_| "an array length must be at most `u32::MAX`".to_string())
        }
        syn::Expr::Binary(b) => {
            let (l, r) = (const_eval(&b.left)?, const_eval(&b.right)?);
            let too_big = || "an array length must be at most `u32::MAX`".to_string();
            match b.op {
                syn::BinOp::Add(_) => l.checked_add(r).ok_or_else(too_big),
                syn::BinOp::Sub(_) => l
                    .checked_sub(r)
                    .ok_or_else(|| "this array length is negative".to_string()),
                syn::BinOp::Mul(_) => l.checked_mul(r).ok_or_else(too_big),
                syn::BinOp::Div(_) if r != 0 => Ok(l / r),
                syn::BinOp::Shl(_) => u32::try_from(r)
                    .ok()
                    .and_then(|r| 1u64.checked_shl(r))
                    .and_then(|p| l.checked_mul(p))
                    .ok_or_else(too_big),
                _ => Err(HELP.into()),
            }
        }
        syn::Expr::Path(p) => match p.path.get_ident() {
            Some(i) => Err(format!("`{}` is not visible here: {HELP}", ident_name(i))),
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
