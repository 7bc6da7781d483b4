//! Device memory and what travels into a kernel: typed buffers, records and their structure-of-arrays
//! form, kernel arguments and the host-memory methods the CPU backends share.

pub(crate) mod args;
pub mod bind;
pub(crate) mod buffer;
pub(crate) mod device;
pub mod host;
pub mod record;
pub mod soa;
pub mod vector;
