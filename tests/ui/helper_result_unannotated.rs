use spoc::prelude::*;

#[device]
fn twice(v: f32) -> f32 {
    v * 2.0
}

#[kernel]
fn k(y: &mut [f32]) {
    let r = twice(y[0]) as f64;
}

fn main() {}
