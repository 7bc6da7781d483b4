//! Intrinsics: thread indices, atomics and warp (subgroup) operations. Math is in `math.rs`.

use super::build::Builtin;
use super::func::{Fb, R};
use naga::valid::Capabilities as C;
use naga::{AtomicFunction, BinaryOperator as Bo, Expression, Handle, Literal, Statement};
use spoc_ir::{AtomicOp, Axis, Expr, Intrinsic, MemSpace, ScalarType, ShuffleKind, Type};

type H = Handle<Expression>;

const SUBGROUPS: &str = "subgroup operations (caps.subgroups)";

impl Fb<'_, '_> {
    pub fn intrinsic(&mut self, i: Intrinsic, args: &[Expr], ty: &Type) -> R<H> {
        Ok(match i {
            Intrinsic::ThreadIdx(a) => self.builtin_axis(Builtin::LocalId, a)?,
            Intrinsic::BlockIdx(a) => self.builtin_axis(Builtin::GroupId, a)?,
            Intrinsic::GridDim(a) => self.builtin_axis(Builtin::NumGroups, a)?,
            Intrinsic::GlobalId(a) => self.builtin_axis(Builtin::GlobalId, a)?,
            Intrinsic::BlockDim(a) => self.lit(Literal::U32(self.g.block[a.index()])),
            Intrinsic::GlobalSize(a) => {
                let n = self.builtin_axis(Builtin::NumGroups, a)?;
                let b = self.lit(Literal::U32(self.g.block[a.index()]));
                self.bin(Bo::Multiply, n, b)
            }
            Intrinsic::WarpSize => self.builtin_scalar(Builtin::SubgroupSize)?,
            Intrinsic::LaneId => self.builtin_scalar(Builtin::SubgroupLane)?,
            Intrinsic::Math(m) => self.math(m, args, ty)?,
            Intrinsic::Atomic(op) => self.atomic(op, args, ty)?,
            Intrinsic::PackHalf2(_) | Intrinsic::MmaM16N8K16(_) => {
                // Vulkan's `VK_KHR_cooperative_matrix` is the planned lowering (naga has no
                // cooperative-matrix types yet); until then a typed refusal.
                return Err(self.g.unsupported(
                    &format!("`{}`", i.name()),
                    "warp matrix operations, which are lowered for CUDA only so far (cooperative matrices are not generated yet)",
                ));
            }
            Intrinsic::Shuffle(k) => {
                self.g
                    .require(C::SUBGROUP, &format!("`{}`", i.name()), SUBGROUPS)?;
                let v = self.expr(&args[0])?;
                let l = self.expr(&args[1])?;
                self.shuffle(k, v, l, ty)?
            }
            Intrinsic::VoteAny | Intrinsic::VoteAll => {
                self.g
                    .require(C::SUBGROUP, &format!("`{}`", i.name()), SUBGROUPS)?;
                let p = self.expr(&args[0])?;
                let t = self.g.value_ty(&Type::BOOL)?;
                let result = self.emit(Expression::SubgroupOperationResult { ty: t });
                self.stmt(Statement::SubgroupCollectiveOperation {
                    op: if i == Intrinsic::VoteAny {
                        naga::SubgroupOperation::Any
                    } else {
                        naga::SubgroupOperation::All
                    },
                    collective_op: naga::CollectiveOperation::Reduce,
                    argument: p,
                    result,
                });
                result
            }
            Intrinsic::Ballot => {
                self.g.require(C::SUBGROUP, "`ballot`", SUBGROUPS)?;
                let p = self.expr(&args[0])?;
                let result = self.emit(Expression::SubgroupBallotResult);
                self.stmt(Statement::SubgroupBallot {
                    result,
                    predicate: Some(p),
                });
                self.emit(Expression::AccessIndex {
                    base: result,
                    index: 0,
                })
            }
        })
    }

    /// A subgroup shuffle with docs/LANGUAGE.md's semantics. SPIR-V leaves the result undefined
    /// when the source invocation is outside the subgroup (`OpGroupNonUniformShuffle`, `…Xor`,
    /// `…Up`, `…Down`, SPIR-V 1.5 §3.42.24), and lavapipe's 8-lane subgroups returned another
    /// lane's value: `shuffle_up` / `shuffle_down` / `shuffle_xor` whose source is outside the
    /// subgroup select the lane's own value (`lane >= delta`, `delta < size - lane`,
    /// `lane ^ mask < size`, none of which can overflow), and `shuffle` reads lane
    /// `src & (size - 1)` (subgroup sizes are powers of two), as CUDA's `__shfl_sync` takes
    /// `src % 32`. The gather itself runs for every lane; only its result is selected.
    fn shuffle(&mut self, k: ShuffleKind, v: H, l: H, ty: &Type) -> R<H> {
        let size = self.builtin_scalar(Builtin::SubgroupSize)?;
        let l = if k == ShuffleKind::Index {
            let one = self.lit(Literal::U32(1));
            let m = self.bin(Bo::Subtract, size, one);
            self.bin(Bo::And, l, m)
        } else {
            l
        };
        let mode = match k {
            ShuffleKind::Index => naga::GatherMode::Shuffle(l),
            ShuffleKind::Up => naga::GatherMode::ShuffleUp(l),
            ShuffleKind::Down => naga::GatherMode::ShuffleDown(l),
            ShuffleKind::Xor => naga::GatherMode::ShuffleXor(l),
        };
        let t = self.g.value_ty(ty)?;
        let result = self.emit(Expression::SubgroupOperationResult { ty: t });
        self.stmt(Statement::SubgroupGather {
            mode,
            argument: v,
            result,
        });
        if k == ShuffleKind::Index {
            return Ok(result);
        }
        let lane = self.shuffle_lane()?;
        let inside = match k {
            ShuffleKind::Up => self.bin(Bo::GreaterEqual, lane, l),
            ShuffleKind::Down => {
                let room = self.bin(Bo::Subtract, size, lane);
                self.bin(Bo::Less, l, room)
            }
            _ => {
                let src = self.bin(Bo::ExclusiveOr, lane, l);
                self.bin(Bo::Less, src, size)
            }
        };
        Ok(self.sel(inside, result, v))
    }

    /// The invocation's lane in its subgroup, for [`Fb::shuffle`]: `SubgroupInvocationId` in a
    /// one-dimensional block (naga allows it only there), else the linear invocation index
    /// modulo the subgroup size (how every driver seen numbers the lanes of multi-dimensional
    /// workgroups: lavapipe and NVIDIA's assign consecutive linear indices to a subgroup).
    fn shuffle_lane(&mut self) -> R<H> {
        let [_, by, bz] = self.g.block;
        if by == 1 && bz == 1 {
            return self.builtin_scalar(Builtin::SubgroupLane);
        }
        let size = self.builtin_scalar(Builtin::SubgroupSize)?;
        let x = self.builtin_axis(Builtin::LocalId, Axis::X)?;
        let y = self.builtin_axis(Builtin::LocalId, Axis::Y)?;
        let z = self.builtin_axis(Builtin::LocalId, Axis::Z)?;
        let [bx, by, _] = self.g.block;
        let dx = self.lit(Literal::U32(bx));
        let dy = self.lit(Literal::U32(by));
        let zy = self.bin(Bo::Multiply, z, dy);
        let row = self.bin(Bo::Add, zy, y);
        let rows = self.bin(Bo::Multiply, row, dx);
        let linear = self.bin(Bo::Add, rows, x);
        Ok(self.bin(Bo::Modulo, linear, size))
    }

    /// Component `axis` of a 3-axis builtin.
    pub(super) fn builtin_axis(&mut self, b: Builtin, axis: Axis) -> R<H> {
        let g = self.g.builtin(b)?;
        let p = self.global_ptr(g);
        let v = self.load(p);
        Ok(self.emit(Expression::AccessIndex {
            base: v,
            index: axis.index() as u32,
        }))
    }

    fn builtin_scalar(&mut self, b: Builtin) -> R<H> {
        let g = self.g.builtin(b)?;
        let p = self.global_ptr(g);
        Ok(self.load(p))
    }

    /// An atomic read-modify-write on an element of a buffer or shared array; the result is
    /// the element's previous value.
    fn atomic(&mut self, op: AtomicOp, args: &[Expr], ty: &Type) -> R<H> {
        let gi = self.array_binding(&args[0])?;
        let st = self.scalar_of(ty)?;
        let node = format!(
            "`{}` on `{}` (`{st}` elements)",
            op.name(),
            self.g.globals[gi].name
        );
        let space = self.g.globals[gi].space;
        match st {
            ScalarType::I32 | ScalarType::U32 => {}
            ScalarType::I64 | ScalarType::U64 => self.g.require(
                C::SHADER_INT64_ATOMIC_ALL_OPS,
                &node,
                "64-bit atomics (caps.int64_atomics: shaderBufferInt64Atomics / shaderSharedInt64Atomics)",
            )?,
            ScalarType::F32 if op == AtomicOp::Add => {
                self.g.require(
                    C::SHADER_FLOAT32_ATOMIC,
                    &node,
                    "float atomic add (caps.float_atomic_add: shaderBufferFloat32AtomicAdd)",
                )?;
                if space != MemSpace::Global {
                    return Err(self.g.unsupported(
                        &node,
                        "float atomics on shared memory (naga offers them on buffers only)",
                    ));
                }
            }
            _ => {
                return Err(self.g.unsupported(
                    &node,
                    "atomics on this element type (i32, u32, i64, u64 and f32 add only)",
                ))
            }
        }
        self.g.make_atomic(gi)?;
        let index = self.expr(&args[1])?;
        if self.checked() {
            // The atomic runs only for an index inside the array; else a fault, and 0.
            let len = self.len(&args[0])?;
            let ok = self.bin(Bo::Less, index, len);
            let array = self.array_of_expr(&args[0]);
            let check = super::checks::Check::new(ok, index, len, array);
            return self
                .guarded(Some(ty), vec![check], |fb| {
                    fb.atomic_at(op, gi, index, args, st).map(Some)
                })?
                .ok_or_else(|| self.g.bug("a checked atomic without a value".into()));
        }
        self.atomic_at(op, gi, index, args, st)
    }

    /// The atomic `op` on element `index` of global array `gi` (`args` as for [`Fb::atomic`]).
    fn atomic_at(
        &mut self,
        op: AtomicOp,
        gi: usize,
        index: H,
        args: &[Expr],
        st: ScalarType,
    ) -> R<H> {
        let handle = self.g.globals[gi].handle;
        let base = self.global_ptr(handle);
        let pointer = self.emit(Expression::Access { base, index });
        let scalar_ty = self.g.scalar_ty(st)?;
        if op == AtomicOp::CompareExchange {
            let expected = self.expr(&args[2])?;
            let new = self.expr(&args[3])?;
            return self.compare_exchange(pointer, expected, new, st);
        }
        let value = self.expr(&args[2])?;
        let fun = match op {
            AtomicOp::Add => AtomicFunction::Add,
            AtomicOp::Sub => AtomicFunction::Subtract,
            AtomicOp::Min => AtomicFunction::Min,
            AtomicOp::Max => AtomicFunction::Max,
            AtomicOp::Exchange => AtomicFunction::Exchange { compare: None },
            AtomicOp::And => AtomicFunction::And,
            AtomicOp::Or => AtomicFunction::InclusiveOr,
            AtomicOp::Xor => AtomicFunction::ExclusiveOr,
            AtomicOp::CompareExchange => unreachable!("handled above"),
        };
        let result = self.emit(Expression::AtomicResult {
            ty: scalar_ty,
            comparison: false,
        });
        self.stmt(Statement::Atomic {
            pointer,
            fun,
            value,
            result: Some(result),
        });
        Ok(result)
    }

    /// A strong compare-exchange from naga's weak one: retried while it reports no exchange
    /// although the old value equals `expected` (a spurious failure).
    pub(super) fn compare_exchange(
        &mut self,
        pointer: H,
        expected: H,
        new: H,
        st: ScalarType,
    ) -> R<H> {
        let result_ty = self.g.module.generate_predeclared_type(
            naga::PredeclaredType::AtomicCompareExchangeWeakResult(super::types::scalar(st)),
        );
        let old = self.temp(&Type::Scalar(st))?;
        let op = self.local_ptr(old);
        self.open();
        let result = self.emit(Expression::AtomicResult {
            ty: result_ty,
            comparison: true,
        });
        self.stmt(Statement::Atomic {
            pointer,
            fun: AtomicFunction::Exchange {
                compare: Some(expected),
            },
            value: new,
            result: Some(result),
        });
        let prev = self.emit(Expression::AccessIndex {
            base: result,
            index: 0,
        });
        let exchanged = self.emit(Expression::AccessIndex {
            base: result,
            index: 1,
        });
        self.store(op, prev);
        let differs = self.bin(Bo::NotEqual, prev, expected);
        let done = self.bin(Bo::LogicalOr, exchanged, differs);
        // `if done { break }` in the body rather than `break_if`: naga's MSL writer prints
        // `break_if` before the body, where the atomic's result is not named yet.
        self.if_stmt(
            done,
            naga::Block::from_vec(vec![Statement::Break]),
            naga::Block::new(),
        );
        let body = self.close();
        self.stmt(Statement::Loop {
            body,
            continuing: naga::Block::new(),
            break_if: None,
        });
        Ok(self.load(op))
    }
}
