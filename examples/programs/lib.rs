//! Sarek's benchmark programs, written as spoc programs: the library of the `spoc-examples`
//! package (`examples/`).
//!
//! Each program lives in its own module (`examples/programs/<name>.rs`): its `#[kernel]`s and a
//! host driver `run(dev, size)` that makes deterministic inputs (a seeded [`SplitMix64`]),
//! launches once untimed (the first launch compiles the kernels for the device), then times the
//! launches of a second pass, checks the result against a host reference and returns an
//! [`Outcome`]. The same drivers serve three callers:
//!
//! - one example per program (`cargo run --release --example vector_add -- --size 1000000`), a
//!   thin `main` calling [`example_main`];
//! - `examples/tests/programs.rs`, which runs every program at its small [`Program::test_size`]
//!   on every device, and `examples/tests/sanitizer.rs`, which runs each on the checking
//!   Interpreter;
//! - `examples/bench.rs`, which runs every program at [`Program::default_size`] (or
//!   [`Program::quick_size`]) on one device and prints a table.
//!
//! Floating-point results are checked exactly where the kernel adds in the same order as the host
//! reference (spoc never contracts `a * b + c` into an FMA, so the bits agree), and within a
//! stated relative tolerance where the order differs (reductions).

use spoc::prelude::{dims1d, Buffer, Dims, F32x4};
use spoc::Device;
use std::fmt;
use std::time::Instant;

pub mod bitonic_sort;
pub mod conv2d;
pub mod dot_product;
pub mod gather_scatter;
pub mod gemm;
pub mod histogram;
pub mod kernels;
pub mod mandelbrot;
pub mod matrix_mul;
pub mod matrix_mul_tiled;
pub mod nbody;
pub mod radix_sort;
pub mod reduction;
pub mod saxpy_vec4;
pub mod scan;
pub mod sgemm;
pub mod soa_aos;
pub mod stencil_2d;
pub mod stream_triad;
pub mod transpose;
pub mod transpose_tiled;
pub mod vector_add;
pub mod vector_copy;

/// The amount of work one timed pass does, for the throughput column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Work {
    /// Bytes read and written in global memory (each counted once, as if caches were perfect).
    Bytes(f64),
    /// Floating-point operations.
    Flops(f64),
}

/// The first element where a result differs from the host reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Which output (e.g. `"c"`, `"blur"`), for programs with several.
    pub output: String,
    /// Index of the first bad element (row-major for 2-D outputs).
    pub index: usize,
    /// The device's value, formatted.
    pub got: String,
    /// The reference value, formatted.
    pub want: String,
    /// How many elements differ in all.
    pub count: usize,
    /// The tolerance that was applied (`"exact"` or a phrase).
    pub tolerance: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` differs from the host reference at index {}: got {}, want {} ({} element(s) differ; tolerance: {})",
            self.output, self.index, self.got, self.want, self.count, self.tolerance
        )
    }
}

/// A picture a program made, for the examples to write as PNG (the tests ignore it).
#[derive(Clone, Debug)]
pub struct Image {
    /// File name without directory or extension (`"mandelbrot"`).
    pub file: &'static str,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// 8-bit RGB, row-major, `3 * width * height` bytes.
    pub rgb: Vec<u8>,
}

/// What one run of a program measured and found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The program's name.
    pub name: &'static str,
    /// The size asked for (its meaning per program: [`Program::size_means`]).
    pub size: usize,
    /// The problem actually run, in words (`"1024 x 1024"`, `"1048576 elements"`).
    pub shape: String,
    /// Seconds of the timed pass: from the first launch to the end of the last one (a
    /// `synchronize`), plus the download and host finish of a small final result where the
    /// program has one (the per-block partial sums of `dot_product`). Bulk outputs are downloaded
    /// after the clock stops, so the throughput is the device's, not the bus's.
    pub seconds: f64,
    /// Work done by the timed pass.
    pub work: Work,
    /// True if every output matched the host reference.
    pub checked: bool,
    /// The first difference, when `checked` is false.
    pub mismatch: Option<Mismatch>,
    /// Pictures for the examples to write (empty for most programs).
    pub images: Vec<Image>,
    /// Remarks printed after the result (a second measurement, a part that was skipped), one
    /// line each; the table keeps `shape` short.
    pub notes: Vec<String>,
}

impl Outcome {
    /// An outcome whose check is set by [`Outcome::check`].
    pub fn new(name: &'static str, size: usize, shape: String, seconds: f64, work: Work) -> Self {
        Outcome {
            name,
            size,
            shape,
            seconds,
            work,
            checked: true,
            mismatch: None,
            images: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The outcome of a pass over `size` elements that moves `bytes_per_element` bytes of
    /// device memory per element (shape "`size` elements", work in bytes).
    pub fn per_element(
        name: &'static str,
        size: usize,
        seconds: f64,
        bytes_per_element: f64,
    ) -> Self {
        let work = Work::Bytes(bytes_per_element * size as f64);
        Outcome::new(name, size, format!("{size} elements"), seconds, work)
    }

    /// Adds a remark (see [`Outcome::notes`]).
    pub fn note(mut self, note: String) -> Self {
        self.notes.push(note);
        self
    }

    /// Records a check: the first failing check wins, a passing one changes nothing.
    pub fn check(mut self, result: Option<Mismatch>) -> Self {
        if let Some(m) = result {
            if self.mismatch.is_none() {
                self.mismatch = Some(m);
            }
            self.checked = false;
        }
        self
    }

    /// Throughput as a number and unit: GB/s for [`Work::Bytes`], GFLOP/s for [`Work::Flops`].
    pub fn throughput(&self) -> (f64, &'static str) {
        let secs = self.seconds.max(1e-12);
        match self.work {
            Work::Bytes(b) => (b / secs / 1e9, "GB/s"),
            Work::Flops(f) => (f / secs / 1e9, "GFLOP/s"),
        }
    }

    /// `"ok"` or the mismatch.
    pub fn verdict(&self) -> String {
        match &self.mismatch {
            None if self.checked => "ok".into(),
            None => "not checked".into(),
            Some(m) => m.to_string(),
        }
    }
}

/// A program's driver: runs it on `dev` at `size` and checks it.
///
/// # Errors
/// Whatever spoc reports (a launch refused, a kernel the backend does not support, a fault on the
/// CPU backends). A wrong result is not an error: it is an [`Outcome`] with `checked == false`.
pub type RunFn = fn(&Device, usize) -> spoc::Result<Outcome>;

/// One entry of the registry.
#[derive(Clone, Copy, Debug)]
pub struct Program {
    /// The name (also the example's name).
    pub name: &'static str,
    /// One line on what it computes.
    pub about: &'static str,
    /// What `size` counts (`"elements"`, `"n for n x n matrices"`, …).
    pub size_means: &'static str,
    /// Realistic size, for the examples and the benchmark.
    pub default_size: usize,
    /// Size for `bench --quick` (a second or so on the CPU backends in release builds).
    pub quick_size: usize,
    /// Small size for the cross-backend tests (the Interpreter runs it quickly).
    pub test_size: usize,
    /// The driver.
    pub run: RunFn,
}

/// Every program, in the order the benchmark runs them.
pub const PROGRAMS: &[Program] = &[
    Program {
        name: "vector_add",
        about: "c = a + b over f32, as F32x4 vectors (16-byte loads), grid-stride",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 5000,
        run: vector_add::run,
    },
    Program {
        name: "saxpy_vec4",
        about: "y = a * x + y over f32, as F32x4 vectors (16-byte loads), grid-stride",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 5003,
        run: saxpy_vec4::run,
    },
    Program {
        name: "vector_copy",
        about: "b = a over f32, as F32x4 vectors (16-byte loads), grid-stride",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 5000,
        run: vector_copy::run,
    },
    Program {
        name: "stream_triad",
        about: "a = b + s * c over f32, as F32x4 vectors (STREAM triad), grid-stride",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 5000,
        run: stream_triad::run,
    },
    Program {
        name: "gather_scatter",
        about: "out[i] = src[perm[i]] and dst[perm[i]] = src[i] through a random permutation",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 3000,
        run: gather_scatter::run,
    },
    Program {
        name: "dot_product",
        about: "dot product of f32 vectors: shared-memory tree per block, host sum of the partials",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 5000,
        run: dot_product::run,
    },
    Program {
        name: "reduction",
        about: "sum of u32 (wrapping): shared-memory tree per block, then one block over the partials",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 5000,
        run: reduction::run_sum,
    },
    Program {
        name: "reduction_max",
        about: "maximum of f32: dynamic shared memory tree per block, then one block over the partials",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 5000,
        run: reduction::run_max,
    },
    Program {
        name: "scan",
        about: "inclusive prefix sum of u32, multi-block (block scans, scanned block sums, add-back)",
        size_means: "elements",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 70000,
        run: scan::run,
    },
    Program {
        name: "histogram",
        about: "256-bin histogram of bytes: shared-memory atomics per block, then global atomics",
        size_means: "u32 words (4 bytes each)",
        default_size: 1 << 24,
        quick_size: 1 << 20,
        test_size: 5000,
        run: histogram::run,
    },
    Program {
        name: "matrix_mul",
        about: "C = A * B, naive: one thread per element of C (f32)",
        size_means: "n for n x n matrices",
        default_size: 1024,
        quick_size: 256,
        test_size: 37,
        run: matrix_mul::run_naive,
    },
    Program {
        name: "matrix_mul_tiled",
        about: "C = A * B with 16 x 16 tiles in shared memory (f32)",
        size_means: "n for n x n matrices",
        default_size: 1024,
        quick_size: 256,
        test_size: 37,
        run: matrix_mul_tiled::run,
    },
    Program {
        name: "sgemm",
        about: "C = A * B register-tiled: 128 x 256 block tiles, 8 x 16 per thread, 16-byte loads, double-buffered shared memory (f32, mul_add; n not a multiple of 4: 128 x 128, 8 x 8, 4-byte loads)",
        size_means: "n for n x n matrices",
        default_size: 2048,
        quick_size: 1024,
        test_size: 132,
        run: sgemm::run,
    },
    Program {
        name: "sgemm_64",
        about: "sgemm with 64 x 64 block tiles, 4 x 4 per thread (f32, mul_add)",
        size_means: "n for n x n matrices",
        default_size: 1024,
        quick_size: 1024,
        test_size: 70,
        run: sgemm::run_64,
    },
    Program {
        name: "gemm_bf16",
        about: "C = A * B, bf16 in, f32 out, on the warp-level mma (m16n8k16): 128 x 128 block tiles, 8 warps of 64 x 32, 16-byte loads, pairs staged in swizzled shared memory, double-buffered (sm_80+ and the CPU backends; other devices skip)",
        size_means: "n for n x n x n (m = n = k)",
        default_size: 2048,
        quick_size: 512,
        test_size: 33,
        run: gemm::run_bf16,
    },
    Program {
        name: "gemm_f16",
        about: "gemm_bf16 with f16 inputs",
        size_means: "n for n x n x n (m = n = k)",
        default_size: 2048,
        quick_size: 512,
        test_size: 47,
        run: gemm::run_f16,
    },
    Program {
        name: "gemm_bf16_wide",
        about: "gemm_bf16 with 4 warps of 64 x 64 (same block tiles)",
        size_means: "n for n x n x n (m = n = k)",
        default_size: 2048,
        quick_size: 512,
        test_size: 40,
        run: gemm::run_bf16_wide,
    },
    Program {
        name: "transpose",
        about: "B = A^T, naive: one thread per element (f32)",
        size_means: "n: the matrix is n x 3n/4",
        default_size: 4096,
        quick_size: 1024,
        test_size: 70,
        run: transpose::run_naive,
    },
    Program {
        name: "transpose_tiled",
        about: "B = A^T through 32 x 33 padded shared-memory tiles (f32)",
        size_means: "n: the matrix is n x 3n/4",
        default_size: 4096,
        quick_size: 1024,
        test_size: 70,
        run: transpose_tiled::run,
    },
    Program {
        name: "mandelbrot",
        about: "Mandelbrot set escape counts, 256 iterations at most (image: target/mandelbrot.png)",
        size_means: "image width in pixels (height = 5/6 of it)",
        default_size: 2048,
        quick_size: 512,
        test_size: 96,
        run: mandelbrot::run,
    },
    Program {
        name: "conv2d",
        about: "3x3 convolutions of a generated image: blur and edge filters (images: target/conv2d_*.png)",
        size_means: "image side in pixels",
        default_size: 4096,
        quick_size: 1024,
        test_size: 45,
        run: conv2d::run,
    },
    Program {
        name: "stencil_2d",
        about: "5-point Jacobi relaxation, 20 iterations, ping-pong buffers (f32)",
        size_means: "grid side n (n x n points)",
        default_size: 4096,
        quick_size: 1024,
        test_size: 40,
        run: stencil_2d::run,
    },
    Program {
        name: "bitonic_sort",
        about: "bitonic sort of u32 keys, one launch per compare-exchange step",
        size_means: "keys (rounded up to a power of two)",
        default_size: 1 << 22,
        quick_size: 1 << 18,
        test_size: 1000,
        run: bitonic_sort::run,
    },
    Program {
        name: "radix_sort",
        about: "stable LSD radix sort of u32 keys, 4 bits per pass (histograms with atomics, scan, scatter)",
        size_means: "keys",
        default_size: 1 << 22,
        quick_size: 1 << 18,
        test_size: 3000,
        run: radix_sort::run,
    },
    Program {
        name: "nbody",
        about: "one all-pairs gravity step with softening over #[derive(Record)] bodies (20 flops per interaction)",
        size_means: "bodies",
        default_size: 1 << 15,
        quick_size: 4096,
        test_size: 300,
        run: nbody::run,
    },
    Program {
        name: "soa_aos",
        about: "a record update through an array-of-structures Buffer and a structure-of-arrays SoaBuffer (SoA on CUDA/PTX only)",
        size_means: "particles (32-byte records)",
        default_size: 1 << 21,
        quick_size: 1 << 18,
        test_size: 5000,
        run: soa_aos::run,
    },
];

/// The program called `name`, if registered.
pub fn find(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}

// ================================================================ inputs

/// SplitMix64: a tiny seeded generator, so inputs are the same on every run and machine.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `0..bound` (`bound > 0`; the slight modulo bias does not matter here).
    pub fn below(&mut self, bound: u32) -> u32 {
        (self.next_u64() % bound as u64) as u32
    }

    /// Uniform in `[lo, hi)` with 24 random bits.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u32 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// `n` floats uniform in `[lo, hi)`.
    pub fn f32s(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32_in(lo, hi)).collect()
    }

    /// `n` random `u32`s.
    pub fn u32s(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.next_u32()).collect()
    }

    /// A uniformly random permutation of `0..n` (Fisher–Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<u32> {
        let mut p: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            p.swap(i, j);
        }
        p
    }
}

// ================================================================ launching and timing

/// Blocks of `block` threads needed to cover `n` threads (at least one).
pub fn blocks_for(n: usize, block: u32) -> u32 {
    (n.div_ceil(block as usize).max(1)).min(u32::MAX as usize) as u32
}

/// Vectors per thread of the `F32x4` streaming programs: their grid covers a quarter of the
/// vectors and a grid-stride loop takes each thread over four (more bytes in flight per thread
/// than one each).
pub const VECTORS_PER_THREAD: usize = 4;

/// `v` as `F32x4` vectors on `dev`, padded with zero lanes to a multiple of 4, and the launch
/// of the `F32x4` streaming programs over them (blocks of 256 threads, [`VECTORS_PER_THREAD`]
/// vectors a thread).
///
/// # Errors
/// What uploading returns.
pub fn upload_vec4(dev: &Device, v: &[f32]) -> spoc::Result<(Buffer<F32x4>, Dims, Dims)> {
    let n4 = v.len().div_ceil(4);
    let mut padded = v.to_vec();
    padded.resize(n4 * 4, 0.0);
    let buf = dev.upload(&F32x4::from_slice(&padded))?;
    let grid = dims1d(blocks_for(n4.div_ceil(VECTORS_PER_THREAD), 256));
    Ok((buf, grid, dims1d(256)))
}

/// The first `n` lanes of a buffer of `F32x4`s.
///
/// # Errors
/// What downloading returns.
pub fn lanes_of(b: &Buffer<F32x4>, n: usize) -> spoc::Result<Vec<f32>> {
    let mut v = F32x4::flatten(&b.to_vec()?);
    v.truncate(n);
    Ok(v)
}

/// Timed passes run back to back until they take about this long (at most [`MAX_REPS`]).
pub const TIMED_SECONDS: f64 = 0.05;
/// Most passes in one timed group.
pub const MAX_REPS: usize = 100;
/// Timed groups; the median group is reported.
pub const GROUPS: usize = 3;

/// Seconds one `pass` (its launches) takes on `dev`, for a pass that gives the same result
/// however often it runs (it does not read what it writes).
///
/// One pass is timed alone (a host clock between two [`Device::synchronize`]s); a pass shorter
/// than 50 ms is then run back to back in [`GROUPS`] groups of as many passes as fill about
/// 50 ms (at most [`MAX_REPS`]), each group between two synchronisations, and the median
/// group's time per pass is returned. Back-to-back passes hide the host's launch and
/// synchronisation latency as CUDA-event timings do (the peers' method, `benches/peers`).
/// The caller runs one untimed pass first (compilation).
///
/// # Errors
/// The first error of `pass` or of a synchronisation.
pub fn time_it(dev: &Device, mut pass: impl FnMut() -> spoc::Result<()>) -> spoc::Result<f64> {
    let one = timed(dev, 1, &mut pass)?;
    if one >= TIMED_SECONDS {
        return Ok(one);
    }
    let reps = ((TIMED_SECONDS / one.max(1e-7)) as usize).clamp(1, MAX_REPS);
    let mut per_pass = (0..GROUPS)
        .map(|_| Ok(timed(dev, reps, &mut pass)? / reps as f64))
        .collect::<spoc::Result<Vec<f64>>>()?;
    per_pass.sort_by(f64::total_cmp);
    Ok(per_pass[GROUPS / 2])
}

/// Seconds one `pass` takes on `dev`, timed once (a host clock between two
/// [`Device::synchronize`]s): for a pass whose time depends on its input, such as a sort (a
/// second pass would sort sorted keys), and long enough (milliseconds) that the host's launch
/// and synchronisation latency do not matter. A pass that changes its input but whose time
/// does not depend on it (`y = a x + y`) is better timed by [`time_it`], then its input reset
/// and one more pass run untimed.
///
/// # Errors
/// The first error of `pass` or of a synchronisation.
pub fn time_once(dev: &Device, mut pass: impl FnMut() -> spoc::Result<()>) -> spoc::Result<f64> {
    timed(dev, 1, &mut pass)
}

/// Seconds `reps` passes take together, between two synchronisations of `dev`.
fn timed(
    dev: &Device,
    reps: usize,
    pass: &mut impl FnMut() -> spoc::Result<()>,
) -> spoc::Result<f64> {
    dev.synchronize()?;
    let t0 = Instant::now();
    for _ in 0..reps {
        pass()?;
    }
    dev.synchronize()?;
    Ok(t0.elapsed().as_secs_f64())
}

// ================================================================ checking

/// The mismatch of an output of `got` `unit` (elements, bodies, …) where `want` were expected;
/// `None` if the counts agree.
pub fn length_mismatch(
    output: &str,
    got: usize,
    want: usize,
    unit: &str,
    tolerance: &str,
) -> Option<Mismatch> {
    (got != want).then(|| Mismatch {
        output: output.into(),
        index: got.min(want),
        got: format!("{got} {unit}"),
        want: format!("{want} {unit}"),
        count: got.abs_diff(want),
        tolerance: tolerance.into(),
    })
}

fn summarize<T: fmt::Debug>(
    output: &str,
    got: &[T],
    want: &[T],
    ok: impl Fn(usize) -> bool,
    tolerance: String,
) -> Option<Mismatch> {
    if let Some(m) = length_mismatch(output, got.len(), want.len(), "elements", &tolerance) {
        return Some(m);
    }
    let mut bad = (0..got.len()).filter(|&i| !ok(i));
    let first = bad.next()?;
    Some(Mismatch {
        output: output.into(),
        index: first,
        got: format!("{:?}", got[first]),
        want: format!("{:?}", want[first]),
        count: 1 + bad.count(),
        tolerance,
    })
}

/// [`check_exact`] of the output `keys` of a sort: `got` against `input` sorted.
pub fn check_sorted(got: &[u32], mut input: Vec<u32>) -> Option<Mismatch> {
    input.sort_unstable();
    check_exact("keys", got, &input)
}

/// Element-wise equality (`==`: exact for integers; for floats the same bits up to the sign of
/// zero).
pub fn check_exact<T: PartialEq + fmt::Debug>(
    output: &str,
    got: &[T],
    want: &[T],
) -> Option<Mismatch> {
    summarize(output, got, want, |i| got[i] == want[i], "exact".into())
}

/// `|got - want| <= rel * scale[i] + abs` per element, where `scale[i]` bounds the magnitude of
/// the terms that were summed into element `i` (e.g. `sum |x_k y_k|` for a dot product), so the
/// tolerance is on the rounding error of a sum in another order.
pub fn check_close(
    output: &str,
    got: &[f32],
    want: &[f64],
    scale: &[f64],
    rel: f64,
    abs: f64,
) -> Option<Mismatch> {
    let wantf: Vec<f64> = want.to_vec();
    let gotd: Vec<f64> = got.iter().map(|&g| g as f64).collect();
    summarize(
        output,
        &gotd,
        &wantf,
        |i| {
            let (g, w) = (gotd[i], wantf[i]);
            (g - w).abs() <= rel * scale[i] + abs
        },
        format!("|got - want| <= {rel:e} * sum|terms| + {abs:e}"),
    )
}

// ================================================================ pictures

/// Maps `t` in `[0, 1]` to a blue–white–orange palette.
pub fn palette(t: f32) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    let ramp = |a: f32, b: f32, s: f32| (a + (b - a) * s).round() as u8;
    if t < 0.5 {
        let s = t * 2.0;
        [
            ramp(0.0, 255.0, s),
            ramp(7.0, 255.0, s),
            ramp(100.0, 255.0, s),
        ]
    } else {
        let s = (t - 0.5) * 2.0;
        [
            ramp(255.0, 200.0, s),
            ramp(255.0, 80.0, s),
            ramp(255.0, 0.0, s),
        ]
    }
}

/// A grey-scale picture of `values` (row-major, `width * height`), `lo` black and `hi` white.
pub fn grey_image(
    file: &'static str,
    width: usize,
    height: usize,
    values: &[f32],
    lo: f32,
    hi: f32,
) -> Image {
    let span = (hi - lo).max(f32::MIN_POSITIVE);
    let rgb = values
        .iter()
        .flat_map(|&v| {
            let g = (((v - lo) / span).clamp(0.0, 1.0) * 255.0).round() as u8;
            [g, g, g]
        })
        .collect();
    Image {
        file,
        width: width as u32,
        height: height as u32,
        rgb,
    }
}

/// Writes `image` as `dir/<file>.png`, creating `dir`; returns the path.
///
/// # Errors
/// I/O and PNG encoding errors.
pub fn write_png(
    dir: &std::path::Path,
    image: &Image,
) -> Result<std::path::PathBuf, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{}.png", image.file));
    let file = std::fs::File::create(&path)?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), image.width, image.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header()?;
    writer.write_image_data(&image.rgb)?;
    writer.finish()?;
    Ok(path)
}

// ================================================================ command line

/// The options every program example takes.
#[derive(clap::Parser, Debug)]
pub struct Cli {
    /// Backend (or backend family) to run on, e.g. `Native`, `Interpreter`, `OpenCL`, `Vulkan`,
    /// `CUDA`; default: `SPOC_DEVICE`, else the best device present.
    #[arg(long)]
    pub device: Option<String>,
    /// Problem size (what it counts depends on the program; default: its realistic size).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<usize>,
}

/// Parses a size, allowing `_` separators; refuses 0.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let n: usize = s
        .replace('_', "")
        .parse()
        .map_err(|e| format!("bad size `{s}`: {e}"))?;
    if n == 0 {
        return Err("the size must be at least 1".into());
    }
    Ok(n)
}

/// The device named `name` (a backend or family), else the one `SPOC_DEVICE` names, else the
/// best present: [`spoc::init_device`], which reads `SPOC_DEVICE` itself.
///
/// # Errors
/// As [`spoc::init_device`].
pub fn pick_device(name: Option<&str>) -> spoc::Result<Device> {
    spoc::init_device(name)
}

/// Refuses a problem whose device buffers cannot fit `dev`, before any input is made: `buffers`
/// lists each buffer as (elements, bytes per element). A size the device cannot take is then an
/// [`spoc::Error::BufferTooLarge`] at once, not a host that fills gigabytes of input first.
///
/// # Errors
/// As [`spoc::Device::check_buffers`]; sizes that overflow count as too large.
pub fn need(dev: &Device, buffers: &[(usize, usize)]) -> spoc::Result<()> {
    let bytes: Vec<u64> = buffers
        .iter()
        .map(|&(n, elem)| (n as u64).saturating_mul(elem as u64))
        .collect();
    dev.check_buffers(&bytes)
}

/// Formats a byte or flop throughput line.
pub fn describe(o: &Outcome) -> String {
    let (rate, unit) = o.throughput();
    format!(
        "{} ({}): {:.3} ms, {rate:.2} {unit}",
        o.name,
        o.shape,
        o.seconds * 1e3
    )
}

/// The whole `main` of a program's example: parses [`Cli`], runs the program, prints the device,
/// time, throughput and `ok`, writes its pictures under `target/`; on an error or a mismatch
/// prints it and exits with status 1.
pub fn example_main(name: &str) {
    if let Err(e) = example(name) {
        eprintln!("{name}: {e}");
        std::process::exit(1);
    }
}

fn example(name: &str) -> Result<(), Box<dyn std::error::Error>> {
    use clap::{CommandFactory, FromArgMatches};
    let program = find(name).ok_or_else(|| format!("no program named `{name}`"))?;
    let size_help = format!(
        "Problem size: {} (default {})",
        program.size_means, program.default_size
    );
    let matches = Cli::command()
        .name(program.name)
        .about(program.about)
        .mut_arg("size", |a| a.help(size_help))
        .get_matches();
    let cli = Cli::from_arg_matches(&matches)?;
    let dev = pick_device(cli.device.as_deref())?;
    println!(
        "device: {} [{}], global id {}",
        dev.name, dev.framework, dev.id
    );
    let size = cli.size.unwrap_or(program.default_size);
    let outcome = (program.run)(&dev, size)?;
    println!("{}", describe(&outcome));
    for n in &outcome.notes {
        println!("  {n}");
    }
    for image in &outcome.images {
        let path = write_png(std::path::Path::new("target"), image)?;
        println!("wrote {}", path.display());
    }
    match &outcome.mismatch {
        None => {
            println!("ok: the result matches the host reference");
            Ok(())
        }
        Some(m) => Err(m.to_string().into()),
    }
}
