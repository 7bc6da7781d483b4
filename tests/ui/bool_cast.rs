use spoc::prelude::*;

#[kernel]
fn k(y: &mut [u32]) {
    let b = y[0] as bool;
}

fn main() {}
