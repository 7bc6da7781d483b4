//! Function signatures: the parameters and return type of a `#[kernel]` or `#[device]` fn.

use crate::errors::{Errors, Lowered};
use crate::types::{Elem, Scalar, Ty, Unifier};
use syn::spanned::Spanned;

/// One parameter as the checker sees it.
pub struct ParamSig {
    pub name: syn::Ident,
    pub ty: Ty,
    /// The parameter's type as written.
    pub span: crate::errors::Loc,
}

const SCALARS: &str = "`bool`, `i32`, `i64`, `u32`, `u64`, `usize`, `f32`, `f64`, `f16` and `bf16`";

/// Parses a scalar type (`f32`, `usize`, …).
pub fn scalar_type(ty: &syn::Type, errs: &mut Errors) -> Lowered<Scalar> {
    match ty {
        syn::Type::Paren(p) => scalar_type(&p.elem, errs),
        syn::Type::Group(g) => scalar_type(&g.elem, errs),
        syn::Type::Path(p) if p.qself.is_none() => {
            let name = p.path.get_ident().map(|i| i.to_string());
            let found = name.as_deref().and_then(Scalar::from_name);
            found.ok_or_else(|| {
                let why = match name.as_deref() {
                    Some("u8" | "i8" | "u16" | "i16") => {
                        " (8- and 16-bit integers are not supported yet: widen to `i32`/`u32`)".to_string()
                    }
                    Some("u128" | "i128") => " (128-bit integers are not supported)".to_string(),
                    Some("isize") => " (use `i32` or `i64`; `usize` is the 32-bit index type)".to_string(),
                    Some("char" | "str" | "String") => {
                        " (kernels compute on numbers and `bool`s)".to_string()
                    }
                    _ => "; records (`#[derive(Record)]` structs) too, named by a capitalised path without generic arguments".to_string(),
                };
                errs.spanned(
                    ty,
                    format!("unsupported type in a kernel: the scalar types are {SCALARS}{why}"),
                )
            })
        }
        syn::Type::Tuple(t) if t.elems.is_empty() => Err(errs.spanned(
            ty,
            format!("`()` is not a value type in kernels; the scalar types are {SCALARS}"),
        )),
        _ => Err(errs.spanned(
            ty,
            format!("unsupported type in a kernel: the scalar types are {SCALARS}, and parameters may also be buffers `&[T]` and `&mut [T]`"),
        )),
    }
}

/// The path of a record type (`Particle`, `geom::Particle`), if `ty` looks like one: a path
/// without generic arguments whose last segment is capitalised and is not a type spoc knows to
/// be something else. Whether it really is a `#[derive(Record)]` struct is checked by rustc in
/// the generated code (`T: spoc::Record`).
pub fn record_path(ty: &syn::Type) -> Option<&syn::Path> {
    match ty {
        syn::Type::Paren(p) => record_path(&p.elem),
        syn::Type::Group(g) => record_path(&g.elem),
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            let capitalised = name.starts_with(|c: char| c.is_ascii_uppercase());
            let known = matches!(
                name.as_str(),
                "Self" | "String" | "Vec" | "Option" | "Box" | "Result" | "Buffer"
            ) || crate::types::vector_named(&name).is_some();
            let plain = p.path.segments.iter().all(|s| s.arguments.is_none());
            (capitalised && !known && plain).then_some(&p.path)
        }
        _ => None,
    }
}

/// The vector type `ty` names (`F32x4`, `spoc::U32x2`: a path without generic arguments whose
/// last segment is one of [`crate::types::VECTORS`]), as lane type and lane count.
pub fn vector_type(ty: &syn::Type) -> Option<(Scalar, u8)> {
    match ty {
        syn::Type::Paren(p) => vector_type(&p.elem),
        syn::Type::Group(g) => vector_type(&g.elem),
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            if !last.arguments.is_none() {
                return None;
            }
            crate::types::vector_named(&last.ident.to_string())
        }
        _ => None,
    }
}

/// Parses a value type: a scalar or a record (`let p: Particle = …`, a helper's parameter or
/// result).
pub fn value_type(ty: &syn::Type, errs: &mut Errors, tys: &mut Unifier) -> Lowered<Ty> {
    if let Some((s, l)) = vector_type(ty) {
        return Ok(Ty::Vector(s, l));
    }
    match record_path(ty) {
        Some(p) => Ok(tys.record(p)),
        None => scalar_type(ty, errs).map(Ty::Scalar),
    }
}

/// Parses a parameter type: a scalar, a record, `&[T]` or `&mut [T]` (`T` a scalar or a record).
pub fn param_type(ty: &syn::Type, errs: &mut Errors, tys: &mut Unifier) -> Lowered<Ty> {
    match ty {
        syn::Type::Paren(p) => param_type(&p.elem, errs, tys),
        syn::Type::Group(g) => param_type(&g.elem, errs, tys),
        syn::Type::Reference(r) => {
            let mutable = r.mutability.is_some();
            let syn::Type::Slice(slice) = &*r.elem else {
                let what = if mutable { "`&mut`" } else { "`&`" };
                let help = if mutable {
                    "write results into a `&mut [T]` buffer parameter instead"
                } else {
                    "pass scalars by value (`x: f32`)"
                };
                return Err(errs.spanned(
                    ty,
                    format!("{what} references to scalars are not supported as kernel parameters; {help}"),
                ));
            };
            let elem = match &*slice.elem {
                syn::Type::Reference(_) | syn::Type::Slice(_) | syn::Type::Array(_) => {
                    return Err(errs.spanned(
                        &slice.elem,
                        "slices of slices or arrays are not supported; flatten the data into one buffer and index it as `x[row * width + col]`",
                    ))
                }
                e if vector_type(e).is_some() => {
                    let (s, l) = vector_type(e).unwrap_or((Scalar::F32, 4));
                    return Ok(Ty::Buffer {
                        elem: Elem::Vector(s, l),
                        mutable,
                    });
                }
                e => match record_path(e) {
                    Some(p) => match tys.record(p) {
                        Ty::Record(r) => return Ok(Ty::Buffer { elem: Elem::Record(r), mutable }),
                        _ => return Err(crate::errors::Failed),
                    },
                    None => scalar_type(e, errs)?,
                },
            };
            if elem == Scalar::Usize {
                return Err(errs.spanned(
                    &slice.elem,
                    "buffers of `usize` are not supported (device indices are 32-bit); use `u32` or `u64` elements",
                ));
            }
            Ok(Ty::Buffer {
                elem: Elem::Scalar(elem),
                mutable,
            })
        }
        syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Vec") => Err(errs
            .spanned(
                ty,
                "`Vec` is not supported in kernels; take a buffer parameter `&[T]` or `&mut [T]`",
            )),
        _ => value_type(ty, errs, tys),
    }
}

/// Parses the parameters of `sig`; reports (and skips) the unsupported ones.
pub fn params(
    sig: &syn::Signature,
    errs: &mut Errors,
    tys: &mut Unifier,
) -> Lowered<Vec<ParamSig>> {
    let mut out = Vec::new();
    let mut ok = true;
    for input in &sig.inputs {
        let typed = match input {
            syn::FnArg::Receiver(r) => {
                errs.spanned(
                    r,
                    "kernels and device functions cannot take `self`; write a free function",
                );
                ok = false;
                continue;
            }
            syn::FnArg::Typed(t) => t,
        };
        let name = match &*typed.pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                if p.mutability.is_some() {
                    errs.spanned(
                        p,
                        format!(
                            "`mut` parameters are not supported; copy it into a local: `let mut {0} = {0};`",
                            p.ident
                        ),
                    );
                    ok = false;
                }
                let name = crate::lower::ident_name(&p.ident);
                if out
                    .iter()
                    .any(|q: &ParamSig| crate::lower::ident_name(&q.name) == name)
                {
                    errs.spanned(
                        &p.ident,
                        format!("identifier `{name}` is bound more than once in this parameter list; rename one of them"),
                    );
                    ok = false;
                }
                p.ident.clone()
            }
            pat => {
                errs.spanned(
                    pat,
                    "parameters must be plain names (`x: f32`); patterns are not supported",
                );
                ok = false;
                continue;
            }
        };
        match param_type(&typed.ty, errs, tys) {
            Ok(ty) => out.push(ParamSig {
                name,
                ty,
                span: crate::errors::Loc::of(&typed.ty),
            }),
            Err(_) => ok = false,
        }
    }
    if ok {
        Ok(out)
    } else {
        Err(crate::errors::Failed)
    }
}

/// Reports signature features neither kernels nor device functions support.
pub fn check_common(sig: &syn::Signature, what: &str, errs: &mut Errors) -> Lowered<()> {
    let mut ok = true;
    let mut bad = |node: &dyn quote::ToTokens, msg: String| {
        errs.spanned(node, msg);
        ok = false;
    };
    let only_lifetimes = sig
        .generics
        .params
        .iter()
        .all(|p| matches!(p, syn::GenericParam::Lifetime(_)));
    if !sig.generics.params.is_empty() && only_lifetimes && sig.generics.where_clause.is_none() {
        bad(
            &sig.generics,
            format!(
                "lifetime parameters are not needed on a {what}: remove `{}` and write buffers as `&[T]` and `&mut [T]`",
                {
                    let g = &sig.generics;
                    quote::quote!(#g).to_string().replace(' ', "")
                }
            ),
        );
    } else if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        // Generic fns are instantiated before lowering (`generic.rs`); this is not reached.
        bad(
            &sig.generics,
            format!("{what}s take one type parameter bounded by `Float`, `Int` or `Number`"),
        );
    }
    if let Some(a) = &sig.asyncness {
        bad(a, format!("{what}s cannot be `async`"));
    }
    if let Some(u) = &sig.unsafety {
        bad(
            u,
            format!("{what}s cannot be `unsafe`: every access in a kernel is checked"),
        );
    }
    if let Some(c) = &sig.constness {
        bad(c, format!("{what}s cannot be `const fn`"));
    }
    if let Some(abi) = &sig.abi {
        bad(abi, format!("{what}s cannot declare an ABI"));
    }
    if let Some(v) = &sig.variadic {
        bad(v, format!("{what}s cannot be variadic"));
    }
    if ok {
        Ok(())
    } else {
        Err(crate::errors::Failed)
    }
}

/// The return type of a device function: a scalar, a record or nothing.
pub fn device_return(sig: &syn::Signature, errs: &mut Errors, tys: &mut Unifier) -> Lowered<Ty> {
    match &sig.output {
        syn::ReturnType::Default => Ok(Ty::Unit),
        syn::ReturnType::Type(_, ty) => match &**ty {
            syn::Type::Tuple(t) if t.elems.is_empty() => Ok(Ty::Unit),
            t => value_type(t, errs, tys),
        },
    }
}

/// Kernels return nothing.
pub fn kernel_return(sig: &syn::Signature, errs: &mut Errors) -> Lowered<()> {
    match &sig.output {
        syn::ReturnType::Default => Ok(()),
        syn::ReturnType::Type(arrow, ty) => {
            if matches!(&**ty, syn::Type::Tuple(t) if t.elems.is_empty()) {
                return Ok(());
            }
            let span = arrow.span().join(ty.span()).unwrap_or_else(|| ty.span());
            Err(errs.at(
                span,
                "kernels return nothing; write results into a `&mut [T]` parameter",
            ))
        }
    }
}
