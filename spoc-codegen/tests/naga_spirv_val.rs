//! Every corpus kernel's SPIR-V passes the real validator, `spirv-val --target-env vulkan1.2`
//! (Debian package `spirv-tools`). Without `spirv-val` the test says so and passes, unless
//! `SPOC_REQUIRE_TOOLCHAINS=1`, where it fails.

mod naga_support;
#[path = "support/toolchains.rs"]
mod toolchains;

use naga_support::{corpus, full_caps, gen_caps};
use spoc_codegen::{Capabilities, Code, Target};

/// Validates the SPIR-V of every corpus kernel generated with `caps`, in checked mode and not
/// as `modes` says, each as `<kernel><suffix(checked)>.spv` in a work directory of its own
/// (`test`); fails listing every report.
fn corpus_passes_spirv_val(
    test: &str,
    caps: Capabilities,
    modes: &[bool],
    suffix: fn(bool) -> String,
) {
    if toolchains::or_skip(toolchains::spirv_val()).is_none() {
        return;
    }
    let dir = toolchains::work_dir(test);
    let mut failures = Vec::new();
    for (name, k) in corpus() {
        for &checked in modes {
            let src = gen_caps(Target::Vulkan, &k, caps.clone(), checked)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let Code::SpirV(words) = &src.code else {
                panic!("{name}: Vulkan output is not SPIR-V");
            };
            let file = format!("{name}{}", suffix(checked));
            if let Err(report) = toolchains::check_spirv(&dir, &file, words) {
                failures.push(report);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "spirv-val failures ({test}):\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_corpus_kernel_passes_spirv_val() {
    corpus_passes_spirv_val("spirv_val", full_caps(), &[false], |_| String::new());
}

#[test]
fn every_checked_corpus_kernel_passes_spirv_val() {
    corpus_passes_spirv_val("spirv_val_checked", full_caps(), &[true], |_| {
        "_checked".into()
    });
}

/// The code for a lavapipe-like device: float constants hidden from the driver, `f32`
/// `mul_add` computed in `f64`; checked and unchecked.
#[test]
fn every_corpus_kernel_passes_spirv_val_with_the_workarounds() {
    let caps = Capabilities {
        float_controls_ignored: true,
        unfused_fma_f32: true,
        ..full_caps()
    };
    corpus_passes_spirv_val("spirv_val_workarounds", caps, &[false, true], |checked| {
        format!("_workarounds_{checked}")
    });
}
