//! The error of a failed write, naming the step and the file.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// The step of a write that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Creating the temporary (or unnamed) file.
    CreateTemp,
    /// Writing or fsyncing its content.
    Write,
    /// Giving it its final name (rename or link).
    Publish,
    /// Flushing a directory's entries to stable storage.
    SyncDirectory,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::CreateTemp => "create temporary file",
            Step::Write => "write",
            Step::Publish => "publish",
            Step::SyncDirectory => "sync directory",
        })
    }
}

/// A failed write: what was being done, to which path, and the OS error.
#[derive(Debug, thiserror::Error)]
#[error("failed to {step} {}: {source}", path.display())]
pub struct Error {
    /// The step that failed.
    pub step: Step,
    /// The file or directory it was applied to.
    pub path: PathBuf,
    /// The underlying OS error.
    #[source]
    pub source: io::Error,
}

impl Error {
    pub(crate) fn new(step: Step, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self {
            step,
            path: path.into(),
            source,
        }
    }

    /// The kind of the underlying OS error.
    #[must_use]
    pub fn kind(&self) -> io::ErrorKind {
        self.source.kind()
    }
}
