//! The Interpreter's throughput (work-items per second) with its checks off, on (the default:
//! shared-memory races and never-written reads) and on with global races, on saxpy and on a
//! 16 x 16-tiled matmul; and the same two kernels at the same sizes on numba-cuda's CUDA simulator
//! (`NUMBA_ENABLE_CUDASIM=1`, run by `benches/numba_sim.sh`, which installs numba and numpy from
//! PyPI into a virtual environment on first use), with the ratio. Prints a Markdown table.
//!
//! `cargo bench --bench sanitizer` (figures in docs/BENCHMARKS.md). Options after `--`:
//! `--no-numba` skips the simulator; `--saxpy N`, `--matmul N` set the shared sizes (defaults
//! 65536 and 64, which the simulator runs in seconds); `--reps R` (default 5) timed runs per
//! setting, the settings taking turns, the best kept, after one warm-up run; `--quick` skips the
//! larger sizes (Interpreter only).

use programs::kernels::saxpy;
use spoc::interpreter::{set_checks, Checks};
use spoc::prelude::*;
use std::process::Command;
use std::time::Instant;

// The tiled matmul is the example program's (16 x 16 tiles of `a` and `b` in shared memory).
use programs::matrix_mul_tiled::matmul_tiled;

/// The three check settings measured.
const SETTINGS: [(&str, Checks); 3] = [
    ("checks off", Checks::NONE),
    ("checks on", Checks::DEFAULT),
    ("+ global races", Checks::ALL),
];

/// For each setting, the best of `reps` timed runs of `f` (after one warm-up run each), in
/// seconds. The settings take turns run by run, so that a change of the machine's load hits all
/// of them alike.
fn best_per_setting(reps: usize, mut f: impl FnMut()) -> [f64; 3] {
    let mut best = [f64::INFINITY; 3];
    for rep in 0..=reps.max(1) {
        for (k, (_, c)) in SETTINGS.iter().enumerate() {
            set_checks(*c);
            let t = Instant::now();
            f();
            if rep > 0 {
                best[k] = best[k].min(t.elapsed().as_secs_f64());
            }
        }
    }
    best
}

/// Work-items per second of saxpy over `n` elements for each setting.
fn bench_saxpy(dev: &spoc::Device, n: usize, reps: usize) -> [f64; 3] {
    let x_host: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let x = dev.upload(&x_host).unwrap();
    let mut y = dev.upload(&vec![1.0f32; n]).unwrap();
    let grid = dims1d((n as u32).div_ceil(256));
    best_per_setting(reps, || {
        saxpy
            .launch(dev, grid, dims1d(256), (2.0f32, &x, &mut y))
            .unwrap()
    })
    .map(|t| n as f64 / t)
}

/// Work-items (threads) per second of the tiled matmul of `n x n` matrices for each setting.
fn bench_matmul(dev: &spoc::Device, n: usize, reps: usize) -> [f64; 3] {
    let a_host: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.25).collect();
    let b_host: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let a = dev.upload(&a_host).unwrap();
    let b = dev.upload(&b_host).unwrap();
    let mut c = dev.alloc::<f32>(n * n).unwrap();
    let g = (n as u32).div_ceil(16);
    let items = (g * 16) as f64 * (g * 16) as f64;
    let rates = best_per_setting(reps, || {
        matmul_tiled
            .launch(dev, dims2d(g, g), dims2d(16, 16), (&a, &b, &mut c, n))
            .unwrap()
    })
    .map(|t| items / t);
    // The result is checked once (exact: small integers and quarters sum exactly in f32).
    let got = c.to_vec().unwrap();
    for (i, g) in got.iter().enumerate().step_by(97) {
        let (r, col) = (i / n, i % n);
        let want: f32 = (0..n)
            .map(|k| a_host[r * n + k] * b_host[k * n + col])
            .sum();
        assert_eq!(*g, want, "c[{r}][{col}]");
    }
    rates
}

/// The simulator's (work-items, items per second) per kernel, or why it did not run.
fn numba(n_saxpy: usize, n_matmul: usize) -> Result<Vec<(String, f64)>, String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/numba_sim.sh");
    let out = Command::new("sh")
        .arg(script)
        .arg(n_saxpy.to_string())
        .arg(n_matmul.to_string())
        .arg("1")
        .output()
        .map_err(|e| format!("cannot run {script}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{script} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rates = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("numba-cudasim") {
            continue;
        }
        let kernel = words.next().unwrap_or_default().to_string();
        if kernel == "versions" {
            println!("simulator: {}", words.collect::<Vec<_>>().join(" "));
            continue;
        }
        let rate = words
            .find_map(|w| w.strip_prefix("items_per_s="))
            .and_then(|r| r.parse::<f64>().ok())
            .ok_or_else(|| format!("unreadable simulator line: {line}"))?;
        rates.push((kernel, rate));
    }
    Ok(rates)
}

fn rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2} M/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k/s", r / 1e3)
    } else {
        format!("{r:.0} /s")
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (n_saxpy, n_matmul, reps) = (opt("--saxpy", 65536), opt("--matmul", 64), opt("--reps", 5));
    let dev = spoc::init_device(Some("Interpreter")).expect("the Interpreter is always there");
    println!(
        "Interpreter: {} ({} rayon threads)",
        dev.name,
        rayon::current_num_threads()
    );

    let sim = if args.iter().any(|a| a == "--no-numba") {
        Err("skipped (--no-numba)".to_string())
    } else {
        numba(n_saxpy, n_matmul)
    };
    let sim_rate = |k: &str| {
        sim.as_ref()
            .ok()
            .and_then(|v| v.iter().find(|(n, _)| n == k).map(|(_, r)| *r))
    };
    if let Err(why) = &sim {
        println!("numba simulator: {why}");
    }

    println!();
    println!(
        "| kernel | size | {} | {} | {} | numba CUDA simulator | checks on / simulator |",
        SETTINGS[0].0, SETTINGS[1].0, SETTINGS[2].0
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    let row = |kernel: &str, size: String, r: [f64; 3], sim: Option<f64>| {
        let (s, ratio) = match sim {
            Some(s) => (rate(s), format!("**{:.0}×**", r[1] / s)),
            None => ("—".into(), "—".into()),
        };
        println!(
            "| {kernel} | {size} | {} | {} | {} | {s} | {ratio} |",
            rate(r[0]),
            rate(r[1]),
            rate(r[2])
        );
    };
    row(
        "saxpy",
        format!("{n_saxpy}"),
        bench_saxpy(&dev, n_saxpy, reps),
        sim_rate("saxpy"),
    );
    row(
        "matmul_tiled",
        format!("{n_matmul} x {n_matmul}"),
        bench_matmul(&dev, n_matmul, reps),
        sim_rate("matmul_tiled"),
    );
    // Larger sizes, the Interpreter only.
    if args.iter().any(|a| a == "--quick") {
        set_checks(Checks::DEFAULT);
        return;
    }
    row(
        "saxpy",
        format!("{}", 1 << 22),
        bench_saxpy(&dev, 1 << 22, 3),
        None,
    );
    row(
        "matmul_tiled",
        "256 x 256".into(),
        bench_matmul(&dev, 256, 3),
        None,
    );
    set_checks(Checks::DEFAULT);
}
