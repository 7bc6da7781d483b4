//! `gemm_bf16`: see `examples/programs/gemm.rs` (`C = A * B`, bf16 in, f32 out, on the
//! warp-level matrix multiply-accumulate; tensor cores on CUDA sm_80 and newer).
//!
//! ```text
//! cargo run --release --example gemm_bf16 [-- --device NAME] [--size N]
//! ```
//!
//! Runs on the named backend (or `SPOC_DEVICE`, or the best device present), checks the result
//! against a host reference, prints the time and throughput, and exits with status 1 on an
//! error, a mismatch, or a device that cannot run it (`FeatureNotSupported`, with its reason).

fn main() {
    programs::example_main("gemm_bf16");
}
