//! The validator: checks that a kernel is well-formed and well-typed before code generation or
//! interpretation.
//!
//! [`validate`] returns the first fault it finds as [`IrError::Invalid`] (a call aliasing a
//! buffer, checked last, as [`IrError::AliasedArgument`]); the message names the offending node
//! as printed text and, when the statement has a [`crate::SrcLoc`], starts with `line N:`. The
//! rules, which every code generator and the Interpreter may rely on:
//!
//! **Declarations.**
//! - The kernel and every helper have a valid identifier as name; helper names are unique; record
//!   and variant names are unique (one namespace), as are the fields of a record and the cases of a
//!   variant; no record contains itself (directly or through other records).
//! - Record fields and variant payloads are scalars, records or vectors.
//! - Parameter names are unique identifiers; each [`crate::Param::var`] is a variable of the owner's
//!   table, of kind `Param`, with the parameter's name and type.
//! - Kernel parameters are scalars, vectors, records, or buffers (`global` arrays with no length) of
//!   scalars, records or vectors. Helper parameters may be any non-unit type; a helper returns
//!   `()`, a scalar, a record, a variant or a vector.
//! - Each `Shared` variable is declared by exactly one [`crate::SharedDecl`], whose element type and
//!   length match the variable's `shared` array type; at most one shared array is sized at launch.
//!   Helpers have no shared variables.
//! - Local variables (`let`, `for`, match bindings) are never `()` and hold only `local` arrays,
//!   which have a length; array lengths are never 0; vectors have 2–4 lanes of a non-`bool` scalar.
//!
//! **Scopes.** Parameters (and the kernel's shared arrays) are visible everywhere. A local is
//! declared by exactly one `let`, `for` or match binding, and is visible from there to the end of
//! the enclosing block (the loop body, the match arm). Every use of a variable is in its scope.
//!
//! **Expressions.** Every `Expr::ty` is the type its node yields, by the typing rules documented on
//! [`crate::ExprKind`], [`crate::BinOp`], [`crate::Intrinsic`] and [`crate::MathFn`]; in particular
//! `f16` and `bf16` are storage-only (they may be loaded, stored, passed and cast, nothing else;
//! a cast to or from `bf16` has `f32` on its other side), a
//! `match` expression is exhaustive, a helper call passes a `global`/`shared` array of the right
//! element type (a fixed-length array may go to a parameter without length), and a read-only buffer
//! is never passed where `&mut [T]` is expected nor used as an atomic's target.
//!
//! **Statements.** Assignments target a mutable place of the value's type (a `let mut` local, a
//! local declared without initializer, a `mut` parameter, an element of a `&mut [T]` buffer, of a
//! shared array or of a `let mut` local array; never a `for` variable nor a whole buffer or shared
//! array). Conditions are `bool`; `for` variables are integer locals, with `start`/`end` of that
//! type and a `u32` step; `break`/`continue` are inside a loop; kernels `return;`, helpers return
//! their type and a non-unit helper cannot reach the end of its body; `sync_threads()` is not
//! allowed in helpers (yet).
//!
//! **Calls.** Every called helper exists in [`crate::Kernel::functions`], with matching arity and
//! argument types, and helpers do not call each other recursively. No call passes one buffer
//! (or shared array) to two parameters of the helper when the helper may write through either
//! (a `&mut [T]` parameter, a shared array): two `&[T]` parameters may share a buffer, as in
//! Rust. This one is reported as [`IrError::AliasedArgument`].

mod alias;
mod decls;
mod expr;
mod graph;
mod stmt;

use crate::{AliasedCall, IrError, Kernel};

/// Checks that `kernel` is well-formed and well-typed (the rules are listed in the
/// [module documentation](self)).
///
/// # Errors
/// [`IrError::Invalid`] for the first fault found: `function` names the helper it is in, if any,
/// and `message` names the offending node (and its source line when known); once everything
/// else is valid, [`IrError::AliasedArgument`] for the first call that passes one buffer to two
/// parameters of a helper that writes through one of them.
pub fn validate(kernel: &Kernel) -> Result<(), IrError> {
    let invalid = |function: Option<&str>, message: String| IrError::Invalid {
        kernel: kernel.name.clone(),
        function: function.map(str::to_owned),
        message: articles(message),
    };
    decls::check_kernel_decls(kernel).map_err(|m| invalid(None, m))?;
    for f in &kernel.functions {
        decls::check_function_decls(kernel, f).map_err(|m| invalid(Some(&f.name), m))?;
    }
    stmt::check_kernel_body(kernel).map_err(|m| invalid(None, m))?;
    for f in &kernel.functions {
        stmt::check_function_body(kernel, f).map_err(|m| invalid(Some(&f.name), m))?;
    }
    graph::check_no_recursion(kernel).map_err(|(f, m)| invalid(Some(&f), m))?;
    let bodies = std::iter::once((None, &kernel.vars[..], &kernel.body)).chain(
        kernel
            .functions
            .iter()
            .map(|f| (Some(&f.name), &f.vars[..], &f.body)),
    );
    for (function, vars, body) in bodies {
        if let Some(a) = alias::check_calls(kernel, vars, body) {
            return Err(IrError::AliasedArgument(Box::new(AliasedCall {
                kernel: kernel.name.clone(),
                function: function.cloned(),
                callee: a.callee,
                buffer: a.buffer,
                written: a.written,
                other: a.other,
                line: a.line,
            })));
        }
    }
    Ok(())
}

/// Messages say "a `{type}`"; this fixes the article before the types that read with a vowel
/// sound (`an i32`, `an f32`).
fn articles(mut message: String) -> String {
    for t in ["i32", "i64", "f16", "f32", "f64"] {
        message = message.replace(&format!(" a `{t}"), &format!(" an `{t}"));
    }
    message
}

/// `1 argument`, `2 arguments`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A kernel that [`validate()`] accepted. Only [`ValidKernel::new`] makes one, so a function
/// taking a `&ValidKernel` (code generation, the backends) needs no validation of its own; it
/// reads as the [`Kernel`] it holds (`Deref`).
#[derive(Clone, Debug, PartialEq)]
pub struct ValidKernel(Kernel);

impl ValidKernel {
    /// Validates `kernel`.
    ///
    /// # Errors
    /// [`IrError::Invalid`] or [`IrError::AliasedArgument`], as [`validate()`] reports them.
    pub fn new(kernel: Kernel) -> Result<ValidKernel, IrError> {
        validate(&kernel)?;
        Ok(ValidKernel(kernel))
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.0
    }

    /// The kernel, given back (to be changed, and validated again).
    pub fn into_kernel(self) -> Kernel {
        self.0
    }
}

impl std::ops::Deref for ValidKernel {
    type Target = Kernel;
    fn deref(&self) -> &Kernel {
        &self.0
    }
}

impl AsRef<Kernel> for ValidKernel {
    fn as_ref(&self) -> &Kernel {
        &self.0
    }
}

impl TryFrom<Kernel> for ValidKernel {
    type Error = IrError;
    fn try_from(kernel: Kernel) -> Result<ValidKernel, IrError> {
        ValidKernel::new(kernel)
    }
}

/// What code generation accepts: a [`ValidKernel`], used as it is, or a [`Kernel`], validated
/// first (each time it is passed).
pub trait AsValid {
    /// The kernel, once known to be valid.
    ///
    /// # Errors
    /// [`IrError::Invalid`] or [`IrError::AliasedArgument`] for a [`Kernel`] that does not
    /// validate; never for a [`ValidKernel`].
    fn as_valid(&self) -> Result<&Kernel, IrError>;
}

impl AsValid for ValidKernel {
    fn as_valid(&self) -> Result<&Kernel, IrError> {
        Ok(&self.0)
    }
}

impl AsValid for Kernel {
    fn as_valid(&self) -> Result<&Kernel, IrError> {
        validate(self)?;
        Ok(self)
    }
}

impl<T: AsValid + ?Sized> AsValid for &T {
    fn as_valid(&self) -> Result<&Kernel, IrError> {
        (**self).as_valid()
    }
}
