//! The vector types (`F32x4`, `U32x2`, …) on every device: buffers of vectors, lane reads and
//! writes, `new`/`splat` and shared arrays of vectors; a grid-stride `saxpy` over `F32x4`
//! is `examples/programs/saxpy_vec4.rs`, run on every device by `examples/tests/programs.rs`.
//! Every result is checked exactly against the same arithmetic on the host.

mod common;

use spoc::prelude::*;
use spoc_testkit::devices::check_each_device;

/// Lanes rotated and scaled, a lane written into a local vector and into a buffer element,
/// `splat`.
#[kernel]
fn lanes(x: &[F32x4], out: &mut [F32x4], sp: &mut [F32x4]) {
    let i = global_id_x();
    if i < x.len() {
        let v = x[i];
        let mut r = F32x4::new(v.w, v.x * 2.0, v.y, v.z);
        r.z = r.z + 0.5;
        out[i] = r;
        out[i].w = v.x - v.w;
        sp[i] = F32x4::splat(v.y * 3.0);
    }
}

/// `U32x2` swapped, `I32x4` lanes summed and negated.
#[kernel]
fn ints(u: &[U32x2], us: &mut [U32x2], s: &[I32x4], ss: &mut [i32], sn: &mut [I32x4]) {
    let i = global_id_x();
    if i < u.len() {
        let p = u[i];
        us[i] = U32x2::new(p.y, p.x ^ 0xffff_0000);
        let q = s[i];
        ss[i] = q.x + q.y + q.z + q.w;
        sn[i] = I32x4::new(-q.x, -q.y, -q.z, q.w * 2);
    }
}

/// Each block reverses its `F32x4`s through a shared array.
#[kernel]
fn reverse_in_block(x: &[F32x4], y: &mut [F32x4]) {
    let tile = shared_array::<F32x4, 64>();
    let t = thread_idx_x();
    let i = global_id_x();
    tile[t] = x[i];
    sync_threads();
    y[i] = tile[63 - t];
}

fn f4(k: usize) -> F32x4 {
    let b = k as f32;
    F32x4::new(b * 0.25 - 3.0, b + 0.5, -b * 1.5, b * b * 0.125)
}

#[test]
fn lane_reads_writes_and_splat_on_every_device() {
    let n = 77;
    let x: Vec<F32x4> = (0..n).map(f4).collect();
    let want_out: Vec<F32x4> = x
        .iter()
        .map(|v| F32x4::new(v.w, v.x * 2.0, v.y + 0.5, v.x - v.w))
        .collect();
    let want_sp: Vec<F32x4> = x.iter().map(|v| F32x4::splat(v.y * 3.0)).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let xb = dev.upload(&x)?;
        let mut out = dev.alloc::<F32x4>(n)?;
        let mut sp = dev.alloc::<F32x4>(n)?;
        lanes.launch(dev, dims1d(2), dims1d(64), (&xb, &mut out, &mut sp))?;
        check.eq("lanes", &out.to_vec()?, &want_out);
        check.eq("splat", &sp.to_vec()?, &want_sp);
        Ok(())
    });
}

#[test]
fn integer_vectors_on_every_device() {
    let n = 50;
    let u: Vec<U32x2> = (0..n as u32)
        .map(|k| U32x2::new(k.wrapping_mul(0x9e37_79b9), !k))
        .collect();
    let s: Vec<I32x4> = (0..n as i32)
        .map(|k| I32x4::new(k - 25, k * 1000, -k * 7, i32::MAX / 4 - k))
        .collect();
    let want_us: Vec<U32x2> = u
        .iter()
        .map(|p| U32x2::new(p.y, p.x ^ 0xffff_0000))
        .collect();
    let want_ss: Vec<i32> = s
        .iter()
        .map(|q| q.x.wrapping_add(q.y).wrapping_add(q.z).wrapping_add(q.w))
        .collect();
    let want_sn: Vec<I32x4> = s
        .iter()
        .map(|q| I32x4::new(-q.x, -q.y, -q.z, q.w.wrapping_mul(2)))
        .collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let ub = dev.upload(&u)?;
        let sb = dev.upload(&s)?;
        let mut us = dev.alloc::<U32x2>(n)?;
        let mut ss = dev.alloc::<i32>(n)?;
        let mut sn = dev.alloc::<I32x4>(n)?;
        ints.launch(
            dev,
            dims1d(1),
            dims1d(64),
            (&ub, &mut us, &sb, &mut ss, &mut sn),
        )?;
        check.eq("U32x2", &us.to_vec()?, &want_us);
        check.eq("I32x4 sums", &ss.to_vec()?, &want_ss);
        check.eq("I32x4", &sn.to_vec()?, &want_sn);
        Ok(())
    });
}

#[test]
fn shared_array_of_vectors_on_every_device() {
    let blocks = 3;
    let n = 64 * blocks;
    let x: Vec<F32x4> = (0..n).map(f4).collect();
    let want: Vec<F32x4> = (0..n).map(|i| x[(i / 64) * 64 + 63 - i % 64]).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let xb = dev.upload(&x)?;
        let mut y = dev.alloc::<F32x4>(n)?;
        reverse_in_block.launch(dev, dims1d(blocks as u32), dims1d(64), (&xb, &mut y))?;
        check.eq("y", &y.to_vec()?, &want);
        Ok(())
    });
}

/// Whole-vector arithmetic: `a + b`, `a - b`, `a * b`, `a / b`, `a * s`, `s * a`, `a / s`,
/// `+=` and `*=`, lane by lane, on `F32x4` and (wrapping) `U32x2`/`I32x4`; a helper call as an
/// operand runs once.
#[device]
fn bump(c: &mut [u32]) -> f32 {
    atomic_add(&mut c[0], 1u32);
    2.0
}

#[kernel]
fn whole(
    a: &[F32x4],
    b: &[F32x4],
    out: &mut [F32x4],
    u: &[U32x2],
    uo: &mut [U32x2],
    s: &[I32x4],
    so: &mut [I32x4],
    calls: &mut [u32],
) {
    let i = global_id_x();
    if i < a.len() {
        let x = a[i];
        let y = b[i];
        let mut r = (x + y) * 0.5 - x / y;
        r += 3.0 * (x - y);
        r *= bump(calls);
        out[2 * i] = r;
        out[2 * i + 1] = x * y / 4.0;
        let p = u[i];
        uo[i] = p * p + U32x2::new(u32::MAX, 7) - p;
        let q = s[i];
        so[i] = q * 3 - I32x4::splat(i32::MAX) + q % I32x4::new(5, -5, 7, 2);
    }
}

#[test]
fn whole_vector_arithmetic_on_every_device() {
    let n = 45;
    let a: Vec<F32x4> = (0..n).map(f4).collect();
    let b: Vec<F32x4> = (0..n).map(|k| f4(k + 3) + F32x4::splat(0.75)).collect();
    let u: Vec<U32x2> = (0..n as u32)
        .map(|k| U32x2::new(k.wrapping_mul(0x9e37_79b9), k + 1))
        .collect();
    let s: Vec<I32x4> = (0..n as i32)
        .map(|k| I32x4::new(k * 1000 - 7, -k, k.wrapping_mul(0x3c6e_f372), i32::MIN + k))
        .collect();
    let mut want = Vec::new();
    for (x, y) in a.iter().zip(&b) {
        let (x, y) = (*x, *y);
        let mut r = (x + y) * 0.5 - x / y;
        r += 3.0 * (x - y);
        r *= 2.0;
        want.push(r);
        want.push(x * y / 4.0);
    }
    let want_u: Vec<U32x2> = u
        .iter()
        .map(|&p| p * p + U32x2::new(u32::MAX, 7) - p)
        .collect();
    let want_s: Vec<I32x4> = s
        .iter()
        .map(|&q| q * 3 - I32x4::splat(i32::MAX) + q % I32x4::new(5, -5, 7, 2))
        .collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let (da, db) = (dev.upload(&a)?, dev.upload(&b)?);
        let (du, ds) = (dev.upload(&u)?, dev.upload(&s)?);
        let mut out = dev.alloc::<F32x4>(2 * n)?;
        let mut uo = dev.alloc::<U32x2>(n)?;
        let mut so = dev.alloc::<I32x4>(n)?;
        let mut calls = dev.upload(&[0u32])?;
        whole.launch(
            dev,
            dims1d(1),
            dims1d(64),
            (&da, &db, &mut out, &du, &mut uo, &ds, &mut so, &mut calls),
        )?;
        check.eq("f32 lanes", &out.to_vec()?, &want);
        check.eq("u32 lanes", &uo.to_vec()?, &want_u);
        check.eq("i32 lanes", &so.to_vec()?, &want_s);
        check.eq("helper calls", &calls.to_vec()?, &[n as u32]);
        Ok(())
    });
}

/// `v * 2` for each vector: a kernel over `F32x4` given a `Buffer<f32>` viewed as vectors.
#[kernel]
fn double_vec4(v: &mut [F32x4]) {
    let i = global_id_x();
    if i < v.len() {
        v[i] = v[i] * 2.0;
    }
}

/// A `Buffer<f32>` viewed as `F32x4` vectors without a copy (`into_vectors`), a kernel over the
/// vectors, and back (`into_lanes`); a length that is not a multiple of 4 is refused with the
/// buffer handed back unchanged.
#[test]
fn a_buffer_of_f32_is_viewed_as_vectors_on_every_device() {
    let x: Vec<f32> = (0..200).map(|k| k as f32 * 0.75 - 40.0).collect();
    let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let b = dev.upload(&x)?;
        let mut v = match b.into_vectors::<F32x4>() {
            Ok(v) => v,
            Err((_, e)) => return Err(e),
        };
        check.eq("vectors", &[v.len()], &[50]);
        double_vec4.launch(dev, dims1d(1), dims1d(64), (&mut v,))?;
        let flat: spoc::Buffer<f32> = v.into_lanes();
        check.eq("lanes", &flat.to_vec()?, &want);
        let odd = dev.upload(&x[..6])?;
        match odd.into_vectors::<F32x4>() {
            Ok(_) => check.wrong("6 floats viewed as F32x4 vectors"),
            Err((back, e)) => {
                check.eq("handed back", &back.to_vec()?, &x[..6]);
                check.eq(
                    "error",
                    &[e.to_string()],
                    &["a buffer of 6 elements cannot be viewed as `F32x4` vectors: 6 is not a multiple of 4".to_string()],
                );
            }
        }
        Ok(())
    });
}
