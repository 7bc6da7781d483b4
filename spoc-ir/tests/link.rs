//! Linking helper functions into kernels.

mod support;

use spoc_ir::link::{link_helpers, load_kernel, load_kernel_renamed, HelperIr, HelperRef};
use spoc_ir::*;
use std::sync::OnceLock;
use support::*;

/// `fn name(x: f32) -> f32 { return callee(x) * 2.0 }` (or `x * 2.0` without a callee).
fn helper(name: &str, callees: &[&str], scale: f32) -> Function {
    let mut h = Builder::new();
    let x = h.param("x", Type::F32, false);
    let mut value = h.v(x);
    for c in callees {
        value = call(c, vec![value], Type::F32);
    }
    h.push(stmt(StmtKind::Return(Some(bin(
        BinOp::Mul,
        value,
        f32c(scale),
    )))));
    h.function(name, Type::F32)
}

macro_rules! helper_ref {
    ($fn_name:ident, $name:expr, [$($callee:ident),*], $scale:expr) => {
        fn $fn_name() -> Result<&'static HelperIr, IrError> {
            static H: OnceLock<HelperIr> = OnceLock::new();
            Ok(H.get_or_init(|| HelperIr {
                function: helper($name, &[$(stringify!($callee)),*], $scale),
                records: vec![record("Pair", &[("a", Type::F32), ("b", Type::F32)])],
                variants: vec![],
                callees: vec![$($callee as HelperRef),*],
            }))
        }
    };
}

// a -> c, b -> c, a -> b: the diamond; c2 is another helper also named `c`.
helper_ref!(c, "c", [], 2.0);
helper_ref!(b, "b", [c], 3.0);
helper_ref!(a, "a", [b, c], 4.0);
helper_ref!(c2, "c", [], 5.0);
/// `d` calls `c2` by its function name, `c`.
fn d() -> Result<&'static HelperIr, IrError> {
    static H: OnceLock<HelperIr> = OnceLock::new();
    Ok(H.get_or_init(|| HelperIr {
        function: helper("d", &["c"], 1.0),
        records: vec![],
        variants: vec![],
        callees: vec![c2 as HelperRef],
    }))
}
// even -> odd -> even: recursion, which linking tolerates and validation names.
helper_ref!(even, "even", [odd], 1.0);
helper_ref!(odd, "odd", [even], 1.0);

fn failing() -> Result<&'static HelperIr, IrError> {
    Err(IrError::Decode("bad helper bytes".into()))
}

/// saxpy, whose `a` is passed through `roots[0]`'s name before use.
fn caller(root: &str) -> Kernel {
    let mut k = saxpy();
    let StmtKind::If { then, .. } = &mut k.body[1].kind else {
        unreachable!()
    };
    let StmtKind::Assign { value, .. } = &mut then[0].kind else {
        unreachable!()
    };
    *value = call(root, vec![value.clone()], Type::F32);
    k
}

fn names(k: &Kernel) -> Vec<&str> {
    let mut v: Vec<&str> = k.functions.iter().map(|f| f.name.as_str()).collect();
    v.sort_unstable();
    v
}

#[test]
fn transitive_helpers_are_added_once() {
    let mut k = caller("a");
    link_helpers(&mut k, &[a, b, c]).unwrap();
    assert_eq!(names(&k), ["a", "b", "c"]);
    assert_eq!(
        k.records.len(),
        1,
        "the record every helper uses is added once"
    );
    assert_valid(&k);

    // Linking again changes nothing.
    let before = k.clone();
    link_helpers(&mut k, &[a]).unwrap();
    assert_eq!(k, before);
}

#[test]
fn roots_reach_their_callees() {
    let mut k = caller("a");
    link_helpers(&mut k, &[a]).unwrap();
    assert_eq!(names(&k), ["a", "b", "c"]);
}

#[test]
fn two_different_helpers_with_one_name_are_both_linked_under_distinct_names() {
    // The kernel calls `a` (which reaches `c`) and `d` (which calls the other `c`).
    let mut k = caller("a");
    let StmtKind::If { then, .. } = &mut k.body[1].kind else {
        unreachable!()
    };
    let StmtKind::Assign { value, .. } = &mut then[0].kind else {
        unreachable!()
    };
    *value = call("d", vec![value.clone()], Type::F32);
    link_helpers(&mut k, &[a, d]).unwrap();
    assert_eq!(names(&k), ["a", "b", "c", "c_2", "d"]);
    assert_valid(&k);
    // `d` calls the second `c` (scale 5), under its new name; `a` and `b` still call `c`.
    let d_body = format!("{:?}", k.function("d").unwrap().body);
    assert!(d_body.contains("\"c_2\""), "{d_body}");
    let c2_body = format!("{:?}", k.function("c_2").unwrap().body);
    assert!(
        c2_body.contains(&format!("{:?}", 5.0f32.to_bits())),
        "{c2_body}"
    );
    let b_body = format!("{:?}", k.function("b").unwrap().body);
    assert!(
        b_body.contains("\"c\"") && !b_body.contains("c_2"),
        "{b_body}"
    );
}

// `both` calls `c` and `c2`, two different helpers named `c`: its body cannot tell them apart.
fn both() -> Result<&'static HelperIr, IrError> {
    static H: OnceLock<HelperIr> = OnceLock::new();
    Ok(H.get_or_init(|| HelperIr {
        function: helper("both", &["c", "c"], 1.0),
        records: vec![],
        variants: vec![],
        callees: vec![c as HelperRef, c2],
    }))
}

#[test]
fn one_caller_of_two_helpers_with_one_name_is_a_link_error() {
    let mut k = caller("both");
    match link_helpers(&mut k, &[both]).unwrap_err() {
        IrError::Link { kernel, message } => {
            assert_eq!(kernel, "saxpy");
            assert!(
                message.contains("`both` calls two different helper functions named `c`"),
                "{message}"
            );
        }
        other => panic!("expected a link error, got {other:?}"),
    }
}

#[test]
fn calls_by_another_name_are_renamed_before_linking() {
    let bytes = caller("alias_of_a").to_bytes();
    let e = load_kernel(&bytes, &[a]).unwrap_err();
    assert!(e.to_string().contains("alias_of_a"), "{e}");
    let k = load_kernel_renamed(&bytes, &[a], &[("alias_of_a", "a")]).unwrap();
    assert_eq!(names(&k), ["a", "b", "c"]);
}

#[test]
fn accessor_errors_propagate() {
    let mut k = caller("a");
    assert!(matches!(
        link_helpers(&mut k, &[failing]),
        Err(IrError::Decode(_))
    ));
}

/// What the stub of a call that does not compile returns (spoc-frontend's `paths.rs`).
fn unresolved() -> Result<&'static HelperIr, IrError> {
    Err(IrError::Link {
        kernel: String::new(),
        message: "unresolved helper".into(),
    })
}

#[test]
fn an_unresolved_helper_is_a_link_error_naming_the_kernel() {
    let mut k = caller("a");
    let e = link_helpers(&mut k, &[a, unresolved]).unwrap_err();
    let IrError::Link { kernel, message } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(
        (kernel.as_str(), message.as_str()),
        ("saxpy", "unresolved helper")
    );
}

#[test]
fn recursion_links_and_then_fails_validation() {
    let mut k = caller("even");
    link_helpers(&mut k, &[even]).unwrap();
    assert_eq!(names(&k), ["even", "odd"]);
    let e = validate(&k).unwrap_err();
    assert!(
        e.to_string().contains("recursion is not supported on GPUs"),
        "{e}"
    );
}

#[test]
fn load_kernel_decodes_links_and_validates() {
    let bytes = caller("a").to_bytes();
    let k = load_kernel(&bytes, &[a]).unwrap();
    assert_eq!(names(&k), ["a", "b", "c"]);
    // Without its helpers the kernel does not validate.
    let e = load_kernel(&bytes, &[]).unwrap_err();
    assert!(e.to_string().contains("no helper function `a`"), "{e}");
}
