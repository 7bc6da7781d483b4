//! `stencil_2d`: see `examples/programs/stencil_2d.rs`.
//!
//! ```text
//! cargo run --release --example stencil_2d [-- --device NAME] [--size N]
//! ```
//!
//! Runs on the named backend (or `SPOC_DEVICE`, or the best device present), checks the result
//! against a host reference, prints the time and throughput, and exits with status 1 on an
//! error or a mismatch.

fn main() {
    programs::example_main("stencil_2d");
}
