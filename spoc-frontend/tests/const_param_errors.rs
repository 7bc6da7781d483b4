//! The errors of const parameters and array lengths, as `#[kernel]` expands them: each case is
//! one `compile_error!` with a sentence naming what is wrong (new-user findings: a negative
//! length read "write a literal or a const parameter", a rebound const parameter "plain names
//! only").

use spoc_frontend::expand_kernel;

/// The messages of the `compile_error!`s `#[kernel(attr)]` on `item` expands to.
fn errors(attr: &str, item: &str) -> Vec<String> {
    let out = expand_kernel(attr.parse().unwrap(), item.parse().unwrap());
    let mut msgs = Vec::new();
    let tokens: Vec<proc_macro2::TokenTree> = out.into_iter().collect();
    for w in tokens.windows(3) {
        if let [proc_macro2::TokenTree::Ident(i), proc_macro2::TokenTree::Punct(p), proc_macro2::TokenTree::Group(g)] =
            w
        {
            if i == "compile_error" && p.as_char() == '!' {
                let lit: syn::LitStr = syn::parse2(g.stream()).unwrap();
                msgs.push(lit.value());
            }
        }
    }
    msgs
}

/// `(attr, kernel, phrase)`: the kernel has exactly one error, and it contains `phrase`.
const ONE_ERROR: &[(&str, &str, &str)] = &[
    // Negative lengths name their value.
    (
        "instances(-4)",
        "fn k<const N: i32>(y: &mut [f32]) { let s = shared_array::<f32, N>(); }",
        "an array length must be a non-negative integer that fits `u32` (at most 4294967295); this one is -4 (in the instance `N = -4`)",
    ),
    (
        "instances(-4)",
        "fn k<const N: i32>(y: &mut [f32]) { let s = shared_array::<f32, { N }>(); }",
        "this one is -4 (in the instance `N = -4`)",
    ),
    (
        "instances((2, -4))",
        "fn k<const R: usize, const C: i64>(y: &mut [f32]) { let s = shared_array_2d::<f32, R, C>(); }",
        "this one is -4 (in the instance `R = 2, C = -4`)",
    ),
    (
        "instances(-4)",
        "fn k<const N: i64>(y: &mut [f32]) { let a = [0.0f32; N]; }",
        "non-negative integer that fits `u32` (at most 4294967295); this one is -4",
    ),
    (
        "instances(-4, 4)",
        "fn k<const N: i32>(y: &mut [f32]) { let s = shared_array::<f32, { N as usize }>(); }",
        "this one is -4 (in the instance `N = -4`)",
    ),
    (
        "",
        "fn k(y: &mut [f32]) { let a = [0.0f32; -3]; }",
        "this one is -3",
    ),
    (
        "",
        "fn k(y: &mut [f32]) { let s = shared_array::<f32, { 4 - 8 }>(); }",
        "this one is 4 - 8 = -4",
    ),
    (
        "",
        "fn k(y: &mut [f32]) { let s = shared_array::<f32, { 65536 * 65536 }>(); }",
        "this one is 4294967296",
    ),
    // A name the macro cannot see is named.
    (
        "",
        "fn k(y: &mut [f32]) { let s = shared_array::<f32, M>(); }",
        "`M` is not visible here: write the length as an integer literal",
    ),
    // A const item of the body is refused once, where it is declared, when its value fits.
    (
        "",
        "fn k(y: &mut [f32]) { const N: usize = 4; let s = shared_array::<f32, N>(); }",
        "`const` items are not supported in kernels yet: make `N` a const parameter",
    ),
    // Rebinding a const parameter's name.
    (
        "instances(4)",
        "fn k<const N: u32>(N: u32) {}",
        "`N` is the kernel's const parameter and cannot be rebound: its name stands for its value everywhere in the kernel; rename this parameter",
    ),
    (
        "instances(4)",
        "fn k<const N: u32>(y: &mut [f32]) { let N = 3; }",
        "`N` is the kernel's const parameter and cannot be rebound: its name stands for its value everywhere in the kernel; rename this `let` variable",
    ),
    (
        "instances(4)",
        "fn k<const N: u32>(y: &mut [f32]) { let mut N = 3; }",
        "`N` is the kernel's const parameter and cannot be rebound",
    ),
    (
        "instances(4)",
        "fn k<const N: u32>(y: &mut [f32]) { for N in 0..3 {} }",
        "`N` is the kernel's const parameter and cannot be rebound: its name stands for its value everywhere in the kernel; rename this `for` loop variable",
    ),
    (
        "instances((4, 5))",
        "fn k<const N: u32, const M: u32>(y: &mut [f32], z: f32, M: u32) {}",
        "`M` is the kernel's const parameter and cannot be rebound",
    ),
    // The usage hint is an attribute one can paste.
    (
        "",
        "fn k<const N: u32>(y: &mut [f32]) {}",
        "`#[kernel(instances(64, 128))]` compiles it for `N = 64` and for `N = 128`",
    ),
];

#[test]
fn each_case_is_one_error_that_says_what_is_wrong() {
    for (attr, item, phrase) in ONE_ERROR {
        let errs = errors(attr, item);
        assert_eq!(errs.len(), 1, "{item}: {errs:#?}");
        assert!(
            errs[0].contains(phrase),
            "{item}:\n{}\nwants: {phrase}",
            errs[0]
        );
    }
}

#[test]
fn a_negative_const_item_length_is_named_at_the_use_too() {
    let errs = errors(
        "",
        "fn k(y: &mut [f32]) { const N: i32 = -4; let s = shared_array::<f32, N>(); }",
    );
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(
        errs[0].contains("`const` items are not supported"),
        "{}",
        errs[0]
    );
    assert!(
        errs[1].contains("non-negative integer that fits `u32` (at most 4294967295); this one is -4 (the value of `N`)"),
        "{}",
        errs[1]
    );
    // Items that name each other do not loop.
    let errs = errors(
        "",
        "fn k(y: &mut [f32]) { const A: usize = B; const B: usize = A; let s = shared_array::<f32, A>(); }",
    );
    assert_eq!(errs.len(), 3, "{errs:#?}");
}

#[test]
fn what_stays_accepted() {
    for (attr, item) in [
        // A match arm naming the const parameter is the constant, not a binding.
        ("instances(4)", "fn k<const N: u32>(y: &mut [f32]) { match 3u32 { N => {} _ => {} } }"),
        // Negative values in expressions.
        ("instances(-4)", "fn k<const N: i32>(y: &mut [f32]) { y[0] = (N * 2) as f32; if N < -3 { y[1] = 1.0; } }"),
        // Lengths from other integer types through `as usize`.
        ("instances(4, 8)", "fn k<const N: i32>(y: &mut [f32]) { let s = shared_array::<f32, { (N * 2) as usize }>(); let a = [0.0f32; N as usize]; y[0] = a[0] + s[0]; }"),
        // The suggested attributes.
        ("instances(64, 128)", "fn k<const N: u32>(y: &mut [f32]) { let s = shared_array::<f32, N>(); y[0] = s[0]; }"),
        ("instances((64, true), (128, false))", "fn k<const A: u32, const F: bool>(y: &mut [f32]) { if F { y[0] = A as f32; } }"),
    ] {
        let errs = errors(attr, item);
        assert!(errs.is_empty(), "{item}: {errs:#?}");
    }
}
