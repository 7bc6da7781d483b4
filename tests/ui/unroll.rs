use spoc::prelude::*;

#[kernel]
fn run_time_bound(n: usize, y: &mut [f32]) {
    // The bound is a parameter: not known when the kernel is compiled.
    for k in unroll(0..n) {
        y[k] = 1.0;
    }
}

#[kernel]
fn leaves_early(y: &mut [f32]) {
    for k in unroll(0..4) {
        if y[k] > 0.0 {
            break;
        }
        y[k] = 1.0;
    }
}

#[kernel]
fn too_long(y: &mut [f32]) {
    for k in unroll(0..1000) {
        y[k] = 1.0;
    }
}

fn main() {}
