//! Hand-built IR kernels that use vector lanes (`v.x` … `v.w`) and whole-vector memory moves,
//! shared by `vector_lanes_c.rs` (C dialects, clang) and `vector_lanes_naga.rs` (SPIR-V on
//! lavapipe). Each works on 64 threads of one block (`BLOCK`).
#![allow(dead_code)]

use spoc_ir::*;
use spoc_testkit::ir::*;

/// Threads per block, and the number of elements each kernel touches.
pub const BLOCK: u32 = 64;

/// `f32x4`.
pub fn f32x4() -> Type {
    Type::Vector {
        elem: ScalarType::F32,
        lanes: 4,
    }
}

/// `u32x2`.
pub fn u32x2() -> Type {
    Type::Vector {
        elem: ScalarType::U32,
        lanes: 2,
    }
}

/// Lane `name` of vector value `v`.
pub fn lane(v: Expr, name: &str) -> Expr {
    let Type::Vector { elem, .. } = v.ty else {
        panic!("lane `{name}` of a `{}`", v.ty)
    };
    field(v, name, Type::Scalar(elem))
}

/// The place `base.name` (a lane or a record field).
pub fn lane_at(base: LValue, name: &str) -> LValue {
    LValue::Field {
        base: Box::new(base),
        field: name.into(),
    }
}

/// A vector literal of type `ty`.
pub fn vec_lit(ty: Type, lanes: Vec<Expr>) -> Expr {
    Expr {
        kind: ExprKind::VectorLit(lanes),
        ty,
    }
}

/// `swap_scale(x: &[f32x4], y: &mut [f32x4], z: &mut [f32x4])`:
/// ```text
/// let v = x[i];                                   // whole-vector load into a local
/// y[i] = f32x4(v.w * 2, v.z * 3, v.y * 4, x[i].x * 5);
/// y[i].y = y[i].y + 0.5;                          // lane write to a buffer element
/// let mut t = v; t.z = v.x - v.w; z[i] = t;      // lane write to a local vector
/// ```
pub fn swap_scale() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", f32x4());
    let y = b.buf_mut("y", f32x4());
    let z = b.buf_mut("z", f32x4());
    let v = b.local("v", f32x4(), false);
    let t = b.local("t", f32x4(), true);
    b.let_(&v, idx(&x, gid()));
    b.push(assign(
        at(&y, gid()),
        vec_lit(
            f32x4(),
            vec![
                mul(lane(v.clone(), "w"), f32c(2.0)),
                mul(lane(v.clone(), "z"), f32c(3.0)),
                mul(lane(v.clone(), "y"), f32c(4.0)),
                mul(lane(idx(&x, gid()), "x"), f32c(5.0)),
            ],
        ),
    ));
    b.push(assign(
        lane_at(at(&y, gid()), "y"),
        add(lane(idx(&y, gid()), "y"), f32c(0.5)),
    ));
    b.let_(&t, v.clone());
    b.push(assign(
        lane_at(place(&t), "z"),
        sub(lane(v.clone(), "x"), lane(v.clone(), "w")),
    ));
    b.push(assign(at(&z, gid()), t.clone()));
    b.kernel("swap_scale")
}

/// `pairs(a: &[u32x2], b: &mut [u32x2])`:
/// ```text
/// b[i] = a[i];                     // whole-vector copy
/// b[i].x = a[i].y * 3 + i;
/// b[i].y = b[i].y ^ 0xff00ff00;
/// ```
pub fn pairs() -> Kernel {
    let mut b = B::new();
    let a = b.buf("a", u32x2());
    let o = b.buf_mut("b", u32x2());
    b.push(assign(at(&o, gid()), idx(&a, gid())));
    b.push(assign(
        lane_at(at(&o, gid()), "x"),
        add(mul(lane(idx(&a, gid()), "y"), u32c(3)), gid()),
    ));
    b.push(assign(
        lane_at(at(&o, gid()), "y"),
        bin(BinOp::BitXor, lane(idx(&o, gid()), "y"), u32c(0xff00_ff00)),
    ));
    b.kernel("pairs")
}

/// `tile_rotate(x: &[f32x4], out: &mut [f32x4])` with a shared `tile: [f32x4; 64]`:
/// ```text
/// tile[t] = x[g];
/// tile[t].w = tile[t].x + tile[t].y;   // lane write to a shared element
/// barrier;
/// out[g] = tile[(t + 1) % 64];
/// out[g].x = tile[(t + 2) % 64].z;
/// ```
pub fn tile_rotate() -> Kernel {
    let mut b = B::new();
    let x = b.buf("x", f32x4());
    let out = b.buf_mut("out", f32x4());
    let tile = b.shared("tile", f32x4(), Some(BLOCK));
    b.push(assign(at(&tile, tid()), idx(&x, gid())));
    b.push(assign(
        lane_at(at(&tile, tid()), "w"),
        add(lane(idx(&tile, tid()), "x"), lane(idx(&tile, tid()), "y")),
    ));
    b.push(StmtKind::Barrier);
    b.push(assign(
        at(&out, gid()),
        idx(&tile, rem(add(tid(), u32c(1)), u32c(BLOCK))),
    ));
    b.push(assign(
        lane_at(at(&out, gid()), "x"),
        lane(idx(&tile, rem(add(tid(), u32c(2)), u32c(BLOCK))), "z"),
    ));
    b.kernel("tile_rotate")
}

/// `tagged(out: &mut [Tagged])`, `Tagged { id: u32, v: f32x4 }` (`v` at offset 16, size 32):
/// ```text
/// out[i] = Tagged { id: i, v: f32x4(i, 1, 2, 3) };
/// out[i].v.y = out[i].v.x * 0.5;       // a lane of a record field of a buffer element
/// ```
pub fn tagged() -> Kernel {
    let mut b = B::new();
    let rec = Type::Record("Tagged".into());
    let out = b.buf_mut("out", rec.clone());
    let g = cast(gid(), ScalarType::F32);
    b.push(assign(
        at(&out, gid()),
        Expr {
            kind: ExprKind::RecordLit {
                record: "Tagged".into(),
                fields: vec![
                    gid(),
                    vec_lit(f32x4(), vec![g, f32c(1.0), f32c(2.0), f32c(3.0)]),
                ],
            },
            ty: rec,
        },
    ));
    b.push(assign(
        lane_at(lane_at(at(&out, gid()), "v"), "y"),
        mul(lane(field(idx(&out, gid()), "v", f32x4()), "x"), f32c(0.5)),
    ));
    let mut k = b.kernel("tagged");
    k.records = vec![record("Tagged", &[("id", Type::U32), ("v", f32x4())])];
    k
}

/// Every kernel here, by name.
pub fn all() -> Vec<(&'static str, Kernel)> {
    spoc_testkit::named_kernels![swap_scale, pairs, tile_rotate, tagged]
}

/// The inputs: `x` for `swap_scale` and `tile_rotate` (4 lanes per element), `a` for `pairs`.
pub fn input_f32x4() -> Vec<f32> {
    (0..BLOCK * 4).map(|k| k as f32 * 0.25 - 7.0).collect()
}

pub fn input_u32x2() -> Vec<u32> {
    (0..BLOCK * 2)
        .map(|k| k.wrapping_mul(2_654_435_761))
        .collect()
}

/// The expected `(y, z)` of `swap_scale`.
pub fn want_swap_scale(x: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let (mut y, mut z) = (Vec::new(), Vec::new());
    for v in x.chunks(4) {
        y.extend([v[3] * 2.0, v[2] * 3.0 + 0.5, v[1] * 4.0, v[0] * 5.0]);
        z.extend([v[0], v[1], v[0] - v[3], v[3]]);
    }
    (y, z)
}

/// The expected `b` of `pairs`.
pub fn want_pairs(a: &[u32]) -> Vec<u32> {
    let mut b = Vec::new();
    for (i, v) in a.chunks(2).enumerate() {
        b.extend([
            v[1].wrapping_mul(3).wrapping_add(i as u32),
            v[1] ^ 0xff00_ff00,
        ]);
    }
    b
}

/// The expected `out` of `tile_rotate` (one block).
pub fn want_tile_rotate(x: &[f32]) -> Vec<f32> {
    let n = BLOCK as usize;
    let tile: Vec<[f32; 4]> = x
        .chunks(4)
        .map(|v| [v[0], v[1], v[2], v[0] + v[1]])
        .collect();
    let mut out = Vec::new();
    for t in 0..n {
        let mut o = tile[(t + 1) % n];
        o[0] = tile[(t + 2) % n][2];
        out.extend(o);
    }
    out
}
