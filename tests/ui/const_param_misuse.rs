use spoc::prelude::*;

// A negative value of a const parameter used as a length: the message names the value.
#[kernel(instances(4, -4))]
fn negative_shared<const N: i32>(y: &mut [f32]) {
    let s = shared_array::<f32, { N as usize }>();
    y[0] = s[0];
}

#[kernel(instances(-2))]
fn negative_local<const N: i64>(y: &mut [f32]) {
    let a = [1.0f32; N];
    y[0] = a[0];
}

// A `const` item of the body: refused where it is declared, and its negative value named
// where it is used as a length.
#[kernel]
fn const_item(y: &mut [f32]) {
    const N: i32 = -4;
    let s = shared_array::<f32, N>();
    y[0] = s[0];
}

// A const parameter's name cannot be rebound.
#[kernel(instances(4))]
fn rebound_param<const N: u32>(y: &mut [f32], N: u32) {
    y[0] = 1.0;
}

#[kernel(instances(4))]
fn rebound_let<const N: u32>(y: &mut [f32]) {
    let N = 3u32;
    y[0] = 1.0;
}

#[kernel(instances(4))]
fn rebound_for<const N: u32>(y: &mut [f32]) {
    for N in 0..4u32 {
        y[0] = 1.0;
    }
}

fn main() {}
