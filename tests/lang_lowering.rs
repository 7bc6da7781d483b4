//! The kernel-language constructs of the language issue, through the whole `#[kernel]` path:
//! shared arrays (1-D, 2-D, sized at launch), barriers and fences, atomics, warp operations,
//! local arrays and `match`. Each kernel's IR is checked (it is validated when loaded, and its
//! printout holds the construct); each runs on the Interpreter where the Interpreter runs the
//! construct, and otherwise its generated OpenCL C is checked for the construct.

/// The kernels the examples share (one definition for the examples and the tests).
#[path = "../examples/programs/kernels.rs"]
#[allow(dead_code)]
mod shared_kernels;

use shared_kernels::tile_sum as block_sum;
use spoc::prelude::*;
use spoc::{Device, Target};
use spoc_testkit::assert_contains_all as assert_has;

fn interpreter() -> Device {
    spoc::init_device(Some("Interpreter")).expect("the Interpreter is always available")
}

/// True if the launch ran; false if the Interpreter does not run the kernel's constructs yet.
fn ran(r: spoc::Result<()>) -> bool {
    match r {
        Ok(()) => true,
        Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
            eprintln!("not run on the Interpreter yet: {feature}");
            false
        }
        Err(e) => panic!("launch failed: {e}"),
    }
}

/// The printed IR of a kernel.
fn ir_text(ir: spoc::Result<&'static spoc::ir::Kernel>) -> String {
    ir.expect("the IR loads and validates").to_string()
}

/// The generated OpenCL C of a kernel.
fn opencl(src: spoc::Result<Option<spoc::Source>>) -> String {
    let src = src
        .expect("OpenCL C is generated")
        .expect("OpenCL has source");
    src.text().expect("OpenCL C is text").to_string()
}

// ---- atomics ----

/// Counts the values of `x` modulo 4.
#[kernel]
fn histogram(x: &[u32], h: &mut [u32]) {
    let i = global_id_x();
    if i < x.len() {
        atomic_add(&mut h[(x[i] % 4) as usize], 1u32);
    }
}

#[test]
fn histogram_counts_with_atomic_add() {
    let ir = ir_text(histogram.ir());
    assert_has(&ir, &["atomic_add"]);
    assert_has(&opencl(histogram.source(Target::OpenCl)), &["atomic_add("]);
    let dev = interpreter();
    let xs: Vec<u32> = (0..1000).map(|i| (i * 7 + 3) % 11).collect();
    let x = dev.upload(&xs).unwrap();
    let mut h = dev.upload(&[0u32; 4]).unwrap();
    histogram
        .launch(&dev, dims1d(8), dims1d(128), (&x, &mut h))
        .unwrap();
    let mut want = [0u32; 4];
    for v in &xs {
        want[(v % 4) as usize] += 1;
    }
    assert_eq!(h.to_vec().unwrap(), want);
}

/// Every atomic, by every thread: `r` = [add, sub, min, max, or, and, xor, exchange, cas, cas
/// wins],
/// `f` = [float add], `old` = each thread's value returned by `atomic_add`.
#[kernel]
fn all_atomics(r: &mut [i64], f: &mut [f32], old: &mut [i64]) {
    let i = global_id_x() as i64;
    old[i as usize] = atomic_add(&mut r[0], i + 1);
    atomic_sub(&mut r[1], i);
    atomic_min(&mut r[2], 100 - i);
    atomic_max(&mut r[3], i * 3);
    atomic_or(&mut r[4], 1i64 << (i % 60));
    atomic_and(&mut r[5], !(1i64 << (i % 7)));
    atomic_xor(&mut r[6], i);
    atomic_exchange(&mut r[7], i + 1000);
    if atomic_compare_exchange(&mut r[8], 0, i + 1) == 0 {
        atomic_add(&mut r[9], 1);
    }
    atomic_add(&mut f[0], 0.5);
}

#[test]
fn every_atomic_has_its_meaning() {
    let ir = ir_text(all_atomics.ir());
    assert_has(
        &ir,
        &[
            "atomic_sub",
            "atomic_min",
            "atomic_max",
            "atomic_or",
            "atomic_and",
            "atomic_xor",
            "atomic_exchange",
            "atomic_compare_exchange",
        ],
    );
    let dev = interpreter();
    let n = 64i64;
    let mut r = dev.upload(&[0, 0, i64::MAX, 0, 0, -1, 0, 0, 0, 0]).unwrap();
    let mut f = dev.upload(&[0.0f32]).unwrap();
    let mut old = dev.upload(&vec![-1i64; n as usize]).unwrap();
    all_atomics
        .launch(&dev, dims1d(2), dims1d(32), (&mut r, &mut f, &mut old))
        .unwrap();
    let r = r.to_vec().unwrap();
    let sum: i64 = (0..n).sum();
    assert_eq!(r[0], sum + n);
    assert_eq!(r[1], -sum);
    assert_eq!(r[2], 100 - (n - 1));
    assert_eq!(r[3], 3 * (n - 1));
    assert_eq!(r[4], (0..n).fold(0, |a, i| a | 1 << (i % 60)));
    assert_eq!(r[5], !0x7f);
    assert_eq!(r[6], (0..n).fold(0, |a, i| a ^ i));
    assert!((1000..1000 + n).contains(&r[7]), "{}", r[7]);
    assert!((1..=n).contains(&r[8]), "{}", r[8]);
    assert_eq!(r[9], 1, "exactly one compare-exchange wins");
    assert_eq!(f.to_vec().unwrap(), [0.5 * n as f32]);
    // The values returned by `atomic_add` are the partial sums each thread saw: all distinct,
    // as every thread adds at least 1.
    let mut olds = old.to_vec().unwrap();
    olds.sort_unstable();
    olds.dedup();
    assert_eq!(olds.len(), n as usize);
}

/// A helper with an atomic, also callable on the host.
#[device]
fn bump(h: &mut [u32], i: usize) -> u32 {
    atomic_add(&mut h[i], 2u32)
}

#[kernel]
fn bumps(h: &mut [u32]) {
    let _: u32 = bump(h, global_id_x() % 2);
}

#[test]
fn atomics_in_device_helpers_run_on_host_and_device() {
    let mut host = [5u32, 7];
    assert_eq!(bump(&mut host, 1), 7);
    assert_eq!(host, [5, 9]);
    assert_eq!(atomic_compare_exchange(&mut host[0], 5, 1), 5);
    assert_eq!(atomic_compare_exchange(&mut host[0], 5, 2), 1);
    assert_eq!(host[0], 1);
    let dev = interpreter();
    let mut h = dev.upload(&[0u32, 0]).unwrap();
    bumps
        .launch(&dev, dims1d(1), dims1d(10), (&mut h,))
        .unwrap();
    assert_eq!(h.to_vec().unwrap(), [10, 10]);
}

// ---- local arrays ----

/// Per-thread running maximum of a window of 8, in a local array.
#[kernel]
fn window(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    if i + 8 > x.len() {
        return;
    }
    let mut w = [0.0f32; 8];
    for j in 0..w.len() {
        w[j] = x[i + j];
    }
    let mut best = w[0];
    for j in 1..8 {
        best = best.max(w[j]);
        w[j] = best;
    }
    out[i] = w[7] + w.len() as f32;
}

#[test]
fn local_arrays_are_private_per_thread() {
    let ir = ir_text(window.ir());
    assert_has(&ir, &["[0.0f32; 8]"]);
    let dev = interpreter();
    let xs: Vec<f32> = (0..40).map(|i| ((i * 37) % 17) as f32).collect();
    let x = dev.upload(&xs).unwrap();
    let mut out = dev.upload(&[0.0f32; 40]).unwrap();
    window
        .launch(&dev, dims1d(1), dims1d(40), (&x, &mut out))
        .unwrap();
    let out = out.to_vec().unwrap();
    for i in 0..=32 {
        let m = xs[i..i + 8].iter().cloned().fold(f32::MIN, f32::max);
        assert_eq!(out[i], m + 8.0, "thread {i}");
    }
    assert_eq!(out[33], 0.0);
}

// ---- match ----

/// Classifies integers with `match` as a statement and as a value.
#[kernel]
fn classify(x: &[i32], class: &mut [u32], value: &mut [f32]) {
    let i = global_id_x();
    if i >= x.len() {
        return;
    }
    match x[i] {
        0 => class[i] = 0,
        1 | 2 | 3 => class[i] = 1,
        -10..=-1 => {
            class[i] = 2;
        }
        4..100 => class[i] = 3,
        _ => class[i] = 4,
    }
    value[i] = match x[i] {
        i32::MIN..=-1 => -1.0,
        0 => 0.0,
        _ => 1.0,
    };
}

#[test]
fn match_classifies_integers() {
    let ir = ir_text(classify.ir());
    assert_has(&ir, &["match", "-10..=-1", "4..=99", "_ =>"]);
    let dev = interpreter();
    let xs = [0, 1, 3, 4, 99, 100, -1, -10, -11, i32::MIN, i32::MAX, 2];
    let x = dev.upload(&xs).unwrap();
    let mut c = dev.upload(&[9u32; 12]).unwrap();
    let mut v = dev.upload(&[9.0f32; 12]).unwrap();
    classify
        .launch(&dev, dims1d(1), dims1d(12), (&x, &mut c, &mut v))
        .unwrap();
    assert_eq!(c.to_vec().unwrap(), [0, 1, 1, 3, 3, 4, 2, 2, 4, 4, 4, 1]);
    let want: Vec<f32> = xs.iter().map(|&v| v.signum() as f32).collect();
    assert_eq!(v.to_vec().unwrap(), want);
}

// ---- shared memory and barriers ----

#[test]
fn shared_array_reduction() {
    let ir = ir_text(block_sum.ir());
    assert_has(&ir, &["shared tile: [f32; 256]", "sync_threads()"]);
    assert_has(
        &opencl(block_sum.source(Target::OpenCl)),
        &["__local float", "barrier("],
    );
    let dev = interpreter();
    let xs: Vec<f32> = (0..1024).map(|i| (i % 10) as f32).collect();
    let x = dev.upload(&xs).unwrap();
    let mut sums = dev.upload(&[0.0f32; 4]).unwrap();
    if ran(block_sum.launch(&dev, dims1d(4), dims1d(256), (&x, &mut sums))) {
        let want: Vec<f32> = xs.chunks(256).map(|c| c.iter().sum()).collect();
        assert_eq!(sums.to_vec().unwrap(), want);
    }
}

/// Transposes a 16 x 16 matrix through a padded 2-D shared tile.
#[kernel]
fn transpose16(a: &[f32], t: &mut [f32]) {
    let tile = shared_array_2d::<f32, 16, 17>();
    let r = thread_idx_y();
    let c = thread_idx_x();
    tile[r][c] = a[r * 16 + c];
    sync_threads();
    t[r * 16 + c] = tile[c][r] + (tile.len() - 16) as f32;
}

#[test]
fn shared_2d_transpose() {
    let k = transpose16.ir().unwrap();
    assert_eq!(k.shared.len(), 1);
    assert_eq!(k.shared[0].len, Some(16 * 17));
    assert_has(&k.to_string(), &["17u32"]);
    assert_has(&opencl(transpose16.source(Target::OpenCl)), &["[272]"]);
    let dev = interpreter();
    let m: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let a = dev.upload(&m).unwrap();
    let mut t = dev.upload(&[0.0f32; 256]).unwrap();
    if ran(transpose16.launch(&dev, dims1d(1), dims2d(16, 16), (&a, &mut t))) {
        let t = t.to_vec().unwrap();
        for r in 0..16 {
            for c in 0..16 {
                assert_eq!(t[r * 16 + c], m[c * 16 + r]);
            }
        }
    }
}

/// Reverses each block's values through the shared array sized at launch.
#[kernel]
fn reverse_dynamic(x: &mut [u32]) {
    let buf = dynamic_shared::<u32>();
    let t = thread_idx_x();
    let n = buf.len();
    if t < n {
        buf[t] = x[global_id_x()];
    }
    sync_threads();
    if t < n {
        x[global_id_x()] = buf[n - 1 - t];
    }
}

#[test]
fn dynamic_shared_with_launch_with_shared() {
    let k = reverse_dynamic.ir().unwrap();
    assert_eq!(k.shared[0].len, None);
    assert_has(
        &k.to_string(),
        &["shared buf: [u32]; // sized at launch", "len(buf)"],
    );
    assert_has(
        &opencl(reverse_dynamic.source(Target::OpenCl)),
        &["__local"],
    );
    let dev = interpreter();
    let mut x = dev.upload(&(0..128u32).collect::<Vec<_>>()).unwrap();
    let bytes = 64 * std::mem::size_of::<u32>();
    if ran(reverse_dynamic.launch_with_shared(&dev, dims1d(2), dims1d(64), bytes, (&mut x,))) {
        let want: Vec<u32> = (0..2)
            .flat_map(|b| (0..64).rev().map(move |t| b * 64 + t))
            .collect();
        assert_eq!(x.to_vec().unwrap(), want);
    }
}

/// Fences and warp barriers.
#[kernel]
fn fences(x: &mut [u32]) {
    let i = global_id_x();
    x[i] = 1;
    thread_fence_block();
    thread_fence();
    sync_warp();
    x[i] += 1;
}

#[test]
fn fences_are_statements() {
    let ir = ir_text(fences.ir());
    assert_has(&ir, &["fence_block();", "fence_device();", "sync_warp();"]);
    let dev = interpreter();
    let mut x = dev.upload(&[0u32; 32]).unwrap();
    if ran(fences.launch(&dev, dims1d(1), dims1d(32), (&mut x,))) {
        assert_eq!(x.to_vec().unwrap(), [2; 32]);
    }
}

// ---- warps ----

/// Warp sums with `shuffle_down`, a `ballot` of the odd values, votes and a broadcast.
#[kernel]
fn warp_ops(x: &[i32], sums: &mut [i32], masks: &mut [u32], flags: &mut [u32]) {
    let i = global_id_x();
    let lane = lane_id();
    let mut s = x[i];
    let mut off = warp_size() / 2;
    while off > 0 {
        s += shuffle_down(s, off);
        off /= 2;
    }
    let first = shuffle(x[i], 0);
    let swapped = shuffle_xor(x[i], 1);
    let odd = ballot(x[i] % 2 == 1);
    let any = vote_any(x[i] > 40);
    let all = vote_all(x[i] >= 0);
    if lane == 0 {
        let w = i / 32;
        sums[w] = s;
        masks[w] = odd;
        flags[w] = (any as u32) | ((all as u32) << 1);
    }
    if swapped != x[i ^ 1] || first != x[i - lane] {
        flags[i / 32] = 99;
    }
}

#[test]
fn warp_reduction_ballot_and_votes() {
    let ir = ir_text(warp_ops.ir());
    assert_has(
        &ir,
        &[
            "lane_id()",
            "warp_size()",
            "shuffle_down(",
            "shuffle_xor(",
            "ballot(",
            "vote_any(",
            "vote_all(",
        ],
    );
    let dev = interpreter();
    let xs: Vec<i32> = (0..64).collect();
    let x = dev.upload(&xs).unwrap();
    let mut sums = dev.upload(&[0i32; 2]).unwrap();
    let mut masks = dev.upload(&[0u32; 2]).unwrap();
    let mut flags = dev.upload(&[0u32; 2]).unwrap();
    let r = warp_ops.launch(
        &dev,
        dims1d(1),
        dims1d(64),
        (&x, &mut sums, &mut masks, &mut flags),
    );
    if ran(r) {
        assert_eq!(
            sums.to_vec().unwrap(),
            [(0..32).sum::<i32>(), (32..64).sum()]
        );
        assert_eq!(masks.to_vec().unwrap(), [0xaaaa_aaaa, 0xaaaa_aaaa]);
        // Warp 0: no value above 40, all non-negative; warp 1: some above 40.
        assert_eq!(flags.to_vec().unwrap(), [2, 3]);
    }
}
