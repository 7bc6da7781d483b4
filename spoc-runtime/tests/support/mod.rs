//! Hand-built kernels (IR + native code, as `#[kernel]` would generate them) and a JIT test
//! backend with two devices, for the runtime's integration tests.
#![allow(dead_code)]

use spoc_ir::{
    BinOp, Block, Const, Expr, ExprKind, Intrinsic, IrError, Kernel, LValue, Param, Stmt, StmtKind,
    Type, VarDecl, VarId, VarKind,
};
use spoc_runtime::backend::{Code, DeviceInfo, ExecutionModel, Module, Source, Target};
use spoc_runtime::cache::ModuleCache;
use spoc_runtime::native::abi::{
    GlobalMut, GlobalRef, NativeArg, NativeFn, NativeLaunch, ThreadTrap, Trap,
};
use spoc_runtime::{
    Arg, Capabilities, CompileOptions, Compiler, DeviceMemory, Executor, IntrinsicRegistry,
    KernelDef, Platform,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, OnceLock};

// ------------------------------------------------------------------ IR builders

fn param(id: u32, name: &str, ty: Type, mutable: bool) -> (Param, VarDecl) {
    (
        Param {
            var: VarId(id),
            name: name.into(),
            ty: ty.clone(),
            mutable,
        },
        VarDecl {
            name: name.into(),
            ty,
            mutable: false,
            kind: VarKind::Param,
        },
    )
}

fn local(name: &str, ty: Type) -> VarDecl {
    VarDecl {
        name: name.into(),
        ty,
        mutable: false,
        kind: VarKind::Local,
    }
}

fn var(id: u32, ty: Type) -> Expr {
    Expr::var(VarId(id), ty)
}

fn bin(op: BinOp, lhs: Expr, rhs: Expr, ty: Type) -> Expr {
    Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        ty,
    }
}

fn index(array: Expr, i: Expr, elem: Type) -> Expr {
    Expr {
        kind: ExprKind::Index {
            array: Box::new(array),
            index: Box::new(i),
        },
        ty: elem,
    }
}

fn len(array: Expr) -> Expr {
    Expr {
        kind: ExprKind::Len(Box::new(array)),
        ty: Type::U32,
    }
}

fn global_id_x() -> Expr {
    Expr {
        kind: ExprKind::Intrinsic {
            intrinsic: Intrinsic::GlobalId(spoc_ir::Axis::X),
            args: vec![],
        },
        ty: Type::U32,
    }
}

fn store(array: u32, i: Expr, value: Expr) -> Stmt {
    Stmt::new(StmtKind::Assign {
        target: LValue::Index {
            base: Box::new(LValue::Var(VarId(array))),
            index: i,
        },
        value,
    })
}

fn kernel(name: &str, params: Vec<(Param, VarDecl)>, locals: Vec<VarDecl>, body: Block) -> Kernel {
    let (params, mut vars): (Vec<Param>, Vec<VarDecl>) = params.into_iter().unzip();
    vars.extend(locals);
    Kernel {
        name: name.into(),
        params,
        vars,
        shared: vec![],
        body,
        records: vec![],
        variants: vec![],
        functions: vec![],
    }
}

/// `let i = global_id_x(); if i < out.len() { <then> }` with `i` as variable `i_var`.
fn guarded(i_var: u32, buf_var: u32, buf_ty: Type, then: Block) -> Block {
    vec![
        Stmt::new(StmtKind::Let {
            var: VarId(i_var),
            init: Some(global_id_x()),
        }),
        Stmt::new(StmtKind::If {
            cond: bin(
                BinOp::Lt,
                var(i_var, Type::U32),
                len(var(buf_var, buf_ty)),
                Type::BOOL,
            ),
            then,
            els: None,
        }),
    ]
}

/// `saxpy(a: f32, x: &[f32], y: &mut [f32])`: `y[i] = a * x[i] + y[i]`.
pub fn saxpy_kernel() -> Kernel {
    let buf = Type::global_array(Type::F32);
    let i = || var(3, Type::U32);
    let body = guarded(
        3,
        2,
        buf.clone(),
        vec![store(
            2,
            i(),
            bin(
                BinOp::Add,
                bin(
                    BinOp::Mul,
                    var(0, Type::F32),
                    index(var(1, buf.clone()), i(), Type::F32),
                    Type::F32,
                ),
                index(var(2, buf.clone()), i(), Type::F32),
                Type::F32,
            ),
        )],
    );
    kernel(
        "saxpy",
        vec![
            param(0, "a", Type::F32, false),
            param(1, "x", buf.clone(), false),
            param(2, "y", buf, true),
        ],
        vec![local("i", Type::U32)],
        body,
    )
}

/// `iota(base: u32, out: &mut [u32])`: `out[i] = base + i`; unguarded if `checked` is false
/// (a grid larger than the buffer then faults).
pub fn iota_kernel(name: &str, checked: bool) -> Kernel {
    let buf = Type::global_array(Type::U32);
    let st = store(
        1,
        var(2, Type::U32),
        bin(BinOp::Add, var(0, Type::U32), var(2, Type::U32), Type::U32),
    );
    let body = if checked {
        guarded(2, 1, buf.clone(), vec![st])
    } else {
        vec![
            Stmt::new(StmtKind::Let {
                var: VarId(2),
                init: Some(global_id_x()),
            }),
            st,
        ]
    };
    kernel(
        name,
        vec![
            param(0, "base", Type::U32, false),
            param(1, "out", buf, true),
        ],
        vec![local("i", Type::U32)],
        body,
    )
}

/// `flags(f: &[bool])`: does nothing (for buffer-length checks).
pub fn flags_kernel() -> Kernel {
    kernel(
        "flags",
        vec![param(0, "f", Type::global_array(Type::BOOL), false)],
        vec![],
        vec![],
    )
}

/// `with_barrier(out: &mut [f32])`: `sync_threads()` then nothing.
pub fn barrier_kernel() -> Kernel {
    kernel(
        "with_barrier",
        vec![param(0, "out", Type::global_array(Type::F32), true)],
        vec![],
        vec![Stmt::new(StmtKind::Barrier)],
    )
}

/// A kernel taking one `i64` scalar and a `&[i64]` (for type-mismatch tests).
pub fn takes_i64_kernel() -> Kernel {
    kernel(
        "takes_i64",
        vec![
            param(0, "v", Type::I64, false),
            param(1, "xs", Type::global_array(Type::I64), false),
        ],
        vec![],
        vec![Stmt::new(StmtKind::Expr(Expr::constant(Const::I32(0))))],
    )
}

/// Defines `fn $name() -> Result<&'static Kernel, IrError>` building, validating and keeping
/// a kernel once, as `#[kernel]`'s generated accessor does.
macro_rules! ir_accessor {
    ($name:ident, $build:expr) => {
        pub fn $name() -> Result<&'static Kernel, IrError> {
            static K: OnceLock<Result<Kernel, IrError>> = OnceLock::new();
            K.get_or_init(|| {
                let k: Kernel = $build;
                spoc_ir::validate(&k)?;
                Ok(k)
            })
            .as_ref()
            .map_err(Clone::clone)
        }
    };
}

ir_accessor!(saxpy_ir, saxpy_kernel());
ir_accessor!(iota_ir, iota_kernel("iota", true));
ir_accessor!(iota_unchecked_ir, iota_kernel("iota_unchecked", false));
ir_accessor!(flags_ir, flags_kernel());
ir_accessor!(barrier_ir, barrier_kernel());
ir_accessor!(takes_i64_ir, takes_i64_kernel());

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

pub static SAXPY: KernelDef = KernelDef {
    name: "saxpy",
    ir: saxpy_ir,
    native: Some(saxpy_native),
};
pub static IOTA: KernelDef = KernelDef {
    name: "iota",
    ir: iota_ir,
    native: Some(iota_native),
};
pub static IOTA_UNCHECKED: KernelDef = KernelDef {
    name: "iota_unchecked",
    ir: iota_unchecked_ir,
    native: Some(iota_unchecked_native),
};
pub static FLAGS: KernelDef = KernelDef {
    name: "flags",
    ir: flags_ir,
    native: Some(nothing_native),
};
/// Uses a barrier: no native code, as `#[kernel]` would generate it.
pub static WITH_BARRIER: KernelDef = KernelDef {
    name: "with_barrier",
    ir: barrier_ir,
    native: None,
};
pub static TAKES_I64: KernelDef = KernelDef {
    name: "takes_i64",
    ir: takes_i64_ir,
    native: Some(nothing_native),
};

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
        kernel: &Kernel,
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
        kernel: &Kernel,
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
