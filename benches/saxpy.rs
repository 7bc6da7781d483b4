//! saxpy at 16 M elements: the Native backend against a hand-written rayon loop (same group), and
//! the Interpreter's throughput in work-items per second.
//!
//! `cargo bench --bench saxpy` (figures in docs/BENCHMARKS.md).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use programs::kernels::saxpy;
use rayon::prelude::*;
use spoc::prelude::*;

// The rayon loop is written as BENCHMARKS.md quotes it.
#[allow(clippy::assign_op_pattern)]
fn native_vs_rayon(c: &mut Criterion) {
    let n = 16usize << 20;
    let x_host: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let mut group = c.benchmark_group("saxpy_16M");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(20);

    let mut y_host = vec![1.0f32; n];
    group.bench_function("rayon_loop", |b| {
        b.iter(|| {
            y_host
                .par_iter_mut()
                .zip(x_host.par_iter())
                .for_each(|(y, &x)| *y = 2.0 * x + *y);
        })
    });

    let dev = spoc::init_device(Some("Native")).expect("the Native backend is always present");
    let x = dev.upload(&x_host).unwrap();
    let mut y = dev.upload(&vec![1.0f32; n]).unwrap();
    let block = 256u32;
    let grid = (n as u32).div_ceil(block);
    group.bench_function("spoc_native", |b| {
        b.iter(|| {
            saxpy
                .launch(&dev, dims1d(grid), dims1d(block), (2.0, &x, &mut y))
                .unwrap()
        })
    });
    group.finish();
}

fn interpreter(c: &mut Criterion) {
    let dev = spoc::init_device(Some("Interpreter")).expect("the Interpreter is always present");
    let mut group = c.benchmark_group("interpreter_saxpy");
    group.sample_size(10);
    for n in [1usize << 16, 1 << 20] {
        let x = dev.upload(&vec![1.5f32; n]).unwrap();
        let mut y = dev.upload(&vec![1.0f32; n]).unwrap();
        let block = 256u32;
        let grid = (n as u32).div_ceil(block);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                saxpy
                    .launch(&dev, dims1d(grid), dims1d(block), (2.0, &x, &mut y))
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, native_vs_rayon, interpreter);
criterion_main!(benches);
