use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32], n: &mut [i32]) {
    y[0] = y[0].clamp(0.0, 1.0);
    n[0] = n[0].clamp(-1, 1);
}

fn main() {}
