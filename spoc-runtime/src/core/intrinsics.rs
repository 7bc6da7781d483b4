//! Per-backend intrinsic registries: which intrinsics a backend implements, and how it spells
//! them.

use spoc_ir::{AtomicOp, Axis, HalfKind, Intrinsic, MathFn, ShuffleKind};
use std::borrow::Cow;
use std::collections::HashMap;

/// How one backend implements one intrinsic: the spelling its code generator emits (for CPU
/// backends, the intrinsic's own name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntrinsicImpl {
    /// The target-language spelling (`"threadIdx.x"`, `"get_local_id(0)"`, `"sqrtf"`, …).
    pub spelling: Cow<'static, str>,
}

/// The intrinsics a backend implements, keyed by [`Intrinsic::path`] and [`Intrinsic::name`].
///
/// The runtime checks, once per kernel and device, that every intrinsic a kernel calls is in its
/// backend's registry, and refuses the kernel with `Error::FeatureNotSupported` otherwise.
#[derive(Clone, Debug, Default)]
pub struct IntrinsicRegistry {
    /// path -> name -> implementation.
    map: HashMap<Cow<'static, str>, HashMap<Cow<'static, str>, IntrinsicImpl>>,
}

impl IntrinsicRegistry {
    /// An empty registry.
    pub fn new() -> IntrinsicRegistry {
        IntrinsicRegistry::default()
    }

    /// Every intrinsic of the IR, each spelled by its own name.
    pub fn all() -> IntrinsicRegistry {
        IntrinsicRegistry::all_except(|_| false)
    }

    /// Every intrinsic for which `exclude` is false, each spelled by its own name.
    pub fn all_except(exclude: impl Fn(Intrinsic) -> bool) -> IntrinsicRegistry {
        let mut r = IntrinsicRegistry::new();
        for i in all_intrinsics().into_iter().filter(|&i| !exclude(i)) {
            let name = i.name();
            r.register(i.path(), name.clone(), name);
        }
        r
    }

    /// Adds (or replaces) the implementation of intrinsic `path::name`.
    pub fn register(
        &mut self,
        path: impl Into<Cow<'static, str>>,
        name: impl Into<Cow<'static, str>>,
        spelling: impl Into<Cow<'static, str>>,
    ) {
        self.map.entry(path.into()).or_default().insert(
            name.into(),
            IntrinsicImpl {
                spelling: spelling.into(),
            },
        );
    }

    /// The implementation of `path::name`, if registered.
    pub fn get(&self, path: &str, name: &str) -> Option<&IntrinsicImpl> {
        self.map.get(path)?.get(name)
    }

    /// True if `intrinsic` is registered.
    pub fn supports(&self, intrinsic: Intrinsic) -> bool {
        self.get(intrinsic.path(), &intrinsic.name()).is_some()
    }

    /// Number of registered intrinsics.
    pub fn len(&self) -> usize {
        self.map.values().map(HashMap::len).sum()
    }

    /// True if nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// `(path, name, implementation)` of every registered intrinsic, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &IntrinsicImpl)> {
        self.map
            .iter()
            .flat_map(|(p, names)| names.iter().map(move |(n, v)| (&**p, &**n, v)))
    }
}

/// Every intrinsic of the IR.
pub fn all_intrinsics() -> Vec<Intrinsic> {
    let mut v = Vec::new();
    for axis in [Axis::X, Axis::Y, Axis::Z] {
        v.extend([
            Intrinsic::ThreadIdx(axis),
            Intrinsic::BlockIdx(axis),
            Intrinsic::BlockDim(axis),
            Intrinsic::GridDim(axis),
            Intrinsic::GlobalId(axis),
            Intrinsic::GlobalSize(axis),
        ]);
    }
    v.extend([Intrinsic::WarpSize, Intrinsic::LaneId]);
    v.extend(MathFn::ALL.iter().map(|&m| Intrinsic::Math(m)));
    v.extend(AtomicOp::ALL.map(Intrinsic::Atomic));
    v.extend(
        [
            ShuffleKind::Index,
            ShuffleKind::Up,
            ShuffleKind::Down,
            ShuffleKind::Xor,
        ]
        .map(Intrinsic::Shuffle),
    );
    v.extend([Intrinsic::VoteAny, Intrinsic::VoteAll, Intrinsic::Ballot]);
    for h in [HalfKind::F16, HalfKind::BF16] {
        v.extend([Intrinsic::PackHalf2(h), Intrinsic::MmaM16N8K16(h)]);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_registers_every_intrinsic_once() {
        let all = all_intrinsics();
        let r = IntrinsicRegistry::all();
        assert_eq!(r.len(), all.len());
        assert_eq!(all.len(), 18 + 2 + 31 + 9 + 4 + 3 + 4);
        assert!(r.supports(Intrinsic::GlobalId(Axis::Y)));
        assert_eq!(
            r.get("spoc::atomic", "atomic_add").unwrap().spelling,
            "atomic_add"
        );
        let no_warp = IntrinsicRegistry::all_except(Intrinsic::is_warp);
        assert!(!no_warp.supports(Intrinsic::Ballot));
        assert!(no_warp.supports(Intrinsic::Math(MathFn::Sqrt)));
        assert!(no_warp.get("spoc::warp", "ballot").is_none());
    }
}
