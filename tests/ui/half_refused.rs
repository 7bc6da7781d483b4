use spoc::prelude::*;

// `as` is not Rust for the `half` crate's types, a scalar `f16` parameter is not supported yet,
// and `f16` has no `sqrt` (the `half` crate has none): each is a spanned error saying what to
// write.
#[kernel]
fn casts(x: &[f32], h: &mut [f16], y: &mut [f32]) {
    let i = global_id_x();
    h[i] = x[i] as f16;
    y[i] = h[i] as f32;
    h[i] = h[i].sqrt();
    let one: f16 = 1.0;
    let two = h[i] * 2.0;
}

#[kernel]
fn scalar_param(s: bf16, y: &mut [bf16]) {
    y[0] = s;
}

fn main() {}
