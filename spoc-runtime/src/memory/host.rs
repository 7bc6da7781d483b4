//! Host memory for the CPU backends (Native, Interpreter, and any test or third-party backend
//! that runs kernels on the host): allocations, transfers, timing events, and the conversion of
//! launch arguments to the native ABI's [`NativeArg`]s.
//!
//! A CPU backend implements the memory, stream and event methods
//! ([`crate::backend::DeviceMemory`]) by invoking [`crate::host_memory_methods!`] inside its
//! `impl DeviceMemory` block.

use crate::args::Arg;
use crate::backend::{DeviceMem, Event};
use crate::error::{Error, Result};
use crate::kernel_abi::NativeArg;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Alignment of every host allocation, in bytes: enough for any scalar and for the elements a
/// buffer accepts ([`crate::MAX_ELEM_ALIGN`]). Not more: the system allocator serves
/// zeroed memory of this alignment with `calloc`, whose large blocks are fresh pages zeroed
/// lazily by the OS, where a larger alignment would memset the whole block.
pub const HOST_ALIGN: usize = 16;

/// A zeroed, [`HOST_ALIGN`]-aligned block of host memory, freed on drop. Kernels write it
/// through raw pointers while launches borrow the buffer that owns it.
pub struct HostBlock {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: the block is plain memory owned by this value; concurrent access is governed by the
// borrows of the `Buffer` that owns it (launches take `&mut` for written buffers).
unsafe impl Send for HostBlock {}
unsafe impl Sync for HostBlock {}

impl HostBlock {
    fn layout(bytes: usize) -> Option<Layout> {
        Layout::from_size_align(bytes, HOST_ALIGN).ok()
    }

    /// Allocates `bytes` zeroed bytes; `None` if the system refuses.
    pub fn new(bytes: usize) -> Option<HostBlock> {
        if bytes == 0 {
            // A well-aligned dangling pointer: never dereferenced (length 0).
            let ptr = NonNull::new(HOST_ALIGN as *mut u8)?;
            return Some(HostBlock { ptr, bytes });
        }
        let layout = Self::layout(bytes)?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        Some(HostBlock { ptr, bytes })
    }

    /// The start of the block.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        if self.bytes > 0 {
            let layout = Self::layout(self.bytes).expect("the layout was valid at allocation");
            // SAFETY: allocated by `alloc_zeroed` with this layout.
            unsafe { dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

fn mem_err(backend: &str, message: String) -> Error {
    Error::Memory {
        backend: backend.to_string(),
        message,
    }
}

/// Allocates `bytes` zeroed bytes of host memory for backend-local device `device`.
///
/// # Errors
/// [`Error::Memory`] if the system refuses.
pub fn alloc(backend: &str, device: usize, bytes: usize) -> Result<DeviceMem> {
    let block = HostBlock::new(bytes).ok_or_else(|| {
        mem_err(
            backend,
            format!("cannot allocate {bytes} bytes of host memory"),
        )
    })?;
    Ok(DeviceMem::new(device, bytes, Box::new(block)))
}

/// The host block of `mem`.
///
/// # Errors
/// [`Error::Memory`] if `mem` is not host memory.
pub fn block<'m>(backend: &str, mem: &'m DeviceMem) -> Result<&'m HostBlock> {
    mem.handle::<HostBlock>()
        .ok_or_else(|| mem_err(backend, "the allocation is not host memory".into()))
}

pub(crate) fn range(
    backend: &str,
    mem: &DeviceMem,
    offset: usize,
    bytes: usize,
) -> Result<*mut u8> {
    let b = block(backend, mem)?;
    match offset.checked_add(bytes) {
        Some(end) if end <= b.bytes => {
            // SAFETY: `offset <= end <= size`, within (or one past) the block.
            Ok(unsafe { b.ptr().add(offset) })
        }
        _ => Err(mem_err(
            backend,
            format!(
                "{bytes} bytes at offset {offset} exceed an allocation of {} bytes",
                b.bytes
            ),
        )),
    }
}

/// Copies `bytes` bytes from `src` into `dst` at `offset`.
///
/// # Safety
/// `src` must be valid for reads of `bytes` bytes and not overlap `dst`'s block.
///
/// # Errors
/// [`Error::Memory`] if the range exceeds the block or `dst` is not host memory.
pub unsafe fn copy_h2d(
    backend: &str,
    dst: &DeviceMem,
    offset: usize,
    src: *const u8,
    bytes: usize,
) -> Result<()> {
    let d = range(backend, dst, offset, bytes)?;
    if bytes > 0 {
        std::ptr::copy_nonoverlapping(src, d, bytes);
    }
    Ok(())
}

/// Copies `bytes` bytes of `src` from `offset` into `dst`.
///
/// # Safety
/// `dst` must be valid for writes of `bytes` bytes and not overlap `src`'s block.
///
/// # Errors
/// [`Error::Memory`] if the range exceeds the block or `src` is not host memory.
pub unsafe fn copy_d2h(
    backend: &str,
    src: &DeviceMem,
    offset: usize,
    dst: *mut u8,
    bytes: usize,
) -> Result<()> {
    let s = range(backend, src, offset, bytes)?;
    if bytes > 0 {
        std::ptr::copy_nonoverlapping(s, dst, bytes);
    }
    Ok(())
}

/// Copies the first `bytes` bytes of `src` into `dst`.
///
/// # Errors
/// [`Error::Memory`] if either is too short or not host memory.
pub fn copy_d2d(backend: &str, dst: &DeviceMem, src: &DeviceMem, bytes: usize) -> Result<()> {
    let d = range(backend, dst, 0, bytes)?;
    let s = range(backend, src, 0, bytes)?;
    if bytes > 0 && d != s {
        // SAFETY: both ranges are in bounds of live blocks; distinct allocations do not overlap
        // (and `copy` tolerates overlap anyway).
        unsafe { std::ptr::copy(s, d, bytes) };
    }
    Ok(())
}

/// A CPU timing event: the instant it was last recorded (shared with the job of a Native
/// stream that records it when the stream reaches it).
#[derive(Debug, Default)]
pub struct CpuEvent(Arc<Mutex<Option<Instant>>>);

/// Records `event` now.
///
/// # Errors
/// [`Error::Driver`] if `event` is not a CPU event.
pub fn record_event(backend: &str, event: &Event) -> Result<()> {
    let stamp = event_stamp(backend, event)?;
    stamp();
    Ok(())
}

/// A function that records `event` when called (from a stream's worker thread).
///
/// # Errors
/// [`Error::Driver`] if `event` is not a CPU event.
pub(crate) fn event_stamp(backend: &str, event: &Event) -> Result<impl FnOnce() + Send + 'static> {
    let e = cpu_event(backend, event)?.0.clone();
    Ok(move || *e.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now()))
}

/// Milliseconds from `start` to `end`.
///
/// # Errors
/// [`Error::Driver`] if either is not a recorded CPU event.
pub fn elapsed_ms(backend: &str, start: &Event, end: &Event) -> Result<f32> {
    let read = |ev: &Event| -> Result<Instant> {
        let t = *cpu_event(backend, ev)?
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        t.ok_or_else(|| Error::Driver {
            backend: backend.to_string(),
            message: "event was never recorded".into(),
        })
    };
    let (a, b) = (read(start)?, read(end)?);
    let ms = if b >= a {
        (b - a).as_secs_f64() * 1e3
    } else {
        -((a - b).as_secs_f64() * 1e3)
    };
    Ok(ms as f32)
}

fn cpu_event<'e>(backend: &str, event: &'e Event) -> Result<&'e CpuEvent> {
    event.handle::<CpuEvent>().ok_or_else(|| Error::Driver {
        backend: backend.to_string(),
        message: "not an event of this backend".into(),
    })
}

/// The native-ABI view of checked launch arguments: host pointers for buffers, values for
/// scalars (`Usize` as `u64`; launches have already converted it to the parameter's type).
///
/// # Errors
/// [`Error::Memory`] if a buffer is not host memory.
pub fn native_args(backend: &str, args: &[Arg<'_>]) -> Result<Vec<NativeArg>> {
    args.iter()
        .map(|a| match a.buffer() {
            Some(b) => Ok(NativeArg::Buffer {
                ptr: block(backend, b.mem())?.ptr(),
                len: b.len(),
                elem_bytes: b.elem_size(),
            }),
            None => a
                .scalar()
                .map(NativeArg::Scalar)
                .ok_or_else(|| mem_err(backend, format!("argument {} has no value", a.describe()))),
        })
        .collect()
}

/// Physical memory of the host in bytes (`MemTotal` of `/proc/meminfo`), or 0 where unknown.
pub fn total_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(0)
}

/// Implements the memory, stream and event methods ([`crate::backend::DeviceMemory`]) with host
/// memory ([`crate::host`]) and streams that run work as it is queued; `(memory)`: the memory
/// methods alone (Native has streams of its own, `cpu/worker.rs`), and `(memory, wait)` with a
/// call of `self.wait()` before every transfer and free. Invoke it inside an
/// `impl DeviceMemory for …` block.
#[macro_export]
macro_rules! host_memory_methods {
    () => {
        $crate::host_memory_methods!(memory);
        fn create_stream(&self, device: usize) -> $crate::Result<$crate::backend::Stream> {
            Ok($crate::backend::Stream::new(device, Box::new(())))
        }
        fn synchronize_stream(&self, _stream: &$crate::backend::Stream) -> $crate::Result<()> {
            Ok(())
        }
        fn destroy_stream(&self, _stream: $crate::backend::Stream) -> $crate::Result<()> {
            Ok(())
        }
        fn create_event(&self, device: usize) -> $crate::Result<$crate::backend::Event> {
            Ok($crate::backend::Event::new(
                device,
                Box::new($crate::host::CpuEvent::default()),
            ))
        }
        fn record_event(
            &self,
            event: &$crate::backend::Event,
            _stream: Option<&$crate::backend::Stream>,
        ) -> $crate::Result<()> {
            $crate::host::record_event($crate::backend::Platform::name(self), event)
        }
        fn event_elapsed_ms(
            &self,
            start: &$crate::backend::Event,
            end: &$crate::backend::Event,
        ) -> $crate::Result<f32> {
            $crate::host::elapsed_ms($crate::backend::Platform::name(self), start, end)
        }
    };
    (memory $(, $wait:ident)?) => {
        fn alloc(&self, device: usize, bytes: usize) -> $crate::Result<$crate::backend::DeviceMem> {
            $crate::host::alloc($crate::backend::Platform::name(self), device, bytes)
        }
        unsafe fn copy_h2d_ptr(
            &self,
            dst: &$crate::backend::DeviceMem,
            offset: usize,
            src: *const u8,
            bytes: usize,
        ) -> $crate::Result<()> {
            $(self.$wait();)?
            $crate::host::copy_h2d(
                $crate::backend::Platform::name(self),
                dst,
                offset,
                src,
                bytes,
            )
        }
        unsafe fn copy_d2h_ptr(
            &self,
            src: &$crate::backend::DeviceMem,
            offset: usize,
            dst: *mut u8,
            bytes: usize,
        ) -> $crate::Result<()> {
            $(self.$wait();)?
            $crate::host::copy_d2h(
                $crate::backend::Platform::name(self),
                src,
                offset,
                dst,
                bytes,
            )
        }
        fn copy_d2d(
            &self,
            dst: &$crate::backend::DeviceMem,
            src: &$crate::backend::DeviceMem,
            bytes: usize,
        ) -> $crate::Result<()> {
            $(self.$wait();)?
            $crate::host::copy_d2d($crate::backend::Platform::name(self), dst, src, bytes)
        }
        fn free(&self, mem: $crate::backend::DeviceMem) -> $crate::Result<()> {
            $(self.$wait();)?
            drop(mem);
            Ok(())
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_zeroed_aligned_and_bounds_checked() {
        let m = alloc("T", 0, 100).unwrap();
        let b = block("T", &m).unwrap();
        assert_eq!(b.ptr() as usize % HOST_ALIGN, 0);
        let mut out = [1u8; 100];
        unsafe { copy_d2h("T", &m, 0, out.as_mut_ptr(), 100).unwrap() };
        assert_eq!(out, [0u8; 100]);
        let src = [7u8; 10];
        unsafe { copy_h2d("T", &m, 90, src.as_ptr(), 10).unwrap() };
        assert!(unsafe { copy_h2d("T", &m, 91, src.as_ptr(), 10) }.is_err());
        assert!(unsafe { copy_h2d("T", &m, usize::MAX, src.as_ptr(), 10) }.is_err());
        let empty = alloc("T", 0, 0).unwrap();
        assert_eq!(block("T", &empty).unwrap().ptr() as usize % HOST_ALIGN, 0);
        assert!(alloc("T", 0, usize::MAX).is_err());
    }
}
