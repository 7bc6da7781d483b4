//! Snapshot tests of the PTX generator over the hand-built corpus (`tests/ptx_corpus`).
//!
//! Snapshots live in `tests/ptx_snapshots/`. Update with
//! `INSTA_UPDATE=always cargo test -p spoc-codegen --test ptx_snapshots` and review the diff.

mod ptx_corpus;

#[test]
fn corpus_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("ptx_snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (name, k, soa) in ptx_corpus::all() {
            let ptx = ptx_corpus::ptx(&k, &soa);
            insta::assert_snapshot!(name, ptx);
        }
    });
}
