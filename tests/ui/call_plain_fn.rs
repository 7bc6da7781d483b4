use spoc::prelude::*;

fn plain(v: f32) -> f32 {
    v + 1.0
}

// Only #[device] functions can be called from kernels.
#[kernel]
fn k(y: &mut [f32]) {
    let i = global_id_x();
    let v: f32 = plain(y[i]);
    y[i] = v;
}

fn main() {}
