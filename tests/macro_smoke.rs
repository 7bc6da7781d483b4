//! The whole `#[kernel]` path on the Native backend: macro expansion, launch tuple, argument
//! unpacking, the per-thread body, the embedded IR and `#[device]` helpers.

use spoc::prelude::*;

/// `y = a * x + y`.
#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[device]
fn clamp01(v: f32) -> f32 {
    if v < 0.0 {
        return 0.0;
    }
    v.min(1.0)
}

#[device]
fn sum_first(x: &[f32], n: usize) -> f32 {
    let mut s = 0.0f32;
    for j in 0..n {
        s += x[j];
    }
    s
}

#[kernel]
fn uses_helpers(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        let c: f32 = clamp01(x[i]);
        let s: f32 = sum_first(y, 2usize);
        y[i] = c + s * 0.0;
    }
}

#[kernel]
fn int_semantics(a: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i >= out.len() {
        return;
    }
    let x = a[i];
    let mut acc = x * 65_537 + (x << 31) - -x;
    let mut k = 0;
    while k < 3 {
        k += 1;
        if k == 2 {
            continue;
        }
        acc ^= k;
    }
    for j in (0..10).rev().step_by(4) {
        acc += j;
    }
    out[i] = if acc > 0 { acc / 7 } else { acc % 7 };
}

#[kernel]
fn divide(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = a[i] / b[i];
    }
}

fn native() -> Device {
    spoc::init_device(Some("Native")).expect("the Native backend is always available")
}

#[test]
fn saxpy_runs_natively() {
    let dev = native();
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y0: Vec<f32> = (0..n).map(|i| 1.0 - i as f32 * 0.5).collect();
    let xb = dev.upload(&x).unwrap();
    let mut yb = dev.upload(&y0).unwrap();
    saxpy
        .launch(&dev, dims1d(4), dims1d(256), (2.0, &xb, &mut yb))
        .unwrap();
    let want: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| 2.0 * x + y).collect();
    assert_eq!(yb.to_vec().unwrap(), want);
}

#[test]
fn handle_exposes_name_ir_and_def() {
    assert_eq!(saxpy.name(), "saxpy");
    let ir = saxpy.ir().unwrap();
    assert_eq!(ir.name, "saxpy");
    assert_eq!(ir.params.len(), 3);
    // `let i = global_id_x();` is on line 9, column 5 of this file.
    assert_eq!(ir.body[0].loc, Some(spoc::ir::SrcLoc { line: 9, column: 5 }));
    assert!(saxpy::DEF.native.is_some());
    assert_eq!(saxpy.def().name, "saxpy");
    let linked = uses_helpers.ir().unwrap();
    let mut names: Vec<&str> = linked.functions.iter().map(|f| f.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["clamp01", "sum_first"]);
}

#[test]
fn helpers_run_natively_and_stay_host_functions() {
    assert_eq!(clamp01(2.0), 1.0);
    let dev = native();
    let x = dev.upload(&[-1.0f32, 0.25, 3.0, 0.5]).unwrap();
    let mut y = dev.upload(&[0.0f32; 4]).unwrap();
    uses_helpers
        .launch(&dev, dims1d(1), dims1d(4), (&x, &mut y))
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), [0.0, 0.25, 1.0, 0.5]);
}

#[test]
fn integers_wrap_and_loops_match_rust() {
    let dev = native();
    let a: Vec<i32> = vec![0, 1, -1, i32::MAX, i32::MIN, 12345, -98765];
    let ab = dev.upload(&a).unwrap();
    let mut out = dev.upload(&vec![0i32; a.len()]).unwrap();
    int_semantics
        .launch(&dev, dims1d(1), dims1d(8), (&ab, &mut out))
        .unwrap();
    let want: Vec<i32> = a
        .iter()
        .map(|&x| {
            let mut acc = x
                .wrapping_mul(65_537)
                .wrapping_add(x.wrapping_shl(31))
                .wrapping_sub(x.wrapping_neg());
            acc ^= 1;
            acc ^= 3;
            for j in (0..10).rev().step_by(4) {
                acc = acc.wrapping_add(j);
            }
            if acc > 0 {
                acc / 7
            } else {
                acc % 7
            }
        })
        .collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
fn division_by_zero_is_an_error_not_a_panic() {
    let dev = native();
    let a = dev.upload(&[6i32, 8, 10]).unwrap();
    let b = dev.upload(&[3i32, 0, 5]).unwrap();
    let mut out = dev.upload(&[0i32; 3]).unwrap();
    let err = divide
        .launch(&dev, dims1d(1), dims1d(3), (&a, &b, &mut out))
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("division"), "{msg}");
}
