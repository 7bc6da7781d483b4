use spoc::prelude::*;

// Const parameters without the list of values the kernel is compiled for.
#[kernel]
fn unlisted<const N: usize>(y: &mut [f32]) {
    y[0] = N as f32;
}

// A value that does not fit the parameter's type.
#[kernel(instances(8, -1))]
fn negative<const N: u32>(y: &mut [f32]) {
    y[0] = N as f32;
}

// A run-time parameter where a compile-time length is needed.
#[kernel(instances(4))]
fn run_time_length<const N: usize>(n: usize, y: &mut [f32]) {
    let a = [0.0f32; n];
    y[0] = a[0] + N as f32;
}

#[kernel(instances(4, 8))]
fn listed<const N: usize>(y: &mut [f32]) {
    let a = [1.0f32; N];
    y[0] = a[N - 1];
}

// The name is also part of a path: replacing it everywhere does not give Rust.
#[kernel(instances(4))]
fn name_in_a_path<const E: usize>(y: &mut [f32]) {
    let i = global_id_x();
    if i < E {
        y[i] = std::f32::consts::E;
    }
}

fn main() {
    let dev = spoc::init_device(None).unwrap();
    let mut y = dev.alloc::<f32>(1).unwrap();
    // Only N = 4 and N = 8 are compiled.
    listed::<16>.launch(&dev, dims1d(1), dims1d(1), (&mut y,)).unwrap();
}
