use spoc::prelude::*;

#[kernel]
fn copy_bound<T: Copy>(y: &mut [T]) {}

#[kernel]
fn two<T: Float, U: Float>(a: T, y: &mut [U]) {}

#[device]
fn no_bound<T>(a: T) -> T {
    a
}

/// `sqrt` exists for the float instances only.
#[kernel]
fn roots<T: Number>(y: &mut [T]) {
    y[0] = y[0].sqrt();
}

#[device]
fn half<T: Float>(a: T) -> T {
    a * 0.5
}

#[kernel]
fn wrong_instance(y: &mut [i32]) {
    let h: i32 = half(y[0]);
    y[0] = h;
}

#[kernel]
fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id_x();
    y[i] = a * x[i] + y[i];
}

fn main() {
    let dev = spoc::init_device(None).unwrap();
    let x = dev.upload(&[1i32]).unwrap();
    let mut y = dev.upload(&[1i32]).unwrap();
    axpy.launch(&dev, dims1d(1), dims1d(1), (2, &x, &mut y)).unwrap();
}
