use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    let a = Vec::new();
    let b = Vec::<f32>::with_capacity(4);
    let s = String::from("x");
    let v = vec![0.0f32; 4];
}

fn main() {}
