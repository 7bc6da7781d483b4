//! The CUDA/PTX prepass (`spoc_ir::unroll::for_ptx`) keeps a kernel's meaning where the
//! Interpreter can tell: the kernel as written and after the prepass give the same memory.

use spoc_ir::{Expr, ExprKind, ForDir, IrError, Kernel, StmtKind, Type};
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
/// b[i + 1] = v; } }` and a kernel `smear(src: &[f32], out: &mut [f32], n: u32)` whose body
/// calls it with the arguments `args` makes of the kernel's parameters `[src, out, n]`.
fn smear(args: impl FnOnce(&[Expr; 3]) -> Vec<Expr>) -> Kernel {
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
    let src = kb.buf("src", Type::F32);
    let out = kb.buf_mut("out", Type::F32);
    let kn = kb.param("n", Type::U32, false);
    kb.push(StmtKind::Expr(Expr {
        kind: ExprKind::Call {
            func: "shift".into(),
            args: args(&[src, out, kn]),
        },
        ty: Type::Unit,
    }));
    let mut k = kb.kernel("smear");
    k.functions = vec![shift];
    k
}

/// `shift(out, out, n)`: the helper's `&[T]` parameter would be the buffer its `&mut [T]` one
/// writes, and its partially unrolled copies must then not load ahead of the stores before them
/// (found by review: they did, and `out` came out `[1, 1, 2, 3, 4, 4, 6, 7, 8]` on CUDA/PTX,
/// `[1; 9]` everywhere else). Such a call is now invalid IR (as `#[kernel]` refuses it at compile
/// time): nothing reaches the prepass with it.
#[test]
fn a_helper_call_aliasing_a_mut_buffer_is_refused_before_the_prepass() {
    let k = smear(|[_, out, n]| vec![out.clone(), out.clone(), n.clone()]);
    match spoc_ir::validate(&k) {
        Err(IrError::AliasedArgument(a)) => {
            assert_eq!(
                (&a.callee[..], &a.buffer[..], &a.written[..], &a.other[..]),
                ("shift", "out", "b", "a")
            );
        }
        other => panic!("expected IrError::AliasedArgument, got {other:?}"),
    }
}

/// `shift(src, out, n)`, two buffers: the prepass keeps the helper's loads and stores in a
/// meaning-preserving order (it does not hoist loads in helpers: DESIGN.md §9).
#[test]
fn ptx_prepass_keeps_a_helper_loop_meaning() {
    let k = smear(|[src, out, n]| vec![src.clone(), out.clone(), n.clone()]);
    let run = |k: &Kernel| {
        let mut s: Vec<f32> = (1..=9).map(|x| x as f32).collect();
        let mut o = vec![0.0f32; 9];
        let args = [
            buf(&mut s),
            buf(&mut o),
            NativeArg::Scalar(ScalarArg::U32(8)),
        ];
        execute(k, [1, 1, 1], [1, 1, 1], 0, &args).expect("runs");
        o
    };
    let want = run(&k);
    let shifted: Vec<f32> = (0..9).map(|x| x as f32).collect();
    assert_eq!(want, shifted, "the kernel as written");
    assert_eq!(run(&prepass(&k)), want, "after the PTX prepass");
}
