use spoc::prelude::*;

struct S;

// A kernel must be a free function: rustc rejects the kernel handle (a struct) in an `impl`.
impl S {
    #[kernel]
    fn k(y: &mut [f32]) {
        y[0] = 1.0;
    }
}

fn main() {}
