//! Crash-safe file writes, shared by the artifact store (`offload-storage`)
//! and the session snapshot files (`offload-sessions`).
//!
//! Every write takes one path. The content goes to a file that has no final
//! name yet (a hidden temporary file in the target's directory, or on Linux
//! an unnamed `O_TMPFILE` inode), is fsynced when the caller asks for
//! durability, and is then published under its final name:
//!
//! * [`TempFile::replace`] renames it over the target: readers, and a process
//!   restarted after a crash, see the old content or the new one, never a mix.
//! * [`Staged::publish_new`] links it under the target, which fails instead of
//!   replacing an existing file: for names that several writers (threads,
//!   instances, processes) may race for.
//!
//! Temporary names follow a [`TempNames`] scheme chosen by the caller, so that
//! its listings skip in-flight writes and [`sweep_stale`] removes what a
//! crashed writer left behind without touching anything else.
//!
//! ```
//! use offload_atomic::{TempFile, TempNames};
//!
//! const TEMPS: TempNames = TempNames::around_target(".", ".", ".tmp");
//! let dir = tempfile::tempdir().unwrap();
//! let target = dir.path().join("state.json");
//! TempFile::beside(&target, &TEMPS, b"{}", false).unwrap().replace(&target, false).unwrap();
//! assert_eq!(std::fs::read(&target).unwrap(), b"{}");
//! ```

#![warn(missing_docs)]

mod error;
mod names;
mod publish;
mod staged;
mod sweep;

pub use error::{Error, Step};
pub use names::TempNames;
pub use publish::sync_dir;
pub use staged::{Staged, TempFile};
pub use sweep::{sweep_stale, STALE_AFTER};
