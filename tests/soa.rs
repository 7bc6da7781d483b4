//! Structure-of-Arrays record buffers (`SoaBuffer<R>`): round trips through device memory, the
//! typed refusal of SoA arguments on every backend but CUDA/PTX, the PTX parameter ABI the
//! CUDA/PTX backend binds, and SoA launches on a CUDA device when one is present (skipped,
//! with a message, otherwise; a failure when `SPOC_REQUIRE_BACKENDS` names `cuda`).

mod common;

use spoc::prelude::*;
use spoc::{Arg, Error, LaunchProblem, SoaBuffer};

/// Fields of every size: 4-byte float, 4-byte int, 1-byte bool, 8-byte float, 8-byte int.
#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Mixed {
    pub a: f32,
    pub n: u32,
    pub flag: bool,
    pub w: f64,
    pub k: i64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Vec2 {
    pub x: f32,
    pub y: f32,
}

/// A record holding a record: not storable as a structure of arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Nested {
    pub v: Vec2,
    pub m: f32,
}

/// Whole-record reads and stores, field stores, and an AoS output beside the SoA buffers.
#[kernel]
fn mix(src: &[Mixed], dst: &mut [Mixed], scale: f64, out: &mut [f64]) {
    let i = global_id_x();
    if i < src.len() {
        let m = src[i];
        let mut q = m;
        q.a = m.a * 2.0;
        q.n = m.n + 7;
        q.flag = !m.flag;
        dst[i] = q;
        dst[i].w = m.w * scale;
        dst[i].k = m.k - 3;
        let a: f32 = m.a;
        let w: f64 = src[i].w;
        out[i] = w + a as f64;
    }
}

fn mixed(n: usize) -> Vec<Mixed> {
    (0..n)
        .map(|i| Mixed {
            a: i as f32 * 0.75 - 3.0,
            n: (i * 31) as u32,
            flag: i % 3 == 1,
            w: 1.0 / (i as f64 + 1.0),
            k: i as i64 * 1_000_000_007 - 50,
        })
        .collect()
}

fn expected(src: &[Mixed], scale: f64) -> (Vec<Mixed>, Vec<f64>) {
    let dst = src
        .iter()
        .map(|m| Mixed {
            a: m.a * 2.0,
            n: m.n + 7,
            flag: !m.flag,
            w: m.w * scale,
            k: m.k - 3,
        })
        .collect();
    let out = src.iter().map(|m| m.w + m.a as f64).collect();
    (dst, out)
}

#[test]
fn soa_buffers_round_trip_on_the_native_device() -> spoc::Result<()> {
    let dev = spoc::init_device(Some("Native"))?;
    let host = mixed(29);
    let mut b = dev.upload_soa(&host)?;
    assert_eq!(b.len(), 29);
    assert_eq!(b.to_vec()?, host);
    let names: Vec<_> = b.raw().fields().iter().map(|f| f.name()).collect();
    assert_eq!(names, ["a", "n", "flag", "w", "k"]);
    let offsets: Vec<_> = b.raw().fields().iter().map(|f| f.offset()).collect();
    assert_eq!(offsets, [0, 4, 8, 16, 24]);
    assert_eq!(b.raw().record_size(), std::mem::size_of::<Mixed>());
    // Field `w` is its own array of 29 f64s.
    let w = b.raw().fields()[3].buffer();
    assert_eq!((w.len(), w.elem_size()), (29, 8));
    let ws: Vec<f64> = w
        .to_bytes()?
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(ws, host.iter().map(|m| m.w).collect::<Vec<_>>());
    let flipped: Vec<Mixed> = host.iter().rev().copied().collect();
    b.upload_from(&flipped)?;
    assert_eq!(b.to_vec()?, flipped);
    assert_eq!(b.to_buffer()?.to_vec()?, flipped);
    assert!(b.upload_from(&host[1..]).is_err());
    let z: SoaBuffer<Mixed> = dev.alloc_soa(6)?;
    assert_eq!(z.to_vec()?, vec![Mixed::default(); 6]);
    Ok(())
}

#[test]
fn soa_buffers_round_trip_on_every_device() -> spoc::Result<()> {
    let host = mixed(100);
    for dev in spoc::all_devices(None)? {
        let b = dev.upload_soa(&host)?;
        assert_eq!(b.to_vec()?, host, "{} ({})", dev.name, dev.framework);
        let z = dev.alloc_soa::<Mixed>(17)?;
        assert_eq!(z.to_vec()?, vec![Mixed::default(); 17], "{}", dev.framework);
    }
    Ok(())
}

#[test]
fn nested_records_are_refused() {
    let dev = spoc::init_device(Some("Native")).unwrap();
    let err = dev.upload_soa(&[Nested::default()]).unwrap_err();
    assert!(
        matches!(&err, Error::FeatureNotSupported { feature, .. } if feature.contains("field `v` is the record `Vec2`")),
        "{err}"
    );
}

/// Every device but CUDA/PTX refuses an SoA argument with a typed error before anything runs:
/// the typed launch and the untyped `spoc::run` alike; the buffers are unchanged.
#[test]
fn every_backend_but_cuda_ptx_refuses_soa_arguments() -> spoc::Result<()> {
    let host = mixed(40);
    let mut refused = Vec::new();
    for dev in spoc::all_devices(None)? {
        if dev.framework == "CUDA/PTX" {
            continue;
        }
        let src = dev.upload_soa(&host)?;
        let mut dst = dev.alloc_soa::<Mixed>(host.len())?;
        let mut out = dev.alloc::<f64>(host.len())?;
        let err = mix
            .launch(&dev, dims1d(1), dims1d(64), (&src, &mut dst, 2.0, &mut out))
            .unwrap_err();
        assert!(
            matches!(&err, Error::FeatureNotSupported { backend, feature }
                if backend == dev.framework && feature.contains("`src`, `dst`")),
            "{}: {err}",
            dev.framework
        );
        // An SoA input with an AoS output: refused too.
        let mut adst = dev.alloc::<Mixed>(host.len())?;
        let err = mix
            .launch(
                &dev,
                dims1d(1),
                dims1d(64),
                (&src, &mut adst, 2.0, &mut out),
            )
            .unwrap_err();
        assert!(
            matches!(err, Error::FeatureNotSupported { .. }),
            "{}",
            dev.framework
        );
        let err = spoc::run(
            &dev,
            mix.def(),
            vec![
                Arg::Soa(src.raw()),
                Arg::SoaMut(dst.raw_mut()),
                Arg::F64(2.0),
                Arg::BufferMut(out.raw_mut()),
            ],
            dims1d(1),
            dims1d(64),
            0,
        )
        .unwrap_err();
        assert!(matches!(err, Error::FeatureNotSupported { .. }), "{err}");
        assert_eq!(dst.to_vec()?, vec![Mixed::default(); host.len()]);
        assert_eq!(adst.to_vec()?, vec![Mixed::default(); host.len()]);
        assert_eq!(out.to_vec()?, vec![0.0; host.len()]);
        refused.push(dev.framework.to_string());
        // The AoS launch of the same kernel still runs there (where the backend supports it:
        // Vulkan has no 1-byte `bool` in buffers).
        let asrc = dev.upload(&host)?;
        match mix.launch(
            &dev,
            dims1d(1),
            dims1d(64),
            (&asrc, &mut adst, 2.0, &mut out),
        ) {
            Ok(()) => {
                let (want, want_out) = expected(&host, 2.0);
                assert_eq!(adst.to_vec()?, want, "{}", dev.framework);
                assert_eq!(out.to_vec()?, want_out, "{}", dev.framework);
            }
            Err(Error::FeatureNotSupported { feature, .. }) => {
                eprintln!("{}: AoS launch skipped: {feature}", dev.framework)
            }
            Err(e) => panic!("{}: {e}", dev.framework),
        }
    }
    eprintln!("SoA arguments refused (typed) on {refused:?}");
    assert!(refused.iter().any(|f| f == "Native"), "{refused:?}");
    assert!(refused.iter().any(|f| f == "Interpreter"), "{refused:?}");
    Ok(())
}

/// The PTX parameters of an SoA kernel are the ones the CUDA/PTX backend binds for an
/// `SoaBuffer`: one address per field in the buffer's field order, then the length.
#[test]
fn ptx_soa_parameters_follow_the_buffer_field_order() -> spoc::Result<()> {
    let src = mix
        .def()
        .source(spoc::Target::CudaPtx, None, &["src", "dst"])?
        .expect("PTX source");
    let spoc::Code::Text(text) = &src.code else {
        panic!("PTX is text")
    };
    let params: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix(".param "))
        .map(|l| l.trim_end_matches(',').rsplit(' ').next().unwrap())
        .collect();
    let dev = spoc::init_device(Some("Native"))?;
    let b = dev.alloc_soa::<Mixed>(1)?;
    let mut want = Vec::new();
    for p in ["src", "dst"] {
        for f in b.raw().fields() {
            want.push(format!("{p}__soa_{}", f.name()));
        }
        want.push(format!("{p}__soa_len"));
    }
    want.extend(["scale".to_string(), "out_ptr".into(), "out_len".into()]);
    assert_eq!(params, want, "{text}");
    Ok(())
}

/// The first CUDA/PTX device, or `None` (printed) when there is none and CUDA is not required.
fn cuda_ptx() -> Option<spoc::Device> {
    let dev = spoc::all_devices(None)
        .ok()?
        .into_iter()
        .find(|d| d.framework == "CUDA/PTX");
    if dev.is_none() {
        let required = spoc_testkit::backends::is_required("CUDA/PTX");
        assert!(
            !required,
            "CUDA is required (SPOC_REQUIRE_BACKENDS) but there is no CUDA/PTX device"
        );
        eprintln!("skipped: no CUDA/PTX device");
    }
    dev
}

#[test]
fn cuda_ptx_runs_soa_launches() -> spoc::Result<()> {
    let Some(dev) = cuda_ptx() else {
        return Ok(());
    };
    let host = mixed(1000);
    let (want, want_out) = expected(&host, -1.5);
    let (grid, block) = (dims1d(4), dims1d(256));

    // SoA in, SoA out.
    let src = dev.upload_soa(&host)?;
    let mut dst = dev.alloc_soa::<Mixed>(host.len())?;
    let mut out = dev.alloc::<f64>(host.len())?;
    mix.launch(&dev, grid, block, (&src, &mut dst, -1.5, &mut out))?;
    assert_eq!(dst.to_vec()?, want);
    assert_eq!(out.to_vec()?, want_out);

    // SoA in, AoS out; AoS in, SoA out; AoS both: the same results (four compiled variants).
    let asrc = dev.upload(&host)?;
    let mut adst = dev.alloc::<Mixed>(host.len())?;
    mix.launch(&dev, grid, block, (&src, &mut adst, -1.5, &mut out))?;
    assert_eq!(adst.to_vec()?, want);
    let mut dst2 = dev.alloc_soa::<Mixed>(host.len())?;
    mix.launch(&dev, grid, block, (&asrc, &mut dst2, -1.5, &mut out))?;
    assert_eq!(dst2.to_vec()?, want);
    let mut adst2 = dev.alloc::<Mixed>(host.len())?;
    mix.launch(&dev, grid, block, (&asrc, &mut adst2, -1.5, &mut out))?;
    assert_eq!(adst2.to_vec()?, want);

    // Untyped: an SoA buffer of another record is refused by the launch checks.
    let other = dev.upload_soa(&[Vec2::default(); 4])?;
    let err = spoc::run(
        &dev,
        mix.def(),
        vec![
            Arg::Soa(other.raw()),
            Arg::SoaMut(dst.raw_mut()),
            Arg::F64(1.0),
            Arg::BufferMut(out.raw_mut()),
        ],
        grid,
        block,
        0,
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidLaunch { problem: LaunchProblem::SoaMismatch { param, .. }, .. } if param == "src"),
        "{err}"
    );
    // A kernel compiled without SoA parameters refuses SoA arguments.
    let aos_only = spoc::compile_kernel(&dev, mix.def())?;
    let mut args = spoc::set_args(
        &dev,
        vec![
            Arg::Soa(src.raw()),
            Arg::BufferMut(adst.raw_mut()),
            Arg::F64(1.0),
            Arg::BufferMut(out.raw_mut()),
        ],
    )?;
    let err = spoc::run_kernel(&aos_only, &mut args, grid, block, 0).unwrap_err();
    spoc_testkit::assert_matches!(
        err,
        Error::InvalidLaunch {
            problem: LaunchProblem::SoaMismatch { .. },
            ..
        }
    );

    // Checked launches run the SoA arguments on the Interpreter as AoS copies first.
    spoc::set_checking(true);
    let mut dst3 = dev.alloc_soa::<Mixed>(host.len())?;
    let r = mix.launch(&dev, grid, block, (&src, &mut dst3, -1.5, &mut out));
    spoc::set_checking(false);
    r?;
    assert_eq!(dst3.to_vec()?, want);

    // CUDA/C refuses SoA arguments with a typed error.
    if let Some(c) = spoc::all_devices(Some("CUDA/C"))?.into_iter().next() {
        let s = c.upload_soa(&host)?;
        let mut d = c.alloc_soa::<Mixed>(host.len())?;
        let mut o = c.alloc::<f64>(host.len())?;
        let err = mix
            .launch(&c, grid, block, (&s, &mut d, -1.5, &mut o))
            .unwrap_err();
        assert!(matches!(err, Error::FeatureNotSupported { .. }), "{err}");
    }
    Ok(())
}

/// The `soa_aos` program's kernel through an SoA buffer on CUDA, larger than one block's worth
/// and with a partial last block.
#[test]
fn cuda_ptx_soa_matches_aos_for_a_field_update() -> spoc::Result<()> {
    let Some(dev) = cuda_ptx() else {
        return Ok(());
    };
    let n: usize = 100_003;
    let host: Vec<Vec2> = (0..n)
        .map(|i| Vec2 {
            x: i as f32,
            y: -(i as f32) * 0.5,
        })
        .collect();
    let mut sb = dev.upload_soa(&host)?;
    let mut ab = dev.upload(&host)?;
    let grid = dims1d(n.div_ceil(256) as u32);
    swap_scale.launch(&dev, grid, dims1d(256), (&mut sb, 3.0))?;
    swap_scale.launch(&dev, grid, dims1d(256), (&mut ab, 3.0))?;
    let want: Vec<Vec2> = host
        .iter()
        .map(|v| Vec2 {
            x: v.y * 3.0,
            y: v.x,
        })
        .collect();
    assert_eq!(sb.to_vec()?, want);
    assert_eq!(ab.to_vec()?, want);
    Ok(())
}

/// Swaps the fields, scaling one.
#[kernel]
fn swap_scale(v: &mut [Vec2], s: f32) {
    let i = global_id_x();
    if i < v.len() {
        let x: f32 = v[i].x;
        v[i].x = v[i].y * s;
        v[i].y = x;
    }
}
