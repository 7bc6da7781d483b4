use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let a = 1.0f32;
    let r = &a;
}

fn main() {}
