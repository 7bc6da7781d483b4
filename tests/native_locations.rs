//! Native's faults name the kernel statement that raised them, `file:line:column`, as the
//! Interpreter's do: an out-of-bounds read and write, a division by zero, `step_by(0)`, a
//! fault inside a `#[device]` helper (reported at the helper's statement), and a fault in a
//! barrier kernel (run on the SIMT scheduler).
//!
//! Each faulting statement carries a `// BUG(name)` comment; the test finds that line in this
//! file's own text, so the asserted line and column are the real ones.

mod common;

use spoc::prelude::*;
use spoc::{Device, Error};

const FILE: &str = "tests/native_locations.rs";
const SOURCE: &str = include_str!("native_locations.rs");

/// `file:line:column` of the statement marked `// BUG(name)`: its first non-blank character.
fn marked(name: &str) -> String {
    let (line, column) = common::marked(SOURCE, name);
    format!("{FILE}:{line}:{column}")
}

fn native() -> Device {
    spoc::init_device(Some("Native")).expect("Native is always there")
}

/// The fault message of a launch that must fail, with the thread it names.
fn fault(r: spoc::Result<()>) -> (String, [u32; 3]) {
    match r {
        Err(Error::KernelFault {
            message, thread, ..
        }) => (message, thread.expect("a CPU fault knows its thread")),
        other => panic!("expected a kernel fault, got {other:?}"),
    }
}

#[kernel]
fn read_past_end(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = x[i + 1] * 2.0; // BUG(read)
    }
}

#[kernel]
fn write_past_end(y: &mut [f32]) {
    let i = global_id_x();
    let v = i as f32;
    y[i * 2] = v; // BUG(write)
}

#[kernel]
fn divide(d: &[i32], y: &mut [i32]) {
    let i = global_id_x();
    if i < y.len() {
        let q = 100 / d[i]; // BUG(div)
        y[i] = q;
    }
}

#[kernel]
#[rustfmt::skip]
fn zero_step(s: &[u32], y: &mut [u32]) {
    let mut n = 0u32;
    for _k in (0..4u32).step_by(s[0] as usize) { // BUG(step)
        n += 1;
    }
    y[0] = n;
}

#[device]
fn pick(x: &[f32], i: usize) -> f32 {
    let j = i + 4;
    x[j] // BUG(helper)
}

#[kernel]
fn through_helper(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = pick(x, i);
    }
}

#[kernel]
fn after_barrier(x: &[f32], y: &mut [f32]) {
    let t = shared_array::<f32, 8>();
    let i = thread_idx_x();
    t[i] = x[i];
    sync_threads();
    y[i] = t[i] + x[i + 5]; // BUG(barrier)
}

#[test]
fn native_faults_carry_the_statement_location() {
    let dev = native();
    let x = dev.upload(&[1.0f32; 4]).unwrap();
    let mut y = dev.upload(&[0.0f32; 4]).unwrap();
    let (m, t) = fault(read_past_end.launch(&dev, dims1d(1), dims1d(4), (&x, &mut y)));
    assert_eq!(t, [3, 0, 0]);
    assert_eq!(
        m,
        format!(
            "{}: index 4 out of bounds for `x` of length 4",
            marked("read")
        )
    );

    let (m, _) = fault(write_past_end.launch(&dev, dims1d(1), dims1d(4), (&mut y,)));
    assert!(
        m.starts_with(&format!("{}: index ", marked("write"))),
        "{m}"
    );

    let d = dev.upload(&[1, 2, 0, 4]).unwrap();
    let mut q = dev.upload(&[0i32; 4]).unwrap();
    let (m, t) = fault(divide.launch(&dev, dims1d(1), dims1d(4), (&d, &mut q)));
    assert_eq!(t, [2, 0, 0]);
    assert_eq!(
        m,
        format!("{}: integer division or remainder by zero", marked("div"))
    );

    let s = dev.upload(&[0u32]).unwrap();
    let mut n = dev.upload(&[0u32]).unwrap();
    let (m, _) = fault(zero_step.launch(&dev, dims1d(1), dims1d(1), (&s, &mut n)));
    assert_eq!(m, format!("{}: `step_by(0)` in a for loop", marked("step")));

    let (m, _) = fault(through_helper.launch(&dev, dims1d(1), dims1d(4), (&x, &mut y)));
    assert!(
        m.starts_with(&format!("{}: index ", marked("helper"))),
        "{m}"
    );

    let x8 = dev.upload(&[1.0f32; 8]).unwrap();
    let mut y8 = dev.upload(&[0.0f32; 8]).unwrap();
    let (m, _) = fault(after_barrier.launch(&dev, dims1d(1), dims1d(8), (&x8, &mut y8)));
    assert!(
        m.starts_with(&format!("{}: index ", marked("barrier"))),
        "{m}"
    );
}

#[test]
fn native_and_the_interpreter_name_the_same_statement() {
    let interp = spoc::init_device(Some("Interpreter")).unwrap();
    for dev in [native(), interp] {
        let x = dev.upload(&[1.0f32; 4]).unwrap();
        let mut y = dev.upload(&[0.0f32; 4]).unwrap();
        let (m, _) = fault(read_past_end.launch(&dev, dims1d(1), dims1d(4), (&x, &mut y)));
        assert!(
            m.starts_with(&format!("{}: ", marked("read"))),
            "{}: {m}",
            dev.framework
        );
    }
}
