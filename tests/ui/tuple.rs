use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let pair = (1.0f32, 2.0f32);
}

fn main() {}
