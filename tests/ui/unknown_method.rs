use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let i = global_id_x();
    y[i] = y[i].frobnicate();
}

fn main() {}
