//! `nbody`: one step of all-pairs gravity with Plummer softening over `n` bodies, each a
//! `#[derive(Record)]` [`Body`] read from `&[Body]` and written to `&mut [Body]`.
//!
//! Every thread sums the accelerations all `n` bodies exert on its body (softening `EPS2`, so a
//! body's pull on itself is zero and close pairs stay finite), then a `#[device]` helper taking
//! and returning records applies a kick-drift step: `v += a dt`, `x += v dt`. The usual 20 flops
//! per interaction count the work (`20 n^2` per step).
//!
//! Checked against an `f64` host reference. Tolerance: each component `c` within
//! `(n + 32) * f32::EPSILON * scale(c)`, where `scale` bounds the magnitudes summed into it
//! (for `v'`: `|v| + dt * sum_j |m_j d_j / r_j^3|`; for `x'`: `|x| + dt * scale(v')`): the
//! worst-case rounding error of summing `n` terms in `f32` in any order, plus a few roundings per
//! term (subtract, square, `sqrt`, divide, scale), on backends whose `sqrt` and `/` are within
//! a few ULP.

use super::{blocks_for, time_it, Mismatch, Outcome, SplitMix64, Work};
use spoc::prelude::*;

/// Softening length squared (positions are in `[-1, 1)^3`).
pub const EPS2: f32 = 0.01;
/// Time step.
pub const DT: f32 = 0.01;

/// A point mass: position, velocity, mass (gravitational constant 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Body {
    /// Position.
    pub x: f32,
    /// Position.
    pub y: f32,
    /// Position.
    pub z: f32,
    /// Velocity.
    pub vx: f32,
    /// Velocity.
    pub vy: f32,
    /// Velocity.
    pub vz: f32,
    /// Mass.
    pub mass: f32,
}

/// `b` after a kick-drift step of `dt` under acceleration `(ax, ay, az)`.
#[device]
pub fn kick_drift(b: Body, ax: f32, ay: f32, az: f32, dt: f32) -> Body {
    let vx = b.vx + ax * dt;
    let vy = b.vy + ay * dt;
    let vz = b.vz + az * dt;
    Body {
        x: b.x + vx * dt,
        y: b.y + vy * dt,
        z: b.z + vz * dt,
        vx,
        vy,
        vz,
        mass: b.mass,
    }
}

/// One all-pairs step: `out[i]` is `bodies[i]` after one step of `dt`.
#[kernel]
pub fn nbody_step(bodies: &[Body], out: &mut [Body], dt: f32, eps2: f32) {
    let i = global_id_x();
    if i < out.len() {
        let b = bodies[i];
        let mut ax = 0.0f32;
        let mut ay = 0.0f32;
        let mut az = 0.0f32;
        for j in 0..bodies.len() {
            let o = bodies[j];
            let dx: f32 = o.x - b.x;
            let dy: f32 = o.y - b.y;
            let dz: f32 = o.z - b.z;
            let r2 = dx * dx + dy * dy + dz * dz + eps2;
            let inv = 1.0f32 / r2.sqrt();
            let m: f32 = o.mass;
            let s = m * (inv * inv * inv);
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        out[i] = kick_drift(b, ax, ay, az, dt);
    }
}

/// `n` bodies: positions uniform in `[-1, 1)^3`, velocities in `[-0.1, 0.1)^3`, masses in
/// `[0.5, 1.5) / n` (so accelerations stay of order one whatever `n`).
pub fn bodies(n: usize, seed: u64) -> Vec<Body> {
    let mut rng = SplitMix64::new(seed);
    let m = 1.0 / n.max(1) as f32;
    (0..n)
        .map(|_| Body {
            x: rng.f32_in(-1.0, 1.0),
            y: rng.f32_in(-1.0, 1.0),
            z: rng.f32_in(-1.0, 1.0),
            vx: rng.f32_in(-0.1, 0.1),
            vy: rng.f32_in(-0.1, 0.1),
            vz: rng.f32_in(-0.1, 0.1),
            mass: rng.f32_in(0.5, 1.5) * m,
        })
        .collect()
}

/// One step on the host in `f64`: the bodies after it (as `f64` `[x, y, z, vx, vy, vz]`) and the
/// scale of each component (see the module docs).
pub fn reference(bs: &[Body], dt: f32, eps2: f32) -> (Vec<[f64; 6]>, Vec<[f64; 6]>) {
    let (dt, eps2) = (dt as f64, eps2 as f64);
    bs.iter()
        .map(|b| {
            let (mut a, mut mag) = ([0.0f64; 3], [0.0f64; 3]);
            for o in bs {
                let d = [
                    o.x as f64 - b.x as f64,
                    o.y as f64 - b.y as f64,
                    o.z as f64 - b.z as f64,
                ];
                let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
                let s = o.mass as f64 / (r2 * r2.sqrt());
                for k in 0..3 {
                    a[k] += d[k] * s;
                    mag[k] += (d[k] * s).abs();
                }
            }
            let (p, v) = ([b.x, b.y, b.z], [b.vx, b.vy, b.vz]);
            let mut want = [0.0f64; 6];
            let mut scale = [0.0f64; 6];
            for k in 0..3 {
                let v1 = v[k] as f64 + a[k] * dt;
                want[3 + k] = v1;
                want[k] = p[k] as f64 + v1 * dt;
                scale[3 + k] = (v[k] as f64).abs() + dt * mag[k];
                scale[k] = (p[k] as f64).abs() + dt * scale[3 + k];
            }
            (want, scale)
        })
        .unzip()
}

/// Compares device bodies with [`reference()`]'s result: every component within
/// `(n + 32) * f32::EPSILON * scale`, masses exact.
pub fn check_bodies(
    output: &str,
    got: &[Body],
    input: &[Body],
    want: &[[f64; 6]],
    scale: &[[f64; 6]],
) -> Option<Mismatch> {
    let rel = (input.len() as f64 + 32.0) * f32::EPSILON as f64;
    let tolerance = format!("|got - want| <= {rel:e} * scale (masses exact)");
    if let Some(m) = super::length_mismatch(output, got.len(), want.len(), "bodies", &tolerance) {
        return Some(m);
    }
    let comps = |b: &Body| [b.x, b.y, b.z, b.vx, b.vy, b.vz];
    let bad = |i: usize| {
        let g = comps(&got[i]);
        got[i].mass != input[i].mass
            || (0..6).any(|k| {
                let d = (g[k] as f64 - want[i][k]).abs();
                d.is_nan() || d > rel * scale[i][k]
            })
    };
    let mut bad_ix = (0..got.len()).filter(|&i| bad(i));
    let first = bad_ix.next()?;
    Some(Mismatch {
        output: output.into(),
        index: first,
        got: format!("{:?}", got[first]),
        want: format!("{:?} (mass {})", want[first], input[first].mass),
        count: 1 + bad_ix.count(),
        tolerance,
    })
}

/// Runs one `nbody` step over `size` bodies (blocks of 256 threads).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]).
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, std::mem::size_of::<Body>()); 2])?;
    let host = bodies(size, 0x0b0d_1e55);
    let bb = dev.upload(&host)?;
    let mut ob = dev.alloc::<Body>(size)?;
    let (grid, block) = (dims1d(blocks_for(size, 256)), dims1d(256));
    nbody_step.launch(dev, grid, block, (&bb, &mut ob, DT, EPS2))?; // compiles the kernel
    let seconds = time_it(dev, || {
        nbody_step.launch(dev, grid, block, (&bb, &mut ob, DT, EPS2))
    })?;
    let got = ob.to_vec()?;
    let (want, scale) = reference(&host, DT, EPS2);
    Ok(Outcome::new(
        "nbody",
        size,
        format!("{size} bodies, 1 step"),
        seconds,
        Work::Flops(20.0 * size as f64 * size as f64),
    )
    .check(check_bodies("bodies", &got, &host, &want, &scale)))
}
