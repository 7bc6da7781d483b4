//! # spoc-difftest
//!
//! Random-kernel differential testing of spoc. A seeded generator ([`gen`]) draws well-typed
//! kernels of the kernel language ([`ast`]); the printer ([`mod@print`]) writes each as a
//! `#[kernel] fn`; the oracle ([`oracle`]) evaluates it with Rust's own operators. The harness
//! ([`harness`]) lowers the source at run time (`spoc_frontend::lower_kernel_source`) or takes
//! the kernels the build script compiled through `#[kernel]`, runs them on every device, checks
//! the Interpreter against the oracle and every other device against the Interpreter, and
//! shrinks each disagreement ([`shrink`]) to a small kernel printed as Rust source.
//!
//! `docs/TESTING.md` at the repository root says what is covered and how to run it.

#![warn(missing_docs)]

pub mod ast;
pub mod gen;
pub mod harness;
pub mod oracle;
pub mod print;
pub mod rng;
pub mod runner;
pub mod shrink;
pub mod visit;

#[cfg(test)]
mod tests;
