//! `gather_scatter`: see `examples/programs/gather_scatter.rs`.
//!
//! ```text
//! cargo run --release --example gather_scatter [-- --device NAME] [--size N]
//! ```
//!
//! Runs on the named backend (or `SPOC_DEVICE`, or the best device present), checks the result
//! against a host reference, prints the time and throughput, and exits with status 1 on an
//! error or a mismatch.

fn main() {
    programs::example_main("gather_scatter");
}
