use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    for i in (0..y.len()).step_by(2).rev() {
        y[i] = 0.0;
    }
}

fn main() {}
