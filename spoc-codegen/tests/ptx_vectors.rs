//! Vectors in the PTX generator: lanes (`v.x` … `v.w`) read and written as fields, and whole 2-
//! and 4-lane vectors moved with one `ld`/`st.v2`/`.v4` per 16 bytes in global, shared and local
//! memory. Every kernel is also assembled with `ptxas -arch=sm_90` (plain and checked mode)
//! when ptxas is found (`SPOC_PTXAS`, `PATH`, `/opt/spoc-ptxas`).

mod ptx_corpus;

use ptx_corpus::*;
use spoc_ir::*;

fn vec_ty(elem: ScalarType, lanes: u8) -> Type {
    Type::Vector { elem, lanes }
}

fn f32x4() -> Type {
    vec_ty(ScalarType::F32, 4)
}

/// The vector literal `(l0, l1, …)` of lanes of type `elem`.
fn vlit(elem: ScalarType, lanes: Vec<Expr>) -> Expr {
    let n = lanes.len() as u8;
    Expr {
        kind: ExprKind::VectorLit(lanes),
        ty: vec_ty(elem, n),
    }
}

/// Lane `l` of the vector `v`.
fn lane(v: Expr, l: &str) -> Expr {
    let Type::Vector { elem, .. } = v.ty else {
        panic!("lane of a non-vector")
    };
    field(v, l, Type::Scalar(elem))
}

/// `arr[i].l` as an assignment target.
fn lane_at(arr: &Expr, i: Expr, l: &str) -> LValue {
    LValue::Field {
        base: Box::new(LValue::Index {
            base: Box::new(LValue::Var(id(arr))),
            index: i,
        }),
        field: l.into(),
    }
}

/// The instruction lines of the entry only.
fn entry_body(ptx: &str) -> &str {
    &ptx[ptx.find(".visible .entry").expect("an entry")..]
}

/// The instruction lines of `ptx`'s entry that contain `needle`, without their `;`.
fn lines_with<'a>(ptx: &'a str, needle: &str) -> Vec<&'a str> {
    entry_body(ptx)
        .lines()
        .map(|l| l.trim().trim_end_matches(';'))
        .filter(|l| !l.starts_with("//") && l.contains(needle))
        .collect()
}

/// Assembles `k` (plain and checked) with `ptxas -arch=sm_90`, if ptxas is there.
fn assembles(k: &Kernel) {
    let Some((ptxas, dir)) =
        spoc_testkit::toolchains::ptxas_and_scratch_dir(&format!("ptxas of `{}`", k.name))
    else {
        return;
    };
    for checked in [false, true] {
        let ptx = ptx_with(k, &[], checked);
        let name = format!("{}{}", k.name, if checked { "_checked" } else { "" });
        match spoc_testkit::toolchains::ptxas_report(&ptxas, &dir, &name, "sm_90", &ptx) {
            Ok(log) => assert!(!log.contains("warning"), "{name}: ptxas warned:\n{log}"),
            Err(log) => panic!("ptxas rejected `{name}`:\n{log}\n{ptx}"),
        }
    }
}

/// `y[i] = (x[i].w * s, x[i].z * s, x[i].y, x[i].x)` over buffers of `f32x4`.
fn swap_scale() -> Kernel {
    let mut b = B::new();
    let s = b.param("s", Type::F32);
    let x = b.buf("x", f32x4());
    let y = b.buf_mut("y", f32x4());
    let i = b.let_("i", gid());
    b.if_(lt(i.clone(), len(&y)), |b| {
        let v = b.let_("v", idx(&x, i.clone()));
        let w = vlit(
            ScalarType::F32,
            vec![
                mul(lane(v.clone(), "w"), s.clone()),
                mul(lane(v.clone(), "z"), s.clone()),
                lane(v.clone(), "y"),
                lane(v, "x"),
            ],
        );
        b.store(&y, i, w);
    });
    b.kernel("vec_swap_scale")
}

#[test]
fn whole_f32x4_moves_with_one_v4_load_and_store() {
    let k = swap_scale();
    let ptx = ptx(&k, &[]);
    let lds = lines_with(&ptx, "ld.global");
    assert_eq!(lds.len(), 1, "one load of x[i]:\n{ptx}");
    assert!(lds[0].starts_with("ld.global.nc.v4.f32 {%f"), "{}", lds[0]);
    let sts = lines_with(&ptx, "st.global");
    assert_eq!(sts.len(), 1, "one store of y[i]:\n{ptx}");
    assert!(sts[0].starts_with("st.global.v4.f32 [%rd"), "{}", sts[0]);
    // The lanes are swapped: the stored vector is `(w * s, z * s, y, x)` of `v`'s registers.
    assert!(
        sts[0].ends_with("{%f5, %f6, %f_v_y, %f_v_x}"),
        "{}\n{ptx}",
        sts[0]
    );
    assert!(
        entry_body(&ptx).contains("mul.rn.f32 %f5, %f_v_w, %f_s;"),
        "{ptx}"
    );
    assert!(entry_body(&ptx).contains("mov.f32 %f_v_x, %f1;"), "{ptx}");
    assembles(&k);
}

/// `y[i].z = 1.0; y[i].x += y[i].w;`, and `z[i]` = `x[i]` through a local vector with lane `y`
/// rewritten (`v.y = 2.0`) and lane `x` doubled.
fn lane_writes() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", f32x4());
    let y = b.buf_mut("y", f32x4());
    let z = b.buf_mut("z", f32x4());
    let i = b.let_("i", gid());
    b.if_(lt(i.clone(), len(&y)), |b| {
        b.assign(lane_at(&y, i.clone(), "z"), f32c(1.0));
        let yi = idx(&y, i.clone());
        b.assign(
            lane_at(&y, i.clone(), "x"),
            add(lane(yi.clone(), "x"), lane(yi, "w")),
        );
        let v = b.let_mut("v", idx(&x, i.clone()));
        b.assign(
            LValue::Field {
                base: Box::new(LValue::Var(v)),
                field: "y".into(),
            },
            f32c(2.0),
        );
        let ve = b.v(v);
        b.store(&z, i, add_lanes(ve));
    });
    b.kernel("vec_lane_writes")
}

/// `v` with lane `x` doubled (as a vector literal).
fn add_lanes(v: Expr) -> Expr {
    vlit(
        ScalarType::F32,
        vec![
            add(lane(v.clone(), "x"), lane(v.clone(), "x")),
            lane(v.clone(), "y"),
            lane(v.clone(), "z"),
            lane(v, "w"),
        ],
    )
}

#[test]
fn lane_writes_store_one_scalar_at_the_lane_offset() {
    let k = lane_writes();
    let ptx = ptx(&k, &[]);
    // `y[i].z = 1.0`: one f32 store 8 bytes into the element, of the constant.
    let z = lines_with(&ptx, "st.global.f32");
    assert!(
        z.iter()
            .any(|l| l.contains("+8], ") && l.ends_with("0f3F800000") || l.contains("+8], %f")),
        "a store to lane z at +8:\n{ptx}"
    );
    // `y[i].x += y[i].w`: lane loads at +12 and +0, a store at +0.
    assert!(
        lines_with(&ptx, "ld.global.f32")
            .iter()
            .any(|l| l.ends_with("+12]")),
        "{ptx}"
    );
    assert!(
        z.iter().any(|l| !l.contains('+')),
        "a store to lane x at the element's address:\n{ptx}"
    );
    // The local vector `v`: x[i] in one v4 load, z[i] out in one v4 store.
    assert_eq!(lines_with(&ptx, "ld.global.nc.v4.f32").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "st.global.v4.f32").len(), 1, "{ptx}");
    // `v.y = 2.0` is a move into v's y register.
    assert!(
        entry_body(&ptx).contains("mov.f32 %f_v_y, 0f40000000"),
        "{ptx}"
    );
    assembles(&k);
}

/// A 64-element shared tile of `f32x4`, written by each thread and read reversed.
fn shared_tile() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", f32x4());
    let y = b.buf_mut("y", f32x4());
    let tile = b.shared("tile", f32x4(), Some(64));
    let t = b.let_("t", tid());
    let i = b.let_("i", gid());
    b.store(&tile, t.clone(), idx(&x, i.clone()));
    b.push(StmtKind::Barrier);
    let r = b.let_("r", idx(&tile, sub(u32c(63), t.clone())));
    b.assign(
        LValue::Field {
            base: Box::new(LValue::Index {
                base: Box::new(LValue::Var(id(&tile))),
                index: t,
            }),
            field: "w".into(),
        },
        lane(r.clone(), "x"),
    );
    b.store(&y, i, r);
    b.kernel("vec_shared_tile")
}

#[test]
fn shared_array_of_f32x4_is_16_byte_aligned_and_moves_v4() {
    let k = shared_tile();
    let ptx = ptx(&k, &[]);
    assert!(
        entry_body(&ptx).contains(".shared .align 16 .b8 $smem_tile[1024];"),
        "{ptx}"
    );
    assert_eq!(lines_with(&ptx, "st.shared.v4.f32 [%r").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "ld.shared.v4.f32 {%f").len(), 1, "{ptx}");
    // `tile[t].w = r.x`: a scalar store 12 bytes in.
    assert!(
        lines_with(&ptx, "st.shared.f32")
            .iter()
            .any(|l| l.contains("+12], ")),
        "{ptx}"
    );
    assert_eq!(lines_with(&ptx, "ld.global.nc.v4.f32").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "st.global.v4.f32").len(), 1, "{ptx}");
    assembles(&k);
}

/// `out[i] = (a[i].y, a[i].x + 1)` over `u32x2`, and the same over `i32x2` and `f64x2`.
fn pairs() -> Kernel {
    let u2 = vec_ty(ScalarType::U32, 2);
    let i2 = vec_ty(ScalarType::I32, 2);
    let d2 = vec_ty(ScalarType::F64, 2);
    let mut b = B::new();
    let a = b.buf("a", u2.clone());
    let out = b.buf_mut("out", u2);
    let ia = b.buf_mut("ia", i2);
    let da = b.buf_mut("da", d2);
    let i = b.let_("i", gid());
    b.if_(lt(i.clone(), len(&out)), |b| {
        let v = b.let_("v", idx(&a, i.clone()));
        b.store(
            &out,
            i.clone(),
            vlit(
                ScalarType::U32,
                vec![lane(v.clone(), "y"), add(lane(v, "x"), u32c(1))],
            ),
        );
        let w = b.let_("w", idx(&ia, i.clone()));
        b.store(
            &ia,
            i.clone(),
            vlit(ScalarType::I32, vec![lane(w.clone(), "y"), lane(w, "x")]),
        );
        let d = b.let_("d", idx(&da, i.clone()));
        b.store(
            &da,
            i,
            vlit(
                ScalarType::F64,
                vec![lane(d.clone(), "x"), add(lane(d, "y"), f64c(0.5))],
            ),
        );
    });
    b.kernel("vec_pairs")
}

#[test]
fn two_lane_vectors_move_with_v2() {
    let k = pairs();
    let ptx = ptx(&k, &[]);
    assert_eq!(
        lines_with(&ptx, "ld.global.nc.v2.u32 {%r").len(),
        1,
        "{ptx}"
    );
    assert_eq!(lines_with(&ptx, "st.global.v2.u32 [%rd").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "ld.global.v2.s32 {%r").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "st.global.v2.s32 [%rd").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "ld.global.v2.f64 {%fd").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "st.global.v2.f64 [%rd").len(), 1, "{ptx}");
    // No lane-by-lane access is left.
    for t in ["u32", "s32", "f64"] {
        assert!(
            lines_with(&ptx, &format!("ld.global.nc.{t}")).is_empty(),
            "{ptx}"
        );
        assert!(
            lines_with(&ptx, &format!("ld.global.{t}")).is_empty(),
            "{ptx}"
        );
        assert!(
            lines_with(&ptx, &format!("st.global.{t}")).is_empty(),
            "{ptx}"
        );
    }
    assembles(&k);
}

/// A record `P { pos: f32x4, id: u32, vel: f32x2 }` in a buffer, `f64x4` (two 16-byte halves),
/// `f32x3` (lane by lane), `f16x4` (one 8-byte `.v4.b16`) and a local array of `f32x4`.
fn mixed() -> Kernel {
    let p = Type::Record("P".into());
    let d4 = vec_ty(ScalarType::F64, 4);
    let f3 = vec_ty(ScalarType::F32, 3);
    let h4 = vec_ty(ScalarType::F16, 4);
    let loc = array_ty(f32x4(), MemSpace::Local, 4);
    let mut b = B::new();
    let ps = b.buf("ps", p.clone());
    let po = b.buf_mut("po", p.clone());
    let ds = b.buf_mut("ds", d4);
    let ts = b.buf_mut("ts", f3);
    let hs = b.buf_mut("hs", h4);
    let out = b.buf_mut("out", f32x4());
    let i = b.let_("i", gid());
    b.if_(ge(i.clone(), len(&po)), |b| b.ret(None));
    b.store(&po, i.clone(), idx(&ps, i.clone()));
    b.store(&ds, i.clone(), idx(&ds, add(i.clone(), u32c(1))));
    b.store(&ts, i.clone(), idx(&ts, add(i.clone(), u32c(1))));
    b.store(&hs, i.clone(), idx(&hs, add(i.clone(), u32c(1))));
    let pos = field(idx(&ps, i.clone()), "pos", f32x4());
    let a = b.let_mut(
        "a",
        Expr {
            kind: ExprKind::ArrayRepeat {
                value: Box::new(pos),
                len: 4,
            },
            ty: loc,
        },
    );
    let ae = b.v(a);
    b.assign(
        LValue::Index {
            base: Box::new(LValue::Var(a)),
            index: bin(BinOp::BitAnd, i.clone(), u32c(3)),
        },
        idx(&out, i.clone()),
    );
    b.store(&out, i.clone(), idx(&ae, bin(BinOp::BitXor, i, u32c(1))));
    let mut k = b.kernel("vec_mixed");
    k.records = vec![record(
        "P",
        &[
            ("pos", f32x4()),
            ("id", Type::U32),
            ("vel", vec_ty(ScalarType::F32, 2)),
        ],
    )];
    k
}

#[test]
fn records_wide_and_odd_vectors_and_local_arrays() {
    let k = mixed();
    let ptx = ptx(&k, &[]);
    // P: pos at 0 (v4), id at 16, vel at 24 (v2).
    let ld4 = lines_with(&ptx, "ld.global.nc.v4.f32");
    assert_eq!(ld4.len(), 2, "p[i] and p[i].pos:\n{ptx}");
    assert!(
        ld4.iter().all(|l| l.ends_with("]") && !l.contains('+')),
        "{ptx}"
    );
    assert_eq!(lines_with(&ptx, "ld.global.nc.u32").len(), 1, "{ptx}");
    let ld2 = lines_with(&ptx, "ld.global.nc.v2.f32");
    assert_eq!(ld2.len(), 1, "{ptx}");
    assert!(ld2[0].ends_with("+24]"), "{}", ld2[0]);
    assert_eq!(lines_with(&ptx, "st.global.v4.f32").len(), 2, "{ptx}");
    assert_eq!(lines_with(&ptx, "st.global.v2.f32").len(), 1, "{ptx}");
    // f64x4: two 16-byte halves.
    let ldd = lines_with(&ptx, "ld.global.v2.f64");
    assert_eq!(ldd.len(), 2, "{ptx}");
    assert!(ldd[1].ends_with("+16]"), "{}", ldd[1]);
    assert_eq!(lines_with(&ptx, "st.global.v2.f64").len(), 2, "{ptx}");
    // f32x3: lane by lane.
    assert!(lines_with(&ptx, ".v3").is_empty(), "{ptx}");
    assert_eq!(lines_with(&ptx, "ld.global.f32").len(), 3, "{ptx}");
    assert_eq!(lines_with(&ptx, "st.global.f32").len(), 3, "{ptx}");
    // f16x4: one 8-byte vector.
    assert_eq!(lines_with(&ptx, "ld.global.v4.b16 {%rs").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "st.global.v4.b16 [%rd").len(), 1, "{ptx}");
    // The local array: 16-byte aligned, v4 in and out.
    assert!(
        entry_body(&ptx).contains(".local .align 16 .b8 $local_a[64];"),
        "{ptx}"
    );
    assert!(!lines_with(&ptx, "st.local.v4.f32").is_empty(), "{ptx}");
    assert_eq!(lines_with(&ptx, "ld.local.v4.f32").len(), 1, "{ptx}");
    assert!(lines_with(&ptx, "ld.local.f32").is_empty(), "{ptx}");
    assembles(&k);
}

/// The dynamic shared array (`.align 16`) of `f32x4`.
fn dynamic_shared() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", f32x4());
    let y = b.buf_mut("y", f32x4());
    let tile = b.shared("tile", f32x4(), None);
    let t = b.let_("t", tid());
    let i = b.let_("i", gid());
    b.store(&tile, t.clone(), idx(&x, i.clone()));
    b.push(StmtKind::Barrier);
    b.store(&y, i, idx(&tile, bin(BinOp::BitXor, t, u32c(1))));
    b.kernel("vec_dynamic_shared")
}

#[test]
fn dynamic_shared_vectors_move_v4() {
    let k = dynamic_shared();
    let ptx = ptx(&k, &[]);
    assert!(ptx.contains(".extern .shared .align 16 .b8 spoc_dyn_smem[];"));
    assert_eq!(lines_with(&ptx, "st.shared.v4.f32").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "ld.shared.v4.f32").len(), 1, "{ptx}");
    assembles(&k);
}

#[test]
fn checked_mode_guards_the_vector_access() {
    let k = swap_scale();
    let ptx = ptx_with(&k, &[], true);
    let ld = lines_with(&ptx, "ld.global.nc.v4.f32");
    assert_eq!(ld.len(), 1, "{ptx}");
    assert!(ld[0].starts_with("@%p"), "a guarded load: {}", ld[0]);
    // The lanes are 0 when the guard fails.
    assert!(lines_with(&ptx, "mov.b32 %f").len() >= 4, "{ptx}");
}

/// Writes every kernel of this file into `$SPOC_PTX_DUMP` (default `tests/ptx_device/out`) for
/// `tests/ptx_device/run_vectors_on_gpu.py`, which runs them on a GPU and checks their values
/// bit for bit (all passed on an H200).
#[test]
#[ignore]
fn dump_for_device() {
    let dir = &device_dump_dir();
    for k in [
        swap_scale(),
        lane_writes(),
        shared_tile(),
        pairs(),
        mixed(),
        dynamic_shared(),
    ] {
        std::fs::write(dir.join(format!("{}.ptx", k.name)), ptx(&k, &[])).unwrap();
    }
}
