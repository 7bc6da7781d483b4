//! Runs every program of `examples/programs` at realistic sizes on one device and prints a table:
//! program, size, time, throughput, and whether the result matched the host reference.
//!
//! ```text
//! cargo run --release --example bench                         # best device, default sizes
//! cargo run --release --example bench -- --device OpenCL --quick
//! cargo run --release --example bench -- --filter matrix      # programs whose name contains it
//! cargo run --release --example bench -- --filter vector,sgemm  # … any of these
//! cargo run --release --example bench -- --device CUDA --scale 4   # 4x the sizes, for a big GPU
//! cargo run --release --example bench -- --device CUDA --json spoc.json  # rows for the peers
//! ```
//!
//! `--json FILE` also writes the rows as a JSON array, one object per program: `program`,
//! `size` (the size asked for: elements, or the side of a matrix), `shape`, `ms` (`null` when
//! skipped or failed), `checked`, `device`, `framework`. `benches/peers/` runs the same
//! problems at the same sizes through CuPy, torch and Triton and divides.
//!
//! Each program is launched once untimed (the first launch compiles its kernels), then timed; a
//! program the backend cannot run (`FeatureNotSupported`) is listed as skipped. Exits with
//! status 1 if any program failed or gave a wrong result.

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use programs::{pick_device, Program, PROGRAMS};

/// Command line of the benchmark.
#[derive(Parser, Debug)]
#[command(about = "Runs spoc's benchmark programs on one device and prints a table")]
struct Args {
    /// Backend (or backend family) to run on, e.g. `Native`, `OpenCL`, `Vulkan`, `CUDA`;
    /// default: `SPOC_DEVICE`, else the best device present.
    #[arg(long)]
    device: Option<String>,
    /// Only the programs whose name contains this text (or one of these, comma-separated).
    #[arg(long)]
    filter: Option<String>,
    /// Smaller sizes (about a second per program on the CPU backends in release builds).
    #[arg(long)]
    quick: bool,
    /// Multiplies every program's size by this factor (the size is an element count for 1-D
    /// programs and a side length for 2-D ones): `--scale 4` suits a large GPU.
    #[arg(long, default_value_t = 1)]
    scale: usize,
    /// Also writes the rows to this file as JSON (see the module docs).
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// One line of the table.
struct Row {
    program: &'static str,
    /// The size asked for.
    asked: usize,
    size: String,
    millis: Option<f64>,
    rate: String,
    check: String,
    failed: bool,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let dev = pick_device(args.device.as_deref())?;
    println!(
        "device: {} [{}], global id {}",
        dev.name, dev.framework, dev.id
    );
    let chosen: Vec<&Program> = PROGRAMS
        .iter()
        .filter(|p| {
            args.filter
                .as_deref()
                .is_none_or(|f| f.split(',').any(|f| p.name.contains(f.trim())))
        })
        .collect();
    if chosen.is_empty() {
        return Err(format!(
            "no program matches `{}`; programs: {}",
            args.filter.unwrap_or_default(),
            PROGRAMS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
        .into());
    }

    let bar = ProgressBar::new(chosen.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
            .map_err(|e| format!("progress bar template: {e}"))?,
    );
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for p in &chosen {
        let size = if args.quick {
            p.quick_size
        } else {
            p.default_size
        }
        .saturating_mul(args.scale.max(1));
        bar.set_message(format!("{} (size {size})", p.name));
        let row = match (p.run)(&dev, size) {
            Ok(o) => {
                notes.extend(o.notes.iter().cloned());
                let (rate, unit) = o.throughput();
                Row {
                    program: p.name,
                    asked: size,
                    size: o.shape.clone(),
                    millis: Some(o.seconds * 1e3),
                    rate: format!("{rate:.2} {unit}"),
                    check: o.verdict(),
                    failed: !o.checked,
                }
            }
            Err(spoc::Error::FeatureNotSupported { backend, feature }) => Row {
                program: p.name,
                asked: size,
                size: size.to_string(),
                millis: None,
                rate: "-".into(),
                check: format!("skipped: {backend} does not support {feature}"),
                failed: false,
            },
            Err(e) => Row {
                program: p.name,
                asked: size,
                size: size.to_string(),
                millis: None,
                rate: "-".into(),
                check: format!("error: {e}"),
                failed: true,
            },
        };
        if bar.is_hidden() {
            // No terminal (a log, CI, the device tool): one progress line per program instead.
            let ms = row
                .millis
                .map_or_else(|| "-".into(), |m| format!("{m:.3} ms"));
            eprintln!("bench: {} {}: {ms}, {}", row.program, row.size, row.check);
        }
        rows.push(row);
        bar.inc(1);
    }
    bar.finish_and_clear();

    println!(
        "{:<16} {:>26} {:>12} {:>16}  check",
        "program", "size", "time ms", "throughput"
    );
    for r in &rows {
        let ms = r
            .millis
            .map(|m| format!("{m:.3}"))
            .unwrap_or_else(|| "-".into());
        println!(
            "{:<16} {:>26} {:>12} {:>16}  {}",
            r.program, r.size, ms, r.rate, r.check
        );
    }
    for n in &notes {
        println!("{n}");
    }
    if let Some(path) = &args.json {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "program": r.program,
                    "size": r.asked,
                    "shape": r.size,
                    "ms": r.millis,
                    "checked": !r.failed && r.millis.is_some(),
                    "device": dev.name.to_string(),
                    "framework": dev.framework.to_string(),
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&rows)?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("rows written to {}", path.display());
    }
    let failed = rows.iter().filter(|r| r.failed).count();
    if failed > 0 {
        return Err(format!("{failed} of {} programs failed", rows.len()).into());
    }
    Ok(())
}
