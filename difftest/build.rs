//! Writes the compiled set: `SPOC_DIFFTEST_COMPILED` kernels (default 300, fixed seed) drawn by
//! the same generator as the run-time set, with `#[device]` helpers, as Rust source in
//! `OUT_DIR/compiled.rs`, which `tests/difftest.rs` includes so that `#[kernel]` lowers them
//! and Native runs its generated code. The generator's modules are plain Rust depending only on
//! `spoc-ir` (for its operators), included here by path.

#![allow(dead_code)]

#[path = "src/ast.rs"]
mod ast;
#[path = "src/gen.rs"]
mod gen;
#[path = "src/oracle.rs"]
mod oracle;
#[path = "src/print.rs"]
mod print;
#[path = "src/rng.rs"]
mod rng;
#[path = "src/visit.rs"]
mod visit;

use std::fmt::Write;

/// The seed of the compiled set.
const COMPILED_SEED: u64 = 0xc0de_5eed;

fn main() {
    for f in ["ast", "gen", "oracle", "print", "rng", "visit"] {
        println!("cargo:rerun-if-changed=src/{f}.rs");
    }
    println!("cargo:rerun-if-env-changed=SPOC_DIFFTEST_COMPILED");
    println!("cargo:rerun-if-env-changed=SPOC_DIFFTEST_KNOWN");
    let n: u64 = std::env::var("SPOC_DIFFTEST_COMPILED")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().expect("SPOC_DIFFTEST_COMPILED: a number"))
        .unwrap_or(300);
    let known: Vec<String> = match std::env::var("SPOC_DIFFTEST_KNOWN").ok() {
        Some(s) if s.trim() == "none" => vec![],
        Some(s) if !s.trim().is_empty() => s.split(',').map(|x| x.trim().to_string()).collect(),
        _ => gen::default_known(),
    };
    let cfg = gen::Config {
        helpers: true,
        native: true,
        known: known.clone(),
        ..gen::Config::default()
    };
    let excl = cfg.excl();
    let mut src = String::new();
    let mut table = String::new();
    for index in 0..n {
        let name = format!("dtc_{index}");
        let base = rng::Rng::derive(COMPILED_SEED, index);
        let (subseed, k) = (0..64u64)
            .find_map(|attempt| {
                let s = rng::Rng::derive(base, attempt);
                let (k, _) = gen::generate(s, &name, &cfg);
                let inputs = gen::inputs(&k, s);
                oracle::run(&k, &inputs, excl).ok().map(|_| (s, k))
            })
            .expect("a kernel with a defined result");
        let text = print::full(&k);
        src.push_str(&text);
        src.push('\n');
        writeln!(
            table,
            "    Compiled {{ index: {index}, subseed: {subseed:#x}, source: {text:?}, def: || {name}.def() }},"
        )
        .unwrap();
    }
    writeln!(
        src,
        "/// The compiled set.\npub static SET: CompiledSet = CompiledSet {{\n    kernels: &[\n{table}    ],\n    seed: {COMPILED_SEED:#x},\n    known: &{known:?},\n}};"
    )
    .unwrap();
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("compiled.rs");
    std::fs::write(out, src).unwrap();
}
