//! Arithmetic on the 16-bit float types `f16` and `bf16`, lowered to `f32`.
//!
//! In the IR, [`ScalarType::F16`] and [`ScalarType::BF16`] are storage-only: they are loaded,
//! stored, passed and converted ([`ExprKind::Cast`]), never operated on, so that every code
//! generator and the Interpreter need only the conversions. The kernel language's operators on
//! them are defined as *the operation computed in `f32` and rounded once to the 16-bit format,
//! to nearest, ties to even* — the semantics of the `half` crate's operators on the host — and
//! [`widen_block`] rewrites them so:
//!
//! - `a op b` for `op` in `+ - * / %` becomes `cast(cast(a, f32) op cast(b, f32), h)`;
//! - comparisons compare the `f32` values (the conversion to `f32` is exact, so the result is the
//!   comparison of the 16-bit values, NaN unordered);
//! - unary `-`, and the math functions `min`, `max`, `abs`, `sqrt` and `mul_add` likewise.
//!
//! For `+ - * /` and `sqrt` the result equals the correctly rounded 16-bit operation: binary32
//! has p' = 24 significand bits, at least 2p + 2 for binary16 (p = 11) and bfloat16 (p = 8), the
//! condition under which rounding first to the wider format is innocuous (S. A. Figueroa, "When
//! is double rounding innocuous?", SIGNUM 1995). `mul_add` is not fused at the 16-bit precision
//! (its `f32` result is rounded a second time), and `%` is exact in both formats.

use crate::visit::{walk_expr_mut, VisitMut};
use crate::{BinOp, Block, Expr, ExprKind, Intrinsic, ScalarType, Type, UnOp};

/// Rewrites every operation on `f16`/`bf16` values in `block` into `f32` arithmetic between
/// conversions (see the [module documentation](self)). Operations on other types are left as
/// they are; the result validates if the input was typed by the kernel language's rules.
pub fn widen_block(block: &mut Block) {
    Widen.visit_block_mut(block);
}

/// `true` if `block` operates on a 16-bit float anywhere ([`widen_block`] would change it).
pub fn has_half_arithmetic(block: &Block) -> bool {
    let mut found = false;
    crate::visit::for_each_expr(block, &mut |e| found |= half_operand(e).is_some());
    found
}

/// The 16-bit float type an operation node `e` computes on, if it is one [`widen_block`]
/// rewrites.
fn half_operand(e: &Expr) -> Option<ScalarType> {
    let first = match &e.kind {
        ExprKind::Binary { op, lhs, .. }
            if !matches!(op, BinOp::LogicalAnd | BinOp::LogicalOr) && !op.is_shift() =>
        {
            &lhs.ty
        }
        ExprKind::Unary {
            op: UnOp::Neg,
            operand,
        } => &operand.ty,
        ExprKind::Intrinsic {
            intrinsic: Intrinsic::Math(_),
            args,
        } => &args.first()?.ty,
        _ => return None,
    };
    first.as_scalar().filter(|s| s.is_half())
}

struct Widen;

fn to_f32(e: &mut Expr) {
    let inner = std::mem::replace(e, Expr::constant(crate::Const::Bool(false)));
    *e = Expr {
        kind: ExprKind::Cast {
            value: Box::new(inner),
            to: ScalarType::F32,
        },
        ty: Type::F32,
    };
}

impl VisitMut for Widen {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        walk_expr_mut(self, e);
        let Some(h) = half_operand(e) else {
            return;
        };
        match &mut e.kind {
            ExprKind::Binary { lhs, rhs, .. } => {
                to_f32(lhs);
                to_f32(rhs);
            }
            ExprKind::Unary { operand, .. } => to_f32(operand),
            ExprKind::Intrinsic { args, .. } => args.iter_mut().for_each(to_f32),
            _ => unreachable!("half_operand admits these nodes only"),
        }
        if e.ty == Type::Scalar(h) {
            e.ty = Type::F32;
            let wide = std::mem::replace(e, Expr::constant(crate::Const::Bool(false)));
            *e = Expr {
                kind: ExprKind::Cast {
                    value: Box::new(wide),
                    to: h,
                },
                ty: Type::Scalar(h),
            };
        }
    }
}
