use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let f = |v: f32| v * 2.0;
    y[0] = 1.0;
}

fn main() {}
