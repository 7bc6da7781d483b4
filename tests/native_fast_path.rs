//! The Native backend's row plans (its fast path, see `spoc_runtime::native::abi`) keep the
//! kernel language's semantics. Each kernel here has accesses `base + stride * thread_idx_x`
//! that the plan checks once per row, and launches mix rows where the plan succeeds (full, in
//! bounds) and rows where it fails (partial, wrapping, out of bounds). Results must equal a
//! plain-Rust reference on Native and on the Interpreter, and faults must name the same thread
//! on both.

mod common;
mod faulting;

use common::checking_devices as devices;
use common::pseudo_random;
use faulting::divide;
use spoc::prelude::*;
use spoc::Error;

/// The coordinates and message of a launch's fault; panics if it did not fault.
fn fault_of(r: spoc::Result<()>, kernel: &str, dev: &Device) -> ([u32; 3], [u32; 3], String) {
    match r {
        Err(Error::KernelFault {
            kernel: k,
            block,
            thread,
            message,
        }) => {
            assert_eq!(k, kernel, "{}", dev.framework);
            (
                block.expect("a CPU fault knows its block"),
                thread.expect("a CPU fault knows its thread"),
                message,
            )
        }
        other => panic!("{}: expected a fault, got {other:?}", dev.framework),
    }
}

#[kernel]
fn strided(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        let j = 2 * i + 1;
        y[i] = x[j] - x[i << 1];
    }
}

#[test]
fn strided_accesses_match_and_the_row_past_the_end_faults() {
    let n = 1024;
    let x: Vec<f32> = (0..2 * n).map(|i| (i * i % 97) as f32).collect();
    let want: Vec<f32> = (0..n).map(|i| x[2 * i + 1] - x[2 * i]).collect();
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut yb = dev.alloc::<f32>(n).unwrap();
        strided
            .launch(&dev, dims1d(8), dims1d(128), (&xb, &mut yb))
            .unwrap();
        assert_eq!(yb.to_vec().unwrap(), want, "{}", dev.framework);

        // One element short: the last thread reads x[2047]; its row runs checked.
        let xb = dev.upload(&x[..2 * n - 1]).unwrap();
        let mut yb = dev.upload(&vec![-1.0f32; n]).unwrap();
        let r = strided.launch(&dev, dims1d(8), dims1d(128), (&xb, &mut yb));
        let (block, thread, message) = fault_of(r, "strided", &dev);
        assert_eq!(
            (block, thread),
            ([7, 0, 0], [127, 0, 0]),
            "{}",
            dev.framework
        );
        assert!(
            message.contains("2047") && message.contains('x'),
            "{message}"
        );
        let got = yb.to_vec().unwrap();
        assert_eq!(got[896..1023], want[896..1023], "{}", dev.framework);
        assert_eq!(got[1023], -1.0, "{}", dev.framework);
    }
}

#[kernel]
fn scale_2d(w: u32, h: u32, a: &[f32], out: &mut [f32]) {
    let col = global_id_x();
    let row = global_id_y();
    if col < w as usize && row < h as usize {
        out[row * w as usize + col] = a[row * w as usize + col] * 2.0 + row as f32;
    }
}

#[test]
fn two_dimensional_blocks_with_partial_rows_match() {
    let (w, h) = (100usize, 37usize);
    let a: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5).collect();
    let want: Vec<f32> = (0..w * h).map(|i| a[i] * 2.0 + (i / w) as f32).collect();
    for dev in devices() {
        let ab = dev.upload(&a).unwrap();
        let mut out = dev.alloc::<f32>(w * h).unwrap();
        scale_2d
            .launch(
                &dev,
                dims2d(7, 5),
                dims2d(16, 8),
                (w as u32, h as u32, &ab, &mut out),
            )
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "{}", dev.framework);
    }
}

#[kernel]
fn early_return(n: u32, x: &[u32], y: &mut [u32]) {
    let i = global_id_x();
    if i >= n as usize {
        return;
    }
    y[i] = x[i] * 3 + i as u32;
}

#[test]
fn early_return_guard_keeps_the_threads_past_n_idle() {
    let len = 1024;
    let n = 1000u32;
    let x: Vec<u32> = pseudo_random(3, len).iter().map(|&v| v as u32).collect();
    let want: Vec<u32> = (0..len)
        .map(|i| {
            if i < n as usize {
                x[i].wrapping_mul(3).wrapping_add(i as u32)
            } else {
                7
            }
        })
        .collect();
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut yb = dev.upload(&vec![7u32; len]).unwrap();
        early_return
            .launch(&dev, dims1d(16), dims1d(64), (n, &xb, &mut yb))
            .unwrap();
        assert_eq!(yb.to_vec().unwrap(), want, "{}", dev.framework);
    }
}

#[kernel]
fn four_each(x: &[i32], y: &mut [i32]) {
    let i = global_id_x();
    for k in 0..4 {
        let j = i * 4 + k;
        y[j] = x[j] + k as i32;
    }
}

#[test]
fn indices_built_from_loop_variables_stay_checked_and_correct() {
    let n = 4 * 256;
    let x: Vec<i32> = (0..n as i32).map(|v| v * 7 - 100).collect();
    let want: Vec<i32> = (0..n).map(|j| x[j] + (j % 4) as i32).collect();
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut yb = dev.alloc::<i32>(n).unwrap();
        four_each
            .launch(&dev, dims1d(4), dims1d(64), (&xb, &mut yb))
            .unwrap();
        assert_eq!(yb.to_vec().unwrap(), want, "{}", dev.framework);
    }
}

#[kernel]
fn reverse(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    let n = y.len();
    if i < n {
        y[i] = x[n - 1 - i];
    }
}

#[test]
fn a_decreasing_index_matches_with_wide_and_one_thread_rows() {
    let n = 300;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let want: Vec<f32> = x.iter().rev().copied().collect();
    for dev in devices() {
        for (grid, block) in [(5, 64), (300, 1)] {
            let xb = dev.upload(&x).unwrap();
            let mut yb = dev.alloc::<f32>(n).unwrap();
            reverse
                .launch(&dev, dims1d(grid), dims1d(block), (&xb, &mut yb))
                .unwrap();
            assert_eq!(
                yb.to_vec().unwrap(),
                want,
                "{} block {block}",
                dev.framework
            );
        }
    }
}

#[kernel]
fn blur3(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i > 0 && i + 1 < x.len() {
        y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0;
    }
}

#[test]
fn a_stencil_matches_at_both_edges() {
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| ((i * 37) % 101) as f32).collect();
    let mut want = vec![0.0f32; n];
    for i in 1..n - 1 {
        want[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0;
    }
    for dev in devices() {
        let xb = dev.upload(&x).unwrap();
        let mut yb = dev.alloc::<f32>(n).unwrap();
        blur3
            .launch(&dev, dims1d(8), dims1d(128), (&xb, &mut yb))
            .unwrap();
        assert_eq!(yb.to_vec().unwrap(), want, "{}", dev.framework);
    }
}

#[kernel]
fn left(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = x[i - 1];
    }
}

#[test]
fn a_wrapping_index_faults_on_the_first_thread() {
    for dev in devices() {
        let xb = dev.upload(&vec![1.0f32; 512]).unwrap();
        let mut yb = dev.alloc::<f32>(512).unwrap();
        let r = left.launch(&dev, dims1d(4), dims1d(128), (&xb, &mut yb));
        let (block, thread, message) = fault_of(r, "left", &dev);
        assert_eq!((block, thread), ([0, 0, 0], [0, 0, 0]), "{}", dev.framework);
        assert!(message.contains("4294967295"), "{message}");
    }
}

#[test]
fn a_division_by_zero_in_a_planned_row_stops_its_thread_and_block_there() {
    let n = 512;
    let a: Vec<i32> = (0..n as i32).map(|v| v * 10 - 999).collect();
    let mut b: Vec<i32> = (0..n as i32).map(|v| v % 7 + 1).collect();
    b[300] = 0;
    for dev in devices() {
        let ab = dev.upload(&a).unwrap();
        let bb = dev.upload(&b).unwrap();
        let mut out = dev.upload(&vec![-1i32; n]).unwrap();
        let r = divide.launch(&dev, dims1d(2), dims1d(256), (&ab, &bb, &mut out));
        let (block, thread, message) = fault_of(r, "divide", &dev);
        assert_eq!(
            (block, thread),
            ([1, 0, 0], [44, 0, 0]),
            "{}",
            dev.framework
        );
        assert!(message.contains("division"), "{message}");
        let got = out.to_vec().unwrap();
        for i in 256..300 {
            assert_eq!(got[i], a[i] / b[i], "{} element {i}", dev.framework);
        }
        assert!(got[300..].iter().all(|&v| v == -1), "{}", dev.framework);
    }
}

#[kernel]
fn ids_3d(out: &mut [u32]) {
    let x = global_id_x();
    let y = global_id_y();
    let z = global_id_z();
    let i = (z * global_size_y() + y) * global_size_x() + x;
    out[i] = out[i] + i as u32 + 1;
}

#[test]
fn every_thread_of_a_3d_launch_runs_once() {
    // 105 blocks of 4 x 2 x 2: several blocks per rayon task on most machines.
    let (grid, block) = (dims3d(7, 5, 3), dims3d(4, 2, 2));
    let n = 7 * 5 * 3 * 16;
    let want: Vec<u32> = (1..=n as u32).collect();
    for dev in devices() {
        let mut out = dev.alloc::<u32>(n).unwrap();
        ids_3d.launch(&dev, grid, block, (&mut out,)).unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "{}", dev.framework);
    }
}
