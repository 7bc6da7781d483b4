//! OpenCL platforms and devices: enumeration, capabilities, and the per-device state (context,
//! default command queue) the backend keeps.

use super::cl_err;
use crate::backend::DeviceInfo;
use crate::capabilities::Capabilities;
use crate::error::Result;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device as ClDeviceId, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
    CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
};
use opencl3::platform::get_platforms;
use std::collections::BTreeSet;

/// `CL_DEVICE_WARP_SIZE_NV` (`cl_nv_device_attribute_query`).
const CL_DEVICE_WARP_SIZE_NV: u32 = 0x4003;

/// `CL_PLATFORM_NOT_FOUND_KHR`: the ICD loader found no platform.
const CL_PLATFORM_NOT_FOUND_KHR: i32 = -1001;

/// One OpenCL device as the backend uses it: its description, an OpenCL context of its own and
/// the default (in-order, profiling-enabled) command queue.
pub(crate) struct ClDevice {
    /// What [`crate::Platform::devices`] reports.
    pub(crate) info: DeviceInfo,
    /// The device.
    pub(crate) id: ClDeviceId,
    /// A context holding only this device.
    pub(crate) context: Context,
    /// The default command queue (in order, profiling enabled).
    pub(crate) queue: CommandQueue,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, in bytes.
    pub(crate) max_alloc: u64,
    /// The device's OpenCL version (major, minor).
    pub(crate) version: (u32, u32),
    /// What the code generator may use on this device.
    pub(crate) codegen_caps: spoc_codegen::Capabilities,
    /// The `-cl-std=` option for subgroup kernels (OpenCL C 2.0 or 3.0), if the device has one.
    pub(crate) subgroup_std: Option<&'static str>,
    /// `CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT` is in `CL_DEVICE_SINGLE_FP_CONFIG`.
    pub(crate) correctly_rounded_div_sqrt: bool,
    /// The platform's name (for messages).
    pub(crate) platform: String,
}

impl ClDevice {
    /// Creates a command queue on this device (in order, with profiling: events need it).
    pub(crate) fn new_queue(&self) -> Result<CommandQueue> {
        new_queue(&self.context, &self.id, self.version)
    }
}

fn new_queue(context: &Context, dev: &ClDeviceId, version: (u32, u32)) -> Result<CommandQueue> {
    // SAFETY: `dev` is the device the context was created from.
    let q = unsafe {
        if version >= (2, 0) {
            CommandQueue::create_with_properties(context, dev.id(), CL_QUEUE_PROFILING_ENABLE, 0)
        } else {
            #[allow(deprecated)]
            CommandQueue::create(context, dev.id(), CL_QUEUE_PROFILING_ENABLE)
        }
    };
    q.map_err(|e| cl_err("creating a command queue", e))
}

/// `"OpenCL 3.0 PoCL …"` / `"OpenCL C 1.2 …"` -> (3, 0) / (1, 2): the first `major.minor` word.
pub(crate) fn parse_version(s: &str) -> Option<(u32, u32)> {
    s.split_whitespace().find_map(|w| {
        let (a, b) = w.split_once('.')?;
        let b: String = b.chars().take_while(char::is_ascii_digit).collect();
        Some((a.parse().ok()?, b.parse().ok()?))
    })
}

/// The result of enumerating OpenCL: the devices, or why OpenCL cannot be used.
pub(crate) struct Enumeration {
    pub(crate) devices: Vec<ClDevice>,
    /// The highest platform OpenCL version.
    pub(crate) version: (u32, u32),
}

/// Enumerates every device of every platform. A device whose context or queue cannot be created
/// is skipped (with a warning); a failure to list platforms is an error (no platform at all is
/// `Err` too, with a message saying so).
pub(crate) fn enumerate() -> std::result::Result<Enumeration, String> {
    if !cl3::is_opencl_runtime_available() {
        return Err("the OpenCL runtime (libOpenCL.so.1) could not be loaded".into());
    }
    let platforms = match get_platforms() {
        Ok(p) => p,
        Err(e) if e.0 == CL_PLATFORM_NOT_FOUND_KHR => {
            return Err("no OpenCL platform is installed (no ICD found)".into())
        }
        Err(e) => return Err(format!("clGetPlatformIDs failed: {e} ({})", e.0)),
    };
    if platforms.is_empty() {
        return Err("no OpenCL platform is installed".into());
    }
    let mut devices = Vec::new();
    let mut version = (0, 0);
    for p in &platforms {
        let pname = p.name().unwrap_or_else(|_| "?".into());
        if let Some(v) = p.version().ok().as_deref().and_then(parse_version) {
            version = version.max(v);
        }
        let ids = match p.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) => {
                tracing::warn!("OpenCL platform {pname}: listing devices failed: {e}");
                continue;
            }
        };
        for id in ids {
            let local = devices.len();
            match open_device(local, ClDeviceId::new(id), &pname) {
                Ok(d) => devices.push(d),
                Err(e) => tracing::warn!("OpenCL platform {pname}: skipping a device: {e}"),
            }
        }
    }
    Ok(Enumeration { devices, version })
}

fn has(exts: &BTreeSet<&str>, names: &[&str]) -> bool {
    names.iter().all(|n| exts.contains(n))
}

fn open_device(local: usize, dev: ClDeviceId, platform: &str) -> Result<ClDevice> {
    let q = |what: &str, e| cl_err(&format!("querying {what}"), e);
    let name = dev.name().map_err(|e| q("the device name", e))?;
    let version = dev
        .version()
        .ok()
        .as_deref()
        .and_then(parse_version)
        .unwrap_or((1, 0));
    let ext_string = dev.extensions().unwrap_or_default();
    let exts: BTreeSet<&str> = ext_string.split_whitespace().collect();
    let dev_type = dev.dev_type().map_err(|e| q("the device type", e))?;
    let is_cpu = dev_type & CL_DEVICE_TYPE_CPU != 0;
    let is_gpu = dev_type & CL_DEVICE_TYPE_GPU != 0;
    // NVIDIA (PCI vendor 0x10de): its OpenCL C compiler is NVVM, which takes inline PTX.
    let is_nvidia = is_gpu && dev.vendor_id().is_ok_and(|v| v == 0x10de);

    let max_wg = dev
        .max_work_group_size()
        .map_err(|e| q("CL_DEVICE_MAX_WORK_GROUP_SIZE", e))?;
    let max_wg = u32::try_from(max_wg).unwrap_or(u32::MAX);
    let sizes = dev
        .max_work_item_sizes()
        .map_err(|e| q("CL_DEVICE_MAX_WORK_ITEM_SIZES", e))?;
    let mut block = [1u32; 3];
    for (b, s) in block.iter_mut().zip(&sizes) {
        *b = u32::try_from(*s).unwrap_or(u32::MAX).min(max_wg);
    }

    // OpenCL C versions the compiler accepts (OpenCL 3.0 lists them all; older devices name
    // their highest one).
    let mut c_versions: Vec<(u32, u32)> = dev
        .opencl_c_all_versions()
        .map(|v| {
            v.iter()
                .map(|nv| (nv.version >> 22, (nv.version >> 12) & 0x3ff))
                .collect()
        })
        .unwrap_or_default();
    if let Some(v) = dev
        .opencl_c_version()
        .ok()
        .as_deref()
        .and_then(parse_version)
    {
        c_versions.push(v);
    }
    let c20 = c_versions.contains(&(2, 0))
        || (version < (3, 0) && c_versions.iter().any(|&v| v >= (2, 0)));
    let c30 = c_versions.contains(&(3, 0));
    let subgroup_exts = has(
        &exts,
        &[
            "cl_khr_subgroups",
            "cl_khr_subgroup_shuffle",
            "cl_khr_subgroup_shuffle_relative",
            "cl_khr_subgroup_ballot",
        ],
    );
    let subgroup_std = match (subgroup_exts, c20, c30) {
        (false, ..) => None,
        (true, true, _) => Some("-cl-std=CL2.0"),
        (true, false, true) => Some("-cl-std=CL3.0"),
        (true, false, false) => None,
    };

    let fp64 = exts.contains("cl_khr_fp64");
    let int64_atomics = has(
        &exts,
        &["cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"],
    );
    let subgroups = subgroup_std.is_some();

    let nv_u32 = |param: u32| {
        dev.get_data(param)
            .ok()
            .and_then(|b| Some(u32::from_ne_bytes(b.get(..4)?.try_into().ok()?)))
    };
    let warp_size = if exts.contains("cl_nv_device_attribute_query") {
        nv_u32(CL_DEVICE_WARP_SIZE_NV).unwrap_or(32)
    } else if exts.contains("cl_amd_device_attribute_query") {
        dev.wavefront_width_amd().unwrap_or(64)
    } else {
        1
    };

    let max_alloc = dev
        .max_mem_alloc_size()
        .map_err(|e| q("CL_DEVICE_MAX_MEM_ALLOC_SIZE", e))?;
    let caps = Capabilities {
        max_threads_per_block: max_wg,
        max_block_dims: block,
        max_grid_dims: [i32::MAX as u32; 3],
        shared_mem_per_block: dev
            .local_mem_size()
            .map(|b| usize::try_from(b).unwrap_or(usize::MAX))
            .map_err(|e| q("CL_DEVICE_LOCAL_MEM_SIZE", e))?,
        warp_size,
        compute_units: dev
            .max_compute_units()
            .map_err(|e| q("CL_DEVICE_MAX_COMPUTE_UNITS", e))?,
        total_memory: dev.global_mem_size().unwrap_or(0),
        max_buffer_bytes: max_alloc,
        fp64,
        int64_atomics,
        subgroups,
        is_cpu,
        is_gpu,
        discrete: is_gpu && !dev.host_unified_memory().unwrap_or(false),
    };
    let codegen_caps = spoc_codegen::Capabilities {
        fp64,
        int64_atomics,
        float_atomic_add: false,
        subgroups,
        compute_capability: None,
        float_controls_ignored: false,
        unfused_fma_f32: false,
        inline_ptx: is_nvidia,
    };
    let correctly_rounded_div_sqrt =
        dev.single_fp_config().unwrap_or(0) & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0;

    let context = Context::from_device(&dev).map_err(|e| cl_err("creating a context", e))?;
    let queue = new_queue(&context, &dev, version)?;
    Ok(ClDevice {
        info: DeviceInfo {
            local_id: local,
            name: name.trim().to_string(),
            capabilities: caps,
        },
        id: dev,
        context,
        queue,
        max_alloc,
        version,
        codegen_caps,
        subgroup_std,
        correctly_rounded_div_sqrt,
        platform: platform.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn versions() {
        assert_eq!(
            parse_version("OpenCL 3.0 PoCL 3.1+debian Linux"),
            Some((3, 0))
        );
        assert_eq!(parse_version("OpenCL C 1.2 PoCL"), Some((1, 2)));
        assert_eq!(parse_version("OpenCL 1.2 CUDA 12.4.99"), Some((1, 2)));
        assert_eq!(parse_version("OpenCL"), None);
    }
}
