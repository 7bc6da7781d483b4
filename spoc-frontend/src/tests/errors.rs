//! Every unsupported construct is one error, with a sentence saying what to write instead.

use super::{assert_errors_say, err, lower};

/// (kernel source, a phrase its single error must contain).
const ERROR_CASES: &[(&str, &str)] = &[
    (
        "fn k(a: f32, b: f64, y: &mut [f32]) { y[0] = a + b; }",
        "found `f32` and `f64`",
    ),
    ("fn k(y: &mut [f32]) { let x = 1.0; x = 2.0; }", "let mut x"),
    ("fn k(x: &[f32]) { x[0] = 1.0; }", "&mut [f32]"),
    ("fn k(y: &mut [f32]) { y[0] = z; }", "cannot find value `z`"),
    ("fn k(y: &mut [f32]) { let f = |v: f32| v; }", "closures"),
    ("fn k(y: &mut [f32]) { let v = vec![1.0]; }", "`vec!`"),
    (
        "fn k(y: &mut [f32]) { let a = 1.0; let r = &a; }",
        "references",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = y[0].frobnicate(); }",
        "unknown method `frobnicate`",
    ),
    ("fn k(y: &mut [f32]) { unsafe { y[0] = 1.0; } }", "`unsafe`"),
    ("fn k(y: &mut [f32]) { let s = \"hi\"; }", "string literals"),
    (
        "fn k(y: &mut [f32]) { k(y); }",
        "recursion is not supported on GPUs",
    ),
    ("fn k(y: &mut f32) {}", "`&mut` references to scalars"),
    ("fn k(y: &mut [f32]) { println!(\"x\"); }", "macros"),
    ("fn k(y: &mut [f32]) { let t = (1, 2); }", "tuples"),
    ("fn k(y: &mut [f32]) { for i in 0..=3 {} }", "a..b + 1"),
    (
        "fn k(y: &mut [f32]) { for i in (0..3).step_by(2).rev() {} }",
        "rev().step_by(s)",
    ),
    ("fn k(y: &mut [f32]) { 'o: loop { break 'o; } }", "labels"),
    (
        "fn k(y: &mut [f32]) { loop { break 'o; } }",
        "labeled `break`",
    ),
    (
        "fn k(y: &mut [f32]) { let v = loop { break 1; }; }",
        "a loop has no value",
    ),
    (
        "fn k(y: &mut [f32]) { match 1 { x if x > 0 => {} _ => {} } }",
        "`match` guards",
    ),
    ("fn k<T>(y: &mut [f32]) {}", "one type parameter bounded by"),
    (
        "fn k(y: &mut [f32]) -> f32 { 1.0 }",
        "kernels return nothing",
    ),
    (
        "fn k(y: &mut [f32]) { let b = true as f32; }",
        "casting `bool` as `f32`",
    ),
    ("fn k(y: &mut [f32]) { let b = 1 as bool; }", "as `bool`"),
    (
        "fn k(y: &mut [u32]) { y[0] = -1; }",
        "unary operator `-` to type `u32`",
    ),
    (
        "fn k(y: &mut [i32]) { y[0] = 3000000000; }",
        "out of range for `i32`",
    ),
    ("fn k(y: &mut [f32]) { break; }", "outside of a loop"),
    ("fn k(y: &mut [f32], x: &[&[f32]]) {}", "slices of slices"),
    (
        "fn k(y: &mut [f32]) { let i: u32 = 0; y[i] = 1.0; }",
        "indexed by `usize`",
    ),
    ("fn k(a: f32) { a = 1.0; }", "copy it into a local"),
    (
        "fn k(y: &mut [f32]) { y[0] = 1; }",
        "expected `f32`, found integer",
    ),
    ("fn k(y: &mut [f32]) { if 1 { } }", "must be a `bool`"),
    ("fn k(y: &mut [u32]) { y[0] = 1u32.abs(); }", "`abs`"),
    (
        "fn k(y: &mut [f32]) { let s = S::<f32> { a: 1 }; }",
        "struct literals",
    ),
    (
        "fn k(y: &mut [f32]) { let v = 1u32.sqrt(); }",
        "`f32` and `f64` only",
    ),
    ("fn k(y: &mut [f32]) { y = y; }", "whole buffer"),
    (
        "fn k(y: &mut [f32]) { let r = foo(y); }",
        "annotate the type",
    ),
    (
        "fn k(y: &mut [f32]) { let r: f32 = foo(1); }",
        "give the literal a suffix",
    ),
    ("fn k(y: &mut [f32]) { fn inner() {} }", "#[device]"),
    (
        "fn k(y: &mut [f32]) { let v = y; }",
        "a buffer cannot be used as a value",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = y[0].len() as f32; }",
        "only defined on buffer",
    ),
    (
        "fn k(y: &mut [f32]) { let x = if true { 1.0 }; }",
        "without `else` has no value",
    ),
    (
        "fn k(y: &mut [f32]) { let x = if true { 1.0 } else { 1 }; }",
        "incompatible types",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = y[0].max(1.0, 2.0); }",
        "takes 1 argument, 2 given",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = f32::NOPE; }",
        "unknown constant",
    ),
    ("fn k(y: &mut [f32]) { y[0] += 1; }", "`f32` and integer"),
    (
        "fn k(y: &mut [f32]) { let x = 1u32 << 2.0; }",
        "integer operands",
    ),
    ("fn k(y: &mut [f32]) { if let 1 = 1 {} }", "`if let`"),
    ("fn k(y: &mut [f32]) { y[0..2]; }", "slicing"),
    ("async fn k(y: &mut [f32]) {}", "`async`"),
    ("fn k(y: Vec<f32>) {}", "`Vec`"),
    ("fn k(mut a: f32) {}", "`mut` parameters"),
    (
        "fn k<'a>(y: &'a mut [f32]) {}",
        "lifetime parameters are not needed on a kernel: remove `<'a>`",
    ),
    (
        "fn k<'a, T>(y: &'a mut [f32]) {}",
        "one type parameter bounded by",
    ),
    (
        "fn k(y: &mut [u8]) {}",
        "8- and 16-bit integers are not supported",
    ),
    ("fn k(y: i16) {}", "the scalar types are `bool`, `i32`"),
    (
        "fn k(x: &[f32], y: &mut [f16]) { y[0] = x[0] as f16; }",
        "`as` cannot convert to `f16` (Rust's `as` is for primitive types, and `f16` is the `half` crate's): write `f16::from_f32(x)`",
    ),
    (
        "fn k(x: &[bf16], y: &mut [i32]) { y[0] = x[0] as i32; }",
        "`as` cannot convert a `bf16` (Rust's `as` is for primitive types, and `bf16` is the `half` crate's): write `x.to_f32() as i32`",
    ),
    (
        "fn k(y: &mut [f16]) { y[0] = y[0] * 2.0; }",
        "found `f16` and float; `f16` has no literals: write `f16::from_f32(1.0)`",
    ),
    (
        "fn k(y: &mut [f16]) { y[0] = y[0].exp(); }",
        "`.exp()` is not defined on `f16` (the `half` crate has no `f16::exp`): compute in `f32` and convert back, `f16::from_f32(x.to_f32().exp())`",
    ),
    (
        "fn k(y: &mut [bf16]) { y[0] = y[0].abs(); }",
        "`.abs()` is not defined on `bf16`",
    ),
    (
        "fn k(y: &mut [f16]) { y[0] = shuffle_xor(y[0], 1); }",
        "`shuffle_xor` moves `i32`, `u32`, `i64`, `u64`, `usize`, `f32` and `f64` values, not `f16`",
    ),
    (
        "fn k(y: &mut [f32], h: &[bf16], g: &[f16]) { y[0] = pack_f16x2(h[0], g[1]) as f32; }",
        "mismatched types: `lo` of `pack_f16x2` is an `f16` (`pack_f16x2(lo: f16, hi: f16) -> u32`)",
    ),
    (
        "fn k(y: &mut [F32x4], a: &[U32x4], b: &[U32x2]) { y[0] = mma_sync_m16n8k16_f16(a[0], a[0], y[0]); }",
        "mismatched types: `b` of `mma_sync_m16n8k16_f16` is a `U32x2` (`mma_sync_m16n8k16_f16(a: U32x4, b: U32x2, c: F32x4) -> F32x4`)",
    ),
    (
        "fn k(y: &mut [F32x4], a: &[U32x4], b: &[U32x2]) { y[0] = mma_sync_m16n8k16_bf16(a[0], b[0]); }",
        "this intrinsic takes 3 arguments, 2 given: `mma_sync_m16n8k16_bf16(a: U32x4, b: U32x2, c: F32x4) -> F32x4`",
    ),
    (
        "fn k(y: &mut [f16]) { atomic_add(&mut y[0], y[1]); }",
        "`atomic_add` works on elements of type",
    ),
    (
        "fn k(y: &mut [f16]) { y[0] = f16::from_f64(1.0); }",
        "`f16::from_f64` is not supported in kernels; an `f16` is made with `f16::from_f32(x)`",
    ),
    (
        "fn k(y: &mut [f16]) { y[0] = f16::from_f32(1.0f64); }",
        "`f16::from_f32` takes an `f32`",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = y[0].to_f32(); }",
        "`.to_f32()` converts an `f16` or a `bf16`",
    ),
    ("fn k(h: f16, y: &mut [f16]) {}", "`f16` kernel parameters are not supported yet"),
    ("fn k(y: isize) {}", "use `i32` or `i64`"),
    (
        "fn k(y: Point) {}",
        "records cannot be passed by value to a kernel yet",
    ),
    (
        "fn k(y: Option<f32>) {}",
        "records (`#[derive(Record)]` structs) too",
    ),
    (
        "fn k(y: &mut [f32]) { let p: Point = y[0]; }",
        "mismatched types: expected `Point`, found `f32`",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = y.x; }",
        "a buffer has no field `x`; index it first",
    ),
    (
        "fn k(y: &mut [f32]) { let a = 1.0f32; y[0] = a.x; }",
        "no field `x` on type `f32`",
    ),
    (
        "fn k(y: &mut [P]) { let q = y[0]; q.x = 1.0f32; }",
        "`q` is not mutable; declare it with `let mut q`",
    ),
    (
        "fn k(y: &[P]) { y[0].x = 1.0f32; }",
        "`y` is a read-only `&[P]` buffer",
    ),
    (
        "fn k(y: &mut [P]) { y[0] = P { x: 1.0f32, x: 2.0f32 }; }",
        "field `x` specified more than once",
    ),
    (
        "fn k(y: &mut [P]) { y[0] = P { ..y[1] }; }",
        "`..base` is not supported in a record literal",
    ),
    (
        "fn k(y: &mut [P]) { y[0].0 = 1.0f32; }",
        "tuple fields (`.0`) are not supported",
    ),
    (
        "fn k(y: &mut [P], z: &mut [f32]) { let a = y[0].x; let b: f64 = y[1].x; z[0] = a; }",
        "mismatched types",
    ),
    (
        "fn k(y: &mut [P], z: &mut [f32]) { z[0] = g(y[0].x); }",
        "nor a record's field types to the kernel macro",
    ),
    (
        "fn k(y: &mut [P], z: &mut [u32]) { if y[0] == y[1] { z[0] = 1u32; } }",
        "`==` cannot be applied to records (`P`); compare their fields",
    ),
    (
        "fn k(y: &mut [P], z: &mut [u32]) { let a = y[0] + y[1]; }",
        "`+` cannot be applied to records (`P`); use their fields",
    ),
    (
        "fn k(y: &mut [P]) { y[0].x = g(1.0f32); }",
        "it is used as field `P.x`, whose type the kernel macro cannot see",
    ),
    (
        "fn k(y: &mut [f32]) { let a: f32 = g(1.0f32).x; }",
        "cannot infer the record type of this value",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = SCALE; }",
        "constants and statics declared outside the kernel",
    ),
    (
        "fn k(y: &mut [f32]) { y[0] = consts::SCALE; }",
        "constants declared outside the kernel are not visible",
    ),
    (
        "fn k(y: &mut [f32]) { f(1.0f32); f(1.0f32, 2.0f32); }",
        "`f` is called with 2 arguments here but with 1 at its first call",
    ),
];

#[test]
fn errors_say_what_to_write() {
    assert_errors_say(ERROR_CASES);
}

#[test]
fn errors_are_collected_not_stopped_at_first() {
    let e = lower(syn::parse_quote! {
        fn k(y: &mut [f32]) {
            let a = "s";
            let b = |x: f32| x;
            y[0] = undefined;
        }
    })
    .unwrap_err();
    assert_eq!(e.len(), 3, "{e:?}");
}

#[test]
fn a_failed_let_adds_no_errors_where_its_names_are_used() {
    let e = lower(syn::parse_quote! {
        fn k(y: &mut [f32]) {
            let t = [1.0f32, 2.0];
            let (a, b) = (1.0f32, 2.0f32);
            let u;
            let v: Vec<f32> = 1.0;
            let w = undefined_name;
            y[0] = t + a + b + u + v + w;
            t = 2.0;
            y[1] = y[t];
            y[2] = t.sqrt() + a.len() as f32;
        }
    })
    .unwrap_err();
    // One error per failed `let`, none for the uses.
    assert_eq!(e.len(), 5, "{e:#?}");
    assert!(
        e[4].contains("cannot find value `undefined_name`"),
        "{e:#?}"
    );
}

/// A helper's result stored into a record field of unknown type: the error names the field
/// and the helper, and suggests no concrete type (it suggested `f32` whatever the field was:
/// issue 11, item 16).
#[test]
fn helper_result_into_a_record_field_names_the_field() {
    for src in [
        "fn k(p: &mut [P], y: &[u32]) { p[0].a = twice(y[0]); }",
        "fn k(p: &mut [P], y: &[u32]) { p[0].a = twice(y[0]) + 1; }",
        "fn k(p: &mut [P], y: &[u32]) { let q = P { a: twice(y[0]) }; p[0] = q; }",
    ] {
        let e = err(syn::parse_str(src).unwrap());
        assert!(
            e.contains("field `P.a`") && e.contains("`let r: T = twice(..);`"),
            "{src}: {e}"
        );
        assert!(!e.contains("f32"), "{src}: a guessed type in {e}");
    }
}
