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
        Elem::Vector(s, l) => {
            let id = format_ident!("{}", crate::types::vector_name(s, l));
            quote!(::spoc::#id)
        }
    }
}

/// The launch-tuple element type of a parameter.
fn launch_type(t: Ty, recs: &[RecordUse]) -> TokenStream {
    match t {
        Ty::Scalar(s) => elem_type(Elem::Scalar(s), recs),
        Ty::Record(r) => elem_type(Elem::Record(r), recs),
        Ty::Vector(s, l) => elem_type(Elem::Vector(s, l), recs),
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
    t.spelled(path, |mutable, e| {
        format!("&{}Buffer<{e}>", if mutable { "mut " } else { "" })
    })
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

/// The kernel's definition, `&KernelDef { name, ir, native }`, as a const expression: the
/// helpers' aliases, the IR accessor and the native entry point are items inside it; and whether
/// there is a native entry point (rustc then type-checks the kernel's field accesses itself).
fn def_expr(name: &str, l: &LoweredFn) -> (TokenStream, bool) {
    let kernel = kernel_ir(name, l);
    let bytes = Literal::byte_string(&kernel.to_bytes());
    let helpers: HelperPaths = paths::native_paths(l);
    let modules = paths::aliases(&l.helpers);
    let renames = paths::rename_table(&l.helpers);
    let resolver = paths::resolver(&l.helpers, &l.calls, &l.records);
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
    let load = loader(l, &modules, &renames);
    let has_native = native_fn.is_some();
    let def = quote! {
        &{
            // The helpers' companions, under aliases (spoc-macros' `paths.rs`).
            #resolver

            fn __spoc_ir() -> ::core::result::Result<&'static ::spoc::ir::ValidKernel, ::spoc::ir::IrError> {
                static IR: ::std::sync::OnceLock<::core::result::Result<::spoc::ir::ValidKernel, ::spoc::ir::IrError>> =
                    ::std::sync::OnceLock::new();
                const BYTES: &[u8] = #bytes;
                IR.get_or_init(|| {
                    let __spoc_kernel = #load;
                    // The Interpreter's reports name this file (spoc-runtime's
                    // `interpreter/source.rs`). (Local names are prefixed: a unit struct of the
                    // user's, the kernel handle included, would capture a plain one.)
                    if let ::core::result::Result::Ok(__spoc_k) = &__spoc_kernel {
                        ::spoc::interpreter::__register_kernel_file(__spoc_k, ::core::file!());
                    }
                    __spoc_kernel
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
        }
    };
    (def, has_native)
}

/// The launch tuple of a lowered kernel: the parameters' binding names, their tuple element
/// types (`lifetimes`: each reference gets its own named lifetime `'__spoc_lK`), and the tuple
/// as text for the docs.
fn launch_tuple(
    l: &LoweredFn,
    param_tys: &[Ty],
    lifetimes: bool,
) -> (Vec<syn::Ident>, Vec<TokenStream>, String) {
    let arg_names: Vec<syn::Ident> = l
        .params
        .iter()
        .map(|p| format_ident!("__spoc_{}", p.name))
        .collect();
    let arg_tys: Vec<TokenStream> = param_tys
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let ty = match (lifetimes, t) {
                // A record buffer also takes a Structure-of-Arrays `&SoaBuffer<P>`.
                (
                    false,
                    Ty::Buffer {
                        elem: e @ Elem::Record(_),
                        mutable,
                    },
                ) => {
                    let e = elem_type(*e, &l.records);
                    if *mutable {
                        quote!(impl ::spoc::BufferMutArg<'__spoc_a, #e>)
                    } else {
                        quote!(impl ::spoc::BufferArg<'__spoc_a, #e>)
                    }
                }
                _ => launch_type(*t, &l.records),
            };
            match (lifetimes, t) {
                (true, Ty::Buffer { .. }) => {
                    let lt = syn::Lifetime::new(
                        &format!("'__spoc_l{k}"),
                        proc_macro2::Span::call_site(),
                    );
                    // `&X` / `&mut X` with the lifetime inserted after `&`.
                    let mut it = ty.into_iter();
                    let amp = it.next();
                    let rest: TokenStream = it.collect();
                    quote!(#amp #lt #rest)
                }
                _ => ty,
            }
        })
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
    (arg_names, arg_tys, tuple_text)
}

/// The expansion of `#[kernel]` on `item`. `param_tys` are the checker types of the parameters.
pub fn expand(item: &syn::ItemFn, l: &LoweredFn, param_tys: &[Ty]) -> TokenStream {
    let ident = &item.sig.ident;
    let name = crate::lower::ident_name(ident);
    let (_, _, tuple_text) = launch_tuple(l, param_tys, false);
    let launch_doc = format!(
        " Launch with `{name}.launch(&device, grid, block, {tuple_text})` (`Buffer` is `spoc::Buffer`)."
    );
    let decl = handle_struct(item, &launch_doc, quote!());
    let methods = handle_impl(item, quote!(#ident), &name, l, param_tys);
    quote!(#decl #methods)
}

/// The handle's struct: `item`'s docs, then `launch_doc`, then `struct k #generics;`.
fn handle_struct(item: &syn::ItemFn, launch_doc: &str, generics: TokenStream) -> TokenStream {
    let ident = &item.sig.ident;
    let vis = &item.vis;
    let docs = crate::attrs_named(item, "doc");
    let cfgs = crate::attrs_named(item, "cfg");
    let sep = (!docs.is_empty()).then(|| quote!(#[doc = ""]));
    quote! {
        #(#docs)*
        #sep
        #[doc = #launch_doc]
        #(#cfgs)*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug)]
        #vis struct #ident #generics;
    }
}

/// The methods of the handle type `self_ty` of the kernel lowered as `l` under IR name `name`
/// (`DEF`, `def`, `name`, `ir`, `source`, `launch`, `launch_with_shared`) and the compile-time
/// checks of its helper calls and record fields.
fn handle_impl(
    item: &syn::ItemFn,
    self_ty: TokenStream,
    name: &str,
    l: &LoweredFn,
    param_tys: &[Ty],
) -> TokenStream {
    let (def, has_native) = def_expr(name, l);
    let (arg_names, arg_tys, _) = launch_tuple(l, param_tys, false);
    let cfgs = crate::attrs_named(item, "cfg");
    let cfgs2 = &cfgs;
    let checks = crate::checks::all(&l.helpers, &l.calls, &quote!(#(#cfgs)*), &l.records);
    let record_checks = crate::record_checks::all(l, &quote!(#(#cfgs)*), has_native);
    let allow = crate::native_entry::allow_lints();

    quote! {
        #(#cfgs2)*
        #allow
        #[allow(dead_code)]
        impl #self_ty {
            /// The kernel's definition, as the runtime takes it.
            pub const DEF: &'static ::spoc::__private::KernelDef = #def;

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
            pub fn launch<'__spoc_a>(
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
            pub fn launch_with_shared<'__spoc_a>(
                &self,
                dev: &::spoc::Device,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                shared_bytes: usize,
                args: ( #(#arg_tys,)* ),
            ) -> ::spoc::Result<()> {
                self.__spoc_launch_to(::spoc::__private::LaunchTarget::Device(dev), grid, block, shared_bytes, args)
            }

            /// Queues the kernel on `stream` (on its device) with `grid` blocks of `block`
            /// threads, and returns once it is queued (see `spoc::Stream`: later host
            /// accesses to its buffers wait for it).
            ///
            /// # Errors
            /// As [`Self::launch`].
            pub fn launch_on<'__spoc_a>(
                &self,
                stream: &::spoc::Stream,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                args: ( #(#arg_tys,)* ),
            ) -> ::spoc::Result<()> {
                self.__spoc_launch_to(::spoc::__private::LaunchTarget::Stream(stream), grid, block, 0, args)
            }

            /// [`Self::launch_on`] with `shared_bytes` bytes of dynamic shared memory per block.
            ///
            /// # Errors
            /// As [`Self::launch_on`] and [`Self::launch_with_shared`].
            pub fn launch_on_with_shared<'__spoc_a>(
                &self,
                stream: &::spoc::Stream,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                shared_bytes: usize,
                args: ( #(#arg_tys,)* ),
            ) -> ::spoc::Result<()> {
                self.__spoc_launch_to(::spoc::__private::LaunchTarget::Stream(stream), grid, block, shared_bytes, args)
            }

            #[doc(hidden)]
            pub fn __spoc_launch_to<'__spoc_a>(
                &self,
                to: ::spoc::__private::LaunchTarget<'_>,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                shared_bytes: usize,
                args: ( #(#arg_tys,)* ),
            ) -> ::spoc::Result<()> {
                let ( #(#arg_names,)* ) = args;
                ::spoc::__private::launch_to(
                    to,
                    Self::DEF,
                    grid,
                    block,
                    shared_bytes,
                    &mut [ #(::core::convert::Into::<::spoc::Arg<'_>>::into(#arg_names)),* ],
                )
            }
        }

        #checks
        #record_checks
    }
}

/// The expansion of a generic `#[kernel] fn k<T: Bound>`: one kernel per instance type (IR name
/// `k_f32`, …), each the `DEF` of hidden trait `__spoc_k_Instance` implemented for its type; the
/// handle's `launch` takes any tuple implementing hidden trait `__spoc_k_Args`, implemented for
/// each instance's launch tuple, which launches that instance.
pub fn expand_generic(
    item: &syn::ItemFn,
    g: &crate::generic::GenericParam,
    instances: &[crate::Instance],
) -> TokenStream {
    let ident = &item.sig.ident;
    let name = crate::lower::ident_name(ident);
    let vis = &item.vis;
    let args_trait = format_ident!("__spoc_{}_Args", name);
    let inst_trait = format_ident!("__spoc_{}_Instance", name);
    let docs = crate::attrs_named(item, "doc");
    let cfgs = crate::attrs_named(item, "cfg");
    let cfg = quote!(#(#cfgs)*);
    let allow = crate::native_entry::allow_lints();
    // The launch method of the hidden arguments trait, declared once and implemented per
    // instance.
    let launch_sig = quote! {
        fn __spoc_launch(
            self,
            to: ::spoc::__private::LaunchTarget<'_>,
            grid: ::spoc::Dims,
            block: ::spoc::Dims,
            shared_bytes: usize,
        ) -> ::spoc::Result<()>
    };
    let mut impls = Vec::new();
    let mut tuples = Vec::new();
    let mut names = Vec::new();
    for (s, _, l) in instances {
        let inst_name = format!("{name}_{}", s.name());
        let ty = format_ident!("{}", s.name());
        let (def, has_native) = def_expr(&inst_name, l);
        let (arg_names, arg_tys, tuple_text) = launch_tuple(l, &l.param_tys, true);
        let lifetimes: Vec<syn::Lifetime> = l
            .param_tys
            .iter()
            .enumerate()
            .filter(|(_, t)| matches!(t, Ty::Buffer { .. }))
            .map(|(k, _)| {
                syn::Lifetime::new(&format!("'__spoc_l{k}"), proc_macro2::Span::call_site())
            })
            .collect();
        let checks = crate::checks::all(&l.helpers, &l.calls, &cfg, &l.records);
        let record_checks = crate::record_checks::all(l, &cfg, has_native);
        tuples.push(format!("`{tuple_text}` (`{}` = `{}`)", g.ident, s.name()));
        names.push(inst_name);
        impls.push(quote! {
            #cfg
            #allow
            impl #inst_trait for #ty {
                const DEF: &'static ::spoc::__private::KernelDef = #def;
            }

            #cfg
            impl<#(#lifetimes),*> #args_trait for ( #(#arg_tys,)* ) {
                #launch_sig {
                    let ( #(#arg_names,)* ) = self;
                    ::spoc::__private::launch_to(
                        to,
                        <#ty as #inst_trait>::DEF,
                        grid,
                        block,
                        shared_bytes,
                        &mut [ #(::spoc::Arg::from(#arg_names)),* ],
                    )
                }
            }

            #checks
            #record_checks
        });
    }
    let types: Vec<&str> = instances.iter().map(|(s, ..)| s.name()).collect();
    let launch_doc = format!(
        " A generic kernel, instantiated for `{}` in {} (IR names {}). Launch with `{name}.launch(&device, grid, block, args)`, `args` one of: {}. (`Buffer` is `spoc::Buffer`.)",
        g.ident,
        types.join(", "),
        names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
        tuples.join("; "),
    );
    let no_instance = format!("`{name}` has no instance taking these launch arguments");
    let instance_note = format!(
        "`{name}` is instantiated for `{}` in {}",
        g.ident,
        types.join(", ")
    );
    let has_docs = !docs.is_empty();
    let sep = has_docs.then(|| quote!(#[doc = ""]));
    quote! {
        #(#docs)*
        #sep
        #[doc = #launch_doc]
        #cfg
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug)]
        #vis struct #ident;

        /// The launch tuples of a generic kernel's instances (generated; not a public API).
        #cfg
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[diagnostic::on_unimplemented(message = #no_instance, note = #instance_note)]
        #vis trait #args_trait {
            /// Launches the instance these arguments are for.
            #launch_sig;
        }

        /// The instance types of a generic kernel (generated; not a public API).
        #cfg
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[diagnostic::on_unimplemented(message = #no_instance, note = #instance_note)]
        #vis trait #inst_trait {
            /// The instance's definition.
            const DEF: &'static ::spoc::__private::KernelDef;
        }

        #(#impls)*

        #cfg
        #[allow(dead_code, private_bounds)]
        impl #ident {
            /// The names of the instances' kernels, in instance order.
            pub const INSTANCES: &'static [&'static str] = &[ #(#names),* ];

            /// The kernel's name (its instances are this name, `_`, and the type).
            pub fn name(&self) -> &'static str {
                #name
            }

            /// The definition of the instance for `T`, as the runtime takes it.
            pub fn def<T: #inst_trait>(&self) -> &'static ::spoc::__private::KernelDef {
                T::DEF
            }

            /// The IR of the instance for `T`, linked with its helpers and validated.
            ///
            /// # Errors
            /// If the embedded IR does not decode, link or validate.
            pub fn ir<T: #inst_trait>(&self) -> ::spoc::Result<&'static ::spoc::ir::Kernel> {
                T::DEF.kernel()
            }

            /// The source `target` would compile for the instance for `T` (see the
            /// non-generic kernels' `source`).
            ///
            /// # Errors
            /// A capability the target lacks, named with the IR node that needs it.
            pub fn source<T: #inst_trait>(&self, target: ::spoc::Target) -> ::spoc::Result<::core::option::Option<::spoc::Source>> {
                T::DEF.source(target, ::core::option::Option::None, &[])
            }

            /// Launches the instance the argument tuple's types select on `dev`, with `grid`
            /// blocks of `block` threads.
            ///
            /// # Errors
            /// Whatever the runtime reports, as for a non-generic kernel.
            pub fn launch<A: #args_trait>(
                &self,
                dev: &::spoc::Device,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                args: A,
            ) -> ::spoc::Result<()> {
                args.__spoc_launch(::spoc::__private::LaunchTarget::Device(dev), grid, block, 0)
            }

            /// Queues the instance the argument tuple's types select on `stream` (see the
            /// non-generic kernels' `launch_on`).
            ///
            /// # Errors
            /// As [`Self::launch`].
            pub fn launch_on<A: #args_trait>(
                &self,
                stream: &::spoc::Stream,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                args: A,
            ) -> ::spoc::Result<()> {
                args.__spoc_launch(::spoc::__private::LaunchTarget::Stream(stream), grid, block, 0)
            }

            /// [`Self::launch`] with `shared_bytes` bytes of dynamic shared memory per block.
            ///
            /// # Errors
            /// As [`Self::launch`].
            pub fn launch_with_shared<A: #args_trait>(
                &self,
                dev: &::spoc::Device,
                grid: ::spoc::Dims,
                block: ::spoc::Dims,
                shared_bytes: usize,
                args: A,
            ) -> ::spoc::Result<()> {
                args.__spoc_launch(::spoc::__private::LaunchTarget::Device(dev), grid, block, shared_bytes)
            }
        }
    }
}

/// The expansion of a `#[kernel(instances(…))] fn k<const A: u32, …>`: the handle
/// `struct k<const A: u32, …>`, and for each listed value set an inherent impl on `k<128, …>`
/// with the methods of a plain kernel (IR name `k_128_…`). `k::<64, …>` for a set that is not
/// listed has no `launch`.
pub fn expand_const(
    item: &syn::ItemFn,
    cp: &crate::const_generic::ConstParams,
    instances: &[crate::ConstInstance],
) -> TokenStream {
    let ident = &item.sig.ident;
    let name = crate::lower::ident_name(ident);
    let cfgs = crate::attrs_named(item, "cfg");
    let params: Vec<TokenStream> = cp
        .params
        .iter()
        .map(|p| {
            let (i, t) = (&p.ident, format_ident!("{}", p.ty.name()));
            quote!(const #i: #t)
        })
        .collect();
    let idents: Vec<&proc_macro2::Ident> = cp.params.iter().map(|p| &p.ident).collect();
    let mut impls = Vec::new();
    let mut names = Vec::new();
    let mut shown = Vec::new();
    for (values, l) in instances {
        let inst_name = cp.instance_name(&name, values);
        let args = cp.type_args(values);
        impls.push(handle_impl(
            item,
            quote!(#ident #args),
            &inst_name,
            l,
            &l.param_tys,
        ));
        shown.push(format!(
            "`{name}::<{}>`",
            values
                .iter()
                .map(|v| v.text())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        names.push(inst_name);
    }
    let tuple_text = instances
        .first()
        .map(|(_, l)| launch_tuple(l, &l.param_tys, false).2)
        .unwrap_or_default();
    let launch_doc = format!(
        " A kernel with const parameters `{}`, compiled for {} (IR names {}). Launch an instance with `{}.launch(&device, grid, block, {tuple_text})` (`Buffer` is `spoc::Buffer`).",
        idents.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
        shown.join(", "),
        names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
        shown.first().map(|s| s.trim_matches('`')).unwrap_or_default(),
    );
    let decl = handle_struct(item, &launch_doc, quote!(<#(#params),*>));
    quote! {
        #decl

        #(#cfgs)*
        #[allow(dead_code)]
        impl<#(#params),*> #ident<#(#idents),*> {
            /// The IR names of the listed instances' kernels, in the attribute's order.
            pub const INSTANCES: &'static [&'static str] = &[ #(#names),* ];
        }

        #(#impls)*
    }
}
