use spoc::prelude::*;

#[device]
fn scale(out: &mut [f32], i: usize, by: f32) {
    out[i] = out[i] * by;
}

#[device]
fn twice(v: f32) -> f32 {
    v * 2.0
}

// Every call is checked against the helper's real signature, in spoc's words, at the call.
#[kernel]
fn k(x: &[f32], y: &mut [f32], n: i32) {
    let i = global_id_x();
    scale(x, i, 2.0f32); // a read-only buffer for `&mut [f32]`
    scale(y, i, n); // an `i32` for `f32`
    twice(y[i]); // the result is dropped
}

#[kernel]
fn short(y: &mut [f32]) {
    let i = global_id_x();
    scale(y, i); // one argument short
}

#[kernel]
fn inconsistent(y: &mut [f32]) {
    let i = global_id_x();
    scale(y, i, 1.0f32);
    scale(y, i); // disagrees with the call above
}

fn main() {}
