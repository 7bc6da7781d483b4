//! Small kernels that fault on purpose (and one that does not), shared by the root tests of
//! faults and checked launches (`bounds_checks.rs`, `check_mode.rs`, `native_fast_path.rs`,
//! `runtime_typed.rs`): one definition each.
#![allow(dead_code)] // each test binary uses some of them

use spoc::prelude::*;

/// `out[i] = 2 x[i + 1]`: the last thread reads one past the end of `x`.
#[kernel]
pub fn read_past(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = x[i + 1] * 2.0;
    }
}

/// `out[i] = a[i] / b[i]`: an integer division by zero where `b[i] == 0`.
#[kernel]
pub fn divide(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = a[i] / b[i];
    }
}

/// `y[i] = 2 x[i]`: correct, to show a device still works after a fault.
#[kernel]
pub fn double(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = x[i] * 2.0;
    }
}
