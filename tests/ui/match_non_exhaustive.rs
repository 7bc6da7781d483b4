use spoc::prelude::*;

// As in Rust, a `match` covers every value of its type, and its ranges are not empty.
#[kernel]
fn k(n: i32, y: &mut [f32]) {
    let v = match n as u32 {
        0 => 1.0f32,
        1..=9 => 2.0,
    };
    match n {
        i32::MIN..=-1 => {}
        1.. => {}
    }
    match n {
        5..=3 => {}
        _ => {}
    }
    y[0] = v;
}

fn main() {}
