//! The whole `#[kernel]` path on the Native backend: macro expansion, launch tuple, argument
//! unpacking, the per-thread body, the embedded IR and `#[device]` helpers.

/// Kernels and helpers shared with the other generator tests.
mod codegen_kernels;

use codegen_kernels::{
    clamp01, int_semantics_smoke as int_semantics, uses_helpers_smoke as uses_helpers,
};
use spoc::prelude::*;

/// `y = a * x + y`.
#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
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
    // `let i = global_id_x();` is on line 15, column 5 of this file.
    assert_eq!(
        ir.body[0].loc,
        Some(spoc::ir::SrcLoc {
            line: 15,
            column: 5
        })
    );
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

mod geometry {
    use spoc::prelude::*;

    /// Writes `v` to `out[i]` (a helper with a writable buffer, returning nothing).
    #[device]
    pub fn put(out: &mut [f32], i: usize, v: f32) {
        if i < out.len() {
            out[i] = v;
        }
    }

    /// Squared length, through another helper reached with `super::`-free and `self::` paths.
    #[device]
    pub fn norm2(a: f32, b: f32) -> f32 {
        self::sq(a) + sq(b)
    }

    #[device]
    pub fn sq(v: f32) -> f32 {
        v * v
    }
}

/// Language corner cases, each checked against the same computation on the host.
#[kernel]
fn corners(flag: bool, n: usize, x: &[f32], y: &mut [f32], z: &mut [i64]) {
    let i = global_id_x();
    if i >= y.len() {
        return;
    }
    // `if` with statements in a branch, as a value.
    let v = if flag && x[i] > 0.5 {
        let t = x[i] * 2.0;
        t + 1.0
    } else if x[i] < -0.5 {
        -x[i]
    } else {
        0.25
    };
    // Short-circuit whose right side needs statements.
    let ok = i + 1 < x.len() && {
        let w = x[i + 1];
        w > 0.0
    };
    // A `while` whose condition needs statements.
    let mut k = 0usize;
    while {
        let lim = n * 2;
        k < lim
    } {
        k += 1;
    }
    y[i] = v + if ok { 1.0 } else { 0.0 } + k as f32;
    y[i] += geometry::norm2(3.0, 4.0) * f32::EPSILON.max(0.0) + std::f32::consts::PI.floor();
    geometry::put(y, i, y[i] * 0.5);
    let mut acc: i64 = i64::MIN + i as i64;
    acc -= -9_223_372_036_854_775_807;
    acc = acc.wrapping_mul(1) + (acc >> 1) + (1i64 << 40);
    z[i] = acc.min(i64::MAX).abs();
}

#[kernel]
fn no_params() {}

#[test]
fn corner_cases_match_the_host() {
    for framework in ["Native", "Interpreter"] {
        let dev = spoc::init_device(Some(framework)).unwrap();
        corner_cases_on(&dev);
    }
}

fn corner_cases_on(dev: &Device) {
    let n = 3usize;
    let x: Vec<f32> = vec![0.75, -0.8, 0.1, 2.0, -3.0, 0.0];
    let xb = dev.upload(&x).unwrap();
    let mut yb = dev.upload(&vec![0.0f32; x.len()]).unwrap();
    let mut zb = dev.upload(&vec![0i64; x.len()]).unwrap();
    corners
        .launch(dev, dims1d(1), dims1d(8), (true, n, &xb, &mut yb, &mut zb))
        .unwrap();
    no_params.launch(dev, dims1d(1), dims1d(1), ()).unwrap();
    let mut want_y = Vec::new();
    let mut want_z = Vec::new();
    for i in 0..x.len() {
        let v = if x[i] > 0.5 {
            x[i] * 2.0 + 1.0
        } else if x[i] < -0.5 {
            -x[i]
        } else {
            0.25
        };
        let ok = i + 1 < x.len() && x[i + 1] > 0.0;
        let y = v + if ok { 1.0 } else { 0.0 } + (n * 2) as f32;
        let y = y + 25.0 * f32::EPSILON + 3.0;
        want_y.push(y * 0.5);
        let mut acc = i64::MIN + i as i64;
        acc -= -9_223_372_036_854_775_807;
        acc = acc + (acc >> 1) + (1i64 << 40);
        want_z.push(acc.abs());
    }
    assert_eq!(yb.to_vec().unwrap(), want_y, "on {}", dev.framework);
    assert_eq!(zb.to_vec().unwrap(), want_z, "on {}", dev.framework);
}

#[kernel]
fn with_barrier(y: &mut [f32]) {
    sync_threads();
    y[0] = 1.0;
}

#[test]
fn barrier_kernels_run_natively_on_the_simt_scheduler() {
    assert!(with_barrier::DEF.native.is_some());
    let dev = native();
    let mut y = dev.upload(&[0.0f32; 4]).unwrap();
    with_barrier
        .launch(&dev, dims1d(1), dims1d(4), (&mut y,))
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), [1.0, 0.0, 0.0, 0.0]);
}

/// Helpers reached by import rather than by path: by name and under an alias.
mod imported {
    use spoc::prelude::*;

    #[device]
    pub fn twice(v: f32) -> f32 {
        v * 2.0
    }

    #[device]
    pub fn add_one(v: i32) -> i32 {
        v + 1
    }
}

use imported::add_one as inc;
use imported::twice;

#[kernel]
fn calls_imported(x: &[f32], y: &mut [f32], n: &mut [i32]) {
    let i = global_id_x();
    if i < y.len() {
        let t: f32 = twice(x[i]);
        y[i] = t;
        let k: i32 = inc(i as i32);
        n[i] = inc(k);
    }
}

#[test]
fn helpers_imported_by_name_or_alias_are_callable() {
    for framework in ["Native", "Interpreter"] {
        let dev = spoc::init_device(Some(framework)).unwrap();
        let x = dev.upload(&[1.5f32, -2.0, 0.25]).unwrap();
        let mut y = dev.alloc::<f32>(3).unwrap();
        let mut n = dev.alloc::<i32>(3).unwrap();
        calls_imported
            .launch(&dev, dims1d(1), dims1d(4), (&x, &mut y, &mut n))
            .unwrap();
        assert_eq!(y.to_vec().unwrap(), [3.0, -4.0, 0.5], "on {framework}");
        assert_eq!(n.to_vec().unwrap(), [2, 3, 4], "on {framework}");
    }
    // The IR calls each helper by its own name, not by the alias.
    let ir = calls_imported.ir().unwrap();
    let mut names: Vec<&str> = ir.functions.iter().map(|f| f.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["add_one", "twice"]);
}

/// `clash_a::f` calls `clash_a::g`; the kernel also calls `clash_b::g`, a different helper of
/// the same name that it cannot see is in conflict.
mod clash_a {
    use spoc::prelude::*;

    #[device]
    pub fn g(v: f32) -> f32 {
        v + 100.0
    }

    #[device]
    pub fn f(v: f32) -> f32 {
        g(v) * 2.0
    }
}

mod clash_b {
    use spoc::prelude::*;

    #[device]
    pub fn g(v: f32) -> f32 {
        v - 1.0
    }
}

#[kernel]
fn calls_two_gs(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        let a: f32 = clash_a::f(x[i]);
        let b: f32 = clash_b::g(x[i]);
        y[i] = a + b;
    }
}

#[test]
fn two_helpers_of_one_name_reached_through_another_helper_both_run() {
    let ir = calls_two_gs.ir().unwrap();
    let mut names: Vec<&str> = ir.functions.iter().map(|f| f.name.as_str()).collect();
    names.sort();
    // Breadth-first from the kernel: `f`, then `clash_b::g` (keeps `g`), then `clash_a::g`.
    assert_eq!(names, ["f", "g", "g_2"]);
    let x = [1.0f32, -3.5, 10.0];
    let want: Vec<f32> = x.iter().map(|v| (v + 100.0) * 2.0 + (v - 1.0)).collect();
    for framework in ["Native", "Interpreter"] {
        let dev = spoc::init_device(Some(framework)).unwrap();
        let xb = dev.upload(&x).unwrap();
        let mut y = dev.alloc::<f32>(3).unwrap();
        calls_two_gs
            .launch(&dev, dims1d(1), dims1d(4), (&xb, &mut y))
            .unwrap();
        assert_eq!(y.to_vec().unwrap(), want, "on {framework}");
    }
}

#[test]
fn kernels_and_helpers_declared_in_a_function_body() {
    #[device]
    fn half(v: f32) -> f32 {
        v * 0.5
    }

    #[kernel]
    fn halve(y: &mut [f32]) {
        let i = global_id_x();
        if i < y.len() {
            let h: f32 = half(y[i]);
            y[i] = h;
        }
    }

    for framework in ["Native", "Interpreter"] {
        let dev = spoc::init_device(Some(framework)).unwrap();
        let mut y = dev.upload(&[4.0f32, 1.0, -3.0]).unwrap();
        halve.launch(&dev, dims1d(1), dims1d(4), (&mut y,)).unwrap();
        assert_eq!(y.to_vec().unwrap(), [2.0, 0.5, -1.5], "on {framework}");
    }
}

/// An untyped literal whose guessed type (from the call's other arguments) is right.
#[kernel]
fn guessed_right(y: &mut [f32]) {
    let i = global_id_x();
    let c = 0.5;
    // `c` and `2.0` take `f32` from the annotated result.
    let n: f32 = geometry::norm2(c, 2.0);
    geometry::put(y, i, n + c);
}

#[test]
fn untyped_arguments_whose_guess_is_right_compile_and_run() {
    let dev = native();
    let mut y = dev.alloc::<f32>(3).unwrap();
    guessed_right
        .launch(&dev, dims1d(1), dims1d(3), (&mut y,))
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), [4.75; 3]);
}

/// The example of `#[kernel]`'s documentation (spoc-macros/src/lib.rs), kept compiling here.
#[test]
fn kernel_attribute_doc_example() -> spoc::Result<()> {
    /// `y = a * x + y`.
    #[kernel]
    fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
        let i = global_id_x();
        if i < y.len() {
            y[i] = a * x[i] + y[i];
        }
    }

    let dev = spoc::init_device(None)?; // the best device present; the CPU without a GPU
    let x = dev.upload(&[1.0f32, 2.0, 3.0])?;
    let mut y = dev.upload(&[10.0f32; 3])?;
    // 1 block of 32 threads; threads 3..32 fail the `i < y.len()` test and do nothing.
    saxpy.launch(&dev, dims1d(1), dims1d(32), (2.0, &x, &mut y))?;
    assert_eq!(y.to_vec()?, [12.0, 14.0, 16.0]);
    Ok(())
}

/// The example of `#[device]`'s documentation (spoc-macros/src/lib.rs), kept compiling here.
#[test]
fn device_attribute_doc_example() {
    mod shading {
        use spoc::prelude::*;

        #[device]
        #[allow(clippy::manual_clamp)] // spelled out as the IR test expects
        pub fn clamp01(v: f32) -> f32 {
            v.max(0.0).min(1.0)
        }

        #[device]
        pub fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
            let t = clamp01((x - e0) / (e1 - e0));
            t * t * (3.0 - 2.0 * t)
        }
    }

    use shading::smoothstep; // importing the fn by name is enough

    #[kernel]
    fn apply(x: &[f32], out: &mut [f32]) {
        let i = global_id_x();
        if i < out.len() {
            out[i] = smoothstep(-1.0, 2.0, x[i]); // the literals take `f32` from `x[i]`
        }
    }

    let xs = [-2.0f32, -1.0, 0.5, 2.0, 3.0];
    let want: Vec<f32> = xs.iter().map(|&v| smoothstep(-1.0, 2.0, v)).collect();
    assert_eq!(want[0], 0.0);
    assert_eq!(want[2], 0.5);
    assert_eq!(want[4], 1.0);
    for framework in ["Native", "Interpreter"] {
        let dev = spoc::init_device(Some(framework)).unwrap();
        let x = dev.upload(&xs).unwrap();
        let mut out = dev.alloc::<f32>(xs.len()).unwrap();
        apply
            .launch(&dev, dims1d(1), dims1d(8), (&x, &mut out))
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "on {framework}");
    }
}
