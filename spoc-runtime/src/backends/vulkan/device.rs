//! Loading Vulkan, enumerating its devices, opening one logical device per physical device,
//! and the per-device submission lock (every command goes through its
//! [`Submitter`](super::submit::Submitter)).

use super::submit::{Locked, Submitter, BATCH_CAP, MAX_BATCH_CAP};
use super::FeatureMask;
use crate::capabilities::Capabilities;
use ash::vk;
use std::ffi::{c_char, CStr};
use std::sync::{Arc, Mutex};

/// A physical device's type, as Vulkan reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// A GPU with its own memory.
    DiscreteGpu,
    /// A GPU sharing the host's memory.
    IntegratedGpu,
    /// A GPU in a virtualised environment.
    VirtualGpu,
    /// The host's CPU (lavapipe, SwiftShader).
    Cpu,
    /// Anything else.
    Other,
}

/// One memory heap of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemoryHeap {
    /// Size in bytes.
    pub size: u64,
    /// The heap is device-local (fast for kernels).
    pub device_local: bool,
}

/// Everything the Vulkan backend knows about one device: its limits and the features it offers
/// (after [`FeatureMask`] hid some, if the backend was built with one). What fits
/// [`Capabilities`] is also there; this is the fuller picture.
#[derive(Clone, Debug, PartialEq)]
pub struct VulkanDeviceProps {
    /// The device's name.
    pub name: String,
    /// The Vulkan version the backend uses with the device, `(major, minor, patch)`: the lower
    /// of the device's and the instance's.
    pub api_version: (u32, u32, u32),
    /// The driver's version number, as the driver encodes it.
    pub driver_version: u32,
    /// PCI vendor id (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel, 0x10005 Mesa's lavapipe).
    pub vendor_id: u32,
    /// Discrete, integrated, CPU, …
    pub device_type: DeviceType,
    /// `maxComputeWorkGroupSize`: the largest workgroup (block) per axis.
    pub max_workgroup_size: [u32; 3],
    /// `maxComputeWorkGroupCount`: the largest dispatch (grid) per axis.
    pub max_workgroup_count: [u32; 3],
    /// `maxComputeWorkGroupInvocations`: most invocations (threads) per workgroup.
    pub max_invocations: u32,
    /// `maxComputeSharedMemorySize`, in bytes.
    pub shared_memory: u32,
    /// `maxStorageBufferRange`: the largest storage buffer a kernel can see, in bytes (128 MiB
    /// on lavapipe). Larger allocations are refused.
    pub max_storage_buffer_range: u64,
    /// `maxMemoryAllocationSize` (Vulkan 1.1), in bytes.
    pub max_allocation: u64,
    /// The subgroup (warp) size.
    pub subgroup_size: u32,
    /// Subgroups are available in compute shaders.
    pub subgroups_in_compute: bool,
    /// Supported subgroup operations (Vulkan 1.1): `"basic"`, `"vote"`, `"arithmetic"`,
    /// `"ballot"`, `"shuffle"`, `"shuffle_relative"`, `"clustered"`, `"quad"`.
    pub subgroup_ops: Vec<&'static str>,
    /// `shaderFloat64`.
    pub shader_float64: bool,
    /// `shaderInt64`.
    pub shader_int64: bool,
    /// `shaderInt16`.
    pub shader_int16: bool,
    /// `shaderFloat16` (Vulkan 1.2 / `VK_KHR_shader_float16_int8`).
    pub shader_float16: bool,
    /// `shaderInt8`.
    pub shader_int8: bool,
    /// `storageBuffer16BitAccess` and `uniformAndStorageBuffer16BitAccess`.
    pub storage_16bit: (bool, bool),
    /// `storageBuffer8BitAccess` and `uniformAndStorageBuffer8BitAccess`.
    pub storage_8bit: (bool, bool),
    /// `shaderBufferInt64Atomics` (Vulkan 1.2 / `VK_KHR_shader_atomic_int64`).
    pub buffer_int64_atomics: bool,
    /// `shaderSharedInt64Atomics`.
    pub shared_int64_atomics: bool,
    /// `shaderBufferFloat32AtomicAdd` (`VK_EXT_shader_atomic_float`).
    pub buffer_float32_atomic_add: bool,
    /// `shaderBufferFloat32Atomics` (load, store, exchange).
    pub buffer_float32_atomics: bool,
    /// `shaderSharedFloat32AtomicAdd`.
    pub shared_float32_atomic_add: bool,
    /// `shaderBufferFloat64AtomicAdd`.
    pub buffer_float64_atomic_add: bool,
    /// The device's memory heaps.
    pub heaps: Vec<MemoryHeap>,
    /// Nanoseconds per timestamp tick (`timestampPeriod`).
    pub timestamp_period: f32,
    /// Valid bits of the compute queue's timestamps (0: no timestamps, so no events).
    pub timestamp_valid_bits: u32,
    /// Streaming multiprocessors (`VK_NV_shader_sm_builtins`), if the driver says.
    pub sm_count: Option<u32>,
    /// The queue family the backend submits to.
    pub queue_family: u32,
    /// GLSL.std.450 `Fma` on f32 is fused (one rounding), as Rust's `mul_add` is: measured when
    /// the device is opened, on operands whose fused and unfused results differ. Vulkan allows
    /// an unfused `Fma`; kernels calling `mul_add` on f32 are refused where it is not fused.
    pub fused_fma_f32: bool,
    /// The same for f64 (lavapipe's is unfused); `false` without `shaderFloat64`.
    pub fused_fma_f64: bool,
    /// Float controls (Vulkan 1.2 / `VK_KHR_shader_float_controls`): `shaderDenormPreserveFloat`
    /// for 16, 32 and 64 bits. Generated SPIR-V declares `DenormPreserve` only where it is.
    pub denorm_preserve: [bool; 3],
    /// `shaderSignedZeroInfNanPreserveFloat` for 16, 32 and 64 bits.
    pub signed_zero_inf_nan_preserve: [bool; 3],
    /// Whether the driver keeps NaN, infinities and signed zeros in f32 (`[0]`) and f64 (`[1]`)
    /// arithmetic with constant operands, measured when the device is opened on a module that
    /// declares `SignedZeroInfNanPreserve` where the device reports it: `NaN * 0.0` must be
    /// NaN, `0.0 - 0.0` and `-0.0 + 0.0` must be `+0.0`. lavapipe (Mesa 22.3) reports the
    /// mode and folds all three; where a width fails, generated code hides its float constants
    /// from the driver (`spoc_codegen::Capabilities::float_controls_ignored`). `[1]` is `true`
    /// without `shaderFloat64`.
    pub ieee_constant_folding: [bool; 2],
    /// Storage buffers stay mapped in host memory (CPU and integrated devices), so transfers
    /// are copies; otherwise they go through a staging buffer.
    pub mapped_buffers: bool,
    /// Timeline semaphores (Vulkan 1.2 `timelineSemaphore`): launches and device copies are
    /// submitted in batches without waiting; without them each batch waits for a fence.
    pub timeline_semaphore: bool,
}

impl VulkanDeviceProps {
    /// The codegen capabilities of this device (what `spoc_codegen` may emit for it).
    pub(crate) fn codegen_caps(&self) -> spoc_codegen::Capabilities {
        spoc_codegen::Capabilities {
            fp64: self.shader_float64,
            int64_atomics: self.buffer_int64_atomics && self.shared_int64_atomics,
            float_atomic_add: self.buffer_float32_atomic_add,
            subgroups: self.subgroups_in_compute
                && ["basic", "vote", "ballot", "shuffle", "shuffle_relative"]
                    .iter()
                    .all(|op| self.subgroup_ops.contains(op)),
            compute_capability: None,
            float_controls_ignored: !(self.ieee_constant_folding[0]
                && self.ieee_constant_folding[1]),
            unfused_fma_f32: !self.fused_fma_f32,
            inline_ptx: false,
        }
    }

    /// The runtime's summary of the device.
    pub(crate) fn capabilities(&self) -> Capabilities {
        let cg = self.codegen_caps();
        let is_cpu = self.device_type == DeviceType::Cpu;
        let compute_units = match (self.sm_count, is_cpu) {
            (Some(n), _) => n,
            (None, true) => std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            (None, false) => 1,
        };
        let local: u64 = self
            .heaps
            .iter()
            .filter(|h| h.device_local)
            .map(|h| h.size)
            .sum();
        Capabilities {
            max_threads_per_block: self.max_invocations,
            max_block_dims: self.max_workgroup_size,
            max_grid_dims: self.max_workgroup_count,
            shared_mem_per_block: self.shared_memory as usize,
            warp_size: self.subgroup_size.max(1),
            compute_units,
            total_memory: if local > 0 {
                local
            } else {
                self.heaps.iter().map(|h| h.size).sum()
            },
            max_buffer_bytes: self
                .max_storage_buffer_range
                .min(if self.max_allocation > 0 {
                    self.max_allocation
                } else {
                    u64::MAX
                }),
            fp64: cg.fp64,
            int64_atomics: cg.int64_atomics,
            subgroups: cg.subgroups,
            is_cpu,
            is_gpu: matches!(
                self.device_type,
                DeviceType::DiscreteGpu | DeviceType::IntegratedGpu | DeviceType::VirtualGpu
            ),
            discrete: self.device_type == DeviceType::DiscreteGpu,
        }
    }
}

/// The loader and the instance; destroyed when the last device lets go.
pub(crate) struct Loaded {
    // Keeps the loader library mapped while the instance lives.
    _entry: ash::Entry,
    pub(crate) instance: ash::Instance,
    /// The API version asked of the instance.
    pub(crate) api: u32,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        // SAFETY: every child object (devices) holds an `Arc<Loaded>`, so none is left.
        unsafe { self.instance.destroy_instance(None) };
    }
}

/// Where buffers of a device live.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MemoryPlan {
    /// Memory type of storage buffers.
    pub(crate) buffer_type: u32,
    /// Storage buffers are host-visible and coherent: mapped, transfers are copies.
    pub(crate) buffer_mapped: bool,
    /// Host-visible coherent memory type for staging and scalar blocks.
    pub(crate) host_type: u32,
}

/// An open logical device. Everything made on it holds an `Arc<VkDev>`, so the device is
/// destroyed after them.
pub(crate) struct VkDev {
    /// Keeps the instance alive until the device is destroyed (fields drop after `drop`).
    _loaded: Arc<Loaded>,
    pub(crate) device: ash::Device,
    pub(crate) queue: vk::Queue,
    pub(crate) props: VulkanDeviceProps,
    pub(crate) caps: Capabilities,
    pub(crate) memory: vk::PhysicalDeviceMemoryProperties,
    pub(crate) plan: MemoryPlan,
    submitter: Mutex<Submitter>,
}

// SAFETY: Vulkan handles are plain identifiers; every externally synchronised use (the queue,
// the command buffer, the staging buffer) goes through `submitter`'s lock.
unsafe impl Send for VkDev {}
// SAFETY: as above.
unsafe impl Sync for VkDev {}

impl Drop for VkDev {
    fn drop(&mut self) {
        if let Err(e) = self.lock().flush() {
            tracing::warn!("Vulkan: submitting the last commands of a device: {e}");
        }
        let s = self.submitter.get_mut().unwrap_or_else(|e| e.into_inner());
        // SAFETY: nothing else refers to the device any more (every child holds an Arc); wait
        // for the queue before destroying what it may use.
        unsafe {
            let _ = self.device.device_wait_idle();
            s.destroy(&self.device);
            self.device.destroy_device(None);
        }
    }
}

impl VkDev {
    /// Locks the device for one submission.
    pub(crate) fn lock(&self) -> Locked<'_> {
        Locked {
            dev: self,
            s: self.submitter.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// A memory type among `bits` with all of `want`, the first in the driver's order (the
    /// driver lists the best first).
    pub(crate) fn memory_type(&self, bits: u32, want: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.memory.memory_type_count).find(|&i| {
            bits & (1 << i) != 0
                && self.memory.memory_types[i as usize]
                    .property_flags
                    .contains(want)
        })
    }
}

/// The result of enumerating: the devices that opened, and why others did not.
pub(crate) struct Enumeration {
    pub(crate) devices: Vec<Arc<VkDev>>,
    /// The instance's API version as `(major, minor, patch)`.
    pub(crate) version: (u32, u32, u32),
}

fn version_triple(v: u32) -> (u32, u32, u32) {
    (
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v),
    )
}

fn has_ext(exts: &[vk::ExtensionProperties], name: &CStr) -> bool {
    exts.iter().any(|e| e.extension_name_as_c_str() == Ok(name))
}

fn subgroup_op_names(ops: vk::SubgroupFeatureFlags) -> Vec<&'static str> {
    [
        (vk::SubgroupFeatureFlags::BASIC, "basic"),
        (vk::SubgroupFeatureFlags::VOTE, "vote"),
        (vk::SubgroupFeatureFlags::ARITHMETIC, "arithmetic"),
        (vk::SubgroupFeatureFlags::BALLOT, "ballot"),
        (vk::SubgroupFeatureFlags::SHUFFLE, "shuffle"),
        (
            vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE,
            "shuffle_relative",
        ),
        (vk::SubgroupFeatureFlags::CLUSTERED, "clustered"),
        (vk::SubgroupFeatureFlags::QUAD, "quad"),
    ]
    .into_iter()
    .filter(|(f, _)| ops.contains(*f))
    .map(|(_, n)| n)
    .collect()
}

/// Loads Vulkan and opens every physical device that has a compute queue and Vulkan 1.1.
///
/// # Errors
/// Why Vulkan cannot be used at all (no loader, no instance). Devices that fail to open are
/// skipped with a log line.
pub(crate) fn enumerate(mask: FeatureMask) -> Result<Enumeration, String> {
    check_environment()?;
    // SAFETY: loading the system's Vulkan loader runs its initialisers, as any Vulkan program
    // does; a missing library is an error value.
    let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
    // SAFETY: a valid entry.
    let inst_version = unsafe { entry.try_enumerate_instance_version() }
        .map_err(|e| format!("vkEnumerateInstanceVersion: {e}"))?
        .unwrap_or(vk::API_VERSION_1_0);
    let api = if inst_version >= vk::API_VERSION_1_2 {
        vk::API_VERSION_1_2
    } else if inst_version >= vk::API_VERSION_1_1 {
        vk::API_VERSION_1_1
    } else {
        return Err(format!(
            "the Vulkan loader offers Vulkan {}.{}; the backend needs 1.1",
            vk::api_version_major(inst_version),
            vk::api_version_minor(inst_version)
        ));
    };
    // SAFETY: a valid entry.
    let inst_exts =
        unsafe { entry.enumerate_instance_extension_properties(None) }.unwrap_or_default();
    let portability = has_ext(&inst_exts, ash::khr::portability_enumeration::NAME);
    let ext_ptrs: Vec<*const c_char> = if portability {
        vec![ash::khr::portability_enumeration::NAME.as_ptr()]
    } else {
        vec![]
    };
    let app = vk::ApplicationInfo::default()
        .application_name(c"spoc")
        .engine_name(c"spoc-runtime")
        .api_version(api);
    let flags = if portability {
        vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR
    } else {
        vk::InstanceCreateFlags::empty()
    };
    // SAFETY: valid create info; the names outlive the call.
    let instance = unsafe {
        entry.create_instance(
            &vk::InstanceCreateInfo::default()
                .application_info(&app)
                .enabled_extension_names(&ext_ptrs)
                .flags(flags),
            None,
        )
    }
    .map_err(|e| format!("vkCreateInstance: {e} (no Vulkan driver (ICD) found?)"))?;
    let loaded = Arc::new(Loaded {
        _entry: entry,
        instance,
        api,
    });
    // SAFETY: a live instance.
    let pdevs = unsafe { loaded.instance.enumerate_physical_devices() }
        .map_err(|e| format!("vkEnumeratePhysicalDevices: {e}"))?;
    let mut devices = Vec::new();
    for pdev in pdevs {
        // SAFETY: a physical device of this instance.
        match unsafe { open(&loaded, pdev, mask) } {
            Ok(Some(d)) => {
                let mut d = Arc::new(d);
                let fused = super::probe::fused_fma(&d);
                let props = &mut Arc::get_mut(&mut d)
                    .expect("the probe keeps no reference to the device")
                    .props;
                match fused {
                    Ok((f32_fused, f64_fused)) => {
                        props.fused_fma_f32 = f32_fused;
                        props.fused_fma_f64 = f64_fused && props.shader_float64;
                    }
                    Err(e) => tracing::warn!(
                        "Vulkan: could not measure whether {}'s Fma is fused ({e}); assuming it is",
                        props.name
                    ),
                }
                let ieee = super::probe::ieee_special_values(&d);
                let props = &mut Arc::get_mut(&mut d)
                    .expect("the probe keeps no reference to the device")
                    .props;
                match ieee {
                    Ok(kept) => {
                        if !(kept[0] && kept[1]) {
                            tracing::debug!(
                                "Vulkan: {} folds float arithmetic with constant zeros \
                                 (f32 kept: {}, f64 kept: {}): float constants are hidden from it",
                                props.name,
                                kept[0],
                                kept[1]
                            );
                        }
                        props.ieee_constant_folding = kept;
                    }
                    Err(e) => {
                        tracing::warn!(
                            "Vulkan: could not measure whether {} keeps IEEE special values ({e}); \
                             hiding float constants from it",
                            props.name
                        );
                        props.ieee_constant_folding = [false, false];
                    }
                }
                devices.push(d);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("Vulkan: a device could not be opened: {e}"),
        }
    }
    Ok(Enumeration {
        devices,
        version: version_triple(inst_version),
    })
}

/// Opens `pdev`: `Ok(None)` if it has no compute queue or only Vulkan 1.0.
///
/// # Safety
/// `pdev` must belong to `loaded`'s instance.
unsafe fn open(
    loaded: &Arc<Loaded>,
    pdev: vk::PhysicalDevice,
    mask: FeatureMask,
) -> Result<Option<VkDev>, String> {
    let inst = &loaded.instance;
    let base = inst.get_physical_device_properties(pdev);
    let name = base
        .device_name_as_c_str()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "Vulkan device".into());
    let api = base.api_version.min(loaded.api);
    if api < vk::API_VERSION_1_1 {
        tracing::info!("Vulkan: skipping {name}: it offers only Vulkan 1.0");
        return Ok(None);
    }
    let v12 = api >= vk::API_VERSION_1_2;
    let families = inst.get_physical_device_queue_family_properties(pdev);
    let compute = |q: &vk::QueueFamilyProperties| q.queue_flags.contains(vk::QueueFlags::COMPUTE);
    let Some(family) = families
        .iter()
        .position(|q| compute(q) && q.timestamp_valid_bits > 0)
        .or_else(|| families.iter().position(compute))
    else {
        tracing::info!("Vulkan: skipping {name}: no compute queue");
        return Ok(None);
    };
    let exts = inst
        .enumerate_device_extension_properties(pdev)
        .unwrap_or_default();
    let has = |n: &CStr| has_ext(&exts, n);
    let core_or = |n: &CStr| v12 || has(n);
    let f16i8_ok = core_or(ash::khr::shader_float16_int8::NAME);
    let s8_ok = core_or(ash::khr::_8bit_storage::NAME);
    let a64_ok = core_or(ash::khr::shader_atomic_int64::NAME);
    let af_ok = has(ash::ext::shader_atomic_float::NAME);
    let sm_ok = has(ash::nv::shader_sm_builtins::NAME);
    let fc_ok = core_or(ash::khr::shader_float_controls::NAME);

    // Properties.
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut maint3 = vk::PhysicalDeviceMaintenance3Properties::default();
    let mut sm = vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV::default();
    let mut fc = vk::PhysicalDeviceFloatControlsProperties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut subgroup)
        .push_next(&mut maint3);
    if sm_ok {
        props2 = props2.push_next(&mut sm);
    }
    if fc_ok {
        props2 = props2.push_next(&mut fc);
    }
    inst.get_physical_device_properties2(pdev, &mut props2);
    let limits = base.limits;

    // Features.
    let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default();
    let mut f16i8 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
    let mut s8 = vk::PhysicalDevice8BitStorageFeatures::default();
    let mut a64 = vk::PhysicalDeviceShaderAtomicInt64Features::default();
    let mut af = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
    let mut tls = vk::PhysicalDeviceTimelineSemaphoreFeatures::default();
    {
        let mut feats = vk::PhysicalDeviceFeatures2::default().push_next(&mut s16);
        if v12 {
            feats = feats.push_next(&mut tls);
        }
        if f16i8_ok {
            feats = feats.push_next(&mut f16i8);
        }
        if s8_ok {
            feats = feats.push_next(&mut s8);
        }
        if a64_ok {
            feats = feats.push_next(&mut a64);
        }
        if af_ok {
            feats = feats.push_next(&mut af);
        }
        inst.get_physical_device_features2(pdev, &mut feats);
        let b = feats.features;
        let on = |v: vk::Bool32| v == vk::TRUE;
        let memory = inst.get_physical_device_memory_properties(pdev);
        let heaps = memory.memory_heaps[..memory.memory_heap_count as usize]
            .iter()
            .map(|h| MemoryHeap {
                size: h.size,
                device_local: h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL),
            })
            .collect();
        let compute_subgroups = subgroup
            .supported_stages
            .contains(vk::ShaderStageFlags::COMPUTE);
        let mut props = VulkanDeviceProps {
            name: name.clone(),
            api_version: version_triple(api),
            driver_version: base.driver_version,
            vendor_id: base.vendor_id,
            device_type: match base.device_type {
                vk::PhysicalDeviceType::DISCRETE_GPU => DeviceType::DiscreteGpu,
                vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceType::IntegratedGpu,
                vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceType::VirtualGpu,
                vk::PhysicalDeviceType::CPU => DeviceType::Cpu,
                _ => DeviceType::Other,
            },
            max_workgroup_size: limits.max_compute_work_group_size,
            max_workgroup_count: limits.max_compute_work_group_count,
            max_invocations: limits.max_compute_work_group_invocations,
            shared_memory: limits.max_compute_shared_memory_size,
            max_storage_buffer_range: limits.max_storage_buffer_range as u64,
            max_allocation: maint3.max_memory_allocation_size,
            subgroup_size: subgroup.subgroup_size,
            subgroups_in_compute: compute_subgroups,
            subgroup_ops: if compute_subgroups {
                subgroup_op_names(subgroup.supported_operations)
            } else {
                vec![]
            },
            shader_float64: on(b.shader_float64),
            shader_int64: on(b.shader_int64),
            shader_int16: on(b.shader_int16),
            shader_float16: f16i8_ok && on(f16i8.shader_float16),
            shader_int8: f16i8_ok && on(f16i8.shader_int8),
            storage_16bit: (
                on(s16.storage_buffer16_bit_access),
                on(s16.uniform_and_storage_buffer16_bit_access),
            ),
            storage_8bit: (
                s8_ok && on(s8.storage_buffer8_bit_access),
                s8_ok && on(s8.uniform_and_storage_buffer8_bit_access),
            ),
            buffer_int64_atomics: a64_ok && on(a64.shader_buffer_int64_atomics),
            shared_int64_atomics: a64_ok && on(a64.shader_shared_int64_atomics),
            buffer_float32_atomic_add: af_ok && on(af.shader_buffer_float32_atomic_add),
            buffer_float32_atomics: af_ok && on(af.shader_buffer_float32_atomics),
            shared_float32_atomic_add: af_ok && on(af.shader_shared_float32_atomic_add),
            buffer_float64_atomic_add: af_ok && on(af.shader_buffer_float64_atomic_add),
            heaps,
            timestamp_period: limits.timestamp_period,
            timestamp_valid_bits: if limits.timestamp_compute_and_graphics == vk::TRUE
                || families[family].timestamp_valid_bits > 0
            {
                families[family].timestamp_valid_bits
            } else {
                0
            },
            sm_count: sm_ok.then_some(sm.shader_sm_count).filter(|&n| n > 0),
            queue_family: family as u32,
            // Measured once the device is open (`super::probe`).
            fused_fma_f32: true,
            fused_fma_f64: true,
            ieee_constant_folding: [true, true],
            denorm_preserve: [
                fc_ok && on(fc.shader_denorm_preserve_float16),
                fc_ok && on(fc.shader_denorm_preserve_float32),
                fc_ok && on(fc.shader_denorm_preserve_float64),
            ],
            signed_zero_inf_nan_preserve: [
                fc_ok && on(fc.shader_signed_zero_inf_nan_preserve_float16),
                fc_ok && on(fc.shader_signed_zero_inf_nan_preserve_float32),
                fc_ok && on(fc.shader_signed_zero_inf_nan_preserve_float64),
            ],
            // Set with the memory plan (`finish_open`).
            mapped_buffers: false,
            timeline_semaphore: v12 && on(tls.timeline_semaphore) && !switch(NO_TIMELINE_VAR),
        };
        mask.apply(&mut props);
        let flags = FeatureFlags::of(&props);
        let atomic_float = af_ok && flags.af.iter().any(|&f| f);
        let exts = exts_to_enable(v12, &exts, atomic_float);
        let align = limits.min_storage_buffer_offset_alignment;
        finish_open(loaded, pdev, props, memory, (flags, align), exts)
    }
}

/// The features to enable on the logical device (what [`VulkanDeviceProps`] says is there).
struct FeatureFlags {
    float64: bool,
    int64: bool,
    int16: bool,
    float16: bool,
    int8: bool,
    s16: (bool, bool),
    s8: (bool, bool),
    a64: (bool, bool),
    af: [bool; 4],
}

impl FeatureFlags {
    fn of(p: &VulkanDeviceProps) -> FeatureFlags {
        FeatureFlags {
            float64: p.shader_float64,
            int64: p.shader_int64,
            int16: p.shader_int16,
            float16: p.shader_float16,
            int8: p.shader_int8,
            s16: p.storage_16bit,
            s8: p.storage_8bit,
            a64: (p.buffer_int64_atomics, p.shared_int64_atomics),
            af: [
                p.buffer_float32_atomics,
                p.buffer_float32_atomic_add,
                p.shared_float32_atomic_add,
                p.buffer_float64_atomic_add,
            ],
        }
    }
}

/// Device extensions to enable: the promoted ones on a Vulkan 1.1 device, float atomics, and
/// the portability subset where the device has it (it must then be enabled).
fn exts_to_enable(
    v12: bool,
    exts: &[vk::ExtensionProperties],
    atomic_float: bool,
) -> Vec<&'static CStr> {
    let mut out = Vec::new();
    if !v12 {
        for n in [
            ash::khr::shader_float16_int8::NAME,
            ash::khr::_8bit_storage::NAME,
            ash::khr::shader_atomic_int64::NAME,
            ash::khr::shader_float_controls::NAME,
        ] {
            if has_ext(exts, n) {
                out.push(n);
            }
        }
    }
    if atomic_float {
        out.push(ash::ext::shader_atomic_float::NAME);
    }
    if has_ext(exts, ash::khr::portability_subset::NAME) {
        out.push(ash::khr::portability_subset::NAME);
    }
    out
}

/// Creates the logical device (with the features `f` and timeline semaphores where `props`
/// has them), its queue and its [`Submitter`]; `align` is `minStorageBufferOffsetAlignment`.
///
/// # Safety
/// `pdev` must belong to `loaded`'s instance.
unsafe fn finish_open(
    loaded: &Arc<Loaded>,
    pdev: vk::PhysicalDevice,
    props: VulkanDeviceProps,
    memory: vk::PhysicalDeviceMemoryProperties,
    (f, align): (FeatureFlags, u64),
    exts: Vec<&'static CStr>,
) -> Result<Option<VkDev>, String> {
    let inst = &loaded.instance;
    let b = |v: bool| if v { vk::TRUE } else { vk::FALSE };
    let base = vk::PhysicalDeviceFeatures::default()
        .shader_float64(f.float64)
        .shader_int64(f.int64)
        .shader_int16(f.int16);
    let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default()
        .storage_buffer16_bit_access(f.s16.0)
        .uniform_and_storage_buffer16_bit_access(f.s16.1);
    let mut f16i8 = vk::PhysicalDeviceShaderFloat16Int8Features::default()
        .shader_float16(f.float16)
        .shader_int8(f.int8);
    let mut s8 = vk::PhysicalDevice8BitStorageFeatures::default()
        .storage_buffer8_bit_access(f.s8.0)
        .uniform_and_storage_buffer8_bit_access(f.s8.1);
    let mut a64 = vk::PhysicalDeviceShaderAtomicInt64Features::default()
        .shader_buffer_int64_atomics(f.a64.0)
        .shader_shared_int64_atomics(f.a64.1);
    let mut af = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
    af.shader_buffer_float32_atomics = b(f.af[0]);
    af.shader_buffer_float32_atomic_add = b(f.af[1]);
    af.shader_shared_float32_atomic_add = b(f.af[2]);
    af.shader_buffer_float64_atomic_add = b(f.af[3]);
    let mut feats = vk::PhysicalDeviceFeatures2::default()
        .features(base)
        .push_next(&mut s16);
    if f.float16 || f.int8 {
        feats = feats.push_next(&mut f16i8);
    }
    if f.s8.0 || f.s8.1 {
        feats = feats.push_next(&mut s8);
    }
    if f.a64.0 || f.a64.1 {
        feats = feats.push_next(&mut a64);
    }
    if exts.contains(&ash::ext::shader_atomic_float::NAME) {
        feats = feats.push_next(&mut af);
    }
    let mut tls = vk::PhysicalDeviceTimelineSemaphoreFeatures::default().timeline_semaphore(true);
    if props.timeline_semaphore {
        feats = feats.push_next(&mut tls);
    }
    let ext_ptrs: Vec<*const c_char> = exts.iter().map(|n| n.as_ptr()).collect();
    let prio = [1.0f32];
    let qci = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(props.queue_family)
        .queue_priorities(&prio)];
    let device = inst
        .create_device(
            pdev,
            &vk::DeviceCreateInfo::default()
                .queue_create_infos(&qci)
                .enabled_extension_names(&ext_ptrs)
                .push_next(&mut feats),
            None,
        )
        .map_err(|e| format!("vkCreateDevice({}): {e}", props.name))?;
    let queue = device.get_device_queue(props.queue_family, 0);
    let made = Submitter::new(
        &device,
        props.queue_family,
        props.timeline_semaphore,
        props.timestamp_valid_bits > 0,
        align,
        batch_cap(),
    );
    let submitter = match made {
        Ok(s) => s,
        Err(e) => {
            device.destroy_device(None);
            return Err(e);
        }
    };
    let plan = match memory_plan(&memory, &props) {
        Some(p) => p,
        None => {
            let dev = VkDev {
                _loaded: loaded.clone(),
                device,
                queue,
                caps: props.capabilities(),
                props,
                memory,
                plan: MemoryPlan {
                    buffer_type: 0,
                    buffer_mapped: false,
                    host_type: 0,
                },
                submitter: Mutex::new(submitter),
            };
            drop(dev);
            return Err("no host-visible coherent memory type".into());
        }
    };
    let mut props = props;
    props.mapped_buffers = plan.buffer_mapped;
    Ok(Some(VkDev {
        _loaded: loaded.clone(),
        device,
        queue,
        caps: props.capabilities(),
        props,
        memory,
        plan,
        submitter: Mutex::new(submitter),
    }))
}

/// The environment variable that makes every device use staging transfers, as a discrete GPU
/// does (for testing that path on a CPU device).
pub(crate) const FORCE_STAGING_VAR: &str = "SPOC_VULKAN_FORCE_STAGING";

/// The environment variable that makes every device submit with a fence per batch, as a
/// device without timeline semaphores does (for testing that path).
pub(crate) const NO_TIMELINE_VAR: &str = "SPOC_VULKAN_NO_TIMELINE";

/// A switch read when the devices are opened ([`check_environment`] has refused a value that
/// is neither on nor off by then).
fn switch(var: &str) -> bool {
    crate::env::switch_or(var, false).unwrap_or(false)
}

/// The staging switch.
fn force_staging() -> bool {
    switch(FORCE_STAGING_VAR)
}

/// The environment variable that sets how many commands a batch holds before it is submitted
/// without being asked (1 to [`MAX_BATCH_CAP`]; default [`BATCH_CAP`]).
pub(crate) const BATCH_CAP_VAR: &str = "SPOC_VULKAN_BATCH_CAP";

/// The batch cap [`BATCH_CAP_VAR`] sets, [`BATCH_CAP`] when it is unset or empty.
///
/// # Errors
/// [`crate::Error::InvalidEnvironment`] for a value that is not a number in
/// `1..=`[`MAX_BATCH_CAP`].
fn parse_batch_cap() -> crate::Result<u32> {
    let Some(text) = crate::env::text(BATCH_CAP_VAR)? else {
        return Ok(BATCH_CAP);
    };
    match text.parse::<u32>() {
        Ok(n) if (1..=MAX_BATCH_CAP).contains(&n) => Ok(n),
        _ => Err(crate::Error::InvalidEnvironment {
            variable: BATCH_CAP_VAR.into(),
            value: text,
            expected: format!("a number of commands in 1..={MAX_BATCH_CAP}"),
        }),
    }
}

/// The batch cap (checked by [`check_environment`]).
fn batch_cap() -> u32 {
    parse_batch_cap().unwrap_or(BATCH_CAP)
}

/// Refuses the backend's environment variables when one has a value it does not take, so that
/// a typo (`SPOC_VULKAN_NO_TIMELINE=of`) makes the backend unavailable with a reason naming it
/// instead of being read as something else (the rule of [`crate::env`]).
///
/// # Errors
/// The [`crate::Error::InvalidEnvironment`] message of the first bad variable.
fn check_environment() -> Result<(), String> {
    for var in [FORCE_STAGING_VAR, NO_TIMELINE_VAR] {
        crate::env::switch(var).map_err(|e| e.to_string())?;
    }
    parse_batch_cap().map(|_| ()).map_err(|e| e.to_string())
}

/// Picks the memory types: storage buffers in device-local memory (mapped directly when it is
/// also host-visible and coherent on a CPU or integrated device, where it is the host's
/// memory anyway), staging in host-visible coherent memory (cached if possible). Which types a
/// buffer accepts is known only per buffer; storage buffers usually accept every type, and the
/// allocator falls back per buffer.
fn memory_plan(
    m: &vk::PhysicalDeviceMemoryProperties,
    p: &VulkanDeviceProps,
) -> Option<MemoryPlan> {
    use vk::MemoryPropertyFlags as F;
    let types = &m.memory_types[..m.memory_type_count as usize];
    let find = |want: F| types.iter().position(|t| t.property_flags.contains(want));
    let host = find(F::HOST_VISIBLE | F::HOST_COHERENT | F::HOST_CACHED)
        .or_else(|| find(F::HOST_VISIBLE | F::HOST_COHERENT))? as u32;
    let shared_memory =
        matches!(p.device_type, DeviceType::Cpu | DeviceType::IntegratedGpu) && !force_staging();
    let mapped_local = find(F::DEVICE_LOCAL | F::HOST_VISIBLE | F::HOST_COHERENT);
    let (buffer_type, buffer_mapped) = match (shared_memory, mapped_local, find(F::DEVICE_LOCAL)) {
        (true, Some(t), _) => (t as u32, true),
        (_, _, Some(t)) => (t as u32, false),
        _ => (host, true),
    };
    Some(MemoryPlan {
        buffer_type,
        buffer_mapped,
        host_type: host,
    })
}
