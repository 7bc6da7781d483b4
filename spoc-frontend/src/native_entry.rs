//! The native entry points: a kernel's `NativeFn` (argument unpacking, then the per-thread body
//! under `NativeLaunch::run`, the row plan, fast body and checked body under
//! `NativeLaunch::run_planned`, or the body on the SIMT scheduler under `NativeLaunch::run_simt`)
//! and a helper's `native` function.
//!
//! Which runner: a kernel whose own body has a sync point (barrier, warp barrier, shuffle, vote,
//! ballot) or declares a shared array always runs on the SIMT scheduler. A kernel without them
//! keeps the row plan; if it calls helpers, one of which might have a warp operation that only
//! the linked IR shows, it also gets a SIMT runner, chosen at launch by `NativeLaunch::simt`.

use crate::native::plan::{buffer_params, Plan};
use crate::native::{helper_site_base, local_array_bytes, STACK_CHECK_BYTES};
use crate::native::{rust_scalar, rust_value_type, HelperPaths, Native};
use proc_macro2::Literal;
use proc_macro2::TokenStream;
use quote::quote;
use spoc_ir::{Function, Kernel, Type};

/// Lints the generated code may trip without anything being wrong.
pub fn allow_lints() -> TokenStream {
    quote!(#[allow(
        unused_mut,
        unused_variables,
        unused_assignments,
        unused_parens,
        unused_braces,
        unreachable_code,
        unreachable_patterns,
        non_snake_case,
        clippy::all
    )])
}

/// `fn __spoc_native(launch, args) -> Result<(), ThreadTrap>`, or `None` if the kernel uses
/// something the Native backend cannot run yet.
pub fn kernel_entry(k: &Kernel, helpers: &HelperPaths) -> Option<TokenStream> {
    let cx = Native::new(&k.vars, helpers);
    // Helpers proper (the map also holds the records' paths).
    let calls_helpers = helpers.keys().any(|k| !crate::native::is_record_key(k));
    let body = cx.block(&k.body)?;
    let mut names = Vec::new();
    let mut unpack = Vec::new();
    for (i, p) in k.params.iter().enumerate() {
        let name = p.name.as_str();
        names.push(cx.var(p.var));
        let arg = quote!(__spoc_arg(#i, #name)?);
        unpack.push(if p.is_buffer() {
            let t = cx.elem_type(&p.ty)?;
            if p.mutable {
                quote!(::spoc::__private::GlobalMut::<#t>::from_arg(#arg, #name)?)
            } else {
                quote!(::spoc::__private::GlobalRef::<#t>::from_arg(#arg, #name)?)
            }
        } else {
            let t = rust_value_type(&p.ty)?;
            quote!(#arg.scalar::<#t>(#name)?)
        });
    }
    let allow = allow_lints();
    let own_simt = cx.uses_simt.get() || !k.shared.is_empty();

    // The SIMT runner: the checked body, with the block's shared arrays bound first.
    let mut bind = Vec::new();
    let mut specs = Vec::new();
    for (i, d) in k.shared.iter().enumerate() {
        let t = match &d.elem {
            Type::Vector { .. } => rust_value_type(&d.elem)?,
            e => rust_scalar(e.as_scalar()?)?,
        };
        let v = cx.var(d.var);
        bind.push(quote!(
            let #v: ::spoc::__private::GlobalMut<#t> = __spoc_shared.array::<#t>(#i)?;
        ));
        let name = k
            .vars
            .get(d.var.0 as usize)
            .map_or("shared", |v| v.name.as_str());
        let len = match d.len {
            Some(n) => quote!(::core::option::Option::Some(#n)),
            None => quote!(::core::option::Option::None),
        };
        specs.push(quote!(::spoc::__private::SharedSpec {
            name: #name,
            elem_bytes: ::core::mem::size_of::<#t>(),
            len: #len,
        }));
    }
    let local = local_array_bytes(&k.vars);
    let local = if local >= STACK_CHECK_BYTES { local } else { 0 };
    let local_lit = Literal::usize_suffixed(local.min(usize::MAX as u64) as usize);
    // Refused before any thread runs when over the limit for every stack.
    let check = (local > 0).then(|| {
        quote! {
            ::spoc::__private::check_stack(#local_lit, &mut ::spoc::__private::NoSimt).map_err(
                |trap| ::spoc::__private::ThreadTrap { block: [0; 3], thread: [0; 3], trap },
            )?;
        }
    });
    let run_simt = quote! {
        launch.run_simt(
            &[#(#specs),*],
            #local_lit,
            move |ctx: &::spoc::__private::ThreadCtx,
                  __spoc_simt: &mut ::spoc::__private::SyncHandle<'_>,
                  __spoc_shared: &::spoc::__private::SharedBlock<'_>|
                  -> ::core::result::Result<(), ::spoc::__private::Trap> {
                #(#bind)*
                #body
                ::core::result::Result::Ok(())
            },
        )
    };

    let run = if own_simt {
        run_simt
    } else {
        // Helper calls pass a handle; outside the scheduler it refuses every sync point.
        let no_simt =
            calls_helpers.then(|| quote!(let __spoc_simt = &mut ::spoc::__private::NoSimt;));
        let checked = quote! {
            move |ctx: &::spoc::__private::ThreadCtx| -> ::core::result::Result<(), ::spoc::__private::Trap> {
                #no_simt
                #body
                ::core::result::Result::Ok(())
            }
        };
        let fast_run = match Plan::new(&cx, &k.body, buffer_params(&k.params)) {
            None => quote!(launch.run(#checked)),
            Some(plan) => {
                let fast_cx = Native {
                    fast: Some(&plan),
                    ..Native::new(&k.vars, helpers)
                };
                let fast_body = fast_cx.block(&k.body)?;
                let plan_body = plan.plan_body(&cx);
                let plan_ty = plan.plan_type();
                let wins = plan.window_names();
                quote! {
                    launch.run_planned(
                        move |ctx: &::spoc::__private::ThreadCtx| -> ::core::option::Option<#plan_ty> {
                            #plan_body
                        },
                        move |ctx: &::spoc::__private::ThreadCtx, __spoc_plan: &#plan_ty| -> ::core::result::Result<(), ::spoc::__private::Trap> {
                            let ( #(#wins,)* ) = *__spoc_plan;
                            #no_simt
                            #fast_body
                            ::core::result::Result::Ok(())
                        },
                        #checked,
                    )
                }
            }
        };
        if !calls_helpers {
            fast_run
        } else {
            quote!(if launch.simt { #run_simt } else { #fast_run })
        }
    };
    Some(quote! {
        #[doc(hidden)]
        #allow
        fn __spoc_native(
            launch: &::spoc::__private::NativeLaunch,
            args: &[::spoc::__private::NativeArg],
        ) -> ::core::result::Result<(), ::spoc::__private::ThreadTrap> {
            let __spoc_arg = |i: usize, param: &'static str| {
                args.get(i).ok_or(::spoc::__private::Trap::BadArgument {
                    param,
                    expected: "an argument (too few were passed)",
                })
            };
            let __spoc_unpack = || -> ::core::result::Result<_, ::spoc::__private::Trap> {
                ::core::result::Result::Ok(( #(#unpack,)* ))
            };
            let ( #(#names,)* ) = __spoc_unpack().map_err(|trap| ::spoc::__private::ThreadTrap {
                block: [0; 3],
                thread: [0; 3],
                trap,
            })?;
            #check
            #run
        }
    })
}

/// A helper's `pub fn native(ctx, params…, simt) -> Result<Ret, Trap>` (`simt`: the caller's
/// sync handle, `&mut dyn Simt`; the helper's sync points are numbered from
/// [`helper_site_base`]). When its body cannot run
/// natively, a stub with the same signature (never called: every kernel calling the helper then
/// has no native entry point) and `HAS_NATIVE = false`.
pub fn helper_entry(f: &Function, helpers: &HelperPaths) -> (TokenStream, bool) {
    let cx = Native::new(&f.vars, helpers);
    cx.next_site.set(helper_site_base(&f.name));
    let params: Option<Vec<TokenStream>> = f
        .params
        .iter()
        .map(|p| {
            let name = cx.var(p.var);
            Some(if p.is_buffer() {
                let t = cx.elem_type(&p.ty)?;
                if p.mutable {
                    quote!(#name: ::spoc::__private::GlobalMut<#t>)
                } else {
                    quote!(#name: impl ::spoc::intrinsics::__native::ReadBuffer<#t>)
                }
            } else {
                let t = cx.value_type(&p.ty)?;
                quote!(#name: #t)
            })
        })
        .collect();
    let ret = cx.value_type(&f.ret);
    let allow = allow_lints();
    let (Some(params), Some(ret)) = (params, ret) else {
        // Not even the signature is expressible: no native function at all.
        return (quote!(), false);
    };
    let tail = (f.ret == Type::Unit).then(|| quote!(::core::result::Result::Ok(())));
    let local = local_array_bytes(&f.vars);
    let (body, native) = match cx.block(&f.body) {
        Some(b) if local >= STACK_CHECK_BYTES => {
            // Large local arrays: check the stack, then enter a frame of their own (a frame
            // holding them would overflow before any check in it ran).
            let bytes = Literal::usize_suffixed(local.min(usize::MAX as u64) as usize);
            let names: Vec<_> = f.params.iter().map(|p| cx.var(p.var)).collect();
            (
                quote! {
                    ::spoc::__private::check_stack(#bytes, &mut *__spoc_simt)?;
                    #[inline(never)]
                    fn __spoc_body(
                        ctx: &::spoc::__private::ThreadCtx,
                        #(#params,)*
                        __spoc_simt: &mut dyn ::spoc::__private::Simt,
                    ) -> ::core::result::Result<#ret, ::spoc::__private::Trap> {
                        #b #tail
                    }
                    __spoc_body(ctx, #(#names,)* __spoc_simt)
                },
                true,
            )
        }
        Some(b) => (quote!(#b #tail), true),
        None => {
            let msg = format!(
                "#[device] fn `{}` has no native code; kernels calling it have no native entry point",
                f.name
            );
            (quote!(::core::unreachable!(#msg)), false)
        }
    };
    let item = quote! {
        #allow
        pub fn native(
            ctx: &::spoc::__private::ThreadCtx,
            #(#params,)*
            __spoc_simt: &mut dyn ::spoc::__private::Simt,
        ) -> ::core::result::Result<#ret, ::spoc::__private::Trap> {
            #body
        }
    };
    (item, native)
}
