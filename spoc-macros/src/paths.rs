//! How generated code reaches the companion of a called `#[device]` helper.
//!
//! `#[device] fn helper` generates, next to the fn, a hidden empty enum of the same name (types
//! and functions live in different namespaces) whose associated items are the helper's IR,
//! native code and signature. So the path a function calls a helper by (`helper`, `b::helper`,
//! an import alias `bh`) also names its companion, and importing the fn by name
//! (`use b::helper;`) imports the companion with it.
//!
//! Generated code names companions through aliases declared by [`resolver`] at the top of each
//! block that uses them: `use <path as written> as __spoc_h0;`, next to a glob import of fallback
//! stubs under the same aliases. An explicit import shadows a glob import namespace by
//! namespace, so the stubs are used only when the callee has no companion, that is when it is
//! not a `#[device]` fn; then the only error is the one `checks.rs` reports ("`f` is not a
//! #[device] function"), not a resolution error pointing at generated code.

use crate::lower::{CallCheck, HelperUse};
use crate::native::HelperPaths;
use crate::types::Ty;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};

/// The alias of helper `i` (spanned at its first call).
pub fn alias(helpers: &[HelperUse], i: usize) -> Ident {
    let span = helpers
        .get(i)
        .map_or_else(proc_macro2::Span::call_site, |h| h.span.first);
    format_ident!("__spoc_h{}", i, span = span)
}

/// The aliases of every helper, by name, for the native code generator.
pub fn helper_paths(helpers: &[HelperUse]) -> HelperPaths {
    helpers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let a = alias(helpers, i);
            (h.name.clone(), (quote!(#a), h.span.first))
        })
        .collect()
}

/// Every helper's alias, in `helpers` order.
pub fn aliases(helpers: &[HelperUse]) -> Vec<Ident> {
    (0..helpers.len()).map(|i| alias(helpers, i)).collect()
}

/// `(name called by, alias::NAME)` pairs: the table that renames a function's calls from the
/// name they were written with to each helper's own name, before linking.
pub fn rename_table(helpers: &[HelperUse]) -> TokenStream {
    let pairs = helpers.iter().enumerate().map(|(i, h)| {
        let name = &h.name;
        let a = alias(helpers, i);
        quote!((#name, #a::NAME))
    });
    quote!(&[ #(#pairs),* ])
}

/// The Rust type native code passes or receives for a value of checker type `t`.
fn native_type(t: Ty) -> TokenStream {
    match t {
        Ty::Scalar(s) => crate::native::rust_scalar(s.ir()).unwrap_or_else(|| quote!(())),
        Ty::Buffer { .. } => quote!(impl ::core::marker::Sized),
        Ty::Unit | Ty::Var(_) => quote!(()),
    }
}

/// The items that declare every helper's alias, for the start of a block: one explicit import
/// per helper and a glob import of fallback stubs (never run: a callee without a companion is a
/// compile error reported by `checks.rs`).
pub fn resolver(helpers: &[HelperUse], calls: &[CallCheck]) -> TokenStream {
    if helpers.is_empty() {
        return quote!();
    }
    let mut imports = Vec::new();
    let mut stubs = Vec::new();
    for (i, h) in helpers.iter().enumerate() {
        let a = alias(helpers, i);
        let path = &h.path;
        let span = h.span.first;
        imports.push(quote_spanned!(span=> #[allow(unused_imports)] use #path as #a;));
        let (args, ret) = match calls.iter().find(|c| c.helper == i) {
            Some(c) => (
                c.args.iter().map(|a| native_type(a.0)).collect::<Vec<_>>(),
                native_type(c.ret),
            ),
            None => (Vec::new(), quote!(())),
        };
        stubs.push(quote! {
            pub enum #a {}
            impl #a {
                pub const NAME: &'static str = "";
                pub const HAS_NATIVE: bool = false;
                pub fn ir() -> ::core::result::Result<
                    &'static ::spoc::__private::spoc_ir::link::HelperIr,
                    ::spoc::__private::spoc_ir::IrError,
                > {
                    ::core::unreachable!("not a #[device] function")
                }
                pub fn native(
                    _: &::spoc::__private::ThreadCtx,
                    #(_: #args),*
                ) -> ::core::result::Result<#ret, ::spoc::__private::Trap> {
                    ::core::unreachable!("not a #[device] function")
                }
            }
        });
    }
    quote! {
        #(#imports)*
        #[allow(non_camel_case_types, dead_code, clippy::all)]
        mod __spoc_not_device {
            #(#stubs)*
        }
        #[allow(unused_imports)]
        use __spoc_not_device::*;
    }
}
