//! `sgemm`: see `examples/programs/sgemm.rs` (register-tiled, double-buffered, const tile sizes).
//!
//! ```text
//! cargo run --release --example sgemm [-- --device NAME] [--size N]
//! ```
//!
//! Runs on the named backend (or `SPOC_DEVICE`, or the best device present), checks the result
//! against a host reference, prints the time and throughput, and exits with status 1 on an
//! error or a mismatch.

fn main() {
    programs::example_main("sgemm");
}
