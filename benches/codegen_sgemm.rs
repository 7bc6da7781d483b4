//! Code generation of the unrolled SGEMM (`examples/programs/sgemm.rs`,
//! `sgemm::<128, 128, 8, 8, 8>`: 512 fused multiply-adds per slice) for each GPU target: the
//! kernel's IR to finished source (validation, unrolling, the target's generator), what a first
//! launch on a device pays once. `cargo bench -p spoc-benches --bench codegen_sgemm`.

use criterion::{criterion_group, criterion_main, Criterion};
use programs::sgemm::sgemm;
use spoc::Target;

fn codegen_sgemm(c: &mut Criterion) {
    let mut group = c.benchmark_group("codegen_sgemm_128");
    group.sample_size(20);
    for target in [
        Target::CudaPtx,
        Target::CudaC,
        Target::OpenCl,
        Target::Vulkan,
    ] {
        group.bench_function(format!("{target:?}"), |b| {
            b.iter(|| {
                sgemm::<128, 128, 8, 8, 8>
                    .source(target)
                    .expect("sgemm generates")
                    .expect("a GPU target has source")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, codegen_sgemm);
criterion_main!(benches);
