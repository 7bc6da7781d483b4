//! Native code: Rust generated from the lowered IR (not from the source, so that the Native
//! backend runs exactly what every other backend runs). Integer `+ - *` and negation wrap,
//! division and remainder go through `KernelInt` (trapping on zero), shifts take the amount
//! modulo the width, float operators are plain Rust (never contracted), buffer, shared-array and
//! local-array accesses are bounds-checked calls that trap.
//!
//! A kernel also gets a row plan ([`plan`]): a second, *fast* body in which the buffer accesses
//! that the plan proved in bounds for a whole row go through windows, and the comparisons it
//! decided for the row are constants.
//!
//! Barriers, warp barriers and warp operations (shuffles, votes, ballots) are calls on the
//! body's `__spoc_simt` handle (`spoc_runtime::native::abi::Simt`), each with its own sync-point
//! number ("site"); such kernels, and kernels with shared arrays, run on the SIMT scheduler
//! (see `native_entry.rs`). Helpers receive the handle as their last argument. Atomics are
//! methods of the buffer or shared-array view (`atomic`, `atomic_cas`), fences are
//! `std::sync::atomic::fence(SeqCst)`, local arrays are Rust arrays (`local_load`,
//! `local_mut`), and `match` on integers is Rust's `match` (an expression `match` gets a last
//! arm that traps, never taken on validated IR).
//!
//! Records are the Rust structs themselves (a buffer of records is a `GlobalRef<Particle>`), their
//! paths given under [`record_key`] in the [`HelperPaths`]. A value whose type the kernel macro
//! left to the record's declaration (`?field:Particle.x`, see `spoc_ir::resolve`) has the type
//! `<Particle as FieldOf<{hash("x")}>>::T`, its literals are typed by a `let` of that type, and
//! its arithmetic goes through `KernelArith` (wrapping for integers, IEEE for floats). A store
//! to a field of a buffer element reads the element, updates the field and writes the element
//! back (so two threads writing different fields of one element race, unlike on a GPU).
//!
//! Every generator returns `None` for IR the Native backend cannot run yet (variants, vectors,
//! a `bf16` cast from another type than `f32`); the kernel then has no native entry point and the runtime refuses to launch
//! it natively, rather than running wrong code.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use spoc_ir::{
    AtomicOp, BinOp, Block, Const, Expr, ExprKind, FenceScope, FieldPath, ForDir, Intrinsic,
    LValue, MathFn, MemSpace, Pattern, PendingType, ScalarType, ShuffleKind, Stmt, StmtKind, Type,
    UnOp, VarDecl, VarId,
};
use std::cell::Cell;
use std::collections::HashMap;

pub mod plan;

/// How generated code reaches a helper: the alias of its companion (see `paths.rs`), and the span
/// of its first call (type errors in the call point there). Records are in it too, under
/// [`record_key`]: the path the function names the record by.
pub type HelperPaths = HashMap<String, (TokenStream, Span)>;

/// The key of record `name` in a [`HelperPaths`] (not an identifier: no helper has it).
pub fn record_key(name: &str) -> String {
    format!("record {name}")
}

/// The key of a source span in a [`HelperPaths`] (`span field Root.a.b`, `span lit Name`).
pub fn span_key(what: &str) -> String {
    format!("span {what}")
}

/// True for the key of a record or a span (not a helper) in a [`HelperPaths`].
pub fn is_record_key(key: &str) -> bool {
    key.starts_with("record ") || key.starts_with("span ")
}

/// A field's name as an identifier (raw for keywords: `r#type`), at `span`.
fn field_ident(name: &str, span: Span) -> Ident {
    match syn::parse_str::<Ident>(name) {
        Ok(mut i) => {
            i.set_span(span);
            i
        }
        Err(_) => Ident::new_raw(name, span),
    }
}

/// The record path text (`Root.a`) of a value of IR type `t`, if it is a record.
fn record_text(t: &Type) -> Option<String> {
    match t {
        Type::Record(n) => Some(n.clone()),
        _ => generic_path(t).map(ToString::to_string),
    }
}

/// The field path of a type left to a record's declaration ([`PendingType::Field`], or a
/// literal's [`PendingType::FieldLiteral`]).
fn generic_path(t: &Type) -> Option<&FieldPath> {
    match t {
        Type::Pending(PendingType::Field(p) | PendingType::FieldLiteral { field: p, .. }) => {
            Some(p)
        }
        _ => None,
    }
}

/// The generator's view of one function.
pub struct Native<'a> {
    pub vars: &'a [VarDecl],
    pub helpers: &'a HelperPaths,
    /// Variables replaced by tokens (the row plan evaluates invariant `let`s from their
    /// initializers); `None` in bodies.
    pub subst: Option<&'a HashMap<VarId, TokenStream>>,
    /// The row plan, when generating a kernel's fast body.
    pub fast: Option<&'a plan::Plan>,
    /// The number of the next sync point (barrier or warp operation) generated.
    pub next_site: Cell<u32>,
    /// Set once a sync point has been generated: the body needs the SIMT scheduler.
    pub uses_simt: Cell<bool>,
}

/// The Rust name of a scalar type (`half::f16`/`half::bf16` through `spoc::__private` for the
/// 16-bit floats).
pub fn rust_scalar(s: ScalarType) -> Option<TokenStream> {
    Some(match s {
        ScalarType::Bool => quote!(bool),
        ScalarType::I32 => quote!(i32),
        ScalarType::I64 => quote!(i64),
        ScalarType::U32 => quote!(u32),
        ScalarType::U64 => quote!(u64),
        ScalarType::F32 => quote!(f32),
        ScalarType::F64 => quote!(f64),
        ScalarType::F16 => quote!(::spoc::__private::f16),
        ScalarType::BF16 => quote!(::spoc::__private::bf16),
    })
}

/// `v as to` where one side is `f16` or `bf16`, with the Interpreter's semantics (the `half`
/// crate's conversions, which round to nearest, ties to even): through `f32` or `f64`, whose
/// conversions to and from the 16-bit floats are the `half` crate's `from_f32`/`from_f64`/
/// `to_f32`/`to_f64`. `None` for a `bf16` cast whose other side is not `f32` (the validator
/// refuses it).
fn half_cast(v: TokenStream, from: ScalarType, to: ScalarType) -> Option<TokenStream> {
    use ScalarType::*;
    let (f16, bf16) = (
        quote!(::spoc::__private::f16),
        quote!(::spoc::__private::bf16),
    );
    Some(match (from, to) {
        (a, b) if a == b => v,
        (BF16, F32) => quote!((#v).to_f32()),
        (F32, BF16) => quote!(#bf16::from_f32(#v)),
        (BF16, _) | (_, BF16) => return None,
        (F16, F32) => quote!((#v).to_f32()),
        (F16, F64) => quote!((#v).to_f64()),
        (F16, t) => {
            let t = rust_scalar(t)?;
            quote!((((#v).to_f32()) as #t))
        }
        (F32, F16) => quote!(#f16::from_f32(#v)),
        (_, F16) => quote!(#f16::from_f64((#v) as f64)),
        _ => return None,
    })
}

/// The Rust type of a value of IR type `t` (`()` for unit, `[T; N]` for a local array); `None`
/// for the types without native code yet (records, variants, vectors, `f16`).
pub fn rust_value_type(t: &Type) -> Option<TokenStream> {
    match t {
        Type::Unit => Some(quote!(())),
        Type::Scalar(s) => rust_scalar(*s),
        Type::Vector { elem, lanes } => rust_vector(*elem, *lanes),
        Type::Array {
            elem,
            space: MemSpace::Local,
            len: Some(n),
        } if **elem != Type::Unit => {
            let e = rust_value_type(elem)?;
            let n = Literal::usize_unsuffixed(*n as usize);
            Some(quote!([#e; #n]))
        }
        _ => None,
    }
}

/// The host type of a kernel vector (`::spoc::__private::F32x4`); `None` for a lane type and
/// count the language has no host type for.
fn rust_vector(elem: ScalarType, lanes: u8) -> Option<TokenStream> {
    let name = crate::types::VECTORS
        .iter()
        .find(|(_, s, l)| s.ir() == elem && *l == lanes)
        .map(|(n, _, _)| format_ident!("{}", n))?;
    Some(quote!(::spoc::__private::#name))
}

/// An integer constant as a pattern literal (`-5i32`, `7u64`); `None` for other constants.
fn pattern_lit(c: Const) -> Option<TokenStream> {
    let lit = match c {
        Const::I32(v) => int_lit(v.unsigned_abs() as u128, "i32"),
        Const::I64(v) => int_lit(v.unsigned_abs() as u128, "i64"),
        Const::U32(v) => Literal::u32_suffixed(v),
        Const::U64(v) => Literal::u64_suffixed(v),
        _ => return None,
    };
    let negative = matches!(c, Const::I32(v) if v < 0) || matches!(c, Const::I64(v) if v < 0);
    Some(if negative {
        quote!(-#lit)
    } else {
        quote!(#lit)
    })
}

/// An integer `match` pattern; `None` for variant cases (no native code yet).
fn pattern(p: &Pattern) -> Option<TokenStream> {
    Some(match p {
        Pattern::Wildcard => quote!(_),
        Pattern::Int(c) => pattern_lit(*c)?,
        Pattern::Range(lo, hi) => {
            let (lo, hi) = (pattern_lit(*lo)?, pattern_lit(*hi)?);
            quote!(#lo..=#hi)
        }
        Pattern::Or(alts) => {
            let alts = alts.iter().map(pattern).collect::<Option<Vec<_>>>()?;
            quote!(#(#alts)|*)
        }
        Pattern::Case { .. } => return None,
    })
}

/// Bytes of the local arrays a body declares (every `let` of a local-array type, as if all were
/// live at once), for the stack check of bodies that run on coroutine stacks.
pub fn local_array_bytes(vars: &[VarDecl]) -> u64 {
    fn size(t: &Type) -> u64 {
        match t {
            Type::Scalar(s) => s.size_bytes() as u64,
            Type::Array {
                elem,
                space: MemSpace::Local,
                len: Some(n),
            } => size(elem).saturating_mul(*n as u64),
            _ => 0,
        }
    }
    vars.iter()
        .filter(|v| v.kind == spoc_ir::VarKind::Local && matches!(v.ty, Type::Array { .. }))
        .fold(0u64, |a, v| a.saturating_add(size(&v.ty)))
}

/// Local arrays from this size on get a stack check before their body is entered
/// (`spoc_runtime::native::abi::check_stack`).
pub const STACK_CHECK_BYTES: u64 = 4096;

/// The number of helper `name`'s first sync point: helpers number theirs from a hash of their
/// name with the top bit set, so that they never meet a kernel's (numbered from 0) nor, but for
/// a 1-in-2^31 collision, another helper's.
pub fn helper_site_base(name: &str) -> u32 {
    // FNV-1a, 32 bits.
    let h = name.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    });
    0x8000_0000 | (h & 0x7fff_0000)
}

/// `tokens` with every token (recursively) given `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut inner = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                inner.set_span(span);
                t = proc_macro2::TokenTree::Group(inner);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}

/// `tokens` (a statement's code) with each of its own `?` mapping the trap to the statement's
/// location: `.map_err(Trap::located(file!(), line, column))?`. A `?` that already maps (one of
/// a statement nested in this one, located first) is left alone, so each fault carries the
/// innermost statement's location, as the Interpreter's reports do. Only the fault path pays.
fn located(tokens: TokenStream, loc: spoc_ir::SrcLoc) -> TokenStream {
    use proc_macro2::{Delimiter, Group, TokenTree};
    fn walk(tokens: TokenStream, map: &TokenStream) -> TokenStream {
        let mut out: Vec<TokenTree> = Vec::new();
        for t in tokens {
            match t {
                TokenTree::Group(g) => {
                    let mut inner = Group::new(g.delimiter(), walk(g.stream(), map));
                    inner.set_span(g.span());
                    out.push(TokenTree::Group(inner));
                }
                TokenTree::Punct(p) if p.as_char() == '?' => {
                    let mapped = matches!(
                        &out[..],
                        [.., TokenTree::Ident(m), TokenTree::Group(g)]
                            if m == "map_err" && g.delimiter() == Delimiter::Parenthesis
                    );
                    if !mapped {
                        out.extend(map.clone());
                    }
                    out.push(TokenTree::Punct(p));
                }
                t => out.push(t),
            }
        }
        out.into_iter().collect()
    }
    let (line, column) = (loc.line, loc.column);
    let map = quote!(.map_err(::spoc::__private::Trap::located(::core::file!(), #line, #column)));
    walk(tokens, &map)
}

/// A constant as a Rust expression of its exact type and value.
pub fn constant(c: Const) -> TokenStream {
    /// `lit`, negated when `negative`.
    fn signed(negative: bool, lit: Literal) -> TokenStream {
        if negative {
            quote!((-#lit))
        } else {
            quote!(#lit)
        }
    }
    match c {
        Const::Bool(b) => quote!(#b),
        Const::I32(v) => signed(v < 0, int_lit(v.unsigned_abs() as u128, "i32")),
        Const::I64(v) => signed(v < 0, int_lit(v.unsigned_abs() as u128, "i64")),
        Const::U32(v) => {
            let l = Literal::u32_suffixed(v);
            quote!(#l)
        }
        Const::U64(v) => {
            let l = Literal::u64_suffixed(v);
            quote!(#l)
        }
        Const::F16(bits) => quote!(::spoc::__private::f16::from_bits(#bits)),
        Const::BF16(bits) => quote!(::spoc::__private::bf16::from_bits(#bits)),
        Const::F32(bits) => match f32::from_bits(bits) {
            v if v.is_finite() => signed(v.is_sign_negative(), Literal::f32_suffixed(v.abs())),
            _ => quote!(f32::from_bits(#bits)),
        },
        Const::F64(bits) => match f64::from_bits(bits) {
            v if v.is_finite() => signed(v.is_sign_negative(), Literal::f64_suffixed(v.abs())),
            _ => quote!(f64::from_bits(#bits)),
        },
    }
}

/// The Rust form of `op` on `a` and `b` where it is one for every operand type: wrapping
/// shifts, bitwise operations, comparisons and logic; `None` for the arithmetic operators.
fn uniform_binary(op: BinOp, a: &TokenStream, b: &TokenStream) -> Option<TokenStream> {
    Some(match op {
        BinOp::Shl => quote!((#a).wrapping_shl((#b) as u32)),
        BinOp::Shr => quote!((#a).wrapping_shr((#b) as u32)),
        BinOp::BitAnd => quote!((#a & #b)),
        BinOp::BitOr => quote!((#a | #b)),
        BinOp::BitXor => quote!((#a ^ #b)),
        BinOp::Eq => quote!((#a == #b)),
        BinOp::Ne => quote!((#a != #b)),
        BinOp::Lt => quote!((#a < #b)),
        BinOp::Le => quote!((#a <= #b)),
        BinOp::Gt => quote!((#a > #b)),
        BinOp::Ge => quote!((#a >= #b)),
        BinOp::LogicalAnd => quote!((#a && #b)),
        BinOp::LogicalOr => quote!((#a || #b)),
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => return None,
    })
}

/// An integer literal token `<magnitude><suffix>` (the magnitude of `MIN` included, which only
/// the negated form makes valid, exactly as Rust reads `-2147483648i32`).
fn int_lit(magnitude: u128, suffix: &str) -> Literal {
    format!("{magnitude}{suffix}")
        .parse()
        .unwrap_or_else(|_| Literal::u32_unsuffixed(0))
}

impl<'a> Native<'a> {
    /// A generator of a body of `vars` (no substitution, no plan), numbering its sync points from
    /// 0 (set [`Native::next_site`] to start elsewhere).
    pub fn new(vars: &'a [VarDecl], helpers: &'a HelperPaths) -> Native<'a> {
        Native {
            vars,
            helpers,
            subst: None,
            fast: None,
            next_site: Cell::new(0),
            uses_simt: Cell::new(false),
        }
    }

    /// A new sync-point number (and a note that the body needs the SIMT scheduler).
    fn site(&self) -> Literal {
        let s = self.next_site.get();
        self.next_site.set(s.wrapping_add(1));
        self.uses_simt.set(true);
        Literal::u32_suffixed(s)
    }

    /// The source name of variable `id`, for messages (`"a"` for `a_3`).
    fn source_name(&self, id: VarId) -> String {
        self.vars
            .get(id.0 as usize)
            .map_or_else(|| "array".to_string(), |v| v.name.clone())
    }

    /// The place of an element of a local array: `base[index]…` as a Rust place expression, and
    /// the `let`s that evaluate its indices first (outermost first), so that no index is
    /// evaluated while the array is borrowed.
    fn local_place(&self, l: &LValue, lets: &mut Vec<TokenStream>) -> Option<TokenStream> {
        match l {
            LValue::Var(id) => {
                let v = self.var(*id);
                Some(quote!(#v))
            }
            LValue::Index { base, index } => {
                let inner = self.local_place(base, lets)?;
                let i = self.expr(index)?;
                let t = format_ident!("__spoc_i{}", lets.len());
                lets.push(quote!(let #t: u32 = #i;));
                let name = self.source_name(spoc_ir::visit::place_root(l));
                Some(quote!((*::spoc::__private::local_mut(&mut #inner, #t, #name)?)))
            }
            LValue::Field { base, field } => {
                let inner = self.local_place(base, lets)?;
                let f = field_ident(field, Span::call_site());
                Some(quote!((#inner).#f))
            }
        }
    }

    /// The type of the root variable of place `l`.
    fn root_type(&self, l: &LValue) -> Option<&Type> {
        Some(&self.vars.get(spoc_ir::visit::place_root(l).0 as usize)?.ty)
    }

    /// Whether the place `l` lies in a local (per-thread) array.
    fn in_local_array(&self, l: &LValue) -> Option<bool> {
        Some(matches!(
            self.root_type(l)?,
            Type::Array {
                space: MemSpace::Local,
                ..
            }
        ))
    }

    /// The store of `value` into `place` (then its `fields`) within a local array: the value
    /// first, then the indices, then the store.
    fn local_store(
        &self,
        place: &LValue,
        value: &TokenStream,
        fields: &[Ident],
    ) -> Option<TokenStream> {
        let mut lets = Vec::new();
        let place = self.local_place(place, &mut lets)?;
        Some(quote!({
            let __spoc_v = #value;
            #(#lets)*
            #place #(.#fields)* = __spoc_v;
        }))
    }

    /// The Rust name of variable `id`: its source name with the id appended, so shadowed
    /// variables stay distinct and no name clashes with the generated `ctx`/`args`.
    pub fn var(&self, id: VarId) -> Ident {
        let name = self
            .vars
            .get(id.0 as usize)
            .map(|v| v.name.as_str())
            .filter(|n| !n.is_empty() && *n != "_")
            .unwrap_or("v");
        format_ident!("{}_{}", name, id.0)
    }

    /// The span of the first use of `what` (`field Root.a`, `lit Name`), else the call site.
    fn span_of(&self, what: &str) -> Span {
        self.helpers
            .get(&span_key(what))
            .map_or_else(Span::call_site, |(_, s)| *s)
    }

    /// Field `field` of a value of IR type `base` as an identifier, at its first use.
    fn field_of(&self, base: &Type, field: &str) -> Ident {
        let span = record_text(base).map_or_else(Span::call_site, |r| {
            self.span_of(&format!("field {r}.{field}"))
        });
        field_ident(field, span)
    }

    /// The Rust path of record `name`.
    fn record_path(&self, name: &str) -> Option<TokenStream> {
        self.helpers.get(&record_key(name)).map(|(p, _)| p.clone())
    }

    /// The Rust type of field path `Root.a.b`: `<<Root as FieldOf<ha>>::T as FieldOf<hb>>::T`.
    fn field_type(&self, path: &FieldPath) -> Option<TokenStream> {
        let mut t = self.record_path(&path.record)?;
        for f in &path.fields {
            let h = crate::record::field_hash(f);
            t = quote!(<#t as ::spoc::__private::FieldOf<#h>>::T);
        }
        Some(t)
    }

    /// The Rust type of a value of IR type `t`: [`rust_value_type`]'s, records and field types
    /// included.
    pub fn value_type(&self, t: &Type) -> Option<TokenStream> {
        match t {
            Type::Record(n) => self.record_path(n),
            Type::Pending(PendingType::Field(p)) => self.field_type(p),
            Type::Array {
                elem,
                space: MemSpace::Local,
                len: Some(n),
            } if **elem != Type::Unit => {
                let e = self.value_type(elem)?;
                let n = Literal::usize_unsuffixed(*n as usize);
                Some(quote!([#e; #n]))
            }
            _ => rust_value_type(t),
        }
    }

    /// The element type of a buffer parameter's type `t` (a scalar or a record).
    pub fn elem_type(&self, t: &Type) -> Option<TokenStream> {
        match t {
            Type::Array { elem, .. } => match &**elem {
                Type::Record(_) | Type::Vector { .. } => self.value_type(elem),
                e => rust_scalar(e.as_scalar()?),
            },
            _ => None,
        }
    }

    /// `{ let v = value; <place> = v; }` for a store to a field of a record: of a variable, of
    /// a local array's element, or of a buffer's element (read, update, write back).
    fn field_store(&self, target: &LValue, value: TokenStream) -> Option<TokenStream> {
        let mut names = Vec::new();
        let mut inner = target;
        while let LValue::Field { base, field } = inner {
            names.push(field.as_str());
            inner = base;
        }
        names.reverse();
        // The record the chain starts from: the root variable's, or its array's element's.
        let mut path = match (inner, self.root_type(inner)) {
            (LValue::Var(_), Some(t)) => record_text(t),
            (LValue::Index { .. }, Some(Type::Array { elem, .. })) => record_text(elem),
            _ => None,
        };
        let fields: Vec<Ident> = names
            .iter()
            .map(|f| {
                let span = path
                    .as_ref()
                    .map_or_else(Span::call_site, |p| self.span_of(&format!("field {p}.{f}")));
                path = path.as_ref().map(|p| format!("{p}.{f}"));
                field_ident(f, span)
            })
            .collect();
        match inner {
            LValue::Var(id) => {
                let v = self.var(*id);
                let at = fields.last().map_or_else(Span::call_site, Ident::span);
                let store = respan(quote!(#v #(.#fields)* = __spoc_v;), at);
                Some(quote!({
                    let __spoc_v = #value;
                    #store
                }))
            }
            LValue::Index { base, index } => {
                if self.in_local_array(inner)? {
                    return self.local_store(inner, &value, &fields);
                }
                let LValue::Var(b) = &**base else { return None };
                let b = self.var(*b);
                let i = self.expr(index)?;
                let at = fields.last().map_or_else(Span::call_site, Ident::span);
                let store = respan(quote!(__spoc_e #(.#fields)* = __spoc_v;), at);
                Some(quote!({
                    let __spoc_v = #value;
                    let __spoc_i: u32 = #i;
                    let mut __spoc_e = #b.load(__spoc_i)?;
                    #store
                    #b.store(__spoc_i, __spoc_e)?;
                }))
            }
            LValue::Field { .. } => None,
        }
    }

    pub fn block(&self, b: &Block) -> Option<TokenStream> {
        let stmts = b.iter().map(|s| self.stmt(s)).collect::<Option<Vec<_>>>()?;
        Some(quote!(#(#stmts)*))
    }

    /// The patterns of the `match` arms `arms` and their bodies, translated by `body`.
    fn arms<T>(
        &self,
        arms: &[(Pattern, T)],
        body: impl Fn(&Self, &T) -> Option<TokenStream>,
    ) -> Option<(Vec<TokenStream>, Vec<TokenStream>)> {
        let arms = arms
            .iter()
            .map(|(p, b)| Some((pattern(p)?, body(self, b)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(arms.into_iter().unzip())
    }

    fn stmt(&self, s: &Stmt) -> Option<TokenStream> {
        let tokens = crate::nesting::deep(|| self.stmt_inner(s))?;
        Some(match s.loc {
            Some(loc) => located(tokens, loc),
            None => tokens,
        })
    }

    fn stmt_inner(&self, s: &Stmt) -> Option<TokenStream> {
        Some(match &s.kind {
            StmtKind::Let { var, init } => {
                let decl = self.vars.get(var.0 as usize)?;
                let name = self.var(*var);
                let ty = self.value_type(&decl.ty)?;
                let m = decl.mutable.then(|| quote!(mut));
                match init {
                    Some(e) => {
                        let e = self.expr(e)?;
                        quote!(let #m #name: #ty = #e;)
                    }
                    None => quote!(let #m #name: #ty;),
                }
            }
            StmtKind::Assign { target, value } => {
                let v = self.expr(value)?;
                match target {
                    LValue::Var(id) => {
                        let name = self.var(*id);
                        quote!(#name = #v;)
                    }
                    LValue::Index { base, index } => {
                        if self.in_local_array(target)? {
                            return self.local_store(target, &v, &[]);
                        }
                        let LValue::Var(b) = &**base else { return None };
                        if let Some(w) = self.fast.and_then(|p| p.window_of(self, *b, index)) {
                            return Some(quote!(#w.store(ctx, #v)?;));
                        }
                        let b = self.var(*b);
                        let i = self.expr(index)?;
                        quote!({
                            let __spoc_v = #v;
                            #b.store(#i, __spoc_v)?;
                        })
                    }
                    LValue::Field { .. } => return self.field_store(target, v),
                }
            }
            StmtKind::Block(b) => {
                let b = self.block(b)?;
                quote!({ #b })
            }
            StmtKind::If { cond, then, els } => {
                let c = self.expr(cond)?;
                let t = self.block(then)?;
                match els {
                    Some(e) => {
                        let e = self.block(e)?;
                        quote!(if #c { #t } else { #e })
                    }
                    None => quote!(if #c { #t }),
                }
            }
            StmtKind::While { cond, body } => {
                let b = self.block(body)?;
                if cond.kind == ExprKind::Const(Const::Bool(true)) {
                    quote!(loop { #b })
                } else {
                    let c = self.expr(cond)?;
                    quote!(while #c { #b })
                }
            }
            StmtKind::For(l) => {
                let v = self.var(l.var);
                let (s, e) = (self.expr(&l.start)?, self.expr(&l.end)?);
                let b = self.block(&l.body)?;
                let range = match l.dir {
                    ForDir::Up => quote!((#s..#e)),
                    ForDir::Down => quote!((#s..#e).rev()),
                };
                let iter = if l.unit_step() {
                    range
                } else {
                    let st = self.expr(&l.step)?;
                    quote!(#range.step_by(::spoc::__private::check_step(#st)?))
                };
                quote!(for #v in #iter { #b })
            }
            StmtKind::Break => quote!(break;),
            StmtKind::Continue => quote!(continue;),
            StmtKind::Return(None) => quote!(return ::core::result::Result::Ok(());),
            StmtKind::Return(Some(e)) => {
                let e = self.expr(e)?;
                quote!(return ::core::result::Result::Ok(#e);)
            }
            StmtKind::Expr(e) => {
                let e = self.expr(e)?;
                quote!(let _ = #e;)
            }
            StmtKind::Pragma { body, .. } => {
                let b = self.block(body)?;
                quote!({ #b })
            }
            StmtKind::Match { scrutinee, arms } => {
                let sc = self.expr(scrutinee)?;
                let (pats, bodies) = self.arms(arms, Self::block)?;
                // A statement `match` need not be exhaustive: no arm, no effect. (Not after a
                // `_` arm: rustc's initialisation check would take the dead arm as a path that
                // leaves a variable unassigned.)
                let rest =
                    (!matches!(arms.last(), Some((Pattern::Wildcard, _)))).then(|| quote!(_ => {}));
                quote!(match #sc { #(#pats => { #bodies })* #rest })
            }
            StmtKind::Barrier => {
                let site = self.site();
                quote!(::spoc::__private::Simt::barrier(&mut *__spoc_simt, #site)?;)
            }
            StmtKind::WarpBarrier => {
                let site = self.site();
                quote!(::spoc::__private::Simt::warp_barrier(&mut *__spoc_simt, #site)?;)
            }
            // Every thread of a block runs on one OS thread, but a device fence must order this
            // thread's accesses for the other blocks (other OS threads): a real fence for both.
            StmtKind::MemFence(FenceScope::Block | FenceScope::Device) => quote!(
                ::core::sync::atomic::fence(::core::sync::atomic::Ordering::SeqCst);
            ),
        })
    }

    fn expr(&self, e: &Expr) -> Option<TokenStream> {
        crate::nesting::deep(|| self.expr_inner(e))
    }

    fn expr_inner(&self, e: &Expr) -> Option<TokenStream> {
        Some(match &e.kind {
            ExprKind::Const(_)
                if matches!(&e.ty, Type::Pending(PendingType::FieldLiteral { .. })) =>
            {
                // A literal typed by a record field: `{ let l: <field type> = 1.5; l }`.
                let Type::Pending(PendingType::FieldLiteral { digits, field }) = &e.ty else {
                    return None;
                };
                let t = self.field_type(field)?;
                let lit: TokenStream = digits.parse().ok()?;
                quote!({ let __spoc_l: #t = #lit; __spoc_l })
            }
            ExprKind::Const(c) => constant(*c),
            ExprKind::Var(id) => match self.subst.and_then(|s| s.get(id)) {
                Some(t) => quote!((#t)),
                None => {
                    let v = self.var(*id);
                    quote!(#v)
                }
            },
            ExprKind::Index { array, index } => {
                if let Type::Array {
                    space: MemSpace::Local,
                    ..
                } = array.ty
                {
                    let a = self.expr(array)?;
                    let i = self.expr(index)?;
                    let name = self.source_name(root_of_expr(array)?);
                    return Some(quote!(::spoc::__private::local_load(&#a, #i, #name)?));
                }
                let ExprKind::Var(b) = array.kind else {
                    return None;
                };
                if let Some(w) = self.fast.and_then(|p| p.window(self, array, index)) {
                    return Some(quote!(#w.load(ctx)?));
                }
                let b = self.var(b);
                let i = self.expr(index)?;
                quote!(#b.load(#i)?)
            }
            ExprKind::Len(array) => {
                if let Type::Array {
                    space: MemSpace::Local,
                    len: Some(n),
                    ..
                } = array.ty
                {
                    let n = Literal::u32_suffixed(n);
                    return Some(quote!(#n));
                }
                let ExprKind::Var(b) = array.kind else {
                    return None;
                };
                let b = self.var(b);
                quote!(#b.len())
            }
            ExprKind::Unary { op, operand } => {
                let x = self.expr(operand)?;
                if generic_path(&operand.ty).is_some() {
                    return Some(match op {
                        UnOp::Neg => quote!(::spoc::__private::KernelArith::k_neg(#x)),
                        UnOp::Not => quote!((!(#x))),
                    });
                }
                let s = operand.ty.as_scalar()?;
                match op {
                    UnOp::Neg if s.is_integer() => quote!((#x).wrapping_neg()),
                    UnOp::Neg => quote!((-(#x))),
                    UnOp::Not => quote!((!(#x))),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs)?,
            ExprKind::Intrinsic { intrinsic, args } => self.intrinsic(*intrinsic, args, &e.ty)?,
            ExprKind::Cast { value, to } => {
                let v = self.expr(value)?;
                let t = rust_scalar(*to)?;
                if generic_path(&value.ty).is_none() {
                    rust_scalar(value.ty.as_scalar()?)?;
                }
                match (value.ty.as_scalar(), *to) {
                    (Some(from), to) if from.is_half() || to.is_half() => half_cast(v, from, to)?,
                    _ => quote!(((#v) as #t)),
                }
            }
            ExprKind::Call { func, args } => {
                let (module, span) = self.helpers.get(func)?;
                let args = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Option<Vec<_>>>()?;
                // The expected type carries the call's span, so that rustc's error for a wrong
                // guess of the helper's return type points at the call.
                let ty = respan(self.value_type(&e.ty)?, *span);
                // No `?` here: its desugaring would move the error to the attribute. The sync
                // handle goes last: arguments may themselves use it (warp operations, calls).
                quote_spanned!(*span=> match #module::native(ctx #(, #args)*, &mut *__spoc_simt) {
                    ::core::result::Result::Ok(__spoc_r) => {
                        let __spoc_r: #ty = __spoc_r;
                        __spoc_r
                    }
                    ::core::result::Result::Err(__spoc_e) => {
                        return ::core::result::Result::Err(__spoc_e)
                    }
                })
            }
            ExprKind::Select { cond, then, els } => {
                let (c, t, f) = (self.expr(cond)?, self.expr(then)?, self.expr(els)?);
                quote!((if #c { #t } else { #f }))
            }
            ExprKind::Match { scrutinee, arms } => {
                let sc = self.expr(scrutinee)?;
                let (pats, values) = self.arms(arms, Self::expr)?;
                // Validated expression matches are exhaustive: the last arm is never taken
                // (and is unreachable when rustc sees the arms cover every value).
                quote!((match #sc {
                    #(#pats => #values,)*
                    _ => return ::core::result::Result::Err(::spoc::__private::Trap::NoMatchingArm),
                }))
            }
            ExprKind::ArrayRepeat { value, len } => {
                self.value_type(&e.ty)?;
                let v = self.expr(value)?;
                let n = Literal::usize_unsuffixed(*len as usize);
                quote!([#v; #n])
            }
            ExprKind::Field { base, field } => {
                // Spanned at the field's first use: rustc's errors in it point there.
                let b = self.expr(base)?;
                let f = self.field_of(&base.ty, field);
                respan(quote!((#b).#f), f.span())
            }
            ExprKind::RecordLit { record, fields } => {
                // `?rec:Name:a,b` (fields in source order): `Path { a: …, b: … }`.
                let (name, order) = record
                    .strip_prefix(spoc_ir::resolve::REC)?
                    .split_once(':')?;
                let span = self.span_of(&format!("lit {name}"));
                let path = respan(self.record_path(name)?, span);
                let names: Vec<Ident> = order.split(',').map(|f| field_ident(f, span)).collect();
                if names.len() != fields.len() {
                    return None;
                }
                let values = fields
                    .iter()
                    .zip(order.split(','))
                    .map(|(v, f)| {
                        let v = self.expr(v)?;
                        Some(respan(v, self.span_of(&format!("field {name}.{f}"))))
                    })
                    .collect::<Option<Vec<_>>>()?;
                quote!(#path { #(#names: #values),* })
            }
            ExprKind::VectorLit(lanes) => {
                // A struct literal: its fields are evaluated in the order written, lane order.
                let Type::Vector { elem, lanes: n } = &e.ty else {
                    return None;
                };
                let path = rust_vector(*elem, *n)?;
                let names = spoc_ir::LANE_NAMES[..lanes.len()]
                    .iter()
                    .map(|l| format_ident!("{}", l));
                let values = lanes
                    .iter()
                    .map(|v| self.expr(v))
                    .collect::<Option<Vec<_>>>()?;
                quote!(#path { #(#names: #values),* })
            }
            ExprKind::VariantLit { .. } => return None,
        })
    }

    fn binary(&self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Option<TokenStream> {
        if let Some(v) = self.fast.and_then(|p| p.fact(self, op, lhs, rhs)) {
            // Decided for the whole row by the plan; both sides are pure.
            return Some(quote!(#v));
        }
        let (a, b) = (self.expr(lhs)?, self.expr(rhs)?);
        if generic_path(&lhs.ty).is_some() {
            // The type is a record field's: integer or float, the trait knows.
            let arith = |m: &str| {
                let m = format_ident!("{}", m);
                quote!(::spoc::__private::KernelArith::#m(#a, #b))
            };
            return Some(match op {
                BinOp::Add => arith("k_add"),
                BinOp::Sub => arith("k_sub"),
                BinOp::Mul => arith("k_mul"),
                BinOp::Div => {
                    let d = arith("k_div");
                    quote!(#d?)
                }
                BinOp::Rem => {
                    let r = arith("k_rem");
                    quote!(#r?)
                }
                _ => return uniform_binary(op, &a, &b),
            });
        }
        let s = lhs.ty.as_scalar()?;
        rust_scalar(s)?;
        let int = s.is_integer();
        Some(match op {
            BinOp::Add if int => quote!((#a).wrapping_add(#b)),
            BinOp::Sub if int => quote!((#a).wrapping_sub(#b)),
            BinOp::Mul if int => quote!((#a).wrapping_mul(#b)),
            BinOp::Div if int => quote!(::spoc::__private::KernelInt::k_div(#a, #b)?),
            BinOp::Rem if int => quote!(::spoc::__private::KernelInt::k_rem(#a, #b)?),
            BinOp::Add => quote!((#a + #b)),
            BinOp::Sub => quote!((#a - #b)),
            BinOp::Mul => quote!((#a * #b)),
            BinOp::Div => quote!((#a / #b)),
            BinOp::Rem => quote!((#a % #b)),
            _ => return uniform_binary(op, &a, &b),
        })
    }

    fn intrinsic(&self, i: Intrinsic, args: &[Expr], ty: &Type) -> Option<TokenStream> {
        // `ctx.<field>[axis]` and `ctx.<method>(axis)`.
        let field = |f: &str, a: spoc_ir::Axis| {
            let (f, a) = (format_ident!("{f}"), Literal::usize_unsuffixed(a.index()));
            quote!(ctx.#f[#a])
        };
        let method = |m: &str, a: spoc_ir::Axis| {
            let (m, a) = (format_ident!("{m}"), Literal::usize_unsuffixed(a.index()));
            quote!(ctx.#m(#a))
        };
        Some(match i {
            Intrinsic::ThreadIdx(a) => field("thread", a),
            Intrinsic::BlockIdx(a) => field("block", a),
            Intrinsic::BlockDim(a) => field("block_dim", a),
            Intrinsic::GridDim(a) => field("grid_dim", a),
            Intrinsic::GlobalId(a) => method("global_id", a),
            Intrinsic::GlobalSize(a) => method("global_size", a),
            Intrinsic::WarpSize => quote!(32u32),
            Intrinsic::LaneId => quote!(ctx.lane_id()),
            Intrinsic::Math(m) => self.math(m, args, ty)?,
            Intrinsic::Atomic(op) => {
                rust_scalar(ty.as_scalar()?)?;
                let xs = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Option<Vec<_>>>()?;
                match (op, xs.as_slice()) {
                    (AtomicOp::CompareExchange, [a, i, expected, new]) => {
                        quote!(#a.atomic_cas(#i, #expected, #new)?)
                    }
                    (_, [a, i, v]) => {
                        let op = format_ident!("{}", format!("{op:?}"));
                        quote!(#a.atomic(::spoc::__private::spoc_ir::AtomicOp::#op, #i, #v)?)
                    }
                    _ => return None,
                }
            }
            Intrinsic::Shuffle(kind) => {
                rust_scalar(ty.as_scalar()?)?;
                let [v, operand] = args else { return None };
                let (v, operand) = (self.expr(v)?, self.expr(operand)?);
                let kind = match kind {
                    ShuffleKind::Index => quote!(Index),
                    ShuffleKind::Up => quote!(Up),
                    ShuffleKind::Down => quote!(Down),
                    ShuffleKind::Xor => quote!(Xor),
                };
                let site = self.site();
                quote!(::spoc::__private::warp_shuffle(
                    #v,
                    #operand,
                    ::spoc::__private::spoc_ir::ShuffleKind::#kind,
                    #site,
                    &mut *__spoc_simt,
                )?)
            }
            Intrinsic::VoteAny | Intrinsic::VoteAll => {
                let [p] = args else { return None };
                let p = self.expr(p)?;
                let all = i == Intrinsic::VoteAll;
                let site = self.site();
                quote!(::spoc::__private::warp_vote(#p, #all, #site, &mut *__spoc_simt)?)
            }
            Intrinsic::Ballot => {
                let [p] = args else { return None };
                let p = self.expr(p)?;
                let site = self.site();
                quote!(::spoc::__private::warp_ballot(#p, #site, &mut *__spoc_simt)?)
            }
            Intrinsic::PackHalf2(_) => {
                let [lo, hi] = args else { return None };
                let (lo, hi) = (self.expr(lo)?, self.expr(hi)?);
                quote!(((#lo).to_bits() as u32 | ((#hi).to_bits() as u32) << 16u32))
            }
            Intrinsic::MmaM16N8K16(h) => {
                let [a, b, c] = args else { return None };
                let (a, b, c) = (self.expr(a)?, self.expr(b)?, self.expr(c)?);
                let bf16 = h == spoc_ir::HalfKind::BF16;
                let site = self.site();
                quote!(::spoc::__private::warp_mma_m16n8k16(
                    #a,
                    #b,
                    #c,
                    #bf16,
                    #site,
                    &mut *__spoc_simt,
                )?)
            }
        })
    }

    fn math(&self, m: MathFn, args: &[Expr], ty: &Type) -> Option<TokenStream> {
        let xs = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Option<Vec<_>>>()?;
        let x = xs.first()?;
        let rest = &xs[1..];
        if let Some(path) = generic_path(ty) {
            // A record field's type: through the type (`<T>::sqrt(x)`), `abs` through the trait.
            let t = self.field_type(path)?;
            return Some(match m {
                MathFn::Abs => quote!(::spoc::__private::KernelArith::k_abs(#x)),
                MathFn::Rsqrt => quote!(((1.0 as #t) / <#t>::sqrt(#x))),
                _ => {
                    let name = format_ident!("{}", m.name());
                    quote!(<#t>::#name(#x #(, #rest)*))
                }
            });
        }
        let s = ty.as_scalar()?;
        let t = rust_scalar(s)?;
        if s.is_integer() {
            return Some(match m {
                MathFn::Abs if s.is_signed() => quote!((#x).wrapping_abs()),
                MathFn::Min => quote!(::core::cmp::Ord::min(#x, #(#rest),*)),
                MathFn::Max => quote!(::core::cmp::Ord::max(#x, #(#rest),*)),
                _ => return None,
            });
        }
        Some(match m {
            MathFn::Rsqrt => quote!(((1.0 as #t) / #t::sqrt(#x))),
            _ => {
                let name = format_ident!("{}", m.name());
                quote!(#t::#name(#x #(, #rest)*))
            }
        })
    }
}

/// The variable at the root of array expression `e` (`a` in `a[i][j]`).
fn root_of_expr(e: &Expr) -> Option<VarId> {
    match &e.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::Index { array, .. } => root_of_expr(array),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spoc_ir::VarKind;

    fn var(name: &str, ty: Type, mutable: bool, kind: VarKind) -> VarDecl {
        VarDecl {
            name: name.into(),
            ty,
            mutable,
            kind,
        }
    }

    fn local(n: u32) -> Type {
        Type::Array {
            elem: std::sync::Arc::new(Type::I32),
            space: MemSpace::Local,
            len: Some(n),
        }
    }

    fn idx(base: LValue, i: u32) -> LValue {
        LValue::Index {
            base: Box::new(base),
            index: Expr::constant(Const::U32(i)),
        }
    }

    /// Tokens as text without spaces, for substring checks.
    fn text(t: &TokenStream) -> String {
        t.to_string().replace(' ', "")
    }

    #[test]
    fn patterns_and_local_array_types() {
        let p = Pattern::Or(vec![
            Pattern::Int(Const::I32(-3)),
            Pattern::Range(Const::I64(i64::MIN), Const::I64(-1)),
            Pattern::Int(Const::U32(7)),
        ]);
        assert_eq!(
            text(&pattern(&p).unwrap()),
            "-3i32|-9223372036854775808i64..=-1i64|7u32"
        );
        assert!(pattern(&Pattern::Case {
            variant: "V".into(),
            case: "A".into(),
            bindings: vec![]
        })
        .is_none());
        let nested = Type::Array {
            elem: std::sync::Arc::new(local(3)),
            space: MemSpace::Local,
            len: Some(2),
        };
        assert_eq!(text(&rust_value_type(&nested).unwrap()), "[[i32;3];2]");
        // Shared and global arrays are not values.
        assert!(rust_value_type(&Type::global_array(Type::F32)).is_none());
    }

    #[test]
    fn nested_local_stores_evaluate_value_then_indices_and_sync_points_are_numbered() {
        let m = Type::Array {
            elem: std::sync::Arc::new(local(3)),
            space: MemSpace::Local,
            len: Some(2),
        };
        let vars = vec![var("m", m.clone(), true, VarKind::Local)];
        let helpers = HelperPaths::new();
        let cx = Native::new(&vars, &helpers);
        let body = vec![
            Stmt::new(StmtKind::Let {
                var: VarId(0),
                init: Some(Expr {
                    kind: ExprKind::ArrayRepeat {
                        value: Box::new(Expr {
                            kind: ExprKind::ArrayRepeat {
                                value: Box::new(Expr::constant(Const::I32(0))),
                                len: 3,
                            },
                            ty: local(3),
                        }),
                        len: 2,
                    },
                    ty: m,
                }),
            }),
            Stmt::new(StmtKind::Assign {
                target: idx(idx(LValue::Var(VarId(0)), 1), 2),
                value: Expr::constant(Const::I32(5)),
            }),
            Stmt::new(StmtKind::Barrier),
            Stmt::new(StmtKind::MemFence(FenceScope::Device)),
            Stmt::new(StmtKind::WarpBarrier),
        ];
        let tokens = cx.block(&body).unwrap();
        syn::parse2::<syn::Block>(quote!({ #tokens })).expect("the body parses");
        let out = text(&tokens);
        assert!(out.contains("letmutm_0:[[i32;3];2]=[[0i32;3];2];"), "{out}");
        assert!(
            out.contains(
                "{let__spoc_v=5i32;let__spoc_i0:u32=1u32;let__spoc_i1:u32=2u32;\
                 (*::spoc::__private::local_mut(&mut(*::spoc::__private::local_mut(&mutm_0,\
                 __spoc_i0,\"m\")?),__spoc_i1,\"m\")?)=__spoc_v;}"
            ),
            "{out}"
        );
        assert!(out.contains("barrier(&mut*__spoc_simt,0u32)?;"), "{out}");
        assert!(
            out.contains("fence(::core::sync::atomic::Ordering::SeqCst)"),
            "{out}"
        );
        assert!(
            out.contains("warp_barrier(&mut*__spoc_simt,1u32)?;"),
            "{out}"
        );
        assert!(cx.uses_simt.get());
    }

    #[test]
    fn helper_sites_are_apart_from_kernel_sites() {
        let (a, b) = (helper_site_base("warp_total"), helper_site_base("other"));
        assert!(a >= 0x8000_0000 && b >= 0x8000_0000);
        assert_ne!(a, b);
        assert_eq!(a & 0xffff, 0);
    }
}
