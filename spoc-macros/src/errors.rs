//! Collected compile errors. Lowering goes on after an error so that one expansion reports every
//! problem it can; each error becomes a `compile_error!` at its span.

use proc_macro2::{Span, TokenStream};
use std::fmt::Display;

/// Marks a construct that failed to lower; the error itself is in [`Errors`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed;

/// Result of lowering one construct.
pub type Lowered<T> = Result<T, Failed>;

/// The errors found so far.
#[derive(Default)]
pub struct Errors {
    list: Vec<syn::Error>,
}

impl Errors {
    /// Records `message` at `span` and returns [`Failed`] for the caller to propagate.
    pub fn at(&mut self, span: Span, message: impl Display) -> Failed {
        self.list.push(syn::Error::new(span, message));
        Failed
    }

    /// Records an error spanning the tokens of `node`.
    pub fn spanned<T: quote::ToTokens + ?Sized>(
        &mut self,
        node: &T,
        message: impl Display,
    ) -> Failed {
        self.list.push(syn::Error::new_spanned(node, message));
        Failed
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
