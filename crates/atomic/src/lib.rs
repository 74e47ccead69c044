//! Capability-style, crash-safe file access, shared by the artifact store
//! (`offload-storage`) and the session snapshot files (`offload-sessions`).
//!
//! A [`Dir`] is opened once; every later operation names one entry of an
//! open directory and never follows a symbolic link, so a process that swaps
//! a directory for a link between a check and a use cannot redirect a read
//! or a write outside the store.
//!
//! Every write takes one path. The content goes to a file that has no final
//! name yet (a hidden temporary file in the target's directory, or on Linux
//! an unnamed `O_TMPFILE` inode), is fsynced when the caller asks for
//! durability, and is then published under its final name:
//!
//! * [`Dir::replace`] renames it over the target: readers, and a process
//!   restarted after a crash, see the old content or the new one, never a mix.
//! * [`Staged::publish_new`] links it under the target, which fails instead of
//!   replacing an existing file: for names that several writers (threads,
//!   instances, processes) may race for.
//!
//! Temporary names follow a [`TempNames`] scheme chosen by the caller, so that
//! its listings skip in-flight writes and [`Dir::sweep_stale`] removes what a
//! crashed writer left behind without touching anything else. With
//! durability asked for, every directory created on the way is flushed into
//! its parent too.
//!
//! ```
//! use offload_atomic::{Dir, Found, TempNames};
//!
//! const TEMPS: TempNames = TempNames::around_target(".", ".", ".tmp");
//! let tmp = tempfile::tempdir().unwrap();
//! let root = Dir::open(tmp.path(), true, false).unwrap();
//! let sub = root.subdir(["a", "b"], Some(false)).unwrap().unwrap();
//! sub.replace("state.json", b"{}", &TEMPS, false).unwrap();
//! assert_eq!(sub.read_file("state.json").unwrap(), Found::File(b"{}".to_vec()));
//! ```

#![warn(missing_docs)]

mod dir;
mod error;
mod mapped;
mod names;
mod staged;
mod stamp;

use std::time::Duration;

#[cfg(unix)]
pub use dir::file_identity;
pub use dir::{is_not_a_directory, Dir, Entry, EntryKind, Found};
pub use error::{Error, Step};
pub use mapped::{Mapped, MappedFound};
pub use names::TempNames;
pub use staged::Staged;
pub use stamp::{FileStamp, StampedFound, SETTLE_COARSE, SETTLE_FINE};

/// Age after which a temporary file is taken for a crashed writer's: no write
/// takes an hour between creating its file and publishing it.
pub const STALE_AFTER: Duration = Duration::from_secs(60 * 60);
