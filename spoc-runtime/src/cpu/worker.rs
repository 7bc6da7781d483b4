//! A stream of the Native backend: one worker thread that runs the stream's jobs (launches,
//! copies, event stamps) in the order they were queued, so that queuing returns at once and
//! two streams run side by side, as on a GPU.
//!
//! A job that fails (a thread's fault) breaks the stream, as a device fault breaks a CUDA
//! context: the jobs queued after it are skipped and every later [`Worker::wait`] returns the
//! fault, so no result computed after it can be read as if it were right; make a new stream.
//! A wait waits for the jobs queued before it began, not for those other threads queue while it
//! waits. The memory a job touches stays valid until it has run: the runtime's use tracking
//! (`memory/stream.rs`) waits for the stream before any host access to, or free of, a buffer
//! that queued work uses, and the Native backend's default-stream operations wait for every
//! stream first (as CUDA's legacy default stream does).
//!
//! Jobs run their kernels on a rayon pool of their own, never the global one: a thread of the
//! global pool may be the one waiting for the stream.

use crate::error::{Error, Result};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;

/// One piece of queued work.
pub(crate) type Job = Box<dyn FnOnce() -> Result<()> + Send>;

#[derive(Default)]
struct State {
    /// Jobs queued so far.
    queued: u64,
    /// Jobs run (or skipped) so far, in queue order.
    done: u64,
    /// The failure that broke the stream.
    error: Option<Error>,
}

/// The error a broken stream reports again (the first report is the error itself).
fn again(e: &Error) -> Error {
    match e {
        Error::KernelFault {
            kernel,
            block,
            thread,
            message,
        } => Error::KernelFault {
            kernel: kernel.clone(),
            block: *block,
            thread: *thread,
            message: format!("{message} (an earlier fault on this stream; make a new stream)"),
        },
        other => Error::Driver {
            backend: "Native".into(),
            message: format!("{other} (an earlier failure on this stream; make a new stream)"),
        },
    }
}

/// The rayon pool the jobs of every Native stream run on.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("spoc-native-stream-pool-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// What the worker thread and its handles share.
#[derive(Default)]
pub(crate) struct Shared {
    state: Mutex<State>,
    idle: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until every job queued before the call has run; returns the failure that broke
    /// the stream, if one did.
    pub(crate) fn wait(&self) -> Result<()> {
        let mut st = self.lock();
        let target = st.queued;
        while st.done < target {
            st = self.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        match &st.error {
            Some(e) => Err(again(e)),
            None => Ok(()),
        }
    }
}

/// A worker thread and its queue. Dropping it waits for the queued jobs and joins the thread.
pub(crate) struct Worker {
    shared: Arc<Shared>,
    tx: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts a worker thread named `name`.
    ///
    /// # Errors
    /// [`Error::Driver`] if the thread cannot be started.
    pub(crate) fn start(backend: &str, name: &str) -> Result<Worker> {
        let shared = Arc::new(Shared::default());
        let (tx, rx) = channel::<Job>();
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                for job in rx {
                    let skip = s.lock().error.is_some();
                    let result = match (skip, pool()) {
                        (true, _) => Ok(()),
                        (false, Some(p)) => p.install(job),
                        (false, None) => job(),
                    };
                    let mut st = s.lock();
                    if let Err(e) = result {
                        st.error.get_or_insert(e);
                    }
                    st.done += 1;
                    s.idle.notify_all();
                }
            })
            .map_err(|e| Error::Driver {
                backend: backend.to_string(),
                message: format!("starting a stream's worker thread: {e}"),
            })?;
        Ok(Worker {
            shared,
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues `job`.
    pub(crate) fn submit(&self, job: Job) {
        // Counted under the lock with the send, so that `queued` follows the queue's order.
        let mut st = self.shared.lock();
        let sent = self.tx.as_ref().map(|tx| tx.send(job));
        if matches!(sent, Some(Ok(()))) {
            st.queued += 1;
        } else {
            // The thread is gone (it cannot be while `self` lives).
            st.error.get_or_insert(Error::Driver {
                backend: "Native".into(),
                message: "a stream's worker thread is gone".into(),
            });
        }
    }

    /// See [`Shared::wait`].
    pub(crate) fn wait(&self) -> Result<()> {
        self.shared.wait()
    }

    /// A handle that can wait for this worker without keeping it alive.
    pub(crate) fn watch(&self) -> Weak<Shared> {
        Arc::downgrade(&self.shared)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.shared.wait();
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
