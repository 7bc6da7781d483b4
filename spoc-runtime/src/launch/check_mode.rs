//! Checked launches: with `SPOC_CHECK=1` in the environment (or [`set_checking`]`(true)`), every
//! typed launch (`kernel.launch(..)`, [`crate::run`]) on a device other than the Interpreter
//! first runs the kernel on the Interpreter, on copies of its buffers, and fails with the
//! Interpreter's report if a thread faults there. The real launch runs only if the check passed,
//! so a kernel meant for a GPU can be checked with one switch and nothing on the device is
//! touched by a faulting kernel.
//!
//! The check costs a download of every buffer argument, an upload into host memory and an
//! interpreted run per launch: it is a debugging switch, off by default.

use crate::args::Arg;
use crate::buffer::{alloc_custom_bytes, RawBuffer};
use crate::dims::Dims;
use crate::error::{Error, Result};
use crate::interpreter_backend::NAME as INTERPRETER;
use crate::kernel_def::KernelDef;
use std::sync::atomic::{AtomicU8, Ordering};

/// 0: follow `SPOC_CHECK`; 1: off; 2: on.
static OVERRIDE: AtomicU8 = AtomicU8::new(0);

/// Turns checked launches on or off for the whole process, overriding `SPOC_CHECK`.
pub fn set_checking(on: bool) {
    OVERRIDE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// True if launches are checked on the Interpreter first: [`set_checking`]'s last value, else
/// the `SPOC_CHECK` switch (read once; off when unset; the values `spoc::env` accepts).
///
/// # Errors
/// [`Error::InvalidEnvironment`] if `SPOC_CHECK` is neither on nor off (every launch then
/// fails with it, until [`set_checking`] decides).
pub fn checking() -> Result<bool> {
    match OVERRIDE.load(Ordering::Relaxed) {
        1 => Ok(false),
        2 => Ok(true),
        _ => match ENV_READ.load(Ordering::Relaxed) {
            1 => Ok(false),
            2 => Ok(true),
            _ => {
                static ENV: crate::env::OnceSwitch =
                    crate::env::OnceSwitch::new("SPOC_CHECK", false);
                let on = ENV.get()?;
                ENV_READ.store(if on { 2 } else { 1 }, Ordering::Relaxed);
                Ok(on)
            }
        },
    }
}

/// `SPOC_CHECK` once read and valid (0: not yet; 1: off; 2: on), so that a launch reads one
/// atomic.
static ENV_READ: AtomicU8 = AtomicU8::new(0);

/// Runs `def` with copies of `args` on the Interpreter; `Ok` if no thread faulted.
///
/// # Errors
/// The Interpreter's error, a [`Error::KernelFault`] whose message starts with
/// `SPOC_CHECK (Interpreter):`; a transfer error while copying the buffers.
pub(crate) fn check_on_interpreter(
    def: &'static KernelDef,
    grid: Dims,
    block: Dims,
    shared_mem: usize,
    args: &[Arg<'_>],
) -> Result<()> {
    let dev = crate::init_device(Some(INTERPRETER))?;
    let mut copies: Vec<Option<RawBuffer>> = Vec::with_capacity(args.len());
    for a in args {
        copies.push(match (a.buffer(), a.soa()) {
            (Some(b), _) => {
                let mut c = alloc_custom_bytes(&dev, b.len(), b.elem_size())?;
                // SAFETY: the bytes of a buffer of the same element type; the copy is
                // untyped and only the Interpreter reads it.
                unsafe { c.upload_bytes(&b.to_bytes()?)? };
                Some(c)
            }
            // The Interpreter runs the kernel on an array-of-structures copy.
            (None, Some(s)) => {
                let mut c = alloc_custom_bytes(&dev, s.len(), s.record_size())?;
                // SAFETY: records assembled from the buffer's own fields; the copy is untyped
                // and only the Interpreter reads it.
                unsafe { c.upload_bytes(&s.to_aos_bytes()?)? };
                Some(c)
            }
            (None, None) => None,
        });
    }
    let mut iargs: Vec<Arg<'_>> = args
        .iter()
        .zip(copies.iter_mut())
        .map(|(a, c)| match c {
            Some(c) => Arg::BufferMut(c),
            None => a.value_copy().expect("an argument is a buffer or a scalar"),
        })
        .collect();
    crate::launch::launch_unchecked(&dev, def, grid, block, shared_mem, &mut iargs, None).map_err(
        |e| match e {
            Error::KernelFault {
                kernel,
                block,
                thread,
                message,
            } => Error::KernelFault {
                kernel,
                block,
                thread,
                message: format!("SPOC_CHECK (Interpreter): {message}"),
            },
            other => other,
        },
    )
}
