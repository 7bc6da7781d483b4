use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let s = "hello";
}

fn main() {}
