//! Unit tests of the generator, printer and oracle.

use crate::gen::{generate, inputs, Config};
use crate::oracle::{run, Excl, Fault};
use crate::print;

#[test]
fn generated_kernels_lower() {
    let cfg = Config::default();
    let mut bad = vec![];
    let n = std::env::var("DT_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200u64);
    let mut faults = std::collections::BTreeMap::<String, u32>::new();
    for i in 0..n {
        let (k, _) = generate(crate::rng::Rng::derive(1, i), &format!("k{i}"), &cfg);
        let src = print::kernel_fn(&k, false);
        match spoc_frontend::lower_kernel_source(&src) {
            Ok(ir) => {
                if let Err(e) = spoc_ir::validate(&ir) {
                    bad.push(format!("{src}\n=> invalid IR: {e}"));
                }
            }
            Err(es) => bad.push(format!(
                "{src}\n=> {}",
                es.iter()
                    .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
                    .collect::<Vec<_>>()
                    .join("\n   ")
            )),
        }
        let inp = inputs(&k, i);
        match run(&k, &inp, Excl::default()) {
            Ok(_) => {}
            Err(Fault::Unspecified(s)) => {
                *faults
                    .entry(format!("unspecified {}", s.split('(').next().unwrap()))
                    .or_default() += 1
            }
            Err(f) => *faults.entry(f.to_string()).or_default() += 1,
        }
    }
    eprintln!("oracle faults: {faults:?}");
    for b in bad.iter().take(3) {
        eprintln!("{b}\n");
    }
    assert!(bad.is_empty(), "{} of {n} kernels did not lower", bad.len());
}
