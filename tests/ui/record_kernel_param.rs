use spoc::prelude::*;

#[derive(Clone, Copy, Record)]
#[repr(C)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
}

#[kernel]
fn k(p: Particle, out: &mut [f32]) {
    out[0] = p.x;
}

/// Not a record.
#[derive(Clone, Copy)]
pub struct Plain {
    pub x: f32,
}

#[kernel]
fn plain(ps: &[Plain], out: &mut [f32]) {
    out[0] = ps[0].x;
}

mod geom {
    use spoc::prelude::*;

    #[derive(Clone, Copy, Record)]
    #[repr(C)]
    pub struct Point {
        pub x: f32,
    }
}

use geom::Point as P;

#[kernel]
fn aliased(ps: &[P], out: &mut [f32]) {
    out[0] = ps[0].x;
}

fn main() {}
