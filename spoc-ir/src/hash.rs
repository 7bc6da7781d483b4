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

impl ContentHash {
    /// XXH3-128 of `parts`, each prefixed by its length (so `["ab", "c"]` and `["a", "bc"]`
    /// differ): the key of anything cached by its text, such as an external kernel's source
    /// with its language and flags. Stable across runs and machines.
    pub fn of_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> ContentHash {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for p in parts {
            h.update(&(p.len() as u64).to_le_bytes());
            h.update(p);
        }
        ContentHash(h.digest128())
    }
}

impl Kernel {
    /// The kernel's content hash: equal kernels (helpers and types included) hash equal; any change
    /// to a node, name or type changes it.
    pub fn content_hash(&self) -> ContentHash {
        ContentHash(xxhash_rust::xxh3::xxh3_128(&self.to_bytes()))
    }
}
