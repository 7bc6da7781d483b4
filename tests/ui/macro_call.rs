use spoc::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    println!("thread {}", global_id_x());
}

fn main() {}
