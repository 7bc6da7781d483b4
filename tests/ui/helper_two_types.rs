use spoc::prelude::*;

fn plain(v: f32) -> f32 {
    v + 1.0
}

#[device]
fn half<T: Float>(a: T) -> T {
    a * 0.5
}

#[device]
fn scale(v: f32) -> f32 {
    v * 2.0
}

// A generic helper is instantiated once per type it is called at (`half_f32`, `half_f64`
// here); a call at a type the bound has no instance for is refused at that call.
#[kernel]
fn generic_at_three_types(x: &mut [f32], y: &mut [f64], n: &mut [i32]) {
    let a: f32 = half(x[0]);
    let b: f64 = half(y[0]);
    let c: i32 = half(n[0]);
    x[0] = a;
    y[0] = b;
    n[0] = c;
}

// A plain fn called at two types is reported once.
#[kernel]
fn plain_at_two_types(x: &mut [f32], n: &mut [i32]) {
    let a: f32 = plain(x[0]);
    let c: i32 = plain(n[0]);
    x[0] = a;
    n[0] = c;
}

// A plain #[device] fn called at another type is refused at that call only.
#[kernel]
fn device_at_two_types(x: &mut [f32], n: &mut [i32]) {
    let a: f32 = scale(x[0]);
    let c: i32 = scale(n[0]);
    x[0] = a;
    n[0] = c;
}

fn main() {}
