//! [`ArtifactCache`]: values derived from stored artifacts, kept between
//! retrievals, least recently used first out, within a byte budget.
//!
//! Each value is filed under the store, the artifact's name and a variant
//! (what was derived: a search text has one, answers one per request), and
//! carries the [`Version`] of the content it was derived from; a lookup
//! names the version stored now and finds nothing when it differs (the stale
//! value is dropped on the spot). Stores tell the cache what they remove
//! (see [`ArtifactCache::forget`], [`ArtifactCache::forget_store`]) so that
//! memory is given back at once.

use std::collections::{BTreeMap, HashMap};
use std::mem::size_of;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use offload_storage::{FileStamp, Removal, RemovalHook};

/// Bytes charged to every entry on top of what its value owns: the
/// bookkeeping of the maps (a little generous, so that many tiny entries
/// cannot hold much more than the budget).
const ENTRY_OVERHEAD: usize = 256;

/// Which content a value was derived from.
#[derive(Debug, Clone)]
pub enum Version {
    /// The content of a memory store, shared with it. Holding the `Bytes`
    /// keeps its allocation alive, so no other content can ever appear at
    /// the same address: the same address and length are the same bytes.
    Shared(Bytes),
    /// A file, by its stamp (see [`FileStamp`]).
    File(FileStamp),
    /// Content handed in by the caller, by its SHA-256 digest.
    Digest([u8; 32]),
}

impl Version {
    /// Whether `self` and `other` name the same content.
    fn same(&self, other: &Version) -> bool {
        match (self, other) {
            (Version::Shared(a), Version::Shared(b)) => a.as_ptr() == b.as_ptr() && a.len() == b.len(),
            (Version::File(a), Version::File(b)) => a == b,
            (Version::Digest(a), Version::Digest(b)) => a == b,
            _ => false,
        }
    }
}

/// The key of an entry: store, artifact name, variant.
type Key = (u64, Box<str>, Box<str>);

/// One cached value.
#[derive(Debug)]
struct Entry<V> {
    version: Version,
    value: Arc<V>,
    /// Bytes charged to the budget.
    cost: usize,
    /// Position in [`State::order`].
    tick: u64,
}

/// The variants of one artifact.
type Variants<V> = HashMap<Box<str>, Entry<V>>;

/// The cache's contents, behind its lock.
#[derive(Debug)]
struct State<V> {
    budget: usize,
    used: usize,
    next_tick: u64,
    /// Entries by store, then by artifact name, then by variant.
    stores: HashMap<u64, HashMap<Box<str>, Variants<V>>>,
    /// Least recently used first: tick -> key.
    order: BTreeMap<u64, Key>,
}

impl<V> State<V> {
    fn new(budget: usize) -> Self {
        State { budget, used: 0, next_tick: 0, stores: HashMap::new(), order: BTreeMap::new() }
    }

    fn take_tick(&mut self) -> u64 {
        self.next_tick += 1;
        self.next_tick
    }

    fn entry_mut(&mut self, store: u64, name: &str, variant: &str) -> Option<&mut Entry<V>> {
        self.stores.get_mut(&store)?.get_mut(name)?.get_mut(variant)
    }

    /// Takes an entry out of the maps (not out of the order or the charge).
    fn take(&mut self, store: u64, name: &str, variant: &str) -> Option<Entry<V>> {
        let names = self.stores.get_mut(&store)?;
        let variants = names.get_mut(name)?;
        let entry = variants.remove(variant)?;
        if variants.is_empty() {
            names.remove(name);
        }
        if names.is_empty() {
            self.stores.remove(&store);
        }
        Some(entry)
    }

    fn remove(&mut self, store: u64, name: &str, variant: &str) -> Option<Entry<V>> {
        let entry = self.take(store, name, variant)?;
        self.order.remove(&entry.tick);
        self.used -= entry.cost;
        Some(entry)
    }

    fn drop_all(&mut self, variants: Variants<V>) {
        for entry in variants.into_values() {
            self.order.remove(&entry.tick);
            self.used -= entry.cost;
        }
    }

    fn remove_artifact(&mut self, store: u64, name: &str) {
        let Some(names) = self.stores.get_mut(&store) else { return };
        let Some(variants) = names.remove(name) else { return };
        if names.is_empty() {
            self.stores.remove(&store);
        }
        self.drop_all(variants);
    }

    fn remove_store(&mut self, store: u64) {
        if let Some(names) = self.stores.remove(&store) {
            for variants in names.into_values() {
                self.drop_all(variants);
            }
        }
    }

    /// Evicts least recently used entries until `incoming` more bytes fit;
    /// returns them, for the caller to drop once the lock is released (a
    /// value may take a while to drop).
    #[must_use]
    fn make_room(&mut self, incoming: usize) -> Vec<Entry<V>> {
        let mut evicted = Vec::new();
        while self.used + incoming > self.budget {
            let Some((_, (store, name, variant))) = self.order.pop_first() else {
                break;
            };
            if let Some(entry) = self.take(store, &name, &variant) {
                self.used -= entry.cost;
                evicted.push(entry);
            }
        }
        evicted
    }
}

/// Values derived from stored artifacts, least recently used first out,
/// within a byte budget. Thread-safe; the lock is held only for map
/// operations, never while a value is derived or used.
#[derive(Debug)]
pub struct ArtifactCache<V> {
    state: Mutex<State<V>>,
}

impl<V> ArtifactCache<V> {
    /// An empty cache of `budget_bytes` (0 disables it).
    #[must_use]
    pub fn new(budget_bytes: usize) -> Self {
        ArtifactCache { state: Mutex::new(State::new(budget_bytes)) }
    }

    fn lock(&self) -> MutexGuard<'_, State<V>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the budget, evicting what no longer fits (0 empties and
    /// disables the cache).
    pub fn set_budget(&self, budget_bytes: usize) {
        let mut state = self.lock();
        state.budget = budget_bytes;
        let evicted = state.make_room(0);
        drop(state);
        drop(evicted);
    }

    /// The budget in bytes.
    #[must_use]
    pub fn budget(&self) -> usize {
        self.lock().budget
    }

    /// Bytes charged by the entries held.
    #[must_use]
    pub fn used_bytes(&self) -> usize {
        self.lock().used
    }

    /// Number of entries held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().order.len()
    }

    /// Whether nothing is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.lock().order.is_empty()
    }

    /// The value derived from `version` of artifact `name` of `store` as
    /// `variant`, if held (it becomes the most recently used). An entry
    /// derived from another version is dropped.
    #[must_use]
    pub fn get(&self, store: u64, name: &str, variant: &str, version: &Version) -> Option<Arc<V>> {
        let mut state = self.lock();
        let tick = state.take_tick();
        let state = &mut *state;
        let entry = state.entry_mut(store, name, variant)?;
        if !entry.version.same(version) {
            state.remove(store, name, variant);
            return None;
        }
        let value = Arc::clone(&entry.value);
        let old = std::mem::replace(&mut entry.tick, tick);
        if let Some(key) = state.order.remove(&old) {
            state.order.insert(tick, key);
        }
        Some(value)
    }

    /// Keeps `value`, derived from `version` of artifact `name` of `store`
    /// as `variant`, charged `owned_bytes` (what it holds that nobody else
    /// does) plus a fixed overhead; least recently used entries are evicted
    /// to make room. A value that does not fit in the whole budget is not
    /// kept (and any older entry for the same key is dropped all the same).
    pub fn insert(&self, store: u64, name: &str, variant: &str, version: Version, value: Arc<V>, owned_bytes: usize) {
        let cost = owned_bytes.saturating_add(ENTRY_OVERHEAD + 2 * (name.len() + variant.len()) + size_of::<Entry<V>>());
        let mut state = self.lock();
        let replaced = state.remove(store, name, variant);
        if cost > state.budget {
            drop(state);
            drop(replaced);
            return;
        }
        let evicted = state.make_room(cost);
        let tick = state.take_tick();
        state.order.insert(tick, (store, name.into(), variant.into()));
        state
            .stores
            .entry(store)
            .or_default()
            .entry(name.into())
            .or_default()
            .insert(variant.into(), Entry { version, value, cost, tick });
        state.used += cost;
        drop(state);
        drop((replaced, evicted));
    }

    /// Evicts least recently used entries until at least `bytes` of their
    /// charges are given back (or the cache is empty); returns the bytes given
    /// back. The evicted values are dropped after the lock is released.
    pub fn evict(&self, bytes: usize) -> usize {
        let mut evicted = Vec::new();
        let mut freed = 0;
        let mut state = self.lock();
        while freed < bytes {
            let Some((_, (store, name, variant))) = state.order.pop_first() else {
                break;
            };
            if let Some(entry) = state.take(store, &name, &variant) {
                state.used -= entry.cost;
                freed += entry.cost;
                evicted.push(entry);
            }
        }
        drop(state);
        drop(evicted);
        freed
    }

    /// Drops every variant of artifact `name` of `store`.
    pub fn forget(&self, store: u64, name: &str) {
        self.lock().remove_artifact(store, name);
    }

    /// Drops every entry of `store`.
    pub fn forget_store(&self, store: u64) {
        self.lock().remove_store(store);
    }

    /// Drops every entry.
    pub fn clear(&self) {
        let mut state = self.lock();
        let (budget, next_tick) = (state.budget, state.next_tick);
        *state = State::new(budget);
        state.next_tick = next_tick;
    }
}

impl<V: Send + Sync + 'static> ArtifactCache<V> {
    /// A hook for a store's removals (see [`offload_storage::removal`]) that
    /// drops what is kept about what the store removes. It holds the cache
    /// weakly: a store does not keep a cache alive.
    #[must_use]
    pub fn removal_hook(self: &Arc<Self>) -> RemovalHook {
        let cache = Arc::downgrade(self);
        Arc::new(move |store, removal| {
            if let Some(cache) = cache.upgrade() {
                match removal {
                    Removal::Artifact(name) => cache.forget(store, name),
                    Removal::All => cache.forget_store(store),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(content: &Bytes) -> Version {
        Version::Shared(content.clone())
    }

    #[test]
    fn variants_of_one_artifact_are_kept_and_forgotten_together() {
        let cache: ArtifactCache<u32> = ArtifactCache::new(1 << 20);
        let a = Bytes::from(b"alpha".to_vec());
        cache.insert(1, "r", "x", shared(&a), Arc::new(1), 10);
        cache.insert(1, "r", "y", shared(&a), Arc::new(2), 10);
        cache.insert(1, "s", "x", shared(&a), Arc::new(3), 10);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(1, "r", "y", &shared(&a)).as_deref(), Some(&2));
        cache.forget(1, "r");
        assert_eq!(cache.len(), 1);
        assert!(cache.get(1, "r", "x", &shared(&a)).is_none());
        assert_eq!(cache.get(1, "s", "x", &shared(&a)).as_deref(), Some(&3));
        // Another version of the content: the entry goes.
        assert!(cache.get(1, "s", "x", &Version::Digest([0; 32])).is_none());
        assert!(cache.is_empty());
        assert_eq!(cache.used_bytes(), 0);
    }

    #[test]
    fn the_budget_holds_least_recently_used_first_out() {
        let per_entry = ENTRY_OVERHEAD + 2 * 2 + size_of::<Entry<u32>>() + 1000;
        let cache: ArtifactCache<u32> = ArtifactCache::new(3 * per_entry);
        let v = Version::Digest([1; 32]);
        for name in ["a", "b", "c"] {
            cache.insert(7, name, "q", v.clone(), Arc::new(0), 1000);
        }
        assert_eq!(cache.used_bytes(), 3 * per_entry);
        assert!(cache.get(7, "a", "q", &v).is_some());
        cache.insert(7, "d", "q", v.clone(), Arc::new(0), 1000);
        assert!(cache.get(7, "b", "q", &v).is_none(), "b was the least recently used");
        assert_eq!(cache.len(), 3);
        cache.insert(7, "e", "q", v.clone(), Arc::new(0), 10 * per_entry);
        assert!(cache.get(7, "e", "q", &v).is_none(), "larger than the budget: not kept");
        cache.forget_store(7);
        assert!(cache.is_empty());
        assert_eq!(cache.used_bytes(), 0);
        for name in ["f", "g", "h"] {
            cache.insert(7, name, "q", v.clone(), Arc::new(0), 1000);
        }
        assert!(cache.get(7, "f", "q", &v).is_some());
        // "g" is the least recently used, then "h": evicting one entry's worth drops "g" only
        assert_eq!(cache.evict(1), per_entry);
        assert!(cache.get(7, "g", "q", &v).is_none());
        assert_eq!(cache.evict(per_entry + 1), 2 * per_entry);
        assert!(cache.is_empty());
        assert_eq!(cache.evict(1), 0);
        cache.insert(7, "f", "q", v.clone(), Arc::new(0), 0);
        cache.set_budget(0);
        assert!(cache.is_empty());
        cache.clear();
        assert_eq!(cache.used_bytes(), 0);
    }
}
