//! Every corpus kernel the GLSL target can express compiles with `glslangValidator -S comp`
//! (Debian package `glslang-tools`). Without the tool the test says so and passes, unless
//! `SPOC_REQUIRE_TOOLCHAINS=1`, where it fails.

mod naga_support;
#[path = "support/toolchains.rs"]
mod toolchains;

use naga_support::{corpus, gen};
use spoc_codegen::{CodegenError, Target};

#[test]
fn every_expressible_corpus_kernel_compiles_with_glslang() {
    if toolchains::or_skip(toolchains::glslang()).is_none() {
        return;
    }
    let dir = toolchains::work_dir("naga_glslang");
    let mut compiled = 0;
    let mut failures = Vec::new();
    for (name, k) in corpus() {
        let text = match gen(Target::Glsl, &k) {
            Ok(src) => src.text().expect("GLSL is text").to_string(),
            // 64-bit integers: naga's GLSL writer has none (a typed refusal, checked elsewhere).
            Err(CodegenError::Unsupported { .. }) => continue,
            Err(e) => panic!("{name}: {e}"),
        };
        compiled += 1;
        if let Err(report) = toolchains::check_glsl(&dir, name, &text) {
            failures.push(report);
        }
    }
    assert!(
        compiled >= 7,
        "only {compiled} kernels were GLSL-expressible"
    );
    assert!(
        failures.is_empty(),
        "glslang failures:\n{}",
        failures.join("\n")
    );
}
