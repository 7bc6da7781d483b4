//! The cost of checked mode (`spoc::codegen::checked`): three kernels compiled twice for one
//! device, unchecked and checked (bounds checks on every buffer and shared-memory access, zero
//! checks on every integer division, the fault record bound and read back), each launched
//! `--reps` times; prints the median time per launch of both and their ratio, and checks that
//! both compute the same result.
//!
//! ```text
//! cargo run --release --example checked_overhead                          # best device
//! cargo run --release --example checked_overhead -- --device CUDA/PTX --size 67108864
//! cargo run --release --example checked_overhead -- --device OpenCL --reps 20
//! ```
//!
//! The kernels: `triad` (`a[i] = b[i] + s * c[i]`, three accesses per thread, bandwidth-bound),
//! `gather` (`out[i] = src[idx[i]] / div[i]`, a data-dependent index and an integer division) and
//! `block_sum` (a shared-memory tree reduction: `2 log2(block)` shared accesses per thread).
//! A checked launch also zeroes and reads back the 64-byte fault record, and waits for the kernel
//! (the unchecked launches are synchronised too, so both times include the wait). On Native and
//! the Interpreter every access is checked anyway: both columns are the same code there.

use programs::kernels::block_sum;
use programs::stream_triad::triad;
use spoc::prelude::*;
use spoc::{Arg, CompileOptions, Device, KernelDef};
use std::time::{Duration, Instant};

#[kernel]
fn gather(idx: &[u32], src: &[u32], div: &[u32], out: &mut [u32]) {
    let i = global_id_x();
    if i < out.len() {
        out[i] = src[idx[i] as usize] / div[i];
    }
}

struct Opts {
    device: Option<String>,
    size: usize,
    reps: usize,
}

fn parse() -> Result<Opts, String> {
    let usage = "usage: checked_overhead [--device NAME] [--size N] [--reps R]";
    let mut o = Opts {
        device: std::env::var("SPOC_DEVICE").ok(),
        size: 16 << 20,
        reps: 10,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| {
            args.next()
                .ok_or_else(|| format!("`{a}` needs {what} ({usage})"))
        };
        match a.as_str() {
            "--device" => o.device = Some(value("a backend name")?),
            "--size" => {
                o.size = value("an element count")?
                    .replace('_', "")
                    .parse()
                    .map_err(|e| format!("bad --size: {e} ({usage})"))?
            }
            "--reps" => {
                o.reps = value("a count")?
                    .parse()
                    .map_err(|e| format!("bad --reps: {e} ({usage})"))?
            }
            other => return Err(format!("unknown argument `{other}` ({usage})")),
        }
    }
    o.reps = o.reps.max(1);
    Ok(o)
}

/// The median of `reps` launches (`launch`, given the compiled kernel) of `def` compiled with
/// `checked`, each followed by a synchronisation, after one warm-up launch.
fn time(
    dev: &Device,
    def: &'static KernelDef,
    checked: bool,
    block: u32,
    reps: usize,
    launch: &mut dyn FnMut(&spoc::CompiledKernel) -> spoc::Result<()>,
) -> spoc::Result<Duration> {
    let opts = CompileOptions {
        block: Some(dims1d(block)),
        checked: Some(checked),
        ..CompileOptions::default()
    };
    let ck = spoc::compile_kernel_with(dev, def, opts)?;
    let mut samples = Vec::with_capacity(reps);
    for k in 0..=reps {
        let t0 = Instant::now();
        launch(&ck)?;
        dev.synchronize()?;
        if k > 0 {
            samples.push(t0.elapsed());
        }
    }
    samples.sort();
    Ok(samples[samples.len() / 2])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(name: &str, plain: Duration, checked: Duration) {
    println!(
        "{name:<10} {:>14.3} {:>14.3} {:>8.2}",
        ms(plain),
        ms(checked),
        checked.as_secs_f64() / plain.as_secs_f64().max(1e-12)
    );
}

fn main() {
    if let Err(e) = run() {
        eprintln!("checked_overhead: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let o = parse()?;
    let dev = spoc::init_device(o.device.as_deref())?;
    let n = o.size;
    println!(
        "device: {} [{}], {n} elements, median of {} launches",
        dev.name, dev.framework, o.reps
    );
    let block = 256u32;
    let (g, b1) = (dims1d((n as u32).div_ceil(block).max(1)), dims1d(block));
    let grid = (n as u32).div_ceil(block).max(1) as usize;
    println!(
        "{:<10} {:>14} {:>14} {:>8}",
        "kernel", "unchecked ms", "checked ms", "ratio"
    );

    let hb: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25).collect();
    let hc: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    let b = dev.upload(&hb)?;
    let c = dev.upload(&hc)?;
    let mut a = dev.alloc::<f32>(n)?;
    let mut got = Vec::new();
    for checked in [false, true] {
        let t = time(&dev, triad.def(), checked, block, o.reps, &mut |ck| {
            let args: Vec<Arg> = vec![(&mut a).into(), (&b).into(), (&c).into(), Arg::F32(1.5)];
            spoc::run_kernel(ck, &mut spoc::set_args(&dev, args)?, g, b1, 0)
        })?;
        got.push((t, a.to_vec()?));
    }
    assert_eq!(got[0].1, got[1].1, "triad: checked and unchecked differ");
    report("triad", got[0].0, got[1].0);

    let hidx: Vec<u32> = (0..n as u64)
        .map(|i| ((i * 2_654_435_761) % n as u64) as u32)
        .collect();
    let hsrc: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(7) ^ 0x55).collect();
    let hdiv: Vec<u32> = (0..n as u32).map(|i| 1 + i % 5).collect();
    let idx = dev.upload(&hidx)?;
    let src = dev.upload(&hsrc)?;
    let div = dev.upload(&hdiv)?;
    let mut out = dev.alloc::<u32>(n)?;
    let mut got = Vec::new();
    for checked in [false, true] {
        let t = time(&dev, gather.def(), checked, block, o.reps, &mut |ck| {
            let args: Vec<Arg> = vec![
                (&idx).into(),
                (&src).into(),
                (&div).into(),
                (&mut out).into(),
            ];
            spoc::run_kernel(ck, &mut spoc::set_args(&dev, args)?, g, b1, 0)
        })?;
        got.push((t, out.to_vec()?));
    }
    assert_eq!(got[0].1, got[1].1, "gather: checked and unchecked differ");
    report("gather", got[0].0, got[1].0);

    let mut sums = dev.alloc::<f32>(grid)?;
    let mut got = Vec::new();
    for checked in [false, true] {
        let t = time(&dev, block_sum.def(), checked, block, o.reps, &mut |ck| {
            let args: Vec<Arg> = vec![(&b).into(), (&mut sums).into()];
            spoc::run_kernel(ck, &mut spoc::set_args(&dev, args)?, g, b1, 0)
        })?;
        got.push((t, sums.to_vec()?));
    }
    assert_eq!(
        got[0].1, got[1].1,
        "block_sum: checked and unchecked differ"
    );
    report("block_sum", got[0].0, got[1].0);
    Ok(())
}
