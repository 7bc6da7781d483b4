//! The SGEMM program's PTX through `ptxas -v` (sm_90): each instance's register tile, operand
//! registers and accumulators live in registers — 0 bytes of stack frame, no spills, no local
//! memory — which the `unroll(…)` loops and the const tile sizes make possible.

use spoc::Target;

#[test]
fn sgemm_keeps_its_tiles_in_registers() {
    let Some(ptxas) = spoc_testkit::toolchains::ptxas_or_skip("sgemm's PTX through ptxas -v")
    else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("spoc-sgemm-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sources = [
        (
            "sgemm_128",
            programs::sgemm::sgemm::<128, 128, 8, 8, 8>.source(Target::CudaPtx),
        ),
        (
            "sgemm_64",
            programs::sgemm::sgemm::<64, 64, 8, 4, 4>.source(Target::CudaPtx),
        ),
    ];
    for (name, src) in sources {
        let src = src.expect("PTX generates").expect("CUDA/PTX has source");
        let ptx = src.text().expect("PTX is text");
        let log = spoc_testkit::toolchains::ptxas_report(&ptxas, &dir, name, "sm_90", ptx)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {}", log.trim().replace('\n', " | "));
        assert!(
            log.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
            "{name} uses the stack:\n{log}"
        );
        assert!(!log.contains("lmem"), "{name} uses local memory:\n{log}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
