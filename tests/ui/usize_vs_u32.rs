use spoc::prelude::*;

#[kernel]
fn k(y: &mut [u32]) {
    let i: u32 = global_id_x();
}

fn main() {}
