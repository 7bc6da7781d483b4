//! The SGEMM program's PTX through `ptxas -v` (sm_90): each instance's register tile, operand
//! registers and accumulators live in registers — 0 bytes of stack frame, no spills, no local
//! memory — which the `unroll(…)` loops and the const tile sizes make possible.

use spoc::Target;
use spoc_testkit::toolchains::{assert_no_stack, ptxas_and_scratch_dir, ptxas_report};

#[test]
fn sgemm_keeps_its_tiles_in_registers() {
    let Some((ptxas, dir)) = ptxas_and_scratch_dir("sgemm's PTX through ptxas -v") else {
        return;
    };
    let sources = [
        (
            "sgemm_128",
            programs::sgemm::sgemm::<128, 128, 8, 8, 8>.source(Target::CudaPtx),
        ),
        (
            "sgemm_64",
            programs::sgemm::sgemm::<64, 64, 8, 4, 4>.source(Target::CudaPtx),
        ),
        (
            "sgemm_v4",
            programs::sgemm::sgemm_v4::<128, 256, 8, 8, 16>.source(Target::CudaPtx),
        ),
        (
            "sgemm_v4_bk16",
            programs::sgemm::sgemm_v4::<128, 256, 16, 8, 16>.source(Target::CudaPtx),
        ),
    ];
    for (name, src) in sources {
        let src = src.expect("PTX generates").expect("CUDA/PTX has source");
        let ptx = src.text().expect("PTX is text");
        let log = ptxas_report(&ptxas, &dir, name, "sm_90", ptx)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {}", log.trim().replace('\n', " | "));
        assert_no_stack(name, &log);
    }
}
