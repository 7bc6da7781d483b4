//! The validators tests run generated code through: NVIDIA's `ptxas`.
//!
//! A test that needs one and does not find it prints `SKIPPED <what>: …` and returns, unless
//! `SPOC_REQUIRE_TOOLCHAINS=1` (CI, after `spoc-codegen/tests/support/fetch-ptxas.sh`), which
//! makes the missing tool a failure.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// [`ptxas_or_skip`], with a new [`ScratchDir`] for the files it reads and writes.
///
/// # Panics
/// As [`ptxas_or_skip`], and when the folder cannot be created.
pub fn ptxas_and_scratch_dir(what: &str) -> Option<(PathBuf, ScratchDir)> {
    let ptxas = ptxas_or_skip(what)?;
    Some((ptxas, ScratchDir::new("ptxas")))
}

/// A folder for one test's files, `<temp dir>/spoc-<tag>-<process id>-<n>` (`n` new for each
/// folder of the process, so tests running at once never share one). Dropping it removes it,
/// unless the thread is panicking: a failing test leaves its files to look at.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates the next folder for `tag`.
    ///
    /// # Panics
    /// When the folder cannot be created.
    pub fn new(tag: &str) -> ScratchDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("spoc-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        ScratchDir(dir)
    }
}

impl Deref for ScratchDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Asserts that the `ptxas -v` report `log` of `name` ([`ptxas_report`]) shows it kept in
/// registers: 0 bytes of stack frame, no spills, no local memory.
///
/// # Panics
/// When it is not.
pub fn assert_no_stack(name: &str, log: &str) {
    assert!(
        log.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
        "{name} uses the stack:\n{log}"
    );
    assert!(!log.contains("lmem"), "{name} uses local memory:\n{log}");
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
