//! Preparation of a kernel for interpretation: the IR tree is resolved once per kernel into a
//! compact tree in which variables are slot indices, helpers are function indices, record fields
//! are field indices (with their byte offsets in global memory), variant cases are case indices,
//! and array accesses are place paths that are walked by reference (no copy of a local array to
//! read one element). Nodes the Interpreter does not run yet are rejected here, before any thread
//! runs. Barriers and warp operations get [`Program::sites`] numbers (the scheduler's
//! [`crate::simt::Site`]s) and mark the kernel as one that needs the SIMT scheduler.

use super::error::{invalid, unsupported, Fault, SourceLoc};
use super::layout::{check_lanes, Layout};
use super::value::Value;
use crate::simt::{VoteKind, WarpOpKind};
use spoc_ir::{
    lane_index, AtomicOp, Axis, BinOp, Expr, ExprKind, ForDir, Function, Intrinsic, Kernel, LValue,
    MathFn, MemSpace, Pattern, ScalarType, SrcLoc, Stmt, StmtKind, Type, UnOp, VarDecl, VarId,
    VarKind,
};
use std::collections::HashMap;

/// At most this many `[index]` steps in one place (`a[i][j]…`).
pub(crate) const MAX_INDICES: usize = 8;

/// A kernel ready to run.
#[derive(Debug)]
pub(crate) struct Program {
    /// The kernel's name.
    pub name: String,
    /// The kernel body's frame.
    pub kernel: Frame,
    /// Helper functions, indexed by [`CExpr::Call::func`].
    pub functions: Vec<Frame>,
    /// The kernel's parameters, in order.
    pub params: Vec<ParamSpec>,
    /// Distinct buffer-element layouts, indexed by the ids in [`ParamKind::Buffer`] and
    /// [`CPath::elem`].
    pub layouts: Vec<Layout>,
    /// The kernel's shared arrays.
    pub shared: Vec<SharedSpec>,
    /// Whether the kernel needs the SIMT scheduler (block or warp barriers, shared arrays, warp
    /// operations); else its threads run one after another.
    pub simt: bool,
    /// What each sync site is, for messages (`` `sync_threads()` at src/k.rs:12:9 ``),
    /// indexed by the site numbers of [`CStmt::Barrier`], [`CStmt::WarpBarrier`] and
    /// [`CExpr::Warp`].
    pub sites: Vec<String>,
    /// The location of each sync site (an index into `locs`, or [`NO_LOC`]).
    pub site_locs: Vec<u32>,
    /// The source locations of statements, indexed by the `loc` of [`SStmt`], [`CPath`] and
    /// the access expressions.
    pub locs: Vec<SourceLoc>,
}

/// A `loc` that names no location.
pub(crate) const NO_LOC: u32 = u32::MAX;

/// A compiled statement with its source location (an index into [`Program::locs`]).
#[derive(Debug)]
pub(crate) struct SStmt {
    pub loc: u32,
    pub s: CStmt,
}

/// A block of compiled statements.
pub(crate) type CBlock = Box<[SStmt]>;

/// A shared array of the kernel: one per block, zero-filled, laid out as a buffer.
#[derive(Debug)]
pub(crate) struct SharedSpec {
    /// The kernel slot of its variable.
    pub slot: u32,
    pub name: String,
    /// Element layout id.
    pub elem: u32,
    /// Length in elements; `None`: sized by the launch's dynamic shared bytes.
    pub len: Option<u32>,
}

/// A function body with its variable slots.
#[derive(Debug)]
pub(crate) struct Frame {
    /// Number of variable slots (the function's `vars`).
    pub nslots: usize,
    /// The slot of each parameter, in order.
    pub params: Box<[u32]>,
    /// For each parameter of global-array type, the id of its element layout.
    pub param_elems: Box<[Option<u32>]>,
    pub body: CBlock,
}

/// A kernel parameter.
#[derive(Debug)]
pub(crate) struct ParamSpec {
    pub slot: u32,
    pub name: String,
    pub kind: ParamKind,
}

/// How a kernel parameter is passed.
#[derive(Debug)]
pub(crate) enum ParamKind {
    Scalar(ScalarType),
    /// A global buffer; `elem` is a layout id.
    Buffer {
        elem: u32,
        mutable: bool,
    },
    /// A record or vector by value (passed as a one-element buffer holding its `#[repr(C)]`
    /// bytes).
    Record(Layout),
}

/// Thread and block indices.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Special {
    ThreadIdx(usize),
    BlockIdx(usize),
    BlockDim(usize),
    GridDim(usize),
    GlobalId(usize),
    GlobalSize(usize),
    LaneId,
}

/// One step of a `u32` arithmetic expression in postfix order (index arithmetic:
/// `ty * 16 + k`), evaluated on a small stack of `u32`s without building [`Value`]s.
#[derive(Clone, Copy, Debug)]
pub(crate) enum IOp {
    /// Push a `u32` variable.
    Var(u32),
    /// Push a constant.
    Const(u32),
    /// Push a thread index.
    Special(Special),
    /// Pop `b`, pop `a`, push `a op b`: wrapping `+ - *`, `/ %` (a zero divisor faults),
    /// bitwise ops, shifts by the amount modulo 32.
    Bin(BinOp),
}

/// The deepest stack a `u32` expression may need.
pub(crate) const ISTACK: usize = 16;

/// A compiled expression.
#[derive(Debug)]
pub(crate) enum CExpr {
    /// A `u32` arithmetic expression (see [`IOp`]), with at least one operator.
    U32(Box<[IOp]>),
    /// `a * k + b` on `u32` variables `a`, `b` (wrapping): the usual 2-D index
    /// (`row * width + col`), an [`CExpr::U32`] of that shape.
    Affine {
        a: u32,
        k: u32,
        b: u32,
    },
    Const(Value),
    Var(u32),
    /// A read through a place: array elements and record fields of a variable.
    Load(Box<CPath>),
    /// An element of a computed array value (not a variable).
    IndexOf {
        base: Box<CExpr>,
        index: Box<CExpr>,
        /// Layout of the element if `base` can be a global buffer.
        leaf: Option<Layout>,
        /// Source location (for the checks).
        loc: u32,
    },
    /// A field of a computed record value.
    FieldOf {
        base: Box<CExpr>,
        field: u32,
    },
    /// `root[index]`: the common one-index place, without the generic path walk.
    LoadIndex {
        root: u32,
        index: Box<CExpr>,
        /// The root variable's name.
        name: Box<str>,
        /// When the root is a global array: its element layout id.
        elem: Option<u32>,
        /// Source location (for the checks).
        loc: u32,
    },
    /// Length of an array variable.
    LenVar(u32),
    /// Length of an array place.
    LenPath(Box<CPath>),
    /// Length of a computed array value.
    LenOf(Box<CExpr>),
    Unary {
        op: UnOp,
        operand: Box<CExpr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<CExpr>,
        rhs: Box<CExpr>,
    },
    And(Box<CExpr>, Box<CExpr>),
    Or(Box<CExpr>, Box<CExpr>),
    Special(Special),
    Math1(MathFn, Box<CExpr>),
    Math2(MathFn, Box<[CExpr; 2]>),
    Math3(MathFn, Box<[CExpr; 3]>),
    /// An atomic on the element `path` names (a path ending in one `[index]`).
    Atomic {
        op: AtomicOp,
        path: Box<CPath>,
        operands: Box<[CExpr]>,
    },
    Cast {
        value: Box<CExpr>,
        to: ScalarType,
    },
    Call {
        func: u32,
        args: Box<[CExpr]>,
    },
    Select {
        cond: Box<CExpr>,
        then: Box<CExpr>,
        els: Box<CExpr>,
    },
    Match {
        scrutinee: Box<CExpr>,
        arms: Box<[(CPattern, CExpr)]>,
    },
    Record(Box<[CExpr]>),
    Variant {
        case: u32,
        payload: Box<[CExpr]>,
    },
    Repeat {
        value: Box<CExpr>,
        len: u32,
    },
    /// `pack_f16x2(lo, hi)` / `pack_bf16x2(lo, hi)`: the two 16-bit values' bits in one `u32`.
    PackHalf2(Box<[CExpr; 2]>),
    /// A warp operation at sync site `site`: `args` are `(value, lane_or_delta)` for shuffles,
    /// `(predicate)` for votes and ballots, `(a, b, c)` for matrix multiply-accumulates.
    Warp {
        site: u32,
        kind: WarpOpKind,
        args: Box<[CExpr]>,
    },
}

/// A place rooted at a variable: `root` then fields and indices.
#[derive(Debug)]
pub(crate) struct CPath {
    pub root: u32,
    /// The root variable's name (errors on local arrays name it).
    pub name: Box<str>,
    pub steps: Box<[Step]>,
    /// Number of [`Step::Index`] steps.
    pub nindex: usize,
    /// When the root is a global array: its element layout id (checked against the buffer
    /// actually bound, so that static field offsets are always in bounds).
    pub elem: Option<u32>,
    /// When the root is a global array: the layout of the value the path names.
    pub leaf: Option<Layout>,
    /// Source location of the statement (for the checks).
    pub loc: u32,
}

/// One step of a [`CPath`].
#[derive(Debug)]
pub(crate) enum Step {
    Index(CExpr),
    /// Field `index`, at byte `offset` within the record in global memory.
    Field {
        index: u32,
        offset: usize,
    },
}

/// A compiled `match` pattern.
#[derive(Debug)]
pub(crate) enum CPattern {
    Wildcard,
    Int(i128),
    Range(i128, i128),
    Or(Box<[CPattern]>),
    Case { case: u32, bindings: Box<[u32]> },
}

/// A compiled statement.
#[derive(Debug)]
pub(crate) enum CStmt {
    Let {
        slot: u32,
        init: Option<CExpr>,
    },
    AssignVar {
        slot: u32,
        value: CExpr,
    },
    AssignPath {
        path: CPath,
        value: CExpr,
    },
    Block(CBlock),
    If {
        cond: CExpr,
        then: CBlock,
        els: CBlock,
    },
    While {
        cond: CExpr,
        body: CBlock,
    },
    For {
        slot: u32,
        ty: ScalarType,
        start: CExpr,
        end: CExpr,
        step: CExpr,
        dir: ForDir,
        body: CBlock,
    },
    Match {
        scrutinee: CExpr,
        arms: Box<[(CPattern, CBlock)]>,
    },
    Break,
    Continue,
    Return(Option<CExpr>),
    Expr(CExpr),
    /// A block barrier at sync site `.0`.
    Barrier(u32),
    /// A warp barrier at sync site `.0`.
    WarpBarrier(u32),
    /// A memory fence (a sequentially consistent fence).
    Fence,
}

/// Compiles `kernel`.
///
/// Errors: `Unsupported` for nodes not run yet; `InvalidKernel` for references
/// the IR does not resolve (variables, helpers, fields, cases) and malformed nodes.
pub(crate) fn compile(kernel: &Kernel) -> Result<Program, Fault> {
    let mut c = Compiler {
        kernel,
        fn_index: HashMap::new(),
        records: HashMap::new(),
        layouts: Vec::new(),
        sites: Vec::new(),
        site_locs: Vec::new(),
        simt: false,
        loc: None,
        helper: None,
        file: super::source::kernel_file(kernel),
        locs: Vec::new(),
        loc_index: HashMap::new(),
    };
    for (i, f) in kernel.functions.iter().enumerate() {
        if c.fn_index.insert(f.name.as_str(), i as u32).is_some() {
            return Err(invalid(format!("two helper functions named `{}`", f.name)));
        }
    }

    let mut params = Vec::with_capacity(kernel.params.len());
    for p in &kernel.params {
        check_var(&kernel.vars, p.var)?;
        let kind = match &p.ty {
            Type::Scalar(s) => ParamKind::Scalar(*s),
            Type::Array {
                elem,
                space: MemSpace::Global,
                ..
            } => {
                let l = Layout::of(elem, &kernel.records)?;
                ParamKind::Buffer {
                    elem: c.intern(l),
                    mutable: p.mutable,
                }
            }
            // A vector by value is passed like a record: its lanes' bytes (see `Layout::vector`).
            Type::Record(_) | Type::Vector { .. } => {
                ParamKind::Record(Layout::of(&p.ty, &kernel.records)?)
            }
            other => {
                return Err(unsupported(format!(
                    "a kernel parameter of type `{other}` (`{}`)",
                    p.name
                )))
            }
        };
        params.push(ParamSpec {
            slot: p.var.0,
            name: p.name.clone(),
            kind,
        });
    }

    let mut shared = Vec::with_capacity(kernel.shared.len());
    for s in &kernel.shared {
        let decl = check_var(&kernel.vars, s.var)?;
        if decl.kind != VarKind::Shared {
            return Err(invalid(format!(
                "shared array declaration of `{}`, which is not a shared variable",
                decl.name
            )));
        }
        let l = Layout::of(&s.elem, &kernel.records)?;
        shared.push(SharedSpec {
            slot: s.var.0,
            name: decl.name.clone(),
            elem: c.intern(l),
            len: s.len,
        });
    }
    for (i, v) in kernel.vars.iter().enumerate() {
        if v.kind == VarKind::Shared && !shared.iter().any(|s| s.slot == i as u32) {
            return Err(invalid(format!(
                "shared variable `{}` has no shared array declaration",
                v.name
            )));
        }
    }

    let kernel_frame = c.frame(&kernel.vars, &kernel.params, &kernel.body)?;
    let mut functions = Vec::with_capacity(kernel.functions.len());
    for f in &kernel.functions {
        c.helper = Some(f.name.clone());
        c.file = super::source::helper_file(f);
        functions.push(c.function(f).map_err(|e| in_helper(*e, &f.name))?);
    }
    Ok(Program {
        name: kernel.name.clone(),
        kernel: kernel_frame,
        functions,
        params,
        layouts: c.layouts,
        simt: c.simt || !shared.is_empty(),
        shared,
        sites: c.sites,
        site_locs: c.site_locs,
        locs: c.locs,
    })
}

/// The deepest stack the postfix `ops` reach.
fn max_depth(ops: &[IOp]) -> usize {
    let (mut d, mut max) = (0usize, 0usize);
    for op in ops {
        match op {
            IOp::Bin(_) => d = d.saturating_sub(1),
            _ => d += 1,
        }
        max = max.max(d);
    }
    max
}

fn in_helper(e: super::error::InterpErrorKind, name: &str) -> Fault {
    use super::error::InterpErrorKind as K;
    Box::new(match e {
        K::Unsupported { what } => K::Unsupported {
            what: format!("{what} (in helper `{name}`)"),
        },
        K::InvalidKernel { message } => K::InvalidKernel {
            message: format!("{message} (in helper `{name}`)"),
        },
        other => other,
    })
}

fn check_var(vars: &[VarDecl], v: VarId) -> Result<&VarDecl, Fault> {
    vars.get(v.0 as usize)
        .ok_or_else(|| invalid(format!("variable #{} is not declared", v.0)))
}

struct Compiler<'k> {
    kernel: &'k Kernel,
    fn_index: HashMap<&'k str, u32>,
    /// Record name -> its layout (`None` when it cannot live in global memory).
    records: HashMap<String, Option<Layout>>,
    layouts: Vec<Layout>,
    /// Descriptions of the sync sites numbered so far.
    sites: Vec<String>,
    /// Their locations (indices into `locs`).
    site_locs: Vec<u32>,
    /// Whether a barrier or warp operation was seen.
    simt: bool,
    /// Source location of the statement being compiled, when known.
    loc: Option<SrcLoc>,
    /// The helper being compiled (`None`: the kernel body).
    helper: Option<String>,
    /// The source file of the function being compiled, when registered.
    file: Option<&'static str>,
    /// The locations numbered so far ([`Program::locs`]).
    locs: Vec<SourceLoc>,
    /// (helper, line, column) -> index in `locs`.
    loc_index: HashMap<(Option<String>, u32, u32), u32>,
}

/// The variables of the function being compiled.
#[derive(Clone, Copy)]
struct Cx<'a> {
    vars: &'a [VarDecl],
}

impl<'k> Compiler<'k> {
    /// Numbers a new sync site for the construct `what` (`"sync_threads()"`, …).
    fn site(&mut self, what: &str) -> u32 {
        let n = self.sites.len() as u32;
        let loc = self.here();
        let at = match self.locs.get(loc as usize) {
            Some(l) => format!("at {l}"),
            None => match &self.helper {
                Some(h) => format!("(sync site #{n}) in helper `{h}`"),
                None => format!("(sync site #{n})"),
            },
        };
        self.sites.push(format!("`{what}` {at}"));
        self.site_locs.push(loc);
        self.simt = true;
        n
    }

    /// The location index of the statement being compiled ([`NO_LOC`] when unknown).
    fn here(&mut self) -> u32 {
        let Some(SrcLoc { line, column }) = self.loc else {
            return NO_LOC;
        };
        let key = (self.helper.clone(), line, column);
        if let Some(&i) = self.loc_index.get(&key) {
            return i;
        }
        let i = self.locs.len() as u32;
        self.locs.push(SourceLoc {
            file: self.file.map(str::to_string),
            line,
            column,
            function: self.helper.clone(),
        });
        self.loc_index.insert(key, i);
        i
    }

    fn intern(&mut self, l: Layout) -> u32 {
        if let Some(i) = self.layouts.iter().position(|x| *x == l) {
            return i as u32;
        }
        self.layouts.push(l);
        (self.layouts.len() - 1) as u32
    }

    fn function(&mut self, f: &Function) -> Result<Frame, Fault> {
        self.frame(&f.vars, &f.params, &f.body)
    }

    fn frame(
        &mut self,
        vars: &[VarDecl],
        params: &[spoc_ir::Param],
        body: &[Stmt],
    ) -> Result<Frame, Fault> {
        let cx = Cx { vars };
        let mut slots = Vec::with_capacity(params.len());
        let mut elems = Vec::with_capacity(params.len());
        for p in params {
            check_var(vars, p.var)?;
            slots.push(p.var.0);
            elems.push(match &p.ty {
                Type::Array {
                    elem,
                    space: MemSpace::Global | MemSpace::Shared,
                    ..
                } => Some(self.global_elem(elem)?),
                _ => None,
            });
        }
        Ok(Frame {
            nslots: vars.len(),
            params: slots.into_boxed_slice(),
            param_elems: elems.into_boxed_slice(),
            body: self.block(cx, body)?,
        })
    }

    fn global_elem(&mut self, elem: &Type) -> Result<u32, Fault> {
        let l = Layout::of(elem, &self.kernel.records)?;
        Ok(self.intern(l))
    }

    fn block(&mut self, cx: Cx, b: &[Stmt]) -> Result<CBlock, Fault> {
        b.iter()
            .filter_map(|s| self.stmt(cx, s).transpose())
            .collect()
    }

    /// `None` for statements with no effect here.
    fn stmt(&mut self, cx: Cx, s: &Stmt) -> Result<Option<SStmt>, Fault> {
        let saved = self.loc;
        if s.loc.is_some() {
            self.loc = s.loc;
        }
        let loc = self.here();
        let r = self.stmt_here(cx, s);
        self.loc = saved;
        Ok(r?.map(|s| SStmt { loc, s }))
    }

    fn stmt_here(&mut self, cx: Cx, s: &Stmt) -> Result<Option<CStmt>, Fault> {
        Ok(Some(match &s.kind {
            StmtKind::Let { var, init } => {
                check_var(cx.vars, *var)?;
                CStmt::Let {
                    slot: var.0,
                    init: init.as_ref().map(|e| self.expr(cx, e)).transpose()?,
                }
            }
            StmtKind::Assign { target, value } => {
                let value = self.expr(cx, value)?;
                match target {
                    LValue::Var(v) => {
                        check_var(cx.vars, *v)?;
                        CStmt::AssignVar { slot: v.0, value }
                    }
                    _ => CStmt::AssignPath {
                        path: self.lvalue_path(cx, target)?,
                        value,
                    },
                }
            }
            StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => {
                CStmt::Block(self.block(cx, b)?)
            }
            StmtKind::If { cond, then, els } => CStmt::If {
                cond: self.expr(cx, cond)?,
                then: self.block(cx, then)?,
                els: match els {
                    Some(b) => self.block(cx, b)?,
                    None => Box::new([]),
                },
            },
            StmtKind::While { cond, body } => CStmt::While {
                cond: self.expr(cx, cond)?,
                body: self.block(cx, body)?,
            },
            StmtKind::For(l) => {
                let decl = check_var(cx.vars, l.var)?;
                let ty = match decl.ty.as_scalar() {
                    Some(t) if t.is_integer() => t,
                    _ => {
                        return Err(invalid(format!(
                            "`for` variable `{}` has type `{}`, not an integer type",
                            decl.name, decl.ty
                        )))
                    }
                };
                CStmt::For {
                    slot: l.var.0,
                    ty,
                    start: self.expr(cx, &l.start)?,
                    end: self.expr(cx, &l.end)?,
                    step: self.expr(cx, &l.step)?,
                    dir: l.dir,
                    body: self.block(cx, &l.body)?,
                }
            }
            StmtKind::Match { scrutinee, arms } => CStmt::Match {
                scrutinee: self.expr(cx, scrutinee)?,
                arms: arms
                    .iter()
                    .map(|(p, b)| Ok((self.pattern(cx, p)?, self.block(cx, b)?)))
                    .collect::<Result<_, Fault>>()?,
            },
            StmtKind::Break => CStmt::Break,
            StmtKind::Continue => CStmt::Continue,
            StmtKind::Return(e) => CStmt::Return(e.as_ref().map(|e| self.expr(cx, e)).transpose()?),
            StmtKind::Barrier => CStmt::Barrier(self.site("sync_threads()")),
            StmtKind::WarpBarrier => CStmt::WarpBarrier(self.site("sync_warp()")),
            // Threads of a block share one OS thread; blocks run in parallel: a fence orders
            // this thread's earlier memory accesses before its later ones for every other.
            StmtKind::MemFence(_) => CStmt::Fence,
            StmtKind::Expr(e) => CStmt::Expr(self.expr(cx, e)?),
        }))
    }

    fn exprs(&mut self, cx: Cx, es: &[Expr]) -> Result<Box<[CExpr]>, Fault> {
        es.iter().map(|e| self.expr(cx, e)).collect()
    }

    fn bx(&mut self, cx: Cx, e: &Expr) -> Result<Box<CExpr>, Fault> {
        Ok(Box::new(self.expr(cx, e)?))
    }

    fn expr(&mut self, cx: Cx, e: &Expr) -> Result<CExpr, Fault> {
        Ok(match &e.kind {
            ExprKind::Const(c) => CExpr::Const(Value::from_const(*c)),
            ExprKind::Var(v) => {
                check_var(cx.vars, *v)?;
                CExpr::Var(v.0)
            }
            ExprKind::Index { array, index } => {
                if let Some(p) = self.expr_path(cx, e)? {
                    Self::load(p)
                } else {
                    let leaf = match array.ty.as_array() {
                        Some((_, MemSpace::Global | MemSpace::Shared, _)) => {
                            Some(Layout::of(&e.ty, &self.kernel.records)?)
                        }
                        _ => None,
                    };
                    CExpr::IndexOf {
                        base: self.bx(cx, array)?,
                        index: self.bx(cx, index)?,
                        leaf,
                        loc: self.here(),
                    }
                }
            }
            ExprKind::Field { base, field } => {
                if let Some(p) = self.expr_path(cx, e)? {
                    CExpr::Load(Box::new(p))
                } else {
                    let (index, _) = self.field(&base.ty, field)?;
                    CExpr::FieldOf {
                        base: self.bx(cx, base)?,
                        field: index,
                    }
                }
            }
            ExprKind::Unary { op, operand } => CExpr::Unary {
                op: *op,
                operand: self.bx(cx, operand)?,
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let mut ops = Vec::new();
                if self.u32_ops(cx, e, &mut ops)? && max_depth(&ops) <= ISTACK {
                    if let [IOp::Var(a), IOp::Const(k), IOp::Bin(BinOp::Mul), IOp::Var(b), IOp::Bin(BinOp::Add)] =
                        ops[..]
                    {
                        return Ok(CExpr::Affine { a, k, b });
                    }
                    return Ok(CExpr::U32(ops.into_boxed_slice()));
                }
                let l = self.bx(cx, lhs)?;
                let r = self.bx(cx, rhs)?;
                match op {
                    BinOp::LogicalAnd => CExpr::And(l, r),
                    BinOp::LogicalOr => CExpr::Or(l, r),
                    _ => CExpr::Binary {
                        op: *op,
                        lhs: l,
                        rhs: r,
                    },
                }
            }
            ExprKind::Intrinsic { intrinsic, args } => self.intrinsic(cx, *intrinsic, args)?,
            ExprKind::Cast { value, to } => CExpr::Cast {
                value: self.bx(cx, value)?,
                to: *to,
            },
            ExprKind::Call { func, args } => {
                let index = *self
                    .fn_index
                    .get(func.as_str())
                    .ok_or_else(|| invalid(format!("call of unknown helper `{func}`")))?;
                let f = &self.kernel.functions[index as usize];
                if f.params.len() != args.len() {
                    return Err(invalid(format!(
                        "helper `{func}` takes {} arguments, called with {}",
                        f.params.len(),
                        args.len()
                    )));
                }
                for p in &f.params {
                    if p.mutable
                        && matches!(
                            p.ty,
                            Type::Array {
                                space: MemSpace::Local,
                                ..
                            }
                        )
                    {
                        return Err(unsupported(format!(
                            "passing a local array by mutable reference (parameter `{}` of `{func}`)",
                            p.name
                        )));
                    }
                }
                CExpr::Call {
                    func: index,
                    args: self.exprs(cx, args)?,
                }
            }
            ExprKind::Select { cond, then, els } => CExpr::Select {
                cond: self.bx(cx, cond)?,
                then: self.bx(cx, then)?,
                els: self.bx(cx, els)?,
            },
            ExprKind::Match { scrutinee, arms } => CExpr::Match {
                scrutinee: self.bx(cx, scrutinee)?,
                arms: arms
                    .iter()
                    .map(|(p, e)| Ok((self.pattern(cx, p)?, self.expr(cx, e)?)))
                    .collect::<Result<_, Fault>>()?,
            },
            ExprKind::Len(a) => match self.expr_path(cx, a)? {
                Some(p) if p.steps.is_empty() => CExpr::LenVar(p.root),
                Some(p) => CExpr::LenPath(Box::new(p)),
                None => CExpr::LenOf(self.bx(cx, a)?),
            },
            ExprKind::RecordLit { record, fields } => {
                let def = self
                    .kernel
                    .record(record)
                    .ok_or_else(|| invalid(format!("unknown record type `{record}`")))?;
                if def.fields.len() != fields.len() {
                    return Err(invalid(format!(
                        "record `{record}` has {} fields, literal gives {}",
                        def.fields.len(),
                        fields.len()
                    )));
                }
                CExpr::Record(self.exprs(cx, fields)?)
            }
            ExprKind::VariantLit {
                variant,
                case,
                payload,
            } => CExpr::Variant {
                case: self.case(variant, case, Some(payload.len()))?,
                payload: self.exprs(cx, payload)?,
            },
            ExprKind::ArrayRepeat { value, len } => CExpr::Repeat {
                value: self.bx(cx, value)?,
                len: *len,
            },
            // A vector value is the record of its lanes.
            ExprKind::VectorLit(lanes) => {
                match &e.ty {
                    Type::Vector { lanes: n, .. } => {
                        check_lanes(*n)?;
                        if usize::from(*n) != lanes.len() {
                            return Err(invalid(format!(
                                "a `{}` literal with {} lanes",
                                e.ty,
                                lanes.len()
                            )));
                        }
                    }
                    other => return Err(invalid(format!("a vector literal of type `{other}`"))),
                }
                CExpr::Record(self.exprs(cx, lanes)?)
            }
        })
    }

    /// Appends `e` to `ops` in postfix order if it is a `u32` arithmetic expression: `u32`
    /// operands combined with the operators [`IOp::Bin`] evaluates, down to `u32` variables,
    /// constants and thread indices. Returns whether it is (`ops` is then complete).
    fn u32_ops(&mut self, cx: Cx, e: &Expr, ops: &mut Vec<IOp>) -> Result<bool, Fault> {
        if e.ty != Type::U32 {
            return Ok(false);
        }
        let op = match &e.kind {
            ExprKind::Const(spoc_ir::Const::U32(v)) => IOp::Const(*v),
            ExprKind::Var(v) => {
                if check_var(cx.vars, *v)?.ty != Type::U32 {
                    return Ok(false);
                }
                IOp::Var(v.0)
            }
            ExprKind::Intrinsic { intrinsic, args } if args.is_empty() => {
                match self.intrinsic(cx, *intrinsic, args)? {
                    CExpr::Special(sp) => IOp::Special(sp),
                    CExpr::Const(Value::U32(v)) => IOp::Const(v),
                    _ => return Ok(false),
                }
            }
            ExprKind::Binary { op, lhs, rhs }
                if matches!(
                    op,
                    BinOp::Add
                        | BinOp::Sub
                        | BinOp::Mul
                        | BinOp::Div
                        | BinOp::Rem
                        | BinOp::BitAnd
                        | BinOp::BitOr
                        | BinOp::BitXor
                        | BinOp::Shl
                        | BinOp::Shr
                ) =>
            {
                if !self.u32_ops(cx, lhs, ops)? || !self.u32_ops(cx, rhs, ops)? {
                    return Ok(false);
                }
                IOp::Bin(*op)
            }
            _ => return Ok(false),
        };
        ops.push(op);
        Ok(true)
    }

    /// A read of place `p`, with the one-index case specialised.
    fn load(p: CPath) -> CExpr {
        if p.steps.len() == 1 && matches!(p.steps[0], Step::Index(_)) {
            let CPath {
                root,
                name,
                steps,
                elem,
                loc,
                ..
            } = p;
            if let Some(Step::Index(index)) = steps.into_vec().pop() {
                return CExpr::LoadIndex {
                    root,
                    index: Box::new(index),
                    name,
                    elem,
                    loc,
                };
            }
            unreachable!("checked: one index step");
        }
        CExpr::Load(Box::new(p))
    }

    fn intrinsic(&mut self, cx: Cx, i: Intrinsic, args: &[Expr]) -> Result<CExpr, Fault> {
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(invalid(format!(
                    "intrinsic `{}` takes {n} arguments, given {}",
                    i.name(),
                    args.len()
                )))
            }
        };
        let ax = |a: Axis| a.index();
        Ok(match i {
            Intrinsic::ThreadIdx(a) => CExpr::Special(Special::ThreadIdx(ax(a))),
            Intrinsic::BlockIdx(a) => CExpr::Special(Special::BlockIdx(ax(a))),
            Intrinsic::BlockDim(a) => CExpr::Special(Special::BlockDim(ax(a))),
            Intrinsic::GridDim(a) => CExpr::Special(Special::GridDim(ax(a))),
            Intrinsic::GlobalId(a) => CExpr::Special(Special::GlobalId(ax(a))),
            Intrinsic::GlobalSize(a) => CExpr::Special(Special::GlobalSize(ax(a))),
            Intrinsic::WarpSize => CExpr::Const(Value::U32(super::WARP_SIZE)),
            Intrinsic::LaneId => CExpr::Special(Special::LaneId),
            Intrinsic::Math(f) => {
                arity(f.arity())?;
                match args {
                    [a] => CExpr::Math1(f, self.bx(cx, a)?),
                    [a, b] => CExpr::Math2(f, Box::new([self.expr(cx, a)?, self.expr(cx, b)?])),
                    [a, b, c] => CExpr::Math3(
                        f,
                        Box::new([self.expr(cx, a)?, self.expr(cx, b)?, self.expr(cx, c)?]),
                    ),
                    _ => unreachable!("math functions take 1 to 3 arguments"),
                }
            }
            Intrinsic::Atomic(op) => {
                arity(if op == AtomicOp::CompareExchange {
                    4
                } else {
                    3
                })?;
                let (array, index) = (&args[0], &args[1]);
                let space = array.ty.as_array().map(|(_, s, _)| s);
                if !matches!(space, Some(MemSpace::Global | MemSpace::Shared)) {
                    return Err(unsupported(format!(
                        "`{}` on an array that is neither a buffer nor a shared array",
                        i.name()
                    )));
                }
                let mut path = self.expr_path(cx, array)?.ok_or_else(|| {
                    unsupported(format!("`{}` on an array that is not a variable", i.name()))
                })?;
                if !path.steps.is_empty() {
                    return Err(unsupported(format!(
                        "`{}` on an array that is not a variable",
                        i.name()
                    )));
                }
                let elem = array.ty.as_array().map(|(t, _, _)| t).cloned();
                let leaf = match elem.as_ref().and_then(Type::as_scalar) {
                    Some(s) if s.is_arithmetic() => Layout::Scalar(s),
                    _ => {
                        return Err(invalid(format!(
                            "`{}` on an array of {}",
                            i.name(),
                            elem.map(|t| t.to_string()).unwrap_or_default()
                        )))
                    }
                };
                path.steps = Box::new([Step::Index(self.expr(cx, index)?)]);
                path.nindex = 1;
                path.leaf = Some(leaf);
                CExpr::Atomic {
                    op,
                    path: Box::new(path),
                    operands: self.exprs(cx, &args[2..])?,
                }
            }
            Intrinsic::Shuffle(k) => {
                arity(2)?;
                if args[0].ty.as_scalar().is_none() {
                    return Err(invalid(format!(
                        "`{}` of a value of type `{}`, not a scalar",
                        i.name(),
                        args[0].ty
                    )));
                }
                CExpr::Warp {
                    site: self.site(&format!("{}()", i.name())),
                    kind: WarpOpKind::Shuffle(k),
                    args: self.exprs(cx, args)?,
                }
            }
            Intrinsic::VoteAny | Intrinsic::VoteAll | Intrinsic::Ballot => {
                arity(1)?;
                let kind = match i {
                    Intrinsic::VoteAny => WarpOpKind::Vote(VoteKind::Any),
                    Intrinsic::VoteAll => WarpOpKind::Vote(VoteKind::All),
                    _ => WarpOpKind::Ballot,
                };
                CExpr::Warp {
                    site: self.site(&format!("{}()", i.name())),
                    kind,
                    args: self.exprs(cx, args)?,
                }
            }
            Intrinsic::PackHalf2(_) => {
                arity(2)?;
                CExpr::PackHalf2(Box::new([
                    self.expr(cx, &args[0])?,
                    self.expr(cx, &args[1])?,
                ]))
            }
            Intrinsic::MmaM16N8K16(h) => {
                arity(3)?;
                CExpr::Warp {
                    site: self.site(&format!("{}()", i.name())),
                    kind: WarpOpKind::Mma {
                        bf16: h == spoc_ir::HalfKind::BF16,
                    },
                    args: self.exprs(cx, args)?,
                }
            }
        })
    }

    /// The place `e` names, if it is a variable followed by indices and fields.
    fn expr_path(&mut self, cx: Cx, e: &Expr) -> Result<Option<CPath>, Fault> {
        let mut steps = Vec::new();
        let mut cur = e;
        // Walk down to the root, collecting steps in reverse.
        let root = loop {
            match &cur.kind {
                ExprKind::Var(v) => break *v,
                ExprKind::Index { array, index } => {
                    steps.push(Step::Index(self.expr(cx, index)?));
                    cur = array;
                }
                ExprKind::Field { base, field } => {
                    let (index, offset) = self.field(&base.ty, field)?;
                    steps.push(Step::Field { index, offset });
                    cur = base;
                }
                _ => return Ok(None),
            }
        };
        steps.reverse();
        self.finish_path(cx, root, steps, &e.ty).map(Some)
    }

    /// The place an assignment target names.
    fn lvalue_path(&mut self, cx: Cx, target: &LValue) -> Result<CPath, Fault> {
        // Collect the chain root-first, then compute types going down.
        let mut chain = Vec::new();
        let mut cur = target;
        let root = loop {
            match cur {
                LValue::Var(v) => break *v,
                LValue::Index { base, .. } | LValue::Field { base, .. } => {
                    chain.push(cur);
                    cur = base;
                }
            }
        };
        chain.reverse();
        let mut ty = check_var(cx.vars, root)?.ty.clone();
        let mut steps = Vec::with_capacity(chain.len());
        for lv in chain {
            match lv {
                LValue::Index { index, .. } => {
                    let elem = match &ty {
                        Type::Array { elem, .. } => (**elem).clone(),
                        other => {
                            return Err(invalid(format!("indexing a value of type `{other}`")))
                        }
                    };
                    steps.push(Step::Index(self.expr(cx, index)?));
                    ty = elem;
                }
                LValue::Field { field, .. } => {
                    let (index, offset) = self.field(&ty, field)?;
                    let fty = match &ty {
                        Type::Vector { elem, .. } => Some(Type::Scalar(*elem)),
                        Type::Record(n) => self
                            .kernel
                            .record(n)
                            .and_then(|d| d.fields.get(index as usize))
                            .map(|f| f.ty.clone()),
                        _ => None,
                    }
                    .ok_or_else(|| invalid(format!("no field `{field}` in `{ty}`")))?;
                    steps.push(Step::Field { index, offset });
                    ty = fty;
                }
                LValue::Var(_) => unreachable!("only the root is a variable"),
            }
        }
        self.finish_path(cx, root, steps, &ty)
    }

    fn finish_path(
        &mut self,
        cx: Cx,
        root: VarId,
        steps: Vec<Step>,
        leaf_ty: &Type,
    ) -> Result<CPath, Fault> {
        let decl = check_var(cx.vars, root)?;
        let nindex = steps.iter().filter(|s| matches!(s, Step::Index(_))).count();
        if nindex > MAX_INDICES {
            return Err(unsupported(format!(
                "more than {MAX_INDICES} nested indices in one place"
            )));
        }
        let (mut elem, mut leaf) = (None, None);
        if let Type::Array {
            elem: elem_ty,
            space: MemSpace::Global | MemSpace::Shared,
            ..
        } = &decl.ty
        {
            elem = Some(self.global_elem(elem_ty)?);
            if !steps.is_empty() {
                // A global element is `root[i]` followed by fields only.
                let shape_ok = matches!(steps[0], Step::Index(_))
                    && steps[1..].iter().all(|s| matches!(s, Step::Field { .. }));
                if !shape_ok {
                    return Err(invalid(format!(
                        "place rooted at buffer `{}` is not `buffer[i].field…`",
                        decl.name
                    )));
                }
                leaf = Some(Layout::of(leaf_ty, &self.kernel.records)?);
            }
        }
        Ok(CPath {
            root: root.0,
            name: decl.name.as_str().into(),
            steps: steps.into_boxed_slice(),
            nindex,
            elem,
            leaf,
            loc: self.here(),
        })
    }

    /// Index and global-memory byte offset of field `name` of record type `ty`, or of lane
    /// `name` (`x`, `y`, `z`, `w`) of vector type `ty` (lane `i` at byte `i * size(elem)`).
    fn field(&mut self, ty: &Type, name: &str) -> Result<(u32, usize), Fault> {
        let rec = match ty {
            Type::Record(r) => r,
            Type::Vector { elem, lanes } => {
                check_lanes(*lanes)?;
                return match lane_index(name) {
                    Some(i) if i < usize::from(*lanes) => Ok((i as u32, i * elem.size_bytes())),
                    _ => Err(invalid(format!("no lane `{name}` in `{ty}`"))),
                };
            }
            other => return Err(invalid(format!("field `{name}` of a `{other}`"))),
        };
        let def = self
            .kernel
            .record(rec)
            .ok_or_else(|| invalid(format!("unknown record type `{rec}`")))?;
        let index = def
            .fields
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| invalid(format!("no field `{name}` in record `{rec}`")))?;
        if !self.records.contains_key(rec) {
            let l = Layout::of(ty, &self.kernel.records).ok();
            self.records.insert(rec.clone(), l);
        }
        let offset = match &self.records[rec] {
            Some(Layout::Record { fields, .. }) => fields[index].0,
            _ => 0,
        };
        Ok((index as u32, offset))
    }

    /// Index of case `case` of `variant`; `npayload`, when given, must be its payload length.
    fn case(&self, variant: &str, case: &str, npayload: Option<usize>) -> Result<u32, Fault> {
        let def = self
            .kernel
            .variant(variant)
            .ok_or_else(|| invalid(format!("unknown variant type `{variant}`")))?;
        let i = def
            .case_index(case)
            .ok_or_else(|| invalid(format!("no case `{case}` in variant `{variant}`")))?;
        match npayload {
            Some(n) if n != def.cases[i].payload.len() => {
                return Err(invalid(format!(
                    "case `{variant}::{case}` has {} payload values, not {n}",
                    def.cases[i].payload.len()
                )))
            }
            _ => {}
        }
        Ok(i as u32)
    }

    fn pattern(&mut self, cx: Cx, p: &Pattern) -> Result<CPattern, Fault> {
        let int = |c: &spoc_ir::Const| {
            Value::from_const(*c)
                .as_i128()
                .ok_or_else(|| invalid("a `match` pattern constant is not an integer"))
        };
        Ok(match p {
            Pattern::Wildcard => CPattern::Wildcard,
            Pattern::Int(c) => CPattern::Int(int(c)?),
            Pattern::Range(lo, hi) => CPattern::Range(int(lo)?, int(hi)?),
            Pattern::Or(ps) => CPattern::Or(
                ps.iter()
                    .map(|p| self.pattern(cx, p))
                    .collect::<Result<_, Fault>>()?,
            ),
            Pattern::Case {
                variant,
                case,
                bindings,
            } => {
                for b in bindings {
                    check_var(cx.vars, *b)?;
                }
                // No bindings ignores the payload (`Case(..)`).
                let n = if bindings.is_empty() {
                    None
                } else {
                    Some(bindings.len())
                };
                CPattern::Case {
                    case: self.case(variant, case, n)?,
                    bindings: bindings.iter().map(|b| b.0).collect(),
                }
            }
        })
    }
}
