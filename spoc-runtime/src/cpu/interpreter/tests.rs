//! Tests of the Interpreter on hand-built IR kernels.

use super::*;
use crate::native::abi::ScalarArg;
use spoc_ir::{
    AtomicOp, Axis, BinOp, Const, Expr, ExprKind, ForDir, ForLoop, Function, Intrinsic, LValue,
    MathFn, MemSpace, Pattern, ScalarType, Stmt, StmtKind, Type, UnOp,
};

// ---- IR builders: spoc_testkit::ir, with this file's statement style -----------------------

use spoc_testkit::ir::{
    add, array_ty, bin, boolc, cast, f32c, field, global_id as gid, i32c, i64c, id, idx, intr, len,
    lt, math, mul, neg, record, repeat, select, u32c,
};

/// [`spoc_testkit::ir::B`] with this file's conventions: locals are `mut`, and the body is
/// given when the kernel or helper is made.
#[derive(Default)]
struct B(spoc_testkit::ir::B);

impl B {
    fn param(&mut self, name: &str, ty: Type, mutable: bool) -> Expr {
        self.0.param(name, ty, mutable)
    }
    /// A `&[T]` parameter.
    fn buf(&mut self, name: &str, elem: Type) -> Expr {
        self.0.buf(name, elem)
    }
    /// A `&mut [T]` parameter.
    fn buf_mut(&mut self, name: &str, elem: Type) -> Expr {
        self.0.buf_mut(name, elem)
    }
    fn local(&mut self, name: &str, ty: Type) -> Expr {
        self.0.local(name, ty, true)
    }
    /// The local `i` and the statement `let i = global_id_x()` most kernels here start with.
    fn global_index(&mut self) -> (Expr, Stmt) {
        let i = self.local("i", Type::U32);
        let init = let_(&i, gid(Axis::X));
        (i, init)
    }
    /// A shared array of `len` elements (`None`: sized at launch).
    fn shared(&mut self, name: &str, elem: Type, len: Option<u32>) -> Expr {
        self.0.shared(name, elem, len)
    }
    fn kernel(self, name: &str, body: Vec<Stmt>) -> Kernel {
        self.0.kernel_with(name, body)
    }
    fn function(self, name: &str, ret: Type, body: Vec<Stmt>) -> Function {
        self.0.function_with(name, ret, body)
    }
}

fn call(f: &Function, args: Vec<Expr>) -> Expr {
    Expr {
        kind: ExprKind::Call {
            func: f.name.clone(),
            args,
        },
        ty: f.ret.clone(),
    }
}

fn st(k: StmtKind) -> Stmt {
    Stmt::new(k)
}
fn let_(v: &Expr, init: Expr) -> Stmt {
    st(StmtKind::Let {
        var: id(v),
        init: Some(init),
    })
}
fn set(v: &Expr, value: Expr) -> Stmt {
    st(StmtKind::Assign {
        target: LValue::Var(id(v)),
        value,
    })
}
/// `array[i] = value`.
fn store(array: &Expr, i: Expr, value: Expr) -> Stmt {
    st(StmtKind::Assign {
        target: LValue::Index {
            base: Box::new(LValue::Var(id(array))),
            index: i,
        },
        value,
    })
}
fn if_(cond: Expr, then: Vec<Stmt>, els: Option<Vec<Stmt>>) -> Stmt {
    st(StmtKind::If { cond, then, els })
}
fn for_(v: &Expr, start: Expr, end: Expr, step: u32, dir: ForDir, body: Vec<Stmt>) -> Stmt {
    st(StmtKind::For(ForLoop {
        var: id(v),
        start,
        end,
        step: u32c(step),
        dir,
        body,
    }))
}
fn ret(e: Expr) -> Stmt {
    st(StmtKind::Return(Some(e)))
}

// ---- launch helpers ----------------------------------------------------------------------

/// Panics unless `k` validates: the hand-built IR must follow the rules the macro's IR follows.
fn assert_valid(k: &Kernel) {
    if let Err(e) = spoc_ir::validate(k) {
        panic!("test kernel does not validate: {e}\n{k}");
    }
}

/// Validates `k` ([`assert_valid`]), then runs it.
fn exec(
    k: &Kernel,
    grid: [u32; 3],
    block: [u32; 3],
    shared: usize,
    args: &[NativeArg],
) -> Result<(), InterpError> {
    assert_valid(k);
    execute(k, grid, block, shared, args)
}

/// [`exec`] with the optional checks `c`.
fn exec_with(
    k: &Kernel,
    grid: [u32; 3],
    block: [u32; 3],
    shared: usize,
    args: &[NativeArg],
    c: Checks,
) -> Result<(), InterpError> {
    assert_valid(k);
    CompiledKernel::new(k)?.execute_with(grid, block, shared, args, c)
}

/// The fault of `array[index]` out of bounds (`len` elements) in `space`.
fn oob(space: MemorySpace, array: &str, index: u64, len: u64) -> InterpErrorKind {
    InterpErrorKind::OutOfBounds {
        space,
        array: array.into(),
        index,
        len,
    }
}

fn buf<T>(v: &mut [T]) -> NativeArg {
    NativeArg::Buffer {
        ptr: v.as_mut_ptr().cast(),
        len: v.len(),
        elem_bytes: std::mem::size_of::<T>(),
    }
}
fn f32a(v: f32) -> NativeArg {
    NativeArg::Scalar(ScalarArg::F32(v))
}
fn i32a(v: i32) -> NativeArg {
    NativeArg::Scalar(ScalarArg::I32(v))
}
fn d1(n: u32) -> [u32; 3] {
    [n, 1, 1]
}

// ---- kernels -----------------------------------------------------------------------------

/// `fn saxpy(a: f32, x: &[f32], y: &mut [f32]) { let i = global_id_x(); if i < y.len() { y[i] = a * x[i] + y[i]; } }`
fn saxpy() -> Kernel {
    let mut b = B::default();
    let a = b.param("a", Type::F32, false);
    let x = b.buf("x", Type::F32);
    let y = b.buf_mut("y", Type::F32);
    let (i, let_i) = b.global_index();
    let body = vec![
        let_i,
        if_(
            lt(i.clone(), len(&y)),
            vec![store(
                &y,
                i.clone(),
                add(mul(a, idx(&x, i.clone())), idx(&y, i.clone())),
            )],
            None,
        ),
    ];
    b.kernel("saxpy", body)
}

#[test]
fn saxpy_f32() {
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let mut xs = x.clone();
    let mut y: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let expect: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
    exec(
        &saxpy(),
        d1(4),
        d1(256),
        0,
        &[f32a(2.5), buf(&mut xs), buf(&mut y)],
    )
    .unwrap();
    assert_eq!(y, expect);
    assert_eq!(y[10], 2.5 * 5.0 + (1.0 - 10.0));
}

#[test]
fn compiled_kernel_runs_twice() {
    let k = CompiledKernel::new(&saxpy()).unwrap();
    assert_eq!(k.name(), "saxpy");
    let mut x = vec![1.0f32; 8];
    let mut y = vec![0.0f32; 8];
    for _ in 0..2 {
        k.execute(d1(1), d1(8), 0, &[f32a(3.0), buf(&mut x), buf(&mut y)])
            .unwrap();
    }
    assert_eq!(y, vec![6.0; 8]);
}

#[test]
fn i32_arithmetic_wraps() {
    let mut b = B::default();
    let out = b.buf_mut("out", Type::I32);
    let x = b.buf("x", Type::I32);
    let min = || idx(&x, u32c(0)); // i32::MIN
    let max = || idx(&x, u32c(1)); // i32::MAX
    let results = vec![
        add(max(), i32c(1)),
        bin(BinOp::Sub, min(), i32c(1)),
        mul(i32c(65536), i32c(65536)),
        bin(BinOp::Div, min(), i32c(-1)),
        bin(BinOp::Rem, min(), i32c(-1)),
        neg(min()),
        bin(BinOp::Shl, i32c(1), i32c(33)),
        bin(BinOp::Shr, i32c(-8), u32c(1)),
        bin(BinOp::Shl, i32c(1), i32c(-1)),
        bin(BinOp::Rem, i32c(-7), i32c(2)),
        bin(BinOp::Div, i32c(-7), i32c(2)),
        math(MathFn::Abs, vec![min()]),
    ];
    let n = results.len();
    let body = results
        .into_iter()
        .enumerate()
        .map(|(k, e)| store(&out, u32c(k as u32), e))
        .collect();
    let k = b.kernel("wrap", body);
    let mut o = vec![0i32; n];
    let mut xs = vec![i32::MIN, i32::MAX];
    exec(&k, d1(1), d1(1), 0, &[buf(&mut o), buf(&mut xs)]).unwrap();
    assert_eq!(
        o,
        vec![
            i32::MIN,
            i32::MAX,
            0,
            i32::MIN,
            0,
            i32::MIN,
            2,
            -4,
            i32::MIN,
            -1,
            -3,
            i32::MIN
        ]
    );
}

#[test]
fn unsigned_and_64_bit_operations() {
    let mut b = B::default();
    let o32 = b.buf_mut("o32", Type::U32);
    let o64 = b.buf_mut("o64", Type::I64);
    let body = vec![
        store(&o32, u32c(0), bin(BinOp::Shr, u32c(0x8000_0000), u32c(31))),
        store(&o32, u32c(1), bin(BinOp::Sub, u32c(0), u32c(1))),
        store(&o32, u32c(2), bin(BinOp::BitXor, u32c(0xF0), u32c(0xFF))),
        store(&o64, u32c(0), mul(i64c(1 << 40), i64c(1 << 30))),
        store(&o64, u32c(1), bin(BinOp::Shr, i64c(-1 << 40), u32c(8))),
        store(&o64, u32c(2), bin(BinOp::Shl, i64c(3), i64c(65))),
    ];
    let k = b.kernel("u", body);
    let (mut a, mut c) = (vec![0u32; 3], vec![0i64; 3]);
    exec(&k, d1(1), d1(1), 0, &[buf(&mut a), buf(&mut c)]).unwrap();
    assert_eq!(a, vec![1, u32::MAX, 0x0F]);
    assert_eq!(c, vec![(1i64 << 40).wrapping_mul(1 << 30), -1 << 32, 6]);
}

/// `out[i] = 100 / (i as i32 - 5)` over 8 threads in blocks of 4.
#[test]
fn division_by_zero_reports_block_and_thread() {
    let mut b = B::default();
    let out = b.buf_mut("out", Type::I32);
    let (i, let_i) = b.global_index();
    let body = vec![
        let_i,
        store(
            &out,
            i.clone(),
            bin(
                BinOp::Div,
                i32c(100),
                bin(BinOp::Sub, cast(i.clone(), ScalarType::I32), i32c(5)),
            ),
        ),
    ];
    let k = b.kernel("div", body);
    let mut o = vec![0i32; 8];
    let err = exec(&k, d1(2), d1(4), 0, &[buf(&mut o)]).unwrap_err();
    assert_eq!(err.kind, InterpErrorKind::DivisionByZero);
    assert_eq!(err.kernel, "div");
    assert_eq!(err.block, [1, 0, 0]);
    assert_eq!(err.thread, [1, 0, 0]);
    assert_eq!(
        err.to_string(),
        "kernel `div`, block (1, 0, 0), thread (1, 0, 0): integer division or remainder by zero"
    );
    // Block 0 ran to completion before the fault in block 1 was reported.
    assert_eq!(&o[..4], &[-20, -25, -33, -50]);
    // Thread 0 of block 1 ran; thread 1 faulted before its store, and thread 2 never ran.
    assert_eq!(&o[4..], &[-100, 0, 0, 0]);
}

/// The `u32` index fast paths (postfix expressions, `a * k + b`) compute what the general
/// evaluator does, wrap, and fault on a zero divisor with the statement's location.
#[test]
fn u32_index_arithmetic_fast_paths() {
    // out[i] = (i * 3 + i) ^ (i << 31) >> 1, via `a * k + b` and a postfix expression, then
    // out2[i * 2 + 1 - 1 - i] = 7 / (i % 3) (a zero divisor at i = 0 and 3).
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let out2 = b.buf_mut("out2", Type::U32);
    let (i, let_i) = b.global_index();
    let ub = |op, l, r| bin(op, l, r);
    let body = vec![
        let_i,
        store(
            &out,
            i.clone(),
            ub(
                BinOp::Shr,
                ub(
                    BinOp::BitXor,
                    add(mul(i.clone(), u32c(3)), i.clone()),
                    ub(BinOp::Shl, i.clone(), u32c(31)),
                ),
                u32c(1),
            ),
        ),
        at(
            store(
                &out2,
                ub(
                    BinOp::Sub,
                    ub(BinOp::Sub, add(mul(i.clone(), u32c(2)), u32c(1)), u32c(1)),
                    i.clone(),
                ),
                ub(BinOp::Div, u32c(7), ub(BinOp::Rem, i.clone(), u32c(3))),
            ),
            12,
            9,
        ),
    ];
    let k = b.kernel("idx", body);
    let mut o = vec![0u32; 4];
    let mut o2 = vec![0u32; 4];
    let err = exec(&k, d1(1), d1(4), 0, &[buf(&mut o), buf(&mut o2)]).unwrap_err();
    assert_eq!(err.kind, InterpErrorKind::DivisionByZero);
    assert_eq!(err.thread, [0, 0, 0]);
    assert_eq!(err.loc.as_ref().map(|l| (l.line, l.column)), Some((12, 9)));
    assert_eq!(o[0], 0);
    // Without the zero divisor: every thread's values.
    let mut b2 = B::default();
    let out = b2.buf_mut("out", Type::U32);
    let i = b2.local("i", Type::U32);
    let j = b2.local("j", Type::U32);
    let body = vec![
        let_(&i, gid(Axis::X)),
        let_(&j, add(mul(i.clone(), u32c(0x8000_0001)), i.clone())),
        store(
            &out,
            add(mul(i.clone(), u32c(1)), u32c(0)),
            ub(
                BinOp::Shr,
                ub(
                    BinOp::BitXor,
                    j.clone(),
                    ub(BinOp::Shl, i.clone(), u32c(33)),
                ),
                u32c(1),
            ),
        ),
    ];
    let k = b2.kernel("idx2", body);
    let p = CompiledKernel::new(&k).unwrap();
    let dump = format!("{:?}", p.prog.kernel.body);
    assert!(dump.contains("Affine"), "{dump}");
    assert!(dump.contains("U32(["), "{dump}");
    let mut o = vec![0u32; 8];
    exec(&k, d1(2), d1(4), 0, &[buf(&mut o)]).unwrap();
    let want: Vec<u32> = (0..8u32)
        .map(|i| (i.wrapping_mul(0x8000_0001).wrapping_add(i) ^ i.wrapping_shl(33)) >> 1)
        .collect();
    assert_eq!(o, want);
}

/// `y[i] = x[i + 1]` with 4 threads and buffers of 4.
#[test]
fn out_of_bounds_read_names_buffer_and_index() {
    let mut b = B::default();
    let x = b.buf("x", Type::F32);
    let y = b.buf_mut("y", Type::F32);
    let i = b.local("i", Type::U32);
    let body = vec![
        let_(&i, intr(Intrinsic::ThreadIdx(Axis::X), vec![], Type::U32)),
        store(&y, i.clone(), idx(&x, add(i.clone(), u32c(1)))),
    ];
    let k = b.kernel("shift", body);
    let (mut xs, mut ys) = (vec![1.0f32, 2.0, 3.0, 4.0], vec![0.0f32; 4]);
    let err = exec(&k, d1(1), d1(4), 0, &[buf(&mut xs), buf(&mut ys)]).unwrap_err();
    assert_eq!(err.kind, oob(MemorySpace::Global, "x", 4, 4));
    assert_eq!((err.block, err.thread), ([0, 0, 0], [3, 0, 0]));
    let msg = err.to_string();
    assert!(msg.contains("thread (3, 0, 0)"), "{msg}");
    assert!(
        msg.contains("index 4 out of bounds for `x` of length 4"),
        "{msg}"
    );
    assert_eq!(ys, vec![2.0, 3.0, 4.0, 0.0]);
}

#[test]
fn out_of_bounds_write_and_local_array() {
    // let mut a = [0i32; 3]; a[tid] = 7; out[tid] = a[tid]  with 4 threads: thread 3 faults.
    let mut b = B::default();
    let out = b.buf_mut("out", Type::I32);
    let a = b.local("a", array_ty(Type::I32, MemSpace::Local, 3));
    let t = b.local("t", Type::U32);
    let body = vec![
        let_(&t, gid(Axis::X)),
        let_(&a, repeat(i32c(0), 3)),
        store(
            &a,
            t.clone(),
            add(i32c(7), cast(t.clone(), ScalarType::I32)),
        ),
        store(
            &out,
            t.clone(),
            add(idx(&a, t.clone()), cast(len(&a), ScalarType::I32)),
        ),
    ];
    let k = b.kernel("local", body);
    let mut o = vec![0i32; 4];
    let err = exec(&k, d1(1), d1(4), 0, &[buf(&mut o)]).unwrap_err();
    assert_eq!(err.kind, oob(MemorySpace::Local, "a", 3, 3));
    assert_eq!(err.thread, [3, 0, 0]);
    assert_eq!(o, vec![10, 11, 12, 0]);
}

/// Records `for` iterations into `out` (`out[k] = v; k += 1`), returns the kernel.
fn for_kernel(ty: Type, start: Expr, end: Expr, step: u32, dir: ForDir) -> Kernel {
    let mut b = B::default();
    let out = b.buf_mut("out", Type::I64);
    let k = b.local("k", Type::U32);
    let v = b.local("v", ty);
    let body = vec![
        let_(&k, u32c(0)),
        for_(
            &v,
            start,
            end,
            step,
            dir,
            vec![
                store(&out, k.clone(), cast(v.clone(), ScalarType::I64)),
                set(&k, add(k.clone(), u32c(1))),
            ],
        ),
        // Number of iterations in the last element.
        store(&out, u32c(15), cast(k.clone(), ScalarType::I64)),
    ];
    b.kernel("for", body)
}

fn run_for(k: &Kernel) -> Vec<i64> {
    let mut o = vec![0i64; 16];
    exec(k, d1(1), d1(1), 0, &[buf(&mut o)]).unwrap();
    let n = o[15] as usize;
    o[..n].to_vec()
}

#[test]
fn for_loops_up_down_and_step() {
    let up = for_kernel(Type::I32, i32c(-5), i32c(5), 3, ForDir::Up);
    assert_eq!(run_for(&up), vec![-5, -2, 1, 4]);
    let down = for_kernel(Type::I32, i32c(-5), i32c(5), 3, ForDir::Down);
    assert_eq!(run_for(&down), vec![4, 1, -2, -5]);
    let down1 = for_kernel(Type::I32, i32c(-3), i32c(0), 1, ForDir::Down);
    assert_eq!(run_for(&down1), vec![-1, -2, -3]);
    let empty = for_kernel(Type::U32, u32c(5), u32c(2), 1, ForDir::Up);
    assert_eq!(run_for(&empty), Vec::<i64>::new());
    let empty_down = for_kernel(Type::U32, u32c(5), u32c(5), 1, ForDir::Down);
    assert_eq!(run_for(&empty_down), Vec::<i64>::new());
    // Near the ends of the type: no overflow, no extra iteration.
    let top = for_kernel(Type::I32, i32c(i32::MAX - 3), i32c(i32::MAX), 2, ForDir::Up);
    assert_eq!(
        run_for(&top),
        vec![i32::MAX as i64 - 3, i32::MAX as i64 - 1]
    );
    let bottom = for_kernel(
        Type::I32,
        i32c(i32::MIN),
        i32c(i32::MIN + 3),
        2,
        ForDir::Down,
    );
    assert_eq!(run_for(&bottom), vec![i32::MIN as i64 + 2, i32::MIN as i64]);
    let u = for_kernel(Type::U32, u32c(0), u32c(3), 1, ForDir::Down);
    assert_eq!(run_for(&u), vec![2, 1, 0]);
}

#[test]
fn for_step_zero_is_an_error() {
    let k = for_kernel(Type::I32, i32c(0), i32c(4), 0, ForDir::Up);
    let mut o = vec![0i64; 16];
    let err = exec(&k, d1(1), d1(2), 0, &[buf(&mut o)]).unwrap_err();
    assert_eq!(err.kind, InterpErrorKind::ZeroStep);
    assert_eq!(err.thread, [0, 0, 0]);
}

/// `let mut i = 0; let mut s = 0; while true { i += 1; if i % 2 == 0 { continue } if i > 9 { break } s += i } out = [s, i]`
#[test]
fn while_with_break_and_continue() {
    let mut b = B::default();
    let out = b.buf_mut("out", Type::I32);
    let i = b.local("i", Type::I32);
    let s = b.local("s", Type::I32);
    let body = vec![
        let_(&i, i32c(0)),
        let_(&s, i32c(0)),
        st(StmtKind::While {
            cond: boolc(true),
            body: vec![
                set(&i, add(i.clone(), i32c(1))),
                if_(
                    bin(BinOp::Eq, bin(BinOp::Rem, i.clone(), i32c(2)), i32c(0)),
                    vec![st(StmtKind::Continue)],
                    None,
                ),
                if_(
                    bin(BinOp::Gt, i.clone(), i32c(9)),
                    vec![st(StmtKind::Break)],
                    None,
                ),
                set(&s, add(s.clone(), i.clone())),
            ],
        }),
        store(&out, u32c(0), s.clone()),
        store(&out, u32c(1), i.clone()),
    ];
    let k = b.kernel("loop", body);
    let mut o = vec![0i32; 2];
    exec(&k, d1(1), d1(1), 0, &[buf(&mut o)]).unwrap();
    assert_eq!(o, vec![1 + 3 + 5 + 7 + 9, 11]);
}

/// `out[i] = if d[i] == 0 { -1 } else { 10 / d[i] }`: the division is never evaluated for 0.
#[test]
fn select_evaluates_only_the_chosen_branch() {
    let mut b = B::default();
    let d = b.buf("d", Type::I32);
    let out = b.buf_mut("out", Type::I32);
    let (i, let_i) = b.global_index();
    let body = vec![
        let_i,
        store(
            &out,
            i.clone(),
            select(
                bin(BinOp::Eq, idx(&d, i.clone()), i32c(0)),
                i32c(-1),
                bin(BinOp::Div, i32c(10), idx(&d, i.clone())),
            ),
        ),
    ];
    let k = b.kernel("sel", body);
    let (mut ds, mut o) = (vec![0, 5, 0, 3], vec![7i32; 4]);
    exec(&k, d1(2), d1(2), 0, &[buf(&mut ds), buf(&mut o)]).unwrap();
    assert_eq!(o, vec![-1, 2, -1, 3]);
}

/// `out[i] = i < x.len() && x[i] > 0`, and `||`, over more threads than `x` has elements.
#[test]
fn short_circuit_guards_out_of_bounds_read() {
    let mut b = B::default();
    let x = b.buf("x", Type::I32);
    let and_out = b.buf_mut("and_out", Type::BOOL);
    let or_out = b.buf_mut("or_out", Type::BOOL);
    let (i, let_i) = b.global_index();
    let body = vec![
        let_i,
        store(
            &and_out,
            i.clone(),
            bin(
                BinOp::LogicalAnd,
                lt(i.clone(), len(&x)),
                bin(BinOp::Gt, idx(&x, i.clone()), i32c(0)),
            ),
        ),
        store(
            &or_out,
            i.clone(),
            bin(
                BinOp::LogicalOr,
                bin(BinOp::Ge, i.clone(), len(&x)),
                bin(BinOp::Eq, idx(&x, i.clone()), i32c(0)),
            ),
        ),
    ];
    let k = b.kernel("guard", body);
    let mut xs = vec![3, 0, -2];
    let (mut a, mut o) = (vec![false; 6], vec![false; 6]);
    exec(
        &k,
        d1(2),
        d1(3),
        0,
        &[buf(&mut xs), buf(&mut a), buf(&mut o)],
    )
    .unwrap();
    assert_eq!(a, vec![true, false, false, false, false, false]);
    assert_eq!(o, vec![false, true, false, true, true, true]);
}

#[test]
fn casts_follow_rust_as() {
    let mut b = B::default();
    let oi = b.buf_mut("oi", Type::I32);
    let ou = b.buf_mut("ou", Type::U32);
    let of = b.buf_mut("of", Type::F32);
    let fx = b.buf("fx", Type::F32);
    let f = |k: u32| idx(&fx, u32c(k));
    let to_i32 = vec![
        cast(f(0), ScalarType::I32), // 3.9
        cast(f(1), ScalarType::I32), // -3.9
        cast(f(2), ScalarType::I32), // 1e10
        cast(f(3), ScalarType::I32), // -1e10
        cast(f(4), ScalarType::I32), // NaN
        cast(f(5), ScalarType::I32), // inf
        cast(i64c(0x1_0000_0005), ScalarType::I32),
        cast(i64c(-1), ScalarType::I32),
        cast(i64c(0x8000_0000), ScalarType::I32),
        cast(boolc(true), ScalarType::I32),
        cast(cast(f(2), ScalarType::F64), ScalarType::I32),
    ];
    let to_u32 = vec![
        cast(f(1), ScalarType::U32), // -3.9 -> 0
        cast(i32c(-1), ScalarType::U32),
        cast(f(4), ScalarType::U32), // NaN -> 0
        cast(f(2), ScalarType::U32), // 1e10 -> MAX
    ];
    let to_f32 = vec![
        cast(u32c(16_777_217), ScalarType::F32),
        cast(u32c(u32::MAX), ScalarType::F32),
        cast(i64c(-(1 << 40) - 1), ScalarType::F32),
        cast(Expr::constant(Const::f64(0.1)), ScalarType::F32),
        cast(cast(f32c(65519.0), ScalarType::F16), ScalarType::F32),
        cast(cast(f32c(65520.0), ScalarType::F16), ScalarType::F32),
        cast(cast(f32c(1.0 / 3.0), ScalarType::F16), ScalarType::F32),
    ];
    let mut body = vec![];
    for (k, e) in to_i32.into_iter().enumerate() {
        body.push(store(&oi, u32c(k as u32), e));
    }
    for (k, e) in to_u32.into_iter().enumerate() {
        body.push(store(&ou, u32c(k as u32), e));
    }
    for (k, e) in to_f32.into_iter().enumerate() {
        body.push(store(&of, u32c(k as u32), e));
    }
    let k = b.kernel("casts", body);
    let mut fxs = vec![3.9f32, -3.9, 1e10, -1e10, f32::NAN, f32::INFINITY];
    let (mut a, mut u, mut c) = (vec![0i32; 11], vec![7u32; 4], vec![0f32; 7]);
    exec(
        &k,
        d1(1),
        d1(1),
        0,
        &[buf(&mut a), buf(&mut u), buf(&mut c), buf(&mut fxs)],
    )
    .unwrap();
    assert_eq!(
        a,
        vec![
            3,
            -3,
            i32::MAX,
            i32::MIN,
            0,
            i32::MAX,
            5,
            -1,
            i32::MIN,
            1,
            i32::MAX
        ]
    );
    assert_eq!(u, vec![0, u32::MAX, 0, u32::MAX]);
    assert_eq!(
        c,
        vec![
            16_777_216.0,
            4_294_967_296.0,
            -1_099_511_627_776.0,
            0.1f32,
            65504.0,
            f32::INFINITY,
            0.333_251_95
        ]
    );
}

#[test]
fn math_functions() {
    let mut b = B::default();
    let o = b.buf_mut("o", Type::F32);
    let x = b.buf("x", Type::F32);
    let v = |k: u32| idx(&x, u32c(k));
    let results = vec![
        math(MathFn::Sqrt, vec![v(0)]),                     // sqrt 2
        math(MathFn::Rsqrt, vec![f32c(4.0)]),               // 0.5
        math(MathFn::Min, vec![v(1), f32c(1.5)]),           // NaN.min(1.5) = 1.5
        math(MathFn::Max, vec![f32c(-1.0), v(1)]),          // -1
        math(MathFn::MulAdd, vec![v(2), v(2), f32c(-1.0)]), // fused
        math(MathFn::Round, vec![f32c(-2.5)]),              // -3 (away from zero)
        math(MathFn::Powi, vec![f32c(2.0), i32c(10)]),
        math(MathFn::Signum, vec![f32c(-0.0)]),
    ];
    let n = results.len();
    let body = results
        .into_iter()
        .enumerate()
        .map(|(k, e)| store(&o, u32c(k as u32), e))
        .collect();
    let k = b.kernel("math", body);
    // x * x - 1 loses the 2^-24 term when rounded before the subtraction.
    let third = 1.0f32 + 2f32.powi(-12);
    let mut xs = vec![2.0f32, f32::NAN, third];
    let mut out = vec![0f32; n];
    exec(&k, d1(1), d1(1), 0, &[buf(&mut out), buf(&mut xs)]).unwrap();
    assert_eq!(
        out,
        vec![
            2f32.sqrt(),
            0.5,
            1.5,
            -1.0,
            third.mul_add(third, -1.0),
            -3.0,
            1024.0,
            -1.0
        ]
    );
    // The fused result differs from the unfused one for this input.
    assert_ne!(out[4], third * third - 1.0);
    assert_eq!(out[4], 2f32.powi(-11) + 2f32.powi(-24));
}

/// `fn madd(a: f32, b: f32, c: f32) -> f32 { let t = a * b; return t + c; }` and
/// `fn get(v: &[f32], i: u32) -> f32 { v[i] }`; `y[i] = madd(a, get(x, i), y[i])`.
#[test]
fn helper_function_call() {
    let mut fb = B::default();
    let pa = fb.param("a", Type::F32, false);
    let pb = fb.param("b", Type::F32, false);
    let pc = fb.param("c", Type::F32, false);
    let t = fb.local("t", Type::F32);
    let madd = fb.function(
        "madd",
        Type::F32,
        vec![let_(&t, mul(pa, pb)), ret(add(t, pc))],
    );
    let mut gb = B::default();
    let v = gb.buf("v", Type::F32);
    let gi = gb.param("i", Type::U32, false);
    let get = gb.function("get", Type::F32, vec![ret(idx(&v, gi))]);

    let mut b = B::default();
    let a = b.param("a", Type::F32, false);
    let x = b.buf("x", Type::F32);
    let y = b.buf_mut("y", Type::F32);
    let (i, let_i) = b.global_index();
    let body = vec![
        let_i,
        store(
            &y,
            i.clone(),
            call(
                &madd,
                vec![
                    a,
                    call(&get, vec![x.clone(), i.clone()]),
                    idx(&y, i.clone()),
                ],
            ),
        ),
    ];
    let mut k = b.kernel("calls", body);
    k.functions = vec![madd, get];

    let mut xs: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let mut ys = vec![1.0f32; 6];
    exec(
        &k,
        d1(2),
        d1(3),
        0,
        &[f32a(2.0), buf(&mut xs), buf(&mut ys)],
    )
    .unwrap();
    assert_eq!(ys, vec![1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);

    // A fault inside the helper names the kernel's buffer and the launching thread.
    let mut short = vec![0.0f32; 4];
    let err = exec(
        &k,
        d1(2),
        d1(3),
        0,
        &[f32a(2.0), buf(&mut short), buf(&mut ys)],
    )
    .unwrap_err();
    assert_eq!(err.kind, oob(MemorySpace::Global, "x", 4, 4));
    assert_eq!((err.block, err.thread), ([1, 0, 0], [1, 0, 0]));
}

/// `out[gy * width + gx] = gx + 1000 * gy` on a 2-D grid.
#[test]
fn two_dimensional_launch() {
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let w = b.param("width", Type::U32, false);
    let (gx, gy) = (b.local("gx", Type::U32), b.local("gy", Type::U32));
    let body = vec![
        let_(&gx, gid(Axis::X)),
        let_(&gy, gid(Axis::Y)),
        store(
            &out,
            add(mul(gy.clone(), w), gx.clone()),
            add(gx.clone(), mul(u32c(1000), gy.clone())),
        ),
    ];
    let k = b.kernel("grid2d", body);
    let (width, height) = (8u32, 6u32);
    let mut o = vec![0u32; (width * height) as usize];
    exec(
        &k,
        [2, 3, 1],
        [4, 2, 1],
        0,
        &[buf(&mut o), NativeArg::Scalar(ScalarArg::U32(width))],
    )
    .unwrap();
    for y in 0..height {
        for x in 0..width {
            assert_eq!(o[(y * width + x) as usize], x + 1000 * y, "at ({x}, {y})");
        }
    }
}

#[test]
fn index_intrinsics_in_3d() {
    // out[linear global id] = block_idx_z * 100 + thread_idx_y * 10 + grid_dim_z
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let ii = |i: Intrinsic| intr(i, vec![], Type::U32);
    let lin = add(
        gid(Axis::X),
        mul(
            ii(Intrinsic::GlobalSize(Axis::X)),
            add(
                gid(Axis::Y),
                mul(ii(Intrinsic::GlobalSize(Axis::Y)), gid(Axis::Z)),
            ),
        ),
    );
    let v = add(
        add(
            mul(ii(Intrinsic::BlockIdx(Axis::Z)), u32c(100)),
            mul(ii(Intrinsic::ThreadIdx(Axis::Y)), u32c(10)),
        ),
        ii(Intrinsic::GridDim(Axis::Z)),
    );
    let k = b.kernel("ids", vec![store(&out, lin, v)]);
    let mut o = vec![0u32; (2 * 2) * (3 * 2 * 2)];
    exec(&k, [1, 2, 3], [2, 2, 1], 0, &[buf(&mut o)]).unwrap();
    // (gx, gy, gz) -> index gx + 2 * (gy + 4 * gz)
    for gz in 0..3u32 {
        for gy in 0..4u32 {
            for gx in 0..2u32 {
                let want = gz * 100 + (gy % 2) * 10 + 3;
                assert_eq!(o[(gx + 2 * (gy + 4 * gz)) as usize], want);
            }
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Particle {
    alive: bool,
    x: f64,
    n: i32,
}

/// `out[i].x = inp[i].x * 2.0; out[i].n = inp[i].n + 1; out[i].alive = !inp[i].alive`
#[test]
fn record_buffers_use_c_layout() {
    let rec = record(
        "Particle",
        &[("alive", Type::BOOL), ("x", Type::F64), ("n", Type::I32)],
    );
    let pt = Type::Record("Particle".into());
    let mut b = B::default();
    let inp = b.buf("inp", pt.clone());
    let out = b.buf_mut("out", pt.clone());
    let (i, let_i) = b.global_index();
    let p = b.local("p", pt.clone());
    let fld = |base: LValue, name: &str| LValue::Field {
        base: Box::new(base),
        field: name.into(),
    };
    let out_i = || LValue::Index {
        base: Box::new(LValue::Var(id(&out))),
        index: i.clone(),
    };
    let body = vec![
        let_i,
        // Whole-record copy first, then field updates (through a local and in place).
        let_(&p, idx(&inp, i.clone())),
        st(StmtKind::Assign {
            target: fld(LValue::Var(id(&p)), "x"),
            value: mul(
                field(p.clone(), "x", Type::F64),
                Expr::constant(Const::f64(2.0)),
            ),
        }),
        st(StmtKind::Assign {
            target: out_i(),
            value: p.clone(),
        }),
        st(StmtKind::Assign {
            target: fld(out_i(), "n"),
            value: add(field(idx(&inp, i.clone()), "n", Type::I32), i32c(1)),
        }),
        st(StmtKind::Assign {
            target: fld(out_i(), "alive"),
            value: Expr {
                kind: ExprKind::Unary {
                    op: UnOp::Not,
                    operand: Box::new(field(idx(&inp, i.clone()), "alive", Type::BOOL)),
                },
                ty: Type::BOOL,
            },
        }),
    ];
    let mut k = b.kernel("particles", body);
    k.records = vec![rec];
    assert_eq!(std::mem::size_of::<Particle>(), 24);
    let mut ins: Vec<Particle> = (0..5)
        .map(|i| Particle {
            alive: i % 2 == 0,
            x: i as f64 + 0.25,
            n: 10 * i,
        })
        .collect();
    let mut outs = vec![
        Particle {
            alive: false,
            x: 0.0,
            n: 0
        };
        5
    ];
    exec(&k, d1(1), d1(5), 0, &[buf(&mut ins), buf(&mut outs)]).unwrap();
    for (i, o) in outs.iter().enumerate() {
        let i = i as i32;
        assert_eq!(
            *o,
            Particle {
                alive: i % 2 != 0,
                x: (i as f64 + 0.25) * 2.0,
                n: 10 * i + 1
            }
        );
    }
}

/// `old[i] = atomic_add(counter, 0, 1); atomic_add(fsum, 0, 0.5)` over 1000 threads.
#[test]
fn atomics_on_global_buffers() {
    let mut b = B::default();
    let counter = b.buf_mut("counter", Type::U32);
    let fsum = b.buf_mut("fsum", Type::F32);
    let old = b.buf_mut("old", Type::U32);
    let (i, let_i) = b.global_index();
    let body = vec![
        let_i,
        if_(
            lt(i.clone(), len(&old)),
            vec![
                store(
                    &old,
                    i.clone(),
                    intr(
                        Intrinsic::Atomic(AtomicOp::Add),
                        vec![counter.clone(), u32c(0), u32c(1)],
                        Type::U32,
                    ),
                ),
                st(StmtKind::Expr(intr(
                    Intrinsic::Atomic(AtomicOp::Add),
                    vec![fsum.clone(), u32c(0), f32c(0.5)],
                    Type::F32,
                ))),
                st(StmtKind::Expr(intr(
                    Intrinsic::Atomic(AtomicOp::Max),
                    vec![counter.clone(), u32c(1), i.clone()],
                    Type::U32,
                ))),
            ],
            None,
        ),
    ];
    let k = b.kernel("atomics", body);
    let (mut c, mut f, mut o) = (vec![0u32; 2], vec![0f32; 1], vec![0u32; 1000]);
    exec(
        &k,
        d1(8),
        d1(128),
        0,
        &[buf(&mut c), buf(&mut f), buf(&mut o)],
    )
    .unwrap();
    assert_eq!(c, vec![1000, 999]);
    assert_eq!(f[0], 500.0);
    o.sort_unstable();
    assert_eq!(o, (0..1000).collect::<Vec<u32>>());
}

#[test]
fn match_on_integers() {
    // out[i] = match i { 0 => 10, 1 | 2 => 20, 3..=5 => 30, _ => 40 }
    let mut b = B::default();
    let out = b.buf_mut("out", Type::I32);
    let (i, let_i) = b.global_index();
    let m = Expr {
        kind: ExprKind::Match {
            scrutinee: Box::new(i.clone()),
            arms: vec![
                (Pattern::Int(Const::U32(0)), i32c(10)),
                (
                    Pattern::Or(vec![
                        Pattern::Int(Const::U32(1)),
                        Pattern::Int(Const::U32(2)),
                    ]),
                    i32c(20),
                ),
                (Pattern::Range(Const::U32(3), Const::U32(5)), i32c(30)),
                (Pattern::Wildcard, i32c(40)),
            ],
        },
        ty: Type::I32,
    };
    let k = b.kernel("m", vec![let_i, store(&out, i.clone(), m)]);
    let mut o = vec![0i32; 8];
    exec(&k, d1(1), d1(8), 0, &[buf(&mut o)]).unwrap();
    assert_eq!(o, vec![10, 20, 20, 30, 30, 30, 40, 40]);
}

#[test]
fn bad_arguments_are_reported_before_running() {
    let k = saxpy();
    let mut x = vec![0.0f32; 4];
    let mut y = vec![0.0f64; 4];
    let err = exec(&k, d1(1), d1(4), 0, &[f32a(1.0), buf(&mut x), buf(&mut y)]).unwrap_err();
    assert!(matches!(
        &err.kind,
        InterpErrorKind::BadArgument { param, .. } if param == "y"
    ));
    assert!(
        err.to_string()
            .starts_with("kernel `saxpy`: bad argument `y`"),
        "{err}"
    );
    let mut y = vec![0.0f32; 4];
    let err = exec(&k, d1(1), d1(4), 0, &[i32a(1), buf(&mut x), buf(&mut y)]).unwrap_err();
    assert!(matches!(
        &err.kind,
        InterpErrorKind::BadArgument { param, .. } if param == "a"
    ));
    let err = exec(&k, d1(1), d1(4), 0, &[f32a(1.0), buf(&mut x)]).unwrap_err();
    assert!(matches!(err.kind, InterpErrorKind::BadArgument { .. }));
}

#[test]
fn mutable_params_are_reset_for_each_thread() {
    // fn k(mut a: i32, out: &mut [i32]) { a += thread_idx_x() as i32; out[tid] = a; }
    let mut b = B::default();
    let a = b.param("a", Type::I32, true);
    let out = b.buf_mut("out", Type::I32);
    let t = intr(Intrinsic::ThreadIdx(Axis::X), vec![], Type::U32);
    let body = vec![
        set(&a, add(a.clone(), cast(t.clone(), ScalarType::I32))),
        store(&out, t, a.clone()),
    ];
    let k = b.kernel("reset", body);
    let mut o = vec![0i32; 4];
    exec(&k, d1(1), d1(4), 0, &[i32a(100), buf(&mut o)]).unwrap();
    assert_eq!(o, vec![100, 101, 102, 103]);
}

/// Throughput smoke test (`cargo test --release -- --ignored --nocapture interp_throughput`):
/// saxpy over 4 Mi elements and a loop-heavy kernel, timed.
#[test]
#[ignore]
fn interp_throughput() {
    // SPOC_INTERP_BENCH_SHIFT scales both problems down (for instruction-counting profilers).
    let shift: u32 = std::env::var("SPOC_INTERP_BENCH_SHIFT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let n = 1 << (22 - shift);
    let mut x = vec![1.0f32; n];
    let mut y = vec![2.0f32; n];
    let k = CompiledKernel::new(&saxpy()).unwrap();
    let t = std::time::Instant::now();
    k.execute(
        d1((n / 256) as u32),
        d1(256),
        0,
        &[f32a(2.0), buf(&mut x), buf(&mut y)],
    )
    .unwrap();
    let dt = t.elapsed();
    assert!(y.iter().all(|&v| v == 4.0));
    println!(
        "saxpy: {n} threads in {dt:?} ({:.1} M threads/s)",
        n as f64 / dt.as_secs_f64() / 1e6
    );

    // let mut s = 0.0; for j in 0..256 { s = s * 0.5 + x[(i + j) % n]; } y[i] = s;
    let mut b = B::default();
    let x = b.buf("x", Type::F32);
    let y = b.buf_mut("y", Type::F32);
    let (i, let_i) = b.global_index();
    let s = b.local("s", Type::F32);
    let j = b.local("j", Type::U32);
    let body = vec![
        let_i,
        let_(&s, f32c(0.0)),
        for_(
            &j,
            u32c(0),
            u32c(256),
            1,
            ForDir::Up,
            vec![set(
                &s,
                add(
                    mul(s.clone(), f32c(0.5)),
                    idx(&x, bin(BinOp::Rem, add(i.clone(), j.clone()), len(&x))),
                ),
            )],
        ),
        store(&y, i.clone(), s.clone()),
    ];
    let k = CompiledKernel::new(&b.kernel("loopy", body)).unwrap();
    let m = 1 << (16 - shift);
    let mut xs = vec![1.0f32; m];
    let mut ys = vec![0.0f32; m];
    let t = std::time::Instant::now();
    k.execute(
        d1((m / 256) as u32),
        d1(256),
        0,
        &[buf(&mut xs), buf(&mut ys)],
    )
    .unwrap();
    let dt = t.elapsed();
    assert!(ys.iter().all(|&v| (v - 2.0).abs() < 1e-6));
    println!(
        "loop: {} iterations in {dt:?} ({:.1} M iterations/s)",
        m * 256,
        (m * 256) as f64 / dt.as_secs_f64() / 1e6
    );
}

/// `enum Shape { Circle(f32), Rect(f32, f32), Empty }`; builds one per thread and matches on it
/// (expression arms binding the payload, and a statement match).
#[test]
fn variants_and_match_bindings() {
    use spoc_testkit::ir::variant_def;
    let shape = Type::Variant("Shape".into());
    let def = variant_def(
        "Shape",
        vec![
            ("Circle", vec![Type::F32]),
            ("Rect", vec![Type::F32, Type::F32]),
            ("Empty", vec![]),
        ],
    );
    let lit = |case: &str, payload: Vec<Expr>| Expr {
        kind: ExprKind::VariantLit {
            variant: "Shape".into(),
            case: case.into(),
            payload,
        },
        ty: Type::Variant("Shape".into()),
    };
    let mut b = B::default();
    let out = b.buf_mut("out", Type::F32);
    let kinds = b.buf_mut("kinds", Type::I32);
    let (i, let_i) = b.global_index();
    let s = b.0.local("s", shape.clone(), false);
    let r = b.0.local("r", Type::F32, false);
    let (w, h) = (
        b.0.local("w", Type::F32, false),
        b.0.local("h", Type::F32, false),
    );
    let fi = cast(i.clone(), ScalarType::F32);
    let case = |c: &str, binds: Vec<&Expr>| Pattern::Case {
        variant: "Shape".into(),
        case: c.into(),
        bindings: binds.into_iter().map(id).collect(),
    };
    let body = vec![
        let_i,
        // s = match i % 3 { 0 => Circle(i), 1 => Rect(i, 2), _ => Empty }
        let_(
            &s,
            Expr {
                kind: ExprKind::Match {
                    scrutinee: Box::new(bin(BinOp::Rem, i.clone(), u32c(3))),
                    arms: vec![
                        (Pattern::Int(Const::U32(0)), lit("Circle", vec![fi.clone()])),
                        (
                            Pattern::Int(Const::U32(1)),
                            lit("Rect", vec![fi.clone(), f32c(2.0)]),
                        ),
                        (Pattern::Wildcard, lit("Empty", vec![])),
                    ],
                },
                ty: shape.clone(),
            },
        ),
        store(
            &out,
            i.clone(),
            Expr {
                kind: ExprKind::Match {
                    scrutinee: Box::new(s.clone()),
                    arms: vec![
                        (case("Circle", vec![&r]), mul(r.clone(), r.clone())),
                        (case("Rect", vec![&w, &h]), mul(w.clone(), h.clone())),
                        (Pattern::Wildcard, f32c(-1.0)),
                    ],
                },
                ty: Type::F32,
            },
        ),
        st(StmtKind::Match {
            scrutinee: s.clone(),
            arms: vec![
                (
                    case("Empty", vec![]),
                    vec![store(&kinds, i.clone(), i32c(2))],
                ),
                (
                    case("Rect", vec![]),
                    vec![store(&kinds, i.clone(), i32c(1))],
                ),
                (Pattern::Wildcard, vec![store(&kinds, i.clone(), i32c(0))]),
            ],
        }),
    ];
    let mut k = b.kernel("shapes", body);
    k.variants = vec![def];
    let (mut o, mut ks) = (vec![0f32; 6], vec![9i32; 6]);
    // `Rect` with no bindings ignores the payload.
    exec(&k, d1(2), d1(3), 0, &[buf(&mut o), buf(&mut ks)]).unwrap();
    assert_eq!(o, vec![0.0, 2.0, -1.0, 9.0, 8.0, -1.0]);
    assert_eq!(ks, vec![0, 1, 2, 0, 1, 2]);
}

/// `let mut m = [[0; 3]; 2]; m[1][2] = 5 + t; m[0][1] = 7; out[t] = m[1][2] * 100 + m[0][1] * 10 + m.len() + m[0].len()`
#[test]
fn nested_local_arrays() {
    let row = array_ty(Type::I32, MemSpace::Local, 3);
    let mat = array_ty(row.clone(), MemSpace::Local, 2);
    let mut b = B::default();
    let out = b.buf_mut("out", Type::I32);
    let t = b.local("t", Type::U32);
    let m = b.local("m", mat.clone());
    let at = |i: u32, j: u32| idx(&idx(&m, u32c(i)), u32c(j));
    let place = |i: u32, j: u32| LValue::Index {
        base: Box::new(LValue::Index {
            base: Box::new(LValue::Var(id(&m))),
            index: u32c(i),
        }),
        index: u32c(j),
    };
    let body = vec![
        let_(&t, gid(Axis::X)),
        let_(&m, repeat(repeat(i32c(0), 3), 2)),
        st(StmtKind::Assign {
            target: place(1, 2),
            value: add(i32c(5), cast(t.clone(), ScalarType::I32)),
        }),
        st(StmtKind::Assign {
            target: place(0, 1),
            value: i32c(7),
        }),
        store(
            &out,
            t.clone(),
            add(
                add(mul(at(1, 2), i32c(100)), mul(at(0, 1), i32c(10))),
                cast(add(len(&m), len(&idx(&m, u32c(0)))), ScalarType::I32),
            ),
        ),
    ];
    let k = b.kernel("nested", body);
    let mut o = vec![0i32; 3];
    exec(&k, d1(1), d1(3), 0, &[buf(&mut o)]).unwrap();
    assert_eq!(o, vec![575, 675, 775]);
}

/// f16 buffers: `out[i] = ((inp[i] as f32) * 3.0) as f16`, bits compared with `half`.
#[test]
fn f16_buffers_load_store_and_cast() {
    use half::f16;
    let mut b = B::default();
    let inp = b.buf("inp", Type::F16);
    let out = b.buf_mut("out", Type::F16);
    let (i, let_i) = b.global_index();
    let body = vec![
        let_i,
        store(
            &out,
            i.clone(),
            cast(
                mul(cast(idx(&inp, i.clone()), ScalarType::F32), f32c(3.0)),
                ScalarType::F16,
            ),
        ),
    ];
    let k = b.kernel("half", body);
    let vals = [0.5f32, -1.25, 30000.0, 0.1];
    let mut ins: Vec<u16> = vals.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
    let mut outs = vec![0u16; 4];
    exec(&k, d1(1), d1(4), 0, &[buf(&mut ins), buf(&mut outs)]).unwrap();
    let got: Vec<f32> = outs.iter().map(|&b| f16::from_bits(b).to_f32()).collect();
    let want: Vec<f32> = ins
        .iter()
        .map(|&b| f16::from_f32(f16::from_bits(b).to_f32() * 3.0).to_f32())
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[0], 1.5);
    assert_eq!(got[2], f32::INFINITY);
}

/// A record passed by value, a helper returning a record, and a field of a call's result:
/// `fn scale(p: Pair, k: i32) -> Pair { Pair { a: p.a * k, b: p.b * k } }`,
/// `out[i] = scale(p, i).b - scale(p, i).a`.
#[test]
fn records_by_value_and_from_helpers() {
    let rec = record("Pair", &[("a", Type::I32), ("b", Type::I64)]);
    let pt = Type::Record("Pair".into());
    let mut fb = B::default();
    let p = fb.param("p", pt.clone(), false);
    let kk = fb.param("k", Type::I32, false);
    let scale = fb.function(
        "scale",
        pt.clone(),
        vec![ret(Expr {
            kind: ExprKind::RecordLit {
                record: "Pair".into(),
                fields: vec![
                    mul(field(p.clone(), "a", Type::I32), kk.clone()),
                    mul(
                        field(p.clone(), "b", Type::I64),
                        cast(kk.clone(), ScalarType::I64),
                    ),
                ],
            },
            ty: pt.clone(),
        })],
    );
    let mut b = B::default();
    let p = b.param("p", pt.clone(), false);
    let out = b.buf_mut("out", Type::I64);
    let (i, let_i) = b.global_index();
    let ki = cast(i.clone(), ScalarType::I32);
    let body = vec![
        let_i,
        store(
            &out,
            i.clone(),
            bin(
                BinOp::Sub,
                field(call(&scale, vec![p.clone(), ki.clone()]), "b", Type::I64),
                cast(
                    field(call(&scale, vec![p.clone(), ki.clone()]), "a", Type::I32),
                    ScalarType::I64,
                ),
            ),
        ),
    ];
    let mut k = b.kernel("pairs", body);
    k.records = vec![rec];
    k.functions = vec![scale];
    #[repr(C)]
    struct Pair {
        a: i32,
        b: i64,
    }
    let mut arg = [Pair { a: 3, b: 1 << 33 }];
    let mut o = vec![0i64; 4];
    exec(&k, d1(1), d1(4), 0, &[buf(&mut arg), buf(&mut o)]).unwrap();
    let want: Vec<i64> = (0..4).map(|i| (1i64 << 33) * i - 3 * i).collect();
    assert_eq!(o, want);
}

/// `atomic_compare_exchange(flag, 0, 0, tid + 1)` lets exactly one thread in; `atomic_min`
/// on i32 and `atomic_xor` on i64.
#[test]
fn atomic_cas_min_xor() {
    let mut b = B::default();
    let flag = b.buf_mut("flag", Type::U32);
    let fmin = b.buf_mut("fmin", Type::I32);
    let bits = b.buf_mut("bits", Type::I64);
    let wins = b.buf_mut("wins", Type::U32);
    let (i, let_i) = b.global_index();
    let prev = b.local("prev", Type::U32);
    let body = vec![
        let_i,
        let_(
            &prev,
            intr(
                Intrinsic::Atomic(AtomicOp::CompareExchange),
                vec![flag.clone(), u32c(0), u32c(0), add(i.clone(), u32c(1))],
                Type::U32,
            ),
        ),
        if_(
            bin(BinOp::Eq, prev.clone(), u32c(0)),
            vec![st(StmtKind::Expr(intr(
                Intrinsic::Atomic(AtomicOp::Add),
                vec![wins.clone(), u32c(0), u32c(1)],
                Type::U32,
            )))],
            None,
        ),
        st(StmtKind::Expr(intr(
            Intrinsic::Atomic(AtomicOp::Min),
            vec![
                fmin.clone(),
                u32c(0),
                bin(BinOp::Sub, i32c(10), cast(i.clone(), ScalarType::I32)),
            ],
            Type::I32,
        ))),
        st(StmtKind::Expr(intr(
            Intrinsic::Atomic(AtomicOp::Xor),
            vec![bits.clone(), u32c(0), bin(BinOp::Shl, i64c(1), i.clone())],
            Type::I64,
        ))),
    ];
    let k = b.kernel("cas", body);
    let (mut f, mut m, mut x, mut w) = (vec![0u32], vec![i32::MAX], vec![0i64], vec![0u32]);
    exec(
        &k,
        d1(4),
        d1(16),
        0,
        &[buf(&mut f), buf(&mut m), buf(&mut x), buf(&mut w)],
    )
    .unwrap();
    assert_eq!(w[0], 1);
    assert!((1..=64).contains(&f[0]));
    assert_eq!(m[0], 10 - 63);
    assert_eq!(x[0], -1); // every bit of 0..64 toggled once
}

// ---- barriers, shared memory, warp operations ---------------------------------------------

fn tid(a: Axis) -> Expr {
    intr(Intrinsic::ThreadIdx(a), vec![], Type::U32)
}
fn bid(a: Axis) -> Expr {
    intr(Intrinsic::BlockIdx(a), vec![], Type::U32)
}
fn bdim(a: Axis) -> Expr {
    intr(Intrinsic::BlockDim(a), vec![], Type::U32)
}
fn lane() -> Expr {
    intr(Intrinsic::LaneId, vec![], Type::U32)
}
fn sync() -> Stmt {
    st(StmtKind::Barrier)
}
fn at(mut s: Stmt, line: u32, column: u32) -> Stmt {
    s.loc = Some(spoc_ir::SrcLoc { line, column });
    s
}
fn shfl(k: spoc_ir::ShuffleKind, v: Expr, lane: Expr) -> Expr {
    let ty = v.ty.clone();
    intr(Intrinsic::Shuffle(k), vec![v, lane], ty)
}
fn atomic_add(array: &Expr, i: Expr, v: Expr) -> Stmt {
    let ty = v.ty.clone();
    st(StmtKind::Expr(intr(
        Intrinsic::Atomic(AtomicOp::Add),
        vec![array.clone(), i, v],
        ty,
    )))
}
fn while_(cond: Expr, body: Vec<Stmt>) -> Stmt {
    st(StmtKind::While { cond, body })
}

/// A block-wide tree reduction in a shared array of `block` f32, one partial sum per block:
/// ```text
/// let tile = shared_array::<f32, BLOCK>(); let t = thread_idx_x(); let i = global_id_x();
/// tile[t] = if i < x.len() { x[i] } else { 0.0 }; sync_threads();
/// let mut s = block_dim_x() / 2;
/// while s > 0 { if t < s { tile[t] += tile[t + s]; } sync_threads(); s /= 2; }
/// if t == 0 { out[block_idx_x()] = tile[0]; }
/// ```
fn reduce_kernel(block: u32) -> Kernel {
    let mut b = B::default();
    let x = b.buf("x", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let tile = b.shared("tile", Type::F32, Some(block));
    let t = b.local("t", Type::U32);
    let (i, let_i) = b.global_index();
    let s = b.local("s", Type::U32);
    let body = vec![
        let_(&t, tid(Axis::X)),
        let_i,
        store(
            &tile,
            t.clone(),
            select(lt(i.clone(), len(&x)), idx(&x, i.clone()), f32c(0.0)),
        ),
        sync(),
        let_(&s, bin(BinOp::Div, bdim(Axis::X), u32c(2))),
        while_(
            bin(BinOp::Gt, s.clone(), u32c(0)),
            vec![
                if_(
                    lt(t.clone(), s.clone()),
                    vec![store(
                        &tile,
                        t.clone(),
                        add(idx(&tile, t.clone()), idx(&tile, add(t.clone(), s.clone()))),
                    )],
                    None,
                ),
                sync(),
                set(&s, bin(BinOp::Div, s.clone(), u32c(2))),
            ],
        ),
        if_(
            bin(BinOp::Eq, t.clone(), u32c(0)),
            vec![store(&out, bid(Axis::X), idx(&tile, u32c(0)))],
            None,
        ),
    ];
    b.kernel("reduce", body)
}

#[test]
fn shared_memory_tree_reduction_blocks_of_256_and_1024() {
    for block in [256u32, 1024] {
        let grid = 5u32;
        let n = (grid * block - 13) as usize;
        let mut x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32).collect();
        let expect: Vec<f32> = (0..grid as usize)
            .map(|g| {
                let lo = g * block as usize;
                x[lo..(lo + block as usize).min(n)].iter().sum()
            })
            .collect();
        let mut out = vec![-1.0f32; grid as usize];
        exec(
            &reduce_kernel(block),
            d1(grid),
            d1(block),
            0,
            &[buf(&mut x), buf(&mut out)],
        )
        .unwrap();
        assert_eq!(out, expect, "block {block}");
        assert!(out.iter().all(|&v| v > 100.0));
    }
}

#[test]
fn shared_arrays_are_zeroed_per_block() {
    // Thread 0 of each block adds its block index to tile[0] (no one else writes it): each
    // block must see a fresh zero.
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let tile = b.shared("tile", Type::U32, Some(4));
    let body = vec![
        if_(
            bin(BinOp::Eq, tid(Axis::X), u32c(0)),
            vec![store(
                &tile,
                u32c(0),
                add(idx(&tile, u32c(0)), add(bid(Axis::X), u32c(1))),
            )],
            None,
        ),
        sync(),
        store(&out, gid(Axis::X), idx(&tile, u32c(0))),
    ];
    let k = b.kernel("zeroed", body);
    let mut o = vec![0u32; 12];
    // The zero fill is what the unchecked interpreter reads…
    exec_with(&k, d1(3), d1(4), 0, &[buf(&mut o)], Checks::NONE).unwrap();
    assert_eq!(o, vec![1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    // … and a read of never-written shared memory is an error with the checks on.
    let err = exec_with(&k, d1(3), d1(4), 0, &[buf(&mut o)], Checks::DEFAULT).unwrap_err();
    assert_eq!(
        err.kind,
        InterpErrorKind::UninitializedShared {
            array: "tile".into(),
            index: 0,
            len: 4
        }
    );
    assert_eq!((err.block, err.thread), ([0, 0, 0], [0, 0, 0]));
}

/// A 2-D transpose through a 16 x 17 shared tile (a 2-D shared array lowered to 1-D,
/// `tile[r][c]` = `tile[r * 17 + c]`).
#[test]
fn tile_transpose_through_shared_2d_array() {
    let mut b = B::default();
    let inp = b.buf("inp", Type::F32);
    let out = b.buf_mut("out", Type::F32);
    let w = b.param("w", Type::U32, false);
    let h = b.param("h", Type::U32, false);
    let tile = b.shared("tile", Type::F32, Some(16 * 17));
    let (x, y) = (b.local("x", Type::U32), b.local("y", Type::U32));
    let (x2, y2) = (b.local("x2", Type::U32), b.local("y2", Type::U32));
    let (tx, ty) = (tid(Axis::X), tid(Axis::Y));
    let and = |a, b| bin(BinOp::LogicalAnd, a, b);
    let body = vec![
        let_(&x, add(mul(bid(Axis::X), u32c(16)), tx.clone())),
        let_(&y, add(mul(bid(Axis::Y), u32c(16)), ty.clone())),
        if_(
            and(lt(x.clone(), w.clone()), lt(y.clone(), h.clone())),
            vec![store(
                &tile,
                add(mul(ty.clone(), u32c(17)), tx.clone()),
                idx(&inp, add(mul(y.clone(), w.clone()), x.clone())),
            )],
            None,
        ),
        sync(),
        let_(&x2, add(mul(bid(Axis::Y), u32c(16)), tx.clone())),
        let_(&y2, add(mul(bid(Axis::X), u32c(16)), ty.clone())),
        if_(
            and(lt(x2.clone(), h.clone()), lt(y2.clone(), w.clone())),
            vec![store(
                &out,
                add(mul(y2.clone(), h.clone()), x2.clone()),
                idx(&tile, add(mul(tx, u32c(17)), ty)),
            )],
            None,
        ),
    ];
    let k = b.kernel("transpose", body);
    let (wd, ht) = (48usize, 40usize);
    let mut input: Vec<f32> = (0..wd * ht).map(|i| i as f32).collect();
    let mut o = vec![-1.0f32; wd * ht];
    let u = |v: u32| NativeArg::Scalar(ScalarArg::U32(v));
    exec(
        &k,
        [3, 3, 1],
        [16, 16, 1],
        0,
        &[buf(&mut input), buf(&mut o), u(wd as u32), u(ht as u32)],
    )
    .unwrap();
    for r in 0..ht {
        for c in 0..wd {
            assert_eq!(o[c * ht + r], input[r * wd + c], "r {r} c {c}");
        }
    }
}

/// `let buf = dynamic_shared::<u32>(); let n = buf.len(); if t < n { buf[t] = 2 t }
/// sync_threads(); out[gid] = buf[(t + 1) % n] + 1000 n`.
fn dynamic_kernel(guarded: bool) -> Kernel {
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let dynbuf = b.shared("buf", Type::U32, None);
    let n = b.local("n", Type::U32);
    let t = b.local("t", Type::U32);
    let write = store(&dynbuf, t.clone(), mul(t.clone(), u32c(2)));
    let body = vec![
        let_(&n, len(&dynbuf)),
        let_(&t, tid(Axis::X)),
        if guarded {
            if_(lt(t.clone(), n.clone()), vec![write], None)
        } else {
            write
        },
        sync(),
        store(
            &out,
            gid(Axis::X),
            add(
                idx(&dynbuf, bin(BinOp::Rem, add(t.clone(), u32c(1)), n.clone())),
                mul(n.clone(), u32c(1000)),
            ),
        ),
    ];
    b.kernel("dynamic", body)
}

#[test]
fn dynamic_shared_memory_is_sized_by_the_launch() {
    let k = dynamic_kernel(true);
    // 64 bytes = 16 u32 for blocks of 16: every thread writes its slot.
    let mut o = vec![0u32; 32];
    exec(&k, d1(2), d1(16), 64, &[buf(&mut o)]).unwrap();
    let expect: Vec<u32> = (0..32u32)
        .map(|g| 16_000 + ((g % 16 + 1) % 16) * 2)
        .collect();
    assert_eq!(o, expect);
    // 34 bytes = 8 u32 (the rest of a partial element is unused).
    let mut o = vec![0u32; 16];
    exec(&k, d1(1), d1(16), 34, &[buf(&mut o)]).unwrap();
    let expect: Vec<u32> = (0..16u32).map(|t| 8_000 + ((t + 1) % 8) * 2).collect();
    assert_eq!(o, expect);
}

#[test]
fn shared_array_out_of_bounds_names_the_array() {
    let k = dynamic_kernel(false);
    let mut o = vec![0u32; 16];
    let err = exec(&k, d1(1), d1(16), 32, &[buf(&mut o)]).unwrap_err();
    assert_eq!(err.thread, [8, 0, 0]);
    assert_eq!(err.kind, oob(MemorySpace::Shared, "buf", 8, 8));
    // The threads that waited at the barrier never went past it.
    assert_eq!(o, vec![0; 16]);
}

#[test]
fn histogram_with_shared_atomics() {
    // let h = shared_array::<u32, 16>(); if t < 16 { h[t] = 0 } sync_threads();
    // if i < data.len() { atomic_add(&mut h[data[i] % 16], 1) }
    // sync_threads(); if t < 16 { atomic_add(&mut out[t], h[t]) }
    let mut b = B::default();
    let data = b.buf("data", Type::U32);
    let out = b.buf_mut("out", Type::U32);
    let hist = b.shared("h", Type::U32, Some(16));
    let (i, let_i) = b.global_index();
    let t = b.local("t", Type::U32);
    let body = vec![
        let_i,
        let_(&t, tid(Axis::X)),
        if_(
            lt(t.clone(), u32c(16)),
            vec![store(&hist, t.clone(), u32c(0))],
            None,
        ),
        sync(),
        if_(
            lt(i.clone(), len(&data)),
            vec![atomic_add(
                &hist,
                bin(BinOp::Rem, idx(&data, i.clone()), u32c(16)),
                u32c(1),
            )],
            None,
        ),
        sync(),
        if_(
            lt(t.clone(), u32c(16)),
            vec![atomic_add(&out, t.clone(), idx(&hist, t.clone()))],
            None,
        ),
    ];
    let k = b.kernel("histogram", body);
    let n = 250usize;
    let mut d: Vec<u32> = (0..n as u32).map(|v| v * v + 3 * v).collect();
    let mut expect = vec![0u32; 16];
    for v in &d {
        expect[(v % 16) as usize] += 1;
    }
    let mut o = vec![0u32; 16];
    exec(&k, d1(4), d1(64), 0, &[buf(&mut d), buf(&mut o)]).unwrap();
    assert_eq!(o, expect);
    assert_eq!(o.iter().sum::<u32>(), n as u32);
}

#[test]
fn warp_reductions_with_shuffle_down_and_xor() {
    use spoc_ir::ShuffleKind;
    // let v = x[i]; let mut s = v; let mut d = v as f32; let mut off = 16;
    // while off > 0 { s += shuffle_down(s, off); d += shuffle_xor(d, off); off /= 2; }
    // if lane_id() == 0 { down[i / 32] = s; } all[i] = d;
    let mut b = B::default();
    let x = b.buf("x", Type::I32);
    let down = b.buf_mut("down", Type::I32);
    let all = b.buf_mut("all", Type::F32);
    let (i, let_i) = b.global_index();
    let s = b.local("s", Type::I32);
    let d = b.local("d", Type::F32);
    let off = b.local("off", Type::U32);
    let body = vec![
        let_i,
        let_(&s, idx(&x, i.clone())),
        let_(&d, cast(idx(&x, i.clone()), ScalarType::F32)),
        let_(&off, u32c(16)),
        while_(
            bin(BinOp::Gt, off.clone(), u32c(0)),
            vec![
                set(
                    &s,
                    add(s.clone(), shfl(ShuffleKind::Down, s.clone(), off.clone())),
                ),
                set(
                    &d,
                    add(d.clone(), shfl(ShuffleKind::Xor, d.clone(), off.clone())),
                ),
                set(&off, bin(BinOp::Div, off.clone(), u32c(2))),
            ],
        ),
        if_(
            bin(BinOp::Eq, lane(), u32c(0)),
            vec![store(
                &down,
                bin(BinOp::Div, i.clone(), u32c(32)),
                s.clone(),
            )],
            None,
        ),
        store(&all, i.clone(), d.clone()),
    ];
    let k = b.kernel("warp_reduce", body);
    let n = 128usize;
    let mut xs: Vec<i32> = (0..n as i32).map(|v| v * 3 - 50).collect();
    let sums: Vec<i32> = xs.chunks(32).map(|c| c.iter().sum()).collect();
    let (mut dn, mut al) = (vec![0i32; 4], vec![0.0f32; n]);
    exec(
        &k,
        d1(2),
        d1(64),
        0,
        &[buf(&mut xs), buf(&mut dn), buf(&mut al)],
    )
    .unwrap();
    assert_eq!(dn, sums);
    let expect: Vec<f32> = (0..n).map(|i| sums[i / 32] as f32).collect();
    assert_eq!(al, expect);
}

#[test]
fn vote_ballot_shuffle_index_warp_size_and_lane_id() {
    use spoc_ir::ShuffleKind;
    // p = x[i] > 0; any[i] = vote_any(p); all[i] = vote_all(p); bal[i] = ballot(p);
    // bc[i] = shuffle(x[i] as f64, 5) ; ws[i] = warp_size() * 100 + lane_id();
    // if lane_id() < 8 { part[i] = ballot(true) }
    let mut b = B::default();
    let x = b.buf("x", Type::I32);
    let any = b.buf_mut("any", Type::U32);
    let all = b.buf_mut("all", Type::U32);
    let bal = b.buf_mut("bal", Type::U32);
    let bc = b.buf_mut("bc", Type::F64);
    let ws = b.buf_mut("ws", Type::U32);
    let part = b.buf_mut("part", Type::U32);
    let (i, let_i) = b.global_index();
    let p = b.local("p", Type::BOOL);
    let body = vec![
        let_i,
        let_(&p, bin(BinOp::Gt, idx(&x, i.clone()), i32c(0))),
        store(
            &any,
            i.clone(),
            cast(
                intr(Intrinsic::VoteAny, vec![p.clone()], Type::BOOL),
                ScalarType::U32,
            ),
        ),
        store(
            &all,
            i.clone(),
            cast(
                intr(Intrinsic::VoteAll, vec![p.clone()], Type::BOOL),
                ScalarType::U32,
            ),
        ),
        store(
            &bal,
            i.clone(),
            intr(Intrinsic::Ballot, vec![p.clone()], Type::U32),
        ),
        store(
            &bc,
            i.clone(),
            shfl(
                ShuffleKind::Index,
                cast(idx(&x, i.clone()), ScalarType::F64),
                u32c(5),
            ),
        ),
        store(
            &ws,
            i.clone(),
            add(
                mul(intr(Intrinsic::WarpSize, vec![], Type::U32), u32c(100)),
                lane(),
            ),
        ),
        if_(
            lt(lane(), u32c(8)),
            vec![store(
                &part,
                i.clone(),
                intr(Intrinsic::Ballot, vec![boolc(true)], Type::U32),
            )],
            None,
        ),
    ];
    let k = b.kernel("votes", body);
    // Warp 0: lanes 3 and 17 positive; warp 1: all positive; warp 2: none.
    let n = 96usize;
    let mut xs: Vec<i32> = (0..n)
        .map(|i| match i / 32 {
            0 if i == 3 || i == 17 => 7,
            0 => -1,
            1 => i as i32,
            _ => -(i as i32),
        })
        .collect();
    let mut outs: Vec<Vec<u32>> = vec![vec![9; n]; 5];
    let mut bcs = vec![0.0f64; n];
    let [a, l, bl, w, pt] = &mut outs[..] else {
        unreachable!()
    };
    exec(
        &k,
        d1(1),
        d1(n as u32),
        0,
        &[
            buf(&mut xs),
            buf(a),
            buf(l),
            buf(bl),
            buf(&mut bcs),
            buf(w),
            buf(pt),
        ],
    )
    .unwrap();
    for i in 0..n {
        let (wp, ln) = (i / 32, (i % 32) as u32);
        let (ea, el, eb) = match wp {
            0 => (1, 0, (1u32 << 3) | (1 << 17)),
            1 => (1, 1, u32::MAX),
            _ => (0, 0, 0),
        };
        assert_eq!((a[i], l[i], bl[i]), (ea, el, eb), "thread {i}");
        assert_eq!(bcs[i], xs[wp * 32 + 5] as f64, "thread {i}");
        assert_eq!(w[i], 3200 + ln);
        assert_eq!(pt[i], if ln < 8 { 0xff } else { 9 }, "thread {i}");
    }
}

#[test]
fn divergent_barriers_are_an_error() {
    // if t < 10 { sync_threads() /* line 4 */ } else { sync_threads() /* line 6 */ }
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let body = vec![
        if_(
            lt(tid(Axis::X), u32c(10)),
            vec![at(sync(), 4, 9)],
            Some(vec![at(sync(), 6, 9)]),
        ),
        store(&out, gid(Axis::X), u32c(1)),
    ];
    let k = b.kernel("diverge", body);
    let mut o = vec![0u32; 64];
    let err = exec(&k, d1(2), d1(32), 0, &[buf(&mut o)]).unwrap_err();
    assert_eq!(err.block, [0, 0, 0]);
    assert_eq!(err.thread, [0, 0, 0]);
    let InterpErrorKind::BarrierDivergence { detail, .. } = &err.kind else {
        panic!("{err}")
    };
    assert!(
        detail.contains("10 threads [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), … 6 more] wait at the barrier at `sync_threads()` at line 4, column 9"),
        "{detail}"
    );
    assert!(detail.contains("22 threads [(10, 0, 0),"), "{detail}");
    assert!(detail.contains("line 6, column 9"), "{detail}");
    assert_eq!(o, vec![0; 64]);
    let shown = err.to_string();
    assert!(shown.contains("barrier divergence"), "{shown}");
}

#[test]
fn barrier_after_an_early_return_is_an_error() {
    // if t == 3 { return; } sync_threads(); out[t] = 1;
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let body = vec![
        if_(
            bin(BinOp::Eq, tid(Axis::X), u32c(3)),
            vec![st(StmtKind::Return(None))],
            None,
        ),
        sync(),
        store(&out, tid(Axis::X), u32c(1)),
    ];
    let k = b.kernel("early", body);
    let mut o = vec![0u32; 8];
    let err = exec(&k, d1(1), d1(8), 0, &[buf(&mut o)]).unwrap_err();
    let InterpErrorKind::BarrierDivergence { detail, .. } = &err.kind else {
        panic!("{err}")
    };
    assert!(detail.contains("7 threads"), "{detail}");
    assert!(
        detail.contains("1 thread [(3, 0, 0)] has finished"),
        "{detail}"
    );
    assert_eq!(o, vec![0; 8]);
}

#[test]
fn shuffle_from_an_inactive_lane_is_an_error() {
    use spoc_ir::ShuffleKind;
    // let mut v = lane_id(); if lane_id() < 16 { v = shuffle_xor(v, 16); } out[i] = v;
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let v = b.local("v", Type::U32);
    let body = vec![
        let_(&v, lane()),
        if_(
            lt(lane(), u32c(16)),
            vec![at(
                set(&v, shfl(ShuffleKind::Xor, v.clone(), u32c(16))),
                12,
                17,
            )],
            None,
        ),
        store(&out, gid(Axis::X), v.clone()),
    ];
    let k = b.kernel("inactive", body);
    let mut o = vec![0u32; 64];
    let err = exec(&k, d1(1), d1(64), 0, &[buf(&mut o)]).unwrap_err();
    assert_eq!(err.thread, [0, 0, 0]);
    assert_eq!(
        err.kind,
        InterpErrorKind::InactiveLane {
            op: "shuffle_xor".into(),
            site: "`shuffle_xor()` at line 12, column 17".into(),
            lane: 0,
            src_lane: 16,
            absent: false,
        }
    );
    assert!(
        err.to_string()
            .contains("lane 0 reads lane 16, which is inactive"),
        "{err}"
    );
}

#[test]
fn shared_array_passed_to_a_helper_and_barrier_in_a_helper() {
    // fn bump(s: shared [u32], t: u32) { s[t] = t + 1; sync_threads(); }   (helper)
    // kernel: bump(tile, t); thread_fence(); out[t] = tile[(t + 1) % 8];
    // The validator refuses barriers in helpers for now; the Interpreter runs them (this test
    // runs the IR unvalidated), and a validated variant below has the barrier in the kernel.
    let mut hb = B::default();
    let sh = hb.param("s", array_ty(Type::U32, MemSpace::Shared, 8), true);
    let ht = hb.param("t", Type::U32, false);
    let helper = hb.function(
        "bump",
        Type::Unit,
        vec![
            store(&sh, ht.clone(), add(ht.clone(), u32c(1))),
            at(sync(), 30, 5),
        ],
    );
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let tile = b.shared("tile", Type::U32, Some(8));
    let body = vec![
        st(StmtKind::Expr(call(
            &helper,
            vec![tile.clone(), tid(Axis::X)],
        ))),
        st(StmtKind::MemFence(spoc_ir::FenceScope::Device)),
        store(
            &out,
            tid(Axis::X),
            idx(&tile, bin(BinOp::Rem, add(tid(Axis::X), u32c(1)), u32c(8))),
        ),
    ];
    let mut k = b.kernel("helper_barrier", body);
    k.functions.push(helper);
    let mut o = vec![0u32; 8];
    execute(&k, d1(1), d1(8), 0, &[buf(&mut o)]).unwrap();
    assert_eq!(o, vec![2, 3, 4, 5, 6, 7, 8, 1]);
    // Validated: the barrier moved from the helper to the kernel, after the call.
    let mut kv = k.clone();
    kv.functions[0].body.pop();
    kv.body.insert(1, sync());
    let mut o = vec![0u32; 8];
    exec(&kv, d1(1), d1(8), 0, &[buf(&mut o)]).unwrap();
    assert_eq!(o, vec![2, 3, 4, 5, 6, 7, 8, 1]);
    // A fault after the helper's barrier: reported for the first faulting thread.
    let err = execute(&k, d1(1), d1(8), 0, &[buf(&mut [0u32; 4])]).unwrap_err();
    assert_eq!(err.thread, [4, 0, 0]);
    assert!(
        matches!(err.kind, InterpErrorKind::OutOfBounds { index: 4, .. }),
        "{err}"
    );
    let p = CompiledKernel::new(&k).unwrap();
    assert_eq!(
        p.prog.sites,
        vec!["`sync_threads()` at line 30, column 5 (in helper `bump`)".to_string()]
    );
}

#[test]
fn fences_in_a_plain_kernel_keep_the_fast_path() {
    let mut k = saxpy();
    k.body
        .insert(0, st(StmtKind::MemFence(spoc_ir::FenceScope::Block)));
    let p = CompiledKernel::new(&k).unwrap();
    assert!(!p.prog.simt);
    let mut x = vec![1.0f32; 4];
    let mut y = vec![5.0f32; 4];
    p.execute(d1(1), d1(4), 0, &[f32a(2.0), buf(&mut x), buf(&mut y)])
        .unwrap();
    assert_eq!(y, vec![7.0; 4]);
    assert!(CompiledKernel::new(&reduce_kernel(64)).unwrap().prog.simt);
}

/// A chain of `depth` helpers `h_k(x) = h_{k+1}(x) + 1` in a kernel with a barrier: deep chains
/// end in an `OutOfResources` error (never a stack overflow), short ones run.
fn helper_chain(depth: usize) -> Kernel {
    let mut fns: Vec<Function> = Vec::new();
    for k in (0..depth).rev() {
        let mut hb = B::default();
        let x = hb.param("x", Type::U32, false);
        let value = match fns.last() {
            Some(next) => add(call(next, vec![x.clone()]), u32c(1)),
            None => add(x.clone(), u32c(1)),
        };
        fns.push(hb.function(&format!("h{k}"), Type::U32, vec![ret(value)]));
    }
    let mut b = B::default();
    let out = b.buf_mut("out", Type::U32);
    let body = vec![
        sync(),
        store(
            &out,
            tid(Axis::X),
            call(fns.last().unwrap(), vec![tid(Axis::X)]),
        ),
    ];
    let mut k = b.kernel("chain", body);
    k.functions = fns;
    k
}

#[test]
fn deep_helper_chains_on_coroutine_stacks_fail_cleanly() {
    let mut o = vec![0u32; 4];
    exec(&helper_chain(8), d1(1), d1(4), 0, &[buf(&mut o)]).unwrap();
    assert_eq!(o, vec![8, 9, 10, 11]);
    // 40 levels fit in debug and release builds alike.
    exec(&helper_chain(40), d1(1), d1(4), 0, &[buf(&mut o)]).unwrap();
    assert_eq!(o, vec![40, 41, 42, 43]);
    let mut o = vec![0u32; 4];
    match exec(&helper_chain(250), d1(1), d1(4), 0, &[buf(&mut o)]) {
        Ok(()) => assert_eq!(o, vec![250, 251, 252, 253]),
        Err(e) => assert!(
            matches!(e.kind, InterpErrorKind::OutOfResources { .. }),
            "{e}"
        ),
    }
}

/// SIMT throughput smoke test (`cargo test --release -- --ignored --nocapture
/// interp_simt_throughput`): the shared-memory tree reduction over 1 Mi elements in blocks of
/// 256, timed.
#[test]
#[ignore]
fn interp_simt_throughput() {
    let (block, grid) = (256u32, 4096u32);
    let n = (block * grid) as usize;
    let mut x: Vec<f32> = (0..n).map(|i| (i % 3) as f32).collect();
    let mut out = vec![0.0f32; grid as usize];
    let k = CompiledKernel::new(&reduce_kernel(block)).unwrap();
    for round in 0..2 {
        let t0 = std::time::Instant::now();
        k.execute(d1(grid), d1(block), 0, &[buf(&mut x), buf(&mut out)])
            .unwrap();
        let dt = t0.elapsed();
        println!(
            "reduce (SIMT, round {round}): {n} threads in {dt:?} ({:.1} M threads/s)",
            n as f64 / dt.as_secs_f64() / 1e6
        );
    }
    assert_eq!(out[0], (0..256).map(|i| (i % 3) as f32).sum::<f32>());
}

// ---- vectors -----------------------------------------------------------------------------

fn vty(elem: ScalarType, lanes: u8) -> Type {
    Type::Vector { elem, lanes }
}
/// A vector literal of type `elem`x`lanes.len()`.
fn vlit(elem: ScalarType, lanes: Vec<Expr>) -> Expr {
    Expr {
        ty: vty(elem, lanes.len() as u8),
        kind: ExprKind::VectorLit(lanes),
    }
}
/// Lane `name` of vector `v` (lanes of type `elem`).
fn lane_of(v: Expr, name: &str, elem: ScalarType) -> Expr {
    field(v, name, Type::Scalar(elem))
}
/// `target.name = value`.
fn set_field(target: LValue, name: &str, value: Expr) -> Stmt {
    st(StmtKind::Assign {
        target: LValue::Field {
            base: Box::new(target),
            field: name.into(),
        },
        value,
    })
}
fn at_index(array: &Expr, i: Expr) -> LValue {
    LValue::Index {
        base: Box::new(LValue::Var(id(array))),
        index: i,
    }
}

#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct F32x4([f32; 4]);
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct I32x4([i32; 4]);
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct U32x2([u32; 2]);

#[test]
fn f32x4_buffers_read_and_write_whole_vectors() {
    // let v = x[i]; y[i] = f32x4(v.w * 2, v.z * 2, v.y * 2, v.x * 2)
    let f4 = vty(ScalarType::F32, 4);
    let mut b = B::default();
    let x = b.buf("x", f4.clone());
    let y = b.buf_mut("y", f4.clone());
    let (i, let_i) = b.global_index();
    let v = b.local("v", f4.clone());
    let l = |n: &str| mul(lane_of(v.clone(), n, ScalarType::F32), f32c(2.0));
    let body = vec![
        let_i,
        let_(&v, idx(&x, i.clone())),
        store(
            &y,
            i.clone(),
            vlit(ScalarType::F32, vec![l("w"), l("z"), l("y"), l("x")]),
        ),
    ];
    let k = b.kernel("swap4", body);
    let mut xs: Vec<F32x4> = (0..6)
        .map(|i| {
            let f = i as f32;
            F32x4([f, f + 0.5, f + 0.25, -f])
        })
        .collect();
    let mut ys = vec![F32x4([0.0; 4]); 6];
    exec(&k, d1(2), d1(3), 0, &[buf(&mut xs), buf(&mut ys)]).unwrap();
    for (i, y) in ys.iter().enumerate() {
        let f = i as f32;
        assert_eq!(*y, F32x4([-2.0 * f, 2.0 * f + 0.5, 2.0 * f + 1.0, 2.0 * f]));
    }
}

#[test]
fn vector_lane_writes_to_a_local_and_to_a_buffer_element() {
    // let mut v = x[i]; v.y = 7.0; v.w = v.x + v.z; y[i] = v; y[i].z = x[i].x * 10.0;
    let f4 = vty(ScalarType::F32, 4);
    let mut b = B::default();
    let x = b.buf("x", f4.clone());
    let y = b.buf_mut("y", f4.clone());
    let (i, let_i) = b.global_index();
    let v = b.local("v", f4.clone());
    let ln = |e: Expr, n: &str| lane_of(e, n, ScalarType::F32);
    let body = vec![
        let_i,
        let_(&v, idx(&x, i.clone())),
        set_field(LValue::Var(id(&v)), "y", f32c(7.0)),
        set_field(
            LValue::Var(id(&v)),
            "w",
            add(ln(v.clone(), "x"), ln(v.clone(), "z")),
        ),
        store(&y, i.clone(), v.clone()),
        set_field(
            at_index(&y, i.clone()),
            "z",
            mul(ln(idx(&x, i.clone()), "x"), f32c(10.0)),
        ),
    ];
    let k = b.kernel("lanes", body);
    let mut xs: Vec<F32x4> = (0..4)
        .map(|i| F32x4([i as f32, 100.0, 0.5, 100.0]))
        .collect();
    let mut ys = vec![F32x4([-1.0; 4]); 4];
    exec(&k, d1(1), d1(4), 0, &[buf(&mut xs), buf(&mut ys)]).unwrap();
    for (i, y) in ys.iter().enumerate() {
        let f = i as f32;
        assert_eq!(*y, F32x4([f, 7.0, 10.0 * f, f + 0.5]));
    }
    // The input is untouched.
    assert_eq!(xs[3], F32x4([3.0, 100.0, 0.5, 100.0]));
}

#[test]
fn u32x2_literal_from_scalars_and_in_place_lane_update() {
    // out[i] = u32x2(i, i * 3); out[i].y = out[i].y + 1; n[i] = out[i].x + out[i].y
    let u2 = vty(ScalarType::U32, 2);
    let mut b = B::default();
    let out = b.buf_mut("out", u2.clone());
    let n = b.buf_mut("n", Type::U32);
    let (i, let_i) = b.global_index();
    let ln = |n: &str| lane_of(idx(&out, i.clone()), n, ScalarType::U32);
    let body = vec![
        let_i,
        store(
            &out,
            i.clone(),
            vlit(ScalarType::U32, vec![i.clone(), mul(i.clone(), u32c(3))]),
        ),
        set_field(at_index(&out, i.clone()), "y", add(ln("y"), u32c(1))),
        store(&n, i.clone(), add(ln("x"), ln("y"))),
    ];
    let k = b.kernel("pairs2", body);
    assert_eq!(std::mem::size_of::<U32x2>(), 8);
    let mut o = vec![U32x2([9, 9]); 5];
    let mut ns = vec![0u32; 5];
    exec(&k, d1(1), d1(5), 0, &[buf(&mut o), buf(&mut ns)]).unwrap();
    let want: Vec<U32x2> = (0..5).map(|i| U32x2([i, 3 * i + 1])).collect();
    assert_eq!(o, want);
    assert_eq!(ns, (0..5).map(|i| 4 * i + 1).collect::<Vec<u32>>());
}

#[test]
fn i32x4_by_value_parameter_helper_and_record_field() {
    // fn bump(v: i32x4, k: i32) -> i32x4 { i32x4(v.x + k, v.y - k, v.z * k, v.w) }
    // kernel(p: i32x4, out: &mut [i32x4], tagged: &mut [Tagged]):
    //   out[i] = bump(p, i); tagged[i] = Tagged { tag: i, v: out[i] }; tagged[i].v.w = -i
    let i4 = vty(ScalarType::I32, 4);
    let ln = |e: Expr, n: &str| lane_of(e, n, ScalarType::I32);
    let mut fb = B::default();
    let v = fb.param("v", i4.clone(), false);
    let kk = fb.param("k", Type::I32, false);
    let bump = fb.function(
        "bump",
        i4.clone(),
        vec![ret(vlit(
            ScalarType::I32,
            vec![
                add(ln(v.clone(), "x"), kk.clone()),
                bin(BinOp::Sub, ln(v.clone(), "y"), kk.clone()),
                mul(ln(v.clone(), "z"), kk.clone()),
                ln(v.clone(), "w"),
            ],
        ))],
    );
    let rec = record("Tagged", &[("tag", Type::I32), ("v", i4.clone())]);
    let tt = Type::Record("Tagged".into());
    let mut b = B::default();
    let p = b.param("p", i4.clone(), false);
    let out = b.buf_mut("out", i4.clone());
    let tagged = b.buf_mut("tagged", tt.clone());
    let (i, let_i) = b.global_index();
    let ki = cast(i.clone(), ScalarType::I32);
    let body = vec![
        let_i,
        store(&out, i.clone(), call(&bump, vec![p.clone(), ki.clone()])),
        store(
            &tagged,
            i.clone(),
            Expr {
                kind: ExprKind::RecordLit {
                    record: "Tagged".into(),
                    fields: vec![ki.clone(), idx(&out, i.clone())],
                },
                ty: tt.clone(),
            },
        ),
        set_field(
            LValue::Field {
                base: Box::new(at_index(&tagged, i.clone())),
                field: "v".into(),
            },
            "w",
            neg(ki.clone()),
        ),
    ];
    let mut k = b.kernel("bump4", body);
    k.records = vec![rec];
    k.functions = vec![bump];
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Tagged {
        tag: i32,
        v: I32x4,
    }
    assert_eq!(std::mem::size_of::<Tagged>(), 32);
    let mut arg = [I32x4([10, 20, 3, -7])];
    let mut o = vec![I32x4([0; 4]); 4];
    let mut t = vec![
        Tagged {
            tag: 99,
            v: I32x4([99; 4])
        };
        4
    ];
    exec(
        &k,
        d1(1),
        d1(4),
        0,
        &[buf(&mut arg), buf(&mut o), buf(&mut t)],
    )
    .unwrap();
    for i in 0..4i32 {
        let want = I32x4([10 + i, 20 - i, 3 * i, -7]);
        assert_eq!(o[i as usize], want);
        let mut tw = want;
        tw.0[3] = -i;
        assert_eq!(t[i as usize], Tagged { tag: i, v: tw });
    }
    // A vector parameter passed with the wrong size is refused before running.
    let mut short = [[0i32; 2]];
    let err = exec(
        &k,
        d1(1),
        d1(4),
        0,
        &[buf(&mut short), buf(&mut o), buf(&mut t)],
    )
    .unwrap_err();
    assert!(
        matches!(err.kind, InterpErrorKind::BadArgument { .. }),
        "{err}"
    );
}

#[test]
fn shared_array_of_f32x4() {
    // tile[t] = x[g]; tile[t].x = tile[t].x + 1.0; sync; y[g] = tile[3 - t]
    let f4 = vty(ScalarType::F32, 4);
    let mut b = B::default();
    let x = b.buf("x", f4.clone());
    let y = b.buf_mut("y", f4.clone());
    let tile = b.shared("tile", f4.clone(), Some(4));
    let t = b.local("t", Type::U32);
    let body = vec![
        let_(&t, tid(Axis::X)),
        store(&tile, t.clone(), idx(&x, gid(Axis::X))),
        set_field(
            at_index(&tile, t.clone()),
            "x",
            add(
                lane_of(idx(&tile, t.clone()), "x", ScalarType::F32),
                f32c(1.0),
            ),
        ),
        sync(),
        store(
            &y,
            gid(Axis::X),
            idx(&tile, bin(BinOp::Sub, u32c(3), t.clone())),
        ),
    ];
    let k = b.kernel("tile4", body);
    let mut xs: Vec<F32x4> = (0..8)
        .map(|i| {
            let f = i as f32;
            F32x4([f, -f, f * 0.5, 1.0])
        })
        .collect();
    for checks in [Checks::NONE, Checks::DEFAULT] {
        let mut ys = vec![F32x4([0.0; 4]); 8];
        exec_with(&k, d1(2), d1(4), 0, &[buf(&mut xs), buf(&mut ys)], checks).unwrap();
        for (g, y) in ys.iter().enumerate() {
            let src = (g / 4) * 4 + (3 - g % 4);
            let f = src as f32;
            assert_eq!(*y, F32x4([f + 1.0, -f, f * 0.5, 1.0]), "element {g}");
        }
    }
}

#[test]
fn out_of_bounds_vector_index_is_reported_like_a_scalar_one() {
    // y[i] = x[i + 1] (read past the end), then y[i + 1].x = 1.0 (write past the end).
    let f4 = vty(ScalarType::F32, 4);
    let mut b = B::default();
    let x = b.buf("x", f4.clone());
    let y = b.buf_mut("y", f4.clone());
    let i = b.local("i", Type::U32);
    let body = vec![
        let_(&i, tid(Axis::X)),
        store(&y, i.clone(), idx(&x, add(i.clone(), u32c(1)))),
    ];
    let k = b.kernel("shift4", body);
    let mut xs: Vec<F32x4> = (0..4).map(|i| F32x4([i as f32; 4])).collect();
    let mut ys = vec![F32x4([0.0; 4]); 4];
    let err = exec(&k, d1(1), d1(4), 0, &[buf(&mut xs), buf(&mut ys)]).unwrap_err();
    assert_eq!(err.kind, oob(MemorySpace::Global, "x", 4, 4));
    assert_eq!((err.block, err.thread), ([0, 0, 0], [3, 0, 0]));
    assert_eq!(
        ys,
        vec![
            F32x4([1.0; 4]),
            F32x4([2.0; 4]),
            F32x4([3.0; 4]),
            F32x4([0.0; 4])
        ]
    );

    let mut b = B::default();
    let y = b.buf_mut("y", f4.clone());
    let i = b.local("i", Type::U32);
    let body = vec![
        let_(&i, tid(Axis::X)),
        set_field(at_index(&y, add(i.clone(), u32c(1))), "x", f32c(1.0)),
    ];
    let k = b.kernel("lane_oob", body);
    let mut ys = vec![F32x4([0.0; 4]); 4];
    let err = exec(&k, d1(1), d1(4), 0, &[buf(&mut ys)]).unwrap_err();
    assert_eq!(err.kind, oob(MemorySpace::Global, "y", 4, 4));
    assert_eq!(err.thread, [3, 0, 0]);
}

#[test]
fn f32x3_buffers_and_a_local_array_of_vectors() {
    // let mut a = [f32x3(0, 0, 0); 2]; a[1] = x[i]; a[1].z = a[1].x + a[1].y; a[0].y = 5.0;
    // y[i] = f32x3(a[1].z, a[0].y, a[1].x)
    let f3 = vty(ScalarType::F32, 3);
    let arr = array_ty(f3.clone(), MemSpace::Local, 2);
    let mut b = B::default();
    let x = b.buf("x", f3.clone());
    let y = b.buf_mut("y", f3.clone());
    let (i, let_i) = b.global_index();
    let a = b.local("a", arr.clone());
    let ln = |k: u32, n: &str| lane_of(idx(&a, u32c(k)), n, ScalarType::F32);
    let body = vec![
        let_i,
        let_(&a, repeat(vlit(ScalarType::F32, vec![f32c(0.0); 3]), 2)),
        store(&a, u32c(1), idx(&x, i.clone())),
        set_field(at_index(&a, u32c(1)), "z", add(ln(1, "x"), ln(1, "y"))),
        set_field(at_index(&a, u32c(0)), "y", f32c(5.0)),
        store(
            &y,
            i.clone(),
            vlit(ScalarType::F32, vec![ln(1, "z"), ln(0, "y"), ln(1, "x")]),
        ),
    ];
    let k = b.kernel("three", body);
    // 3-lane vectors are 12 bytes, aligned to one lane.
    let mut xs: Vec<[f32; 3]> = (0..3).map(|i| [i as f32, 0.5, 99.0]).collect();
    let mut ys = vec![[0.0f32; 3]; 3];
    exec(&k, d1(1), d1(3), 0, &[buf(&mut xs), buf(&mut ys)]).unwrap();
    for (i, y) in ys.iter().enumerate() {
        let f = i as f32;
        assert_eq!(*y, [f + 0.5, 5.0, f]);
    }
}

/// `k(x, out)` over 64 threads of one block, `x[i] = i * 2654435761` (wrapping): `out`.
fn run_hashed_u32(k: &Kernel) -> Vec<u32> {
    let mut xs: Vec<u32> = (0..64u32).map(|v| v.wrapping_mul(2_654_435_761)).collect();
    let mut ys = vec![0u32; 64];
    exec(k, d1(1), d1(64), 0, &[buf(&mut xs), buf(&mut ys)]).unwrap();
    ys
}

/// The counted `while` loops that the CUDA/PTX target unrolls (`spoc_ir::unroll::auto_unrolled`,
/// a counter set to a constant, compared with a constant, updated last by a constant) give
/// what the loops give, on the Interpreter: each loop mixes the counter into `acc`, and the
/// counter's value after the loop is kept too. A loop whose body also assigns the counter,
/// or whose update is not last, stays a loop.
#[test]
fn counted_while_loops_unroll_to_the_same_values() {
    use spoc_ir::unroll::{auto_unrolled, AutoUnroll};
    let mut b = B::default();
    let x = b.buf("x", Type::U32);
    let out = b.buf_mut("out", Type::U32);
    let (i, let_i) = b.global_index();
    let acc = b.local("acc", Type::U32);
    let mut body = vec![let_i, let_(&acc, idx(&x, i.clone()))];
    let mix = |acc: &Expr, v: Expr| set(acc, add(mul(acc.clone(), u32c(31)), v));
    // (start, comparison, limit, update, step): `v = start; while v cmp limit { acc = acc *
    // 31 + v + x[i]; v = v update step }`.
    let forms = [
        (1, BinOp::Lt, 256, BinOp::Mul, 2),
        (1, BinOp::Lt, 100, BinOp::Shl, 1),
        (0, BinOp::Le, 10, BinOp::Add, 3),
        (10, BinOp::Gt, 0, BinOp::Sub, 2),
        (64, BinOp::Ne, 0, BinOp::Div, 4),
        (7, BinOp::Lt, 3, BinOp::Add, 1),
        (1000, BinOp::Gt, 1, BinOp::Shr, 1),
    ];
    for (n, &(start, cmp, limit, update, step)) in forms.iter().enumerate() {
        let v = b.local(&format!("v{n}"), Type::U32);
        body.push(let_(&v, u32c(start)));
        body.push(while_(
            bin(cmp, v.clone(), u32c(limit)),
            vec![
                mix(&acc, add(v.clone(), idx(&x, i.clone()))),
                set(&v, bin(update, v.clone(), u32c(step))),
            ],
        ));
        body.push(mix(&acc, v.clone()));
    }
    // Not counted: the body assigns the counter besides the update, and an update first.
    let w = b.local("w", Type::U32);
    body.push(let_(&w, u32c(1)));
    body.push(while_(
        lt(w.clone(), u32c(50)),
        vec![
            if_(
                lt(acc.clone(), u32c(1 << 31)),
                vec![set(&w, add(w.clone(), u32c(1)))],
                None,
            ),
            set(&w, mul(w.clone(), u32c(3))),
        ],
    ));
    let z = b.local("z", Type::U32);
    body.push(let_(&z, u32c(0)));
    body.push(while_(
        lt(z.clone(), u32c(5)),
        vec![set(&z, add(z.clone(), u32c(1))), mix(&acc, z.clone())],
    ));
    body.push(mix(&acc, add(w.clone(), z.clone())));
    body.push(store(&out, i.clone(), acc.clone()));
    let k = b.kernel("counted", body);
    let u = auto_unrolled(&k, &AutoUnroll::PTX).expect("the counted loops unroll");
    let whiles = |k: &Kernel| {
        let mut n = 0;
        spoc_ir::visit::for_each_stmt(&k.body, &mut |s| {
            n += usize::from(matches!(s.kind, StmtKind::While { .. }))
        });
        n
    };
    assert_eq!(whiles(&k), forms.len() + 2);
    assert_eq!(whiles(&u), 2, "only the two uncounted loops stay: {u}");
    let (want, got) = (run_hashed_u32(&k), run_hashed_u32(&u));
    assert_ne!(want[1], want[2]);
    assert_eq!(got, want);
}

/// The CUDA/PTX prepass (`spoc_ir::unroll::for_ptx`) gives every local array that only
/// constant indexes reach one local per element, and keeps an array indexed at run time or
/// used whole (`len`) in memory; on the Interpreter the kernel gives what it gave before.
#[test]
fn ptx_prepass_promotes_constant_indexed_local_arrays_with_the_same_values() {
    let mut b = B::default();
    let x = b.buf("x", Type::U32);
    let out = b.buf_mut("out", Type::U32);
    let (i, let_i) = b.global_index();
    let arr = |b: &mut B, name: &str| b.local(name, array_ty(Type::U32, MemSpace::Local, 4));
    let (tile, dynamic, whole) = (
        arr(&mut b, "tile"),
        arr(&mut b, "dynamic"),
        arr(&mut b, "whole"),
    );
    let k = b.local("k", Type::U32);
    let xi = b.local("xi", Type::U32);
    let mut body = vec![
        let_i,
        let_(&xi, idx(&x, i.clone())),
        let_(&tile, repeat(xi.clone(), 4)),
        let_(&dynamic, repeat(u32c(1), 4)),
        let_(&whole, repeat(u32c(2), 4)),
    ];
    // tile[k] = tile[k] * 3 + k, k = 0..4 unrolled: constant indexes (`1 + 1` folds too).
    body.push(for_(
        &k,
        u32c(0),
        u32c(4),
        1,
        ForDir::Up,
        vec![store(
            &tile,
            k.clone(),
            add(mul(idx(&tile, k.clone()), u32c(3)), k.clone()),
        )],
    ));
    body.push(store(&tile, add(u32c(1), u32c(1)), u32c(40)));
    body.push(store(
        &dynamic,
        bin(BinOp::Rem, xi.clone(), u32c(4)),
        u32c(9),
    ));
    body.push(store(&whole, u32c(0), len(&whole)));
    let sum = (0..4).fold(u32c(0), |s, j| {
        add(
            s,
            mul(
                add(
                    idx(&tile, u32c(j)),
                    add(idx(&dynamic, u32c(j)), idx(&whole, u32c(j))),
                ),
                u32c(7 * j + 1),
            ),
        )
    });
    body.push(store(&out, i.clone(), sum));
    let kern = b.kernel("tiles", body);
    let p = spoc_ir::unroll::for_ptx(&kern).expect("the prepass changes the kernel");
    let arrays: Vec<String> = p
        .vars
        .iter()
        .filter(|d| {
            matches!(
                d.ty,
                Type::Array {
                    space: MemSpace::Local,
                    ..
                }
            )
        })
        .map(|d| d.name.clone())
        .collect();
    let mut declared = Vec::new();
    spoc_ir::visit::for_each_stmt(&p.body, &mut |s| {
        if let StmtKind::Let { var, .. } = &s.kind {
            declared.push(p.vars[var.0 as usize].name.clone());
        }
    });
    assert!(!declared.contains(&"tile".to_string()), "{p}");
    for n in ["tile_0", "tile_3", "dynamic", "whole"] {
        assert!(declared.contains(&n.to_string()), "{n}: {p}");
    }
    assert!(arrays.contains(&"dynamic".to_string()));
    let (want, got) = (run_hashed_u32(&kern), run_hashed_u32(&p));
    assert_ne!(want[1], want[2]);
    assert_eq!(got, want);
}
