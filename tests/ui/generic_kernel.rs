use spoc::prelude::*;

#[kernel]
fn k<T>(y: &mut [f32]) {}

fn main() {}
