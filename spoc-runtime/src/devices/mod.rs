//! Devices, the global device id space and the registry of backends.

pub(crate) mod discovery;
pub mod registry;
