//! The differential test run: the compiled set (kernels the build script wrote, lowered by
//! `#[kernel]`, Native included), then run-time-lowered kernels, each on every device; the
//! Interpreter against the oracle, every other device against the Interpreter; a table per
//! backend, and every disagreement shrunk and printed as Rust source.
//!
//! Settings come from the environment ([`Settings::from_env`]), so that a prebuilt test binary
//! runs anywhere without a source tree.

use crate::ast::{uses_warps, Kernel};
use crate::gen::{Config, Scope, Stats, KNOWN};
use crate::harness::{self, Buffers, Disagreement, Drawn, Kind, Outcome, Runnable, Verdict};
use crate::oracle::{self, Inputs};
use crate::print;
use crate::shrink::{self, Budget};
use spoc::{Device, KernelDef};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The run's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `SPOC_DIFFTEST_SEED` (decimal or `0x…`): the seed of the run-time-lowered kernels.
    pub seed: u64,
    /// `SPOC_DIFFTEST_KERNELS`: how many run-time-lowered kernels.
    pub kernels: u64,
    /// `SPOC_DIFFTEST_FIRST`: the index of the first one (to split a long run into shards, or
    /// rerun one kernel: `SPOC_DIFFTEST_FIRST=17 SPOC_DIFFTEST_KERNELS=1`).
    pub first: u64,
    /// `SPOC_DIFFTEST_SKIP_COMPILED=1` skips the compiled set.
    pub compiled: bool,
    /// `SPOC_DIFFTEST_KNOWN`: the active exclusions (comma-separated names of
    /// [`KNOWN`], `none` for none; default: those marked `default` whose [`Scope`] has a device
    /// in the run).
    pub known: Vec<String>,
    /// `SPOC_DIFFTEST_KNOWN` was given (its exclusions apply whatever the devices).
    pub known_explicit: bool,
    /// `SPOC_DIFFTEST_SHRINK`: how many disagreements to shrink (default 8; 0: none).
    pub shrink: usize,
    /// `SPOC_DIFFTEST_SHRINK_SECS`: time limit of one shrink (default 120 s).
    pub shrink_secs: u64,
    /// `SPOC_DIFFTEST_TIMEOUT`: seconds one kernel may take on one device before the run is
    /// stopped with a report (default 300).
    pub timeout: u64,
    /// `SPOC_DIFFTEST_DEVICES`: comma-separated, case-insensitive strings matched against each
    /// device's label `framework #id (name)`: a device is used if it contains one of the plain
    /// strings (every device when there are none) and none of those written `!string`. The
    /// Interpreter is always used.
    pub devices: Vec<String>,
    /// `SPOC_DIFFTEST_JOBS`: split the run-time-lowered kernels over this many child
    /// processes running at once (the first also runs the compiled set); default 1.
    pub jobs: u64,
    /// `SPOC_DIFFTEST_VERBOSE=1`: print every kernel's source.
    pub verbose: bool,
    /// `SPOC_DIFFTEST_SHRINK_CRASH=1`: shrink kernel `SPOC_DIFFTEST_FIRST` while running it on
    /// the devices of `SPOC_DIFFTEST_DEVICES` kills the process (a driver's crash), each
    /// candidate in a child process ([`shrink_crash`]); nothing else runs.
    pub shrink_crash: bool,
    /// `SPOC_DIFFTEST_REPLAY=k12,i3.0,…`: run each drawn kernel after these shrink edits
    /// ([`shrink::replay`]), helpers inlined first: how the crash shrinker's children rebuild a
    /// candidate, and how its result is run again.
    pub replay: Option<Vec<shrink::Edit>>,
}

/// The default number of run-time-lowered kernels (what CI runs).
pub const DEFAULT_KERNELS: u64 = 120;
/// The default seed.
pub const DEFAULT_SEED: u64 = 0x5eed_d1ff;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.trim().is_empty())
}

fn parse_u64(name: &str, s: &str) -> u64 {
    let s = s.trim();
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.unwrap_or_else(|_| panic!("{name}={s}: not a number"))
}

impl Settings {
    /// The settings the environment gives.
    ///
    /// # Panics
    /// On a malformed number or an unknown exclusion name.
    pub fn from_env() -> Settings {
        let num = |n: &str, d: u64| env(n).map(|s| parse_u64(n, &s)).unwrap_or(d);
        let known = match env("SPOC_DIFFTEST_KNOWN") {
            None => crate::gen::default_known(),
            Some(s) if s.trim() == "none" => vec![],
            Some(s) => s
                .split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .inspect(|x| {
                    assert!(
                        KNOWN.iter().any(|k| k.name == x),
                        "SPOC_DIFFTEST_KNOWN: unknown exclusion {x}; known: {:?}",
                        KNOWN.iter().map(|k| k.name).collect::<Vec<_>>()
                    )
                })
                .collect(),
        };
        Settings {
            known_explicit: env("SPOC_DIFFTEST_KNOWN").is_some(),
            seed: num("SPOC_DIFFTEST_SEED", DEFAULT_SEED),
            kernels: num("SPOC_DIFFTEST_KERNELS", DEFAULT_KERNELS),
            first: num("SPOC_DIFFTEST_FIRST", 0),
            compiled: env("SPOC_DIFFTEST_SKIP_COMPILED").is_none_or(|s| s == "0"),
            known,
            shrink: num("SPOC_DIFFTEST_SHRINK", 8) as usize,
            shrink_secs: num("SPOC_DIFFTEST_SHRINK_SECS", 120),
            timeout: num("SPOC_DIFFTEST_TIMEOUT", 300),
            devices: env("SPOC_DIFFTEST_DEVICES")
                .map(|s| s.split(',').map(|x| x.trim().to_lowercase()).collect())
                .unwrap_or_default(),
            verbose: env("SPOC_DIFFTEST_VERBOSE").is_some_and(|s| s != "0"),
            jobs: num("SPOC_DIFFTEST_JOBS", 1).max(1),
            shrink_crash: env("SPOC_DIFFTEST_SHRINK_CRASH").is_some_and(|s| s != "0"),
            replay: env("SPOC_DIFFTEST_REPLAY").map(|s| {
                shrink::parse_edits(&s).unwrap_or_else(|e| panic!("SPOC_DIFFTEST_REPLAY: {e}"))
            }),
        }
    }
}

/// A kernel of the compiled set, as the build script wrote it.
#[derive(Clone, Copy, Debug)]
pub struct Compiled {
    /// Its index in the set.
    pub index: u64,
    /// The seed it was generated from.
    pub subseed: u64,
    /// Its source (helpers and kernel), as compiled.
    pub source: &'static str,
    /// Its definition (`kernel.def()`).
    pub def: fn() -> &'static KernelDef,
}

/// The compiled set and how it was generated.
#[derive(Clone, Copy, Debug)]
pub struct CompiledSet {
    /// The kernels.
    pub kernels: &'static [Compiled],
    /// The seed of the set.
    pub seed: u64,
    /// The exclusions active when it was generated.
    pub known: &'static [&'static str],
}

/// The generator's configuration for compiled kernels.
pub fn compiled_config(known: &[&str]) -> Config {
    Config {
        helpers: true,
        native: true,
        known: known.iter().map(|s| s.to_string()).collect(),
        ..Config::default()
    }
}

/// The generator's configuration for run-time-lowered kernels.
pub fn lowered_config(known: &[String]) -> Config {
    Config {
        helpers: false,
        known: known.to_vec(),
        ..Config::default()
    }
}

/// The name of compiled kernel `index`.
pub fn compiled_name(index: u64) -> String {
    format!("dtc_{index}")
}

// ------------------------------------------------------------------ watchdog

static RUNNING: Mutex<Option<(Instant, String)>> = Mutex::new(None);

fn watch(timeout: u64) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(1));
        let g = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((t, what)) = &*g {
            if t.elapsed() > Duration::from_secs(timeout) {
                println!(
                    "\nTIMEOUT: {what} did not finish in {timeout} s (SPOC_DIFFTEST_TIMEOUT); stopping"
                );
                std::process::exit(3);
            }
        }
    });
}

fn running(what: Option<String>) {
    *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = what.map(|w| (Instant::now(), w));
}

// ------------------------------------------------------------------ tallies and reports

/// Counts of one backend (device).
#[derive(Default, Debug)]
pub struct Tally {
    /// Kernels that ran and agreed.
    pub ran: usize,
    /// Kernels refused with `FeatureNotSupported`: reason → count.
    pub skipped: BTreeMap<String, usize>,
    /// Kernels that disagreed.
    pub disagreed: usize,
    /// Time spent on this device.
    pub time: Duration,
}

/// A tally's row: ran, skipped, disagreed, seconds.
type Counts = (usize, usize, usize, f64);

impl Tally {
    /// The numbers of its row: ran, skipped (all reasons), disagreed, seconds.
    fn counts(&self) -> Counts {
        (
            self.ran,
            self.skipped.values().sum(),
            self.disagreed,
            self.time.as_secs_f64(),
        )
    }
}

/// The table of the tallies `rows` (label and [`Tally::counts`]), under its header.
fn print_tallies<'a>(rows: impl Iterator<Item = (&'a String, Counts)>) {
    println!(
        "{:<48} {:>6} {:>8} {:>10} {:>9}",
        "backend", "ran", "skipped", "disagreed", "time (s)"
    );
    for (label, (r, sk, d, t)) in rows {
        println!("{label:<48} {r:>6} {sk:>8} {d:>10} {t:>9.1}");
    }
}

/// One disagreement, for the report.
#[derive(Debug)]
pub struct Report {
    /// The device (or `front end`).
    pub device: String,
    /// What it was compared with.
    pub versus: String,
    /// `compiled` or `lowered`.
    pub set: &'static str,
    /// The kernel's name, index and sub-seed.
    pub kernel: String,
    /// The disagreement as found.
    pub found: Disagreement,
    /// The kernel as found (helpers included).
    pub source: String,
    /// The shrunk kernel, its inputs, what it gives, and how shrinking went.
    pub shrunk: Option<String>,
    /// Why it was not shrunk.
    pub note: String,
}

/// What a device's results are compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Versus {
    /// The oracle (the device is the Interpreter).
    Oracle,
    /// The Interpreter, which agrees with the oracle.
    Interp,
    /// The Interpreter, which itself disagrees with the oracle on this kernel.
    InterpDisagreeing,
    /// The oracle at this warp size (the device's warps are not the Interpreter's).
    WarpOracle(u32),
}

impl Versus {
    fn describe(self) -> String {
        match self {
            Versus::Oracle => "the oracle (Rust semantics)".into(),
            Versus::Interp => "the Interpreter".into(),
            Versus::InterpDisagreeing => {
                "the Interpreter (which itself disagreed with the oracle)".into()
            }
            Versus::WarpOracle(w) => format!("the oracle at the device's warp size, {w}"),
        }
    }
}

/// A device, labelled `framework #id (name)`.
struct Dev {
    dev: Device,
    label: String,
    native: bool,
    interp: bool,
}

/// The whole run's state.
struct Run {
    s: Settings,
    devs: Vec<Dev>,
    tallies: BTreeMap<String, Tally>,
    reports: Vec<Report>,
    stats: Stats,
    redrawn: BTreeMap<String, u64>,
    shrunk: usize,
    kernels: usize,
    /// A shard of [`run_jobs`]: says which kernel runs on which device before it runs
    /// ([`RUNNING_TAG`] lines), so that the parent can name the one a crash ended.
    child: bool,
}

/// The devices the run uses: every device of every available backend (Interpreter first),
/// filtered by `SPOC_DIFFTEST_DEVICES`.
///
/// # Panics
/// If a backend named in `SPOC_REQUIRE_BACKENDS` (or Native, or the Interpreter) has no device.
fn devices(s: &Settings) -> Vec<Dev> {
    let mut devs = spoc::all_devices(None).expect("listing devices failed");
    let mut required = vec!["Native".to_string(), "Interpreter".to_string()];
    if let Some(v) = env("SPOC_REQUIRE_BACKENDS") {
        required.extend(
            v.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty()),
        );
    }
    for name in &required {
        if !devs.iter().any(|d| spoc::device_is_of_backend(name, d)) {
            let why = spoc::init_device(Some(name)).err().map(|e| e.to_string());
            panic!(
                "required backend {name} has no device ({}); available: {:?}",
                why.unwrap_or_else(|| "no device".into()),
                devs.iter().map(|d| d.framework).collect::<Vec<_>>()
            );
        }
    }
    devs.sort_by_key(|d| d.framework != "Interpreter");
    devs.into_iter()
        .map(|d| Dev {
            label: format!("{} #{} ({})", d.framework, d.id, d.name),
            native: d.framework == "Native",
            interp: d.framework == "Interpreter",
            dev: d,
        })
        .filter(|d| d.interp || wanted(&s.devices, &d.label))
        .collect()
}

/// Whether a device of `scope` is among `devs`.
fn in_scope(scope: Scope, devs: &[Dev]) -> bool {
    devs.iter().any(|d| {
        let c = &d.dev.capabilities;
        match scope {
            Scope::Any => true,
            Scope::Vulkan => d.dev.framework == "Vulkan",
            Scope::Lavapipe => d.dev.framework == "Vulkan" && d.dev.name.contains("llvmpipe"),
            Scope::NarrowWarps => c.subgroups && c.warp_size < 32,
            Scope::CSource => matches!(d.dev.framework, "OpenCL" | "CUDA/C" | "HIP"),
            Scope::Nvidia => {
                d.dev.framework.starts_with("CUDA") || d.dev.name.to_lowercase().contains("nvidia")
            }
            Scope::VulkanNvidia => {
                d.dev.framework == "Vulkan" && d.dev.name.to_lowercase().contains("nvidia")
            }
        }
    })
}

/// Whether `label` passes the `SPOC_DIFFTEST_DEVICES` filter.
pub fn wanted(filter: &[String], label: &str) -> bool {
    let l = label.to_lowercase();
    let (neg, pos): (Vec<&String>, Vec<&String>) = filter.iter().partition(|f| f.starts_with('!'));
    (pos.is_empty() || pos.iter().any(|f| l.contains(f.as_str())))
        && !neg.iter().any(|f| l.contains(&f[1..]))
}

/// Runs everything; prints the tables and reports; returns whether every device agreed. With
/// `SPOC_DIFFTEST_JOBS` > 1, runs shards of the kernels in child processes (this executable
/// again) and sums their tables.
pub fn run(s: Settings, compiled: Option<CompiledSet>) -> bool {
    let child = env("SPOC_DIFFTEST_CHILD").is_some();
    if s.shrink_crash && !child {
        return shrink_crash(s);
    }
    if s.jobs > 1 && !child {
        return run_jobs(&s);
    }
    let t0 = Instant::now();
    watch(s.timeout);
    let devs = devices(&s);
    let mut s = s;
    active_exclusions(&mut s, &devs);
    println!("== spoc-difftest: random kernels on every device");
    println!(
        "seed {:#x} (SPOC_DIFFTEST_SEED), run-time-lowered kernels {}..{} (SPOC_DIFFTEST_FIRST, SPOC_DIFFTEST_KERNELS)",
        s.seed,
        s.first,
        s.first + s.kernels
    );
    println!("devices:");
    for d in &devs {
        println!("  {}", d.label);
    }
    println!("known-bug exclusions active (SPOC_DIFFTEST_KNOWN):");
    if s.known.is_empty() {
        println!("  none");
    }
    for k in KNOWN.iter().filter(|k| s.known.iter().any(|n| n == k.name)) {
        println!("  {}: {}", k.name, k.what);
    }
    let mut r = Run {
        s,
        devs,
        tallies: BTreeMap::new(),
        reports: vec![],
        stats: Stats::default(),
        redrawn: BTreeMap::new(),
        shrunk: 0,
        kernels: 0,
        child: env("SPOC_DIFFTEST_CHILD").is_some(),
    };
    let mut compiled_n = 0;
    if let (true, Some(set)) = (r.s.compiled, compiled) {
        let t = Instant::now();
        let cfg = compiled_config(set.known);
        for c in set.kernels {
            let name = compiled_name(c.index);
            let d = harness::draw_from(c.subseed, c.index, &name, &cfg)
                .unwrap_or_else(|f| panic!("compiled kernel {name}: the oracle now says {f}"));
            let src = print::full(&d.kernel);
            assert_eq!(
                src, c.source,
                "compiled kernel {name}: the generator now draws another kernel from its seed \
                 (build script and test out of step)"
            );
            r.stats.add(&d.stats);
            r.case(
                &d,
                "compiled",
                Runnable {
                    def: (c.def)(),
                    ir: None,
                },
            );
            compiled_n += 1;
        }
        println!(
            "compiled set: {compiled_n} kernels (seed {:#x}, built with exclusions {:?}) in {:.1} s",
            set.seed,
            set.known,
            t.elapsed().as_secs_f64()
        );
    }
    let t = Instant::now();
    let cfg = lowered_config(&r.s.known);
    for idx in r.s.first..r.s.first + r.s.kernels {
        let name = format!("dt_{idx}");
        let mut d = harness::draw(r.s.seed, idx, &name, &cfg);
        if let Some(edits) = &r.s.replay {
            let flat = shrink::inline_helpers(&d.kernel);
            let Some((k, inp)) = shrink::replay(&flat, &d.inputs, edits) else {
                println!("SPOC_DIFFTEST_REPLAY: the edits do not apply to {name}");
                return false;
            };
            match oracle::run(&k, &inp, harness::excl_of(&cfg)) {
                Ok(want) => d.want = want,
                Err(f) => println!("{name} after the edits: the oracle says {f:?}"),
            }
            (d.kernel, d.inputs) = (k, inp);
            println!(
                "{name} after SPOC_DIFFTEST_REPLAY:\n{}",
                print::full(&d.kernel)
            );
        }
        if env("SPOC_DIFFTEST_ABORT_ON").is_some_and(|t| print::full(&d.kernel).contains(&t)) {
            // A crash on demand (see `shrink_crash`).
            std::process::abort();
        }
        r.stats.add(&d.stats);
        for (why, n) in &d.redrawn {
            *r.redrawn.entry(why.clone()).or_default() += n;
        }
        match harness::lower(&d.kernel) {
            Ok(run) => r.case(&d, "lowered", run),
            Err(msg) => r.front_end(&d, msg),
        }
        if (idx + 1 - r.s.first).is_multiple_of(100) {
            println!(
                "  … {} run-time-lowered kernels, {:.1} s",
                idx + 1 - r.s.first,
                t.elapsed().as_secs_f64()
            );
        }
        // Compiled modules of finished kernels are never used again.
        spoc::clear_cache();
    }
    println!(
        "run-time-lowered: {} kernels in {:.1} s",
        r.s.kernels,
        t.elapsed().as_secs_f64()
    );
    r.finish(compiled_n, t0)
}

impl Run {
    fn tally(&mut self, label: &str) -> &mut Tally {
        self.tallies.entry(label.to_string()).or_default()
    }

    fn front_end(&mut self, d: &Drawn, msg: String) {
        self.kernels += 1;
        self.tally("front end (lower_kernel_source)").disagreed += 1;
        let found = Disagreement {
            kind: Kind::Error("FrontEnd".into()),
            detail: msg.clone(),
        };
        let first = msg.split(';').next().unwrap_or("").to_string();
        let first = strip_position(&first);
        let mut shrunk = None;
        let mut note = String::new();
        if self.shrunk < self.s.shrink {
            self.shrunk += 1;
            let budget = self.budget();
            let mut holds = |k: &Kernel, _: &Inputs| match harness::lower(k) {
                Err(m) => strip_position(m.split(';').next().unwrap_or("")) == first,
                Ok(_) => false,
            };
            let (k, inp, st) = shrink::shrink(&d.kernel, &d.inputs, budget, &mut holds);
            let m = harness::lower(&k).err().unwrap_or_default();
            shrunk = Some(format!(
                "{}\n{}\nlower_kernel_source says: {m}\n",
                shrink_line(&st),
                fenced(&print::kernel_fn(&k, true)),
            ));
            let _ = inp;
        } else {
            note = "not shrunk (SPOC_DIFFTEST_SHRINK reached)".into();
        }
        self.reports.push(Report {
            device: "front end".into(),
            versus: "rustc's acceptance (the kernel is in the language)".into(),
            set: "lowered",
            kernel: kernel_id(d),
            found,
            source: print::full(&d.kernel),
            shrunk,
            note,
        });
    }

    fn budget(&self) -> Budget {
        Budget {
            tries: 3000,
            time: Duration::from_secs(self.s.shrink_secs),
        }
    }

    fn run_dev(&mut self, i: usize, k: &Kernel, inp: &Inputs, run: Runnable) -> Outcome {
        let label = self.devs[i].label.clone();
        if self.child {
            println!("{RUNNING_TAG}\t{}\t{label}", k.name);
        }
        running(Some(format!("kernel {} on {label}", k.name)));
        let t = Instant::now();
        let o = harness::run_on(&self.devs[i].dev, k, inp, run);
        self.tally(&label).time += t.elapsed();
        running(None);
        o
    }

    fn interp(&self) -> usize {
        self.devs
            .iter()
            .position(|x| x.interp)
            .expect("the Interpreter")
    }

    fn excl(&self) -> oracle::Excl {
        lowered_config(&self.s.known).excl()
    }

    /// What device `i` is compared with for kernel `k`: the Interpreter, or for a kernel whose
    /// result depends on the warp size, on a device whose warps are not the Interpreter's 32
    /// lanes, the oracle at the device's warp size.
    fn versus(&self, i: usize, k: &Kernel) -> Versus {
        let w = self.devs[i].dev.capabilities.warp_size;
        if w != 32 && uses_warps(k) {
            Versus::WarpOracle(w)
        } else {
            Versus::Interp
        }
    }

    /// One kernel on every device.
    fn case(&mut self, d: &Drawn, set: &'static str, run: Runnable) {
        self.kernels += 1;
        if self.s.verbose {
            println!("-- {} ({set})\n{}", kernel_id(d), print::full(&d.kernel));
        }
        let want = harness::expected(&d.kernel, &d.want);
        let ii = self.interp();
        let interp = self.run_dev(ii, &d.kernel, &d.inputs, run);
        let ilabel = self.devs[ii].label.clone();
        let verdict = harness::judge(&want, &interp);
        let interp_ok = verdict == Verdict::Agree;
        let reference: Buffers = match verdict {
            Verdict::Agree => {
                self.tally(&ilabel).ran += 1;
                want.clone()
            }
            Verdict::Skipped(why) => {
                *self.tally(&ilabel).skipped.entry(why).or_default() += 1;
                want.clone()
            }
            Verdict::Disagree(dis) => {
                self.tally(&ilabel).disagreed += 1;
                self.disagreement(d, set, ii, Versus::Oracle, dis);
                match &interp {
                    Outcome::Ran(b) => b.clone(),
                    _ => want.clone(),
                }
            }
        };
        if interp_ok {
            self.auto_unrolled(d, set, run, &reference);
        }
        for i in 0..self.devs.len() {
            if self.devs[i].interp || (self.devs[i].native && run.def.native.is_none()) {
                continue;
            }
            let label = self.devs[i].label.clone();
            let mut versus = self.versus(i, &d.kernel);
            let reference = match versus {
                Versus::WarpOracle(w) => {
                    match oracle::run_warp(&d.kernel, &d.inputs, self.excl(), w) {
                        Ok(m) => harness::expected(&d.kernel, &m),
                        Err(f) => {
                            let why = format!("no defined result for warps of {w} lanes ({f})");
                            *self.tally(&label).skipped.entry(why).or_default() += 1;
                            continue;
                        }
                    }
                }
                _ => {
                    if !interp_ok {
                        versus = Versus::InterpDisagreeing;
                    }
                    reference.clone()
                }
            };
            let o = self.run_dev(i, &d.kernel, &d.inputs, run);
            match harness::judge(&reference, &o) {
                Verdict::Agree => self.tally(&label).ran += 1,
                Verdict::Skipped(why) => *self.tally(&label).skipped.entry(why).or_default() += 1,
                Verdict::Disagree(dis) => {
                    self.tally(&label).disagreed += 1;
                    self.disagreement(d, set, i, versus, dis);
                }
            }
        }
    }

    /// The kernel as the CUDA/PTX generator sees it (`spoc::ir::unroll::for_ptx`: its loops
    /// unrolled, its constant-indexed local arrays in registers), run on the Interpreter: it must be valid IR and give
    /// `reference` (what the Interpreter gave for the kernel as written). Run-time-lowered
    /// kernels only (a compiled kernel's definition cannot take other IR). A failure is reported
    /// under the label `Interpreter (PTX prepass)`, not shrunk.
    fn auto_unrolled(&mut self, d: &Drawn, set: &'static str, run: Runnable, reference: &Buffers) {
        let Some(ir) = run.ir else { return };
        let Some(k) = spoc::ir::unroll::for_ptx(ir.kernel()) else {
            return;
        };
        let label = "Interpreter (PTX prepass)".to_string();
        let ii = self.interp();
        let found = match spoc::ir::ValidKernel::new(k) {
            Err(e) => Some(Disagreement {
                kind: Kind::Error("invalid IR".into()),
                detail: format!("the unrolled IR is not valid: {e}"),
            }),
            Ok(v) => {
                let v: &'static spoc::ir::ValidKernel = Box::leak(Box::new(v));
                let o = self.run_dev(ii, &d.kernel, &d.inputs, Runnable { ir: Some(v), ..run });
                match harness::judge(reference, &o) {
                    Verdict::Disagree(dis) => Some(dis),
                    _ => None,
                }
            }
        };
        match found {
            None => self.tally(&label).ran += 1,
            Some(dis) => {
                self.tally(&label).disagreed += 1;
                self.reports.push(Report {
                    device: label,
                    versus: Versus::Interp.describe(),
                    set,
                    kernel: kernel_id(d),
                    found: dis,
                    source: print::full(&d.kernel),
                    shrunk: None,
                    note: "not shrunk: a transformation of the IR, run on the Interpreter".into(),
                });
            }
        }
    }

    /// Records (and shrinks) a disagreement of device `i` with `versus`.
    fn disagreement(
        &mut self,
        d: &Drawn,
        set: &'static str,
        i: usize,
        versus: Versus,
        dis: Disagreement,
    ) {
        let label = self.devs[i].label.clone();
        let mut report = Report {
            device: label,
            versus: versus.describe(),
            set,
            kernel: kernel_id(d),
            found: dis.clone(),
            source: print::full(&d.kernel),
            shrunk: None,
            note: String::new(),
        };
        if versus == Versus::InterpDisagreeing {
            report.note = "not shrunk: the Interpreter disagrees with the oracle on this kernel too (see its report)".into();
        } else if self.devs[i].native {
            report.note = "not shrunk: Native runs only compiled kernels, and shrinking re-lowers at run time".into();
        } else if self.shrunk >= self.s.shrink {
            report.note = "not shrunk (SPOC_DIFFTEST_SHRINK reached)".into();
        } else {
            self.shrunk += 1;
            let start = if d.kernel.helpers.is_empty() {
                d.kernel.clone()
            } else {
                shrink::inline_helpers(&d.kernel)
            };
            report.shrunk = self.shrink(i, versus, &start, &d.inputs, &dis.kind);
            if report.shrunk.is_none() {
                report.note = "not shrunk: the disagreement does not reproduce with the kernel's helpers inlined and lowered at run time".into();
            }
        }
        self.reports.push(report);
    }

    /// Whether device `i` still shows a disagreement of `kind` with `versus` on `(k, inp)`.
    /// Unless the disagreement is the Interpreter's with the oracle, the Interpreter must agree
    /// with the oracle, so that the kernel stays inside the defined subset.
    fn still(
        &mut self,
        i: usize,
        versus: Versus,
        kind: &Kind,
        k: &Kernel,
        inp: &Inputs,
    ) -> Option<(Disagreement, Buffers, Outcome)> {
        let excl = self.excl();
        let mem = oracle::run(k, inp, excl).ok()?;
        let want = harness::expected(k, &mem);
        let run = harness::lower(k).ok()?;
        let ii = self.interp();
        let io = self.run_dev(ii, k, inp, run);
        let (reference, o) = if versus == Versus::Oracle {
            (want, io)
        } else {
            if harness::judge(&want, &io) != Verdict::Agree {
                return None;
            }
            let reference = match versus {
                Versus::WarpOracle(w) => {
                    harness::expected(k, &oracle::run_warp(k, inp, excl, w).ok()?)
                }
                _ => want,
            };
            let o = self.run_dev(i, k, inp, run);
            (reference, o)
        };
        match harness::judge(&reference, &o) {
            Verdict::Disagree(dis) if dis.kind == *kind => Some((dis, reference, o)),
            _ => None,
        }
    }

    fn shrink(
        &mut self,
        i: usize,
        versus: Versus,
        k: &Kernel,
        inp: &Inputs,
        kind: &Kind,
    ) -> Option<String> {
        self.still(i, versus, kind, k, inp)?;
        let budget = self.budget();
        let t = Instant::now();
        let mut holds = |k: &Kernel, inp: &Inputs| self.still(i, versus, kind, k, inp).is_some();
        let (k2, inp2, st) = shrink::shrink(k, inp, budget, &mut holds);
        let (dis, _, got) = self.still(i, versus, kind, &k2, &inp2)?;
        spoc::clear_cache();
        let got_s = match &got {
            Outcome::Ran(_) => dis.detail.clone(),
            Outcome::Failed(c, m) => format!("{c}: {m}"),
            Outcome::Skipped(s) => s.clone(),
        };
        Some(format!(
            "{} ({:.1} s)\n{}\ninputs:\n{}{}: {got_s}\n",
            shrink_line(&st),
            t.elapsed().as_secs_f64(),
            fenced(&print::kernel_fn(&k2, true)),
            harness::show_inputs(&k2, &inp2),
            self.devs[i].label,
        ))
    }

    fn finish(self, compiled_n: usize, t0: Instant) -> bool {
        println!("\n== spoc-difftest: {} kernels ({compiled_n} compiled, {} run-time-lowered), seed {:#x}", self.kernels, self.kernels - compiled_n, self.s.seed);
        print_tallies(self.tallies.iter().map(|(l, t)| (l, t.counts())));
        if self.devs.iter().any(|d| d.native) {
            println!(
                "(Native runs the compiled set only: run-time-lowered kernels have no native code)"
            );
        }
        for (label, t) in &self.tallies {
            for (why, n) in &t.skipped {
                println!("  skipped on {label}: {n} kernel(s): {why}");
            }
        }
        println!("exclusions (constructs or kernels kept out, by known bug):");
        for k in KNOWN {
            let active = self.s.known.iter().any(|n| n == k.name);
            let n = self.stats.excluded.get(k.name).copied().unwrap_or(0)
                + self
                    .redrawn
                    .get(&format!("known bug {}", k.name))
                    .copied()
                    .unwrap_or(0);
            let state = if active {
                "active"
            } else if k.default && !self.s.known_explicit {
                "off (no device it concerns)"
            } else {
                "off"
            };
            println!("  {:<26} {state}: {n}", k.name);
        }
        println!("kernels drawn again because the oracle had no defined result:");
        if self.redrawn.is_empty() {
            println!("  none");
        }
        for (why, n) in &self.redrawn {
            println!("  {n:>5} {why}");
        }
        for (n, rep) in self.reports.iter().enumerate() {
            println!(
                "\n-- DISAGREEMENT {} on {} (vs {}), {} kernel {}",
                n + 1,
                rep.device,
                rep.versus,
                rep.set,
                rep.kernel
            );
            println!("{}", rep.found.detail);
            match &rep.shrunk {
                Some(s) => println!("shrunk: {s}"),
                None => println!(
                    "{}\nthe kernel as found:\n{}",
                    rep.note,
                    fenced(&rep.source)
                ),
            }
        }
        let bad = self.reports.len();
        // For a parent process (`SPOC_DIFFTEST_JOBS`): the table as data.
        for (label, t) in &self.tallies {
            let (ran, skipped, disagreed, secs) = t.counts();
            println!("TALLY\t{label}\t{ran}\t{skipped}\t{disagreed}\t{secs:.3}");
        }
        println!("KERNELS\t{}\t{compiled_n}\t{bad}", self.kernels);
        println!(
            "\nspoc-difftest: {} kernels, {bad} disagreement(s), {:.1} s",
            self.kernels,
            t0.elapsed().as_secs_f64()
        );
        bad == 0
    }
}

/// `SPOC_DIFFTEST_JOBS`: the run-time-lowered kernels split into contiguous shards, one child
/// process each (all at once); the first child also runs the compiled set. Prints every child's
/// output, then the summed table.
/// Drops the default exclusions whose bug is on no device of `devs` (unless
/// `SPOC_DIFFTEST_KNOWN` named them): the kernels drawn depend on them.
fn active_exclusions(s: &mut Settings, devs: &[Dev]) {
    if !s.known_explicit {
        s.known.retain(|n| {
            KNOWN
                .iter()
                .find(|k| k.name == n)
                .is_some_and(|k| in_scope(k.scope, devs))
        });
    }
}

/// `SPOC_DIFFTEST_SHRINK_CRASH=1`: shrinks kernel `s.first` while running it on the chosen
/// devices kills the process. Each candidate runs in a child process (this executable with
/// `SPOC_DIFFTEST_REPLAY` set to the candidate's edits, [`shrink::shrink_traced`]): a driver
/// that crashes kills the child, not the shrink. "Kills" is an end by a signal (`SIGSEGV`,
/// `SIGABRT`, …); a panic, a wrong result or a time-out is not. Prints the smallest crashing
/// kernel and the command that runs it again (with `SPOC_DUMP` for the generated source);
/// `false` when kernel `s.first` crashes (a defect was found), `true` when it does not.
///
/// `SPOC_DIFFTEST_ABORT_ON=text` makes a child abort when its kernel's source contains `text`:
/// a crash on demand, to try the shrinker on a machine whose drivers do not crash.
pub fn shrink_crash(mut s: Settings) -> bool {
    let devs = devices(&s);
    active_exclusions(&mut s, &devs);
    let exe = std::env::current_exe().expect("the test executable's path");
    let name = format!("dt_{}", s.first);
    let d = harness::draw(s.seed, s.first, &name, &lowered_config(&s.known));
    let flat = shrink::inline_helpers(&d.kernel);
    let known = if s.known.is_empty() {
        "none".to_string()
    } else {
        s.known.join(",")
    };
    println!(
        "== spoc-difftest: shrinking {name} (seed {:#x}) while it crashes on {:?}",
        s.seed,
        devs.iter().map(|d| d.label.as_str()).collect::<Vec<_>>()
    );
    let timeout = s.timeout.to_string();
    let crashes = |edits: &[shrink::Edit]| -> bool {
        let status = child_command(&exe, s.seed, s.first, 1, false)
            .env("SPOC_DIFFTEST_SHRINK", "0")
            .env_remove("SPOC_DIFFTEST_SHRINK_CRASH")
            .env("SPOC_DIFFTEST_KNOWN", &known)
            .env("SPOC_DIFFTEST_TIMEOUT", &timeout)
            .env("SPOC_DIFFTEST_REPLAY", shrink::format_edits(edits))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("spawning a child");
        killed(&status)
    };
    if !crashes(&[]) {
        println!("{name} does not crash on these devices: nothing to shrink");
        return true;
    }
    let budget = Budget {
        tries: 3000,
        time: Duration::from_secs(s.shrink_secs),
    };
    let t = Instant::now();
    let (k, _, st, edits) =
        shrink::shrink_traced(&flat, &d.inputs, budget, &mut |_, _, e| crashes(e));
    let edits = shrink::format_edits(&edits);
    println!(
        "{name} crashes; shrunk in {:.1} s ({})\n{}",
        t.elapsed().as_secs_f64(),
        shrink_line(&st),
        fenced(&print::kernel_fn(&k, true))
    );
    println!(
        "again, with its generated source in ./dump: SPOC_DUMP=dump SPOC_DIFFTEST_FIRST={} \
         SPOC_DIFFTEST_KERNELS=1 SPOC_DIFFTEST_SKIP_COMPILED=1 SPOC_DIFFTEST_SEED={:#x} \
         SPOC_DIFFTEST_KNOWN={known} SPOC_DIFFTEST_REPLAY={edits} (and this run's \
         SPOC_DIFFTEST_DEVICES)",
        s.first, s.seed
    );
    false
}

/// This executable as a child run (`SPOC_DIFFTEST_CHILD`, one job): kernels `first..first + n`
/// of `seed`, the compiled set too if `compiled`; the rest of the environment inherited.
fn child_command(
    exe: &std::path::Path,
    seed: u64,
    first: u64,
    n: u64,
    compiled: bool,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(exe);
    cmd.env("SPOC_DIFFTEST_CHILD", "1")
        .env("SPOC_DIFFTEST_JOBS", "1")
        .env("SPOC_DIFFTEST_FIRST", first.to_string())
        .env("SPOC_DIFFTEST_KERNELS", n.to_string())
        .env("SPOC_DIFFTEST_SEED", format!("{seed:#x}"))
        .env(
            "SPOC_DIFFTEST_SKIP_COMPILED",
            if compiled { "0" } else { "1" },
        );
    cmd
}

/// Whether a child ended by a signal (on Unix; elsewhere: by a status `abort` gives).
fn killed(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal().is_some()
    }
    #[cfg(not(unix))]
    {
        status.code() == Some(3)
    }
}

fn run_jobs(s: &Settings) -> bool {
    let t0 = Instant::now();
    let exe = std::env::current_exe().expect("the test executable's path");
    let per = s.kernels.div_ceil(s.jobs);
    let mut handles = vec![];
    for j in 0..s.jobs {
        let first = s.first + j * per;
        let n = per.min((s.first + s.kernels).saturating_sub(first));
        if n == 0 && j > 0 {
            continue;
        }
        let mut cmd = child_command(&exe, s.seed, first, n, j == 0 && s.compiled);
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let child = cmd.spawn().expect("spawning a shard");
        handles.push((
            j,
            first,
            n,
            std::thread::spawn(move || child.wait_with_output()),
        ));
    }
    println!(
        "== spoc-difftest: {} shards (SPOC_DIFFTEST_JOBS={})",
        handles.len(),
        s.jobs
    );
    let mut ok = true;
    let mut tallies: BTreeMap<String, Counts> = BTreeMap::new();
    let (mut kernels, mut compiled, mut bad) = (0usize, 0usize, 0usize);
    for (j, first, n, h) in handles {
        let out = h
            .join()
            .expect("a shard's reader")
            .expect("a shard's output");
        let text = String::from_utf8_lossy(&out.stdout);
        println!(
            "\n==== shard {j}: kernels {first}..{} ({})",
            first + n,
            out.status
        );
        let finished = text.lines().any(|l| l.starts_with("KERNELS\t"));
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                [RUNNING_TAG, ..] => {}
                ["TALLY", label, ran, skipped, dis, time] => {
                    let t = tallies.entry(label.to_string()).or_default();
                    t.0 += ran.parse::<usize>().unwrap_or(0);
                    t.1 += skipped.parse::<usize>().unwrap_or(0);
                    t.2 += dis.parse::<usize>().unwrap_or(0);
                    t.3 += time.parse::<f64>().unwrap_or(0.0);
                }
                ["KERNELS", k, c, b] => {
                    kernels += k.parse::<usize>().unwrap_or(0);
                    compiled += c.parse::<usize>().unwrap_or(0);
                    bad += b.parse::<usize>().unwrap_or(0);
                }
                _ => println!("{line}"),
            }
        }
        ok &= out.status.success();
        if !finished {
            // The shard's process died (a signal: a driver's crash) or hung before its
            // tables: name what it was running, and count that as a disagreement.
            bad += 1;
            match last_running(&text) {
                Some((kernel, device)) => println!(
                    "-- CRASH: the shard's process ended ({}) while running kernel {kernel} on \
                     {device}{}",
                    out.status,
                    match kernel.strip_prefix("dt_") {
                        Some(index) => format!(
                            "; again alone: SPOC_DIFFTEST_FIRST={index} \
                             SPOC_DIFFTEST_KERNELS=1 SPOC_DIFFTEST_SKIP_COMPILED=1 \
                             SPOC_DIFFTEST_VERBOSE=1 (with this run's SPOC_DIFFTEST_SEED, and \
                             SPOC_DIFFTEST_KNOWN set to its active exclusions, listed above, \
                             when SPOC_DIFFTEST_DEVICES picks one device)"
                        ),
                        None => String::new(),
                    },
                ),
                None => println!(
                    "-- CRASH: the shard's process ended ({}) before running a kernel",
                    out.status
                ),
            }
        }
    }
    println!(
        "\n== spoc-difftest, all shards: {kernels} kernels ({compiled} compiled, {} run-time-lowered), seed {:#x}",
        kernels - compiled,
        s.seed
    );
    print_tallies(tallies.iter().map(|(l, &c)| (l, c)));
    println!(
        "spoc-difftest: {kernels} kernels, {bad} disagreement(s), {:.1} s{}",
        t0.elapsed().as_secs_f64(),
        if ok {
            ""
        } else {
            " (a shard failed: see its output above)"
        }
    );
    ok && bad == 0
}

/// The tag of the line a shard prints before it runs a kernel on a device:
/// `RUNNING<TAB>kernel name<TAB>device label`.
const RUNNING_TAG: &str = "RUNNING";

/// The kernel and device of the last `RUNNING` line of a shard's output: what it was doing
/// when it ended, if it died.
pub fn last_running(output: &str) -> Option<(String, String)> {
    output.lines().rev().find_map(|l| {
        let mut f = l.split('\t');
        (f.next() == Some(RUNNING_TAG)).then_some(())?;
        Some((f.next()?.to_string(), f.next()?.to_string()))
    })
}

fn kernel_id(d: &Drawn) -> String {
    format!(
        "{} (index {}, sub-seed {:#x})",
        d.kernel.name, d.index, d.subseed
    )
}

fn fenced(src: &str) -> String {
    format!("```rust\n{}```", src)
}

fn shrink_line(st: &shrink::ShrinkStats) -> String {
    format!(
        "{} tries, {} edits kept{}",
        st.tries,
        st.kept,
        if st.exhausted {
            ", budget exhausted"
        } else {
            ""
        }
    )
}

/// A front-end message without its `line:column:` prefix.
fn strip_position(m: &str) -> String {
    let m = m.trim();
    let mut parts = m.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), Some(b), Some(rest))
            if a.trim().chars().all(|c| c.is_ascii_digit())
                && b.trim().chars().all(|c| c.is_ascii_digit()) =>
        {
            rest.trim().to_string()
        }
        _ => m.to_string(),
    }
}
