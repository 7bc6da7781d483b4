//! Shared test support: the devices every kernel test runs on.
#![allow(dead_code)]

use spoc::Device;

/// The backends every kernel test must run on, on any machine (and in CI). A missing one is a
/// failure, never a skip.
pub const REQUIRED_CPU_BACKENDS: [&str; 2] = ["Native", "Interpreter"];

/// One device of each required CPU backend.
///
/// # Panics
/// If a required backend does not come up: the test must fail rather than pass on fewer backends.
pub fn devices() -> Vec<Device> {
    REQUIRED_CPU_BACKENDS
        .iter()
        .map(|name| {
            spoc::init_device(Some(name))
                .unwrap_or_else(|e| panic!("required backend {name} did not come up: {e}"))
        })
        .collect()
}

/// Blocks needed to cover `n` threads with blocks of `block`.
pub fn blocks_for(n: usize, block: u32) -> u32 {
    (n as u32).div_ceil(block).max(1)
}

/// Deterministic pseudo-random values (xorshift), so tests need no extra crates.
pub fn pseudo_random(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed.max(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect()
}
