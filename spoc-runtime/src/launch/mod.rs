//! Compiling (through the outer memo) and launching kernels.

pub(crate) mod check_mode;
pub mod generic;
pub(crate) mod launch_checks;

use crate::args::{Arg, KernelArgs};
use crate::backend::{CompileOptions, ExecutionModel, LaunchConfig, Module};
use crate::buffer::RawBuffer;
use crate::cache::{CacheKey, GuardedCache};
use crate::device::Device;
use crate::dims::Dims;
use crate::error::{Error, LaunchProblem, Result};
use crate::executor::Backend;
use crate::ir_scan;
use crate::kernel_def::KernelDef;
use crate::launch_checks::{args_accepted, check_args, check_dims, param_checks, ParamCheck};
use crate::memory::graph::{GraphOp, Held};
use crate::memory::stream::{Access, Locked, Stream, Uses};
use crate::registry;
use spoc_ir::{ContentHash, Kernel};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, RwLock};

/// A kernel ready to run on one device: its definition, IR, content hash and, on JIT backends,
/// the compiled module (owned by the backend's cache).
#[derive(Clone)]
pub struct CompiledKernel {
    def: KernelDef,
    kernel: &'static Kernel,
    hash: ContentHash,
    device: Device,
    module: Option<Arc<Module>>,
    static_shared: usize,
    options: CompileOptions,
    /// The argument checks its signature fixes ([`param_checks`]); `None`: every launch takes
    /// the full [`check_args`].
    param_checks: Option<Box<[ParamCheck]>>,
}

impl CompiledKernel {
    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        self.def.name
    }
    /// The kernel's definition.
    pub fn def(&self) -> &KernelDef {
        &self.def
    }
    /// The kernel's IR.
    pub fn kernel(&self) -> &'static Kernel {
        self.kernel
    }
    /// The IR's content hash.
    pub fn hash(&self) -> ContentHash {
        self.hash
    }
    /// The device it was compiled for.
    pub fn device(&self) -> &Device {
        &self.device
    }
    /// The compiled module (JIT backends), or what [`crate::Compiler::prepare`] returned
    /// (Direct and Custom backends).
    pub fn module(&self) -> Option<&Arc<Module>> {
        self.module.as_ref()
    }
    /// The options it was compiled with.
    pub fn options(&self) -> &CompileOptions {
        &self.options
    }
    /// Bytes of shared memory its statically sized shared arrays take per block.
    pub fn static_shared_bytes(&self) -> usize {
        self.static_shared
    }
}

impl fmt::Debug for CompiledKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledKernel")
            .field("name", &self.def.name)
            .field("hash", &self.hash)
            .field("device", &self.device)
            .field("module", &self.module)
            .finish_non_exhaustive()
    }
}

/// The outer memo: keyed by global device id.
/// Created on first use, when it also installs the hooks through which the layers below tell it
/// about teardown ([`crate::cache::MemoHooks`]): before that there is nothing to drop.
static MEMO: LazyLock<GuardedCache<Arc<CompiledKernel>>> = LazyLock::new(|| {
    crate::cache::install_memo_hooks(crate::cache::MemoHooks {
        device_torn_down,
        all_devices_retired: retire_all_devices,
    });
    GuardedCache::new()
});

/// Content hashes by IR address: each kernel's IR is hashed once per process.
#[allow(clippy::type_complexity)]
static HASHES: LazyLock<RwLock<HashMap<usize, ContentHash, foldhash::fast::RandomState>>> =
    LazyLock::new(Default::default);

fn content_hash(kernel: &'static Kernel) -> ContentHash {
    let addr = kernel as *const Kernel as usize;
    if let Some(h) = HASHES.read().unwrap_or_else(|e| e.into_inner()).get(&addr) {
        return *h;
    }
    let h = kernel.content_hash();
    HASHES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(addr, h);
    h
}

fn retire_all_devices() {
    MEMO.teardown_all();
    MEMO_EPOCH.fetch_add(1, Ordering::AcqRel);
}

fn device_torn_down(backend: &str, local: usize) {
    for gid in registry::global_ids(backend, local) {
        MEMO.teardown_device(gid);
    }
    MEMO_EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// Bumped after every change of [`MEMO`] that drops entries (a clear, a device's teardown,
/// the retirement of every device): a thread's [`PLANS`] of an older epoch are dropped
/// before its next lookup. Bumped *after* the memo changed, so that a plan taken from the
/// memo before the change was filed under the older epoch.
static MEMO_EPOCH: AtomicU64 = AtomicU64::new(0);

/// How many launch plans a thread keeps.
const PLAN_SLOTS: usize = 8;

/// What identifies a typed launch's compiled kernel without building a [`CacheKey`]: the
/// function that gives the kernel's IR (its address; the IR it gives lives for the whole
/// process and never changes, so one address names one IR — a function with two addresses
/// only files two plans), its definition's name and native entry, the device (global id) and
/// the block when the backend compiles it into the module. The options are otherwise fixed:
/// no Structure-of-Arrays arguments, checked mode the device's default (fixed for the
/// process). (The IR function, not the IR: a repeat launch need not call it.)
#[derive(Clone, Copy, PartialEq, Eq)]
struct PlanKey {
    ir: usize,
    name: (usize, usize),
    native: usize,
    device: usize,
    block: Option<Dims>,
}

/// A thread's recent launch plans: the compiled kernel (its module's function, its parameter
/// checks) of the last few (kernel, device) pairs launched from this thread, so that a repeat
/// launch takes no lock and hashes nothing.
struct Plans {
    epoch: u64,
    next: usize,
    entries: Vec<(PlanKey, Arc<CompiledKernel>)>,
}

thread_local! {
    static PLANS: RefCell<Plans> = const {
        RefCell::new(Plans {
            epoch: 0,
            next: 0,
            entries: Vec::new(),
        })
    };
}

/// The plan filed under `key` on this thread, and the memo epoch it was looked up in (a plan
/// found in the memo after this call is filed under that epoch by [`remember_plan`]).
fn cached_plan(key: &PlanKey) -> (Option<Arc<CompiledKernel>>, u64) {
    let epoch = MEMO_EPOCH.load(Ordering::Acquire);
    let mut stale = Vec::new();
    let found = PLANS
        .try_with(|p| {
            let mut p = p.try_borrow_mut().ok()?;
            if p.epoch != epoch {
                stale = std::mem::take(&mut p.entries);
                p.epoch = epoch;
                p.next = 0;
            }
            p.entries
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, ck)| ck.clone())
        })
        .ok()
        .flatten();
    // Dropped outside the borrow: a module unloaded here must not find the plans borrowed.
    drop(stale);
    (found, epoch)
}

/// Files `ck` under `key` on this thread, unless the memo changed since `epoch`.
fn remember_plan(key: PlanKey, epoch: u64, ck: &Arc<CompiledKernel>) {
    let mut evicted = None;
    let _ = PLANS.try_with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else {
            return;
        };
        if p.epoch != epoch || MEMO_EPOCH.load(Ordering::Acquire) != epoch {
            return;
        }
        if p.entries.len() < PLAN_SLOTS {
            p.entries.push((key, ck.clone()));
        } else {
            let i = p.next % PLAN_SLOTS;
            p.next = p.next.wrapping_add(1);
            evicted = Some(std::mem::replace(&mut p.entries[i], (key, ck.clone())));
        }
    });
    drop(evicted);
}

/// Number of kernels in the runtime's memo (for tests and diagnostics).
pub fn memo_len() -> usize {
    MEMO.len()
}

/// Drops the runtime's kernel memo and asks every backend to drop its module cache; compiles
/// in flight fail with [`Error::CacheClearedDuringBuild`] (a retry succeeds). Hooks registered
/// with [`crate::cache::on_clear`] run last.
pub fn clear_cache() {
    MEMO.clear();
    MEMO_EPOCH.fetch_add(1, Ordering::AcqRel);
    for (backend, _) in registry::backends() {
        backend.clear_cache();
    }
    crate::cache::run_clear_hooks();
}

/// Compiles `def` for `dev`, or returns the memoized result: the same `Arc` for the same
/// (device, kernel, IR, options) until the memo is dropped.
///
/// # Errors
/// [`Error::DeviceReset`] for a device from before [`Device::reset`]; [`Error::Ir`] for bad
/// embedded IR; [`Error::FeatureNotSupported`] if the backend cannot run the kernel (an
/// intrinsic it lacks, Native without native code); [`Error::Compile`];
/// [`Error::DeviceDestroyedDuringBuild`] / [`Error::CacheClearedDuringBuild`] if the device is
/// torn down or the cache cleared while compiling.
pub fn compile_kernel(dev: &Device, def: &'static KernelDef) -> Result<Arc<CompiledKernel>> {
    compile_with(dev, def, CompileOptions::default())
}

/// [`compile_kernel`] with explicit options.
///
/// # Errors
/// As [`compile_kernel`].
pub fn compile_kernel_with(
    dev: &Device,
    def: &'static KernelDef,
    options: CompileOptions,
) -> Result<Arc<CompiledKernel>> {
    compile_with(dev, def, options)
}

fn compile_with(
    dev: &Device,
    def: &'static KernelDef,
    options: CompileOptions,
) -> Result<Arc<CompiledKernel>> {
    dev.check_current()?;
    let kernel = def.valid()?;
    let hash = content_hash(kernel);
    let options = resolve_checked(dev, def.name, options)?;
    let key = CacheKey {
        device: dev.gid(),
        name: Cow::Borrowed(def.name),
        hash,
        options,
    };
    if let Some(ck) = MEMO.get(&key) {
        return Ok(ck);
    }
    let ticket = MEMO.begin(dev.gid());
    // A reset between the first check and the ticket would go unseen by the ticket.
    dev.check_current()?;
    let ck = build(dev, def, kernel, hash, key.options.clone())?;
    MEMO.finish(ticket, key, ck)
}

/// Settles [`CompileOptions::checked`] before the options key the memo: the device's default
/// ([`crate::checked_mode::default_for`]) when `None` on a backend with checked mode; `None` on
/// the Direct and Custom backends (the CPU backends check every access anyway).
///
/// # Errors
/// [`Error::FeatureNotSupported`] when checked mode is asked of a JIT backend without it;
/// [`Error::InvalidEnvironment`] for a `SPOC_BOUNDS_CHECK` that is neither on nor off.
fn resolve_checked(
    dev: &Device,
    name: &str,
    mut options: CompileOptions,
) -> Result<CompileOptions> {
    let backend = dev.backend();
    if backend.supports_checked_mode() {
        let on = match options.checked {
            Some(on) => on,
            None => crate::checked_mode::default_for(dev.caps())?,
        };
        options.checked = Some(on);
    } else if options.is_checked() && backend.execution_model() == ExecutionModel::Jit {
        return Err(Error::unsupported(
            backend.name(),
            format!("checked mode (bounds and division checks) for kernel `{name}`"),
        ));
    } else {
        options.checked = None;
    }
    Ok(options)
}

fn build(
    dev: &Device,
    def: &'static KernelDef,
    kernel: &'static spoc_ir::ValidKernel,
    hash: ContentHash,
    options: CompileOptions,
) -> Result<Arc<CompiledKernel>> {
    let backend = dev.backend();
    let registry = backend.intrinsics();
    if let Some(missing) = ir_scan::intrinsics(kernel)
        .into_iter()
        .find(|&i| !registry.supports(i))
    {
        return Err(Error::unsupported(
            backend.name(),
            format!("intrinsic `{missing}` (used by kernel `{}`)", def.name),
        ));
    }
    refuse_soa(backend.as_ref(), def.name, &options.soa_params)?;
    backend.check_kernel(def, kernel)?;
    let module = match backend.execution_model() {
        ExecutionModel::Jit => {
            // The one code generation of the build, for this device's capabilities.
            let caps = backend.codegen_caps(Some(dev.local()))?;
            let source =
                backend
                    .generate(kernel, &caps, &options)?
                    .ok_or_else(|| Error::Compile {
                        backend: backend.name().to_string(),
                        kernel: def.name.to_string(),
                        message: "the backend generated no source".into(),
                    })?;
            crate::dump::dump(kernel, hash, backend.name(), Some(&source));
            Some(backend.compile_cached(dev.local(), kernel, hash, &source, &options)?)
        }
        ExecutionModel::Direct | ExecutionModel::Custom => {
            crate::dump::dump(kernel, hash, backend.name(), None);
            backend.prepare(dev.local(), def, kernel)?.map(Arc::new)
        }
    };
    Ok(Arc::new(CompiledKernel {
        def: *def,
        kernel: kernel.kernel(),
        hash,
        device: dev.clone(),
        module,
        static_shared: ir_scan::static_shared_bytes(kernel),
        param_checks: param_checks(kernel.kernel(), &options.soa_params),
        options,
    }))
}

/// Refuses Structure-of-Arrays parameters where code generation does
/// ([`spoc_codegen::abi::refuse_soa`]: every target but CUDA/PTX), for the backend's target
/// (Native or Interpreter for a backend that generates none), naming the backend.
fn refuse_soa(backend: &dyn crate::Backend, kernel: &str, params: &[String]) -> Result<()> {
    let target = backend
        .codegen_target()
        .unwrap_or(match backend.execution_model() {
            ExecutionModel::Direct => spoc_codegen::Target::Native,
            _ => spoc_codegen::Target::Interpreter,
        });
    let names: Vec<&str> = params.iter().map(String::as_str).collect();
    spoc_codegen::abi::refuse_soa(target, kernel, &names).map_err(|e| match Error::from(e) {
        Error::FeatureNotSupported { feature, .. } => Error::unsupported(backend.name(), feature),
        other => other,
    })
}

/// The names of the parameters given a Structure-of-Arrays argument, in parameter order.
fn soa_params_of(kernel: &Kernel, args: &[Arg<'_>]) -> Vec<String> {
    kernel
        .params
        .iter()
        .zip(args)
        .filter(|(_, a)| a.soa().is_some())
        .map(|(p, _)| p.name.clone())
        .collect()
}

/// Checks and launches `ck` (on `stream`, or the default stream). `soa`: whether an argument
/// is a Structure-of-Arrays buffer (the callers have looked already).
fn launch_compiled(
    ck: &CompiledKernel,
    grid: Dims,
    block: Dims,
    shared_mem: usize,
    args: &mut [Arg<'_>],
    stream: Option<&Stream>,
    soa: bool,
) -> Result<()> {
    debug_assert_eq!(soa, args.iter().any(|a| a.soa().is_some()));
    let dev = &ck.device;
    if soa {
        if stream.is_some_and(Stream::is_capturing) {
            return Err(soa_not_capturable(ck.def.name));
        }
        refuse_soa(
            dev.backend().as_ref(),
            ck.def.name,
            &soa_params_of(ck.kernel, args),
        )?;
        if stream.is_some() {
            return Err(Error::unsupported(
                dev.backend().name(),
                format!(
                    "Structure-of-Arrays arguments on a stream (kernel `{}`)",
                    ck.def.name
                ),
            ));
        }
    }
    check_dims(
        ck.def.name,
        dev.caps(),
        grid,
        block,
        ck.static_shared.saturating_add(shared_mem),
    )?;
    let accepted = ck
        .param_checks
        .as_deref()
        .is_some_and(|checks| args_accepted(ck.kernel, checks, dev, args));
    if !accepted {
        check_args(ck.kernel, ck.def.name, dev, args, &ck.options.soa_params)?;
    }
    let args: &[Arg<'_>] = args;
    let backend = dev.backend();
    let run = |handle: Option<&crate::backend::Stream>| {
        launch_on_handle(backend.as_ref(), ck, grid, block, shared_mem, args, handle)
    };
    let Some(stream) = stream else {
        // The default stream: like a host access, wait for the streams' work on the buffers,
        // and keep them locked (no graph replayed meanwhile can queue work on them) while the
        // kernel is launched.
        crate::memory::graph::refuse_in_capture(dev, "a launch on the default stream")?;
        let buffers = args
            .iter()
            .filter_map(|a| a.buffer().map(|b| (b.uses(), a.writes())));
        let mut held = Locked::new();
        if soa {
            let fields = args.iter().flat_map(|a| {
                let write = a.writes();
                let fields = a.soa().map(|s| s.fields()).unwrap_or_default();
                fields.iter().map(move |f| (f.buffer().uses(), write))
            });
            Uses::settle_all_into(&mut held, buffers.chain(fields))?;
        } else {
            Uses::settle_all_into(&mut held, buffers)?;
        }
        return run(None);
    };
    let accesses = args.iter().filter_map(|a| {
        a.buffer().map(|b| Access {
            uses: b.uses(),
            write: a.writes(),
        })
    });
    stream.enqueue_or_capture(
        accesses,
        |h| run(Some(h)),
        || capture_launch(ck, grid, block, shared_mem, args),
    )
}

/// A launch recorded for a graph ([`crate::Stream::capture`]): the kernel, its dimensions and
/// arguments, owning (sharing) the buffers so that the graph keeps them alive.
fn capture_launch(
    ck: &CompiledKernel,
    grid: Dims,
    block: Dims,
    shared_mem: usize,
    args: &[Arg<'_>],
) -> Result<GraphOp> {
    let mut held = Vec::new();
    let mut owned: Vec<GraphArg> = Vec::with_capacity(args.len());
    for a in args {
        owned.push(match a {
            Arg::Buffer(_) | Arg::BufferMut(_) => {
                let b = a.buffer().expect("a buffer argument");
                held.push(Held::Device(b.share(), a.writes()));
                GraphArg::Buffer(b.share(), a.writes())
            }
            Arg::Soa(_) | Arg::SoaMut(_) => return Err(soa_not_capturable(ck.def.name)),
            v => GraphArg::Value(v.value_copy().expect("a scalar argument")),
        });
    }
    let ck = ck.clone();
    Ok(GraphOp::new(
        held,
        Box::new(move |backend, h| {
            let mut shares: Vec<RawBuffer> = Vec::new();
            let mut values: Vec<Option<Arg<'static>>> = Vec::with_capacity(owned.len());
            for a in &owned {
                match a {
                    GraphArg::Buffer(b, _) => {
                        shares.push(b.share());
                        values.push(None);
                    }
                    GraphArg::Value(v) => values.push(v.value_copy()),
                }
            }
            let mut shares = shares.iter_mut();
            let args: Vec<Arg<'_>> = owned
                .iter()
                .zip(values)
                .map(|(a, v)| match (a, v) {
                    (_, Some(v)) => v,
                    (GraphArg::Buffer(_, write), None) => {
                        let b = shares.next().expect("one share per buffer argument");
                        if *write {
                            Arg::BufferMut(b)
                        } else {
                            Arg::Buffer(b)
                        }
                    }
                    (GraphArg::Value(_), None) => unreachable!("a value argument has its value"),
                })
                .collect();
            launch_on_handle(backend, &ck, grid, block, shared_mem, &args, Some(h))
        }),
    ))
}

fn soa_not_capturable(kernel: &str) -> Error {
    Error::NotCapturable {
        operation: format!("a launch of `{kernel}` with Structure-of-Arrays arguments"),
    }
}

/// An argument of a launch recorded for a graph.
enum GraphArg {
    /// A buffer (shared) and whether the kernel writes it.
    Buffer(RawBuffer, bool),
    /// A scalar.
    Value(Arg<'static>),
}

/// The backend's launch of a compiled kernel (checked already) on `handle` (`None`: the
/// default stream).
fn launch_on_handle(
    backend: &dyn Backend,
    ck: &CompiledKernel,
    grid: Dims,
    block: Dims,
    shared_mem: usize,
    args: &[Arg<'_>],
    handle: Option<&crate::backend::Stream>,
) -> Result<()> {
    let config = LaunchConfig {
        stream: handle,
        ..LaunchConfig::new(grid, block, shared_mem)
    };
    match (backend.execution_model(), &ck.module) {
        (ExecutionModel::Jit, Some(module)) => backend.launch(module, &config, args),
        _ => backend.execute_direct(
            ck.device.local(),
            &ck.def,
            ck.kernel,
            ck.module.as_deref(),
            &config,
            args,
        ),
    }
}

/// Runs a compiled kernel with arguments from [`crate::set_args`] (checked against the
/// kernel's parameters first). `shared_mem` is the dynamic shared memory per block, in bytes.
///
/// # Errors
/// [`Error::DeviceReset`]; [`Error::InvalidLaunch`] if a launch check fails (nothing runs);
/// [`Error::KernelFault`] if a thread faults on a CPU backend; a driver error.
pub fn run_kernel(
    kernel: &CompiledKernel,
    args: &mut KernelArgs<'_>,
    grid: Dims,
    block: Dims,
    shared_mem: usize,
) -> Result<()> {
    kernel.device.check_current()?;
    if args.device.gid() != kernel.device.gid() {
        return Err(Error::invalid_launch(
            kernel.def.name,
            LaunchProblem::ArgsForOtherDevice {
                args_device: args.device.id,
                kernel_device: kernel.device.id,
            },
        ));
    }
    let soa = args.args.iter().any(|a| a.soa().is_some());
    launch_compiled(kernel, grid, block, shared_mem, &mut args.args, None, soa)
}

/// Compiles (if needed) and runs `def` on `dev`.
///
/// # Errors
/// As [`compile_kernel`] and [`run_kernel`].
pub fn run(
    dev: &Device,
    def: &'static KernelDef,
    args: Vec<Arg<'_>>,
    grid: Dims,
    block: Dims,
    shared_mem: usize,
) -> Result<()> {
    let mut args = args;
    launch_def(dev, def, grid, block, shared_mem, &mut args)
}

/// The launch path of `#[kernel]`'s typed `launch`: memo lookup, launch checks, execution.
///
/// # Errors
/// As [`compile_kernel`] and [`run_kernel`].
///
/// With checked launches on ([`crate::checking`], `SPOC_CHECK=1`), a launch on any device but
/// the Interpreter first runs on the Interpreter on copies of the buffers, and returns its
/// report instead of launching if a thread faults there.
pub fn launch_def(
    dev: &Device,
    def: &'static KernelDef,
    grid: Dims,
    block: Dims,
    shared_mem_bytes: usize,
    args: &mut [Arg<'_>],
) -> Result<()> {
    let to = LaunchTarget::Device(dev);
    launch_to(to, def, grid, block, shared_mem_bytes, args)
}

/// The launch path of `#[kernel]`'s typed `launch_on`: [`launch_def`] on `stream` (its device),
/// returning once the launch is queued. The buffers' use tracking ([`crate::Stream`]) orders
/// it after conflicting work of other streams and makes later host accesses wait for it.
///
/// # Errors
/// As [`launch_def`]; [`Error::FeatureNotSupported`] for Structure-of-Arrays arguments.
pub fn launch_def_on(
    stream: &Stream,
    def: &'static KernelDef,
    grid: Dims,
    block: Dims,
    shared_mem_bytes: usize,
    args: &mut [Arg<'_>],
) -> Result<()> {
    let to = LaunchTarget::Stream(stream);
    launch_to(to, def, grid, block, shared_mem_bytes, args)
}

/// Where `#[kernel]`'s typed launches go: a device's default stream or a [`Stream`]. Not a
/// public API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum LaunchTarget<'a> {
    /// [`launch_def`] on the device.
    Device(&'a Device),
    /// [`launch_def_on`] the stream.
    Stream(&'a Stream),
}

/// [`launch_def`] or [`launch_def_on`], as `to` says (both are this). Not a public API.
///
/// # Errors
/// As those.
#[doc(hidden)]
pub fn launch_to(
    to: LaunchTarget<'_>,
    def: &'static KernelDef,
    grid: Dims,
    block: Dims,
    shared_mem_bytes: usize,
    args: &mut [Arg<'_>],
) -> Result<()> {
    let (dev, stream) = match to {
        LaunchTarget::Device(dev) => (dev, None),
        LaunchTarget::Stream(s) => (s.device(), Some(s)),
    };
    if crate::check_mode::checking()? && dev.backend().name() != crate::interpreter_backend::NAME {
        crate::check_mode::check_on_interpreter(def, grid, block, shared_mem_bytes, args)?;
    }
    launch_unchecked(dev, def, grid, block, shared_mem_bytes, args, stream)
}

/// [`launch_def`] without the Interpreter check.
pub(crate) fn launch_unchecked(
    dev: &Device,
    def: &'static KernelDef,
    grid: Dims,
    block: Dims,
    shared_mem_bytes: usize,
    args: &mut [Arg<'_>],
    stream: Option<&Stream>,
) -> Result<()> {
    let backend = dev.backend();
    if args.iter().any(|a| a.soa().is_some()) {
        return launch_uncached(dev, def, grid, block, shared_mem_bytes, args, stream);
    }
    // The common case: this thread's plan for the kernel on the device. (A miss, or IR that
    // does not load, takes the memo's path with its checks in their order: a plan is filed
    // only for IR that loaded.)
    let key = PlanKey {
        ir: def.ir as usize,
        name: (def.name.as_ptr() as usize, def.name.len()),
        native: def.native.map_or(0, |f| f as usize),
        device: dev.gid(),
        block: backend.compile_needs_block().then_some(block),
    };
    // This thread's plan, launched in place: no reference count taken and dropped per launch.
    // (A launch does not look plans up again; one that did would find them borrowed and take
    // the memo's path, as on a miss.) The result is written to `launched`, not returned
    // through the closure: a `Result` wrapped in another is copied whole, some hundred bytes.
    let epoch = MEMO_EPOCH.load(Ordering::Acquire);
    let mut launched = Ok(());
    let found = PLANS.try_with(|p| {
        let Ok(plans) = p.try_borrow() else {
            return false;
        };
        let Some((_, ck)) = plans.entries.iter().find(|(k, _)| *k == key) else {
            return false;
        };
        if plans.epoch != epoch {
            return false;
        }
        launched = match dev.check_current() {
            Ok(()) => launch_compiled(ck, grid, block, shared_mem_bytes, args, stream, false),
            Err(e) => Err(e),
        };
        true
    });
    if found == Ok(true) {
        return launched;
    }
    // A miss, or a memo changed since the plans were filed (which `cached_plan` drops).
    if def.valid().is_err() {
        return launch_uncached(dev, def, grid, block, shared_mem_bytes, args, stream);
    }
    let (plan, epoch) = cached_plan(&key);
    let ck = match plan {
        Some(ck) => {
            dev.check_current()?;
            ck
        }
        None => {
            let ck = compile_for_launch(dev, def, grid, block, shared_mem_bytes, args)?;
            remember_plan(key, epoch, &ck);
            ck
        }
    };
    launch_compiled(&ck, grid, block, shared_mem_bytes, args, stream, false)
}

/// [`launch_unchecked`] through the memo, without this thread's plans (Structure-of-Arrays
/// arguments, whose parameters are part of the compile options).
fn launch_uncached(
    dev: &Device,
    def: &'static KernelDef,
    grid: Dims,
    block: Dims,
    shared_mem_bytes: usize,
    args: &mut [Arg<'_>],
    stream: Option<&Stream>,
) -> Result<()> {
    let ck = compile_for_launch(dev, def, grid, block, shared_mem_bytes, args)?;
    let soa = args.iter().any(|a| a.soa().is_some());
    launch_compiled(&ck, grid, block, shared_mem_bytes, args, stream, soa)
}

/// The compiled kernel a launch of `def` on `dev` with `args` runs (the memo's, or built).
fn compile_for_launch(
    dev: &Device,
    def: &'static KernelDef,
    grid: Dims,
    block: Dims,
    shared_mem_bytes: usize,
    args: &[Arg<'_>],
) -> Result<Arc<CompiledKernel>> {
    let backend = dev.backend();
    if backend.compile_needs_block() {
        // The block is compiled into the module (Vulkan's workgroup size): check it before
        // generating code for it, so that a zero or oversized block is the same
        // `InvalidLaunch` as on every other backend, not the code generator's refusal.
        let kernel = def.kernel()?;
        check_dims(
            def.name,
            dev.caps(),
            grid,
            block,
            ir_scan::static_shared_bytes(kernel).saturating_add(shared_mem_bytes),
        )?;
    }
    // Code generation refuses these options on every backend but CUDA/PTX, before compiling.
    let soa_params = if args.iter().any(|a| a.soa().is_some()) {
        soa_params_of(def.kernel()?, args)
    } else {
        Vec::new()
    };
    let options = CompileOptions {
        block: backend.compile_needs_block().then_some(block),
        soa_params,
        ..CompileOptions::default()
    };
    compile_with(dev, def, options)
}
