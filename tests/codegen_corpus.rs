//! Every kernel of the root corpus (`tests/corpus`), generated for every source target and
//! checked by the real validators:
//!
//! | target | validator |
//! | --- | --- |
//! | CUDA/PTX | `ptxas -arch=sm_90` (`$SPOC_PTXAS`, `PATH`, `/opt/spoc-ptxas/usr/bin/ptxas`) |
//! | CUDA/C | `clang-19 -x cuda --cuda-gpu-arch=sm_90 --cuda-device-only -nocudainc -nocudalib -fsyntax-only` with `cuda_decls.h` |
//! | HIP | `hipcc --offload-arch=gfx90a -fsyntax-only` |
//! | OpenCL | `clang -x cl -cl-std=CL1.2 -fsyntax-only` (CL2.0 for kernels with subgroup operations) |
//! | Vulkan | naga's validator, then `spirv-val --target-env vulkan1.2` |
//! | Metal, WebGPU | naga's validator |
//! | GLSL | naga's validator, then `glslangValidator -S comp` |
//!
//! naga's validator is not called here: the naga targets run it inside generation
//! (`spoc-codegen/src/naga/mod.rs`), and a module it rejects comes back as
//! `CodegenError::Backend`, which counts as a failure below.
//!
//! Each kernel is generated twice per target: with every capability on (fp64, 64-bit atomics,
//! float atomic add, subgroups; compute capability 9.0 for PTX), and as `kernel.source(target)`
//! generates it (the target's typical device). Both outputs are validated when they differ. A
//! target that refuses a kernel with a typed `Unsupported` / `FeatureNotSupported` (f64 on WGSL,
//! 64-bit integers on GLSL) is documented behaviour and is reported as `refused` with the
//! message; any other error, or a validator rejection, is a failure. A missing tool is a skip
//! with the reason, a failure with `SPOC_REQUIRE_TOOLCHAINS=1`.
//!
//! The compilers and validators come from `spoc-codegen/tests/support/toolchains.rs`. The
//! corpus includes the kernels the examples share (`examples/programs/kernels.rs`: `saxpy`,
//! `block_sum`, `mandelbrot`, also used by `examples/cuda_bench.rs`, `checked_overhead.rs`, the
//! benchmarks and `tests/sanitizer.rs`); the first example's own `saxpy` (`examples/saxpy.rs`,
//! written out for the reader) is the corpus's, token for token (checked below), so it is
//! covered here. Kernels private to other root test files (`codegen_c.rs`, `codegen_naga.rs`,
//! `codegen_ptx.rs` run their validators on their own kernels; `backend_kernels.rs`,
//! `macro_smoke.rs`, …) cannot be reached from here without copying them, and are not.

mod corpus;

#[path = "../spoc-codegen/tests/support/toolchains.rs"]
mod toolchains;

use corpus::*;
use spoc::KernelDef;
use spoc_codegen::{
    generate_source_with, Capabilities, Code, CodegenError, Options, Source, Target,
};
use std::path::Path;

/// Every source target, in the summary's column order: `Target::ALL` lists the eight source
/// targets first, then Native and the Interpreter.
const TARGETS: &[Target] = Target::ALL.split_at(8).0;

/// Every kernel of `tests/corpus`.
fn kernels() -> Vec<&'static KernelDef> {
    vec![
        saxpy.def(),
        ops_i32.def(),
        ops_u32.def(),
        ops_i64.def(),
        ops_f64.def(),
        matmul.def(),
        mandelbrot.def(),
        block_sum.def(),
        collatz.def(),
        apply_smoothstep.def(),
        classify.def(),
        const_conditions.def(),
        casts.def(),
        overflow.def(),
        for_loops.def(),
        math_f32.def(),
    ]
}

/// Every capability on; compute capability 9.0 (read by PTX only).
fn full_caps() -> Capabilities {
    Capabilities {
        fp64: true,
        int64_atomics: true,
        float_atomic_add: true,
        subgroups: true,
        compute_capability: Some((9, 0)),
        float_controls_ignored: false,
        unfused_fma_f32: false,
        inline_ptx: false,
    }
}

/// What happened to one kernel on one target.
#[derive(Debug)]
enum Outcome {
    /// Generated and accepted by every validator named.
    Ok(Vec<&'static str>),
    /// A typed refusal (documented behaviour), with its message.
    Refused(String),
    /// A validator is missing (and toolchains are not required): the reason.
    Skipped(String),
    /// A generation error other than a typed refusal, a validator rejection, or a missing tool
    /// with `SPOC_REQUIRE_TOOLCHAINS=1`.
    Failed(String),
}

impl Outcome {
    fn cell(&self) -> &'static str {
        match self {
            Outcome::Ok(_) => "ok",
            Outcome::Refused(_) => "refused",
            Outcome::Skipped(_) => "SKIPPED",
            Outcome::Failed(_) => "FAILED",
        }
    }
}

/// A missing tool: a skip, or a failure when toolchains are required.
fn missing(why: String) -> Outcome {
    if toolchains::required() {
        Outcome::Failed(format!("{why} and SPOC_REQUIRE_TOOLCHAINS=1"))
    } else {
        Outcome::Skipped(why)
    }
}

/// Runs the external validator of `target` on `src` (written to `dir` as `file`); returns the
/// validators that accepted it (naga's included for the naga targets).
fn validate(
    target: Target,
    dir: &Path,
    file: &str,
    src: &Source,
) -> Result<Vec<&'static str>, Outcome> {
    let text = || src.text().ok_or_else(|| Outcome::Failed("no text".into()));
    match target {
        Target::CudaPtx => {
            let ptxas = toolchains::ptxas().map_err(missing)?;
            toolchains::check_ptx(&ptxas, dir, file, text()?).map_err(Outcome::Failed)?;
            Ok(vec!["ptxas sm_90"])
        }
        Target::CudaC | Target::Hip | Target::OpenCl => {
            let tool = toolchains::tool(target).map_err(missing)?;
            toolchains::check(&tool, target, dir, file, text()?).map_err(Outcome::Failed)?;
            Ok(vec![if target == Target::Hip {
                "hipcc"
            } else {
                "clang"
            }])
        }
        Target::Vulkan => {
            let Code::SpirV(words) = &src.code else {
                return Err(Outcome::Failed("Vulkan output is not SPIR-V".into()));
            };
            toolchains::spirv_val().map_err(missing)?;
            toolchains::check_spirv(dir, file, words).map_err(Outcome::Failed)?;
            Ok(vec!["naga", "spirv-val"])
        }
        Target::Glsl => {
            toolchains::glslang().map_err(missing)?;
            toolchains::check_glsl(dir, file, text()?).map_err(Outcome::Failed)?;
            Ok(vec!["naga", "glslangValidator"])
        }
        Target::Metal | Target::WebGpu => {
            text()?;
            Ok(vec!["naga"])
        }
        Target::Native | Target::Interpreter => Err(Outcome::Failed("not a source target".into())),
    }
}

/// A generation result: the source, or the outcome it already is (a refusal or a failure).
fn generated(
    r: Result<Option<Source>, String>,
    refusal: Option<String>,
) -> Result<Source, Outcome> {
    if let Some(msg) = refusal {
        return Err(Outcome::Refused(msg));
    }
    match r {
        Ok(Some(src)) => Ok(src),
        Ok(None) => Err(Outcome::Failed("generated no source".into())),
        Err(e) => Err(Outcome::Failed(format!("generation failed: {e}"))),
    }
}

/// The typed refusal in a code generator's error, if that is what it is.
fn codegen_refusal(e: &CodegenError) -> Option<String> {
    matches!(
        e,
        CodegenError::Unsupported { .. } | CodegenError::FeatureNotSupported { .. }
    )
    .then(|| e.to_string())
}

/// The typed refusal in a runtime error (`kernel.source`), if that is what it is (the runtime
/// maps codegen's `Unsupported` and `FeatureNotSupported` to `Error::FeatureNotSupported`).
fn runtime_refusal(e: &spoc::Error) -> Option<String> {
    matches!(e, spoc::Error::FeatureNotSupported { .. }).then(|| e.to_string())
}

/// Generates `def` for `target` with full capabilities and as `kernel.source(target)` does,
/// and validates both.
fn check_one(def: &KernelDef, target: Target, dir: &Path) -> Outcome {
    let kernel = match def.kernel() {
        Ok(k) => k,
        Err(e) => return Outcome::Failed(format!("the IR does not load: {e}")),
    };
    let opts = Options {
        block: Some([64, 1, 1]),
        soa_params: &[],
        caps: full_caps(),
        checked: false,
    };
    let full = generate_source_with(target, kernel, &opts);
    let full_refusal = full.as_ref().err().and_then(codegen_refusal);
    let full = match generated(full.map_err(|e| e.to_string()), full_refusal) {
        Ok(src) => src,
        Err(o) => return o,
    };
    let stem = format!("{}-{}", def.name, target.file_extension());
    let mut validators = match validate(target, dir, &stem, &full) {
        Ok(v) => v,
        Err(o) => return o,
    };
    // What `kernel.source(target)` returns: the target's typical device, no block size.
    let typical = def.source(target, None, &[]);
    let typical_refusal = typical.as_ref().err().and_then(runtime_refusal);
    match generated(typical.map_err(|e| e.to_string()), typical_refusal) {
        Ok(src) if src.code == full.code => {}
        Ok(src) => match validate(target, dir, &format!("{stem}-typical"), &src) {
            Ok(_) => validators.push("(typical device too)"),
            Err(Outcome::Failed(why)) => {
                return Outcome::Failed(format!("kernel.source({target:?}): {why}"))
            }
            Err(o) => return o,
        },
        // The typical device may lack a capability the kernel needs (f64 on OpenCL 1.2 is not
        // one: fp64 is on by default): a typed refusal there is documented too.
        Err(Outcome::Refused(_)) => {}
        Err(Outcome::Failed(why)) => {
            return Outcome::Failed(format!("kernel.source({target:?}): {why}"))
        }
        Err(o) => return o,
    }
    Outcome::Ok(validators)
}

#[test]
fn every_corpus_kernel_on_every_target_passes_the_real_validators() {
    let dir = toolchains::work_dir("codegen-corpus");
    let defs = kernels();
    let results: Vec<Vec<Outcome>> = defs
        .iter()
        .map(|def| TARGETS.iter().map(|&t| check_one(def, t, &dir)).collect())
        .collect();

    // The summary table: kernel × target.
    let width = defs.iter().map(|d| d.name.len()).max().unwrap_or(0);
    let mut table = format!("{:width$}", "kernel");
    for &t in TARGETS {
        table += &format!(" | {:>9}", t.backend_name());
    }
    table += "\n";
    for (def, row) in defs.iter().zip(&results) {
        table += &format!("{:width$}", def.name);
        for o in row {
            table += &format!(" | {:>9}", o.cell());
        }
        table += "\n";
    }
    eprintln!(
        "codegen corpus: {} kernels x {} targets\n{table}",
        defs.len(),
        TARGETS.len()
    );

    let mut failures = Vec::new();
    let mut skips = Vec::new();
    let (mut ok, mut refused) = (0, 0);
    for (def, row) in defs.iter().zip(&results) {
        for (t, o) in TARGETS.iter().zip(row) {
            match o {
                Outcome::Ok(v) => {
                    ok += 1;
                    eprintln!("ok      {} {t:?}: {}", def.name, v.join(", "));
                }
                Outcome::Refused(msg) => {
                    refused += 1;
                    eprintln!("refused {} {t:?}: {msg}", def.name);
                }
                Outcome::Skipped(why) => {
                    if !skips.contains(why) {
                        skips.push(why.clone());
                    }
                }
                Outcome::Failed(why) => failures.push(format!("--- {} {t:?}: {why}", def.name)),
            }
        }
    }
    for why in &skips {
        eprintln!("SKIPPED: {why}");
    }
    eprintln!(
        "{ok} ok, {refused} refused, {} skipped ({} reasons), {} FAILED",
        results
            .iter()
            .flatten()
            .filter(|o| matches!(o, Outcome::Skipped(_)))
            .count(),
        skips.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} kernel/target pairs failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // Only the targets that cannot express a type the corpus uses may refuse: a refusal
    // anywhere else would hide a generator regression behind "documented behaviour".
    for (def, row) in defs.iter().zip(&results) {
        for (t, o) in TARGETS.iter().zip(row) {
            if let Outcome::Refused(msg) = o {
                assert!(
                    matches!(t, Target::WebGpu | Target::Metal | Target::Glsl),
                    "{} refused on {t:?}, which should express it: {msg}",
                    def.name
                );
            }
        }
    }
}

/// The text of the `#[kernel]` item `name` in `source` (visibility dropped).
fn kernel_item(source: &str, name: &str) -> Option<String> {
    let head = ["#[kernel]\npub fn ", "#[kernel]\nfn "]
        .iter()
        .find_map(|h| source.find(&format!("{h}{name}(")))?;
    let len = source[head..].find("\n}\n")? + 3;
    Some(source[head..head + len].replacen("pub fn ", "fn ", 1))
}

#[test]
fn the_examples_saxpy_is_the_corpus_saxpy() {
    let corpus = kernel_item(include_str!("../examples/programs/kernels.rs"), "saxpy")
        .expect("corpus saxpy");
    // The first example spells its kernel out for the reader; the others use the shared one.
    let example =
        kernel_item(include_str!("../examples/saxpy.rs"), "saxpy").expect("examples/saxpy.rs");
    assert_eq!(
        example, corpus,
        "examples/saxpy.rs's saxpy differs from examples/programs/kernels.rs's"
    );
}

/// The validators are really run: a broken source fails each of them (or the tool is missing,
/// which is a skip, or a failure with `SPOC_REQUIRE_TOOLCHAINS=1`).
#[test]
fn broken_sources_fail_every_external_validator() {
    let dir = toolchains::work_dir("codegen-corpus-broken");
    let kernel = saxpy.def().kernel().expect("saxpy's IR");
    let opts = Options {
        block: Some([64, 1, 1]),
        soa_params: &[],
        caps: full_caps(),
        checked: false,
    };
    for target in [
        Target::CudaPtx,
        Target::CudaC,
        Target::Hip,
        Target::OpenCl,
        Target::Vulkan,
        Target::Glsl,
    ] {
        let mut src = generate_source_with(target, kernel, &opts)
            .expect("saxpy generates")
            .expect("a source target");
        // The unbroken source passes, so a failure below is the breakage's.
        let good = validate(
            target,
            &dir,
            &format!("good-{}", target.file_extension()),
            &src,
        );
        if let Err(Outcome::Skipped(why)) = &good {
            eprintln!("SKIPPED {target:?}: {why}");
            continue;
        }
        assert!(good.is_ok(), "{target:?}: {good:?}");
        src.code = match src.code {
            // Drop OpFunctionEnd: the function is never closed.
            Code::SpirV(mut words) => {
                words.pop();
                Code::SpirV(words)
            }
            Code::Text(t) => Code::Text(format!("{t}\nthis is ( not code;\n")),
        };
        let bad = validate(
            target,
            &dir,
            &format!("bad-{}", target.file_extension()),
            &src,
        );
        assert!(
            matches!(bad, Err(Outcome::Failed(_))),
            "{target:?} accepted a broken source: {bad:?}"
        );
    }
}
