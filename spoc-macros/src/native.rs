//! Native code: Rust generated from the lowered IR (not from the source, so that the Native
//! backend runs exactly what every other backend runs). Integer `+ - *` and negation wrap,
//! division and remainder go through `KernelInt` (trapping on zero), shifts take the amount
//! modulo the width, float operators are plain Rust (never contracted), buffer accesses are
//! bounds-checked `load`/`store` calls that trap.
//!
//! A kernel also gets a row plan ([`plan`]): a second, *fast* body in which the buffer accesses
//! that the plan proved in bounds for a whole row go through windows, and the comparisons it
//! decided for the row are constants.
//!
//! Every generator returns `None` for IR the Native backend cannot run yet (barriers, fences,
//! atomics, warp operations, shared memory, records, `match`); the kernel then has no native
//! entry point and the runtime refuses to launch it natively, rather than running wrong code.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use spoc_ir::{
    BinOp, Block, Const, Expr, ExprKind, ForDir, Intrinsic, LValue, MathFn, ScalarType, Stmt,
    StmtKind, Type, UnOp, VarDecl, VarId,
};
use std::collections::HashMap;

pub mod plan;

/// How generated code reaches a helper: the alias of its companion (see `paths.rs`), and the span
/// of its first call (type errors in the call point there).
pub type HelperPaths = HashMap<String, (TokenStream, Span)>;

/// The generator's view of one function.
pub struct Native<'a> {
    pub vars: &'a [VarDecl],
    pub helpers: &'a HelperPaths,
    /// Variables replaced by tokens (the row plan evaluates invariant `let`s from their
    /// initializers); `None` in bodies.
    pub subst: Option<&'a HashMap<VarId, TokenStream>>,
    /// The row plan, when generating a kernel's fast body.
    pub fast: Option<&'a plan::Plan>,
}

/// The Rust name of a scalar type; `None` for `f16` (storage only, not yet native).
pub fn rust_scalar(s: ScalarType) -> Option<TokenStream> {
    Some(match s {
        ScalarType::Bool => quote!(bool),
        ScalarType::I32 => quote!(i32),
        ScalarType::I64 => quote!(i64),
        ScalarType::U32 => quote!(u32),
        ScalarType::U64 => quote!(u64),
        ScalarType::F32 => quote!(f32),
        ScalarType::F64 => quote!(f64),
        ScalarType::F16 => return None,
    })
}

/// The Rust type of a value of IR type `t` (`()` for unit); `None` for non-scalars.
pub fn rust_value_type(t: &Type) -> Option<TokenStream> {
    match t {
        Type::Unit => Some(quote!(())),
        Type::Scalar(s) => rust_scalar(*s),
        _ => None,
    }
}

/// `tokens` with every token (recursively) given `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut inner = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                inner.set_span(span);
                t = proc_macro2::TokenTree::Group(inner);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}

/// A constant as a Rust expression of its exact type and value.
pub fn constant(c: Const) -> TokenStream {
    fn signed(v: i128, lit: Literal) -> TokenStream {
        if v < 0 {
            quote!((-#lit))
        } else {
            quote!(#lit)
        }
    }
    match c {
        Const::Bool(b) => quote!(#b),
        Const::I32(v) => signed(v as i128, int_lit(v.unsigned_abs() as u128, "i32")),
        Const::I64(v) => signed(v as i128, int_lit(v.unsigned_abs() as u128, "i64")),
        Const::U32(v) => {
            let l = Literal::u32_suffixed(v);
            quote!(#l)
        }
        Const::U64(v) => {
            let l = Literal::u64_suffixed(v);
            quote!(#l)
        }
        Const::F16(bits) => quote!(#bits),
        Const::F32(bits) => {
            let v = f32::from_bits(bits);
            if v.is_finite() {
                let l = Literal::f32_suffixed(v.abs());
                if v.is_sign_negative() {
                    quote!((-#l))
                } else {
                    quote!(#l)
                }
            } else {
                quote!(f32::from_bits(#bits))
            }
        }
        Const::F64(bits) => {
            let v = f64::from_bits(bits);
            if v.is_finite() {
                let l = Literal::f64_suffixed(v.abs());
                if v.is_sign_negative() {
                    quote!((-#l))
                } else {
                    quote!(#l)
                }
            } else {
                quote!(f64::from_bits(#bits))
            }
        }
    }
}

/// An integer literal token `<magnitude><suffix>` (the magnitude of `MIN` included, which only
/// the negated form makes valid, exactly as Rust reads `-2147483648i32`).
fn int_lit(magnitude: u128, suffix: &str) -> Literal {
    format!("{magnitude}{suffix}")
        .parse()
        .unwrap_or_else(|_| Literal::u32_unsuffixed(0))
}

impl<'a> Native<'a> {
    /// A generator of a body of `vars` (no substitution, no plan).
    pub fn new(vars: &'a [VarDecl], helpers: &'a HelperPaths) -> Native<'a> {
        Native {
            vars,
            helpers,
            subst: None,
            fast: None,
        }
    }

    /// The Rust name of variable `id`: its source name with the id appended, so shadowed
    /// variables stay distinct and no name clashes with the generated `ctx`/`args`.
    pub fn var(&self, id: VarId) -> Ident {
        let name = self
            .vars
            .get(id.0 as usize)
            .map(|v| v.name.as_str())
            .filter(|n| !n.is_empty() && *n != "_")
            .unwrap_or("v");
        format_ident!("{}_{}", name, id.0)
    }

    pub fn block(&self, b: &Block) -> Option<TokenStream> {
        let stmts = b.iter().map(|s| self.stmt(s)).collect::<Option<Vec<_>>>()?;
        Some(quote!(#(#stmts)*))
    }

    fn stmt(&self, s: &Stmt) -> Option<TokenStream> {
        Some(match &s.kind {
            StmtKind::Let { var, init } => {
                let decl = self.vars.get(var.0 as usize)?;
                let name = self.var(*var);
                let ty = rust_value_type(&decl.ty)?;
                let m = decl.mutable.then(|| quote!(mut));
                match init {
                    Some(e) => {
                        let e = self.expr(e)?;
                        quote!(let #m #name: #ty = #e;)
                    }
                    None => quote!(let #m #name: #ty;),
                }
            }
            StmtKind::Assign { target, value } => {
                let v = self.expr(value)?;
                match target {
                    LValue::Var(id) => {
                        let name = self.var(*id);
                        quote!(#name = #v;)
                    }
                    LValue::Index { base, index } => {
                        let LValue::Var(b) = &**base else { return None };
                        if let Some(w) = self.fast.and_then(|p| p.window_of(self, *b, index)) {
                            return Some(quote!(#w.store(ctx, #v)?;));
                        }
                        let b = self.var(*b);
                        let i = self.expr(index)?;
                        quote!(#b.store(#i, #v)?;)
                    }
                    LValue::Field { .. } => return None,
                }
            }
            StmtKind::Block(b) => {
                let b = self.block(b)?;
                quote!({ #b })
            }
            StmtKind::If { cond, then, els } => {
                let c = self.expr(cond)?;
                let t = self.block(then)?;
                match els {
                    Some(e) => {
                        let e = self.block(e)?;
                        quote!(if #c { #t } else { #e })
                    }
                    None => quote!(if #c { #t }),
                }
            }
            StmtKind::While { cond, body } => {
                let b = self.block(body)?;
                if cond.kind == ExprKind::Const(Const::Bool(true)) {
                    quote!(loop { #b })
                } else {
                    let c = self.expr(cond)?;
                    quote!(while #c { #b })
                }
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                dir,
                body,
            } => {
                let v = self.var(*var);
                let (s, e) = (self.expr(start)?, self.expr(end)?);
                let b = self.block(body)?;
                let range = match dir {
                    ForDir::Up => quote!((#s..#e)),
                    ForDir::Down => quote!((#s..#e).rev()),
                };
                let iter = if step.kind == ExprKind::Const(Const::U32(1)) {
                    range
                } else {
                    let st = self.expr(step)?;
                    quote!(#range.step_by(::spoc::__private::check_step(#st)?))
                };
                quote!(for #v in #iter { #b })
            }
            StmtKind::Break => quote!(break;),
            StmtKind::Continue => quote!(continue;),
            StmtKind::Return(None) => quote!(return ::core::result::Result::Ok(());),
            StmtKind::Return(Some(e)) => {
                let e = self.expr(e)?;
                quote!(return ::core::result::Result::Ok(#e);)
            }
            StmtKind::Expr(e) => {
                let e = self.expr(e)?;
                quote!(let _ = #e;)
            }
            StmtKind::Pragma { body, .. } => {
                let b = self.block(body)?;
                quote!({ #b })
            }
            StmtKind::Match { .. }
            | StmtKind::Barrier
            | StmtKind::WarpBarrier
            | StmtKind::MemFence(_) => return None,
        })
    }

    fn expr(&self, e: &Expr) -> Option<TokenStream> {
        Some(match &e.kind {
            ExprKind::Const(c) => constant(*c),
            ExprKind::Var(id) => match self.subst.and_then(|s| s.get(id)) {
                Some(t) => quote!((#t)),
                None => {
                    let v = self.var(*id);
                    quote!(#v)
                }
            },
            ExprKind::Index { array, index } => {
                let ExprKind::Var(b) = array.kind else {
                    return None;
                };
                if let Some(w) = self.fast.and_then(|p| p.window(self, array, index)) {
                    return Some(quote!(#w.load(ctx)?));
                }
                let b = self.var(b);
                let i = self.expr(index)?;
                quote!(#b.load(#i)?)
            }
            ExprKind::Len(array) => {
                let ExprKind::Var(b) = array.kind else {
                    return None;
                };
                let b = self.var(b);
                quote!(#b.len())
            }
            ExprKind::Unary { op, operand } => {
                let x = self.expr(operand)?;
                let s = operand.ty.as_scalar()?;
                match op {
                    UnOp::Neg if s.is_integer() => quote!((#x).wrapping_neg()),
                    UnOp::Neg => quote!((-(#x))),
                    UnOp::Not => quote!((!(#x))),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs)?,
            ExprKind::Intrinsic { intrinsic, args } => self.intrinsic(*intrinsic, args, &e.ty)?,
            ExprKind::Cast { value, to } => {
                let v = self.expr(value)?;
                let t = rust_scalar(*to)?;
                rust_scalar(value.ty.as_scalar()?)?;
                quote!(((#v) as #t))
            }
            ExprKind::Call { func, args } => {
                let (module, span) = self.helpers.get(func)?;
                let args = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Option<Vec<_>>>()?;
                // The expected type carries the call's span, so that rustc's error for a wrong
                // guess of the helper's return type points at the call.
                let ty = respan(rust_value_type(&e.ty)?, *span);
                // No `?` here: its desugaring would move the error to the attribute.
                quote_spanned!(*span=> match #module::native(ctx #(, #args)*) {
                    ::core::result::Result::Ok(__spoc_r) => {
                        let __spoc_r: #ty = __spoc_r;
                        __spoc_r
                    }
                    ::core::result::Result::Err(__spoc_e) => {
                        return ::core::result::Result::Err(__spoc_e)
                    }
                })
            }
            ExprKind::Select { cond, then, els } => {
                let (c, t, f) = (self.expr(cond)?, self.expr(then)?, self.expr(els)?);
                quote!((if #c { #t } else { #f }))
            }
            ExprKind::Field { .. }
            | ExprKind::Match { .. }
            | ExprKind::RecordLit { .. }
            | ExprKind::VariantLit { .. }
            | ExprKind::ArrayRepeat { .. }
            | ExprKind::VectorLit(_) => return None,
        })
    }

    fn binary(&self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Option<TokenStream> {
        if let Some(v) = self.fast.and_then(|p| p.fact(self, op, lhs, rhs)) {
            // Decided for the whole row by the plan; both sides are pure.
            return Some(quote!(#v));
        }
        let (a, b) = (self.expr(lhs)?, self.expr(rhs)?);
        let s = lhs.ty.as_scalar()?;
        rust_scalar(s)?;
        let int = s.is_integer();
        Some(match op {
            BinOp::Add if int => quote!((#a).wrapping_add(#b)),
            BinOp::Sub if int => quote!((#a).wrapping_sub(#b)),
            BinOp::Mul if int => quote!((#a).wrapping_mul(#b)),
            BinOp::Div if int => quote!(::spoc::__private::KernelInt::k_div(#a, #b)?),
            BinOp::Rem if int => quote!(::spoc::__private::KernelInt::k_rem(#a, #b)?),
            BinOp::Shl => quote!((#a).wrapping_shl((#b) as u32)),
            BinOp::Shr => quote!((#a).wrapping_shr((#b) as u32)),
            BinOp::Add => quote!((#a + #b)),
            BinOp::Sub => quote!((#a - #b)),
            BinOp::Mul => quote!((#a * #b)),
            BinOp::Div => quote!((#a / #b)),
            BinOp::Rem => quote!((#a % #b)),
            BinOp::BitAnd => quote!((#a & #b)),
            BinOp::BitOr => quote!((#a | #b)),
            BinOp::BitXor => quote!((#a ^ #b)),
            BinOp::Eq => quote!((#a == #b)),
            BinOp::Ne => quote!((#a != #b)),
            BinOp::Lt => quote!((#a < #b)),
            BinOp::Le => quote!((#a <= #b)),
            BinOp::Gt => quote!((#a > #b)),
            BinOp::Ge => quote!((#a >= #b)),
            BinOp::LogicalAnd => quote!((#a && #b)),
            BinOp::LogicalOr => quote!((#a || #b)),
        })
    }

    fn intrinsic(&self, i: Intrinsic, args: &[Expr], ty: &Type) -> Option<TokenStream> {
        let axis = |a: spoc_ir::Axis| Literal::usize_unsuffixed(a.index());
        Some(match i {
            Intrinsic::ThreadIdx(a) => {
                let a = axis(a);
                quote!(ctx.thread[#a])
            }
            Intrinsic::BlockIdx(a) => {
                let a = axis(a);
                quote!(ctx.block[#a])
            }
            Intrinsic::BlockDim(a) => {
                let a = axis(a);
                quote!(ctx.block_dim[#a])
            }
            Intrinsic::GridDim(a) => {
                let a = axis(a);
                quote!(ctx.grid_dim[#a])
            }
            Intrinsic::GlobalId(a) => {
                let a = axis(a);
                quote!(ctx.global_id(#a))
            }
            Intrinsic::GlobalSize(a) => {
                let a = axis(a);
                quote!(ctx.global_size(#a))
            }
            Intrinsic::Math(m) => self.math(m, args, ty)?,
            _ => return None,
        })
    }

    fn math(&self, m: MathFn, args: &[Expr], ty: &Type) -> Option<TokenStream> {
        let s = ty.as_scalar()?;
        let t = rust_scalar(s)?;
        let xs = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Option<Vec<_>>>()?;
        let x = xs.first()?;
        let rest = &xs[1..];
        if s.is_integer() {
            return Some(match m {
                MathFn::Abs if s.is_signed() => quote!((#x).wrapping_abs()),
                MathFn::Min => quote!(::core::cmp::Ord::min(#x, #(#rest),*)),
                MathFn::Max => quote!(::core::cmp::Ord::max(#x, #(#rest),*)),
                _ => return None,
            });
        }
        Some(match m {
            MathFn::Rsqrt => quote!(((1.0 as #t) / #t::sqrt(#x))),
            _ => {
                let name = format_ident!("{}", m.name());
                quote!(#t::#name(#x #(, #rest)*))
            }
        })
    }
}
