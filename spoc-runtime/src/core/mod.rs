//! The runtime's foundation: the backend traits and handles, errors, environment switches, launch
//! dimensions, the outer compile cache, the intrinsic registry and source dumps.

pub mod backend;
pub mod cache;
pub(crate) mod device;
pub(crate) mod dims;
pub(crate) mod dump;
pub mod env;
pub(crate) mod error;
pub mod intrinsics;
pub(crate) mod ir_scan;
pub(crate) mod kernel_abi;
pub(crate) mod kernel_def;

/// This crate's version as `(major, minor, patch)`.
pub(crate) fn crate_version() -> (u32, u32, u32) {
    let v = |s: &str| s.parse().unwrap_or(0);
    (
        v(env!("CARGO_PKG_VERSION_MAJOR")),
        v(env!("CARGO_PKG_VERSION_MINOR")),
        v(env!("CARGO_PKG_VERSION_PATCH")),
    )
}
