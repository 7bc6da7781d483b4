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

/// Like [`expand_on`], but `None` if `src` does not lex (rustc would not call the macro).
fn try_expand_on(stack: usize, what: &'static str, src: &str) -> Option<Outcome> {
    TokenStream::from_str(src).ok()?;
    Some(expand_on(stack, what, src.to_string()))
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

/// Expands `src` with `what`'s expansion on a small stack: it must succeed when `refusal` is
/// `None`, and otherwise fail saying it, spanned on line 2.
fn expands_on_a_small_stack(what: &'static str, src: String, refusal: Option<&str>) {
    let out = expand_on(SMALL_STACK, what, src);
    match refusal {
        None => assert!(matches!(out, Outcome::Ok), "{out:?}"),
        Some(needle) => assert_spanned_error(out, needle, 2),
    }
}

const TOO_DEEP: Option<&str> = Some("nests too deeply");

#[test]
fn long_sums_expand_or_are_refused_with_a_span_on_a_small_stack() {
    let cases = [
        ("kernel", 600, None),
        ("kernel", 2000, None),
        ("kernel", 5000, TOO_DEEP),
        ("device", 5000, TOO_DEEP),
    ];
    for (what, terms, refusal) in cases {
        expands_on_a_small_stack(what, chain(terms), refusal);
    }
}

#[test]
fn deep_ifs_are_refused_with_a_span_on_a_small_stack() {
    let over_32 = Some("blocks are nested more than 32 deep");
    for (depth, refusal) in [(31, None), (32, over_32), (400, over_32), (2000, TOO_DEEP)] {
        expands_on_a_small_stack("kernel", nested_ifs(depth), refusal);
    }
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

/// The corpus: (name, source of one item).
fn corpus() -> Vec<(String, String)> {
    let text = include_str!("hostile/corpus.txt");
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("//# ") {
            entries.push((name.to_string(), String::new()));
        } else if let Some((_, src)) = entries.last_mut() {
            src.push_str(line);
            src.push('\n');
        }
    }
    entries
        .into_iter()
        .map(|(name, body)| match name.strip_prefix("item:") {
            Some(n) => (n.to_string(), body),
            None => (
                name,
                format!("fn k(y: &mut [f32], x: &[f32], n: u32, a: f32) {{\n{body}}}\n"),
            ),
        })
        .collect()
}

#[test]
fn every_corpus_input_expands_or_gives_spanned_errors() {
    let entries = corpus();
    assert!(entries.len() >= 200, "{} inputs", entries.len());
    let (mut ok, mut refused, mut unlexed) = (0, 0, 0);
    for (name, src) in &entries {
        let mut kinds = Vec::new();
        for what in ["kernel", "device"] {
            match try_expand_on(SMALL_STACK, what, src) {
                Some(Outcome::Ok) => kinds.push("ok"),
                Some(Outcome::Errors(_)) => kinds.push("errors"),
                None => kinds.push("unlexed"),
            }
        }
        let lowered = std::panic::catch_unwind(|| spoc_frontend::lower_kernel_source(src))
            .unwrap_or_else(|_| panic!("lower_kernel_source panicked on `{name}`"));
        match lowered {
            Ok(k) => spoc_ir::validate(&k)
                .unwrap_or_else(|e| panic!("`{name}` lowered to invalid IR: {e}")),
            Err(errs) => {
                assert!(!errs.is_empty(), "`{name}`: an error list without errors");
                for e in &errs {
                    assert!(e.line > 0, "`{name}`: an error without a position: {e}");
                }
            }
        }
        if std::env::var_os("SPOC_HOSTILE_LIST").is_some() {
            eprintln!("{name}: {kinds:?}");
        }
        match kinds[0] {
            "ok" => ok += 1,
            "errors" => refused += 1,
            _ => unlexed += 1,
        }
    }
    eprintln!(
        "{} inputs: {ok} expanded, {refused} refused with spanned errors, {unlexed} do not lex",
        entries.len()
    );
    assert!(
        ok >= 5 && refused >= 150,
        "{ok} expanded, {refused} refused"
    );
}

mod random {
    //! Random token trees and random expression trees through the front end.

    use proptest::prelude::*;
    use proptest::test_runner::Config;

    /// A token tree, as source text: words of the kernel language and outside it, operators,
    /// literals, and delimited groups of those.
    fn token_tree() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![prop::sample::select(vec![
            "y",
            "x",
            "n",
            "a",
            "i",
            "k",
            "r#type",
            "_",
            "global_id_x",
            "sync_threads",
            "atomic_add",
            "shared_array",
            "f32",
            "u32",
            "usize",
            "Vec",
            "P",
            "self",
            "crate",
            "if",
            "else",
            "let",
            "mut",
            "for",
            "in",
            "while",
            "loop",
            "match",
            "return",
            "break",
            "continue",
            "as",
            "fn",
            "struct",
            "unsafe",
            "async",
            "move",
            "+",
            "-",
            "*",
            "/",
            "%",
            "=",
            "==",
            "!=",
            "<",
            ">",
            "<=",
            "!",
            "&",
            "&&",
            "|",
            "||",
            "^",
            "<<",
            ">>",
            "+=",
            ";",
            ",",
            ".",
            "..",
            "..=",
            "::",
            ":",
            "=>",
            "?",
            "#",
            "'a",
            "$",
            "@",
            "1",
            "0",
            "1.0",
            "1u32",
            "0.5f32",
            "1e40",
            "-1",
            "'c'",
            "\"s\"",
            "true",
            "4294967296",
            "0xFFFF_FFFF_FFFF_FFFF",
        ])
        .prop_map(str::to_string),];
        leaf.prop_recursive(6, 64, 8, |inner| {
            (
                prop::sample::select(vec![("(", ")"), ("[", "]"), ("{", "}")]),
                prop::collection::vec(inner, 0..8),
            )
                .prop_map(|((open, close), items)| format!("{open} {} {close}", items.join(" ")))
        })
    }

    /// An expression of the kernel language (or close to it): operators, literals, variables,
    /// casts, indexing, method calls, `if` and block values, helper calls.
    fn expr() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec![
            "a",
            "n",
            "x[0]",
            "y[i]",
            "1.0",
            "2",
            "0.5f32",
            "7u32",
            "i",
            "true",
            "f32::MAX",
            "global_id_x()",
            "c",
            "x.len()",
        ])
        .prop_map(str::to_string);
        leaf.prop_recursive(8, 128, 4, |e| {
            prop_oneof![
                (
                    e.clone(),
                    prop::sample::select(vec![
                        "+", "-", "*", "/", "%", "<", "==", "&&", "||", "&", "|", "<<"
                    ]),
                    e.clone()
                )
                    .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
                e.clone().prop_map(|v| format!("-{v}")),
                e.clone().prop_map(|v| format!("!{v}")),
                (
                    e.clone(),
                    prop::sample::select(vec!["f32", "u32", "usize", "i64", "bool"])
                )
                    .prop_map(|(v, t)| format!("({v} as {t})")),
                e.clone().prop_map(|v| format!("x[{v}]")),
                (
                    e.clone(),
                    prop::sample::select(vec!["sqrt", "abs", "max", "min", "powi", "len"])
                )
                    .prop_map(|(v, m)| format!("{v}.{m}()")),
                (e.clone(), e.clone()).prop_map(|(v, w)| format!("{v}.max({w})")),
                (e.clone(), e.clone(), e.clone())
                    .prop_map(|(c, t, f)| format!("if {c} {{ {t} }} else {{ {f} }}")),
                (e.clone(), e.clone()).prop_map(|(v, w)| format!("{{ c += 1; let t = {v}; {w} }}")),
                (e.clone(), e.clone()).prop_map(|(v, w)| format!(
                    "match n % 3 {{ 0 => {v}, _ => {{ c *= 2; {w} }} }}"
                )),
                (e.clone(), e.clone()).prop_map(|(v, w)| format!("helper({v}, {w})")),
            ]
        })
    }

    fn check(src: &str) {
        let item: proc_macro2::TokenStream = match src.parse() {
            Ok(t) => t,
            Err(_) => return,
        };
        for out in [
            spoc_frontend::expand_kernel(Default::default(), item.clone()),
            spoc_frontend::expand_device(Default::default(), item),
        ] {
            for p in super::problems(&out) {
                assert!(
                    p.line > 0,
                    "an error without a position ({}) on: {src}",
                    p.message
                );
            }
        }
        match spoc_frontend::lower_kernel_source(src) {
            Ok(k) => spoc_ir::validate(&k).unwrap_or_else(|e| panic!("invalid IR ({e}) on: {src}")),
            Err(errs) => assert!(errs.iter().all(|e| e.line > 0), "{errs:?} on: {src}"),
        }
    }

    proptest! {
        #![proptest_config(Config { cases: 300, failure_persistence: None, ..Config::default() })]

        #[test]
        fn random_token_trees_expand_or_give_spanned_errors(body in prop::collection::vec(token_tree(), 0..24)) {
            check(&format!("fn k(y: &mut [f32], x: &[f32], n: u32, a: f32) {{\n{}\n}}", body.join(" ")));
        }

        #[test]
        fn random_expressions_expand_or_give_spanned_errors(e in expr()) {
            check(&format!(
                "fn k(y: &mut [f32], x: &[f32], n: u32, a: f32) {{\n    let i = global_id_x();\n    let mut c = 0u32;\n    y[0] = ({e}) as f32;\n}}"
            ));
        }
    }
}
