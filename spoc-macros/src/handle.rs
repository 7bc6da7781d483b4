//! What `#[kernel]` expands to: the kernel handle (a unit struct named after the fn) with its
//! `DEF`, `launch`, `launch_with_shared`, `ir` and `name`, the embedded IR and the native entry
//! point.

use crate::lower::LoweredFn;
use crate::native::HelperPaths;
use crate::paths;
use crate::types::{Elem, RecordUse, Ty};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use spoc_ir::Kernel;

/// The IR kernel of a lowered kernel fn.
pub fn kernel_ir(name: &str, l: &LoweredFn) -> Kernel {
    Kernel {
        name: name.to_string(),
        params: l.params.clone(),
        vars: l.vars.clone(),
        shared: l.shared.clone(),
        body: l.body.clone(),
        records: Vec::new(),
        variants: Vec::new(),
        functions: Vec::new(),
    }
}

/// The Rust type of a buffer element.
fn elem_type(e: Elem, recs: &[RecordUse]) -> TokenStream {
    match e {
        Elem::Scalar(s) => {
            let id = format_ident!("{}", s.name());
            quote!(#id)
        }
        Elem::Record(r) => match recs.get(r as usize) {
            Some(r) => {
                let p = &r.path;
                quote!(#p)
            }
            None => quote!(()),
        },
    }
}

/// The launch-tuple element type of a parameter.
fn launch_type(t: Ty, recs: &[RecordUse]) -> TokenStream {
    match t {
        Ty::Scalar(s) => elem_type(Elem::Scalar(s), recs),
        Ty::Record(r) => elem_type(Elem::Record(r), recs),
        Ty::Buffer { elem, mutable } => {
            let e = elem_type(elem, recs);
            if mutable {
                quote!(&mut ::spoc::Buffer<#e>)
            } else {
                quote!(&::spoc::Buffer<#e>)
            }
        }
        Ty::Unit | Ty::Var(_) | Ty::Array { .. } => quote!(()),
    }
}

fn launch_type_text(t: Ty, recs: &[RecordUse]) -> String {
    let path = |r: u32| {
        recs.get(r as usize).map_or_else(String::new, |r| {
            let p = &r.path;
            quote!(#p).to_string().replace(' ', "")
        })
    };
    match t {
        Ty::Scalar(s) => s.name().to_string(),
        Ty::Record(r) => path(r),
        Ty::Buffer { elem, mutable } => {
            let e = match elem {
                Elem::Scalar(s) => s.name().to_string(),
                Elem::Record(r) => path(r),
            };
            format!("&{}Buffer<{e}>", if mutable { "mut " } else { "" })
        }
        Ty::Unit | Ty::Var(_) | Ty::Array { .. } => "()".into(),
    }
}

/// The expression that loads a function's IR: `load_kernel_renamed`, or, when it names
/// records, `load_kernel_with_records` with each record's definition collector.
fn loader(l: &LoweredFn, modules: &[syn::Ident], renames: &TokenStream) -> TokenStream {
    if l.records.is_empty() {
        return quote! {
            ::spoc::ir::link::load_kernel_renamed(
                BYTES,
                &[ #(#modules::ir as ::spoc::ir::link::HelperRef),* ],
                #renames,
            )
        };
    }
    let paths = l.records.iter().map(|r| &r.path);
    quote! {
        ::spoc::ir::resolve::load_kernel_with_records(
            BYTES,
            &[ #(#modules::ir as ::spoc::ir::link::HelperRef),* ],
            #renames,
            &[ #(<#paths as ::spoc::FieldType>::record_defs as ::spoc::ir::resolve::RecordDefsFn),* ],
        )
    }
}

/// The expansion of `#[kernel]` on `item`. `param_tys` are the checker types of the parameters.
pub fn expand(item: &syn::ItemFn, l: &LoweredFn, param_tys: &[Ty]) -> TokenStream {
    let ident = &item.sig.ident;
    let name = crate::lower::ident_name(ident);
    let vis = &item.vis;
    let kernel = kernel_ir(&name, l);
    let bytes = Literal::byte_string(&kernel.to_bytes());

    let helpers: HelperPaths = paths::helper_paths(&l.helpers);
    let modules = paths::aliases(&l.helpers);
    let renames = paths::rename_table(&l.helpers);
    let resolver = paths::resolver(&l.helpers, &l.calls);
    let native_fn = crate::native_entry::kernel_entry(&kernel, &helpers);
    let native_def = if native_fn.is_some() {
        quote!(if true #(&& #modules::HAS_NATIVE)* {
            ::core::option::Option::Some(__spoc_native as ::spoc::__private::NativeFn)
        } else {
            ::core::option::Option::None
        })
    } else {
        quote!(::core::option::Option::None)
    };

    // The launch tuple.
    let arg_names: Vec<syn::Ident> = l
        .params
        .iter()
        .map(|p| format_ident!("__spoc_{}", p.name))
        .collect();
    let arg_tys: Vec<TokenStream> = param_tys
        .iter()
        .map(|t| launch_type(*t, &l.records))
        .collect();
    let tuple_text = l
        .params
        .iter()
        .zip(param_tys)
        .map(|(p, t)| format!("{}: {}", p.name, launch_type_text(*t, &l.records)))
        .collect::<Vec<_>>()
        .join(", ");
    let tuple_text = if l.params.len() == 1 {
        format!("({tuple_text},)")
    } else {
        format!("({tuple_text})")
    };
    let launch_doc = format!(
        " Launch with `{name}.launch(&device, grid, block, {tuple_text})` (`Buffer` is `spoc::Buffer`)."
    );
    let docs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    let cfgs2 = &cfgs;
    let checks = crate::checks::all(&l.helpers, &l.calls, &quote!(#(#cfgs)*), &l.records);
    let record_checks = crate::record_checks::all(l, &quote!(#(#cfgs)*));
    let load = loader(l, &modules, &renames);
    let has_docs = !docs.is_empty();
    let sep = has_docs.then(|| quote!(#[doc = ""]));
    let allow = crate::native_entry::allow_lints();

    quote! {
        #(#docs)*
        #sep
        #[doc = #launch_doc]
        #(#cfgs)*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug)]
        #vis struct #ident;

        #(#cfgs2)*
        #allow
        #[allow(dead_code)]
        impl #ident {
            /// The kernel's definition, as the runtime takes it.
            pub const DEF: &'static ::spoc::__private::KernelDef = &{
                // The helpers' companions, under aliases (spoc-macros' `paths.rs`).
                #resolver

                fn __spoc_ir() -> ::core::result::Result<&'static ::spoc::ir::Kernel, ::spoc::ir::IrError> {
                    static IR: ::std::sync::OnceLock<::core::result::Result<::spoc::ir::Kernel, ::spoc::ir::IrError>> =
                        ::std::sync::OnceLock::new();
                    const BYTES: &[u8] = #bytes;
                    IR.get_or_init(|| {
                        let kernel = #load;
                        // The Interpreter's reports name this file (spoc-runtime's
                        // `interpreter/source.rs`).
                        if let ::core::result::Result::Ok(k) = &kernel {
                            ::spoc::interpreter::__register_kernel_file(k, ::core::file!());
                        }
                        kernel
                    })
                    .as_ref()
                    .map_err(::core::clone::Clone::clone)
                }

                #native_fn

                ::spoc::__private::KernelDef {
                    name: #name,
                    ir: __spoc_ir,
                    native: #native_def,
                }
            };

            /// The kernel's definition, as the runtime takes it.
            pub fn def(&self) -> &'static ::spoc::__private::KernelDef {
                Self::DEF
            }

            /// The kernel's name.
            pub fn name(&self) -> &'static str {
                #name
            }

            /// The kernel's IR, linked with its helpers and validated (once, on first use).
            ///
            /// # Errors
            /// If the embedded IR does not decode, link or validate.
            pub fn ir(&self) -> ::spoc::Result<&'static ::spoc::ir::Kernel> {
                Self::DEF.kernel()
            }

            /// The source `target` would compile for this kernel (PTX, CUDA C, HIP C, OpenCL C,
            /// SPIR-V, MSL, WGSL, GLSL; `None` for Native and Interpreter), for a typical device
            /// of the target. See [`::spoc::KernelDef::source`] for the block size and SoA
            /// options.
            ///
            /// # Errors
            /// A capability the target lacks, named with the IR node that needs it.
            pub fn source(&self, target: ::spoc::Target) -> ::spoc::Result<::core::option::Option<::spoc::Source>> {
                Self::DEF.source(target, ::core::option::Option::None, &[])
            }

            /// Launches the kernel on `dev` with `grid` blocks of `block` threads.
            ///
            /// # Errors
            /// Whatever the runtime reports: a device or compile error, a launch error, or a
            /// fault of a thread on backends that check.
            pub fn launch(
                &self,
                dev: &::spoc::Device,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                args: ( #(#arg_tys,)* ),
            ) -> ::spoc::Result<()> {
                self.launch_with_shared(dev, grid, block, 0, args)
            }

            /// Launches the kernel as [`Self::launch`] does, with `shared_bytes` bytes of
            /// dynamic shared memory per block: the kernel's `dynamic_shared::<T>()` array
            /// has `shared_bytes / size_of::<T>()` elements. `launch` is this with 0 bytes.
            ///
            /// # Errors
            /// As [`Self::launch`]; also `LaunchProblem::SharedMemory` when the kernel's
            /// shared arrays and `shared_bytes` exceed the device's shared memory per block.
            pub fn launch_with_shared(
                &self,
                dev: &::spoc::Device,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                shared_bytes: usize,
                args: ( #(#arg_tys,)* ),
            ) -> ::spoc::Result<()> {
                let ( #(#arg_names,)* ) = args;
                ::spoc::__private::launch_def(
                    dev,
                    Self::DEF,
                    grid,
                    block,
                    shared_bytes,
                    &mut [ #(::spoc::Arg::from(#arg_names)),* ],
                )
            }
        }

        #checks
        #record_checks
    }
}
