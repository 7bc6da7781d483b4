use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    for i in 0..=9 {
        y[i] = 0.0;
    }
}

fn main() {}
