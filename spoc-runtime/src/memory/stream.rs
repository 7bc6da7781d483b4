//! Streams for users: [`Stream`] (an ordered queue of launches and copies on one device, a
//! CUDA stream or an OpenCL command queue underneath), [`Event`] (a point in a stream, for
//! ordering across streams and timing) and [`HostBuffer`] (host memory, page-locked where the
//! backend has it, for asynchronous copies). Sarek's `Stream` and `Event` modules, in Rust's
//! terms.
//!
//! # Safety: use tracking (docs/DESIGN.md §5, "Streams")
//! Work queued on a stream returns before it has run, so the memory it uses must outlive it
//! and must not be touched by the host meanwhile. Every [`crate::Buffer`] and [`HostBuffer`]
//! remembers the streams that have queued work on it (a [`Uses`] list: stream, sequence number,
//! whether it writes). Every host access waits first: reading a buffer waits for the queued
//! writes to it, writing or freeing it waits for every queued use, a launch on the default
//! stream waits like the host, and work queued on another stream waits on the host for the
//! conflicting work of the first (unless that stream already waited for it through an
//! [`Event`]). Streams are reference-counted: a buffer keeps the streams it waits for alive,
//! and the last handle of a stream synchronizes it before destroying it. So safe code cannot
//! read, write or free memory that queued work still uses, whatever it drops, leaks or
//! forgets; the borrow checker adds the rest (a slice of a [`HostBuffer`] borrows it, so no
//! copy can be queued on it while the slice lives).

use crate::backend::{self, DeviceMem, Event as EventHandle, Stream as StreamHandle};
use crate::buffer::{Buffer, DeviceCopy};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::executor::Backend;
use crate::memory::graph::{GraphOp, Held};
use smallvec::SmallVec;
use std::alloc::Layout;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);

/// The state of one stream that its handles, events and the buffers it used share.
pub(crate) struct StreamShared {
    id: u64,
    device: Device,
    handle: Option<StreamHandle>,
    /// The sequence number of the last piece of work queued (0: none).
    submitted: AtomicU64,
    /// Every piece of work up to this sequence number has finished.
    completed: AtomicU64,
    /// Held while work is queued, so that sequence numbers follow the stream's order.
    queue: Mutex<()>,
    /// For each other stream (by id), the sequence number up to which this stream's later work
    /// waits for it on the device ([`Stream::wait_for`]).
    waited: Mutex<Vec<(u64, u64)>>,
    /// While a graph is captured on the stream ([`Stream::capture`]): the work recorded so
    /// far, instead of running.
    capture: Mutex<Option<Vec<GraphOp>>>,
    /// Whether `capture` is `Some` (read without the lock on every launch).
    capturing: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl StreamShared {
    fn handle(&self) -> &StreamHandle {
        self.handle
            .as_ref()
            .expect("a stream holds its handle until dropped")
    }

    /// Waits until the work up to `seq` has finished.
    fn wait_until(&self, seq: u64) -> Result<()> {
        if self.completed.load(Ordering::Acquire) >= seq {
            return Ok(());
        }
        self.synchronize()
    }

    fn synchronize(&self) -> Result<()> {
        let target = self.submitted.load(Ordering::Acquire);
        self.device.backend().synchronize_stream(self.handle())?;
        self.completed.fetch_max(target, Ordering::AcqRel);
        Ok(())
    }

    /// True if this stream's work queued from now on already waits (on the device) for
    /// `other`'s work up to `seq`.
    fn ordered_after(&self, other: u64, seq: u64) -> bool {
        other == self.id
            || lock(&self.waited)
                .iter()
                .any(|&(s, q)| s == other && q >= seq)
    }
}

impl Drop for StreamShared {
    fn drop(&mut self) {
        if let Err(e) = self.synchronize() {
            tracing::warn!(
                "synchronizing a stream of {} before destroying it: {e}",
                self.device
            );
        }
        if let Some(h) = self.handle.take() {
            if let Err(e) = self.device.backend().destroy_stream(h) {
                tracing::warn!("destroying a stream of {}: {e}", self.device);
            }
        }
    }
}

/// One piece of queued work on a buffer.
struct Use {
    stream: Arc<StreamShared>,
    seq: u64,
    write: bool,
}

impl Use {
    fn done(&self) -> bool {
        self.stream.completed.load(Ordering::Acquire) >= self.seq
    }
}

/// What a [`Uses`] lock guards: the queued work on one piece of memory, and (for a
/// [`HostBuffer`]) the host's live slices of it.
#[derive(Default)]
pub(crate) struct UseState {
    list: Vec<Use>,
    /// Live [`HostSlice`]s.
    readers: usize,
    /// A live [`HostSliceMut`].
    writer: bool,
}

/// The streams with work queued on one buffer (device or host memory) that may not have
/// finished: what a host access, a free, or work on another stream waits for first.
///
/// Its lock is held while work on the memory is queued ([`Stream::enqueue`]) and while the
/// host accesses it ([`Uses::settle`]'s guard), so that a [`crate::Graph`] replayed on
/// another thread (which holds the memory without a Rust borrow) can never queue work on
/// memory between a host access's wait and the access itself.
#[derive(Default)]
pub(crate) struct Uses(Mutex<UseState>);

/// The lock of a settled [`Uses`]: while it lives no work can be queued on the memory.
pub(crate) struct Settled<'a>(MutexGuard<'a, UseState>);

impl UseState {
    #[inline]
    fn settle(&mut self, write: bool) -> Result<()> {
        if self.list.is_empty() {
            return Ok(());
        }
        self.list.retain(|u| !u.done());
        for u in self.list.iter().filter(|u| write || u.write) {
            u.stream.wait_until(u.seq)?;
        }
        self.list.retain(|u| !u.done());
        Ok(())
    }

    /// Before work that reads (or writes, `write`) this memory is queued on `stream`: waits on
    /// the host for the conflicting work of other streams that `stream` is not ordered after.
    /// (Finished work is skipped here and pruned by [`UseState::note`], under the same lock.)
    #[inline(always)]
    fn order_on(&mut self, stream: &StreamShared, write: bool) -> Result<()> {
        for u in self.list.iter().filter(|u| write || u.write) {
            if !u.done() && !stream.ordered_after(u.stream.id, u.seq) {
                u.stream.wait_until(u.seq)?;
            }
        }
        Ok(())
    }

    /// Records that work `seq` of `stream` uses this memory.
    #[inline(always)]
    fn note(&mut self, stream: &Arc<StreamShared>, seq: u64, write: bool) {
        // The common case, a buffer used by this stream alone: what the general case below
        // does to it, without pruning or searching.
        if let [u] = &mut self.list[..] {
            if u.stream.id == stream.id {
                u.write = write || (u.write && !u.done());
                u.seq = u.seq.max(seq);
                return;
            }
        }
        self.list.retain(|u| !u.done());
        match self.list.iter_mut().find(|u| u.stream.id == stream.id) {
            Some(u) => {
                u.seq = u.seq.max(seq);
                u.write |= write;
            }
            None => self.list.push(Use {
                stream: stream.clone(),
                seq,
                write,
            }),
        }
    }

    /// Refuses work that would race a live slice of a [`HostBuffer`]: a write under any slice,
    /// a read under a mutable one. (Only a [`crate::Graph`]'s replay can get here with one, or
    /// a copy after a slice guard was forgotten: a stream's own copies borrow the host buffer.)
    fn check_host_slices(&self, operation: &'static str, write: bool) -> Result<()> {
        if self.writer || (write && self.readers > 0) {
            return Err(Error::HostBufferBorrowed { operation });
        }
        Ok(())
    }
}

impl Uses {
    /// Waits for the queued work a host access conflicts with: the writes for a read
    /// (`write == false`), everything for a write or a free. The guard holds the lock: keep
    /// it for the access.
    ///
    /// # Errors
    /// What synchronizing a stream returns (a device fault of its work).
    pub(crate) fn settle(&self, write: bool) -> Result<Settled<'_>> {
        let mut st = lock(&self.0);
        st.settle(write)?;
        Ok(Settled(st))
    }

    /// Settles every one of `uses` (each with whether the access writes), locked in address
    /// order (so that two threads locking overlapping sets cannot deadlock), each once.
    ///
    /// # Errors
    /// As [`Uses::settle`].
    pub(crate) fn settle_all<'a>(
        uses: impl IntoIterator<Item = (&'a Uses, bool)>,
    ) -> Result<Locked<(MutexGuard<'a, UseState>, bool)>> {
        let mut held = Locked::new();
        Uses::settle_all_into(&mut held, uses)?;
        Ok(held)
    }

    /// [`Uses::settle_all`] into `held` (empty), the caller's: no copy of the locks on the
    /// way out (what every launch on the default stream takes).
    ///
    /// # Errors
    /// As [`Uses::settle`].
    #[inline(always)]
    pub(crate) fn settle_all_into<'a>(
        held: &mut Locked<(MutexGuard<'a, UseState>, bool)>,
        uses: impl IntoIterator<Item = (&'a Uses, bool)>,
    ) -> Result<()> {
        lock_all_into(held, uses);
        for (st, write) in held.iter_mut() {
            st.settle(*write)?;
        }
        Ok(())
    }
}

/// Up to this many buffers of one launch or copy are locked without a heap allocation.
const INLINE_USES: usize = 4;

/// The locks of one launch's or copy's memory (inline for up to [`INLINE_USES`]).
pub(crate) type Locked<T> = SmallVec<[T; INLINE_USES]>;

/// Locks each of `uses` once (merging the write flags of repeats), in address order.
/// (Up to [`INLINE_USES`] of them: an insertion into a short sorted array, no sort, no
/// allocation.)
#[cfg(test)]
fn lock_all<'a>(
    uses: impl IntoIterator<Item = (&'a Uses, bool)>,
) -> Locked<(MutexGuard<'a, UseState>, bool)> {
    let mut held = Locked::new();
    lock_all_into(&mut held, uses);
    held
}

/// [`lock_all`] into `held` (empty), the caller's (built in place: the locks are not copied
/// on the way out).
#[inline(always)]
fn lock_all_into<'a>(
    held: &mut Locked<(MutexGuard<'a, UseState>, bool)>,
    uses: impl IntoIterator<Item = (&'a Uses, bool)>,
) {
    let addr = |u: &Uses| u as *const Uses as usize;
    let mut sorted: [Option<(&'a Uses, bool)>; INLINE_USES] = [None; INLINE_USES];
    let mut n = 0;
    let mut uses = uses.into_iter();
    while let Some((u, write)) = uses.next() {
        let key = |s: &Option<(&Uses, bool)>| s.map_or(usize::MAX, |(u, _)| addr(u));
        let mut i = n;
        while i > 0 && key(&sorted[i - 1]) > addr(u) {
            i -= 1;
        }
        if let Some((kept, kept_write)) = i.checked_sub(1).and_then(|j| sorted[j].as_mut()) {
            if std::ptr::eq(*kept, u) {
                *kept_write |= write;
                continue;
            }
        }
        if n == INLINE_USES {
            let first = sorted.iter().flatten().copied().chain([(u, write)]);
            lock_many(held, first.chain(uses).collect());
            return;
        }
        for j in (i..n).rev() {
            sorted[j + 1] = sorted[j];
        }
        sorted[i] = Some((u, write));
        n += 1;
    }
    for &(u, write) in sorted.iter().flatten() {
        held.push((lock(&u.0), write));
    }
}

/// [`lock_all`] of more than [`INLINE_USES`].
#[cold]
fn lock_many<'a>(
    held: &mut Locked<(MutexGuard<'a, UseState>, bool)>,
    mut uses: Vec<(&'a Uses, bool)>,
) {
    uses.sort_unstable_by_key(|(u, _)| *u as *const Uses as usize);
    uses.dedup_by(|(later, lw), (kept, kw)| {
        let same = std::ptr::eq(*later, *kept);
        *kw |= same && *lw;
        same
    });
    held.extend(uses.into_iter().map(|(u, w)| (lock(&u.0), w)));
}

/// An ordered queue of work on one device: kernel launches (`k.launch_on(&stream, …)`),
/// copies between [`HostBuffer`]s and [`Buffer`]s, and [`Event`]s. Work queued on one stream
/// runs in the order it was queued; work on different streams may overlap (copies with
/// kernels, kernels with kernels), unless ordered by [`Stream::wait_for`]. Every call returns
/// once the work is queued: on CUDA and HIP before it runs; on Vulkan recorded into the
/// device's batch, submitted at the next sync point (a host access, a free, a synchronize, an
/// event) or when the batch is full; on the backends that run work as it is queued (Native,
/// Interpreter today) after it ran.
///
/// A kernel fault of queued work is reported by the next wait for the stream ([`Stream::synchronize`],
/// or a host access that waits for it): on CUDA (a sticky device fault) and Native (the stream
/// is broken: its later work is skipped and every wait reports the fault; make a new stream)
/// at that wait; on the backends that run work as it is queued, and on Vulkan (a checked
/// launch waits for its fault record; a device lost is reported by the next sync point), by
/// the launch itself. On
/// OpenCL in checked mode (the default on PoCL) a launch waits for its fault record, so it is
/// not asynchronous there.
///
/// Cheap to clone (a reference count): clones are the same stream. The last handle (streams
/// are also held by the buffers and events whose work they carry) synchronizes the stream and
/// destroys it. Memory the stream's work uses is tracked (module docs): a later host access
/// waits for it, so no synchronization is needed for correctness, only to see errors early.
#[derive(Clone)]
pub struct Stream {
    shared: Arc<StreamShared>,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("id", &self.shared.id)
            .field("device", &self.shared.device.id)
            .finish_non_exhaustive()
    }
}

impl Device {
    /// Creates a stream on this device (`cuStreamCreate`, `clCreateCommandQueue`, a worker
    /// thread on Native; a queue that runs work as it is queued on the Interpreter; the device's one
    /// queue, submitted in batches, on Vulkan).
    ///
    /// # Errors
    /// [`Error::DeviceReset`] for a device from before [`Device::reset`];
    /// [`Error::FeatureNotSupported`] on a backend without streams (the source-only ones); a
    /// driver error.
    pub fn new_stream(&self) -> Result<Stream> {
        self.check_current()?;
        let handle = self.backend().create_stream(self.local())?;
        Ok(Stream {
            shared: Arc::new(StreamShared {
                id: NEXT_STREAM.fetch_add(1, Ordering::Relaxed),
                device: self.clone(),
                handle: Some(handle),
                submitted: AtomicU64::new(0),
                completed: AtomicU64::new(0),
                queue: Mutex::new(()),
                waited: Mutex::new(Vec::new()),
                capture: Mutex::new(None),
                capturing: AtomicBool::new(false),
            }),
        })
    }
}

/// One piece of memory a queued operation uses, and how.
pub(crate) struct Access<'a> {
    pub(crate) uses: &'a Uses,
    pub(crate) write: bool,
}

impl Stream {
    /// The device the stream runs on.
    pub fn device(&self) -> &Device {
        &self.shared.device
    }

    /// The backend's handle (for [`crate::LaunchConfig::stream`]).
    pub(crate) fn handle(&self) -> &StreamHandle {
        self.shared.handle()
    }

    /// Queues `op` (which queues one piece of work on the backend's stream) after ordering
    /// `accesses` against other streams' work, and records the accesses. The memory's locks
    /// are held from the ordering to the record.
    pub(crate) fn enqueue<'a>(
        &self,
        accesses: impl IntoIterator<Item = Access<'a>>,
        op: impl FnOnce(&StreamHandle) -> Result<()>,
    ) -> Result<()> {
        let s = &self.shared;
        s.device.check_current()?;
        let _queue = lock(&s.queue);
        let mut held = Locked::new();
        lock_all_into(&mut held, accesses.into_iter().map(|a| (a.uses, a.write)));
        for (st, write) in held.iter_mut() {
            st.check_host_slices("queueing a copy of a host buffer", *write)?;
            st.order_on(s, *write)?;
        }
        let seq = s.submitted.load(Ordering::Acquire) + 1;
        op(s.handle())?;
        for (st, write) in held.iter_mut() {
            st.note(s, seq, *write);
        }
        s.submitted.store(seq, Ordering::Release);
        Ok(())
    }

    /// [`Stream::enqueue`], or, while the stream captures a graph ([`Stream::capture`]),
    /// records `capture()` (the same work, owning what it uses) for the graph instead.
    pub(crate) fn enqueue_or_capture<'a>(
        &self,
        accesses: impl IntoIterator<Item = Access<'a>>,
        op: impl FnOnce(&StreamHandle) -> Result<()>,
        capture: impl FnOnce() -> Result<GraphOp>,
    ) -> Result<()> {
        if self.shared.capturing.load(Ordering::Acquire) {
            let mut cap = lock(&self.shared.capture);
            if let Some(ops) = cap.as_mut() {
                self.shared.device.check_current()?;
                ops.push(capture()?);
                return Ok(());
            }
        }
        self.enqueue(accesses, op)
    }

    /// True while the stream captures a graph.
    pub(crate) fn is_capturing(&self) -> bool {
        self.shared.capturing.load(Ordering::Acquire)
    }

    /// Refuses `operation` (one that cannot be captured) while the stream captures a graph.
    fn refuse_while_capturing(&self, operation: &'static str) -> Result<()> {
        if self.is_capturing() {
            return Err(Error::NotCapturable {
                operation: operation.to_string(),
            });
        }
        Ok(())
    }

    /// Starts recording: later work queued on the stream is recorded, not run.
    pub(crate) fn begin_recording(&self) -> Result<()> {
        self.shared.device.check_current()?;
        let mut cap = lock(&self.shared.capture);
        if cap.is_some() {
            return Err(Error::NotCapturable {
                operation: "a capture on a stream that is already capturing".into(),
            });
        }
        *cap = Some(Vec::new());
        self.shared.capturing.store(true, Ordering::Release);
        Ok(())
    }

    /// Stops recording; the work recorded since [`Stream::begin_recording`].
    pub(crate) fn end_recording(&self) -> Vec<GraphOp> {
        let mut cap = lock(&self.shared.capture);
        self.shared.capturing.store(false, Ordering::Release);
        cap.take().unwrap_or_default()
    }

    fn check_device(&self, what: &str, device: &Device) -> Result<()> {
        if device.gid() == self.shared.device.gid() {
            return Ok(());
        }
        Err(Error::Memory {
            backend: self.shared.device.framework.to_string(),
            message: format!(
                "{what} is on device {}, the stream on device {}",
                device.id, self.shared.device.id
            ),
        })
    }

    /// Queues a copy of `src` (host memory) into `dst` (device memory, on the stream's device),
    /// after the work queued before on this stream (`cuMemcpyHtoDAsync`). Asynchronous from
    /// page-locked memory ([`HostBuffer::is_pinned`]).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `src` and `dst` have the same length; [`Error::Memory`]
    /// if `dst` is on another device; a driver error (also one of earlier work that a wait
    /// for another stream reported).
    ///
    /// A record type with padding bytes ([`DeviceCopy::HAS_PADDING`]) is copied synchronously,
    /// after the stream's earlier work, through a staging copy whose padding is zero: padding
    /// never reaches the device (the contract of [`DeviceCopy`]).
    pub fn upload<T: DeviceCopy>(&self, src: &HostBuffer<T>, dst: &mut Buffer<T>) -> Result<()> {
        if T::HAS_PADDING {
            self.check_device("the device buffer", dst.device())?;
            same_len("Stream::upload", dst.len(), src.len())?;
            self.refuse_while_capturing("Stream::upload of a record type with padding")?;
            self.synchronize()?;
            return dst.upload_from(&src.as_slice()?);
        }
        self.copy("Stream::upload", dst, src, true)
    }

    /// Queues a copy of `src` (device memory, on the stream's device) into `dst` (host
    /// memory), after the work queued before on this stream (`cuMemcpyDtoHAsync`). Read `dst`
    /// with [`HostBuffer::as_slice`], which waits for the copy.
    ///
    /// # Errors
    /// As [`Stream::upload`].
    pub fn download<T: DeviceCopy>(&self, src: &Buffer<T>, dst: &mut HostBuffer<T>) -> Result<()> {
        self.copy("Stream::download", src, dst, false)
    }

    /// Queues (or, while capturing, records) the backend's copy of the whole of `dev` to or
    /// from `host` after the checks: `dev` on this stream's device, both of the same length.
    /// `to_device` says which side the copy writes.
    fn copy<T: DeviceCopy>(
        &self,
        operation: &'static str,
        dev: &Buffer<T>,
        host: &HostBuffer<T>,
        to_device: bool,
    ) -> Result<()> {
        self.check_device("the device buffer", dev.device())?;
        same_len(operation, dev.len(), host.len())?;
        let bytes = std::mem::size_of_val(host.slice_unchecked());
        let raw = dev.raw();
        let accesses = [
            Access {
                uses: raw.uses(),
                write: to_device,
            },
            Access {
                uses: &host.alloc.uses,
                write: !to_device,
            },
        ];
        let backend = self.shared.device.backend();
        let host_ptr = host.alloc.ptr();
        self.enqueue_or_capture(
            accesses,
            // SAFETY: the host memory stays allocated until every stream that uses it passed
            // the copy (its drop settles its uses), and the host neither writes it (upload) nor
            // touches it (download) meanwhile: every access settles its uses first.
            |h| unsafe { queue_copy(backend.as_ref(), raw.mem(), host_ptr, bytes, to_device, h) },
            || {
                let (dev, host) = (raw.share(), host.share());
                Ok(GraphOp::new(
                    vec![
                        Held::Device(raw.share(), to_device),
                        Held::Host(host.clone(), !to_device),
                    ],
                    // SAFETY: as above: the graph holds both allocations, and each replay
                    // orders the copy against the host and other streams through their uses.
                    Box::new(move |b, h| unsafe {
                        queue_copy(b, dev.mem(), host.ptr(), bytes, to_device, h)
                    }),
                ))
            },
        )
    }

    /// Records an event: the point of this stream after the work queued so far.
    ///
    /// # Errors
    /// [`Error::DeviceReset`] for a stream from before [`Device::reset`];
    /// [`Error::FeatureNotSupported`] on a backend without events; a driver error;
    /// [`Error::NotCapturable`] while the stream captures a graph.
    pub fn record(&self) -> Result<Event> {
        self.shared.device.check_current()?;
        self.refuse_while_capturing("Stream::record (an event inside a graph)")?;
        let backend = self.shared.device.backend();
        let handle = backend.create_event(self.shared.device.local())?;
        let s = &self.shared;
        let _queue = lock(&s.queue);
        backend.record_event(&handle, Some(s.handle()))?;
        Ok(Event {
            stream: s.clone(),
            seq: s.submitted.load(Ordering::Acquire),
            handle,
        })
    }

    /// Makes the work queued on this stream from now on wait until `event` has passed: on the
    /// device where the backend can (`cuStreamWaitEvent`), else on the host now. Work after
    /// the wait may then use memory that the event's stream wrote before it without a host
    /// wait.
    ///
    /// # Errors
    /// [`Error::DeviceReset`] for a stream from before [`Device::reset`]; [`Error::Memory`] for
    /// an event of another device; a driver error; [`Error::NotCapturable`] while the stream
    /// captures a graph.
    pub fn wait_for(&self, event: &Event) -> Result<()> {
        self.shared.device.check_current()?;
        self.refuse_while_capturing("Stream::wait_for (an event wait inside a graph)")?;
        let other = &event.stream;
        if other.id == self.shared.id {
            return Ok(());
        }
        self.check_device("the event", &other.device)?;
        let on_device = self
            .shared
            .device
            .backend()
            .wait_event(self.handle(), &event.handle)?;
        if !on_device {
            other.wait_until(event.seq)?;
        }
        let mut waited = lock(&self.shared.waited);
        match waited.iter_mut().find(|(s, _)| *s == other.id) {
            Some((_, q)) => *q = (*q).max(event.seq),
            None => waited.push((other.id, event.seq)),
        }
        Ok(())
    }

    /// Waits until all the work queued on this stream has finished.
    ///
    /// # Errors
    /// What the work reported: [`Error::KernelFault`] for a device fault, a driver error.
    /// [`Error::NotCapturable`] while the stream captures a graph (nothing of the capture has
    /// run yet: a synchronize there would wait for nothing).
    pub fn synchronize(&self) -> Result<()> {
        self.refuse_while_capturing("Stream::synchronize")?;
        self.shared.synchronize()
    }
}

/// The backend's asynchronous copy of `bytes` bytes between `mem` and `host`, on `h`.
///
/// # Safety
/// `host` stays valid for the copy (reads if `to_device`, writes otherwise) until the stream
/// has passed it, and the host does not conflict with it meanwhile.
unsafe fn queue_copy(
    backend: &dyn Backend,
    mem: &DeviceMem,
    host: *mut u8,
    bytes: usize,
    to_device: bool,
    h: &StreamHandle,
) -> Result<()> {
    // SAFETY: as the caller guarantees.
    unsafe {
        if to_device {
            backend.copy_h2d_async(mem, 0, host, bytes, h)
        } else {
            backend.copy_d2h_async(mem, 0, host, bytes, h)
        }
    }
}

fn same_len(operation: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        return Ok(());
    }
    Err(Error::LengthMismatch {
        operation,
        expected,
        got,
    })
}

/// A point in a [`Stream`]: recorded with [`Stream::record`] after the work queued so far;
/// it passes when that work has finished. For ordering ([`Stream::wait_for`]) and timing
/// ([`Event::elapsed_ms`]). Keeps its stream alive.
pub struct Event {
    stream: Arc<StreamShared>,
    seq: u64,
    handle: EventHandle,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("stream", &self.stream.id)
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

impl Event {
    /// Waits until the event has passed.
    ///
    /// # Errors
    /// As [`Stream::synchronize`].
    pub fn synchronize(&self) -> Result<()> {
        self.stream.wait_until(self.seq)
    }

    /// Milliseconds from this event to `end` (recorded later, on the same device), once `end`
    /// has passed (`cuEventElapsedTime`; on the CPU backends the host clock when each was
    /// recorded, which is when the work before it had run).
    ///
    /// # Errors
    /// [`Error::Memory`] for events of different devices; what waiting for `end` reports; a
    /// driver error.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        if self.stream.device.gid() != end.stream.device.gid() {
            return Err(Error::Memory {
                backend: self.stream.device.framework.to_string(),
                message: "timing events of two devices".into(),
            });
        }
        end.synchronize()?;
        self.stream
            .device
            .backend()
            .event_elapsed_ms(&self.handle, &end.handle)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let backend = self.stream.device.backend();
        let handle = std::mem::replace(
            &mut self.handle,
            EventHandle::new(self.stream.device.local(), Box::new(())),
        );
        if let Err(e) = backend.destroy_event(handle) {
            tracing::warn!("destroying an event of {}: {e}", self.stream.device);
        }
    }
}

/// Where a [`HostBuffer`]'s memory comes from.
enum HostStorage {
    /// Page-locked, from the backend.
    Pinned(Device, Option<backend::PinnedMem>),
    /// The global allocator, with this layout (`None` for zero bytes).
    Heap(Option<Layout>),
}

/// The memory of a [`HostBuffer`], shared with the [`crate::Graph`]s that copy from or into it
/// (so that it outlives them); freed when the last of them lets it go, after its queued
/// copies.
pub(crate) struct HostAlloc {
    ptr: NonNull<u8>,
    storage: HostStorage,
    pub(crate) uses: Uses,
}

// SAFETY: the allocation is plain bytes owned by this value; it is reached only through a
// `HostBuffer` (whose slices settle `uses` first and are counted in it) and by queued copies,
// which `uses` tracks.
unsafe impl Send for HostAlloc {}
// SAFETY: as above.
unsafe impl Sync for HostAlloc {}

impl HostAlloc {
    /// The start of the memory.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        if let Err(e) = self.uses.settle(true) {
            // A copy may still be running: never free memory it could write.
            tracing::warn!("a host buffer's copies failed ({e}); leaking its memory");
            return;
        }
        match &mut self.storage {
            HostStorage::Pinned(device, mem) => {
                if let Some(mem) = mem.take() {
                    if let Err(e) = device.backend().free_pinned(mem) {
                        tracing::warn!("freeing page-locked memory of {device}: {e}");
                    }
                }
            }
            HostStorage::Heap(Some(layout)) => {
                // SAFETY: allocated by `alloc_zeroed` with this layout, freed once.
                unsafe { std::alloc::dealloc(self.ptr.as_ptr(), *layout) }
            }
            HostStorage::Heap(None) => {}
        }
    }
}

/// `len` elements of `T` in host memory, for [`Stream::upload`] and [`Stream::download`]:
/// page-locked (`cuMemHostAlloc`) on the backends that have it, so that copies run
/// asynchronously, ordinary memory elsewhere. Zeroed when allocated.
///
/// The contents are reached through [`HostBuffer::as_slice`] and [`HostBuffer::as_mut_slice`],
/// which first wait for the copies queued on the buffer that conflict (module docs); the slice
/// borrows the buffer, so no copy can be queued on it while the slice lives (and a
/// [`crate::Graph`] whose replay would copy into it, or out of it under a mutable slice, refuses
/// to launch with [`Error::HostBufferBorrowed`]). Dropping the buffer waits for every queued
/// copy first; a graph that copies from or into it keeps its memory until the graph is
/// dropped.
pub struct HostBuffer<T: DeviceCopy> {
    alloc: Arc<HostAlloc>,
    len: usize,
    _t: PhantomData<T>,
}

/// A host buffer's elements, borrowed ([`HostBuffer::as_slice`]): dereferences to `[T]`.
/// While it lives no queued copy writes the buffer.
pub struct HostSlice<'a, T: DeviceCopy> {
    buf: &'a HostBuffer<T>,
}

/// A host buffer's elements, mutably borrowed ([`HostBuffer::as_mut_slice`]): dereferences to
/// `[T]`. While it lives no queued copy reads or writes the buffer.
pub struct HostSliceMut<'a, T: DeviceCopy> {
    buf: &'a mut HostBuffer<T>,
}

impl<T: DeviceCopy> std::ops::Deref for HostSlice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.buf.slice_unchecked()
    }
}

impl<T: DeviceCopy> std::ops::Deref for HostSliceMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.buf.slice_unchecked()
    }
}

impl<T: DeviceCopy> std::ops::DerefMut for HostSliceMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.buf.slice_mut_unchecked()
    }
}

impl<T: DeviceCopy> Drop for HostSlice<'_, T> {
    fn drop(&mut self) {
        lock(&self.buf.alloc.uses.0).readers -= 1;
    }
}

impl<T: DeviceCopy> Drop for HostSliceMut<'_, T> {
    fn drop(&mut self) {
        lock(&self.buf.alloc.uses.0).writer = false;
    }
}

impl<T: DeviceCopy + fmt::Debug> fmt::Debug for HostSlice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: DeviceCopy + fmt::Debug> fmt::Debug for HostSliceMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: DeviceCopy + PartialEq, U: AsRef<[T]> + ?Sized> PartialEq<U> for HostSlice<'_, T> {
    fn eq(&self, other: &U) -> bool {
        **self == *other.as_ref()
    }
}

impl<T: DeviceCopy> AsRef<[T]> for HostSlice<'_, T> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T: DeviceCopy> HostBuffer<T> {
    /// Allocates `len` zeroed elements for copies with `device`'s streams: page-locked where
    /// its backend has page-locked memory ([`crate::DeviceMemory::alloc_pinned`]; CUDA), else
    /// from the global allocator, aligned to 64 bytes.
    ///
    /// # Errors
    /// [`Error::Memory`] if the size overflows or the allocation fails; [`Error::DeviceReset`]
    /// for a device from before [`Device::reset`].
    pub fn new(device: &Device, len: usize) -> Result<HostBuffer<T>> {
        let too_big = || Error::Memory {
            backend: device.framework.to_string(),
            message: format!(
                "{len} elements of {} overflow a host allocation",
                std::any::type_name::<T>()
            ),
        };
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(too_big)?;
        let failed = || Error::Memory {
            backend: device.framework.to_string(),
            message: format!("allocating {bytes} bytes of host memory failed"),
        };
        device.check_current()?;
        let buffer = |ptr: NonNull<u8>, storage| HostBuffer {
            alloc: Arc::new(HostAlloc {
                ptr,
                storage,
                uses: Uses::default(),
            }),
            len,
            _t: PhantomData,
        };
        if let Some(mem) = device.backend().alloc_pinned(device.local(), bytes)? {
            let ptr = match NonNull::new(mem.ptr) {
                Some(p) if bytes > 0 => p,
                _ => NonNull::<T>::dangling().cast(),
            };
            return Ok(buffer(ptr, HostStorage::Pinned(device.clone(), Some(mem))));
        }
        let align = std::mem::align_of::<T>().max(64);
        let layout = Layout::from_size_align(bytes, align).map_err(|_| too_big())?;
        if bytes == 0 {
            return Ok(buffer(
                NonNull::<T>::dangling().cast(),
                HostStorage::Heap(None),
            ));
        }
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(p).ok_or_else(failed)?;
        Ok(buffer(ptr, HostStorage::Heap(Some(layout))))
    }

    /// A buffer for `device`'s streams holding a copy of `data`.
    ///
    /// # Errors
    /// As [`HostBuffer::new`].
    pub fn from_slice(device: &Device, data: &[T]) -> Result<HostBuffer<T>> {
        let mut b = HostBuffer::new(device, data.len())?;
        b.slice_mut_unchecked().copy_from_slice(data);
        Ok(b)
    }

    /// Length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True if the memory is page-locked (copies from and to it are asynchronous on CUDA).
    pub fn is_pinned(&self) -> bool {
        matches!(self.alloc.storage, HostStorage::Pinned(..))
    }

    /// The elements, once the copies queued into the buffer have finished (a guard that
    /// dereferences to `&[T]`). While the guard lives, a [`crate::Graph`] replay that would
    /// copy into the buffer is refused ([`Error::HostBufferBorrowed`]); a guard that is
    /// forgotten (`std::mem::forget`) leaves the buffer borrowed for good, so that such copies
    /// keep failing (never racing).
    ///
    /// # Errors
    /// What waiting for them reports (a device fault of the work before a copy).
    pub fn as_slice(&self) -> Result<HostSlice<'_, T>> {
        let mut st = self.alloc.uses.settle(false)?;
        st.0.readers += 1;
        Ok(HostSlice { buf: self })
    }

    /// The elements, mutably, once every copy queued from or into the buffer has finished (a
    /// guard that dereferences to `&mut [T]`).
    ///
    /// # Errors
    /// As [`HostBuffer::as_slice`].
    pub fn as_mut_slice(&mut self) -> Result<HostSliceMut<'_, T>> {
        let mut st = self.alloc.uses.settle(true)?;
        st.0.writer = true;
        drop(st);
        Ok(HostSliceMut { buf: self })
    }

    /// A copy of the elements (see [`HostBuffer::as_slice`]).
    ///
    /// # Errors
    /// As [`HostBuffer::as_slice`].
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.as_slice().map(|s| s.to_vec())
    }

    /// The memory, shared (for a graph that copies from or into it).
    pub(crate) fn share(&self) -> Arc<HostAlloc> {
        self.alloc.clone()
    }

    /// The elements without waiting: only for lengths, for the host's own writes before
    /// anything is queued, and for the slice guards.
    fn slice_unchecked(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised (zeroed or written) elements of `T`, aligned
        // for it, dangling only when that is zero bytes.
        unsafe { std::slice::from_raw_parts(self.alloc.ptr().cast::<T>(), self.len) }
    }

    fn slice_mut_unchecked(&mut self) -> &mut [T] {
        // SAFETY: as above; `&mut self` is the only handle that reaches the elements from the
        // host (a graph's share only queues copies, which the slice guards exclude).
        unsafe { std::slice::from_raw_parts_mut(self.alloc.ptr().cast::<T>(), self.len) }
    }
}

impl<T: DeviceCopy + fmt::Debug> fmt::Debug for HostBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("len", &self.len)
            .field("pinned", &self.is_pinned())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::{lock_all, Uses, INLINE_USES};

    /// Each `Uses` locked once, in address order, its write flag the OR of its repeats: what
    /// keeps two launches locking overlapping buffers from deadlocking. Up to and past the
    /// inline capacity.
    #[test]
    fn lock_all_locks_each_once_in_address_order() {
        let uses: Vec<Uses> = (0..INLINE_USES + 3).map(|_| Uses::default()).collect();
        let addr = |u: &Uses| u as *const Uses as usize;
        for n in 1..=uses.len() {
            // Reversed, each one twice (read, then write for the even ones), interleaved.
            let mut order: Vec<(&Uses, bool)> = Vec::new();
            for u in uses[..n].iter().rev() {
                order.push((u, false));
            }
            for (i, u) in uses[..n].iter().enumerate() {
                order.push((u, i % 2 == 0));
            }
            let held = lock_all(order.iter().copied());
            assert_eq!(held.len(), n, "each locked once");
            let got: Vec<(usize, bool)> =
                held.iter().map(|(g, w)| (addr_of_guard(g), *w)).collect();
            let mut want: Vec<(usize, bool)> = uses[..n]
                .iter()
                .enumerate()
                .map(|(i, u)| (addr(u), i % 2 == 0))
                .collect();
            want.sort();
            assert_eq!(got, want, "{n} uses");
        }

        /// The address of the `Uses` whose state `g` guards.
        fn addr_of_guard(g: &std::sync::MutexGuard<'_, super::UseState>) -> usize {
            (&**g as *const super::UseState as usize) - state_offset()
        }
        /// Where a `Uses`' state lies inside it.
        fn state_offset() -> usize {
            let u = Uses::default();
            let state = &*u.0.lock().unwrap() as *const super::UseState as usize;
            state - (&u as *const Uses as usize)
        }
    }
}
