//! The `gemm` program (`examples/programs/gemm.rs`: `C = A * B`, bf16 and f16 in, f32 out, on
//! the warp-level `mma`) at small shapes that are not multiples of its tiles, with both tile
//! configurations, on every device: bit for bit on Native and the Interpreter, within
//! `(k + 1) · ε · Σ|a·b|` on a GPU (the program's own check). A device that does not lower the
//! `mma` (OpenCL, Vulkan, HIP, CUDA below sm_80) refuses it with `FeatureNotSupported`: printed
//! as skipped with its reason, never a silent pass; the CPU backends must run it.

#[path = "../../tests/common/mod.rs"]
mod common;

use programs::gemm::{run_shape, Half, Tiles};
use spoc_testkit::devices::{check_each_device, label};

fn case(half: Half, tiles: Tiles, shape: (usize, usize, usize)) {
    let (m, n, k) = shape;
    println!("gemm {} {m}x{n}x{k} {tiles:?}", half.name());
    check_each_device(common::devices(), 2, |dev, check| {
        if dev.capabilities.shared_mem_per_block < tiles.shared_bytes() {
            // Only where the test forces the tiles: the program picks the small ones there.
            check.skip(format!(
                "{tiles:?} tiles need {} bytes of shared memory a block, the device has {}",
                tiles.shared_bytes(),
                dev.capabilities.shared_mem_per_block
            ));
            return Ok(());
        }
        match run_shape(dev, half, tiles, shape) {
            Ok(o) if o.checked => println!("{}: ok ({})", label(dev), o.shape),
            Ok(o) => check.wrong(o.verdict()),
            Err(spoc::Error::FeatureNotSupported { backend, feature }) => {
                assert!(
                    !matches!(dev.framework, "Native" | "Interpreter"),
                    "{}: the CPU backends must run the mma: {feature}",
                    label(dev)
                );
                check.skip(format!("{backend} does not support {feature}"));
            }
            Err(e) => return Err(e),
        }
        Ok(())
    });
}

#[test]
fn pack_rows_pads_each_row_to_eight_values() {
    use programs::gemm::pack_rows;
    use spoc::prelude::U32x4;
    // 2 x 3 values: each row one 4-vector, value `2 i` in the low half of word `i`.
    let got = pack_rows(&[1, 2, 3, 4, 5, 6], 2, 3);
    let want = [
        U32x4::new(1 | (2 << 16), 3, 0, 0),
        U32x4::new(4 | (5 << 16), 6, 0, 0),
    ];
    assert_eq!(got, want);
    // Nine values a row: two 4-vectors, the second holding value 8 alone.
    let row: Vec<u16> = (1..=9).collect();
    let got = pack_rows(&row, 1, 9);
    assert_eq!(got.len(), 2);
    assert_eq!(got[1], U32x4::new(9, 0, 0, 0));
    assert_eq!(got[0].w, 7 | (8 << 16));
}

#[test]
fn bf16_odd_shapes_small_tiles() {
    case(Half::Bf16, Tiles::Small, (33, 47, 40));
    case(Half::Bf16, Tiles::Small, (1, 9, 17));
}

#[test]
fn f16_odd_shapes_small_tiles() {
    case(Half::F16, Tiles::Small, (33, 47, 40));
    case(Half::F16, Tiles::Small, (70, 3, 1));
}

#[test]
fn bf16_and_f16_64_cubed_small_tiles() {
    // One block, every tile full: no padding.
    case(Half::Bf16, Tiles::Small, (64, 64, 64));
    case(Half::F16, Tiles::Small, (64, 64, 64));
}

#[test]
fn big_tiles_odd_and_multi_block() {
    // 130 rows: two block rows of 128, the second nearly empty; k over two slices.
    case(Half::Bf16, Tiles::Big, (130, 47, 40));
    // Four slices: each shared buffer is written twice (the double buffer's reuse).
    case(Half::F16, Tiles::Big, (33, 136, 100));
    case(Half::Bf16, Tiles::Wide, (130, 47, 40));
}

#[test]
fn multiples_of_8() {
    // No padding in the rows: rows of `A` past `m`, a last slice of `k` half full (40 = 32 +
    // 8), a last block column of `B` partly outside `n`.
    case(Half::Bf16, Tiles::Small, (33, 136, 40));
    case(Half::F16, Tiles::Small, (1, 8, 8));
    // Three slices (the double buffer's reuse), two block rows and columns of the big tiles.
    case(Half::Bf16, Tiles::Big, (130, 200, 72));
    case(Half::F16, Tiles::Big, (64, 256, 96));
    // Four warps of 64 x 64: the B swizzle's second group of four columns (`j / 4 == 1`).
    case(Half::Bf16, Tiles::Wide, (130, 200, 72));
    case(Half::F16, Tiles::Wide, (70, 136, 40));
}

/// The PTX of every instance assembles (`ptxas -v`, sm_80 and sm_90) with its accumulators,
/// fragments and prefetched pairs in registers: no stack frame, no spills, no local memory.
/// Below sm_80 code generation refuses them (`Unsupported`, which a CUDA device reports as
/// `FeatureNotSupported`: a skip in the program).
#[test]
fn ptx_of_every_instance_assembles_without_stack() {
    use programs::gemm::{gemm_bf16, gemm_f16};
    use spoc::codegen::{generate_source_with, Capabilities, Options, Target};
    use spoc_testkit::toolchains::{assert_no_stack, ptxas_and_scratch_dir, ptxas_report};
    let kernels = [
        (
            "gemm_bf16_128",
            gemm_bf16::<128, 128, 32, 64, 32>.ir().unwrap(),
        ),
        (
            "gemm_bf16_64",
            gemm_bf16::<64, 64, 32, 32, 32>.ir().unwrap(),
        ),
        (
            "gemm_f16_128",
            gemm_f16::<128, 128, 32, 64, 32>.ir().unwrap(),
        ),
        ("gemm_f16_64", gemm_f16::<64, 64, 32, 32, 32>.ir().unwrap()),
        (
            "gemm_bf16_wide",
            gemm_bf16::<128, 128, 32, 64, 64>.ir().unwrap(),
        ),
    ];
    let ptx = |k, cc| {
        let mut caps = Capabilities::for_target(Target::CudaPtx);
        caps.compute_capability = Some(cc);
        let opts = Options {
            block: None,
            soa_params: &[],
            caps,
            checked: false,
        };
        generate_source_with(Target::CudaPtx, k, &opts)
            .map(|s| s.expect("PTX").text().expect("text").to_string())
    };
    for (name, k) in &kernels {
        let err = ptx(*k, (7, 5)).unwrap_err();
        assert!(err.to_string().contains("sm_80 or newer"), "{name}: {err}");
    }
    let Some((ptxas, dir)) = ptxas_and_scratch_dir("gemm's PTX through ptxas -v") else {
        return;
    };
    for (name, k) in &kernels {
        for (cc, arch) in [((8, 0), "sm_80"), ((9, 0), "sm_90")] {
            let text = ptx(*k, cc).unwrap_or_else(|e| panic!("{name} {arch}: {e}"));
            assert!(
                text.contains("mma.sync.aligned.m16n8k16.row.col.f32"),
                "{name}"
            );
            let log = ptxas_report(&ptxas, &dir, &format!("{name}_{arch}"), arch, &text)
                .unwrap_or_else(|e| panic!("{name} {arch}: ptxas rejected the PTX:\n{e}"));
            eprintln!("{name} {arch}: {}", log.trim().replace('\n', " | "));
            assert_no_stack(name, &log);
        }
    }
}

/// The CUDA C of every instance (for NVRTC: the `mma` in inline `asm volatile`) is generated
/// for sm_90, and clang's CUDA front end accepts it where clang is installed (the check of
/// `spoc-codegen/tests/support`, with its declarations of the CUDA built-ins).
#[test]
fn cuda_c_of_every_instance_compiles_with_clang() {
    use programs::gemm::{gemm_bf16, gemm_f16};
    use spoc::codegen::{generate_source_with, Capabilities, Options, Target};
    let kernels = [
        (
            "gemm_bf16_128",
            gemm_bf16::<128, 128, 32, 64, 32>.ir().unwrap(),
        ),
        ("gemm_f16_64", gemm_f16::<64, 64, 32, 32, 32>.ir().unwrap()),
    ];
    let clang = ["clang-19", "clang-18", "clang-17", "clang-16", "clang"]
        .into_iter()
        .find(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let dir = spoc_testkit::toolchains::ScratchDir::new("gemm-cuda-c");
    let decls = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../spoc-codegen/tests/support/cuda_decls.h"
    );
    for (name, k) in &kernels {
        let mut caps = Capabilities::for_target(Target::CudaC);
        caps.compute_capability = Some((9, 0));
        let opts = Options {
            block: None,
            soa_params: &[],
            caps,
            checked: false,
        };
        let src = generate_source_with(Target::CudaC, k, &opts)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .expect("CUDA C has source");
        let text = src.text().expect("text");
        assert!(text.contains("mma.sync.aligned.m16n8k16"), "{name}");
        let Some(clang) = clang else {
            let msg = format!("SKIPPED {name}: clang's CUDA check (no clang found)");
            if std::env::var("SPOC_REQUIRE_TOOLCHAINS").as_deref() == Ok("1") {
                panic!("{msg} (SPOC_REQUIRE_TOOLCHAINS=1)");
            }
            eprintln!("{msg}");
            continue;
        };
        let file = dir.join(format!("{name}.cu"));
        std::fs::write(&file, text).unwrap();
        let out = std::process::Command::new(clang)
            .args(["-x", "cuda", "--cuda-gpu-arch=sm_90", "--cuda-device-only"])
            .args([
                "-nocudainc",
                "-nocudalib",
                "-fsyntax-only",
                "-Werror",
                // A machine with a CUDA newer than this clang knows (the H200's CUDA 13) makes
                // clang warn about its version even with -nocudainc: not about the code.
                "-Wno-unknown-cuda-version",
                "-include",
            ])
            .arg(decls)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: clang rejected the CUDA C:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
