use spoc::prelude::*;

#[derive(Clone, Copy, Record)]
#[repr(C)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub mass: f32,
}

#[kernel]
fn k(ps: &[Particle], out: &mut [f32]) {
    let i = global_id_x();
    if i < ps.len() {
        out[i] = ps[i].vel;
    }
}

fn main() {}
