//! What `#[device]` expands to: the original fn (still callable on the host) and, next to it, a
//! hidden empty enum of the same name (its companion, see `paths.rs`) whose associated items are
//! the helper's own name (`NAME`), IR accessor (`ir()`, with the definitions of the records it
//! names), whether it has native code (`HAS_NATIVE`), its native code (`native(ctx, args…)`) and
//! its signature (`PARAM_TAGS`, `RET_TAG`, `PARAM_RECORDS`, `RET_RECORD`, `PARAM_NAMES`,
//! `IS_DEVICE`, checked by callers: `checks.rs`); then the checks of its own calls and record
//! uses.

use crate::lower::LoweredFn;
use crate::paths;
use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use spoc_ir::Function;

/// The IR function of a lowered device fn.
pub fn function_ir(name: &str, l: &LoweredFn) -> Function {
    Function {
        name: name.to_string(),
        params: l.params.clone(),
        ret: l.ret.clone(),
        vars: l.vars.clone(),
        body: l.body.clone(),
    }
}

/// The expansion of `#[device]` on `item`.
pub fn expand(item: &syn::ItemFn, l: &LoweredFn) -> TokenStream {
    let ident = &item.sig.ident;
    let name = crate::lower::ident_name(ident);
    let cfgs = cfg_attrs(item);
    let companion = companion(ident, &name, &item.vis, &cfgs, l);
    quote! {
        // The host copy: kernel-style index loops are the idiom here, not a smell.
        #[allow(dead_code, clippy::needless_range_loop)]
        #item

        #companion

        // A plain helper is its own instance for every call (see `checks.rs`).
        #cfgs
        impl<const I: usize> ::spoc::__private::InstanceAt<I> for #ident {
            type T = #ident;
        }
    }
}

/// The associated constants of the companion of a `#[device]` fn named `name` that failed to
/// compile: a device fn, not `OK`, with no signature, native body or instances.
fn failed_consts(name: &str) -> TokenStream {
    unusable_consts(name, true, Span::call_site())
}

/// The associated constants of a companion that stands for no usable function (a `#[device]`
/// fn that failed to compile, or, not `is_device`, the stand-in for a callee that is not one):
/// named `name`, not `OK`, with no signature, native body or instances; spanned at `span`.
pub(crate) fn unusable_consts(name: &str, is_device: bool, span: Span) -> TokenStream {
    quote_spanned! {span=>
        pub const NAME: &'static str = #name;
        pub const IS_DEVICE: bool = #is_device;
        pub const OK: bool = false;
        pub const PARAM_TAGS: &'static [u8] = &[];
        pub const RET_TAG: u8 = 0;
        pub const PARAM_RECORDS: &'static [&'static str] = &[];
        pub const PARAM_NAMES: &'static [&'static str] = &[];
        pub const RET_RECORD: &'static str = "";
        pub const HAS_NATIVE: bool = false;
        pub const INSTANCES: &'static [&'static [u8]] = &[];
    }
}

/// The `#[cfg]` attributes of `item`.
fn cfg_attrs(item: &syn::ItemFn) -> TokenStream {
    let cfgs = item.attrs.iter().filter(|a| a.path().is_ident("cfg"));
    quote!(#(#cfgs)*)
}

/// The expansion of a generic `#[device] fn f<T: Bound>`: on the host, `f` dispatches through a
/// hidden trait to one copy of the body per type; for kernels, the companion `f` picks, through
/// `spoc::__private::Instance`, the companion of the instance (`__spoc_f_f32`, whose IR function
/// is `f_f32`) whose argument and result types are the call's.
pub fn expand_generic(
    item: &syn::ItemFn,
    g: &crate::generic::GenericParam,
    instances: &[crate::Instance],
) -> TokenStream {
    let ident = &item.sig.ident;
    let name = crate::lower::ident_name(ident);
    let vis = &item.vis;
    let cfgs = cfg_attrs(item);
    let host_trait = quote::format_ident!("__spoc_host_{}", name);
    let t = &g.ident;
    let bound = quote::format_ident!("{}", g.bound);
    let self_sig = |ts: TokenStream| crate::generic::substitute(ts, t, "Self");
    let inputs = {
        let i = &item.sig.inputs;
        self_sig(quote!(#i))
    };
    let output = {
        let o = &item.sig.output;
        self_sig(quote!(#o))
    };
    let arg_names: Vec<TokenStream> = item
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(p) => {
                let pat = &p.pat;
                Some(quote!(#pat))
            }
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let mut host_impls = Vec::new();
    let mut companions = Vec::new();
    let mut instance_tags = Vec::new();
    for (k, (s, inst, l)) in instances.iter().enumerate() {
        let ty = quote::format_ident!("{}", s.name());
        let i_inputs = &inst.sig.inputs;
        let i_output = &inst.sig.output;
        let body = &inst.block;
        host_impls.push(quote! {
            #cfgs
            #[allow(dead_code, clippy::needless_range_loop, unused_mut)]
            impl #host_trait for #ty {
                fn __spoc_call(#i_inputs) #i_output #body
            }
        });
        let inst_ident = quote::format_ident!("__spoc_{}_{}", name, s.name());
        let inst_name = format!("{name}_{}", s.name());
        companions.push(companion(&inst_ident, &inst_name, vis, &cfgs, l));
        companions.push(quote! {
            #cfgs
            impl ::spoc::__private::InstanceAt<#k> for #ident {
                type T = #inst_ident;
            }
        });
        let tags: Vec<u8> = l
            .param_tys
            .iter()
            .chain(std::iter::once(&l.ret_ty))
            .map(|t| crate::checks::tag(*t))
            .collect();
        instance_tags.push(quote!(&[ #(#tags),* ]));
    }
    let none = quote::format_ident!("__spoc_{}_none", name);
    let none_consts = failed_consts("");
    let n = instances.len();
    let docs = item.attrs.iter().filter(|a| !a.path().is_ident("cfg"));
    let fn_ident = &item.sig.ident;
    let out_ty = &item.sig.output;
    let in_params = &item.sig.inputs;
    quote! {
        /// The host copies of a generic `#[device]` fn, one per instance type.
        #cfgs
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis trait #host_trait: ::core::marker::Sized {
            fn __spoc_call(#inputs) #output;
        }

        #(#host_impls)*

        #(#docs)*
        #cfgs
        #[allow(dead_code, private_bounds)]
        #vis fn #fn_ident<#t: #bound + #host_trait>(#in_params) #out_ty {
            <#t as #host_trait>::__spoc_call(#(#arg_names),*)
        }

        #cfgs
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis enum #ident {}

        #cfgs
        #[allow(dead_code)]
        impl #ident {
            /// Each instance's parameter tags, then its result's (`checks::tag`).
            pub const INSTANCES: &'static [&'static [u8]] = &[ #(#instance_tags),* ];
        }

        #(#companions)*

        // "No instance": calls without one are reported by their check, and use nothing else.
        #cfgs
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis enum #none {}

        #cfgs
        #[allow(dead_code)]
        impl #none {
            #none_consts
        }

        #cfgs
        impl ::spoc::__private::InstanceAt<#n> for #ident {
            type T = #none;
        }
    }
}

/// The companion `enum #ident {}` of a lowered helper whose IR function is `name`, with its
/// associated items and the checks of its calls and record uses.
fn companion(
    ident: &syn::Ident,
    name: &str,
    vis: &syn::Visibility,
    cfgs: &TokenStream,
    l: &LoweredFn,
) -> TokenStream {
    let name = name.to_string();
    let function = function_ir(&name, l);
    let bytes = Literal::byte_string(&function.to_bytes());
    let helpers = paths::native_paths(l);
    let callees = paths::aliases(&l.helpers);
    let renames = paths::rename_table(&l.helpers);
    let resolver = paths::resolver(&l.helpers, &l.calls, &l.records);
    let (native, has_native) = crate::native_entry::helper_entry(&function, &helpers);
    let native = with_resolver(native, &resolver);
    let param_tags: Vec<u8> = l.param_tys.iter().map(|t| crate::checks::tag(*t)).collect();
    let ret_tag = crate::checks::tag(l.ret_ty);
    let param_records: Vec<String> = l
        .param_tys
        .iter()
        .map(|t| crate::checks::record_name(*t, &l.records))
        .collect();
    let ret_record = crate::checks::record_name(l.ret_ty, &l.records);
    let param_names: Vec<&str> = l.params.iter().map(|p| p.name.as_str()).collect();
    let record_paths: Vec<&syn::Path> = l.records.iter().map(|r| &r.path).collect();
    let resolve_records = if l.records.is_empty() {
        quote!()
    } else {
        quote!(::spoc::__private::spoc_ir::resolve::resolve_function(&mut __spoc_function, &__spoc_records)?;)
    };
    let checks = crate::checks::all(&l.helpers, &l.calls, cfgs, &l.records);
    // The host copy is the fn itself: rustc type-checks its field accesses.
    let record_checks = crate::record_checks::all(l, cfgs, true);
    quote! {
        #cfgs
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis enum #ident {}

        #cfgs
        #[allow(non_snake_case, dead_code)]
        impl #ident {
            /// The helper's own name: its IR function's name.
            pub const NAME: &'static str = #name;

            /// Marks a `#[device]` fn (see spoc-macros' `checks.rs`).
            pub const IS_DEVICE: bool = true;

            /// The helper expanded without errors (calls of it are checked and compiled).
            pub const OK: bool = true;

            /// The tags of the parameter types (spoc-macros' `checks::tag`).
            pub const PARAM_TAGS: &'static [u8] = &[ #(#param_tags),* ];

            /// The tag of the result type.
            pub const RET_TAG: u8 = #ret_tag;

            /// The record name of each parameter (of a record or a buffer of records), else `""`.
            pub const PARAM_RECORDS: &'static [&'static str] = &[ #(#param_records),* ];

            /// The name of each parameter (for the messages of call checks).
            pub const PARAM_NAMES: &'static [&'static str] = &[ #(#param_names),* ];

            /// The record name of the result, if it is a record, else `""`.
            pub const RET_RECORD: &'static str = #ret_record;

            /// The instances of a generic helper; none for a plain one (`checks.rs`).
            pub const INSTANCES: &'static [&'static [u8]] = &[];

            /// True if the helper (and every helper it calls) has native code.
            pub const HAS_NATIVE: bool = {
                #resolver
                #has_native #(&& #callees::HAS_NATIVE)*
            };

            /// The helper's IR, decoded once, its calls named by each callee's own name.
            pub fn ir() -> ::core::result::Result<
                &'static ::spoc::__private::spoc_ir::link::HelperIr,
                ::spoc::__private::spoc_ir::IrError,
            > {
                static IR: ::std::sync::OnceLock<
                    ::core::result::Result<
                        ::spoc::__private::spoc_ir::link::HelperIr,
                        ::spoc::__private::spoc_ir::IrError,
                    >,
                > = ::std::sync::OnceLock::new();
                const BYTES: &[u8] = #bytes;
                #resolver
                IR.get_or_init(|| {
                    // Local names are prefixed: a user's unit struct would capture a plain one.
                    let mut __spoc_function = ::spoc::__private::spoc_ir::Function::from_bytes(BYTES)?;
                    ::spoc::__private::spoc_ir::link::rename_calls(&mut __spoc_function.body, #renames);
                    // The Interpreter's reports name this file (spoc-runtime's
                    // `interpreter/source.rs`).
                    ::spoc::interpreter::__register_helper_file(&__spoc_function, ::core::file!());
                    #[allow(unused_mut)]
                    let mut __spoc_records = ::std::vec::Vec::new();
                    #( <#record_paths as ::spoc::FieldType>::record_defs(&mut __spoc_records); )*
                    #resolve_records
                    ::core::result::Result::Ok(::spoc::__private::spoc_ir::link::HelperIr {
                        function: __spoc_function,
                        records: __spoc_records,
                        variants: ::std::vec::Vec::new(),
                        callees: ::std::vec![
                            #(#callees::ir as ::spoc::__private::spoc_ir::link::HelperRef),*
                        ],
                    })
                })
                .as_ref()
                .map_err(::core::clone::Clone::clone)
            }

            #native
        }

        #checks
        #record_checks
    }
}

/// `native` (the helper's native fn, when there is one) with `resolver` at the start of its body,
/// so that its calls reach the callees' companions through their aliases.
fn with_resolver(native: TokenStream, resolver: &TokenStream) -> TokenStream {
    if resolver.is_empty() {
        return native;
    }
    match syn::parse2::<syn::ImplItemFn>(native.clone()) {
        Ok(mut f) => {
            let body = &f.block;
            f.block = syn::parse_quote!({ #resolver #body });
            quote!(#f)
        }
        Err(_) => native,
    }
}

/// The expansion of `#[device]` on `item` whose body or signature has errors (`errs`): the
/// errors, the fn itself, and a companion that says it is a `#[device]` fn that failed, so that
/// calls of it add no errors of their own (neither "not a `#[device]` function" nor mismatches).
pub fn expand_failed(item: &syn::ItemFn, errs: TokenStream) -> TokenStream {
    let ident = &item.sig.ident;
    let name = crate::lower::ident_name(ident);
    let vis = &item.vis;
    let cfgs = crate::attrs_named(item, "cfg");
    // A generic fn's body is kernel code, not generic Rust: its host copy would add errors.
    let mut host = item.clone();
    if host
        .sig
        .generics
        .params
        .iter()
        .any(|p| matches!(p, syn::GenericParam::Type(_)))
    {
        host.block =
            syn::parse_quote!({ ::core::unreachable!("this #[device] fn failed to compile") });
    }
    let consts = failed_consts(&name);
    quote! {
        #errs

        #[allow(dead_code, unused_variables)]
        #host

        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis enum #ident {}

        #(#cfgs)*
        #[allow(dead_code)]
        impl #ident {
            #consts
        }

        #(#cfgs)*
        impl<const I: usize> ::spoc::__private::InstanceAt<I> for #ident {
            type T = #ident;
        }
    }
}
