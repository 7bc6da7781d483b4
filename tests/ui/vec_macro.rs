use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let v = vec![1.0f32; 4];
}

fn main() {}
