//! Compute pipelines (one per kernel and block size), argument binding and dispatch.
//!
//! A dispatch is recorded into the device's open batch ([`super::submit`]) with a descriptor
//! set and a scalar block of that batch, and returns without waiting; a timed or checked
//! dispatch (its timestamps or fault record are read at once) submits the batch and waits.

use super::device::VkDev;
use super::memory::{HostBuffer, VkBuffer};
use crate::args::Arg;
use crate::backend::CompileOptions;
use crate::dims::Dims;
use crate::error::LaunchProblem;
use ash::vk;
use spoc_codegen::abi::{Abi, Binding};
use spoc_ir::ValidKernel;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The size of the scalar block `abi` binds (0: none is bound).
fn block_bytes(abi: &Abi) -> u32 {
    abi.bindings()
        .iter()
        .find_map(|(_, b)| match b {
            Binding::ScalarBlock { bytes, .. } => Some(*bytes),
            _ => None,
        })
        .unwrap_or(0)
}

/// The number of buffers `abi` binds (at bindings `1 + j`).
fn buffer_count(abi: &Abi) -> usize {
    abi.bindings()
        .iter()
        .filter(|(_, b)| matches!(b, Binding::Buffer { .. }))
        .count()
}

/// What a generated module needs to be regenerated for another block size.
pub(crate) struct Origin {
    pub(crate) kernel: ValidKernel,
    /// Size in bytes of an element of the kernel's dynamic shared array, if it has one.
    pub(crate) dyn_elem: Option<u32>,
    pub(crate) options: CompileOptions,
}

/// A compiled kernel ([`crate::backend::Module`]'s handle): the pipeline for one block size and
/// its layouts (each launch's descriptor set and scalar block belong to its batch).
pub(crate) struct VkKernel {
    pub(crate) dev: Arc<VkDev>,
    pub(crate) name: String,
    pub(crate) block: [u32; 3],
    /// The length (elements) its dynamic shared array was specialised to, if it was.
    pub(crate) dyn_len: Option<u32>,
    /// How it takes its arguments (set 0: binding 0 the scalar block if there is one, binding
    /// `1 + j` the j-th buffer, then checked mode's fault record): the generated kernel's ABI,
    /// or for an external kernel the one read off the arguments it was built for.
    pub(crate) abi: Abi,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    /// Descriptors in its set: the scalar block's, the buffers', the fault record's.
    descriptors: u32,
    /// Binding 0 is a scalar block.
    scalar_block: bool,
    /// The timeline value of the last batch that dispatched it (0: none).
    last_use: AtomicU64,
    /// Checked mode: the fault record, zeroed before and read after each launch (under the
    /// device's lock).
    fault: Option<HostBuffer>,
    /// For generated kernels: what regenerating for another block size needs.
    pub(crate) origin: Option<Origin>,
    /// Pipelines of this kernel for other block sizes or dynamic shared lengths, made on
    /// demand.
    pub(crate) variants: Mutex<Vec<(Shape, Arc<VkKernel>)>>,
}

// SAFETY: Vulkan handles are identifiers; the fault record is written only under the device's
// lock.
unsafe impl Send for VkKernel {}
// SAFETY: as above.
unsafe impl Sync for VkKernel {}

impl Drop for VkKernel {
    fn drop(&mut self) {
        if let Err(e) = self.dev.wait_for(*self.last_use.get_mut()) {
            tracing::error!(
                "Vulkan: kernel `{}`'s last launches did not finish ({e}); leaking its pipeline",
                self.name
            );
            return;
        }
        let d = &self.dev.device;
        // SAFETY: the last batch that dispatched the kernel has finished, so nothing pending
        // uses these objects; destroying a null handle is a no-op.
        unsafe {
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            if let Some(f) = self.fault.take() {
                f.destroy(d);
            }
        }
    }
}

/// What a pipeline is specialised for: the block size and the dynamic shared array's length.
pub(crate) type Shape = ([u32; 3], Option<u32>);

/// Builds the pipeline of `entry` in `words` for `block`, with the dynamic shared array's
/// length (specialization constant `spoc_codegen::naga::DYNAMIC_SHARED_SPEC_ID`) set to
/// `dyn_len` if given.
///
/// # Errors
/// The failing Vulkan call (a driver's rejection of the module is `vkCreateComputePipelines`
/// or `vkCreateShaderModule`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    dev: &Arc<VkDev>,
    words: &[u32],
    entry: &str,
    name: &str,
    block: [u32; 3],
    dyn_len: Option<u32>,
    abi: Abi,
    origin: Option<Origin>,
) -> Result<VkKernel, String> {
    let d = &dev.device;
    let block_bytes = block_bytes(&abi);
    let nbuf = buffer_count(&abi);
    let mut k = VkKernel {
        dev: dev.clone(),
        name: name.to_string(),
        block,
        dyn_len,
        abi,
        set_layout: vk::DescriptorSetLayout::null(),
        layout: vk::PipelineLayout::null(),
        pipeline: vk::Pipeline::null(),
        descriptors: 0,
        scalar_block: block_bytes > 0,
        last_use: AtomicU64::new(0),
        fault: None,
        origin,
        variants: Mutex::new(Vec::new()),
    };
    let checked = k.abi.has_fault_record();
    let mut bindings: Vec<u32> = (0..nbuf).map(spoc_codegen::naga::buffer_binding).collect();
    if checked {
        bindings.push(spoc_codegen::naga::buffer_binding(nbuf));
    }
    if block_bytes > 0 {
        bindings.insert(0, spoc_codegen::naga::SCALAR_PARAMS_BINDING);
    }
    let layout_bindings: Vec<vk::DescriptorSetLayoutBinding> = bindings
        .iter()
        .map(|&b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    let entry_c = CString::new(entry).map_err(|_| format!("entry point `{entry}` holds a NUL"))?;
    // SAFETY: valid create infos; every object made is owned by `k`, whose Drop destroys it
    // on the error paths too.
    unsafe {
        k.set_layout = d
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings),
                None,
            )
            .map_err(|e| format!("vkCreateDescriptorSetLayout: {e}"))?;
        let set_layouts = [k.set_layout];
        k.layout = d
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
                None,
            )
            .map_err(|e| format!("vkCreatePipelineLayout: {e}"))?;
        let module = d
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
            .map_err(|e| format!("vkCreateShaderModule: {e}"))?;
        let spec_data = dyn_len.unwrap_or(0).to_le_bytes();
        let spec_entries = [vk::SpecializationMapEntry {
            constant_id: spoc_codegen::naga::DYNAMIC_SHARED_SPEC_ID,
            offset: 0,
            size: 4,
        }];
        let spec = vk::SpecializationInfo::default()
            .map_entries(&spec_entries)
            .data(&spec_data);
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&entry_c);
        if dyn_len.is_some() {
            stage = stage.specialization_info(&spec);
        }
        let made = d.create_compute_pipelines(
            vk::PipelineCache::null(),
            &[vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(k.layout)],
            None,
        );
        d.destroy_shader_module(module, None);
        k.pipeline = made.map_err(|(_, e)| format!("vkCreateComputePipelines: {e}"))?[0];
    }
    k.descriptors = bindings.len() as u32;
    if checked {
        k.fault = Some(HostBuffer::new(
            dev,
            spoc_codegen::checked::RECORD_BYTES as u64,
            vk::BufferUsageFlags::STORAGE_BUFFER,
        )?);
    }
    Ok(k)
}

/// Checks the buffers `bound` binds against the kernel's device and limits, in binding order.
fn buffers<'a>(
    k: &VkKernel,
    bound: &crate::bind::Bindings<'a>,
) -> Result<Vec<(&'a VkBuffer, u64)>, LaunchProblem> {
    let mut out = Vec::with_capacity(bound.buffers.len());
    for &(b, i) in &bound.buffers {
        let reject = |message| LaunchProblem::Rejected { message };
        let Some(vb) = b.mem().handle::<VkBuffer>() else {
            return Err(reject(format!("argument {i} is not a Vulkan buffer")));
        };
        if !Arc::ptr_eq(&vb.dev, &k.dev) {
            return Err(reject(format!(
                "argument {i} lives on another Vulkan device than the kernel"
            )));
        }
        let bytes = b.size_bytes() as u64;
        if bytes > k.dev.props.max_storage_buffer_range {
            return Err(reject(format!(
                "argument {i} has {bytes} bytes; the device binds at most {} bytes \
                 (maxStorageBufferRange)",
                k.dev.props.max_storage_buffer_range
            )));
        }
        out.push((vb, bytes));
    }
    Ok(out)
}

/// What a finished launch reports.
#[derive(Debug, Default)]
pub(crate) struct Ran {
    /// The kernel's duration in milliseconds, when timed on a device with timestamps.
    pub(crate) ms: Option<f64>,
    /// Checked mode: the fault record's words after the launch.
    pub(crate) fault: Option<Vec<u32>>,
}

/// Binds `args` and records `k` over `grid` workgroups (see [`run`]).
///
/// # Errors
/// `Err(Ok(problem))` for arguments the module cannot take (nothing ran), `Err(Err(message))`
/// for a failed Vulkan call.
pub(crate) fn dispatch(
    k: &VkKernel,
    grid: Dims,
    args: &[Arg<'_>],
    timed: bool,
) -> Result<Ran, Result<LaunchProblem, String>> {
    let bound = crate::bind::bindings(&k.abi, args).map_err(Ok)?;
    let bufs = buffers(k, &bound).map_err(Ok)?;
    run(k, grid, &bound.block, &bufs, timed).map_err(Err)
}

/// Records `k` over `grid` workgroups with `block` as its scalar block and `bufs` (buffer, bytes
/// to bind) at bindings `1 + j` (and a checked kernel's zeroed fault record after them) into
/// the device's open batch. A timed or checked dispatch is submitted and waited for at once.
///
/// # Errors
/// The failing Vulkan call.
pub(crate) fn run(
    k: &VkKernel,
    grid: Dims,
    block: &[u8],
    bufs: &[(&VkBuffer, u64)],
    timed: bool,
) -> Result<Ran, String> {
    let dev = &k.dev;
    let mut l = dev.lock();
    let timer = if timed { l.s.timer } else { None };
    let d = &dev.device;
    let set = l.descriptor_set(k.set_layout, k.descriptors)?;
    let mut infos: Vec<([vk::DescriptorBufferInfo; 1], u32)> = Vec::new();
    if k.scalar_block {
        let (buffer, offset) = l.scalars(block)?;
        let info = vk::DescriptorBufferInfo {
            buffer,
            offset,
            range: block.len() as u64,
        };
        infos.push(([info], spoc_codegen::naga::SCALAR_PARAMS_BINDING));
    }
    for (j, (b, bytes)) in bufs.iter().enumerate() {
        // The runtime array's length is the bound range over the element size, so bind exactly
        // the buffer's bytes; an empty buffer binds one byte (length 0: elements are at least
        // 2 bytes).
        let info = vk::DescriptorBufferInfo {
            buffer: b.buffer,
            offset: 0,
            range: (*bytes).max(1),
        };
        infos.push(([info], spoc_codegen::naga::buffer_binding(j)));
    }
    if let Some(f) = &k.fault {
        // SAFETY: the record's mapping holds RECORD_BYTES; no pending command uses it (checked
        // launches are waited for under the lock).
        unsafe { std::ptr::write_bytes(f.ptr.as_ptr(), 0, spoc_codegen::checked::RECORD_BYTES) };
        let info = vk::DescriptorBufferInfo {
            buffer: f.buffer,
            offset: 0,
            range: spoc_codegen::checked::RECORD_BYTES as u64,
        };
        infos.push(([info], spoc_codegen::naga::buffer_binding(bufs.len())));
    }
    let writes: Vec<vk::WriteDescriptorSet> = infos
        .iter()
        .map(|(info, b)| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(*b)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(info)
        })
        .collect();
    // SAFETY: the set is fresh, of the open batch; every buffer is live (borrowed by `args`).
    unsafe { d.update_descriptor_sets(&writes, &[]) };
    let g = grid.to_array();
    let (pipeline, layout) = (k.pipeline, k.layout);
    let used = l.record(|d, cb| {
        // SAFETY: recording into the locked command buffer with live objects of this device.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            if let Some(q) = timer {
                d.cmd_reset_query_pool(cb, q, 0, 2);
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, q, 0);
            }
            d.cmd_dispatch(cb, g[0], g[1], g[2]);
            if let Some(q) = timer {
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, q, 1);
            }
        }
    })?;
    k.last_use.fetch_max(used, Ordering::AcqRel);
    for (b, _) in bufs {
        b.used_by(used);
    }
    if timer.is_none() && k.fault.is_none() {
        return Ok(Ran::default());
    }
    l.finish()?;
    let fault = k.fault.as_ref().map(|f| {
        let mut bytes = [0u8; spoc_codegen::checked::RECORD_BYTES];
        // SAFETY: the submission has finished; the mapping holds RECORD_BYTES (coherent).
        unsafe { std::ptr::copy_nonoverlapping(f.ptr.as_ptr(), bytes.as_mut_ptr(), bytes.len()) };
        crate::checked_mode::words_of(&bytes)
    });
    let Some(q) = timer else {
        return Ok(Ran { ms: None, fault });
    };
    let mut t = [0u64; 2];
    // SAFETY: both queries were written by the finished submission.
    unsafe {
        d.get_query_pool_results(
            q,
            0,
            &mut t,
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
        )
    }
    .map_err(|e| format!("vkGetQueryPoolResults: {e}"))?;
    Ok(Ran {
        ms: Some(ticks_to_ms(&dev.props, t[0], t[1])),
        fault,
    })
}

/// Milliseconds between two timestamps of `props`'s queue.
pub(crate) fn ticks_to_ms(props: &super::VulkanDeviceProps, a: u64, b: u64) -> f64 {
    let bits = props.timestamp_valid_bits;
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let ticks = (b & mask).wrapping_sub(a & mask) & mask;
    ticks as f64 * props.timestamp_period as f64 / 1e6
}
