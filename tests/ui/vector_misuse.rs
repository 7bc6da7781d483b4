use spoc::prelude::*;

#[kernel]
fn wrong_arity(y: &mut [F32x4]) {
    y[0] = F32x4::new(1.0, 2.0);
}

#[kernel]
fn no_such_lane(x: &[U32x2], y: &mut [u32]) {
    y[0] = x[0].z;
}

#[kernel]
fn lane_type(y: &mut [I32x4]) {
    y[0] = I32x4::splat(1.5);
}

#[kernel]
fn other_constructor(y: &mut [F32x2]) {
    y[0] = F32x2::zero();
}

#[kernel]
fn compared(x: &[F32x4], y: &mut [u32]) {
    if x[0] < x[1] {
        y[0] = 1;
    }
}

#[kernel]
fn plus_a_scalar(x: &[F32x4], y: &mut [F32x4]) {
    y[0] = x[0] + 1.0;
}

#[kernel]
fn two_vector_types(x: &[F32x4], u: &[U32x4], y: &mut [F32x4]) {
    y[0] = x[0] * u[0];
}

fn main() {}
