//! # spoc-macros
//!
//! `#[kernel]` and `#[device]`: Rust functions checked and lowered to spoc's IR at compile time
//! (DESIGN.md §2–§3). Use them through the `spoc` crate (`spoc::prelude::*`); the generated code
//! names only `::spoc::…` paths.
//!
//! - `#[kernel] fn name(params) { body }` becomes a unit struct `name` (the kernel handle) with
//!   `name.launch(&dev, grid, block, (args…))`, `name.ir()`, `name.name()` and `name::DEF`.
//! - `#[device] fn helper(params) -> T { body }` stays callable on the host and gains a hidden
//!   module `__spoc_dev_helper` with its IR and native code, so kernels can call `helper(..)`.
//!
//! The body language is a subset of Rust (DESIGN.md §2). Everything outside it is a compile error
//! pointing at the construct, with a sentence saying what to write instead. The macros never
//! panic on user input.
//!
//! Internals: `sig.rs` (signatures), `types.rs` (types and inference), `lower*.rs` (checking and
//! lowering), `resolve.rs` (final types), `native*.rs` (Rust code generated from the IR),
//! `handle.rs` (`#[kernel]` output), `device_fn.rs` (`#[device]` output).

mod checks;
mod consts;
mod device_fn;
mod errors;
mod handle;
mod lower;
mod lower_call;
mod lower_expr;
mod lower_range;
mod lower_stmt;
mod native;
mod native_entry;
mod paths;
mod resolve;
mod sig;
mod types;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;

/// Turns a function into a GPU kernel: a kernel handle of the same name, launched with
/// `name.launch(&dev, grid, block, (args…))`.
///
/// Parameters are scalars (`bool`, `i32`, `i64`, `u32`, `u64`, `usize`, `f32`, `f64`) and
/// buffers (`&[T]` read-only, `&mut [T]` read-write). The body is checked at compile time;
/// anything outside the kernel language is a compile error.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_kernel(attr.into(), item.into()).into()
}

/// Marks a helper function callable from kernels (and other `#[device]` functions). It keeps its
/// host meaning, and gains IR and native code for kernels.
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_device(attr.into(), item.into()).into()
}

fn parse_item(
    attr: TokenStream2,
    item: TokenStream2,
    what: &str,
) -> Result<syn::ItemFn, TokenStream2> {
    if !attr.is_empty() {
        return Err(
            syn::Error::new_spanned(attr, format!("#[{what}] takes no arguments"))
                .to_compile_error(),
        );
    }
    let item: syn::ItemFn = syn::parse2(item).map_err(|e| {
        syn::Error::new(e.span(), format!("#[{what}] applies to a function: {e}"))
            .to_compile_error()
    })?;
    for a in &item.attrs {
        let p = a.path();
        if !(p.is_ident("doc") || p.is_ident("cfg") || p.is_ident("allow") || p.is_ident("expect"))
        {
            return Err(syn::Error::new_spanned(
                a,
                format!("attributes other than docs, `cfg` and `allow` are not supported on a #[{what}] fn"),
            )
            .to_compile_error());
        }
    }
    Ok(item)
}

/// The expansion of `#[kernel]`.
fn expand_kernel(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let item = match parse_item(attr, item, "kernel") {
        Ok(i) => i,
        Err(e) => return e,
    };
    match lower::lower_fn(&item, true) {
        Ok(l) => {
            let tys = param_types(&item);
            handle::expand(&item, &l, &tys)
        }
        Err(errs) => fallback_kernel(&item, errs.to_compile_errors()),
    }
}

/// The expansion of `#[device]`.
fn expand_device(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let item = match parse_item(attr, item, "device") {
        Ok(i) => i,
        Err(e) => return e,
    };
    match lower::lower_fn(&item, false) {
        Ok(l) => device_fn::expand(&item, &l),
        Err(errs) => {
            let errs = errs.to_compile_errors();
            quote::quote!(#errs #[allow(dead_code)] #item)
        }
    }
}

/// The checker types of the (already validated) parameters.
fn param_types(item: &syn::ItemFn) -> Vec<types::Ty> {
    let mut errs = errors::Errors::default();
    sig::params(&item.sig, &mut errs)
        .map(|ps| ps.into_iter().map(|p| p.ty).collect())
        .unwrap_or_default()
}

/// On errors: the errors, plus a unit struct of the kernel's name so that uses of the kernel do
/// not add "cannot find value" errors of their own.
fn fallback_kernel(item: &syn::ItemFn, errs: TokenStream2) -> TokenStream2 {
    let ident = &item.sig.ident;
    let vis = &item.vis;
    quote::quote! {
        #errs
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy, Debug)]
        #vis struct #ident;

        #[allow(dead_code, unused_variables)]
        impl #ident {
            #vis fn launch<A>(
                &self,
                dev: &::spoc::Device,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                args: A,
            ) -> ::spoc::Result<()> {
                ::core::unreachable!("this kernel failed to compile")
            }
        }
    }
}
