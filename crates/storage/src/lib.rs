//! Storage backends for offloaded tool-result content.
//!
//! This crate is the native counterpart of the storage classes of the
//! `ContextOffloader` plugin (`InMemoryStorage` and `FileStorage`): the same
//! reference formats and file names, with content kept in native memory and
//! file storage that is crash-safe and safe to share between processes.
//!
//! * [`MemoryStore`] keeps blobs in memory with cycle-based eviction.
//! * [`FileStore`] writes one file per blob into an artifact directory.
//!
//! Both implement [`BlobStore`] (the offloader's `store`/`retrieve`) and
//! [`KeyValueStore`] (the SDK's unified `Storage`: `write`/`read`/`delete`/
//! `list` under normalised keys); every type is `Send + Sync` and all methods
//! take `&self`, so a store can be shared between threads behind an `Arc`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod file;
mod kv;
pub mod lifecycle;
mod memory;
pub mod removal;

use std::sync::atomic::{AtomicU64, Ordering};

pub use bytes::Bytes;
pub use error::StorageError;
pub use file::{is_artifact_name, sanitize_id, FileStore, MappedBlob, ReferenceStyle, StampedBlob};
pub use kv::{
    artifact_key_error, compare_js, is_control_character, is_windows_device_name, names_an_artifact, normalize_key,
    normalize_prefix, segment_problem, sort_js, KeyValueStore,
};
pub use lifecycle::{ArtifactInfo, GoneReason, Policy, SessionStats, Stats, Tags};
pub use memory::MemoryStore;
pub use offload_atomic::{FileStamp, Mapped};
pub use removal::{Removal, RemovalHook};

/// Content type reported for artifacts whose type is unknown.
pub const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

/// A stored blob together with its content type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// The raw content.
    pub content: Bytes,
    /// The MIME type given when the blob was stored (or
    /// [`DEFAULT_CONTENT_TYPE`] when it is unknown).
    pub content_type: String,
}

/// A store's sequence of reference numbers: 1, 2, ... in the order they are
/// taken, from any thread.
#[derive(Debug, Default)]
pub struct Sequence(AtomicU64);

impl Sequence {
    /// Takes the next number.
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The last number taken (0 before the first).
    #[must_use]
    pub fn last(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// The counter itself, for a caller that takes numbers from its memory directly
    /// (see `MemoryStore::lend_sequence_cell`).
    #[must_use]
    pub fn cell(&self) -> &AtomicU64 {
        &self.0
    }
}

/// A blob to store: the sequence number taken for it (see
/// [`BlobStore::next_sequence`]), the key its reference is derived from, its
/// content and its content type.
#[derive(Debug, Clone)]
pub struct NewBlob<'a> {
    /// Sequence number from [`BlobStore::next_sequence`] of the same store.
    pub sequence: u64,
    /// Caller's key (a tool use id and block index, for the plugin).
    pub key: &'a str,
    /// The raw content.
    pub content: Bytes,
    /// MIME type, kept with the content.
    pub content_type: &'a str,
    /// Session, lifetime and time of the store (all optional).
    pub tags: Tags<'a>,
}

/// A backend that stores blobs and hands back an opaque reference string.
///
/// References carry a per-instance sequence number (`mem_<n>_...`,
/// `<ms>_<n>_...`). Callers that store from several threads but must number
/// blocks in the order they were handed over (as the SDK does, synchronously)
/// take the number first with [`BlobStore::next_sequence`] and store later
/// with [`BlobStore::store_blob`].
pub trait BlobStore: Send + Sync {
    /// Takes the next sequence number of this instance (1, 2, ...).
    fn next_sequence(&self) -> u64;

    /// Stores a blob under a reference built from its sequence number and key
    /// and returns the reference.
    ///
    /// # Errors
    ///
    /// Backend-specific; [`StorageError::Io`] when the content cannot be
    /// written.
    fn store_blob(&self, blob: NewBlob<'_>) -> Result<String, StorageError>;

    /// Stores `content` under a reference derived from `key` and returns the
    /// reference (takes the next sequence number itself).
    ///
    /// # Errors
    ///
    /// As [`BlobStore::store_blob`].
    fn store(&self, key: &str, content: Bytes, content_type: &str) -> Result<String, StorageError> {
        let sequence = self.next_sequence();
        self.store_blob(NewBlob { sequence, key, content, content_type, tags: Tags::default() })
    }

    /// Returns the blob previously stored under `reference`, or
    /// [`StorageError::NotFound`].
    ///
    /// # Errors
    ///
    /// [`StorageError::NotFound`] for unknown or rejected references;
    /// [`StorageError::Io`] when an existing blob cannot be read.
    fn retrieve(&self, reference: &str) -> Result<Blob, StorageError>;
}

/// Expiry, sessions, byte budgets, deduplication and cleanup of stored
/// artifacts (see [`lifecycle`]); the same behaviour on every backend.
pub trait Lifecycle: BlobStore {
    /// The store's policy (everything off by default).
    fn policy(&self) -> Policy;

    /// Replaces the store's policy. A lower budget takes effect at the next
    /// store.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidArgument`] for a zero byte budget.
    fn set_policy(&self, policy: Policy) -> Result<(), StorageError>;

    /// [`BlobStore::retrieve`] at time `now_ms`: an artifact whose TTL ran
    /// out by then is [`StorageError::Gone`] (and removed), before any sweep.
    ///
    /// # Errors
    ///
    /// As [`BlobStore::retrieve`], plus [`StorageError::Gone`].
    fn retrieve_at(&self, reference: &str, now_ms: u64) -> Result<Blob, StorageError>;

    /// Whether `reference` names a live artifact at `now_ms`: stored, not
    /// expired and not removed, so that a retrieve at that time would find
    /// it. A cheap check: no content is read, it is not a use (the byte
    /// budget's order is left as it is), and an expired artifact is only
    /// reported (`false`), not removed. The default implementation
    /// retrieves the artifact.
    ///
    /// # Errors
    ///
    /// Backend I/O errors other than the reference naming nothing.
    fn holds(&self, reference: &str, now_ms: u64) -> Result<bool, StorageError> {
        match self.retrieve_at(reference, now_ms) {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Removes every artifact expired at `now_ms`; returns how many.
    ///
    /// # Errors
    ///
    /// Backend I/O errors (what was removed before the error stays removed).
    fn cleanup_expired(&self, now_ms: u64) -> Result<usize, StorageError>;

    /// Removes every artifact of `session`; returns how many.
    ///
    /// # Errors
    ///
    /// Backend I/O errors (what was removed before the error stays removed).
    fn delete_session(&self, session: &str) -> Result<usize, StorageError>;

    /// What the store holds at `now_ms` (expired artifacts not counted).
    ///
    /// # Errors
    ///
    /// Backend I/O errors.
    fn stats(&self, now_ms: u64) -> Result<Stats, StorageError>;

    /// Every artifact the store holds, expired ones included, oldest first
    /// (see [`lifecycle::sort_artifacts`]). Nothing is removed, not even
    /// what expired.
    ///
    /// # Errors
    ///
    /// Backend I/O errors.
    fn list_artifacts(&self) -> Result<Vec<ArtifactInfo>, StorageError>;

    /// Removes the artifacts named (each an [`ArtifactInfo::name`]); names
    /// of nothing the store holds are skipped. With `only_expired_at`, an
    /// artifact goes only if it is expired at that time by what the store
    /// knows when it removes it (a listing's expiry is checked again, never
    /// trusted). Returns how many this call removed.
    ///
    /// # Errors
    ///
    /// Backend I/O errors (what was removed before the error stays removed).
    fn remove_artifacts(&self, names: &[String], only_expired_at: Option<u64>) -> Result<usize, StorageError>;
}

/// Refuses content of `len` bytes that is larger than the policy's whole budget.
///
/// # Errors
///
/// [`StorageError::TooLarge`].
pub fn check_fits(policy: &Policy, len: u64) -> Result<(), StorageError> {
    match policy.max_bytes {
        Some(max_bytes) if len > max_bytes => Err(StorageError::TooLarge { bytes: len, max_bytes }),
        _ => Ok(()),
    }
}

/// Checks a policy: a byte budget must be positive.
///
/// # Errors
///
/// [`StorageError::InvalidArgument`] for `max_bytes: Some(0)`.
pub fn check_policy(policy: &Policy) -> Result<(), StorageError> {
    if policy.max_bytes == Some(0) {
        return Err(StorageError::InvalidArgument("maxBytes must be a positive number of bytes".to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_thread_safe_and_the_trait_is_object_safe() {
        assert_send_sync::<MemoryStore>();
        assert_send_sync::<FileStore>();
        assert_send_sync::<StorageError>();
        assert_send_sync::<Blob>();
        let stores: Vec<Box<dyn BlobStore>> = vec![Box::new(MemoryStore::default())];
        let r = stores[0]
            .store("k", Bytes::from_static(b"v"), "text/plain")
            .unwrap();
        assert_eq!(
            stores[0].retrieve(&r).unwrap().content,
            Bytes::from_static(b"v")
        );
    }
}
