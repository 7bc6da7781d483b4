//! Kernels that pin down the semantics the C generators must keep (saturating float-to-integer
//! casts, `f16` rounding, wrapping integer arithmetic, `for` loops at the ends of the integer
//! ranges). Here they are generated for every dialect and compiled by the real toolchains;
//! with `SPOC_C_DUMP=<dir>` their CUDA C and OpenCL C sources (and the whole corpus's) are also
//! written to `<dir>`, where `support/c_semantics.py cuda|opencl <dir>` compiles them with NVRTC
//! or an OpenCL driver and runs them against NumPy references.

mod support;

use spoc_ir::*;
use support::*;

fn f16_buf_mut(b: &mut B, name: &str) -> Expr {
    b.buf_mut(name, Type::F16)
}

/// `for i < len(src)`: `outs[k][i] = src[i] as T_k`.
fn conversions(name: &str, src_ty: Type, targets: &[(&str, ScalarType)]) -> Kernel {
    let mut b = B::new();
    let src = b.buf("src", src_ty);
    let outs: Vec<(Expr, ScalarType)> = targets
        .iter()
        .map(|(n, t)| {
            let o = if *t == ScalarType::F16 {
                f16_buf_mut(&mut b, n)
            } else {
                b.buf_mut(n, Type::Scalar(*t))
            };
            (o, *t)
        })
        .collect();
    let i = b.local("i", Type::U32, false);
    b.let_(&i, gid());
    let body = outs
        .iter()
        .map(|(o, t)| assign(at(o, i.clone()), cast(idx(&src, i.clone()), *t)))
        .collect();
    b.push(if_(lt(i.clone(), len(&src)), body, None));
    b.kernel(name)
}

/// Integer operations on pairs: `out[n*i + k] = op_k(a[i], b[i])`.
fn int_ops(name: &str, t: ScalarType) -> Kernel {
    let ty = Type::Scalar(t);
    let mut b = B::new();
    let a = b.buf("a", ty.clone());
    let bb = b.buf("b", ty.clone());
    let out = b.buf_mut("out", ty.clone());
    let i = b.local("i", Type::U32, false);
    let x = b.local("x", ty.clone(), false);
    let y = b.local("y", ty.clone(), false);
    b.let_(&i, gid());
    let results = vec![
        add(x.clone(), y.clone()),
        bin(BinOp::Sub, x.clone(), y.clone()),
        mul(x.clone(), y.clone()),
        bin(BinOp::Div, x.clone(), y.clone()),
        bin(BinOp::Rem, x.clone(), y.clone()),
        bin(BinOp::Shl, x.clone(), y.clone()),
        bin(BinOp::Shr, x.clone(), y.clone()),
        un(UnOp::Neg, x.clone()),
        math(MathFn::Abs, vec![x.clone()]),
        math(MathFn::Min, vec![x.clone(), y.clone()]),
        math(MathFn::Max, vec![x.clone(), y.clone()]),
        // a chain: x * 7 - y * x + (x << 3)
        add(
            bin(
                BinOp::Sub,
                mul(x.clone(), Expr::constant(int_const(t, 7))),
                mul(y.clone(), x.clone()),
            ),
            bin(BinOp::Shl, x.clone(), u32c(3)),
        ),
    ];
    let n = results.len() as u32;
    let mut body = vec![
        StmtKind::Let {
            var: id(&x),
            init: Some(idx(&a, i.clone())),
        },
        StmtKind::Let {
            var: id(&y),
            init: Some(idx(&bb, i.clone())),
        },
    ];
    for (k, r) in results.into_iter().enumerate() {
        body.push(assign(
            at(&out, add(mul(i.clone(), u32c(n)), u32c(k as u32))),
            r,
        ));
    }
    b.push(if_(lt(i.clone(), len(&a)), body, None));
    b.kernel(name)
}

fn int_const(t: ScalarType, v: i64) -> Const {
    match t {
        ScalarType::I32 => Const::I32(v as i32),
        ScalarType::I64 => Const::I64(v),
        ScalarType::U32 => Const::U32(v as u32),
        _ => Const::U64(v as u64),
    }
}

/// `for v in (start..end).step_by(step)` up and down: the trip count and the wrapping sum of
/// the values, per thread.
fn loops(name: &str, t: ScalarType) -> Kernel {
    let ty = Type::Scalar(t);
    let mut b = B::new();
    let starts = b.buf("starts", ty.clone());
    let ends = b.buf("ends", ty.clone());
    let steps = b.buf("steps", Type::U32);
    let counts = b.buf_mut("counts", Type::U32);
    let sums = b.buf_mut("sums", Type::U64);
    let i = b.local("i", Type::U32, false);
    b.let_(&i, gid());
    let mut body = Vec::new();
    for (k, dir) in [ForDir::Up, ForDir::Down].into_iter().enumerate() {
        let v = b.local("v", ty.clone(), false);
        let c = b.local("count", Type::U32, true);
        let s = b.local("sum", Type::U64, true);
        body.push(StmtKind::Let {
            var: id(&c),
            init: Some(u32c(0)),
        });
        body.push(StmtKind::Let {
            var: id(&s),
            init: Some(u64c(0)),
        });
        body.push(for_(
            &v,
            idx(&starts, i.clone()),
            idx(&ends, i.clone()),
            idx(&steps, i.clone()),
            dir,
            vec![
                assign(place(&c), add(c.clone(), u32c(1))),
                // a position-weighted sum, so the order of the values matters too
                assign(
                    place(&s),
                    add(mul(s.clone(), u64c(31)), cast(v.clone(), ScalarType::U64)),
                ),
            ],
        ));
        let slot = add(mul(i.clone(), u32c(2)), u32c(k as u32));
        body.push(assign(at(&counts, slot.clone()), c));
        body.push(assign(at(&sums, slot), s));
    }
    b.push(if_(lt(i.clone(), len(&starts)), body, None));
    b.kernel(name)
}

/// The semantic kernels, by name.
fn semantic_kernels() -> Vec<(&'static str, Kernel)> {
    use ScalarType::*;
    let ints = [
        ("to_i32", I32),
        ("to_u32", U32),
        ("to_i64", I64),
        ("to_u64", U64),
    ];
    let mut from_f32: Vec<(&str, ScalarType)> = vec![("to_f16", F16)];
    from_f32.extend(ints);
    vec![
        ("conv_f32", conversions("conv_f32", Type::F32, &from_f32)),
        ("conv_f64", conversions("conv_f64", Type::F64, &from_f32)),
        (
            "conv_f16",
            conversions(
                "conv_f16",
                Type::F16,
                &[("to_f32", F32), ("to_f64", F64), ("to_i32", I32)],
            ),
        ),
        ("int_i32", int_ops("int_i32", I32)),
        ("int_i64", int_ops("int_i64", I64)),
        ("loops_i32", loops("loops_i32", I32)),
        ("loops_u64", loops("loops_u64", U64)),
    ]
}

#[test]
fn semantic_kernels_compile_everywhere() {
    toolchains::check_all("semantics", &sources_for_every_target(semantic_kernels()));
    if let Ok(dir) = std::env::var("SPOC_C_DUMP") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        for (name, k) in semantic_kernels().into_iter().chain(corpus()) {
            for t in [spoc_codegen::Target::CudaC, spoc_codegen::Target::OpenCl] {
                let file = dir.join(format!("{name}.{}", t.file_extension()));
                std::fs::write(file, gen(t, &k)).unwrap();
            }
        }
    }
}
