use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32], y: f32) {
    y[0] = 1.0;
}

fn main() {
    let _ = k;
}
