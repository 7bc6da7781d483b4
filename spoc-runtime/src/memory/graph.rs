//! Graphs: the launches and copies queued on a [`Stream`], captured once
//! ([`Stream::capture`]) and replayed whole ([`Graph::launch`]), as CUDA's stream capture
//! (`cuStreamBeginCapture` / `cuStreamEndCapture`, `cuGraphInstantiate`, `cuGraphLaunch`).
//!
//! # How (docs/DESIGN.md §5, "Graphs")
//! While a stream captures, the work queued on it is recorded instead of run: each launch or
//! copy as a [`GraphOp`] that owns what it needs (the compiled kernel, the argument values, a
//! share of every buffer: [`crate::buffer::RawBuffer::share`], [`crate::HostBuffer`]'s memory).
//! When the closure returns, the backend is offered the list
//! ([`crate::DeviceMemory::capture_graph`]): CUDA issues it on the stream inside a real stream
//! capture and instantiates the graph the driver built (`CUgraphExec`), so a replay is one
//! `cuGraphLaunch`; every other backend (Native, Interpreter, OpenCL, Vulkan) keeps the list
//! and a replay re-issues it op by op on the stream.
//!
//! # Safety
//! A graph holds every buffer and host buffer its work uses (reference counts), so dropping
//! them leaves the memory to the graph, which frees it when it is dropped itself, after its
//! replays. A replay is queued like any other work on a stream ([`Stream::enqueue`]): it is
//! ordered against other streams' work on the same memory, recorded in each buffer's use list
//! (host accesses and frees wait for it), and refused with [`Error::HostBufferBorrowed`] while
//! a slice of a host buffer it would race is alive.

use crate::backend::{GraphExec, Stream as StreamHandle};
use crate::buffer::RawBuffer;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::executor::Backend;
use crate::memory::stream::{Access, HostAlloc, Stream, Uses};
use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

thread_local! {
    /// The devices (global ids) on which this thread is capturing a graph (inside
    /// [`Stream::capture`]'s closure).
    static CAPTURING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// How many entries all threads' [`CAPTURING`] lists hold together: a thread's own entries are
/// counted before its capture's closure runs and uncounted after it, so 0 read on a thread means
/// it is capturing nothing.
static CAPTURES: AtomicUsize = AtomicUsize::new(0);

/// Refuses `operation` (default-stream work, which cannot be captured and would see none of
/// the captured work run) on the thread that is capturing a graph on `device`.
///
/// # Errors
/// [`Error::NotCapturable`] inside [`Stream::capture`]'s closure for `device`.
pub(crate) fn refuse_in_capture(device: &Device, operation: &str) -> Result<()> {
    // No capture anywhere (every launch on the default stream asks): nothing to look up.
    if CAPTURES.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let gid = device.gid();
    if CAPTURING.with(|c| c.borrow().contains(&gid)) {
        return Err(Error::NotCapturable {
            operation: format!(
                "{operation} while capturing a graph on device {}",
                device.id
            ),
        });
    }
    Ok(())
}

/// Memory a recorded op uses, held (shared) by the graph, and whether the op writes it.
pub(crate) enum Held {
    /// Device memory.
    Device(RawBuffer, bool),
    /// A host buffer's memory.
    Host(Arc<HostAlloc>, bool),
}

impl Held {
    fn access(&self) -> Access<'_> {
        match self {
            Held::Device(b, write) => Access {
                uses: b.uses(),
                write: *write,
            },
            Held::Host(h, write) => Access {
                uses: &h.uses,
                write: *write,
            },
        }
    }
}

/// Re-issues one recorded op on a stream of the backend.
pub(crate) type Replay = Box<dyn FnMut(&dyn Backend, &StreamHandle) -> Result<()> + Send>;

/// One launch or copy recorded while capturing: what it uses and how to issue it again.
pub(crate) struct GraphOp {
    held: Vec<Held>,
    run: Replay,
}

impl GraphOp {
    pub(crate) fn new(held: Vec<Held>, run: Replay) -> GraphOp {
        GraphOp { held, run }
    }
}

/// Launches and copies captured from a [`Stream`] ([`Stream::capture`]), replayed whole on a
/// stream of the same device with [`Graph::launch`] — as many times as wanted, each replay
/// seeing the buffers' contents at the time it runs (the captured work is re-run, not its
/// results). On CUDA a real stream capture instantiated by the driver (`cuGraphInstantiate`;
/// a replay is one `cuGraphLaunch`); on the other backends a list of the recorded operations
/// that a replay re-issues in order.
///
/// A graph keeps every buffer and host buffer its work uses alive (dropping them after the
/// capture is fine); a replay is tracked like any work on a stream (a host access to one of
/// its buffers waits for it; a free waits for it), and dropping the graph waits for its
/// replays in flight. The arguments are fixed at capture: replaying on other buffers means
/// capturing another graph.
pub struct Graph {
    device: Device,
    /// The recorded work (replayed op by op where `exec` is `None`).
    ops: Mutex<Vec<GraphOp>>,
    /// The memory the work uses, each once, with whether any op writes it.
    held: Vec<Held>,
    /// The driver's graph, where the backend has them.
    exec: Option<GraphExec>,
    /// The replays queued (what dropping the graph waits for).
    replays: Uses,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("device", &self.device.id)
            .field("ops", &self.len())
            .field("driver_graph", &self.exec.is_some())
            .finish_non_exhaustive()
    }
}

/// Ends a capture however the closure leaves (a return or a panic): the stream stops
/// recording and the thread is no longer capturing on the device.
struct CaptureScope<'a> {
    stream: &'a Stream,
    gid: usize,
    ended: bool,
}

impl CaptureScope<'_> {
    /// The work recorded (nothing after the first call).
    fn end(&mut self) -> Vec<GraphOp> {
        if std::mem::replace(&mut self.ended, true) {
            return Vec::new();
        }
        CAPTURING.with(|c| {
            let mut c = c.borrow_mut();
            if let Some(i) = c.iter().rposition(|&g| g == self.gid) {
                c.remove(i);
                CAPTURES.fetch_sub(1, Ordering::AcqRel);
            }
        });
        self.stream.end_recording()
    }
}

impl Drop for CaptureScope<'_> {
    fn drop(&mut self) {
        self.end();
    }
}

impl Stream {
    /// Captures the launches (`k.launch_on(s, …)`) and copies ([`Stream::upload`],
    /// [`Stream::download`]) that `record` queues on this stream (`s` is this stream) into a
    /// [`Graph`], without running them: CUDA's stream capture (`cuStreamBeginCapture`,
    /// `cuStreamEndCapture`, `cuGraphInstantiate`); a replay list on the other backends.
    /// Kernels are compiled (and launches checked) during the capture, so a replay only runs
    /// them. Work queued on other streams meanwhile runs as usual.
    ///
    /// # Errors
    /// What `record` returns, which ends the capture: nothing recorded runs, and the stream is
    /// usable as before. Inside `record`, operations that cannot be captured fail with
    /// [`Error::NotCapturable`]: on this stream [`Stream::synchronize`], [`Stream::record`],
    /// [`Stream::wait_for`], [`Graph::launch`], a nested capture, an upload of a record type
    /// with padding, a launch with Structure-of-Arrays arguments; on this thread, default-stream
    /// work on the stream's device (a `launch`, a transfer such as [`crate::Buffer::to_vec`],
    /// [`Device::synchronize`]).
    /// [`Error::DeviceReset`] for a stream from before [`Device::reset`]. On CUDA, a driver
    /// error if the driver cannot capture or instantiate the work (a checked kernel, whose
    /// fault record is read back synchronously, or profiling, which waits on events) — again
    /// leaving the stream usable; [`Error::FeatureNotSupported`] if the driver library lacks the
    /// graph functions.
    ///
    /// # Panics
    /// If `record` panics (after ending the capture).
    pub fn capture<F>(&self, record: F) -> Result<Graph>
    where
        F: FnOnce(&Stream) -> Result<()>,
    {
        self.begin_recording()?;
        let gid = self.device().gid();
        CAPTURES.fetch_add(1, Ordering::AcqRel);
        CAPTURING.with(|c| c.borrow_mut().push(gid));
        let mut scope = CaptureScope {
            stream: self,
            gid,
            ended: false,
        };
        let recorded = record(self);
        let mut ops = scope.end();
        recorded?;
        let mut held: Vec<Held> = Vec::new();
        for op in &ops {
            for h in &op.held {
                let a = h.access();
                match held
                    .iter_mut()
                    .find(|k| std::ptr::eq(k.access().uses, a.uses))
                {
                    Some(Held::Device(_, w) | Held::Host(_, w)) => *w |= a.write,
                    None => held.push(match h {
                        Held::Device(b, w) => Held::Device(b.share(), *w),
                        Held::Host(m, w) => Held::Host(m.clone(), *w),
                    }),
                }
            }
        }
        let backend = self.device().backend();
        let handle = self.handle();
        // An empty capture replays as nothing without asking the driver for an empty graph.
        let exec = if ops.is_empty() {
            None
        } else {
            backend.capture_graph(handle, &mut || {
                ops.iter_mut()
                    .try_for_each(|op| (op.run)(backend.as_ref(), handle))
            })?
        };
        Ok(Graph {
            device: self.device().clone(),
            ops: Mutex::new(ops),
            held,
            exec,
            replays: Uses::default(),
        })
    }
}

impl Graph {
    /// The device the graph runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The number of launches and copies captured.
    pub fn len(&self) -> usize {
        self.ops.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// True if nothing was captured (a replay then does nothing).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if the driver holds the graph (CUDA: one `cuGraphLaunch` per replay); false where
    /// a replay re-issues the captured operations one by one.
    pub fn is_driver_graph(&self) -> bool {
        self.exec.is_some()
    }

    /// Queues one replay of the captured work on `stream` (any stream of the graph's device),
    /// after the work queued on it before (`cuGraphLaunch`). Returns once queued, as a launch
    /// does; replays of one graph run one after the other, whatever their streams.
    ///
    /// # Errors
    /// [`Error::Memory`] for a stream of another device; [`Error::NotCapturable`] if `stream`
    /// is capturing a graph; [`Error::HostBufferBorrowed`] while a slice of a host buffer that
    /// the graph copies into ([`crate::HostBuffer::as_slice`]), or from under a mutable slice, is
    /// alive; [`Error::DeviceReset`]; a driver error (on the replay-list backends also a kernel
    /// fault of a captured launch, after waiting for the ops of the replay queued before it).
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        if stream.device().gid() != self.device.gid() {
            return Err(Error::Memory {
                backend: self.device.framework.to_string(),
                message: format!(
                    "a graph of device {} launched on a stream of device {}",
                    self.device.id,
                    stream.device().id
                ),
            });
        }
        if stream.is_capturing() {
            return Err(Error::NotCapturable {
                operation: "Graph::launch on a stream that is capturing a graph".into(),
            });
        }
        let mut accesses: Vec<Access<'_>> = self.held.iter().map(Held::access).collect();
        accesses.push(Access {
            uses: &self.replays,
            write: true,
        });
        let backend = self.device.backend();
        stream.enqueue(accesses, |h| match &self.exec {
            Some(exec) => backend.launch_graph(exec, h),
            None => {
                let mut ops = self.ops.lock().unwrap_or_else(|e| e.into_inner());
                let issued = ops
                    .iter_mut()
                    .try_for_each(|op| (op.run)(backend.as_ref(), h));
                if issued.is_err() {
                    // The ops queued before the failure are not recorded as this replay's
                    // uses: let them finish before the memory is handed back to the host.
                    if let Err(e) = backend.synchronize_stream(h) {
                        tracing::warn!("waiting for a failed graph replay: {e}");
                    }
                }
                issued
            }
        })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        if let Err(e) = self.replays.settle(true) {
            // A replay may still run: keep the driver's graph (and the memory, which the ops
            // hold) rather than destroy it under the replay.
            tracing::warn!("a graph's replays failed ({e}); leaking it");
            std::mem::forget(std::mem::take(
                &mut *self.ops.lock().unwrap_or_else(|e| e.into_inner()),
            ));
            std::mem::forget(std::mem::take(&mut self.held));
            std::mem::forget(self.exec.take());
            return;
        }
        if let Some(exec) = self.exec.take() {
            if let Err(e) = self.device.backend().destroy_graph(exec) {
                tracing::warn!("destroying a graph of {}: {e}", self.device);
            }
        }
    }
}
