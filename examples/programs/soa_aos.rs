//! `soa_aos`: the same record kernel run through an array-of-structures `Buffer<Particle>` and a
//! Structure-of-Arrays `SoaBuffer<Particle>` (one array per field), both timed.
//!
//! The kernel moves each particle for `STEPS` steps: `vz -= g dt`, then `x += vx dt`,
//! `y += vy dt`, `z += vz dt`. It reads six fields and writes four of a 32-byte record whose
//! `mass` and `id` it never touches, so an array of structures drags those through memory while
//! a structure of arrays does not: 40 bytes per particle per step are counted (the fields used,
//! each once). The kernel source is the same for both: the runtime compiles the SoA launch with
//! the parameter lowered as a structure of arrays (`CompileOptions::soa_params`).
//!
//! Only CUDA/PTX lowers SoA parameters: on every other device the SoA launch is refused with a
//! typed `Error::FeatureNotSupported`, and the program runs the AoS pass only and says so (that
//! counts as a run, not a failure). Both results are checked exactly against a host reference
//! (`+` and `*` in the same order, never contracted into an FMA).
//!
//! The outcome's time and throughput are the AoS pass's; the SoA pass's (or why it was skipped)
//! are in the shape line.

use super::{blocks_for, check_exact, time_it, Outcome, SplitMix64, Work};
use spoc::prelude::*;
use spoc::SoaBuffer;

/// Steps per timed pass (one launch each).
pub const STEPS: usize = 10;
/// Time step.
pub const DT: f32 = 0.001;
/// Gravity along `-z`.
pub const G: f32 = 9.81;
/// Bytes of global memory one step reads and writes per particle (six `f32` fields read, four
/// written).
pub const BYTES_PER_STEP: f64 = 40.0;

/// A particle: position, velocity, and two fields the update carries along untouched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Particle {
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
    /// Mass (not used by the update).
    pub mass: f32,
    /// Identifier (not used by the update).
    pub id: u32,
}

/// One step of every particle under gravity `g` along `-z`.
#[kernel]
pub fn advance(ps: &mut [Particle], dt: f32, g: f32) {
    let i = global_id_x();
    if i < ps.len() {
        let vz: f32 = ps[i].vz - g * dt;
        ps[i].vz = vz;
        ps[i].x += ps[i].vx * dt;
        ps[i].y += ps[i].vy * dt;
        ps[i].z += vz * dt;
    }
}

/// `n` seeded particles (positions in `[-10, 10)`, velocities in `[-1, 1)`).
pub fn particles(n: usize, seed: u64) -> Vec<Particle> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|i| Particle {
            x: rng.f32_in(-10.0, 10.0),
            y: rng.f32_in(-10.0, 10.0),
            z: rng.f32_in(-10.0, 10.0),
            vx: rng.f32_in(-1.0, 1.0),
            vy: rng.f32_in(-1.0, 1.0),
            vz: rng.f32_in(-1.0, 1.0),
            mass: rng.f32_in(0.5, 2.0),
            id: i as u32,
        })
        .collect()
}

/// [`advance`] applied `steps` times on the host (the same operations in the same order).
pub fn reference(ps: &[Particle], steps: usize, dt: f32, g: f32) -> Vec<Particle> {
    let mut out = ps.to_vec();
    for _ in 0..steps {
        for p in &mut out {
            p.vz -= g * dt;
            p.x += p.vx * dt;
            p.y += p.vy * dt;
            p.z += p.vz * dt;
        }
    }
    out
}

/// The SoA pass: upload, one untimed launch (compiles the SoA variant), `STEPS` launches timed
/// ([`time_it`]), reset, `STEPS` more for the result; the seconds and the result.
fn soa_pass(dev: &Device, host: &[Particle]) -> spoc::Result<(f64, Vec<Particle>)> {
    let n = host.len();
    let (grid, block) = (dims1d(blocks_for(n, 256)), dims1d(256));
    let mut sb: SoaBuffer<Particle> = dev.upload_soa(host)?;
    advance.launch(dev, grid, block, (&mut sb, DT, G))?;
    let seconds = time_it(dev, || {
        for _ in 0..STEPS {
            advance.launch(dev, grid, block, (&mut sb, DT, G))?;
        }
        Ok(())
    })?;
    // Timed back to back (the particles move on), then `STEPS` from the start for the check.
    sb.upload_from(host)?;
    for _ in 0..STEPS {
        advance.launch(dev, grid, block, (&mut sb, DT, G))?;
    }
    Ok((seconds, sb.to_vec()?))
}

/// Runs `soa_aos` over `size` particles (blocks of 256 threads, [`STEPS`] steps per pass).
///
/// # Errors
/// Whatever spoc reports (see [`super::RunFn`]), except a typed refusal of the SoA launch
/// (`Error::FeatureNotSupported`), which skips the SoA pass.
pub fn run(dev: &Device, size: usize) -> spoc::Result<Outcome> {
    super::need(dev, &[(size, std::mem::size_of::<Particle>()); 2])?;
    let host = particles(size, 0x50a_a05);
    let want = reference(&host, STEPS, DT, G);
    let (grid, block) = (dims1d(blocks_for(size, 256)), dims1d(256));
    let bytes = BYTES_PER_STEP * size as f64 * STEPS as f64;

    let mut ab = dev.upload(&host)?;
    advance.launch(dev, grid, block, (&mut ab, DT, G))?; // compiles the kernel
    let aos_seconds = time_it(dev, || {
        for _ in 0..STEPS {
            advance.launch(dev, grid, block, (&mut ab, DT, G))?;
        }
        Ok(())
    })?;
    // Timed back to back (the particles move on), then `STEPS` from the start for the check.
    ab.upload_from(&host)?;
    for _ in 0..STEPS {
        advance.launch(dev, grid, block, (&mut ab, DT, G))?;
    }
    let aos = ab.to_vec()?;

    let (soa_note, soa_check) = match soa_pass(dev, &host) {
        Ok((s, got)) => (
            format!(
                "SoA {:.3} ms ({:.2} GB/s)",
                s * 1e3,
                bytes / s.max(1e-12) / 1e9
            ),
            check_exact("soa", &got, &want),
        ),
        Err(spoc::Error::FeatureNotSupported { backend, feature }) => (
            format!("SoA skipped: {backend} does not support {feature}"),
            None,
        ),
        Err(e) => return Err(e),
    };
    Ok(Outcome::new(
        "soa_aos",
        size,
        format!("{size} particles x {STEPS} steps"),
        aos_seconds,
        Work::Bytes(bytes),
    )
    .note(format!(
        "soa_aos: AoS {:.3} ms; {soa_note}",
        aos_seconds * 1e3
    ))
    .check(check_exact("aos", &aos, &want))
    .check(soa_check))
}
