//! Kernels with const parameters: `#[kernel(instances((128, 8), (64, 4)))] fn k<const TILE: u32,
//! const STEPS: u32>(…)` is lowered once per listed value set, each time with every `TILE` and
//! `STEPS` of the fn's tokens replaced by the value as a typed literal (`128u32`). So the values
//! are compile-time constants everywhere: array and shared-array lengths (`[0.0f32; TILE]`,
//! `shared_array::<f32, { TILE * STEPS }>()`), loop bounds, arithmetic.
//!
//! The macro sees one item, not its callers, so it cannot learn which value sets a program
//! launches: the attribute lists them, and the handle `k::<128, 8>` has a `launch` for each
//! listed set (an unlisted one is rustc's "no method named `launch`" error, whose note lists the
//! instances). Types: `u32`, `i32`, `u64`, `i64`, `usize` (the kernel's 32-bit `usize`), `bool`.

use crate::types::Scalar;
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, TokenStream, TokenTree};
use quote::ToTokens;

/// One const parameter: its name and type.
pub struct ConstParam {
    pub ident: Ident,
    pub ty: Scalar,
}

/// A value of a const parameter, as the literal that replaces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConstValue {
    /// An integer, in the parameter's type.
    Int(i128),
    /// A `bool`.
    Bool(bool),
}

impl ConstValue {
    /// The value as Rust tokens of type `ty`: `128u32`, `(-3i32)`, `true`.
    fn tokens(&self, ty: Scalar) -> TokenStream {
        match *self {
            ConstValue::Bool(b) => Ident::new(
                if b { "true" } else { "false" },
                proc_macro2::Span::call_site(),
            )
            .into_token_stream(),
            ConstValue::Int(v) => {
                let lit = TokenTree::Literal(Literal::u128_suffixed(v.unsigned_abs()));
                let lit: TokenStream = format!("{lit}")
                    .replace("u128", ty.name())
                    .parse()
                    .unwrap_or_default();
                if v < 0 {
                    let mut inner = TokenStream::new();
                    inner.extend([TokenTree::Punct(Punct::new('-', Spacing::Alone))]);
                    inner.extend(lit);
                    TokenTree::Group(Group::new(Delimiter::Parenthesis, inner)).into()
                } else {
                    lit
                }
            }
        }
    }

    /// The value as it appears in an instance's IR name (`128`, `m3` for -3, `true`).
    fn name_part(&self) -> String {
        match *self {
            ConstValue::Bool(b) => b.to_string(),
            ConstValue::Int(v) if v < 0 => format!("m{}", v.unsigned_abs()),
            ConstValue::Int(v) => v.to_string(),
        }
    }

    /// The value as Rust source (`128`, `-3`, `true`), for the handle's type and messages.
    pub fn text(&self) -> String {
        match *self {
            ConstValue::Bool(b) => b.to_string(),
            ConstValue::Int(v) => v.to_string(),
        }
    }
}

/// A kernel's const parameters and the value sets it is instantiated with.
pub struct ConstParams {
    pub params: Vec<ConstParam>,
    /// One value per parameter, per instance, in the attribute's order.
    pub instances: Vec<Vec<ConstValue>>,
}

impl ConstParams {
    /// The IR name of the instance `values` of kernel `name`: `sgemm_128_8`.
    pub fn instance_name(&self, name: &str, values: &[ConstValue]) -> String {
        let parts: Vec<String> = values.iter().map(ConstValue::name_part).collect();
        format!("{name}_{}", parts.join("_"))
    }

    /// `BM = 128, BN = 64`, for messages.
    pub fn describe(&self, values: &[ConstValue]) -> String {
        self.params
            .iter()
            .zip(values)
            .map(|(p, v)| format!("{} = {}", p.ident, v.text()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `<128, 64>`: the handle's generic arguments for `values`.
    pub fn type_args(&self, values: &[ConstValue]) -> TokenStream {
        let args = self.params.iter().zip(values).map(|(p, v)| match v {
            // A negative generic argument is an expression: `k::<{ -3i32 }>`.
            ConstValue::Int(n) if *n < 0 => {
                TokenTree::Group(Group::new(Delimiter::Brace, v.tokens(p.ty))).into()
            }
            _ => v.tokens(p.ty),
        });
        quote::quote!(< #(#args),* >)
    }
}

const TYPES: &str = "`u32`, `i32`, `u64`, `i64`, `usize` or `bool`";

fn err(node: &dyn ToTokens, msg: impl std::fmt::Display) -> TokenStream {
    syn::Error::new_spanned(node.to_token_stream(), msg).to_compile_error()
}

/// The const parameters of `sig` with the instances `attr` lists: `Ok(None)` for a fn without
/// const parameters and an empty `attr`.
///
/// # Errors
/// Compile errors for const parameters without `instances(…)` (or the reverse), a type
/// parameter next to const parameters, a default, a type outside [`TYPES`], a value set of the
/// wrong arity, a value that is not a literal of the parameter's type, a value set listed twice.
pub fn parse(sig: &syn::Signature, attr: &TokenStream) -> Result<Option<ConstParams>, TokenStream> {
    let g = &sig.generics;
    let mut params = Vec::new();
    for p in &g.params {
        let syn::GenericParam::Const(c) = p else {
            continue;
        };
        if let Some(d) = &c.default {
            return Err(err(
                d,
                "a kernel const parameter has no default: the values it is compiled for are listed in `#[kernel(instances(…))]`",
            ));
        }
        let ty = match &c.ty {
            syn::Type::Path(tp) if tp.qself.is_none() => tp
                .path
                .get_ident()
                .and_then(|i| Scalar::from_name(&i.to_string())),
            _ => None,
        }
        .filter(|s| !matches!(s, Scalar::F32 | Scalar::F64));
        let Some(ty) = ty else {
            return Err(err(
                &c.ty,
                format!("a kernel const parameter is of type {TYPES}"),
            ));
        };
        params.push(ConstParam {
            ident: c.ident.clone(),
            ty,
        });
    }
    if params.is_empty() {
        if attr.is_empty() {
            return Ok(None);
        }
        return Err(err(
            attr,
            "#[kernel] takes arguments only for const parameters: `#[kernel(instances((128, 8), (64, 4)))] fn k<const A: u32, const B: u32>(…)`",
        ));
    }
    if let Some(t) = g
        .params
        .iter()
        .find(|p| !matches!(p, syn::GenericParam::Const(_)))
    {
        return Err(err(
            t,
            "a kernel takes const parameters or one type parameter, not both yet: write one kernel per element type",
        ));
    }
    if g.where_clause.is_some() {
        return Err(err(
            &g.where_clause,
            "a kernel with const parameters takes no `where` clause",
        ));
    }
    let usage = usage(&params);
    if attr.is_empty() {
        return Err(err(&g.params, usage));
    }
    let instances = parse_instances(attr, &params, &usage)?;
    Ok(Some(ConstParams { params, instances }))
}

/// How to write `instances(…)` for `params`, with example values of their types: a set per
/// instance, parenthesised when there are two parameters or more (`instances(64, 128)`,
/// `instances((64, true), (128, false))`).
fn usage(params: &[ConstParam]) -> String {
    let example = |k: usize| {
        let v: Vec<&str> = params
            .iter()
            .map(|p| match (p.ty, k) {
                (Scalar::Bool, 0) => "true",
                (Scalar::Bool, _) => "false",
                (_, 0) => "64",
                _ => "128",
            })
            .collect();
        if v.len() == 1 {
            v[0].to_string()
        } else {
            format!("({})", v.join(", "))
        }
    };
    let names: Vec<String> = params.iter().map(|p| format!("`{}`", p.ident)).collect();
    if let [p] = params {
        format!(
            "list the values the kernel is compiled for, one per instance: `#[kernel(instances({}, {}))]` compiles it for `{} = {}` and for `{} = {}`",
            example(0),
            example(1),
            p.ident,
            example(0),
            p.ident,
            example(1)
        )
    } else {
        format!(
            "list the values the kernel is compiled for, one parenthesised set per instance, in the order of the parameters ({}): `#[kernel(instances({}, {}))]`",
            names.join(", "),
            example(0),
            example(1)
        )
    }
}

/// The value sets of `instances(…)` in `attr`.
fn parse_instances(
    attr: &TokenStream,
    params: &[ConstParam],
    usage: &str,
) -> Result<Vec<Vec<ConstValue>>, TokenStream> {
    let tokens: Vec<TokenTree> = attr.clone().into_iter().collect();
    let body = match tokens.as_slice() {
        [TokenTree::Ident(i), TokenTree::Group(g)]
            if i == "instances" && g.delimiter() == Delimiter::Parenthesis =>
        {
            g.stream()
        }
        _ => return Err(err(attr, usage)),
    };
    let sets: syn::punctuated::Punctuated<syn::Expr, syn::Token![,]> =
        syn::parse::Parser::parse2(syn::punctuated::Punctuated::parse_terminated, body)
            .map_err(|e| syn::Error::new(e.span(), usage).to_compile_error())?;
    if sets.is_empty() {
        return Err(err(attr, usage));
    }
    let mut out: Vec<Vec<ConstValue>> = Vec::new();
    for set in &sets {
        let values: Vec<&syn::Expr> = match set {
            syn::Expr::Tuple(t) => t.elems.iter().collect(),
            syn::Expr::Paren(p) => vec![&*p.expr],
            single => vec![single],
        };
        if values.len() != params.len() {
            return Err(err(
                set,
                format!(
                    "this instance has {} value(s) for {} const parameter(s); {usage}",
                    values.len(),
                    params.len()
                ),
            ));
        }
        let set_values = params
            .iter()
            .zip(values)
            .map(|(p, v)| value(p, v))
            .collect::<Result<Vec<_>, _>>()?;
        if out.contains(&set_values) {
            return Err(err(set, "this instance is listed twice"));
        }
        out.push(set_values);
    }
    Ok(out)
}

/// The value `e` gives parameter `p`: a literal of its type (negative with a leading `-`).
fn value(p: &ConstParam, e: &syn::Expr) -> Result<ConstValue, TokenStream> {
    let (lit, negative) = match e {
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => (&*u.expr, true),
        other => (other, false),
    };
    let bad = || {
        err(
            e,
            format!(
                "the value of `{}` is a literal of type `{}`",
                p.ident,
                p.ty.name()
            ),
        )
    };
    let syn::Expr::Lit(syn::ExprLit { lit, .. }) = lit else {
        return Err(bad());
    };
    match (lit, p.ty) {
        (syn::Lit::Bool(b), Scalar::Bool) if !negative => Ok(ConstValue::Bool(b.value)),
        (syn::Lit::Int(i), ty) if ty != Scalar::Bool => {
            if !(i.suffix().is_empty() || i.suffix() == ty.name()) {
                return Err(bad());
            }
            let v: i128 = i.base10_parse().map_err(|_| bad())?;
            let v = if negative { -v } else { v };
            let (lo, hi): (i128, i128) = match ty {
                Scalar::I32 => (i32::MIN.into(), i32::MAX.into()),
                Scalar::I64 => (i64::MIN.into(), i64::MAX.into()),
                Scalar::U32 | Scalar::Usize => (0, u32::MAX.into()),
                _ => (0, u64::MAX.into()),
            };
            if v < lo || v > hi {
                return Err(err(
                    e,
                    format!(
                        "{v} does not fit `{}`'s type `{}` (a kernel `usize` is 32 bits)",
                        p.ident,
                        p.ty.name()
                    ),
                ));
            }
            Ok(ConstValue::Int(v))
        }
        _ => Err(bad()),
    }
}

/// `item` with its generics removed and every const parameter replaced by its value in
/// `values` (spanned where the parameter was).
///
/// # Errors
/// A compile error when the replaced tokens no longer parse: a parameter's name is also used as
/// a path segment, field, method or binding (`std::f32::consts::E` with `const E`).
pub fn instance(
    item: &syn::ItemFn,
    cp: &ConstParams,
    values: &[ConstValue],
) -> Result<syn::ItemFn, TokenStream> {
    refuse_rebinding(item, cp)?;
    let mut out = item.clone();
    out.sig.generics = syn::Generics::default();
    let mut tokens = out.to_token_stream();
    for (p, v) in cp.params.iter().zip(values) {
        let value = v.tokens(p.ty);
        // A negative value is `(-3i32)` in an expression, `{ -3i32 }` as a generic argument
        // (`shared_array::<f32, N>()`), where a parenthesis would start a type.
        let generic_arg = match v {
            ConstValue::Int(n) if *n < 0 => {
                let inner: TokenStream = value
                    .clone()
                    .into_iter()
                    .flat_map(|t| match t {
                        TokenTree::Group(g) => g.stream(),
                        t => t.into(),
                    })
                    .collect();
                TokenTree::Group(Group::new(Delimiter::Brace, inner)).into()
            }
            _ => value.clone(),
        };
        tokens = replace(tokens, &p.ident, &value, &generic_arg);
    }
    syn::parse2(tokens).map_err(|e| {
        let names: Vec<String> = cp.params.iter().map(|p| format!("`{}`", p.ident)).collect();
        syn::Error::new(
            e.span(),
            format!(
                "a const parameter's name ({}) is replaced by its value everywhere in the body, and here that is not Rust any more: the name is also used as a path segment, field, method or variable; rename the const parameter",
                names.join(", ")
            ),
        )
        .to_compile_error()
    })
}

/// `ts` with every identifier `from` replaced by the tokens `to`, or `to_arg` between the angle
/// brackets of a turbofish (`::<…>`), spanned where `from` was.
fn replace(ts: TokenStream, from: &Ident, to: &TokenStream, to_arg: &TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    // How many `<` of a turbofish (and of types nested in it) are open.
    let mut angles = 0u32;
    let mut prev: [Option<char>; 2] = [None, None];
    for t in ts {
        let punct = match &t {
            TokenTree::Punct(p) => Some(p.as_char()),
            _ => None,
        };
        match punct {
            Some('<') if angles > 0 || prev == [Some(':'), Some(':')] => angles += 1,
            Some('>') if angles > 0 => angles -= 1,
            _ => {}
        }
        prev = [prev[1], punct];
        match t {
            TokenTree::Ident(i) if i == *from => {
                let with = if angles > 0 { to_arg } else { to };
                out.extend(with.clone().into_iter().map(|mut t| {
                    t.set_span(i.span());
                    t
                }));
            }
            TokenTree::Group(g) => {
                let mut n = Group::new(g.delimiter(), replace(g.stream(), from, to, to_arg));
                n.set_span(g.span());
                out.extend([TokenTree::Group(n)]);
            }
            t => out.extend([t]),
        }
    }
    out
}

/// A compile error for a parameter, `let`, `for` or closure variable that has the name of one
/// of the kernel's const parameters: the name is replaced by the value everywhere, so the
/// variable could not be declared, and Rust refuses it too.
fn refuse_rebinding(item: &syn::ItemFn, cp: &ConstParams) -> Result<(), TokenStream> {
    use syn::visit::Visit;
    /// The identifiers a pattern binds (a match arm's `N` is the constant, and not looked at).
    struct Bound<'a>(Vec<&'a Ident>);
    impl<'ast> Visit<'ast> for Bound<'ast> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push(&p.ident);
            syn::visit::visit_pat_ident(self, p);
        }
    }
    struct Finds<'a> {
        cp: &'a ConstParams,
        found: Option<(&'a Ident, &'static str)>,
    }
    impl<'a> Finds<'a> {
        fn pat(&mut self, pat: &'a syn::Pat, what: &'static str) {
            let mut b = Bound(Vec::new());
            b.visit_pat(pat);
            let hit =
                b.0.into_iter()
                    .find(|i| self.cp.params.iter().any(|p| p.ident == **i));
            if let (None, Some(i)) = (self.found, hit) {
                self.found = Some((i, what));
            }
        }
    }
    impl<'ast> Visit<'ast> for Finds<'ast> {
        fn visit_fn_arg(&mut self, a: &'ast syn::FnArg) {
            if let syn::FnArg::Typed(t) = a {
                self.pat(&t.pat, "parameter");
            }
            syn::visit::visit_fn_arg(self, a);
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            self.pat(&l.pat, "`let` variable");
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
            self.pat(&f.pat, "`for` loop variable");
            syn::visit::visit_expr_for_loop(self, f);
        }
        fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
            for p in &c.inputs {
                self.pat(p, "closure parameter");
            }
            syn::visit::visit_expr_closure(self, c);
        }
    }
    let mut f = Finds { cp, found: None };
    f.visit_item_fn(item);
    match f.found {
        None => Ok(()),
        Some((i, what)) => Err(err(
            i,
            format!("`{i}` is the kernel's const parameter and cannot be rebound: its name stands for its value everywhere in the kernel; rename this {what}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_src(attr: &str, f: &str) -> Result<Option<ConstParams>, String> {
        let item: syn::ItemFn = syn::parse_str(&format!("{f} {{}}")).expect("parses");
        parse(&item.sig, &attr.parse().expect("lexes")).map_err(|e| e.to_string())
    }

    #[test]
    fn instances_are_listed_per_parameter() {
        let cp = parse_src(
            "instances((128, 8), (64, -4))",
            "fn k<const A: u32, const B: i32>(y: &mut [f32])",
        )
        .unwrap()
        .unwrap();
        assert_eq!(cp.instances.len(), 2);
        assert_eq!(cp.instances[1], [ConstValue::Int(64), ConstValue::Int(-4)]);
        assert_eq!(cp.instance_name("k", &cp.instances[1]), "k_64_m4");
        assert_eq!(cp.describe(&cp.instances[0]), "A = 128, B = 8");
        let one = parse_src("instances(4, 8)", "fn k<const N: usize>()")
            .unwrap()
            .unwrap();
        assert_eq!(one.instances, [[ConstValue::Int(4)], [ConstValue::Int(8)]]);
        assert!(parse_src("", "fn k(a: f32)").unwrap().is_none());
    }

    #[test]
    fn refused_instances_say_why() {
        let e = |a: &str, f: &str| parse_src(a, f).err().unwrap_or_default();
        assert!(e("", "fn k<const N: u32>()").contains("list the values"));
        assert!(e("instances(1)", "fn k()").contains("only for const parameters"));
        assert!(e("instances((1, 2))", "fn k<const N: u32>()").contains("2 value(s) for 1"));
        assert!(e("instances(-1)", "fn k<const N: u32>()").contains("does not fit"));
        assert!(e("instances(1u64)", "fn k<const N: u32>()").contains("literal of type `u32`"));
        assert!(e("instances(1.5)", "fn k<const N: u32>()").contains("literal of type"));
        assert!(e("instances(1, 1)", "fn k<const N: u32>()").contains("listed twice"));
        assert!(e("instances(1)", "fn k<const N: f32>()").contains("of type"));
        assert!(e("instances(1)", "fn k<T: Float, const N: u32>()").contains("not both"));
        assert!(e("instances(1)", "fn k<const N: u32 = 3>()").contains("no default"));
        assert!(e("values(1)", "fn k<const N: u32>()").contains("list the values"));
        // The suggested attribute is one a user can paste (a new user's finding:
        // `instances((N))`).
        let one = e("", "fn k<const N: u32>()");
        assert!(one.contains("`#[kernel(instances(64, 128))]`"), "{one}");
        assert!(!one.contains("(("), "{one}");
        let two = e("", "fn k<const A: u32, const F: bool>()");
        assert!(
            two.contains("(`A`, `F`): `#[kernel(instances((64, true), (128, false)))]`"),
            "{two}"
        );
        for (a, f) in [
            ("instances(64, 128)", "fn k<const N: u32>()"),
            (
                "instances((64, true), (128, false))",
                "fn k<const A: u32, const F: bool>()",
            ),
        ] {
            assert!(parse_src(a, f).is_ok(), "{a}");
        }
    }

    #[test]
    fn instances_replace_the_parameters() {
        let item: syn::ItemFn = syn::parse_quote! {
            fn k<const N: u32, const S: i32, const F: bool>(y: &mut [f32]) {
                let a = [0.0f32; N]; y[0] = (S + N as i32) as f32; if F { y[1] = 1.0; }
            }
        };
        let cp = parse(&item.sig, &"instances((8, -2, true))".parse().unwrap())
            .unwrap()
            .unwrap();
        let text = instance(&item, &cp, &cp.instances[0])
            .unwrap()
            .to_token_stream()
            .to_string();
        assert!(text.starts_with("fn k (y : & mut [f32])"), "{text}");
        assert!(text.contains("[0.0f32 ; 8u32]"), "{text}");
        assert!(text.contains("((- 2i32) + 8u32 as i32)"), "{text}");
        assert!(text.contains("if true"), "{text}");
    }
}
