//! Compiles every generated source of the corpus with the real toolchains: clang (OpenCL C
//! 1.2, and CUDA C for sm_90 against `support/cuda_decls.h`) and hipcc (HIP for gfx90a).
//! Missing tools are skipped with a message, or fail with `SPOC_REQUIRE_TOOLCHAINS=1`.

mod support;

use support::{corpus, gen, gen_with, toolchains, TARGETS};

#[test]
fn corpus_compiles_with_real_toolchains() {
    toolchains::check_all("corpus", &support::sources_for_every_target(corpus()));
}

/// The checked-mode sources (bounds and division checks, the fault record) of the whole corpus
/// compile too.
#[test]
fn checked_corpus_compiles_with_real_toolchains() {
    let mut sources = Vec::new();
    for (name, k) in corpus() {
        for t in TARGETS {
            let src = gen_with(t, &k, true);
            assert!(src.contains("spoc_fault"), "{name} {t:?}: no fault record");
            sources.push((format!("{name}_checked"), t, src));
        }
    }
    toolchains::check_all("checked_corpus", &sources);
}

/// The harness itself: a source with an error must be rejected by each available tool (else
/// the corpus check would prove nothing).
#[test]
fn toolchains_reject_a_broken_source() {
    let dir = toolchains::work_dir("broken");
    for t in TARGETS {
        let Ok(tool) = toolchains::tool(t) else {
            eprintln!("SKIPPED: no compiler for {t:?}");
            continue;
        };
        let bad = gen(t, &support::saxpy()).replace("y[i] =", "y[i] = undeclared_name +");
        assert!(
            toolchains::check(&tool, t, &dir, "broken", &bad).is_err(),
            "{tool} accepted a broken {t:?} source"
        );
    }
}
