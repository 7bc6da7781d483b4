use spoc::prelude::*;

#[kernel]
fn k(a: f32, b: f64, y: &mut [f32]) {
    y[0] = a + b;
}

fn main() {}
