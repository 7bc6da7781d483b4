//! Hash maps and sets keyed by the IR's small integer ids ([`crate::VarId`]): the passes over
//! an unrolled kernel look a variable up at every reference, and the standard library's
//! default hasher (SipHash, built to resist chosen keys) costs more than the rest of such a
//! lookup. [`IdHasher`] mixes an id with one multiplication instead; iteration order is then
//! fixed by the keys (no random seed).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A [`HashMap`] keyed by ids, hashed with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// A [`HashSet`] of ids, hashed with [`IdHasher`].
pub type IdSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

/// A hasher for small integer keys: each integer written is folded into the state by a
/// rotation, an exclusive or and a multiplication by a large odd constant, which spreads it
/// over the high bits the table's control bytes use. Not for keys an adversary chooses.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl IdHasher {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::VarId;

    #[test]
    fn ids_map_and_hash_apart() {
        let mut m: IdMap<VarId, u32> = IdMap::default();
        for i in 0..1000 {
            m.insert(VarId(i), i * 2);
        }
        assert_eq!(m.len(), 1000);
        assert!((0..1000).all(|i| m[&VarId(i)] == i * 2));
        let hash = |v: u32| {
            let mut h = IdHasher::default();
            h.write_u32(v);
            h.finish()
        };
        assert_ne!(hash(1), hash(2));
        assert_ne!(hash(1) >> 57, hash(2) >> 57, "the top bits differ too");
    }
}
