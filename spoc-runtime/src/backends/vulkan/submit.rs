//! Batched submission: every command of a device (dispatches, copies, fills, timestamps) goes
//! through its [`Submitter`], under the device's lock.
//!
//! # Design
//! Commands are **recorded into an open command buffer** (a *batch*) and not submitted at
//! once. The batch is submitted ([`Locked::flush`]) when something needs its results or
//! would race with it — a host read or write of a buffer, a free, a synchronize, an event, a
//! timed or checked launch, the device's drop — or when it holds [`BATCH_CAP`] commands
//! (`SPOC_VULKAN_BATCH_CAP`, read when the devices are opened, sets another number: 1 submits
//! every command at once, still without waiting).
//! Each submission signals the next value of one **timeline semaphore** (Vulkan 1.2 core,
//! feature `timelineSemaphore`; spec, "Synchronization and Cache Control" › "Semaphores",
//! `VkTimelineSemaphoreSubmitInfo`, `vkWaitSemaphores`), so a flush does not wait; a sync
//! point waits once for the value it needs ([`VkDev::wait_for`]), outside the lock. Where the
//! device lacks timeline semaphores each flush waits for a fence instead (what every launch
//! did before batching): batches still save submissions and waits, but a flush blocks.
//!
//! **Order.** Before every recorded command a global memory barrier (`vkCmdPipelineBarrier`
//! with one `VkMemoryBarrier`: all commands and the host to all commands, every read and
//! write access; spec, "Pipeline Barriers" and "Global Memory Barriers") makes it wait for
//! every earlier command and see its writes, in this batch and in earlier submissions to the
//! queue (a barrier's first synchronization scope is every command earlier in submission
//! order: "Execution and Memory Dependencies", "Implicit Synchronization Guarantees"). That
//! is the order of launch every other backend has. The end of a batch has a barrier from all
//! commands to the host stage (`HOST_READ | HOST_WRITE`), so that once its value is reached
//! its writes are visible to host reads of mapped memory; the other direction needs nothing:
//! host writes before `vkQueueSubmit` are visible to the submission ("Host Write Ordering
//! Guarantees").
//!
//! **Lifetimes.** A small ring of [`RING`] slots each owns a command buffer and what the
//! dispatches recorded into it allocate: descriptor sets (from pools of the slot, reset
//! together) and the launches' scalar blocks (bump-allocated in a host-visible arena of the
//! slot). A slot is reused only after the timeline value of its last submission has passed.
//! Buffers and kernels remember the value of the last batch that used them (`last_use`) and
//! their `Drop` waits for it ([`VkDev::wait_for`]), so nothing is freed while the GPU may
//! still use it; the device's `Drop` flushes and waits for the queue.
//!
//! **Errors.** A failed submission is reported by the call that flushed (the launch that
//! filled the batch, or the sync point); a failed wait (device lost) by the sync point that
//! waited, each as the backend's usual typed error for that call. A submission that failed
//! signals nothing, so waits are clamped to the last value actually submitted.

use super::device::VkDev;
use super::memory::HostBuffer;
use ash::vk;
use std::sync::MutexGuard;

/// Commands recorded into one batch before it is submitted without being asked (by default).
pub(crate) const BATCH_CAP: u32 = 128;
/// The most a batch may be asked to hold.
pub(crate) const MAX_BATCH_CAP: u32 = 4096;
/// Command buffers (and their descriptor pools and scalar arenas) in the ring.
const RING: usize = 4;
/// Bytes of a slot's scalar-block arena.
const ARENA_BYTES: u64 = 64 << 10;
/// Descriptor sets and storage-buffer descriptors of one descriptor pool (a slot makes more
/// when it needs them).
const POOL_SETS: u32 = BATCH_CAP;
const POOL_DESCRIPTORS: u32 = 8 * BATCH_CAP;

/// A descriptor pool of a slot and what it has left until the slot is recycled.
struct Pool {
    pool: vk::DescriptorPool,
    sets: u32,
    descriptors: u32,
    /// Capacity in descriptors (pools made for one large kernel are larger).
    capacity: u32,
}

/// One command buffer of the ring and what the commands recorded into it allocated.
struct Slot {
    cb: vk::CommandBuffer,
    /// The timeline value its last submission signals (0: none yet).
    value: u64,
    pools: Vec<Pool>,
    arena: Option<HostBuffer>,
    arena_used: u64,
    /// Scalar blocks too large for the arena, each in a buffer of its own.
    extra: Vec<HostBuffer>,
}

/// What the per-device lock guards: the ring and the open batch, the timeline semaphore (or
/// the fence of the fallback), the staging buffer and the profiling queries.
pub(crate) struct Submitter {
    pool: vk::CommandPool,
    slots: Vec<Slot>,
    /// The slot of the open batch (or of the next one).
    cur: usize,
    /// A batch is open: its slot's command buffer is recording.
    open: bool,
    /// Commands recorded in the open batch.
    recorded: u32,
    /// Commands a batch holds before it is submitted.
    cap: u32,
    /// The timeline semaphore, where the device has them.
    timeline: Option<vk::Semaphore>,
    /// The fallback's fence (each flush waits for it).
    fence: vk::Fence,
    /// The value the open (or next) batch signals.
    next: u64,
    /// The value of the last successful submission.
    submitted: u64,
    /// `minStorageBufferOffsetAlignment`, for scalar blocks in the arena.
    align: u64,
    /// Two timestamp queries for profiled launches (none without timestamps).
    pub(crate) timer: Option<vk::QueryPool>,
    /// A host-visible buffer for transfers to and from device-local memory, made on first use.
    pub(crate) staging: Option<HostBuffer>,
}

fn vk_err(call: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{call}: {e}")
}

impl Submitter {
    /// The ring, the semaphore (`timeline`: the device enabled `timelineSemaphore`) or the
    /// fence, and the timestamp queries. On error whatever was made is destroyed.
    ///
    /// # Safety
    /// `device` must be a live device with a queue of `family`.
    pub(crate) unsafe fn new(
        device: &ash::Device,
        family: u32,
        timeline: bool,
        timestamps: bool,
        align: u64,
        cap: u32,
    ) -> Result<Submitter, String> {
        let pool = device
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
            .map_err(vk_err("vkCreateCommandPool"))?;
        let mut s = Submitter {
            pool,
            slots: Vec::new(),
            cur: 0,
            open: false,
            recorded: 0,
            cap: cap.clamp(1, MAX_BATCH_CAP),
            timeline: None,
            fence: vk::Fence::null(),
            next: 1,
            submitted: 0,
            align: align.max(4),
            timer: None,
            staging: None,
        };
        let made = (|| {
            let cbs = device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(RING as u32),
                )
                .map_err(vk_err("vkAllocateCommandBuffers"))?;
            s.slots = cbs
                .into_iter()
                .map(|cb| Slot {
                    cb,
                    value: 0,
                    pools: Vec::new(),
                    arena: None,
                    arena_used: 0,
                    extra: Vec::new(),
                })
                .collect();
            if timeline {
                let mut ty = vk::SemaphoreTypeCreateInfo::default()
                    .semaphore_type(vk::SemaphoreType::TIMELINE)
                    .initial_value(0);
                s.timeline = Some(
                    device
                        .create_semaphore(
                            &vk::SemaphoreCreateInfo::default().push_next(&mut ty),
                            None,
                        )
                        .map_err(vk_err("vkCreateSemaphore"))?,
                );
            } else {
                s.fence = device
                    .create_fence(&vk::FenceCreateInfo::default(), None)
                    .map_err(vk_err("vkCreateFence"))?;
            }
            if timestamps {
                s.timer = device
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(2),
                        None,
                    )
                    .ok();
            }
            Ok(())
        })();
        match made {
            Ok(()) => Ok(s),
            Err(e) => {
                s.destroy(device);
                Err(e)
            }
        }
    }

    /// Destroys everything. Nothing may be pending (the caller waited for the queue).
    ///
    /// # Safety
    /// `device` is the one it was made on, idle.
    pub(crate) unsafe fn destroy(&mut self, device: &ash::Device) {
        for slot in &mut self.slots {
            slot.release(device);
            for p in slot.pools.drain(..) {
                device.destroy_descriptor_pool(p.pool, None);
            }
            if let Some(a) = slot.arena.take() {
                a.destroy(device);
            }
        }
        if let Some(st) = self.staging.take() {
            st.destroy(device);
        }
        if let Some(q) = self.timer.take() {
            device.destroy_query_pool(q, None);
        }
        if let Some(t) = self.timeline.take() {
            device.destroy_semaphore(t, None);
        }
        device.destroy_fence(self.fence, None);
        device.destroy_command_pool(self.pool, None);
    }
}

impl Slot {
    /// Frees what the slot's commands allocated: its last submission has finished.
    ///
    /// # Safety
    /// No pending command uses the slot.
    unsafe fn release(&mut self, device: &ash::Device) {
        for p in &mut self.pools {
            let _ = device.reset_descriptor_pool(p.pool, vk::DescriptorPoolResetFlags::empty());
            p.sets = POOL_SETS;
            p.descriptors = p.capacity;
        }
        for b in self.extra.drain(..) {
            b.destroy(device);
        }
        self.arena_used = 0;
    }
}

/// Waits until `sem` reaches `value`.
fn wait_value(device: &ash::Device, sem: vk::Semaphore, value: u64) -> Result<(), String> {
    let (sems, values) = ([sem], [value]);
    // SAFETY: a live timeline semaphore of this device; waiting needs no external
    // synchronisation.
    unsafe {
        device.wait_semaphores(
            &vk::SemaphoreWaitInfo::default()
                .semaphores(&sems)
                .values(&values),
            u64::MAX,
        )
    }
    .map_err(vk_err("vkWaitSemaphores"))
}

/// The global memory barrier before every command: all earlier commands (and host writes) to
/// all later commands, every access.
unsafe fn barrier(d: &ash::Device, cb: vk::CommandBuffer, to_host: bool) {
    let all = vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE;
    let (src_stage, dst_stage, src, dst) = if to_host {
        (
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::HOST,
            all,
            vk::AccessFlags::HOST_READ | vk::AccessFlags::HOST_WRITE,
        )
    } else {
        (
            vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
            vk::PipelineStageFlags::ALL_COMMANDS,
            all | vk::AccessFlags::HOST_WRITE,
            all,
        )
    };
    d.cmd_pipeline_barrier(
        cb,
        src_stage,
        dst_stage,
        vk::DependencyFlags::empty(),
        &[vk::MemoryBarrier::default()
            .src_access_mask(src)
            .dst_access_mask(dst)],
        &[],
        &[],
    );
}

/// A locked device: its submitter.
pub(crate) struct Locked<'a> {
    pub(crate) dev: &'a VkDev,
    pub(crate) s: MutexGuard<'a, Submitter>,
}

impl Locked<'_> {
    /// Opens a batch if none is: takes the ring's next slot, waiting for its last submission
    /// and recycling what it allocated.
    fn open(&mut self) -> Result<(), String> {
        if self.s.open {
            return Ok(());
        }
        let d = &self.dev.device;
        let s = &mut *self.s;
        let slot = &mut s.slots[s.cur];
        if let (Some(sem), true) = (s.timeline, slot.value > 0) {
            wait_value(d, sem, slot.value)?;
        }
        // SAFETY: the slot's last submission has finished (waited above, or by the fence).
        unsafe {
            slot.release(d);
            d.reset_command_buffer(slot.cb, vk::CommandBufferResetFlags::empty())
                .map_err(vk_err("vkResetCommandBuffer"))?;
            d.begin_command_buffer(
                slot.cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vk_err("vkBeginCommandBuffer"))?;
        }
        s.open = true;
        Ok(())
    }

    /// Records `record`'s commands into the open batch (opened if needed) behind a global
    /// memory barrier, and returns the timeline value the batch will signal (what users of
    /// the commands' objects keep as `last_use`). A batch reaching its cap ([`BATCH_CAP`] by
    /// default) is submitted.
    ///
    /// # Errors
    /// The failing Vulkan call's name and result.
    pub(crate) fn record(
        &mut self,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> Result<u64, String> {
        self.open()?;
        let d = &self.dev.device;
        let cb = self.s.slots[self.s.cur].cb;
        // SAFETY: the open batch's command buffer, recorded under the device's lock.
        unsafe { barrier(d, cb, false) };
        record(d, cb);
        self.s.recorded += 1;
        let value = self.s.next;
        if self.s.recorded >= self.s.cap {
            self.flush()?;
        }
        Ok(value)
    }

    /// Submits the open batch, if any (with the fallback, waits for it), and returns the value
    /// a wait for everything recorded so far waits for.
    ///
    /// # Errors
    /// The failing Vulkan call's name and result; the batch is then dropped.
    pub(crate) fn flush(&mut self) -> Result<u64, String> {
        if !self.s.open {
            return Ok(self.s.submitted);
        }
        let d = &self.dev.device;
        let queue = self.dev.queue;
        let s = &mut *self.s;
        let value = s.next;
        s.next += 1;
        s.open = false;
        s.recorded = 0;
        let cur = s.cur;
        s.cur = (cur + 1) % RING;
        let slot = &mut s.slots[cur];
        let cbs = [slot.cb];
        let (sems, values) = ([s.timeline.unwrap_or_default()], [value]);
        let mut tl = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
        let mut info = vk::SubmitInfo::default().command_buffers(&cbs);
        if s.timeline.is_some() {
            info = info.signal_semaphores(&sems).push_next(&mut tl);
        }
        // SAFETY: the batch's command buffer, recorded under the lock; the queue is used only
        // under it.
        unsafe {
            barrier(d, slot.cb, true);
            d.end_command_buffer(slot.cb)
                .map_err(vk_err("vkEndCommandBuffer"))?;
            d.queue_submit(queue, &[info], s.fence)
                .map_err(vk_err("vkQueueSubmit"))?;
        }
        slot.value = value;
        s.submitted = value;
        if s.timeline.is_none() {
            // SAFETY: the fence was just submitted; reset even after a failed wait so that
            // the next submission does not use a signalled fence.
            unsafe {
                let waited = d
                    .wait_for_fences(&[s.fence], true, u64::MAX)
                    .map_err(vk_err("vkWaitForFences"));
                let reset = d.reset_fences(&[s.fence]).map_err(vk_err("vkResetFences"));
                waited.and(reset)?;
            }
        }
        Ok(value)
    }

    /// Submits the open batch and waits for everything submitted, under the lock (for commands
    /// whose results the caller reads under it: staging copies, timestamps, fault records).
    pub(crate) fn finish(&mut self) -> Result<(), String> {
        let value = self.flush()?;
        match self.s.timeline {
            Some(sem) if value > 0 => wait_value(&self.dev.device, sem, value),
            _ => Ok(()),
        }
    }

    /// Records `record`'s commands, submits them and waits for them (and all earlier work).
    pub(crate) fn run(
        &mut self,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> Result<(), String> {
        self.record(record)?;
        self.finish()
    }

    /// A descriptor set of `layout` with `descriptors` storage buffers, alive until the open
    /// batch (opened if needed) has finished.
    pub(crate) fn descriptor_set(
        &mut self,
        layout: vk::DescriptorSetLayout,
        descriptors: u32,
    ) -> Result<vk::DescriptorSet, String> {
        self.open()?;
        let d = &self.dev.device;
        let s = &mut *self.s;
        let slot = &mut s.slots[s.cur];
        let n = descriptors.max(1);
        let i = match slot
            .pools
            .iter()
            .position(|p| p.sets > 0 && p.descriptors >= n)
        {
            Some(i) => i,
            None => {
                let capacity = POOL_DESCRIPTORS.max(n);
                let sizes = [vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::STORAGE_BUFFER,
                    descriptor_count: capacity,
                }];
                // SAFETY: a valid create info on a live device.
                let pool = unsafe {
                    d.create_descriptor_pool(
                        &vk::DescriptorPoolCreateInfo::default()
                            .max_sets(POOL_SETS)
                            .pool_sizes(&sizes),
                        None,
                    )
                }
                .map_err(vk_err("vkCreateDescriptorPool"))?;
                slot.pools.push(Pool {
                    pool,
                    sets: POOL_SETS,
                    descriptors: capacity,
                    capacity,
                });
                slot.pools.len() - 1
            }
        };
        let p = &mut slot.pools[i];
        let layouts = [layout];
        // SAFETY: the pool has room for the set (counted); it is reset only when the slot is
        // recycled, after its submission finished.
        let set = unsafe {
            d.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(p.pool)
                    .set_layouts(&layouts),
            )
        }
        .map_err(vk_err("vkAllocateDescriptorSets"))?[0];
        p.sets -= 1;
        p.descriptors -= n;
        Ok(set)
    }

    /// Copies `bytes` into host-visible memory alive until the open batch has finished, and
    /// returns the buffer and offset to bind them at.
    pub(crate) fn scalars(&mut self, bytes: &[u8]) -> Result<(vk::Buffer, u64), String> {
        self.open()?;
        let dev = self.dev;
        let s = &mut *self.s;
        let align = s.align;
        let slot = &mut s.slots[s.cur];
        let len = bytes.len() as u64;
        let at = slot.arena_used.next_multiple_of(align);
        let (buf, ptr, offset) = if at + len <= ARENA_BYTES {
            if slot.arena.is_none() {
                slot.arena = Some(HostBuffer::new(
                    dev,
                    ARENA_BYTES,
                    vk::BufferUsageFlags::STORAGE_BUFFER,
                )?);
            }
            let a = slot.arena.as_ref().expect("made above");
            slot.arena_used = at + len;
            (a.buffer, a.ptr, at)
        } else {
            let b = HostBuffer::new(dev, len, vk::BufferUsageFlags::STORAGE_BUFFER)?;
            let r = (b.buffer, b.ptr, 0);
            slot.extra.push(b);
            r
        };
        // SAFETY: `[offset, offset + len)` lies in the mapping and no pending command uses it
        // (the slot was recycled after its last submission).
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                ptr.as_ptr().add(offset as usize),
                bytes.len(),
            )
        };
        Ok((buf, offset))
    }
}

impl VkDev {
    /// Waits until the batch that signals `value` (and every earlier one) has finished,
    /// submitting the open batch first if `value` is its own. The wait happens outside the
    /// lock. `u64::MAX` waits for everything recorded so far.
    ///
    /// # Errors
    /// The failing submission or wait (device lost).
    pub(crate) fn wait_for(&self, value: u64) -> Result<(), String> {
        if value == 0 {
            return Ok(());
        }
        let mut l = self.lock();
        if value >= l.s.next {
            l.flush()?;
        }
        let (target, sem) = (value.min(l.s.submitted), l.s.timeline);
        drop(l);
        match sem {
            Some(sem) if target > 0 => wait_value(&self.device, sem, target),
            _ => Ok(()),
        }
    }

    /// Submits everything recorded and waits for it.
    pub(crate) fn sync(&self) -> Result<(), String> {
        self.wait_for(u64::MAX)
    }
}
