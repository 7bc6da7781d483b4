//! The warp-level matrix multiply-accumulate in generated code (issue 14's first slice): a kernel
//! written in the kernel language (lowered in-process by `spoc-frontend`) with an `f16` and a
//! `bf16` `mma_sync_m16n8k16`. Its PTX (sm_80, sm_90) holds one `mma.sync.aligned.m16n8k16`
//! instruction of each type on packed registers, and NVIDIA's `ptxas` assembles it for both
//! architectures; CUDA C wraps the same instruction in inline `asm volatile` (checked by clang's
//! CUDA front end); below sm_80 and on OpenCL, HIP and the naga targets the operation is a typed
//! refusal (`CodegenError::Unsupported`) naming the target. The values are checked on every device
//! by the root crate's `tests/mma.rs`.

mod support;

use spoc_codegen::{generate_source_with, Capabilities, CodegenError, Options, Target};
use spoc_testkit::toolchains::{ptxas_and_scratch_dir, ptxas_report};

const KERNEL: &str = r#"
fn mma_both(a: &[f16], b: &[f16], ab: &[bf16], bb: &[bf16], c: &[F32x4], d: &mut [F32x4]) {
    let lane = lane_id();
    let i = 8 * lane;
    let fa = U32x4::new(
        pack_f16x2(a[i], a[i + 1]),
        pack_f16x2(a[i + 2], a[i + 3]),
        pack_f16x2(a[i + 4], a[i + 5]),
        pack_f16x2(a[i + 6], a[i + 7]),
    );
    let fb = U32x2::new(pack_f16x2(b[4 * lane], b[4 * lane + 1]), pack_f16x2(b[4 * lane + 2], b[4 * lane + 3]));
    let acc = mma_sync_m16n8k16_f16(fa, fb, c[lane]);
    let ga = U32x4::new(
        pack_bf16x2(ab[i], ab[i + 1]),
        pack_bf16x2(ab[i + 2], ab[i + 3]),
        pack_bf16x2(ab[i + 4], ab[i + 5]),
        pack_bf16x2(ab[i + 6], ab[i + 7]),
    );
    let gb = U32x2::new(pack_bf16x2(bb[4 * lane], bb[4 * lane + 1]), pack_bf16x2(bb[4 * lane + 2], bb[4 * lane + 3]));
    d[lane] = mma_sync_m16n8k16_bf16(ga, gb, acc);
}
"#;

/// `f16` only (Vulkan refuses `bf16` storage before it reaches the operation).
const KERNEL_F16: &str = r#"
fn mma_f16(a: &[f16], b: &[f16], c: &[F32x4], d: &mut [F32x4]) {
    let lane = lane_id();
    let i = 8 * lane;
    let fa = U32x4::new(
        pack_f16x2(a[i], a[i + 1]),
        pack_f16x2(a[i + 2], a[i + 3]),
        pack_f16x2(a[i + 4], a[i + 5]),
        pack_f16x2(a[i + 6], a[i + 7]),
    );
    let fb = U32x2::new(pack_f16x2(b[4 * lane], b[4 * lane + 1]), pack_f16x2(b[4 * lane + 2], b[4 * lane + 3]));
    d[lane] = mma_sync_m16n8k16_f16(fa, fb, c[lane]);
}
"#;

fn source_with(
    src: &str,
    target: Target,
    cc: Option<(u32, u32)>,
    subgroups: bool,
) -> Result<String, CodegenError> {
    source_checked(src, target, cc, subgroups, false)
}

fn source_checked(
    src: &str,
    target: Target,
    cc: Option<(u32, u32)>,
    subgroups: bool,
    checked: bool,
) -> Result<String, CodegenError> {
    let kernel = spoc_frontend::lower_kernel_source(src).unwrap_or_else(|e| panic!("{e:?}"));
    let mut caps = Capabilities::for_target(target);
    caps.compute_capability = cc;
    caps.subgroups |= subgroups;
    let src = generate_source_with(
        target,
        &kernel,
        &Options {
            block: Some([32, 1, 1]),
            soa_params: &[],
            caps,
            checked,
        },
    )?
    .expect("a source target");
    Ok(src.text().map(str::to_string).unwrap_or_default())
}

fn source(target: Target, cc: Option<(u32, u32)>) -> Result<String, CodegenError> {
    source_with(KERNEL, target, cc, false)
}

/// `line` with every register name replaced by its class and `N` (`%f12`, `%r_acc_x` → `%fN`,
/// `%rN`), so that the shape of an instruction can be compared exactly without depending on
/// register numbering or naming.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.trim().chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' {
            while let Some(&l) = chars.peek().filter(|l| l.is_ascii_lowercase()) {
                out.push(l);
                chars.next();
            }
            let mut named = false;
            while chars
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                named = true;
                chars.next();
            }
            if named {
                out.push('N');
            }
        }
    }
    out
}

#[test]
fn ptx_has_one_mma_sync_of_each_type_from_sm_80() {
    for cc in [(8, 0), (8, 6), (9, 0)] {
        let ptx = source(Target::CudaPtx, Some(cc)).unwrap();
        let mmas: Vec<String> = ptx
            .lines()
            .filter(|l| l.contains("mma."))
            .map(shape)
            .collect();
        assert_eq!(
            mmas,
            [
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%fN, %fN, %fN, %fN}, {%rN, %rN, %rN, %rN}, {%rN, %rN}, {%fN, %fN, %fN, %fN};",
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%fN, %fN, %fN, %fN}, {%rN, %rN, %rN, %rN}, {%rN, %rN}, {%fN, %fN, %fN, %fN};",
            ],
            "{cc:?}:\n{ptx}"
        );
        // The fragments' registers are packed 16-bit pairs, low element first.
        let packs = ptx
            .lines()
            .filter(|l| shape(l) == "mov.b32 %rN, {%rsN, %rsN};")
            .count();
        assert_eq!(packs, 12, "{cc:?}: 12 packed registers\n{ptx}");
        assert!(
            ptx.contains(&format!(".target sm_{}{}", cc.0, cc.1)),
            "{ptx}"
        );
    }
}

/// `ptxas` (11.8: PTX ISA 7.8) assembles the PTX for sm_80 and sm_90, plain and in checked mode
/// (bounds-checked loads around the operation), without a warning.
#[test]
fn ptxas_assembles_the_mma_for_sm_80_and_sm_90() {
    let Some((ptxas, dir)) = ptxas_and_scratch_dir("assembling mma PTX") else {
        return;
    };
    for ((cc, arch), checked) in [((9, 0), "sm_90"), ((8, 0), "sm_80")]
        .into_iter()
        .flat_map(|t| [(t, false), (t, true)])
    {
        let ptx = source_checked(KERNEL, Target::CudaPtx, Some(cc), false, checked).unwrap();
        let name = format!("mma_{arch}{}", if checked { "_checked" } else { "" });
        match ptxas_report(&ptxas, &dir, &name, arch, &ptx) {
            Ok(diag) => assert!(!diag.contains("warning"), "{arch}: ptxas warned:\n{diag}"),
            Err(diag) => panic!("{arch}: ptxas rejected the PTX:\n{diag}\n{ptx}"),
        }
    }
}

/// Below sm_80 (and with no compute capability given, which means sm_70) the PTX generator
/// refuses the kernel, naming the operation and the architecture it needs.
#[test]
fn ptx_refuses_mma_below_sm_80() {
    for cc in [None, Some((7, 5)), Some((7, 0)), Some((6, 1))] {
        match source(Target::CudaPtx, cc) {
            Err(CodegenError::Unsupported {
                target,
                node,
                capability,
                ..
            }) => {
                assert_eq!(target, "CUDA/PTX");
                assert!(node.contains("mma_sync_m16n8k16_f16"), "{node}");
                assert!(capability.contains("sm_80 or newer"), "{capability}");
            }
            other => panic!("{cc:?}: expected Unsupported, got {other:?}"),
        }
    }
}

/// CUDA C: the same instruction in inline `asm volatile`, from compute capability 8.0; refused
/// below it.
#[test]
fn cuda_c_wraps_mma_sync_in_inline_asm() {
    let c = source(Target::CudaC, Some((9, 0))).unwrap();
    for t in ["f16", "bf16"] {
        assert!(
            c.contains(&format!(
                "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 \""
            )),
            "{t}:\n{c}"
        );
        assert!(c.contains(&format!("spoc_mma_m16n8k16_{t}(")), "{t}:\n{c}");
    }
    for cc in [None, Some((7, 5))] {
        match source(Target::CudaC, cc) {
            Err(CodegenError::Unsupported {
                target, capability, ..
            }) => {
                assert_eq!(target, "CUDA/C");
                assert!(
                    capability.contains("compute capability 8.0"),
                    "{capability}"
                );
            }
            other => panic!("{cc:?}: expected Unsupported, got {other:?}"),
        }
    }
}

/// clang's CUDA front end accepts the CUDA C (it checks the `asm` statement's operands and
/// constraints, not the PTX text).
#[test]
fn cuda_c_compiles_with_clang() {
    let c = source(Target::CudaC, Some((9, 0))).unwrap();
    support::toolchains::check_all("mma", &[("mma_both".into(), Target::CudaC, c)]);
}

/// OpenCL, HIP and the naga targets refuse the operation (a typed error naming the target), even
/// on devices with subgroups.
#[test]
fn other_targets_refuse_mma_by_name() {
    for target in [
        Target::OpenCl,
        Target::Hip,
        Target::Vulkan,
        Target::Metal,
        Target::WebGpu,
    ] {
        match source_with(KERNEL_F16, target, Some((9, 0)), true) {
            Err(CodegenError::Unsupported {
                target: t, node, ..
            }) => {
                assert_eq!(t, target.backend_name(), "{node}");
                assert!(
                    node.contains("mma_sync_m16n8k16") || node.contains("pack_"),
                    "{target:?}: {node}"
                );
            }
            other => panic!("{target:?}: expected Unsupported, got {other:?}"),
        }
    }
}
