//! What `#[device]` expands to: the original fn (still callable on the host) and, next to it, a
//! hidden empty enum of the same name (its companion, see `paths.rs`) whose associated items are
//! the helper's own name (`NAME`), IR accessor (`ir()`, with the definitions of the records it
//! names), whether it has native code (`HAS_NATIVE`), its native code (`native(ctx, args…)`) and
//! its signature (`PARAM_TAGS`, `RET_TAG`, `PARAM_RECORDS`, `RET_RECORD`, `IS_DEVICE`, checked
//! by callers: `checks.rs`); then the checks of its own calls and record uses.

use crate::lower::LoweredFn;
use crate::paths;
use proc_macro2::{Literal, TokenStream};
use quote::quote;
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
    let vis = &item.vis;
    let function = function_ir(&name, l);
    let bytes = Literal::byte_string(&function.to_bytes());
    let helpers = paths::helper_paths(&l.helpers);
    let callees = paths::aliases(&l.helpers);
    let renames = paths::rename_table(&l.helpers);
    let resolver = paths::resolver(&l.helpers, &l.calls);
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
    let record_paths: Vec<&syn::Path> = l.records.iter().map(|r| &r.path).collect();
    let resolve_records = if l.records.is_empty() {
        quote!()
    } else {
        quote!(::spoc::__private::spoc_ir::resolve::resolve_function(&mut function, &records)?;)
    };
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    let cfgs = quote!(#(#cfgs)*);
    let checks = crate::checks::all(&l.helpers, &l.calls, &cfgs, &l.records);
    let record_checks = crate::record_checks::all(l, &cfgs);
    quote! {
        // The host copy: kernel-style index loops are the idiom here, not a smell.
        #[allow(dead_code, clippy::needless_range_loop)]
        #item

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

            /// The record name of the result, if it is a record, else `""`.
            pub const RET_RECORD: &'static str = #ret_record;

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
                    let mut function = ::spoc::__private::spoc_ir::Function::from_bytes(BYTES)?;
                    ::spoc::__private::spoc_ir::link::rename_calls(&mut function.body, #renames);
                    // The Interpreter's reports name this file (spoc-runtime's
                    // `interpreter/source.rs`).
                    ::spoc::interpreter::__register_helper_file(&function, ::core::file!());
                    #[allow(unused_mut)]
                    let mut records = ::std::vec::Vec::new();
                    #( <#record_paths as ::spoc::FieldType>::record_defs(&mut records); )*
                    #resolve_records
                    ::core::result::Result::Ok(::spoc::__private::spoc_ir::link::HelperIr {
                        function,
                        records,
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
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    quote! {
        #errs

        #[allow(dead_code)]
        #item

        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis enum #ident {}

        #(#cfgs)*
        #[allow(dead_code)]
        impl #ident {
            pub const NAME: &'static str = #name;
            pub const IS_DEVICE: bool = true;
            pub const OK: bool = false;
            pub const PARAM_TAGS: &'static [u8] = &[];
            pub const RET_TAG: u8 = 0;
            pub const PARAM_RECORDS: &'static [&'static str] = &[];
            pub const RET_RECORD: &'static str = "";
            pub const HAS_NATIVE: bool = false;
        }
    }
}
