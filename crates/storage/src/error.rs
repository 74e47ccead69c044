//! Error type shared by every storage backend.

use std::io;
use std::path::PathBuf;

/// Errors returned by [`BlobStore`](crate::BlobStore) implementations.
///
/// The enum is `non_exhaustive` so that further backends (for example S3) can
/// add variants without breaking callers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The reference does not name a stored artifact, or it was rejected
    /// because it points outside the store (path escapes, symlinks, hidden
    /// files, non-regular files, ...). The message matches the SDK's.
    #[error("Reference not found: {reference}")]
    NotFound {
        /// The reference exactly as the caller passed it.
        reference: String,
    },

    /// The reference named an artifact that is gone for a reason the store
    /// remembers (its TTL ran out, or it was evicted to stay under the byte
    /// budget).
    #[error("Reference not found ({reason}): {reference}")]
    Gone {
        /// The reference exactly as the caller passed it.
        reference: String,
        /// Why it is gone.
        reason: crate::GoneReason,
    },

    /// An artifact larger than the store's whole byte budget.
    #[error("cannot store {bytes} bytes: larger than the storage's maxBytes ({max_bytes})")]
    TooLarge {
        /// Size of the refused content.
        bytes: u64,
        /// The store's budget.
        max_bytes: u64,
    },

    /// An operating-system I/O error (disk full, permission denied, ...).
    #[error("failed to {op} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. `"write artifact"`.
        op: &'static str,
        /// The file or directory the operation was applied to.
        path: PathBuf,
        /// The underlying OS error.
        #[source]
        source: io::Error,
    },

    /// A caller-supplied argument is unusable (for example an eviction window
    /// of zero cycles, or an artifact directory containing a NUL byte).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A unified-storage key or prefix was rejected by
    /// [`normalize_key`](crate::normalize_key) (or names a file reserved for
    /// offloaded artifacts). The message matches the SDK's `StorageError`.
    #[error("{0}")]
    InvalidKey(String),

    /// A unified-storage operation failed; the message is the SDK's (for
    /// example `Failed to write 'a/b' to local storage`), the cause is kept
    /// as the source.
    #[error("{message}")]
    KeyValue {
        /// The SDK's message for the failed operation.
        message: String,
        /// The underlying OS error.
        #[source]
        source: io::Error,
    },
}

impl StorageError {
    /// Builds a [`StorageError::NotFound`] for `reference`.
    pub fn not_found(reference: impl Into<String>) -> Self {
        StorageError::NotFound {
            reference: reference.into(),
        }
    }

    /// Builds a [`StorageError::Io`] for operation `op` on `path`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        StorageError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Builds a [`StorageError::Gone`] for `reference`.
    pub fn gone(reference: impl Into<String>, reason: crate::GoneReason) -> Self {
        StorageError::Gone {
            reference: reference.into(),
            reason,
        }
    }

    /// Returns `true` for [`StorageError::NotFound`] and [`StorageError::Gone`]:
    /// the reference names no artifact.
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(self, StorageError::NotFound { .. } | StorageError::Gone { .. })
    }
}
