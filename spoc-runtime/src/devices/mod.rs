//! Devices, the global device id space and the registry of backends.

pub(crate) mod device;
pub mod registry;
