use spoc::prelude::*;

#[derive(Clone, Copy, Record)]
#[repr(C)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub mass: f32,
}

#[kernel]
fn k(ps: &[Particle], out: &mut [f64]) {
    let i = global_id_x();
    if i < ps.len() {
        out[i] = ps[i].x;
    }
}

#[kernel]
fn missing(ps: &[Particle], out: &mut [f32]) {
    out[0] = ps[0].vel;
}

#[kernel]
fn lit(out: &mut [Particle]) {
    out[0] = Particle { x: 1.0, y: 2u32 };
}

#[derive(Clone, Copy, Record)]
#[repr(C)]
pub struct Other {
    pub x: f32,
}

#[device]
fn weight(o: Other) -> f32 {
    o.x
}

#[kernel]
fn wrong_record(ps: &[Particle], out: &mut [f32]) {
    out[0] = weight(ps[0]);
}

fn main() {}
