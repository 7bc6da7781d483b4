//! `SPOC_REQUIRE_BACKENDS`: the backends that must come up in this run.
//!
//! The variable lists backend names separated by commas or spaces, compared without regard to
//! case (`opencl,vulkan` in CI, `cuda,vulkan` on the GPU machine). A test that needs a backend
//! the machine lacks prints that it skipped, unless the backend is listed here: then it fails.

/// The environment variable naming the backends that must come up.
pub const VAR: &str = "SPOC_REQUIRE_BACKENDS";

/// The backend names in `SPOC_REQUIRE_BACKENDS`, trimmed, in order (empty if it is unset).
pub fn required() -> Vec<String> {
    parse(&std::env::var(VAR).unwrap_or_default())
}

/// The backend names in a `SPOC_REQUIRE_BACKENDS` value: split at commas and white space,
/// empty names dropped.
pub fn parse(value: &str) -> Vec<String> {
    value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// True if `SPOC_REQUIRE_BACKENDS` names `backend` or its family (case-insensitive): `cuda`
/// requires both `CUDA/PTX` and `CUDA/C`.
pub fn is_required(backend: &str) -> bool {
    names_backend(&required(), backend)
}

/// True if `names` (a parsed `SPOC_REQUIRE_BACKENDS`) names `backend` or its family, the part
/// before a `/`.
pub fn names_backend(names: &[String], backend: &str) -> bool {
    let family = backend.split('/').next().unwrap_or(backend);
    names
        .iter()
        .any(|b| b.eq_ignore_ascii_case(backend) || b.eq_ignore_ascii_case(family))
}

/// Reports that `test` cannot run because `backend` is unavailable (`why`): prints
/// `SKIPPED <test>: <backend> is unavailable: <why>` and returns.
///
/// # Panics
/// If `SPOC_REQUIRE_BACKENDS` names `backend`: a required backend must not be skipped.
pub fn skip(backend: &str, test: &str, why: &dyn std::fmt::Display) {
    if is_required(backend) {
        panic!("{VAR} names {backend}, but {backend} is unavailable ({test}): {why}");
    }
    eprintln!("SKIPPED {test}: {backend} is unavailable: {why}");
}

#[cfg(test)]
mod tests {
    use super::{names_backend, parse};

    #[test]
    fn names_split_at_commas_and_spaces() {
        assert_eq!(parse(""), Vec::<String>::new());
        assert_eq!(parse("opencl"), ["opencl"]);
        assert_eq!(
            parse(" native, Interpreter,,opencl vulkan "),
            ["native", "Interpreter", "opencl", "vulkan"]
        );
    }

    #[test]
    fn a_family_requires_its_members() {
        let names = parse("cuda,Vulkan");
        assert!(names_backend(&names, "CUDA/PTX"));
        assert!(names_backend(&names, "CUDA/C"));
        assert!(names_backend(&names, "vulkan"));
        assert!(!names_backend(&names, "OpenCL"));
        assert!(!names_backend(&parse("cuda/c"), "CUDA/PTX"));
    }
}
