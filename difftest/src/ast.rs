//! The kernel AST of the random tests: a small, typed subset of the kernel language that the
//! generator ([`crate::gen`]) builds, the printer ([`crate::print`]) writes as Rust source, the
//! oracle ([`crate::oracle`]) evaluates with Rust's own operators, and the shrinker
//! ([`crate::shrink`]) reduces.
//!
//! Every kernel has the same frame: scalar parameters, read-only input buffers (`x_T`, one per
//! element type, [`IN_LEN`] elements), output buffers (`o_T`, [`SLOTS`] slots per thread, each
//! thread writing only its own slots `o_T[gid * SLOTS + k]`), global accumulators only touched
//! by order-independent atomics (`acc{k}`), and shared arrays of one element per thread of the
//! block. By construction every index is in bounds (`% LEN`, or a length known to be right),
//! every integer divisor is a non-zero literal or `(d | 1)`, and every loop has a bounded trip
//! count.

/// A scalar type of the kernel language. `Usize` is the language's 32-bit `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ty {
    /// `bool`
    Bool,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `i64`
    I64,
    /// `u64`
    U64,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// `usize` (32 bits in kernels)
    Usize,
}

impl Ty {
    /// Every scalar type.
    pub const ALL: [Ty; 8] = [
        Ty::Bool,
        Ty::I32,
        Ty::U32,
        Ty::I64,
        Ty::U64,
        Ty::F32,
        Ty::F64,
        Ty::Usize,
    ];
    /// The numeric types (every scalar but `bool`, which [`Ty::ALL`] has first).
    pub const NUM: &'static [Ty] = Ty::ALL.split_at(1).1;
    /// The element types of buffers (inputs, outputs): every scalar but `bool` and `usize`.
    pub const BUF: [Ty; 6] = [Ty::I32, Ty::U32, Ty::I64, Ty::U64, Ty::F32, Ty::F64];
    /// The integer types.
    pub const INTS: [Ty; 5] = [Ty::I32, Ty::U32, Ty::I64, Ty::U64, Ty::Usize];

    /// The type as Rust writes it.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::I32 => "i32",
            Ty::U32 => "u32",
            Ty::I64 => "i64",
            Ty::U64 => "u64",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Usize => "usize",
        }
    }
    /// An integer type (`usize` included).
    pub fn is_int(self) -> bool {
        matches!(self, Ty::I32 | Ty::U32 | Ty::I64 | Ty::U64 | Ty::Usize)
    }
    /// A signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, Ty::I32 | Ty::I64)
    }
    /// `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }
    /// Width in bits (`bool`: 1; `usize`: 32).
    pub fn bits(self) -> u32 {
        match self {
            Ty::Bool => 1,
            Ty::I32 | Ty::U32 | Ty::F32 | Ty::Usize => 32,
            Ty::I64 | Ty::U64 | Ty::F64 => 64,
        }
    }
    /// Index of a buffer element type in [`Ty::BUF`].
    pub fn buf_index(self) -> Option<usize> {
        Ty::BUF.iter().position(|&t| t == self)
    }
}

/// A value of a scalar type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// A `bool`.
    Bool(bool),
    /// An `i32`.
    I32(i32),
    /// A `u32`.
    U32(u32),
    /// An `i64`.
    I64(i64),
    /// A `u64`.
    U64(u64),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A kernel `usize` (32 bits).
    Usize(u32),
}

impl Val {
    /// The value's type.
    pub fn ty(self) -> Ty {
        match self {
            Val::Bool(_) => Ty::Bool,
            Val::I32(_) => Ty::I32,
            Val::U32(_) => Ty::U32,
            Val::I64(_) => Ty::I64,
            Val::U64(_) => Ty::U64,
            Val::F32(_) => Ty::F32,
            Val::F64(_) => Ty::F64,
            Val::Usize(_) => Ty::Usize,
        }
    }
    /// The zero (or `false`) of a type.
    pub fn zero(ty: Ty) -> Val {
        Val::from_bits(ty, 0)
    }
    /// The value of `ty` whose bits are the low bits of `bits` (`bool`: bit 0).
    pub fn from_bits(ty: Ty, bits: u64) -> Val {
        match ty {
            Ty::Bool => Val::Bool(bits & 1 == 1),
            Ty::I32 => Val::I32(bits as u32 as i32),
            Ty::U32 => Val::U32(bits as u32),
            Ty::I64 => Val::I64(bits as i64),
            Ty::U64 => Val::U64(bits),
            Ty::F32 => Val::F32(f32::from_bits(bits as u32)),
            Ty::F64 => Val::F64(f64::from_bits(bits)),
            Ty::Usize => Val::Usize(bits as u32),
        }
    }
    /// The raw bits, zero-extended.
    pub fn bits(self) -> u64 {
        match self {
            Val::Bool(b) => b as u64,
            Val::I32(v) => v as u32 as u64,
            Val::U32(v) | Val::Usize(v) => v as u64,
            Val::I64(v) => v as u64,
            Val::U64(v) => v,
            Val::F32(v) => v.to_bits() as u64,
            Val::F64(v) => v.to_bits(),
        }
    }
    /// The same value: equal bits, or both NaN (NaN payloads are not compared).
    pub fn same(self, other: Val) -> bool {
        match (self, other) {
            (Val::F32(a), Val::F32(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            (Val::F64(a), Val::F64(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            (a, b) => a.ty() == b.ty() && a.bits() == b.bits(),
        }
    }
}

/// Index of a variable in [`Kernel::vars`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VarId(pub u32);

/// What a variable is.
#[derive(Clone, Debug, PartialEq)]
pub enum VarKind {
    /// A scalar kernel (or helper) parameter.
    Param,
    /// `let` / `let mut`.
    Local {
        /// Declared `mut`.
        mutable: bool,
    },
    /// A `for` loop variable.
    LoopVar,
    /// The hidden `u32` counter of a `while` or `loop` (incremented first thing in the body).
    Counter,
    /// A local array `let mut a = [init; len];` of element type [`VarInfo::ty`].
    Array {
        /// Number of elements.
        len: u32,
    },
}

/// A variable: its type and kind (its name is derived from its id and kind).
#[derive(Clone, Debug, PartialEq)]
pub struct VarInfo {
    /// Its type (the element type for arrays).
    pub ty: Ty,
    /// What it is.
    pub kind: VarKind,
}

/// Index intrinsics (all `usize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intr {
    /// `global_id_x()`
    Gid,
    /// `thread_idx_x()`
    Tid,
    /// `block_idx_x()`
    BlockIdx,
    /// `block_dim_x()`
    BlockDim,
    /// `grid_dim_x()`
    GridDim,
    /// `global_size_x()`
    GlobalSize,
    /// `lane_id()` (depends on the device's warp size)
    LaneId,
    /// `warp_size()` (the device's)
    WarpSize,
}

/// Warp operations (top level only, every thread of the block taking part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// `shuffle(v, src)`: `src` is printed `% warp_size()`, so it is a lane of the warp.
    Shuffle,
    /// `shuffle_up(v, delta)`: lanes below `delta` keep their own value.
    Up,
    /// `shuffle_down(v, delta)`: lanes whose source is past the warp keep their own value.
    Down,
    /// `shuffle_xor(v, mask)`: `mask` is printed `% warp_size()`.
    Xor,
    /// `vote_any(p)`
    Any,
    /// `vote_all(p)`
    All,
    /// `ballot(p)` (`u32`)
    Ballot,
}

impl WarpOp {
    /// The intrinsic's name.
    pub fn name(self) -> &'static str {
        match self {
            WarpOp::Shuffle => "shuffle",
            WarpOp::Up => "shuffle_up",
            WarpOp::Down => "shuffle_down",
            WarpOp::Xor => "shuffle_xor",
            WarpOp::Any => "vote_any",
            WarpOp::All => "vote_all",
            WarpOp::Ballot => "ballot",
        }
    }
    /// Whether it takes a lane operand.
    pub fn has_operand(self) -> bool {
        matches!(
            self,
            WarpOp::Shuffle | WarpOp::Up | WarpOp::Down | WarpOp::Xor
        )
    }
}

/// Unary and binary operators: spoc IR's own (`BinOp::symbol` is how Rust writes one). The
/// generator draws every one but `&&`/`||` on `bool` only, and prints integer divisors guarded
/// (a non-zero literal, or `(d | 1)`).
pub use spoc_ir::{BinOp, UnOp};

/// Method calls (`recv.m(args)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `abs` (signed integers: wrapping; floats)
    Abs,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `wrapping_add`
    WrappingAdd,
    /// `wrapping_sub`
    WrappingSub,
    /// `wrapping_mul`
    WrappingMul,
    /// `sqrt`
    Sqrt,
    /// `floor`
    Floor,
    /// `ceil`
    Ceil,
    /// `round` (half away from zero)
    Round,
    /// `trunc`
    Trunc,
    /// `signum`
    Signum,
    /// `recip` (`1 / x`)
    Recip,
    /// `copysign`
    Copysign,
    /// `mul_add` (one rounding)
    MulAdd,
}

impl Method {
    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Abs => "abs",
            Method::Min => "min",
            Method::Max => "max",
            Method::WrappingAdd => "wrapping_add",
            Method::WrappingSub => "wrapping_sub",
            Method::WrappingMul => "wrapping_mul",
            Method::Sqrt => "sqrt",
            Method::Floor => "floor",
            Method::Ceil => "ceil",
            Method::Round => "round",
            Method::Trunc => "trunc",
            Method::Signum => "signum",
            Method::Recip => "recip",
            Method::Copysign => "copysign",
            Method::MulAdd => "mul_add",
        }
    }
    /// Number of arguments besides the receiver.
    pub fn arity(self) -> usize {
        match self {
            Method::Min
            | Method::Max
            | Method::WrappingAdd
            | Method::WrappingSub
            | Method::WrappingMul
            | Method::Copysign => 1,
            Method::MulAdd => 2,
            _ => 0,
        }
    }
}

/// Whose length `.len()` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LenOf {
    /// The input buffer of this element type.
    Input(Ty),
    /// The output buffer of this element type.
    Output(Ty),
    /// A local array.
    Array(VarId),
    /// A shared array.
    Shared(usize),
}

/// A typed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// Its type.
    pub ty: Ty,
    /// What it is.
    pub kind: ExprKind,
}

/// How an index is brought into bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// `% LEN` with the length as a literal.
    Lit,
    /// `% buf.len()`.
    Len,
}

/// The expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal.
    Lit(Val),
    /// A variable (local, parameter, loop variable or counter).
    Var(VarId),
    /// An index intrinsic.
    Intr(Intr),
    /// `x_T[(index) % IN_LEN]` (the element type is the expression's).
    Input {
        /// A `usize` index.
        index: Box<Expr>,
        /// How the index is wrapped.
        wrap: Wrap,
    },
    /// `o_T[gid * SLOTS + slot]`: a thread's own output slot.
    OutRead {
        /// The slot, `< SLOTS`.
        slot: u32,
    },
    /// `a[(index) % len]` of a local array.
    ArrRead {
        /// The array.
        arr: VarId,
        /// A `usize` index.
        index: Box<Expr>,
    },
    /// `sh[tid]` (own slot, `index: None`) or `sh[(index) % len]` of a shared array.
    SharedRead {
        /// Index into [`Kernel::shared`].
        sh: usize,
        /// `None`: the thread's own element.
        index: Option<Box<Expr>>,
    },
    /// `.len()`.
    Len(LenOf),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `(e as T)`, `T` the expression's type.
    Cast(Box<Expr>),
    /// `args[0].m(args[1..])`.
    Method(Method, Vec<Expr>),
    /// `if c { a } else { b }` as a value.
    If(Box<Expr>, Box<Block>, Box<Block>),
    /// `{ stmts; tail }` as a value.
    Block(Box<Block>),
    /// `match scrut { arms, _ => default }` as a value.
    Match(Box<Expr>, Vec<Arm>, Box<Block>),
    /// A call of helper `k` (only as the whole initializer of an annotated `let`).
    Call(usize, Vec<Expr>),
}

/// A match pattern (on integers).
#[derive(Clone, Debug, PartialEq)]
pub enum Pat {
    /// A literal.
    Lit(Val),
    /// `lo..=hi`.
    Range(Val, Val),
}

/// A match arm: alternatives `p1 | p2 | …` and a body (with a tail when the match is a value).
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    /// The alternatives.
    pub pats: Vec<Pat>,
    /// The body.
    pub body: Block,
}

/// A block: statements and, when it is a value, a tail expression.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    /// The statements.
    pub stmts: Vec<Stmt>,
    /// The value, for blocks used as values.
    pub tail: Option<Expr>,
}

/// An assignment target.
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    /// A `let mut` local.
    Var(VarId),
    /// `a[(index) % len]` of a local array.
    Arr(VarId, Box<Expr>),
    /// `o_T[gid * SLOTS + slot]`.
    Out(Ty, u32),
    /// `sh[tid]`: the thread's own element of a shared array.
    Shared(usize),
}

/// Atomic operations (only order-independent families are generated on one target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    /// `atomic_add`
    Add,
    /// `atomic_sub`
    Sub,
    /// `atomic_min`
    Min,
    /// `atomic_max`
    Max,
    /// `atomic_and`
    And,
    /// `atomic_or`
    Or,
    /// `atomic_xor`
    Xor,
}

impl AtomOp {
    /// The intrinsic's name.
    pub fn name(self) -> &'static str {
        match self {
            AtomOp::Add => "atomic_add",
            AtomOp::Sub => "atomic_sub",
            AtomOp::Min => "atomic_min",
            AtomOp::Max => "atomic_max",
            AtomOp::And => "atomic_and",
            AtomOp::Or => "atomic_or",
            AtomOp::Xor => "atomic_xor",
        }
    }
}

/// The target of an atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomTarget {
    /// Global accumulator `acc{k}`.
    Acc(usize),
    /// Shared array `sh{k}`.
    Shared(usize),
}

/// A family of atomics whose effects commute (so the final memory is order-independent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomFamily {
    /// `atomic_add` and `atomic_sub` (of integers; or `atomic_add` of small integers as floats).
    AddSub,
    /// `atomic_min`.
    Min,
    /// `atomic_max`.
    Max,
    /// `atomic_and`.
    And,
    /// `atomic_or`.
    Or,
    /// `atomic_xor`.
    Xor,
}

/// The statements.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let [mut] v: T = init;`
    Let {
        /// The variable.
        var: VarId,
        /// Its value.
        init: Expr,
    },
    /// `let mut a = [init; len];` (an array variable).
    LetArr {
        /// The array.
        var: VarId,
        /// The element value (a literal).
        init: Expr,
    },
    /// `place = value;` or `place op= value;`.
    Assign {
        /// Where.
        place: Place,
        /// `None`: plain assignment; else a compound assignment.
        op: Option<BinOp>,
        /// What.
        value: Expr,
    },
    /// `atomic_op(&mut target[(index) % len], value);`
    Atomic {
        /// The accumulator or shared array.
        target: AtomTarget,
        /// The operation.
        op: AtomOp,
        /// A `usize` index (`None` for a shared array: the thread's own element).
        index: Option<Expr>,
        /// The operand.
        value: Expr,
    },
    /// `if cond { then } [else { els }]`
    If {
        /// A `bool`.
        cond: Expr,
        /// The then branch.
        then: Block,
        /// The else branch.
        els: Option<Block>,
    },
    /// `let mut c = 0u32; while c < limit [&& cond] { c += 1; body }`
    While {
        /// The counter.
        counter: VarId,
        /// The trip-count bound.
        limit: u32,
        /// An extra condition.
        cond: Option<Expr>,
        /// The body.
        body: Block,
    },
    /// `let mut c = 0u32; loop { if c >= limit { break; } c += 1; body }`
    Loop {
        /// The counter.
        counter: VarId,
        /// The trip-count bound.
        limit: u32,
        /// The body.
        body: Block,
    },
    /// `for v in lo..hi` (`.rev()`, `.step_by(step)`).
    For(ForLoop),
    /// `match scrut { arms, _ => default }` as a statement.
    Match {
        /// An integer.
        scrut: Expr,
        /// The arms.
        arms: Vec<Arm>,
        /// The `_` arm.
        default: Block,
    },
    /// A nested block `{ … }`.
    Block(Block),
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `return;`
    Return,
    /// `sync_threads();` (top level of the kernel body only).
    Sync,
    /// `let v: T = op(value[, operand]);` (top level of the kernel body only): a warp
    /// operation every thread of the block reaches.
    Warp {
        /// The result.
        var: VarId,
        /// The operation.
        op: WarpOp,
        /// The value (a `bool` for votes and ballots).
        value: Expr,
        /// The lane, delta or mask (`usize`; wrapped `% warp_size()` for `shuffle` and
        /// `shuffle_xor`).
        operand: Option<Expr>,
    },
}

/// `for var in lo..hi` (`.rev()`, `.step_by(step)`): [`Stmt::For`].
#[derive(Clone, Debug, PartialEq)]
pub struct ForLoop {
    /// The loop variable (its type is the range's).
    pub var: VarId,
    /// Start.
    pub lo: Expr,
    /// End (exclusive).
    pub hi: Expr,
    /// `.rev()`.
    pub rev: bool,
    /// `.step_by(step)`.
    pub step: Option<u32>,
    /// The body.
    pub body: Block,
}

/// A global accumulator buffer, touched only by atomics of one family.
#[derive(Clone, Debug, PartialEq)]
pub struct Acc {
    /// Element type.
    pub ty: Ty,
    /// The family of atomics used on it.
    pub family: AtomFamily,
}

/// A shared array: one element per thread of the block.
#[derive(Clone, Debug, PartialEq)]
pub struct Shared {
    /// Element type.
    pub ty: Ty,
    /// The family of atomics used on it, if any.
    pub family: Option<AtomFamily>,
}

/// A `#[device]` helper: scalar parameters, a scalar result.
#[derive(Clone, Debug, PartialEq)]
pub struct Helper {
    /// Its parameters (variables of kind `Param`).
    pub params: Vec<VarId>,
    /// The result type.
    pub ret: Ty,
    /// The body; its tail is the result.
    pub body: Block,
}

/// A generated kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// The kernel's name.
    pub name: String,
    /// Every variable (parameters, locals, arrays, loop variables, counters; helpers' too).
    pub vars: Vec<VarInfo>,
    /// The scalar parameters, in order.
    pub params: Vec<VarId>,
    /// Global accumulators.
    pub accs: Vec<Acc>,
    /// Shared arrays.
    pub shared: Vec<Shared>,
    /// `#[device]` helpers (compiled kernels only).
    pub helpers: Vec<Helper>,
    /// The body (`Sync` only at this level).
    pub body: Vec<Stmt>,
}

/// Threads per block.
pub const BLOCK: u32 = 32;
/// Blocks.
pub const GRID: u32 = 2;
/// Threads in all.
pub const THREADS: u32 = BLOCK * GRID;
/// Elements of each input buffer.
pub const IN_LEN: u32 = 61;
/// Output slots per thread.
pub const SLOTS: u32 = 4;
/// Elements of each accumulator.
pub const ACC_LEN: u32 = 5;

impl Kernel {
    /// An empty kernel named `name`.
    pub fn new(name: &str) -> Kernel {
        Kernel {
            name: name.to_string(),
            vars: vec![],
            params: vec![],
            accs: vec![],
            shared: vec![],
            helpers: vec![],
            body: vec![],
        }
    }

    /// The position of scalar parameter `p` in [`Kernel::params`].
    ///
    /// # Panics
    /// If `p` is not one of the kernel's parameters.
    pub fn param_index(&self, p: VarId) -> usize {
        self.params
            .iter()
            .position(|&q| q == p)
            .expect("a kernel parameter")
    }

    /// The name of a variable as printed.
    pub fn var_name(&self, v: VarId) -> String {
        let prefix = match self.vars[v.0 as usize].kind {
            VarKind::Param => "p",
            VarKind::Local { .. } => "v",
            VarKind::LoopVar => "i",
            VarKind::Counter => "c",
            VarKind::Array { .. } => "a",
        };
        format!("{prefix}{}", v.0)
    }
    /// A variable's type.
    pub fn ty_of(&self, v: VarId) -> Ty {
        self.vars[v.0 as usize].ty
    }
}

impl Expr {
    /// A literal.
    pub fn lit(v: Val) -> Expr {
        Expr {
            ty: v.ty(),
            kind: ExprKind::Lit(v),
        }
    }
    /// A variable of type `ty`.
    pub fn var(v: VarId, ty: Ty) -> Expr {
        Expr {
            ty,
            kind: ExprKind::Var(v),
        }
    }
    /// A binary operation of result type `ty`.
    pub fn bin(op: BinOp, a: Expr, b: Expr, ty: Ty) -> Expr {
        Expr {
            ty,
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        }
    }
}

/// Whether an integer divisor is printed as is (a non-zero literal, or an intrinsic that is
/// never zero: `warp_size()`, `block_dim_x()`, …) or guarded as `(d | 1)`.
pub fn divisor_is_plain(d: &Expr) -> bool {
    match &d.kind {
        ExprKind::Lit(v) => d.ty.is_int() && v.bits() != 0,
        ExprKind::Intr(i) => matches!(
            i,
            Intr::WarpSize | Intr::BlockDim | Intr::GridDim | Intr::GlobalSize
        ),
        _ => false,
    }
}

/// Whether `k` uses anything whose value depends on the device's warp size.
pub fn uses_warps(k: &Kernel) -> bool {
    let (mut ops, mut intrs) = (false, false);
    crate::visit::walk_body(
        k,
        &mut |s| ops |= matches!(s, Stmt::Warp { .. }),
        &mut |e| intrs |= matches!(e.kind, ExprKind::Intr(Intr::LaneId | Intr::WarpSize)),
    );
    ops || intrs
}
