use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    for i in 0..4 {
        for j in 0..4 {
            break 'outer;
        }
    }
}

fn main() {}
