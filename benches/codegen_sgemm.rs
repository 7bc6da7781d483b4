//! Code generation of the unrolled SGEMMs of `examples/programs/sgemm.rs` for each GPU target:
//! `sgemm::<128, 128, 8, 8, 8>` (512 fused multiply-adds per slice) and the instance the
//! `sgemm` program launches where 48 KiB of shared memory fit, `sgemm_v4::<128, 256, 16, 8, 16>`
//! (2048 per slice of 16). The kernel's IR to finished source (validation, unrolling, the
//! target's generator): what a first launch on a device pays once.
//! `cargo bench -p spoc-benches --bench codegen_sgemm`.

use criterion::{criterion_group, criterion_main, Criterion};
use programs::sgemm::{sgemm, sgemm_v4};
use spoc::Target;

const TARGETS: [Target; 4] = [
    Target::CudaPtx,
    Target::CudaC,
    Target::OpenCl,
    Target::Vulkan,
];

fn codegen_sgemm(c: &mut Criterion) {
    let mut group = c.benchmark_group("codegen_sgemm_128");
    group.sample_size(20);
    for target in TARGETS {
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
    let mut group = c.benchmark_group("codegen_sgemm_v4_128x256x16");
    group.sample_size(10);
    for target in TARGETS {
        group.bench_function(format!("{target:?}"), |b| {
            b.iter(|| {
                sgemm_v4::<128, 256, 16, 8, 16>
                    .source(target)
                    .expect("sgemm_v4 generates")
                    .expect("a GPU target has source")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, codegen_sgemm);
criterion_main!(benches);
