//! Before cudarc is asked anything: is the library it would load there, and does it hold every
//! symbol the CUDA backends call?
//!
//! cudarc's dynamic loading opens the first library of its candidate list that loads
//! (`cudarc::get_lib_name_candidates`, in order) and resolves each function on its first call,
//! panicking if the symbol is missing. A partial or mismatched `libcuda` (a stub, an old driver,
//! a library of another vendor under that name) would therefore panic inside cudarc at some
//! later call — with `panic = "abort"`, abort the process. The probe opens the same library the
//! same way and looks up every symbol first, so the backend reports itself unavailable with the
//! missing names instead, and no panic can happen.

/// Every CUDA driver function the CUDA backends call (`sys::cu…` in `cuda/`; a unit test keeps
/// the list in step with the source).
pub(crate) const DRIVER_SYMBOLS: &[&str] = &[
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDevicePrimaryCtxRelease_v2",
    "cuDevicePrimaryCtxReset_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDeviceTotalMem_v2",
    "cuDriverGetVersion",
    "cuEventCreate",
    "cuEventDestroy_v2",
    "cuEventElapsedTime",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuFuncSetAttribute",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuInit",
    "cuLaunchKernel",
    "cuMemAlloc_v2",
    "cuMemFreeHost",
    "cuMemFree_v2",
    "cuMemHostAlloc",
    "cuMemcpyDtoD_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyHtoD_v2",
    "cuModuleGetFunction",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
];

/// The driver functions of graphs ([`crate::Stream::capture`]), checked apart: a driver
/// without them keeps the backend, and capturing reports graphs unsupported.
pub(crate) const GRAPH_SYMBOLS: &[&str] = &[
    "cuGraphDestroy",
    "cuGraphExecDestroy",
    "cuGraphInstantiateWithFlags",
    "cuGraphLaunch",
    "cuStreamBeginCapture_v2",
    "cuStreamEndCapture",
];

/// Every NVRTC function CUDA/C calls (`sys::nvrtc…` in `cuda/nvrtc.rs`).
pub(crate) const NVRTC_SYMBOLS: &[&str] = &[
    "nvrtcCompileProgram",
    "nvrtcCreateProgram",
    "nvrtcDestroyProgram",
    "nvrtcGetCUBIN",
    "nvrtcGetCUBINSize",
    "nvrtcGetErrorString",
    "nvrtcGetNumSupportedArchs",
    "nvrtcGetPTX",
    "nvrtcGetPTXSize",
    "nvrtcGetProgramLog",
    "nvrtcGetProgramLogSize",
    "nvrtcGetSupportedArchs",
    "nvrtcVersion",
];

/// Opens the library cudarc would open for `lib_names` (the first candidate that loads) and
/// checks that it exports every name in `symbols`.
///
/// # Errors
/// Why the backend cannot use it: no candidate loads, or the one that does lacks symbols (all
/// of them listed).
pub(crate) fn check_library(
    what: &str,
    lib_names: &[&str],
    symbols: &[&str],
) -> Result<(), String> {
    let candidates: Vec<String> = lib_names
        .iter()
        .flat_map(|l| cudarc::get_lib_name_candidates(l))
        .collect();
    for name in &candidates {
        // SAFETY: opening a library runs its initialisers; these are the libraries cudarc
        // itself would open (the driver's or NVRTC's), nothing is called in them here.
        let Ok(lib) = (unsafe { libloading::Library::new(name) }) else {
            continue;
        };
        let missing: Vec<&str> = symbols
            .iter()
            .copied()
            .filter(|s| {
                // SAFETY: only looks the symbol up; the pointer is never called or read.
                unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_err()
            })
            .collect();
        return if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{name} (the {what} library) lacks {} of the functions spoc calls: {}",
                missing.len(),
                missing.join(", ")
            ))
        };
    }
    Err(format!(
        "no {what} library found (tried {})",
        candidates.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `sys::cu…`/`sys::nvrtc…` call in the CUDA backends' source is in the lists (and
    /// nothing else is), so no call can reach a symbol the probe did not check.
    #[test]
    fn the_symbol_lists_match_the_source() {
        let sources = [
            include_str!("mod.rs"),
            include_str!("driver.rs"),
            include_str!("nvrtc.rs"),
        ];
        let used = |prefix: &str| {
            let mut names: Vec<String> = Vec::new();
            for src in sources {
                let pat = format!("sys::{prefix}");
                for (i, _) in src.match_indices(&pat) {
                    let rest = &src[i + 5..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    names.push(rest[..end].to_string());
                }
            }
            names.sort();
            names.dedup();
            names
        };
        let listed = |l: &[&str]| {
            let mut v: Vec<String> = l.iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        };
        let mut driver_and_graphs = DRIVER_SYMBOLS.to_vec();
        driver_and_graphs.extend_from_slice(GRAPH_SYMBOLS);
        assert_eq!(used("cu"), listed(&driver_and_graphs));
        assert_eq!(used("nvrtc"), listed(NVRTC_SYMBOLS));
    }
}
