//! The Native backend runs kernels with barriers, shared memory, atomics, warp operations, local
//! arrays and `match` (issue 5): each result is compared with a host computation. Barrier and
//! warp kernels run on the SIMT scheduler (a coroutine per GPU thread), so blocks of 1024
//! threads need no OS thread per GPU thread, and a barrier that only part of a block reaches is
//! an error, not a hang.

/// The kernels the examples share (one definition for the examples and the tests).
#[path = "../examples/programs/kernels.rs"]
#[allow(dead_code)]
mod shared_kernels;

use shared_kernels::block_sum_1024 as block_sum;
use spoc::prelude::*;
use spoc::Error;

fn native() -> Device {
    spoc::init_device(Some("Native")).expect("the Native backend is always available")
}

/// The message of a launch's kernel fault; panics if it did not fault.
fn fault_message(r: spoc::Result<()>) -> ([u32; 3], [u32; 3], String) {
    match r {
        Err(Error::KernelFault {
            block,
            thread,
            message,
            ..
        }) => (
            block.expect("a CPU fault knows its block"),
            thread.expect("a CPU fault knows its thread"),
            message,
        ),
        other => panic!("expected a kernel fault, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared memory and barriers

#[test]
fn shared_tree_reduction_at_block_256_and_1024() {
    let dev = native();
    let n = 5000usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    for block in [256u32, 1024] {
        let blocks = n.div_ceil(block as usize);
        let xb = dev.upload(&x).unwrap();
        let mut out = dev.alloc::<f32>(blocks).unwrap();
        block_sum
            .launch(&dev, dims1d(blocks as u32), dims1d(block), (&xb, &mut out))
            .unwrap();
        let want: Vec<f32> = x
            .chunks(block as usize)
            .map(|c| c.iter().sum::<f32>())
            .collect();
        assert_eq!(out.to_vec().unwrap(), want, "block {block}");
    }
}

#[kernel]
fn transpose(a: &[f32], b: &mut [f32], w: u32, h: u32) {
    let tile = shared_array_2d::<f32, 16, 17>();
    let w = w as usize;
    let h = h as usize;
    let x = block_idx_x() * 16 + thread_idx_x();
    let y = block_idx_y() * 16 + thread_idx_y();
    if x < w && y < h {
        tile[thread_idx_y()][thread_idx_x()] = a[y * w + x];
    }
    sync_threads();
    let tx = block_idx_y() * 16 + thread_idx_x();
    let ty = block_idx_x() * 16 + thread_idx_y();
    if tx < h && ty < w {
        b[ty * h + tx] = tile[thread_idx_x()][thread_idx_y()];
    }
}

#[test]
fn tiled_transpose() {
    let dev = native();
    let (w, h) = (50usize, 37usize);
    let a: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5).collect();
    let ab = dev.upload(&a).unwrap();
    let mut bb = dev.alloc::<f32>(w * h).unwrap();
    transpose
        .launch(
            &dev,
            dims2d(w.div_ceil(16) as u32, h.div_ceil(16) as u32),
            dims2d(16, 16),
            (&ab, &mut bb, w as u32, h as u32),
        )
        .unwrap();
    let b = bb.to_vec().unwrap();
    for y in 0..h {
        for x in 0..w {
            assert_eq!(b[x * h + y], a[y * w + x], "({x}, {y})");
        }
    }
}

#[kernel]
fn reverse_blocks(x: &mut [i32], lens: &mut [u32]) {
    let buf = dynamic_shared::<i32>();
    let t = thread_idx_x();
    let i = global_id_x();
    let n = block_dim_x();
    buf[t] = x[i];
    sync_threads();
    x[i] = buf[n - 1 - t];
    if t == 0 {
        lens[block_idx_x()] = buf.len() as u32;
    }
}

#[test]
fn dynamic_shared_is_sized_at_launch() {
    let dev = native();
    let (blocks, block) = (7usize, 96usize);
    let x: Vec<i32> = (0..(blocks * block) as i32).map(|i| i * 3 - 50).collect();
    let mut xb = dev.upload(&x).unwrap();
    let mut lens = dev.alloc::<u32>(blocks).unwrap();
    // Room for 100 elements: more than the block needs.
    reverse_blocks
        .launch_with_shared(
            &dev,
            dims1d(blocks as u32),
            dims1d(block as u32),
            100 * 4 + 3,
            (&mut xb, &mut lens),
        )
        .unwrap();
    let want: Vec<i32> = x
        .chunks(block)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    assert_eq!(xb.to_vec().unwrap(), want);
    assert_eq!(lens.to_vec().unwrap(), vec![100; blocks]);

    // Too little: the shared array is shorter than the block, the access past it faults.
    let mut xb = dev.upload(&x).unwrap();
    let r = reverse_blocks.launch_with_shared(
        &dev,
        dims1d(blocks as u32),
        dims1d(block as u32),
        50 * 4,
        (&mut xb, &mut lens),
    );
    let (_, thread, message) = fault_message(r);
    assert_eq!(thread, [50, 0, 0]);
    assert!(message.contains("out of bounds"), "{message}");
}

#[kernel]
fn histogram(data: &[u32], hist: &mut [u32]) {
    let bins = shared_array::<u32, 64>();
    let t = thread_idx_x();
    let mut i = global_id_x();
    while i < data.len() {
        atomic_add(&mut bins[(data[i] % 64) as usize], 1u32);
        i += global_size_x();
    }
    thread_fence_block();
    sync_threads();
    if t < 64 {
        atomic_add(&mut hist[t], bins[t]);
    }
}

#[test]
fn histogram_with_shared_and_global_atomics() {
    let dev = native();
    let n = 100_000usize;
    let data: Vec<u32> = (0..n as u64)
        .map(|i| (i.wrapping_mul(2654435761) >> 7) as u32)
        .collect();
    let db = dev.upload(&data).unwrap();
    let mut hb = dev.upload(&vec![0u32; 64]).unwrap();
    histogram
        .launch(&dev, dims1d(12), dims1d(128), (&db, &mut hb))
        .unwrap();
    let mut want = vec![0u32; 64];
    for d in &data {
        want[(d % 64) as usize] += 1;
    }
    assert_eq!(hb.to_vec().unwrap(), want);
}

#[kernel]
fn half_barrier(y: &mut [f32]) {
    if thread_idx_x() < 16 {
        sync_threads();
    }
    y[global_id_x()] = 1.0;
}

#[test]
fn a_barrier_reached_by_part_of_a_block_is_an_error() {
    let dev = native();
    let mut yb = dev.alloc::<f32>(128).unwrap();
    let r = half_barrier.launch(&dev, dims1d(2), dims1d(64), (&mut yb,));
    let (block, _, message) = fault_message(r);
    assert_eq!(block, [0, 0, 0]);
    assert!(message.contains("barrier divergence"), "{message}");
    assert!(message.contains("16 threads"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// Atomics

/// A kernel applying every atomic to `a[0..8]` with each value of `v`, and recording what
/// `atomic_exchange` returned in `old`.
macro_rules! all_atomics {
    ($name:ident, $t:ident) => {
        #[kernel]
        fn $name(a: &mut [$t], old: &mut [$t], v: &[$t]) {
            let i = global_id_x();
            if i < v.len() {
                let x = v[i];
                atomic_add(&mut a[0], x);
                atomic_sub(&mut a[1], x);
                atomic_min(&mut a[2], x);
                atomic_max(&mut a[3], x);
                atomic_and(&mut a[4], x);
                atomic_or(&mut a[5], x);
                atomic_xor(&mut a[6], x);
                old[i] = atomic_exchange(&mut a[7], x);
            }
        }
    };
}
all_atomics!(atomics_i32, i32);
all_atomics!(atomics_u32, u32);
all_atomics!(atomics_i64, i64);
all_atomics!(atomics_u64, u64);

/// Runs `k` on values `v` from `init` and checks every element against the host.
macro_rules! check_atomics {
    ($dev:expr, $k:ident, $t:ty, $v:expr) => {{
        let v: Vec<$t> = $v;
        let init: [$t; 8] = [
            7 as $t, 7 as $t, 5 as $t, 5 as $t, !0, 0, 0x55 as $t, 9 as $t,
        ];
        let mut ab = $dev.upload(&init).unwrap();
        let mut ob = $dev.alloc::<$t>(v.len()).unwrap();
        let vb = $dev.upload(&v).unwrap();
        $k.launch(
            &$dev,
            dims1d(v.len().div_ceil(64) as u32),
            dims1d(64),
            (&mut ab, &mut ob, &vb),
        )
        .unwrap();
        let a = ab.to_vec().unwrap();
        let fold = |f: fn($t, $t) -> $t, start: $t| v.iter().fold(start, |acc, &x| f(acc, x));
        assert_eq!(a[0], fold(<$t>::wrapping_add, init[0]), "add");
        assert_eq!(a[1], fold(<$t>::wrapping_sub, init[1]), "sub");
        assert_eq!(a[2], fold(std::cmp::min, init[2]), "min");
        assert_eq!(a[3], fold(std::cmp::max, init[3]), "max");
        assert_eq!(a[4], fold(|p, q| p & q, init[4]), "and");
        assert_eq!(a[5], fold(|p, q| p | q, init[5]), "or");
        assert_eq!(a[6], fold(|p, q| p ^ q, init[6]), "xor");
        // Exchange: the old values and the final one are the initial one and every value.
        let mut seen = ob.to_vec().unwrap();
        seen.push(a[7]);
        seen.sort();
        let mut all = v.clone();
        all.push(init[7]);
        all.sort();
        assert_eq!(seen, all, "exchange");
    }};
}

#[test]
fn every_atomic_on_every_integer_type() {
    let dev = native();
    let n = 1000usize;
    let bits: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7))
        .collect();
    check_atomics!(
        dev,
        atomics_i32,
        i32,
        bits.iter().map(|&b| b as i32).collect()
    );
    check_atomics!(
        dev,
        atomics_u32,
        u32,
        bits.iter().map(|&b| b as u32).collect()
    );
    check_atomics!(
        dev,
        atomics_i64,
        i64,
        bits.iter().map(|&b| b as i64).collect()
    );
    check_atomics!(dev, atomics_u64, u64, bits.clone());
}

#[kernel]
fn float_adds(s32: &mut [f32], s64: &mut [f64], old: &mut [f64], x: &[f32]) {
    let i = global_id_x();
    if i < x.len() {
        atomic_add(&mut s32[0], x[i]);
        old[i] = atomic_add(&mut s64[0], x[i] as f64);
    }
}

#[test]
fn float_atomic_add_on_f32_and_f64() {
    let dev = native();
    let n = 4096usize;
    // Small integers: every order of additions gives the same exact sum.
    let x: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let xb = dev.upload(&x).unwrap();
    let mut s32 = dev.upload(&[1.0f32]).unwrap();
    let mut s64 = dev.upload(&[2.0f64]).unwrap();
    let mut old = dev.alloc::<f64>(n).unwrap();
    float_adds
        .launch(
            &dev,
            dims1d(16),
            dims1d(256),
            (&mut s32, &mut s64, &mut old, &xb),
        )
        .unwrap();
    let sum: f64 = x.iter().map(|&v| v as f64).sum();
    assert_eq!(s32.to_vec().unwrap(), vec![1.0 + sum as f32]);
    assert_eq!(s64.to_vec().unwrap(), vec![2.0 + sum]);
    // Each returned value is a partial sum: between the start and the final value.
    assert!(old
        .to_vec()
        .unwrap()
        .iter()
        .all(|&o| (2.0..=2.0 + sum).contains(&o)));
}

#[kernel]
fn cas_product(acc: &mut [u64], f: &[u64], tickets: &mut [u32]) {
    let i = global_id_x();
    if i < f.len() {
        let mut old = atomic_or(&mut acc[0], 0u64);
        loop {
            let seen = atomic_compare_exchange(&mut acc[0], old, old * f[i]);
            if seen == old {
                break;
            }
            old = seen;
        }
        // A ticket lock in shared memory: each thread of the block takes a distinct ticket.
        let next = shared_array::<u32, 1>();
        let mut mine = 0u32;
        let mut taken = false;
        while !taken {
            let cur = atomic_or(&mut next[0], 0u32);
            taken = atomic_compare_exchange(&mut next[0], cur, cur + 1) == cur;
            mine = cur;
        }
        tickets[i] = mine;
    }
}

#[test]
fn compare_exchange_loops_on_global_and_shared_memory() {
    let dev = native();
    let n = 500usize;
    let f: Vec<u64> = (0..n as u64).map(|i| i * 2 + 1).collect();
    let fb = dev.upload(&f).unwrap();
    let mut acc = dev.upload(&[3u64]).unwrap();
    let mut tickets = dev.alloc::<u32>(n).unwrap();
    cas_product
        .launch(&dev, dims1d(4), dims1d(128), (&mut acc, &fb, &mut tickets))
        .unwrap();
    let want = f.iter().fold(3u64, |a, &x| a.wrapping_mul(x));
    assert_eq!(acc.to_vec().unwrap(), vec![want]);
    let t = tickets.to_vec().unwrap();
    for (b, chunk) in t.chunks(128).enumerate() {
        let mut c = chunk.to_vec();
        c.sort();
        let want: Vec<u32> = (0..chunk.len() as u32).collect();
        assert_eq!(c, want, "block {b}");
    }
}

// ---------------------------------------------------------------------------------------------
// Warp operations

#[kernel]
fn warp_sums(
    x: &[i32],
    down: &mut [i32],
    butterfly: &mut [i32],
    bcast: &mut [i32],
    up: &mut [i32],
) {
    let i = global_id_x();
    let mut v = x[i];
    let mut d = 16;
    while d > 0 {
        v += shuffle_down(v, d);
        d /= 2;
    }
    if lane_id() == 0 {
        down[i / warp_size()] = v;
    }
    let mut w = x[i];
    let mut m = warp_size() / 2;
    while m > 0 {
        w += shuffle_xor(w, m);
        m /= 2;
    }
    butterfly[i] = w;
    bcast[i] = shuffle(x[i], 3);
    up[i] = shuffle_up(x[i], 1);
}

#[test]
fn warp_shuffle_reductions_broadcast_and_up() {
    let dev = native();
    let n = 256usize;
    let x: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 101 - 50).collect();
    let xb = dev.upload(&x).unwrap();
    let mut down = dev.alloc::<i32>(n / 32).unwrap();
    let mut bf = dev.alloc::<i32>(n).unwrap();
    let mut bc = dev.alloc::<i32>(n).unwrap();
    let mut up = dev.alloc::<i32>(n).unwrap();
    warp_sums
        .launch(
            &dev,
            dims1d(2),
            dims1d(128),
            (&xb, &mut down, &mut bf, &mut bc, &mut up),
        )
        .unwrap();
    let sums: Vec<i32> = x.chunks(32).map(|c| c.iter().sum()).collect();
    assert_eq!(down.to_vec().unwrap(), sums);
    let bf = bf.to_vec().unwrap();
    let bc = bc.to_vec().unwrap();
    let up = up.to_vec().unwrap();
    for i in 0..n {
        let w = i / 32 * 32;
        assert_eq!(bf[i], sums[i / 32], "butterfly {i}");
        assert_eq!(bc[i], x[w + 3], "broadcast {i}");
        let want_up = if i % 32 == 0 { x[i] } else { x[i - 1] };
        assert_eq!(up[i], want_up, "up {i}");
    }
}

#[kernel]
fn votes(x: &[i32], out: &mut [u32]) {
    let i = global_id_x();
    let p = x[i] > 0;
    let b = ballot(p);
    let any = vote_any(p);
    let all = vote_all(p || lane_id() >= 16);
    out[i * 3] = b;
    out[i * 3 + 1] = if any { 1 } else { 0 };
    out[i * 3 + 2] = if all { 1 } else { 0 };
}

#[test]
fn vote_and_ballot() {
    let dev = native();
    let n = 96usize;
    // Warp 0: lanes 0..16 positive; warp 1: none; warp 2: lanes 5 and 30.
    let x: Vec<i32> = (0..n)
        .map(|i| match (i / 32, i % 32) {
            (0, l) if l < 16 => 1,
            (2, 5) | (2, 30) => 7,
            _ => -1,
        })
        .collect();
    let xb = dev.upload(&x).unwrap();
    let mut ob = dev.alloc::<u32>(3 * n).unwrap();
    votes
        .launch(&dev, dims1d(1), dims1d(n as u32), (&xb, &mut ob))
        .unwrap();
    let o = ob.to_vec().unwrap();
    let want = [(0xFFFFu32, 1, 1), (0, 0, 0), ((1 << 5) | (1 << 30), 1, 0)];
    for i in 0..n {
        let (b, any, all) = want[i / 32];
        assert_eq!(
            (o[3 * i], o[3 * i + 1], o[3 * i + 2]),
            (b, any, all),
            "thread {i}"
        );
    }
}

#[device]
fn warp_total(v: f32) -> f32 {
    let mut s = v;
    let mut m = 16;
    while m > 0 {
        s += shuffle_xor(s, m);
        m /= 2;
    }
    s
}

#[kernel]
fn via_helper(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    y[i] = warp_total(x[i]);
}

#[test]
fn a_warp_operation_in_a_helper_runs_on_the_scheduler() {
    let dev = native();
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let xb = dev.upload(&x).unwrap();
    let mut yb = dev.alloc::<f32>(64).unwrap();
    via_helper
        .launch(&dev, dims1d(2), dims1d(32), (&xb, &mut yb))
        .unwrap();
    let y = yb.to_vec().unwrap();
    #[allow(clippy::needless_range_loop)]
    for i in 0..64 {
        let w = i / 32 * 32;
        assert_eq!(y[i], (w..w + 32).sum::<usize>() as f32, "thread {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Local arrays and match

#[kernel]
fn sort8(x: &[i32], y: &mut [i32], pick: &[u32], picked: &mut [i32]) {
    let i = global_id_x();
    if i * 8 + 8 <= x.len() {
        let mut a = [0i32; 8];
        for k in 0..8 {
            a[k] = x[i * 8 + k];
        }
        for k in 1..a.len() {
            let mut j = k;
            while j > 0 && a[j - 1] > a[j] {
                let t = a[j];
                a[j] = a[j - 1];
                a[j - 1] = t;
                j -= 1;
            }
        }
        for k in 0..8 {
            y[i * 8 + k] = a[k];
        }
        picked[i] = a[pick[i] as usize];
    }
}

#[test]
fn local_arrays_sort_and_are_bounds_checked() {
    let dev = native();
    let groups = 40usize;
    let x: Vec<i32> = (0..groups as i32 * 8)
        .map(|i| (i * 7919) % 211 - 100)
        .collect();
    let pick: Vec<u32> = (0..groups as u32).map(|i| i % 8).collect();
    let xb = dev.upload(&x).unwrap();
    let pb = dev.upload(&pick).unwrap();
    let mut yb = dev.alloc::<i32>(x.len()).unwrap();
    let mut kb = dev.alloc::<i32>(groups).unwrap();
    sort8
        .launch(&dev, dims1d(1), dims1d(64), (&xb, &mut yb, &pb, &mut kb))
        .unwrap();
    let want: Vec<i32> = x
        .chunks(8)
        .flat_map(|c| {
            let mut c = c.to_vec();
            c.sort();
            c
        })
        .collect();
    assert_eq!(yb.to_vec().unwrap(), want);
    let picked: Vec<i32> = (0..groups)
        .map(|g| want[g * 8 + pick[g] as usize])
        .collect();
    assert_eq!(kb.to_vec().unwrap(), picked);

    // Thread 3 picks element 8 of its 8.
    let mut bad = pick.clone();
    bad[3] = 8;
    let pb = dev.upload(&bad).unwrap();
    let r = sort8.launch(&dev, dims1d(1), dims1d(64), (&xb, &mut yb, &pb, &mut kb));
    let (_, thread, message) = fault_message(r);
    assert_eq!(thread, [3, 0, 0]);
    assert!(
        message.contains("index 8 out of bounds for `a` of length 8"),
        "{message}"
    );
}

#[kernel]
fn classify(x: &[i32], y: &mut [i32]) {
    let i = global_id_x();
    if i < x.len() {
        let v = x[i];
        let c = match v {
            0 => 100,
            1 | 2 => 200,
            3..=9 => 300,
            -5..=-1 => 400,
            _ => 500,
        };
        let mut d = 0;
        match v % 3 {
            0 => {
                d = 1;
            }
            1 | -1 => {
                d = 2;
            }
            _ => {}
        }
        y[i] = c + d;
    }
}

#[test]
fn match_as_value_and_statement() {
    let dev = native();
    let x: Vec<i32> = (-8..12).collect();
    let xb = dev.upload(&x).unwrap();
    let mut yb = dev.alloc::<i32>(x.len()).unwrap();
    classify
        .launch(&dev, dims1d(1), dims1d(32), (&xb, &mut yb))
        .unwrap();
    let want: Vec<i32> = x
        .iter()
        .map(|&v| {
            let c = match v {
                0 => 100,
                1 | 2 => 200,
                3..=9 => 300,
                -5..=-1 => 400,
                _ => 500,
            };
            c + match v % 3 {
                0 => 1,
                1 | -1 => 2,
                _ => 0,
            }
        })
        .collect();
    assert_eq!(yb.to_vec().unwrap(), want);
}

// ---------------------------------------------------------------------------------------------
// Shapes and helpers

#[kernel]
fn block3d(out: &mut [u32], lanes: &mut [u32]) {
    let s = shared_array::<u32, 1024>();
    let lin = thread_idx_x() + block_dim_x() * (thread_idx_y() + block_dim_y() * thread_idx_z());
    let n = block_dim_x() * block_dim_y() * block_dim_z();
    s[lin] = lin as u32;
    sync_threads();
    // Each thread reads its mirror image, written by another warp.
    let mirror = s[n - 1 - lin];
    sync_threads();
    s[lin] = mirror + shuffle_xor(lane_id() as u32, 1);
    sync_warp();
    sync_threads();
    let g = block_idx_x() * n + lin;
    out[g] = s[lin];
    lanes[g] = ballot(lane_id() % 3 == 0);
}

#[test]
fn three_dimensional_blocks_of_1024_threads() {
    let dev = native();
    let n = 1024usize;
    let mut ob = dev.alloc::<u32>(2 * n).unwrap();
    let mut lb = dev.alloc::<u32>(2 * n).unwrap();
    block3d
        .launch(&dev, dims1d(2), dims3d(16, 8, 8), (&mut ob, &mut lb))
        .unwrap();
    let o = ob.to_vec().unwrap();
    let mask = (0..32).filter(|l| l % 3 == 0).fold(0u32, |m, l| m | 1 << l);
    #[allow(clippy::needless_range_loop)]
    for g in 0..2 * n {
        let lin = g % n;
        let want = (n - 1 - lin) as u32 + ((lin % 32) ^ 1) as u32;
        assert_eq!(o[g], want, "thread {g}");
    }
    assert!(lb.to_vec().unwrap().iter().all(|&b| b == mask));
}

#[device]
fn bump(h: &mut [u32], i: usize) -> u32 {
    atomic_add(&mut h[i], 1u32)
}

#[kernel]
fn count_via_helper(keys: &[u32], hist: &mut [u32]) {
    let bins = shared_array::<u32, 8>();
    let i = global_id_x();
    if i < keys.len() {
        atomic_add(&mut bins[(keys[i] % 8) as usize], 1u32);
    }
    sync_threads();
    let t = thread_idx_x();
    if t < 8 {
        let _: u32 = bump(hist, t);
        atomic_add(&mut hist[t + 8], bins[t]);
    }
}

#[test]
fn an_atomic_in_a_helper() {
    let dev = native();
    let keys: Vec<u32> = (0..1000u32).map(|i| i * i + 3).collect();
    let kb = dev.upload(&keys).unwrap();
    let mut hb = dev.alloc::<u32>(16).unwrap();
    count_via_helper
        .launch(&dev, dims1d(8), dims1d(128), (&kb, &mut hb))
        .unwrap();
    let mut want = vec![0u32; 16];
    for w in want.iter_mut().take(8) {
        *w = 8; // one bump per block
    }
    for k in &keys {
        want[8 + (k % 8) as usize] += 1;
    }
    assert_eq!(hb.to_vec().unwrap(), want);
}

// ---------------------------------------------------------------------------------------------
// Large local arrays

#[kernel]
fn big_local(x: &mut [u32], k: u32) {
    let mut a = [0u32; 4096];
    let i = global_id_x();
    for j in 0..a.len() {
        a[j] = j as u32 * k;
    }
    sync_threads();
    x[i] = a[(i * 7) % 4096];
}

#[kernel]
fn huge_local(x: &mut [u32]) {
    let mut a = [1u32; 150_000];
    let i = global_id_x();
    a[i] = 2;
    x[i] = a[i] + a[i + 1];
}

#[device]
fn modulo(j: u32, n: u32) -> u32 {
    j % n
}

#[device]
fn table_sum(n: u32) -> u32 {
    let mut t = [0u32; 2048];
    for j in 0..t.len() {
        t[j] = modulo(j as u32, n);
    }
    let mut s = 0u32;
    for j in 0..t.len() {
        s += t[j];
    }
    s
}

#[kernel]
fn helper_with_table(x: &mut [u32]) {
    let i = global_id_x();
    x[i] = table_sum(i as u32 + 1) + shuffle_xor(i as u32, 1);
}

#[test]
fn large_local_arrays_run_or_fail_cleanly() {
    let dev = native();
    let mut xb = dev.alloc::<u32>(128).unwrap();
    // 16 KiB per thread, on coroutine stacks.
    big_local
        .launch(&dev, dims1d(2), dims1d(64), (&mut xb, 3))
        .unwrap();
    let want: Vec<u32> = (0..128u32).map(|i| (i * 7 % 4096) * 3).collect();
    assert_eq!(xb.to_vec().unwrap(), want);
    // 600 KB per thread: over the limit, refused before any thread runs.
    let r = huge_local.launch(&dev, dims1d(1), dims1d(4), (&mut xb,));
    let (_, _, message) = fault_message(r);
    assert!(
        message.contains("local arrays need 600000 bytes"),
        "{message}"
    );
    // A helper's 8 KiB table, called on coroutine stacks.
    helper_with_table
        .launch(&dev, dims1d(1), dims1d(64), (&mut xb,))
        .unwrap();
    let got = xb.to_vec().unwrap();
    for i in 0..64u32 {
        let n = i + 1;
        let s: u32 = (0..2048u32).map(|j| j % n).sum();
        assert_eq!(got[i as usize], s + (i ^ 1), "thread {i}");
    }
}
