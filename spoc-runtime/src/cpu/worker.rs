//! A stream of the Native backend: one worker thread that runs the stream's jobs (launches,
//! copies, event stamps) in the order they were queued, so that queuing returns at once and
//! two streams run side by side, as on a GPU.
//!
//! A job that fails (a thread's fault) is reported by the next [`Worker::wait`]; the jobs queued
//! after it, up to that wait, are skipped ("nothing after the fault is guaranteed to have
//! run", as for a device fault). The memory a job touches stays valid until it has run: the
//! runtime's use tracking (`memory/stream.rs`) waits for the stream before any host access to,
//! or free of, a buffer that queued work uses.

use crate::error::{Error, Result};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;

/// One piece of queued work.
pub(crate) type Job = Box<dyn FnOnce() -> Result<()> + Send>;

#[derive(Default)]
struct State {
    /// Jobs queued and not yet run (or skipped).
    pending: u64,
    /// The first failure since the last wait.
    error: Option<Error>,
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

    /// Waits until every job queued so far has run, and returns the first failure since the
    /// last wait.
    pub(crate) fn wait(&self) -> Result<()> {
        let mut st = self.lock();
        while st.pending > 0 {
            st = self.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        match st.error.take() {
            Some(e) => Err(e),
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
                    let result = if skip { Ok(()) } else { job() };
                    let mut st = s.lock();
                    if let Err(e) = result {
                        st.error.get_or_insert(e);
                    }
                    st.pending -= 1;
                    if st.pending == 0 {
                        s.idle.notify_all();
                    }
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
        self.shared.lock().pending += 1;
        let sent = self.tx.as_ref().map(|tx| tx.send(job));
        if !matches!(sent, Some(Ok(()))) {
            // The thread is gone (it cannot be while `self` lives): undo the count.
            let mut st = self.shared.lock();
            st.pending -= 1;
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
