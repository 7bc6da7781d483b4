//! The HIP runtime through `hip-sys`: probing, device enumeration, error text, and the handle
//! types the backend boxes into the runtime's opaque handles (each releases itself on drop).
//!
//! `hip-sys` links `libamdhip64` when the program is built, so a binary built with the `hip`
//! feature needs that library to start; with the library but no AMD GPU (no `/dev/kfd`, no
//! device), [`runtime`] returns the reason and the backend is unavailable. Every HIP call's
//! status is checked.

use crate::capabilities::Capabilities;
use hip_sys::hiprt::{self, hipError_t};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem::MaybeUninit;
use std::sync::OnceLock;

/// One HIP device as `hipGetDeviceProperties` describes it.
pub(crate) struct HipDevice {
    /// The HIP device ordinal (`hipSetDevice`).
    pub(crate) ordinal: c_int,
    /// `hipDeviceProp_t::name`.
    pub(crate) name: String,
    /// `hipDeviceProp_t::gcnArchName` (`gfx90a:sramecc+:xnack-`): the target hiprtc compiles
    /// for (`--offload-arch=`).
    pub(crate) arch: String,
    /// Limits and features, in the runtime's terms.
    pub(crate) caps: Capabilities,
}

/// The initialised runtime.
pub(crate) struct Runtime {
    /// `hipRuntimeGetVersion` as (major, minor, patch).
    pub(crate) version: (u32, u32, u32),
    /// Devices in HIP order (the backend's local indices); never empty.
    pub(crate) devices: Vec<HipDevice>,
}

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The runtime with at least one device, probed on first call, or why it cannot be used.
pub(crate) fn runtime() -> Result<&'static Runtime, &'static str> {
    RUNTIME.get_or_init(init).as_ref().map_err(String::as_str)
}

/// `name: message` of a HIP status, or `None` for success.
pub(crate) fn describe(r: hipError_t) -> Option<String> {
    if r == hipError_t::hipSuccess {
        return None;
    }
    let s = |p: *const c_char| {
        if p.is_null() {
            None
        } else {
            // SAFETY: HIP returns NUL-terminated static strings.
            Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        }
    };
    // SAFETY: both accept any status and return static strings.
    let (name, text) = unsafe { (s(hiprt::hipGetErrorName(r)), s(hiprt::hipGetErrorString(r))) };
    Some(match (name, text) {
        (Some(n), Some(t)) if n != t => format!("{n}: {t}"),
        (Some(n), _) => n,
        (None, Some(t)) => t,
        (None, None) => format!("hipError_t {}", r as u32),
    })
}

/// Ok for success, else `"<what>: <HIP message>"`.
pub(crate) fn check(r: hipError_t, what: &str) -> Result<(), String> {
    match describe(r) {
        None => Ok(()),
        Some(m) => Err(format!("{what}: {m}")),
    }
}

/// Makes device `ordinal` current on this thread.
pub(crate) fn bind(ordinal: c_int) -> Result<(), String> {
    // SAFETY: a plain runtime call; an invalid ordinal is reported as an error.
    check(unsafe { hiprt::hipSetDevice(ordinal) }, "hipSetDevice")
}

fn init() -> Result<Runtime, String> {
    let mut n: c_int = 0;
    // SAFETY: valid out-pointer.
    check(
        unsafe { hiprt::hipGetDeviceCount(&mut n) },
        "hipGetDeviceCount",
    )?;
    if n <= 0 {
        return Err("the HIP runtime reports no device".into());
    }
    let mut v: c_int = 0;
    // SAFETY: valid out-pointer.
    check(
        unsafe { hiprt::hipRuntimeGetVersion(&mut v) },
        "hipRuntimeGetVersion",
    )?;
    // HIP_VERSION = major * 10_000_000 + minor * 100_000 + patch.
    let v = v.max(0) as u32;
    let version = (v / 10_000_000, (v / 100_000) % 100, v % 100_000);
    let devices = (0..n).map(describe_device).collect::<Result<_, _>>()?;
    Ok(Runtime { version, devices })
}

/// `hipDeviceProp_t` with slack behind it: a runtime whose structure is larger than the one
/// `hip-sys` was generated from (5.4's, 792 bytes, which Debian's 5.2 matches) writes into the
/// slack instead of past the allocation.
#[repr(C)]
struct PropsWithSlack {
    props: hiprt::hipDeviceProp_t,
    slack: [u8; 4096],
}

fn c_text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn describe_device(ordinal: c_int) -> Result<HipDevice, String> {
    let mut raw = MaybeUninit::<PropsWithSlack>::zeroed();
    // SAFETY: the out-pointer is writable for the structure and more; all-zero bytes are a
    // valid hipDeviceProp_t (integers, arrays and a bitfield struct).
    let p = unsafe {
        check(
            hiprt::hipGetDeviceProperties(raw.as_mut_ptr().cast(), ordinal),
            "hipGetDeviceProperties",
        )?;
        raw.assume_init().props
    };
    let u = |v: c_int| u32::try_from(v).unwrap_or(0);
    let caps = Capabilities {
        max_threads_per_block: u(p.maxThreadsPerBlock),
        max_block_dims: p.maxThreadsDim.map(u),
        max_grid_dims: p.maxGridSize.map(u),
        shared_mem_per_block: p.sharedMemPerBlock,
        warp_size: u(p.warpSize),
        compute_units: u(p.multiProcessorCount),
        total_memory: p.totalGlobalMem as u64,
        max_buffer_bytes: p.totalGlobalMem as u64,
        fp64: p.arch.hasDoubles() != 0,
        int64_atomics: p.arch.hasGlobalInt64Atomics() != 0,
        subgroups: p.arch.hasWarpShuffle() != 0 && p.arch.hasWarpBallot() != 0,
        is_cpu: false,
        is_gpu: true,
        discrete: p.integrated == 0,
    };
    let mut arch = c_text(&p.gcnArchName);
    if arch.is_empty() {
        // Runtimes older than gcnArchName filled only the numeric gcnArch (906 → gfx906).
        arch = format!("gfx{}", p.gcnArch);
    }
    Ok(HipDevice {
        ordinal,
        name: c_text(&p.name),
        arch,
        caps,
    })
}

/// A device allocation: its address (0 for an empty allocation, which owns nothing).
#[derive(Debug)]
pub(crate) struct HipMem {
    pub(crate) ptr: usize,
}

impl HipMem {
    pub(crate) fn at(&self, offset: usize) -> *mut c_void {
        (self.ptr + offset) as *mut c_void
    }
}

/// A stream created by `hipStreamCreate`; destroyed on drop.
pub(crate) struct HipStream {
    pub(crate) ordinal: c_int,
    pub(crate) stream: hiprt::hipStream_t,
}
// SAFETY: HIP streams may be used from any thread; the handle is never dereferenced by Rust.
unsafe impl Send for HipStream {}
// SAFETY: as above.
unsafe impl Sync for HipStream {}

impl Drop for HipStream {
    fn drop(&mut self) {
        if let Err(m) = bind(self.ordinal) {
            tracing::warn!("HIP stream not destroyed: {m}");
            return;
        }
        // SAFETY: created by hipStreamCreate, destroyed once.
        if let Err(m) = check(
            unsafe { hiprt::hipStreamDestroy(self.stream) },
            "hipStreamDestroy",
        ) {
            tracing::warn!("{m}");
        }
    }
}

/// An event created by `hipEventCreate`; destroyed on drop.
pub(crate) struct HipEvent {
    pub(crate) ordinal: c_int,
    pub(crate) event: hiprt::hipEvent_t,
}
// SAFETY: HIP events may be used from any thread; the handle is never dereferenced by Rust.
unsafe impl Send for HipEvent {}
// SAFETY: as above.
unsafe impl Sync for HipEvent {}

impl HipEvent {
    /// A new event on device `ordinal`.
    pub(crate) fn new(ordinal: c_int) -> Result<HipEvent, String> {
        bind(ordinal)?;
        let mut event: hiprt::hipEvent_t = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the device is current.
        check(
            unsafe { hiprt::hipEventCreate(&mut event) },
            "hipEventCreate",
        )?;
        Ok(HipEvent { ordinal, event })
    }
}

impl Drop for HipEvent {
    fn drop(&mut self) {
        if let Err(m) = bind(self.ordinal) {
            tracing::warn!("HIP event not destroyed: {m}");
            return;
        }
        // SAFETY: created by hipEventCreate, destroyed once.
        if let Err(m) = check(
            unsafe { hiprt::hipEventDestroy(self.event) },
            "hipEventDestroy",
        ) {
            tracing::warn!("{m}");
        }
    }
}

/// A loaded code object and one kernel in it; the module is unloaded on drop.
pub(crate) struct HipKernel {
    pub(crate) ordinal: c_int,
    pub(crate) module: hiprt::hipModule_t,
    pub(crate) function: hiprt::hipFunction_t,
    /// The entry point's name.
    pub(crate) name: String,
    /// How a generated kernel takes its parameters (`None` for external kernels, whose ABI
    /// is read off each launch's arguments).
    pub(crate) abi: Option<spoc_codegen::Abi>,
}
// SAFETY: module and function handles may be used from any thread; launches do not mutate
// them.
unsafe impl Send for HipKernel {}
// SAFETY: as above.
unsafe impl Sync for HipKernel {}

impl Drop for HipKernel {
    fn drop(&mut self) {
        if let Err(m) = bind(self.ordinal) {
            tracing::warn!("HIP module of `{}` not unloaded: {m}", self.name);
            return;
        }
        // SAFETY: loaded by hipModuleLoadData, unloaded once.
        if let Err(m) = check(
            unsafe { hiprt::hipModuleUnload(self.module) },
            "hipModuleUnload",
        ) {
            tracing::warn!("`{}`: {m}", self.name);
        }
    }
}

/// Loads a code object (what hiprtc produced) on device `ordinal` and finds `entry` in it.
pub(crate) fn load_module(
    ordinal: c_int,
    image: &[u8],
    entry: &str,
) -> Result<(hiprt::hipModule_t, hiprt::hipFunction_t), String> {
    if image.is_empty() {
        return Err("hiprtc produced an empty code object".into());
    }
    let cname = std::ffi::CString::new(entry)
        .map_err(|_| format!("entry point name `{entry}` contains a NUL byte"))?;
    bind(ordinal)?;
    let mut module: hiprt::hipModule_t = std::ptr::null_mut();
    // SAFETY: `image` is a complete code object in host memory, alive for the call.
    check(
        unsafe { hiprt::hipModuleLoadData(&mut module, image.as_ptr().cast()) },
        "hipModuleLoadData",
    )?;
    let mut function: hiprt::hipFunction_t = std::ptr::null_mut();
    // SAFETY: a loaded module and a NUL-terminated name.
    let r = unsafe { hiprt::hipModuleGetFunction(&mut function, module, cname.as_ptr()) };
    if let Some(m) = describe(r) {
        // SAFETY: loaded above, unloaded once.
        if let Err(u) = check(unsafe { hiprt::hipModuleUnload(module) }, "hipModuleUnload") {
            tracing::warn!("{u}");
        }
        return Err(format!("hipModuleGetFunction(`{entry}`): {m}"));
    }
    Ok((module, function))
}
