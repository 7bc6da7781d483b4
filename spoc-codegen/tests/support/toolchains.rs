//! Runs real compilers on generated C-family sources: clang for OpenCL C and CUDA C (device
//! side, syntax only, with `cuda_decls.h` standing in for NVRTC's built-in declarations), and
//! hipcc for HIP C. Shared by `spoc-codegen/tests/c_toolchains.rs` and the root package's
//! `tests/codegen_c.rs` (through `#[path]`).
//!
//! A missing tool is a skip, printed with the reason, unless `SPOC_REQUIRE_TOOLCHAINS=1`, which
//! makes it a failure (CI sets it once the tools are installed). `SPOC_CLANG` and `SPOC_HIPCC`
//! name the tools explicitly.
#![allow(dead_code)]

use spoc_codegen::Target;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The declarations header for checking CUDA C with clang.
pub const CUDA_DECLS: &str = include_str!("cuda_decls.h");

/// True if `SPOC_REQUIRE_TOOLCHAINS=1`.
pub fn required() -> bool {
    std::env::var("SPOC_REQUIRE_TOOLCHAINS").is_ok_and(|v| v == "1")
}

fn runs(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A clang that can check OpenCL C and CUDA device code for sm_90 (clang 16 or newer), if any.
pub fn clang() -> Option<String> {
    if let Ok(c) = std::env::var("SPOC_CLANG") {
        return runs(&c, "--version").then_some(c);
    }
    ["clang-19", "clang-18", "clang-17", "clang-16", "clang"]
        .into_iter()
        .find(|c| runs(c, "--version"))
        .map(str::to_string)
}

/// hipcc, if installed.
pub fn hipcc() -> Option<String> {
    let c = std::env::var("SPOC_HIPCC").unwrap_or_else(|_| "hipcc".into());
    // hipcc exits non-zero on machines without an AMD GPU even for --version: it only has to
    // start.
    Command::new(&c)
        .arg("--version")
        .output()
        .is_ok()
        .then_some(c)
}

/// The compiler for `target` and why it is missing.
pub fn tool(target: Target) -> Result<String, String> {
    match target {
        Target::Hip => hipcc().ok_or_else(|| {
            "hipcc not found (Debian: apt-get install hipcc libamdhip64-dev; or set SPOC_HIPCC)"
                .to_string()
        }),
        _ => clang().ok_or_else(|| {
            "clang not found (Debian bookworm: apt-get install clang-19; or set SPOC_CLANG)"
                .to_string()
        }),
    }
}

/// A fresh directory for the sources of one test.
pub fn work_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("spoc-c-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the work directory");
    dir
}

/// Compiles (syntax only) `source` for `target` with `tool`, in `dir`, as file `name`; returns
/// the compiler's diagnostics on failure.
pub fn check(
    tool: &str,
    target: Target,
    dir: &Path,
    name: &str,
    source: &str,
) -> Result<(), String> {
    let file = dir.join(format!("{name}.{}", target.file_extension()));
    std::fs::write(&file, source).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(tool);
    match target {
        Target::OpenCl => {
            // Warp operations need OpenCL C 2.0 and a target that declares the subgroup
            // extensions (the generated header says so).
            let std = if source.contains("sub_group_") {
                ["-cl-std=CL2.0", "-target", "spir64"].as_slice()
            } else {
                ["-cl-std=CL1.2"].as_slice()
            };
            cmd.args(["-x", "cl", "-fsyntax-only", "-Werror"])
                .args(std)
                .args(["-Xclang", "-finclude-default-header"]);
        }
        Target::CudaC => {
            let decls = dir.join("cuda_decls.h");
            std::fs::write(&decls, CUDA_DECLS).map_err(|e| e.to_string())?;
            cmd.args([
                "-x",
                "cuda",
                "--cuda-gpu-arch=sm_90",
                "--cuda-device-only",
                "-nocudainc",
                "-nocudalib",
                "-fsyntax-only",
                "-Werror",
                "-include",
            ])
            .arg(&decls);
        }
        Target::Hip => {
            // hiprtc predefines the HIP device API; hipcc gets it from hip_runtime.h.
            cmd.args([
                "--offload-arch=gfx90a",
                "--cuda-device-only",
                "-fsyntax-only",
                "-x",
                "hip",
                "-include",
                "hip/hip_runtime.h",
            ]);
        }
        _ => return Err(format!("{target:?} is not a C-family target")),
    }
    validate(&mut cmd, &file).map_err(|e| format!("{e}\n--- source ---\n{source}"))
}

/// Checks every `(name, target, source)` with the real compilers; panics listing every
/// failure. Targets whose tool is missing are skipped with a printed reason, or fail when
/// [`required`].
pub fn check_all(test: &str, sources: &[(String, Target, String)]) {
    let dir = work_dir(test);
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    let mut checked = 0;
    for (name, target, source) in sources {
        match tool(*target) {
            Err(why) => {
                if !skipped.contains(&why) {
                    skipped.push(why);
                }
            }
            Ok(t) => {
                checked += 1;
                if let Err(e) = check(&t, *target, &dir, name, source) {
                    failures.push(e);
                }
            }
        }
    }
    for why in &skipped {
        eprintln!("SKIPPED ({test}): {why}");
    }
    if !skipped.is_empty() && required() {
        panic!("SPOC_REQUIRE_TOOLCHAINS=1 but: {}", skipped.join("; "));
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} sources failed to compile:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    eprintln!("{test}: {checked} sources compiled cleanly");
}

/// Runs `cmd`, failing with its stderr unless it starts and exits successfully.
#[track_caller]
pub fn run_ok(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// NVIDIA's `ptxas`: `$SPOC_PTXAS`, else `ptxas` on `PATH`, else
/// `/opt/spoc-ptxas/usr/bin/ptxas` (where `fetch-ptxas.sh` installs it); `Err` says how to get
/// it.
pub fn ptxas() -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var("SPOC_PTXAS") {
        if !p.is_empty() {
            let p = PathBuf::from(p);
            return if p.is_file() {
                Ok(p)
            } else {
                Err(format!("SPOC_PTXAS={} is not a file", p.display()))
            };
        }
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("ptxas"))
            .find(|c| c.is_file())
    });
    let scratch = PathBuf::from("/opt/spoc-ptxas/usr/bin/ptxas");
    on_path
        .or_else(|| scratch.is_file().then_some(scratch))
        .ok_or_else(|| {
            "ptxas not found (set SPOC_PTXAS, put it on PATH, or run \
             spoc-codegen/tests/support/fetch-ptxas.sh)"
                .to_string()
        })
}

/// Assembles `ptx` with `ptxas -arch=sm_90` in `dir` (as `name.ptx`); `Err` holds ptxas's
/// diagnostics, also when it only warned (a warning on generated code is a bug too).
pub fn check_ptx(ptxas: &Path, dir: &Path, name: &str, ptx: &str) -> Result<(), String> {
    let src = dir.join(format!("{name}.ptx"));
    std::fs::write(&src, ptx).map_err(|e| e.to_string())?;
    let out = Command::new(ptxas)
        .arg("-arch=sm_90")
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{name}.cubin")))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let diag = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    if out.status.success() && !diag.contains("warning") {
        Ok(())
    } else {
        Err(format!("ptxas rejected {}:\n{diag}", src.display()))
    }
}

/// The tool `found` names, or `None` after printing why it is missing (`SKIPPED: …`).
///
/// # Panics
/// When it is missing and [`required`].
pub fn or_skip(found: Result<String, String>) -> Option<String> {
    match found {
        Ok(tool) => Some(tool),
        Err(why) if required() => panic!("{why}, and SPOC_REQUIRE_TOOLCHAINS=1"),
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            None
        }
    }
}

/// `tool` if it runs (`tool --version`); `Err` says how to get it: Debian's package `package`.
fn installed(tool: &str, package: &str) -> Result<String, String> {
    Command::new(tool)
        .arg("--version")
        .output()
        .map(|_| tool.to_string())
        .map_err(|_| format!("{tool} not found (Debian: apt-get install {package})"))
}

/// Runs the validator `cmd` on `path`; `Err` holds its report (stdout, then stderr).
fn validate(cmd: &mut Command, path: &Path) -> Result<(), String> {
    let tool = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run {tool}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{tool} rejected {}:\n{}{}",
            path.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// `spirv-val` if installed; `Err` says how to get it.
pub fn spirv_val() -> Result<String, String> {
    installed("spirv-val", "spirv-tools")
}

/// Runs `spirv-val --target-env vulkan1.2` on `words`, written to `dir` as `name.spv`; `Err`
/// holds its report.
pub fn check_spirv(dir: &Path, name: &str, words: &[u32]) -> Result<(), String> {
    let path = dir.join(format!("{name}.spv"));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
    validate(
        Command::new("spirv-val").args(["--target-env", "vulkan1.2"]),
        &path,
    )
}

/// `glslangValidator` if installed; `Err` says how to get it.
pub fn glslang() -> Result<String, String> {
    installed("glslangValidator", "glslang-tools")
}

/// Compiles the GLSL compute shader `source` with `glslangValidator -S comp`, written to `dir`
/// as `name.comp`; `Err` holds its report.
pub fn check_glsl(dir: &Path, name: &str, source: &str) -> Result<(), String> {
    let path = dir.join(format!("{name}.comp"));
    std::fs::write(&path, source).map_err(|e| e.to_string())?;
    validate(Command::new("glslangValidator").args(["-S", "comp"]), &path)
}
