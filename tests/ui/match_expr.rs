use spoc::prelude::*;

// `match` on integers works; guards, bindings and non-integers do not.
#[kernel]
fn k(n: i32, x: f32, y: &mut [f32]) {
    match n {
        0 => y[0] = 1.0,
        m if m > 5 => {}
        _ => {}
    }
    match n {
        v @ 1..=3 => y[1] = 2.0,
        _ => {}
    }
    match x {
        _ => {}
    }
}

fn main() {}
