//! Writes the PTX that `tests/ptx_device/run_on_gpu.py` runs on a real GPU (through CuPy):
//! the corpus kernels and one kernel per math function and float type.
//!
//! `cargo test -p spoc-codegen --test ptx_device -- --ignored` writes into
//! `$SPOC_PTX_DUMP` (default `spoc-codegen/tests/ptx_device/out`); then, on a machine with a GPU,
//! `python3 spoc-codegen/tests/ptx_device/run_on_gpu.py spoc-codegen/tests/ptx_device/out`.

mod ptx_corpus;

use ptx_corpus::*;
use spoc_ir::*;

/// `out[i] = f(x[i] [, y[i]])` for `i < out.len()`; `powi` takes `n: &[i32]`; `rem` is `%`.
fn math_kernel(name: &str, m: Option<MathFn>, t: ScalarType) -> Kernel {
    let ty = Type::Scalar(t);
    let mut b = B::new();
    let x = b.buf("x", ty.clone());
    let arity = m.map(|m| m.arity()).unwrap_or(2);
    let y = (arity == 2).then(|| {
        if m == Some(MathFn::Powi) {
            b.buf("n", Type::I32)
        } else {
            b.buf("y", ty.clone())
        }
    });
    let out = b.buf_mut("out", ty.clone());
    let i = b.let_("i", gid());
    b.if_(lt(i.clone(), len(&out)), |b| {
        let mut args = vec![idx(&x, i.clone())];
        if let Some(y) = &y {
            args.push(idx(y, i.clone()));
        }
        let v = match m {
            Some(m) => math(m, args),
            None => rem(args[0].clone(), args[1].clone()),
        };
        b.store(&out, i, v);
    });
    b.kernel(name)
}

/// The math functions the device script measures.
pub const MATH: [MathFn; 30] = {
    use MathFn::*;
    [
        Sqrt, Rsqrt, Recip, Abs, Floor, Ceil, Round, Trunc, Exp, Exp2, Ln, Log2, Log10, Sin, Cos,
        Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Signum, Min, Max, Powf, Atan2, Hypot, Copysign,
        Powi,
    ]
};

#[test]
#[ignore]
fn dump_for_device() {
    let dir = &device_dump_dir();
    let mut n = 0;
    for (name, k, soa) in all() {
        std::fs::write(dir.join(format!("{name}.ptx")), ptx(&k, &soa)).unwrap();
        n += 1;
    }
    for t in [ScalarType::F32, ScalarType::F64] {
        for m in MATH {
            let name = format!("m_{}_{t}", m.name());
            let k = math_kernel(&name, Some(m), t);
            std::fs::write(dir.join(format!("{name}.ptx")), ptx(&k, &[])).unwrap();
            n += 1;
        }
        let name = format!("m_rem_{t}");
        let k = math_kernel(&name, None, t);
        std::fs::write(dir.join(format!("{name}.ptx")), ptx(&k, &[])).unwrap();
        n += 1;
    }
    eprintln!("wrote {n} PTX files to {}", dir.display());
}
