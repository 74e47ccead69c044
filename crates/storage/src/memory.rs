//! In-memory blob store with cycle-based eviction (the SDK's
//! `InMemoryStorage`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use bytes::Bytes;

use crate::kv::{normalize_key, normalize_prefix, sort_js};
use crate::lifecycle::{
    digest, sort_artifacts, ArtifactInfo, ContentDigest, Expiries, GoneReason, Removals, Stats, UseOrder,
};
use crate::removal::{next_store_id, HookSlot, Removal, RemovalHook};
use crate::{check_policy, Blob, BlobStore, KeyValueStore, Lifecycle, NewBlob, Policy, Sequence, StorageError};

/// Stored value: content is kept as [`Bytes`] (reference counted, never
/// copied), the access cycle is atomic so that retrieves only need a shared
/// lock.
#[derive(Debug)]
struct Entry {
    content: Bytes,
    content_type: String,
    last_accessed_cycle: AtomicU64,
    session: Option<Arc<str>>,
    /// When it was stored (ms since the epoch).
    created_ms: u64,
    expires_ms: Option<u64>,
    /// Set when the content is shared through [`Entries::shared`].
    digest: Option<ContentDigest>,
}

impl Entry {
    fn expired(&self, now_ms: u64) -> bool {
        self.expires_ms.is_some_and(|at| at <= now_ms)
    }
}

#[derive(Debug, Default)]
struct Entries {
    map: HashMap<String, Entry>,
    /// Bytes held: deduplicated content counted once.
    total_bytes: u64,
    /// Deduplicated content by digest, with the number of entries using it.
    shared: HashMap<ContentDigest, (Bytes, usize)>,
    /// Why recently removed references went (expired, evicted).
    removals: Removals,
    /// Least-recently-used order, kept while a byte budget is set.
    uses: Option<UseOrder>,
    /// The entries by expiry.
    expiries: Expiries,
    /// The store's [`MemoryStore::id`], for the removal hook.
    store_id: u64,
    /// Told of every entry removed.
    hook: HookSlot,
}

impl Entries {
    /// Removes one entry, releasing its bytes (shared content when its last
    /// user goes); `reason` is remembered for later lookups.
    fn remove(&mut self, reference: &str, reason: Option<GoneReason>) -> bool {
        let Some(entry) = self.map.remove(reference) else {
            return false;
        };
        let len = entry.content.len() as u64;
        match entry.digest {
            Some(d) => {
                if let Some((_, users)) = self.shared.get_mut(&d) {
                    *users -= 1;
                    if *users == 0 {
                        self.shared.remove(&d);
                        self.total_bytes = self.total_bytes.saturating_sub(len);
                    }
                }
            }
            None => self.total_bytes = self.total_bytes.saturating_sub(len),
        }
        if let Some(uses) = &mut self.uses {
            uses.remove(reference);
        }
        self.expiries.remove(reference, entry.expires_ms);
        if let Some(reason) = reason {
            self.removals.remember(reference, reason);
        }
        self.hook.notify(self.store_id, Removal::Artifact(reference));
        true
    }

    /// Removes every entry `pick` selects; returns how many.
    fn remove_where(&mut self, pick: impl Fn(&Entry) -> bool, reason: Option<GoneReason>) -> usize {
        let doomed: Vec<String> = self.map.iter().filter(|(_, e)| pick(e)).map(|(k, _)| k.clone()).collect();
        doomed.iter().filter(|r| self.remove(r, reason)).count()
    }

    /// Bytes a new content of `len` bytes would add.
    fn cost(&self, len: u64, digest: Option<&ContentDigest>) -> u64 {
        if digest.is_some_and(|d| self.shared.contains_key(d)) {
            0
        } else {
            len
        }
    }

    /// Makes room for `len` more bytes (none when content of `digest` is
    /// already held) under `max_bytes` at `now_ms`: every expired entry goes
    /// first (as expired), then the least recently used (as evicted).
    fn make_room(&mut self, max_bytes: u64, len: u64, digest: Option<&ContentDigest>, now_ms: u64) {
        while self.total_bytes + self.cost(len, digest) > max_bytes {
            if self.expiries.any_due(now_ms) {
                for reference in self.expiries.due(now_ms) {
                    self.remove(&reference, Some(GoneReason::Expired));
                }
                continue;
            }
            let Some(victim) = self.uses.as_ref().and_then(UseOrder::oldest).map(str::to_owned) else {
                break;
            };
            self.remove(&victim, Some(GoneReason::Evicted));
        }
    }

    /// Records a use at `at_ms` for the byte budget's order.
    fn touch(&mut self, reference: &str, at_ms: u64) {
        if let Some(uses) = &mut self.uses {
            uses.touch(reference, at_ms);
        }
    }

    /// The reason `reference` is gone, as an error.
    fn missing(&self, reference: &str) -> StorageError {
        match self.removals.reason(reference) {
            Some(reason) => StorageError::gone(reference, reason),
            None => StorageError::not_found(reference),
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
    /// A number naming this store in the process (see [`MemoryStore::id`]).
    id: u64,
    entries: RwLock<Entries>,
    counter: Sequence,
    /// Whether [`MemoryStore::lend_sequence_cell`] has lent the counter.
    cell_lent: AtomicBool,
    current_cycle: AtomicU64,
    /// Eviction window in cycles; `0` means eviction is disabled.
    evict_after: AtomicU64,
    /// Values of the unified key-value API ([`KeyValueStore`]): a separate
    /// map, never evicted, keyed by normalised key.
    values: RwLock<BTreeMap<String, Bytes>>,
    /// Expiry, budget and deduplication (all off by default).
    policy: RwLock<Policy>,
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
        let id = next_store_id();
        Ok(MemoryStore {
            id,
            entries: RwLock::new(Entries { store_id: id, ..Entries::default() }),
            counter: Sequence::default(),
            cell_lent: AtomicBool::new(false),
            current_cycle: AtomicU64::new(0),
            evict_after: AtomicU64::new(encode_window(evict_after_cycles)?),
            values: RwLock::default(),
            policy: RwLock::default(),
        })
    }

    /// The reference counter, lent once in the store's life (`None` after): its
    /// borrower takes numbers by incrementing the counter's memory itself, on the one
    /// thread that takes every number of this store.
    pub fn lend_sequence_cell(&self) -> Option<&AtomicU64> {
        (!self.cell_lent.swap(true, Ordering::Relaxed)).then(|| self.counter.cell())
    }

    /// The last reference number taken (0 before the first).
    #[must_use]
    pub fn last_sequence(&self) -> u64 {
        self.counter.last()
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
        self.write()
            .remove_where(|e| e.last_accessed_cycle.load(Ordering::Relaxed) < threshold, None)
    }

    /// Removes every entry. The reference counter is not reset, so later
    /// references never repeat earlier ones.
    pub fn clear(&self) {
        let mut entries = self.write();
        entries.map.clear();
        entries.shared.clear();
        entries.expiries = Expiries::default();
        entries.total_bytes = 0;
        if let Some(uses) = &mut entries.uses {
            *uses = UseOrder::default();
        }
        entries.hook.notify(self.id, Removal::All);
    }

    /// A number naming this store among all the stores of the process,
    /// never given to another one (the `store` its removal hook is told).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Sets the hook told of every entry this store removes (see
    /// [`crate::removal`]); `None` removes it.
    pub fn set_removal_hook(&self, hook: Option<RemovalHook>) {
        self.write().hook.set(hook);
    }

    /// Removes one entry; returns whether it existed.
    pub fn delete(&self, reference: &str) -> bool {
        self.write().remove(reference, None)
    }

    /// Returns whether `reference` is currently stored (does not count as an
    /// access).
    pub fn contains(&self, reference: &str) -> bool {
        self.read().map.contains_key(reference)
    }

    /// Whether `reference` names an entry holding `content` itself (the
    /// same shared bytes, not merely equal ones); not an access.
    pub fn holds(&self, reference: &str, content: &Bytes) -> bool {
        self.read()
            .map
            .get(reference)
            .is_some_and(|e| e.content.as_ptr() == content.as_ptr() && e.content.len() == content.len())
    }

    /// Number of stored entries.
    pub fn len(&self) -> usize {
        self.read().map.len()
    }

    /// Returns `true` when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.read().map.is_empty()
    }

    /// Bytes of content held (identical content counted once when
    /// deduplicated).
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

impl Drop for MemoryStore {
    /// Tells the removal hook that every entry is gone.
    fn drop(&mut self) {
        let entries = self.entries.get_mut().unwrap_or_else(PoisonError::into_inner);
        entries.hook.notify(self.id, Removal::All);
    }
}

impl Default for MemoryStore {
    /// A store with the SDK's default eviction window of 20 cycles.
    fn default() -> Self {
        let id = next_store_id();
        MemoryStore {
            id,
            entries: RwLock::new(Entries { store_id: id, ..Entries::default() }),
            counter: Sequence::default(),
            cell_lent: AtomicBool::new(false),
            current_cycle: AtomicU64::new(0),
            evict_after: AtomicU64::new(Self::DEFAULT_EVICT_AFTER_CYCLES),
            values: RwLock::default(),
            policy: RwLock::default(),
        }
    }
}

impl BlobStore for MemoryStore {
    fn next_sequence(&self) -> u64 {
        self.counter.next()
    }

    /// Stores the blob; with a policy, also its session and expiry, its
    /// content once (deduplication) and within the byte budget (least
    /// recently used entries evicted first).
    ///
    /// # Errors
    ///
    /// [`StorageError::TooLarge`] for content larger than the whole budget.
    fn store_blob(&self, blob: NewBlob<'_>) -> Result<String, StorageError> {
        self.store_blob_used_at(blob, self.current_cycle())
    }

    fn retrieve(&self, reference: &str) -> Result<Blob, StorageError> {
        self.retrieve_at(reference, crate::lifecycle::system_now_ms())
    }
}

impl MemoryStore {
    /// [`BlobStore::store_blob`] of a blob last used in agent cycle `cycle`
    /// rather than the current one: content whose store was recorded earlier
    /// (numbered with [`BlobStore::next_sequence`] then) and is handed over
    /// now, evicted as if it had been stored in that cycle.
    ///
    /// # Errors
    ///
    /// As [`BlobStore::store_blob`].
    pub fn store_blob_used_at(&self, blob: NewBlob<'_>, cycle: u64) -> Result<String, StorageError> {
        let NewBlob { sequence, key, content, content_type, tags } = blob;
        let policy = self.policy();
        let len = content.len() as u64;
        crate::check_fits(&policy, len)?;
        let reference = format!("mem_{sequence}_{key}");
        // Hashed before the lock is taken.
        let digest = policy.dedup.then(|| digest(&content));
        let created_ms = tags.now();
        let expires_ms = tags.ttl_ms.or(policy.default_ttl_ms).map(|ttl| created_ms.saturating_add(ttl));
        let session = tags.session.map(Arc::from);
        let mut entries = self.write();
        entries.remove(&reference, None);
        if let Some(max_bytes) = policy.max_bytes {
            entries.make_room(max_bytes, len, digest.as_ref(), created_ms);
        }
        let content = match digest {
            Some(d) => {
                let (shared, users) = entries.shared.entry(d).or_insert_with(|| (content, 0));
                *users += 1;
                let shared = shared.clone();
                if *users == 1 {
                    entries.total_bytes += len;
                }
                shared
            }
            None => {
                entries.total_bytes += len;
                content
            }
        };
        let entry = Entry {
            content,
            content_type: content_type.to_owned(),
            last_accessed_cycle: AtomicU64::new(cycle),
            session,
            created_ms,
            expires_ms,
            digest,
        };
        entries.map.insert(reference.clone(), entry);
        entries.expiries.insert(&reference, expires_ms);
        entries.removals.forget(&reference);
        entries.touch(&reference, created_ms);
        Ok(reference)
    }
}

impl Lifecycle for MemoryStore {
    fn policy(&self) -> Policy {
        *self.policy.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_policy(&self, policy: Policy) -> Result<(), StorageError> {
        check_policy(&policy)?;
        let mut entries = self.write();
        if policy.max_bytes.is_some() && entries.uses.is_none() {
            let mut uses = UseOrder::default();
            for (name, entry) in &entries.map {
                uses.insert_unused(name, entry.created_ms);
            }
            entries.uses = Some(uses);
        } else if policy.max_bytes.is_none() {
            entries.uses = None;
        }
        *self.policy.write().unwrap_or_else(PoisonError::into_inner) = policy;
        Ok(())
    }

    fn retrieve_at(&self, reference: &str, now_ms: u64) -> Result<Blob, StorageError> {
        {
            let entries = self.read();
            let entry = entries.map.get(reference).ok_or_else(|| entries.missing(reference))?;
            if !entry.expired(now_ms) && entries.uses.is_none() {
                entry.last_accessed_cycle.store(self.current_cycle(), Ordering::Relaxed);
                return Ok(Blob { content: entry.content.clone(), content_type: entry.content_type.clone() });
            }
        }
        // Expired (removed now), or a use to record for the byte budget.
        let mut entries = self.write();
        let entry = entries.map.get(reference).ok_or_else(|| entries.missing(reference))?;
        if entry.expired(now_ms) {
            entries.remove(reference, Some(GoneReason::Expired));
            return Err(StorageError::gone(reference, GoneReason::Expired));
        }
        entry.last_accessed_cycle.store(self.current_cycle(), Ordering::Relaxed);
        let blob = Blob { content: entry.content.clone(), content_type: entry.content_type.clone() };
        entries.touch(reference, now_ms);
        Ok(blob)
    }

    fn holds(&self, reference: &str, now_ms: u64) -> Result<bool, StorageError> {
        Ok(self.read().map.get(reference).is_some_and(|e| !e.expired(now_ms)))
    }

    fn cleanup_expired(&self, now_ms: u64) -> Result<usize, StorageError> {
        let mut entries = self.write();
        let due = entries.expiries.due(now_ms);
        Ok(due.iter().filter(|r| entries.remove(r, Some(GoneReason::Expired))).count())
    }

    fn delete_session(&self, session: &str) -> Result<usize, StorageError> {
        Ok(self.write().remove_where(|e| e.session.as_deref() == Some(session), None))
    }

    /// Expired entries not yet removed are not counted, not even in the
    /// bytes held.
    fn stats(&self, now_ms: u64) -> Result<Stats, StorageError> {
        let entries = self.read();
        let mut stats = Stats::default();
        let mut digests = HashSet::new();
        for entry in entries.map.values().filter(|e| !e.expired(now_ms)) {
            let len = entry.content.len() as u64;
            stats.add(entry.session.as_deref(), len);
            match entry.digest {
                Some(d) if !digests.insert(d) => {}
                _ => stats.stored_bytes += len,
            }
        }
        Ok(stats)
    }

    fn list_artifacts(&self) -> Result<Vec<ArtifactInfo>, StorageError> {
        let mut out: Vec<ArtifactInfo> = self
            .read()
            .map
            .iter()
            .map(|(reference, e)| ArtifactInfo {
                name: reference.clone(),
                reference: reference.clone(),
                content_type: e.content_type.clone(),
                bytes: e.content.len() as u64,
                session: e.session.as_deref().map(str::to_owned),
                created_ms: Some(e.created_ms),
                expires_ms: e.expires_ms,
            })
            .collect();
        sort_artifacts(&mut out);
        Ok(out)
    }

    fn remove_artifacts(&self, names: &[String], only_expired_at: Option<u64>) -> Result<usize, StorageError> {
        let reason = only_expired_at.map(|_| GoneReason::Expired);
        let mut entries = self.write();
        let mut removed = 0;
        for name in names {
            let picked = entries.map.get(name).is_some_and(|e| only_expired_at.is_none_or(|at| e.expired(at)));
            if picked && entries.remove(name, reason) {
                removed += 1;
            }
        }
        Ok(removed)
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
