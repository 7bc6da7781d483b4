use spoc::prelude::*;

#[device]
fn put(x: &mut [i32], i: usize, v: i32) {
    x[i] = v;
}

#[device]
fn g(a: i64, b: i32) -> i64 {
    a + b as i64
}

// An untyped variable and an untyped literal take their type from the call's other arguments
// (`usize`, `i64`): a wrong guess is an error at the argument, saying what to write.
#[kernel]
fn k(x: &mut [i32], y: &mut [i64]) {
    let i = global_id_x();
    let c = 3;
    put(x, i, c);
    let r: i64 = g(7, 1);
    y[i] = r;
}

fn main() {}
