//! The Interpreter as a sanitizer: deliberately buggy kernels of the kinds GPU programmers
//! write, each reported with the right kind, thread(s) and source line; correct kernels (a few
//! shared-memory classics here, the example programs in `examples/tests/sanitizer.rs`) with no
//! report; `SPOC_CHECK` catching a race in a kernel launched on the Native device.
//!
//! Each buggy statement carries a `// BUG(name)` comment; the test finds that line in this file's
//! own text, so the asserted line and column are the real ones.

mod common;
/// The kernels the examples share (one definition for the examples and the tests).
#[path = "../examples/programs/kernels.rs"]
#[allow(dead_code)]
mod shared_kernels;

use shared_kernels::block_sum as reduce_ok;
use spoc::interpreter::{
    take_last_report, AccessKind, InterpError, InterpErrorKind, MemorySpace, SourceLoc,
};
use spoc::prelude::*;
use spoc::{Device, Error};

const FILE: &str = "tests/sanitizer.rs";
const SOURCE: &str = include_str!("sanitizer.rs");

/// (line, column) of the statement marked `// BUG(name)`: its first non-blank character.
fn marked(name: &str) -> (u32, u32) {
    common::marked(SOURCE, name)
}

/// Asserts that `loc` is the statement marked `name` in this file.
fn assert_at(loc: &Option<SourceLoc>, name: &str) {
    let (line, column) = marked(name);
    let loc = loc
        .as_ref()
        .unwrap_or_else(|| panic!("no location for {name}"));
    assert_eq!(
        (loc.file.as_deref(), loc.line, loc.column),
        (Some(FILE), line, column),
        "location of BUG({name})"
    );
}

fn interpreter() -> Device {
    spoc::init_device(Some("Interpreter")).expect("the Interpreter is always there")
}

/// The typed report of a launch that must fail with a kernel fault; checks that the runtime's
/// message is the report's.
fn report(r: spoc::Result<()>) -> InterpError {
    let e = r.expect_err("the sanitizer must report this kernel");
    let Error::KernelFault {
        message,
        block,
        thread,
        ..
    } = &e
    else {
        panic!("not a kernel fault: {e}")
    };
    let rep = take_last_report().expect("a typed report of the fault");
    assert_eq!((*block, *thread), (Some(rep.block), Some(rep.thread)));
    assert_eq!(*message, rep.message());
    println!("{e}");
    rep
}

fn seq_f32(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 17) as f32 * 0.5 + 1.0).collect()
}

// ============================================================ 1. reduction, first barrier missing

#[kernel]
fn reduce_missing_first_barrier(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 256>();
    let t = thread_idx_x();
    let i = global_id_x();
    s[t] = if i < x.len() { x[i] } else { 0.0f32 };
    let mut stride = 128usize;
    while stride > 0 {
        if t < stride {
            s[t] += s[t + stride]; // BUG(reduce_first)
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx_x()] = s[0];
    }
}

#[test]
fn reduction_without_the_barrier_after_the_loads_reads_unwritten_shared_memory() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(1024)).unwrap();
    let mut out = dev.alloc::<f32>(4).unwrap();
    let r =
        report(reduce_missing_first_barrier.launch(&dev, dims1d(4), dims1d(256), (&x, &mut out)));
    assert_eq!(
        r.kind,
        InterpErrorKind::UninitializedShared {
            array: "s".into(),
            index: 128,
            len: 256
        }
    );
    assert_eq!((r.block, r.thread), ([0, 0, 0], [0, 0, 0]));
    assert_at(&r.loc, "reduce_first");
}

// ============================================================ 2. reduction, loop barrier missing

#[kernel]
fn reduce_missing_loop_barrier(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 256>();
    let t = thread_idx_x();
    let i = global_id_x();
    s[t] = if i < x.len() { x[i] } else { 0.0f32 };
    sync_threads();
    let mut stride = 128usize;
    while stride > 0 {
        if t < stride {
            s[t] += s[t + stride]; // BUG(reduce_loop)
        }
        stride /= 2;
    }
    sync_threads();
    if t == 0 {
        out[block_idx_x()] = s[0];
    }
}

#[test]
fn reduction_without_a_barrier_per_step_races() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(512)).unwrap();
    let mut out = dev.alloc::<f32>(2).unwrap();
    let r =
        report(reduce_missing_loop_barrier.launch(&dev, dims1d(2), dims1d(256), (&x, &mut out)));
    let InterpErrorKind::DataRace {
        space,
        array,
        index,
        first,
        second,
        ..
    } = &r.kind
    else {
        panic!("{r}")
    };
    // Thread 0 read s[1] in its last step; thread 1 then writes s[1] in its first.
    assert_eq!(
        (*space, array.as_str(), *index),
        (MemorySpace::Shared, "s", 1)
    );
    assert_eq!((first.thread, first.kind), ([0, 0, 0], AccessKind::Read));
    assert_eq!((second.thread, second.kind), ([1, 0, 0], AccessKind::Write));
    assert_eq!(r.thread, [1, 0, 0]);
    assert_at(&first.loc, "reduce_loop");
    assert_at(&second.loc, "reduce_loop");
    assert_at(&r.loc, "reduce_loop");
}

// ============================================================ 3. histogram without atomics

#[kernel]
fn histogram_no_atomics(data: &[u32], out: &mut [u32]) {
    let h = shared_array::<u32, 16>();
    let t = thread_idx_x();
    let i = global_id_x();
    if t < 16 {
        h[t] = 0u32;
    }
    sync_threads();
    if i < data.len() {
        let b = (data[i] % 16) as usize;
        h[b] += 1u32; // BUG(histogram)
    }
    sync_threads();
    if t < 16 {
        atomic_add(&mut out[t], h[t]);
    }
}

#[test]
fn histogram_with_plain_increments_races() {
    let dev = interpreter();
    let data: Vec<u32> = (0..256).collect();
    let d = dev.upload(&data).unwrap();
    let mut out = dev.upload(&[0u32; 16]).unwrap();
    let r = report(histogram_no_atomics.launch(&dev, dims1d(2), dims1d(128), (&d, &mut out)));
    let InterpErrorKind::DataRace {
        index,
        first,
        second,
        ..
    } = &r.kind
    else {
        panic!("{r}")
    };
    // Threads 0 and 16 both count into bin 0: 16 reads what 0 wrote.
    assert_eq!(*index, 0);
    assert_eq!((first.thread, first.kind), ([0, 0, 0], AccessKind::Write));
    assert_eq!((second.thread, second.kind), ([16, 0, 0], AccessKind::Read));
    assert_at(&first.loc, "histogram");
    assert_at(&second.loc, "histogram");
}

// ============================================================ 4. barrier inside a thread-dependent `if`

#[kernel]
fn barrier_in_if(x: &[f32], y: &mut [f32]) {
    let s = shared_array::<f32, 128>();
    let t = thread_idx_x();
    let i = global_id_x();
    if t < 100 {
        s[t] = x[i];
        sync_threads(); // BUG(barrier_if)
        y[i] = s[(t + 1) % 100];
    }
}

#[test]
fn barrier_inside_a_thread_dependent_if_diverges() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(128)).unwrap();
    let mut y = dev.alloc::<f32>(128).unwrap();
    let r = report(barrier_in_if.launch(&dev, dims1d(1), dims1d(128), (&x, &mut y)));
    let InterpErrorKind::BarrierDivergence { groups, detail } = &r.kind else {
        panic!("{r}")
    };
    assert_eq!(groups.len(), 2, "{detail}");
    assert_eq!(groups[0].threads.len(), 100);
    assert_at(&groups[0].at, "barrier_if");
    assert_eq!(groups[1].at, None);
    assert_eq!(groups[1].threads[0], [100, 0, 0]);
    assert_eq!(groups[1].threads.len(), 28);
    assert_eq!(r.thread, [0, 0, 0]);
    assert_at(&r.loc, "barrier_if");
    assert!(detail.contains("28 threads"), "{detail}");
}

// ============================================================ 5. different barriers in two branches

#[kernel]
fn barriers_in_both_branches(y: &mut [u32]) {
    let s = shared_array::<u32, 64>();
    let t = thread_idx_x();
    if t % 2 == 0 {
        s[t] = 1u32;
        sync_threads(); // BUG(barrier_even)
    } else {
        s[t] = 2u32;
        sync_threads(); // BUG(barrier_odd)
    }
    y[t] = s[63 - t];
}

#[test]
fn two_different_barriers_diverge() {
    let dev = interpreter();
    let mut y = dev.alloc::<u32>(64).unwrap();
    let r = report(barriers_in_both_branches.launch(&dev, dims1d(1), dims1d(64), (&mut y,)));
    let InterpErrorKind::BarrierDivergence { groups, .. } = &r.kind else {
        panic!("{r}")
    };
    assert_eq!(groups.len(), 2);
    assert_at(&groups[0].at, "barrier_even");
    assert_at(&groups[1].at, "barrier_odd");
    assert_eq!(groups[0].threads[..2], [[0, 0, 0], [2, 0, 0]]);
    assert_eq!(groups[1].threads[..2], [[1, 0, 0], [3, 0, 0]]);
}

// ============================================================ 6. early return before a barrier

#[kernel]
fn early_return_before_barrier(x: &[f32], y: &mut [f32]) {
    let s = shared_array::<f32, 64>();
    let t = thread_idx_x();
    let i = global_id_x();
    if i >= x.len() {
        return;
    }
    s[t] = x[i];
    sync_threads(); // BUG(early_return)
    y[i] = s[t] + s[(t + 1) % 64];
}

#[test]
fn early_return_before_a_barrier_diverges_in_the_partial_block() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(100)).unwrap();
    let mut y = dev.alloc::<f32>(100).unwrap();
    let r = report(early_return_before_barrier.launch(&dev, dims1d(2), dims1d(64), (&x, &mut y)));
    let InterpErrorKind::BarrierDivergence { groups, .. } = &r.kind else {
        panic!("{r}")
    };
    // Block 1 holds elements 64..100: 36 threads wait, 28 have returned.
    assert_eq!(r.block, [1, 0, 0]);
    assert_at(&groups[0].at, "early_return");
    assert_eq!(groups[0].threads.len(), 36);
    assert_eq!((groups[1].at.clone(), groups[1].threads.len()), (None, 28));
    assert_eq!(groups[1].threads[0], [36, 0, 0]);
}

// ============================================================ 7. tiled matmul, off-by-one tile loop

#[kernel]
fn matmul_tile_off_by_one(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    let ta = shared_array_2d::<f32, 16, 16>();
    let tb = shared_array_2d::<f32, 16, 16>();
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let row = block_idx_y() * 16 + ty;
    let col = block_idx_x() * 16 + tx;
    let mut acc = 0.0f32;
    for tile in 0..n / 16 {
        ta[ty][tx] = a[row * n + tile * 16 + tx];
        tb[ty][tx] = b[(tile * 16 + ty) * n + col];
        sync_threads();
        for k in 0usize..17 {
            acc += ta[ty][k] * tb[k][tx]; // BUG(matmul_tile)
        }
        sync_threads();
    }
    c[row * n + col] = acc;
}

#[test]
fn tiled_matmul_with_an_off_by_one_tile_loop_reads_past_the_tile() {
    let dev = interpreter();
    let n = 32usize;
    let a = dev.upload(&seq_f32(n * n)).unwrap();
    let b = dev.upload(&seq_f32(n * n)).unwrap();
    let mut c = dev.alloc::<f32>(n * n).unwrap();
    let r = report(matmul_tile_off_by_one.launch(
        &dev,
        dims2d(2, 2),
        dims2d(16, 16),
        (&a, &b, &mut c, n),
    ));
    // k = 16: ta[0][16] is still inside ta (it is ta[1][0]), tb[16][0] is element 256 of 256.
    assert_eq!(
        r.kind,
        InterpErrorKind::OutOfBounds {
            space: MemorySpace::Shared,
            array: "tb".into(),
            index: 256,
            len: 256
        }
    );
    assert_eq!((r.block, r.thread), ([0, 0, 0], [0, 0, 0]));
    assert_at(&r.loc, "matmul_tile");
}

// ============================================================ 8. grid-stride loop, unguarded tail

#[kernel]
fn scale_pairs_grid_stride(x: &[f32], y: &mut [f32]) {
    let mut i = global_id_x() * 2;
    while i < y.len() {
        y[i] = x[i] * 2.0f32;
        y[i + 1] = x[i + 1] * 2.0f32; // BUG(grid_stride)
        i += global_size_x() * 2;
    }
}

#[test]
fn grid_stride_loop_with_an_unguarded_tail_reads_out_of_bounds() {
    let dev = interpreter();
    let n = 1001usize;
    let x = dev.upload(&seq_f32(n)).unwrap();
    let mut y = dev.alloc::<f32>(n).unwrap();
    let r = report(scale_pairs_grid_stride.launch(&dev, dims1d(2), dims1d(64), (&x, &mut y)));
    // 128 threads, 256 elements per sweep: i = 1000 is thread 116's fourth pair.
    assert_eq!(
        r.kind,
        InterpErrorKind::OutOfBounds {
            space: MemorySpace::Global,
            array: "x".into(),
            index: 1001,
            len: 1001
        }
    );
    assert_eq!((r.block, r.thread), ([1, 0, 0], [52, 0, 0]));
    assert_at(&r.loc, "grid_stride");
}

// ============================================================ 9. read of shared memory before the barrier that fills it

#[kernel]
fn read_before_fill(x: &[f32], y: &mut [f32]) {
    let tile = shared_array::<f32, 64>();
    let t = thread_idx_x();
    let i = global_id_x();
    tile[t] = x[i];
    let right = tile[(t + 1) % 64]; // BUG(read_before_fill)
    sync_threads();
    y[i] = right - tile[t];
}

#[test]
fn read_of_shared_memory_before_the_barrier_that_fills_it() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(128)).unwrap();
    let mut y = dev.alloc::<f32>(128).unwrap();
    let r = report(read_before_fill.launch(&dev, dims1d(2), dims1d(64), (&x, &mut y)));
    assert_eq!(
        r.kind,
        InterpErrorKind::UninitializedShared {
            array: "tile".into(),
            index: 1,
            len: 64
        }
    );
    assert_eq!(r.thread, [0, 0, 0]);
    assert_at(&r.loc, "read_before_fill");
}

// ============================================================ 10. stencil on shared memory, barrier missing

#[kernel]
fn shared_stencil_no_barrier(x: &[f32], y: &mut [f32]) {
    let tile = shared_array::<f32, 64>();
    let t = thread_idx_x();
    let i = global_id_x();
    tile[t] = x[i]; // BUG(stencil_write)
    if t > 0 {
        y[i] = tile[t] - tile[t - 1]; // BUG(stencil_read)
    }
}

#[test]
fn shared_stencil_without_a_barrier_races_with_the_left_neighbour() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(64)).unwrap();
    let mut y = dev.alloc::<f32>(64).unwrap();
    let r = report(shared_stencil_no_barrier.launch(&dev, dims1d(1), dims1d(64), (&x, &mut y)));
    let InterpErrorKind::DataRace {
        index,
        first,
        second,
        ..
    } = &r.kind
    else {
        panic!("{r}")
    };
    assert_eq!(*index, 0);
    assert_eq!((first.thread, first.kind), ([0, 0, 0], AccessKind::Write));
    assert_eq!((second.thread, second.kind), ([1, 0, 0], AccessKind::Read));
    assert_at(&first.loc, "stencil_write");
    assert_at(&second.loc, "stencil_read");
    let msg = r.message();
    assert!(
        msg.contains("thread (0, 0, 0) of block (0, 0, 0) writes it at tests/sanitizer.rs:"),
        "{msg}"
    );
}

// ============================================================ 11. shuffle from a lane that exited

#[kernel]
fn shuffle_after_exit(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let sum = v + shuffle_down(v, 1); // BUG(shuffle_exited)
    y[i] = sum;
}

#[test]
fn shuffle_from_a_lane_that_exited() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(40)).unwrap();
    let mut y = dev.alloc::<f32>(40).unwrap();
    let r = report(shuffle_after_exit.launch(&dev, dims1d(1), dims1d(64), (&x, &mut y)));
    // Warp 1 holds threads 32..64; threads 40.. returned; lane 7 (thread 39) reads lane 8.
    let InterpErrorKind::InactiveLane {
        lane,
        src_lane,
        absent,
        ..
    } = &r.kind
    else {
        panic!("{r}")
    };
    assert_eq!((*lane, *src_lane, *absent), (7, 8, false));
    assert_eq!(r.thread, [39, 0, 0]);
    assert_at(&r.loc, "shuffle_exited");
}

// ============================================================ 12. butterfly assuming 32 lanes in a 16-thread block

#[kernel]
fn butterfly_small_block(x: &[u32], y: &mut [u32]) {
    let i = global_id_x();
    let mut v = x[i];
    let mut m = 16usize;
    while m > 0 {
        v += shuffle_xor(v, m); // BUG(butterfly)
        m /= 2;
    }
    y[i] = v;
}

#[test]
fn butterfly_over_32_lanes_in_a_16_thread_block_reads_an_absent_lane() {
    let dev = interpreter();
    let x = dev.upload(&[1u32; 16]).unwrap();
    let mut y = dev.alloc::<u32>(16).unwrap();
    let r = report(butterfly_small_block.launch(&dev, dims1d(1), dims1d(16), (&x, &mut y)));
    let InterpErrorKind::InactiveLane {
        lane,
        src_lane,
        absent,
        ..
    } = &r.kind
    else {
        panic!("{r}")
    };
    assert_eq!((*lane, *src_lane, *absent), (0, 16, true));
    assert_at(&r.loc, "butterfly");
}

// ============================================================ 13. write-write race on one slot

#[kernel]
fn last_writer_wins(out: &mut [u32]) {
    let slot = shared_array::<u32, 1>();
    let t = thread_idx_x();
    slot[0] = t as u32; // BUG(write_write)
    sync_threads();
    out[global_id_x()] = slot[0];
}

#[test]
fn every_thread_writing_one_shared_slot_races() {
    let dev = interpreter();
    let mut out = dev.alloc::<u32>(32).unwrap();
    let r = report(last_writer_wins.launch(&dev, dims1d(1), dims1d(32), (&mut out,)));
    let InterpErrorKind::DataRace { first, second, .. } = &r.kind else {
        panic!("{r}")
    };
    assert_eq!((first.thread, first.kind), ([0, 0, 0], AccessKind::Write));
    assert_eq!((second.thread, second.kind), ([1, 0, 0], AccessKind::Write));
    assert_at(&first.loc, "write_write");
    assert_at(&second.loc, "write_write");
}

// ============================================================ 14. division by zero in a stencil

#[kernel]
fn weighted_stencil(x: &[i32], w: &[i32], y: &mut [i32]) {
    let i = global_id_x();
    if i > 0 && i + 1 < x.len() {
        let s = x[i - 1] + x[i] + x[i + 1];
        y[i] = s / w[i]; // BUG(div_zero)
    }
}

#[test]
fn integer_division_by_zero_in_a_stencil() {
    let dev = interpreter();
    let x: Vec<i32> = (0..64).collect();
    let w: Vec<i32> = (0..64).map(|i| i % 7).collect();
    let xb = dev.upload(&x).unwrap();
    let wb = dev.upload(&w).unwrap();
    let mut y = dev.alloc::<i32>(64).unwrap();
    let r = report(weighted_stencil.launch(&dev, dims1d(2), dims1d(32), (&xb, &wb, &mut y)));
    assert_eq!(r.kind, InterpErrorKind::DivisionByZero);
    assert_eq!((r.block, r.thread), ([0, 0, 0], [7, 0, 0]));
    assert_at(&r.loc, "div_zero");
}

// ============================================================ 15. local array indexed past its end

#[kernel]
fn row_sums_local(x: &[f32], y: &mut [f32], width: usize) {
    let r = global_id_x();
    let mut acc = [0.0f32; 4];
    for k in 0..width {
        acc[k % 8] += x[r * width + k]; // BUG(local_oob)
    }
    y[r] = acc[0] + acc[1] + acc[2] + acc[3];
}

#[test]
fn local_array_indexed_past_its_end() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(8 * 6)).unwrap();
    let mut y = dev.alloc::<f32>(8).unwrap();
    let r = report(row_sums_local.launch(&dev, dims1d(1), dims1d(8), (&x, &mut y, 6usize)));
    assert_eq!(
        r.kind,
        InterpErrorKind::OutOfBounds {
            space: MemorySpace::Local,
            array: "acc".into(),
            index: 4,
            len: 4
        }
    );
    assert_eq!(r.thread, [0, 0, 0]);
    assert_at(&r.loc, "local_oob");
}

// ============================================================ 15b. a fault inside a #[device] helper

#[device]
fn ratio(a: i32, b: i32) -> i32 {
    let r = a / b; // BUG(helper_div)
    r
}

#[kernel]
fn ratios(x: &[i32], w: &[i32], y: &mut [i32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = ratio(x[i], w[i]);
    }
}

#[test]
fn a_fault_in_a_helper_names_the_helper_and_its_line() {
    let dev = interpreter();
    let x = dev.upload(&[10i32, 20, 30, 40]).unwrap();
    let w = dev.upload(&[1i32, 2, 0, 4]).unwrap();
    let mut y = dev.alloc::<i32>(4).unwrap();
    let r = report(ratios.launch(&dev, dims1d(1), dims1d(4), (&x, &w, &mut y)));
    assert_eq!(r.kind, InterpErrorKind::DivisionByZero);
    assert_eq!(r.thread, [2, 0, 0]);
    assert_at(&r.loc, "helper_div");
    assert_eq!(
        r.loc.as_ref().and_then(|l| l.function.as_deref()),
        Some("ratio")
    );
    let (line, column) = marked("helper_div");
    assert!(
        r.message()
            .starts_with(&format!("{FILE}:{line}:{column} (in helper `ratio`): ")),
        "{}",
        r.message()
    );
}

// ============================================================ 16. warp-synchronous reduction without sync_warp

#[kernel]
fn warp_reduce_legacy(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 64>();
    let t = thread_idx_x();
    s[t] = x[global_id_x()];
    sync_threads();
    if t < 32 {
        s[t] += s[t + 16]; // BUG(warp_legacy)
        s[t] += s[t + 8];
        s[t] += s[t + 4];
        s[t] += s[t + 2];
        s[t] += s[t + 1]; // BUG(warp_legacy_read)
    }
    if t == 0 {
        out[block_idx_x()] = s[0];
    }
}

#[test]
fn warp_synchronous_reduction_without_sync_warp_races_within_the_warp() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(64)).unwrap();
    let mut out = dev.alloc::<f32>(1).unwrap();
    let r = report(warp_reduce_legacy.launch(&dev, dims1d(1), dims1d(64), (&x, &mut out)));
    let InterpErrorKind::DataRace {
        index,
        first,
        second,
        ..
    } = &r.kind
    else {
        panic!("{r}")
    };
    // Lane 0 ran its five steps first and read s[1] in the last; lane 1 then writes s[1] in its
    // first: lanes of one warp are not ordered without `sync_warp()` (independent thread
    // scheduling, Volta and later).
    assert_eq!(*index, 1);
    assert_eq!((first.thread, first.kind), ([0, 0, 0], AccessKind::Read));
    assert_eq!((second.thread, second.kind), ([1, 0, 0], AccessKind::Write));
    assert_at(&first.loc, "warp_legacy_read");
    assert_at(&second.loc, "warp_legacy");
}

// ============================================================ 17. atomics, then a plain read with no barrier

#[kernel]
fn count_then_read(x: &[f32], y: &mut [u32]) {
    let count = shared_array::<u32, 1>();
    let t = thread_idx_x();
    if t == 0 {
        count[0] = 0u32;
    }
    sync_threads();
    if x[global_id_x()] > 0.0f32 {
        atomic_add(&mut count[0], 1u32); // BUG(atomic_then_read)
    }
    y[global_id_x()] = count[0]; // BUG(plain_read)
}

#[test]
fn reading_an_atomic_counter_before_the_barrier_races() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(32)).unwrap();
    let mut y = dev.alloc::<u32>(32).unwrap();
    let r = report(count_then_read.launch(&dev, dims1d(1), dims1d(32), (&x, &mut y)));
    let InterpErrorKind::DataRace { first, second, .. } = &r.kind else {
        panic!("{r}")
    };
    assert_eq!((first.thread, first.kind), ([0, 0, 0], AccessKind::Read));
    assert_eq!(
        (second.thread, second.kind),
        ([1, 0, 0], AccessKind::Atomic)
    );
    assert_at(&first.loc, "plain_read");
    assert_at(&second.loc, "atomic_then_read");
}

// ============================================================ 18. atomics on an uninitialised shared counter

#[kernel]
fn count_uninitialised(x: &[f32], y: &mut [u32]) {
    let count = shared_array::<u32, 1>();
    if x[global_id_x()] > 0.0f32 {
        atomic_add(&mut count[0], 1u32); // BUG(atomic_uninit)
    }
    sync_threads();
    if thread_idx_x() == 0 {
        y[block_idx_x()] = count[0];
    }
}

#[test]
fn atomic_on_a_never_initialised_shared_counter() {
    let dev = interpreter();
    let x = dev.upload(&seq_f32(32)).unwrap();
    let mut y = dev.alloc::<u32>(1).unwrap();
    let r = report(count_uninitialised.launch(&dev, dims1d(1), dims1d(32), (&x, &mut y)));
    assert_eq!(
        r.kind,
        InterpErrorKind::UninitializedShared {
            array: "count".into(),
            index: 0,
            len: 1
        }
    );
    assert_at(&r.loc, "atomic_uninit");
}

// ============================================================ 19. global races (opt-in)

#[kernel]
fn sum_without_atomics(x: &[f32], total: &mut [f32]) {
    let i = global_id_x();
    if i < x.len() {
        total[0] += x[i]; // BUG(global_sum)
    }
}

#[kernel]
fn partials_to_one_slot(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 32>();
    let t = thread_idx_x();
    s[t] = x[global_id_x()];
    sync_threads();
    if t == 0 {
        let mut acc = 0.0f32;
        for k in 0usize..32 {
            acc += s[k];
        }
        out[0] = acc; // BUG(global_slot)
    }
}

#[test]
fn global_races_are_reported_when_asked_for() {
    spoc::interpreter::set_global_race_check(true);
    assert!(spoc::interpreter::checks().unwrap().global_races);
    let dev = interpreter();
    let x = dev.upload(&seq_f32(256)).unwrap();
    let mut total = dev.upload(&[0.0f32]).unwrap();
    let r = report(sum_without_atomics.launch(&dev, dims1d(2), dims1d(128), (&x, &mut total)));
    let InterpErrorKind::DataRace {
        space,
        array,
        first,
        second,
        ..
    } = &r.kind
    else {
        panic!("{r}")
    };
    assert_eq!((*space, array.as_str()), (MemorySpace::Global, "total"));
    assert_ne!(
        (first.block, first.thread),
        (second.block, second.thread),
        "{r}"
    );
    assert_at(&first.loc, "global_sum");
    assert_at(&second.loc, "global_sum");

    // Each block's thread 0 writes its partial sum to out[0] instead of out[block]: a race
    // between blocks, which no barrier can order.
    let x = dev.upload(&seq_f32(128)).unwrap();
    let mut out = dev.upload(&[0.0f32; 4]).unwrap();
    let r = report(partials_to_one_slot.launch(&dev, dims1d(4), dims1d(32), (&x, &mut out)));
    let InterpErrorKind::DataRace { first, second, .. } = &r.kind else {
        panic!("{r}")
    };
    assert_eq!((first.thread, second.thread), ([0, 0, 0], [0, 0, 0]));
    assert_ne!(first.block, second.block);
    assert_eq!(
        (first.kind, second.kind),
        (AccessKind::Write, AccessKind::Write)
    );
    assert_at(&second.loc, "global_slot");
}

// ============================================================ SPOC_CHECK on the Native device

#[test]
fn checked_launch_on_native_reports_the_interpreters_race() {
    let native = spoc::init_device(Some("Native")).expect("the Native backend is always there");
    let data: Vec<u32> = (0..256).collect();
    let d = native.upload(&data).unwrap();
    let mut out = native.upload(&[0u32; 16]).unwrap();
    spoc::set_checking(true);
    let r = histogram_no_atomics.launch(&native, dims1d(2), dims1d(128), (&d, &mut out));
    spoc::set_checking(false);
    let e = r.expect_err("the checked launch must fail");
    let msg = e.to_string();
    assert!(msg.contains("SPOC_CHECK (Interpreter)"), "{msg}");
    assert!(
        msg.contains("data race on shared array `h` element 0"),
        "{msg}"
    );
    let (line, column) = marked("histogram");
    assert!(msg.contains(&format!("{FILE}:{line}:{column}")), "{msg}");
    assert!(
        matches!(
            e,
            Error::KernelFault {
                thread: Some([16, 0, 0]),
                ..
            }
        ),
        "{e}"
    );
    // The real launch did not run.
    assert_eq!(out.to_vec().unwrap(), [0u32; 16]);
    let r = take_last_report().expect("the typed report");
    assert!(matches!(r.kind, InterpErrorKind::DataRace { .. }), "{r}");
}

// ============================================================ correct kernels: no report

#[kernel]
fn warp_reduce_synced(x: &[f32], out: &mut [f32]) {
    let s = shared_array::<f32, 64>();
    let t = thread_idx_x();
    s[t] = x[global_id_x()];
    sync_threads();
    if t < 32 {
        s[t] += s[t + 32];
        sync_warp();
        let mut off = 16usize;
        while off > 0 {
            let v = s[t] + s[(t + off) % 32];
            sync_warp();
            s[t] = v;
            sync_warp();
            off /= 2;
        }
    }
    if t == 0 {
        out[block_idx_x()] = s[0];
    }
}

#[kernel]
fn histogram_ok(data: &[u32], out: &mut [u32]) {
    let h = shared_array::<u32, 16>();
    let t = thread_idx_x();
    let i = global_id_x();
    if t < 16 {
        h[t] = 0u32;
    }
    sync_threads();
    if i < data.len() {
        atomic_add(&mut h[(data[i] % 16) as usize], 1u32);
    }
    sync_threads();
    if t < 16 {
        atomic_add(&mut out[t], h[t]);
    }
}

#[kernel]
fn warp_sum_shuffle(x: &[u32], y: &mut [u32]) {
    let i = global_id_x();
    let mut v = x[i];
    let mut off = 16usize;
    while off > 0 {
        v += shuffle_down(v, off);
        off /= 2;
    }
    if lane_id() == 0 {
        y[i / 32] = v;
    }
}

/// Every check on, global races included.
struct AllChecks;

impl AllChecks {
    fn on() -> AllChecks {
        spoc::interpreter::set_global_race_check(true);
        AllChecks
    }
}

#[test]
fn correct_shared_memory_kernels_have_no_report() {
    let _on = AllChecks::on();
    let dev = interpreter();
    let n = 1024usize;
    let xs = seq_f32(n);
    let x = dev.upload(&xs).unwrap();
    let mut out = dev.alloc::<f32>(4).unwrap();
    reduce_ok
        .launch(&dev, dims1d(4), dims1d(256), (&x, &mut out))
        .unwrap();
    let got = out.to_vec().unwrap();
    for (b, g) in got.iter().enumerate() {
        let want: f32 = xs[b * 256..(b + 1) * 256].iter().sum();
        assert!((g - want).abs() <= want * 1e-5, "block {b}: {g} vs {want}");
    }

    let mut out = dev.alloc::<f32>(16).unwrap();
    warp_reduce_synced
        .launch(&dev, dims1d(16), dims1d(64), (&x, &mut out))
        .unwrap();
    let got = out.to_vec().unwrap();
    for (b, g) in got.iter().enumerate() {
        let want: f32 = xs[b * 64..(b + 1) * 64].iter().sum();
        assert!((g - want).abs() <= want * 1e-5, "block {b}: {g} vs {want}");
    }

    let data: Vec<u32> = (0..1000).map(|i| i * 7 + 3).collect();
    let d = dev.upload(&data).unwrap();
    let mut h = dev.upload(&[0u32; 16]).unwrap();
    histogram_ok
        .launch(&dev, dims1d(8), dims1d(128), (&d, &mut h))
        .unwrap();
    let mut want = [0u32; 16];
    for v in &data {
        want[(v % 16) as usize] += 1;
    }
    assert_eq!(h.to_vec().unwrap(), want);

    let ones = dev.upload(&[1u32; 128]).unwrap();
    let mut sums = dev.alloc::<u32>(4).unwrap();
    warp_sum_shuffle
        .launch(&dev, dims1d(2), dims1d(64), (&ones, &mut sums))
        .unwrap();
    assert_eq!(sums.to_vec().unwrap(), [32; 4]);
    assert!(take_last_report().is_none());
}

// ============================================================ lanes of one shared vector

/// Threads `4 v .. 4 v + 3` each write their own lane of shared vector `v` (different bytes: no
/// race on a GPU), then, after the barrier, thread `v` reads the whole vector.
#[kernel]
fn lanes_of_shared_vectors(y: &mut [F32x4]) {
    let tile = shared_array::<F32x4, 8>();
    let t = thread_idx_x();
    let v = (t % 32) / 4;
    let x = t as f32;
    match t % 4 {
        0 => tile[v].x = x,
        1 => tile[v].y = x,
        2 => tile[v].z = x,
        _ => tile[v].w = x, // BUG(lane_w)
    }
    sync_threads();
    if t < 8 {
        y[t] = tile[t];
    }
}

#[test]
fn different_lanes_of_a_shared_vector_do_not_race_and_the_same_lane_does() {
    let dev = interpreter();
    let mut y = dev.alloc::<F32x4>(8).unwrap();
    lanes_of_shared_vectors
        .launch(&dev, dims1d(1), dims1d(32), (&mut y,))
        .expect("lanes written by different threads are different bytes");
    let want: Vec<F32x4> = (0..8)
        .map(|v| {
            let b = 4.0 * v as f32;
            F32x4::new(b, b + 1.0, b + 2.0, b + 3.0)
        })
        .collect();
    assert_eq!(y.to_vec().unwrap(), want);
    // 64 threads: threads t and t + 32 write the same lane of the same vector.
    let r = report(lanes_of_shared_vectors.launch(&dev, dims1d(1), dims1d(64), (&mut y,)));
    let InterpErrorKind::DataRace {
        index,
        first,
        second,
        ..
    } = &r.kind
    else {
        panic!("{r}")
    };
    assert_eq!(
        (first.kind, second.kind),
        (AccessKind::Write, AccessKind::Write)
    );
    assert_eq!(second.thread[0], first.thread[0] + 32, "{r}");
    assert_eq!(*index as u32, (first.thread[0] % 32) / 4);
    let _ = marked("lane_w");
}
