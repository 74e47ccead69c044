//! Errors of the snapshot store.

use std::io;
use std::path::PathBuf;

/// Errors returned by [`SnapshotDir`](crate::SnapshotDir).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// An identifier, scope or snapshot id was rejected; the message is the
    /// SDK's for the same input.
    #[error("{0}")]
    Invalid(String),

    /// An operating-system I/O error.
    #[error("failed to {op} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. `"write snapshot"`.
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying OS error.
        #[source]
        source: io::Error,
    },
}

impl SnapshotError {
    /// Builds a [`SnapshotError::Io`].
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        SnapshotError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
