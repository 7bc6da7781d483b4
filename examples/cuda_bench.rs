//! CUDA performance figures for spoc, in one binary: launch overhead against a raw cudarc launch
//! of the same PTX, and saxpy bandwidth against the card's device-to-device copy bandwidth.
//!
//! ```text
//! cargo build --release --example cuda_bench
//! target/release/examples/cuda_bench                       # N = 100 000 launches, n = 256 Mi floats
//! target/release/examples/cuda_bench --launches 20000 --n 16777216
//! ```
//!
//! Exit status: 0 when every measurement ran and every result checked out (the figures may
//! still miss their targets: see the `status=` of each `RESULT` line); 1 on a driver error or a
//! wrong kernel result; 2 when CUDA is not available ("CUDA not available: <reason>"); 64 on a
//! bad command line.
//!
//! # What is measured
//!
//! 1. **Launch overhead** of a cached 3-argument kernel (`saxpy`, 1024 elements, grid 4 × block
//!    256): spoc's typed `saxpy.launch(&dev, …)` on `CUDA/PTX` against cudarc's launch builder
//!    running the *same* PTX (generated with `spoc::codegen::generate_source_with` for the
//!    device's compute capability, as the backend does, and loaded with cudarc's
//!    `CudaContext::load_module`), with the same arguments per the PTX ABI (`f32 a`, `u64
//!    x_ptr`, `u32 x_len`, `u64 y_ptr`, `u32 y_len`), both on the legacy default stream of the
//!    device's primary context. After 1000 warm-up launches each, 5 interleaved rounds (spoc,
//!    raw, spoc, raw, …) of N launches each; per round and path: host time of the launch loop
//!    alone, and including the one synchronisation after it; the GPU span of the loop (CUDA
//!    events before and after, divided by N); and host time per launch in bursts of 128 launches
//!    started on an idle device (so a full launch queue cannot throttle the loop). Medians over
//!    the 5 rounds. Targets: spoc ≤ 1.2 × raw and < 3 µs per launch (loop only).
//! 2. **saxpy bandwidth** on `CUDA/PTX` at n floats: 12 bytes × n (read x, read y, write y) /
//!    kernel time, kernel time from CUDA events recorded around the launch on the launch's
//!    stream with spoc's own event API (`Backend::create_event`, `record_event`,
//!    `event_elapsed_ms` of `dev.backend()`); median of 20 after 3 warm-up launches. The events
//!    bracket the host's submission as well: a few µs against a kernel of ~1 ms. The copy
//!    bandwidth is `cuMemcpyDtoD` of 1 GiB (spoc's `Buffer::copy_from`, which is
//!    `cuMemcpyDtoD_v2` on the default stream), counted as 2 × bytes / time (read + write, the
//!    same convention as saxpy's 12 bytes), timed the same way, median of 20. The same saxpy
//!    through cudarc (same PTX) is printed for reference. Target: saxpy ≥ 80 % of copy.
//! 3. The same saxpy figure on `CUDA/C` (NVRTC) when that backend is available.
//! 4. **Launch cost on a stream**: `saxpy.launch_on(&stream, …)` against cudarc's launch
//!    builder on a non-default cudarc stream, host µs per launch of the loop alone, medians of
//!    5 interleaved rounds (`RESULT launch_stream`). Target: spoc ≤ 1.05 × raw. Also timed:
//!    cudarc's launch on a `CU_STREAM_DEFAULT` stream, the kind spoc's streams are
//!    (`raw_blocking_stream_us`), which tells the driver's cost of that flag from spoc's own.
//! 5. **Graph replay**: 100 `saxpy` launches on a stream captured into a `spoc::Graph`
//!    (`Stream::capture`: CUDA stream capture, `cuGraphInstantiate`), checked bit for bit after
//!    one replay, then replayed `max(N / 100, 10)` times per round (`cuGraphLaunch`), 5 rounds;
//!    µs per captured kernel including the final synchronisation (the GPU's throughput), and
//!    host µs per replay of the loop alone; medians (`RESULT graph_replay`). Target: ≤ 1.5 µs
//!    per kernel.
//!
//! Every kernel's result is checked bit for bit against a CPU reference (`a * x + y` in `f32`;
//! the backends never contract into an FMA) before it is timed: all 1024 elements for the launch
//! test, every 4099th element (and the last) for saxpy. A wrong result posts no figure.

use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    LaunchConfig, PushKernelArg,
};
use programs::kernels::saxpy;
use spoc::prelude::*;
use std::error::Error as StdError;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Elements of the launch-overhead test (grid 4 × block 256).
const SMALL_N: usize = 1024;
/// Threads per block everywhere.
const BLOCK: u32 = 256;
/// Warm-up launches per path before the launch-overhead rounds.
const LAUNCH_WARMUP: usize = 1000;
/// Interleaved rounds of the launch-overhead test.
const ROUNDS: usize = 5;
/// Launches per burst in the idle-queue measurement.
const BURST: usize = 128;
/// Timed repetitions of each bandwidth measurement.
const REPS: usize = 20;
/// Untimed repetitions before them.
const BW_WARMUP: usize = 3;
/// Bytes of the device-to-device copy.
const COPY_BYTES: usize = 1 << 30;
/// saxpy results are checked at every `SAMPLE_STRIDE`-th element (and the last).
const SAMPLE_STRIDE: usize = 4099;
/// Launch-overhead targets: spoc / raw, and spoc's µs per launch.
const GOAL_LAUNCH_RATIO: f64 = 1.2;
const GOAL_LAUNCH_US: f64 = 3.0;
/// Bandwidth target: saxpy / copy.
const GOAL_BW_RATIO: f64 = 0.8;

type Res<T> = Result<T, Box<dyn StdError>>;

/// CUDA performance figures for spoc: launch overhead against raw cudarc, saxpy bandwidth
/// against the device-to-device copy.
#[derive(clap::Parser, Debug)]
#[command(name = "cuda_bench")]
struct Config {
    /// Launches per round and path in the launch-overhead test.
    #[arg(long, default_value = "100000", value_parser = programs::parse_size)]
    launches: usize,
    /// saxpy elements (default 256 Mi floats; at most 4294967040: lengths travel as u32 and
    /// grid x block must fit in u32).
    #[arg(long, default_value = "268435456", value_parser = parse_n)]
    n: usize,
}

fn parse_n(v: &str) -> Result<usize, String> {
    let n = programs::parse_size(v)?;
    let max_n = (u32::MAX / BLOCK * BLOCK) as usize;
    if n > max_n {
        return Err(format!("at most {max_n}"));
    }
    Ok(n)
}

fn main() -> ExitCode {
    let cfg = match <Config as clap::Parser>::try_parse() {
        Ok(cfg) => cfg,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(64);
        }
    };
    // SAFETY: only tries to open the driver library (dlopen); cudarc's loaders panic without it.
    let libcuda = unsafe { sys::is_culib_present() };
    let dev = match spoc::init_device(Some("CUDA/PTX")) {
        Ok(dev) if libcuda => dev,
        Ok(_) => {
            eprintln!("CUDA not available: cudarc cannot open the driver library (libcuda)");
            return ExitCode::from(2);
        }
        Err(e) => {
            let lib = if libcuda { "found" } else { "not found" };
            eprintln!("CUDA not available: {e} (driver library libcuda: {lib})");
            return ExitCode::from(2);
        }
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&cfg, &dev))) {
        Ok(Ok(true)) => ExitCode::SUCCESS,
        Ok(Ok(false)) => ExitCode::from(1),
        Ok(Err(e)) => {
            eprintln!("cuda_bench: error: {e}");
            ExitCode::from(1)
        }
        Err(_) => {
            eprintln!("cuda_bench: internal panic (message above)");
            ExitCode::from(1)
        }
    }
}

// ------------------------------------------------------------------ helpers

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

fn us_per(d: Duration, count: usize) -> f64 {
    d.as_secs_f64() * 1e6 / count as f64
}

/// Text for a `key="value"` field of a RESULT line.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "'").replace('\n', " "))
}

fn grid_for(n: usize) -> u32 {
    (n as u32).div_ceil(BLOCK)
}

/// A kernel result that differs from the CPU reference.
#[derive(Debug)]
struct WrongResult(String);

impl std::fmt::Display for WrongResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for WrongResult {}

/// Checks `got[i] == a * x[i] + y[i]` bit for bit at the given indices; the number checked, or
/// a [`WrongResult`].
fn check(
    what: &str,
    got: &[f32],
    x: &[f32],
    y: &[f32],
    a: f32,
    idx: impl Iterator<Item = usize>,
) -> Res<usize> {
    let (mut checked, mut bad, mut first) = (0usize, 0usize, String::new());
    for i in idx {
        let want = a * x[i] + y[i];
        if got[i].to_bits() != want.to_bits() {
            if bad < 5 {
                let _ = write!(first, " [{i}] got {} want {want};", got[i]);
            }
            bad += 1;
        }
        checked += 1;
    }
    if bad > 0 {
        let msg = format!("{what}: {bad} of {checked} checked elements wrong:{first}");
        return Err(Box::new(WrongResult(msg)));
    }
    Ok(checked)
}

fn sample(n: usize) -> impl Iterator<Item = usize> {
    (0..n)
        .step_by(SAMPLE_STRIDE)
        .chain((n % SAMPLE_STRIDE != 1).then_some(n - 1))
}

/// The raw path: cudarc's context, default stream and the function of the same PTX.
struct Raw {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    func: CudaFunction,
}

impl Raw {
    /// One saxpy launch through cudarc's launch builder, arguments per the PTX ABI.
    fn launch(&self, grid: u32, a: f32, x: u64, y: u64, n: u32) -> Res<()> {
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = self.stream.launch_builder(&self.func);
        b.arg(&a).arg(&x).arg(&n).arg(&y).arg(&n);
        // SAFETY: the arguments match the entry's parameters (.f32, .u64, .u32, .u64, .u32);
        // x and y are live allocations of this context holding n floats each.
        unsafe { b.launch(cfg) }?;
        Ok(())
    }

    fn event(&self) -> Res<CudaEvent> {
        Ok(self
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
    }

    /// Downloads `src` and waits for the copy.
    fn download(&self, src: &CudaSlice<f32>) -> Res<Vec<f32>> {
        let v = self.stream.clone_dtoh(src)?;
        self.stream.synchronize()?;
        Ok(v)
    }

    /// Uploads `data` and waits for the copy.
    fn upload(&self, data: &[f32]) -> Res<CudaSlice<f32>> {
        let s = self.stream.clone_htod(data)?;
        self.stream.synchronize()?;
        Ok(s)
    }
}

/// Milliseconds of `work` between spoc events recorded on the default stream (the stream
/// spoc's launches and copies use).
fn spoc_timed(dev: &Device, ev: &(Event, Event), work: &mut dyn FnMut() -> Res<()>) -> Res<f64> {
    let b = dev.backend();
    b.record_event(&ev.0, None)?;
    work()?;
    b.record_event(&ev.1, None)?;
    Ok(b.event_elapsed_ms(&ev.0, &ev.1)? as f64)
}

type Event = spoc::backend::Event;

fn spoc_events(dev: &Device) -> Res<(Event, Event)> {
    let b = dev.backend();
    Ok((
        b.create_event(dev.backend_id)?,
        b.create_event(dev.backend_id)?,
    ))
}

/// Median ms of `REPS` timed runs after `BW_WARMUP` untimed ones.
fn median_ms(mut timed: impl FnMut() -> Res<f64>) -> Res<f64> {
    for _ in 0..BW_WARMUP {
        timed()?;
    }
    let v = (0..REPS).map(|_| timed()).collect::<Res<Vec<f64>>>()?;
    Ok(median(&v))
}

// ------------------------------------------------------------------ launch overhead

/// One path's figures for one round, µs per launch.
#[derive(Clone, Copy, Default)]
struct Round {
    loop_only: f64,
    with_sync: f64,
    gpu_span: f64,
    burst: f64,
}

/// Times `n` launches back to back (one sync at the end) and `n` launches in idle-queue
/// bursts of `BURST`.
fn time_round(
    raw: &Raw,
    n: usize,
    launch: &mut dyn FnMut() -> Res<()>,
    sync: &dyn Fn() -> Res<()>,
) -> Res<Round> {
    let (e0, e1) = (raw.event()?, raw.event()?);
    sync()?;
    e0.record(&raw.stream)?;
    let t0 = Instant::now();
    for _ in 0..n {
        launch()?;
    }
    let loop_only = t0.elapsed();
    e1.record(&raw.stream)?;
    sync()?;
    let with_sync = t0.elapsed();
    let gpu_ms = e0.elapsed_ms(&e1)? as f64;

    let mut burst = Duration::ZERO;
    let mut done = 0;
    while done < n {
        let k = BURST.min(n - done);
        sync()?;
        let t = Instant::now();
        for _ in 0..k {
            launch()?;
        }
        burst += t.elapsed();
        done += k;
    }
    sync()?;
    Ok(Round {
        loop_only: us_per(loop_only, n),
        with_sync: us_per(with_sync, n),
        gpu_span: gpu_ms * 1e3 / n as f64,
        burst: us_per(burst, n),
    })
}

struct LaunchFigures {
    spoc: Round,
    raw: Round,
}

fn launch_overhead(cfg: &Config, dev: &Device, raw: &Raw) -> Res<LaunchFigures> {
    let a = 0.5f32;
    let x: Vec<f32> = (0..SMALL_N).map(|i| (i % 13) as f32 * 0.25).collect();
    let y: Vec<f32> = (0..SMALL_N).map(|i| (i % 5) as f32).collect();
    let (grid, n32) = (grid_for(SMALL_N), SMALL_N as u32);

    // spoc: compile (memoized), check all elements.
    let xs = dev.upload(&x)?;
    let mut ys = dev.upload(&y)?;
    saxpy.launch(dev, dims1d(grid), dims1d(BLOCK), (a, &xs, &mut ys))?;
    check(
        "spoc CUDA/PTX saxpy (1024)",
        &ys.to_vec()?,
        &x,
        &y,
        a,
        0..SMALL_N,
    )?;

    // raw: same PTX through cudarc, check all elements.
    let xr = raw.upload(&x)?;
    let mut yr = raw.upload(&y)?;
    let xp = xr.device_ptr(&raw.stream).0;
    let yp = yr.device_ptr_mut(&raw.stream).0;
    raw.launch(grid, a, xp, yp, n32)?;
    let got = raw.download(&yr)?;
    check("raw cudarc saxpy (1024)", &got, &x, &y, a, 0..SMALL_N)?;

    let mut spoc_launch = || -> Res<()> {
        saxpy.launch(dev, dims1d(grid), dims1d(BLOCK), (a, &xs, &mut ys))?;
        Ok(())
    };
    let mut raw_launch = || raw.launch(grid, a, xp, yp, n32);
    let spoc_sync = || -> Res<()> { Ok(dev.synchronize()?) };
    let raw_sync = || -> Res<()> { Ok(raw.stream.synchronize()?) };

    for _ in 0..LAUNCH_WARMUP {
        spoc_launch()?;
        raw_launch()?;
    }
    let (mut s, mut r) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        s.push(time_round(raw, cfg.launches, &mut spoc_launch, &spoc_sync)?);
        r.push(time_round(raw, cfg.launches, &mut raw_launch, &raw_sync)?);
        let (a, b) = (s[round], r[round]);
        println!(
            "  round {}: spoc {:.3} / {:.3} / burst {:.3} / gpu {:.3} µs; raw {:.3} / {:.3} / burst {:.3} / gpu {:.3} µs",
            round + 1,
            a.loop_only, a.with_sync, a.burst, a.gpu_span,
            b.loop_only, b.with_sync, b.burst, b.gpu_span
        );
    }
    let med = |v: &[Round]| Round {
        loop_only: median(&v.iter().map(|r| r.loop_only).collect::<Vec<_>>()),
        with_sync: median(&v.iter().map(|r| r.with_sync).collect::<Vec<_>>()),
        gpu_span: median(&v.iter().map(|r| r.gpu_span).collect::<Vec<_>>()),
        burst: median(&v.iter().map(|r| r.burst).collect::<Vec<_>>()),
    };
    Ok(LaunchFigures {
        spoc: med(&s),
        raw: med(&r),
    })
}

/// Launch cost on a stream: spoc's `saxpy.launch_on(&stream, …)` against cudarc's launch
/// builder on a stream of its own (`CudaContext::new_stream`), the same PTX and arguments;
/// host µs per launch of the loop alone, `ROUNDS` interleaved rounds, medians.
///
/// Also returned: cudarc's launch on a stream created as spoc creates its streams
/// (`CU_STREAM_DEFAULT`, which synchronises with the legacy default stream; cudarc's own are
/// `CU_STREAM_NON_BLOCKING`), to tell the driver's cost of that flag from spoc's own.
fn stream_launch_overhead(cfg: &Config, dev: &Device, raw: &Raw) -> Res<(f64, f64, f64)> {
    let a = 0.5f32;
    let x: Vec<f32> = (0..SMALL_N).map(|i| (i % 13) as f32 * 0.25).collect();
    let y: Vec<f32> = (0..SMALL_N).map(|i| (i % 5) as f32).collect();
    let (grid, n32) = (grid_for(SMALL_N), SMALL_N as u32);
    let stream = dev.new_stream()?;
    let xs = dev.upload(&x)?;
    let mut ys = dev.upload(&y)?;
    saxpy.launch_on(&stream, dims1d(grid), dims1d(BLOCK), (a, &xs, &mut ys))?;
    check(
        "spoc CUDA/PTX saxpy on a stream (1024)",
        &ys.to_vec()?,
        &x,
        &y,
        a,
        0..SMALL_N,
    )?;
    let rs = Raw {
        ctx: raw.ctx.clone(),
        stream: raw.ctx.new_stream()?,
        func: raw.func.clone(),
    };
    let xr = rs.upload(&x)?;
    let mut yr = rs.upload(&y)?;
    let xp = xr.device_ptr(&rs.stream).0;
    let yp = yr.device_ptr_mut(&rs.stream).0;
    let mut spoc_launch = || -> Res<()> {
        saxpy.launch_on(&stream, dims1d(grid), dims1d(BLOCK), (a, &xs, &mut ys))?;
        Ok(())
    };
    let mut raw_launch = || rs.launch(grid, a, xp, yp, n32);
    raw.ctx.bind_to_thread()?;
    let blocking_handle = cudarc::driver::result::stream::create(
        cudarc::driver::result::stream::StreamKind::Default,
    )?;
    let rb = Raw {
        ctx: raw.ctx.clone(),
        // SAFETY: a live stream of this context, destroyed below after its last use (the
        // wrapper does not own it).
        stream: unsafe { raw.ctx.wrap_borrowed_stream(blocking_handle) },
        func: raw.func.clone(),
    };
    let mut raw_blocking_launch = || rb.launch(grid, a, xp, yp, n32);
    let raw_blocking_sync = || -> Res<()> { Ok(rb.stream.synchronize()?) };
    let timed = |launch: &mut dyn FnMut() -> Res<()>, sync: &dyn Fn() -> Res<()>| {
        sync()?;
        let t = Instant::now();
        for _ in 0..cfg.launches {
            launch()?;
        }
        let us = us_per(t.elapsed(), cfg.launches);
        sync()?;
        Res::Ok(us)
    };
    let spoc_sync = || -> Res<()> { Ok(stream.synchronize()?) };
    let raw_sync = || -> Res<()> { Ok(rs.stream.synchronize()?) };
    for _ in 0..LAUNCH_WARMUP {
        spoc_launch()?;
        raw_launch()?;
        raw_blocking_launch()?;
    }
    let (mut sv, mut rv, mut bv) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        sv.push(timed(&mut spoc_launch, &spoc_sync)?);
        rv.push(timed(&mut raw_launch, &raw_sync)?);
        bv.push(timed(&mut raw_blocking_launch, &raw_blocking_sync)?);
    }
    rb.stream.synchronize()?;
    drop(rb);
    // SAFETY: created above, its work finished, no wrapper left.
    unsafe { cudarc::driver::result::stream::destroy(blocking_handle) }?;
    let got = rs.download(&yr)?;
    drop((xr, yr));
    if got.iter().any(|v| !v.is_finite()) {
        return Err("raw cudarc saxpy on a stream gave a non-finite value".into());
    }
    Ok((median(&sv), median(&rv), median(&bv)))
}

/// Kernels per captured graph in the graph-replay test.
const GRAPH_KERNELS: usize = 100;
/// Graph-replay target: µs per captured kernel.
const GOAL_GRAPH_US: f64 = 1.5;

/// What the graph-replay test measured.
struct GraphFigures {
    replays: usize,
    /// µs per captured kernel, including the synchronisation after the replays.
    us_per_kernel: f64,
    /// Host µs per `Graph::launch` (the loop alone).
    host_us_per_replay: f64,
    /// Whether the driver holds the graph (`cuGraphLaunch`), not a replay list.
    driver_graph: bool,
}

/// Graph replay: `GRAPH_KERNELS` saxpy launches captured from a stream, replayed whole.
fn graph_replay(cfg: &Config, dev: &Device) -> Res<GraphFigures> {
    let a = 0.5f32;
    let x: Vec<f32> = (0..SMALL_N).map(|i| (i % 13) as f32 * 0.25).collect();
    let y: Vec<f32> = (0..SMALL_N).map(|i| (i % 5) as f32).collect();
    let grid = grid_for(SMALL_N);
    let stream = dev.new_stream()?;
    let xs = dev.upload(&x)?;
    let mut ys = dev.upload(&y)?;
    let graph = stream.capture(|s| {
        for _ in 0..GRAPH_KERNELS {
            saxpy.launch_on(s, dims1d(grid), dims1d(BLOCK), (a, &xs, &mut ys))?;
        }
        Ok(())
    })?;
    graph.launch(&stream)?;
    // One replay: y = a x + y, GRAPH_KERNELS times, in f32 (no FMA), element by element.
    let want: Vec<f32> = x
        .iter()
        .zip(&y)
        .map(|(&xv, &yv)| (0..GRAPH_KERNELS).fold(yv, |acc, _| a * xv + acc))
        .collect();
    let got = ys.to_vec()?;
    if let Some(i) = (0..SMALL_N).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        return Err(format!(
            "graph replay of {GRAPH_KERNELS} saxpy launches: y[{i}] = {}, want {}",
            got[i], want[i]
        )
        .into());
    }
    let replays = (cfg.launches / GRAPH_KERNELS).max(10);
    for _ in 0..10 {
        graph.launch(&stream)?;
    }
    stream.synchronize()?;
    let (mut per_kernel, mut host) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..replays {
            graph.launch(&stream)?;
        }
        host.push(us_per(t.elapsed(), replays));
        stream.synchronize()?;
        per_kernel.push(us_per(t.elapsed(), replays * GRAPH_KERNELS));
    }
    Ok(GraphFigures {
        replays,
        us_per_kernel: median(&per_kernel),
        host_us_per_replay: median(&host),
        driver_graph: graph.is_driver_graph(),
    })
}

// ------------------------------------------------------------------ bandwidth

/// Median kernel ms of spoc's saxpy on `dev` at `x.len()` elements, after checking its result.
fn spoc_saxpy_ms(dev: &Device, x: &[f32], y: &[f32], a: f32) -> Res<f64> {
    let n = x.len();
    let grid = grid_for(n);
    let xs = dev.upload(x)?;
    let mut ys = dev.upload(y)?;
    saxpy.launch(dev, dims1d(grid), dims1d(BLOCK), (a, &xs, &mut ys))?; // compiles
    ys.upload_from(y)?;
    saxpy.launch(dev, dims1d(grid), dims1d(BLOCK), (a, &xs, &mut ys))?;
    let what = format!("spoc {} saxpy (n = {n})", dev.framework);
    let checked = check(&what, &ys.to_vec()?, x, y, a, sample(n))?;
    println!("  {what}: {checked} sampled elements match the CPU reference");
    let ev = spoc_events(dev)?;
    median_ms(|| {
        spoc_timed(dev, &ev, &mut || {
            saxpy.launch(dev, dims1d(grid), dims1d(BLOCK), (a, &xs, &mut ys))?;
            Ok(())
        })
    })
}

/// Median ms of a `COPY_BYTES` device-to-device copy (spoc's `copy_from`: `cuMemcpyDtoD`).
fn copy_ms(dev: &Device) -> Res<f64> {
    let elems = COPY_BYTES / 4;
    let src: Buffer<f32> = dev.alloc(elems)?;
    let mut dst: Buffer<f32> = dev.alloc(elems)?;
    let ev = spoc_events(dev)?;
    median_ms(|| spoc_timed(dev, &ev, &mut || Ok(dst.copy_from(&src)?)))
}

/// Median kernel ms of the raw cudarc saxpy (same PTX), after checking its result.
fn raw_saxpy_ms(raw: &Raw, x: &[f32], y: &[f32], a: f32) -> Res<f64> {
    let n = x.len();
    let (grid, n32) = (grid_for(n), n as u32);
    let xr = raw.upload(x)?;
    let mut yr = raw.upload(y)?;
    let xp = xr.device_ptr(&raw.stream).0;
    let yp = yr.device_ptr_mut(&raw.stream).0;
    raw.launch(grid, a, xp, yp, n32)?;
    let what = format!("raw cudarc saxpy (n = {n})");
    let checked = check(&what, &raw.download(&yr)?, x, y, a, sample(n))?;
    println!("  {what}: {checked} sampled elements match the CPU reference");
    let (e0, e1) = (raw.event()?, raw.event()?);
    median_ms(|| {
        e0.record(&raw.stream)?;
        raw.launch(grid, a, xp, yp, n32)?;
        e1.record(&raw.stream)?;
        Ok(e0.elapsed_ms(&e1)? as f64)
    })
}

// ------------------------------------------------------------------ report

/// Runs everything and prints the report; `Ok(false)` if some part failed.
fn run(cfg: &Config, dev: &Device) -> Res<bool> {
    let mut all_ok = true;
    let ctx = CudaContext::new(dev.backend_id)?;
    let (major, minor) = ctx.compute_capability()?;
    let drv = dev.backend().version();
    println!("# spoc cuda_bench");
    println!(
        "device: {} ({}, global id {}, CUDA device {}; cudarc sees `{}`)",
        dev.name,
        dev.framework,
        dev.id,
        dev.backend_id,
        ctx.name()?
    );
    println!("compute capability: {major}.{minor}");
    println!("CUDA driver API version: {}.{}", drv.0, drv.1);
    match std::fs::read_to_string("/proc/driver/nvidia/version") {
        Ok(s) => println!("kernel driver: {}", s.lines().next().unwrap_or("").trim()),
        Err(e) => println!("kernel driver: unknown (/proc/driver/nvidia/version: {e})"),
    }

    // The PTX the backend loads for this device: generated for its compute capability.
    let kernel = saxpy.def().valid()?;
    let mut caps = spoc::codegen::Capabilities::for_target(spoc::Target::CudaPtx);
    caps.compute_capability = Some((major.max(0) as u32, minor.max(0) as u32));
    let source = spoc::codegen::generate_source_with(
        spoc::Target::CudaPtx,
        kernel,
        &spoc::codegen::Options {
            block: None,
            soa_params: &[],
            caps,
            checked: false,
        },
    )?
    .ok_or("the PTX generator produced nothing")?;
    let ptx = source
        .text()
        .ok_or("the PTX generator produced no text")?
        .to_string();
    let backend_same = dev
        .backend()
        .generate_source(kernel, None, &[])
        .ok()
        .flatten()
        .and_then(|s| s.text().map(|t| t == ptx));
    let target_line = ptx
        .lines()
        .find(|l| l.trim_start().starts_with(".target"))
        .unwrap_or("?")
        .trim();
    println!(
        "PTX: `{target_line}`, {} bytes, entry `{}`; same text as the backend's generate_source: {}",
        ptx.len(),
        source.entry,
        match backend_same {
            Some(true) => "yes",
            Some(false) => "no (the backend regenerates per device at compile)",
            None => "unknown",
        }
    );
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx))?;
    let func = module.load_function(&source.entry)?;
    let raw = Raw {
        stream: ctx.default_stream(),
        ctx,
        func,
    };

    // 1. Launch overhead.
    println!(
        "\n## Launch overhead: saxpy, n = {SMALL_N}, grid {} x block {BLOCK}, {} launches per round and path, {ROUNDS} interleaved rounds, medians",
        grid_for(SMALL_N),
        cfg.launches
    );
    println!("  (per round: loop only / including final sync / bursts of {BURST} from an idle queue / GPU span, µs per launch)");
    let (launch_line, ok) = launch_report(cfg.launches, launch_overhead(cfg, dev, &raw));
    all_ok &= ok;
    let stream_line = match stream_launch_overhead(cfg, dev, &raw) {
        Ok((s, r, b)) => format!(
            "RESULT launch_stream target=CUDA/PTX launches={} spoc_us={s:.3} raw_us={r:.3} ratio={:.3} raw_blocking_stream_us={b:.3} ratio_to_blocking={:.3} goal=\"ratio<=1.05\" status={}",
            cfg.launches,
            s / r,
            s / b,
            if s <= 1.05 * r { "PASS" } else { "MISS" }
        ),
        Err(e) => {
            all_ok = false;
            format!("RESULT launch_stream target=CUDA/PTX status=ERROR reason={}", quoted(&e.to_string()))
        }
    };
    println!("{stream_line}");
    let graph_line = match graph_replay(cfg, dev) {
        Ok(g) => format!(
            "RESULT graph_replay target=CUDA/PTX kernels={GRAPH_KERNELS} replays={} rounds={ROUNDS} us_per_kernel={:.3} host_us_per_replay={:.3} driver_graph={} goal=\"us_per_kernel<={GOAL_GRAPH_US}\" status={}",
            g.replays,
            g.us_per_kernel,
            g.host_us_per_replay,
            g.driver_graph,
            if g.us_per_kernel <= GOAL_GRAPH_US { "PASS" } else { "MISS" }
        ),
        Err(e) => {
            all_ok = false;
            format!("RESULT graph_replay target=CUDA/PTX status=ERROR reason={}", quoted(&e.to_string()))
        }
    };
    println!("{graph_line}");

    // 2. and 3. Bandwidth.
    let n = cfg.n;
    let a = 2.5f32;
    println!(
        "\n## Bandwidth: saxpy n = {n} floats (12 bytes/element), copy {COPY_BYTES} bytes (counted 2 x bytes: read + write); CUDA events, median of {REPS} after {BW_WARMUP} warm-up"
    );
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let copy = copy_ms(dev);
    let ptx = spoc_saxpy_ms(dev, &x, &y, a);
    let rawr = raw_saxpy_ms(&raw, &x, &y, a);
    drop(raw);
    // Any failure to get a CUDA/C device means the backend is not available here.
    let c = match spoc::init_device(Some("CUDA/C")) {
        Ok(dev_c) => {
            let v = dev_c.backend().version();
            println!("  CUDA/C: {} with NVRTC {}.{}", dev_c.name, v.0, v.1);
            spoc_saxpy_ms(&dev_c, &x, &y, a)
        }
        Err(e) => Err(Box::new(Unavailable(e.to_string())) as Box<dyn StdError>),
    };
    let cases = [
        ("CUDA/PTX", "saxpy CUDA/PTX (spoc)", ptx, true),
        (
            "raw-cudarc-PTX",
            "saxpy same PTX via raw cudarc",
            rawr,
            false,
        ),
        ("CUDA/C", "saxpy CUDA/C (spoc)", c, true),
    ];
    let (rows, ok) = bandwidth_report(n, copy, cases);
    all_ok &= ok;

    println!("\n## Summary");
    println!("{launch_line}");
    println!("{stream_line}");
    for l in rows {
        println!("{l}");
    }
    Ok(all_ok)
}

/// A backend that is not available (its saxpy is SKIPPED, not failed).
#[derive(Debug)]
struct Unavailable(String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not available: {}", self.0)
    }
}

impl StdError for Unavailable {}

/// Prints the launch-overhead table; its RESULT line, and false if the measurement failed.
fn launch_report(launches: usize, r: Res<LaunchFigures>) -> (String, bool) {
    let LaunchFigures { spoc: s, raw: r } = match r {
        Ok(f) => f,
        Err(e) => {
            eprintln!("launch overhead failed: {e}");
            let status = if e.downcast_ref::<WrongResult>().is_some() {
                "WRONG_RESULT"
            } else {
                "ERROR"
            };
            let line = format!(
                "RESULT launch target=CUDA/PTX status={status} reason={}",
                quoted(&e.to_string())
            );
            return (line, false);
        }
    };
    println!();
    println!("| path | loop only (µs/launch) | incl. final sync (µs/launch) | bursts of {BURST} (µs/launch) | GPU span (µs/launch) |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (name, v) in [("spoc `saxpy.launch`", s), ("raw cudarc launch builder", r)] {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} |",
            v.loop_only, v.with_sync, v.burst, v.gpu_span
        );
    }
    println!(
        "| ratio spoc/raw | {:.3} | {:.3} | {:.3} | {:.3} |",
        s.loop_only / r.loop_only,
        s.with_sync / r.with_sync,
        s.burst / r.burst,
        s.gpu_span / r.gpu_span
    );
    println!(
        "loop only: host time of the launch loop / N; incl. final sync: until the synchronisation \
         after it returns; bursts: host time of launches issued {BURST} at a time on an idle device; \
         GPU span: CUDA events before and after the loop / N (close to `loop only` when the loop \
         ran at the GPU's pace, i.e. the launch queue was full)."
    );
    let pass = s.loop_only <= GOAL_LAUNCH_RATIO * r.loop_only && s.loop_only < GOAL_LAUNCH_US;
    let line = format!(
        "RESULT launch target=CUDA/PTX n={SMALL_N} launches={launches} rounds={ROUNDS} \
         spoc_us={:.3} raw_us={:.3} ratio={:.3} \
         spoc_sync_us={:.3} raw_sync_us={:.3} ratio_sync={:.3} \
         spoc_burst_us={:.3} raw_burst_us={:.3} ratio_burst={:.3} \
         spoc_gpu_us={:.3} raw_gpu_us={:.3} goal={} status={}",
        s.loop_only,
        r.loop_only,
        s.loop_only / r.loop_only,
        s.with_sync,
        r.with_sync,
        s.with_sync / r.with_sync,
        s.burst,
        r.burst,
        s.burst / r.burst,
        s.gpu_span,
        r.gpu_span,
        quoted(&format!(
            "ratio<={GOAL_LAUNCH_RATIO} && spoc_us<{GOAL_LAUNCH_US}"
        )),
        if pass { "PASS" } else { "MISS" }
    );
    (line, true)
}

/// One saxpy figure to report: RESULT target, table label, median ms, whether the bandwidth
/// goal applies.
type Case = (&'static str, &'static str, Res<f64>, bool);

/// Prints the bandwidth table; the RESULT lines, and false if a measurement failed (a backend
/// that is [`Unavailable`] is skipped, not failed).
fn bandwidth_report<const K: usize>(
    n: usize,
    copy: Res<f64>,
    cases: [Case; K],
) -> (Vec<String>, bool) {
    let mut ok = true;
    println!();
    println!("| measurement | median ms | GB/s | of copy |");
    println!("| --- | ---: | ---: | ---: |");
    let copy_gbs = match &copy {
        Ok(ms) => {
            let gbs = 2.0 * COPY_BYTES as f64 / (ms * 1e-3) / 1e9;
            println!(
                "| cuMemcpyDtoD {} MiB (2 x bytes / time) | {ms:.4} | {gbs:.1} | 100 % |",
                COPY_BYTES >> 20
            );
            Some(gbs)
        }
        Err(e) => {
            ok = false;
            println!("| cuMemcpyDtoD {} MiB | error: {e} | | |", COPY_BYTES >> 20);
            None
        }
    };
    let mut rows = Vec::new();
    if let Err(e) = &copy {
        rows.push(format!(
            "RESULT copy bytes={COPY_BYTES} status=ERROR reason={}",
            quoted(&e.to_string())
        ));
    }
    for (target, label, r, has_goal) in cases {
        let line = match r {
            Err(e) if e.downcast_ref::<Unavailable>().is_some() => {
                println!("| {label} | {e} | | |");
                format!(
                    "RESULT saxpy target={target} n={n} status=SKIPPED reason={}",
                    quoted(&e.to_string())
                )
            }
            Err(e) => {
                ok = false;
                println!("| {label} | error: {e} | | |");
                let status = if e.downcast_ref::<WrongResult>().is_some() {
                    "WRONG_RESULT"
                } else {
                    "ERROR"
                };
                format!(
                    "RESULT saxpy target={target} n={n} status={status} reason={}",
                    quoted(&e.to_string())
                )
            }
            Ok(ms) => {
                let gbs = 12.0 * n as f64 / (ms * 1e-3) / 1e9;
                let ratio = copy_gbs.map(|c| gbs / c);
                let pct = ratio.map_or("?".to_string(), |r| format!("{:.1} %", r * 100.0));
                println!("| {label} | {ms:.4} | {gbs:.1} | {pct} |");
                let status = match (has_goal, ratio) {
                    (false, _) => "INFO",
                    (true, None) => "NO_COPY_FIGURE",
                    (true, Some(r)) if r >= GOAL_BW_RATIO => "PASS",
                    (true, Some(_)) => "MISS",
                };
                let goal = if has_goal {
                    format!(" goal={}", quoted(&format!("ratio>={GOAL_BW_RATIO}")))
                } else {
                    String::new()
                };
                format!(
                    "RESULT saxpy target={target} n={n} ms={ms:.4} gbs={gbs:.1} copy_gbs={} ratio={}{goal} status={status}",
                    copy_gbs.map_or("nan".to_string(), |c| format!("{c:.1}")),
                    ratio.map_or("nan".to_string(), |r| format!("{r:.3}")),
                )
            }
        };
        rows.push(line);
    }
    (rows, ok)
}
