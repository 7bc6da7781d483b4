//! `#[derive(Record)]`: the field table and IR definitions it generates, and record buffers.

use spoc::prelude::*;
use spoc::{FieldType, TypeTag};

#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Body {
    pub pos: Vec3,
    pub mass: f64,
    pub id: u32,
}

/// `n` bodies: body `i` at `(i, 2, -1)`, of mass `i * mass_step`, with id `i`.
fn bodies(n: u32, mass_step: f64) -> Vec<Body> {
    (0..n)
        .map(|i| Body {
            pos: Vec3 {
                x: i as f32,
                y: 2.0,
                z: -1.0,
            },
            mass: mass_step * i as f64,
            id: i,
        })
        .collect()
}

/// `#[derive(Record)]` knows where a record has padding (`Body`: 4 bytes after `pos`, 4 after
/// `id`) and uploads it as zeros, never the host's bytes there.
#[test]
fn derived_records_upload_their_padding_as_zeros() {
    use spoc::DeviceCopy;
    const { assert!(!Vec3::HAS_PADDING) };
    const { assert!(Body::HAS_PADDING) };
    const { assert!(<[Body; 2] as DeviceCopy>::HAS_PADDING) };
    let b = Body {
        pos: Vec3 {
            x: 1.0,
            y: 2.0,
            z: 3.0,
        },
        mass: 4.0,
        id: 5,
    };
    let mut bytes = vec![0xAAu8; std::mem::size_of::<Body>()];
    b.write_bytes(&mut bytes);
    assert_eq!(&bytes[12..16], &[0; 4]);
    assert_eq!(&bytes[16..24], &4.0f64.to_ne_bytes());
    assert_eq!(&bytes[24..28], &5u32.to_ne_bytes());
    assert_eq!(&bytes[28..32], &[0; 4]);
    let dev = spoc::init_device(Some("Interpreter")).unwrap();
    let buf = dev.upload(&[b, b]).unwrap();
    assert_eq!(
        buf.raw().to_bytes().unwrap(),
        [bytes.clone(), bytes].concat()
    );
    assert_eq!(buf.to_vec().unwrap(), [b, b]);
}

#[test]
fn field_table_lists_fields_in_order_with_their_types() {
    assert_eq!(Body::NAME, "Body");
    let names: Vec<_> = Body::FIELDS.iter().map(|f| f.name).collect();
    assert_eq!(names, ["pos", "mass", "id"]);
    assert_eq!(Body::FIELDS[0].tag, TypeTag::Record("Vec3"));
    assert_eq!(
        Body::FIELDS[1].tag,
        TypeTag::Scalar(spoc::ir::ScalarType::F64)
    );
    const MASS: Option<TypeTag> = spoc::field_tag::<Body>("mass");
    assert_eq!(MASS, Some(TypeTag::Scalar(spoc::ir::ScalarType::F64)));
    assert_eq!(spoc::field_tag::<Body>("velocity"), None);
    const X: Option<TypeTag> = spoc::field_path_tag::<Body>(&["pos", "x"]);
    assert_eq!(X, Some(TypeTag::Scalar(spoc::ir::ScalarType::F32)));
    assert_eq!(
        spoc::field_path_tag::<Body>(&["pos"]),
        Some(TypeTag::Record("Vec3"))
    );
    assert_eq!(spoc::field_path_tag::<Body>(&["pos", "w"]), None);
    assert_eq!(spoc::field_path_tag::<Body>(&["mass", "x"]), None);
    assert_eq!(Body::FIELDS[0].fields, Vec3::FIELDS);
}

#[test]
fn record_defs_put_nested_records_first_once() {
    let mut defs = Vec::new();
    Body::record_defs(&mut defs);
    Vec3::record_defs(&mut defs);
    let names: Vec<_> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["Vec3", "Body"]);
    assert_eq!(defs[1].fields[0].ty, spoc::ir::Type::Record("Vec3".into()));
    assert_eq!(defs[0].fields.len(), 3);
}

#[test]
fn record_buffers_round_trip_through_a_device() -> spoc::Result<()> {
    let dev = spoc::init_device(Some("Native"))?;
    let host = bodies(10, 0.5);
    let buf = dev.upload(&host)?;
    assert_eq!(buf.to_vec()?, host);
    assert_eq!(std::mem::size_of::<Body>(), 32);
    Ok(())
}

// ---- records in kernels ----

#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub mass: f32,
}

mod geom {
    use spoc::prelude::*;

    /// A 2-D point, named through its module in kernels (`geom::Point`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
    #[repr(C)]
    pub struct Point {
        pub x: f64,
        pub y: f64,
    }
}

/// The kinetic-energy-like value of a particle (a record argument).
#[device]
fn energy(p: Particle) -> f32 {
    0.5 * p.mass * (p.x * p.x + p.y * p.y)
}

/// A particle moved by `(dx, dy)` (a record result, built by a literal).
#[device]
fn moved(p: Particle, dx: f32, dy: f32) -> Particle {
    Particle {
        mass: p.mass,
        y: p.y + dy,
        x: p.x + dx,
    }
}

/// Buffers of records, locals, field updates, literals and helpers together.
#[kernel]
fn step(ps: &[Particle], out: &mut [Particle], e: &mut [f32]) {
    let i = global_id_x();
    if i < ps.len() {
        let mut q = ps[i];
        q.x += 1.0;
        q.y = q.y * 2.0;
        let r: Particle = moved(q, 0.5f32, -0.5f32);
        out[i] = r;
        out[i].mass = 2.0;
        e[i] = energy(ps[i]);
    }
}

fn particles(n: usize) -> Vec<Particle> {
    (0..n)
        .map(|i| Particle {
            x: i as f32 * 0.25,
            y: 1.0 - i as f32,
            mass: 1.0 + (i % 3) as f32,
        })
        .collect()
}

/// True if `r` ran; false (printed) if the device refused the kernel with a typed
/// `FeatureNotSupported`.
fn ran(dev: &spoc::Device, r: spoc::Result<()>) -> bool {
    match r {
        Ok(()) => true,
        Err(spoc::Error::FeatureNotSupported { backend, feature }) => {
            eprintln!("skipped on {} ({backend}): {feature}", dev.name);
            false
        }
        Err(e) => panic!("{} ({}): {e}", dev.name, dev.framework),
    }
}

#[test]
fn record_buffers_locals_helpers_and_updates_on_every_device() -> spoc::Result<()> {
    let ir = step.ir()?;
    assert!(ir.record("Particle").is_some(), "{ir}");
    let host = particles(37);
    let want: Vec<Particle> = host
        .iter()
        .map(|p| Particle {
            x: p.x + 1.0 + 0.5,
            y: p.y * 2.0 - 0.5,
            mass: 2.0,
        })
        .collect();
    let want_e: Vec<f32> = host.iter().map(|p| energy(*p)).collect();
    let mut ran_on = Vec::new();
    for dev in spoc::all_devices(None)? {
        let ps = dev.upload(&host)?;
        let mut out = dev.alloc::<Particle>(host.len())?;
        let mut e = dev.alloc::<f32>(host.len())?;
        if !ran(
            &dev,
            step.launch(&dev, dims1d(2), dims1d(32), (&ps, &mut out, &mut e)),
        ) {
            continue;
        }
        assert_eq!(out.to_vec()?, want, "{} ({})", dev.name, dev.framework);
        assert_eq!(e.to_vec()?, want_e, "{} ({})", dev.name, dev.framework);
        ran_on.push(dev.framework.to_string());
    }
    eprintln!("ran on {ran_on:?}");
    assert!(
        ran_on.iter().any(|f| f == "Interpreter"),
        "ran on {ran_on:?}"
    );
    Ok(())
}

/// Nested records: reads and writes through `b.pos.x`, a nested literal, a field path used
/// without annotation, and integer and `f64` fields.
#[kernel]
fn nested(bs: &mut [Body], v: &[Vec3]) {
    let i = global_id_x();
    if i < bs.len() {
        let mut b = bs[i];
        b.pos.x += v[i].x;
        b.pos.y = b.pos.y * 3.0;
        b.mass = b.mass + 0.5;
        b.id += 1;
        bs[i] = b;
        bs[i].pos.z = v[i].z + b.pos.x;
    }
}

#[test]
fn nested_records_on_every_device() -> spoc::Result<()> {
    let host = bodies(20, 0.25);
    let vs: Vec<Vec3> = (0..20)
        .map(|i| Vec3 {
            x: 0.5,
            y: 0.0,
            z: i as f32,
        })
        .collect();
    let want: Vec<Body> = host
        .iter()
        .zip(&vs)
        .map(|(b, v)| Body {
            pos: Vec3 {
                x: b.pos.x + v.x,
                y: b.pos.y * 3.0,
                z: v.z + (b.pos.x + v.x),
            },
            mass: b.mass + 0.5,
            id: b.id + 1,
        })
        .collect();
    for dev in spoc::all_devices(None)? {
        let mut bs = dev.upload(&host)?;
        let v = dev.upload(&vs)?;
        if !ran(
            &dev,
            nested.launch(&dev, dims1d(1), dims1d(32), (&mut bs, &v)),
        ) {
            continue;
        }
        assert_eq!(bs.to_vec()?, want, "{} ({})", dev.name, dev.framework);
    }
    Ok(())
}

/// Records named through a module path, built by a literal whose fields are given out of
/// declaration order.
#[kernel]
fn points(out: &mut [geom::Point], scale: f64) {
    let i = global_id_x();
    if i < out.len() {
        let p = geom::Point {
            y: scale * 2.0,
            x: i as f64 * scale,
        };
        out[i] = p;
    }
}

#[test]
fn module_paths_and_literals_in_any_order() -> spoc::Result<()> {
    let ir = points.ir()?;
    assert!(ir.record("Point").is_some(), "{ir}");
    for dev in spoc::all_devices(None)? {
        let mut out = dev.alloc::<geom::Point>(8)?;
        if !ran(
            &dev,
            points.launch(&dev, dims1d(1), dims1d(8), (&mut out, 0.5)),
        ) {
            continue;
        }
        let want: Vec<geom::Point> = (0..8)
            .map(|i| geom::Point {
                x: i as f64 * 0.5,
                y: 1.0,
            })
            .collect();
        assert_eq!(out.to_vec()?, want, "{} ({})", dev.name, dev.framework);
    }
    Ok(())
}

/// The total mass of a buffer of records (a helper taking a record buffer).
#[device]
fn total_mass(ps: &[Particle]) -> f32 {
    let mut m = 0.0f32;
    for i in 0..ps.len() {
        m += ps[i].mass;
    }
    m
}

/// Field arithmetic whose types only the record declares (`sqrt`, `abs`, unary minus,
/// comparisons, integer division), a local array of records, a record chosen by `if`.
#[kernel]
fn misc(ps: &[Particle], bs: &[Body], out: &mut [f32], ids: &mut [u32]) {
    let i = global_id_x();
    if i < ps.len() {
        let p = ps[i];
        let mut pair = [p; 2];
        pair[1].x = -p.x;
        pair[1].y = (p.y * p.y + 1.0).sqrt();
        let far = if pair[1].y > 2.0 { pair[1] } else { pair[0] };
        let m: f32 = total_mass(ps);
        out[i] = far.x.abs() + far.y + m;
        ids[i] = bs[i].id / (bs[i].id % 3 + 1) + bs[i].id.min(7);
    }
}

#[test]
fn field_arithmetic_local_record_arrays_and_record_buffers_in_helpers() -> spoc::Result<()> {
    let ps = particles(10);
    let bs: Vec<Body> = (0..10)
        .map(|i| Body {
            id: i * 5,
            ..Default::default()
        })
        .collect();
    let total: f32 = ps.iter().fold(0.0, |a, p| a + p.mass);
    let want: Vec<f32> = ps
        .iter()
        .map(|p| {
            let y = (p.y * p.y + 1.0).sqrt();
            let (fx, fy) = if y > 2.0 { (-p.x, y) } else { (p.x, p.y) };
            fx.abs() + fy + total
        })
        .collect();
    let want_ids: Vec<u32> = bs
        .iter()
        .map(|b| b.id / (b.id % 3 + 1) + b.id.min(7))
        .collect();
    let mut ran_on = Vec::new();
    for dev in spoc::all_devices(None)? {
        let p = dev.upload(&ps)?;
        let b = dev.upload(&bs)?;
        let mut out = dev.alloc::<f32>(ps.len())?;
        let mut ids = dev.alloc::<u32>(ps.len())?;
        if !ran(
            &dev,
            misc.launch(&dev, dims1d(1), dims1d(16), (&p, &b, &mut out, &mut ids)),
        ) {
            continue;
        }
        assert_eq!(out.to_vec()?, want, "{} ({})", dev.name, dev.framework);
        assert_eq!(ids.to_vec()?, want_ids, "{} ({})", dev.name, dev.framework);
        ran_on.push(dev.framework.to_string());
    }
    for backend in ["Interpreter", "Native"] {
        assert!(ran_on.iter().any(|f| f == backend), "ran on {ran_on:?}");
    }
    Ok(())
}

/// Integer division by zero in a field whose type only the record declares.
#[kernel]
fn field_div(bs: &mut [Body]) {
    let i = global_id_x();
    if i < bs.len() {
        bs[i].id = 10 / bs[i].id;
    }
}

#[test]
fn field_division_by_zero_faults_on_the_cpu_backends() -> spoc::Result<()> {
    for name in ["Native", "Interpreter"] {
        let dev = spoc::init_device(Some(name))?;
        let mut bs = dev.upload(&[
            Body {
                id: 2,
                ..Default::default()
            },
            Body::default(),
        ])?;
        let err = field_div
            .launch(&dev, dims1d(1), dims1d(2), (&mut bs,))
            .unwrap_err();
        assert!(
            matches!(
                err,
                spoc::Error::KernelFault {
                    thread: Some([1, 0, 0]),
                    ..
                }
            ),
            "{name}: {err}"
        );
    }
    Ok(())
}
