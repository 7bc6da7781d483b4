//! Content hash and serialized form.

mod support;

use spoc_ir::*;
use support::*;

#[test]
fn equal_kernels_hash_equal() {
    assert_eq!(saxpy().content_hash(), saxpy().content_hash());
    assert_eq!(
        shapes_kernel().content_hash(),
        shapes_kernel().content_hash()
    );
    assert_ne!(saxpy().content_hash(), block_sum().content_hash());
}

#[test]
fn hash_is_xxh3_of_the_bytes_and_pinned() {
    // The hash keys on-disk caches too: it must not depend on the process, and a change of the
    // encoding must be noticed (and come with an IR_FORMAT_VERSION bump).
    let k = saxpy();
    assert_eq!(
        k.content_hash().0,
        xxhash_rust::xxh3::xxh3_128(&k.to_bytes())
    );
    let empty = Builder::new().kernel("k");
    assert_eq!(
        empty.to_bytes(),
        [
            IR_FORMAT_VERSION.to_le_bytes().as_slice(),
            &[1, b'k', 0, 0, 0, 0, 0, 0, 0]
        ]
        .concat()
    );
    assert_eq!(
        empty.content_hash().to_string(),
        "4b2d3f21dd6ed431289190b003eb2caa"
    );
}

#[test]
fn changing_one_constant_changes_the_hash() {
    let base = shapes_kernel();
    let mut k = base.clone();
    // area's 3.5 becomes 3.75.
    let StmtKind::Match { arms, .. } = &mut k.functions[0].body[0].kind else {
        unreachable!()
    };
    let StmtKind::Return(Some(Expr {
        kind: ExprKind::Binary { rhs, .. },
        ..
    })) = &mut arms[0].1[0].kind
    else {
        unreachable!()
    };
    assert_eq!(rhs.kind, ExprKind::Const(Const::f32(3.5)));
    rhs.kind = ExprKind::Const(Const::f32(3.75));
    assert_ne!(k.content_hash(), base.content_hash());

    // Even a sign bit: 0.0 and -0.0 are different kernels.
    let mut a = saxpy();
    let mut b = saxpy();
    a.body.push(stmt(StmtKind::Expr(f32c(0.0))));
    b.body.push(stmt(StmtKind::Expr(f32c(-0.0))));
    assert_ne!(a.content_hash(), b.content_hash());
}

#[test]
fn changing_one_name_changes_the_hash() {
    let base = saxpy();
    let mut k = base.clone();
    k.vars[3].name = "j".into();
    assert_ne!(k.content_hash(), base.content_hash());
    let mut k = base.clone();
    k.name = "saxpy2".into();
    assert_ne!(k.content_hash(), base.content_hash());
}

#[test]
fn changing_one_type_changes_the_hash() {
    let base = saxpy();
    let mut k = base.clone();
    k.params[0].ty = Type::F64;
    assert_ne!(k.content_hash(), base.content_hash());
    let mut k = base.clone();
    k.params[1].mutable = true;
    assert_ne!(k.content_hash(), base.content_hash());
}

#[test]
fn source_locations_are_part_of_the_hash() {
    // Locations are in the IR, so moving a kernel in its file changes its key: documented here so
    // that a change of this policy is a conscious one.
    let base = saxpy();
    let mut k = base.clone();
    k.body[0].loc = Some(SrcLoc {
        line: 99,
        column: 1,
    });
    assert_ne!(k.content_hash(), base.content_hash());
}

#[test]
fn bytes_round_trip() {
    for k in [saxpy(), block_sum(), shapes_kernel()] {
        let bytes = k.to_bytes();
        assert_eq!(&bytes[..4], &IR_FORMAT_VERSION.to_le_bytes());
        let back = Kernel::from_bytes(&bytes).unwrap();
        assert_eq!(back, k);
        assert_eq!(back.to_bytes(), bytes);
    }
    let f = shapes_kernel().functions[0].clone();
    assert_eq!(Function::from_bytes(&f.to_bytes()).unwrap(), f);
}

#[test]
fn wrong_version_header_is_a_decode_error() {
    let mut bytes = saxpy().to_bytes();
    bytes[..4].copy_from_slice(&(IR_FORMAT_VERSION + 1).to_le_bytes());
    match Kernel::from_bytes(&bytes) {
        Err(IrError::Decode(msg)) => {
            assert!(
                msg.contains(&format!("version {}", IR_FORMAT_VERSION + 1)),
                "{msg}"
            );
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[test]
fn truncated_or_garbage_bytes_are_decode_errors() {
    assert!(matches!(
        Kernel::from_bytes(&[1, 0]),
        Err(IrError::Decode(_))
    ));
    let bytes = saxpy().to_bytes();
    assert!(matches!(
        Kernel::from_bytes(&bytes[..bytes.len() / 2]),
        Err(IrError::Decode(_))
    ));
    let mut garbage = IR_FORMAT_VERSION.to_le_bytes().to_vec();
    garbage.extend([0xff; 16]);
    assert!(matches!(
        Kernel::from_bytes(&garbage),
        Err(IrError::Decode(_))
    ));
}
