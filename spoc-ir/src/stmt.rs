//! Statements.

use crate::expr::{Expr, LValue, Pattern, VarId};
use crate::intrinsic::FenceScope;
use serde::{Deserialize, Serialize};

/// Where a statement came from in the kernel's Rust source (1-based line, 1-based column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SrcLoc {
    pub line: u32,
    pub column: u32,
}

/// A statement, with the source location it was lowered from (when known).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stmt {
    pub kind: StmtKind,
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

/// The statement forms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StmtKind {
    /// `let v = init;` / `let mut v = init;` (mutability is in the variable's declaration).
    /// `init` is `None` only for a variable that every path assigns before reading.
    Let { var: VarId, init: Option<Expr> },
    /// `place = value;` (compound assignments are lowered to `place = place op value`).
    Assign { target: LValue, value: Expr },
    /// A nested block with its own scope.
    Block(Block),
    /// `if cond { then } else { els }`.
    If {
        cond: Expr,
        then: Block,
        els: Option<Block>,
    },
    /// `while cond { body }` (`loop` is `while true`).
    While { cond: Expr, body: Block },
    /// A counted loop over a half-open range; `var` is fresh and immutable in the body. `start`
    /// and `end` have the variable's (integer) type; `step` is `u32` (Rust's `usize` in
    /// `step_by`). All three are evaluated once, before the first iteration; a step of 0 is an
    /// error, as in Rust's `step_by`. The loop never overflows its variable.
    For {
        var: VarId,
        start: Expr,
        end: Expr,
        step: Expr,
        dir: ForDir,
        body: Block,
    },
    /// `match scrutinee { arms }` as a statement; the first matching arm runs.
    Match {
        scrutinee: Expr,
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
    Pragma { hints: Vec<String>, body: Block },
}
