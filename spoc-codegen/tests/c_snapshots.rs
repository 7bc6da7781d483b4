//! Snapshots of the CUDA C, HIP C and OpenCL C generated for the hand-built corpus
//! (`tests/support`). Review changes by eye: `INSTA_UPDATE=always cargo test -p spoc-codegen
//! --test c_snapshots`, then read the `.snap` files under `tests/snapshots/`.

mod support;

use support::{corpus, gen, TARGETS};

#[test]
fn corpus_snapshots() {
    for (name, k) in corpus() {
        for t in TARGETS {
            let text = gen(t, &k);
            let snap = format!("{name}.{}", t.file_extension());
            insta::with_settings!({ snapshot_path => "snapshots/c", prepend_module_to_snapshot => false }, {
                insta::assert_snapshot!(snap, text);
            });
        }
    }
}
