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
