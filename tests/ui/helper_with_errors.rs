use spoc::prelude::*;

// A helper with an error in its body: the error is reported there, and calls of the helper
// add no errors of their own.
#[device]
fn broken(v: f32) -> f32 {
    let s = "text";
    v
}

#[kernel]
fn k(y: &mut [f32]) {
    let i = global_id_x();
    let v: f32 = broken(y[i]);
    y[i] = v;
}

fn main() {}
