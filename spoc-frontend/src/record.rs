//! `#[derive(Record)]`: a `#[repr(C)]` struct of scalars and records becomes a record type the
//! kernel language can use (kernel values, helper arguments and results, buffer elements).
//!
//! The derive implements `spoc::DeviceCopy`, `spoc::FieldType` and `spoc::Record`: the field
//! table the kernel macro checks field accesses against at compile time, and the IR definition
//! (`spoc_ir::RecordDef`) linked into each kernel that uses the record.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The expansion of `#[derive(Record)]`.
pub fn expand(input: TokenStream) -> TokenStream {
    let item: syn::DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    match expand_item(&item) {
        Ok(t) => t,
        Err(e) => e.to_compile_error(),
    }
}

fn expand_item(item: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let ident = &item.ident;
    if !item.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &item.generics,
            "a record cannot be generic: kernels need one concrete layout",
        ));
    }
    let repr_c = item.attrs.iter().any(|a| {
        a.path().is_ident("repr")
            && a.parse_args_with(
                syn::punctuated::Punctuated::<syn::Ident, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|ids| ids.iter().any(|i| i == "C"))
    });
    if !repr_c {
        return Err(syn::Error::new_spanned(
            ident,
            "a record must be `#[repr(C)]`: the host and every device must agree on its layout",
        ));
    }
    let syn::Data::Struct(data) = &item.data else {
        return Err(syn::Error::new_spanned(
            ident,
            "`#[derive(Record)]` applies to a struct with named fields",
        ));
    };
    let syn::Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new(
            data.fields.span(),
            "a record needs named fields (`struct P { x: f32, y: f32 }`)",
        ));
    };
    if fields.named.is_empty() {
        return Err(syn::Error::new_spanned(
            ident,
            "a record needs at least one field",
        ));
    }
    let name = ident.to_string();
    let names = std::iter::once(ident).chain(fields.named.iter().filter_map(|f| f.ident.as_ref()));
    if let Some(bad) = names
        .into_iter()
        .find(|i| !crate::lower::ident_name(i).is_ascii())
    {
        return Err(syn::Error::new_spanned(
            bad,
            format!("`{bad}` is not an ASCII identifier: records and their fields are named in the C, PTX and SPIR-V spoc generates, whose names are ASCII; rename it with ASCII letters, digits and `_`"),
        ));
    }
    let mut infos = Vec::new();
    let mut defs = Vec::new();
    let mut nested = Vec::new();
    for f in &fields.named {
        let fname = crate::lower::ident_name(f.ident.as_ref().expect("named field"));
        let ty = &f.ty;
        let bound = quote_spanned! {ty.span()=>
            const _: () = {
                fn __spoc_field_type<T: ::spoc::FieldType>() {}
                fn __spoc_check() { __spoc_field_type::<#ty>(); }
            };
        };
        nested.push(bound);
        infos.push(quote! {
            ::spoc::FieldInfo {
                name: #fname,
                tag: <#ty as ::spoc::FieldType>::TAG,
                fields: <#ty as ::spoc::FieldType>::NESTED_FIELDS,
            }
        });
        defs.push(quote! {
            ::spoc::__private::spoc_ir::Field {
                name: ::std::string::String::from(#fname),
                ty: <#ty as ::spoc::FieldType>::ir_type(),
            }
        });
    }
    let field_of = fields.named.iter().map(|f| {
        let h = field_hash(&crate::lower::ident_name(
            f.ident.as_ref().expect("named field"),
        ));
        let ty = &f.ty;
        quote! {
            impl ::spoc::__private::FieldOf<#h> for #ident {
                type T = #ty;
            }
        }
    });
    let tys = fields.named.iter().map(|f| &f.ty);
    let all_tys: Vec<&syn::Type> = fields.named.iter().map(|f| &f.ty).collect();
    let all_names: Vec<&syn::Ident> = fields
        .named
        .iter()
        .map(|f| f.ident.as_ref().expect("named field"))
        .collect();
    Ok(quote! {
        #(#nested)*

        // SAFETY: `#[repr(C)]` (checked above) with only `FieldType` fields (checked by the
        // bounds above), each valid for any bit pattern a kernel writes and for all-zero bytes.
        // The record has padding when its fields do not fill it or a field has padding, and
        // `write_bytes` then writes each field at its offset through the field's own
        // `write_bytes`, every other byte zero.
        unsafe impl ::spoc::DeviceCopy for #ident {
            const HAS_PADDING: bool = {
                let filled = 0usize #( + ::core::mem::size_of::<#all_tys>() )*;
                filled != ::core::mem::size_of::<Self>()
                    #( || <#all_tys as ::spoc::DeviceCopy>::HAS_PADDING )*
            };

            fn write_bytes(&self, out: &mut [u8]) {
                ::core::assert_eq!(out.len(), ::core::mem::size_of::<Self>(), "write_bytes: wrong length");
                if !<Self as ::spoc::DeviceCopy>::HAS_PADDING {
                    // SAFETY: no padding, so every byte of `self` is initialised; `out` has room.
                    unsafe {
                        ::core::ptr::copy_nonoverlapping(
                            (self as *const Self).cast::<u8>(),
                            out.as_mut_ptr(),
                            ::core::mem::size_of::<Self>(),
                        )
                    };
                    return;
                }
                out.fill(0);
                #(
                    {
                        let at = ::core::mem::offset_of!(#ident, #all_names);
                        <#all_tys as ::spoc::DeviceCopy>::write_bytes(
                            &self.#all_names,
                            &mut out[at..at + ::core::mem::size_of::<#all_tys>()],
                        );
                    }
                )*
            }
        }

        impl ::spoc::FieldType for #ident {
            const TAG: ::spoc::TypeTag = ::spoc::TypeTag::Record(#name);
            const NESTED_FIELDS: &'static [::spoc::FieldInfo] = <Self as ::spoc::Record>::FIELDS;
            fn ir_type() -> ::spoc::__private::spoc_ir::Type {
                ::spoc::__private::spoc_ir::Type::Record(::std::string::String::from(#name))
            }
            fn record_defs(out: &mut ::std::vec::Vec<::spoc::__private::spoc_ir::RecordDef>) {
                #( <#tys as ::spoc::FieldType>::record_defs(out); )*
                ::spoc::push_record_def(out, ::spoc::__private::spoc_ir::RecordDef {
                    name: ::std::string::String::from(#name),
                    fields: ::std::vec![ #(#defs),* ],
                });
            }
        }

        // Each field's type by the hash of its name, for native code (`spoc::__private::FieldOf`).
        #(#field_of)*

        // SAFETY: generated from the struct's own `#[repr(C)]` field list, in order.
        unsafe impl ::spoc::Record for #ident {
            const NAME: &'static str = #name;
            const FIELDS: &'static [::spoc::FieldInfo] = &[ #(#infos),* ];
        }
    })
}

/// The FNV-1a (64-bit) hash of a field name: the `H` of `spoc::__private::FieldOf<H>`, by which
/// native code names a field's type.
pub fn field_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
