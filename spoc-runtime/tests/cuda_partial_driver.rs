//! A partial `libcuda` (a stub that exports only some of the driver's functions) makes the CUDA
//! backends unavailable with the missing names as the reason: no panic inside cudarc's loader,
//! which would abort a program built with `panic = "abort"`.
//!
//! The test builds such a stub with the system C compiler and runs this test binary again as a
//! child with `LD_LIBRARY_PATH` pointing at it (the dynamic loader reads that variable at
//! process start), so the child's CUDA backends find the stub whatever the machine has.

use std::path::PathBuf;
use std::process::Command;

const CHILD: &str = "SPOC_TEST_PARTIAL_CUDA_CHILD";

/// A driver that initialises and reports one device, and has nothing else.
const STUB: &str = r#"
int cuInit(unsigned flags) { (void)flags; return 0; }
int cuDriverGetVersion(int *v) { *v = 12080; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = "stub"; return 0; }
int cuGetErrorString(int e, const char **s) { (void)e; *s = "stub"; return 0; }
"#;

fn build_stub() -> Option<PathBuf> {
    let dir = std::env::temp_dir().join(format!("spoc-partial-cuda-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let src = dir.join("stub.c");
    std::fs::write(&src, STUB).ok()?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join("libcuda.so"))
        .arg(&src)
        .output();
    match out {
        Ok(o) if o.status.success() => {
            // Also under the versioned name cudarc tries later.
            let _ = std::fs::copy(dir.join("libcuda.so"), dir.join("libcuda.so.1"));
            Some(dir)
        }
        Ok(o) => panic!(
            "{cc} failed to build the stub driver: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            if std::env::var("SPOC_REQUIRE_TOOLCHAINS").is_ok_and(|v| v == "1") {
                panic!("no C compiler ({cc}: {e}) and SPOC_REQUIRE_TOOLCHAINS=1");
            }
            eprintln!("skipped: no C compiler ({cc}: {e}) to build a stub libcuda");
            None
        }
    }
}

#[test]
fn a_partial_driver_makes_cuda_unavailable_without_a_panic() {
    if std::env::var_os(CHILD).is_some() {
        // The child: ask for CUDA, print what came back.
        let got = spoc_runtime::init_device(Some("CUDA"));
        println!("CHILD-RESULT {got:?}");
        let all = spoc_runtime::all_devices(None).expect("listing devices");
        println!(
            "CHILD-DEVICES {:?}",
            all.iter().map(|d| d.framework).collect::<Vec<_>>()
        );
        return;
    }
    let Some(dir) = build_stub() else { return };
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_partial_driver_makes_cuda_unavailable_without_a_panic",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", &dir)
        .output()
        .expect("running the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(
        !stderr.contains("panicked"),
        "a panic was printed:\n{stderr}"
    );
    let result = stdout
        .lines()
        .find_map(|l| l.find("CHILD-RESULT").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("no result line:\n{stdout}"));
    assert!(result.contains("BackendUnavailable"), "{result}");
    assert!(
        result.contains("lacks") && result.contains("cuMemAlloc_v2"),
        "the reason names the missing functions: {result}"
    );
    let devices = stdout
        .lines()
        .find_map(|l| l.find("CHILD-DEVICES").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("no devices line:\n{stdout}"));
    assert!(!devices.contains("CUDA"), "{devices}");
    assert!(
        devices.contains("Native") && devices.contains("Interpreter"),
        "{devices}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
