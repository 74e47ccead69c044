//! File storage for agent session snapshots.
//!
//! The native counterpart of the session `FileStorage` of `@strands-agents/sdk`
//! (a `SnapshotStorage`): the same directory layout and file names, so a
//! session written by either one can be read by the other, with writes that a
//! crash can never leave half-done.
//!
//! ```text
//! <base dir>/<session id>/scopes/<scope>/<scope id>/snapshots/
//!   snapshot_latest.json
//!   manifest.json
//!   immutable_history/
//!     snapshot_<uuid v7>.json
//! ```
//!
//! The crate moves bytes only; JSON encoding stays with the caller.
//!
//! * [`validate`]: the SDK's identifier, scope and UUID v7 checks.
//! * [`SnapshotLocation`] and [`SnapshotFile`]: where a file lives.
//! * [`SnapshotDir`]: atomic writes, reads, listing and session deletion.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod dir;
mod error;
mod layout;
pub mod validate;

pub use dir::SnapshotDir;
pub use error::SnapshotError;
pub use layout::{snapshot_id_of, Scope, SnapshotFile, SnapshotLocation, IMMUTABLE_HISTORY, MANIFEST, SNAPSHOT_LATEST};
