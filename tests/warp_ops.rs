//! Warp operations on every device: a butterfly sum with `shuffle_xor`, `ballot`, `vote_any`,
//! `vote_all`, a broadcast with `shuffle` and `lane_id`, checked against a host reference computed
//! for the device's own warp (subgroup) size — 32 on NVIDIA and on the CPU backends, whatever the
//! Vulkan or OpenCL driver reports elsewhere. A device that cannot run warp operations must refuse
//! with a typed `FeatureNotSupported`, which is printed as a skip.
//!
//! The lanes whose source is outside the warp are asserted too (docs/LANGUAGE.md): `shuffle_up(v,
//! 3)` on lanes 0–2 and `shuffle_down(v, 3)` on the last three lanes keep their own value, as do
//! deltas of `warp_size()` or more; on GPU backends `shuffle_xor` with a source outside the warp
//! keeps the own value and `shuffle` reads lane `src % warp_size()`, while the CPU backends (the
//! sanitizer) report those two as a fault. lavapipe's 8-lane subgroups returned other lanes'
//! values for the first cases, and CUDA's `shfl.sync` takes deltas and masks modulo 32.

use spoc::prelude::*;

#[kernel]
fn warp_mix(
    x: &[i32],
    sum: &mut [i32],
    votes: &mut [u32],
    broadcast: &mut [i32],
    lanes: &mut [u32],
) {
    let i = global_id_x();
    let v = x[i];
    let mut s = v;
    let mut off = warp_size() / 2;
    while off > 0 {
        s += shuffle_xor(s, off);
        off /= 2;
    }
    sum[i] = s;
    let any = if vote_any(v > 90) { 1u32 } else { 0u32 };
    let all = if vote_all(v >= 0) { 2u32 } else { 0u32 };
    votes[i] = any | all;
    broadcast[i] = shuffle(v, 0);
    lanes[i] = lane_id() as u32;
}

#[kernel]
fn warp_ballot(x: &[i32], bal: &mut [u32]) {
    let i = global_id_x();
    bal[i] = ballot(x[i] % 2 == 0);
}

#[kernel]
fn warp_edges(
    x: &[i32],
    up: &mut [i32],
    down: &mut [i32],
    up_far: &mut [i32],
    down_far: &mut [i32],
) {
    let i = global_id_x();
    let v = x[i];
    up[i] = shuffle_up(v, 3);
    down[i] = shuffle_down(v, 3);
    up_far[i] = shuffle_up(v, warp_size() + 1);
    down_far[i] = shuffle_down(v, 2 * warp_size());
}

#[kernel]
fn warp_out_of_range(x: &[i32], xor_far: &mut [i32], idx_far: &mut [i32]) {
    let i = global_id_x();
    let v = x[i];
    xor_far[i] = shuffle_xor(v, warp_size());
    idx_far[i] = shuffle(v, warp_size() + 1);
}

const N: usize = 256;
const BLOCK: u32 = 64;

fn input() -> Vec<i32> {
    // Warps of 32 with negative values in some and not others, values above 90 in some.
    (0..N)
        .map(|i| {
            let v = ((i * 37) % 101) as i32;
            if (i / 32) % 3 == 1 {
                v - 50
            } else {
                v / 2
            }
        })
        .collect()
}

struct Want {
    up: Vec<i32>,
    down: Vec<i32>,
    up_far: Vec<i32>,
    down_far: Vec<i32>,
    sum: Vec<i32>,
    votes: Vec<u32>,
    broadcast: Vec<i32>,
    lanes: Vec<u32>,
    ballot: Vec<u32>,
}

fn reference(x: &[i32], w: usize) -> Want {
    let mut want = Want {
        up: vec![0; N],
        down: vec![0; N],
        up_far: x.to_vec(),
        down_far: x.to_vec(),
        sum: vec![0; N],
        votes: vec![0; N],
        broadcast: vec![0; N],
        lanes: vec![0; N],
        ballot: vec![0; N],
    };
    for base in (0..N).step_by(w) {
        let warp = &x[base..base + w];
        let s = warp.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        let any = warp.iter().any(|&v| v > 90) as u32;
        let all = (warp.iter().all(|&v| v >= 0) as u32) << 1;
        let bal = warp
            .iter()
            .enumerate()
            .filter(|(_, &v)| v % 2 == 0)
            .fold(0u32, |m, (l, _)| m | (1 << l));
        for l in 0..w {
            want.up[base + l] = if l >= 3 { warp[l - 3] } else { warp[l] };
            want.down[base + l] = if l + 3 < w { warp[l + 3] } else { warp[l] };
            want.sum[base + l] = s;
            want.votes[base + l] = any | all;
            want.broadcast[base + l] = warp[0];
            want.lanes[base + l] = l as u32;
            want.ballot[base + l] = bal;
        }
    }
    want
}

fn run(dev: &Device, x: &[i32]) -> spoc::Result<Want> {
    let xb = dev.upload(x)?;
    let mut sum = dev.alloc::<i32>(N)?;
    let mut votes = dev.alloc::<u32>(N)?;
    let mut broadcast = dev.alloc::<i32>(N)?;
    let mut lanes = dev.alloc::<u32>(N)?;
    let mut bal = dev.alloc::<u32>(N)?;
    let grid = dims1d(N as u32 / BLOCK);
    warp_mix.launch(
        dev,
        grid,
        dims1d(BLOCK),
        (&xb, &mut sum, &mut votes, &mut broadcast, &mut lanes),
    )?;
    warp_ballot.launch(dev, grid, dims1d(BLOCK), (&xb, &mut bal))?;
    let mut up = dev.alloc::<i32>(N)?;
    let mut down = dev.alloc::<i32>(N)?;
    let mut up_far = dev.alloc::<i32>(N)?;
    let mut down_far = dev.alloc::<i32>(N)?;
    warp_edges.launch(
        dev,
        grid,
        dims1d(BLOCK),
        (&xb, &mut up, &mut down, &mut up_far, &mut down_far),
    )?;
    Ok(Want {
        up: up.to_vec()?,
        down: down.to_vec()?,
        up_far: up_far.to_vec()?,
        down_far: down_far.to_vec()?,
        sum: sum.to_vec()?,
        votes: votes.to_vec()?,
        broadcast: broadcast.to_vec()?,
        lanes: lanes.to_vec()?,
        ballot: bal.to_vec()?,
    })
}

/// `shuffle_xor(v, warp_size())` and `shuffle(v, warp_size() + 1)`: the own value and lane 1's
/// value on GPU backends, a fault on the CPU backends.
fn out_of_range(dev: &Device, x: &[i32], w: usize, label: &str) {
    let run = || -> spoc::Result<(Vec<i32>, Vec<i32>)> {
        let xb = dev.upload(x)?;
        let mut xor_far = dev.alloc::<i32>(N)?;
        let mut idx_far = dev.alloc::<i32>(N)?;
        warp_out_of_range.launch(
            dev,
            dims1d(N as u32 / BLOCK),
            dims1d(BLOCK),
            (&xb, &mut xor_far, &mut idx_far),
        )?;
        Ok((xor_far.to_vec()?, idx_far.to_vec()?))
    };
    let cpu = matches!(dev.framework, "Native" | "Interpreter");
    match run() {
        Err(spoc::Error::KernelFault { message, .. }) if cpu => {
            println!("{label}: out-of-range shuffle reported: {message}");
        }
        Ok((xor_far, idx_far)) if !cpu => {
            let idx: Vec<i32> = (0..N).map(|i| x[i - i % w + 1 % w]).collect();
            assert_eq!(xor_far, x, "shuffle_xor(v, warp_size()) on {label}");
            assert_eq!(idx_far, idx, "shuffle(v, warp_size() + 1) on {label}");
        }
        other => panic!("{label}: out-of-range shuffles gave {other:?}"),
    }
}

#[test]
fn warp_operations_match_the_reference_for_each_devices_warp_size() {
    let x = input();
    let mut ran = Vec::new();
    for dev in spoc::all_devices(None).expect("device enumeration") {
        let w = dev.capabilities.warp_size as usize;
        let label = format!("{} ({}, warp {w})", dev.name, dev.framework);
        if !(1..=32).contains(&w) || !(BLOCK as usize).is_multiple_of(w) {
            println!("skipped on {label}: the test needs a warp of 1..=32 lanes dividing {BLOCK}");
            continue;
        }
        match run(&dev, &x) {
            Ok(got) => {
                let want = reference(&x, w);
                assert_eq!(got.lanes, want.lanes, "lane_id on {label}");
                assert_eq!(got.sum, want.sum, "shuffle_xor butterfly sum on {label}");
                assert_eq!(got.votes, want.votes, "vote_any / vote_all on {label}");
                assert_eq!(got.broadcast, want.broadcast, "shuffle(v, 0) on {label}");
                assert_eq!(got.ballot, want.ballot, "ballot on {label}");
                assert_eq!(got.up, want.up, "shuffle_up(v, 3) on {label}");
                assert_eq!(got.down, want.down, "shuffle_down(v, 3) on {label}");
                assert_eq!(
                    got.up_far, want.up_far,
                    "shuffle_up(v, warp + 1) on {label}"
                );
                assert_eq!(
                    got.down_far, want.down_far,
                    "shuffle_down(v, 2 * warp) on {label}"
                );
                out_of_range(&dev, &x, w, &label);
                ran.push(format!("{} (warp {w})", dev.framework));
            }
            Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
                println!("skipped on {label}: {feature}");
            }
            Err(e) => panic!("{label}: {e}"),
        }
    }
    println!("warp operations ran on {ran:?}");
    for required in ["Native", "Interpreter"] {
        assert!(
            ran.iter().any(|f| f.starts_with(required)),
            "{required} must run warp operations"
        );
    }
}

/// Every lane takes part in an i64 `atomic_min`, then in a `ballot`.
#[kernel]
fn ballot_after_i64_atomic(acc: &mut [i64], bal: &mut [u32]) {
    let i = global_id_x();
    atomic_min(&mut acc[0], (i as i64) - 5);
    let b = ballot(true);
    if i < bal.len() {
        bal[i] = b;
    }
}

/// A warp operation after an atomic sees the whole warp: on CUDA/C the signed 64-bit min/max
/// were compare-and-swap loops that the lanes left apart, and `ballot(true)` after one gave
/// partial masks (1 or 0xffff_fffe for lanes of one warp) on the H200 (difftest, kernel 1277).
#[test]
fn ballot_after_a_64_bit_atomic_sees_the_whole_warp() {
    let mut ran = 0;
    for dev in spoc::all_devices(None).expect("device enumeration") {
        let w = dev.capabilities.warp_size as usize;
        let label = format!("{} ({}, warp {w})", dev.name, dev.framework);
        if !(1..=32).contains(&w) || !(BLOCK as usize).is_multiple_of(w) {
            println!("skipped on {label}: the test needs a warp of 1..=32 lanes dividing {BLOCK}");
            continue;
        }
        let run = || -> spoc::Result<(Vec<i64>, Vec<u32>)> {
            let mut acc = dev.upload(&[i64::MAX])?;
            let mut bal = dev.alloc::<u32>(BLOCK as usize)?;
            ballot_after_i64_atomic.launch(&dev, dims1d(1), dims1d(BLOCK), (&mut acc, &mut bal))?;
            Ok((acc.to_vec()?, bal.to_vec()?))
        };
        match run() {
            Ok((acc, bal)) => {
                let full = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
                assert_eq!(acc, [-5], "atomic_min on {label}");
                assert!(
                    bal.iter().all(|&b| b == full),
                    "ballot on {label}: {bal:x?}"
                );
                ran += 1;
            }
            Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
                println!("skipped on {label}: {feature}");
            }
            Err(e) => panic!("{label}: {e}"),
        }
    }
    assert!(ran >= 2, "ran on {ran} devices");
}

/// Lanes with `x[i] == 4` run a loop of atomics that may end early; then every lane shuffles
/// and votes at the top level of the kernel.
#[kernel]
fn shuffle_after_divergent_loop(x: &[u32], acc: &mut [i64], down: &mut [u32], bal: &mut [u32]) {
    let i = global_id_x();
    match x[i] {
        4u32 => {
            for _ in 0usize..7usize {
                if atomic_add(&mut acc[0], 1i64) < 0 {
                    break;
                }
            }
        }
        _ => {}
    }
    down[i] = shuffle_down(i as u32, 5usize);
    bal[i] = ballot(true);
}

/// A warp operation at the kernel's top level sees the whole warp even when a `match` arm
/// with a loop of atomics ran on some lanes only before it: on CUDA/PTX `shfl.sync` took the
/// lanes active after the `match` (`activemask`), which were not all of them, and lanes 7, 12,
/// 14 and 19 of a warp read 0 (difftest F15, kernel 6353 on the H200).
#[test]
fn a_shuffle_after_a_divergent_loop_sees_the_whole_warp() {
    let n = 4 * BLOCK as usize;
    let x: Vec<u32> = (0..n)
        .map(|i| if (i * 7) % 5 < 2 { 4 } else { 1 })
        .collect();
    let runs = x.iter().filter(|&&v| v == 4).count() as i64 * 7;
    let mut ran = 0;
    for dev in spoc::all_devices(None).expect("device enumeration") {
        let w = dev.capabilities.warp_size as usize;
        let label = format!("{} ({}, warp {w})", dev.name, dev.framework);
        if !(1..=32).contains(&w) || !(BLOCK as usize).is_multiple_of(w) {
            println!("skipped on {label}: the test needs a warp of 1..=32 lanes dividing {BLOCK}");
            continue;
        }
        let run = || -> spoc::Result<(Vec<i64>, Vec<u32>, Vec<u32>)> {
            let xb = dev.upload(&x)?;
            let mut acc = dev.upload(&[0i64])?;
            let mut down = dev.alloc::<u32>(n)?;
            let mut bal = dev.alloc::<u32>(n)?;
            shuffle_after_divergent_loop.launch(
                &dev,
                dims1d(4),
                dims1d(BLOCK),
                (&xb, &mut acc, &mut down, &mut bal),
            )?;
            Ok((acc.to_vec()?, down.to_vec()?, bal.to_vec()?))
        };
        match run() {
            Ok((acc, down, bal)) => {
                let full = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
                let want: Vec<u32> = (0..n)
                    .map(|i| if i % w + 5 < w { i + 5 } else { i } as u32)
                    .collect();
                assert_eq!(acc, [runs], "atomic_add on {label}");
                assert_eq!(down, want, "shuffle_down(i, 5) on {label}");
                assert!(
                    bal.iter().all(|&b| b == full),
                    "ballot on {label}: {bal:x?}"
                );
                ran += 1;
            }
            Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
                println!("skipped on {label}: {feature}");
            }
            Err(e) => panic!("{label}: {e}"),
        }
    }
    assert!(ran >= 2, "ran on {ran} devices");
}
