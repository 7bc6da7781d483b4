//! Code-generation time per kernel and target (criterion): saxpy and the largest kernel of the
//! C-family test corpus (by serialized IR size), for every source-generating target.
//!
//! `cargo bench -p spoc-codegen --bench codegen -- --noplot` (figures in docs/BENCHMARKS.md).
//! Target: under 50 µs for saxpy on every target. A target that cannot express a kernel (e.g.
//! GLSL without 64-bit integers) is reported and skipped.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use spoc_codegen::{generate_source_with, Capabilities, Options, Target};

#[path = "../tests/support/mod.rs"]
mod support;

fn caps(target: Target) -> Capabilities {
    let mut c = Capabilities::for_target(target);
    c.int64_atomics = true;
    c.subgroups = true;
    c.float_atomic_add = true;
    c.compute_capability = Some((9, 0));
    c
}

fn codegen(c: &mut Criterion) {
    let corpus = support::corpus();
    let saxpy = corpus
        .iter()
        .find(|(n, _)| *n == "saxpy")
        .expect("saxpy in the corpus");
    let largest = corpus
        .iter()
        .max_by_key(|(_, k)| k.to_bytes().len())
        .expect("a non-empty corpus");
    for (name, kernel) in [saxpy, largest] {
        let mut group = c.benchmark_group(format!("codegen_{name}"));
        group.sample_size(30);
        // The targets that generate source (Native and Interpreter have none).
        let sourced = |t: &Target| !matches!(t, Target::Native | Target::Interpreter);
        for target in Target::ALL.into_iter().filter(sourced) {
            let caps = caps(target);
            let opts = Options {
                block: Some([256, 1, 1]),
                soa_params: &[],
                caps,
                checked: false,
            };
            if let Err(e) = generate_source_with(target, kernel, &opts) {
                println!("skipped: {name} on {target:?}: {e}");
                continue;
            }
            group.bench_with_input(
                BenchmarkId::from_parameter(format!("{target:?}")),
                &opts,
                |b, opts| b.iter(|| generate_source_with(target, kernel, opts).unwrap()),
            );
        }
        group.finish();
    }
}

criterion_group!(benches, codegen);
criterion_main!(benches);
