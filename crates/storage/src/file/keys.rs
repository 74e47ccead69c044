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
//! (`<ms>_<n>_<key><ext>`, `.metadata.journal`, `.metadata.json`, `.tmp-*`).
//! Keys whose first segment has one of these forms are reserved for the
//! artifact API: `write`, `read` and `delete` reject them with
//! [`StorageError::InvalidKey`], and `list` skips such entries at the top
//! level. So `list("")` never reports artifacts, a `write` can never replace
//! an artifact, and an artifact (published with a link that never replaces
//! anything) can never replace a value.
//!
//! # Confinement
//!
//! Keys cannot leave the directory: `..` segments and backslashes are
//! rejected by [`normalize_key`], and no operation goes through a symbolic
//! link below the directory (a key through a link reads as missing, cannot
//! be written, and `list` does not follow links). Values are published by
//! writing a temporary file beside the target and renaming it over the
//! target, so readers see the old or the new content, never a mix.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use offload_atomic::{TempFile, TempNames};

use super::journal::{JOURNAL_FILE, METADATA_FILE};
use super::read::{read_regular_file, ReadFailure};
use super::{FileStore, TEMP_PREFIX};
use crate::kv::{normalize_key, normalize_prefix, sort_js};
use crate::{KeyValueStore, StorageError};

/// What the SDK's `LocalFileStorage` skips when listing (its temporary files).
const SDK_TEMP_MARKER: &str = ".__strands_tmp";

/// Names of the temporary files of values: `<name>.__strands_tmp_<pid>-<seq>`
/// beside the target, which the SDK's `LocalFileStorage` skips as it skips
/// its own, and ours skips by [`SDK_TEMP_MARKER`].
const VALUE_TEMPS: TempNames = TempNames::around_target("", ".__strands_tmp_", "");

/// Whether a top-level name belongs to the artifact API: the journal, the
/// SDK's metadata file, staging files and artifact names
/// (`<digits>_<digits>_...`).
pub(crate) fn is_reserved_name(name: &str) -> bool {
    if name == JOURNAL_FILE || name == METADATA_FILE || name.starts_with(TEMP_PREFIX) {
        return true;
    }
    let mut parts = name.splitn(3, '_');
    let numeric =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    numeric(parts.next()) && numeric(parts.next()) && parts.next().is_some()
}

/// Whether any directory on the way from `base` to the last segment of
/// `key` is a symbolic link (missing directories are not).
fn passes_through_link(base: &Path, key: &str) -> bool {
    let mut path = base.to_path_buf();
    let mut segments = key.split('/').peekable();
    while let Some(segment) = segments.next() {
        if segments.peek().is_none() {
            return false;
        }
        path.push(segment);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

/// Whether an error means "no such file" (ENOENT or ENOTDIR, as the SDK).
fn is_missing(e: &io::Error) -> bool {
    if e.kind() == io::ErrorKind::NotFound {
        return true;
    }
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ENOTDIR)
    }
    #[cfg(not(unix))]
    {
        false
    }
}

fn failure(message: String, source: io::Error) -> StorageError {
    StorageError::KeyValue { message, source }
}

/// Where a scoped operation works: the directory of the scope (keys are
/// relative to it) and the scope as a key prefix (`""` or ending in `/`).
struct Scope {
    base: PathBuf,
    prefix: String,
    /// A directory of the scope is a symbolic link: nothing is reachable.
    through_link: bool,
}

impl FileStore {
    /// The directory keys are stored under (relative paths resolve against
    /// the working directory at each use).
    fn key_root(&self) -> Result<PathBuf, StorageError> {
        let dir = self.artifact_dir();
        if dir.is_empty() || dir.contains('\0') {
            return Err(StorageError::InvalidArgument(format!(
                "artifact directory must be a non-empty path without NUL bytes: {dir:?}"
            )));
        }
        Ok(PathBuf::from(dir))
    }

    /// Resolves a scope (a namespace prefix, normalised as a list prefix).
    fn scope(&self, scope: &str) -> Result<Scope, StorageError> {
        let root = self.key_root()?;
        let scope = normalize_prefix(scope)?;
        let scope = scope.trim_end_matches('/');
        if scope.is_empty() {
            return Ok(Scope {
                base: root,
                prefix: String::new(),
                through_link: false,
            });
        }
        Ok(Scope {
            base: root.join(scope),
            prefix: format!("{scope}/"),
            through_link: passes_through_link(&root, &format!("{scope}/x")),
        })
    }

    /// Validates `key` inside `scope`; returns the scope and the normalised
    /// key relative to it.
    fn scoped_key(&self, scope: &str, key: &str) -> Result<(Scope, String), StorageError> {
        let key = normalize_key(key)?;
        let scope = self.scope(scope)?;
        let first = if scope.prefix.is_empty() {
            key.as_str()
        } else {
            scope.prefix.as_str()
        };
        if is_reserved_name(first.split('/').next().unwrap_or(first)) {
            return Err(StorageError::InvalidKey(format!(
                "Invalid storage key '{key}': reserved for offloaded artifacts"
            )));
        }
        Ok((scope, key))
    }

    fn write_value(&self, scope: &Scope, key: &str, data: &[u8]) -> io::Result<()> {
        if scope.through_link || passes_through_link(&scope.base, key) {
            return Err(io::Error::other(
                "a directory of the key is a symbolic link",
            ));
        }
        // `.` segments name the directory they are in (the file system resolves
        // them, as for the SDK); they are left out of the directories to create.
        let mut parent = scope.base.clone();
        if let Some(idx) = key.rfind('/') {
            parent.extend(key[..idx].split('/').filter(|s| *s != "."));
        }
        fs::create_dir_all(&parent)?;
        let target = scope.base.join(key);
        TempFile::beside(&target, &VALUE_TEMPS, data, self.is_durable())
            .and_then(|temp| temp.replace(&target, self.is_durable()))
            .map_err(|e| e.source)
    }

    /// Lists every regular file under `start` (whose key is `start_key`),
    /// without following links; `top` skips the artifact API's names at the
    /// top level.
    fn walk(
        &self,
        start: PathBuf,
        start_key: String,
        top: bool,
    ) -> Result<Vec<String>, StorageError> {
        let mut found = Vec::new();
        let mut pending = vec![(start, start_key)];
        while let Some((dir, dir_key)) = pending.pop() {
            let list_failure =
                |e| failure(format!("Failed to list local storage under '{dir_key}'"), e);
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(list_failure(e)),
            };
            for entry in entries {
                let entry = entry.map_err(list_failure)?;
                let Ok(name) = entry.file_name().into_string() else {
                    continue;
                };
                if top && dir_key.is_empty() && is_reserved_name(&name) {
                    continue;
                }
                let Ok(file_type) = entry.file_type() else {
                    continue;
                };
                let key = if dir_key.is_empty() {
                    name.clone()
                } else {
                    format!("{dir_key}/{name}")
                };
                if file_type.is_dir() {
                    pending.push((entry.path(), key));
                } else if file_type.is_file() && !name.contains(SDK_TEMP_MARKER) {
                    found.push(key);
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
        self.write_value(&scope, &key, data)
            .map_err(|e| failure(format!("Failed to write '{key}' to local storage"), e))
    }

    /// [`KeyValueStore::read`] inside the namespace `scope`.
    ///
    /// # Errors
    ///
    /// As [`KeyValueStore::read`].
    pub fn read_in(&self, scope: &str, key: &str) -> Result<Option<Bytes>, StorageError> {
        let (scope, key) = self.scoped_key(scope, key)?;
        if scope.through_link || passes_through_link(&scope.base, &key) {
            return Ok(None);
        }
        let path = scope.base.join(&key);
        let read_failure = |e| failure(format!("Failed to read '{key}' from local storage"), e);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(read_failure(io::Error::other(
                    "illegal operation on a directory, read",
                )))
            }
            Ok(_) => {}
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) => return Err(read_failure(e)),
        }
        match read_regular_file(&path) {
            Ok(content) => Ok(Some(Bytes::from(content))),
            Err(ReadFailure::NotFound) => Ok(None),
            Err(ReadFailure::Io(e)) => Err(read_failure(e)),
        }
    }

    /// [`KeyValueStore::delete`] inside the namespace `scope`.
    ///
    /// # Errors
    ///
    /// As [`KeyValueStore::delete`].
    pub fn delete_in(&self, scope: &str, key: &str) -> Result<bool, StorageError> {
        let (scope, key) = self.scoped_key(scope, key)?;
        if scope.through_link || passes_through_link(&scope.base, &key) {
            return Ok(false);
        }
        // Only a missing file is a no-op (the SDK's `rm` with `force`); a file
        // in place of a directory of the key is an error, as there.
        match fs::remove_file(scope.base.join(&key)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(failure(
                format!("Failed to delete '{key}' from local storage"),
                e,
            )),
        }
    }

    /// [`KeyValueStore::list`] inside the namespace `scope` (keys relative to it).
    ///
    /// # Errors
    ///
    /// As [`KeyValueStore::list`].
    pub fn list_in(&self, scope: &str, prefix: &str) -> Result<Vec<String>, StorageError> {
        let prefix = normalize_prefix(prefix)?;
        let scope = self.scope(scope)?;
        if scope.through_link {
            return Ok(Vec::new());
        }
        let top = scope.prefix.is_empty();
        // Walk only the deepest directory the prefix fully names, as the SDK.
        let dir_portion = prefix.rfind('/').map_or("", |idx| &prefix[..idx]);
        let mut keys = if dir_portion.is_empty() {
            self.walk(scope.base, String::new(), top)?
        } else if passes_through_link(&scope.base, &format!("{dir_portion}/x")) {
            Vec::new()
        } else {
            self.walk(scope.base.join(dir_portion), dir_portion.to_owned(), top)?
        };
        keys.retain(|k| k.starts_with(&prefix));
        sort_js(&mut keys);
        Ok(keys)
    }
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
            ".tmp-12-3",
            "1700000000000_1_tool_0.txt",
            "1_2_",
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
