//! The parameter ABI carried by every generated `Source` (`spoc_codegen::abi`): what it says
//! per target, checked against the parameters the generated code itself declares (PTX
//! `.param`s, the C entry's parameter list, the SPIR-V bindings' layout), and the one SoA
//! refusal.

mod support;

use spoc_codegen::abi::{
    describe, refuse_soa, Abi, AbiParam, Binding, BlockField, DynShared, ParamKind, Passing, Slot,
};
use spoc_codegen::{generate_source_with, Capabilities, CodegenError, Options, Source, Target};
use spoc_ir::{Kernel, ScalarType, Type};
use support::*;

/// `mixed(flag: bool, x: &[f32], n: u32, p: &mut [Particle], z: i64, y: &mut [f64])` with a
/// shared array `s: [f32]` sized at launch; `Particle { x: f32, v: f64 }`.
fn mixed() -> Kernel {
    let mut b = B::new();
    let flag = b.param("flag", Type::BOOL, false);
    let x = b.buf("x", Type::F32);
    let n = b.param("n", Type::U32, false);
    let p = b.buf_mut("p", Type::Record("Particle".into()));
    let _z = b.param("z", Type::I64, false);
    let y = b.buf_mut("y", Type::F64);
    let s = b.shared("s", Type::F32, None);
    let _ = (flag, n, p);
    b.push(assign(at(&s, tid()), idx(&x, tid())));
    b.push(assign(
        at(&y, u32c(0)),
        cast(idx(&s, u32c(0)), ScalarType::F64),
    ));
    let mut k = b.kernel("mixed");
    k.records = vec![record("Particle", &[("x", Type::F32), ("v", Type::F64)])];
    k
}

fn opts<'a>(target: Target, soa: &'a [&'a str], checked: bool) -> Options<'a> {
    Options {
        block: Some([64, 1, 1]),
        soa_params: soa,
        caps: Capabilities::for_target(target),
        checked,
    }
}

fn gen(target: Target, soa: &[&str], checked: bool) -> Source {
    generate_source_with(target, &mixed(), &opts(target, soa, checked))
        .unwrap_or_else(|e| panic!("{target:?}: {e}"))
        .unwrap()
}

fn buffer(mutable: bool, elem_bytes: u32) -> ParamKind {
    ParamKind::Buffer {
        mutable,
        elem_bytes,
    }
}

fn params(soa: bool) -> Vec<AbiParam> {
    let p = |name: &str, kind| AbiParam {
        name: name.into(),
        kind,
    };
    vec![
        p("flag", ParamKind::Scalar(ScalarType::Bool)),
        p("x", buffer(false, 4)),
        p("n", ParamKind::Scalar(ScalarType::U32)),
        p(
            "p",
            if soa {
                ParamKind::Soa {
                    mutable: true,
                    fields: vec![("x".into(), ScalarType::F32), ("v".into(), ScalarType::F64)],
                }
            } else {
                buffer(true, 16)
            },
        ),
        p("z", ParamKind::Scalar(ScalarType::I64)),
        p("y", buffer(true, 8)),
    ]
}

fn args_of_params(soa: bool) -> Vec<Slot> {
    let addr = |param| Slot::Address { param, field: None };
    let mut v = vec![
        Slot::Scalar { param: 0, size: 1 },
        addr(1),
        Slot::Length { param: 1 },
        Slot::Scalar { param: 2, size: 4 },
    ];
    if soa {
        v.push(Slot::Address {
            param: 3,
            field: Some(0),
        });
        v.push(Slot::Address {
            param: 3,
            field: Some(1),
        });
    } else {
        v.push(addr(3));
    }
    v.extend([
        Slot::Length { param: 3 },
        Slot::Scalar { param: 4, size: 8 },
        addr(5),
        Slot::Length { param: 5 },
    ]);
    v
}

/// `BlockField { param, offset, size }`.
fn block_field(param: usize, offset: u32, size: u32) -> BlockField {
    BlockField {
        param,
        offset,
        size,
    }
}

#[test]
fn ptx_passes_every_parameter_then_the_fault_record() {
    for (soa, checked) in [(false, false), (true, false), (false, true), (true, true)] {
        let names: &[&str] = if soa { &["p"] } else { &[] };
        let src = gen(Target::CudaPtx, names, checked);
        let mut want = args_of_params(soa);
        if checked {
            want.push(Slot::FaultRecord);
        }
        assert_eq!(
            src.abi,
            Abi {
                params: params(soa),
                passing: Passing::Arguments(want.clone()),
                dyn_shared: Some(DynShared { elem_bytes: 4 }),
            },
            "soa {soa}, checked {checked}"
        );
        // The PTX's own `.param` list: one per slot, each of the slot's width.
        let text = src.text().unwrap();
        let decl: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with(".param ") && !l.ends_with(';'))
            .collect();
        assert_eq!(decl.len(), want.len(), "{decl:#?}");
        for (d, slot) in decl.iter().zip(&want) {
            let width = match slot {
                Slot::Scalar { size: 1, .. } => ".u8",
                Slot::Scalar { size: 4, .. } | Slot::Length { .. } => "32",
                Slot::Scalar { size: 8, .. } | Slot::Address { .. } | Slot::FaultRecord => "64",
                other => panic!("unexpected slot {other:?}"),
            };
            assert!(d.contains(width), "{d} for {slot:?}");
        }
    }
}

/// The parameter list of the generated C entry (between the entry's name and `)`).
fn c_params(src: &Source) -> Vec<String> {
    let text = src.text().unwrap();
    let at = text
        .find(&format!("{}(", src.entry))
        .unwrap_or_else(|| panic!("no entry {} in\n{text}", src.entry));
    let rest = &text[at + src.entry.len() + 1..];
    let list = &rest[..rest.find(')').unwrap()];
    list.split(',')
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

#[test]
fn c_targets_add_the_shared_length_and_fault_record() {
    for target in [Target::CudaC, Target::Hip, Target::OpenCl] {
        for checked in [false, true] {
            let src = gen(target, &[], checked);
            let mut want = args_of_params(false);
            if target == Target::OpenCl {
                want.push(Slot::SharedLocal);
            }
            want.push(Slot::SharedLength { elem_bytes: 4 });
            if checked {
                want.push(Slot::FaultRecord);
            }
            assert_eq!(
                src.abi.arguments(),
                &want[..],
                "{target:?} checked {checked}"
            );
            assert_eq!(src.abi.params, params(false));
            assert_eq!(src.abi.has_fault_record(), checked);
            let decl = c_params(&src);
            assert_eq!(decl.len(), want.len(), "{target:?}: {decl:#?}");
            for (d, slot) in decl.iter().zip(&want) {
                match slot {
                    Slot::Address { .. } | Slot::SharedLocal | Slot::FaultRecord => {
                        assert!(d.contains('*'), "{target:?}: {d} for {slot:?}")
                    }
                    Slot::Length { .. } | Slot::SharedLength { .. } => {
                        assert!(d.contains("_len"), "{target:?}: {d} for {slot:?}")
                    }
                    Slot::Scalar { .. } => assert!(!d.contains('*'), "{target:?}: {d}"),
                }
            }
        }
    }
}

#[test]
fn vulkan_binds_a_scalar_block_then_buffers_then_the_fault_record() {
    // No dynamic shared array here: naga's text targets refuse it, and SPIR-V specialises it.
    let mut b = B::new();
    let _flag = b.param("flag", Type::BOOL, false);
    let x = b.buf("x", Type::F32);
    let _n = b.param("n", Type::U32, false);
    let _z = b.param("z", Type::F32, false);
    let y = b.buf_mut("y", Type::F32);
    b.push(assign(at(&y, tid()), idx(&x, tid())));
    let k = b.kernel("bind");
    for target in [Target::Vulkan, Target::WebGpu, Target::Metal, Target::Glsl] {
        for checked in [false, true] {
            if checked && target != Target::Vulkan {
                continue;
            }
            let src = generate_source_with(target, &k, &opts(target, &[], checked))
                .unwrap()
                .unwrap();
            let (layout, bytes) = spoc_codegen::naga::scalar_params_layout(target, &k).unwrap();
            assert_eq!(bytes, 12);
            let fields: Vec<BlockField> = layout
                .iter()
                .map(|s| BlockField {
                    param: s.param,
                    offset: s.offset,
                    size: s.size,
                })
                .collect();
            // bool as a u32 at 0, n at 4, z at 8.
            assert_eq!(
                fields,
                vec![
                    block_field(0, 0, 4),
                    block_field(2, 4, 4),
                    block_field(3, 8, 4),
                ]
            );
            let mut want = vec![
                (0, Binding::ScalarBlock { bytes, fields }),
                (1, Binding::Buffer { param: 1 }),
                (2, Binding::Buffer { param: 4 }),
            ];
            if checked {
                want.push((3, Binding::FaultRecord));
            }
            assert_eq!(src.abi.bindings(), &want[..], "{target:?}");
            assert!(src.abi.arguments().is_empty());
        }
    }
    // Without scalars there is no block, and the buffers still start at binding 1.
    let mut b = B::new();
    let y = b.buf_mut("y", Type::U32);
    b.push(assign(at(&y, tid()), tid()));
    let src = generate_source_with(
        Target::Vulkan,
        &b.kernel("only"),
        &opts(Target::Vulkan, &[], true),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        src.abi.bindings(),
        &[(1, Binding::Buffer { param: 0 }), (2, Binding::FaultRecord)]
    );
}

#[test]
fn soa_is_refused_in_one_place_for_every_target_but_ptx() {
    let k = mixed();
    for target in Target::ALL {
        let got = generate_source_with(target, &k, &opts(target, &["p"], false));
        if target == Target::CudaPtx {
            assert!(got.is_ok(), "{got:?}");
            continue;
        }
        match got {
            Err(CodegenError::FeatureNotSupported { backend, feature }) => {
                assert_eq!(backend, target.backend_name());
                assert!(feature.contains("`p` of kernel `mixed`"), "{feature}");
            }
            other => panic!("{target:?}: {other:?}"),
        }
        assert!(matches!(
            describe(target, &k, &opts(target, &["p"], false)),
            Err(CodegenError::FeatureNotSupported { .. })
        ));
    }
    assert!(refuse_soa(Target::OpenCl, "k", &[]).is_ok());
    assert!(refuse_soa(Target::CudaPtx, "k", &["p"]).is_ok());
    // PTX refuses a non-record buffer as SoA (the CUDA/PTX half of `module_cache_and_teardown`).
    assert!(matches!(
        generate_source_with(Target::CudaPtx, &k, &opts(Target::CudaPtx, &["x"], false)),
        Err(CodegenError::FeatureNotSupported { .. })
    ));
}

#[test]
fn external_abis() {
    let p = |kind| AbiParam {
        name: String::new(),
        kind,
    };
    let ps = vec![
        p(ParamKind::Scalar(ScalarType::Bool)),
        p(buffer(true, 0)),
        p(ParamKind::Scalar(ScalarType::F64)),
        p(ParamKind::Scalar(ScalarType::U32)),
    ];
    let a = Abi::external_arguments(ps.clone(), true);
    assert_eq!(
        a.arguments(),
        &[
            Slot::Scalar { param: 0, size: 1 },
            Slot::Address {
                param: 1,
                field: None
            },
            Slot::Length { param: 1 },
            Slot::Scalar { param: 2, size: 8 },
            Slot::Scalar { param: 3, size: 4 },
            Slot::SharedLocal,
        ]
    );
    // The external SPIR-V block: bool 4 bytes at 0, f64 at 8, u32 at 16; 24 bytes in all.
    let b = Abi::external_bindings(ps);
    assert_eq!(
        b.bindings(),
        &[
            (
                0,
                Binding::ScalarBlock {
                    bytes: 24,
                    fields: vec![
                        block_field(0, 0, 4),
                        block_field(2, 8, 8),
                        block_field(3, 16, 4),
                    ]
                }
            ),
            (1, Binding::Buffer { param: 1 }),
        ]
    );
    assert!(Abi::default().arguments().is_empty() && !Abi::default().has_fault_record());
}
