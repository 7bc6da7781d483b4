//! How generated code reaches the companion of a called `#[device]` helper.
//!
//! `#[device] fn helper` generates, next to the fn, a hidden empty enum of the same name (types
//! and functions live in different namespaces) whose associated items are the helper's IR,
//! native code and signature. So the path a function calls a helper by (`helper`, `b::helper`,
//! an import alias `bh`) also names its companion, and importing the fn by name
//! (`use b::helper;`) imports the companion with it.
//!
//! Generated code names companions through aliases declared by [`resolver`] at the top of each
//! block that uses them (see there): the callee's companion when the callee is a `#[device]` fn
//! and every call of it fits its signature, else a stub. So a call of a plain fn, or a call that
//! does not fit, is reported once, by `checks.rs` in spoc's words ("`f` is not a `#[device]`
//! function", "mismatched types: argument 3 of `put` …"), and never as a resolution or type
//! error in generated code.

use crate::lower::{CallCheck, HelperUse};
use crate::native::HelperPaths;
use proc_macro2::{Ident, Span, TokenStream};
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

/// [`helper_paths`] and, for the native generator: under `native::record_key`, the path of
/// every record `l` names; under `native::span_key`, the span of each field path's first use
/// (`field Root.a.b`) and of each record's first literal (`lit Name`), where rustc's errors in
/// native code then point.
pub fn native_paths(l: &crate::lower::LoweredFn) -> HelperPaths {
    let mut out = helper_paths(&l.helpers);
    for r in &l.records {
        let p = &r.path;
        out.insert(
            crate::native::record_key(&r.name),
            (quote!(#p), r.span.first),
        );
    }
    for c in &l.field_checks {
        let Some(root) = l.records.get(c.path.root as usize) else {
            continue;
        };
        let key = format!("field {}.{}", root.name, c.path.fields.join("."));
        out.entry(crate::native::span_key(&key))
            .or_insert((quote!(), c.span.first));
    }
    for lit in &l.record_lits {
        if let Some(r) = l.records.get(lit.record as usize) {
            let key = format!("lit {}", r.name);
            out.entry(crate::native::span_key(&key))
                .or_insert((quote!(), lit.span.first));
        }
    }
    out
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

/// The items that declare every helper's alias, for the start of a block.
///
/// For helper `i`: `use <path> as __spoc_r{i};` next to a glob import of a stub of the same
/// name (the stub is seen when the callee is not a `#[device]` fn), the instance its calls use
/// (`type __spoc_x{i}`, see `checks::instance_of`: a generic helper's instance for the first
/// call's argument and result types, a plain helper itself; the calls of another instance are
/// another entry, `resolve.rs`), and the alias
/// `type __spoc_h{i}` chosen at compile time between the callee and the stub: the callee when
/// every call of it in this function fits its signature, else the stub, generic enough to take
/// any call. So a mismatch is reported once, by `checks.rs` in spoc's words, and never as
/// a rustc type error in generated code. The stubs never run: their program does not compile.
pub fn resolver(
    helpers: &[HelperUse],
    calls: &[CallCheck],
    recs: &[crate::types::RecordUse],
) -> TokenStream {
    if helpers.is_empty() {
        return quote!();
    }
    let mut imports = Vec::new();
    let mut stubs = Vec::new();
    let mut picks = Vec::new();
    for (i, h) in helpers.iter().enumerate() {
        let real = format_ident!("__spoc_r{}", i);
        let a = alias(helpers, i);
        let path = &h.path;
        let span = h.span.first;
        imports.push(quote_spanned!(span=> #[allow(unused_imports)] use #path as #real;));
        let mine: Vec<&CallCheck> = calls.iter().filter(|c| c.helper == i).collect();
        // Generic in every argument and the result, so that any call fits it (lowering made
        // every call of one helper pass the same number of arguments).
        let n = mine.first().map_or(0, |c| c.args.len());
        let generics: Vec<Ident> = (0..n).map(|k| format_ident!("A{}", k)).collect();
        let consts = crate::device_fn::unusable_consts("", false, Span::call_site());
        stubs.push(quote! {
            pub enum #real {}
            impl #real {
                #consts
                pub fn ir() -> ::core::result::Result<
                    &'static ::spoc::__private::spoc_ir::link::HelperIr,
                    ::spoc::__private::spoc_ir::IrError,
                > {
                    // Reached only by a program that does not compile; never a panic.
                    ::core::result::Result::Err(::spoc::__private::spoc_ir::IrError::Link {
                        kernel: ::std::string::String::new(),
                        message: ::std::string::String::from(
                            "a helper call the kernel macro could not resolve (an internal error of spoc; please report it)",
                        ),
                    })
                }
                pub fn native<#(#generics,)* R>(
                    _: &::spoc::__private::ThreadCtx,
                    #(_: #generics,)*
                    _: &mut dyn ::spoc::__private::Simt,
                ) -> ::core::result::Result<R, ::spoc::__private::Trap> {
                    ::core::unreachable!("a call that does not compile")
                }
            }
            impl<const I: usize> ::spoc::__private::InstanceAt<I> for #real {
                type T = #real;
            }
        });
        // The instance the calls use: a generic helper's instance of the first call's types.
        let inst = format_ident!("__spoc_x{}", i);
        let chosen = mine.first().map_or_else(
            || quote!(#real),
            |c| crate::checks::instance_of(&quote!(#real), c),
        );
        let ok = mine
            .iter()
            .map(|c| crate::checks::fits_expr(&quote!(#inst), c, recs))
            .collect::<Vec<_>>();
        picks.push(quote_spanned! {span=>
            #[allow(non_camel_case_types)]
            type #inst = #chosen;
        });
        picks.push(quote! {
            impl __SpocPick<#i, true> for () { type T = #inst; }
            impl __SpocPick<#i, false> for () { type T = __spoc_stubs::#real; }
            #[allow(non_camel_case_types)]
            type #a = <() as __SpocPick<#i, { #inst::IS_DEVICE && #inst::OK #(&& #ok)* }>>::T;
        });
    }
    quote! {
        #(#imports)*
        #[allow(non_camel_case_types, dead_code, clippy::all)]
        mod __spoc_stubs {
            #(#stubs)*
        }
        #[allow(unused_imports)]
        use __spoc_stubs::*;
        trait __SpocPick<const I: usize, const OK: bool> {
            type T;
        }
        #(#picks)*
    }
}
