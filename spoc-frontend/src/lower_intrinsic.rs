//! The intrinsics beyond thread indices: barriers and fences (statements), atomics on an element
//! of a buffer or shared array (`atomic_add(&mut hist[b], 1u32)`), and warp operations
//! (`warp_size()`, `lane_id()`, shuffles, votes, `ballot`).

use crate::errors::{Failed, Loc, Lowered};
use crate::lower::strip;
use crate::lower::{Lowerer, TExpr};
use crate::lower_array::{elem_scalar, Access};
use crate::lower_call::intrinsic_name;
use crate::types::{Kind, Scalar, Ty};
use spoc_ir::{AtomicOp, Block, FenceScope, HalfKind, Intrinsic, ShuffleKind, StmtKind};

/// The intrinsics that are statements, with the IR statement of each.
const STATEMENTS: [(&str, StmtKind); 4] = [
    ("sync_threads", StmtKind::Barrier),
    ("sync_warp", StmtKind::WarpBarrier),
    ("thread_fence_block", StmtKind::MemFence(FenceScope::Block)),
    ("thread_fence", StmtKind::MemFence(FenceScope::Device)),
];

/// The value intrinsics of this module: atomics and warp operations.
fn value_intrinsic(name: &str) -> Option<Intrinsic> {
    if let Some(op) = AtomicOp::ALL.iter().find(|op| op.name() == name) {
        return Some(Intrinsic::Atomic(*op));
    }
    Some(match name {
        "warp_size" => Intrinsic::WarpSize,
        "lane_id" => Intrinsic::LaneId,
        "shuffle" => Intrinsic::Shuffle(ShuffleKind::Index),
        "shuffle_up" => Intrinsic::Shuffle(ShuffleKind::Up),
        "shuffle_down" => Intrinsic::Shuffle(ShuffleKind::Down),
        "shuffle_xor" => Intrinsic::Shuffle(ShuffleKind::Xor),
        "vote_any" => Intrinsic::VoteAny,
        "vote_all" => Intrinsic::VoteAll,
        "ballot" => Intrinsic::Ballot,
        "pack_f16x2" => Intrinsic::PackHalf2(HalfKind::F16),
        "pack_bf16x2" => Intrinsic::PackHalf2(HalfKind::BF16),
        "mma_sync_m16n8k16_f16" => Intrinsic::MmaM16N8K16(HalfKind::F16),
        "mma_sync_m16n8k16_bf16" => Intrinsic::MmaM16N8K16(HalfKind::BF16),
        _ => return None,
    })
}

/// The intrinsic name `c` calls, if its callee is a plain path.
fn called_name(c: &syn::ExprCall) -> Option<String> {
    match &*c.func {
        syn::Expr::Path(p) if p.qself.is_none() => intrinsic_name(&p.path),
        _ => None,
    }
}

impl Lowerer {
    /// The name of the statement intrinsic `c` calls (`sync_threads`, `thread_fence`, …), if any.
    pub fn statement_intrinsic(&self, c: &syn::ExprCall) -> Option<&'static str> {
        let name = called_name(c)?;
        STATEMENTS.iter().find(|(n, _)| *n == name).map(|(n, _)| *n)
    }

    /// True if `c` calls an intrinsic with a value (an index, an atomic, a warp operation).
    pub fn is_value_intrinsic(&self, c: &syn::ExprCall) -> bool {
        called_name(c).is_some_and(|n| {
            Intrinsic::index_from_name(&n).is_some() || value_intrinsic(&n).is_some()
        })
    }

    /// The statement of a statement intrinsic call (`sync_threads()` → barrier, …).
    pub fn statement_intrinsic_call(&mut self, c: &syn::ExprCall) -> Lowered<StmtKind> {
        let Some(name) = self.statement_intrinsic(c) else {
            return Err(Failed);
        };
        if !c.args.is_empty() {
            return Err(self
                .errs
                .spanned(&c.args, format!("`{name}()` takes no arguments")));
        }
        if let Some(g) = generic_args(c) {
            return Err(self
                .errs
                .spanned(g, format!("`{name}()` takes no generic arguments")));
        }
        if name == "sync_threads" && !self.is_kernel {
            return Err(self.errs.spanned(
                c,
                "`sync_threads()` cannot be used in a #[device] function yet (every backend would have to inline the helper); call it from the #[kernel] body",
            ));
        }
        let kind = STATEMENTS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| k.clone())
            .ok_or(Failed)?;
        Ok(kind)
    }

    /// The atomics, warp operations, statement intrinsics used as values and shared-array
    /// declarations out of place; `None` if `name` is none of them.
    pub fn intrinsic_call(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
        pre: &mut Block,
    ) -> Option<Lowered<TExpr>> {
        if STATEMENTS.iter().any(|(n, _)| *n == name) {
            return Some(Err(self
                .errs
                .spanned(c, format!("`{name}()` is a statement; it has no value"))));
        }
        if crate::lower_array::SHARED_DECLS.contains(&name) {
            return Some(Err(self.errs.spanned(
                c,
                format!("`{name}` declares a shared array: use it alone as the value of a `let` (`let tile = {name}::<…>();`)"),
            )));
        }
        let intrinsic = value_intrinsic(name)?;
        if let Some(g) = generic_args(c) {
            return Some(Err(self.errs.spanned(
                g,
                format!("`{name}` takes no generic arguments: the types come from its arguments"),
            )));
        }
        Some(match intrinsic {
            Intrinsic::Atomic(op) => self.atomic(op, c, pre),
            Intrinsic::WarpSize | Intrinsic::LaneId => self.nullary(intrinsic, name, c),
            Intrinsic::Shuffle(_) => self.shuffle(intrinsic, name, c, pre),
            Intrinsic::PackHalf2(h) => {
                let t = Ty::Scalar(half_scalar(h));
                let usage = format!("{name}(lo: {0}, hi: {0}) -> u32", h.name());
                self.fixed(
                    intrinsic,
                    name,
                    c,
                    &[("lo", t), ("hi", t)],
                    Ty::Scalar(Scalar::U32),
                    &usage,
                    pre,
                )
            }
            Intrinsic::MmaM16N8K16(_) => {
                let params = [
                    ("a", Ty::Vector(Scalar::U32, 4)),
                    ("b", Ty::Vector(Scalar::U32, 2)),
                    ("c", Ty::Vector(Scalar::F32, 4)),
                ];
                let usage = format!("{name}(a: U32x4, b: U32x2, c: F32x4) -> F32x4");
                self.fixed(
                    intrinsic,
                    name,
                    c,
                    &params,
                    Ty::Vector(Scalar::F32, 4),
                    &usage,
                    pre,
                )
            }
            _ => self.vote(intrinsic, name, c, pre),
        })
    }

    /// Checks that `c` has `n` arguments (`usage` shows the call).
    fn arity(&mut self, c: &syn::ExprCall, n: usize, usage: &str) -> Lowered<()> {
        if c.args.len() == n {
            return Ok(());
        }
        let s = if n == 1 { "" } else { "s" };
        Err(self.errs.spanned(
            c,
            format!(
                "this intrinsic takes {n} argument{s}, {} given: `{usage}`",
                c.args.len()
            ),
        ))
    }

    fn nullary(&mut self, i: Intrinsic, name: &str, c: &syn::ExprCall) -> Lowered<TExpr> {
        if !c.args.is_empty() {
            return Err(self
                .errs
                .spanned(&c.args, format!("`{name}()` takes no arguments")));
        }
        Ok(self.mk_intrinsic(i, vec![], Ty::USIZE, Loc::of(c)))
    }

    /// `shuffle(v, lane)`, `shuffle_up(v, delta)`, `shuffle_down(v, delta)`, `shuffle_xor(v, mask)`:
    /// `v` a number, the second argument a `usize`.
    fn shuffle(
        &mut self,
        i: Intrinsic,
        name: &str,
        c: &syn::ExprCall,
        pre: &mut Block,
    ) -> Lowered<TExpr> {
        let second = match i {
            Intrinsic::Shuffle(ShuffleKind::Index) => "src_lane",
            Intrinsic::Shuffle(ShuffleKind::Xor) => "lane_mask",
            _ => "delta",
        };
        self.arity(c, 2, &format!("{name}(value, {second}: usize)"))?;
        let (v, lane) = self.operands(&c.args[0], &c.args[1], Self::scalar, pre)?;
        self.constrain_at(
            v.ty,
            Kind::Numeric,
            v.span,
            &format!("`{name}` moves numbers (`i32`, `u32`, `i64`, `u64`, `usize`, `f32`, `f64`)"),
        )?;
        self.deferred.push(crate::lower::Deferred::NotHalf {
            ty: v.ty,
            span: v.span,
            advice: format!("`{name}` moves `i32`, `u32`, `i64`, `u64`, `usize`, `f32` and `f64` values, not `{{T}}`; shuffle its `f32` value (`.to_f32()`) and convert back"),
        });
        self.unify_at(
            Ty::USIZE,
            lane.ty,
            lane.span,
            &format!("mismatched types: the `{second}` of `{name}` is a `usize` (convert with `as usize`)"),
        )?;
        let ty = v.ty;
        Ok(self.mk_intrinsic(i, vec![v.e, lane.e], ty, Loc::of(c)))
    }

    /// An intrinsic whose parameters (`(name, type)`, evaluated left to right) and result have
    /// fixed types: `pack_f16x2(lo, hi)`, `mma_sync_m16n8k16_f16(a, b, c)`, …
    #[allow(clippy::too_many_arguments)]
    fn fixed(
        &mut self,
        i: Intrinsic,
        name: &str,
        c: &syn::ExprCall,
        params: &[(&str, Ty)],
        result: Ty,
        usage: &str,
        pre: &mut Block,
    ) -> Lowered<TExpr> {
        self.arity(c, params.len(), usage)?;
        let mut vals: Vec<TExpr> = Vec::new();
        let mut ok = true;
        for (a, (pname, ty)) in c.args.iter().zip(params) {
            let mut apre = Block::new();
            let Ok(v) = self.scalar(a, &mut apre) else {
                ok = false;
                continue;
            };
            self.sequence(&mut vals, &v, apre, pre);
            let t = ty_name(*ty);
            let article = if t.starts_with(['f', 'i', 'F', 'I']) {
                "an"
            } else {
                "a"
            };
            let what =
                format!("mismatched types: `{pname}` of `{name}` is {article} `{t}` (`{usage}`)");
            if self.unify_at(*ty, v.ty, v.span, &what).is_err() {
                ok = false;
                continue;
            }
            vals.push(v);
        }
        if !ok {
            return Err(Failed);
        }
        Ok(self.mk_intrinsic(
            i,
            vals.into_iter().map(|v| v.e).collect(),
            result,
            Loc::of(c),
        ))
    }

    /// `vote_any(p)`, `vote_all(p)` (`bool`), `ballot(p)` (`u32`).
    fn vote(
        &mut self,
        i: Intrinsic,
        name: &str,
        c: &syn::ExprCall,
        pre: &mut Block,
    ) -> Lowered<TExpr> {
        self.arity(c, 1, &format!("{name}(predicate: bool)"))?;
        let p = self.scalar(&c.args[0], pre)?;
        self.unify_at(
            Ty::BOOL,
            p.ty,
            p.span,
            &format!("mismatched types: the predicate of `{name}` is a `bool`"),
        )?;
        let ty = if i == Intrinsic::Ballot {
            Ty::Scalar(Scalar::U32)
        } else {
            Ty::BOOL
        };
        Ok(self.mk_intrinsic(i, vec![p.e], ty, Loc::of(c)))
    }

    /// `atomic_op(&mut a[i], v)` / `atomic_compare_exchange(&mut a[i], expected, new)`: the
    /// element's previous value. `a` is a `&mut [T]` buffer or a shared array.
    fn atomic(&mut self, op: AtomicOp, c: &syn::ExprCall, pre: &mut Block) -> Lowered<TExpr> {
        let name = op.name();
        let usage = if op == AtomicOp::CompareExchange {
            format!("{name}(&mut a[i], expected, new)")
        } else {
            format!("{name}(&mut a[i], value)")
        };
        let n = if op == AtomicOp::CompareExchange {
            3
        } else {
            2
        };
        self.arity(c, n, &usage)?;
        let target = &c.args[0];
        let what = format!("the first argument of `{name}` must be `&mut a[i]`: an element of a `&mut [T]` buffer or of a shared array");
        let ix = match strip(target) {
            syn::Expr::Reference(r) if r.mutability.is_some() => match strip(&r.expr) {
                syn::Expr::Index(ix) => ix,
                syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                    let name_v = p
                        .path
                        .get_ident()
                        .map(|i| i.to_string())
                        .unwrap_or_default();
                    return Err(self.errs.spanned(
                        target,
                        format!("atomics work on an element of a `&mut [T]` buffer or of a shared array (`&mut a[i]`), not on the variable `{name_v}`: each thread has its own"),
                    ));
                }
                _ => return Err(self.errs.spanned(target, what)),
            },
            syn::Expr::Reference(_) => {
                return Err(self
                    .errs
                    .spanned(target, format!("{what}; write `&mut`, not `&`")))
            }
            _ => return Err(self.errs.spanned(target, what)),
        };
        let mut el = self.element(ix, pre)?;
        let array_name = self.vars[el.var.0 as usize].name.clone();
        match el.access {
            Access::Buffer { mutable: false } => {
                let elem = elem_scalar(self, &el).map_or("T", Scalar::name);
                return Err(self.errs.spanned(
                    &ix.expr,
                    format!("`{name}` modifies `{array_name}[..]`, but `{array_name}` is a read-only `&[{elem}]` buffer; declare the parameter as `&mut [{elem}]`"),
                ));
            }
            Access::Local => {
                return Err(self.errs.spanned(
                    &ix.expr,
                    format!("atomics work on buffers and shared arrays, not on the local array `{array_name}` (each thread has its own: write `{array_name}[i] += v`)"),
                ));
            }
            _ => {}
        }
        let elem = elem_scalar(self, &el);
        let ok = match elem {
            Some(s) if s.is_int() => true,
            Some(s) if s.is_float() => op == AtomicOp::Add,
            _ => false,
        };
        if !ok {
            let on = op.element_types();
            let found = elem.map_or("this type", Scalar::name);
            return Err(self.errs.spanned(
                target,
                format!("`{name}` works on elements of type {on}, not `{found}`"),
            ));
        }
        let array = self.array_expr(&el, Loc::of(&ix.expr)).e;
        let mut vals = Vec::new();
        let mut ok = true;
        for a in c.args.iter().skip(1) {
            let mut apre = Block::new();
            match self.scalar(a, &mut apre) {
                Ok(v) => {
                    let earlier = std::iter::once(&mut el.index).chain(vals.iter_mut());
                    self.sequence(earlier, &v, apre, pre);
                    let what = format!(
                        "mismatched types: the value of `{name}` has the element type of `{array_name}`"
                    );
                    ok &= self.unify_at(el.elem, v.ty, v.span, &what).is_ok();
                    vals.push(v);
                }
                Err(_) => ok = false,
            }
        }
        if !ok {
            return Err(Failed);
        }
        let mut args = vec![array, el.index.e];
        args.extend(vals.into_iter().map(|v| v.e));
        Ok(self.mk_intrinsic(Intrinsic::Atomic(op), args, el.elem, Loc::of(c)))
    }
}

/// The checker's scalar of a 16-bit float kind.
fn half_scalar(h: HalfKind) -> Scalar {
    match h {
        HalfKind::F16 => Scalar::F16,
        HalfKind::BF16 => Scalar::BF16,
    }
}

/// How a fixed parameter type is written in kernel source (`u32`, `U32x4`, …).
fn ty_name(t: Ty) -> String {
    match t {
        Ty::Scalar(s) => s.name().to_string(),
        Ty::Vector(s, l) => crate::types::vector_name(s, l).to_string(),
        _ => "value".to_string(),
    }
}

/// The generic arguments of `c`'s callee, if any are written.
fn generic_args(c: &syn::ExprCall) -> Option<&syn::PathArguments> {
    match &*c.func {
        syn::Expr::Path(p) => p
            .path
            .segments
            .iter()
            .map(|s| &s.arguments)
            .find(|a| !a.is_none()),
        _ => None,
    }
}
