//! [`PreparedCache`]: prepared texts of stored artifacts kept between
//! searches, least recently used first out, within a byte budget.
//!
//! An agent greps one large result several times in a row; decoding and
//! indexing it (and, for a file, reading it) is a large part of each grep.
//! Each entry is filed under the store and the artifact's name and carries
//! the [`Version`] of the content it was prepared from; a lookup names the
//! version stored now and finds nothing when it differs (the stale entry is
//! dropped on the spot). Stores tell the cache what they remove (see
//! [`PreparedCache::removal_hook`]) so that memory is given back at once.
//!
//! One cache serves the whole process ([`PreparedCache::global`]): a process
//! may hold one store per agent, and a budget per store would multiply the
//! memory by the number of agents, while one budget bounds it, and the
//! recently searched artifacts of every agent compete for it fairly.

use std::collections::{BTreeMap, HashMap};
use std::mem::size_of;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError, Weak};

use bytes::Bytes;
use offload_storage::{FileStamp, Removal, RemovalHook};

use crate::prepared::PreparedText;

/// Default budget of the process-wide cache: 64 MiB.
pub const DEFAULT_BUDGET_BYTES: usize = 64 << 20;

/// Bytes charged to every entry on top of what its text and index own: the
/// bookkeeping of the maps (a little generous, so that many tiny entries
/// cannot hold much more than the budget).
const ENTRY_OVERHEAD: usize = 256;

/// Which content an entry was prepared from.
#[derive(Debug, Clone)]
pub enum Version {
    /// The content of a memory store, shared with it. Holding the `Bytes`
    /// keeps its allocation alive, so no other content can ever appear at
    /// the same address: the same address and length are the same bytes.
    Shared(Bytes),
    /// A file, by its stamp (see [`FileStamp`]).
    File(FileStamp),
}

impl Version {
    /// Whether `self` and `other` name the same content.
    fn same(&self, other: &Version) -> bool {
        match (self, other) {
            (Version::Shared(a), Version::Shared(b)) => {
                a.as_ptr() == b.as_ptr() && a.len() == b.len()
            }
            (Version::File(a), Version::File(b)) => a == b,
            _ => false,
        }
    }
}

/// One cached text.
#[derive(Debug)]
struct Entry {
    version: Version,
    text: Arc<PreparedText>,
    /// Bytes charged to the budget.
    cost: usize,
    /// Position in [`State::order`].
    tick: u64,
}

/// The cache's contents, behind its lock.
#[derive(Debug, Default)]
struct State {
    budget: usize,
    used: usize,
    next_tick: u64,
    /// Entries by store, then by artifact name.
    stores: HashMap<u64, HashMap<Box<str>, Entry>>,
    /// Least recently used first: tick -> (store, name).
    order: BTreeMap<u64, (u64, Box<str>)>,
}

impl State {
    fn take_tick(&mut self) -> u64 {
        self.next_tick += 1;
        self.next_tick
    }

    fn remove(&mut self, store: u64, name: &str) -> Option<Entry> {
        let names = self.stores.get_mut(&store)?;
        let entry = names.remove(name)?;
        if names.is_empty() {
            self.stores.remove(&store);
        }
        self.order.remove(&entry.tick);
        self.used -= entry.cost;
        Some(entry)
    }

    fn remove_store(&mut self, store: u64) {
        if let Some(names) = self.stores.remove(&store) {
            for entry in names.into_values() {
                self.order.remove(&entry.tick);
                self.used -= entry.cost;
            }
        }
    }

    /// Evicts least recently used entries until `incoming` more bytes fit.
    fn make_room(&mut self, incoming: usize) {
        while self.used + incoming > self.budget {
            let Some((_, (store, name))) = self.order.pop_first() else {
                break;
            };
            if let Some(names) = self.stores.get_mut(&store) {
                if let Some(entry) = names.remove(&name) {
                    self.used -= entry.cost;
                }
                if names.is_empty() {
                    self.stores.remove(&store);
                }
            }
        }
    }
}

/// Prepared texts of stored artifacts, least recently used first out,
/// within a byte budget. Thread-safe; the lock is held only for map
/// operations, never while a text is prepared or searched.
#[derive(Debug)]
pub struct PreparedCache {
    state: Mutex<State>,
}

impl PreparedCache {
    /// An empty cache of `budget_bytes` (0 disables it).
    #[must_use]
    pub fn new(budget_bytes: usize) -> Self {
        PreparedCache {
            state: Mutex::new(State {
                budget: budget_bytes,
                ..State::default()
            }),
        }
    }

    /// The cache of the process, [`DEFAULT_BUDGET_BYTES`] until changed.
    pub fn global() -> &'static Arc<PreparedCache> {
        static GLOBAL: LazyLock<Arc<PreparedCache>> =
            LazyLock::new(|| Arc::new(PreparedCache::new(DEFAULT_BUDGET_BYTES)));
        &GLOBAL
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the budget, evicting what no longer fits (0 empties and
    /// disables the cache).
    pub fn set_budget(&self, budget_bytes: usize) {
        let mut state = self.lock();
        state.budget = budget_bytes;
        state.make_room(0);
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
        self.lock().stores.values().map(HashMap::len).sum()
    }

    /// Whether nothing is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.lock().stores.is_empty()
    }

    /// The text prepared from `version` of artifact `name` of `store`, if
    /// held (it becomes the most recently used). An entry prepared from
    /// another version is dropped.
    #[must_use]
    pub fn get(&self, store: u64, name: &str, version: &Version) -> Option<Arc<PreparedText>> {
        let mut state = self.lock();
        let tick = state.take_tick();
        let state = &mut *state;
        let entry = state.stores.get_mut(&store)?.get_mut(name)?;
        if !entry.version.same(version) {
            state.remove(store, name);
            return None;
        }
        let text = Arc::clone(&entry.text);
        let old = std::mem::replace(&mut entry.tick, tick);
        if let Some(key) = state.order.remove(&old) {
            state.order.insert(tick, key);
        }
        Some(text)
    }

    /// Keeps `text`, prepared from `version` of artifact `name` of `store`,
    /// charged `owned_bytes` (what it holds that nobody else does) plus a
    /// fixed overhead; least recently used entries are evicted to make
    /// room. An entry that does not fit in the whole budget is not kept
    /// (and any older entry for the artifact is dropped all the same).
    pub fn insert(
        &self,
        store: u64,
        name: &str,
        version: Version,
        text: Arc<PreparedText>,
        owned_bytes: usize,
    ) {
        let cost = owned_bytes.saturating_add(ENTRY_OVERHEAD + 2 * name.len() + size_of::<Entry>());
        let mut state = self.lock();
        state.remove(store, name);
        if cost > state.budget {
            return;
        }
        state.make_room(cost);
        let tick = state.take_tick();
        state.order.insert(tick, (store, name.into()));
        state.stores.entry(store).or_default().insert(
            name.into(),
            Entry {
                version,
                text,
                cost,
                tick,
            },
        );
        state.used += cost;
    }

    /// Drops the entry of artifact `name` of `store`.
    pub fn forget(&self, store: u64, name: &str) {
        self.lock().remove(store, name);
    }

    /// Drops every entry of `store`.
    pub fn forget_store(&self, store: u64) {
        self.lock().remove_store(store);
    }

    /// Drops every entry.
    pub fn clear(&self) {
        let mut state = self.lock();
        let budget = state.budget;
        *state = State {
            budget,
            next_tick: state.next_tick,
            ..State::default()
        };
    }

    /// A hook for a store's removals (see [`offload_storage::removal`]) that
    /// drops the entries of what the store removes. It holds the cache
    /// weakly: a store does not keep a cache alive.
    #[must_use]
    pub fn removal_hook(self: &Arc<Self>) -> RemovalHook {
        let cache: Weak<PreparedCache> = Arc::downgrade(self);
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

    /// One static content, so that every `Bytes` of it has the same address.
    static X: [u8; 1] = *b"x";

    fn text(content: &'static [u8]) -> Arc<PreparedText> {
        Arc::new(PreparedText::new(&Bytes::from_static(content)))
    }

    fn x() -> Version {
        Version::Shared(Bytes::from_static(&X))
    }

    #[test]
    fn finds_only_the_same_version() {
        let cache = PreparedCache::new(1 << 20);
        let a = Bytes::from(b"alpha".to_vec());
        cache.insert(1, "r", Version::Shared(a.clone()), text(b"alpha"), 0);
        assert!(cache.get(1, "r", &Version::Shared(a.clone())).is_some());
        assert!(cache.get(2, "r", &Version::Shared(a.clone())).is_none());
        // Equal bytes elsewhere are another version: the entry goes.
        assert!(cache
            .get(1, "r", &Version::Shared(Bytes::from(b"alpha".to_vec())))
            .is_none());
        assert!(cache.is_empty());
        assert_eq!(cache.used_bytes(), 0);
    }

    #[test]
    fn keeps_within_the_budget_least_recently_used_first_out() {
        let per_entry = ENTRY_OVERHEAD + 2 + size_of::<Entry>() + 1000;
        let cache = PreparedCache::new(3 * per_entry);
        for name in ["a", "b", "c"] {
            cache.insert(1, name, x(), text(b"x"), 1000);
        }
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.used_bytes(), 3 * per_entry);
        assert!(cache.get(1, "a", &x()).is_some());
        cache.insert(1, "d", x(), text(b"x"), 1000);
        assert!(
            cache.get(1, "b", &x()).is_none(),
            "b was the least recently used"
        );
        for name in ["a", "c", "d"] {
            assert!(cache.get(1, name, &x()).is_some(), "{name}");
        }
        // Larger than the whole budget: not kept, and the older entry goes.
        cache.insert(1, "a", x(), text(b"x"), 3 * per_entry);
        assert!(cache.get(1, "a", &x()).is_none());
        assert_eq!(cache.len(), 2);
        cache.set_budget(per_entry);
        assert_eq!(cache.len(), 1);
        assert!(cache.used_bytes() <= per_entry);
        cache.set_budget(0);
        assert!(cache.is_empty());
        cache.insert(1, "e", x(), text(b"x"), 0);
        assert!(cache.is_empty(), "a budget of 0 keeps nothing");
    }

    #[test]
    fn forgets_by_artifact_and_by_store_through_the_hook() {
        let cache = Arc::new(PreparedCache::new(1 << 20));
        for (store, name) in [(1, "a"), (1, "b"), (2, "a")] {
            cache.insert(store, name, x(), text(b"x"), 10);
        }
        let hook = cache.removal_hook();
        hook(1, Removal::Artifact("a"));
        assert!(cache.get(1, "a", &x()).is_none());
        assert_eq!(cache.len(), 2);
        hook(1, Removal::All);
        assert_eq!(cache.len(), 1);
        assert!(cache.get(2, "a", &x()).is_some());
        cache.clear();
        assert!(cache.is_empty());
        assert_eq!(cache.used_bytes(), 0);
        drop(cache);
        hook(2, Removal::All);
    }
}
