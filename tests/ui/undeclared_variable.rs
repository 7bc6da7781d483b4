use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    y[0] = z;
}

fn main() {}
