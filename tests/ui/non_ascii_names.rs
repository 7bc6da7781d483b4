use spoc::prelude::*;

// Names reach the generated C, PTX and SPIR-V, whose identifiers are ASCII: each non-ASCII
// name is refused once, at its first use, at compile time.
#[kernel]
fn ядро_σ(y: &mut [f32]) {
    let données = 1.0f32;
    y[0] = données + données;
}

#[device]
fn räkna(x: f32) -> f32 {
    x
}

#[derive(Clone, Copy, Record)]
#[repr(C)]
pub struct Punkt {
    pub größe: f32,
}

fn main() {}
