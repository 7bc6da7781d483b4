//! The three C dialects and how each spells types, qualifiers and built-in functions.

use crate::Target;
use spoc_ir::{Axis, ScalarType};

/// A C dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// CUDA C++ for NVRTC.
    Cuda,
    /// HIP C++ for hiprtc.
    Hip,
    /// OpenCL C 1.2.
    OpenCl,
}

/// Where a value of a type lives: OpenCL spells `bool` differently in memory shared with the host
/// (buffers, records, shared arrays, kernel arguments: `uchar`, one byte like Rust's `bool`) and
/// in registers (`bool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Storage {
    /// Registers: locals, helper parameters and results.
    Value,
    /// Memory laid out like the host's: buffer elements, record fields, shared arrays, kernel
    /// scalar arguments.
    Memory,
}

impl Dialect {
    /// The dialect of a C-family target.
    pub(crate) fn of(target: Target) -> Option<Dialect> {
        match target {
            Target::CudaC => Some(Dialect::Cuda),
            Target::Hip => Some(Dialect::Hip),
            Target::OpenCl => Some(Dialect::OpenCl),
            _ => None,
        }
    }

    pub(crate) fn is_opencl(self) -> bool {
        self == Dialect::OpenCl
    }

    /// The spelling of a scalar type.
    pub(crate) fn scalar(self, t: ScalarType, storage: Storage) -> &'static str {
        use ScalarType::*;
        match (self, t) {
            (Dialect::OpenCl, Bool) if storage == Storage::Memory => "uchar",
            (_, Bool) => "bool",
            (_, I32) => "int",
            (_, F32) => "float",
            (_, F64) => "double",
            (Dialect::OpenCl, I64) => "long",
            (Dialect::OpenCl, U32) => "uint",
            (Dialect::OpenCl, U64) => "ulong",
            (Dialect::OpenCl, F16 | BF16) => "ushort",
            (_, I64) => "long long",
            (_, U32) => "unsigned int",
            (_, U64) => "unsigned long long",
            (_, F16 | BF16) => "unsigned short",
        }
    }

    /// The unsigned type of the same width as integer type `t`.
    pub(crate) fn unsigned_of(t: ScalarType) -> ScalarType {
        match t {
            ScalarType::I32 | ScalarType::U32 => ScalarType::U32,
            _ => ScalarType::U64,
        }
    }

    /// Qualifiers before a device function (helpers and prelude functions).
    pub(crate) fn device_fn(self) -> &'static str {
        match self {
            Dialect::Cuda | Dialect::Hip => "__device__ static",
            Dialect::OpenCl => "static",
        }
    }

    /// Qualifiers before the kernel.
    pub(crate) fn kernel_fn(self) -> &'static str {
        match self {
            Dialect::Cuda | Dialect::Hip => "extern \"C\" __global__ void",
            Dialect::OpenCl => "__kernel void",
        }
    }

    /// The address-space qualifier of global memory (empty for CUDA/HIP).
    pub(crate) fn global_space(self) -> &'static str {
        if self.is_opencl() {
            "__global "
        } else {
            ""
        }
    }

    /// The address-space qualifier of shared memory in a pointer (empty for CUDA/HIP, whose
    /// pointers are generic).
    pub(crate) fn shared_space(self) -> &'static str {
        if self.is_opencl() {
            "__local "
        } else {
            ""
        }
    }

    /// `float` bits as `unsigned int`.
    pub(crate) fn f32_bits(self) -> &'static str {
        if self.is_opencl() {
            "as_uint"
        } else {
            "__float_as_uint"
        }
    }

    /// `unsigned int` bits as `float`.
    pub(crate) fn f32_from_bits(self) -> &'static str {
        if self.is_opencl() {
            "as_float"
        } else {
            "__uint_as_float"
        }
    }

    /// `double` bits as a 64-bit integer, written so that the result is unsigned.
    pub(crate) fn f64_bits(self, x: &str) -> String {
        if self.is_opencl() {
            format!("as_ulong({x})")
        } else {
            format!("(unsigned long long)__double_as_longlong({x})")
        }
    }

    /// 64-bit unsigned bits as `double`.
    pub(crate) fn f64_from_bits(self, x: &str) -> String {
        if self.is_opencl() {
            format!("as_double({x})")
        } else {
            format!("__longlong_as_double((long long)({x}))")
        }
    }

    /// The thread/block index intrinsics: (thread index, block index, block size, grid size).
    pub(crate) fn index(self, which: IndexKind, axis: Axis) -> String {
        let a = axis.letter();
        let i = axis.index();
        match (self, which) {
            (Dialect::OpenCl, IndexKind::Thread) => format!("(uint)get_local_id({i})"),
            (Dialect::OpenCl, IndexKind::Block) => format!("(uint)get_group_id({i})"),
            (Dialect::OpenCl, IndexKind::BlockDim) => format!("(uint)get_local_size({i})"),
            (Dialect::OpenCl, IndexKind::GridDim) => format!("(uint)get_num_groups({i})"),
            (Dialect::OpenCl, IndexKind::Global) => format!("(uint)get_global_id({i})"),
            (Dialect::OpenCl, IndexKind::GlobalSize) => format!("(uint)get_global_size({i})"),
            (_, IndexKind::Thread) => format!("threadIdx.{a}"),
            (_, IndexKind::Block) => format!("blockIdx.{a}"),
            (_, IndexKind::BlockDim) => format!("blockDim.{a}"),
            (_, IndexKind::GridDim) => format!("gridDim.{a}"),
            (_, IndexKind::Global) => format!("blockIdx.{a} * blockDim.{a} + threadIdx.{a}"),
            (_, IndexKind::GlobalSize) => format!("gridDim.{a} * blockDim.{a}"),
        }
    }
}

/// Which index intrinsic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IndexKind {
    Thread,
    Block,
    BlockDim,
    GridDim,
    Global,
    GlobalSize,
}

/// Names of the built-in functions and variables the generated code calls: a kernel variable
/// with one of these names would hide them, so it is renamed (`v_<name>`).
pub(crate) const BUILTINS: &[&str] = &[
    "sqrtf",
    "rsqrtf",
    "fabsf",
    "floorf",
    "ceilf",
    "roundf",
    "truncf",
    "expf",
    "exp2f",
    "logf",
    "log2f",
    "log10f",
    "sinf",
    "cosf",
    "tanf",
    "asinf",
    "acosf",
    "atanf",
    "sinhf",
    "coshf",
    "tanhf",
    "fminf",
    "fmaxf",
    "powf",
    "atan2f",
    "hypotf",
    "copysignf",
    "fmaf",
    "fmodf",
    "rsqrt",
    "fabs",
    "exp2",
    "log2",
    "log10",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "fmin",
    "fmax",
    "atan2",
    "hypot",
    "copysign",
    "fmod",
    "atomicAdd",
    "atomicSub",
    "atomicMin",
    "atomicMax",
    "atomicExch",
    "atomicCAS",
    "atomicAnd",
    "atomicOr",
    "atomicXor",
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_xchg",
    "atomic_cmpxchg",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atom_add",
    "atom_sub",
    "atom_min",
    "atom_max",
    "atom_xchg",
    "atom_cmpxchg",
    "atom_and",
    "atom_or",
    "atom_xor",
    "barrier",
    "mem_fence",
    "get_local_id",
    "get_group_id",
    "get_local_size",
    "get_num_groups",
    "get_global_id",
    "get_global_size",
    "get_max_sub_group_size",
    "get_sub_group_local_id",
    "sub_group_any",
    "sub_group_all",
    "sub_group_ballot",
    "sub_group_shuffle",
    "sub_group_shuffle_xor",
    "sub_group_shuffle_up",
    "sub_group_shuffle_down",
    "sub_group_barrier",
    "as_uint",
    "as_float",
    "as_ulong",
    "as_double",
    "uchar",
    "ushort",
    "ulong",
    "long",
    "short",
];
