//! In-memory blob store with cycle-based eviction (the SDK's
//! `InMemoryStorage`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use bytes::Bytes;

use crate::kv::{normalize_key, normalize_prefix, sort_js};
use crate::{Blob, BlobStore, KeyValueStore, NewBlob, Sequence, StorageError};

/// Stored value: content is kept as [`Bytes`] (reference counted, never
/// copied), the access cycle is atomic so that retrieves only need a shared
/// lock.
#[derive(Debug)]
struct Entry {
    content: Bytes,
    content_type: String,
    last_accessed_cycle: AtomicU64,
}

#[derive(Debug, Default)]
struct Entries {
    map: HashMap<String, Entry>,
    total_bytes: u64,
}

impl Entries {
    fn remove(&mut self, reference: &str) -> bool {
        match self.map.remove(reference) {
            Some(entry) => {
                self.total_bytes = self.total_bytes.saturating_sub(entry.content.len() as u64);
                true
            }
            None => false,
        }
    }
}

/// In-memory storage backend with the semantics of the SDK's
/// `InMemoryStorage`.
///
/// * [`store`](BlobStore::store) returns `mem_<n>_<key>` where `n` is a
///   per-instance counter starting at 1 and `key` is used unchanged.
/// * Every store and retrieve records the current agent-loop cycle as the
///   entry's last access.
/// * [`evict`](MemoryStore::evict) advances the current cycle and removes
///   entries whose last access is older than `cycle - evict_after` cycles.
///
/// The map lock is held only for a hash-map insert or lookup; contents are
/// never copied, so storing a large blob does not block readers of other
/// entries.
#[derive(Debug)]
pub struct MemoryStore {
    entries: RwLock<Entries>,
    counter: Sequence,
    current_cycle: AtomicU64,
    /// Eviction window in cycles; `0` means eviction is disabled.
    evict_after: AtomicU64,
    /// Values of the unified key-value API ([`KeyValueStore`]): a separate
    /// map, never evicted, keyed by normalised key.
    values: RwLock<BTreeMap<String, Bytes>>,
}

impl MemoryStore {
    /// Default eviction window, as in the SDK (20 cycles).
    pub const DEFAULT_EVICT_AFTER_CYCLES: u64 = 20;

    /// Creates an empty store.
    ///
    /// `evict_after_cycles` is the number of cycles of inactivity after which
    /// [`evict`](Self::evict) removes an entry; `None` disables eviction.
    /// `Some(0)` is rejected with [`StorageError::InvalidArgument`], as the
    /// SDK rejects non-positive values.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidArgument`] for `Some(0)`.
    pub fn new(evict_after_cycles: Option<u64>) -> Result<Self, StorageError> {
        Ok(MemoryStore {
            entries: RwLock::new(Entries::default()),
            counter: Sequence::default(),
            current_cycle: AtomicU64::new(0),
            evict_after: AtomicU64::new(encode_window(evict_after_cycles)?),
            values: RwLock::default(),
        })
    }

    /// Changes the eviction window (`None` disables eviction). `Some(0)` is
    /// rejected and leaves the window unchanged.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidArgument`] for `Some(0)`.
    pub fn set_evict_after(&self, evict_after_cycles: Option<u64>) -> Result<(), StorageError> {
        let encoded = encode_window(evict_after_cycles)?;
        self.evict_after.store(encoded, Ordering::Relaxed);
        Ok(())
    }

    /// The current eviction window (`None` when eviction is disabled).
    pub fn evict_after(&self) -> Option<u64> {
        match self.evict_after.load(Ordering::Relaxed) {
            0 => None,
            n => Some(n),
        }
    }

    /// The cycle most recently passed to [`evict`](Self::evict) (0 before the
    /// first call).
    pub fn current_cycle(&self) -> u64 {
        self.current_cycle.load(Ordering::Relaxed)
    }

    /// Sets the current cycle to `cycle` and, when eviction is enabled,
    /// removes every entry whose last access is strictly before
    /// `cycle - evict_after`. Returns the number of entries removed.
    ///
    /// When `cycle < evict_after` the threshold is negative (the SDK computes
    /// it with signed arithmetic) and nothing is removed.
    pub fn evict(&self, cycle: u64) -> usize {
        self.current_cycle.store(cycle, Ordering::Relaxed);
        let Some(window) = self.evict_after() else {
            return 0;
        };
        let Some(threshold) = cycle.checked_sub(window) else {
            return 0;
        };
        let mut entries = self.write();
        let before = entries.map.len();
        let mut freed = 0u64;
        entries.map.retain(|_, entry| {
            let keep = entry.last_accessed_cycle.load(Ordering::Relaxed) >= threshold;
            if !keep {
                freed += entry.content.len() as u64;
            }
            keep
        });
        entries.total_bytes = entries.total_bytes.saturating_sub(freed);
        before - entries.map.len()
    }

    /// Removes every entry. The reference counter is not reset, so later
    /// references never repeat earlier ones.
    pub fn clear(&self) {
        let mut entries = self.write();
        entries.map.clear();
        entries.total_bytes = 0;
    }

    /// Removes one entry; returns whether it existed.
    pub fn delete(&self, reference: &str) -> bool {
        self.write().remove(reference)
    }

    /// Returns whether `reference` is currently stored (does not count as an
    /// access).
    pub fn contains(&self, reference: &str) -> bool {
        self.read().map.contains_key(reference)
    }

    /// Number of stored entries.
    pub fn len(&self) -> usize {
        self.read().map.len()
    }

    /// Returns `true` when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.read().map.is_empty()
    }

    /// Sum of the content lengths of all stored entries, in bytes.
    pub fn total_bytes(&self) -> u64 {
        self.read().total_bytes
    }

    /// Removes every value of the key-value API (blobs are kept).
    pub fn clear_values(&self) {
        self.values_write().clear();
    }

    /// Number of values held by the key-value API.
    pub fn values_len(&self) -> usize {
        self.values_read().len()
    }

    fn values_read(&self) -> RwLockReadGuard<'_, BTreeMap<String, Bytes>> {
        self.values.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn values_write(&self) -> RwLockWriteGuard<'_, BTreeMap<String, Bytes>> {
        self.values.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn read(&self) -> RwLockReadGuard<'_, Entries> {
        self.entries.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Entries> {
        self.entries.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryStore {
    /// A store with the SDK's default eviction window of 20 cycles.
    fn default() -> Self {
        MemoryStore {
            entries: RwLock::new(Entries::default()),
            counter: Sequence::default(),
            current_cycle: AtomicU64::new(0),
            evict_after: AtomicU64::new(Self::DEFAULT_EVICT_AFTER_CYCLES),
            values: RwLock::default(),
        }
    }
}

impl BlobStore for MemoryStore {
    fn next_sequence(&self) -> u64 {
        self.counter.next()
    }

    fn store_blob(&self, blob: NewBlob<'_>) -> Result<String, StorageError> {
        let NewBlob { sequence, key, content, content_type } = blob;
        let reference = format!("mem_{sequence}_{key}");
        let entry = Entry {
            content_type: content_type.to_owned(),
            last_accessed_cycle: AtomicU64::new(self.current_cycle()),
            content,
        };
        let size = entry.content.len() as u64;
        let mut entries = self.write();
        if let Some(old) = entries.map.insert(reference.clone(), entry) {
            entries.total_bytes = entries.total_bytes.saturating_sub(old.content.len() as u64);
        }
        entries.total_bytes += size;
        Ok(reference)
    }

    fn retrieve(&self, reference: &str) -> Result<Blob, StorageError> {
        let entries = self.read();
        let entry = entries
            .map
            .get(reference)
            .ok_or_else(|| StorageError::not_found(reference))?;
        entry
            .last_accessed_cycle
            .store(self.current_cycle(), Ordering::Relaxed);
        Ok(Blob {
            content: entry.content.clone(),
            content_type: entry.content_type.clone(),
        })
    }
}

/// The SDK's unified `InMemoryStorage`: keys are normalised, values are
/// shared [`Bytes`] (the caller's buffer is copied once, by the binding).
impl KeyValueStore for MemoryStore {
    fn write(&self, key: &str, data: Bytes) -> Result<(), StorageError> {
        let key = normalize_key(key)?;
        self.values_write().insert(key, data);
        Ok(())
    }

    fn read(&self, key: &str) -> Result<Option<Bytes>, StorageError> {
        let key = normalize_key(key)?;
        Ok(self.values_read().get(&key).cloned())
    }

    fn delete(&self, key: &str) -> Result<bool, StorageError> {
        let key = normalize_key(key)?;
        Ok(self.values_write().remove(&key).is_some())
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        let prefix = normalize_prefix(prefix)?;
        // Keys sharing a prefix are contiguous in byte order.
        let mut keys: Vec<String> = self
            .values_read()
            .range(prefix.clone()..)
            .map(|(k, _)| k)
            .take_while(|k| k.starts_with(&prefix))
            .cloned()
            .collect();
        sort_js(&mut keys);
        Ok(keys)
    }
}

/// Validates an eviction window and encodes it (`None` becomes 0).
fn encode_window(evict_after_cycles: Option<u64>) -> Result<u64, StorageError> {
    match evict_after_cycles {
        None => Ok(0),
        Some(0) => Err(StorageError::InvalidArgument(
            "evict_after_cycles must be a positive integer".to_owned(),
        )),
        Some(n) => Ok(n),
    }
}
