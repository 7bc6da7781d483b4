//! Calls: the index intrinsics (`global_id_x()`, …), `#[device]` helpers, and methods (`.len()`
//! on buffers, the math of `f32`/`f64`, `abs`/`min`/`max` on integers).

use crate::errors::{Loc, Lowered};
use crate::lower::{ArgHint, CallArg, Deferred, HelperUse, Lowerer, TExpr};
use crate::types::{Kind, Scalar, Ty};
use spoc_ir::{Block, ExprKind, Intrinsic, MathFn};

/// Modules through which an intrinsic may be named (`spoc::intrinsics::global_id_x()`).
const INTRINSIC_MODULES: [&str; 2] = ["intrinsics", "prelude"];

/// The intrinsic-call name of `path`, if it names one of spoc's intrinsics.
pub(crate) fn intrinsic_name(path: &syn::Path) -> Option<String> {
    let last = path.segments.last()?.ident.to_string();
    let n = path.segments.len();
    let via_module =
        n >= 2 && INTRINSIC_MODULES.contains(&path.segments[n - 2].ident.to_string().as_str());
    (n == 1 || via_module).then_some(last)
}

impl Lowerer {
    /// `VecT::new(lanes…)` (one value per lane, evaluated in order) or `VecT::splat(v)` (`v`
    /// evaluated once, in every lane): a `VectorLit`.
    fn vector_ctor(
        &mut self,
        c: &syn::ExprCall,
        name: &str,
        lane: Scalar,
        lanes: u8,
        pre: &mut Block,
    ) -> Lowered<TExpr> {
        let span = Loc::of(&c);
        let tname = crate::types::vector_name(lane, lanes);
        let want = match name {
            "new" => usize::from(lanes),
            "splat" => 1,
            _ => {
                return Err(self.errs.spanned(
                    &c.func,
                    format!("`{tname}::{name}` is not supported in kernels; a `{tname}` is built with `{tname}::new(…)` (one value per lane) or `{tname}::splat(v)`"),
                ))
            }
        };
        if c.args.len() != want {
            return Err(self.errs.spanned(
                c,
                format!(
                    "`{tname}::{name}` takes {want} argument{} (of type `{}`), not {}",
                    if want == 1 { "" } else { "s" },
                    lane.name(),
                    c.args.len()
                ),
            ));
        }
        let mut values: Vec<TExpr> = Vec::new();
        let mut ok = true;
        for a in &c.args {
            let mut apre = Block::new();
            let Ok(v) = self.scalar(a, &mut apre) else {
                ok = false;
                continue;
            };
            self.sequence(&mut values, &v, apre, pre);
            if self
                .unify_at(
                    Ty::Scalar(lane),
                    v.ty,
                    v.span,
                    &format!("mismatched types: a `{tname}` lane is a `{}`", lane.name()),
                )
                .is_err()
            {
                ok = false;
                continue;
            }
            values.push(v);
        }
        if !ok {
            return Err(crate::errors::Failed);
        }
        if name == "splat" {
            let v = values.pop().ok_or(crate::errors::Failed)?;
            let simple = matches!(v.e.kind, ExprKind::Var(_) | ExprKind::Const(_));
            let v = if simple { v } else { self.spill(v, pre) };
            let lit = ExprKind::VectorLit(vec![v.e; usize::from(lanes)]);
            return Ok(self.mk(lit, Ty::Vector(lane, lanes), span));
        }
        let lit = ExprKind::VectorLit(values.into_iter().map(|v| v.e).collect());
        Ok(self.mk(lit, Ty::Vector(lane, lanes), span))
    }

    /// A call expression: an intrinsic, `f32::sqrt(x)`-style math, or a `#[device]` helper.
    pub fn call(&mut self, c: &syn::ExprCall, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&c);
        let syn::Expr::Path(fp) = &*c.func else {
            return Err(self
                .errs
                .spanned(&c.func, "only named functions can be called in kernels"));
        };
        if fp.qself.is_some() {
            return Err(self.errs.spanned(
                fp,
                "qualified paths (`<T as Trait>::f`) are not supported in kernels",
            ));
        }
        let path = &fp.path;
        if let Some(iname) = intrinsic_name(path) {
            if let Some(r) = self.intrinsic_call(&iname, c, pre) {
                return r;
            }
        }
        let owner = path
            .segments
            .iter()
            .rev()
            .nth(1)
            .map(|s| s.ident.to_string());
        match owner.as_deref() {
            Some("Vec" | "VecDeque" | "Box" | "HashMap" | "BTreeMap" | "HashSet") => {
                let written = quote::quote!(#path).to_string().replace(' ', "");
                return Err(self.errs.spanned(
                    fp,
                    format!(
                        "`{written}` allocates, and kernels cannot allocate; {}",
                        crate::lower_expr::ALLOCATION_ADVICE
                    ),
                ));
            }
            Some("String" | "str") => {
                let written = quote::quote!(#path).to_string().replace(' ', "");
                return Err(self.errs.spanned(
                    fp,
                    format!("`{written}`: kernels have no strings (they compute on numbers and `bool`s); write results into a `&mut [T]` buffer"),
                ));
            }
            _ => {}
        }
        if let Some(seg) = path.segments.iter().find(|s| !s.arguments.is_none()) {
            return Err(self.errs.spanned(
                &seg.arguments,
                "generic arguments are not supported on calls in kernels",
            ));
        }
        let Some(last) = path.segments.last() else {
            return Err(self.errs.spanned(fp, "expected a function name"));
        };
        let name = crate::lower::ident_name(&last.ident);
        if let Some(iname) = intrinsic_name(path) {
            if let Some(i) = Intrinsic::index_from_name(&iname) {
                if !c.args.is_empty() {
                    return Err(self
                        .errs
                        .spanned(&c.args, format!("`{iname}()` takes no arguments")));
                }
                return Ok(self.mk(
                    ExprKind::Intrinsic {
                        intrinsic: i,
                        args: vec![],
                    },
                    Ty::USIZE,
                    span,
                ));
            }
        }
        // `F32x4::new(x, y, z, w)`, `U32x2::splat(v)`: the vector constructors.
        if let Some((lane, lanes)) = path
            .segments
            .iter()
            .rev()
            .nth(1)
            .and_then(|s| crate::types::vector_named(&s.ident.to_string()))
        {
            return self.vector_ctor(c, &name, lane, lanes, pre);
        }
        // `f16::from_f32(x)`, `bf16::from_f32(x)`: the conversion into a 16-bit float.
        if let Some(h) = half_path(path) {
            return self.half_ctor(h, &name, c, span, pre);
        }
        // `f32::sqrt(x)`, `f64::max(a, b)`: math through the type's path.
        if path.segments.len() == 2 {
            let ty = Scalar::from_name(&path.segments[0].ident.to_string());
            if let (Some(ty), Some(m)) = (ty, MathFn::from_name(&name)) {
                let mut args = c.args.iter();
                let Some(recv) = args.next() else {
                    return Err(self.errs.spanned(
                        c,
                        format!(
                            "`{}::{name}` needs its receiver as first argument",
                            ty.name()
                        ),
                    ));
                };
                let recv = self.scalar(recv, pre)?;
                self.unify_at(Ty::Scalar(ty), recv.ty, recv.span, "mismatched types")?;
                let rest: Vec<&syn::Expr> = args.collect();
                return self.math(m, recv, &rest, span, pre);
            }
        }
        if let Some(first) = path.segments.first() {
            let head = first.ident.to_string();
            let is_type_like = path.segments.iter().rev().skip(1).any(|s| {
                s.ident
                    .to_string()
                    .starts_with(|ch: char| ch.is_ascii_uppercase())
            });
            if matches!(head.as_str(), "std" | "core" | "alloc") || is_type_like {
                return Err(self.errs.spanned(
                    fp,
                    "only #[device] functions and spoc's intrinsics can be called in kernels (no `std` functions, no associated functions)",
                ));
            }
        }
        if name == self.own_name {
            return Err(self.errs.spanned(
                fp,
                format!("recursion is not supported on GPUs: `{name}` calls itself; rewrite it as a loop"),
            ));
        }
        let helper = self.record_helper(&name, path, span)?;
        let mut args: Vec<TExpr> = Vec::new();
        let mut arg_tys = Vec::new();
        let mut ok = true;
        for a in &c.args {
            let mut apre = Block::new();
            let v = self.value(a, &mut apre);
            if let Ok(v) = &v {
                self.sequence(&mut args, v, apre, pre);
            }
            match v {
                Ok(v) if self.tys.resolve(v.ty) == Ty::Unit => {
                    self.errs
                        .at(v.span, "this argument has no value (it is `()`)");
                    ok = false;
                }
                Ok(v) if matches!(self.tys.resolve(v.ty), Ty::Array { .. }) => {
                    self.errs.at(
                        v.span,
                        "shared and local arrays cannot be passed to #[device] functions yet; pass the elements the helper needs, or index the array in the kernel",
                    );
                    ok = false;
                }
                Ok(v) => {
                    let buffer = match (&v.e.kind, self.tys.resolve(v.ty)) {
                        (ExprKind::Var(id), Ty::Buffer { .. }) => Some(*id),
                        _ => None,
                    };
                    arg_tys.push(CallArg {
                        ty: v.ty,
                        span: v.span,
                        hint: arg_hint(a),
                        guessed: false,
                        buffer,
                    });
                    args.push(v)
                }
                Err(_) => ok = false,
            }
        }
        if !ok {
            return Err(crate::errors::Failed);
        }
        let first_arity = self
            .helper_calls
            .iter()
            .find(|c| c.helper == helper)
            .map(|c| c.args.len());
        if let Some(n) = first_arity.filter(|&n| n != arg_tys.len()) {
            return Err(self.errs.spanned(
                path,
                format!(
                    "`{name}` is called with {} argument{} here but with {n} at its first call; a #[device] function takes the same arguments at every call",
                    arg_tys.len(),
                    if arg_tys.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        let ty = self.tys.fresh(Kind::Any, span);
        self.helper_calls.push(crate::lower::HelperCall {
            helper,
            span: Loc::of(path),
            args: arg_tys,
            ret: ty,
        });
        let args = args.into_iter().map(|v| v.e).collect();
        Ok(self.mk(ExprKind::Call { func: name, args }, ty, span))
    }

    /// Records a call of helper `name` through `path`; returns its index in `helpers`.
    fn record_helper(&mut self, name: &str, path: &syn::Path, span: Loc) -> Lowered<usize> {
        // `self::f` and `f` name the same helper.
        let written = |p: &syn::Path| {
            let mut p = p.clone();
            if p.leading_colon.is_none() && p.segments.len() > 1 && p.segments[0].ident == "self" {
                p.segments = p.segments.into_iter().skip(1).collect();
            }
            quote::quote!(#p).to_string()
        };
        if let Some(i) = self.helpers.iter().position(|h| h.name == name) {
            let prev = &self.helpers[i];
            if written(&prev.path) != written(path) {
                let (a, b) = (written(&prev.path), written(path));
                return Err(self.errs.spanned(
                    path,
                    format!("two helpers named `{name}` are called (`{a}` and `{b}`); a function calls each helper by its name, so import one under another name (`use m::{name} as other_{name};`)"),
                ));
            }
            return Ok(i);
        }
        self.helpers.push(HelperUse {
            name: name.to_string(),
            path: path.clone(),
            span,
        });
        Ok(self.helpers.len() - 1)
    }

    /// `recv.method(args)`.
    pub fn method_call(&mut self, m: &syn::ExprMethodCall, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&m);
        if let Some(t) = &m.turbofish {
            return Err(self.errs.spanned(
                t,
                "generic arguments are not supported on method calls in kernels",
            ));
        }
        let method = m.method.to_string();
        let recv = self.value(&m.receiver, pre)?;
        if let Ty::Buffer { .. } = self.tys.resolve(recv.ty) {
            if method == "len" && m.args.is_empty() {
                return Ok(self.mk(ExprKind::Len(Box::new(recv.e)), Ty::USIZE, span));
            }
            return Err(self.errs.spanned(
                &m.method,
                format!("buffers support indexing (`x[i]`) and `.len()` only; `.{method}()` is not supported in kernels"),
            ));
        }
        if let Ty::Array { .. } = self.tys.resolve(recv.ty) {
            if method == "len" && m.args.is_empty() {
                return Ok(self.array_len(recv, span));
            }
            return Err(self.errs.spanned(
                &m.method,
                format!("arrays support indexing (`a[i]`) and `.len()` only; `.{method}()` is not supported in kernels"),
            ));
        }
        if let Ty::Unit = self.tys.resolve(recv.ty) {
            return Err(self
                .errs
                .at(recv.span, "this expression has no value (it is `()`)"));
        }
        let wrapping = match method.as_str() {
            "wrapping_add" => Some(spoc_ir::BinOp::Add),
            "wrapping_sub" => Some(spoc_ir::BinOp::Sub),
            "wrapping_mul" => Some(spoc_ir::BinOp::Mul),
            _ => None,
        };
        if let Some(op) = wrapping {
            // Integer arithmetic wraps in kernels: `a.wrapping_add(b)` is `a + b`.
            let [arg] = m.args.iter().collect::<Vec<_>>()[..] else {
                return Err(self
                    .errs
                    .at(span, format!("`.{method}()` takes 1 argument")));
            };
            let what = format!("`.{method}()` is defined on integers");
            self.constrain_at(recv.ty, Kind::Int, recv.span, &what)?;
            let mut recv = recv;
            let mut rpre = Block::new();
            let rhs = self.scalar(arg, &mut rpre)?;
            self.sequence([&mut recv], &rhs, rpre, pre);
            return self.binary_op(op, recv, rhs, span);
        }
        if method == "to_f32" {
            if !m.args.is_empty() {
                return Err(self.errs.spanned(&m.args, "`.to_f32()` takes no arguments"));
            }
            let what = "`.to_f32()` converts an `f16` or a `bf16`; for other types write `as f32`";
            self.constrain_at(recv.ty, Kind::AnyFloat, recv.span, what)?;
            match self.tys.resolve(recv.ty) {
                Ty::Scalar(s) if s.is_half() => {}
                _ => return Err(self.errs.at(recv.span, what)),
            }
            let kind = spoc_ir::ExprKind::Cast {
                value: Box::new(recv.e),
                to: spoc_ir::ScalarType::F32,
            };
            return Ok(self.mk(kind, Ty::Scalar(Scalar::F32), span));
        }
        let Some(f) = MathFn::from_name(&method) else {
            let msg = match method.as_str() {
                "len" => "`.len()` is only defined on buffers and arrays".to_string(),
                "step_by" | "rev" => format!("`.{method}()` can only be used on the range of a `for` loop"),
                "clamp" => "`.clamp(lo, hi)` is not supported in kernels (Rust's panics when `lo > hi` or a bound is NaN, which a kernel cannot do); write `x.max(lo).min(hi)`".to_string(),
                "fract" => "`.fract()` is not supported in kernels yet; write `x - x.trunc()`".to_string(),
                "is_nan" => "`.is_nan()` is not supported in kernels yet; write `x != x`".to_string(),
                "push" | "pop" | "iter" | "iter_mut" | "to_vec" | "collect" | "map" | "sum" => format!("`.{method}()` is not supported in kernels: buffers and arrays are indexed one element at a time (`x[i]`), in a `for` loop over a range"),
                _ => format!("unknown method `{method}` in a kernel; supported are `.len()` on buffers, the math methods of `f32`/`f64` (`sqrt`, `exp`, `ln`, `sin`, `powi`, `powf`, `mul_add`, `min`, `max`, …), and `abs`/`min`/`max`/`wrapping_add`/`wrapping_sub`/`wrapping_mul` on integers"),
            };
            return Err(self.errs.spanned(&m.method, msg));
        };
        let args: Vec<&syn::Expr> = m.args.iter().collect();
        self.math(f, recv, &args, span, pre)
    }

    /// A math intrinsic on `recv` with the remaining `args`.
    fn math(
        &mut self,
        f: MathFn,
        recv: TExpr,
        args: &[&syn::Expr],
        span: Loc,
        pre: &mut Block,
    ) -> Lowered<TExpr> {
        let name = f.name();
        if args.len() + 1 != f.arity() {
            let n = f.arity() - 1;
            return Err(self.errs.at(
                span,
                format!(
                    "`.{name}()` takes {n} argument{}, {} given",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        // The 16-bit floats have the methods the `half` crate gives them (`min`, `max`): a
        // kernel body is also Rust. Others compute in `f32` and convert back.
        let rest = if f.arity() == 1 { "" } else { ".." };
        let half_advice = format!("`.{name}()` is not defined on `{{T}}` (the `half` crate has no `{{T}}::{name}`): compute in `f32` and convert back, `{{T}}::from_f32(x.to_f32().{name}({rest}))`");
        if let Ty::Scalar(h) = self.tys.resolve(recv.ty) {
            if h.is_half() && !matches!(f, MathFn::Min | MathFn::Max) {
                return Err(self.errs.at(span, half_advice.replace("{T}", h.name())));
            }
        }
        let (kind, what) = if matches!(f, MathFn::Min | MathFn::Max) {
            (Kind::Numeric, "needs a number")
        } else if f.allows_integers() {
            self.deferred.push(crate::lower::Deferred::NotHalf {
                ty: recv.ty,
                span,
                advice: half_advice,
            });
            (Kind::Numeric, "needs a number")
        } else {
            (Kind::Float, "is defined on `f32` and `f64` only")
        };
        self.constrain_at(recv.ty, kind, recv.span, &format!("`.{name}()` {what}"))?;
        if f == MathFn::Abs {
            self.deferred.push(Deferred::Signed {
                ty: recv.ty,
                span,
                what: "`abs` (unsigned values are never negative)",
            });
        }
        let ty = recv.ty;
        let mut vals = vec![recv];
        for a in args {
            let mut apre = Block::new();
            let v = self.scalar(a, &mut apre)?;
            self.sequence(&mut vals, &v, apre, pre);
            let expected = if f == MathFn::Powi { Ty::I32 } else { ty };
            self.unify_at(
                expected,
                v.ty,
                v.span,
                &format!("mismatched types in `.{name}()`"),
            )?;
            vals.push(v);
        }
        Ok(self.mk_intrinsic(
            Intrinsic::Math(f),
            vals.into_iter().map(|v| v.e).collect(),
            ty,
            span,
        ))
    }
}

/// `f16` or `bf16` when `path` is `f16::name` / `bf16::name` (the prelude's re-exports of the
/// `half` crate's types, or `half::f16::name`).
fn half_path(path: &syn::Path) -> Option<Scalar> {
    let n = path.segments.len();
    if n < 2 {
        return None;
    }
    let prefix_ok = path.segments.iter().take(n - 2).all(|s| {
        let s = s.ident.to_string();
        s == "half" || s == "spoc" || s == "prelude"
    });
    let ty = Scalar::from_name(&path.segments[n - 2].ident.to_string())?;
    (prefix_ok && ty.is_half()).then_some(ty)
}

impl Lowerer {
    /// `f16::from_f32(x)` / `bf16::from_f32(x)`: `x` an `f32`, rounded to nearest, ties to even
    /// (NaN stays NaN, overflow is infinity).
    fn half_ctor(
        &mut self,
        h: Scalar,
        name: &str,
        c: &syn::ExprCall,
        span: Loc,
        pre: &mut Block,
    ) -> Lowered<TExpr> {
        let t = h.name();
        if name != "from_f32" {
            return Err(self.errs.spanned(
                c,
                format!("`{t}::{name}` is not supported in kernels; {} is made with `{t}::from_f32(x)` from an `f32` (an `f64` or an integer: `{t}::from_f32(x as f32)`)", h.a_name()),
            ));
        }
        let [arg] = c.args.iter().collect::<Vec<_>>()[..] else {
            return Err(self
                .errs
                .spanned(c, format!("`{t}::from_f32` takes 1 argument, an `f32`")));
        };
        let v = self.scalar(arg, pre)?;
        self.unify_at(
            Ty::Scalar(Scalar::F32),
            v.ty,
            v.span,
            &format!("mismatched types: `{t}::from_f32` takes an `f32` (convert with `as f32`)"),
        )?;
        let kind = spoc_ir::ExprKind::Cast {
            value: Box::new(v.e),
            to: h.ir(),
        };
        Ok(self.mk(kind, Ty::Scalar(h), span))
    }
}

/// What argument `a` is, for the hint of a type mismatch: an unsuffixed literal, a variable, or
/// something else.
fn arg_hint(a: &syn::Expr) -> ArgHint {
    match a {
        syn::Expr::Paren(p) => arg_hint(&p.expr),
        syn::Expr::Group(g) => arg_hint(&g.expr),
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) if i.suffix().is_empty() => ArgHint::Literal(i.base10_digits().into()),
            syn::Lit::Float(f) if f.suffix().is_empty() => {
                ArgHint::Literal(f.base10_digits().into())
            }
            _ => ArgHint::Other,
        },
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match arg_hint(&u.expr) {
            ArgHint::Literal(d) => ArgHint::Literal(format!("-{d}")),
            _ => ArgHint::Other,
        },
        syn::Expr::Path(p) if p.qself.is_none() => match p.path.get_ident() {
            Some(i) => ArgHint::Var(crate::lower::ident_name(i)),
            None => ArgHint::Other,
        },
        _ => ArgHint::Other,
    }
}
