//! Statements.

use crate::expr::{Expr, LValue, Pattern, VarId};
use crate::intrinsic::FenceScope;
use serde::{Deserialize, Serialize};

/// Where a statement came from in the kernel's Rust source (1-based line, 1-based column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SrcLoc {
    /// Line in the source file, from 1.
    pub line: u32,
    /// Column (in characters) within the line, from 1.
    pub column: u32,
}

/// A statement, with the source location it was lowered from (when known).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stmt {
    /// What the statement does.
    pub kind: StmtKind,
    /// Where it came from, when the compiler told the macro (printers and generated sources
    /// show it); part of the content hash.
    pub loc: Option<SrcLoc>,
}

impl Stmt {
    /// A statement without a source location.
    pub fn new(kind: StmtKind) -> Stmt {
        Stmt { kind, loc: None }
    }
}

/// A sequence of statements run in order.
pub type Block = Vec<Stmt>;

/// Direction of a counted loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ForDir {
    /// `for v in (start..end).step_by(step)`: `start, start+step, …` while `< end`.
    Up,
    /// `for v in (start..end).rev().step_by(step)`: `end-1, end-1-step, …` while `>= start`.
    Down,
}

/// A counted loop over a half-open range; `var` is fresh and immutable in the body. `start`
/// and `end` have the variable's (integer) type; `step` is `u32` (Rust's `usize` in
/// `step_by`). All three are evaluated once, before the first iteration; a step of 0 is an
/// error, as in Rust's `step_by`. The loop never overflows its variable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForLoop {
    /// The loop variable.
    pub var: VarId,
    /// The inclusive lower bound.
    pub start: Expr,
    /// The exclusive upper bound.
    pub end: Expr,
    /// The distance between successive values, `u32`.
    pub step: Expr,
    /// Counting up from `start` or down from `end - 1`.
    pub dir: ForDir,
    /// The loop body.
    pub body: Block,
}

impl ForLoop {
    /// Whether the step is the constant `1u32` (a plain range, no `step_by`).
    pub fn unit_step(&self) -> bool {
        matches!(self.step.kind, crate::ExprKind::Const(crate::Const::U32(1)))
    }
}

/// The statement forms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StmtKind {
    /// `let v = init;` / `let mut v = init;` (mutability is in the variable's declaration).
    /// `init` is `None` only for a variable that every path assigns before reading.
    Let {
        /// The variable declared (its type and mutability are in its [`crate::VarDecl`]).
        var: VarId,
        /// Its initial value, of the variable's type.
        init: Option<Expr>,
    },
    /// `place = value;` (compound assignments are lowered to `place = place op value`).
    Assign {
        /// The place written.
        target: LValue,
        /// The value, of the place's type; evaluated before the place.
        value: Expr,
    },
    /// A nested block with its own scope.
    Block(Block),
    /// `if cond { then } else { els }`.
    If {
        /// The `bool` condition.
        cond: Expr,
        /// Run when `cond` is `true`.
        then: Block,
        /// Run when `cond` is `false` (`else if` is an `If` alone in this block).
        els: Option<Block>,
    },
    /// `while cond { body }` (`loop` is `while true`).
    While {
        /// The `bool` condition, evaluated before each iteration.
        cond: Expr,
        /// The loop body.
        body: Block,
    },
    /// A counted loop over a half-open range (see [`ForLoop`]).
    For(ForLoop),
    /// `match scrutinee { arms }` as a statement; the first matching arm runs.
    Match {
        /// The value matched.
        scrutinee: Expr,
        /// Each pattern with its block, tried in order.
        arms: Vec<(Pattern, Block)>,
    },
    /// Leaves the innermost `while`/`for`.
    Break,
    /// Skips to the next iteration of the innermost `while`/`for`.
    Continue,
    /// Returns from the kernel (no value) or helper function (its value).
    Return(Option<Expr>),
    /// Block-wide barrier (`__syncthreads`, `barrier(CLK_LOCAL_MEM_FENCE)`, `OpControlBarrier`):
    /// every thread of the block waits, and shared-memory writes before it are visible after it.
    Barrier,
    /// Warp-wide barrier (`__syncwarp`).
    WarpBarrier,
    /// A memory fence of the given scope.
    MemFence(FenceScope),
    /// An expression evaluated for its effect (a call, an atomic).
    Expr(Expr),
    /// A hint for the code generators (`unroll`, …) wrapping a block; backends may ignore it.
    Pragma {
        /// The hints, as free text (for example `"unroll"`).
        hints: Vec<String>,
        /// The block they apply to.
        body: Block,
    },
}
