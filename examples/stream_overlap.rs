//! Streams: how much a pipeline gains from two streams, and what a launch on a stream costs.
//!
//! ```text
//! cargo run --release --example stream_overlap [-- --device CUDA/PTX] [--chunk-floats N] [--chunks 8]
//! ```
//!
//! 1. **Overlap.** `chunks` chunks of `chunk-floats` f32 each go through upload (from a
//!    page-locked [`HostBuffer`] where the backend has one), a kernel (`iters` rounds of
//!    `v = v * a + b` per element) and download. *Serial*: every chunk on one stream. *Two
//!    streams*: chunk `k` on stream `k % 2`, so that one chunk's copies overlap the other's
//!    kernel. `iters` is calibrated first so that the kernel of one chunk takes about as long
//!    as its upload (a balanced pipeline; `--iters` fixes it). Each variant: median of 5 runs,
//!    host clock from the first upload to the last download's end. Target on the H200:
//!    two streams ≥ 1.7× serial.
//! 2. **Launch cost**: host time per launch of a small kernel (1024 elements), 10 000 launches
//!    in a loop, on the default stream (`launch`) and on a stream (`launch_on`), median of 5.
//!
//! Every chunk's result is checked against the host's arithmetic. Prints `RESULT` lines; exit
//! status 1 on an error or a wrong result.

use clap::Parser;
use spoc::prelude::*;
use spoc::{Buffer, HostBuffer, Stream};
use std::time::Instant;

/// `v = v * a + b`, `iters` times per element.
#[kernel]
fn rounds(y: &mut [f32], a: f32, b: f32, iters: u32) {
    let i = global_id_x();
    if i < y.len() {
        let mut v = y[i];
        let mut k = 0;
        while k < iters {
            v = v * a + b;
            k += 1;
        }
        y[i] = v;
    }
}

const A: f32 = 0.999;
const B: f32 = 0.001;

#[derive(Parser)]
#[command(about = "Streams: pipeline overlap on two streams, and launch cost on a stream")]
struct Cli {
    /// Backend to run on (or SPOC_DEVICE, or the best device present).
    #[arg(long)]
    device: Option<String>,
    /// Floats per chunk.
    #[arg(long, default_value_t = 1 << 24)]
    chunk_floats: usize,
    /// Number of chunks.
    #[arg(long, default_value_t = 8)]
    chunks: usize,
    /// Kernel rounds per element (default: calibrated so that kernel ≈ upload).
    #[arg(long)]
    iters: Option<u32>,
}

struct Pipeline {
    host_in: Vec<HostBuffer<f32>>,
    host_out: Vec<HostBuffer<f32>>,
    dev: Vec<Buffer<f32>>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn grid_for(n: usize) -> Dims {
    dims1d((n as u32).div_ceil(256))
}

/// Runs every chunk through upload, kernel and download, chunk `k` on `streams[k % len]`, and
/// returns the host time in ms from the first upload to the end of the last download.
fn run(p: &mut Pipeline, streams: &[Stream], iters: u32) -> spoc::Result<f64> {
    let t = Instant::now();
    for (k, ((hin, hout), d)) in p
        .host_in
        .iter()
        .zip(p.host_out.iter_mut())
        .zip(p.dev.iter_mut())
        .enumerate()
    {
        let s = &streams[k % streams.len()];
        s.upload(hin, d)?;
        rounds.launch_on(s, grid_for(d.len()), dims1d(256), (&mut *d, A, B, iters))?;
        s.download(d, hout)?;
    }
    for s in streams {
        s.synchronize()?;
    }
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

fn expected(v: f32, iters: u32) -> f32 {
    (0..iters).fold(v, |v, _| v * A + B)
}

fn main() {
    if let Err(e) = main_result() {
        eprintln!("stream_overlap: {e}");
        std::process::exit(1);
    }
}

fn main_result() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let dev = spoc::init_device(cli.device.as_deref())?;
    let (n, chunks) = (cli.chunk_floats, cli.chunks.max(1));
    println!(
        "device: {} ({}), {chunks} chunks of {n} f32",
        dev.name, dev.framework
    );
    let input = |k: usize| -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7 + k * 13) % 101) as f32 * 0.01)
            .collect()
    };
    let mut p = Pipeline {
        host_in: (0..chunks)
            .map(|k| HostBuffer::from_slice(&dev, &input(k)))
            .collect::<spoc::Result<_>>()?,
        host_out: (0..chunks)
            .map(|_| HostBuffer::new(&dev, n))
            .collect::<spoc::Result<_>>()?,
        dev: (0..chunks)
            .map(|_| dev.alloc::<f32>(n))
            .collect::<spoc::Result<_>>()?,
    };
    println!("host buffers page-locked: {}", p.host_in[0].is_pinned());
    let s0 = dev.new_stream()?;
    let s1 = dev.new_stream()?;

    // Calibrate: the kernel of one chunk about as long as its upload.
    let time_upload = |p: &mut Pipeline| -> spoc::Result<f64> {
        let t = Instant::now();
        s0.upload(&p.host_in[0], &mut p.dev[0])?;
        s0.synchronize()?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    };
    time_upload(&mut p)?;
    let upload_ms = median(
        (0..5)
            .map(|_| time_upload(&mut p))
            .collect::<spoc::Result<_>>()?,
    );
    // The first launch compiles the kernel: not part of the calibration.
    rounds.launch_on(&s0, grid_for(n), dims1d(256), (&mut p.dev[0], A, B, 1))?;
    s0.synchronize()?;
    let iters = match cli.iters {
        Some(i) => i,
        None => {
            let mut iters = 4u32;
            loop {
                let t = Instant::now();
                rounds.launch_on(&s0, grid_for(n), dims1d(256), (&mut p.dev[0], A, B, iters))?;
                s0.synchronize()?;
                let ms = t.elapsed().as_secs_f64() * 1e3;
                if ms >= upload_ms || iters >= 1 << 20 {
                    break iters;
                }
                iters *= 2;
            }
        }
    };
    println!("upload of one chunk: {upload_ms:.3} ms; kernel rounds: {iters}");

    run(&mut p, std::slice::from_ref(&s0), iters)?; // warm-up
    let serial = median(
        (0..5)
            .map(|_| run(&mut p, std::slice::from_ref(&s0), iters))
            .collect::<spoc::Result<_>>()?,
    );
    let two = median(
        (0..5)
            .map(|_| run(&mut p, &[s0.clone(), s1.clone()], iters))
            .collect::<spoc::Result<_>>()?,
    );
    for (k, out) in p.host_out.iter().enumerate() {
        let got = out.as_slice()?;
        let inp = input(k);
        for i in (0..n).step_by((n / 64).max(1)) {
            let want = expected(inp[i], iters);
            if got[i].to_bits() != want.to_bits() {
                return Err(format!("chunk {k} element {i}: got {}, want {want}", got[i]).into());
            }
        }
    }
    let ratio = serial / two;
    println!(
        "RESULT overlap serial_ms={serial:.3} two_streams_ms={two:.3} speedup={ratio:.2} status={}",
        if ratio >= 1.7 { "met" } else { "below-1.7" }
    );

    // Launch cost on the host: the default stream against a stream.
    let mut small = dev.alloc::<f32>(1024)?;
    let launches = 10_000;
    let mut cost = |on_stream: bool| -> spoc::Result<f64> {
        let t = Instant::now();
        for _ in 0..launches {
            if on_stream {
                rounds.launch_on(&s1, dims1d(4), dims1d(256), (&mut small, A, B, 1))?;
            } else {
                rounds.launch(&dev, dims1d(4), dims1d(256), (&mut small, A, B, 1))?;
            }
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / launches as f64;
        s1.synchronize()?;
        small.to_vec()?;
        Ok(us)
    };
    cost(true)?;
    let mut default_us = Vec::new();
    let mut stream_us = Vec::new();
    for _ in 0..5 {
        default_us.push(cost(false)?);
        stream_us.push(cost(true)?);
    }
    let (d, s) = (median(default_us), median(stream_us));
    println!(
        "RESULT launch default_stream_us={d:.3} stream_us={s:.3} ratio={:.3}",
        s / d
    );
    Ok(())
}
