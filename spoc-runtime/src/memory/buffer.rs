//! Typed device memory: [`Buffer<T>`], its untyped core [`RawBuffer`], and the seeds' free
//! functions (`alloc_*`, `to_device`, `from_device`, `free`).

use crate::backend::DeviceMem;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::graph::refuse_in_capture;
use crate::memory::stream::{Settled, Uses};
use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::sync::Arc;

/// Largest element alignment a buffer accepts, in bytes (host memory of the CPU backends is
/// aligned to this; GPU allocations are aligned to at least 256). Every scalar and record of
/// scalars fits.
pub const MAX_ELEM_ALIGN: usize = 16;

/// Plain-old-data element types: what a [`Buffer`] holds, what can be uploaded from the host
/// and read back, and what the runtime may allocate without initialising it from the host
/// ([`Buffer::alloc`] zeroes it; kernels write it).
///
/// Implemented for the scalars (`bool`, the integers, `f32`, `f64`, `half::f16`,
/// `half::bf16`), arrays of them, and by `#[derive(Record)]` for `#[repr(C)]` records of them.
/// References, pointers, `String`s and other types that own or borrow host memory are not:
/// `dev.upload(&[&x])` does not compile.
///
/// `bool` is one byte holding 0 (`false`) or 1 (`true`) on every backend; kernels store only
/// those two values, and the byte-level entry points that could store others
/// ([`RawBuffer::upload_bytes`]) are `unsafe`.
///
/// A record may have padding bytes (`#[repr(C)]` aligns each field). Padding is never copied:
/// a value is uploaded through [`DeviceCopy::write_bytes`], which writes its fields and zeroes
/// the rest, so device memory never holds bytes that Rust considers uninitialised.
///
/// # Safety
/// - All-zero bytes, and every bit pattern a kernel can leave in memory of this type, must be a
///   valid value: scalars, arrays of them, `#[repr(C)]` records of such types. Never implement
///   it for types holding references, pointers or niches (`NonZeroU32`, enums).
/// - [`DeviceCopy::HAS_PADDING`] is `true` if the type (or a type inside it) has padding
///   bytes, and then [`DeviceCopy::write_bytes`] writes every byte that is not padding.
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {
    /// True if a value has padding bytes (anywhere inside it): uploads then go through
    /// [`DeviceCopy::write_bytes`] into a zeroed staging copy instead of copying the value's
    /// memory.
    const HAS_PADDING: bool = false;

    /// Writes the bytes of `self` into `out` (exactly `size_of::<Self>()` bytes), padding bytes
    /// as zeros. The default copies the value's memory, which is right only without padding.
    ///
    /// # Panics
    /// If `out` is not `size_of::<Self>()` bytes long.
    fn write_bytes(&self, out: &mut [u8]) {
        assert_eq!(out.len(), size_of::<Self>(), "write_bytes: wrong length");
        // SAFETY: without padding (the trait's contract when `HAS_PADDING` is false, which a
        // type with padding overrides along with this method) every byte of `self` is
        // initialised; `out` has room for them and cannot overlap `self`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (self as *const Self).cast::<u8>(),
                out.as_mut_ptr(),
                size_of::<Self>(),
            )
        }
    }
}

macro_rules! device_copy {
    ($($t:ty),*) => {$(
        // SAFETY: plain scalars without padding; all-zero bytes are a valid value (`false`
        // for bool), and kernels write only valid values of the type.
        unsafe impl DeviceCopy for $t {}
    )*};
}
device_copy!(
    bool,
    i8,
    u8,
    i16,
    u16,
    i32,
    u32,
    i64,
    u64,
    f32,
    f64,
    half::f16,
    half::bf16
);
// SAFETY: arrays of valid-when-zero elements are valid when zero; an array has padding exactly
// where its elements do, and `write_bytes` writes each element through its own.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {
    const HAS_PADDING: bool = T::HAS_PADDING;

    fn write_bytes(&self, out: &mut [u8]) {
        assert_eq!(out.len(), size_of::<Self>(), "write_bytes: wrong length");
        for (v, o) in self.iter().zip(out.chunks_exact_mut(size_of::<T>())) {
            v.write_bytes(o);
        }
    }
}

/// Runs `f` on the bytes of `data` as they go to the device: `data`'s own memory when `T` has
/// no padding, else a staging copy with every padding byte zero.
fn with_device_bytes<T: DeviceCopy, R>(data: &[T], f: impl FnOnce(*const u8, usize) -> R) -> R {
    if !T::HAS_PADDING {
        return f(data.as_ptr().cast(), size_of_val(data));
    }
    let mut staged = vec![0u8; size_of_val(data)];
    for (v, o) in data
        .iter()
        .zip(staged.chunks_exact_mut(size_of::<T>().max(1)))
    {
        v.write_bytes(o);
    }
    f(staged.as_ptr(), staged.len())
}

/// Element type description of a buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ElemInfo {
    pub(crate) size: usize,
    /// `None` for untyped buffers from [`alloc_custom_bytes`].
    pub(crate) type_id: Option<TypeId>,
    pub(crate) type_name: &'static str,
}

impl ElemInfo {
    fn of<T: 'static>() -> ElemInfo {
        ElemInfo {
            size: size_of::<T>(),
            type_id: Some(TypeId::of::<T>()),
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// One device allocation, shared by the [`RawBuffer`] that owns it and the [`crate::Graph`]s
/// whose work uses it; freed when the last of them lets it go, after the work queued on it.
pub(crate) struct Allocation {
    mem: Option<DeviceMem>,
    device: Device,
    /// Work queued on streams that uses this memory ([`crate::Stream`]): host accesses wait
    /// for it first.
    uses: Uses,
}

impl Allocation {
    /// Frees the memory once the work queued on it has finished (leaks it if that work
    /// failed: it may still run).
    fn release(&mut self) -> Result<()> {
        if let Err(e) = self.uses.settle(true) {
            // Work on a stream may still use the memory: never free it under that work.
            std::mem::forget(self.mem.take());
            return Err(e);
        }
        match self.mem.take() {
            Some(mem) => self.device.backend().free(mem),
            None => Ok(()),
        }
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            tracing::warn!("freeing a buffer of {}: {e}", self.device);
        }
    }
}

/// An untyped device allocation: what a [`Buffer<T>`] is without its `T`, and what
/// [`alloc_custom_bytes`] returns. Freed on drop (once the [`crate::Graph`]s that use it are
/// dropped too). A kernel argument refers to one through [`crate::Arg::Buffer`] or
/// [`crate::Arg::BufferMut`].
pub struct RawBuffer {
    alloc: Arc<Allocation>,
    len: usize,
    pub(crate) elem: ElemInfo,
}

impl RawBuffer {
    pub(crate) fn alloc(device: &Device, len: usize, elem: ElemInfo) -> Result<RawBuffer> {
        let bytes = (len as u64).saturating_mul(elem.size as u64);
        device.check_buffers(&[bytes])?;
        let backend = device.backend();
        let mem = backend.alloc_custom(device.local(), len, elem.size)?;
        Ok(RawBuffer {
            alloc: Arc::new(Allocation {
                mem: Some(mem),
                device: device.clone(),
                uses: Uses::default(),
            }),
            len,
            elem,
        })
    }

    /// Another handle to the same memory (for a graph, which keeps it alive). Host accesses
    /// through either wait for the work queued through either.
    pub(crate) fn share(&self) -> RawBuffer {
        RawBuffer {
            alloc: self.alloc.clone(),
            len: self.len,
            elem: self.elem,
        }
    }

    /// Frees the memory now if no graph holds it too (else the last graph frees it).
    fn release(self) -> Result<()> {
        match Arc::try_unwrap(self.alloc) {
            Ok(mut alloc) => alloc.release(),
            Err(_) => Ok(()),
        }
    }

    /// The work queued on this memory.
    pub(crate) fn uses(&self) -> &Uses {
        &self.alloc.uses
    }

    /// Length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size of one element in bytes.
    pub fn elem_size(&self) -> usize {
        self.elem.size
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len * self.elem.size
    }

    /// The Rust element type's name (`"?"` for untyped buffers).
    pub fn elem_type_name(&self) -> &'static str {
        self.elem.type_name
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        &self.alloc.device
    }

    /// The backend allocation.
    pub fn mem(&self) -> &DeviceMem {
        self.alloc
            .mem
            .as_ref()
            .expect("an allocation holds its memory until dropped")
    }

    /// A process-unique identity of the allocation.
    pub fn allocation_id(&self) -> u64 {
        self.mem().id()
    }

    /// True if `self` and `other` are handles to the same allocation (the same
    /// [`RawBuffer::allocation_id`]).
    pub(crate) fn same_allocation(&self, other: &RawBuffer) -> bool {
        Arc::ptr_eq(&self.alloc, &other.alloc)
    }

    /// Copies the whole buffer to host bytes.
    ///
    /// # Errors
    /// A transfer error.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let _held = self.host_access(false)?;
        let mut out = vec![0u8; self.size_bytes()];
        self.device().backend().copy_d2h(self.mem(), 0, &mut out)?;
        Ok(out)
    }

    /// Overwrites the whole buffer with host bytes.
    ///
    /// # Safety
    /// `bytes` must hold valid values of the buffer's element type, element after element:
    /// any bytes for integers, floats and records of them; only 0 or 1 for a `bool` (a typed
    /// [`Buffer`] reads them back as its `T`).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `bytes` is not [`RawBuffer::size_bytes`] long; a transfer
    /// error.
    pub unsafe fn upload_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.len() != self.size_bytes() {
            return Err(Error::LengthMismatch {
                operation: "upload_bytes",
                expected: self.size_bytes(),
                got: bytes.len(),
            });
        }
        let _held = self.host_access(true)?;
        self.device().backend().copy_h2d(self.mem(), 0, bytes)
    }

    /// # Safety
    /// `src` valid for reads of `bytes` bytes.
    unsafe fn h2d(&self, src: *const u8, bytes: usize) -> Result<()> {
        let _held = self.host_access(true)?;
        self.device()
            .backend()
            .copy_h2d_ptr(self.mem(), 0, src, bytes)
    }

    /// # Safety
    /// `dst` valid for writes of `bytes` bytes.
    unsafe fn d2h(&self, dst: *mut u8, bytes: usize) -> Result<()> {
        let _held = self.host_access(false)?;
        self.device()
            .backend()
            .copy_d2h_ptr(self.mem(), 0, dst, bytes)
    }

    /// Before a host access (a transfer on the default stream): refuses it on the thread that
    /// captures a graph on this buffer's device ([`crate::Stream::capture`]: the captured work
    /// has not run), then settles the buffer; keep the guard for the access.
    fn host_access(&self, write: bool) -> Result<Settled<'_>> {
        refuse_in_capture(self.device(), "a transfer on the default stream")?;
        self.alloc.uses.settle(write)
    }
}

impl fmt::Debug for RawBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawBuffer")
            .field("len", &self.len)
            .field("elem", &self.elem.type_name)
            .field("device", &self.device().id)
            .finish()
    }
}

/// `len` elements of `T` in a device's memory. Freed on drop.
///
/// The contents are reached through transfers ([`Buffer::to_vec`], [`Buffer::upload_from`], …),
/// never as a Rust slice: on a GPU the memory is not the host's.
pub struct Buffer<T: DeviceCopy> {
    raw: RawBuffer,
    _t: PhantomData<T>,
}

fn check_align<T>(device: &Device) -> Result<()> {
    if align_of::<T>() > MAX_ELEM_ALIGN {
        return Err(Error::Memory {
            backend: device.framework.to_string(),
            message: format!(
                "element type {} needs alignment {}, buffers guarantee {MAX_ELEM_ALIGN}",
                std::any::type_name::<T>(),
                align_of::<T>()
            ),
        });
    }
    Ok(())
}

impl<T: DeviceCopy> Buffer<T> {
    /// This buffer as `len() / V::LANES` vectors of its elements (`Buffer<f32>` as
    /// `Buffer<F32x4>`), without a copy: the same device memory, so a kernel taking
    /// `&[F32x4]` gets 16-byte loads (`ld.global.v4.f32`) over data uploaded as `f32`. Every
    /// allocation is aligned for the vector type (to [`MAX_ELEM_ALIGN`] on the CPU backends, at
    /// least 256 bytes on GPUs), so only the length is checked. [`Buffer::into_lanes`] goes
    /// back.
    ///
    /// # Errors
    /// [`Error::NotVectors`] if the length is not a multiple of `V::LANES`; the buffer is
    /// handed back with it, unchanged.
    // The error hands the buffer back, and a buffer carries its `Device` (with its
    // capabilities), hence the size; the error path is taken once, not in a loop.
    #[allow(clippy::result_large_err)]
    pub fn into_vectors<V: crate::memory::vector::VectorOf<T>>(
        self,
    ) -> std::result::Result<Buffer<V>, (Buffer<T>, Error)> {
        let len = self.raw.len;
        if !len.is_multiple_of(V::LANES) {
            return Err((
                self,
                Error::NotVectors {
                    len,
                    lanes: V::LANES,
                    vector: V::NAME,
                },
            ));
        }
        let mut raw = self.raw;
        raw.len = len / V::LANES;
        raw.elem = ElemInfo::of::<V>();
        Ok(Buffer {
            raw,
            _t: PhantomData,
        })
    }

    /// This buffer of vectors as `len() * LANES` elements of their lane type (`Buffer<F32x4>`
    /// as `Buffer<f32>`), without a copy: the inverse of [`Buffer::into_vectors`].
    pub fn into_lanes<L: DeviceCopy>(self) -> Buffer<L>
    where
        T: crate::memory::vector::VectorOf<L>,
    {
        let mut raw = self.raw;
        raw.len *= T::LANES;
        raw.elem = ElemInfo::of::<L>();
        Buffer {
            raw,
            _t: PhantomData,
        }
    }

    /// Allocates `n` zeroed elements on `device`.
    ///
    /// # Errors
    /// [`Error::Memory`] if the allocation fails or `T` is aligned above [`MAX_ELEM_ALIGN`].
    pub fn alloc(device: &Device, n: usize) -> Result<Buffer<T>> {
        check_align::<T>(device)?;
        let raw = RawBuffer::alloc(device, n, ElemInfo::of::<T>())?;
        // Backends do not promise zeroed memory: zero it (the CPU backends' memory already is,
        // but a transfer of zeros is cheap next to an allocation).
        if !device.capabilities.is_cpu && raw.size_bytes() > 0 {
            let zeros = vec![0u8; raw.size_bytes()];
            device.backend().copy_h2d(raw.mem(), 0, &zeros)?;
        }
        Ok(Buffer {
            raw,
            _t: PhantomData,
        })
    }

    /// Allocates a buffer on `device` holding a copy of `data`.
    ///
    /// # Errors
    /// [`Error::Memory`] if the allocation or the copy fails.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Buffer<T>> {
        check_align::<T>(device)?;
        let raw = RawBuffer::alloc(device, data.len(), ElemInfo::of::<T>())?;
        // SAFETY: the bytes `with_device_bytes` hands over are valid for reads of their size;
        // nothing but this function has seen the new buffer (no queued work to wait for).
        with_device_bytes(data, |p, n| unsafe {
            device.backend().copy_h2d_ptr(raw.mem(), 0, p, n)
        })?;
        Ok(Buffer {
            raw,
            _t: PhantomData,
        })
    }

    typed_buffer_accessors!(
        RawBuffer,
        "Length in elements.",
        "The untyped buffer, mutably (for [`crate::Arg::BufferMut`])."
    );

    /// Copies the buffer into a new `Vec`.
    ///
    /// # Errors
    /// A transfer error.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let n = self.len();
        let mut v: Vec<T> = Vec::with_capacity(n);
        // SAFETY: the Vec has room for `n` elements; after the copy they hold the bytes of valid
        // `T`s (uploaded from `T`s, written by kernels as `T`s, zeroes of a `DeviceCopy`, or
        // bytes whose validity an `unsafe` upload_bytes promised).
        unsafe {
            self.raw.d2h(v.as_mut_ptr().cast(), n * size_of::<T>())?;
            v.set_len(n);
        }
        Ok(v)
    }

    /// Copies the buffer into `dst`, which must have exactly [`Buffer::len`] elements.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`]; a transfer error.
    pub fn download(&self, dst: &mut [T]) -> Result<()> {
        self.check_len("download", dst.len())?;
        // SAFETY: `dst` is valid for writes of its size and does not alias device memory.
        unsafe { self.raw.d2h(dst.as_mut_ptr().cast(), size_of_val(dst)) }
    }

    /// Overwrites the buffer with `src`, which must have exactly [`Buffer::len`] elements.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`]; a transfer error.
    pub fn upload_from(&mut self, src: &[T]) -> Result<()> {
        self.check_len("upload_from", src.len())?;
        // SAFETY: the bytes `with_device_bytes` hands over are valid for reads of their size.
        with_device_bytes(src, |p, n| unsafe { self.raw.h2d(p, n) })
    }

    /// Overwrites the first `n` elements with `n` elements read from `src`.
    ///
    /// # Safety
    /// `src` must be valid for reads of `n` elements of `T`.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `n > len`; a transfer error.
    pub unsafe fn upload_from_ptr(&mut self, src: *const T, n: usize) -> Result<()> {
        self.check_prefix("upload_from_ptr", n)?;
        if T::HAS_PADDING {
            // SAFETY: the caller promises `n` readable elements.
            let data = std::slice::from_raw_parts(src, n);
            return with_device_bytes(data, |p, len| self.raw.h2d(p, len));
        }
        self.raw.h2d(src.cast(), n * size_of::<T>())
    }

    /// Copies the first `n` elements to `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `n` elements of `T`.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `n > len`; a transfer error.
    pub unsafe fn download_to_ptr(&self, dst: *mut T, n: usize) -> Result<()> {
        self.check_prefix("download_to_ptr", n)?;
        self.raw.d2h(dst.cast(), n * size_of::<T>())
    }

    /// Overwrites this buffer with the contents of `src` (same length). A device-to-device copy
    /// when both live on the same hardware and the backend supports it; through the host
    /// otherwise.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`]; a transfer error.
    pub fn copy_from(&mut self, src: &Buffer<T>) -> Result<()> {
        self.check_len("copy_from", src.len())?;
        if self.device().same_hardware(src.device()) {
            let bytes = self.raw.size_bytes();
            refuse_in_capture(self.device(), "a copy on the default stream")?;
            let _held = Uses::settle_all([(self.raw.uses(), true), (src.raw.uses(), false)])?;
            match self
                .device()
                .backend()
                .copy_d2d(self.raw.mem(), src.raw.mem(), bytes)
            {
                Err(Error::FeatureNotSupported { .. }) => {}
                other => return other,
            }
        }
        let staged = src.to_vec()?;
        self.upload_from(&staged)
    }

    fn check_len(&self, operation: &'static str, got: usize) -> Result<()> {
        if got == self.len() {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                operation,
                expected: self.len(),
                got,
            })
        }
    }

    fn check_prefix(&self, operation: &'static str, n: usize) -> Result<()> {
        if n <= self.len() {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                operation,
                expected: self.len(),
                got: n,
            })
        }
    }
}

impl<T: DeviceCopy> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("len", &self.raw.len)
            .field("elem", &self.raw.elem.type_name)
            .field("device", &self.raw.device().id)
            .finish()
    }
}

/// `n` zeroed `f32`s on `dev`.
///
/// # Errors
/// [`Error::Memory`] if the allocation fails.
pub fn alloc_f32(dev: &Device, n: usize) -> Result<Buffer<f32>> {
    Buffer::alloc(dev, n)
}

/// `n` zeroed `f64`s on `dev`.
///
/// # Errors
/// [`Error::Memory`] if the allocation fails.
pub fn alloc_f64(dev: &Device, n: usize) -> Result<Buffer<f64>> {
    Buffer::alloc(dev, n)
}

/// `n` zeroed `i32`s on `dev`.
///
/// # Errors
/// [`Error::Memory`] if the allocation fails.
pub fn alloc_i32(dev: &Device, n: usize) -> Result<Buffer<i32>> {
    Buffer::alloc(dev, n)
}

/// `n` zeroed `i64`s on `dev`.
///
/// # Errors
/// [`Error::Memory`] if the allocation fails.
pub fn alloc_i64(dev: &Device, n: usize) -> Result<Buffer<i64>> {
    Buffer::alloc(dev, n)
}

/// `n` zeroed elements of a custom type (a record) on `dev`.
///
/// # Errors
/// [`Error::Memory`] if the allocation fails.
pub fn alloc_custom<T: DeviceCopy>(dev: &Device, n: usize) -> Result<Buffer<T>> {
    Buffer::alloc(dev, n)
}

/// `size` elements of `elem_size` bytes each, untyped (for records without a Rust type). As a
/// kernel argument it matches a buffer parameter whose element has `elem_size` bytes.
///
/// # Errors
/// [`Error::Memory`] if the size overflows or the allocation fails.
pub fn alloc_custom_bytes(dev: &Device, size: usize, elem_size: usize) -> Result<RawBuffer> {
    let raw = RawBuffer::alloc(
        dev,
        size,
        ElemInfo {
            size: elem_size,
            type_id: None,
            type_name: "?",
        },
    )?;
    if !dev.capabilities.is_cpu {
        let zeros = vec![0u8; raw.size_bytes()];
        // Zero bytes are valid for every element type; nothing has seen the new buffer.
        dev.backend().copy_h2d(raw.mem(), 0, &zeros)?;
    }
    Ok(raw)
}

/// Host-to-device transfer: overwrites `dst` with `src` (same length).
///
/// # Errors
/// [`Error::LengthMismatch`]; a transfer error.
pub fn to_device<T: DeviceCopy>(src: &[T], dst: &mut Buffer<T>) -> Result<()> {
    dst.upload_from(src)
}

/// Device-to-host transfer: copies `src` into `dst` (same length).
///
/// # Errors
/// [`Error::LengthMismatch`]; a transfer error.
pub fn from_device<T: DeviceCopy>(src: &Buffer<T>, dst: &mut [T]) -> Result<()> {
    src.download(dst)
}

/// Host-to-device transfer from a raw pointer: overwrites the first `n` elements of `dst`.
///
/// # Safety
/// `src` must be valid for reads of `n` elements.
///
/// # Errors
/// [`Error::LengthMismatch`] if `n > dst.len()`; a transfer error.
pub unsafe fn to_device_ptr<T: DeviceCopy>(
    src: *const T,
    n: usize,
    dst: &mut Buffer<T>,
) -> Result<()> {
    dst.upload_from_ptr(src, n)
}

/// Device-to-host transfer to a raw pointer: copies the first `n` elements of `src`.
///
/// # Safety
/// `dst` must be valid for writes of `n` elements.
///
/// # Errors
/// [`Error::LengthMismatch`] if `n > src.len()`; a transfer error.
pub unsafe fn from_device_ptr<T: DeviceCopy>(src: &Buffer<T>, dst: *mut T, n: usize) -> Result<()> {
    src.download_to_ptr(dst, n)
}

/// Frees a buffer now, reporting the backend's error (dropping it frees it too, logging any
/// error instead).
///
/// # Errors
/// The backend's error while freeing.
pub fn free<T: DeviceCopy>(buf: Buffer<T>) -> Result<()> {
    buf.raw.release()
}
