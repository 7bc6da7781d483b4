//! The seeded generator of random well-typed kernels (see [`crate::ast`] for the frame every
//! kernel has). Everything it draws is defined on every backend by construction: indices are
//! wrapped into bounds, integer divisors are non-zero literals or `(d | 1)`, loops have bounded
//! trip counts, `sync_threads()` is only at the top level of the body (so every thread reaches
//! every barrier; `return` only after the last one), shared arrays are written only at the
//! thread's own element, read anywhere only in a later phase, or touched by atomics of one
//! order-independent family, and global accumulators are touched only by such atomics.

use crate::ast::*;
use crate::rng::Rng;
use std::collections::BTreeMap;

/// A known open bug the generator steers around (see [`KNOWN`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// Its name, as `SPOC_DIFFTEST_KNOWN` takes it.
    pub name: &'static str,
    /// What is excluded while it is active.
    pub what: &'static str,
    /// Active unless `SPOC_DIFFTEST_KNOWN` says otherwise.
    pub default: bool,
    /// The devices whose presence makes a default exclusion apply to a run.
    pub scope: Scope,
}

/// Which devices a known bug concerns: a default exclusion applies to a run only if one of them
/// is in it (an exclusion named in `SPOC_DIFFTEST_KNOWN` applies whatever the devices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every run.
    Any,
    /// Runs with a Vulkan device.
    Vulkan,
    /// Runs with lavapipe (Mesa's llvmpipe Vulkan driver).
    Lavapipe,
    /// Runs with a device whose warps are narrower than 32 lanes.
    NarrowWarps,
    /// Runs with a device compiled from C source (OpenCL, CUDA/C, HIP).
    CSource,
    /// Runs with an NVIDIA device (CUDA, or an OpenCL or Vulkan device named NVIDIA).
    Nvidia,
    /// Runs with a Vulkan device of NVIDIA's driver (it flushes f32 subnormals, which Vulkan
    /// allows without `shaderDenormPreserveFloat32`: docs/LANGUAGE.md).
    VulkanNvidia,
}

/// The names of the exclusions active by default.
pub fn default_known() -> Vec<String> {
    KNOWN
        .iter()
        .filter(|k| k.default)
        .map(|k| k.name.to_string())
        .collect()
}

/// The known open bugs the generator can steer around, each by name. Which are active is the
/// [`Config::known`] list; each exclusion is counted in [`Stats`] and printed by the harness.
pub const KNOWN: &[Known] = &[
    Known {
        name: "block-expr-order",
        what: "value blocks (`{ ..; e }`, `if`/`match` values) with side effects only as a whole \
               `let` initializer, never inside a larger expression (fixed on main in f16b01a: \
               off by default)",
        default: false,
        scope: Scope::Any,
    },
    Known {
        name: "native-match-value-stmts",
        what: "compiled kernels: `match` values whose arms hold statements (Native's generated \
               code does not compile, E0381: difftest/FINDINGS.md F1, fixed on main in f16b01a: \
               off by default); run-time-lowered kernels keep them",
        default: false,
        scope: Scope::Any,
    },
    Known {
        name: "c-double-minus",
        what: "no float `-` directly on a float `-` or a negative float literal (the C printer \
               wrote `- -6.0f` as `--6.0f`: difftest/FINDINGS.md F2; fixed on main in 1f0ba4f: \
               off by default)",
        default: false,
        scope: Scope::CSource,
    },
    Known {
        name: "vulkan-fmod-barrier",
        what: "no float `%` in kernels with `sync_threads()` (lavapipe miscompiled Vulkan's fmod \
               routine there: difftest/FINDINGS.md F3; fixed in 2860cdf: off by default)",
        default: false,
        scope: Scope::Lavapipe,
    },
    Known {
        name: "vulkan-fast-math",
        what: "kernels in which the oracle sees a float `+ - * / %`, comparison or method with \
               an operand the driver can see at compile time to be ±0, NaN or ±inf are drawn \
               again (lavapipe folds `0.0 * x`, `x + 0.0` as if signed zeros and NaN did not \
               exist; since 9a18c7a spoc hides float literals, since 2860cdf integer constants \
               converted to floats too, `(0u32 as f32) * x`: FINDINGS.md K2; off by default)",
        default: false,
        scope: Scope::Lavapipe,
    },
    Known {
        name: "vulkan-sext-compare",
        what: "kernels in which the oracle sees an ordering comparison (`<`, a range pattern, \
               `min`, `max`, `abs`) of a sign-extended `i32` (`x as i64`) are drawn again \
               (lavapipe ordered `OpSConvert` results wrongly: difftest/FINDINGS.md F4; spoc \
               sign-extends with integer operations since 2860cdf: off by default)",
        default: false,
        scope: Scope::Lavapipe,
    },
    Known {
        name: "shuffle-8-lanes",
        what: "no `shuffle_up`/`shuffle_down` (lavapipe's 8-lane subgroups rotated instead of \
               keeping the lane's own value when the source is past the warp; fixed on main in \
               9a18c7a: off by default)",
        default: false,
        scope: Scope::NarrowWarps,
    },
    Known {
        name: "vulkan-sqrt-max",
        what: "kernels in which the oracle takes a `sqrt` whose result is the largest finite \
               square root (of `f32::MAX`, `f64::MAX`) are drawn again (Vulkan's refined sqrt \
               was one ulp high there: difftest/FINDINGS.md F5; fixed in 2860cdf: off by \
               default)",
        default: false,
        scope: Scope::Vulkan,
    },
    Known {
        name: "abs-int-min",
        what: "kernels in which the oracle takes `abs` of i32::MIN / i64::MIN are drawn again \
               (fixed on main in 9a18c7a: off by default)",
        default: false,
        scope: Scope::Nvidia,
    },
    Known {
        name: "f32-subnormals",
        what: "kernels in which the oracle sees f32 arithmetic on or giving a subnormal are \
               drawn again (for devices that flush f32 subnormals, which LANGUAGE.md allows on \
               Vulkan/NVIDIA: 24 of 1200 kernels disagreed there without it on the H200)",
        default: true,
        scope: Scope::VulkanNvidia,
    },
];

/// What to generate.
#[derive(Clone, Debug)]
pub struct Config {
    /// Generate `#[device]` helpers (compiled kernels only: run-time lowering refuses them).
    pub helpers: bool,
    /// The kernels are compiled by `#[kernel]` (Native runs their generated Rust).
    pub native: bool,
    /// Active exclusions (names from [`KNOWN`]).
    pub known: Vec<String>,
    /// Allow `mul_add` (lavapipe refuses kernels using it, as its `Fma` is not fused).
    pub mul_add: bool,
    /// Largest number of statements in a kernel (roughly).
    pub max_stmts: u32,
    /// Percentage of kernels with warp operations (PoCL, without subgroups, refuses those).
    pub warp_percent: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            helpers: false,
            native: false,
            known: default_known(),
            mul_add: true,
            max_stmts: 40,
            warp_percent: 15,
        }
    }
}

impl Config {
    /// Whether exclusion `name` is active.
    pub fn excludes(&self, name: &str) -> bool {
        self.known.iter().any(|k| k == name)
    }

    /// The exclusions the oracle enforces (by redrawing the kernels that hit them).
    pub fn excl(&self) -> crate::oracle::Excl {
        crate::oracle::Excl {
            abs_int_min: self.excludes("abs-int-min"),
            vulkan_fast_math: self.excludes("vulkan-fast-math"),
            f32_subnormals: self.excludes("f32-subnormals"),
            vulkan_sext_compare: self.excludes("vulkan-sext-compare"),
            vulkan_sqrt_max: self.excludes("vulkan-sqrt-max"),
        }
    }
}

/// Counts of what the generator did, exclusions included.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Per exclusion name: how many constructs (or kernels) it kept out.
    pub excluded: BTreeMap<String, u64>,
}

impl Stats {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Stats) {
        for (k, v) in &other.excluded {
            *self.excluded.entry(k.clone()).or_default() += v;
        }
    }
}

/// How a shared array may be touched in the current phase (between two barriers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShMode {
    /// Not yet written: not touched.
    Unused,
    /// Only the thread's own element, read and written.
    Own,
    /// Read anywhere, not written.
    Read,
    /// Only atomics of the array's family.
    Atomic,
}

struct Gen<'c> {
    rng: Rng,
    cfg: &'c Config,
    k: Kernel,
    scopes: Vec<Vec<VarId>>,
    loops: u32,
    /// Loops around this point, value blocks included (bounds the trip count product).
    loop_nest: u32,
    nest: u32,
    /// Inside a value block that must not have side effects (`block-expr-order`).
    pure: bool,
    /// Inside a `match` value whose value blocks must hold no statements
    /// (`native-match-value-stmts`).
    flat: bool,
    in_helper: bool,
    can_return: bool,
    modes: Vec<ShMode>,
    stmts: u32,
    stats: Stats,
    /// Helpers callable from here (a helper calls only earlier ones).
    callable: usize,
    /// The kernel has a barrier.
    barrier: bool,
    /// The kernel has warp operations (and may read `lane_id()`, `warp_size()`).
    warps: bool,
}

/// Generates the kernel named `name` for `seed`.
pub fn generate(seed: u64, name: &str, cfg: &Config) -> (Kernel, Stats) {
    let mut g = Gen {
        rng: Rng::new(seed),
        cfg,
        k: Kernel::new(name),
        scopes: vec![vec![]],
        loops: 0,
        loop_nest: 0,
        nest: 0,
        pure: false,
        flat: false,
        in_helper: false,
        can_return: false,
        modes: vec![],
        stmts: 0,
        stats: Stats::default(),
        callable: 0,
        barrier: false,
        warps: false,
    };
    g.kernel();
    (g.k, g.stats)
}

const INT_OPS: [BinOp; 10] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::Shl,
    BinOp::Shr,
];
const FLOAT_OPS: [BinOp; 5] = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem];
const CMP_OPS: [BinOp; 6] = [
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
];

impl Gen<'_> {
    /// The body of a loop whose variable (or counter) is `var`, at depth `d`.
    fn loop_body(&mut self, var: VarId, d: u32) -> Block {
        self.stmts += 1;
        self.scopes.push(vec![var]);
        self.loops += 1;
        self.loop_nest += 1;
        let body = self.block(d, 4);
        self.loop_nest -= 1;
        self.loops -= 1;
        self.scopes.pop();
        body
    }

    fn new_var(&mut self, ty: Ty, kind: VarKind) -> VarId {
        let id = VarId(self.k.vars.len() as u32);
        self.k.vars.push(VarInfo { ty, kind });
        id
    }

    fn bind(&mut self, v: VarId) {
        self.scopes.last_mut().expect("a scope").push(v);
    }

    fn visible(&self, pred: impl Fn(&VarInfo) -> bool) -> Vec<VarId> {
        self.scopes
            .iter()
            .flatten()
            .copied()
            .filter(|v| pred(&self.k.vars[v.0 as usize]))
            .collect()
    }

    fn any_scalar_ty(&mut self) -> Ty {
        // i32 and f32 a little more often than the rest.
        *self.rng.pick(&[
            Ty::I32,
            Ty::I32,
            Ty::U32,
            Ty::I64,
            Ty::U64,
            Ty::F32,
            Ty::F32,
            Ty::F64,
            Ty::Bool,
            Ty::Usize,
        ])
    }

    fn kernel(&mut self) {
        // Scalar parameters: up to two of some types.
        for &t in &Ty::ALL {
            let n = self.rng.weighted(&[5, 4, 1]);
            for _ in 0..n {
                let p = self.new_var(t, VarKind::Param);
                self.k.params.push(p);
                self.bind(p);
            }
        }
        // Accumulators.
        let n_acc = self.rng.weighted(&[5, 3, 2]);
        for _ in 0..n_acc {
            let ty = *self.rng.pick(&[
                Ty::I32,
                Ty::U32,
                Ty::I64,
                Ty::U64,
                Ty::I32,
                Ty::U32,
                Ty::F32,
            ]);
            let family = self.family(ty);
            self.k.accs.push(Acc { ty, family });
        }
        // Shared arrays (and with them, barriers).
        let n_sh = self.rng.weighted(&[6, 3, 1]);
        for _ in 0..n_sh {
            let ty = *self.rng.pick(&Ty::BUF);
            let family = if ty != Ty::F64 && self.rng.chance(40) {
                Some(self.family(ty))
            } else {
                None
            };
            self.k.shared.push(Shared { ty, family });
        }
        self.modes = vec![ShMode::Unused; n_sh];
        let phases = if n_sh > 0 {
            self.rng.range(2, 3) as u32
        } else if self.rng.chance(10) {
            2
        } else {
            1
        };
        self.barrier = phases > 1;
        self.warps = self.rng.chance(self.cfg.warp_percent);
        // Helpers.
        if self.cfg.helpers {
            let n = self.rng.weighted(&[3, 4, 2, 1]);
            for h in 0..n {
                self.helper(h);
            }
        }
        self.callable = self.k.helpers.len();
        self.stmts = 0;
        let mut body = vec![];
        for phase in 0..phases {
            if phase > 0 {
                body.push(Stmt::Sync);
            }
            for sh in 0..n_sh {
                self.modes[sh] = if phase == 0 {
                    ShMode::Own
                } else {
                    let fam = self.k.shared[sh].family.is_some();
                    *self.rng.pick(if fam {
                        &[ShMode::Own, ShMode::Read, ShMode::Read, ShMode::Atomic][..]
                    } else {
                        &[ShMode::Own, ShMode::Read, ShMode::Read][..]
                    })
                };
            }
            if phase == 0 {
                // Every thread writes its own element first (the value is drawn while the
                // array is still unwritten, so it cannot read it).
                self.modes = vec![ShMode::Unused; n_sh];
                for sh in 0..n_sh {
                    let ty = self.k.shared[sh].ty;
                    let value = self.expr(ty, 2, false);
                    body.push(Stmt::Assign {
                        place: Place::Shared(sh),
                        op: None,
                        value,
                    });
                    self.modes[sh] = ShMode::Own;
                }
            }
            let budget = self.cfg.max_stmts / phases;
            let n = self.rng.range(2, 2 + budget as i64 / 3) as u32;
            // Warp operations at the top level, where every thread reaches them; `return`
            // only after the last one of the last phase.
            let warp_at: Vec<u32> = if self.warps {
                (0..self.rng.range(0, 2))
                    .map(|_| self.rng.below(n as u64 + 1) as u32)
                    .collect()
            } else {
                vec![]
            };
            let last_warp = warp_at.iter().copied().max();
            let start = self.stmts;
            for i in 0..=n {
                for _ in warp_at.iter().filter(|&&w| w == i) {
                    let s = self.warp_stmt();
                    body.push(s);
                }
                if i == n {
                    break;
                }
                self.can_return = phase + 1 == phases && last_warp.is_none_or(|w| i >= w);
                if self.stmts - start >= budget {
                    continue;
                }
                let s = self.stmt(3);
                body.push(s);
            }
            self.can_return = false;
        }
        // Sinks: the values of a few variables of the top scope, into the output slots.
        let top = self.visible(|v| matches!(v.kind, VarKind::Local { .. }));
        let sinks = self.rng.range(1, 4);
        for _ in 0..sinks {
            let s = if !top.is_empty() && self.rng.chance(70) {
                let v = *self.rng.pick(&top);
                let ty = self.k.ty_of(v);
                let out = *self.rng.pick(&Ty::BUF);
                let e = Expr::var(v, ty);
                let e = if ty == out { e } else { self.cast_to(e, out) };
                Stmt::Assign {
                    place: Place::Out(out, self.rng.below(SLOTS as u64) as u32),
                    op: None,
                    value: e,
                }
            } else {
                self.out_write()
            };
            body.push(s);
        }
        self.k.body = body;
    }

    /// `e as out`, through `u32` where Rust has no direct cast (`bool as f32`).
    fn cast_to(&mut self, e: Expr, out: Ty) -> Expr {
        let e = if e.ty == Ty::Bool && out.is_float() {
            Expr {
                ty: Ty::U32,
                kind: ExprKind::Cast(Box::new(e)),
            }
        } else {
            e
        };
        Expr {
            ty: out,
            kind: ExprKind::Cast(Box::new(e)),
        }
    }

    fn family(&mut self, ty: Ty) -> AtomFamily {
        if ty.is_float() {
            return AtomFamily::AddSub;
        }
        *self.rng.pick(&[
            AtomFamily::AddSub,
            AtomFamily::AddSub,
            AtomFamily::Min,
            AtomFamily::Max,
            AtomFamily::And,
            AtomFamily::Or,
            AtomFamily::Xor,
        ])
    }

    /// `let v: T = op(value, operand);` at the top level. The value has no side effects (it
    /// is evaluated by every thread before any result is known).
    fn warp_stmt(&mut self) -> Stmt {
        let mut op = *self.rng.pick(&[
            WarpOp::Shuffle,
            WarpOp::Up,
            WarpOp::Down,
            WarpOp::Down,
            WarpOp::Xor,
            WarpOp::Any,
            WarpOp::All,
            WarpOp::Ballot,
        ]);
        if matches!(op, WarpOp::Up | WarpOp::Down) && self.cfg.excludes("shuffle-8-lanes") {
            *self
                .stats
                .excluded
                .entry("shuffle-8-lanes".into())
                .or_default() += 1;
            op = WarpOp::Xor;
        }
        let was_pure = std::mem::replace(&mut self.pure, true);
        let (ty, value) = match op {
            WarpOp::Any | WarpOp::All | WarpOp::Ballot => {
                let v = self.expr(Ty::Bool, 2, false);
                (
                    if op == WarpOp::Ballot {
                        Ty::U32
                    } else {
                        Ty::Bool
                    },
                    v,
                )
            }
            _ => {
                let t = *self.rng.pick(Ty::NUM);
                (t, self.expr(t, 2, false))
            }
        };
        let operand = match op {
            WarpOp::Shuffle | WarpOp::Xor => {
                let e = self.expr(Ty::Usize, 1, false);
                let w = Expr {
                    ty: Ty::Usize,
                    kind: ExprKind::Intr(Intr::WarpSize),
                };
                Some(Expr::bin(BinOp::Rem, e, w, Ty::Usize))
            }
            WarpOp::Up | WarpOp::Down => Some(if self.rng.chance(70) {
                let d = *self
                    .rng
                    .pick(&[0u32, 1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 31, 32, 33]);
                Expr::lit(Val::Usize(d))
            } else {
                self.expr(Ty::Usize, 1, false)
            }),
            _ => None,
        };
        self.pure = was_pure;
        let var = self.new_var(ty, VarKind::Local { mutable: false });
        self.bind(var);
        self.stmts += 1;
        Stmt::Warp {
            var,
            op,
            value,
            operand,
        }
    }

    fn helper(&mut self, h: usize) {
        let saved = std::mem::replace(&mut self.scopes, vec![vec![]]);
        self.in_helper = true;
        self.callable = h;
        let n = self.rng.range(1, 3);
        let mut params = vec![];
        for _ in 0..n {
            let t = self.any_scalar_ty();
            let p = self.new_var(t, VarKind::Param);
            params.push(p);
            self.bind(p);
        }
        let ret = self.any_scalar_ty();
        self.stmts = 0;
        let mut stmts = vec![];
        for _ in 0..self.rng.range(0, 4) {
            let s = self.stmt(2);
            stmts.push(s);
        }
        let tail = self.expr(ret, 3, false);
        self.k.helpers.push(Helper {
            params,
            ret,
            body: Block {
                stmts,
                tail: Some(tail),
            },
        });
        self.in_helper = false;
        self.scopes = saved;
    }

    // ------------------------------------------------------------------ literals

    fn lit(&mut self, ty: Ty) -> Val {
        interesting(&mut self.rng, ty)
    }

    // ------------------------------------------------------------------ expressions

    fn leaf(&mut self, ty: Ty) -> Expr {
        let vars = self.visible(|v| v.ty == ty && !matches!(v.kind, VarKind::Array { .. }));
        let choice = self.rng.weighted(&[
            35,
            if vars.is_empty() { 0 } else { 50 },
            if ty == Ty::Usize && !self.in_helper {
                25
            } else {
                0
            },
            if ty.buf_index().is_some() && !self.in_helper {
                10
            } else {
                0
            },
        ]);
        match choice {
            1 => Expr::var(*self.rng.pick(&vars), ty),
            2 => {
                if self.rng.chance(20) {
                    let l = self.len_of();
                    Expr {
                        ty,
                        kind: ExprKind::Len(l),
                    }
                } else {
                    let mut is = vec![
                        Intr::Gid,
                        Intr::Gid,
                        Intr::Gid,
                        Intr::Tid,
                        Intr::Tid,
                        Intr::BlockIdx,
                        Intr::BlockDim,
                        Intr::GridDim,
                        Intr::GlobalSize,
                    ];
                    if self.warps {
                        is.extend([Intr::LaneId, Intr::LaneId, Intr::WarpSize]);
                    }
                    let i = *self.rng.pick(&is);
                    Expr {
                        ty,
                        kind: ExprKind::Intr(i),
                    }
                }
            }
            3 => self.input(ty, 0),
            _ => Expr::lit(self.lit(ty)),
        }
    }

    fn len_of(&mut self) -> LenOf {
        let arrays = self.visible(|v| matches!(v.kind, VarKind::Array { .. }));
        match self.rng.below(4) {
            0 if !arrays.is_empty() => LenOf::Array(*self.rng.pick(&arrays)),
            1 if !self.k.shared.is_empty() => {
                LenOf::Shared(self.rng.below(self.k.shared.len() as u64) as usize)
            }
            2 => LenOf::Output(*self.rng.pick(&Ty::BUF)),
            _ => LenOf::Input(*self.rng.pick(&Ty::BUF)),
        }
    }

    fn index(&mut self, depth: u32) -> Expr {
        if self.rng.chance(40) && !self.in_helper {
            return Expr {
                ty: Ty::Usize,
                kind: ExprKind::Intr(Intr::Gid),
            };
        }
        if self.rng.chance(30) {
            let t = *self.rng.pick(&[Ty::I32, Ty::U32, Ty::I64, Ty::U64]);
            let e = self.expr(t, depth.min(1), false);
            return Expr {
                ty: Ty::Usize,
                kind: ExprKind::Cast(Box::new(e)),
            };
        }
        self.expr(Ty::Usize, depth.min(2), false)
    }

    fn input(&mut self, ty: Ty, depth: u32) -> Expr {
        let index = self.index(depth);
        Expr {
            ty,
            kind: ExprKind::Input {
                index: Box::new(index),
                wrap: if self.rng.chance(30) {
                    Wrap::Len
                } else {
                    Wrap::Lit
                },
            },
        }
    }

    /// An expression of type `ty`. `top`: the whole initializer of a `let` (where value blocks
    /// may have side effects even while `block-expr-order` is excluded).
    fn expr(&mut self, ty: Ty, depth: u32, top: bool) -> Expr {
        if depth == 0 {
            return self.leaf(ty);
        }
        let arrays = self.visible(|v| v.ty == ty && matches!(v.kind, VarKind::Array { .. }));
        let shared: Vec<usize> = (0..self.k.shared.len())
            .filter(|&s| {
                self.k.shared[s].ty == ty
                    && matches!(self.modes[s], ShMode::Own | ShMode::Read)
                    && !self.in_helper
            })
            .collect();
        let can_call = top && self.callable > 0 && self.rng.chance(30);
        if can_call {
            // Only calls whose result type is `ty`.
            let hs: Vec<usize> = (0..self.callable)
                .filter(|&h| self.k.helpers[h].ret == ty)
                .collect();
            if !hs.is_empty() {
                let h = *self.rng.pick(&hs);
                let params = self.k.helpers[h].params.clone();
                let args = params
                    .iter()
                    .map(|&p| {
                        let t = self.k.ty_of(p);
                        self.expr(t, depth - 1, false)
                    })
                    .collect();
                return Expr {
                    ty,
                    kind: ExprKind::Call(h, args),
                };
            }
        }
        let w = [
            25,                                    // 0 leaf
            6,                                     // 1 unary
            30,                                    // 2 binary
            12,                                    // 3 cast
            if ty == Ty::Bool { 0 } else { 12 },   // 4 method
            4,                                     // 5 if
            if self.nest < 3 { 4 } else { 0 },     // 6 block
            if self.nest < 3 { 3 } else { 0 },     // 7 match
            if arrays.is_empty() { 0 } else { 6 }, // 8 local array
            if shared.is_empty() { 0 } else { 8 }, // 9 shared
            if ty.buf_index().is_some() && !self.in_helper {
                8
            } else {
                0
            }, // 10 input
            if ty.buf_index().is_some() && !self.in_helper {
                2
            } else {
                0
            }, // 11 output
        ];
        let d = depth - 1;
        match self.rng.weighted(&w) {
            1 => self.unary(ty, d),
            2 => self.binary(ty, d),
            3 => self.cast(ty, d),
            4 => self.method(ty, d),
            5 => {
                let c = self.expr(Ty::Bool, d, false);
                let a = self.value_block(ty, d, top, 1);
                let b = self.value_block(ty, d, top, 1);
                Expr {
                    ty,
                    kind: ExprKind::If(Box::new(c), Box::new(a), Box::new(b)),
                }
            }
            6 => {
                let b = self.value_block(ty, d, top, 3);
                Expr {
                    ty,
                    kind: ExprKind::Block(Box::new(b)),
                }
            }
            7 => {
                let (scrut, arms) = self.match_head(d);
                // Native's generated code for a `match` value with statements anywhere in its
                // arms does not compile (F1): none there while the exclusion is active.
                let flat = self.cfg.native && self.cfg.excludes("native-match-value-stmts");
                if flat && !self.flat {
                    *self
                        .stats
                        .excluded
                        .entry("native-match-value-stmts".into())
                        .or_default() += 1;
                }
                let was_flat = self.flat;
                self.flat |= flat;
                let mut vals = vec![];
                for pats in arms {
                    let body = self.value_block(ty, d, top, 1);
                    vals.push(Arm { pats, body });
                }
                let default = self.value_block(ty, d, top, 1);
                self.flat = was_flat;
                Expr {
                    ty,
                    kind: ExprKind::Match(Box::new(scrut), vals, Box::new(default)),
                }
            }
            8 => {
                let arr = *self.rng.pick(&arrays);
                let index = self.index(d);
                Expr {
                    ty,
                    kind: ExprKind::ArrRead {
                        arr,
                        index: Box::new(index),
                    },
                }
            }
            9 => {
                let sh = *self.rng.pick(&shared);
                let index = if self.modes[sh] == ShMode::Read && self.rng.chance(80) {
                    Some(Box::new(self.index(d)))
                } else {
                    None
                };
                Expr {
                    ty,
                    kind: ExprKind::SharedRead { sh, index },
                }
            }
            10 => self.input(ty, d),
            11 => Expr {
                ty,
                kind: ExprKind::OutRead {
                    slot: self.rng.below(SLOTS as u64) as u32,
                },
            },
            _ => self.leaf(ty),
        }
    }

    /// A block used as a value: a few statements, then a tail of type `ty`.
    fn value_block(&mut self, ty: Ty, depth: u32, top: bool, max_stmts: i64) -> Block {
        let effects = !self.pure && (top || !self.cfg.excludes("block-expr-order"));
        let n = if self.flat {
            0
        } else {
            self.rng.range(0, max_stmts)
        };
        if !effects && !self.pure && n > 0 {
            *self
                .stats
                .excluded
                .entry("block-expr-order".into())
                .or_default() += 1;
        }
        let was_pure = std::mem::replace(&mut self.pure, !effects);
        self.scopes.push(vec![]);
        self.nest += 1;
        // A value block is no loop body: `break`/`continue` inside it would leave an enclosing
        // loop from the middle of an expression, which is legal Rust but outside the generated
        // subset.
        let loops = std::mem::replace(&mut self.loops, 0);
        let can_return = std::mem::replace(&mut self.can_return, false);
        let mut stmts = vec![];
        for _ in 0..n {
            let s = if effects {
                self.stmt(depth.min(2))
            } else {
                self.let_stmt(depth.min(2))
            };
            stmts.push(s);
        }
        let tail = self.expr(ty, depth, false);
        self.loops = loops;
        self.can_return = can_return;
        self.pure = was_pure;
        self.nest -= 1;
        self.scopes.pop();
        Block {
            stmts,
            tail: Some(tail),
        }
    }

    fn unary(&mut self, ty: Ty, d: u32) -> Expr {
        let op = match ty {
            Ty::Bool => UnOp::Not,
            t if t.is_signed() => *self.rng.pick(&[UnOp::Neg, UnOp::Not]),
            t if t.is_float() => UnOp::Neg,
            _ => UnOp::Not,
        };
        let mut a = self.expr(ty, d, false);
        if ty.is_float() && self.cfg.excludes("c-double-minus") && starts_negative(&a) {
            *self
                .stats
                .excluded
                .entry("c-double-minus".into())
                .or_default() += 1;
            a = Expr {
                ty,
                kind: ExprKind::Method(Method::Abs, vec![a]),
            };
        }
        Expr {
            ty,
            kind: ExprKind::Unary(op, Box::new(a)),
        }
    }

    fn binary(&mut self, ty: Ty, d: u32) -> Expr {
        match ty {
            Ty::Bool => {
                if self.rng.chance(35) {
                    let op = *self.rng.pick(&[
                        BinOp::LogicalAnd,
                        BinOp::LogicalOr,
                        BinOp::BitAnd,
                        BinOp::BitOr,
                        BinOp::BitXor,
                        BinOp::Eq,
                        BinOp::Ne,
                    ]);
                    let a = self.expr(Ty::Bool, d, false);
                    let b = self.expr(Ty::Bool, d, false);
                    Expr::bin(op, a, b, Ty::Bool)
                } else {
                    let t = *self.rng.pick(&[
                        Ty::I32,
                        Ty::U32,
                        Ty::I64,
                        Ty::U64,
                        Ty::F32,
                        Ty::F32,
                        Ty::F64,
                        Ty::Usize,
                    ]);
                    let op = *self.rng.pick(&CMP_OPS);
                    let a = self.expr(t, d, false);
                    let b = self.expr(t, d, false);
                    Expr::bin(op, a, b, Ty::Bool)
                }
            }
            t if t.is_float() => {
                let mut op = *self.rng.pick(&FLOAT_OPS);
                if op == BinOp::Rem && self.barrier && self.cfg.excludes("vulkan-fmod-barrier") {
                    *self
                        .stats
                        .excluded
                        .entry("vulkan-fmod-barrier".into())
                        .or_default() += 1;
                    op = BinOp::Div;
                }
                let a = self.expr(t, d, false);
                let b = self.expr(t, d, false);
                Expr::bin(op, a, b, t)
            }
            t => {
                let op = *self.rng.pick(&INT_OPS);
                let a = self.expr(t, d, false);
                let b = match op {
                    BinOp::Shl | BinOp::Shr => {
                        let at = if self.rng.chance(50) {
                            t
                        } else {
                            *self.rng.pick(&Ty::INTS)
                        };
                        if self.rng.chance(50) {
                            Expr::lit(self.shift_lit(at))
                        } else {
                            self.expr(at, d, false)
                        }
                    }
                    BinOp::Div | BinOp::Rem if self.rng.chance(35) => {
                        let mut v = self.lit(t);
                        if v.bits() == 0 {
                            v = Val::from_bits(t, 3);
                        }
                        if t.is_signed() && self.rng.chance(30) {
                            v = Val::from_bits(t, u64::MAX);
                        }
                        Expr::lit(v)
                    }
                    _ => self.expr(t, d, false),
                };
                Expr::bin(op, a, b, t)
            }
        }
    }

    fn shift_lit(&mut self, t: Ty) -> Val {
        let n = *self
            .rng
            .pick(&[0u64, 1, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 100]);
        if t.is_signed() && self.rng.chance(15) {
            return Val::from_bits(t, (-(n as i64) - 1) as u64);
        }
        Val::from_bits(t, n)
    }

    fn cast(&mut self, ty: Ty, d: u32) -> Expr {
        if ty == Ty::Bool {
            // No `as bool`: a comparison instead.
            return self.binary(Ty::Bool, d);
        }
        let mut from = self.any_scalar_ty();
        if from == Ty::Bool && ty.is_float() {
            from = Ty::I32;
        }
        let a = self.expr(from, d, false);
        Expr {
            ty,
            kind: ExprKind::Cast(Box::new(a)),
        }
    }

    fn method(&mut self, ty: Ty, d: u32) -> Expr {
        let m = if ty.is_float() {
            let mut ms = vec![
                Method::Abs,
                Method::Min,
                Method::Max,
                Method::Sqrt,
                Method::Floor,
                Method::Ceil,
                Method::Round,
                Method::Trunc,
                Method::Signum,
                Method::Recip,
                Method::Copysign,
            ];
            if self.cfg.mul_add && self.rng.chance(10) {
                ms.push(Method::MulAdd);
            }
            *self.rng.pick(&ms)
        } else if ty.is_signed() {
            *self.rng.pick(&[
                Method::Abs,
                Method::Abs,
                Method::Min,
                Method::Max,
                Method::WrappingAdd,
                Method::WrappingSub,
                Method::WrappingMul,
            ])
        } else {
            *self.rng.pick(&[
                Method::Min,
                Method::Max,
                Method::WrappingAdd,
                Method::WrappingSub,
                Method::WrappingMul,
            ])
        };
        let mut args = vec![self.expr(ty, d, false)];
        for _ in 0..m.arity() {
            args.push(self.expr(ty, d, false));
        }
        Expr {
            ty,
            kind: ExprKind::Method(m, args),
        }
    }

    /// A scrutinee and the patterns of 1 to 3 arms.
    fn match_head(&mut self, d: u32) -> (Expr, Vec<Vec<Pat>>) {
        let t = *self.rng.pick(&Ty::INTS);
        let scrut = if self.rng.chance(60) {
            // Small values, so that the arms are taken.
            let e = self.expr(t, d, false);
            let m = Expr::lit(Val::from_bits(t, 7));
            Expr::bin(BinOp::BitAnd, e, m, t)
        } else {
            self.expr(t, d, false)
        };
        let n = self.rng.range(1, 3);
        let mut arms = vec![];
        for _ in 0..n {
            let alts = self.rng.range(1, 2);
            let mut pats = vec![];
            for _ in 0..alts {
                let a = self.pat_val(t);
                if self.rng.chance(30) {
                    let span = self.rng.range(0, 3) as u64;
                    let b = Val::from_bits(t, a.bits().wrapping_add(span));
                    // Keep lo <= hi in the type's order.
                    let ok = match (a, b) {
                        (Val::I32(x), Val::I32(y)) => x <= y,
                        (Val::I64(x), Val::I64(y)) => x <= y,
                        _ => a.bits() <= b.bits(),
                    };
                    pats.push(if ok { Pat::Range(a, b) } else { Pat::Lit(a) });
                } else {
                    pats.push(Pat::Lit(a));
                }
            }
            arms.push(pats);
        }
        (scrut, arms)
    }

    fn pat_val(&mut self, t: Ty) -> Val {
        if self.rng.chance(85) {
            let v = if t.is_signed() {
                self.rng.range(-2, 8)
            } else {
                self.rng.range(0, 8)
            };
            Val::from_bits(t, v as u64)
        } else {
            self.lit(t)
        }
    }

    // ------------------------------------------------------------------ statements

    fn let_stmt(&mut self, depth: u32) -> Stmt {
        let ty = self.any_scalar_ty();
        let init = self.expr(ty, depth + 1, true);
        let mutable = self.rng.chance(60);
        let var = self.new_var(ty, VarKind::Local { mutable });
        self.bind(var);
        self.stmts += 1;
        Stmt::Let { var, init }
    }

    fn block(&mut self, depth: u32, n: i64) -> Block {
        self.scopes.push(vec![]);
        self.nest += 1;
        let mut stmts = vec![];
        for _ in 0..self.rng.range(1, n) {
            if self.stmts >= self.cfg.max_stmts {
                break;
            }
            let s = self.stmt(depth);
            stmts.push(s);
        }
        self.nest -= 1;
        self.scopes.pop();
        Block { stmts, tail: None }
    }

    fn out_write(&mut self) -> Stmt {
        let t = *self.rng.pick(&Ty::BUF);
        let value = self.expr(t, 3, false);
        let op = if self.rng.chance(20) {
            Some(if t.is_float() {
                BinOp::Add
            } else {
                *self.rng.pick(&[BinOp::Add, BinOp::BitXor])
            })
        } else {
            None
        };
        Stmt::Assign {
            place: Place::Out(t, self.rng.below(SLOTS as u64) as u32),
            op,
            value,
        }
    }

    fn compound_op(&mut self, t: Ty) -> Option<BinOp> {
        if self.rng.chance(45) {
            return None;
        }
        Some(match t {
            Ty::Bool => *self.rng.pick(&[BinOp::BitAnd, BinOp::BitOr, BinOp::BitXor]),
            t if t.is_float() => {
                let op = *self.rng.pick(&FLOAT_OPS);
                if op == BinOp::Rem && self.barrier && self.cfg.excludes("vulkan-fmod-barrier") {
                    *self
                        .stats
                        .excluded
                        .entry("vulkan-fmod-barrier".into())
                        .or_default() += 1;
                    BinOp::Div
                } else {
                    op
                }
            }
            _ => *self.rng.pick(&INT_OPS),
        })
    }

    fn assign_value(&mut self, t: Ty, op: Option<BinOp>, d: u32) -> Expr {
        match op {
            Some(BinOp::Shl | BinOp::Shr) => {
                let at = *self.rng.pick(&Ty::INTS);
                if self.rng.chance(50) {
                    Expr::lit(self.shift_lit(at))
                } else {
                    self.expr(at, d, false)
                }
            }
            _ => self.expr(t, d, false),
        }
    }

    fn atomic(&mut self, target: AtomTarget, ty: Ty, family: AtomFamily) -> Stmt {
        let op = match family {
            AtomFamily::AddSub if ty.is_float() => AtomOp::Add,
            AtomFamily::AddSub => *self.rng.pick(&[AtomOp::Add, AtomOp::Sub]),
            AtomFamily::Min => AtomOp::Min,
            AtomFamily::Max => AtomOp::Max,
            AtomFamily::And => AtomOp::And,
            AtomFamily::Or => AtomOp::Or,
            AtomFamily::Xor => AtomOp::Xor,
        };
        let value = if ty.is_float() {
            // Small integers: their sums are exact in any order.
            let e = self.expr(Ty::I32, 2, false);
            let m = Expr::bin(BinOp::BitAnd, e, Expr::lit(Val::I32(15)), Ty::I32);
            Expr {
                ty,
                kind: ExprKind::Cast(Box::new(m)),
            }
        } else {
            self.expr(ty, 2, false)
        };
        let index = if matches!(target, AtomTarget::Shared(_)) && self.rng.chance(20) {
            None
        } else {
            Some(self.index(1))
        };
        self.stmts += 1;
        Stmt::Atomic {
            target,
            op,
            index,
            value,
        }
    }

    fn stmt(&mut self, depth: u32) -> Stmt {
        let mutables = self.visible(|v| v.kind == VarKind::Local { mutable: true });
        let arrays = self.visible(|v| matches!(v.kind, VarKind::Array { .. }));
        let own: Vec<usize> = (0..self.k.shared.len())
            .filter(|&s| self.modes[s] == ShMode::Own && !self.in_helper)
            .collect();
        let atom_sh: Vec<usize> = (0..self.k.shared.len())
            .filter(|&s| self.modes[s] == ShMode::Atomic && !self.in_helper)
            .collect();
        let kernel = !self.in_helper;
        let nested = depth > 0 && self.stmts < self.cfg.max_stmts;
        let looping = nested && self.loop_nest < 2;
        let w = [
            22,                                       // 0 let
            4,                                        // 1 let array
            if mutables.is_empty() { 0 } else { 20 }, // 2 assign
            if arrays.is_empty() { 0 } else { 6 },    // 3 array assign
            if kernel { 10 } else { 0 },              // 4 output
            if own.is_empty() { 0 } else { 5 },       // 5 shared own
            if kernel && (!self.k.accs.is_empty() || !atom_sh.is_empty()) {
                7
            } else {
                0
            }, // 6 atomic
            if nested { 10 } else { 0 },              // 7 if
            if looping { 3 } else { 0 },              // 8 while
            if looping { 2 } else { 0 },              // 9 loop
            if looping { 5 } else { 0 },              // 10 for
            if nested { 4 } else { 0 },               // 11 match
            if nested { 2 } else { 0 },               // 12 block
            if self.loops > 0 { 3 } else { 0 },       // 13 break/continue
            if self.can_return && kernel { 1 } else { 0 }, // 14 return
        ];
        let d = depth.saturating_sub(1);
        match self.rng.weighted(&w) {
            1 => {
                let ty = *self.rng.pick(&[
                    Ty::I32,
                    Ty::U32,
                    Ty::I64,
                    Ty::U64,
                    Ty::F32,
                    Ty::F64,
                    Ty::Bool,
                    Ty::Usize,
                ]);
                let len = self.rng.range(1, 6) as u32;
                let init = Expr::lit(self.lit(ty));
                let var = self.new_var(ty, VarKind::Array { len });
                self.bind(var);
                self.stmts += 1;
                Stmt::LetArr { var, init }
            }
            2 => {
                let v = *self.rng.pick(&mutables);
                let t = self.k.ty_of(v);
                let op = self.compound_op(t);
                let value = self.assign_value(t, op, 3);
                self.stmts += 1;
                Stmt::Assign {
                    place: Place::Var(v),
                    op,
                    value,
                }
            }
            3 => {
                let a = *self.rng.pick(&arrays);
                let t = self.k.ty_of(a);
                let op = self.compound_op(t);
                let value = self.assign_value(t, op, 2);
                let index = self.index(1);
                self.stmts += 1;
                Stmt::Assign {
                    place: Place::Arr(a, Box::new(index)),
                    op,
                    value,
                }
            }
            4 => {
                self.stmts += 1;
                self.out_write()
            }
            5 => {
                let sh = *self.rng.pick(&own);
                let t = self.k.shared[sh].ty;
                let op = self.compound_op(t);
                let value = self.assign_value(t, op, 2);
                self.stmts += 1;
                Stmt::Assign {
                    place: Place::Shared(sh),
                    op,
                    value,
                }
            }
            6 => {
                let mut targets: Vec<(AtomTarget, Ty, AtomFamily)> = self
                    .k
                    .accs
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (AtomTarget::Acc(i), a.ty, a.family))
                    .collect();
                for &s in &atom_sh {
                    let sh = &self.k.shared[s];
                    targets.push((AtomTarget::Shared(s), sh.ty, sh.family.expect("a family")));
                }
                let (t, ty, f) = *self.rng.pick(&targets);
                self.atomic(t, ty, f)
            }
            7 => {
                let cond = self.expr(Ty::Bool, 3, false);
                self.stmts += 1;
                let then = self.block(d, 3);
                let els = if self.rng.chance(50) {
                    Some(self.block(d, 3))
                } else {
                    None
                };
                Stmt::If { cond, then, els }
            }
            8 | 9 => {
                let counter = self.new_var(Ty::U32, VarKind::Counter);
                let limit = self.rng.range(0, 5) as u32;
                let is_while = self.rng.chance(60);
                let cond = if is_while && self.rng.chance(50) {
                    Some(self.expr(Ty::Bool, 2, false))
                } else {
                    None
                };
                let body = self.loop_body(counter, d);
                if is_while {
                    Stmt::While {
                        counter,
                        limit,
                        cond,
                        body,
                    }
                } else {
                    Stmt::Loop {
                        counter,
                        limit,
                        body,
                    }
                }
            }
            10 => {
                let t = *self.rng.pick(&Ty::INTS);
                let lo_v = if t.is_signed() {
                    self.rng.range(-4, 4)
                } else {
                    self.rng.range(0, 4)
                };
                let lo = Expr::lit(Val::from_bits(t, lo_v as u64));
                let hi = if self.rng.chance(50) {
                    let n = self.rng.range(0, 6);
                    Expr::lit(Val::from_bits(t, (lo_v + n) as u64))
                } else {
                    let e = self.expr(t, 2, false);
                    let m = Expr::bin(BinOp::BitAnd, e, Expr::lit(Val::from_bits(t, 7)), t);
                    Expr::bin(BinOp::Add, lo.clone(), m, t)
                };
                let rev = self.rng.chance(30);
                let step = if self.rng.chance(25) {
                    Some(self.rng.range(1, 3) as u32)
                } else {
                    None
                };
                let var = self.new_var(t, VarKind::LoopVar);
                let body = self.loop_body(var, d);
                Stmt::For(ForLoop {
                    var,
                    lo,
                    hi,
                    rev,
                    step,
                    body,
                })
            }
            11 => {
                let (scrut, heads) = self.match_head(2);
                self.stmts += 1;
                let mut arms = vec![];
                for pats in heads {
                    let body = self.block(d, 2);
                    arms.push(Arm { pats, body });
                }
                let default = self.block(d, 2);
                Stmt::Match {
                    scrut,
                    arms,
                    default,
                }
            }
            12 => {
                self.stmts += 1;
                Stmt::Block(self.block(d, 3))
            }
            13 => {
                self.stmts += 1;
                let s = if self.rng.chance(50) {
                    Stmt::Break
                } else {
                    Stmt::Continue
                };
                if self.rng.chance(70) {
                    let cond = self.expr(Ty::Bool, 2, false);
                    Stmt::If {
                        cond,
                        then: Block {
                            stmts: vec![s],
                            tail: None,
                        },
                        els: None,
                    }
                } else {
                    s
                }
            }
            14 => {
                self.stmts += 1;
                let cond = self.expr(Ty::Bool, 2, false);
                Stmt::If {
                    cond,
                    then: Block {
                        stmts: vec![Stmt::Return],
                        tail: None,
                    },
                    els: None,
                }
            }
            _ => self.let_stmt(depth.min(2)),
        }
    }
}

/// Whether a float expression's C text would start with `-` (a negation, or a negative or
/// `-0.0` literal).
fn starts_negative(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Unary(UnOp::Neg, _) => true,
        // The front end keeps a block's tail and a cast to the same type as is.
        ExprKind::Block(b) => b.tail.as_ref().is_some_and(starts_negative),
        ExprKind::Cast(a) if a.ty == e.ty => starts_negative(a),
        ExprKind::Lit(Val::F32(x)) => x.is_sign_negative(),
        ExprKind::Lit(Val::F64(x)) => x.is_sign_negative(),
        _ => false,
    }
}

/// A value of `ty` drawn with a bias to edge cases (zero, one, the bounds, NaN, infinities,
/// signed zeros, subnormals, values next to rounding and conversion boundaries).
pub fn interesting(r: &mut Rng, ty: Ty) -> Val {
    match ty {
        Ty::Bool => Val::Bool(r.chance(50)),
        Ty::I32 => Val::I32(match r.below(10) {
            0 => *r.pick(&[i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 1, -1]),
            1 => r.next_u64() as i32,
            2 => *r.pick(&[31, 32, 33, 63, 64, 65, 1 << 16, -(1 << 24), 1 << 24]),
            _ => r.range(-16, 16) as i32,
        }),
        Ty::I64 => Val::I64(match r.below(10) {
            0 => *r.pick(&[i64::MIN, i64::MAX, i64::MIN + 1, -1, i32::MIN as i64]),
            1 => r.next_u64() as i64,
            2 => *r.pick(&[31, 32, 63, 64, 65, 1 << 32, -(1 << 53), (1 << 53) + 1]),
            _ => r.range(-16, 16),
        }),
        Ty::U32 => Val::U32(match r.below(10) {
            0 => *r.pick(&[u32::MAX, u32::MAX - 1, 1 << 31, (1 << 31) - 1]),
            1 => r.next_u64() as u32,
            2 => *r.pick(&[31, 32, 33, 63, 64, 1 << 24, (1 << 24) + 1]),
            _ => r.range(0, 20) as u32,
        }),
        Ty::U64 => Val::U64(match r.below(10) {
            0 => *r.pick(&[u64::MAX, u64::MAX - 1, 1 << 63, u32::MAX as u64]),
            1 => r.next_u64(),
            2 => *r.pick(&[31, 32, 63, 64, 65, 1 << 32, (1 << 53) + 1]),
            _ => r.range(0, 20) as u64,
        }),
        Ty::Usize => Val::Usize(match r.below(10) {
            0 => *r.pick(&[u32::MAX, u32::MAX - 1, 1 << 31]),
            1 => r.next_u64() as u32,
            _ => r.range(0, 70) as u32,
        }),
        Ty::F32 => Val::F32(match r.below(12) {
            0 => *r.pick(&[
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                -0.0,
                0.0,
                f32::MAX,
                f32::MIN,
                f32::MIN_POSITIVE,
                1e-45,
                -1e-40,
                f32::EPSILON,
            ]),
            1 => *r.pick(&[
                16777216.0,
                16777217.0,
                2147483648.0,
                -2147483904.0,
                4294967296.0,
                9.223372e18,
                0.49999997,
                2.5,
                -2.5,
                0.5,
                -0.5,
                1e20,
                -1e-30,
            ]),
            2 => f32::from_bits(r.next_u64() as u32),
            3..=5 => r.range(-64, 64) as f32 / 8.0,
            _ => r.range(-10, 10) as f32,
        }),
        Ty::F64 => Val::F64(match r.below(12) {
            0 => *r.pick(&[
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                -0.0,
                0.0,
                f64::MAX,
                f64::MIN,
                f64::MIN_POSITIVE,
                5e-324,
                -1e-310,
                f64::EPSILON,
            ]),
            1 => *r.pick(&[
                9007199254740992.0,
                9007199254740993.0,
                2147483648.0,
                -2147483649.0,
                4294967296.0,
                9.223372036854776e18,
                1.8446744073709552e19,
                0.49999999999999994,
                2.5,
                -2.5,
                1e300,
                1e-300,
                3.4028235677973366e38,
                1.401298464324817e-45,
            ]),
            2 => f64::from_bits(r.next_u64()),
            3..=5 => r.range(-64, 64) as f64 / 8.0,
            _ => r.range(-10, 10) as f64,
        }),
    }
}

/// The inputs of kernel `k` for `seed`: parameters and buffers, with edge cases and small values.
pub fn inputs(k: &Kernel, seed: u64) -> crate::oracle::Inputs {
    let mut r = Rng::new(seed ^ 0x1F2E_3D4C_5B6A_7988);
    let params = k
        .params
        .iter()
        .map(|&p| interesting(&mut r, k.ty_of(p)))
        .collect();
    let small = |r: &mut Rng, t: Ty| -> Val {
        match t {
            Ty::F32 => Val::F32(r.range(-32, 32) as f32 / 4.0),
            Ty::F64 => Val::F64(r.range(-32, 32) as f64 / 4.0),
            t if t.is_signed() => Val::from_bits(t, r.range(-8, 8) as u64),
            t => Val::from_bits(t, r.range(0, 16) as u64),
        }
    };
    let inputs = Ty::BUF
        .iter()
        .map(|&t| {
            (0..IN_LEN)
                .map(|_| {
                    if r.chance(50) {
                        interesting(&mut r, t)
                    } else {
                        small(&mut r, t)
                    }
                })
                .collect()
        })
        .collect();
    let outputs = Ty::BUF
        .iter()
        .map(|&t| (0..THREADS * SLOTS).map(|_| small(&mut r, t)).collect())
        .collect();
    let accs = k
        .accs
        .iter()
        .map(|a| {
            (0..ACC_LEN)
                .map(|_| {
                    if a.ty.is_float() {
                        // Integers, so that sums of small integers stay exact in any order.
                        Val::F32(r.range(-100, 100) as f32)
                    } else if r.chance(50) {
                        interesting(&mut r, a.ty)
                    } else {
                        small(&mut r, a.ty)
                    }
                })
                .collect()
        })
        .collect();
    crate::oracle::Inputs {
        params,
        inputs,
        outputs,
        accs,
    }
}
