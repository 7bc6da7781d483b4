//! Paths from generated code to the `__spoc_dev_<name>` module of a called `#[device]` helper.

use crate::lower::HelperUse;
use crate::native::HelperPaths;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned};

/// The module name `#[device] fn name` generates.
pub fn dev_module(name: &str) -> syn::Ident {
    format_ident!("__spoc_dev_{}", name)
}

/// The path of `h`'s module as seen from the kernel's scope, or, with `from_dev_module`, from
/// inside another helper's module (one level deeper: a leading `self` becomes `super`, a leading
/// `super` becomes `super::super`; other paths resolve through its `use super::*`).
pub fn module_path(h: &HelperUse, from_dev_module: bool) -> TokenStream {
    let span: Span = h.span.first;
    let segs: Vec<&syn::Ident> = h.path.segments.iter().map(|s| &s.ident).collect();
    let (prefix, _) = segs.split_at(segs.len().saturating_sub(1));
    let module = dev_module(&h.name);
    let leading = h.path.leading_colon.map(|_| quote_spanned!(span=> ::));
    let mut prefix: Vec<TokenStream> = prefix.iter().map(|i| quote_spanned!(span=> #i)).collect();
    if from_dev_module && leading.is_none() {
        match segs.first().map(|i| i.to_string()) {
            Some(first) if first == "self" && segs.len() > 1 => {
                prefix[0] = quote_spanned!(span=> super);
            }
            Some(first) if first == "super" && segs.len() > 1 => {
                prefix.insert(0, quote_spanned!(span=> super));
            }
            _ => {}
        }
    }
    quote_spanned!(span=> #leading #(#prefix ::)* #module)
}

/// The paths of every helper, by name.
pub fn helper_paths(helpers: &[HelperUse], from_dev_module: bool) -> HelperPaths {
    helpers
        .iter()
        .map(|h| {
            (
                h.name.clone(),
                (module_path(h, from_dev_module), h.span.first),
            )
        })
        .collect()
}
