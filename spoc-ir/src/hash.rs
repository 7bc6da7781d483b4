//! Stable content hash of a kernel, used as a compile-cache key.

use crate::Kernel;
use std::fmt;

/// A 128-bit content hash (XXH3-128 of the kernel's serialized bytes). Stable across runs,
/// processes and machines for the same IR format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash(pub u128);

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl Kernel {
    /// The kernel's content hash: equal kernels (helpers and types included) hash equal; any change
    /// to a node, name or type changes it.
    pub fn content_hash(&self) -> ContentHash {
        ContentHash(xxhash_rust::xxh3::xxh3_128(&self.to_bytes()))
    }
}
