use spoc::prelude::*;

#[kernel]
fn k(x: &mut [u8], y: i16) {}

fn main() {}
