//! The compile caches (DESIGN.md §5) and the hooks that keep them consistent.
//!
//! Two layers share one key shape, [`CacheKey`] = (device, kernel name, content hash, options),
//! and one implementation, [`GuardedCache`]:
//! - each backend's [`ModuleCache`] owns its compiled modules; its key's device is the
//!   *backend-local* index;
//! - the runtime's outer memo ([`crate::compile_kernel`]) spans backends, so its key's device
//!   is the *global* [`crate::Device::id`]. It owns nothing a backend must release: it only
//!   borrows the modules of the backend caches, so it is dropped whenever they may release them
//!   ([`crate::clear_cache`], [`crate::Device::reset`], a backend's device teardown announced
//!   through [`notify_device_teardown`]).
//!
//! # Concurrency
//! The lock is held only to look up or insert, never while building. Two threads missing the
//! same key may both build; the first to finish installs its value and the other gets that
//! value back (its own is dropped), so every caller of one key sees the same `Arc`.
//!
//! A build snapshots the cache's generation (bumped by [`GuardedCache::clear`]) and its
//! device's epoch (bumped by [`GuardedCache::teardown_device`] and
//! [`GuardedCache::teardown_all`]). If either moved when the build comes back, the build
//! installs nothing and fails: [`Error::DeviceDestroyedDuringBuild`] if the device was torn down
//! (checked first), [`Error::CacheClearedDuringBuild`] if the cache was cleared. A retry after
//! the clear or teardown completes builds afresh.

use crate::backend::{CompileOptions, Module};
use crate::error::{Error, Result};
use spoc_ir::ContentHash;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A compile-cache key: (device, kernel name, content hash, options). `device` is
/// backend-local in a backend's cache and global in the runtime's memo.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// Device index (backend-local or global, per layer).
    pub device: usize,
    /// The kernel's name.
    pub name: Cow<'static, str>,
    /// The kernel IR's content hash.
    pub hash: ContentHash,
    /// Options that change the compiled result.
    pub options: CompileOptions,
}

impl CacheKey {
    /// A key.
    pub fn new(
        device: usize,
        name: impl Into<Cow<'static, str>>,
        hash: ContentHash,
        options: CompileOptions,
    ) -> CacheKey {
        CacheKey {
            device,
            name: name.into(),
            hash,
            options,
        }
    }
}

struct State<V> {
    /// Looked up on every launch: foldhash, not std's SipHash (a sixth of a launch's host time).
    map: HashMap<CacheKey, V, foldhash::fast::RandomState>,
    generation: u64,
    /// Bumped by `teardown_all`: every device's epoch moves at once.
    all_epoch: u64,
    epochs: HashMap<usize, u64>,
}

impl<V> State<V> {
    fn epoch(&self, device: usize) -> (u64, u64) {
        (
            self.all_epoch,
            self.epochs.get(&device).copied().unwrap_or(0),
        )
    }
}

/// A snapshot taken before a build, checked when it comes back.
#[derive(Clone, Copy, Debug)]
pub struct Ticket {
    device: usize,
    generation: u64,
    epoch: (u64, u64),
}

/// A cache whose builds run outside its lock and never install a value made stale by a
/// concurrent clear or device teardown (see the [module docs](self)).
pub struct GuardedCache<V> {
    state: RwLock<State<V>>,
}

impl<V: Clone> Default for GuardedCache<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Clone> GuardedCache<V> {
    /// An empty cache.
    pub fn new() -> Self {
        GuardedCache {
            state: RwLock::new(State {
                map: HashMap::default(),
                generation: 0,
                all_epoch: 0,
                epochs: HashMap::new(),
            }),
        }
    }

    // Every critical section is a single map operation or counter bump: a panic cannot leave
    // the state half-updated, so a poisoned lock is still usable.
    fn read(&self) -> RwLockReadGuard<'_, State<V>> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn lock(&self) -> RwLockWriteGuard<'_, State<V>> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached value for `key` (a shared lock: concurrent lookups do not wait on each
    /// other).
    pub fn get(&self, key: &CacheKey) -> Option<V> {
        self.read().map.get(key).cloned()
    }

    /// Snapshots the state a build for `device` depends on.
    pub fn begin(&self, device: usize) -> Ticket {
        let st = self.read();
        Ticket {
            device,
            generation: st.generation,
            epoch: st.epoch(device),
        }
    }

    /// Installs `value` under `key` unless the ticket went stale; returns the installed value
    /// (an earlier builder's, if one won the race).
    ///
    /// # Errors
    /// [`Error::DeviceDestroyedDuringBuild`] or [`Error::CacheClearedDuringBuild`] if the
    /// ticket's device was torn down or the cache cleared since [`GuardedCache::begin`].
    pub fn finish(&self, ticket: Ticket, key: CacheKey, value: V) -> Result<V> {
        let mut st = self.lock();
        if st.epoch(ticket.device) != ticket.epoch {
            return Err(Error::DeviceDestroyedDuringBuild {
                kernel: key.name.into_owned(),
                device: ticket.device,
            });
        }
        if st.generation != ticket.generation {
            return Err(Error::CacheClearedDuringBuild {
                kernel: key.name.into_owned(),
            });
        }
        Ok(st.map.entry(key).or_insert(value).clone())
    }

    /// The cached value for `key`, or `build()`'s, installed if still valid.
    ///
    /// # Errors
    /// `build`'s error; the errors of [`GuardedCache::finish`].
    pub fn get_or_build(&self, key: CacheKey, build: impl FnOnce() -> Result<V>) -> Result<V> {
        if let Some(v) = self.get(&key) {
            return Ok(v);
        }
        let ticket = self.begin(key.device);
        let value = build()?;
        self.finish(ticket, key, value)
    }

    /// Drops every entry; builds in flight fail with [`Error::CacheClearedDuringBuild`].
    pub fn clear(&self) {
        let mut st = self.lock();
        st.generation += 1;
        st.map.clear();
    }

    /// Drops the entries of `device`; its builds in flight fail with
    /// [`Error::DeviceDestroyedDuringBuild`].
    pub fn teardown_device(&self, device: usize) {
        let mut st = self.lock();
        *st.epochs.entry(device).or_insert(0) += 1;
        st.map.retain(|k, _| k.device != device);
    }

    /// Drops every entry; every build in flight fails with
    /// [`Error::DeviceDestroyedDuringBuild`].
    pub fn teardown_all(&self) {
        let mut st = self.lock();
        st.all_epoch += 1;
        st.map.clear();
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.read().map.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A backend's cache of compiled modules, keyed by backend-local device.
pub type ModuleCache = GuardedCache<Arc<Module>>;

/// An identifier of a registered hook, for [`remove_hook`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HookId(u64);

type TeardownHook = Arc<dyn Fn(&str, usize) + Send + Sync>;
type ClearHook = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct Hooks {
    next: u64,
    teardown: Vec<(HookId, TeardownHook)>,
    clear: Vec<(HookId, ClearHook)>,
}

static HOOKS: LazyLock<RwLock<Hooks>> = LazyLock::new(Default::default);

fn hooks_mut() -> std::sync::RwLockWriteGuard<'static, Hooks> {
    HOOKS.write().unwrap_or_else(|e| e.into_inner())
}

/// Registers `hook(backend_name, local_device)`, run by [`notify_device_teardown`].
pub fn on_device_teardown(hook: impl Fn(&str, usize) + Send + Sync + 'static) -> HookId {
    let mut h = hooks_mut();
    h.next += 1;
    let id = HookId(h.next);
    h.teardown.push((id, Arc::new(hook)));
    id
}

/// Registers `hook()`, run by [`crate::clear_cache`].
pub fn on_clear(hook: impl Fn() + Send + Sync + 'static) -> HookId {
    let mut h = hooks_mut();
    h.next += 1;
    let id = HookId(h.next);
    h.clear.push((id, Arc::new(hook)));
    id
}

/// Unregisters a hook; false if it was not registered.
pub fn remove_hook(id: HookId) -> bool {
    let mut h = hooks_mut();
    let before = h.teardown.len() + h.clear.len();
    h.teardown.retain(|(i, _)| *i != id);
    h.clear.retain(|(i, _)| *i != id);
    before != h.teardown.len() + h.clear.len()
}

/// Announces that `backend` tore down its backend-local device `local` (its modules and memory
/// are released). The runtime's memo drops that device's kernels and fails its builds in
/// flight with [`Error::DeviceDestroyedDuringBuild`]; registered hooks run. A backend calls
/// this after dropping the device's entries from its own [`ModuleCache`]
/// ([`GuardedCache::teardown_device`]).
pub fn notify_device_teardown(backend: &str, local: usize) {
    if let Some(memo) = MEMO_HOOKS.get() {
        (memo.device_torn_down)(backend, local);
    }
    let hooks: Vec<TeardownHook> = HOOKS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .teardown
        .iter()
        .map(|(_, h)| h.clone())
        .collect();
    for h in hooks {
        h(backend, local);
    }
}

/// What the runtime's outer memo (the launch layer, above this one) must hear about: it installs
/// these when it is first used, so that teardown reaches it without this layer calling up. They
/// run before the hooks registered with [`on_device_teardown`].
pub(crate) struct MemoHooks {
    /// `backend` tore down its backend-local device `local`.
    pub(crate) device_torn_down: fn(&str, usize),
    /// The global device id space was retired ([`crate::Device::reset`]).
    pub(crate) all_devices_retired: fn(),
}

static MEMO_HOOKS: OnceLock<MemoHooks> = OnceLock::new();

/// Installs the outer memo's hooks; the first call wins (there is one memo).
pub(crate) fn install_memo_hooks(hooks: MemoHooks) {
    let _ = MEMO_HOOKS.set(hooks);
}

/// Announces that the global device id space was retired: the outer memo drops every kernel.
pub(crate) fn notify_all_devices_retired() {
    if let Some(memo) = MEMO_HOOKS.get() {
        (memo.all_devices_retired)();
    }
}

pub(crate) fn run_clear_hooks() {
    let hooks: Vec<ClearHook> = HOOKS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clear
        .iter()
        .map(|(_, h)| h.clone())
        .collect();
    for h in hooks {
        h();
    }
}

/// The cache key of an external kernel: its language, source text and flags.
pub fn source_hash(
    lang: crate::backend::SourceLang,
    source: &str,
    flags: &[String],
) -> ContentHash {
    let lang = format!("{lang:?}");
    ContentHash::of_parts(
        [lang.as_bytes(), source.as_bytes()]
            .into_iter()
            .chain(flags.iter().map(|f| f.as_bytes())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(device: usize, name: &'static str) -> CacheKey {
        CacheKey::new(device, name, ContentHash(7), CompileOptions::default())
    }

    #[test]
    fn first_finisher_wins() {
        let c: GuardedCache<Arc<u32>> = GuardedCache::new();
        let t1 = c.begin(0);
        let t2 = c.begin(0);
        let a = c.finish(t1, key(0, "k"), Arc::new(1)).unwrap();
        let b = c.finish(t2, key(0, "k"), Arc::new(2)).unwrap();
        assert_eq!(*b, 1);
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn stale_tickets_install_nothing() {
        let c: GuardedCache<u32> = GuardedCache::new();
        let t = c.begin(3);
        c.clear();
        assert!(matches!(
            c.finish(t, key(3, "k"), 1),
            Err(Error::CacheClearedDuringBuild { ref kernel }) if kernel == "k"
        ));
        let t = c.begin(3);
        let other = c.begin(4);
        c.teardown_device(3);
        assert!(matches!(
            c.finish(t, key(3, "k"), 1),
            Err(Error::DeviceDestroyedDuringBuild { device: 3, .. })
        ));
        // Another device's build is unaffected by device 3's teardown.
        assert_eq!(c.finish(other, key(4, "k"), 5).unwrap(), 5);
        let t = c.begin(4);
        c.teardown_all();
        assert!(matches!(
            c.finish(t, key(4, "j"), 1),
            Err(Error::DeviceDestroyedDuringBuild { device: 4, .. })
        ));
        assert!(c.is_empty());
        assert_eq!(c.get_or_build(key(4, "j"), || Ok(9)).unwrap(), 9);
        assert_eq!(c.get_or_build(key(4, "j"), || Ok(10)).unwrap(), 9);
    }
}
