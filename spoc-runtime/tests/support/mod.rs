//! Hand-built kernels (IR + native code, as `#[kernel]` would generate them) and a JIT test
//! backend with two devices, for the runtime's integration tests.
#![allow(dead_code)]

use spoc_ir::{Axis, Expr, Intrinsic, Kernel, StmtKind, Type};
use spoc_runtime::backend::{Code, DeviceInfo, ExecutionModel, Module, Source, Target};
use spoc_runtime::cache::ModuleCache;
use spoc_runtime::native::abi::{
    GlobalMut, GlobalRef, NativeArg, NativeFn, NativeLaunch, ThreadTrap, Trap,
};
use spoc_runtime::{
    Arg, Capabilities, CompileOptions, Compiler, DeviceMemory, Executor, IntrinsicRegistry,
    KernelDef, Platform,
};
use spoc_testkit::ir::*;
use spoc_testkit::ir_accessor;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, OnceLock};

// ------------------------------------------------------------------ IR kernels

/// `saxpy(a: f32, x: &[f32], y: &mut [f32])`: `y[i] = a * x[i] + y[i]`.
pub use spoc_testkit::ir::saxpy as saxpy_kernel;

/// `let i = global_id_x(); if i < buf.len() { <then> }`.
fn guarded(b: &mut B, i: &Expr, buf: &Expr, then: Vec<StmtKind>) {
    b.let_(i, gid());
    b.push(if_(lt(i.clone(), len(buf)), then, None));
}

/// `iota(base: u32, out: &mut [u32])`: `out[i] = base + i`; unguarded if `checked` is false
/// (a grid larger than the buffer then faults).
pub fn iota_kernel(name: &str, checked: bool) -> Kernel {
    let mut b = B::new();
    let base = b.param("base", Type::U32, false);
    let out = b.buf_mut("out", Type::U32);
    let i = b.local("i", Type::U32, false);
    let st = assign(at(&out, i.clone()), add(base, i.clone()));
    if checked {
        guarded(&mut b, &i, &out, vec![st]);
    } else {
        b.let_(&i, gid());
        b.push(st);
    }
    b.kernel(name)
}

/// `flags(f: &[bool])`: does nothing (for buffer-length checks).
pub fn flags_kernel() -> Kernel {
    let mut b = B::new();
    b.buf("f", Type::BOOL);
    b.kernel("flags")
}

/// `with_barrier(out: &mut [f32])`: `sync_threads()` then nothing.
pub fn barrier_kernel() -> Kernel {
    let mut b = B::new();
    b.buf_mut("out", Type::F32);
    b.push(StmtKind::Barrier);
    b.kernel("with_barrier")
}

/// A kernel taking one `i64` scalar and a `&[i64]` (for type-mismatch tests).
pub fn takes_i64_kernel() -> Kernel {
    let mut b = B::new();
    b.param("v", Type::I64, false);
    b.buf("xs", Type::I64);
    b.push(StmtKind::Expr(i32c(0)));
    b.kernel("takes_i64")
}

/// `block_dim_x()`.
fn block_dim() -> Expr {
    intr(Intrinsic::BlockDim(Axis::X), vec![], Type::U32)
}

/// `(out: &mut [u32], lens: &mut [u32])` with `sh: [u32]` sized at launch: `sh[t] = g;
/// barrier; out[g] = sh[from(t)]; lens[g] = sh.len()`, `t` the thread, `g` the global index.
fn through_dynamic_shared(name: &str, from: fn(Expr) -> Expr) -> Kernel {
    let mut b = B::new();
    let out = b.buf_mut("out", Type::U32);
    let lens = b.buf_mut("lens", Type::U32);
    let sh = b.shared("sh", Type::U32, None);
    let t = b.local("t", Type::U32, false);
    let g = b.local("g", Type::U32, false);
    b.let_(&t, tid());
    b.let_(&g, gid());
    b.push(assign(at(&sh, t.clone()), g.clone()));
    b.push(StmtKind::Barrier);
    b.push(assign(at(&out, g.clone()), idx(&sh, from(t))));
    b.push(assign(at(&lens, g), len(&sh)));
    b.kernel(name)
}

/// `dyn_reverse`: [`through_dynamic_shared`] with `sh[block_dim_x() - 1 - t]`.
pub fn dyn_reverse_kernel() -> Kernel {
    through_dynamic_shared("dyn_reverse", |t| sub(sub(block_dim(), u32c(1)), t))
}

/// `dyn_rotate`: [`through_dynamic_shared`] with `sh[(t + 1) % block_dim_x()]`.
pub fn dyn_rotate_kernel() -> Kernel {
    through_dynamic_shared("dyn_rotate", |t| rem(add(t, u32c(1)), block_dim()))
}

/// `ballots(out: &mut [u32]) { out[global_id_x()] = ballot(true); }`
pub fn ballots_kernel() -> Kernel {
    let mut b = B::new();
    let out = b.buf_mut("out", Type::U32);
    let ballot = intr(Intrinsic::Ballot, vec![boolc(true)], Type::U32);
    b.push(assign(at(&out, gid()), ballot));
    b.kernel("ballots")
}

ir_accessor!(saxpy_ir, saxpy_kernel());
ir_accessor!(iota_ir, iota_kernel("iota", true));
ir_accessor!(iota_unchecked_ir, iota_kernel("iota_unchecked", false));
ir_accessor!(flags_ir, flags_kernel());
ir_accessor!(barrier_ir, barrier_kernel());
ir_accessor!(takes_i64_ir, takes_i64_kernel());
ir_accessor!(dyn_reverse_ir, dyn_reverse_kernel());
ir_accessor!(dyn_rotate_ir, dyn_rotate_kernel());
ir_accessor!(ballots_ir, ballots_kernel());

// ------------------------------------------------------------------ native code

fn unpack_fault(trap: Trap) -> ThreadTrap {
    ThreadTrap {
        block: [0; 3],
        thread: [0; 3],
        trap,
    }
}

fn arg<'a>(args: &'a [NativeArg], i: usize, name: &'static str) -> Result<&'a NativeArg, Trap> {
    args.get(i).ok_or(Trap::BadArgument {
        param: name,
        expected: "an argument",
    })
}

pub fn saxpy_native(launch: &NativeLaunch, args: &[NativeArg]) -> Result<(), ThreadTrap> {
    let unpack = || -> Result<_, Trap> {
        let a: f32 = arg(args, 0, "a")?.scalar("a")?;
        let x = GlobalRef::<f32>::from_arg(arg(args, 1, "x")?, "x")?;
        let y = GlobalMut::<f32>::from_arg(arg(args, 2, "y")?, "y")?;
        Ok((a, x, y))
    };
    let (a, x, y) = unpack().map_err(unpack_fault)?;
    launch.run(|ctx| {
        let i = ctx.global_id(0);
        if i < y.len() {
            y.store(i, a * x.load(i)? + y.load(i)?)?;
        }
        Ok(())
    })
}

fn iota_impl(launch: &NativeLaunch, args: &[NativeArg], checked: bool) -> Result<(), ThreadTrap> {
    let unpack = || -> Result<_, Trap> {
        let base: u32 = arg(args, 0, "base")?.scalar("base")?;
        let out = GlobalMut::<u32>::from_arg(arg(args, 1, "out")?, "out")?;
        Ok((base, out))
    };
    let (base, out) = unpack().map_err(unpack_fault)?;
    launch.run(|ctx| {
        let i = ctx.global_id(0);
        if !checked || i < out.len() {
            out.store(i, base.wrapping_add(i))?;
        }
        Ok(())
    })
}

pub fn iota_native(launch: &NativeLaunch, args: &[NativeArg]) -> Result<(), ThreadTrap> {
    iota_impl(launch, args, true)
}

pub fn iota_unchecked_native(launch: &NativeLaunch, args: &[NativeArg]) -> Result<(), ThreadTrap> {
    iota_impl(launch, args, false)
}

pub fn nothing_native(_: &NativeLaunch, _: &[NativeArg]) -> Result<(), ThreadTrap> {
    Ok(())
}

/// Runs `entry` of `source` (in `lang`) on `dev` through its backend's `run_source`, over
/// `grid` blocks of `block`, without dynamic shared memory.
pub fn run_source(
    dev: &spoc_runtime::Device,
    (source, lang, entry): (&str, spoc_runtime::SourceLang, &str),
    grid: spoc_runtime::Dims,
    block: spoc_runtime::Dims,
    args: &[Arg<'_>],
) -> spoc_runtime::Result<()> {
    dev.backend()
        .run_source(dev.backend_id, source, lang, entry, grid, block, 0, args)
}

/// The arguments of an external saxpy, `y = a * x + y`: `(a, x, y)`.
pub fn saxpy_args<'a>(
    a: f32,
    x: &'a spoc_runtime::Buffer<f32>,
    y: &'a mut spoc_runtime::Buffer<f32>,
) -> [Arg<'a>; 3] {
    [
        Arg::F32(a),
        Arg::Buffer(x.raw()),
        Arg::BufferMut(y.raw_mut()),
    ]
}

/// A hand-written [`KernelDef`], as `#[kernel]` would generate it.
const fn def(
    name: &'static str,
    ir: fn() -> Result<&'static spoc_ir::ValidKernel, spoc_ir::IrError>,
    native: Option<NativeFn>,
) -> KernelDef {
    KernelDef { name, ir, native }
}

pub static SAXPY: KernelDef = def("saxpy", saxpy_ir, Some(saxpy_native));
pub static IOTA: KernelDef = def("iota", iota_ir, Some(iota_native));
pub static IOTA_UNCHECKED: KernelDef = def(
    "iota_unchecked",
    iota_unchecked_ir,
    Some(iota_unchecked_native),
);
pub static FLAGS: KernelDef = def("flags", flags_ir, Some(nothing_native));
/// Shared memory sized at launch, reversed in each block (IR only).
pub static DYN_REVERSE: KernelDef = def("dyn_reverse", dyn_reverse_ir, None);
/// Shared memory sized at launch, rotated by one in each block (IR only).
pub static DYN_ROTATE: KernelDef = def("dyn_rotate", dyn_rotate_ir, None);
/// A warp ballot (IR only).
pub static BALLOTS: KernelDef = def("ballots", ballots_ir, None);
/// Uses a barrier: no native code, as `#[kernel]` would generate it.
pub static WITH_BARRIER: KernelDef = def("with_barrier", barrier_ir, None);
pub static TAKES_I64: KernelDef = def("takes_i64", takes_i64_ir, Some(nothing_native));

/// Every kernel with native code, by name.
pub fn native_table() -> HashMap<&'static str, NativeFn> {
    [&SAXPY, &IOTA, &IOTA_UNCHECKED, &FLAGS, &TAKES_I64]
        .into_iter()
        .map(|d| (d.name, d.native.unwrap()))
        .collect()
}

// ------------------------------------------------------------------ a JIT test backend

/// What the test backend's `compile` produces.
#[derive(Debug)]
pub struct TestModule {
    pub kernel: String,
    pub device: usize,
    pub hash_text: String,
    /// The n-th compile of the backend.
    pub serial: usize,
}

/// Two rendezvous points a compile stops at, so a test can act while a build is in flight.
pub struct Gate {
    pub entered: Barrier,
    pub release: Barrier,
}

impl Gate {
    pub fn new() -> Arc<Gate> {
        Arc::new(Gate {
            entered: Barrier::new(2),
            release: Barrier::new(2),
        })
    }
}

/// A JIT backend over host memory with `devices` devices: "generates source" (a comment naming
/// the kernel), "compiles" it into a [`TestModule`] (counting compiles), and launches by running
/// the kernel's native code.
pub struct TestBackend {
    pub name: &'static str,
    pub devices: usize,
    pub caps: Capabilities,
    pub cache: ModuleCache,
    pub compiles: AtomicUsize,
    pub launches: AtomicUsize,
    /// What `is_available` answers.
    pub available: AtomicBool,
    /// Microseconds each compile sleeps (to widen race windows).
    pub compile_delay_us: AtomicU64,
    /// If armed, the next compile waits at the gate.
    pub gate: Mutex<Option<Arc<Gate>>>,
    intrinsics: IntrinsicRegistry,
    table: HashMap<&'static str, NativeFn>,
}

impl TestBackend {
    pub fn new(name: &'static str, devices: usize) -> TestBackend {
        TestBackend {
            name,
            devices,
            caps: Capabilities::cpu(1, 0),
            cache: ModuleCache::new(),
            compiles: AtomicUsize::new(0),
            launches: AtomicUsize::new(0),
            available: AtomicBool::new(true),
            compile_delay_us: AtomicU64::new(0),
            gate: Mutex::new(None),
            intrinsics: IntrinsicRegistry::all(),
            table: native_table(),
        }
    }

    pub fn with_caps(mut self, caps: Capabilities) -> TestBackend {
        self.caps = caps;
        self
    }

    /// Makes the next compile stop at `gate`.
    pub fn arm(&self, gate: Arc<Gate>) {
        *self.gate.lock().unwrap() = Some(gate);
    }
}

impl Platform for TestBackend {
    fn name(&self) -> &'static str {
        self.name
    }

    fn version(&self) -> (u32, u32, u32) {
        (0, 0, 1)
    }

    fn is_available(&self) -> bool {
        self.available.load(Ordering::SeqCst)
    }

    fn execution_model(&self) -> ExecutionModel {
        ExecutionModel::Jit
    }

    fn devices(&self) -> spoc_runtime::Result<Vec<DeviceInfo>> {
        Ok((0..self.devices)
            .map(|i| DeviceInfo {
                local_id: i,
                name: format!("{} device {i}", self.name),
                capabilities: self.caps,
            })
            .collect())
    }

    fn intrinsics(&self) -> &IntrinsicRegistry {
        &self.intrinsics
    }
}

impl DeviceMemory for TestBackend {
    spoc_runtime::host_memory_methods!();
}

impl Compiler for TestBackend {
    fn generate(
        &self,
        kernel: &spoc_ir::ValidKernel,
        _caps: &spoc_codegen::Capabilities,
        _options: &CompileOptions,
    ) -> spoc_runtime::Result<Option<Source>> {
        Ok(Some(Source {
            target: Target::CudaC,
            code: Code::Text(format!("// kernel {}", kernel.name)),
            entry: kernel.name.clone(),
            abi: Default::default(),
        }))
    }

    fn compile(
        &self,
        device: usize,
        kernel: &spoc_ir::ValidKernel,
        _source: &Source,
        _options: &CompileOptions,
    ) -> spoc_runtime::Result<Module> {
        let gate = self.gate.lock().unwrap().take();
        if let Some(g) = gate {
            g.entered.wait();
            g.release.wait();
        }
        let delay = self.compile_delay_us.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(std::time::Duration::from_micros(delay));
        }
        let serial = self.compiles.fetch_add(1, Ordering::SeqCst);
        Ok(Module::new(
            device,
            Box::new(TestModule {
                kernel: kernel.name.clone(),
                device,
                hash_text: kernel.content_hash().to_string(),
                serial,
            }),
        ))
    }

    fn module_cache(&self) -> Option<&ModuleCache> {
        Some(&self.cache)
    }
}

impl Executor for TestBackend {
    fn launch(
        &self,
        module: &Module,
        config: &spoc_runtime::LaunchConfig<'_>,
        args: &[Arg<'_>],
    ) -> spoc_runtime::Result<()> {
        let (grid, block) = (config.grid, config.block);
        self.launches.fetch_add(1, Ordering::SeqCst);
        let m = module.handle::<TestModule>().expect("a test module");
        let f = self.table[m.kernel.as_str()];
        let native_args = spoc_runtime::host::native_args(self.name, args)?;
        let launch = NativeLaunch {
            grid: grid.to_array(),
            block: block.to_array(),
            shared_bytes: 0,
            simt: false,
        };
        f(&launch, &native_args).map_err(|t| spoc_runtime::native::fault(&m.kernel, t))
    }
}

/// Registers the backend `make` builds under `name` (once per process per name) and returns it.
pub fn register(
    name: &'static str,
    priority: i32,
    make: impl FnOnce() -> TestBackend,
) -> Arc<TestBackend> {
    static REGISTERED: OnceLock<Mutex<HashMap<&'static str, Arc<TestBackend>>>> = OnceLock::new();
    let mut reg = REGISTERED.get_or_init(Default::default).lock().unwrap();
    reg.entry(name)
        .or_insert_with(|| {
            let b = Arc::new(make());
            spoc_runtime::register_backend(b.clone(), priority).unwrap();
            b
        })
        .clone()
}

/// Registers a [`TestBackend`] of `devices` CPU-like devices (once per process per name) and
/// returns it with its devices.
pub fn test_backend(
    name: &'static str,
    devices: usize,
    priority: i32,
) -> (Arc<TestBackend>, Vec<spoc_runtime::Device>) {
    let b = register(name, priority, || TestBackend::new(name, devices));
    let devs = spoc_runtime::all_devices(Some(name)).unwrap();
    (b, devs)
}

/// `k`, validated (a test kernel that does not validate is a bug in the test).
#[allow(dead_code)]
pub fn valid(k: Kernel) -> spoc_ir::ValidKernel {
    spoc_ir::ValidKernel::new(k).expect("the test kernel validates")
}

/// The source that `backend` generates for [`saxpy_kernel`] with blocks of 64 threads and
/// without a device, asserted to be text for `target`; `what` (`"MSL"`, …) names the language
/// in the messages.
pub fn saxpy_source_text(backend: &dyn Compiler, target: Target, what: &str) -> (Source, String) {
    let src = backend
        .generate_source(&valid(saxpy_kernel()), Some(spoc_runtime::dims1d(64)), &[])
        .unwrap_or_else(|e| panic!("{what} generation: {e}"))
        .unwrap_or_else(|| panic!("{what} generation: no source"));
    assert_eq!(src.target, target);
    let text = src
        .text()
        .unwrap_or_else(|| panic!("{what} is text"))
        .to_string();
    (src, text)
}

/// Batched submission (the Vulkan backend records launches and submits them later): many
/// dependent launches, each with its own scalar argument, then one download give the
/// sequential result; a host upload between two queued launches is seen by the second; a
/// buffer dropped right after the launches that read it is not freed under them. Unchecked
/// kernels (checked ones wait for their fault record at once).
pub fn batched_launches_keep_order_arguments_and_buffers(dev: &spoc_runtime::Device) {
    use spoc_runtime::{compile_kernel_with, dims1d, run_kernel, set_args};
    let n = 1000;
    let saxpy = compile_kernel_with(
        dev,
        &SAXPY,
        CompileOptions {
            checked: Some(false),
            block: Some(dims1d(128)),
            ..CompileOptions::default()
        },
    )
    .unwrap();
    let same = |got: Vec<f32>, want: &[f32], what: &str| {
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            panic!("{what}: element {i} is {}, expected {}", got[i], want[i]);
        }
    };
    let launch = |args: Vec<Arg<'_>>| {
        let mut args = set_args(dev, args).unwrap();
        run_kernel(&saxpy, &mut args, dims1d(8), dims1d(128), 0).unwrap();
    };

    // 600 launches (several batches, the ring reused): y += a_k x; x -= y. Exact integers.
    let x0: Vec<f32> = (0..n).map(|i| (i % 8) as f32).collect();
    let mut x = dev.upload(&x0).unwrap();
    let mut y = dev.alloc::<f32>(n).unwrap();
    let (mut hx, mut hy) = (x0.clone(), vec![0.0f32; n]);
    for k in 0..300 {
        let a = if k % 3 == 0 { 2.0 } else { 1.0 };
        launch(vec![Arg::F32(a), (&x).into(), (&mut y).into()]);
        launch(vec![Arg::F32(-1.0), (&y).into(), (&mut x).into()]);
        for i in 0..n {
            hy[i] += a * hx[i];
            hx[i] -= hy[i];
        }
    }
    same(y.to_vec().unwrap(), &hy, "y after 600 queued launches");
    same(x.to_vec().unwrap(), &hx, "x after 600 queued launches");

    // A host upload between two queued launches.
    let ones = vec![1.0f32; n];
    let mut src = dev.upload(&ones).unwrap();
    let mut acc = dev.alloc::<f32>(n).unwrap();
    launch(vec![Arg::F32(1.0), (&src).into(), (&mut acc).into()]);
    src.upload_from(&vec![10.0f32; n]).unwrap();
    launch(vec![Arg::F32(1.0), (&src).into(), (&mut acc).into()]);
    same(
        acc.to_vec().unwrap(),
        &[11.0; 1000],
        "upload between launches",
    );

    // A buffer dropped right after 50 queued launches that read it (40 MiB: freed memory that
    // large goes back to the system, so a read after the free faults); new allocations may
    // take its memory.
    let t = dev.upload(&vec![2.0f32; 10 << 20]).unwrap();
    let mut out = dev.alloc::<f32>(n).unwrap();
    for _ in 0..50 {
        launch(vec![Arg::F32(1.0), (&t).into(), (&mut out).into()]);
    }
    drop(t);
    let reuse: Vec<_> = (0..4)
        .map(|_| dev.upload(&vec![-1.0e6f32; n]).unwrap())
        .collect();
    same(out.to_vec().unwrap(), &[100.0; 1000], "dropped input");
    drop(reuse);

    // A device-to-device copy between queued launches, and synchronize.
    let mut c = dev.alloc::<f32>(n).unwrap();
    launch(vec![Arg::F32(1.0), (&out).into(), (&mut c).into()]);
    out.copy_from(&c).unwrap();
    launch(vec![Arg::F32(1.0), (&c).into(), (&mut out).into()]);
    dev.synchronize().unwrap();
    same(
        out.to_vec().unwrap(),
        &[200.0; 1000],
        "copy between launches",
    );

    // Four threads launching into one device's batches at once, each on its own buffers.
    std::thread::scope(|scope| {
        for t in 0..4u8 {
            let (launch, same) = (&launch, &same);
            scope.spawn(move || {
                let x = dev.upload(&vec![f32::from(t) + 1.0; n]).unwrap();
                let mut y = dev.alloc::<f32>(n).unwrap();
                for _ in 0..200 {
                    launch(vec![Arg::F32(0.5), (&x).into(), (&mut y).into()]);
                }
                let want = vec![100.0 * (f32::from(t) + 1.0); n];
                same(y.to_vec().unwrap(), &want, "threads");
            });
        }
    });
}
