//! Sarek's benchmark programs (the `programs` library of `examples/`) at their small test sizes on every available
//! device: each program checks its own result against a host reference (exactly, or within its
//! stated tolerance). A custom harness prints one line per run, then per backend how many
//! programs ran, were skipped (only a typed `Error::FeatureNotSupported`, printed with its reason)
//! or failed, and the closing line `N passed, N failed, N skipped`.
//!
//! Required backends: Native and Interpreter always, and every name in `SPOC_REQUIRE_BACKENDS`
//! (e.g. `SPOC_REQUIRE_BACKENDS=native,interpreter,opencl,vulkan`); a required backend without a
//! device fails the run. Arguments that do not start with `-` keep only the programs whose name
//! contains one of them (`cargo test --test programs -- scan histogram`).

#[path = "../../tests/common/mod.rs"]
mod common;

use common::Tally;
use std::collections::BTreeMap;
use std::time::Instant;

/// The checks every program relies on must catch a difference, or every program would pass.
fn checks_catch_differences() {
    let m = programs::check_exact("v", &[1u32, 2, 3, 5], &[1u32, 2, 4, 6])
        .expect("check_exact missed a difference");
    assert_eq!((m.index, m.count), (2, 2));
    assert_eq!((m.got.as_str(), m.want.as_str()), ("3", "4"));
    assert!(programs::check_exact("v", &[0.0f32, 1.5], &[-0.0f32, 1.5]).is_none());
    assert!(programs::check_exact("v", &[1u32], &[1u32, 2]).is_some());
    // 1e-6 relative to a scale of 10: 1e-5 allowed.
    let close = |g: f32| programs::check_close("d", &[g], &[1.0], &[10.0], 1e-6, 0.0);
    assert!(close(1.0 + 8e-6).is_none());
    assert!(close(1.0 + 2e-5).is_some());
    let o = programs::Outcome::new("p", 1, "1".into(), 0.5, programs::Work::Bytes(1e9))
        .check(None)
        .check(programs::check_exact("v", &[1u32], &[2u32]))
        .check(None);
    assert!(!o.checked && o.mismatch.is_some());
    assert_eq!(o.throughput(), (2.0, "GB/s"));
}

fn main() {
    checks_catch_differences();
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let chosen: Vec<&programs::Program> = programs::PROGRAMS
        .iter()
        .filter(|p| filters.is_empty() || filters.iter().any(|f| p.name.contains(f.as_str())))
        .collect();
    let devs = common::devices();
    common::print_devices(
        &format!(
            "programs: {} programs on {} devices",
            chosen.len(),
            devs.len()
        ),
        &devs,
    );

    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    for p in &chosen {
        for dev in &devs {
            let label = format!("{} #{}", dev.framework, dev.id);
            let tally = tallies.entry(label.clone()).or_default();
            let t0 = Instant::now();
            let result = (p.run)(dev, p.test_size);
            let wall = t0.elapsed().as_secs_f64();
            match result {
                Ok(o) if o.checked => {
                    passed += 1;
                    tally.ran += 1;
                    println!("{label:<22} {:<16} ok ({}, {wall:.2} s)", p.name, o.shape);
                }
                Ok(o) => {
                    failed += 1;
                    let why = o.verdict();
                    println!("{label:<22} {:<16} FAILED: {why}", p.name);
                    tally.failed.push(format!("{}: {why}", p.name));
                }
                Err(spoc::Error::FeatureNotSupported { backend, feature }) => {
                    skipped += 1;
                    let why = format!("{backend} does not support {feature}");
                    println!("{label:<22} {:<16} skipped: {why}", p.name);
                    tally.skipped.push(format!("{}: {why}", p.name));
                }
                Err(e) => {
                    failed += 1;
                    println!("{label:<22} {:<16} FAILED: error: {e}", p.name);
                    tally.failed.push(format!("{}: error: {e}", p.name));
                }
            }
        }
    }

    println!();
    common::print_tallies("programs", &tallies, (passed, failed, skipped));
    if failed > 0 {
        std::process::exit(1);
    }
}
