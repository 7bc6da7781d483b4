//! Assembles every corpus kernel's PTX with NVIDIA's `ptxas -arch=sm_90`.
//!
//! `ptxas` is looked up in `$SPOC_PTXAS`, then `PATH`, then `/opt/spoc-ptxas/usr/bin/ptxas`
//! (where `tests/support/fetch-ptxas.sh` installs it). Without it the test prints that it was
//! skipped, or fails when `SPOC_REQUIRE_TOOLCHAINS=1`.

mod ptx_corpus;

use std::path::PathBuf;
use std::process::Command;

fn find_ptxas() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("SPOC_PTXAS") {
        if !p.is_empty() {
            return Some(PathBuf::from(p));
        }
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let c = dir.join("ptxas");
            if c.is_file() {
                return Some(c);
            }
        }
    }
    let scratch = PathBuf::from("/opt/spoc-ptxas/usr/bin/ptxas");
    scratch.is_file().then_some(scratch)
}

/// `ptxas` or `None` (after printing why), failing if toolchains are required.
pub fn ptxas_or_skip(what: &str) -> Option<PathBuf> {
    match find_ptxas() {
        Some(p) => Some(p),
        None => {
            let msg = format!(
                "ptxas not found (set SPOC_PTXAS, put it on PATH, or run \
                 spoc-codegen/tests/support/fetch-ptxas.sh): {what} SKIPPED"
            );
            if std::env::var("SPOC_REQUIRE_TOOLCHAINS").as_deref() == Ok("1") {
                panic!("{msg} (SPOC_REQUIRE_TOOLCHAINS=1)");
            }
            eprintln!("{msg}");
            None
        }
    }
}

/// Assembles `ptx` for `arch`; returns ptxas's diagnostics on failure.
pub fn assemble(ptxas: &PathBuf, name: &str, ptx: &str, arch: &str) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("spoc-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let src = dir.join(format!("{name}.ptx"));
    let out = dir.join(format!("{name}.{arch}.cubin"));
    std::fs::write(&src, ptx).map_err(|e| e.to_string())?;
    let o = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let diag = String::from_utf8_lossy(&o.stderr).to_string() + &String::from_utf8_lossy(&o.stdout);
    if o.status.success() {
        Ok(diag)
    } else {
        Err(diag)
    }
}

#[test]
fn every_corpus_kernel_assembles_for_sm_90() {
    let Some(ptxas) = ptxas_or_skip("assembling the PTX corpus") else {
        return;
    };
    let mut failures = Vec::new();
    for (name, k, soa) in ptx_corpus::all() {
        let ptx = ptx_corpus::ptx(&k, &soa);
        match assemble(&ptxas, name, &ptx, "sm_90") {
            Ok(diag) => {
                assert!(!diag.contains("warning"), "{name}: ptxas warned:\n{diag}");
            }
            Err(diag) => failures.push(format!("--- {name}:\n{diag}")),
        }
    }
    assert!(
        failures.is_empty(),
        "ptxas rejected:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_checked_corpus_kernel_assembles_for_sm_90() {
    let Some(ptxas) = ptxas_or_skip("assembling the checked PTX corpus") else {
        return;
    };
    let mut failures = Vec::new();
    for (name, k, soa) in ptx_corpus::all() {
        let ptx = ptx_corpus::ptx_with(&k, &soa, true);
        assert!(
            ptx.contains("spoc_record_fault"),
            "{name}: no fault recorder"
        );
        match assemble(&ptxas, &format!("{name}_checked"), &ptx, "sm_90") {
            Ok(diag) => {
                assert!(!diag.contains("warning"), "{name}: ptxas warned:\n{diag}");
            }
            Err(diag) => failures.push(format!("--- {name} (checked):\n{diag}")),
        }
    }
    assert!(
        failures.is_empty(),
        "ptxas rejected checked PTX:\n{}",
        failures.join("\n")
    );
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
