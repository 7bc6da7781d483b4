//! A minimal Vulkan compute runner for the tests (ash): one device, host-visible storage
//! buffers, one dispatch. It binds buffers exactly as `spoc_codegen::naga` documents (set 0,
//! binding 0 the scalar block, binding 1 + j the j-th buffer parameter). Prefers lavapipe
//! (`mesa-vulkan-drivers`) when `VK_ICD_FILENAMES` is unset and its ICD file exists.
#![allow(dead_code)]

use ash::vk;
use spoc_codegen::naga::scalar_params_layout;
use spoc_codegen::Target;
use spoc_ir::Kernel;
use std::ffi::CString;
use std::sync::{Mutex, OnceLock};

const LAVAPIPE_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// An open Vulkan device with a compute queue.
pub struct Vk {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// The device's name.
    pub name: String,
    /// The subgroup size.
    pub subgroup_size: u32,
    /// Float controls: `[denorm preserve, signed zero/inf/nan preserve]` for 32 and 64 bits.
    pub float_controls: [[bool; 2]; 2],
}

/// The process-wide device (`None` without a Vulkan loader or device), behind a lock because
/// queue submission needs external synchronisation.
pub fn device() -> &'static Mutex<Option<Vk>> {
    static VK: OnceLock<Mutex<Option<Vk>>> = OnceLock::new();
    VK.get_or_init(|| {
        if std::env::var_os("VK_ICD_FILENAMES").is_none()
            && std::path::Path::new(LAVAPIPE_ICD).exists()
        {
            // Before any Vulkan call, once: the other tests wait on this initialisation.
            std::env::set_var("VK_ICD_FILENAMES", LAVAPIPE_ICD);
        }
        let vk = unsafe { Vk::open() };
        match &vk {
            Ok(v) => eprintln!(
                "Vulkan device: {} (subgroup size {}; float controls f32 [denorm preserve, \
                 signed zero/inf/nan preserve] {:?}, f64 {:?})",
                v.name, v.subgroup_size, v.float_controls[0], v.float_controls[1]
            ),
            Err(e) => eprintln!("no Vulkan device: {e}"),
        }
        Mutex::new(vk.ok())
    })
}

/// True when the environment demands a Vulkan device (a missing one is then a failure).
pub fn required() -> bool {
    std::env::var("SPOC_REQUIRE_TOOLCHAINS").as_deref() == Ok("1")
        || spoc_testkit::backends::is_required("vulkan")
}

/// Runs `f` on the process-wide [`device`]; without one, prints that `what` was skipped and
/// returns `None` (a failure when [`required`]).
pub fn with_device<R>(what: &str, f: impl FnOnce(&Vk) -> R) -> Option<R> {
    let guard = device().lock().unwrap_or_else(|e| e.into_inner());
    let Some(vk) = guard.as_ref() else {
        assert!(!required(), "no Vulkan device, and one is required");
        eprintln!("SKIPPED: {what} not run (no Vulkan device)");
        return None;
    };
    Some(f(vk))
}

/// True when the device preserves f32 subnormals (`shaderDenormPreserveFloat32`); false
/// without a device.
pub fn preserves_f32_denormals() -> bool {
    device()
        .lock()
        .map(|g| g.as_ref().is_some_and(|v| v.float_controls[0][0]))
        .unwrap_or(false)
}

impl Vk {
    unsafe fn open() -> Result<Vk, String> {
        let entry = ash::Entry::load().map_err(|e| format!("Vulkan loader: {e}"))?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
            .map_err(|e| format!("vkCreateInstance: {e}"))?;
        let pdevs = instance
            .enumerate_physical_devices()
            .map_err(|e| format!("vkEnumeratePhysicalDevices: {e}"))?;
        let Some(&pdev) = pdevs.first() else {
            return Err("no physical device".into());
        };
        let family = instance
            .get_physical_device_queue_family_properties(pdev)
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .ok_or("no compute queue")? as u32;
        let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
        let mut fc = vk::PhysicalDeviceFloatControlsProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut subgroup)
            .push_next(&mut fc);
        instance.get_physical_device_properties2(pdev, &mut props2);
        let name = props2
            .properties
            .device_name_as_c_str()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        let subgroup_size = subgroup.subgroup_size;
        let float_controls = [
            [
                fc.shader_denorm_preserve_float32 == vk::TRUE,
                fc.shader_signed_zero_inf_nan_preserve_float32 == vk::TRUE,
            ],
            [
                fc.shader_denorm_preserve_float64 == vk::TRUE,
                fc.shader_signed_zero_inf_nan_preserve_float64 == vk::TRUE,
            ],
        ];

        // Enable what the device has among the features the generated modules may declare.
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut fat = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let exts = instance
            .enumerate_device_extension_properties(pdev)
            .unwrap_or_default();
        let has_atomic_float = exts
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::shader_atomic_float::NAME));
        let mut feats = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f11)
            .push_next(&mut f12);
        if has_atomic_float {
            feats = feats.push_next(&mut fat);
        }
        instance.get_physical_device_features2(pdev, &mut feats);
        let base = feats.features;
        let mut e11 = vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(f11.storage_buffer16_bit_access == vk::TRUE)
            .uniform_and_storage_buffer16_bit_access(
                f11.uniform_and_storage_buffer16_bit_access == vk::TRUE,
            );
        let mut e12 = vk::PhysicalDeviceVulkan12Features::default()
            .shader_float16(f12.shader_float16 == vk::TRUE)
            .shader_buffer_int64_atomics(f12.shader_buffer_int64_atomics == vk::TRUE)
            .shader_shared_int64_atomics(f12.shader_shared_int64_atomics == vk::TRUE);
        let mut eat = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
            .shader_buffer_float32_atomic_add(fat.shader_buffer_float32_atomic_add == vk::TRUE);
        let enabled = vk::PhysicalDeviceFeatures::default()
            .shader_float64(base.shader_float64 == vk::TRUE)
            .shader_int64(base.shader_int64 == vk::TRUE);
        let mut enable = vk::PhysicalDeviceFeatures2::default()
            .features(enabled)
            .push_next(&mut e11)
            .push_next(&mut e12);
        let ext_names: Vec<*const std::ffi::c_char> = if has_atomic_float {
            enable = enable.push_next(&mut eat);
            vec![ash::ext::shader_atomic_float::NAME.as_ptr()]
        } else {
            vec![]
        };
        let prio = [1.0f32];
        let qci = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        let dci = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qci)
            .enabled_extension_names(&ext_names)
            .push_next(&mut enable);
        let device = instance
            .create_device(pdev, &dci, None)
            .map_err(|e| format!("vkCreateDevice: {e}"))?;
        let queue = device.get_device_queue(family, 0);
        let memory = instance.get_physical_device_memory_properties(pdev);
        Ok(Vk {
            _entry: entry,
            instance,
            device,
            queue,
            family,
            memory,
            name,
            subgroup_size,
            float_controls,
        })
    }

    /// Runs `entry` of `spirv` over `groups` workgroups with `(binding, bytes)` storage
    /// buffers; returns every buffer's bytes afterwards, in the same order.
    pub fn run(
        &self,
        spirv: &[u32],
        entry: &str,
        buffers: &[(u32, Vec<u8>)],
        groups: [u32; 3],
    ) -> Result<Vec<Vec<u8>>, String> {
        unsafe { self.run_unsafe(spirv, entry, buffers, groups, &[]) }
    }

    /// [`Vk::run`] with `u32` specialization constants `(id, value)`.
    pub fn run_spec(
        &self,
        spirv: &[u32],
        entry: &str,
        buffers: &[(u32, Vec<u8>)],
        groups: [u32; 3],
        spec: &[(u32, u32)],
    ) -> Result<Vec<Vec<u8>>, String> {
        unsafe { self.run_unsafe(spirv, entry, buffers, groups, spec) }
    }

    unsafe fn run_unsafe(
        &self,
        spirv_in: &[u32],
        entry: &str,
        buffers: &[(u32, Vec<u8>)],
        groups: [u32; 3],
        spec: &[(u32, u32)],
    ) -> Result<Vec<Vec<u8>>, String> {
        // Drop the float-controls modes this device lacks, as a Vulkan backend does.
        let fc = self.float_controls;
        let spirv_owned = spoc_codegen::naga::retain_float_controls(spirv_in, |mode, width| {
            let w = usize::from(width == 64);
            match mode {
                spoc_codegen::naga::FloatMode::DenormPreserve => fc[w][0],
                spoc_codegen::naga::FloatMode::SignedZeroInfNanPreserve => fc[w][1],
            }
        });
        let spirv = &spirv_owned[..];
        let d = &self.device;
        let err = |what: &str| {
            let what = what.to_string();
            move |e: vk::Result| format!("{what}: {e}")
        };
        let mut allocs = Vec::new();
        for (_, data) in buffers {
            let size = data.len().max(4) as u64;
            let buf = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE),
                    None,
                )
                .map_err(err("vkCreateBuffer"))?;
            let req = d.get_buffer_memory_requirements(buf);
            let want =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let ty = (0..self.memory.memory_type_count)
                .find(|&i| {
                    req.memory_type_bits & (1 << i) != 0
                        && self.memory.memory_types[i as usize]
                            .property_flags
                            .contains(want)
                })
                .ok_or("no host-visible coherent memory")?;
            let mem = d
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(ty),
                    None,
                )
                .map_err(err("vkAllocateMemory"))?;
            d.bind_buffer_memory(buf, mem, 0)
                .map_err(err("vkBindBufferMemory"))?;
            let ptr = d
                .map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(err("vkMapMemory"))? as *mut u8;
            std::ptr::copy_nonoverlapping(data.as_ptr(), ptr, data.len());
            allocs.push((buf, mem, ptr));
        }
        let bindings: Vec<vk::DescriptorSetLayoutBinding> = buffers
            .iter()
            .map(|(b, _)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(*b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_layout = d
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
            .map_err(err("vkCreateDescriptorSetLayout"))?;
        let layouts = [set_layout];
        let pipeline_layout = d
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                None,
            )
            .map_err(err("vkCreatePipelineLayout"))?;
        let module = d
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(spirv), None)
            .map_err(err("vkCreateShaderModule"))?;
        let name = CString::new(entry).map_err(|e| e.to_string())?;
        let entries: Vec<vk::SpecializationMapEntry> = spec
            .iter()
            .enumerate()
            .map(|(k, (id, _))| vk::SpecializationMapEntry {
                constant_id: *id,
                offset: 4 * k as u32,
                size: 4,
            })
            .collect();
        let data: Vec<u8> = spec.iter().flat_map(|(_, v)| v.to_le_bytes()).collect();
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&name);
        if !spec.is_empty() {
            stage = stage.specialization_info(&spec_info);
        }
        let pipeline = d
            .create_compute_pipelines(
                vk::PipelineCache::null(),
                &[vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(pipeline_layout)],
                None,
            )
            .map_err(|(_, e)| format!("vkCreateComputePipelines: {e}"))?[0];
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: buffers.len().max(1) as u32,
        }];
        let pool = d
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )
            .map_err(err("vkCreateDescriptorPool"))?;
        let set = d
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
            .map_err(err("vkAllocateDescriptorSets"))?[0];
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = allocs
            .iter()
            .map(|(buf, _, _)| {
                [vk::DescriptorBufferInfo {
                    buffer: *buf,
                    offset: 0,
                    range: vk::WHOLE_SIZE,
                }]
            })
            .collect();
        let writes: Vec<vk::WriteDescriptorSet> = buffers
            .iter()
            .zip(&infos)
            .map(|((b, _), info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(*b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        d.update_descriptor_sets(&writes, &[]);
        let cpool = d
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(self.family),
                None,
            )
            .map_err(err("vkCreateCommandPool"))?;
        let cb = d
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(cpool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
            .map_err(err("vkAllocateCommandBuffers"))?[0];
        d.begin_command_buffer(
            cb,
            &vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
        )
        .map_err(err("vkBeginCommandBuffer"))?;
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        d.cmd_bind_descriptor_sets(
            cb,
            vk::PipelineBindPoint::COMPUTE,
            pipeline_layout,
            0,
            &[set],
            &[],
        );
        d.cmd_dispatch(cb, groups[0], groups[1], groups[2]);
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ)],
            &[],
            &[],
        );
        d.end_command_buffer(cb)
            .map_err(err("vkEndCommandBuffer"))?;
        let fence = d
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(err("vkCreateFence"))?;
        let cbs = [cb];
        d.queue_submit(
            self.queue,
            &[vk::SubmitInfo::default().command_buffers(&cbs)],
            fence,
        )
        .map_err(err("vkQueueSubmit"))?;
        d.wait_for_fences(&[fence], true, 60_000_000_000)
            .map_err(err("vkWaitForFences"))?;
        let mut out = Vec::with_capacity(buffers.len());
        for ((_, data), (_, _, ptr)) in buffers.iter().zip(&allocs) {
            out.push(std::slice::from_raw_parts(*ptr, data.len()).to_vec());
        }
        d.destroy_fence(fence, None);
        d.destroy_command_pool(cpool, None);
        d.destroy_descriptor_pool(pool, None);
        d.destroy_pipeline(pipeline, None);
        d.destroy_shader_module(module, None);
        d.destroy_pipeline_layout(pipeline_layout, None);
        d.destroy_descriptor_set_layout(set_layout, None);
        for (buf, mem, _) in allocs {
            d.unmap_memory(mem);
            d.destroy_buffer(buf, None);
            d.free_memory(mem, None);
        }
        Ok(out)
    }
}

impl Drop for Vk {
    fn drop(&mut self) {
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// A scalar argument value, written into the scalar block as the ABI says.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Bool(bool),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F16(u16),
    F32(f32),
    F64(f64),
    /// Raw bytes of a record (at most 64).
    Bytes([u8; 64], usize),
}

impl Arg {
    fn bytes(self) -> Vec<u8> {
        match self {
            Arg::Bool(b) => (b as u32).to_le_bytes().to_vec(),
            Arg::I32(v) => v.to_le_bytes().to_vec(),
            Arg::U32(v) => v.to_le_bytes().to_vec(),
            Arg::I64(v) => v.to_le_bytes().to_vec(),
            Arg::U64(v) => v.to_le_bytes().to_vec(),
            Arg::F16(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
            Arg::F64(v) => v.to_le_bytes().to_vec(),
            Arg::Bytes(b, n) => b[..n].to_vec(),
        }
    }
}

/// Packs the scalar arguments (one per non-buffer parameter, in order) into the scalar block.
pub fn scalar_block(k: &Kernel, args: &[Arg]) -> Vec<u8> {
    let (slots, size) = scalar_params_layout(Target::Vulkan, k).expect("a scalar layout");
    assert_eq!(
        slots.len(),
        args.len(),
        "{}: one argument per scalar parameter",
        k.name
    );
    let mut out = vec![0u8; size as usize];
    for (s, a) in slots.iter().zip(args) {
        let b = a.bytes();
        assert_eq!(b.len(), s.size as usize, "{}: size of `{}`", k.name, s.name);
        out[s.offset as usize..][..b.len()].copy_from_slice(&b);
    }
    out
}

/// Bytes of a slice of plain values.
pub fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    let n = std::mem::size_of_val(v);
    let mut out = vec![0u8; n];
    // SAFETY: `T: Copy` plain data (numbers) is read as bytes.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr() as *const u8, out.as_mut_ptr(), n) };
    out
}

/// A slice of plain values from bytes.
pub fn from_bytes<T: Copy + Default>(b: &[u8]) -> Vec<T> {
    let n = b.len() / std::mem::size_of::<T>();
    let mut out = vec![T::default(); n];
    // SAFETY: numbers from their bytes; the length is a whole number of elements.
    unsafe {
        std::ptr::copy_nonoverlapping(
            b.as_ptr(),
            out.as_mut_ptr() as *mut u8,
            n * std::mem::size_of::<T>(),
        )
    };
    out
}
