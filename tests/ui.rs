//! Compile-fail tests of `#[kernel]` and `#[device]`: each file under `tests/ui/` uses something
//! outside the kernel language, and its `.stderr` holds the error the user sees. Regenerate with
//! `TRYBUILD=overwrite cargo test --test ui` and read every changed message.

#[test]
fn unsupported_constructs_are_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
