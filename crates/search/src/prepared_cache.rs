//! [`PreparedCache`]: prepared texts of stored artifacts kept between
//! searches, least recently used first out, within a byte budget.
//!
//! An agent greps one large result several times in a row; decoding and
//! indexing it (and, for a file, reading it) is a large part of each grep.
//! Each entry is filed under the store and the artifact's name and carries
//! the [`Version`] of the content it was prepared from; a lookup names the
//! version stored now and finds nothing when it differs (the stale entry is
//! dropped on the spot). Stores tell the cache what they remove (see
//! [`crate::removal_hook`]) so that memory is given back at once.
//!
//! One cache serves the whole process ([`PreparedCache::global`]): a process
//! may hold one store per agent, and a budget per store would multiply the
//! memory by the number of agents, while one budget bounds it, and the
//! recently searched artifacts of every agent compete for it fairly.

use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use offload_storage::RemovalHook;

use crate::artifact_cache::{ArtifactCache, Version};
use crate::prepared::PreparedText;

/// Default budget of the process-wide cache: 64 MiB.
pub const DEFAULT_BUDGET_BYTES: usize = 64 << 20;

/// The one variant of a prepared text (an artifact has one).
const TEXT: &str = "";

/// Prepared texts of stored artifacts, least recently used first out,
/// within a byte budget. Thread-safe; the lock is held only for map
/// operations, never while a text is prepared or searched.
#[derive(Debug)]
pub struct PreparedCache {
    entries: Arc<ArtifactCache<PreparedText>>,
}

impl PreparedCache {
    /// An empty cache of `budget_bytes` (0 disables it).
    #[must_use]
    pub fn new(budget_bytes: usize) -> Self {
        PreparedCache { entries: Arc::new(ArtifactCache::new(budget_bytes)) }
    }

    /// The cache of the process, [`DEFAULT_BUDGET_BYTES`] until changed.
    pub fn global() -> &'static Arc<PreparedCache> {
        static GLOBAL: LazyLock<Arc<PreparedCache>> = LazyLock::new(|| Arc::new(PreparedCache::new(DEFAULT_BUDGET_BYTES)));
        &GLOBAL
    }

    /// The text prepared from `version` of artifact `name` of `store`, if
    /// held (it becomes the most recently used). An entry prepared from
    /// another version is dropped.
    #[must_use]
    pub fn get(&self, store: u64, name: &str, version: &Version) -> Option<Arc<PreparedText>> {
        self.entries.get(store, name, TEXT, version)
    }

    /// Keeps `text`, prepared from `version` of artifact `name` of `store`,
    /// charged `owned_bytes` (what it holds that nobody else does) plus a
    /// fixed overhead; least recently used entries are evicted to make
    /// room. An entry that does not fit in the whole budget is not kept
    /// (and any older entry for the artifact is dropped all the same).
    pub fn insert(&self, store: u64, name: &str, version: Version, text: Arc<PreparedText>, owned_bytes: usize) {
        self.entries.insert(store, name, TEXT, version, text, owned_bytes);
    }

    /// A hook for a store's removals (see [`offload_storage::removal`]) that
    /// drops the entries of what the store removes. It holds the cache
    /// weakly: a store does not keep a cache alive.
    #[must_use]
    pub fn removal_hook(&self) -> RemovalHook {
        self.entries.removal_hook()
    }
}

/// The budget, the charge, and the forgetting of entries are the inner cache's.
impl Deref for PreparedCache {
    type Target = ArtifactCache<PreparedText>;

    fn deref(&self) -> &Self::Target {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use offload_storage::Removal;

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
        assert!(cache.get(1, "r", &Version::Shared(Bytes::from(b"alpha".to_vec()))).is_none());
        assert!(cache.is_empty());
        assert_eq!(cache.used_bytes(), 0);
    }

    #[test]
    fn keeps_within_the_budget_least_recently_used_first_out() {
        let probe = PreparedCache::new(1 << 20);
        probe.insert(1, "a", x(), text(b"x"), 1000);
        let per_entry = probe.used_bytes();
        let cache = PreparedCache::new(3 * per_entry);
        for name in ["a", "b", "c"] {
            cache.insert(1, name, x(), text(b"x"), 1000);
        }
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.used_bytes(), 3 * per_entry);
        assert!(cache.get(1, "a", &x()).is_some());
        cache.insert(1, "d", x(), text(b"x"), 1000);
        assert!(cache.get(1, "b", &x()).is_none(), "b was the least recently used");
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
