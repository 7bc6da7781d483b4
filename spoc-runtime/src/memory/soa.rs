//! Structure-of-Arrays record buffers: [`SoaBuffer<R>`] (typed) and its untyped core
//! [`RawSoaBuffer`].
//!
//! A [`Buffer<R>`](crate::Buffer) of records is an array of structures (AoS): element `i` is
//! `size_of::<R>()` bytes holding every field. A [`SoaBuffer<R>`] stores the same elements as a
//! structure of arrays: one device allocation per field, element `i` of field `f` at
//! `i * size_of::<f>()` in that field's allocation, so threads reading one field of consecutive
//! elements read consecutive memory (coalesced on GPUs).
//!
//! Only records of scalar fields can be stored this way; a record with a nested record (or no
//! field at all) is refused with [`Error::FeatureNotSupported`] when the buffer is made.
//!
//! # Launching
//!
//! A kernel parameter `ps: &[P]` (or `&mut [P]`) takes a `&SoaBuffer<P>` (`&mut SoaBuffer<P>`)
//! in a typed launch tuple ([`BufferArg`], [`BufferMutArg`]), or [`crate::Arg::Soa`] /
//! [`crate::Arg::SoaMut`] in an argument list. The kernel source does not change: the runtime
//! compiles it with the parameter named in [`crate::CompileOptions::soa_params`] (a separate
//! entry of both compile caches), so `ps[i].x` reads field `x`'s array. Only the CUDA/PTX
//! backend generates such code ([`crate::Compiler::supports_soa_params`]); every other backend
//! (CUDA/C, OpenCL, Vulkan, HIP, Native, the Interpreter) refuses a launch with an SoA argument
//! with [`Error::FeatureNotSupported`] before anything runs. Under `SPOC_CHECK`, the
//! Interpreter's checking run gets an array-of-structures copy of the buffer.

use crate::args::Arg;
use crate::buffer::{Buffer, ElemInfo, RawBuffer};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::record::{Record, TypeTag};
use spoc_ir::ScalarType;
use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};

/// One field's array of a [`RawSoaBuffer`].
pub struct SoaField {
    name: &'static str,
    scalar: ScalarType,
    offset: usize,
    buf: RawBuffer,
}

impl SoaField {
    /// The field's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The field's scalar type.
    pub fn scalar(&self) -> ScalarType {
        self.scalar
    }

    /// The field's byte offset in the `#[repr(C)]` record.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The field's device array (as many elements as the buffer, each the field's size).
    pub fn buffer(&self) -> &RawBuffer {
        &self.buf
    }
}

impl fmt::Debug for SoaField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoaField")
            .field("name", &self.name)
            .field("scalar", &self.scalar)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

/// The `#[repr(C)]` layout of a flat record: `(name, scalar, offset)` per field.
type FlatLayout = Vec<(&'static str, ScalarType, usize)>;

/// The layout of `R`, checked against the Rust type's size and alignment.
///
/// # Errors
/// [`Error::FeatureNotSupported`] (naming `backend`) for a nested record or a record without
/// fields; [`Error::Memory`] if the computed layout disagrees with `size_of::<R>()` /
/// `align_of::<R>()` (not a `#[repr(C)]` record as the derive makes them).
fn flat_layout<R: Record>(backend: &str) -> Result<FlatLayout> {
    let refuse = |why: String| {
        Error::unsupported(
            backend,
            format!(
                "Structure-of-Arrays buffers of `{}`: {why} (SoA buffers hold records of scalar fields only)",
                R::NAME
            ),
        )
    };
    if R::FIELDS.is_empty() {
        return Err(refuse("it has no fields".into()));
    }
    let mut out = Vec::with_capacity(R::FIELDS.len());
    let (mut end, mut align) = (0usize, 1usize);
    for f in R::FIELDS {
        let s = match f.tag {
            TypeTag::Scalar(s) => s,
            TypeTag::Record(r) => {
                return Err(refuse(format!("field `{}` is the record `{r}`", f.name)))
            }
        };
        let size = s.size_bytes();
        let offset = end.next_multiple_of(size);
        out.push((f.name, s, offset));
        end = offset + size;
        align = align.max(size);
    }
    let size = end.next_multiple_of(align);
    if size != size_of::<R>() || align != align_of::<R>() {
        return Err(Error::Memory {
            backend: backend.to_string(),
            message: format!(
                "record `{}` lays out as {size} bytes aligned to {align} from its field table, \
                 but the Rust type is {} bytes aligned to {} (not `#[repr(C)]`?)",
                R::NAME,
                size_of::<R>(),
                align_of::<R>()
            ),
        });
    }
    Ok(out)
}

/// An untyped Structure-of-Arrays record buffer: what a [`SoaBuffer<R>`] is without its `R`.
/// One [`RawBuffer`] per field, all of [`RawSoaBuffer::len`] elements, on one device; freed on
/// drop. A kernel argument refers to one through [`Arg::Soa`] or [`Arg::SoaMut`].
pub struct RawSoaBuffer {
    fields: Vec<SoaField>,
    len: usize,
    record: &'static str,
    type_name: &'static str,
    record_size: usize,
    device: Device,
}

impl RawSoaBuffer {
    fn alloc<R: Record>(device: &Device, len: usize) -> Result<RawSoaBuffer> {
        let layout = flat_layout::<R>(device.framework)?;
        let mut fields = Vec::with_capacity(layout.len());
        for (name, scalar, offset) in layout {
            let elem = ElemInfo {
                size: scalar.size_bytes(),
                type_id: crate::ir_scan::scalar_type_id(scalar),
                type_name: scalar.rust_name(),
            };
            let buf = RawBuffer::alloc(device, len, elem)?;
            fields.push(SoaField {
                name,
                scalar,
                offset,
                buf,
            });
        }
        Ok(RawSoaBuffer {
            fields,
            len,
            record: R::NAME,
            type_name: std::any::type_name::<R>(),
            record_size: size_of::<R>(),
            device: device.clone(),
        })
    }

    /// Length in elements (records).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The fields' arrays, in declaration order.
    pub fn fields(&self) -> &[SoaField] {
        &self.fields
    }

    /// The record's name in the IR (the struct's name, [`Record::NAME`]).
    pub fn record_name(&self) -> &'static str {
        self.record
    }

    /// The Rust record type's full name.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Size of one record in bytes (`size_of::<R>()`, the array-of-structures element size).
    pub fn record_size(&self) -> usize {
        self.record_size
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A process-unique identity of the buffer (its first field's allocation's).
    pub fn allocation_id(&self) -> u64 {
        self.fields[0].buf.allocation_id()
    }

    /// Copies the buffer to host bytes in the array-of-structures layout: `len` records of
    /// [`RawSoaBuffer::record_size`] bytes, padding bytes zero.
    ///
    /// # Errors
    /// A transfer error.
    pub fn to_aos_bytes(&self) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.len * self.record_size];
        for f in &self.fields {
            let bytes = f.buf.to_bytes()?;
            let fs = f.scalar.size_bytes();
            for (i, v) in bytes.chunks_exact(fs).enumerate() {
                let at = i * self.record_size + f.offset;
                out[at..at + fs].copy_from_slice(v);
            }
        }
        Ok(out)
    }

    /// Overwrites the buffer with records given as array-of-structures bytes (`len` records of
    /// [`RawSoaBuffer::record_size`] bytes; padding is ignored).
    ///
    /// # Safety
    /// Each field's bytes must be a valid value of the field's type (any bytes for integers and
    /// floats, 0 or 1 for a `bool`): a typed [`SoaBuffer`] reads them back as its records.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `bytes` is not `len * record_size` long; a transfer error.
    pub unsafe fn upload_aos_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.len() != self.len * self.record_size {
            return Err(Error::LengthMismatch {
                operation: "upload_aos_bytes",
                expected: self.len * self.record_size,
                got: bytes.len(),
            });
        }
        for f in &mut self.fields {
            let fs = f.scalar.size_bytes();
            let mut col = Vec::with_capacity(self.len * fs);
            for rec in bytes.chunks_exact(self.record_size) {
                col.extend_from_slice(&rec[f.offset..f.offset + fs]);
            }
            // SAFETY: the caller promised valid field values.
            unsafe { f.buf.upload_bytes(&col)? };
        }
        Ok(())
    }

    fn zero(&mut self) -> Result<()> {
        if self.device.capabilities.is_cpu {
            return Ok(()); // host memory of the CPU backends is zeroed
        }
        for f in &mut self.fields {
            if f.buf.size_bytes() > 0 {
                let zeros = vec![0u8; f.buf.size_bytes()];
                // SAFETY: zero bytes are a valid value of every field type (`R: DeviceCopy`).
                unsafe { f.buf.upload_bytes(&zeros)? };
            }
        }
        Ok(())
    }
}

impl fmt::Debug for RawSoaBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawSoaBuffer")
            .field("len", &self.len)
            .field("record", &self.record)
            .field("fields", &self.fields)
            .field("device", &self.device.id)
            .finish()
    }
}

/// `len` records of type `R` in a device's memory as a structure of arrays: one allocation per
/// field (see the [module docs](self)). Freed on drop.
///
/// Made by [`Device::upload_soa`] / [`SoaBuffer::from_slice`] (a copy of host records) or
/// [`Device::alloc_soa`] / [`SoaBuffer::alloc`] (zeroed records); read back by
/// [`SoaBuffer::to_vec`], which rebuilds the records.
pub struct SoaBuffer<R: Record> {
    raw: RawSoaBuffer,
    _r: PhantomData<R>,
}

impl<R: Record> SoaBuffer<R> {
    /// Allocates `n` zeroed records on `device`, one array per field.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] if `R` has a record field (or no field);
    /// [`Error::Memory`] if an allocation fails.
    pub fn alloc(device: &Device, n: usize) -> Result<SoaBuffer<R>> {
        let mut raw = RawSoaBuffer::alloc::<R>(device, n)?;
        raw.zero()?;
        Ok(SoaBuffer {
            raw,
            _r: PhantomData,
        })
    }

    /// Allocates a buffer on `device` holding a copy of `data`, split into one array per field.
    ///
    /// # Errors
    /// As [`SoaBuffer::alloc`]; a transfer error.
    pub fn from_slice(device: &Device, data: &[R]) -> Result<SoaBuffer<R>> {
        let mut raw = RawSoaBuffer::alloc::<R>(device, data.len())?;
        upload_records(&mut raw, data)?;
        Ok(SoaBuffer {
            raw,
            _r: PhantomData,
        })
    }

    typed_buffer_accessors!(
        RawSoaBuffer,
        "Length in elements (records).",
        "The untyped buffer, mutably (for [`Arg::SoaMut`])."
    );

    /// Copies the buffer back into a `Vec` of records (one download per field).
    ///
    /// # Errors
    /// A transfer error.
    pub fn to_vec(&self) -> Result<Vec<R>> {
        let n = self.raw.len;
        let size = size_of::<R>();
        let mut out: Vec<R> = Vec::with_capacity(n);
        let base = out.as_mut_ptr().cast::<u8>();
        // SAFETY: the Vec owns room for `n` records; all-zero bytes are a valid `R`
        // (`R: DeviceCopy`), so after zeroing every element is valid, and writing a field's
        // bytes (downloaded from a field array of that scalar type) keeps it valid.
        unsafe {
            std::ptr::write_bytes(base, 0, n * size);
            for f in &self.raw.fields {
                let bytes = f.buf.to_bytes()?;
                let fs = f.scalar.size_bytes();
                debug_assert_eq!(bytes.len(), n * fs);
                for i in 0..n {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr().add(i * fs),
                        base.add(i * size + f.offset),
                        fs,
                    );
                }
            }
            out.set_len(n);
        }
        Ok(out)
    }

    /// Overwrites the buffer with `src`, which must have exactly [`SoaBuffer::len`] records.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`]; a transfer error.
    pub fn upload_from(&mut self, src: &[R]) -> Result<()> {
        if src.len() != self.raw.len {
            return Err(Error::LengthMismatch {
                operation: "upload_from",
                expected: self.raw.len,
                got: src.len(),
            });
        }
        upload_records(&mut self.raw, src)
    }

    /// Copies the records into a new array-of-structures [`Buffer<R>`] on the same device.
    ///
    /// # Errors
    /// A transfer or allocation error.
    pub fn to_buffer(&self) -> Result<Buffer<R>> {
        self.raw.device.upload(&self.to_vec()?)
    }
}

/// Splits `data` into `raw`'s field arrays.
fn upload_records<R: Record>(raw: &mut RawSoaBuffer, data: &[R]) -> Result<()> {
    debug_assert_eq!(raw.len, data.len());
    let size = size_of::<R>();
    let base = data.as_ptr().cast::<u8>();
    for f in &mut raw.fields {
        let fs = f.scalar.size_bytes();
        let mut col = vec![0u8; data.len() * fs];
        for i in 0..data.len() {
            // SAFETY: field `f` of record `i` lies at `i * size + offset` within `data`
            // (the layout was checked against `size_of::<R>()`), and its bytes are initialised
            // (a field of a valid record, not padding).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    base.add(i * size + f.offset),
                    col.as_mut_ptr().add(i * fs),
                    fs,
                );
            }
        }
        // SAFETY: the bytes of field `f` of valid records.
        unsafe { f.buf.upload_bytes(&col)? };
    }
    Ok(())
}

impl<R: Record> fmt::Debug for SoaBuffer<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoaBuffer")
            .field("len", &self.raw.len)
            .field("record", &self.raw.record)
            .field("fields", &self.raw.fields.len())
            .field("device", &self.raw.device.id)
            .finish()
    }
}

impl Device {
    /// Allocates a Structure-of-Arrays buffer holding a copy of `data` (one array per field).
    ///
    /// # Errors
    /// As [`SoaBuffer::from_slice`]: [`Error::FeatureNotSupported`] for a record with a nested
    /// record; [`Error::Memory`]; a transfer error.
    pub fn upload_soa<R: Record>(&self, data: &[R]) -> Result<SoaBuffer<R>> {
        SoaBuffer::from_slice(self, data)
    }

    /// Allocates `n` zeroed records as a Structure-of-Arrays buffer.
    ///
    /// # Errors
    /// As [`SoaBuffer::alloc`].
    pub fn alloc_soa<R: Record>(&self, n: usize) -> Result<SoaBuffer<R>> {
        SoaBuffer::alloc(self, n)
    }
}

impl<'a, R: Record> From<&'a SoaBuffer<R>> for Arg<'a> {
    fn from(b: &'a SoaBuffer<R>) -> Self {
        Arg::Soa(&b.raw)
    }
}

impl<'a, R: Record> From<&'a mut SoaBuffer<R>> for Arg<'a> {
    fn from(b: &'a mut SoaBuffer<R>) -> Self {
        Arg::SoaMut(&mut b.raw)
    }
}

impl<'a> From<&'a RawSoaBuffer> for Arg<'a> {
    fn from(b: &'a RawSoaBuffer) -> Self {
        Arg::Soa(b)
    }
}

impl<'a> From<&'a mut RawSoaBuffer> for Arg<'a> {
    fn from(b: &'a mut RawSoaBuffer) -> Self {
        Arg::SoaMut(b)
    }
}

/// What a typed launch tuple takes for a `&[R]` record-buffer parameter: `&Buffer<R>`,
/// `&mut Buffer<R>` or `&SoaBuffer<R>` (and `&mut SoaBuffer<R>`). Sealed to those.
pub trait BufferArg<'a, R>: Into<Arg<'a>> + sealed::Sealed {}

/// What a typed launch tuple takes for a `&mut [R]` record-buffer parameter: `&mut Buffer<R>`
/// or `&mut SoaBuffer<R>`. Sealed to those.
pub trait BufferMutArg<'a, R>: Into<Arg<'a>> + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
    impl<T: crate::DeviceCopy> Sealed for &crate::Buffer<T> {}
    impl<T: crate::DeviceCopy> Sealed for &mut crate::Buffer<T> {}
    impl<R: crate::Record> Sealed for &super::SoaBuffer<R> {}
    impl<R: crate::Record> Sealed for &mut super::SoaBuffer<R> {}
}

impl<'a, T: crate::DeviceCopy> BufferArg<'a, T> for &'a Buffer<T> {}
impl<'a, T: crate::DeviceCopy> BufferArg<'a, T> for &'a mut Buffer<T> {}
impl<'a, R: Record> BufferArg<'a, R> for &'a SoaBuffer<R> {}
impl<'a, R: Record> BufferArg<'a, R> for &'a mut SoaBuffer<R> {}
impl<'a, T: crate::DeviceCopy> BufferMutArg<'a, T> for &'a mut Buffer<T> {}
impl<'a, R: Record> BufferMutArg<'a, R> for &'a mut SoaBuffer<R> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::DeviceCopy;
    use crate::error::LaunchProblem;
    use crate::record::{FieldInfo, FieldType};
    use spoc_ir::{Field, Kernel, Param, RecordDef, Type, VarDecl, VarId, VarKind};

    /// A hand-written record (what `#[derive(Record)]` generates), with a hole before `w`.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    #[repr(C)]
    struct P {
        x: f32,
        id: u32,
        flag: bool,
        w: f64,
    }

    const P_FIELDS: &[FieldInfo] = &[
        FieldInfo {
            name: "x",
            tag: TypeTag::Scalar(ScalarType::F32),
            fields: &[],
        },
        FieldInfo {
            name: "id",
            tag: TypeTag::Scalar(ScalarType::U32),
            fields: &[],
        },
        FieldInfo {
            name: "flag",
            tag: TypeTag::Scalar(ScalarType::Bool),
            fields: &[],
        },
        FieldInfo {
            name: "w",
            tag: TypeTag::Scalar(ScalarType::F64),
            fields: &[],
        },
    ];

    // SAFETY: `#[repr(C)]` of scalars; all-zero bytes are a valid `P`; its 7 padding bytes
    // (after `flag`) are written as zeros, the fields at their offsets.
    unsafe impl DeviceCopy for P {
        const HAS_PADDING: bool = true;
        fn write_bytes(&self, out: &mut [u8]) {
            out.fill(0);
            self.x.write_bytes(&mut out[0..4]);
            self.id.write_bytes(&mut out[4..8]);
            self.flag.write_bytes(&mut out[8..9]);
            self.w.write_bytes(&mut out[16..24]);
        }
    }
    impl FieldType for P {
        const TAG: TypeTag = TypeTag::Record("P");
        const NESTED_FIELDS: &'static [FieldInfo] = P_FIELDS;
        fn ir_type() -> Type {
            Type::Record("P".into())
        }
    }
    // SAFETY: `#[repr(C)]`, fields listed in declaration order.
    unsafe impl Record for P {
        const NAME: &'static str = "P";
        const FIELDS: &'static [FieldInfo] = P_FIELDS;
    }

    /// A record holding a record.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    #[repr(C)]
    struct Outer {
        p: P,
        k: i32,
    }
    // SAFETY: as for `P`; `Outer` has `P`'s padding and 4 bytes after `k`.
    unsafe impl DeviceCopy for Outer {
        const HAS_PADDING: bool = true;
        fn write_bytes(&self, out: &mut [u8]) {
            out.fill(0);
            self.p.write_bytes(&mut out[0..24]);
            self.k.write_bytes(&mut out[24..28]);
        }
    }
    impl FieldType for Outer {
        const TAG: TypeTag = TypeTag::Record("Outer");
        fn ir_type() -> Type {
            Type::Record("Outer".into())
        }
    }
    // SAFETY: as for `P`.
    unsafe impl Record for Outer {
        const NAME: &'static str = "Outer";
        const FIELDS: &'static [FieldInfo] = &[
            FieldInfo {
                name: "p",
                tag: TypeTag::Record("P"),
                fields: P_FIELDS,
            },
            FieldInfo {
                name: "k",
                tag: TypeTag::Scalar(ScalarType::I32),
                fields: &[],
            },
        ];
    }

    fn native() -> Device {
        crate::init_device(Some("Native")).expect("the Native backend")
    }

    fn ps(n: usize) -> Vec<P> {
        (0..n)
            .map(|i| P {
                x: i as f32 * 0.5,
                id: 1000 + i as u32,
                flag: i % 3 == 0,
                w: -(i as f64),
            })
            .collect()
    }

    #[test]
    fn layout_follows_repr_c_and_refuses_nested_records() {
        let l = flat_layout::<P>("Native").unwrap();
        assert_eq!(
            l,
            vec![
                ("x", ScalarType::F32, 0),
                ("id", ScalarType::U32, 4),
                ("flag", ScalarType::Bool, 8),
                ("w", ScalarType::F64, 16)
            ]
        );
        assert_eq!(size_of::<P>(), 24);
        let err = native().upload_soa(&[Outer::default()]).unwrap_err();
        match err {
            Error::FeatureNotSupported { feature, .. } => {
                assert!(feature.contains("field `p` is the record `P`"), "{feature}")
            }
            other => panic!("{other}"),
        }
        assert!(matches!(
            native().alloc_soa::<Outer>(3),
            Err(Error::FeatureNotSupported { .. })
        ));
    }

    #[test]
    fn fields_are_columns_and_round_trip() -> Result<()> {
        let dev = native();
        let host = ps(13);
        let mut b = dev.upload_soa(&host)?;
        assert_eq!((b.len(), b.is_empty()), (13, false));
        assert_eq!(b.to_vec()?, host);
        let f = b.raw().fields();
        assert_eq!(f.len(), 4);
        let ids: Vec<u32> = f[1]
            .buffer()
            .to_bytes()?
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(ids, host.iter().map(|p| p.id).collect::<Vec<_>>());
        assert_eq!(f[3].buffer().size_bytes(), 13 * 8);
        // The AoS view equals the records' bytes field by field (padding zero).
        let aos = b.raw().to_aos_bytes()?;
        assert_eq!(aos.len(), 13 * 24);
        assert_eq!(&aos[24 + 4..24 + 8], &1001u32.to_ne_bytes());
        assert_eq!(&aos[24 + 9..24 + 16], &[0u8; 7]);
        let other = ps(13).into_iter().rev().collect::<Vec<_>>();
        b.upload_from(&other)?;
        assert_eq!(b.to_vec()?, other);
        // SAFETY: the bytes of valid records (read back above).
        unsafe { b.raw_mut().upload_aos_bytes(&aos)? };
        assert_eq!(b.to_vec()?, host);
        assert!(matches!(
            b.upload_from(&host[..3]),
            Err(Error::LengthMismatch {
                expected: 13,
                got: 3,
                ..
            })
        ));
        assert_eq!(b.to_buffer()?.to_vec()?, host);
        let z = dev.alloc_soa::<P>(5)?;
        assert_eq!(z.to_vec()?, vec![P::default(); 5]);
        assert!(dev.alloc_soa::<P>(0)?.to_vec()?.is_empty());
        Ok(())
    }

    /// `k(ps: &mut [P], qs: &[P])` with `P`'s definition.
    fn kernel(def_fields: Vec<Field>) -> Kernel {
        let buf = Type::global_array(Type::Record("P".into()));
        let param = |i: u32, name: &str, mutable| Param {
            var: VarId(i),
            name: name.into(),
            ty: buf.clone(),
            mutable,
        };
        let var = |name: &str| VarDecl {
            name: name.into(),
            ty: buf.clone(),
            mutable: false,
            kind: VarKind::Param,
        };
        Kernel {
            name: "k".into(),
            params: vec![param(0, "ps", true), param(1, "qs", false)],
            vars: vec![var("ps"), var("qs")],
            shared: Vec::new(),
            body: Vec::new(),
            records: vec![RecordDef {
                name: "P".into(),
                fields: def_fields,
            }],
            variants: Vec::new(),
            functions: Vec::new(),
        }
    }

    fn p_fields() -> Vec<Field> {
        [
            ("x", Type::F32),
            ("id", Type::U32),
            ("flag", Type::Scalar(ScalarType::Bool)),
            ("w", Type::F64),
        ]
        .into_iter()
        .map(|(n, ty)| Field { name: n.into(), ty })
        .collect()
    }

    fn soa_problem(r: Result<()>) -> LaunchProblem {
        match r {
            Err(Error::InvalidLaunch { problem, .. }) => problem,
            other => panic!("expected an invalid launch, got {other:?}"),
        }
    }

    #[test]
    fn launch_checks_compare_soa_buffers_with_the_kernel() -> Result<()> {
        let dev = native();
        let mut a = dev.upload_soa(&ps(8))?;
        let b = dev.upload_soa(&ps(8))?;
        let both = vec!["ps".to_string(), "qs".to_string()];
        let k = kernel(p_fields());
        let check = |k: &Kernel, args: &mut [Arg<'_>], soa: &[String]| {
            crate::launch_checks::check_args(k, "k", &dev, args, soa)
        };
        check(&k, &mut [(&mut a).into(), (&b).into()], &both)?;
        // One buffer for the `&mut` and the `&` parameter.
        let alias = a.raw();
        let p = soa_problem(check(&k, &mut [Arg::Soa(alias), Arg::Soa(alias)], &both));
        assert!(matches!(p, LaunchProblem::AliasedBuffer { .. }), "{p}");
        // A shared SoA borrow for the `&mut` parameter.
        let c = dev.upload_soa(&ps(8))?;
        let p = soa_problem(check(&k, &mut [(&c).into(), (&b).into()], &both));
        assert!(matches!(p, LaunchProblem::ReadOnlyBuffer { .. }), "{p}");
        // Compiled without `qs` as SoA.
        let p = soa_problem(check(&k, &mut [(&mut a).into(), (&b).into()], &both[..1]));
        assert!(
            matches!(&p, LaunchProblem::SoaMismatch { param, .. } if param == "qs"),
            "{p}"
        );
        // Compiled with `qs` as SoA, given an AoS buffer.
        let aos = dev.upload(&ps(8))?;
        let p = soa_problem(check(&k, &mut [(&mut a).into(), (&aos).into()], &both));
        assert!(
            matches!(&p, LaunchProblem::SoaMismatch { param, message } if param == "qs" && message.contains("&buffer of")),
            "{p}"
        );
        // The kernel's record has another field type, or another field count.
        let mut f = p_fields();
        f[1].ty = Type::I32;
        let p = soa_problem(check(
            &kernel(f),
            &mut [(&mut a).into(), (&b).into()],
            &both,
        ));
        assert!(
            matches!(&p, LaunchProblem::SoaMismatch { message, .. } if message.contains("`id: i32`")),
            "{p}"
        );
        let mut f = p_fields();
        f.pop();
        let p = soa_problem(check(
            &kernel(f),
            &mut [(&mut a).into(), (&b).into()],
            &both,
        ));
        assert!(
            matches!(&p, LaunchProblem::SoaMismatch { message, .. } if message.contains("3 field(s) in the kernel, the buffer 4")),
            "{p}"
        );
        Ok(())
    }

    #[test]
    fn cpu_backends_refuse_soa_arguments_before_running() -> Result<()> {
        for name in ["Native", "Interpreter"] {
            let dev = crate::init_device(Some(name))?;
            assert!(!dev.backend().supports_soa_params());
            let opts = crate::CompileOptions {
                soa_params: vec!["ps".into()],
                ..Default::default()
            };
            let def: &'static crate::KernelDef = Box::leak(Box::new(crate::KernelDef {
                name: "k",
                ir: || {
                    static K: std::sync::OnceLock<
                        std::result::Result<spoc_ir::ValidKernel, spoc_ir::IrError>,
                    > = std::sync::OnceLock::new();
                    K.get_or_init(|| spoc_ir::ValidKernel::new(kernel(p_fields())))
                        .as_ref()
                        .map_err(Clone::clone)
                },
                native: None,
            }));
            let err = crate::compile_kernel_with(&dev, def, opts).unwrap_err();
            assert!(
                matches!(&err, Error::FeatureNotSupported { feature, .. } if feature.contains("Structure-of-Arrays")),
                "{name}: {err}"
            );
        }
        Ok(())
    }
}
