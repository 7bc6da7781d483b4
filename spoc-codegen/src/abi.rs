//! The parameter ABI of generated code, as data ([`Abi`], carried by every [`crate::Source`]).
//!
//! Code generation decides how a kernel's parameters reach it: which launch arguments (or
//! descriptor bindings) each IR parameter becomes, in which order, at which byte offsets, and
//! what follows them (the length of a shared array sized at launch, the checked mode's fault
//! record). [`describe`] writes that decision down once, next to the code, so that a runtime
//! backend binds arguments from the description instead of re-deriving the layout.
//!
//! | target | passing | per IR parameter | after the parameters |
//! | --- | --- | --- | --- |
//! | CUDA/PTX | [`Passing::Arguments`] | scalar: its value ([`Slot::Scalar`], `bool` one byte); buffer: [`Slot::Address`] then [`Slot::Length`]; SoA record buffer: one [`Slot::Address`] per field, then [`Slot::Length`] | [`Slot::FaultRecord`] (checked mode); the dynamic shared size is read by the kernel itself |
//! | CUDA/C, HIP | [`Passing::Arguments`] | as PTX (no SoA) | [`Slot::SharedLength`] (a shared array sized at launch), [`Slot::FaultRecord`] |
//! | OpenCL | [`Passing::Arguments`] | as CUDA/C | [`Slot::SharedLocal`] then [`Slot::SharedLength`], [`Slot::FaultRecord`] |
//! | Vulkan (and the other naga targets) | [`Passing::Bindings`] | scalars: a field of the scalar block at binding 0 ([`Binding::ScalarBlock`], `bool` 4 bytes); buffer: [`Binding::Buffer`] at `1 + j` | [`Binding::FaultRecord`] at `1 + buffers`; a dynamic shared array's length is a specialization constant ([`Abi::dyn_shared`]) |
//!
//! Structure-of-Arrays parameters are refused here, in one place, for every target but
//! CUDA/PTX ([`refuse_soa`]), with [`CodegenError::FeatureNotSupported`].

use crate::{CodegenError, Options, Target};
use spoc_ir::{Kernel, ScalarType, Type};

/// What one IR parameter is, as the ABI sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A scalar passed by value.
    Scalar(ScalarType),
    /// A record or vector passed by value: its `#[repr(C)]` bytes.
    Value {
        /// Size in bytes.
        size: u32,
        /// Alignment in bytes.
        align: u32,
    },
    /// A buffer (`&[T]` / `&mut [T]`), passed as a device address (or a binding) and, on the
    /// argument-passing targets, its length in elements.
    Buffer {
        /// True for `&mut [T]`.
        mutable: bool,
        /// Size in bytes of one element (0 when the element type has no layout).
        elem_bytes: u32,
    },
    /// A record buffer lowered as Structure-of-Arrays (CUDA/PTX only): one device array per
    /// field, in declaration order.
    Soa {
        /// True for `&mut [P]`.
        mutable: bool,
        /// The record's fields: name and scalar type, in declaration order.
        fields: Vec<(String, ScalarType)>,
    },
}

/// One IR parameter: its name and kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbiParam {
    /// The parameter's name.
    pub name: String,
    /// How it is passed.
    pub kind: ParamKind,
}

/// One launch argument of an argument-passing target, in the order the kernel takes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The value of scalar parameter `param`, `size` bytes wide (`bool` is one byte, 0 or 1; a
    /// host `usize` a `u32`).
    Scalar {
        /// Index in [`Abi::params`].
        param: usize,
        /// Width in bytes (1, 4 or 8; a record's size for [`ParamKind::Value`]).
        size: u32,
    },
    /// The device address (a `u64`; an OpenCL `cl_mem`) of buffer parameter `param`, or of
    /// field `field` of an SoA parameter.
    Address {
        /// Index in [`Abi::params`].
        param: usize,
        /// The field of an SoA parameter; `None` for a buffer.
        field: Option<usize>,
    },
    /// The length in elements of buffer (or SoA) parameter `param`, as a `u32`.
    Length {
        /// Index in [`Abi::params`].
        param: usize,
    },
    /// OpenCL: the `__local` pointer of the shared array sized at launch, bound with the
    /// launch's dynamic shared bytes (at least one element) and no value.
    SharedLocal,
    /// The length in elements of the shared array sized at launch, as a `u32`: the launch's
    /// dynamic shared bytes divided by `elem_bytes`.
    SharedLength {
        /// Size in bytes of one element (at least 1).
        elem_bytes: u32,
    },
    /// Checked mode: the fault record ([`crate::checked`]), a device address.
    FaultRecord,
}

/// One non-buffer parameter's place in the scalar block of a binding target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockField {
    /// Index in [`Abi::params`].
    pub param: usize,
    /// Byte offset in the block.
    pub offset: u32,
    /// Size in bytes (4 for `bool`, a `u32` 0 or 1).
    pub size: u32,
}

/// What one descriptor binding (set 0) of a binding target holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// The scalar parameters, one storage buffer laid out as a `#[repr(C)]` struct.
    ScalarBlock {
        /// The block's size in bytes.
        bytes: u32,
        /// Each scalar parameter's offset and size.
        fields: Vec<BlockField>,
    },
    /// Buffer parameter `param`, bound with exactly its bytes (its length is the runtime
    /// array's length).
    Buffer {
        /// Index in [`Abi::params`].
        param: usize,
    },
    /// Checked mode: the fault record.
    FaultRecord,
}

/// How the arguments reach the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Passing {
    /// As launch arguments, in this order (CUDA, HIP, OpenCL).
    Arguments(Vec<Slot>),
    /// As descriptor bindings of set 0: (binding number, what it holds), in binding order
    /// (Vulkan, WebGPU, Metal, GLSL).
    Bindings(Vec<(u32, Binding)>),
}

/// The shared array sized at launch, if the kernel has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynShared {
    /// Size in bytes of one element (at least 1).
    pub elem_bytes: u32,
}

/// The parameter ABI of one generated kernel: its parameters and how each is passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Abi {
    /// The IR parameters, in order.
    pub params: Vec<AbiParam>,
    /// The launch arguments or bindings they become.
    pub passing: Passing,
    /// The shared array sized at launch.
    pub dyn_shared: Option<DynShared>,
}

impl Default for Abi {
    /// No parameters, no arguments.
    fn default() -> Abi {
        Abi {
            params: Vec::new(),
            passing: Passing::Arguments(Vec::new()),
            dyn_shared: None,
        }
    }
}

impl Abi {
    /// The launch arguments, for an argument-passing target (empty for a binding target).
    pub fn arguments(&self) -> &[Slot] {
        match &self.passing {
            Passing::Arguments(s) => s,
            Passing::Bindings(_) => &[],
        }
    }

    /// The bindings, for a binding target (empty for an argument-passing target).
    pub fn bindings(&self) -> &[(u32, Binding)] {
        match &self.passing {
            Passing::Bindings(b) => b,
            Passing::Arguments(_) => &[],
        }
    }

    /// True if checked mode's fault record is passed.
    pub fn has_fault_record(&self) -> bool {
        self.arguments().contains(&Slot::FaultRecord)
            || self
                .bindings()
                .iter()
                .any(|(_, b)| *b == Binding::FaultRecord)
    }

    /// The ABI of an *external* kernel (one spoc did not generate) on an argument-passing
    /// target: each buffer is its address then its `u32` length, each scalar its value; with
    /// `shared_local` (OpenCL, a launch with dynamic shared memory) one [`Slot::SharedLocal`]
    /// after them.
    pub fn external_arguments(params: Vec<AbiParam>, shared_local: bool) -> Abi {
        let mut slots = Vec::new();
        push_param_slots(&params, &mut slots);
        if shared_local {
            slots.push(Slot::SharedLocal);
        }
        Abi {
            params,
            passing: Passing::Arguments(slots),
            dyn_shared: None,
        }
    }

    /// The ABI of an external SPIR-V kernel: the scalars, in order, in a block at binding 0
    /// (each at the next offset aligned to its size; `bool`, 32-bit scalars and a host
    /// `usize` take 4 bytes, 64-bit ones 8; the total rounded up to the largest alignment; no
    /// block without scalars) and buffer `j` at binding `1 + j`.
    pub fn external_bindings(params: Vec<AbiParam>) -> Abi {
        let mut fields = Vec::new();
        let (mut off, mut align) = (0u32, 1u32);
        for (i, p) in params.iter().enumerate() {
            let size = match &p.kind {
                ParamKind::Scalar(s) if s.size_bytes() == 8 => 8,
                ParamKind::Scalar(_) => 4,
                ParamKind::Value { size, .. } => *size,
                ParamKind::Buffer { .. } | ParamKind::Soa { .. } => continue,
            };
            off = off.next_multiple_of(size.max(1));
            fields.push(BlockField {
                param: i,
                offset: off,
                size,
            });
            off += size;
            align = align.max(size.max(1));
        }
        let bytes = off.next_multiple_of(align);
        let mut bindings = Vec::new();
        if !fields.is_empty() {
            bindings.push((
                crate::naga::SCALAR_PARAMS_BINDING,
                Binding::ScalarBlock { bytes, fields },
            ));
        }
        push_buffer_bindings(&params, &mut bindings);
        Abi {
            params,
            passing: Passing::Bindings(bindings),
            dyn_shared: None,
        }
    }
}

fn push_param_slots(params: &[AbiParam], slots: &mut Vec<Slot>) {
    for (i, p) in params.iter().enumerate() {
        match &p.kind {
            ParamKind::Scalar(s) => slots.push(Slot::Scalar {
                param: i,
                size: s.size_bytes() as u32,
            }),
            ParamKind::Value { size, .. } => slots.push(Slot::Scalar {
                param: i,
                size: *size,
            }),
            ParamKind::Buffer { .. } => {
                slots.push(Slot::Address {
                    param: i,
                    field: None,
                });
                slots.push(Slot::Length { param: i });
            }
            ParamKind::Soa { fields, .. } => {
                for f in 0..fields.len() {
                    slots.push(Slot::Address {
                        param: i,
                        field: Some(f),
                    });
                }
                slots.push(Slot::Length { param: i });
            }
        }
    }
}

fn push_buffer_bindings(params: &[AbiParam], bindings: &mut Vec<(u32, Binding)>) {
    let mut next = crate::naga::SCALAR_PARAMS_BINDING + 1;
    for (i, p) in params.iter().enumerate() {
        if matches!(p.kind, ParamKind::Buffer { .. } | ParamKind::Soa { .. }) {
            bindings.push((next, Binding::Buffer { param: i }));
            next += 1;
        }
    }
}

/// Refuses Structure-of-Arrays parameters on `target` unless it is CUDA/PTX: the one place
/// spoc decides that (emitting array-of-structures code for an SoA argument list would be an
/// ABI mismatch no compiler catches). Backends that generate no source (Native, Interpreter)
/// are refused here too.
///
/// # Errors
/// [`CodegenError::FeatureNotSupported`] naming the target's backend and the parameters when
/// `soa_params` is not empty and `target` is not [`Target::CudaPtx`].
pub fn refuse_soa(target: Target, kernel: &str, soa_params: &[&str]) -> Result<(), CodegenError> {
    if target == Target::CudaPtx || soa_params.is_empty() {
        return Ok(());
    }
    Err(CodegenError::FeatureNotSupported {
        backend: target.backend_name().to_string(),
        feature: format!(
            "Structure-of-Arrays buffer arguments (`{}` of kernel `{kernel}`): only CUDA/PTX \
             lowers them; pass an array-of-structures Buffer",
            soa_params.join("`, `")
        ),
    })
}

/// `#[repr(C)]` size and alignment of `ty`, `None` for a type without a memory layout
/// (variants, unsized arrays, recursive records).
fn layout(kernel: &Kernel, ty: &Type, depth: u32) -> Option<(u32, u32)> {
    if depth > 64 {
        return None;
    }
    match ty {
        Type::Unit => Some((0, 1)),
        Type::Scalar(s) => Some((s.size_bytes() as u32, s.size_bytes() as u32)),
        Type::Vector { elem, lanes } => {
            let s = elem.size_bytes() as u32;
            Some((s * *lanes as u32, s))
        }
        Type::Record(name) => {
            let rec = kernel.record(name)?;
            let (mut size, mut align) = (0u32, 1u32);
            for f in &rec.fields {
                let (fs, fa) = layout(kernel, &f.ty, depth + 1)?;
                size = size.checked_next_multiple_of(fa)?.checked_add(fs)?;
                align = align.max(fa);
            }
            Some((size.checked_next_multiple_of(align)?, align))
        }
        Type::Array {
            elem, len: Some(n), ..
        } => {
            let (es, ea) = layout(kernel, elem, depth + 1)?;
            Some((es.checked_mul(*n)?, ea))
        }
        _ => None,
    }
}

/// The parameters of `kernel` as the ABI sees them, with those named in `soa_params` as SoA.
fn params_of(kernel: &Kernel, soa_params: &[&str]) -> Result<Vec<AbiParam>, CodegenError> {
    let mut out = Vec::with_capacity(kernel.params.len());
    for p in &kernel.params {
        let kind = match &p.ty {
            Type::Scalar(s) => ParamKind::Scalar(*s),
            Type::Array { elem, .. } if soa_params.contains(&p.name.as_str()) => {
                // The PTX generator has checked that this is a flat record of scalars.
                let Type::Record(rec) = &**elem else {
                    return Err(soa_not_record(kernel, &p.name));
                };
                let def = kernel
                    .record(rec)
                    .ok_or_else(|| soa_not_record(kernel, &p.name))?;
                let fields = def
                    .fields
                    .iter()
                    .map(|f| {
                        f.ty.as_scalar()
                            .map(|s| (f.name.clone(), s))
                            .ok_or_else(|| soa_not_record(kernel, &p.name))
                    })
                    .collect::<Result<_, _>>()?;
                ParamKind::Soa {
                    mutable: p.mutable,
                    fields,
                }
            }
            Type::Array { elem, .. } => ParamKind::Buffer {
                mutable: p.mutable,
                elem_bytes: layout(kernel, elem, 0).map_or(0, |(s, _)| s),
            },
            other => {
                let (size, align) =
                    layout(kernel, other, 0).ok_or_else(|| CodegenError::Unsupported {
                        kernel: kernel.name.clone(),
                        target: "the parameter ABI",
                        node: format!("parameter `{}` of type `{other}`", p.name),
                        capability: "a type with a #[repr(C)] layout".into(),
                    })?;
                ParamKind::Value { size, align }
            }
        };
        out.push(AbiParam {
            name: p.name.clone(),
            kind,
        });
    }
    Ok(out)
}

fn soa_not_record(kernel: &Kernel, name: &str) -> CodegenError {
    CodegenError::FeatureNotSupported {
        backend: Target::CudaPtx.backend_name().into(),
        feature: format!(
            "Structure-of-Arrays lowering of `{name}` in kernel `{}`: not a buffer of flat records",
            kernel.name
        ),
    }
}

/// The ABI of the code [`crate::generate_source_with`] generates for `target`, `kernel` and
/// `opts` (its SoA parameters and checked mode).
///
/// # Errors
/// [`CodegenError::FeatureNotSupported`] for SoA parameters on a target other than CUDA/PTX
/// ([`refuse_soa`]) or naming a parameter that is not a buffer of flat records;
/// [`CodegenError::Unsupported`] for a by-value parameter or dynamic shared element without a
/// `#[repr(C)]` layout, or (binding targets) a by-value record holding a `bool`.
pub fn describe(target: Target, kernel: &Kernel, opts: &Options<'_>) -> Result<Abi, CodegenError> {
    refuse_soa(target, &kernel.name, opts.soa_params)?;
    let params = params_of(kernel, opts.soa_params)?;
    let dyn_shared = match kernel.shared.iter().find(|s| s.len.is_none()) {
        Some(s) => {
            let (size, _) =
                layout(kernel, &s.elem, 0).ok_or_else(|| CodegenError::Unsupported {
                    kernel: kernel.name.clone(),
                    target: target.backend_name(),
                    node: format!("a shared array sized at launch of `{}`", s.elem),
                    capability: "an element type with a #[repr(C)] layout".into(),
                })?;
            Some(DynShared {
                elem_bytes: size.max(1),
            })
        }
        None => None,
    };
    let passing = match target {
        Target::CudaPtx | Target::CudaC | Target::Hip | Target::OpenCl => {
            let mut slots = Vec::new();
            push_param_slots(&params, &mut slots);
            if let Some(d) = dyn_shared {
                match target {
                    Target::CudaPtx => {}
                    Target::OpenCl => {
                        slots.push(Slot::SharedLocal);
                        slots.push(Slot::SharedLength {
                            elem_bytes: d.elem_bytes,
                        });
                    }
                    _ => slots.push(Slot::SharedLength {
                        elem_bytes: d.elem_bytes,
                    }),
                }
            }
            if opts.checked {
                slots.push(Slot::FaultRecord);
            }
            Passing::Arguments(slots)
        }
        Target::Vulkan | Target::Metal | Target::WebGpu | Target::Glsl => {
            let (slots, bytes) = crate::naga::scalar_params_layout(target, kernel)?;
            let mut bindings = Vec::new();
            if !slots.is_empty() {
                bindings.push((
                    crate::naga::SCALAR_PARAMS_BINDING,
                    Binding::ScalarBlock {
                        bytes,
                        fields: slots
                            .into_iter()
                            .map(|s| BlockField {
                                param: s.param,
                                offset: s.offset,
                                size: s.size,
                            })
                            .collect(),
                    },
                ));
            }
            push_buffer_bindings(&params, &mut bindings);
            if opts.checked {
                let next = bindings.last().map_or(1, |(b, _)| b + 1).max(1);
                bindings.push((next, Binding::FaultRecord));
            }
            Passing::Bindings(bindings)
        }
        Target::Native | Target::Interpreter => Passing::Arguments(Vec::new()),
    };
    Ok(Abi {
        params,
        passing,
        dyn_shared,
    })
}
