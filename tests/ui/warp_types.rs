use spoc::prelude::*;

#[kernel]
fn k(x: &[f32], m: &mut [u32]) {
    let i = global_id_x();
    let lane: u32 = 3;
    let a = shuffle(x[i], lane); // lanes are `usize`
    let b = shuffle_xor(x[i] > 0.0, 1); // numbers only
    m[i] = ballot(x[i]); // a `bool` predicate
    let c = lane_id(1);
    let s = sync_warp();
}

fn main() {}
