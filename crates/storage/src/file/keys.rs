//! The unified key-value API of [`FileStore`], laid out on disk exactly as
//! the SDK's `LocalFileStorage` lays it out.
//!
//! # Layout
//!
//! A normalised key `a/b/c` is the file `<dir>/a/b/c`: `/` separates
//! directories, which are created on write and never removed. A directory
//! written by the SDK's `LocalFileStorage` reads in ours and vice versa.
//!
//! # Keys and artifacts in one directory
//!
//! The offloader's artifacts live flat in the same directory
//! (`<ms>_<n>_<key><ext>`, `.metadata.journal`, `.metadata.json`, `.metadata.lock`, `.blobs`, `.tmp-*`).
//! Keys whose first segment has one of these forms are reserved for the
//! artifact API: `write`, `read` and `delete` reject them with
//! [`StorageError::InvalidKey`], and `list` skips such entries at the top
//! level. So `list("")` never reports artifacts, a `write` can never replace
//! an artifact, and an artifact (published with a link that never replaces
//! anything) can never replace a value.
//!
//! # Confinement
//!
//! Keys cannot leave the directory: [`normalize_key`] admits only plain
//! names that mean the same on every platform (no `..`, backslashes, drive
//! letters or device names), and every operation works on an open handle of
//! the directory ([`offload_atomic::Dir`]), descending one name at a time
//! without following symbolic links: a key through a link reads as missing,
//! cannot be written, and `list` does not follow links, even when a link is
//! swapped in while the operation runs. Values are published by writing a
//! temporary file beside the target and renaming it over the target, so
//! readers see the old or the new content, never a mix.

use std::io;
use std::path::Path;

use bytes::Bytes;
use offload_atomic::{is_not_a_directory, Dir, EntryKind, Found, TempNames};

use super::journal::{JOURNAL_FILE, LOCK_FILE, METADATA_FILE};
use super::lifecycle::BLOBS_DIR;
use super::names::has_artifact_shape;
use super::{FileStore, TEMP_PREFIX};
use crate::kv::{artifact_key_error, normalize_key, normalize_prefix, sort_js, TEMP_MARKER};
use crate::{KeyValueStore, StorageError};

/// Names of the temporary files of values: `<name>.__strands_tmp_<pid>-<seq>`
/// beside the target, which the SDK's `LocalFileStorage` skips as it skips
/// its own, and ours skips by [`TEMP_MARKER`].
const VALUE_TEMPS: TempNames = TempNames::around_target("", ".__strands_tmp_", "");

/// Whether a top-level name belongs to the artifact API: the journal, the
/// SDK's metadata file, the budget's lock file, staging files and artifact names
/// (`<digits>_<digits>_...`), compared case-insensitively (on macOS and
/// Windows `.METADATA.JOURNAL` is the journal).
pub(crate) fn is_reserved_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == JOURNAL_FILE
        || lower == METADATA_FILE
        || lower == LOCK_FILE
        || lower == BLOBS_DIR
        || lower.starts_with(TEMP_PREFIX)
        || has_artifact_shape(name)
}

fn failure(message: String, source: io::Error) -> StorageError {
    StorageError::KeyValue { message, source }
}

/// The segments of a normalised scope (`""` or `a/b/`) or key (`a/b/c`).
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|s| !s.is_empty())
}

/// A key split into its directories and its file name.
fn split_key(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}

impl FileStore {
    /// The directory keys are stored under, opened (relative paths resolve
    /// against the working directory at each use, as in the SDK); `None`
    /// when it does not exist and `create` is not set.
    fn key_root(&self, create: bool) -> Result<Option<Dir>, io::Error> {
        let dir = self.artifact_dir();
        if dir.is_empty() || dir.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("artifact directory must be a non-empty path without NUL bytes: {dir:?}"),
            ));
        }
        match Dir::open(Path::new(dir), create, self.is_durable()) {
            Ok(root) => Ok(Some(root)),
            Err(e) if !create && e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The directory `<root>/<scope>/<dirs>` (each name opened without
    /// following a link; created when `create`), `None` when missing.
    fn open_dir(&self, scope: &str, dirs: &str, create: bool) -> io::Result<Option<Dir>> {
        let Some(root) = self.key_root(create)? else {
            return Ok(None);
        };
        let durable = self.is_durable();
        root.subdir(segments(scope).chain(segments(dirs)), create.then_some(durable))
    }

    /// Validates `key` inside `scope` (a namespace prefix); returns the
    /// normalised scope (`""` or ending in `/`) and key relative to it.
    fn scoped_key(&self, scope: &str, key: &str) -> Result<(String, String), StorageError> {
        let key = normalize_key(key)?;
        let scope = scope_of(scope)?;
        let first = if scope.is_empty() { key.as_str() } else { scope.as_str() };
        if is_reserved_name(first.split('/').next().unwrap_or(first)) {
            return Err(artifact_key_error(&key));
        }
        Ok((scope, key))
    }

    /// Lists every regular file under `start` (whose key is `start_key`),
    /// never through a link; `top` skips the artifact API's names at the
    /// top level.
    fn walk(&self, start: Dir, start_key: String, top: bool) -> Result<Vec<String>, StorageError> {
        let mut found = Vec::new();
        let mut pending = vec![(start, start_key)];
        while let Some((dir, dir_key)) = pending.pop() {
            let list_failure = |e| failure(format!("Failed to list local storage under '{dir_key}'"), e);
            let entries = match dir.entries() {
                Ok(entries) => entries,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(list_failure(e)),
            };
            for entry in entries {
                let name = entry.name;
                if top && dir_key.is_empty() && is_reserved_name(&name) {
                    continue;
                }
                let key = if dir_key.is_empty() { name.clone() } else { format!("{dir_key}/{name}") };
                match entry.kind {
                    EntryKind::Directory => {
                        if let Some(sub) = dir.subdir([name.as_str()], None).map_err(list_failure)? {
                            pending.push((sub, key));
                        }
                    }
                    EntryKind::File if !name.contains(TEMP_MARKER) => found.push(key),
                    _ => {}
                }
            }
        }
        Ok(found)
    }

    /// [`KeyValueStore::write`] inside the namespace `scope` (as the SDK's
    /// `LocalFileStorage.namespace(scope)`: keys and messages are relative
    /// to it). `scope` is normalised as a list prefix; `""` is the root.
    ///
    /// # Errors
    ///
    /// As [`KeyValueStore::write`].
    pub fn write_in(&self, scope: &str, key: &str, data: &[u8]) -> Result<(), StorageError> {
        let (scope, key) = self.scoped_key(scope, key)?;
        let (dirs, name) = split_key(&key);
        let write = || {
            self.open_dir(&scope, dirs, true).and_then(|parent| {
                let parent = parent.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
                parent.replace(name, data, &VALUE_TEMPS, self.is_durable()).map_err(|e| e.source)
            })
        };
        // A directory of the key removed between its creation and the write (an
        // empty directory pruned by another caller) is created again, once.
        let written = match write() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => write(),
            other => other,
        };
        written.map_err(|e| failure(format!("Failed to write '{key}' to local storage"), e))
    }

    /// [`KeyValueStore::read`] inside the namespace `scope`.
    ///
    /// # Errors
    ///
    /// As [`KeyValueStore::read`].
    pub fn read_in(&self, scope: &str, key: &str) -> Result<Option<Bytes>, StorageError> {
        let (scope, key) = self.scoped_key(scope, key)?;
        let (dirs, name) = split_key(&key);
        let read_failure = |e| failure(format!("Failed to read '{key}' from local storage"), e);
        // A file in place of a directory of the key reads as missing, as in the SDK.
        let Some(parent) = self.open_dir(&scope, dirs, false).or_else(missing_if_not_a_directory).map_err(read_failure)? else {
            return Ok(None);
        };
        match parent.read_file(name).map_err(read_failure)? {
            Found::File(content) => Ok(Some(Bytes::from(content))),
            Found::Directory => Err(read_failure(io::Error::other("illegal operation on a directory, read"))),
            Found::Absent => Ok(None),
        }
    }

    /// [`KeyValueStore::delete`] inside the namespace `scope`.
    ///
    /// # Errors
    ///
    /// As [`KeyValueStore::delete`].
    pub fn delete_in(&self, scope: &str, key: &str) -> Result<bool, StorageError> {
        let (scope, key) = self.scoped_key(scope, key)?;
        let (dirs, name) = split_key(&key);
        // Only a missing file is a no-op (the SDK's `rm` with `force`); a
        // directory at the key is an error, as there.
        let deleted = self.open_dir(&scope, dirs, false).and_then(|parent| match parent {
            Some(parent) => parent.remove_file(name),
            None => Ok(false),
        });
        deleted.map_err(|e| failure(format!("Failed to delete '{key}' from local storage"), e))
    }

    /// Removes the directory that the list prefix `prefix` names (`a/b/`
    /// names `a/b`) inside the namespace `scope` when it is empty, so that
    /// deleting every key under it leaves no directory behind (its name may
    /// tell what it held). Returns whether it was removed: a directory that
    /// is not empty (a value written meanwhile) stays, and nothing is
    /// followed through a link. The artifact API's names are refused.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a prefix that is not a valid key or
    /// names the artifact API; [`StorageError::KeyValue`] for an OS error.
    pub fn prune_in(&self, scope: &str, prefix: &str) -> Result<bool, StorageError> {
        let trimmed = prefix.trim_end_matches('/');
        if trimmed.is_empty() {
            return Ok(false);
        }
        let (scope, key) = self.scoped_key(scope, trimmed)?;
        let (dirs, name) = split_key(&key);
        let pruned = self.open_dir(&scope, dirs, false).or_else(missing_if_not_a_directory).and_then(|parent| match parent {
            Some(parent) => parent.remove_empty_dir(name),
            None => Ok(false),
        });
        pruned.map_err(|e| failure(format!("Failed to remove the directory '{key}' from local storage"), e))
    }

    /// [`KeyValueStore::list`] inside the namespace `scope` (keys relative to it).
    ///
    /// # Errors
    ///
    /// As [`KeyValueStore::list`].
    pub fn list_in(&self, scope: &str, prefix: &str) -> Result<Vec<String>, StorageError> {
        let prefix = normalize_prefix(prefix)?;
        let scope = scope_of(scope)?;
        // Walk only the deepest directory the prefix fully names, as the SDK.
        let dir_portion = prefix.rfind('/').map_or("", |idx| &prefix[..idx]);
        let list_failure = |e| failure(format!("Failed to list local storage under '{dir_portion}'"), e);
        let Some(start) = self.open_dir(&scope, dir_portion, false).or_else(missing_if_not_a_directory).map_err(list_failure)? else {
            return Ok(Vec::new());
        };
        let mut keys = self.walk(start, dir_portion.to_owned(), scope.is_empty())?;
        keys.retain(|k| k.starts_with(&prefix));
        sort_js(&mut keys);
        Ok(keys)
    }
}

/// `ENOTDIR` (a file where a directory was expected) as "missing".
fn missing_if_not_a_directory(e: io::Error) -> io::Result<Option<Dir>> {
    if is_not_a_directory(&e) {
        Ok(None)
    } else {
        Err(e)
    }
}

/// A namespace prefix normalised as a list prefix, as a directory (`""` or
/// ending in `/`).
fn scope_of(scope: &str) -> Result<String, StorageError> {
    // A scope names directories: every segment is complete.
    let scope = if scope.is_empty() { String::new() } else { normalize_prefix(&format!("{scope}/"))? };
    let scope = scope.trim_end_matches('/');
    Ok(if scope.is_empty() { String::new() } else { format!("{scope}/") })
}

/// The SDK's `LocalFileStorage` on the artifact directory (see the module
/// documentation for the layout and the reserved names).
impl KeyValueStore for FileStore {
    fn write(&self, key: &str, data: Bytes) -> Result<(), StorageError> {
        self.write_in("", key, &data)
    }

    fn read(&self, key: &str) -> Result<Option<Bytes>, StorageError> {
        self.read_in("", key)
    }

    fn delete(&self, key: &str) -> Result<bool, StorageError> {
        self.delete_in("", key)
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        self.list_in("", prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_names_are_the_artifact_apis() {
        for name in [
            ".metadata.json",
            ".metadata.journal",
            ".blobs",
            ".BLOBS",
            ".tmp-12-3",
            "1700000000000_1_tool_0.txt",
            "1_2_",
            ".METADATA.JOURNAL",
            ".Metadata.Json",
            ".TMP-1-2",
            ".metadata.lock",
            ".METADATA.LOCK",
        ] {
            assert!(is_reserved_name(name), "{name}");
        }
        for name in [
            "notes.json",
            "1_2",
            "a_1_b",
            "1__x",
            "_1_2",
            ".metadata",
            "context",
        ] {
            assert!(!is_reserved_name(name), "{name}");
        }
    }
}
