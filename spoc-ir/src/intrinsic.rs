//! Intrinsics: thread and block indices, math, atomics and warp operations.
//!
//! Every intrinsic has a path and a name ([`Intrinsic::path`], [`Intrinsic::name`]) — the names a
//! backend's intrinsic registry is keyed by — and a signature that [`crate::validate`] checks.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A grid axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Axis {
    /// The x axis (index 0, the fastest-varying one).
    X,
    /// The y axis (index 1).
    Y,
    /// The z axis (index 2).
    Z,
}

impl Axis {
    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }
    /// `"x"`, `"y"` or `"z"`.
    pub fn letter(self) -> &'static str {
        ["x", "y", "z"][self.index()]
    }
}

/// Math functions on `f32`/`f64` (and, for `Abs`, `Min`, `Max`, on integers), written in a kernel
/// as Rust's methods (`x.sqrt()`, `a.max(b)`, `x.mul_add(a, b)`). `Sqrt` is correctly rounded on
/// every backend; the transcendentals may differ by a few ULP per backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MathFn {
    // unary
    /// `x.sqrt()`: square root, correctly rounded; NaN for `x < 0`.
    Sqrt,
    /// `x.rsqrt()`: `1.0 / x.sqrt()`. Exactly that (two roundings) on the CPU backends and
    /// CUDA/PTX; backends that use the target's own reciprocal square root (CUDA C, HIP, OpenCL,
    /// Vulkan) may differ by a few ULP.
    Rsqrt,
    /// `x.recip()`: `1.0 / x`, correctly rounded.
    Recip,
    /// `x.abs()`: absolute value; on signed integers wrapping (`i32::MIN.abs()` is `i32::MIN`).
    Abs,
    /// `x.floor()`: the largest integer value `<= x`.
    Floor,
    /// `x.ceil()`: the smallest integer value `>= x`.
    Ceil,
    /// `x.round()`: the nearest integer value, halves away from zero (Rust's `round`).
    Round,
    /// `x.trunc()`: the integer part, rounded toward zero.
    Trunc,
    /// `x.exp()`: e^x.
    Exp,
    /// `x.exp2()`: 2^x.
    Exp2,
    /// `x.ln()`: natural logarithm; NaN for `x < 0`, `-inf` for `±0`.
    Ln,
    /// `x.log2()`: base-2 logarithm.
    Log2,
    /// `x.log10()`: base-10 logarithm.
    Log10,
    /// `x.sin()`, `x` in radians.
    Sin,
    /// `x.cos()`, `x` in radians.
    Cos,
    /// `x.tan()`, `x` in radians.
    Tan,
    /// `x.asin()`: arcsine in radians, in `[-π/2, π/2]`; NaN outside `[-1, 1]`.
    Asin,
    /// `x.acos()`: arccosine in radians, in `[0, π]`; NaN outside `[-1, 1]`.
    Acos,
    /// `x.atan()`: arctangent in radians, in `[-π/2, π/2]`.
    Atan,
    /// `x.sinh()`: hyperbolic sine.
    Sinh,
    /// `x.cosh()`: hyperbolic cosine.
    Cosh,
    /// `x.tanh()`: hyperbolic tangent.
    Tanh,
    /// `x.signum()`: `1.0` for `+0.0` and positive values, `-1.0` for `-0.0` and negative
    /// values, NaN for NaN (Rust's `signum`).
    Signum,
    // binary
    /// `a.min(b)`: the smaller operand; on floats a NaN operand yields the other operand.
    Min,
    /// `a.max(b)`: the larger operand; on floats a NaN operand yields the other operand.
    Max,
    /// `x.powf(y)`: x^y with a float exponent (Rust's `powf` on special values).
    Powf,
    /// `y.atan2(x)`: the angle of the point `(x, y)` in radians, in `[-π, π]`.
    Atan2,
    /// `x.hypot(y)`: `sqrt(x² + y²)` without intermediate overflow or underflow.
    Hypot,
    /// `x.copysign(y)`: the magnitude of `x` with the sign bit of `y`.
    Copysign,
    /// `x.powi(n)`: the second argument is `i32`.
    Powi,
    // ternary
    /// `x.mul_add(a, b)` = `x * a + b` with one rounding (a fused multiply-add).
    MulAdd,
}

impl MathFn {
    /// Number of arguments, the receiver included.
    pub fn arity(self) -> usize {
        use MathFn::*;
        match self {
            Min | Max | Powf | Atan2 | Hypot | Copysign | Powi => 2,
            MulAdd => 3,
            _ => 1,
        }
    }
    /// The Rust method name (`"sqrt"`, `"mul_add"`, …).
    pub fn name(self) -> &'static str {
        use MathFn::*;
        match self {
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Recip => "recip",
            Abs => "abs",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            Exp => "exp",
            Exp2 => "exp2",
            Ln => "ln",
            Log2 => "log2",
            Log10 => "log10",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Signum => "signum",
            Min => "min",
            Max => "max",
            Powf => "powf",
            Atan2 => "atan2",
            Hypot => "hypot",
            Copysign => "copysign",
            Powi => "powi",
            MulAdd => "mul_add",
        }
    }
    /// Every math function.
    pub const ALL: [MathFn; 31] = {
        use MathFn::*;
        [
            Sqrt, Rsqrt, Recip, Abs, Floor, Ceil, Round, Trunc, Exp, Exp2, Ln, Log2, Log10, Sin,
            Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Signum, Min, Max, Powf, Atan2, Hypot,
            Copysign, Powi, MulAdd,
        ]
    };
    /// Looks a math function up by its Rust method name.
    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.iter().copied().find(|m| m.name() == name)
    }
    /// True if the function is defined on integers too (`abs`, `min`, `max`).
    pub fn allows_integers(self) -> bool {
        matches!(self, MathFn::Abs | MathFn::Min | MathFn::Max)
    }
}

/// Atomic read-modify-write operations. Each returns the value the element held before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AtomicOp {
    /// `array[index] += value` (wrapping on integers).
    Add,
    /// `array[index] -= value` (wrapping).
    Sub,
    /// `array[index] = min(array[index], value)` (signed or unsigned by the element type).
    Min,
    /// `array[index] = max(array[index], value)` (signed or unsigned by the element type).
    Max,
    /// `array[index] = value`.
    Exchange,
    /// Arguments `(array, index, expected, new)`; returns the previous value.
    CompareExchange,
    /// `array[index] &= value`.
    And,
    /// `array[index] |= value`.
    Or,
    /// `array[index] ^= value`.
    Xor,
}

impl AtomicOp {
    /// Every atomic operation.
    pub const ALL: [AtomicOp; 9] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Exchange,
        AtomicOp::CompareExchange,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
    ];

    /// The element types the operation works on, as error messages list them: 32- and 64-bit
    /// integers, and for [`AtomicOp::Add`] also `f32` and `f64`.
    pub fn element_types(self) -> &'static str {
        if self == AtomicOp::Add {
            "`i32`, `u32`, `i64`, `u64`, `f32` and `f64`"
        } else {
            "`i32`, `u32`, `i64` and `u64`"
        }
    }

    /// The intrinsic's name in the kernel language (`"atomic_add"`, …).
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Exchange => "atomic_exchange",
            AtomicOp::CompareExchange => "atomic_compare_exchange",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
        }
    }
}

/// Warp shuffles. Arguments `(value, lane_or_delta)`; the second is `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ShuffleKind {
    /// Read `value` from the given lane.
    Index,
    /// Read from lane `lane - delta`.
    Up,
    /// Read from lane `lane + delta`.
    Down,
    /// Read from lane `lane ^ mask`.
    Xor,
}

/// The 16-bit float type of the `A` and `B` operands of a warp-level matrix multiply-accumulate
/// ([`Intrinsic::MmaM16N8K16`]) and of [`Intrinsic::PackHalf2`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HalfKind {
    /// IEEE-754 binary16 (`f16`).
    F16,
    /// bfloat16 (`bf16`).
    BF16,
}

impl HalfKind {
    /// The scalar type (`f16` or `bf16`).
    pub fn scalar(self) -> crate::ScalarType {
        match self {
            HalfKind::F16 => crate::ScalarType::F16,
            HalfKind::BF16 => crate::ScalarType::BF16,
        }
    }
    /// `"f16"` or `"bf16"`.
    pub fn name(self) -> &'static str {
        match self {
            HalfKind::F16 => "f16",
            HalfKind::BF16 => "bf16",
        }
    }
}

/// Memory-fence scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FenceScope {
    /// Orders memory accesses as seen by the threads of the block (`__threadfence_block`).
    Block,
    /// Orders memory accesses as seen by every thread of the device (`__threadfence`).
    Device,
}

/// An intrinsic function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Intrinsic {
    /// Thread index within the block (`threadIdx`), `u32`.
    ThreadIdx(Axis),
    /// Block index within the grid (`blockIdx`), `u32`.
    BlockIdx(Axis),
    /// Threads per block (`blockDim`), `u32`.
    BlockDim(Axis),
    /// Blocks per grid (`gridDim`), `u32`.
    GridDim(Axis),
    /// `block_idx * block_dim + thread_idx` (wrapping), `u32`.
    GlobalId(Axis),
    /// `grid_dim * block_dim` (wrapping), `u32`.
    GlobalSize(Axis),
    /// Threads per warp/subgroup, `u32`.
    WarpSize,
    /// Lane index within the warp, `u32`.
    LaneId,
    /// A math function.
    Math(MathFn),
    /// An atomic on an element of a global buffer or shared array: `(array, index, value…)`.
    Atomic(AtomicOp),
    /// A warp shuffle.
    Shuffle(ShuffleKind),
    /// `true` if the predicate holds on any active lane of the warp.
    VoteAny,
    /// `true` if the predicate holds on every active lane of the warp.
    VoteAll,
    /// A `u32` mask with bit `l` set for each active lane `l` whose predicate holds.
    Ballot,
    /// `(lo, hi)` of the 16-bit float type → `u32`: the bits of `lo` in bits 0..16 and those of
    /// `hi` in bits 16..32 (PTX's `.f16x2`/`.bf16x2` register layout: the element of the lower
    /// index in the lower half). Pure; builds the registers of matrix fragments.
    PackHalf2(HalfKind),
    /// The warp-level matrix multiply-accumulate `D = A × B + C` of one 16×8×16 tile, every lane
    /// of the warp taking part (PTX `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`,
    /// sm_80+). Arguments `(a: u32x4, b: u32x2, c: f32x4)`, result `f32x4`: this lane's fragments
    /// in the layout of the PTX ISA's "Matrix Fragments for mma.m16n8k16 with floating point
    /// type" (`spoc::intrinsics::mma_sync_m16n8k16_f16` documents it).
    MmaM16N8K16(HalfKind),
}

impl Intrinsic {
    /// The module path the intrinsic belongs to in the kernel language.
    pub fn path(self) -> &'static str {
        match self {
            Intrinsic::Math(_) => "core::float",
            Intrinsic::Atomic(_) => "spoc::atomic",
            Intrinsic::Shuffle(_)
            | Intrinsic::VoteAny
            | Intrinsic::VoteAll
            | Intrinsic::Ballot
            | Intrinsic::WarpSize
            | Intrinsic::LaneId
            | Intrinsic::MmaM16N8K16(_) => "spoc::warp",
            Intrinsic::PackHalf2(_) => "spoc::matrix",
            _ => "spoc::thread",
        }
    }

    /// The intrinsic's name as written in a kernel (`"thread_idx_x"`, `"sqrt"`, `"atomic_add"`, …).
    pub fn name(self) -> String {
        match self {
            Intrinsic::ThreadIdx(a) => format!("thread_idx_{}", a.letter()),
            Intrinsic::BlockIdx(a) => format!("block_idx_{}", a.letter()),
            Intrinsic::BlockDim(a) => format!("block_dim_{}", a.letter()),
            Intrinsic::GridDim(a) => format!("grid_dim_{}", a.letter()),
            Intrinsic::GlobalId(a) => format!("global_id_{}", a.letter()),
            Intrinsic::GlobalSize(a) => format!("global_size_{}", a.letter()),
            Intrinsic::WarpSize => "warp_size".into(),
            Intrinsic::LaneId => "lane_id".into(),
            Intrinsic::Math(m) => m.name().into(),
            Intrinsic::Atomic(op) => op.name().into(),
            Intrinsic::Shuffle(ShuffleKind::Index) => "shuffle".into(),
            Intrinsic::Shuffle(ShuffleKind::Up) => "shuffle_up".into(),
            Intrinsic::Shuffle(ShuffleKind::Down) => "shuffle_down".into(),
            Intrinsic::Shuffle(ShuffleKind::Xor) => "shuffle_xor".into(),
            Intrinsic::VoteAny => "vote_any".into(),
            Intrinsic::VoteAll => "vote_all".into(),
            Intrinsic::Ballot => "ballot".into(),
            Intrinsic::PackHalf2(h) => format!("pack_{}x2", h.name()),
            Intrinsic::MmaM16N8K16(h) => format!("mma_sync_m16n8k16_{}", h.name()),
        }
    }

    /// The index intrinsic called `name` (`"global_id_x"`, …), if any.
    pub fn index_from_name(name: &str) -> Option<Intrinsic> {
        let (stem, axis) = name.rsplit_once('_')?;
        let axis = match axis {
            "x" => Axis::X,
            "y" => Axis::Y,
            "z" => Axis::Z,
            _ => return None,
        };
        Some(match stem {
            "thread_idx" => Intrinsic::ThreadIdx(axis),
            "block_idx" => Intrinsic::BlockIdx(axis),
            "block_dim" => Intrinsic::BlockDim(axis),
            "grid_dim" => Intrinsic::GridDim(axis),
            "global_id" => Intrinsic::GlobalId(axis),
            "global_size" => Intrinsic::GlobalSize(axis),
            _ => return None,
        })
    }

    /// True for the thread/block/grid index and size intrinsics.
    pub fn is_index(self) -> bool {
        matches!(
            self,
            Intrinsic::ThreadIdx(_)
                | Intrinsic::BlockIdx(_)
                | Intrinsic::BlockDim(_)
                | Intrinsic::GridDim(_)
                | Intrinsic::GlobalId(_)
                | Intrinsic::GlobalSize(_)
        )
    }

    /// True for warp-level operations (shuffles, votes, ballot, lane id, warp size, matrix
    /// multiply-accumulate).
    pub fn is_warp(self) -> bool {
        self.path() == "spoc::warp"
    }
}

impl fmt::Display for Intrinsic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}", self.path(), self.name())
    }
}
