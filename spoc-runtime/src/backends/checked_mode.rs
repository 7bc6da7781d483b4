//! The checked mode of the source-generating backends (OpenCL, Vulkan, CUDA): when it is on,
//! and how a fault record read back after a launch becomes [`Error::KernelFault`]. What the
//! generated code checks and the record's layout: [`spoc_codegen::checked`].
//!
//! Checked mode is on by default for devices that share the host's memory
//! ([`Capabilities::is_cpu`]: PoCL, lavapipe), where an out-of-bounds write of an unchecked
//! kernel corrupts the host process, and off on GPUs. `SPOC_BOUNDS_CHECK=1` turns it on for
//! every device, `SPOC_BOUNDS_CHECK=0` off for every device (read once per process).
//! [`crate::CompileOptions::checked`] chooses per compile.

use crate::capabilities::Capabilities;
use crate::error::{Error, Result};
use spoc_codegen::checked;
use spoc_ir::Kernel;
use std::sync::{Mutex, OnceLock};

/// The environment switch of checked mode.
pub const ENV: &str = "SPOC_BOUNDS_CHECK";

/// `SPOC_BOUNDS_CHECK` through the runtime's switch parser ([`crate::env::switch`]), read
/// once per process: `None` when unset or empty.
fn env_switch() -> Result<Option<bool>> {
    static V: OnceLock<std::result::Result<Option<bool>, String>> = OnceLock::new();
    V.get_or_init(|| match crate::env::switch(ENV) {
        Ok(v) => Ok(v),
        Err(Error::InvalidEnvironment { value, .. }) => Err(value),
        Err(_) => Err(String::new()),
    })
    .clone()
    .map_err(|value| Error::InvalidEnvironment {
        variable: ENV.to_string(),
        value,
        expected: crate::env::SWITCH_VALUES.into(),
    })
}

/// Whether launches on a device with `caps` use checked code when the compile options do not
/// say: `SPOC_BOUNDS_CHECK` if set, else on for CPU-resident devices.
///
/// # Errors
/// [`Error::InvalidEnvironment`] for a `SPOC_BOUNDS_CHECK` that is neither on nor off.
pub(crate) fn default_for(caps: &Capabilities) -> Result<bool> {
    Ok(env_switch()?.unwrap_or(caps.is_cpu))
}

/// The fault records ([`checked::RECORD_BYTES`] of device memory each) of one checked kernel
/// that no launch is using: a launch takes one and gives it back.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) struct RecordPool<R>(Mutex<Vec<R>>);

#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
impl<R> RecordPool<R> {
    /// An empty pool.
    pub(crate) fn new() -> RecordPool<R> {
        RecordPool(Mutex::new(Vec::new()))
    }

    /// A spare record, or a new one from `make`. Zeroing it is the launch's job.
    pub(crate) fn take(&self, make: impl FnOnce() -> Result<R>) -> Result<R> {
        // A poisoned lock only means a launch panicked; the spare records are still good.
        let spare = self.0.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match spare {
            Some(r) => Ok(r),
            None => make(),
        }
    }

    /// Returns a record the launch is done with.
    pub(crate) fn give_back(&self, r: R) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(r);
    }

    /// Empties the pool, for releasing its records.
    pub(crate) fn drain(&mut self) -> std::vec::Drain<'_, R> {
        self.0
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
    }
}

/// [`Error::KernelFault`] if the fault record `bytes` read back after a launch of `kernel`
/// says a thread faulted ([`words_of`], [`fault_error`]).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn check_record(kernel: &Kernel, bytes: &[u8]) -> Result<()> {
    match fault_error(kernel, &words_of(bytes)) {
        Some(fault) => Err(fault),
        None => Ok(()),
    }
}

/// The words of a fault record from its bytes (little-endian, as every device here writes it).
pub(crate) fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The [`Error::KernelFault`] a fault record describes, `None` if no thread faulted. The
/// message is worded as the Interpreter's: the statement's `file:line:column` (the file when
/// the kernel registered it), then what went wrong, naming the parameter or array and the index.
pub(crate) fn fault_error(kernel: &Kernel, record: &[u32]) -> Option<Error> {
    let f = checked::decode(kernel, record)?;
    let file = match &f.function {
        None => crate::interpreter::source::kernel_file(kernel),
        Some(h) => kernel
            .function(h)
            .and_then(crate::interpreter::source::helper_file),
    };
    let message = match f.loc {
        Some((line, column)) => {
            let loc = crate::interpreter::SourceLoc {
                file: file.map(str::to_string),
                line,
                column,
                function: f.function.clone(),
            };
            format!("{loc}: {}", f.message)
        }
        None => f.message,
    };
    Some(Error::KernelFault {
        kernel: kernel.name.clone(),
        block: Some(f.block),
        thread: Some(f.thread),
        message,
    })
}
