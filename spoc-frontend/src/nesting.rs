//! Deep inputs. Everything that walks an item follows its nesting by recursion: syn's parser and
//! its derived `Clone`, `Drop` and `ToTokens`, the lowering, the resolver, the native generator,
//! and, at run time, the IR's decoder, validator, code generators and the Interpreter. A
//! 5000-term `a + a + …` or 2000 nested `if`s would overflow the compiler's stack (rustc runs a
//! proc macro on its own thread, 8 MiB), so:
//!
//! - before syn parses anything, [`check_tokens`] bounds the nesting the tokens can produce (a
//!   conservative count, see [`MAX_NESTING`]) and refuses deeper items with a spanned error;
//! - each expansion runs on a stack of its own ([`on_expansion_stack`]), big enough for the
//!   bounded recursion of syn and of the code here;
//! - the recursive entry points of this crate also grow their stack on demand ([`deep`]), so
//!   a frame larger than expected cannot overflow either;
//! - what reaches the IR stays shallow, as the run-time passes (which recurse over it) and the
//!   C compilers behind the backends need: the lowering binds deep expressions to temporaries
//!   (`Lowerer::value`), and refuses blocks nested deeper than [`MAX_BLOCK_DEPTH`].

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};

/// The most nesting units (see [`check_tokens`]) any point of an item may sit under.
pub const MAX_NESTING: usize = 4096;

/// The most blocks a statement may sit in (the function's body counts; so does each `else if`).
/// The backends recurse over nested blocks with large frames (naga's validator, behind Vulkan,
/// overflowed a 2 MiB test thread at about 50 levels in a debug build), and OpenCL C compilers
/// refuse brackets nested more than 256 deep; real kernels nest a handful of levels.
pub const MAX_BLOCK_DEPTH: u32 = 32;

/// The stack an expansion runs on: [`MAX_NESTING`] units at up to 64 KiB each (syn's type
/// parser in a debug build takes about 16 KiB a level). Reserved, not committed: only the
/// pages used cost memory.
const EXPANSION_STACK: usize = MAX_NESTING * 64 * 1024;

/// Below this much stack left, [`deep`] moves onto a new segment.
const RED_ZONE: usize = 256 * 1024;

/// The size of a segment [`deep`] adds.
const SEGMENT: usize = 4 << 20;

/// Runs `f`, first moving onto a new stack segment if less than [`RED_ZONE`] is left: the
/// recursive entry points of the lowering and of the generators go through it.
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Runs an expansion on a stack of its own ([`EXPANSION_STACK`]), unless the current one has that
/// much left.
pub fn on_expansion_stack<R>(f: impl FnOnce() -> R) -> R {
    match stacker::remaining_stack() {
        Some(left) if left >= EXPANSION_STACK => f(),
        _ => stacker::grow(EXPANSION_STACK, f),
    }
}

/// Keywords that open a construct syn parses by recursion (`if`, `return`, `&mut`, `impl`, …).
const NESTING_KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "dyn", "else", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "move", "mut", "ref", "return", "static", "unsafe",
    "where", "while", "yield",
];

/// One open group while scanning: the units of its current statement or list element.
struct Level {
    /// Operators, keywords and groups since the last `;` or `,` of this group: each may nest
    /// the parse (a prefix operator, a right-associative `=`) or the tree (a left-associative
    /// chain `a + b + c` is a tree as deep as it is long).
    units: usize,
    /// Open `<` since the last `;` (generic arguments nest across commas).
    angles: usize,
}

/// Refuses tokens whose parse could nest deeper than [`MAX_NESTING`] units, with an error at the
/// token where the count passes it. The count is an upper bound, computed without recursion:
/// at each token, the sum over the enclosing groups of 1 (the group) plus the operators,
/// keywords, groups and open `<` of the group's current statement (or list element) before it.
/// Syn's recursion depth and the depth of the tree it builds stay below a small multiple of it.
///
/// # Errors
/// An error at the first token past the bound.
pub fn check_tokens(tokens: &TokenStream) -> syn::Result<()> {
    let mut stack: Vec<(proc_macro2::token_stream::IntoIter, Level)> = vec![(
        tokens.clone().into_iter(),
        Level {
            units: 0,
            angles: 0,
        },
    )];
    // The units of every enclosing group but the innermost.
    let mut outer = 0usize;
    while let Some((iter, level)) = stack.last_mut() {
        let Some(tt) = iter.next() else {
            stack.pop();
            if let Some((_, parent)) = stack.last() {
                outer -= 1 + parent.units + parent.angles;
            }
            continue;
        };
        let (counts, span) = match &tt {
            TokenTree::Punct(p) => {
                match p.as_char() {
                    ';' => {
                        level.units = 0;
                        level.angles = 0;
                        continue;
                    }
                    ',' => {
                        level.units = 0;
                        continue;
                    }
                    '<' => level.angles += 1,
                    '>' => level.angles = level.angles.saturating_sub(1),
                    _ => {}
                }
                (true, p.span())
            }
            TokenTree::Ident(i) => (NESTING_KEYWORDS.contains(&i.to_string().as_str()), i.span()),
            TokenTree::Literal(_) => (false, Span::call_site()),
            TokenTree::Group(g) => (true, g.span_open()),
        };
        if counts {
            level.units += 1;
        }
        let here = outer + level.units + level.angles;
        if here > MAX_NESTING {
            return Err(too_deep(span));
        }
        if let TokenTree::Group(g) = tt {
            if g.delimiter() != Delimiter::None || !g.stream().is_empty() {
                outer = here + 1;
                stack.push((
                    g.stream().into_iter(),
                    Level {
                        units: 0,
                        angles: 0,
                    },
                ));
            }
        }
    }
    Ok(())
}

fn too_deep(span: Span) -> syn::Error {
    syn::Error::new(
        span,
        format!("this code nests too deeply for spoc (more than {MAX_NESTING} levels of operators, blocks and parentheses, counted conservatively); split it: bind parts of a long expression with `let`, move deep blocks into #[device] functions"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn check(src: &str) -> bool {
        check_tokens(&TokenStream::from_str(src).unwrap()).is_ok()
    }

    #[test]
    fn ordinary_code_passes_and_deep_code_is_refused() {
        assert!(check(
            "fn k(y: &mut [f32]) { let i = global_id_x(); if i < y.len() { y[i] = 2.0 * y[i]; } }"
        ));
        let chain = |n: usize| vec!["1.0f32"; n].join(" + ");
        assert!(check(&format!("fn k() {{ let x = {}; }}", chain(1000))));
        assert!(!check(&format!("fn k() {{ let x = {}; }}", chain(5000))));
        // Long argument lists and statement lists are wide, not deep.
        let args = vec!["-a"; 10_000].join(", ");
        assert!(check(&format!("fn k() {{ f({args}); }}")));
        let stmts = "x += 1;".repeat(10_000);
        assert!(check(&format!("fn k() {{ {stmts} }}")));
        let parens =
            |n: usize| format!("fn k() {{ let x = {}1{}; }}", "(".repeat(n), ")".repeat(n));
        assert!(check(&parens(1000)));
        assert!(!check(&parens(5000)));
        // Generic arguments nest across their commas.
        let angles = format!(
            "fn k() {{ let x: {}f32{} = 1; }}",
            "A<u8, ".repeat(5000),
            ">".repeat(5000)
        );
        assert!(!check(&angles));
    }
}
