//! Generic kernels and helpers: `fn axpy<T: Float>(…)` is lowered once per type its bound
//! admits, each time with `T` replaced by the type in the fn's tokens (so `T::MAX`, `x as T`,
//! `let v: T` mean what they say for that type). Bounds: `Float` (`f32`, `f64`), `Int` (`i32`,
//! `u32`, `i64`, `u64`), `Number` (both). One type parameter; no lifetime or const parameters.

use crate::types::Scalar;
use proc_macro2::{Group, Ident, TokenStream, TokenTree};
use quote::ToTokens;

/// A fn's type parameter and the types it is instantiated with.
pub struct GenericParam {
    pub ident: Ident,
    /// The bound as written (`Float`), for messages.
    pub bound: String,
    pub types: Vec<Scalar>,
}

const HELP: &str = "`T: Float` (f32, f64), `T: Int` (i32, u32, i64, u64) or `T: Number` (both)";

/// The instance types of bound `name`.
fn bound_types(name: &str) -> Option<Vec<Scalar>> {
    use Scalar::*;
    Some(match name {
        "Float" => vec![F32, F64],
        "Int" => vec![I32, U32, I64, U64],
        "Number" => vec![F32, F64, I32, U32, I64, U64],
        _ => return None,
    })
}

/// The type parameter of `sig`, if it has one: `Ok(None)` for a fn without type parameters
/// (lifetime parameters are left to the signature checks, which refuse them).
///
/// # Errors
/// Compile errors for more than one type parameter, const parameters, lifetimes next to a type
/// parameter, a missing or unsupported bound, a default.
pub fn parse(sig: &syn::Signature, what: &str) -> Result<Option<GenericParam>, TokenStream> {
    let g = &sig.generics;
    let types: Vec<&syn::TypeParam> = g
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    let err = |node: &dyn ToTokens, msg: String| {
        Err(syn::Error::new_spanned(node.to_token_stream(), msg).to_compile_error())
    };
    if let Some(c) = g.params.iter().find_map(|p| match p {
        syn::GenericParam::Const(c) => Some(c),
        _ => None,
    }) {
        return err(
            c,
            format!("const generic parameters are not supported on a {what}; a {what} may take one type parameter: {HELP}"),
        );
    }
    let [t] = types.as_slice() else {
        if types.is_empty() {
            return Ok(None);
        }
        return err(
            g,
            format!("a generic {what} takes one type parameter (`<T: Float>`), not {}; write one {what} per combination", types.len()),
        );
    };
    if let Some(l) = g.params.iter().find_map(|p| match p {
        syn::GenericParam::Lifetime(l) => Some(l),
        _ => None,
    }) {
        return err(
            l,
            format!("lifetime parameters are not needed on a {what}: remove `{}` (buffers are `&[T]` and `&mut [T]`)", l.lifetime),
        );
    }
    if let Some(d) = &t.default {
        return err(
            d,
            "a kernel type parameter has no default: it is instantiated for every type of its bound"
                .into(),
        );
    }
    let mut bounds: Vec<&syn::TypeParamBound> = t.bounds.iter().collect();
    if let Some(w) = &g.where_clause {
        for p in &w.predicates {
            match p {
                syn::WherePredicate::Type(pt) if matches!(&pt.bounded_ty, syn::Type::Path(tp) if tp.path.is_ident(&t.ident)) =>
                {
                    bounds.extend(pt.bounds.iter());
                }
                other => {
                    return err(
                        other,
                        format!(
                            "unsupported `where` clause: bound the type parameter alone, {HELP}"
                        ),
                    )
                }
            }
        }
    }
    let ident = &t.ident;
    let [bound] = bounds.as_slice() else {
        if bounds.is_empty() {
            return err(
                ident,
                format!("`{ident}` needs a bound saying which types to instantiate the {what} with: {HELP}"),
            );
        }
        return err(&t.bounds, format!("`{ident}` takes one bound: {HELP}"));
    };
    let name = match bound {
        syn::TypeParamBound::Trait(tb) if tb.lifetimes.is_none() => tb
            .path
            .segments
            .last()
            .filter(|s| s.arguments.is_none())
            .map(|s| s.ident.to_string()),
        _ => None,
    };
    let Some((name, types)) = name.and_then(|n| bound_types(&n).map(|ts| (n, ts))) else {
        let shown = bound.to_token_stream().to_string().replace(' ', "");
        return err(
            bound,
            format!("unsupported bound `{shown}`: a {what}'s type parameter is bounded by {HELP}"),
        );
    };
    Ok(Some(GenericParam {
        ident: ident.clone(),
        bound: name,
        types,
    }))
}

/// `item` with its generics removed and every `T` replaced by `s` (spanned where `T` was).
pub fn instance(item: &syn::ItemFn, g: &GenericParam, s: Scalar) -> syn::ItemFn {
    let mut out = item.clone();
    out.sig.generics = syn::Generics::default();
    let tokens = substitute(out.to_token_stream(), &g.ident, s.name());
    syn::parse2(tokens).unwrap_or(out)
}

/// `ts` with every identifier `from` replaced by `to` (keeping its span).
pub fn substitute(ts: TokenStream, from: &Ident, to: &str) -> TokenStream {
    ts.into_iter()
        .map(|t| match t {
            TokenTree::Ident(i) if i == *from => TokenTree::Ident(Ident::new(to, i.span())),
            TokenTree::Group(g) => {
                let mut n = Group::new(g.delimiter(), substitute(g.stream(), from, to));
                n.set_span(g.span());
                TokenTree::Group(n)
            }
            t => t,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(s: &str) -> syn::Signature {
        syn::parse_str::<syn::ItemFn>(&format!("{s} {{}}"))
            .expect("parses")
            .sig
    }

    fn error(s: &str) -> String {
        match parse(&sig(s), "kernel") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("`{s}` was accepted"),
        }
    }

    #[test]
    fn bounds_name_their_types() {
        let g = parse(&sig("fn k<T: Float>(a: T)"), "kernel")
            .unwrap()
            .unwrap();
        assert_eq!(g.types, [Scalar::F32, Scalar::F64]);
        let g = parse(&sig("fn k<U>(a: U) where U: spoc::Int"), "kernel")
            .unwrap()
            .unwrap();
        assert_eq!(g.types.len(), 4);
        assert_eq!(g.bound, "Int");
        assert!(parse(&sig("fn k(a: f32)"), "kernel").unwrap().is_none());
        assert!(parse(&sig("fn k<'a>(a: &'a [f32])"), "kernel")
            .unwrap()
            .is_none());
    }

    #[test]
    fn refused_generics_say_why() {
        assert!(error("fn k<T: Float, U: Float>(a: T)").contains("one type parameter"));
        assert!(error("fn k<T>(a: T)").contains("needs a bound"));
        assert!(error("fn k<T: Copy>(a: T)").contains("unsupported bound `Copy`"));
        assert!(error("fn k<T: Float + Copy>(a: T)").contains("takes one bound"));
        assert!(error("fn k<const N: usize>(a: f32)").contains("const generic"));
        assert!(error("fn k<'a, T: Float>(a: &'a [T])").contains("lifetime"));
    }

    #[test]
    fn instances_replace_the_parameter() {
        let item: syn::ItemFn = syn::parse_quote! {
            fn k<T: Float>(a: T, y: &mut [T]) { let b: T = a as T; y[0] = T::MAX; }
        };
        let g = parse(&item.sig, "kernel").unwrap().unwrap();
        let i = instance(&item, &g, Scalar::F64);
        let text = i.to_token_stream().to_string();
        assert!(
            text.starts_with("fn k (a : f64 , y : & mut [f64])"),
            "{text}"
        );
        assert!(
            text.contains("let b : f64 = a as f64 ; y [0] = f64 :: MAX ;"),
            "{text}"
        );
    }
}
