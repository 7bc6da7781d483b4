//! Collected compile errors. Lowering goes on after an error so that one expansion reports every
//! problem it can; each error becomes a `compile_error!` at its span.

use proc_macro2::{Ident, Span, TokenStream};
use quote::ToTokens;
use std::fmt::Display;

/// Where a construct is in the source: its first and last token. (A single `Span` cannot cover
/// a range on stable Rust; an error built from both underlines the whole construct.)
#[derive(Clone, Copy, Debug)]
pub struct Loc {
    pub first: Span,
    pub last: Span,
}

impl Loc {
    /// The tokens of `node`.
    pub fn of<T: ToTokens + ?Sized>(node: &T) -> Loc {
        let mut tokens = node.to_token_stream().into_iter();
        let first = tokens.next().map_or_else(Span::call_site, |t| t.span());
        let last = tokens.last().map_or(first, |t| t.span());
        Loc { first, last }
    }

    /// The macro's call site.
    #[cfg(test)]
    pub fn call_site() -> Loc {
        Span::call_site().into()
    }

    fn error(self, message: impl Display) -> syn::Error {
        let (a, b) = (Ident::new("a", self.first), Ident::new("b", self.last));
        syn::Error::new_spanned(quote::quote!(#a #b), message)
    }
}

impl From<Span> for Loc {
    fn from(s: Span) -> Loc {
        Loc { first: s, last: s }
    }
}

/// Marks a construct that failed to lower; the error itself is in [`Errors`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed;

/// Result of lowering one construct.
pub type Lowered<T> = Result<T, Failed>;

/// The errors found so far.
#[derive(Default)]
pub struct Errors {
    list: Vec<syn::Error>,
    /// Appended to every message (the instance of a generic fn being lowered).
    note: Option<String>,
}

impl Errors {
    /// No errors yet; every message will end with `note`.
    pub fn with_note(note: Option<String>) -> Errors {
        Errors {
            list: Vec::new(),
            note,
        }
    }

    fn text(&self, message: impl Display) -> String {
        match &self.note {
            Some(n) => format!("{message}{n}"),
            None => message.to_string(),
        }
    }

    /// Records `message` at `span` and returns [`Failed`] for the caller to propagate.
    pub fn at(&mut self, loc: impl Into<Loc>, message: impl Display) -> Failed {
        let m = self.text(message);
        self.list.push(loc.into().error(m));
        Failed
    }

    /// Records an error spanning the tokens of `node`.
    pub fn spanned<T: quote::ToTokens + ?Sized>(
        &mut self,
        node: &T,
        message: impl Display,
    ) -> Failed {
        let m = self.text(message);
        self.list.push(syn::Error::new_spanned(node, m));
        Failed
    }

    /// The messages, in order (to tell whether two instances of a generic fn fail alike).
    /// The errors themselves, with their spans.
    pub fn syn_errors(&self) -> &[syn::Error] {
        &self.list
    }

    pub fn texts(&self) -> Vec<String> {
        self.list.iter().map(|e| e.to_string()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The messages, for tests.
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.list.iter().map(|e| e.to_string()).collect()
    }

    /// One `compile_error!` per error.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.list.iter().map(syn::Error::to_compile_error).collect()
    }
}
