use spoc::prelude::*;

#[kernel]
fn k(x: &[u32], y: &mut [f32], h: &mut [u32]) {
    let i = global_id_x();
    let mut count = 0u32;
    let mut local = [0u32; 4];
    atomic_add(&mut x[i], 1u32); // read-only buffer
    atomic_add(&mut count, 1u32); // a local variable
    atomic_add(&mut local[0], 1u32); // a local array
    atomic_max(&mut y[i], 2.0); // float max
    atomic_add(&h[i], 1u32); // not `&mut`
    atomic_add(&mut h[i], 1.0); // wrong value type
}

fn main() {}
