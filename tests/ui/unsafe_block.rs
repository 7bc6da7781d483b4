use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    unsafe {
        y[0] = 1.0;
    }
}

fn main() {}
