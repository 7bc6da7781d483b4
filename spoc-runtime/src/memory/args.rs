//! Kernel arguments: [`Arg`] (one argument), [`KernelArgs`] (a checked-later list bound to a
//! device) and [`set_args`].

use crate::buffer::{Buffer, RawBuffer};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel_abi::ScalarArg;
use crate::soa::RawSoaBuffer;

/// One kernel argument: a buffer (shared or mutable borrow), a Structure-of-Arrays record
/// buffer (shared or mutable borrow) or a scalar.
///
/// A `&[T]` parameter accepts [`Arg::Buffer`] or [`Arg::BufferMut`]; a `&mut [T]` parameter
/// only [`Arg::BufferMut`]. A record-buffer parameter (`&[P]`, `&mut [P]`) also accepts
/// [`Arg::Soa`] / [`Arg::SoaMut`] under the same rule, on backends that lower SoA parameters
/// ([`crate::Compiler::supports_soa_params`]: CUDA/PTX); elsewhere the launch is refused with
/// [`Error::FeatureNotSupported`]. A kernel `usize` is 32 bits: [`Arg::Usize`] is accepted by a
/// `usize` (`u32`) or `u64` parameter if the value fits.
#[derive(Debug)]
pub enum Arg<'a> {
    /// A buffer the kernel may read.
    Buffer(&'a RawBuffer),
    /// A buffer the kernel may read and write.
    BufferMut(&'a mut RawBuffer),
    /// A Structure-of-Arrays record buffer the kernel may read ([`crate::SoaBuffer`]).
    Soa(&'a RawSoaBuffer),
    /// A Structure-of-Arrays record buffer the kernel may read and write.
    SoaMut(&'a mut RawSoaBuffer),
    /// A `bool`.
    Bool(bool),
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// A `u32`.
    U32(u32),
    /// A `u64`.
    U64(u64),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A host `usize`, for a kernel `usize` (`u32`) or `u64` parameter.
    Usize(usize),
}

impl Arg<'_> {
    /// A copy of a scalar argument (`None` for buffers).
    pub(crate) fn value_copy(&self) -> Option<Arg<'static>> {
        Some(match *self {
            Arg::Bool(v) => Arg::Bool(v),
            Arg::I32(v) => Arg::I32(v),
            Arg::I64(v) => Arg::I64(v),
            Arg::U32(v) => Arg::U32(v),
            Arg::U64(v) => Arg::U64(v),
            Arg::F32(v) => Arg::F32(v),
            Arg::F64(v) => Arg::F64(v),
            Arg::Usize(v) => Arg::Usize(v),
            Arg::Buffer(_) | Arg::BufferMut(_) | Arg::Soa(_) | Arg::SoaMut(_) => return None,
        })
    }

    /// The buffer, if this is a buffer argument.
    pub fn buffer(&self) -> Option<&RawBuffer> {
        match self {
            Arg::Buffer(b) => Some(b),
            Arg::BufferMut(b) => Some(b),
            _ => None,
        }
    }

    /// True for the arguments the kernel may write ([`Arg::BufferMut`], [`Arg::SoaMut`]).
    pub fn writes(&self) -> bool {
        matches!(self, Arg::BufferMut(_) | Arg::SoaMut(_))
    }

    /// The Structure-of-Arrays buffer, if this is an SoA argument.
    pub fn soa(&self) -> Option<&RawSoaBuffer> {
        match self {
            Arg::Soa(b) => Some(b),
            Arg::SoaMut(b) => Some(b),
            _ => None,
        }
    }

    /// The scalar value, if this is a scalar (`Usize` as `U64`; launches have already turned it
    /// into the parameter's type).
    pub fn scalar(&self) -> Option<ScalarArg> {
        Some(match *self {
            Arg::Bool(v) => ScalarArg::Bool(v),
            Arg::I32(v) => ScalarArg::I32(v),
            Arg::I64(v) => ScalarArg::I64(v),
            Arg::U32(v) => ScalarArg::U32(v),
            Arg::U64(v) => ScalarArg::U64(v),
            Arg::F32(v) => ScalarArg::F32(v),
            Arg::F64(v) => ScalarArg::F64(v),
            Arg::Usize(v) => ScalarArg::U64(v as u64),
            Arg::Buffer(_) | Arg::BufferMut(_) | Arg::Soa(_) | Arg::SoaMut(_) => return None,
        })
    }

    /// What the argument is, for error messages (`"f32"`, `"&buffer of f32"`, …).
    pub fn describe(&self) -> String {
        match self {
            Arg::Buffer(b) => format!("&buffer of {}", b.elem_type_name()),
            Arg::BufferMut(b) => format!("&mut buffer of {}", b.elem_type_name()),
            Arg::Soa(b) => format!("&SoA buffer of {}", b.type_name()),
            Arg::SoaMut(b) => format!("&mut SoA buffer of {}", b.type_name()),
            Arg::Bool(_) => "bool".into(),
            Arg::I32(_) => "i32".into(),
            Arg::I64(_) => "i64".into(),
            Arg::U32(_) => "u32".into(),
            Arg::U64(_) => "u64".into(),
            Arg::F32(_) => "f32".into(),
            Arg::F64(_) => "f64".into(),
            Arg::Usize(_) => "usize".into(),
        }
    }
}

macro_rules! from_scalar {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Arg<'_> {
            fn from(v: $t) -> Self {
                Arg::$v(v)
            }
        }
    )*};
}
from_scalar!(bool => Bool, i32 => I32, i64 => I64, u32 => U32, u64 => U64, f32 => F32, f64 => F64, usize => Usize);

impl<'a, T: crate::buffer::DeviceCopy> From<&'a Buffer<T>> for Arg<'a> {
    fn from(b: &'a Buffer<T>) -> Self {
        Arg::Buffer(b.raw())
    }
}

impl<'a, T: crate::buffer::DeviceCopy> From<&'a mut Buffer<T>> for Arg<'a> {
    fn from(b: &'a mut Buffer<T>) -> Self {
        Arg::BufferMut(b.raw_mut())
    }
}

impl<'a> From<&'a RawBuffer> for Arg<'a> {
    fn from(b: &'a RawBuffer) -> Self {
        Arg::Buffer(b)
    }
}

impl<'a> From<&'a mut RawBuffer> for Arg<'a> {
    fn from(b: &'a mut RawBuffer) -> Self {
        Arg::BufferMut(b)
    }
}

/// Arguments bound to a device, ready for [`crate::run_kernel`]. They are checked against the
/// kernel's parameters at every run.
#[derive(Debug)]
pub struct KernelArgs<'a> {
    pub(crate) device: Device,
    pub(crate) args: Vec<Arg<'a>>,
}

impl<'a> KernelArgs<'a> {
    /// The device the arguments were set for.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The arguments.
    pub fn args(&self) -> &[Arg<'a>] {
        &self.args
    }
}

/// Binds `args` to `dev`.
///
/// # Errors
/// [`Error::WrongDevice`] if a buffer lives on another device than `dev`.
pub fn set_args<'a>(dev: &Device, args: Vec<Arg<'a>>) -> Result<KernelArgs<'a>> {
    for a in &args {
        let on = a
            .buffer()
            .map(RawBuffer::device)
            .or_else(|| a.soa().map(RawSoaBuffer::device));
        if let Some(d) = on {
            if !d.same_hardware(dev) {
                return Err(Error::WrongDevice {
                    buffer_device: d.id,
                    device: dev.id,
                });
            }
        }
    }
    Ok(KernelArgs {
        device: dev.clone(),
        args,
    })
}
