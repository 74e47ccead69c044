//! The retrieval search of a stored artifact, through a [`PreparedCache`].
//!
//! Every search retrieves the artifact from its store first, with every
//! check a retrieve makes (reference resolution, expiry, the byte budget's
//! record of use); only what a retrieve would then hand over is taken from
//! the cache:
//!
//! * **Memory stores** hand over their shared [`Bytes`] (no copy); the entry
//!   is found by store and reference and must hold the very same bytes
//!   ([`Version::Shared`]), so a reference deleted and stored again, or
//!   replaced, never finds the old text. Validation and indexing are skipped.
//! * **File stores** open the artifact's file and stamp it ([`FileStamp`]:
//!   device, inode, size, modification and status-change times) before
//!   reading it; an entry for that name and stamp spares the read as well.
//!   A file replaced, rewritten or deleted by anyone gets another stamp
//!   (or fails the retrieve). Files changed too recently for a change in
//!   the same timestamp tick to be told apart are searched but not cached
//!   (see [`FileStamp::is_settled`]).
//!
//! The stores' removal hooks ([`PreparedCache::removal_hook`]) drop the
//! entries of what they delete, evict, expire or clear.

use std::sync::Arc;

use offload_storage::{FileStamp, FileStore, Lifecycle, MemoryStore, StorageError};

use crate::decode::{decode_text, without_bom};
use crate::error::SearchError;
use crate::prepared::PreparedText;
use crate::artifact_cache::Version;
use crate::prepared_cache::PreparedCache;
use crate::lines::LineIndex;
use crate::search::{run_retrieval_query, run_retrieval_query_indexed, RetrievalQuery};

/// What a search of a stored artifact found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSearch {
    /// The artifact's content type.
    pub content_type: String,
    /// The search's answer or error; `None` when the content type is not
    /// searchable (binary content).
    pub result: Option<Result<String, SearchError>>,
}

/// Searches `content` of type `content_type` without any cache: decoded
/// and indexed for this one query.
#[must_use]
pub fn search_uncached(
    content: &[u8],
    content_type: String,
    query: &RetrievalQuery<'_>,
    max_chars: usize,
) -> StoredSearch {
    if !crate::is_searchable_content(&content_type) {
        return StoredSearch {
            content_type,
            result: None,
        };
    }
    StoredSearch {
        content_type,
        result: Some(search_text_uncached(content, query, max_chars)),
    }
}

/// Searches `content` as text without any cache (see [`search_uncached`]).
pub(crate) fn search_text_uncached(content: &[u8], query: &RetrievalQuery<'_>, max_chars: usize) -> Result<String, SearchError> {
    // Valid UTF-8 is checked and its lines sampled in one pass; anything
    // else is decoded and indexed whole. Both answer alike.
    match LineIndex::sampled(without_bom(content)) {
        Some(lines) => run_retrieval_query_indexed(&lines, query, max_chars),
        None => run_retrieval_query(&decode_text(content), query, max_chars),
    }
}

/// Searches artifact `reference` of a memory store as retrieved at `now_ms`.
///
/// # Errors
///
/// What [`Lifecycle::retrieve_at`] reports (unknown, expired, evicted).
pub fn search_memory(
    cache: &PreparedCache,
    store: &MemoryStore,
    reference: &str,
    now_ms: u64,
    query: &RetrievalQuery<'_>,
    max_chars: usize,
) -> Result<StoredSearch, StorageError> {
    let blob = store.retrieve_at(reference, now_ms)?;
    if cache.budget() == 0 || !crate::is_searchable_content(&blob.content_type) {
        return Ok(search_uncached(
            &blob.content,
            blob.content_type,
            query,
            max_chars,
        ));
    }
    let version = Version::Shared(blob.content.clone());
    let text = match cache.get(store.id(), reference, &version) {
        Some(text) => text,
        None => {
            let text = Arc::new(PreparedText::new(&blob.content));
            let owned = if text.shares_content() {
                0
            } else {
                text.text_bytes()
            };
            cache.insert(
                store.id(),
                reference,
                version,
                Arc::clone(&text),
                owned + text.index_bytes(),
            );
            // Removed between the retrieve and the insert: the removal hook
            // came too early to drop the entry, so it goes now.
            if !store.holds(reference, &blob.content) {
                cache.forget(store.id(), reference);
            }
            text
        }
    };
    Ok(StoredSearch {
        content_type: blob.content_type,
        result: Some(text.run(query, max_chars)),
    })
}

/// Searches artifact `reference` of a file store as retrieved at `now_ms`;
/// the file is not read when the cache holds its current version.
///
/// # Errors
///
/// What [`Lifecycle::retrieve_at`] reports (unknown, expired, evicted, I/O).
pub fn search_file(
    cache: &PreparedCache,
    store: &FileStore,
    reference: &str,
    now_ms: u64,
    query: &RetrievalQuery<'_>,
    max_chars: usize,
) -> Result<StoredSearch, StorageError> {
    if cache.budget() == 0 {
        let blob = store.retrieve_at(reference, now_ms)?;
        return Ok(search_uncached(
            &blob.content,
            blob.content_type,
            query,
            max_chars,
        ));
    }
    let mut held = None;
    let found = store.retrieve_stamped_at(reference, now_ms, |name, stamp| {
        held = cache.get(store.id(), name, &Version::File(*stamp));
        held.is_some()
    })?;
    if !crate::is_searchable_content(&found.content_type) {
        return Ok(StoredSearch {
            content_type: found.content_type,
            result: None,
        });
    }
    let text = match held {
        Some(text) => text,
        None => {
            let content = found.content.unwrap_or_default();
            let text = Arc::new(PreparedText::new(&content));
            if let (Some(stamp), true) = (found.stamp, found.settled) {
                remember_file(cache, store, &found.name, stamp, &text, content.len());
            }
            text
        }
    };
    Ok(StoredSearch {
        content_type: found.content_type,
        result: Some(text.run(query, max_chars)),
    })
}

/// Searches artifact `reference` of a file store once, with its file
/// mapped rather than read (see [`FileStore::retrieve_mapped_at`]) and
/// nothing cached: no process memory holds the content. The answer is the
/// one [`search_file`] gives.
///
/// # Errors
///
/// What [`Lifecycle::retrieve_at`] reports (unknown, expired, evicted, I/O).
pub fn search_file_once(
    store: &FileStore,
    reference: &str,
    now_ms: u64,
    query: &RetrievalQuery<'_>,
    max_chars: usize,
) -> Result<StoredSearch, StorageError> {
    let blob = store.retrieve_mapped_at(reference, now_ms)?;
    Ok(search_uncached(
        &blob.content,
        blob.content_type,
        query,
        max_chars,
    ))
}

/// Keeps a file's prepared text, charged all it holds: the bytes read (or
/// the decoded copy) and the index.
fn remember_file(
    cache: &PreparedCache,
    store: &FileStore,
    name: &str,
    stamp: FileStamp,
    text: &Arc<PreparedText>,
    read: usize,
) {
    let owned = if text.shares_content() {
        read
    } else {
        text.text_bytes()
    };
    cache.insert(
        store.id(),
        name,
        Version::File(stamp),
        Arc::clone(text),
        owned + text.index_bytes(),
    );
}
