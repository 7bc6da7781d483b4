//! Sarek's benchmark programs (`examples/programs`) at their small test sizes on every available
//! device: each program checks its own result against a host reference (exactly, or within its
//! stated tolerance). A custom harness prints one line per run, then per backend how many
//! programs ran, were skipped (only a typed `Error::FeatureNotSupported`, printed with its reason)
//! or failed, and the closing line `N passed, N failed, N skipped`.
//!
//! Required backends: Native and Interpreter always, and every name in `SPOC_REQUIRE_BACKENDS`
//! (e.g. `SPOC_REQUIRE_BACKENDS=native,interpreter,opencl,vulkan`); a required backend without a
//! device fails the run. Arguments that do not start with `-` keep only the programs whose name
//! contains one of them (`cargo test --test programs -- scan histogram`).

#[path = "../examples/programs/mod.rs"]
mod programs;

mod common;

use std::collections::BTreeMap;
use std::time::Instant;

#[derive(Default)]
struct Tally {
    ran: usize,
    skipped: Vec<String>,
    failed: Vec<String>,
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let chosen: Vec<&programs::Program> = programs::PROGRAMS
        .iter()
        .filter(|p| filters.is_empty() || filters.iter().any(|f| p.name.contains(f.as_str())))
        .collect();
    let devs = common::devices();
    println!(
        "programs: {} programs on {} devices",
        chosen.len(),
        devs.len()
    );
    for d in &devs {
        println!("  #{} {} [{}]", d.id, d.name, d.framework);
    }

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

    println!(
        "\n{:<28} {:>5} {:>8} {:>7}",
        "backend", "ran", "skipped", "failed"
    );
    for (label, t) in &tallies {
        println!(
            "{label:<28} {:>5} {:>8} {:>7}",
            t.ran,
            t.skipped.len(),
            t.failed.len()
        );
    }
    for (label, t) in &tallies {
        for s in &t.skipped {
            println!("  skipped on {label}: {s}");
        }
        for f in &t.failed {
            println!("  FAILED on {label}: {f}");
        }
    }
    println!("programs: {passed} passed, {failed} failed, {skipped} skipped");
    if failed > 0 {
        std::process::exit(1);
    }
}
