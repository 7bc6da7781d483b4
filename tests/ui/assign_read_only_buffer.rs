use spoc::prelude::*;

#[kernel]
fn k(x: &[f32]) {
    let i = global_id_x();
    x[i] = 0.0;
}

fn main() {}
