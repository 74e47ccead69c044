//! Telling a caller which artifacts a store removed, so that whatever it
//! derived from their content (a search index, for example) goes with them.
//!
//! A store calls its [`RemovalHook`] for every artifact it removes itself:
//! deletion, eviction (idle cycles or byte budget), expiry (on retrieve or
//! in a cleanup), session deletion, replacement under the same reference,
//! clearing, and once more ([`Removal::All`]) when the store is dropped.
//! Removals made by others (another process sharing a file directory, a
//! person deleting a file) are not seen: callers must still check that the
//! content they derived from is the content stored now.
//!
//! The hook runs on the thread that removes, possibly while the store holds
//! its own locks: it must be quick and must not call back into the store.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

/// What a store removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal<'a> {
    /// One artifact: its reference for a memory store, its file name for a
    /// file store.
    Artifact(&'a str),
    /// Every artifact (the store was cleared or dropped).
    All,
}

/// Called with each removal; `store` is the [`id`](crate::MemoryStore::id)
/// of the store that removed it.
pub type RemovalHook = Arc<dyn Fn(u64, Removal<'_>) + Send + Sync>;

/// A store's hook, if one was set.
#[derive(Default)]
pub(crate) struct HookSlot(RwLock<Option<RemovalHook>>);

impl HookSlot {
    /// Replaces the hook (`None` removes it).
    pub(crate) fn set(&self, hook: Option<RemovalHook>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = hook;
    }

    /// Tells the hook, if any, that `store` removed `what`.
    pub(crate) fn notify(&self, store: u64, what: Removal<'_>) {
        let hook = self.0.read().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(hook) = hook {
            hook(store, what);
        }
    }
}

impl fmt::Debug for HookSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self.0.read().unwrap_or_else(PoisonError::into_inner).is_some();
        f.debug_struct("HookSlot").field("set", &set).finish()
    }
}

/// A number for a new store, never given twice in a process.
pub(crate) fn next_store_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
