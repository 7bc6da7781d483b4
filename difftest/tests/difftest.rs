//! Random-kernel differential testing (`docs/TESTING.md`): the compiled set (written by
//! `build.rs`, lowered by `#[kernel]`) and `SPOC_DIFFTEST_KERNELS` run-time-lowered kernels on
//! every device; the Interpreter against a Rust-semantics oracle, every other device against the
//! Interpreter. Exits non-zero on any disagreement. Settings: `spoc_difftest::runner::Settings`.

// Generated code: whatever rustc or clippy would say about random kernels is noise (the
// `#[device]` helpers stay Rust functions, so rustc also const-checks their literal arithmetic,
// which wraps in kernels).
#[allow(
    warnings,
    arithmetic_overflow,
    unconditional_panic,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
mod compiled {
    use spoc::prelude::*;
    use spoc_difftest::runner::{Compiled, CompiledSet};
    include!(concat!(env!("OUT_DIR"), "/compiled.rs"));
}

fn main() {
    let settings = spoc_difftest::runner::Settings::from_env();
    if !spoc_difftest::runner::run(settings, Some(compiled::SET)) {
        std::process::exit(1);
    }
}
