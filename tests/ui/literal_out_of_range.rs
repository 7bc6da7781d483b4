use spoc::prelude::*;

#[kernel]
fn k(y: &mut [i32]) {
    y[0] = 3_000_000_000;
}

fn main() {}
