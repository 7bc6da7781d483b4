//! What `#[device]` expands to: the original fn (still callable on the host) and a hidden module
//! `__spoc_dev_<name>` holding the helper's IR accessor (`ir()`), whether it has native code
//! (`HAS_NATIVE`) and its native code (`native(ctx, args…)`).

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
    let name = crate::lower::ident_name(&item.sig.ident);
    let vis = &item.vis;
    let module = paths::dev_module(&name);
    let function = function_ir(&name, l);
    let bytes = Literal::byte_string(&function.to_bytes());
    let helpers = paths::helper_paths(&l.helpers, true);
    let callees: Vec<TokenStream> = l
        .helpers
        .iter()
        .map(|h| paths::module_path(h, true))
        .collect();
    let (native, has_native) = crate::native_entry::helper_entry(&function, &helpers);
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    quote! {
        // The host copy: kernel-style index loops are the idiom here, not a smell.
        #[allow(dead_code, clippy::needless_range_loop)]
        #item

        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case, unused_imports, dead_code)]
        #vis mod #module {
            use super::*;

            /// True if the helper (and every helper it calls) has native code.
            pub const HAS_NATIVE: bool = #has_native #(&& #callees::HAS_NATIVE)*;

            /// The helper's IR, decoded once.
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
                IR.get_or_init(|| {
                    ::core::result::Result::Ok(::spoc::__private::spoc_ir::link::HelperIr {
                        function: ::spoc::__private::spoc_ir::Function::from_bytes(BYTES)?,
                        records: ::std::vec::Vec::new(),
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
    }
}
