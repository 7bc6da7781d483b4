//! The validators tests run generated code through: NVIDIA's `ptxas`.
//!
//! A test that needs one and does not find it prints `SKIPPED <what>: …` and returns, unless
//! `SPOC_REQUIRE_TOOLCHAINS=1` (CI, after `spoc-codegen/tests/support/fetch-ptxas.sh`), which
//! makes the missing tool a failure.

use std::path::PathBuf;

/// `ptxas`: `$SPOC_PTXAS`, else `ptxas` on `PATH`, else `/opt/spoc-ptxas/usr/bin/ptxas` (where
/// `fetch-ptxas.sh` installs it).
pub fn ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SPOC_PTXAS").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("ptxas"))
            .find(|c| c.is_file())
    });
    on_path.or_else(|| {
        let p = PathBuf::from("/opt/spoc-ptxas/usr/bin/ptxas");
        p.is_file().then_some(p)
    })
}

/// [`ptxas`], or `None` after printing that `what` was skipped.
///
/// # Panics
/// When `ptxas` is missing and `SPOC_REQUIRE_TOOLCHAINS=1`.
pub fn ptxas_or_skip(what: &str) -> Option<PathBuf> {
    let found = ptxas();
    if found.is_none() {
        let msg = format!("SKIPPED {what}: ptxas not found (SPOC_PTXAS, PATH, /opt/spoc-ptxas)");
        if std::env::var("SPOC_REQUIRE_TOOLCHAINS").as_deref() == Ok("1") {
            panic!("{msg} (SPOC_REQUIRE_TOOLCHAINS=1)");
        }
        eprintln!("{msg}");
    }
    found
}

/// What `ptxas -v -arch=<arch>` says about `ptx` (written as `<dir>/<name>.ptx`): its stderr,
/// the register, stack and spill report.
///
/// # Errors
/// ptxas's diagnostics when it fails.
pub fn ptxas_report(
    ptxas: &std::path::Path,
    dir: &std::path::Path,
    name: &str,
    arch: &str,
    ptx: &str,
) -> Result<String, String> {
    let src = dir.join(format!("{name}.ptx"));
    std::fs::write(&src, ptx).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(ptxas)
        .args(["-v", &format!("-arch={arch}")])
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{name}.cubin")))
        .output()
        .map_err(|e| format!("{}: {e}", ptxas.display()))?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(log)
    } else {
        Err(log)
    }
}
