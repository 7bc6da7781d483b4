//! The CUDA driver, loaded at run time through cudarc: probing, device enumeration, primary
//! contexts, and the handle types the backends box into the runtime's opaque handles.
//!
//! Nothing here panics when `libcuda` is missing or partial: [`driver`] first opens the library
//! cudarc would load and checks every symbol the backends call ([`super::probe`]; cudarc's
//! loader panics on a missing one), and runs the first calls under `catch_unwind` as a second
//! guard, turning any failure into an `Err(reason)`.
//!
//! # Faults and recovery
//! A kernel that faults on the device (an illegal address, a trap) leaves its context broken:
//! every later call on it returns the same *sticky* status. [`CudaDevice`] remembers the fault
//! (the first sticky status seen) and the kernels launched since the last successful
//! synchronisation, which the backends name in the [`crate::Error::KernelFault`] they return.
//! [`CudaDevice::recover`] (run by `Device::reset()`) destroys the broken primary context
//! (`cuDevicePrimaryCtxReset_v2`) and starts a new one: every allocation, module, stream and
//! event of the old one is gone, so each carries the context *generation* it was made in, and
//! one of an older generation is refused ([`crate::Error::ContextReset`]) and never released a
//! second time.
//!
//! The driver may refuse the new context: CUDA documents `CUDA_ERROR_ILLEGAL_ADDRESS`,
//! `CUDA_ERROR_LAUNCH_FAILED` and the other sticky statuses as leaving the *process* in an
//! inconsistent state that only a restart clears, and on the H200 with driver 580 every
//! `cuDevicePrimaryCtxRetain` after `cuDevicePrimaryCtxReset_v2` returns the sticky status again
//! (measured for an illegal address and a `trap`). The device is then *lost*: its fault stays,
//! its message says the process must be restarted, and every later call returns it as
//! [`crate::Error::KernelFault`] instead of touching the destroyed context.

use crate::capabilities::Capabilities;
use cudarc::driver::sys::{
    self, CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction, CUmodule,
    CUresult, CUstream,
};
use std::cell::Cell;
use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// One CUDA device as the driver describes it.
pub(crate) struct CudaDevice {
    /// The driver's device handle.
    pub(crate) dev: CUdevice,
    /// `cuDeviceGetName`.
    pub(crate) name: String,
    /// Limits and features, in the runtime's terms.
    pub(crate) caps: Capabilities,
    /// Compute capability (major, minor).
    pub(crate) cc: (u32, u32),
    /// The device's primary context, retained on first use (and again after a reset).
    ctx: Mutex<Option<Ctx>>,
    /// `ctx`'s handle, or null while none is retained (read without the lock on every bind).
    ctx_handle: AtomicPtr<sys::CUctx_st>,
    /// [`FaultState::lost`], read without the lock on every launch.
    lost: AtomicBool,
    /// The [`CudaKernel::id`] of the kernel last noted by [`CudaDevice::launched_kernel`] if it
    /// is still the last of [`FaultState::recent`], else 0 (written under the state's lock).
    last_launched: AtomicU64,
    /// The primary context's generation: bumped by [`CudaDevice::recover`].
    generation: AtomicU64,
    /// The fault that broke the context and the kernels that may have caused it; the kernels
    /// launched since the last successful synchronisation.
    state: Mutex<FaultState>,
}

thread_local! {
    /// The context (handle, generation) this thread last made current through
    /// [`CudaDevice::bind`].
    static BOUND: Cell<(usize, u64)> = const { Cell::new((0, u64::MAX)) };
}

/// How many kernel names a fault report keeps.
const RECENT_KERNELS: usize = 8;

#[derive(Default)]
struct FaultState {
    /// Kernels launched since the last successful synchronisation (most recent last, at most
    /// [`RECENT_KERNELS`], without repeats), and how many more there were.
    recent: Vec<String>,
    more: usize,
    /// The sticky status that broke the context, with the kernels in flight then.
    fault: Option<Fault>,
    /// The driver refused a new context after the reset: the fault cannot be cleared in this
    /// process (see the module docs).
    lost: bool,
}

/// A device-side fault: the driver's message and the kernels that were in flight.
#[derive(Clone, Debug)]
pub(crate) struct Fault {
    /// `CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered`, and where it
    /// was seen.
    pub(crate) message: String,
    /// The kernels launched since the last successful synchronisation (most recent last).
    pub(crate) kernels: Vec<String>,
    /// How many more were launched than `kernels` names.
    pub(crate) more: usize,
}

/// True for the statuses a faulting kernel leaves its context in: every later call on the
/// context returns them, until the context is destroyed (CUDA driver API, "Error Handling").
pub(crate) fn is_sticky(r: CUresult) -> bool {
    use CUresult::*;
    matches!(
        r,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ASSERT
    )
}

#[derive(Clone, Copy)]
struct Ctx(CUcontext);
// SAFETY: a CUDA context handle may be made current on any thread; the driver synchronises its
// own state.
unsafe impl Send for Ctx {}
// SAFETY: as above; the handle is never dereferenced by Rust.
unsafe impl Sync for Ctx {}

/// The loaded, initialised driver.
pub(crate) struct Driver {
    /// `cuDriverGetVersion`, as (major, minor, 0).
    pub(crate) version: (u32, u32, u32),
    /// Devices in driver order (the backends' local indices).
    pub(crate) devices: Vec<CudaDevice>,
}

static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();

/// The driver, loaded and initialised on first call, or why it cannot be used.
pub(crate) fn driver() -> Result<&'static Driver, &'static str> {
    DRIVER.get_or_init(load).as_ref().map_err(String::as_str)
}

/// Whether the driver library has the graph functions ([`super::probe::GRAPH_SYMBOLS`]), checked
/// once: without them [`crate::Stream::capture`] reports graphs unsupported instead of letting
/// cudarc panic on a missing symbol.
pub(crate) fn graphs() -> Result<(), &'static str> {
    static GRAPHS: OnceLock<Result<(), String>> = OnceLock::new();
    GRAPHS
        .get_or_init(|| {
            super::probe::check_library(
                "CUDA driver",
                &["cuda", "nvcuda"],
                super::probe::GRAPH_SYMBOLS,
            )
        })
        .as_ref()
        .map(|_| ())
        .map_err(String::as_str)
}

/// A panic payload as text.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

fn load() -> Result<Driver, String> {
    super::probe::check_library(
        "CUDA driver",
        &["cuda", "nvcuda"],
        super::probe::DRIVER_SYMBOLS,
    )?;
    match catch_unwind(AssertUnwindSafe(init)) {
        Ok(r) => r,
        Err(p) => Err(format!(
            "loading the CUDA driver failed: {}",
            panic_message(&*p)
        )),
    }
}

/// `name: message` of a driver status, or `None` for success.
pub(crate) fn describe(r: CUresult) -> Option<String> {
    if r == CUresult::CUDA_SUCCESS {
        return None;
    }
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: the driver writes pointers to static strings (or leaves them null on failure).
    unsafe {
        let _ = sys::cuGetErrorName(r, &mut name);
        let _ = sys::cuGetErrorString(r, &mut text);
    }
    let s = |p: *const std::ffi::c_char| {
        if p.is_null() {
            None
        } else {
            // SAFETY: non-null pointers from the driver are NUL-terminated static strings.
            Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        }
    };
    Some(match (s(name), s(text)) {
        (Some(n), Some(t)) => format!("{n}: {t}"),
        (Some(n), None) => n,
        _ => format!("CUresult {}", r as i32),
    })
}

/// Ok for success, else `"<what>: <driver message>"`.
pub(crate) fn check(r: CUresult, what: &str) -> Result<(), String> {
    match describe(r) {
        None => Ok(()),
        Some(m) => Err(format!("{what}: {m}")),
    }
}

fn attr(dev: CUdevice, a: CUdevice_attribute) -> Result<i32, String> {
    let mut v: c_int = 0;
    // SAFETY: `v` is a valid out-pointer; `dev` came from cuDeviceGet.
    check(
        unsafe { sys::cuDeviceGetAttribute(&mut v, a, dev) },
        "cuDeviceGetAttribute",
    )?;
    Ok(v)
}

fn init() -> Result<Driver, String> {
    // SAFETY: plain driver calls with valid out-pointers.
    unsafe {
        check(sys::cuInit(0), "cuInit")?;
        let mut v: c_int = 0;
        check(sys::cuDriverGetVersion(&mut v), "cuDriverGetVersion")?;
        let version = ((v / 1000) as u32, ((v % 1000) / 10) as u32, 0);
        let mut n: c_int = 0;
        check(sys::cuDeviceGetCount(&mut n), "cuDeviceGetCount")?;
        let mut devices = Vec::new();
        for i in 0..n {
            let mut dev: CUdevice = 0;
            check(sys::cuDeviceGet(&mut dev, i), "cuDeviceGet")?;
            devices.push(describe_device(dev)?);
        }
        Ok(Driver { version, devices })
    }
}

fn describe_device(dev: CUdevice) -> Result<CudaDevice, String> {
    use CUdevice_attribute::*;
    let mut buf = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer is writable for its length; the driver NUL-terminates.
    check(
        unsafe { sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, dev) },
        "cuDeviceGetName",
    )?;
    // SAFETY: NUL-terminated by the driver (and the buffer's last byte is never written past).
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let mut total: usize = 0;
    // SAFETY: valid out-pointer.
    check(
        unsafe { sys::cuDeviceTotalMem_v2(&mut total, dev) },
        "cuDeviceTotalMem",
    )?;
    let u = |a| attr(dev, a).map(|v| v.max(0) as u32);
    let shared_default = u(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?;
    let shared_optin = u(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
    let caps = Capabilities {
        max_threads_per_block: u(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_block_dims: [
            u(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            u(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            u(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_dims: [
            u(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            u(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            u(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
        // Launches above the default 48 KiB opt in per kernel (cuFuncSetAttribute).
        shared_mem_per_block: shared_default.max(shared_optin) as usize,
        warp_size: u(CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        compute_units: u(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        total_memory: total as u64,
        max_buffer_bytes: total as u64,
        fp64: true,
        int64_atomics: true,
        subgroups: true,
        is_cpu: false,
        is_gpu: true,
        discrete: u(CU_DEVICE_ATTRIBUTE_INTEGRATED)? == 0,
    };
    let cc = (
        u(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        u(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    );
    Ok(CudaDevice {
        dev,
        name,
        caps,
        cc,
        ctx: Mutex::new(None),
        ctx_handle: AtomicPtr::new(std::ptr::null_mut()),
        lost: AtomicBool::new(false),
        last_launched: AtomicU64::new(0),
        generation: AtomicU64::new(0),
        state: Mutex::new(FaultState::default()),
    })
}

impl CudaDevice {
    fn retained(&self) -> Result<Ctx, String> {
        let mut slot = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = *slot {
            return Ok(c);
        }
        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `dev` came from cuDeviceGet. The context stays retained
        // for the life of the process (a reset keeps the retain, see `recover`).
        check(
            unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, self.dev) },
            "cuDevicePrimaryCtxRetain",
        )?;
        *slot = Some(Ctx(ctx));
        self.ctx_handle.store(ctx, Ordering::Release);
        Ok(Ctx(ctx))
    }

    /// Makes the device's primary context current on this thread (retaining it on first use).
    /// Skips `cuCtxSetCurrent` when this thread made this context current in the context's
    /// present generation and the driver says it still is (`cuCtxGetCurrent`: another library
    /// of the process may have changed it since).
    #[inline]
    pub(crate) fn bind(&self) -> Result<(), String> {
        let mut ctx = self.ctx_handle.load(Ordering::Acquire);
        if ctx.is_null() {
            ctx = self.retained()?.0;
        }
        let generation = self.generation();
        // (`try_with`: a module unloaded by a thread-local's destructor binds too.)
        let mine = BOUND
            .try_with(|b| b.get() == (ctx as usize, generation))
            .unwrap_or(false);
        if mine {
            let mut current: CUcontext = std::ptr::null_mut();
            // SAFETY: a valid out-pointer.
            let r = unsafe { sys::cuCtxGetCurrent(&mut current) };
            if r == CUresult::CUDA_SUCCESS && current == ctx {
                return Ok(());
            }
        }
        // SAFETY: a retained primary context.
        check(unsafe { sys::cuCtxSetCurrent(ctx) }, "cuCtxSetCurrent")?;
        let _ = BOUND.try_with(|b| b.set((ctx as usize, generation)));
        Ok(())
    }

    /// The current context generation (resources of another one are gone).
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Releases a handle of context generation `generation` with `destroy` (its driver call),
    /// if that context is still the device's and can be made current (a handle of a context a
    /// reset destroyed is gone with it): the driver's complaint, if any.
    fn release(&self, generation: u64, destroy: impl FnOnce() -> CUresult) -> Option<String> {
        if self.generation() == generation && self.bind().is_ok() {
            describe(destroy())
        } else {
            None
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, FaultState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes that kernel `name` (its [`CudaKernel::id`]) was launched (a fault seen later may
    /// be its): nothing to do, and no lock taken, when it is already the last kernel noted.
    #[inline]
    pub(crate) fn launched_kernel(&self, id: u64, name: &str) {
        if self.last_launched.load(Ordering::Acquire) == id {
            return;
        }
        let mut st = self.state();
        Self::note_launch(&mut st, name);
        self.last_launched.store(id, Ordering::Release);
    }

    fn note_launch(st: &mut FaultState, name: &str) {
        if let Some(i) = st.recent.iter().position(|k| k == name) {
            let k = st.recent.remove(i);
            st.recent.push(k);
        } else if st.recent.len() == RECENT_KERNELS {
            st.recent.remove(0);
            st.more += 1;
            st.recent.push(name.to_string());
        } else {
            st.recent.push(name.to_string());
        }
    }

    /// Notes a successful synchronisation: the kernels launched before it finished cleanly.
    pub(crate) fn synchronized(&self) {
        let mut st = self.state();
        if st.fault.is_none() {
            st.recent.clear();
            st.more = 0;
            self.last_launched.store(0, Ordering::Release);
        }
    }

    /// Records the sticky status `r`, seen at `what`, as the device's fault (the first one
    /// wins) and returns it.
    pub(crate) fn faulted(&self, r: CUresult, what: &str) -> Fault {
        let mut st = self.state();
        if let Some(f) = &st.fault {
            return f.clone();
        }
        let f = Fault {
            message: format!(
                "{} (reported by {what}); the device's context is unusable until \
                 spoc::Device::reset()",
                describe(r).unwrap_or_default()
            ),
            kernels: st.recent.clone(),
            more: st.more,
        };
        st.fault = Some(f.clone());
        f
    }

    /// The fault that broke the context, if one did.
    pub(crate) fn fault(&self) -> Option<Fault> {
        self.state().fault.clone()
    }

    /// After a fault: destroys the broken primary context (every allocation, module, stream
    /// and event in it) and starts a fresh one; resources of the old generation are refused
    /// from now on. Does nothing on a healthy device. Returns whether it reset.
    ///
    /// # Errors
    /// The driver's message if the reset or the new context fails.
    pub(crate) fn recover(&self) -> Result<bool, String> {
        if self.fault().is_none() || self.state().lost {
            return Ok(false);
        }
        // Resources of the old context must not be released into the new one: from here on
        // they see another generation.
        self.generation.fetch_add(1, Ordering::AcqRel);
        let mut slot = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: `dev` came from cuDeviceGet; the reset destroys the primary context's
        // state, keeping our retain (CUDA driver API, cuDevicePrimaryCtxReset_v2).
        let reset = check(
            unsafe { sys::cuDevicePrimaryCtxReset_v2(self.dev) },
            "cuDevicePrimaryCtxReset_v2",
        );
        // The retain survives the reset; retain again for the (new) handle and release once,
        // so the count stays one.
        let mut ctx: CUcontext = std::ptr::null_mut();
        let retained = reset.and_then(|()| {
            // SAFETY: valid out-pointer.
            check(
                unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, self.dev) },
                "cuDevicePrimaryCtxRetain",
            )
        });
        if let Err(refused) = retained {
            // The old handle names a destroyed context: never make it current again.
            *slot = None;
            self.ctx_handle
                .store(std::ptr::null_mut(), Ordering::Release);
            drop(slot);
            let mut st = self.state();
            st.lost = true;
            self.lost.store(true, Ordering::Release);
            if let Some(f) = &mut st.fault {
                f.message = format!(
                    "{}; Device::reset() could not recover it: the driver refused a new \
                     context ({refused}), as CUDA does after a fault of this kind: only a new \
                     process can use the device again",
                    f.message.trim_end_matches(
                        "; the device's context is unusable until spoc::Device::reset()"
                    )
                );
            }
            return Err(format!(
                "the driver refused a new context after the fault ({refused}); restart the process"
            ));
        }
        // SAFETY: balances the retain just made.
        check(
            unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.dev) },
            "cuDevicePrimaryCtxRelease_v2",
        )?;
        *slot = Some(Ctx(ctx));
        self.ctx_handle.store(ctx, Ordering::Release);
        drop(slot);
        let mut st = self.state();
        *st = FaultState::default();
        self.last_launched.store(0, Ordering::Release);
        Ok(true)
    }

    /// The fault of a device that [`CudaDevice::recover`] could not recover: every call on it
    /// fails with it (the context it would use is destroyed).
    #[inline]
    pub(crate) fn lost(&self) -> Option<Fault> {
        if !self.lost.load(Ordering::Acquire) {
            return None;
        }
        let st = self.state();
        if st.lost {
            st.fault.clone()
        } else {
            None
        }
    }
}

/// A device allocation: its address (0 for an empty allocation, which owns nothing) and the
/// context generation it belongs to.
#[derive(Debug)]
pub(crate) struct CudaMem {
    pub(crate) ptr: CUdeviceptr,
    pub(crate) generation: u64,
}

/// A stream, destroyed on drop.
pub(crate) struct CudaStream {
    pub(crate) device: &'static CudaDevice,
    pub(crate) stream: CUstream,
    pub(crate) generation: u64,
}
// SAFETY: streams may be used from any thread with their context current.
unsafe impl Send for CudaStream {}
// SAFETY: as above; the driver synchronises its own state.
unsafe impl Sync for CudaStream {}

impl Drop for CudaStream {
    fn drop(&mut self) {
        // SAFETY: created by cuStreamCreate, destroyed once.
        let destroy = || unsafe { sys::cuStreamDestroy_v2(self.stream) };
        if let Some(m) = self.device.release(self.generation, destroy) {
            tracing::warn!("cuStreamDestroy: {m}");
        }
    }
}

/// An instantiated graph (`CUgraphExec`), destroyed on drop.
pub(crate) struct CudaGraph {
    pub(crate) device: &'static CudaDevice,
    pub(crate) exec: sys::CUgraphExec,
    pub(crate) generation: u64,
}
// SAFETY: a graph exec may be launched and destroyed from any thread with its context current.
unsafe impl Send for CudaGraph {}
// SAFETY: as above; the driver synchronises its own state.
unsafe impl Sync for CudaGraph {}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        // SAFETY: created by cuGraphInstantiateWithFlags, destroyed once (the runtime waits for
        // its launches first).
        let destroy = || unsafe { sys::cuGraphExecDestroy(self.exec) };
        if let Some(m) = self.device.release(self.generation, destroy) {
            tracing::warn!("cuGraphExecDestroy: {m}");
        }
    }
}

/// A timing event, destroyed on drop.
pub(crate) struct CudaEvent {
    pub(crate) device: &'static CudaDevice,
    pub(crate) event: CUevent,
    pub(crate) generation: u64,
}
// SAFETY: events may be used from any thread with their context current.
unsafe impl Send for CudaEvent {}
// SAFETY: as above.
unsafe impl Sync for CudaEvent {}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate, destroyed once.
        let destroy = || unsafe { sys::cuEventDestroy_v2(self.event) };
        if let Some(m) = self.device.release(self.generation, destroy) {
            tracing::warn!("cuEventDestroy: {m}");
        }
    }
}

/// A loaded module and its kernel, unloaded on drop.
pub(crate) struct CudaKernel {
    pub(crate) device: &'static CudaDevice,
    pub(crate) module: CUmodule,
    pub(crate) function: CUfunction,
    /// The entry point's name.
    pub(crate) name: String,
    /// A process-unique identity ([`next_kernel_id`]), never 0.
    pub(crate) id: u64,
    /// How a generated kernel takes its parameters (`None` for external kernels, whose ABI
    /// is read off each launch's arguments).
    pub(crate) abi: Option<spoc_codegen::Abi>,
    /// The largest dynamic shared memory size this function was opted in to.
    pub(crate) dyn_shared_optin: std::sync::atomic::AtomicUsize,
    /// The context generation the module was loaded in.
    pub(crate) generation: u64,
}
// SAFETY: module and function handles may be used from any thread with their context current.
unsafe impl Send for CudaKernel {}
// SAFETY: as above; launches do not mutate the handles.
unsafe impl Sync for CudaKernel {}

impl Drop for CudaKernel {
    fn drop(&mut self) {
        // SAFETY: loaded by cuModuleLoadDataEx, unloaded once.
        let destroy = || unsafe { sys::cuModuleUnload(self.module) };
        if let Some(m) = self.device.release(self.generation, destroy) {
            tracing::warn!("cuModuleUnload({}): {m}", self.name);
        }
    }
}

/// A new [`CudaKernel::id`].
pub(crate) fn next_kernel_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Loads a PTX (NUL-terminated text) or cubin image on `device` and finds `entry` in it.
pub(crate) fn load_module(
    device: &'static CudaDevice,
    image: &[u8],
    entry: &str,
) -> Result<(CUmodule, CUfunction), String> {
    use sys::CUjit_option::*;
    device.bind()?;
    let mut log = vec![0u8; 16 * 1024];
    let mut options = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values = [
        log.as_mut_ptr().cast::<std::ffi::c_void>(),
        log.len() as *mut std::ffi::c_void,
    ];
    let mut module: CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is a NUL-terminated PTX text or a cubin (callers ensure it); the log
    // buffer outlives the call and its size is passed by value, as the JIT options require.
    let r = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if let Some(m) = describe(r) {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let text = String::from_utf8_lossy(&log[..end]);
        return Err(if text.trim().is_empty() {
            format!("cuModuleLoadDataEx: {m}")
        } else {
            format!("cuModuleLoadDataEx: {m}\n{}", text.trim_end())
        });
    }
    let cname = std::ffi::CString::new(entry)
        .map_err(|_| format!("entry point name `{entry}` contains a NUL byte"))?;
    let mut function: CUfunction = std::ptr::null_mut();
    // SAFETY: a loaded module and a NUL-terminated name.
    let r = unsafe { sys::cuModuleGetFunction(&mut function, module, cname.as_ptr()) };
    if let Some(m) = describe(r) {
        // SAFETY: loaded above, unloaded once.
        unsafe {
            let _ = sys::cuModuleUnload(module);
        }
        return Err(format!("cuModuleGetFunction(`{entry}`): {m}"));
    }
    Ok((module, function))
}
