//! The CUDA driver, loaded at run time through cudarc: probing, device enumeration, primary
//! contexts, and the handle types the backends box into the runtime's opaque handles.
//!
//! Nothing here panics when `libcuda` is missing: [`driver`] probes for the library before the
//! first call (cudarc's loader panics otherwise) and runs the first calls under
//! `catch_unwind` as a second guard, turning any failure into an `Err(reason)`.

use crate::device::Capabilities;
use cudarc::driver::sys::{
    self, CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction, CUmodule,
    CUresult, CUstream,
};
use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

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
    /// The device's primary context, retained on first use.
    ctx: OnceLock<Result<Ctx, String>>,
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

/// A panic payload as text.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

fn load() -> Result<Driver, String> {
    // SAFETY: only tries to open the library (dlopen), which has no other effect.
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda) found".into());
    }
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
        ctx: OnceLock::new(),
    })
}

impl CudaDevice {
    /// Makes the device's primary context current on this thread (retaining it on first use).
    pub(crate) fn bind(&self) -> Result<(), String> {
        let ctx = self
            .ctx
            .get_or_init(|| {
                let mut ctx: CUcontext = std::ptr::null_mut();
                // SAFETY: valid out-pointer; `dev` came from cuDeviceGet. The context stays
                // retained for the life of the process.
                check(
                    unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, self.dev) },
                    "cuDevicePrimaryCtxRetain",
                )?;
                Ok(Ctx(ctx))
            })
            .clone()?;
        // SAFETY: a retained primary context.
        check(unsafe { sys::cuCtxSetCurrent(ctx.0) }, "cuCtxSetCurrent")
    }
}

/// A device allocation: its address (0 for an empty allocation, which owns nothing).
#[derive(Debug)]
pub(crate) struct CudaMem {
    pub(crate) ptr: CUdeviceptr,
}

/// A stream, destroyed on drop.
pub(crate) struct CudaStream {
    pub(crate) device: &'static CudaDevice,
    pub(crate) stream: CUstream,
}
// SAFETY: streams may be used from any thread with their context current.
unsafe impl Send for CudaStream {}
// SAFETY: as above; the driver synchronises its own state.
unsafe impl Sync for CudaStream {}

impl Drop for CudaStream {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: created by cuStreamCreate, destroyed once.
            let r = unsafe { sys::cuStreamDestroy_v2(self.stream) };
            if let Some(m) = describe(r) {
                tracing::warn!("cuStreamDestroy: {m}");
            }
        }
    }
}

/// A timing event, destroyed on drop.
pub(crate) struct CudaEvent {
    pub(crate) device: &'static CudaDevice,
    pub(crate) event: CUevent,
}
// SAFETY: events may be used from any thread with their context current.
unsafe impl Send for CudaEvent {}
// SAFETY: as above.
unsafe impl Sync for CudaEvent {}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: created by cuEventCreate, destroyed once.
            let r = unsafe { sys::cuEventDestroy_v2(self.event) };
            if let Some(m) = describe(r) {
                tracing::warn!("cuEventDestroy: {m}");
            }
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
    /// The number of IR parameters (`None` for external kernels).
    pub(crate) params: Option<usize>,
    /// CUDA C only: the element size of the kernel's launch-sized shared array, whose length
    /// in elements is passed after the parameters.
    pub(crate) dyn_shared_elem: Option<usize>,
    /// The largest dynamic shared memory size this function was opted in to.
    pub(crate) dyn_shared_optin: std::sync::atomic::AtomicUsize,
}
// SAFETY: module and function handles may be used from any thread with their context current.
unsafe impl Send for CudaKernel {}
// SAFETY: as above; launches do not mutate the handles.
unsafe impl Sync for CudaKernel {}

impl Drop for CudaKernel {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: loaded by cuModuleLoadDataEx, unloaded once.
            let r = unsafe { sys::cuModuleUnload(self.module) };
            if let Some(m) = describe(r) {
                tracing::warn!("cuModuleUnload({}): {m}", self.name);
            }
        }
    }
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
