//! Unit tests: the generator's kernels are in the language, the oracle has Rust's semantics,
//! the comparison fails on a wrong result, and the shrinker reduces a planted bug to a small
//! kernel.

use crate::ast::*;
use crate::gen::{generate, inputs, Config};
use crate::harness::{compare, draw, judge, Outcome, Verdict};
use crate::oracle::{self, Excl, Fault};
use crate::print;
use crate::rng::Rng;
use crate::shrink::{self, Budget};
use crate::visit::{walk_body, Walk};

#[test]
fn generated_kernels_lower_and_validate() {
    let cfg = Config::default();
    let mut bad = vec![];
    for i in 0..150u64 {
        let (k, _) = generate(Rng::derive(1, i), &format!("k{i}"), &cfg);
        let src = print::kernel_fn(&k, false);
        match spoc_frontend::lower_kernel_source(&src) {
            Ok(ir) => {
                if let Err(e) = spoc_ir::validate(&ir) {
                    bad.push(format!("{src}\n=> invalid IR: {e}"));
                }
            }
            Err(es) => bad.push(format!(
                "{src}\n=> {}",
                es.iter()
                    .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
                    .collect::<Vec<_>>()
                    .join("\n   ")
            )),
        }
    }
    assert!(
        bad.is_empty(),
        "{} kernels did not lower:\n{}",
        bad.len(),
        bad[0]
    );
}

#[test]
fn generation_is_deterministic() {
    let cfg = Config::default();
    for i in 0..20u64 {
        let a = generate(Rng::derive(7, i), "k", &cfg).0;
        let b = generate(Rng::derive(7, i), "k", &cfg).0;
        // (Debug text: a NaN literal is not equal to itself.)
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert_eq!(
            format!("{:?}", inputs(&a, i)),
            format!("{:?}", inputs(&b, i))
        );
    }
}

#[test]
fn drawn_kernels_have_defined_results() {
    let cfg = Config::default();
    for i in 0..60u64 {
        let d = draw(3, i, "k", &cfg);
        assert!(oracle::run(&d.kernel, &d.inputs, cfg.excl()).is_ok());
    }
}

/// One thread's `o_T[slot]` after running `body` (a block whose tail is the value), thread 0.
fn eval(ty: Ty, build: impl FnOnce(&mut Kernel) -> Expr) -> Result<Val, Fault> {
    let mut k = Kernel::new("t");
    let e = build(&mut k);
    k.body.push(Stmt::Assign {
        place: Place::Out(ty, 0),
        op: None,
        value: e,
    });
    let inp = oracle::Inputs {
        params: vec![],
        inputs: Ty::BUF
            .iter()
            .map(|&t| vec![Val::zero(t); IN_LEN as usize])
            .collect(),
        outputs: Ty::BUF
            .iter()
            .map(|&t| vec![Val::zero(t); (THREADS * SLOTS) as usize])
            .collect(),
        accs: vec![],
    };
    let m = oracle::run(&k, &inp, Excl::default())?;
    Ok(m.outputs[ty.buf_index().unwrap()][0])
}

fn lit(v: Val) -> Expr {
    Expr::lit(v)
}

fn cast(e: Expr, ty: Ty) -> Expr {
    Expr {
        ty,
        kind: ExprKind::Cast(Box::new(e)),
    }
}

#[test]
fn oracle_has_rust_semantics() {
    let bin = |op, a: Val, b: Val| {
        let ty = a.ty();
        eval(ty, |_| Expr::bin(op, lit(a), lit(b), ty)).unwrap()
    };
    // Wrapping arithmetic, MIN / -1, remainders with the dividend's sign.
    assert_eq!(
        bin(BinOp::Add, Val::I32(i32::MAX), Val::I32(1)),
        Val::I32(i32::MIN)
    );
    assert_eq!(
        bin(BinOp::Div, Val::I32(i32::MIN), Val::I32(-1)),
        Val::I32(i32::MIN)
    );
    assert_eq!(
        bin(BinOp::Rem, Val::I32(i32::MIN), Val::I32(-1)),
        Val::I32(0)
    );
    assert_eq!(bin(BinOp::Rem, Val::I64(-7), Val::I64(3)), Val::I64(-1));
    // A divisor that is not a literal is guarded as `(d | 1)`: 7 / (2 | 1).
    let guarded = eval(Ty::I32, |k| {
        let v = VarId(k.vars.len() as u32);
        k.vars.push(VarInfo {
            ty: Ty::I32,
            kind: VarKind::Local { mutable: false },
        });
        k.body.push(Stmt::Let {
            var: v,
            init: lit(Val::I32(2)),
        });
        Expr::bin(BinOp::Div, lit(Val::I32(7)), Expr::var(v, Ty::I32), Ty::I32)
    });
    assert_eq!(guarded.unwrap(), Val::I32(2));
    // Shift amounts modulo the width, of any integer type.
    assert_eq!(bin(BinOp::Shl, Val::U32(1), Val::U32(33)), Val::U32(2));
    let shl = eval(Ty::I64, |_| {
        Expr::bin(BinOp::Shr, lit(Val::I64(-256)), lit(Val::U64(68)), Ty::I64)
    });
    assert_eq!(shl.unwrap(), Val::I64(-16));
    // usize is 32 bits.
    let u = eval(Ty::U64, |_| {
        cast(
            Expr::bin(
                BinOp::Add,
                lit(Val::Usize(u32::MAX)),
                lit(Val::Usize(2)),
                Ty::Usize,
            ),
            Ty::U64,
        )
    });
    assert_eq!(u.unwrap(), Val::U64(1));
    let big = eval(Ty::U64, |_| {
        cast(cast(lit(Val::F64(1e20)), Ty::Usize), Ty::U64)
    });
    assert_eq!(big.unwrap(), Val::U64(u32::MAX as u64));
    // Saturating float-to-int casts, NaN to 0.
    let c = |v: Val, to: Ty| oracle::cast(v, to);
    assert_eq!(c(Val::F32(1e20), Ty::I32), Val::I32(i32::MAX));
    assert_eq!(c(Val::F32(-1.5), Ty::U32), Val::U32(0));
    assert_eq!(c(Val::F64(f64::NAN), Ty::I64), Val::I64(0));
    assert_eq!(c(Val::I64(-1), Ty::U32), Val::U32(u32::MAX));
    assert_eq!(c(Val::U64(u64::MAX), Ty::F32), Val::F32(1.8446744e19));
    // IEEE floats: fmod, signed zeros.
    assert!(bin(BinOp::Rem, Val::F32(-7.5), Val::F32(2.0)).same(Val::F32(-1.5)));
    assert!(bin(BinOp::Add, Val::F32(-0.0), Val::F32(0.0)).same(Val::F32(0.0)));
    assert!(!bin(BinOp::Mul, Val::F32(0.0), Val::F32(-4.75)).same(Val::F32(0.0)));
    // Unspecified results are said to be so.
    let mm = eval(Ty::F32, |_| Expr {
        ty: Ty::F32,
        kind: ExprKind::Method(Method::Min, vec![lit(Val::F32(0.0)), lit(Val::F32(-0.0))]),
    });
    assert!(matches!(mm, Err(Fault::Unspecified(_))), "{mm:?}");
}

#[test]
fn comparison_fails_on_a_wrong_device_result() {
    let want = vec![
        ("o_i32".to_string(), vec![Val::I32(1), Val::I32(2)]),
        (
            "o_f32".to_string(),
            vec![Val::F32(-0.0), Val::F32(f32::NAN)],
        ),
    ];
    assert_eq!(judge(&want, &Outcome::Ran(want.clone())), Verdict::Agree);
    // NaN payloads are not compared.
    let mut nan = want.clone();
    nan[1].1[1] = Val::F32(f32::from_bits(0x7fc0_0001));
    assert_eq!(judge(&want, &Outcome::Ran(nan)), Verdict::Agree);
    // One wrong integer.
    let mut bad = want.clone();
    bad[0].1[1] = Val::I32(3);
    assert!(matches!(
        judge(&want, &Outcome::Ran(bad)),
        Verdict::Disagree(_)
    ));
    // The sign of a zero.
    let mut zero = want.clone();
    zero[1].1[0] = Val::F32(0.0);
    let e = compare(&want, &zero).unwrap_err();
    assert!(e.contains("o_f32[0] (thread 0, slot 0)"), "{e}");
    // An error where the reference ran; a refusal is a skip.
    let err = Outcome::Failed("Compile".into(), "error: x.cl:1:2: oops".into());
    assert!(matches!(judge(&want, &err), Verdict::Disagree(_)));
    let skip = Outcome::Skipped("no fp64".into());
    assert!(matches!(judge(&want, &skip), Verdict::Skipped(_)));
}

/// `k` with every `i32` multiplication turned into an addition: a planted "device bug".
fn mul_as_add(k: &Kernel) -> Kernel {
    let mut c = k.clone();
    let mut walk = Walk {
        on_stmt: &mut |_| {},
        on_expr: &mut |e| {
            if let ExprKind::Binary(op @ BinOp::Mul, _, _) = &mut e.kind {
                if e.ty == Ty::I32 {
                    *op = BinOp::Add;
                }
            }
        },
    };
    c.body.iter_mut().for_each(|s| walk.stmt(s));
    c
}

fn count_nodes(k: &Kernel) -> (usize, usize) {
    let (mut s, mut e) = (0, 0);
    walk_body(k, &mut |_| s += 1, &mut |_| e += 1);
    (s, e)
}

#[test]
fn shrinker_reduces_a_planted_bug_to_a_small_kernel() {
    // A "device" that adds where it should multiply i32s: find a kernel where that shows.
    let cfg = Config::default();
    let excl = cfg.excl();
    let disagrees = |k: &Kernel, inp: &oracle::Inputs| -> bool {
        match (
            oracle::run(k, inp, excl),
            oracle::run(&mul_as_add(k), inp, excl),
        ) {
            (Ok(a), Ok(b)) => !a.same(&b),
            _ => false,
        }
    };
    let d = (0..200u64)
        .map(|i| draw(11, i, "planted", &cfg))
        .find(|d| disagrees(&d.kernel, &d.inputs))
        .expect("a kernel whose result depends on an i32 multiplication");
    let before = count_nodes(&d.kernel);
    let budget = Budget {
        tries: 5000,
        time: std::time::Duration::from_secs(60),
    };
    let mut holds = |k: &Kernel, inp: &oracle::Inputs| disagrees(k, inp);
    let (k, inp, st) = shrink::shrink(&d.kernel, &d.inputs, budget, &mut holds);
    let after = count_nodes(&k);
    let src = print::kernel_fn(&k, true);
    assert!(
        disagrees(&k, &inp),
        "the shrunk kernel lost the bug:\n{src}"
    );
    assert!(!st.exhausted, "shrinking did not finish: {st:?}");
    assert!(
        after.0 <= 3 && after.1 <= 12,
        "{before:?} -> {after:?} (statements, expressions) is not small:\n{src}"
    );
    assert!(src.contains(" * "), "{src}");
    // The shrunk kernel is still in the language.
    spoc_frontend::lower_kernel_source(&print::kernel_fn(&k, false)).expect("it lowers");
}

#[test]
fn a_traced_shrink_replays_from_its_edits() {
    // What a child process of the crash shrinker rebuilds from the drawn kernel and the edit
    // list (written as text and read back) is what the shrink kept: kernel and inputs. The
    // predicate keeps an edit only while the kernel still has a multiplication and, of the
    // rest, two in three (an arbitrary mix of kept and refused edits).
    let cfg = Config::default();
    let d = (0..200u64)
        .map(|i| draw(23, i, "traced", &cfg))
        .find(|d| print::kernel_fn(&d.kernel, false).contains(" * "))
        .expect("a kernel with a multiplication");
    let budget = Budget {
        tries: 400,
        time: std::time::Duration::from_secs(60),
    };
    let mut calls = 0usize;
    let mut holds = |k: &Kernel, inp: &oracle::Inputs, path: &[shrink::Edit]| {
        calls += 1;
        let (rk, rinp) = shrink::replay(&d.kernel, &d.inputs, path).expect("the path replays");
        assert!(
            rk == *k && format!("{rinp:?}") == format!("{inp:?}"),
            "candidate {calls} differs from its replay"
        );
        print::kernel_fn(k, false).contains(" * ") && !calls.is_multiple_of(3)
    };
    let (k, inp, st, edits) = shrink::shrink_traced(&d.kernel, &d.inputs, budget, &mut holds);
    assert!(st.kept > 0 && st.kept == edits.len(), "{st:?}, {edits:?}");
    let text = shrink::format_edits(&edits);
    let read = shrink::parse_edits(&text).expect("the edits read back");
    assert_eq!(read, edits, "{text}");
    let (rk, rinp) = shrink::replay(&d.kernel, &d.inputs, &read).expect("the edits replay");
    assert!(
        rk == k,
        "replayed kernel differs:\n{}",
        print::kernel_fn(&rk, true)
    );
    assert_eq!(
        format!("{rinp:?}"),
        format!("{inp:?}"),
        "replayed inputs differ"
    );
    assert!(shrink::parse_edits("k1,x2").is_err());
}

#[test]
fn inlined_helpers_keep_the_meaning() {
    let cfg = Config {
        helpers: true,
        native: true,
        ..Config::default()
    };
    let mut calls = 0;
    for i in 0..80u64 {
        let d = draw(5, i, "h", &cfg);
        if d.kernel.helpers.is_empty() {
            continue;
        }
        let flat = shrink::inline_helpers(&d.kernel);
        assert!(flat.helpers.is_empty());
        let a = oracle::run(&d.kernel, &d.inputs, cfg.excl()).expect("drawn: defined");
        let b = oracle::run(&flat, &d.inputs, cfg.excl()).expect("inlined: defined");
        assert!(a.same(&b), "{}", print::full(&d.kernel));
        spoc_frontend::lower_kernel_source(&print::kernel_fn(&flat, false))
            .unwrap_or_else(|e| panic!("{e:?}\n{}", print::kernel_fn(&flat, false)));
        calls += 1;
    }
    assert!(calls > 10);
}

#[test]
fn interpreter_end_to_end_agrees_and_a_corrupted_result_fails() {
    // Lowered at run time, run on the real Interpreter device, compared with the oracle.
    let dev = spoc::init_device(Some("Interpreter")).expect("the Interpreter");
    let cfg = Config::default();
    let mut checked = 0;
    for i in 0..12u64 {
        let d = draw(21, i, &format!("e2e_{i}"), &cfg);
        let run = crate::harness::lower(&d.kernel).expect("lowers");
        let want = crate::harness::expected(&d.kernel, &d.want);
        let got = crate::harness::run_on(&dev, &d.kernel, &d.inputs, run);
        assert_eq!(
            judge(&want, &got),
            Verdict::Agree,
            "{}",
            print::full(&d.kernel)
        );
        // One flipped bit anywhere in the device's result is a disagreement.
        if let Outcome::Ran(mut bufs) = got {
            if let Some((_, v)) = bufs.iter_mut().find(|(_, v)| !v.is_empty()) {
                let j = v.len() / 2;
                v[j] = Val::from_bits(v[j].ty(), v[j].bits() ^ 1);
                assert!(matches!(
                    judge(&want, &Outcome::Ran(bufs)),
                    Verdict::Disagree(_)
                ));
                checked += 1;
            }
        }
    }
    assert!(checked > 6);
}

#[test]
fn a_dead_shard_names_the_kernel_and_device_it_was_running() {
    let out = "== spoc-difftest\nRUNNING\tdt_5827\tInterpreter #6 (IR)\n-- dt_5827\n\
               RUNNING\tdt_5828\tInterpreter #6 (IR)\nRUNNING\tdt_5828\tVulkan #2 (NVIDIA H100)\n";
    assert_eq!(
        crate::runner::last_running(out),
        Some(("dt_5828".to_string(), "Vulkan #2 (NVIDIA H100)".to_string()))
    );
    assert_eq!(crate::runner::last_running("no kernel ran\n"), None);
}
