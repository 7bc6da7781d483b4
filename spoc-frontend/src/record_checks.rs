//! Compile-time checks of a function's record uses against the records' declarations.
//!
//! The macro cannot see a record's fields (the struct is another item), so it infers their types
//! from their use (`lower_record.rs`) and emits, for every record and field it used, a
//! `const _: () = { … };` item comparing what it assumed with what `#[derive(Record)]` declared
//! (`spoc::Record::NAME`, `spoc::field_path_tag`). A mismatch is a const-evaluation panic whose
//! message is spoc's own sentence, at the field's span; rustc shows it as
//! `error[E0080]: evaluation panicked: …`. Checked:
//! - a record is named by its own name (its IR name is the path's last segment), and two paths
//!   written for one name are one type;
//! - every field exists ("`Particle` has no field `vel`"), with the type it is used as
//!   ("mismatched types: field `x` of `Particle` is `f32`, but it is used as `f64`"), or of the
//!   kind it is used as when nothing fixed its type (a float, an integer, a record), and fields
//!   used as one type have one type;
//! - a record literal gives every field.

use crate::checks::fail_at;
use crate::lower::LoweredFn;
use crate::lower_record::{Expect, FieldCheck};
use crate::types::{Kind, RecordUse, Scalar};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

/// The IR scalar types a field can have, with their Rust names.
const FIELD_SCALARS: [(&str, &str); 7] = [
    ("Bool", "bool"),
    ("I32", "i32"),
    ("I64", "i64"),
    ("U32", "u32"),
    ("U64", "u64"),
    ("F32", "f32"),
    ("F64", "f64"),
];

/// Every record check of `l`, each under the fn's `cfg` attributes. `rustc_sees_fields`: the
/// expansion also holds Rust code accessing the fields by name (a helper's host copy, a kernel's
/// native entry point), on which rustc reports a missing field itself (`E0609`, listing the
/// fields there are); spoc's "has no field" is then left out for the fields whose type the use
/// fixed, so that the error is not reported twice. (A field used with a type only its declaration
/// fixes is named through `FieldOf` in native code, where rustc's error is about a trait: spoc's
/// sentence stays.)
pub fn all(l: &LoweredFn, cfgs: &TokenStream, rustc_sees_fields: bool) -> TokenStream {
    let mut out = TokenStream::new();
    for r in &l.records {
        out.extend(quote!(#cfgs));
        out.extend(name_check(r));
    }
    for (i, c) in l.field_checks.iter().enumerate() {
        out.extend(quote!(#cfgs));
        out.extend(field_check(
            c,
            i,
            &l.field_checks,
            &l.records,
            rustc_sees_fields,
        ));
    }
    for lit in &l.record_lits {
        let Some(r) = l.records.get(lit.record as usize) else {
            continue;
        };
        let path = &r.path;
        let n = lit.count;
        let span = lit.span.first;
        let panic = fail_at(
            span,
            &format!(
                "missing fields in this `{}` literal: a record literal in a kernel gives every field of the record (`..base` is not supported)",
                r.name
            ),
        );
        out.extend(quote!(#cfgs));
        out.extend(quote_spanned! {span=>
            const _: () = {
                if <#path as ::spoc::Record>::FIELDS.len() != #n {
                    #panic
                }
            };
        });
    }
    out
}

/// `path`'s record is named `r.name` (not an alias), and its other paths are the same type.
fn name_check(r: &RecordUse) -> TokenStream {
    let span = r.span.first;
    let path = &r.path;
    let name = &r.name;
    let panic = fail_at(
        span,
        &format!("kernels name a record by its own name (the IR links records by name), and `{name}` is another name for it: import the record without `as`, or write its own name"),
    );
    let aliases = r.aliases.iter().map(|a| {
        let sp = crate::errors::Loc::of(a).first;
        quote_spanned! {sp=>
            #[allow(dead_code)]
            fn __spoc_same_record(x: #a) -> #path { x }
        }
    });
    quote_spanned! {span=>
        const _: () = {
            #(#aliases)*
            if !::spoc::__private::str_eq(<#path as ::spoc::Record>::NAME, #name) {
                #panic
            }
        };
    }
}

/// How field `c` reads in a message: (field, record) as in "field `pos.x` of `Body`".
fn describe(c: &FieldCheck, recs: &[RecordUse]) -> (String, String) {
    let root = recs
        .get(c.path.root as usize)
        .map_or_else(String::new, |r| r.name.clone());
    (c.path.fields.join("."), root)
}

/// The lookup of `c`'s path: `::spoc::field_path_tag::<Root>(&["a", "b"])`, over its first
/// `n` fields.
fn lookup(c: &FieldCheck, n: usize, recs: &[RecordUse]) -> Option<TokenStream> {
    let root = &recs.get(c.path.root as usize)?.path;
    let fields = &c.path.fields[..n];
    Some(quote!(::spoc::field_path_tag::<#root>(&[#(#fields),*])))
}

fn scalar_pat(ir: &str) -> TokenStream {
    let id = quote::format_ident!("{}", ir);
    quote!(::spoc::TypeTag::Scalar(::spoc::__private::spoc_ir::ScalarType::#id))
}

/// Whether a field of scalar type `t` (`None`: a record) fits a use of kind `kind`.
fn kind_fits(kind: Kind, t: Option<&str>) -> bool {
    match kind {
        Kind::Any => true,
        Kind::Record => t.is_none(),
        Kind::Float => matches!(t, Some("f32" | "f64")),
        Kind::AnyFloat => matches!(t, Some("f16" | "bf16" | "f32" | "f64")),
        Kind::Int => matches!(t, Some("i32" | "i64" | "u32" | "u64")),
        Kind::Numeric => t.is_some_and(|t| t != "bool"),
        Kind::IntOrBool => matches!(t, Some("bool" | "i32" | "i64" | "u32" | "u64")),
    }
}

fn field_check(
    c: &FieldCheck,
    index: usize,
    all: &[FieldCheck],
    recs: &[RecordUse],
    rustc_sees_fields: bool,
) -> TokenStream {
    let span = c.span.first;
    let (Some(full), Some(prefix)) = (
        lookup(c, c.path.fields.len(), recs),
        lookup(c, c.path.fields.len() - 1, recs),
    ) else {
        return quote!();
    };
    let (field, root) = describe(c, recs);
    let last = c.path.fields.last().cloned().unwrap_or_default();
    let owner = if c.path.fields.len() > 1 {
        format!(
            "{root}.{}",
            c.path.fields[..c.path.fields.len() - 1].join(".")
        )
    } else {
        root.clone()
    };
    let missing = if rustc_sees_fields && !matches!(c.expect, Expect::Generic { .. }) {
        quote!({})
    } else {
        fail_at(span, &format!("`{owner}` has no field `{last}`"))
    };
    let this = format!("field `{field}` of `{root}`");
    let is = |what: &str, used: &str| {
        fail_at(
            span,
            &format!("mismatched types: {this} is {what}, but it is used as {used}"),
        )
    };
    // One arm per scalar type the field may have, plus records: `ok(ty)` says which fit.
    let arms = |used: &str, ok: &dyn Fn(Option<&str>) -> bool| {
        let mut arms = Vec::new();
        for (ir, rust) in FIELD_SCALARS {
            let pat = scalar_pat(ir);
            if ok(Some(rust)) {
                arms.push(quote!(#pat => {}));
            } else {
                let p = is(&format!("`{rust}`"), used);
                arms.push(quote!(#pat => #p,));
            }
        }
        if ok(None) {
            arms.push(quote!(::spoc::TypeTag::Record(_) => {}));
        } else {
            let p = is("a record", used);
            arms.push(quote!(::spoc::TypeTag::Record(_) => #p,));
        }
        let other = is("another type", used);
        arms.push(quote!(_ => #other,));
        arms
    };
    let check = match &c.expect {
        Expect::Scalar(s) => {
            let used = if *s == Scalar::Usize {
                "`usize` (record fields cannot be `usize`: convert with `as usize`)".to_string()
            } else {
                format!("`{}`", s.name())
            };
            let want = s.name();
            let arms = arms(&used, &|t| t == Some(want));
            quote!(match tag { #(#arms)* })
        }
        Expect::Record(r) => {
            let name = recs
                .get(*r as usize)
                .map_or_else(String::new, |r| r.name.clone());
            let used = format!("a `{name}`");
            let other = is("another record", &used);
            let arms = arms(&used, &|t| t.is_none());
            quote! {
                match tag {
                    ::spoc::TypeTag::Record(n) if !::spoc::__private::str_eq(n, #name) => #other,
                    #(#arms)*
                }
            }
        }
        Expect::Generic { kind, same_as } => {
            let used = match kind {
                Kind::Any => "a value",
                Kind::Record => "a record (its fields are used)",
                Kind::Float => "a float",
                Kind::AnyFloat => "a float (`f16`, `bf16`, `f32` or `f64`)",
                Kind::Int => "an integer",
                Kind::Numeric => "a number",
                Kind::IntOrBool => "an integer or `bool`",
            };
            let kind = *kind;
            let arms = arms(used, &|t| kind_fits(kind, t));
            let same = same_as
                .and_then(|j| all.get(j).filter(|_| j != index))
                .and_then(|o| {
                    let (of, oroot) = describe(o, recs);
                    let look = lookup(o, o.path.fields.len(), recs)?;
                    let p = fail_at(
                        span,
                        &format!("mismatched types: {this} and field `{of}` of `{oroot}` are used as one type, but their types differ"),
                    );
                    Some(quote! {
                        if let ::core::option::Option::Some(o) = #look {
                            if !tag.same(o) {
                                #p
                            }
                        }
                    })
                });
            quote! {
                match tag { #(#arms)* }
                #same
            }
        }
    };
    // A nested path whose prefix is wrong is reported by the prefix's own check.
    let prefix_ok = if c.path.fields.len() > 1 {
        quote!(matches!(#prefix, ::core::option::Option::Some(::spoc::TypeTag::Record(_))))
    } else {
        quote!(true)
    };
    quote_spanned! {span=>
        const _: () = {
            if #prefix_ok {
                match #full {
                    ::core::option::Option::None => #missing,
                    ::core::option::Option::Some(tag) => {
                        #check
                    }
                }
            }
        };
    }
}
