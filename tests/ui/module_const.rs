use spoc::prelude::*;

const SCALE: f32 = 2.0;

// Constants declared outside the kernel are not visible to it.
#[kernel]
fn k(y: &mut [f32]) {
    let i = global_id_x();
    y[i] = y[i] * SCALE;
}

fn main() {}
