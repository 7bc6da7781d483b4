//! The cross-backend test harness: every kernel case runs on every available device; the
//! Interpreter (the reference backend) must match a plain-Rust reference exactly, and every other
//! device must match the Interpreter — exactly for integers and for f32/f64 `+ - * /` and `sqrt`,
//! within the case's stated ULP bound for transcendentals (NaN matches NaN, whatever its
//! payload). A backend may skip a case only by refusing it with `Error::FeatureNotSupported`
//! (e.g. f64 on a device without it), and the skip is printed with its reason.
//!
//! Required backends: Native and Interpreter always; and every name in `SPOC_REQUIRE_BACKENDS`
//! (comma-separated, e.g. `opencl,vulkan` in CI, `cuda` on the GPU machine). A required backend
//! that does not come up fails the run.
#![allow(dead_code)]

use spoc::{Device, Error};
use std::collections::BTreeMap;
use std::fmt;

/// The backends every kernel test must run on, on any machine (and in CI).
pub const REQUIRED_CPU_BACKENDS: [&str; 2] = ["Native", "Interpreter"];

/// Backends that must come up: the CPU ones plus `SPOC_REQUIRE_BACKENDS`.
pub fn required_backends() -> Vec<String> {
    let mut names: Vec<String> = REQUIRED_CPU_BACKENDS
        .iter()
        .map(|s| s.to_string())
        .collect();
    names.extend(spoc_testkit::backends::required());
    names
}

/// Every device of every available backend, Interpreter first.
///
/// # Panics
/// If a required backend (see [`required_backends`]) has no device: the run must fail rather
/// than pass on fewer backends.
pub fn devices() -> Vec<Device> {
    let mut devs = spoc::all_devices(None).expect("listing devices failed");
    for name in required_backends() {
        if !devs.iter().any(|d| spoc::device_is_of_backend(&name, d)) {
            let why = spoc::init_device(Some(&name)).err().map(|e| e.to_string());
            panic!(
                "required backend {name} has no device ({}); available: {:?}",
                why.unwrap_or_else(|| "no device".into()),
                devs.iter()
                    .map(|d| d.framework.to_string())
                    .collect::<Vec<_>>()
            );
        }
    }
    devs.sort_by_key(|d| d.framework != "Interpreter");
    devs
}

/// One device of each backend that checks every access and division (Native and Interpreter):
/// for tests of faults, which GPU backends do not detect.
///
/// # Panics
/// If one of them does not come up.
pub fn checking_devices() -> Vec<Device> {
    REQUIRED_CPU_BACKENDS
        .iter()
        .map(|name| {
            spoc::init_device(Some(name))
                .unwrap_or_else(|e| panic!("required backend {name} did not come up: {e}"))
        })
        .collect()
}

/// Blocks needed to cover `n` threads with blocks of `block`.
pub fn blocks_for(n: usize, block: u32) -> u32 {
    (n as u32).div_ceil(block).max(1)
}

/// Deterministic pseudo-random values (xorshift), so tests need no extra crates.
pub fn pseudo_random(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed.max(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect()
}

/// One output buffer of a case, downloaded.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
}

macro_rules! out_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<Vec<$t>> for Out { fn from(v: Vec<$t>) -> Out { Out::$v(v) } }
    )*};
}
out_from!(f32 => F32, f64 => F64, i32 => I32, u32 => U32, i64 => I64, u64 => U64);

pub use spoc_testkit::float::Tolerance;
use spoc_testkit::float::{ulp_distance_f32, ulp_distance_f64};

fn float_close(a: f64, b: f64, ulps: u64, tol: Tolerance) -> bool {
    tol.accepts(a, b, ulps)
}

/// Compares `got` with `want` element by element; the error names the first mismatches.
pub fn compare(got: &Out, want: &Out, tol: Tolerance) -> Result<(), String> {
    fn exact<T: PartialEq + fmt::Debug>(g: &[T], w: &[T]) -> Result<(), String> {
        if g.len() != w.len() {
            return Err(format!("length {} != {}", g.len(), w.len()));
        }
        let bad: Vec<String> = (0..g.len())
            .filter(|&i| g[i] != w[i])
            .take(4)
            .map(|i| format!("[{i}] got {:?}, want {:?}", g[i], w[i]))
            .collect();
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad.join("; "))
        }
    }
    fn floats<T: Copy + fmt::Debug>(
        g: &[T],
        w: &[T],
        dist: impl Fn(T, T) -> u64,
        wide: impl Fn(T) -> f64,
        tol: Tolerance,
    ) -> Result<(), String> {
        if g.len() != w.len() {
            return Err(format!("length {} != {}", g.len(), w.len()));
        }
        let bad: Vec<String> = (0..g.len())
            .filter(|&i| !float_close(wide(g[i]), wide(w[i]), dist(g[i], w[i]), tol))
            .take(4)
            .map(|i| {
                format!(
                    "[{i}] got {:?}, want {:?} ({} ulp)",
                    g[i],
                    w[i],
                    dist(g[i], w[i])
                )
            })
            .collect();
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad.join("; "))
        }
    }
    match (got, want) {
        (Out::F32(g), Out::F32(w)) => floats(g, w, ulp_distance_f32, |x| x as f64, tol),
        (Out::F64(g), Out::F64(w)) => floats(g, w, ulp_distance_f64, |x| x, tol),
        (Out::I32(g), Out::I32(w)) => exact(g, w),
        (Out::U32(g), Out::U32(w)) => exact(g, w),
        (Out::I64(g), Out::I64(w)) => exact(g, w),
        (Out::U64(g), Out::U64(w)) => exact(g, w),
        _ => Err("output types differ".into()),
    }
}

/// One kernel case of the suite.
pub struct Case {
    pub name: &'static str,
    /// Runs the kernel on a device and downloads its outputs.
    pub run: fn(&Device) -> spoc::Result<Vec<Out>>,
    /// The plain-Rust reference (what the Interpreter must give, exactly).
    pub reference: fn() -> Vec<Out>,
    /// Tolerance against the Interpreter on float outputs, per backend family.
    pub tolerance: fn(&Device) -> Tolerance,
}

/// Exact everywhere.
pub fn exact(_: &Device) -> Tolerance {
    Tolerance::EXACT
}

/// What one backend (device label) did in a suite: runs that passed, skips and failures with
/// their reasons.
#[derive(Default)]
pub struct Tally {
    pub ran: usize,
    pub skipped: Vec<String>,
    pub failed: Vec<String>,
}

/// Prints `heading`, then one line per device: `  #id name [framework]`.
pub fn print_devices(heading: &str, devs: &[Device]) {
    println!("{heading}");
    for d in devs {
        println!("  #{} {} [{}]", d.id, d.name, d.framework);
    }
}

/// Prints the per-backend table of `tallies` (ran, skipped, failed), each skip and failure with
/// its reason, and the closing line `{suite}: N passed, N failed, N skipped`.
pub fn print_tallies(
    suite: &str,
    tallies: &BTreeMap<String, Tally>,
    (passed, failed, skipped): (usize, usize, usize),
) {
    println!(
        "{:<28} {:>5} {:>8} {:>7}",
        "backend", "ran", "skipped", "failed"
    );
    for (label, t) in tallies {
        println!(
            "{label:<28} {:>5} {:>8} {:>7}",
            t.ran,
            t.skipped.len(),
            t.failed.len()
        );
    }
    for (label, t) in tallies {
        for s in &t.skipped {
            println!("  skipped on {label}: {s}");
        }
        for f in &t.failed {
            println!("  FAILED on {label}: {f}");
        }
    }
    println!("{suite}: {passed} passed, {failed} failed, {skipped} skipped");
}

/// Runs every case on every device, prints a per-backend table (kernels ran, skipped and why,
/// failed) and the closing line `N passed, N failed, N skipped`. Returns false on any failure.
pub fn run_suite(suite: &str, cases: &[Case]) -> bool {
    let devs = devices();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    for case in cases {
        let want = (case.reference)();
        let mut reference: Option<Vec<Out>> = None;
        for dev in &devs {
            let label = format!("{} #{}", dev.framework, dev.id);
            let tally = tallies.entry(label.clone()).or_default();
            let outcome = match (case.run)(dev) {
                Err(Error::FeatureNotSupported { backend, feature }) => {
                    skipped += 1;
                    tally.skipped.push(format!(
                        "{}: {backend} does not support {feature}",
                        case.name
                    ));
                    continue;
                }
                Err(e) => Err(format!("error: {e}")),
                Ok(got) => {
                    let (base, tol) = match &reference {
                        // The Interpreter (first device) against plain Rust, exactly.
                        None => (&want, Tolerance::EXACT),
                        Some(r) => (r, (case.tolerance)(dev)),
                    };
                    let mut res = Ok(());
                    if got.len() != base.len() {
                        res = Err(format!("{} outputs, want {}", got.len(), base.len()));
                    }
                    for (k, (g, w)) in got.iter().zip(base).enumerate() {
                        if let Err(e) = compare(g, w, tol) {
                            res = Err(format!("output {k}: {e}"));
                            break;
                        }
                    }
                    if reference.is_none() && dev.framework == "Interpreter" && res.is_ok() {
                        reference = Some(got);
                    }
                    res
                }
            };
            match outcome {
                Ok(()) => {
                    passed += 1;
                    tally.ran += 1;
                }
                Err(e) => {
                    failed += 1;
                    tally.failed.push(format!("{}: {e}", case.name));
                }
            }
        }
    }
    print_devices(
        &format!(
            "\n== {suite}: {} kernels on {} devices",
            cases.len(),
            devs.len()
        ),
        &devs,
    );
    print_tallies(suite, &tallies, (passed, failed, skipped));
    failed == 0
}

/// (line, column) of the statement marked `// BUG(name)` in `source` (a test file's own text):
/// the line ending with the marker, and its first non-blank character, both from 1.
///
/// # Panics
/// If no line, or more than one, carries the marker.
pub fn marked(source: &str, name: &str) -> (u32, u32) {
    let tag = format!("// BUG({name})");
    let mut found = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with(&tag));
    let (i, line) = found
        .next()
        .unwrap_or_else(|| panic!("no line marked {tag}"));
    assert!(found.next().is_none(), "two lines marked {tag}");
    let col = line.chars().take_while(|c| c.is_whitespace()).count();
    (i as u32 + 1, col as u32 + 1)
}
