//! The CUDA/PTX prepass (`spoc_ir::unroll::for_ptx`) keeps a kernel's meaning where the
//! Interpreter can tell: the kernel as written and after the prepass give the same memory.

use spoc_ir::{Expr, ExprKind, ForDir, Kernel, StmtKind, Type};
use spoc_runtime::interpreter::execute;
use spoc_runtime::native::abi::{NativeArg, ScalarArg};
use spoc_testkit::ir::{add, assign, at, for_, idx, let_, u32c, B};

fn buf<T>(v: &mut [T]) -> NativeArg {
    NativeArg::Buffer {
        ptr: v.as_mut_ptr().cast(),
        len: v.len(),
        elem_bytes: std::mem::size_of::<T>(),
    }
}

fn prepass(k: &Kernel) -> Kernel {
    spoc_ir::validate(k).expect("valid IR");
    let u = spoc_ir::unroll::for_ptx(k).expect("the prepass changes the kernel");
    spoc_ir::validate(&u).expect("valid IR after the prepass");
    u
}

/// `#[device] fn shift(a: &[f32], b: &mut [f32], n: usize) { for i in 0..n { let v = a[i];
/// b[i + 1] = v; } }` called as `shift(out, out, n)`: the helper's `&[T]` parameter is the
/// buffer its `&mut [T]` one writes, so its partially unrolled copies must not load ahead of
/// the stores before them (found by review: they did, and `out` came out `[1, 1, 2, 3, 4, 4,
/// 6, 7, 8]` on CUDA/PTX, `[1; 9]` everywhere else).
#[test]
fn ptx_prepass_keeps_helper_loads_after_stores_to_an_aliasing_buffer() {
    let mut h = B::new();
    let a = h.buf("a", Type::F32);
    let b = h.buf_mut("b", Type::F32);
    let n = h.param("n", Type::U32, false);
    let i = h.local("i", Type::U32, false);
    let v = h.local("v", Type::F32, false);
    h.push(for_(
        &i,
        u32c(0),
        n.clone(),
        u32c(1),
        ForDir::Up,
        vec![
            let_(&v, idx(&a, i.clone())),
            assign(at(&b, add(i.clone(), u32c(1))), v.clone()),
        ],
    ));
    let shift = h.function("shift", Type::Unit);
    let mut kb = B::new();
    let out = kb.buf_mut("out", Type::F32);
    let kn = kb.param("n", Type::U32, false);
    kb.push(StmtKind::Expr(Expr {
        kind: ExprKind::Call {
            func: "shift".into(),
            args: vec![out.clone(), out, kn],
        },
        ty: Type::Unit,
    }));
    let mut k = kb.kernel("smear");
    k.functions = vec![shift];
    let run = |k: &Kernel| {
        let mut o: Vec<f32> = (1..=9).map(|x| x as f32).collect();
        let args = [buf(&mut o), NativeArg::Scalar(ScalarArg::U32(8))];
        execute(k, [1, 1, 1], [1, 1, 1], 0, &args).expect("runs");
        o
    };
    let want = run(&k);
    assert_eq!(want, vec![1.0; 9], "the kernel as written");
    assert_eq!(run(&prepass(&k)), want, "after the PTX prepass");
}
