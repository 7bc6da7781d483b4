use spoc::prelude::*;

// Each unsupported `let` is one error; using the names it declared later adds none.
#[kernel]
fn k(x: &mut [f32]) {
    let i = global_id_x();
    let t = [1.0f32, 2.0];
    let (a, b) = (1.0f32, 2.0f32);
    let u;
    let v: Vec<f32> = x;
    x[i] = t + a + b + u + v[0];
}

fn main() {}
