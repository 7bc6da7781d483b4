use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let x = 1.0f32;
    x = 2.0;
    y[0] = x;
}

fn main() {}
