//! Kernels with const parameters: `#[kernel(instances(…))] fn k<const N: u32, …>` is lowered
//! once per listed value set, with the values as compile-time constants (array lengths, shared
//! array sizes, loop bounds). Each instance runs on every device and is compared with the same
//! computation on the host, in the same order, so floats agree to the bit.

use spoc::prelude::*;

/// `y = x + SHIFT`, negated when `NEGATE`: integer and `bool` const parameters.
#[kernel(instances((3, false), (-7, true)))]
fn shift<const SHIFT: i32, const NEGATE: bool>(x: &[i32], y: &mut [i32]) {
    let i = global_id_x();
    if i < y.len() {
        let v = x[i].wrapping_add(SHIFT);
        y[i] = if NEGATE { 0i32.wrapping_sub(v) } else { v };
    }
}

fn run<R>(name: &str, mut f: impl FnMut(&spoc::Device) -> spoc::Result<R>) -> Vec<R> {
    let mut out = Vec::new();
    for dev in spoc::all_devices(None).expect("devices") {
        match f(&dev) {
            Ok(r) => out.push(r),
            Err(spoc::Error::FeatureNotSupported { backend, feature }) => {
                eprintln!("{name}: skipped on {} ({backend}): {feature}", dev.name)
            }
            Err(e) => panic!("{name} on {} ({}): {e}", dev.name, dev.framework),
        }
    }
    out
}

/// The host's `tile_sum`, in the kernel's order of additions.
fn tile_sum_host(x: &[f32], tile: usize, per: usize, blocks: usize) -> Vec<f32> {
    (0..blocks)
        .map(|b| {
            let mut total = 0.0f32;
            for t in 0..tile {
                let mut s = 0.0f32;
                for k in 0..per {
                    s += x.get((b * tile + t) * per + k).copied().unwrap_or(0.0);
                }
                total += s;
            }
            total
        })
        .collect()
}

#[test]
fn tile_sizes_are_compile_time_constants() {
    assert_eq!(
        tile_sum::<0, 0>::INSTANCES,
        ["tile_sum_128_4", "tile_sum_256_2", "tile_sum_8_1"]
    );
    let ir = tile_sum::<256, 2>.ir().unwrap();
    assert_eq!(ir.name, "tile_sum_256_2");
    assert_eq!(
        ir.shared[0].len,
        Some(256),
        "the shared array's length is TILE"
    );
    // The C source has the sizes as literals: no parameter carries them.
    let c = tile_sum::<8, 1>
        .source(spoc::Target::CudaC)
        .unwrap()
        .unwrap();
    let c = c.text().expect("CUDA C is text");
    assert!(c.contains("[8]"), "{c}");
    assert_eq!(ir.params.len(), 2);

    // 1000 elements: the last block of each instance is partial.
    let x: Vec<f32> = (0..1000)
        .map(|i| ((i * 37) % 101) as f32 * 0.013 - 0.4)
        .collect();
    let ran = run("tile_sum", |dev| {
        let xb = dev.upload(&x)?;
        let cases: [(usize, usize); 3] = [(128, 4), (256, 2), (8, 1)];
        for (tile, per) in cases {
            let blocks = x.len().div_ceil(tile * per);
            let mut out = dev.alloc::<f32>(blocks)?;
            let (g, b) = (dims1d(blocks as u32), dims1d(tile as u32));
            match (tile, per) {
                (128, 4) => tile_sum::<128, 4>.launch(dev, g, b, (&xb, &mut out))?,
                (256, 2) => tile_sum::<256, 2>.launch(dev, g, b, (&xb, &mut out))?,
                _ => tile_sum::<8, 1>.launch(dev, g, b, (&xb, &mut out))?,
            }
            let want = tile_sum_host(&x, tile, per, blocks);
            let got = out.to_vec()?;
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got),
                bits(&want),
                "TILE={tile} PER_THREAD={per} on {dev}"
            );
        }
        Ok(dev.framework.to_string())
    });
    eprintln!("tile_sum ran on {ran:?}");
    assert!(ran.iter().any(|f| f == "Native") && ran.iter().any(|f| f == "Interpreter"));
}

#[test]
fn integer_and_bool_parameters() {
    assert_eq!(
        shift::<0, false>::INSTANCES,
        ["shift_3_false", "shift_m7_true"]
    );
    let x: Vec<i32> = vec![0, 1, -1, 100, i32::MAX, i32::MIN, 6, -8];
    let ran = run("shift", |dev| {
        let xb = dev.upload(&x)?;
        let mut y = dev.alloc::<i32>(x.len())?;
        shift::<3, false>.launch(dev, dims1d(1), dims1d(32), (&xb, &mut y))?;
        let want: Vec<i32> = x.iter().map(|v| v.wrapping_add(3)).collect();
        assert_eq!(y.to_vec()?, want, "{dev}");
        shift::<{ -7 }, true>.launch(dev, dims1d(1), dims1d(32), (&xb, &mut y))?;
        let want: Vec<i32> = x
            .iter()
            .map(|v| v.wrapping_add(-7).wrapping_neg())
            .collect();
        assert_eq!(y.to_vec()?, want, "{dev}");
        Ok(dev.framework.to_string())
    });
    assert!(ran.iter().any(|f| f == "Native") && ran.iter().any(|f| f == "Interpreter"));
}

/// The example of docs/LANGUAGE.md ("Kernels with const parameters"): each block of `TILE`
/// threads sums `TILE * PER` elements, `PER` per thread held in a local array, then thread 0
/// adds the block's partial sums from shared memory in thread order.
#[kernel(instances((128, 4), (256, 2), (8, 1)))]
fn tile_sum<const TILE: usize, const PER: usize>(x: &[f32], out: &mut [f32]) {
    let partial = shared_array::<f32, TILE>();
    let t = thread_idx_x();
    let mut held = [0.0f32; PER];
    for k in 0..PER {
        let i = (block_idx_x() * TILE + t) * PER + k;
        if i < x.len() {
            held[k] = x[i];
        }
    }
    let mut s = 0.0f32;
    for k in 0..PER {
        s += held[k];
    }
    partial[t] = s;
    sync_threads();
    if t == 0 {
        let mut total = 0.0f32;
        for k in 0..TILE {
            total += partial[k];
        }
        out[block_idx_x()] = total;
    }
}

#[test]
fn the_documented_example_runs() {
    let ran = run("tile_sum", |dev| {
        let x = dev.upload(&vec![1.0f32; 1024])?;
        let mut out = dev.alloc::<f32>(2)?;
        tile_sum::<128, 4>.launch(dev, dims1d(2), dims1d(128), (&x, &mut out))?;
        assert_eq!(out.to_vec()?, [512.0, 512.0], "{dev}");
        tile_sum::<256, 2>.launch(dev, dims1d(2), dims1d(256), (&x, &mut out))?;
        assert_eq!(out.to_vec()?, [512.0, 512.0], "{dev}");
        Ok(dev.framework.to_string())
    });
    assert!(ran.iter().any(|f| f == "Native") && ran.iter().any(|f| f == "Interpreter"));
}

/// A register tile: each thread accumulates a `TM`-element column of products in a local
/// array indexed only by unrolled loop variables, then writes it out. `y[t * TM + m] =
/// sum over k < K of a[(t * TM + m) * K + k] * b[k]`, summed in `k` order.
#[kernel(instances((4, 8), (2, 3)))]
fn tile_matvec<const TM: usize, const K: usize>(a: &[f32], b: &[f32], y: &mut [f32]) {
    let t = global_id_x();
    if (t + 1) * TM <= y.len() {
        let mut acc = [0.0f32; TM];
        for k in unroll(0..K) {
            let bk = b[k];
            for m in unroll(0..TM) {
                acc[m] = acc[m] + a[(t * TM + m) * K + k] * bk;
            }
        }
        for m in unroll((0..TM).rev()) {
            y[t * TM + m] = acc[m];
        }
    }
}

fn tile_matvec_host(a: &[f32], b: &[f32], rows: usize, k: usize) -> Vec<f32> {
    (0..rows)
        .map(|r| {
            let mut s = 0.0f32;
            for j in 0..k {
                s += a[r * k + j] * b[j];
            }
            s
        })
        .collect()
}

#[test]
fn unrolled_register_tiles_match_the_host() {
    // The IR marks the loops; the GPU targets' unrolled IR has none left (the local array is
    // indexed by constants only), the CPU backends run the loops as written.
    let ir = tile_matvec::<4, 8>.ir().unwrap();
    let printed = ir.to_string();
    assert_eq!(printed.matches("#[pragma(unroll)]").count(), 3, "{printed}");
    let unrolled = spoc::ir::unroll::unrolled(ir).expect("marked loops");
    let printed = unrolled.to_string();
    assert!(
        !printed.contains("for ") && !printed.contains("pragma"),
        "{printed}"
    );
    spoc::ir::validate(&unrolled).expect("the unrolled kernel is valid");
    // (tests/codegen_ptx.rs assembles such a tile with `ptxas -v`: no stack, no local memory.)
    let ran = run("tile_matvec", |dev| {
        for (tm, k) in [(4usize, 8usize), (2, 3)] {
            let threads = 37;
            let rows = threads * tm;
            let a: Vec<f32> = (0..rows * k)
                .map(|i| ((i * 13) % 29) as f32 * 0.25 - 3.0)
                .collect();
            let b: Vec<f32> = (0..k).map(|i| i as f32 * 0.5 - 1.25).collect();
            let (ab, bb) = (dev.upload(&a)?, dev.upload(&b)?);
            let mut y = dev.alloc::<f32>(rows)?;
            let (g, bl) = (dims1d(2), dims1d(32));
            if tm == 4 {
                tile_matvec::<4, 8>.launch(dev, g, bl, (&ab, &bb, &mut y))?;
            } else {
                tile_matvec::<2, 3>.launch(dev, g, bl, (&ab, &bb, &mut y))?;
            }
            let want = tile_matvec_host(&a, &b, rows, k);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&y.to_vec()?), bits(&want), "TM={tm} K={k} on {dev}");
        }
        Ok(dev.framework.to_string())
    });
    assert!(ran.iter().any(|f| f == "Native") && ran.iter().any(|f| f == "Interpreter"));
}

/// An outer product into a `TM x TN` register tile indexed by `m * TN + j`, both loops
/// unrolled: `y[t * TM * TN + m * TN + j] = a[t * TM + m] * b[j]`.
#[kernel(instances((2, 3)))]
fn outer_tile<const TM: usize, const TN: usize>(a: &[f32], b: &[f32], y: &mut [f32]) {
    let t = global_id_x();
    if (t + 1) * TM * TN <= y.len() {
        let mut acc = [0.0f32; TM * TN];
        for m in unroll(0..TM) {
            for j in unroll(0..TN) {
                acc[m * TN + j] = acc[m * TN + j] + a[t * TM + m] * b[j];
            }
        }
        for k in unroll(0..TM * TN) {
            y[t * TM * TN + k] = acc[k];
        }
    }
}

#[test]
fn unrolled_copies_fold_their_constant_indexes() {
    // Once `m` and `j` are constants, `m * TN + j` is folded while the copies are made: every
    // access of the tile has a literal index (what lets the PTX prepass keep it in registers,
    // and keeps the unrolled IR of a large tile small).
    let ir = outer_tile::<2, 3>.ir().unwrap();
    let unrolled = spoc::ir::unroll::unrolled(ir).expect("marked loops");
    spoc::ir::validate(&unrolled).expect("the unrolled kernel is valid");
    let mut tile_indexes = Vec::new();
    spoc::ir::visit::for_each_expr(&unrolled.body, &mut |e| {
        if let spoc::ir::ExprKind::Index { array, index } = &e.kind {
            if matches!(
                array.ty,
                spoc::ir::Type::Array {
                    space: spoc::ir::MemSpace::Local,
                    ..
                }
            ) {
                tile_indexes.push(match index.kind {
                    spoc::ir::ExprKind::Const(c) => Some(c),
                    _ => None,
                });
            }
        }
    });
    // The reads of the product loop, then of the write-out loop.
    let want: Vec<_> = (0..12u32)
        .map(|k| Some(spoc::ir::Const::U32(k % 6)))
        .collect();
    assert_eq!(tile_indexes, want, "{unrolled}");
    let ran = run("outer_tile", |dev| {
        let threads = 37;
        let a: Vec<f32> = (0..threads * 2).map(|i| i as f32 * 0.5 - 7.0).collect();
        let b = [1.5f32, -2.0, 0.25];
        let (ab, bb) = (dev.upload(&a)?, dev.upload(&b)?);
        let mut y = dev.alloc::<f32>(threads * 6)?;
        outer_tile::<2, 3>.launch(dev, dims1d(2), dims1d(32), (&ab, &bb, &mut y))?;
        let want: Vec<f32> = (0..threads * 6)
            .map(|i| a[(i / 6) * 2 + (i % 6) / 3] * b[i % 3])
            .collect();
        assert_eq!(y.to_vec()?, want, "{dev}");
        Ok(dev.framework.to_string())
    });
    assert!(ran.iter().any(|f| f == "Native") && ran.iter().any(|f| f == "Interpreter"));
}
