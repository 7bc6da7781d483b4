//! Every corpus kernel's SPIR-V passes the real validator, `spirv-val --target-env vulkan1.2`
//! (Debian package `spirv-tools`). Without `spirv-val` the test says so and passes, unless
//! `SPOC_REQUIRE_TOOLCHAINS=1`, where it fails.

mod naga_support;

use naga_support::{corpus, full_caps, gen, gen_caps, gen_with};
use spoc_codegen::{Code, Target};
use std::io::Write;
use std::process::Command;

fn spirv_val_available() -> bool {
    let found = Command::new("spirv-val").arg("--version").output().is_ok();
    if !found {
        if std::env::var("SPOC_REQUIRE_TOOLCHAINS").as_deref() == Ok("1") {
            panic!("spirv-val is not installed (apt-get install spirv-tools) and SPOC_REQUIRE_TOOLCHAINS=1");
        }
        eprintln!(
            "SKIPPED: spirv-val not found (apt-get install spirv-tools); SPIR-V not validated"
        );
    }
    found
}

/// Runs `spirv-val --target-env vulkan1.2` on `words`; `Err` holds its report.
pub fn spirv_val(name: &str, words: &[u32]) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("spoc-naga-val-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join(format!("{name}.spv"));
    let mut f = std::fs::File::create(&path).map_err(|e| e.to_string())?;
    for w in words {
        f.write_all(&w.to_le_bytes()).map_err(|e| e.to_string())?;
    }
    drop(f);
    let out = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .arg(&path)
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&path);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn every_corpus_kernel_passes_spirv_val() {
    if !spirv_val_available() {
        return;
    }
    let mut failures = Vec::new();
    for (name, k) in corpus() {
        let src = gen(Target::Vulkan, &k).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Code::SpirV(words) = &src.code else {
            panic!("{name}: Vulkan output is not SPIR-V");
        };
        if let Err(report) = spirv_val(name, words) {
            failures.push(format!("{name}:\n{report}"));
        }
    }
    assert!(
        failures.is_empty(),
        "spirv-val failures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_checked_corpus_kernel_passes_spirv_val() {
    if !spirv_val_available() {
        return;
    }
    let mut failures = Vec::new();
    for (name, k) in corpus() {
        let src = gen_with(Target::Vulkan, &k, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Code::SpirV(words) = &src.code else {
            panic!("{name}: Vulkan output is not SPIR-V");
        };
        if let Err(report) = spirv_val(&format!("{name}_checked"), words) {
            failures.push(format!("{name} (checked):\n{report}"));
        }
    }
    assert!(
        failures.is_empty(),
        "spirv-val failures in checked mode:\n{}",
        failures.join("\n")
    );
}

/// The code for a lavapipe-like device: float constants hidden from the driver, `f32`
/// `mul_add` computed in `f64`; checked and unchecked.
#[test]
fn every_corpus_kernel_passes_spirv_val_with_the_workarounds() {
    if !spirv_val_available() {
        return;
    }
    let mut caps = full_caps();
    caps.float_controls_ignored = true;
    caps.unfused_fma_f32 = true;
    let mut failures = Vec::new();
    for (name, k) in corpus() {
        for checked in [false, true] {
            let src = gen_caps(Target::Vulkan, &k, caps.clone(), checked)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let Code::SpirV(words) = &src.code else {
                panic!("{name}: Vulkan output is not SPIR-V");
            };
            if let Err(report) = spirv_val(&format!("{name}_workarounds_{checked}"), words) {
                failures.push(format!("{name} (checked: {checked}):\n{report}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "spirv-val failures with the workarounds:\n{}",
        failures.join("\n")
    );
}
