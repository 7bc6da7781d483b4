//! Hostile input through the attributes' front end, in-process: deep nesting on a small stack,
//! a corpus of odd and unsupported Rust (`hostile/corpus.rs`), and random token trees and
//! expression trees (proptest). Each input must give a working expansion or spanned errors;
//! none may panic or overflow the stack.

use proc_macro2::{TokenStream, TokenTree};
use std::str::FromStr;

/// A `compile_error!` of an expansion: its message and the line it points at (from 1).
#[derive(Debug)]
struct Problem {
    message: String,
    line: usize,
}

/// Every `compile_error!` in `out`, in order.
fn problems(out: &TokenStream) -> Vec<Problem> {
    let mut found = Vec::new();
    let mut stack = vec![out.clone().into_iter().collect::<Vec<_>>()];
    while let Some(tokens) = stack.pop() {
        for (i, t) in tokens.iter().enumerate() {
            match t {
                TokenTree::Group(g) => stack.push(g.stream().into_iter().collect()),
                TokenTree::Ident(id) if id == "compile_error" => {
                    let Some(TokenTree::Group(g)) = tokens.get(i + 2) else {
                        continue;
                    };
                    let Some(TokenTree::Literal(l)) = g.stream().into_iter().next() else {
                        continue;
                    };
                    let s: syn::LitStr = syn::parse_str(&l.to_string()).expect("a string");
                    let at = id.span().start();
                    found.push(Problem {
                        message: s.value(),
                        line: at.line,
                    });
                }
                _ => {}
            }
        }
    }
    found
}

/// What expanding `src` with `expand` gave.
#[derive(Debug)]
enum Outcome {
    /// An expansion without errors.
    Ok,
    /// Errors, each spanned.
    Errors(Vec<Problem>),
}

/// Expands `src` (an item) with `#[kernel]`'s, `#[device]`'s or `#[derive(Record)]`'s
/// expansion on a thread of `stack` bytes; panics (with the input named) if the expansion
/// panics, and aborts the test process if it overflows the stack.
fn expand_on(stack: usize, what: &'static str, src: String) -> Outcome {
    let label: String = src.chars().take(200).collect();
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let item = TokenStream::from_str(&src).expect("the input lexes");
            let out = std::panic::catch_unwind(|| match what {
                "kernel" => spoc_frontend::expand_kernel(TokenStream::new(), item),
                "device" => spoc_frontend::expand_device(TokenStream::new(), item),
                _ => spoc_frontend::expand_record(item),
            });
            let out = out.unwrap_or_else(|_| panic!("the {what} expansion panicked on: {label}"));
            let ps = problems(&out);
            if ps.is_empty() {
                Outcome::Ok
            } else {
                for p in &ps {
                    assert!(
                        p.line > 0,
                        "an error without a position ({}) on: {label}",
                        p.message
                    );
                }
                Outcome::Errors(ps)
            }
        })
        .expect("a thread")
        .join()
        .expect("the expansion thread")
}

/// 1 MiB: smaller than the 8 MiB rustc gives a proc macro, so an expansion that passes here
/// does not depend on the compiler's stack size.
const SMALL_STACK: usize = 1 << 20;

fn chain(n: usize) -> String {
    let sum = vec!["1.0f32"; n].join(" + ");
    format!("fn k(y: &mut [f32]) {{\n    y[0] = {sum};\n}}")
}

fn nested_ifs(n: usize) -> String {
    let mut body = String::from("y[0] = 1.0;");
    for _ in 0..n {
        body = format!("if y.len() > 0 {{ {body} }}");
    }
    format!("fn k(y: &mut [f32]) {{\n    {body}\n}}")
}

fn assert_spanned_error(out: Outcome, needle: &str, line: usize) {
    match out {
        Outcome::Errors(ps) => {
            assert!(ps.iter().any(|p| p.message.contains(needle)), "{ps:?}");
            assert!(ps.iter().all(|p| p.line == line), "{ps:?}");
        }
        Outcome::Ok => panic!("expected an error saying `{needle}`"),
    }
}

#[test]
fn long_sums_expand_or_are_refused_with_a_span_on_a_small_stack() {
    assert!(matches!(
        expand_on(SMALL_STACK, "kernel", chain(600)),
        Outcome::Ok
    ));
    assert!(matches!(
        expand_on(SMALL_STACK, "kernel", chain(2000)),
        Outcome::Ok
    ));
    assert_spanned_error(
        expand_on(SMALL_STACK, "kernel", chain(5000)),
        "nests too deeply",
        2,
    );
    assert_spanned_error(
        expand_on(SMALL_STACK, "device", chain(5000)),
        "nests too deeply",
        2,
    );
}

#[test]
fn deep_ifs_are_refused_with_a_span_on_a_small_stack() {
    assert!(matches!(
        expand_on(SMALL_STACK, "kernel", nested_ifs(31)),
        Outcome::Ok
    ));
    assert_spanned_error(
        expand_on(SMALL_STACK, "kernel", nested_ifs(32)),
        "blocks are nested more than 32 deep",
        2,
    );
    assert_spanned_error(
        expand_on(SMALL_STACK, "kernel", nested_ifs(400)),
        "blocks are nested more than 32 deep",
        2,
    );
    assert_spanned_error(
        expand_on(SMALL_STACK, "kernel", nested_ifs(2000)),
        "nests too deeply",
        2,
    );
}

#[test]
fn deep_forms_syn_parses_by_recursion_are_refused_before_parsing() {
    let forms = [
        format!(
            "fn k(y: &mut [f32]) {{\n let x = {}1.0; }}",
            "- ".repeat(20_000)
        ),
        format!(
            "fn k(y: &mut [f32]) {{\n let x: {}f32 = 1.0; }}",
            "& ".repeat(20_000)
        ),
        format!(
            "fn k(y: &mut [f32]) {{\n let x: {}f32{} = 1.0; }}",
            "A<".repeat(20_000),
            ">".repeat(20_000)
        ),
        format!(
            "fn k(y: &mut [f32]) {{\n {} = 1; }}",
            vec!["a"; 20_000].join(" = ")
        ),
        format!(
            "fn k(y: &mut [f32]) {{\n let x = {}1{}; }}",
            "(".repeat(20_000),
            ")".repeat(20_000)
        ),
        format!(
            "fn k(y: &mut [f32]) {{\n let f = {}1; }}",
            "|| ".repeat(20_000)
        ),
        format!("fn k(y: &mut [f32]) {{\n {}; }}", "return ".repeat(20_000)),
    ];
    for src in forms {
        assert_spanned_error(expand_on(SMALL_STACK, "kernel", src), "nests too deeply", 2);
    }
}

#[test]
fn lower_kernel_source_refuses_deep_input_with_a_position() {
    let src = chain(5000);
    let errs = std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(move || spoc_frontend::lower_kernel_source(&src).unwrap_err())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].line, 2);
    assert!(errs[0].message.contains("nests too deeply"), "{}", errs[0]);
}
