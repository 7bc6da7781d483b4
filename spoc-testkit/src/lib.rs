//! Test support for the spoc workspace, written once and shared by every crate's tests (a
//! dev-dependency only; never published).
//!
//! - [`ir`]: the builder of hand-written IR kernels (variables, parameters, shared arrays, and
//!   one constructor per expression and statement form);
//! - [`backends`]: `SPOC_REQUIRE_BACKENDS`, the backends a run must not skip;
//! - `devices` (feature `devices`): run a test on every device of a backend, printing a
//!   `SKIPPED` line when it has none and failing when a required one has none; check every
//!   device of a list and fail at the end naming each wrong one (`check_each_device`);
//! - [`float`]: ULP distances and comparisons of `f32`/`f64`, NaN-canonical bit patterns;
//! - `backend_tests!` (feature `devices`): one test body per backend, each a named `#[test]`;
//! - [`ir_accessor!`]: the validated, kept IR of a hand-written `KernelDef`;
//! - [`toolchains`]: `ptxas`, found or skipped loudly, and its `-v` report;
//! - [`assert_matches!`]: a value matches a pattern, or the test fails printing it;
//! - [`assert_contains_all`]: a text holds every one of some pieces.
//!
//! A test that could not run because a backend is missing never passes silently: it prints
//! `SKIPPED <test>: <why>` on stderr, and it fails instead when `SPOC_REQUIRE_BACKENDS` names
//! the backend.

pub mod backends;
#[cfg(feature = "devices")]
pub mod devices;
pub mod float;
pub mod ir;
pub mod toolchains;

#[doc(hidden)]
pub use spoc_ir as __spoc_ir;

/// Asserts that `$value` matches `$pattern` (matched through a reference, so the value is not
/// moved), printing the value with `Display` otherwise: the one-line form of
/// `assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}")`.
///
/// ```
/// use std::net::IpAddr;
/// spoc_testkit::assert_matches!("127.0.0.1".parse::<IpAddr>().unwrap(), IpAddr::V4(_));
/// ```
///
/// ```should_panic
/// use std::net::IpAddr;
/// spoc_testkit::assert_matches!("127.0.0.1".parse::<IpAddr>().unwrap(), IpAddr::V6(_));
/// ```
#[macro_export]
macro_rules! assert_matches {
    ($value:expr, $pattern:pat $(,)?) => {
        match &$value {
            value => assert!(matches!(value, $pattern), "{value}"),
        }
    };
}

/// Defines `pub fn $name() -> Result<&'static ValidKernel, IrError>` that builds `$build` once,
/// validates it and keeps it, as the accessor `#[kernel]` generates does: the `ir` field of a
/// hand-written `spoc_runtime::KernelDef`.
///
/// ```
/// use spoc_testkit::ir::B;
/// spoc_testkit::ir_accessor!(empty_ir, B::new().kernel("empty"));
/// assert_eq!(empty_ir().unwrap().name, "empty");
/// ```
#[macro_export]
macro_rules! ir_accessor {
    ($name:ident, $build:expr) => {
        pub fn $name() -> ::std::result::Result<
            &'static $crate::__spoc_ir::ValidKernel,
            $crate::__spoc_ir::IrError,
        > {
            static K: ::std::sync::OnceLock<
                ::std::result::Result<$crate::__spoc_ir::ValidKernel, $crate::__spoc_ir::IrError>,
            > = ::std::sync::OnceLock::new();
            K.get_or_init(|| {
                let k: $crate::__spoc_ir::Kernel = $build;
                $crate::__spoc_ir::ValidKernel::new(k)
            })
            .as_ref()
            .map_err(Clone::clone)
        }
    };
}

/// `vec![("a", a()), ("b", b()), …]`: each kernel builder called, under its own name (a corpus
/// of hand-written kernels, so that a name never drifts from its builder).
///
/// ```
/// use spoc_testkit::ir::{saxpy, B};
/// fn empty() -> spoc_ir::Kernel {
///     B::new().kernel("empty")
/// }
/// let corpus = spoc_testkit::named_kernels![saxpy, empty];
/// assert_eq!(corpus[1].0, "empty");
/// assert_eq!(corpus[0].1.name, "saxpy");
/// ```
#[macro_export]
macro_rules! named_kernels {
    ($($builder:ident),* $(,)?) => {
        vec![$((stringify!($builder), $builder())),*]
    };
}

/// Generates, for each backend, a module of `#[test]`s that run the given test functions on
/// every device of that backend, so that a failure names the backend
/// (`opencl::saxpy_matches_interpreter`).
///
/// Each listed function takes `(&Device, &Device)`: a device of the backend and the
/// Interpreter (the reference). The device loop is [`devices::each_device`]: a backend with
/// no device prints a skip line, or fails when `SPOC_REQUIRE_BACKENDS` names it.
///
/// ```ignore
/// spoc_testkit::backend_tests! {
///     backends { opencl: "OpenCL", vulkan: "Vulkan" }
///     tests { saxpy_matches_interpreter, integer_kernels_match_interpreter }
/// }
/// ```
#[cfg(feature = "devices")]
#[macro_export]
macro_rules! backend_tests {
    (backends { $($module:ident : $backend:literal),+ $(,)? } tests $tests:tt) => {
        $( $crate::backend_tests!(@module $module, $backend, $tests); )+
    };
    (@module $module:ident, $backend:literal, { $($test:ident),+ $(,)? }) => {
        #[doc = concat!("The shared tests on every ", $backend, " device.")]
        mod $module {
            $(
                #[test]
                fn $test() {
                    $crate::devices::each_device_with_reference(
                        $backend,
                        concat!(stringify!($module), "::", stringify!($test)),
                        |dev, reference| super::$test(dev, reference),
                    );
                }
            )+
        }
    };
}

/// Asserts that `text` contains every one of `needles`, naming the first missing one and
/// printing the text otherwise.
///
/// ```
/// spoc_testkit::assert_contains_all("let i: u32 = 1u32;", &["let i", "u32 = 1u32"]);
/// ```
#[track_caller]
pub fn assert_contains_all(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "`{n}` not in:\n{text}");
    }
}
