use spoc::prelude::*;

#[kernel]
fn k(n: i32, y: &mut [f32]) {
    match n {
        0 => y[0] = 1.0,
        _ => {}
    }
}

fn main() {}
