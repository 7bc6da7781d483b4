//! saxpy on the best device present: `y = a * x + y` over N floats (16 M by default).
//!
//! ```text
//! cargo run --release --example saxpy              # 16 M elements, best device
//! cargo run --release --example saxpy -- 1000000   # 1 M elements
//! SPOC_DEVICE=Interpreter cargo run --release --example saxpy -- 100000
//! cargo run --release --example saxpy -- --device OpenCL 1000000
//! ```
//!
//! Checks every element against a CPU reference and prints the launch time and the effective
//! bandwidth (12 bytes moved per element: read x, read y, write y).

use spoc::prelude::*;
use std::time::Instant;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// saxpy on the best device present (or the one named), checked element by element.
#[derive(clap::Parser, Debug)]
#[command(name = "saxpy")]
struct Cli {
    /// Backend (or backend family) to run on: `Native`, `Interpreter`, `OpenCL`, `Vulkan`,
    /// `CUDA`, ...; default: `SPOC_DEVICE`, else the best device present.
    #[arg(long)]
    device: Option<String>,
    /// Number of elements (`_` separators allowed).
    #[arg(default_value = "16777216", value_parser = programs::parse_size)]
    n: usize,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("saxpy: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let cli = <Cli as clap::Parser>::parse();
    let n = cli.n;
    let dev = spoc::init_device(cli.device.as_deref())?;
    println!(
        "device: {} [{}], global id {}",
        dev.name, dev.framework, dev.id
    );

    let a = 2.5f32;
    let x_host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y_host: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let x = dev.upload(&x_host)?;
    let mut y = dev.upload(&y_host)?;

    let block = 256u32;
    let grid = (n as u32).div_ceil(block).max(1);
    // The first launch compiles (and caches) the kernel for this device; time the second.
    saxpy.launch(&dev, dims1d(grid), dims1d(block), (a, &x, &mut y))?;
    y.upload_from(&y_host)?;
    dev.synchronize()?;
    let t0 = Instant::now();
    saxpy.launch(&dev, dims1d(grid), dims1d(block), (a, &x, &mut y))?;
    dev.synchronize()?;
    let dt = t0.elapsed();

    let got = y.to_vec()?;
    let mut bad = 0usize;
    for i in 0..n {
        let want = a * x_host[i] + y_host[i];
        if got[i] != want {
            if bad < 5 {
                eprintln!("mismatch at {i}: got {}, want {want}", got[i]);
            }
            bad += 1;
        }
    }
    if bad > 0 {
        return Err(format!("{bad} of {n} elements differ from the CPU reference").into());
    }
    let secs = dt.as_secs_f64();
    let gbs = (12.0 * n as f64) / secs / 1e9;
    println!(
        "saxpy n={n}: {:.3} ms, {gbs:.2} GB/s; all {n} elements match the CPU reference",
        secs * 1e3
    );
    Ok(())
}
