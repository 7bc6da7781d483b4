use spoc::prelude::*;

// Shared memory belongs to a block: only a kernel declares it.
#[device]
fn tile_sum(v: f32) -> f32 {
    let tile = shared_array::<f32, 32>();
    tile[0] = v;
    tile[0]
}

#[kernel]
fn k(y: &mut [f32]) {
    let t = shared_array::<f32, 64>();
    let d = dynamic_shared::<f32>();
    let e = dynamic_shared::<u32>();
    t[0][1] = 1.0;
    y[0] = t[0] + d[0];
}

fn main() {}
