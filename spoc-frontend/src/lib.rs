//! # spoc-frontend
//!
//! The front end of spoc's `#[kernel]`, `#[device]` and `#[derive(Record)]` (DESIGN.md §2–§3):
//! Rust functions parsed with syn, type-checked, lowered to spoc's IR and expanded into the
//! code the attributes generate. `spoc-macros` is the proc-macro shell around this crate; a
//! plain library can also be driven in-process, by tests and fuzzers, with a string of Rust
//! source ([`lower_kernel_source`]). Nothing here panics on user input: every problem is a
//! spanned `compile_error!` in the expansion (or an `Err` from [`lower_kernel_source`]).
//!
//! Modules: `sig.rs` (signatures), `types.rs` (types and inference), `lower*.rs` (checking and
//! lowering; records in `lower_record.rs`), `resolve.rs` (final types), `checks.rs`
//! (compile-time checks of helper calls), `record_checks.rs` (of record fields), `generic.rs`
//! (instances of generic fns), `const_generic.rs` (instances of kernels with const parameters), `record.rs` (`#[derive(Record)]`),
//! `paths.rs` (how generated code reaches helpers), `native*.rs` (Rust code generated from the
//! IR), `handle.rs` (`#[kernel]` output), `device_fn.rs` (`#[device]` output).

mod checks;
mod const_generic;
mod consts;
mod device_fn;
mod errors;
mod generic;
mod handle;
mod lower;
mod lower_array;
mod lower_call;
mod lower_expr;
mod lower_intrinsic;
mod lower_match;
mod lower_range;
mod lower_record;
mod lower_stmt;
mod native;
mod native_entry;
mod nesting;
mod paths;
mod record;
mod record_checks;
mod resolve;
mod sig;
mod types;

#[cfg(test)]
mod tests;

use proc_macro2::TokenStream as TokenStream2;

fn parse_item(
    attr: TokenStream2,
    item: TokenStream2,
    what: &str,
) -> Result<syn::ItemFn, TokenStream2> {
    // `#[kernel(instances(…))]` is read with the fn's const parameters (`const_generic.rs`).
    if !attr.is_empty() && what != "kernel" {
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
        let tool = p.segments.first().is_some_and(|s| s.ident == "rustfmt");
        if !(p.is_ident("doc")
            || p.is_ident("cfg")
            || p.is_ident("allow")
            || p.is_ident("expect")
            || tool)
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
/// What `#[kernel]` expands `item` to (`attr` is the attribute's arguments, which must be
/// empty): the kernel handle and its embedded IR and native code, or `compile_error!`s with
/// spans and a stand-in handle when the fn is outside the kernel language.
pub fn expand_kernel(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    if let Err(e) = nesting::check_tokens(&item) {
        let e = e.to_compile_error();
        return match stand_in_fn(&item) {
            Some(f) => fallback_kernel(&f, e),
            None => e,
        };
    }
    nesting::on_expansion_stack(|| expand_kernel_checked(attr, item))
}

fn expand_kernel_checked(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let expand = Expansion {
        attr: "kernel",
        what: "kernel",
        is_kernel: true,
        plain: |item, l| handle::expand(item, l, &l.param_tys),
        generic: handle::expand_generic,
        failed: fallback_kernel,
    };
    expand.run(attr, item)
}

/// One instance of a generic fn: its type argument, the instantiated fn and its lowering.
pub(crate) type Instance = (types::Scalar, syn::ItemFn, lower::LoweredFn);

/// How one attribute (`#[kernel]`, `#[device]`) expands a fn: plain, generic (every instance
/// lowered), or failed with the errors.
struct Expansion {
    /// The attribute's name.
    attr: &'static str,
    /// What the fn is, for generic-parameter errors.
    what: &'static str,
    /// Whether the fn is a kernel.
    is_kernel: bool,
    plain: fn(&syn::ItemFn, &lower::LoweredFn) -> TokenStream2,
    generic: fn(&syn::ItemFn, &generic::GenericParam, &[Instance]) -> TokenStream2,
    failed: fn(&syn::ItemFn, TokenStream2) -> TokenStream2,
}

impl Expansion {
    /// Parses `item` under the attribute's arguments `attr`, lowers it and expands it.
    fn run(&self, attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
        let item = match parse_item(attr.clone(), item, self.attr) {
            Ok(i) => i,
            Err(e) => return e,
        };
        if self.is_kernel {
            match const_generic::parse(&item.sig, &attr) {
                Err(e) => return (self.failed)(&item, e),
                Ok(Some(cp)) => {
                    return match lower_const_instances(&item, &cp) {
                        Ok(instances) => handle::expand_const(&item, &cp, &instances),
                        Err(e) => (self.failed)(&item, e),
                    }
                }
                Ok(None) => {}
            }
        }
        match generic::parse(&item.sig, self.what) {
            Err(e) => (self.failed)(&item, e),
            Ok(Some(g)) => match lower_instances(&item, &g, self.is_kernel) {
                Ok(instances) => (self.generic)(&item, &g, &instances),
                Err(e) => (self.failed)(&item, e),
            },
            Ok(None) => match lower::lower_fn(&item, self.is_kernel) {
                Ok(l) => (self.plain)(&item, &l),
                Err(errs) => (self.failed)(&item, errs.to_compile_errors()),
            },
        }
    }
}

/// Lowers every instance of generic `item`. On errors: those of the first instance that fails,
/// each naming the instance unless every instance fails alike.
fn lower_instances(
    item: &syn::ItemFn,
    g: &generic::GenericParam,
    is_kernel: bool,
) -> Result<Vec<Instance>, TokenStream2> {
    let mut ok = Vec::new();
    let mut failed = Vec::new();
    for &s in &g.types {
        let inst = generic::instance(item, g, s);
        match lower::lower_fn(&inst, is_kernel) {
            Ok(l) => ok.push((s, inst, l)),
            Err(e) => failed.push((s, inst, e)),
        }
    }
    let Some((s, inst, first)) = failed.first() else {
        return Ok(ok);
    };
    let alike = ok.is_empty() && failed.iter().all(|(_, _, e)| e.texts() == first.texts());
    if alike {
        return Err(first.to_compile_errors());
    }
    let note = format!(" (in the instance `{} = {}`)", g.ident, s.name());
    match lower::lower_fn_noted(inst, is_kernel, Some(note)) {
        Err(e) => Err(e.to_compile_errors()),
        Ok(_) => Err(first.to_compile_errors()),
    }
}

/// One instance of a kernel with const parameters: its values and its lowering.
pub(crate) type ConstInstance = (Vec<const_generic::ConstValue>, lower::LoweredFn);

/// Lowers every listed instance of kernel `item`. On errors: those of the first instance that
/// fails, naming the instance (``… (in the instance `BM = 128, BN = 64`)``).
fn lower_const_instances(
    item: &syn::ItemFn,
    cp: &const_generic::ConstParams,
) -> Result<Vec<ConstInstance>, TokenStream2> {
    let mut ok = Vec::new();
    for values in &cp.instances {
        let inst = const_generic::instance(item, cp, values)?;
        let note = format!(" (in the instance `{}`)", cp.describe(values));
        match lower::lower_fn_noted(&inst, true, Some(note)) {
            Ok(l) => ok.push((values.clone(), l)),
            Err(e) => return Err(e.to_compile_errors()),
        }
    }
    Ok(ok)
}

/// The expansion of `#[device]`.
/// What `#[device]` expands `item` to: the host fn and its hidden companion (IR, native code,
/// signature), or `compile_error!`s with spans.
pub fn expand_device(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    if let Err(e) = nesting::check_tokens(&item) {
        return e.to_compile_error();
    }
    nesting::on_expansion_stack(|| expand_device_checked(attr, item))
}

fn expand_device_checked(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let expand = Expansion {
        attr: "device",
        what: "device function",
        is_kernel: false,
        plain: device_fn::expand,
        generic: device_fn::expand_generic,
        failed: device_fn::expand_failed,
    };
    expand.run(attr, item)
}

/// The attributes of `item` whose path is `name` (`doc`, `cfg`), in order.
fn attrs_named<'a>(item: &'a syn::ItemFn, name: &str) -> Vec<&'a syn::Attribute> {
    item.attrs
        .iter()
        .filter(|a| a.path().is_ident(name))
        .collect()
}

/// The checker types of the (already validated) parameters (tests; the expansion takes them
/// from the lowered function).
#[cfg(test)]
fn param_types(item: &syn::ItemFn) -> Vec<types::Ty> {
    let mut errs = errors::Errors::default();
    sig::params(&item.sig, &mut errs, &mut types::Unifier::default())
        .map(|ps| ps.into_iter().map(|p| p.ty).collect())
        .unwrap_or_default()
}

/// On errors: the errors, plus a unit struct of the kernel's name so that uses of the kernel do
/// not add "cannot find value" errors of their own.
fn fallback_kernel(item: &syn::ItemFn, errs: TokenStream2) -> TokenStream2 {
    let ident = &item.sig.ident;
    let vis = &item.vis;
    // A kernel with const parameters keeps them, so that `k::<8>.launch(…)` reports only the
    // kernel's own errors.
    let mut generics = item.sig.generics.clone();
    generics.where_clause = None;
    let consts_only = generics
        .params
        .iter()
        .all(|p| matches!(p, syn::GenericParam::Const(_)));
    if !consts_only {
        generics = syn::Generics::default();
    }
    for p in generics.params.iter_mut() {
        if let syn::GenericParam::Const(c) = p {
            c.default = None;
            c.eq_token = None;
        }
    }
    let (impl_generics, ty_generics, _) = generics.split_for_impl();
    quote::quote! {
        #errs
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy, Debug)]
        #vis struct #ident #impl_generics;

        #[allow(dead_code, unused_variables)]
        impl #impl_generics #ident #ty_generics {
            #vis fn launch<A>(
                &self,
                dev: &::spoc::Device,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                args: A,
            ) -> ::spoc::Result<()> {
                ::core::unreachable!("this kernel failed to compile")
            }

            #vis fn launch_with_shared<A>(
                &self,
                dev: &::spoc::Device,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                shared_bytes: usize,
                args: A,
            ) -> ::spoc::Result<()> {
                ::core::unreachable!("this kernel failed to compile")
            }
        }
    }
}

/// What `#[derive(Record)]` expands `item` (a `#[repr(C)]` struct) to.
pub fn expand_record(item: TokenStream2) -> TokenStream2 {
    if let Err(e) = nesting::check_tokens(&item) {
        return e.to_compile_error();
    }
    nesting::on_expansion_stack(|| record::expand(item))
}

/// A body-less `fn` with the visibility and name of the fn item in `tokens`, found without
/// parsing it (for the stand-in handle of a kernel too deep to parse).
fn stand_in_fn(tokens: &TokenStream2) -> Option<syn::ItemFn> {
    use proc_macro2::TokenTree;
    let mut before = Vec::new();
    let mut it = tokens.clone().into_iter();
    while let Some(t) = it.next() {
        match &t {
            TokenTree::Ident(i) if i == "fn" => {
                let Some(TokenTree::Ident(name)) = it.next() else {
                    return None;
                };
                // The visibility: what stands before `fn`, less attributes and qualifiers.
                let vis: syn::Visibility = before
                    .iter()
                    .position(|t| matches!(t, TokenTree::Ident(i) if i == "pub"))
                    .and_then(|at| {
                        let rest: TokenStream2 = before[at..].iter().cloned().collect();
                        syn::parse::Parser::parse2(
                            |input: syn::parse::ParseStream| {
                                let v: syn::Visibility = input.parse()?;
                                let _: TokenStream2 = input.parse()?;
                                Ok(v)
                            },
                            rest,
                        )
                        .ok()
                    })
                    .unwrap_or(syn::Visibility::Inherited);
                return Some(syn::parse_quote!(#vis fn #name() {}));
            }
            TokenTree::Group(_) | TokenTree::Punct(_) => before.clear(),
            _ => before.push(t),
        }
    }
    None
}

/// A problem in kernel source given as text ([`lower_kernel_source`]): spoc's message and the
/// position it points at (line from 1, column from 0, in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceError {
    /// The message, as the compile error would print it.
    pub message: String,
    /// Line of the construct the message is about, from 1.
    pub line: usize,
    /// Column of that construct, from 0.
    pub column: usize,
}

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl SourceError {
    fn of(e: &syn::Error) -> SourceError {
        let start = e.span().start();
        SourceError {
            message: e.to_string(),
            line: start.line,
            column: start.column,
        }
    }
}

/// Lowers the kernel in `source` (one `fn` item, with or without its `#[kernel]` attribute) to
/// the IR that `#[kernel]` would embed, checked as the attribute checks it. This is the
/// attribute's own front end run in-process, for tools that make kernels at run time (the
/// random-kernel tests) and for fuzzing the front end.
///
/// The kernel must stand alone: generic kernels, calls of `#[device]` helpers and records are
/// refused here (their IR comes from other items, which only the compiler links).
///
/// # Errors
/// Every problem the attribute would report, each with its position; a parse error of
/// `source`.
pub fn lower_kernel_source(source: &str) -> Result<spoc_ir::Kernel, Vec<SourceError>> {
    let one = |e: syn::Error| vec![SourceError::of(&e)];
    let tokens: TokenStream2 = source
        .parse()
        .map_err(|e: proc_macro2::LexError| one(syn::Error::new(e.span(), e.to_string())))?;
    nesting::check_tokens(&tokens).map_err(one)?;
    nesting::on_expansion_stack(|| lower_checked_source(tokens))
}

fn lower_checked_source(tokens: TokenStream2) -> Result<spoc_ir::Kernel, Vec<SourceError>> {
    let one = |e: syn::Error| vec![SourceError::of(&e)];
    let mut item: syn::ItemFn = syn::parse2(tokens).map_err(one)?;
    item.attrs.retain(|a| !a.path().is_ident("kernel"));
    let item = parse_item(TokenStream2::new(), quote::quote!(#item), "kernel").map_err(|_| {
        vec![SourceError {
            message:
                "attributes other than docs, `cfg` and `allow` are not supported on a #[kernel] fn"
                    .into(),
            line: 1,
            column: 0,
        }]
    })?;
    let refuse = |what: &str| {
        let start = item.sig.ident.span().start();
        vec![SourceError {
            message: format!("lower_kernel_source takes stand-alone kernels: {what}"),
            line: start.line,
            column: start.column,
        }]
    };
    match generic::parse(&item.sig, "kernel") {
        Err(_) | Ok(Some(_)) => return Err(refuse("this one is generic")),
        Ok(None) => {}
    }
    let l = lower::lower_fn(&item, true).map_err(|errs| {
        errs.syn_errors()
            .iter()
            .map(SourceError::of)
            .collect::<Vec<_>>()
    })?;
    if !l.helpers.is_empty() {
        return Err(refuse("this one calls #[device] helpers"));
    }
    if !l.records.is_empty() {
        return Err(refuse("this one uses records"));
    }
    Ok(handle::kernel_ir(&lower::ident_name(&item.sig.ident), &l))
}
