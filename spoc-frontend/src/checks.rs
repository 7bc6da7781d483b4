//! Compile-time checks of helper calls against the helpers' real signatures.
//!
//! A kernel (or `#[device]` fn) is lowered without seeing the signatures of the helpers it calls:
//! they are other items. So `#[device]` records its signature as constants on its companion
//! type (`PARAM_TAGS`, `RET_TAG`, see [`tag`]), and every call emits a `const _: () = { … };`
//! item that compares them with the types the call was lowered with. A mismatch is a const
//! evaluation panic whose message is spoc's own sentence, at the argument's span; rustc reports
//! it as `error[E0080]: evaluation panicked: …`.
//!
//! A call that passes one buffer as two arguments is checked there too: the helper may take both
//! as `&[T]`, never either as `&mut [T]` (Rust's borrow rules; code generation relies on a
//! helper's `&mut [T]` parameter being the only way it sees that buffer).
//!
//! Records are tagged `REC` (buffers of records `BUF_RO + REC`, `BUF_MUT + REC`); their names are
//! compared separately, with the companion's `PARAM_RECORDS` and `RET_RECORD`.
//!
//! The same item tells a `#[device]` fn from any other function: the callee path is imported
//! explicitly next to a glob import of a fallback companion with `IS_DEVICE = false`. An explicit
//! import shadows a glob one, namespace by namespace, so the fallback is seen only when the
//! callee has no companion type, that is when it is not a `#[device]` fn.

use crate::errors::Loc;
use crate::lower::{ArgHint, CallCheck, HelperUse};
use crate::types::{Elem, RecordUse, Scalar, Ty};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};

const SCALARS: [Scalar; 8] = [
    Scalar::Bool,
    Scalar::I32,
    Scalar::I64,
    Scalar::U32,
    Scalar::U64,
    Scalar::Usize,
    Scalar::F32,
    Scalar::F64,
];

/// Tags of buffer types: `BUF_RO + scalar tag` for `&[T]`, `BUF_MUT + scalar tag` for `&mut [T]`.
const BUF_RO: u8 = 16;
const BUF_MUT: u8 = 32;
/// The tag of every record type (names are compared apart).
const REC: u8 = 9;

/// A record of any name, in [`all_types`].
const ANY_RECORD: u32 = u32::MAX;

/// The first vector tag: `VEC + i` for `crate::types::VECTORS[i]` (below `BUF_RO`).
const VEC: u8 = 10;

fn elem_tag(e: Elem) -> u8 {
    match e {
        Elem::Scalar(s) => scalar_tag(s),
        Elem::Record(_) => REC,
        Elem::Vector(s, l) => vector_tag(s, l),
    }
}

fn vector_tag(s: Scalar, lanes: u8) -> u8 {
    crate::types::VECTORS
        .iter()
        .position(|&(_, t, l)| t == s && l == lanes)
        .map_or(0, |i| VEC + i as u8)
}

/// The tags of `f16` and `bf16`: past every buffer tag (`BUF_MUT + 15`), since the scalars,
/// records and vectors fill `1..BUF_RO` and the launch path decodes `BUF_RO`/`BUF_MUT` as they
/// are. Their buffers are `BUF_RO + 48` … and stay unique.
const HALF: u8 = 48;

fn scalar_tag(s: Scalar) -> u8 {
    match s {
        Scalar::F16 => return HALF,
        Scalar::BF16 => return HALF + 1,
        _ => {}
    }
    SCALARS
        .iter()
        .position(|&x| x == s)
        .map_or(0, |i| i as u8 + 1)
}

/// The tag of a parameter or result type: `0` for `()`, `1..=8` for the scalars, `REC` for
/// records, buffers as `BUF_RO`/`BUF_MUT` plus their element's tag.
pub fn tag(t: Ty) -> u8 {
    match t {
        Ty::Unit | Ty::Var(_) | Ty::Array { .. } => 0,
        Ty::Scalar(s) => scalar_tag(s),
        Ty::Record(_) => REC,
        Ty::Vector(s, l) => vector_tag(s, l),
        Ty::Buffer { elem, mutable } => (if mutable { BUF_MUT } else { BUF_RO }) + elem_tag(elem),
    }
}

/// The record name of a parameter or result type (a record or a buffer of records), `""` for
/// other types.
pub fn record_name(t: Ty, recs: &[RecordUse]) -> String {
    let r = match t {
        Ty::Record(r)
        | Ty::Buffer {
            elem: Elem::Record(r),
            ..
        } => r,
        _ => return String::new(),
    };
    recs.get(r as usize)
        .map(|r| r.name.clone())
        .unwrap_or_default()
}

/// Every type a helper parameter or result can have, with its tag (records as one).
fn all_types() -> Vec<(u8, Ty)> {
    let mut v = vec![(0, Ty::Unit)];
    let scalars = SCALARS.into_iter().chain([Scalar::F16, Scalar::BF16]);
    for s in scalars.clone() {
        v.push((scalar_tag(s), Ty::Scalar(s)));
    }
    v.push((REC, Ty::Record(ANY_RECORD)));
    for &(_, s, l) in &crate::types::VECTORS {
        v.push((vector_tag(s, l), Ty::Vector(s, l)));
    }
    let elems = scalars
        .filter(|&s| s != Scalar::Usize)
        .map(Elem::Scalar)
        .chain([Elem::Record(ANY_RECORD)])
        .chain(
            crate::types::VECTORS
                .iter()
                .map(|&(_, s, l)| Elem::Vector(s, l)),
        );
    for elem in elems {
        for mutable in [false, true] {
            let t = Ty::Buffer { elem, mutable };
            v.push((tag(t), t));
        }
    }
    v
}

/// How a type reads in a message (`f32`, `&mut [Particle]`; `record` for a record of any name).
pub fn show(t: Ty, recs: &[RecordUse]) -> String {
    let rec = |r: u32| {
        recs.get(r as usize)
            .map_or_else(|| "record".to_string(), |r| r.name.clone())
    };
    t.spelled(rec, |mutable, e| {
        format!("&{}[{e}]", if mutable { "mut " } else { "" })
    })
}

/// A type in a message: `` `f32` ``, or "a record" / "a buffer of records" for any record.
fn quoted(t: Ty, recs: &[RecordUse]) -> String {
    match t {
        Ty::Record(ANY_RECORD) => "a record".into(),
        Ty::Buffer {
            elem: Elem::Record(ANY_RECORD),
            mutable,
        } => format!(
            "a `&{}[_]` buffer of records",
            if mutable { "mut " } else { "" }
        ),
        t => format!("`{}`", show(t, recs)),
    }
}

/// The tags of a call: its arguments', then its result's.
pub fn call_tags(call: &CallCheck) -> Vec<u8> {
    call.args
        .iter()
        .map(|a| tag(a.0))
        .chain(std::iter::once(tag(call.ret)))
        .collect()
}

/// The companion of the instance of `callee` (a companion or a stub) that `call` uses:
/// `<callee as InstanceAt<{ pick_instance(callee::INSTANCES, tags) }>>::T` (for a plain helper,
/// `callee` itself).
pub fn instance_of(callee: &TokenStream, call: &CallCheck) -> TokenStream {
    let tags = call_tags(call);
    quote! {
        <#callee as ::spoc::__private::InstanceAt<{
            ::spoc::__private::pick_instance(#callee::INSTANCES, &[ #(#tags),* ])
        }>>::T
    }
}

/// Whether an argument of type `arg` may be passed for a parameter of type `param`
/// (`&mut [T]` coerces to `&[T]`).
fn arg_fits(param: Ty, arg: Ty) -> bool {
    match (param, arg) {
        (
            Ty::Buffer {
                elem: pe,
                mutable: pm,
            },
            Ty::Buffer {
                elem: ae,
                mutable: am,
            },
        ) => elem_tag(pe) == elem_tag(ae) && (!pm || am),
        (Ty::Record(_), Ty::Record(_)) => true,
        (p, a) => p == a,
    }
}

/// The written path of a helper call, for messages (`b::helper`).
fn written(h: &HelperUse) -> String {
    let p = &h.path;
    quote!(#p).to_string().replace(' ', "")
}

/// A `panic!` with `message`, at `span`.
pub(crate) fn fail_at(span: Span, message: &str) -> TokenStream {
    let mut lit = Literal::string(message);
    lit.set_span(span);
    quote_spanned!(span=> ::core::panic!(#lit))
}

/// The hint after "expected `P`, found `A`" for argument `hint`.
fn arg_advice(param: Ty, arg: Ty, hint: &ArgHint, guessed: bool) -> String {
    let p = show(param, &[]);
    match (hint, guessed, param) {
        (ArgHint::Literal(d), true, Ty::Scalar(_)) => format!(
            "; the unsuffixed literal took its type from the call's other arguments, because a #[device] function's parameter types are not visible to its callers: write `{d}{p}`"
        ),
        (ArgHint::Var(v), true, Ty::Scalar(_)) => format!(
            "; `{v}` took its type from this call's other arguments, because a #[device] function's parameter types are not visible to its callers: annotate it (`let {v}: {p} = …;`)"
        ),
        (_, _, Ty::Scalar(s)) if matches!(arg, Ty::Scalar(a) if a != Scalar::Bool) && s != Scalar::Bool => {
            format!("; convert it with `as {p}`")
        }
        _ => String::new(),
    }
}

/// A `bool` const expression: `call` fits the signature of `callee` (a path to a companion or a
/// stub): same arity, every argument fits its parameter, same result type, records of the same
/// names.
pub fn fits_expr(callee: &TokenStream, call: &CallCheck, recs: &[RecordUse]) -> TokenStream {
    let n = call.args.len();
    let args = call.args.iter().enumerate().map(|(i, (t, ..))| {
        let a = tag(*t);
        let fits = match t {
            // `&mut [T]` is accepted for `&[T]`.
            Ty::Buffer { mutable: true, .. } => {
                let ro = a - BUF_MUT + BUF_RO;
                quote!((#callee::PARAM_TAGS[#i] == #a || #callee::PARAM_TAGS[#i] == #ro))
            }
            _ => quote!(#callee::PARAM_TAGS[#i] == #a),
        };
        let name = record_name(*t, recs);
        if name.is_empty() {
            fits
        } else {
            quote!((#fits && ::spoc::__private::str_eq(#callee::PARAM_RECORDS[#i], #name)))
        }
    });
    let r = tag(call.ret);
    let ret_name = record_name(call.ret, recs);
    let ret_record = (!ret_name.is_empty())
        .then(|| quote!(&& ::spoc::__private::str_eq(#callee::RET_RECORD, #ret_name)));
    quote!((#callee::PARAM_TAGS.len() == #n #(&& #args)* && #callee::RET_TAG == #r #ret_record))
}

/// The `const _` item checking `call` of `h` (`first`: the first call of this helper in the
/// function, which alone reports a callee that is not a `#[device]` fn).
pub fn call_check(h: &HelperUse, call: &CallCheck, first: bool, recs: &[RecordUse]) -> TokenStream {
    let span = call.span.first;
    let instance = instance_of(&quote!(__spoc_h), call);
    let call_tags = call_tags(call);
    let no_instance = {
        let args: Vec<String> = call.args.iter().map(|a| show(a.0, recs)).collect();
        fail_at(
            span,
            &format!(
                "mismatched types: no instance of the generic #[device] function `{}` takes ({}) -> {}; it has one instance per type of its bound (`Float`: f32, f64; `Int`: i32, u32, i64, u64; `Number`: both)",
                written(h),
                args.join(", "),
                show(call.ret, recs)
            ),
        )
    };
    let path = &h.path;
    let w = written(h);
    let not_device = if first {
        fail_at(
            span,
            &format!("`{w}` is not a #[device] function: kernels and #[device] functions can only call functions marked #[device] (and spoc's intrinsics); mark `{}` with #[device]", h.name),
        )
    } else {
        quote!()
    };
    let n = call.args.len();
    let plural = |k: usize| if k == 1 { "" } else { "s" };
    let given = if n == 1 { "is" } else { "are" };
    let mut arity_arms = Vec::new();
    for k in (0..=8usize).filter(|&k| k != n) {
        let msg = fail_at(
            span,
            &format!(
                "`{w}` takes {k} argument{}, but {n} {given} given",
                plural(k)
            ),
        );
        arity_arms.push(quote!(#k => #msg,));
    }
    let other_arity = fail_at(
        span,
        &format!("`{w}` takes more than 8 arguments, but {n} {given} given"),
    );
    let mut arg_checks = Vec::new();
    for (i, (arg, loc, hint, guessed)) in call.args.iter().enumerate() {
        let loc: &Loc = loc;
        let at = |what: String| {
            format!(
                "mismatched types: argument {} of `{w}` is {what}, found `{}`",
                i + 1,
                show(*arg, recs)
            )
        };
        let mut arms = Vec::new();
        let is_buffer = matches!(arg, Ty::Buffer { .. });
        for (t, param) in all_types() {
            if t == 0 || arg_fits(param, *arg) {
                continue;
            }
            // One arm for every type of the other kind (scalar or buffer), one per type of the same kind.
            if matches!(param, Ty::Buffer { .. }) != is_buffer {
                continue;
            }
            let msg = at(quoted(param, recs)) + &arg_advice(param, *arg, hint, *guessed);
            let panic = fail_at(loc.first, &msg);
            arms.push(quote!(#t => #panic,));
        }
        let (lo, hi, what) = if is_buffer {
            (1u8, REC, "a value")
        } else {
            (BUF_RO + 1, BUF_MUT + REC, "a buffer")
        };
        let range = quote!(#lo..=#hi);
        let panic = fail_at(loc.first, &at(what.to_string()));
        arms.push(quote!(#range => #panic,));
        arg_checks.push(quote!(match __spoc_p[#i] { #(#arms)* _ => {} }));
        let name = record_name(*arg, recs);
        if !name.is_empty() {
            let panic = fail_at(loc.first, &at("of another record type".to_string()));
            arg_checks.push(quote! {
                if !::spoc::__private::str_eq(__spoc_i::PARAM_RECORDS[#i], #name) {
                    #panic
                }
            });
        }
    }
    arg_checks.extend(same_buffer_checks(call, &w));
    let mut ret_arms = Vec::new();
    for (t, ret) in all_types() {
        if tag(ret) == tag(call.ret) || matches!(ret, Ty::Buffer { .. }) {
            continue;
        }
        let used = show(call.ret, recs);
        let msg = match (ret, call.ret) {
            (Ty::Record(_), Ty::Unit) => format!(
                "the value of `{w}(..)` (a record) is unused; bind it: `let _: Name = {w}(..);`"
            ),
            (_, Ty::Unit) => format!(
                "the value of `{w}(..)` (a `{}`) is unused; bind it: `let _: {0} = {w}(..);`",
                show(ret, recs)
            ),
            (Ty::Unit, _) => {
                format!("`{w}` returns nothing, but its result is used as a `{used}`")
            }
            (ret, _) => format!(
                "mismatched types: `{w}` returns {}, but its result is used as a `{used}`",
                quoted(ret, recs),
            ),
        };
        let panic = fail_at(span, &msg);
        ret_arms.push(quote!(#t => #panic,));
    }
    let ret_name = record_name(call.ret, recs);
    let ret_record_check = if ret_name.is_empty() {
        quote!()
    } else {
        let panic = fail_at(
            span,
            &format!("mismatched types: `{w}` returns another record type, but its result is used as a `{ret_name}`"),
        );
        quote! {
            if __spoc_i::RET_TAG == #REC && !::spoc::__private::str_eq(__spoc_i::RET_RECORD, #ret_name) {
                #panic
            }
        }
    };
    let fallback_consts = crate::device_fn::unusable_consts("", false, span);
    quote_spanned! {span=>
        const _: () = {
            #[allow(unused_imports)]
            use #path as __spoc_callee;
            {
                #[allow(non_camel_case_types, dead_code)]
                mod __spoc_fallback {
                    pub enum __spoc_h {}
                    impl __spoc_h {
                        #fallback_consts
                    }
                    impl<const I: usize> ::spoc::__private::InstanceAt<I> for __spoc_h {
                        type T = __spoc_h;
                    }
                }
                #[allow(unused_imports)]
                use __spoc_callee as __spoc_h;
                #[allow(unused_imports)]
                use __spoc_fallback::*;
                // The instance called (a generic helper's, or the helper itself).
                #[allow(non_camel_case_types)]
                type __spoc_i = #instance;
                if !__spoc_i::IS_DEVICE {
                    #not_device
                } else if !__spoc_h::INSTANCES.is_empty()
                    && ::spoc::__private::pick_instance(__spoc_h::INSTANCES, &[ #(#call_tags),* ])
                        == __spoc_h::INSTANCES.len()
                {
                    #no_instance
                } else if !__spoc_i::OK {
                    // The helper has errors of its own, reported where it is.
                } else {
                    let __spoc_p: &[u8] = __spoc_i::PARAM_TAGS;
                    if __spoc_p.len() != #n {
                        match __spoc_p.len() {
                            #(#arity_arms)*
                            _ => #other_arity,
                        }
                    } else {
                        #(#arg_checks)*
                        match __spoc_i::RET_TAG {
                            #(#ret_arms)*
                            _ => {}
                        }
                        #ret_record_check
                    }
                }
            }
        };
    }
}

/// The checks of the arguments of `call` (of helper `w`) that name one buffer: the helper may
/// take both as `&[T]`, but if it takes either as `&mut [T]` (its parameter tag is the `&mut`
/// one: the type checks before have made sure it is one of the two), the call is an error at
/// the later argument, as Rust's borrow checker would refuse it. The message names the two
/// parameters, which only the helper's companion knows (`PARAM_NAMES`), so it is assembled at
/// compile time with `spoc::__private::ConstMessage`.
fn same_buffer_checks(call: &CallCheck, w: &str) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for sb in &call.same_buffers {
        let (i, j) = (sb.first, sb.second);
        let (Some((ti, ..)), Some((tj, loc, ..))) = (call.args.get(i), call.args.get(j)) else {
            continue;
        };
        let mut_tag = |t: Ty| match t {
            Ty::Buffer { elem, .. } => tag(Ty::Buffer {
                elem,
                mutable: true,
            }),
            _ => 0,
        };
        let (mi, mj) = (mut_tag(*ti), mut_tag(*tj));
        if mi == 0 || mj == 0 {
            continue;
        }
        let head = format!(
            "buffer `{}` is passed to `{w}` as `&mut` (parameter `",
            sb.name
        );
        let mid = "`) and also as parameter `";
        let tail = "`: a helper may not see one buffer through two parameters when one of them writes it; pass two different buffers, or give the helper one `&mut [T]` parameter that it both reads and writes";
        let span = loc.first;
        let panic = quote_spanned!(span=> ::core::panic!("{}", __spoc_m.as_str()));
        out.push(quote! {
            if __spoc_p[#i] == #mi || __spoc_p[#j] == #mj {
                let (__spoc_w, __spoc_o) = if __spoc_p[#i] == #mi { (#i, #j) } else { (#j, #i) };
                let __spoc_m = ::spoc::__private::ConstMessage::new()
                    .push(#head)
                    .push(__spoc_i::PARAM_NAMES[__spoc_w])
                    .push(#mid)
                    .push(__spoc_i::PARAM_NAMES[__spoc_o])
                    .push(#tail);
                #panic
            }
        });
    }
    out
}

/// The check items of every call in a lowered function, each under the fn's `cfg` attributes.
pub fn all(
    helpers: &[HelperUse],
    calls: &[CallCheck],
    cfgs: &TokenStream,
    recs: &[RecordUse],
) -> TokenStream {
    // By path: the entries of one helper's instances (`resolve.rs`) share it, and a callee
    // that is not a #[device] fn is reported once.
    let mut seen: Vec<String> = Vec::new();
    calls
        .iter()
        .filter_map(|c| {
            let h = helpers.get(c.helper)?;
            let w = written(h);
            let first = !seen.contains(&w);
            if first {
                seen.push(w);
            }
            let check = call_check(h, c, first, recs);
            Some(quote!(#cfgs #check))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_distinct_and_buffers_coerce() {
        let all = all_types();
        for (i, (a, _)) in all.iter().enumerate() {
            for (b, _) in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        let ro = Ty::Buffer {
            elem: Elem::Scalar(Scalar::F32),
            mutable: false,
        };
        let rw = Ty::Buffer {
            elem: Elem::Scalar(Scalar::F32),
            mutable: true,
        };
        assert!(arg_fits(ro, rw));
        assert!(!arg_fits(rw, ro));
        assert!(!arg_fits(Ty::Scalar(Scalar::U32), Ty::USIZE));
        assert_eq!(tag(rw), BUF_MUT + tag(Ty::Scalar(Scalar::F32)));
    }
}
