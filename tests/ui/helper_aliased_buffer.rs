use spoc::prelude::*;

#[device]
fn shift(src: &[u32], dst: &mut [u32], n: usize) {
    for i in 0..n {
        dst[i + 1] = src[i];
    }
}

#[device]
fn swap(a: &mut [u32], b: &mut [u32], i: usize) {
    let t = a[i];
    a[i] = b[i];
    b[i] = t;
}

#[device]
fn dot(a: &[u32], b: &[u32], n: usize) -> u32 {
    let mut s = 0u32;
    for i in 0..n {
        s += a[i] * b[i];
    }
    s
}

// One buffer passed to a helper's `&mut [T]` parameter and to another of its buffer parameters
// is refused, as Rust's borrow checker refuses it; twice as `&[T]` is fine.
#[kernel]
fn k(out: &mut [u32], other: &mut [u32], n: usize) {
    shift(out, out, n); // `&[u32]` and `&mut [u32]`
    swap(out, (out), 0usize); // `&mut [u32]` twice
    shift(other, out, n); // two buffers: fine
    let s: u32 = dot(out, out, n); // `&[u32]` twice: fine
    out[0] = s;
}

// The same in a helper, with the `&mut` parameter first (rustc borrow-checks the helper's host
// copy too).
#[device]
fn helper(buf: &mut [u32], n: usize) {
    rev_shift(buf, buf, n);
}

#[device]
fn rev_shift(dst: &mut [u32], src: &[u32], n: usize) {
    for i in 0..n {
        dst[i] = src[i + 1];
    }
}

// A generic helper's instance is checked the same way.
#[device]
fn scale<T: Number>(from: &[T], to: &mut [T], i: usize) {
    to[i] = from[i];
}

#[kernel]
fn g(v: &mut [f32], w: &mut [f32]) {
    scale(w, v, 0usize); // two buffers: fine
    scale(v, v, 0usize);
}

fn main() {}
