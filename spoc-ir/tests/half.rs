//! The 16-bit float types in the IR: `bf16` next to `f16` (size, printing, hashing, the
//! validator's storage-only and `f32`-only cast rules) and `spoc_ir::half::widen_block`, which
//! turns operations on them into `f32` arithmetic between conversions.

use spoc_ir::*;
use spoc_testkit::ir::{self, bin, cast, gid, idx, math, un};

/// `y[i] = op(x[i], x[i])` on buffers of `t`.
fn kernel(t: ScalarType, op: impl Fn(Expr, Expr) -> Expr) -> Kernel {
    let mut b = ir::B::new();
    let x = b.buf("x", Type::Scalar(t));
    let y = b.buf_mut("y", Type::Scalar(t));
    let i = gid();
    let value = op(idx(&x, i.clone()), idx(&x, i.clone()));
    b.push(ir::assign(ir::at(&y, i), value));
    b.kernel("k")
}

#[test]
fn bf16_is_a_two_byte_storage_float() {
    assert_eq!(ScalarType::BF16.size_bytes(), 2);
    assert!(ScalarType::BF16.is_float() && ScalarType::BF16.is_half());
    assert!(!ScalarType::BF16.is_arithmetic());
    assert!(ScalarType::ALL.contains(&ScalarType::BF16));
    assert_eq!(ScalarType::BF16.to_string(), "bf16");
    assert_eq!(Const::BF16(0x3f80).ty(), ScalarType::BF16);
    let k = kernel(ScalarType::BF16, |a, _| a);
    validate(&k).unwrap();
    let f = kernel(ScalarType::F16, |a, _| a);
    assert_ne!(k.content_hash(), f.content_hash());
    let c = kernel(ScalarType::BF16, |_, _| Expr::constant(Const::BF16(0x3f80)));
    assert!(c.to_string().contains("bf16::from_bits(0x3f80)"), "{c}");
    assert_eq!(Kernel::from_bytes(&c.to_bytes()).unwrap(), c);
}

#[test]
fn the_validator_refuses_operations_and_non_f32_casts_of_bf16() {
    for t in [ScalarType::F16, ScalarType::BF16] {
        let k = kernel(t, |a, b| bin(BinOp::Add, a, b));
        let e = validate(&k).unwrap_err().to_string();
        assert!(
            e.contains("storage-only") && e.contains(t.rust_name()),
            "{e}"
        );
    }
    // bf16 converts to and from f32 only.
    let k = kernel(ScalarType::BF16, |a, _| {
        cast(
            cast(cast(a, ScalarType::F32), ScalarType::I32),
            ScalarType::BF16,
        )
    });
    let e = validate(&k).unwrap_err().to_string();
    assert!(e.contains("`bf16` converts to and from `f32` only"), "{e}");
    let k = kernel(ScalarType::BF16, |a, _| {
        cast(cast(a, ScalarType::F32), ScalarType::BF16)
    });
    validate(&k).unwrap();
}

/// Every operation becomes `f32` arithmetic, each result rounded back once; comparisons compare
/// the `f32` values; the result validates and has nothing left to widen.
#[test]
fn widening_leaves_only_conversions_on_16_bit_values() {
    for t in [ScalarType::F16, ScalarType::BF16] {
        let ops: Vec<Box<dyn Fn(Expr, Expr) -> Expr>> = vec![
            Box::new(|a, b| bin(BinOp::Add, a, b)),
            Box::new(|a, b| bin(BinOp::Div, a, b)),
            Box::new(|a, b| bin(BinOp::Rem, bin(BinOp::Mul, a.clone(), b), a)),
            Box::new(|a, _| un(UnOp::Neg, a)),
            Box::new(|a, b| math(MathFn::Max, vec![a, b])),
            Box::new(move |a, b| {
                let c = bin(BinOp::Lt, a.clone(), b);
                Expr {
                    kind: ExprKind::Select {
                        cond: Box::new(c),
                        then: Box::new(a.clone()),
                        els: Box::new(a),
                    },
                    ty: Type::Scalar(t),
                }
            }),
        ];
        for op in ops {
            let mut k = kernel(t, &op);
            assert!(spoc_ir::half::has_half_arithmetic(&k.body));
            assert!(validate(&k).is_err());
            spoc_ir::half::widen_block(&mut k.body);
            validate(&k).unwrap_or_else(|e| panic!("{e}\n{k}"));
            assert!(!spoc_ir::half::has_half_arithmetic(&k.body), "{k}");
        }
        // `x + x`: one rounding, of the f32 sum.
        let mut k = kernel(t, |a, b| bin(BinOp::Add, a, b));
        spoc_ir::half::widen_block(&mut k.body);
        let text = k.to_string();
        assert_eq!(text.matches(&format!("as {t}")).count(), 1, "{text}");
        assert_eq!(text.matches("as f32").count(), 2, "{text}");
    }
}
