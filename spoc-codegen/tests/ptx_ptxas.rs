//! Assembles every corpus kernel's PTX with NVIDIA's `ptxas -arch=sm_90`.
//!
//! `ptxas` is looked up in `$SPOC_PTXAS`, then `PATH`, then `/opt/spoc-ptxas/usr/bin/ptxas`
//! (where `tests/support/fetch-ptxas.sh` installs it). Without it the test prints that it was
//! skipped, or fails when `SPOC_REQUIRE_TOOLCHAINS=1`.

mod ptx_corpus;

use spoc_testkit::toolchains::{ptxas_and_scratch_dir, ptxas_report};

/// Assembles every corpus kernel for sm_90, in checked mode (which must record faults) when
/// `checked`; fails listing every kernel ptxas rejects, and at once on a warning.
fn corpus_assembles(checked: bool) {
    let what = if checked { "checked PTX" } else { "PTX" };
    let Some((ptxas, dir)) = ptxas_and_scratch_dir(&format!("assembling the {what} corpus")) else {
        return;
    };
    let mut failures = Vec::new();
    for (name, k, soa) in ptx_corpus::all() {
        let ptx = ptx_corpus::ptx_with(&k, &soa, checked);
        let name = if checked {
            assert!(
                ptx.contains("spoc_record_fault"),
                "{name}: no fault recorder"
            );
            format!("{name}_checked")
        } else {
            name.to_string()
        };
        match ptxas_report(&ptxas, &dir, &name, "sm_90", &ptx) {
            Ok(diag) => {
                assert!(!diag.contains("warning"), "{name}: ptxas warned:\n{diag}");
            }
            Err(diag) => failures.push(format!("--- {name}:\n{diag}")),
        }
    }
    assert!(
        failures.is_empty(),
        "ptxas rejected {what}:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_corpus_kernel_assembles_for_sm_90() {
    corpus_assembles(false);
}

#[test]
fn every_checked_corpus_kernel_assembles_for_sm_90() {
    corpus_assembles(true);
}

#[test]
#[ignore]
fn dump_corpus() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ptx-corpus");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, k, soa) in ptx_corpus::all() {
        std::fs::write(dir.join(format!("{name}.ptx")), ptx_corpus::ptx(&k, &soa)).unwrap();
    }
    eprintln!("dumped to {}", dir.display());
}
