//! Binding a launch's arguments from the parameter ABI that code generation wrote down
//! ([`spoc_codegen::abi::Abi`], carried by every generated [`crate::backend::Source`]).
//!
//! The GPU backends do not re-derive the layout: they take the result of [`arguments`] (one
//! [`Bound`] per launch argument, for CUDA, HIP and OpenCL) or of [`bindings`] (the scalar
//! block's bytes and the buffers in binding order, for Vulkan) and hand it to their driver.
//! External kernels (`run_source`) get an ABI from their arguments ([`external_params`]).

use crate::args::Arg;
use crate::backend::DeviceMem;
use crate::buffer::RawBuffer;
use crate::error::LaunchProblem;
use spoc_codegen::abi::{Abi, AbiParam, Binding, ParamKind, Slot};
use spoc_ir::ScalarType;
use std::any::Any;
use std::borrow::Cow;

/// A scalar's bytes as passed by value: little-endian, `len` of the 8 bytes used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueBytes {
    bytes: [u8; 8],
    len: u8,
}

impl ValueBytes {
    /// The low `len` bytes of `bits` (the rest zero).
    fn new(bits: u64, len: u8) -> ValueBytes {
        ValueBytes {
            bytes: bits.to_le_bytes(),
            len,
        }
    }

    /// The value's bytes (1, 4 or 8 of them).
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The value zero-extended to 8 bytes, as one `u64` (what a pointer-per-argument launch
    /// points at: the driver reads only the parameter's width).
    pub fn as_u64(&self) -> u64 {
        u64::from_le_bytes(self.bytes)
    }
}

/// One launch argument, bound.
#[derive(Debug)]
pub enum Bound<'a> {
    /// A scalar value or a length, by value.
    Value(ValueBytes),
    /// The device memory of a buffer argument (or of one field of a Structure-of-Arrays
    /// argument): argument `arg` of the launch.
    Mem {
        /// The allocation; the backend turns it into an address or a memory object.
        mem: &'a DeviceMem,
        /// Index of the launch argument it comes from.
        arg: usize,
    },
    /// OpenCL's `__local` pointer: this many bytes, no value.
    Local(usize),
    /// The checked mode's fault record, which the backend supplies.
    FaultRecord,
}

fn reject(message: String) -> LaunchProblem {
    LaunchProblem::Rejected { message }
}

/// The name errors give parameter `i` (its own, or `#i` for external kernels).
fn param_name(p: &AbiParam, i: usize) -> String {
    if p.name.is_empty() {
        format!("#{i}")
    } else {
        p.name.clone()
    }
}

/// The bytes of scalar argument `arg` in a slot `size` bytes wide (`bool` as one byte, or as a
/// `u32` in a 4-byte slot; a host `usize` as a `u32` or `u64` as the slot is wide).
fn scalar_bytes(arg: &Arg<'_>, size: u32) -> Option<ValueBytes> {
    // The value is `size` bytes wide whenever it fits the slot.
    scalar_bits(arg, size).map(|bits| ValueBytes::new(bits, size as u8))
}

/// [`scalar_bytes`] as one `u64`, zero-extended (an `i32` as its `u32` bits).
#[inline(always)]
fn scalar_bits(arg: &Arg<'_>, size: u32) -> Option<u64> {
    Some(match (arg, size) {
        (&Arg::Bool(v), 1 | 4) => v as u64,
        (&Arg::I32(v), 4) => v as u32 as u64,
        (&Arg::U32(v), 4) => v as u64,
        (&Arg::F32(v), 4) => v.to_bits() as u64,
        (&Arg::I64(v), 8) => v as u64,
        (&Arg::U64(v), 8) => v,
        (&Arg::F64(v), 8) => v.to_bits(),
        (&Arg::Usize(v), 4) => u32::try_from(v).ok()? as u64,
        (&Arg::Usize(v), 8) => v as u64,
        _ => return None,
    })
}

/// The problem of a scalar that does not fill its slot.
fn scalar_problem(arg: &Arg<'_>, index: usize, p: &AbiParam, size: u32) -> LaunchProblem {
    match arg {
        Arg::Usize(v) => LaunchProblem::UsizeOverflow {
            index,
            param: param_name(p, index),
            value: *v as u64,
        },
        _ => reject(format!(
            "argument {index} (`{}`) is {}, which does not fill its {size}-byte slot",
            param_name(p, index),
            arg.describe()
        )),
    }
}

fn check_count(abi: &Abi, args: &[Arg<'_>]) -> Result<(), LaunchProblem> {
    if abi.params.len() != args.len() {
        return Err(LaunchProblem::ArgCount {
            expected: abi.params.len(),
            got: args.len(),
        });
    }
    Ok(())
}

/// The `u32` length of a buffer of `len` elements for parameter `i`.
fn length(len: usize, p: &AbiParam, i: usize) -> Result<ValueBytes, LaunchProblem> {
    let len = u32::try_from(len).map_err(|_| LaunchProblem::BufferTooLong {
        param: param_name(p, i),
        len,
    })?;
    Ok(ValueBytes::new(len as u64, 4))
}

/// A launch's bound arguments: inline for up to 8 slots (no heap allocation per launch).
pub type BoundArgs<'a> = smallvec::SmallVec<[Bound<'a>; 8]>;

/// Binds `args` to the launch arguments of an argument-passing ABI
/// ([`spoc_codegen::abi::Passing::Arguments`]): one [`Bound`] per [`Slot`], in order.
/// `shared_mem` is the launch's dynamic shared memory in bytes.
///
/// # Errors
/// [`LaunchProblem::ArgCount`] for a wrong number of arguments; [`LaunchProblem::Rejected`]
/// for an argument of the wrong kind (a scalar for a buffer, a buffer for a scalar, a scalar
/// of another width, an array-of-structures buffer where the kernel takes SoA fields);
/// [`LaunchProblem::UsizeOverflow`] for a `usize` that does not fit its `u32` slot;
/// [`LaunchProblem::BufferTooLong`] for a buffer longer than `u32::MAX` elements.
pub fn arguments<'a>(
    abi: &Abi,
    args: &'a [Arg<'a>],
    shared_mem: usize,
) -> Result<BoundArgs<'a>, LaunchProblem> {
    let mut out = BoundArgs::with_capacity(abi.arguments().len());
    each_argument(abi, args, shared_mem, |b| {
        out.push(b);
        Ok::<(), LaunchProblem>(())
    })?;
    Ok(out)
}

/// [`arguments`] one slot at a time: `out` gets each [`Bound`] in order, as it is bound, and
/// its error stops the binding (a backend that turns each into its driver's value needs no
/// list of them).
///
/// # Errors
/// As [`arguments`] (through `E: From<LaunchProblem>`), or `out`'s error.
#[inline]
pub fn each_argument<'a, E: From<LaunchProblem>>(
    abi: &Abi,
    args: &'a [Arg<'a>],
    shared_mem: usize,
    mut out: impl FnMut(Bound<'a>) -> Result<(), E>,
) -> Result<(), E> {
    check_count(abi, args)?;
    for slot in abi.arguments() {
        match bind_slot(abi, args, shared_mem, slot) {
            Some(b) => out(b)?,
            None => return Err(slot_problem(abi, args, slot).into()),
        }
    }
    Ok(())
}

/// One launch argument bound as a word: [`Bound`] with a value as one `u64`, zero-extended
/// (what a pointer-per-argument launch points at: the driver reads only the parameter's
/// width). [`each_word`] gives them.
#[derive(Debug)]
pub(crate) enum Word<'a> {
    /// A scalar value or a length ([`Bound::Value`]).
    Value(u64),
    /// Device memory ([`Bound::Mem`]).
    Mem {
        /// The allocation.
        mem: &'a DeviceMem,
        /// Index of the launch argument it comes from.
        arg: usize,
    },
    /// [`Bound::Local`].
    Local(usize),
    /// [`Bound::FaultRecord`].
    FaultRecord,
}

/// [`each_argument`] with each slot as a [`Word`] (CUDA's launch: one `u64` per parameter):
/// the same checks and errors, without the bytes of each value.
///
/// # Errors
/// As [`each_argument`].
#[inline(always)]
pub(crate) fn each_word<'a, E: From<LaunchProblem>>(
    abi: &Abi,
    args: &'a [Arg<'a>],
    shared_mem: usize,
    mut out: impl FnMut(Word<'a>) -> Result<(), E>,
) -> Result<(), E> {
    check_count(abi, args)?;
    for slot in abi.arguments() {
        match slot_word(abi, args, shared_mem, slot) {
            Some(w) => out(w)?,
            None => return Err(slot_problem(abi, args, slot).into()),
        }
    }
    Ok(())
}

/// One slot of an argument-passing ABI, bound (the count was checked), or `None` if the
/// argument does not fit it ([`slot_problem`] says why). Inlined into the backends' loops,
/// where the [`Bound`] it returns folds away.
#[inline(always)]
fn bind_slot<'a>(
    abi: &Abi,
    args: &'a [Arg<'a>],
    shared_mem: usize,
    slot: &Slot,
) -> Option<Bound<'a>> {
    Some(match slot_word(abi, args, shared_mem, slot)? {
        // A value fills its slot: `size` bytes for a scalar, a `u32` for a length.
        Word::Value(bits) => Bound::Value(ValueBytes::new(
            bits,
            match *slot {
                Slot::Scalar { size, .. } => size as u8,
                _ => 4,
            },
        )),
        Word::Mem { mem, arg } => Bound::Mem { mem, arg },
        Word::Local(bytes) => Bound::Local(bytes),
        Word::FaultRecord => Bound::FaultRecord,
    })
}

/// [`bind_slot`] as a [`Word`].
#[inline(always)]
fn slot_word<'a>(
    abi: &Abi,
    args: &'a [Arg<'a>],
    shared_mem: usize,
    slot: &Slot,
) -> Option<Word<'a>> {
    Some(match *slot {
        // A buffer has no scalar bytes.
        Slot::Scalar { param, size } => Word::Value(scalar_bits(&args[param], size)?),
        Slot::Address { param, field } => {
            let a = &args[param];
            let mem = match field {
                None => a.buffer()?.mem(),
                Some(f) => a.soa()?.fields().get(f)?.buffer().mem(),
            };
            Word::Mem { mem, arg: param }
        }
        Slot::Length { param } => {
            let a = &args[param];
            let len = match (a.buffer(), a.soa()) {
                (Some(b), _) => b.len(),
                (_, Some(s)) => s.len(),
                (None, None) => return None,
            };
            Word::Value(u32::try_from(len).ok()? as u64)
        }
        Slot::SharedLocal => {
            // OpenCL refuses a zero-sized `__local` argument: at least one element.
            let elem = abi.dyn_shared.map_or(0, |d| d.elem_bytes as usize);
            Word::Local(shared_mem.max(elem))
        }
        Slot::SharedLength { elem_bytes } => {
            let len = u32::try_from(shared_mem / elem_bytes.max(1) as usize).unwrap_or(u32::MAX);
            Word::Value(len as u64)
        }
        Slot::FaultRecord => Word::FaultRecord,
    })
}

/// Why [`bind_slot`] could not bind `slot`.
#[cold]
fn slot_problem(abi: &Abi, args: &[Arg<'_>], slot: &Slot) -> LaunchProblem {
    match *slot {
        Slot::Scalar { param, size } => {
            let (a, p) = (&args[param], &abi.params[param]);
            if a.buffer().is_some() || a.soa().is_some() {
                reject(format!(
                    "argument {param} is a buffer where the kernel takes a scalar"
                ))
            } else {
                scalar_problem(a, param, p, size)
            }
        }
        Slot::Address { param, field } => {
            let a = &args[param];
            match (field, a.buffer(), a.soa()) {
                (Some(f), _, Some(s)) => reject(format!(
                    "argument {param} has {} fields, the kernel takes field {f}",
                    s.fields().len()
                )),
                (None, None, Some(_)) => reject(format!(
                    "argument {param} is a Structure-of-Arrays buffer where the kernel takes an \
                     array-of-structures buffer"
                )),
                (Some(_), _, None) => reject(format!(
                    "argument {param} is {} where the kernel takes a Structure-of-Arrays buffer",
                    a.describe()
                )),
                _ => reject(format!(
                    "argument {param} is {} where the kernel takes a buffer",
                    a.describe()
                )),
            }
        }
        Slot::Length { param } => {
            let a = &args[param];
            let len = match (a.buffer(), a.soa()) {
                (Some(b), _) => b.len(),
                (_, Some(s)) => s.len(),
                (None, None) => {
                    return reject(format!(
                        "argument {param} is {} where the kernel takes a buffer",
                        a.describe()
                    ))
                }
            };
            match length(len, &abi.params[param], param) {
                Err(problem) => problem,
                Ok(_) => reject(format!("argument {param}'s length binds")),
            }
        }
        Slot::SharedLocal | Slot::SharedLength { .. } | Slot::FaultRecord => {
            reject("a slot that always binds".into())
        }
    }
}

/// The arguments of a binding ABI ([`spoc_codegen::abi::Passing::Bindings`]), bound.
#[derive(Debug)]
pub struct Bindings<'a> {
    /// The scalar block's bytes (empty when the kernel binds none).
    pub block: Vec<u8>,
    /// The buffers in binding order (bindings `1 + j`), with the argument each comes from.
    pub buffers: Vec<(&'a RawBuffer, usize)>,
    /// True if the fault record is bound after the buffers.
    pub fault_record: bool,
}

/// Binds `args` to the bindings of a binding ABI: the scalar block written field by field,
/// the buffers in binding order.
///
/// # Errors
/// [`LaunchProblem::ArgCount`]; [`LaunchProblem::Rejected`] for a buffer where the kernel takes
/// a scalar or the reverse (a Structure-of-Arrays buffer included), or a scalar of another
/// width than its field; [`LaunchProblem::UsizeOverflow`] for a `usize` that does not fit.
pub fn bindings<'a>(abi: &Abi, args: &'a [Arg<'a>]) -> Result<Bindings<'a>, LaunchProblem> {
    check_count(abi, args)?;
    for (i, (a, p)) in args.iter().zip(&abi.params).enumerate() {
        let wants_buffer = matches!(p.kind, ParamKind::Buffer { .. } | ParamKind::Soa { .. });
        match (a.buffer().is_some(), wants_buffer) {
            (true, false) => {
                return Err(reject(format!(
                    "argument {i} is a buffer where the kernel takes a scalar"
                )))
            }
            (false, true) => {
                return Err(reject(format!(
                    "argument {i} is {} where the kernel takes a buffer",
                    a.describe()
                )))
            }
            _ => {}
        }
        if a.soa().is_some() {
            return Err(reject(format!(
                "argument {i} is {}, which a binding target cannot take",
                a.describe()
            )));
        }
    }
    let mut out = Bindings {
        block: Vec::new(),
        buffers: Vec::new(),
        fault_record: false,
    };
    for (_, b) in abi.bindings() {
        match b {
            Binding::ScalarBlock { bytes, fields } => {
                out.block = vec![0u8; *bytes as usize];
                for f in fields {
                    let (a, p) = (&args[f.param], &abi.params[f.param]);
                    let v = scalar_bytes(a, f.size)
                        .ok_or_else(|| scalar_problem(a, f.param, p, f.size))?;
                    out.block[f.offset as usize..][..v.as_slice().len()]
                        .copy_from_slice(v.as_slice());
                }
            }
            Binding::Buffer { param } => {
                let b = args[*param].buffer().expect("checked above");
                out.buffers.push((b, *param));
            }
            Binding::FaultRecord => out.fault_record = true,
        }
    }
    Ok(out)
}

/// `abi`, or for an external kernel (`None`) the ABI read off `args` ([`external_params`]; no
/// trailing shared length): what a launch binds its arguments from.
pub fn abi_or_external<'a>(abi: Option<&'a Abi>, args: &[Arg<'_>]) -> Cow<'a, Abi> {
    match abi {
        Some(abi) => Cow::Borrowed(abi),
        None => Cow::Owned(Abi::external_arguments(external_params(args), false)),
    }
}

/// The handle, an `H`, of `mem`, bound to buffer argument `arg` of a launch on backend-local
/// device `local` of `family` (`"CUDA"`).
///
/// # Errors
/// [`LaunchProblem::Rejected`] for another backend's memory or memory of another device.
pub fn device_buffer<'m, H: Any>(
    mem: &'m DeviceMem,
    arg: usize,
    local: usize,
    family: &str,
) -> Result<&'m H, LaunchProblem> {
    let Some(handle) = mem.handle::<H>() else {
        return Err(reject(format!("argument {arg} is not a {family} buffer")));
    };
    if mem.device() != local {
        return Err(reject(format!(
            "argument {arg} lives on {family} device {}, the launch is on device {local}",
            mem.device()
        )));
    }
    Ok(handle)
}

/// The parameters of an external kernel, read off its arguments: a buffer for each buffer
/// argument, a Structure-of-Arrays parameter for each SoA argument (its fields in order), a
/// scalar of the argument's type for each scalar (a host `usize` as a `u32`).
pub fn external_params(args: &[Arg<'_>]) -> Vec<AbiParam> {
    args.iter()
        .map(|a| {
            let kind = match a {
                Arg::Buffer(b) => ParamKind::Buffer {
                    mutable: false,
                    elem_bytes: b.elem_size() as u32,
                },
                Arg::BufferMut(b) => ParamKind::Buffer {
                    mutable: true,
                    elem_bytes: b.elem_size() as u32,
                },
                Arg::Soa(_) | Arg::SoaMut(_) => ParamKind::Soa {
                    mutable: matches!(a, Arg::SoaMut(_)),
                    fields: a
                        .soa()
                        .expect("an SoA argument")
                        .fields()
                        .iter()
                        .map(|f| (f.name().to_string(), f.scalar()))
                        .collect(),
                },
                Arg::Bool(_) => ParamKind::Scalar(ScalarType::Bool),
                Arg::I32(_) => ParamKind::Scalar(ScalarType::I32),
                Arg::I64(_) => ParamKind::Scalar(ScalarType::I64),
                Arg::U32(_) | Arg::Usize(_) => ParamKind::Scalar(ScalarType::U32),
                Arg::U64(_) => ParamKind::Scalar(ScalarType::U64),
                Arg::F32(_) => ParamKind::Scalar(ScalarType::F32),
                Arg::F64(_) => ParamKind::Scalar(ScalarType::F64),
            };
            AbiParam {
                name: String::new(),
                kind,
            }
        })
        .collect()
}

/// Packs bound arguments into one argument buffer, each at its natural alignment (its size:
/// 1, 4 or 8 bytes; a device address, `address(mem)`, 8), the total rounded up to 8 bytes: the
/// `HIP_LAUNCH_PARAM_BUFFER_POINTER` form of a launch.
///
/// # Errors
/// What `address` returns for a memory it refuses (given the memory and the argument's index);
/// [`LaunchProblem::Rejected`] for an argument the form cannot carry (`__local` memory, an
/// unsupplied fault record).
pub fn pack_natural(
    bound: &[Bound<'_>],
    mut address: impl FnMut(&DeviceMem, usize) -> Result<u64, LaunchProblem>,
    fault_record: Option<u64>,
) -> Result<Vec<u8>, LaunchProblem> {
    let mut bytes: Vec<u8> = Vec::new();
    let mut push = |v: &[u8]| {
        let align = v.len().max(1);
        bytes.resize(bytes.len().next_multiple_of(align), 0);
        bytes.extend_from_slice(v);
    };
    for b in bound {
        match b {
            Bound::Value(v) => push(v.as_slice()),
            Bound::Mem { mem, arg } => push(&address(mem, *arg)?.to_le_bytes()),
            Bound::FaultRecord => match fault_record {
                Some(r) => push(&r.to_le_bytes()),
                None => return Err(reject("no fault record to bind".into())),
            },
            Bound::Local(_) => {
                return Err(reject(
                    "`__local` memory in a packed argument buffer".into(),
                ))
            }
        }
    }
    bytes.resize(bytes.len().next_multiple_of(8), 0);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Arg<'_> {
        fn scalar_copy(&self) -> Arg<'static> {
            match *self {
                Arg::Bool(v) => Arg::Bool(v),
                Arg::I32(v) => Arg::I32(v),
                Arg::U32(v) => Arg::U32(v),
                Arg::I64(v) => Arg::I64(v),
                Arg::U64(v) => Arg::U64(v),
                Arg::F32(v) => Arg::F32(v),
                Arg::F64(v) => Arg::F64(v),
                Arg::Usize(v) => Arg::Usize(v),
                _ => unreachable!("scalars only"),
            }
        }
    }
    use spoc_codegen::abi::{BlockField, DynShared, Passing};

    fn p(kind: ParamKind) -> AbiParam {
        AbiParam {
            name: "p".into(),
            kind,
        }
    }

    fn values(b: &[Bound<'_>]) -> Vec<Vec<u8>> {
        b.iter()
            .map(|b| match b {
                Bound::Value(v) => v.as_slice().to_vec(),
                other => panic!("not a value: {other:?}"),
            })
            .collect()
    }

    /// The scalars and lengths of a launch, as CUDA's `Slot`s of before the ABI was data
    /// bound them: `bool` one byte, `usize` a `u32`, 64-bit values 8 bytes, lengths `u32`.
    #[test]
    fn scalars_bind_as_the_cuda_slots_did() {
        let abi = Abi::external_arguments(
            vec![
                p(ParamKind::Scalar(ScalarType::Bool)),
                p(ParamKind::Scalar(ScalarType::I32)),
                p(ParamKind::Scalar(ScalarType::U32)),
                p(ParamKind::Scalar(ScalarType::I64)),
                p(ParamKind::Scalar(ScalarType::U64)),
                p(ParamKind::Scalar(ScalarType::F32)),
                p(ParamKind::Scalar(ScalarType::F64)),
                p(ParamKind::Scalar(ScalarType::U32)),
            ],
            false,
        );
        let args = [
            Arg::Bool(true),
            Arg::I32(-2),
            Arg::U32(7),
            Arg::I64(-3),
            Arg::U64(1 << 40),
            Arg::F32(1.5),
            Arg::F64(-0.25),
            Arg::Usize(9),
        ];
        let bound = arguments(&abi, &args, 0).unwrap();
        assert_eq!(
            values(&bound),
            vec![
                vec![1],
                (-2i32).to_le_bytes().to_vec(),
                7u32.to_le_bytes().to_vec(),
                (-3i64).to_le_bytes().to_vec(),
                (1u64 << 40).to_le_bytes().to_vec(),
                1.5f32.to_le_bytes().to_vec(),
                (-0.25f64).to_le_bytes().to_vec(),
                9u32.to_le_bytes().to_vec(),
            ]
        );
        // As one u64 each (CUDA's pointer-per-argument launch): zero-extended.
        let Bound::Value(b) = &bound[0] else {
            unreachable!()
        };
        assert_eq!(b.as_u64(), 1);
        let mut big: Vec<Arg<'_>> = args.iter().map(|a| a.scalar_copy()).collect();
        big[7] = Arg::Usize(u32::MAX as usize + 1);
        assert!(matches!(
            arguments(&abi, &big, 0),
            Err(LaunchProblem::UsizeOverflow { index: 7, .. })
        ));
        assert!(matches!(
            arguments(&abi, &args[..3], 0),
            Err(LaunchProblem::ArgCount {
                expected: 8,
                got: 3
            })
        ));
        let mut wrong: Vec<Arg<'_>> = args.iter().map(|a| a.scalar_copy()).collect();
        wrong[1] = Arg::F64(1.0);
        assert!(matches!(
            arguments(&abi, &wrong, 0),
            Err(LaunchProblem::Rejected { .. })
        ));
    }

    /// HIP's argument buffer of before (each value at its natural alignment, the total rounded
    /// up to 8), for `bool, u32, f64, bool, i64` and an address-sized value.
    #[test]
    fn packing_matches_the_hip_argument_buffer() {
        let abi = Abi {
            params: vec![
                p(ParamKind::Scalar(ScalarType::Bool)),
                p(ParamKind::Scalar(ScalarType::U32)),
                p(ParamKind::Scalar(ScalarType::F64)),
                p(ParamKind::Scalar(ScalarType::Bool)),
                p(ParamKind::Scalar(ScalarType::U32)),
            ],
            passing: Passing::Arguments(vec![
                Slot::Scalar { param: 0, size: 1 },
                Slot::Scalar { param: 1, size: 4 },
                Slot::Scalar { param: 2, size: 8 },
                Slot::Scalar { param: 3, size: 1 },
                Slot::SharedLength { elem_bytes: 4 },
                Slot::Scalar { param: 4, size: 4 },
                Slot::FaultRecord,
            ]),
            dyn_shared: Some(DynShared { elem_bytes: 4 }),
        };
        let args = [
            Arg::Bool(true),
            Arg::U32(0xAABBCCDD),
            Arg::F64(2.0),
            Arg::Bool(false),
            Arg::U32(5),
        ];
        let bound = arguments(&abi, &args, 40).unwrap();
        let packed = pack_natural(&bound, |_, _| unreachable!(), Some(0x1122)).unwrap();
        // The reference: today's HIP `ArgBuffer`.
        let mut want: Vec<u8> = Vec::new();
        let mut push = |v: &[u8]| {
            let align = v.len().max(1);
            let pad = (align - want.len() % align) % align;
            want.resize(want.len() + pad, 0);
            want.extend_from_slice(v);
        };
        push(&[1]);
        push(&0xAABBCCDDu32.to_ne_bytes());
        push(&2.0f64.to_ne_bytes());
        push(&[0]);
        push(&10u32.to_ne_bytes()); // 40 bytes of f32: 10 elements
        push(&5u32.to_ne_bytes());
        push(&0x1122u64.to_ne_bytes());
        let pad = (8 - want.len() % 8) % 8;
        want.resize(want.len() + pad, 0);
        assert_eq!(packed, want);
        assert_eq!(packed.len(), 40);
        assert!(pack_natural(&bound, |_, _| Ok(0), None).is_err());
    }

    /// Vulkan's scalar block of before: each field at the offset codegen gave, `bool` as a
    /// `u32`, a `usize` as the field's width; the external layout packs `#[repr(C)]`.
    #[test]
    fn scalar_blocks_match_the_vulkan_pack() {
        let abi = Abi {
            params: vec![
                p(ParamKind::Scalar(ScalarType::Bool)),
                p(ParamKind::Scalar(ScalarType::F64)),
                p(ParamKind::Scalar(ScalarType::U32)),
            ],
            passing: Passing::Bindings(vec![(
                0,
                Binding::ScalarBlock {
                    bytes: 24,
                    fields: vec![
                        BlockField {
                            param: 0,
                            offset: 0,
                            size: 4,
                        },
                        BlockField {
                            param: 1,
                            offset: 8,
                            size: 8,
                        },
                        BlockField {
                            param: 2,
                            offset: 16,
                            size: 4,
                        },
                    ],
                },
            )]),
            dyn_shared: None,
        };
        let args = [Arg::Bool(true), Arg::F64(3.0), Arg::Usize(6)];
        let b = bindings(&abi, &args).unwrap();
        let mut want = vec![0u8; 24];
        want[0..4].copy_from_slice(&1u32.to_le_bytes());
        want[8..16].copy_from_slice(&3.0f64.to_le_bytes());
        want[16..20].copy_from_slice(&6u32.to_le_bytes());
        assert_eq!(b.block, want);
        assert!(b.buffers.is_empty() && !b.fault_record);
        // The external form of the same arguments gives the same block.
        let ext = Abi::external_bindings(external_params(&args));
        assert_eq!(bindings(&ext, &args).unwrap().block, want);
        assert!(matches!(
            bindings(&abi, &[Arg::Bool(true), Arg::F32(3.0), Arg::U32(6)]),
            Err(LaunchProblem::Rejected { .. })
        ));
        assert!(matches!(
            bindings(&abi, &[Arg::Bool(true)]),
            Err(LaunchProblem::ArgCount { .. })
        ));
    }

    #[test]
    fn shared_memory_slots() {
        let abi = Abi {
            params: vec![],
            passing: Passing::Arguments(vec![
                Slot::SharedLocal,
                Slot::SharedLength { elem_bytes: 8 },
            ]),
            dyn_shared: Some(DynShared { elem_bytes: 8 }),
        };
        let b = arguments(&abi, &[], 0).unwrap();
        // OpenCL: a zero-sized launch still gets one element of `__local` memory.
        assert!(matches!(b[0], Bound::Local(8)));
        assert_eq!(values(&b[1..]), vec![0u32.to_le_bytes().to_vec()]);
        let b = arguments(&abi, &[], 64).unwrap();
        assert!(matches!(b[0], Bound::Local(64)));
        assert_eq!(values(&b[1..]), vec![8u32.to_le_bytes().to_vec()]);
        // External OpenCL kernels: exactly the launch's bytes.
        let ext = Abi::external_arguments(vec![], true);
        assert!(matches!(
            arguments(&ext, &[], 12).unwrap()[0],
            Bound::Local(12)
        ));
    }
}
