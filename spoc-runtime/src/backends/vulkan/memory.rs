//! Storage buffers and transfers.
//!
//! Every allocation is one `VkBuffer` (usage storage + transfer source and destination) bound
//! to its own `VkDeviceMemory`. Where the device's memory is the host's (a CPU or integrated
//! device with host-visible coherent device-local memory) the buffer stays mapped and
//! transfers are plain copies; otherwise transfers go through the device's staging buffer
//! ([`STAGING_BYTES`] at a time) and `vkCmdCopyBuffer`, under the device's lock.
//!
//! Transfers with the host are sync points of the [batched submission](super::submit): a
//! mapped buffer's are copies after waiting for the last batch that used the buffer, a
//! staging transfer submits its copy with the open batch and waits for it. Device-side copies
//! and the zeroing of a new buffer are recorded into the open batch. A buffer's `Drop` waits
//! for the last batch that used it.

use super::device::VkDev;
use super::submit::Locked;
use ash::vk;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Size of a device's staging buffer, in bytes: larger transfers go in pieces.
pub(crate) const STAGING_BYTES: u64 = 16 << 20;

/// A host-visible, coherent, mapped buffer (staging, scalar blocks). Destroyed explicitly by
/// its owner, which knows the device.
pub(crate) struct HostBuffer {
    pub(crate) buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    pub(crate) ptr: NonNull<u8>,
}

// SAFETY: the mapping is plain memory, written only under the owning device's lock or by the
// owner of a `&mut`.
unsafe impl Send for HostBuffer {}
// SAFETY: as above.
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// A mapped buffer of `size` bytes (at least 4) in `dev`'s host-visible coherent memory.
    pub(crate) fn new(
        dev: &VkDev,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<HostBuffer, String> {
        let size = size.max(4).next_multiple_of(4);
        let (buffer, memory) = make_buffer(dev, size, usage, |bits| {
            if bits & (1 << dev.plan.host_type) != 0 {
                Some(dev.plan.host_type)
            } else {
                dev.memory_type(
                    bits,
                    vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
                )
            }
        })?;
        // SAFETY: host-visible memory of this device, mapped once.
        let ptr = unsafe {
            dev.device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
        };
        match ptr.ok().and_then(|p| NonNull::new(p.cast::<u8>())) {
            Some(ptr) => Ok(HostBuffer {
                buffer,
                memory,
                ptr,
            }),
            None => {
                // SAFETY: just created, unused.
                unsafe {
                    dev.device.destroy_buffer(buffer, None);
                    dev.device.free_memory(memory, None);
                }
                Err("vkMapMemory failed".into())
            }
        }
    }

    /// Destroys the buffer and frees its memory.
    ///
    /// # Safety
    /// No pending command may use it; `device` must be the one it was made on.
    pub(crate) unsafe fn destroy(self, device: &ash::Device) {
        device.destroy_buffer(self.buffer, None);
        device.free_memory(self.memory, None);
    }
}

/// Creates a buffer and binds fresh memory of the type `pick` chooses among the allowed bits.
fn make_buffer(
    dev: &VkDev,
    size: u64,
    usage: vk::BufferUsageFlags,
    pick: impl FnOnce(u32) -> Option<u32>,
) -> Result<(vk::Buffer, vk::DeviceMemory), String> {
    let d = &dev.device;
    // SAFETY: valid create infos; every object is destroyed on the error paths.
    unsafe {
        let buffer = d
            .create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(size)
                    .usage(usage)
                    .sharing_mode(vk::SharingMode::EXCLUSIVE),
                None,
            )
            .map_err(|e| format!("vkCreateBuffer of {size} bytes: {e}"))?;
        let req = d.get_buffer_memory_requirements(buffer);
        let Some(ty) = pick(req.memory_type_bits) else {
            d.destroy_buffer(buffer, None);
            return Err(format!(
                "no suitable memory type among {:#b}",
                req.memory_type_bits
            ));
        };
        let memory = match d.allocate_memory(
            &vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(ty),
            None,
        ) {
            Ok(m) => m,
            Err(e) => {
                d.destroy_buffer(buffer, None);
                return Err(format!("vkAllocateMemory of {} bytes: {e}", req.size));
            }
        };
        if let Err(e) = d.bind_buffer_memory(buffer, memory, 0) {
            d.destroy_buffer(buffer, None);
            d.free_memory(memory, None);
            return Err(format!("vkBindBufferMemory: {e}"));
        }
        Ok((buffer, memory))
    }
}

/// The handle of a Vulkan allocation ([`crate::backend::DeviceMem::handle`]): a storage buffer
/// of at least `bytes` bytes (rounded up to 4, and at least 4), mapped if the device's plan
/// says so. Freed when dropped.
pub(crate) struct VkBuffer {
    pub(crate) dev: Arc<VkDev>,
    pub(crate) buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// The mapping, for host-visible coherent storage.
    pub(crate) mapped: Option<NonNull<u8>>,
    /// The timeline value of the last batch that used the buffer (0: none).
    pub(crate) last_use: AtomicU64,
}

// SAFETY: handles are identifiers; the mapping is written only through `&DeviceMem` transfers
// whose callers own the buffer's contents (the runtime's borrow rules), as device copies would.
unsafe impl Send for VkBuffer {}
// SAFETY: as above.
unsafe impl Sync for VkBuffer {}

impl Drop for VkBuffer {
    fn drop(&mut self) {
        if let Err(e) = self.dev.wait_for(*self.last_use.get_mut()) {
            tracing::error!(
                "Vulkan: a buffer's last commands did not finish ({e}); leaking the buffer"
            );
            return;
        }
        // SAFETY: the last batch that used the buffer has finished, so no pending command uses
        // it; the memory is unmapped implicitly when freed.
        unsafe {
            self.dev.device.destroy_buffer(self.buffer, None);
            self.dev.device.free_memory(self.memory, None);
        }
    }
}

impl VkBuffer {
    /// Notes that the batch signalling `value` uses the buffer.
    pub(crate) fn used_by(&self, value: u64) {
        self.last_use.fetch_max(value, Ordering::AcqRel);
    }

    /// Waits for the commands that use the buffer (before a host access of its mapping).
    pub(crate) fn settle(&self) -> Result<(), String> {
        self.dev.wait_for(self.last_use.load(Ordering::Acquire))
    }

    /// Allocates `bytes` bytes, zeroed.
    pub(crate) fn alloc(dev: &Arc<VkDev>, bytes: u64) -> Result<VkBuffer, String> {
        let size = bytes.max(4).next_multiple_of(4);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let plan = dev.plan;
        let mut mapped_type = plan.buffer_mapped;
        let (buffer, memory) = make_buffer(dev, size, usage, |bits| {
            if bits & (1 << plan.buffer_type) != 0 {
                return Some(plan.buffer_type);
            }
            mapped_type = false;
            dev.memory_type(bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)
                .or_else(|| dev.memory_type(bits, vk::MemoryPropertyFlags::empty()))
        })?;
        let mut buf = VkBuffer {
            dev: dev.clone(),
            buffer,
            memory,
            mapped: None,
            last_use: AtomicU64::new(0),
        };
        if mapped_type {
            // SAFETY: host-visible memory of this device, mapped once for its lifetime.
            let p = unsafe {
                dev.device
                    .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            }
            .map_err(|e| format!("vkMapMemory: {e}"))?;
            let p = NonNull::new(p.cast::<u8>()).ok_or("vkMapMemory returned null")?;
            // SAFETY: the mapping covers at least `size` bytes.
            unsafe { std::ptr::write_bytes(p.as_ptr(), 0, size as usize) };
            buf.mapped = Some(p);
        } else {
            let used = dev.lock().record(|d, cb| {
                // SAFETY: recording into the locked command buffer; the buffer is live.
                unsafe { d.cmd_fill_buffer(cb, buffer, 0, vk::WHOLE_SIZE, 0) }
            })?;
            buf.used_by(used);
        }
        Ok(buf)
    }

    /// Copies `bytes` bytes from `src` into the buffer at `offset` (range checked by the caller).
    ///
    /// # Safety
    /// `src` must be readable for `bytes` bytes.
    pub(crate) unsafe fn write(
        &self,
        offset: u64,
        src: *const u8,
        bytes: u64,
    ) -> Result<(), String> {
        if let Some(p) = self.mapped {
            self.settle()?;
            std::ptr::copy_nonoverlapping(src, p.as_ptr().add(offset as usize), bytes as usize);
            return Ok(());
        }
        let mut l = self.dev.lock();
        let mut done = 0;
        while done < bytes {
            let n = (bytes - done).min(STAGING_BYTES);
            let staging = staging(&mut l)?;
            std::ptr::copy_nonoverlapping(src.add(done as usize), staging.0.as_ptr(), n as usize);
            let (sbuf, dst) = (staging.1, self.buffer);
            l.run(|d, cb| {
                d.cmd_copy_buffer(
                    cb,
                    sbuf,
                    dst,
                    &[vk::BufferCopy {
                        src_offset: 0,
                        dst_offset: offset + done,
                        size: n,
                    }],
                )
            })?;
            done += n;
        }
        Ok(())
    }

    /// Copies `bytes` bytes of the buffer from `offset` into `dst` (range checked by the caller).
    ///
    /// # Safety
    /// `dst` must be writable for `bytes` bytes.
    pub(crate) unsafe fn read(&self, offset: u64, dst: *mut u8, bytes: u64) -> Result<(), String> {
        if let Some(p) = self.mapped {
            self.settle()?;
            std::ptr::copy_nonoverlapping(p.as_ptr().add(offset as usize), dst, bytes as usize);
            return Ok(());
        }
        let mut l = self.dev.lock();
        let mut done = 0;
        while done < bytes {
            let n = (bytes - done).min(STAGING_BYTES);
            let (sptr, sbuf) = staging(&mut l)?;
            let src = self.buffer;
            l.run(|d, cb| {
                d.cmd_copy_buffer(
                    cb,
                    src,
                    sbuf,
                    &[vk::BufferCopy {
                        src_offset: offset + done,
                        dst_offset: 0,
                        size: n,
                    }],
                )
            })?;
            std::ptr::copy_nonoverlapping(sptr.as_ptr(), dst.add(done as usize), n as usize);
            done += n;
        }
        Ok(())
    }

    /// Copies the first `bytes` bytes of `src` into this buffer on the device, in the open
    /// batch (even between mapped buffers: a host copy would have to wait for it).
    pub(crate) fn copy_from(&self, src: &VkBuffer, bytes: u64) -> Result<(), String> {
        let (s, t) = (src.buffer, self.buffer);
        let used = self.dev.lock().record(|d, cb| {
            // SAFETY: recording into the locked command buffer; both buffers are live.
            unsafe {
                d.cmd_copy_buffer(
                    cb,
                    s,
                    t,
                    &[vk::BufferCopy {
                        src_offset: 0,
                        dst_offset: 0,
                        size: bytes,
                    }],
                )
            }
        })?;
        self.used_by(used);
        src.used_by(used);
        Ok(())
    }
}

/// The locked device's staging buffer (made on first use): its mapping and handle.
fn staging(l: &mut Locked<'_>) -> Result<(NonNull<u8>, vk::Buffer), String> {
    if l.s.staging.is_none() {
        l.s.staging = Some(HostBuffer::new(
            l.dev,
            STAGING_BYTES,
            vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
        )?);
    }
    let st = l.s.staging.as_ref().expect("made above");
    Ok((st.ptr, st.buffer))
}
