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

#[kernel]
fn wrapping_bound(y: &mut [u32]) {
    // `0u32 - 1` wraps: the bound is not folded, so the loop is refused rather than unrolled
    // to a count that differs from the loop's.
    for k in unroll(0u32..((0u32 - 1) >> 30)) {
        y[k as usize] = 1;
    }
}

#[kernel]
fn truncating_cast(y: &mut [u32]) {
    for k in unroll(0u32..(4294967300u64 as u32)) {
        y[k as usize] = 1;
    }
}

#[kernel]
fn nest_too_deep(y: &mut [f32]) {
    // 32 x 32 x 8 = 8192 copies of the innermost body: past the cap of 4096.
    for i in unroll(0..32) {
        for j in unroll(0..32) {
            for k in unroll(0..8) {
                y[i * 256 + j * 8 + k] = 1.0;
            }
        }
    }
}

fn main() {}
