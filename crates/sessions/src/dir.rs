//! [`SnapshotDir`]: the snapshot files of every session under one base directory.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use offload_atomic::{Dir, EntryKind, Found, TempNames};

use crate::layout::{snapshot_id_of, SnapshotFile, SnapshotLocation, IMMUTABLE_HISTORY};
use crate::{validate, SnapshotError};

/// Names of the temporary files of snapshot writes:
/// `.<file name>.<pid>-<seq>.tmp`, hidden and not ending in `.json`, so the
/// SDK's listing (`snapshot_<id>.json$`) never takes them for snapshots.
const SNAPSHOT_TEMPS: TempNames = TempNames::around_target(".", ".", ".tmp");

/// Session snapshots as JSON files under a base directory, in the SDK's layout.
///
/// * Every write goes to a hidden temporary file in the target's directory and
///   is renamed over the target, so a crash at any moment leaves the previous
///   file or the new one, never a torn one.
/// * Writes to the same mutable file (`snapshot_latest.json`,
///   `manifest.json`) land in the order their tickets were taken
///   ([`SnapshotDir::ticket`]): a slower, older write never replaces a newer one.
/// * Identifiers are validated as the SDK validates them, so no path leaves
///   the base directory.
/// * With `durable`, files and directory entries are fsynced before a write
///   returns.
#[derive(Debug)]
pub struct SnapshotDir {
    base: PathBuf,
    durable: bool,
    tickets: AtomicU64,
    /// Tickets taken whose writes have not finished.
    in_flight: Mutex<BTreeSet<u64>>,
    /// Ticket of the last write published per mutable file (pruned when a
    /// write finishes).
    published: Mutex<HashMap<PathBuf, u64>>,
    /// Directories already swept for temporary files of crashed writers
    /// (forgotten past [`SnapshotDir::MAX_TRACKED`], to be swept again: harmless).
    swept: Mutex<HashSet<PathBuf>>,
}

impl SnapshotDir {
    /// Storage rooted at `base` (created on first write).
    pub fn new(base: impl Into<PathBuf>, durable: bool) -> Self {
        Self {
            base: base.into(),
            durable,
            tickets: AtomicU64::new(1),
            in_flight: Mutex::new(BTreeSet::new()),
            published: Mutex::new(HashMap::new()),
            swept: Mutex::new(HashSet::new()),
        }
    }

    /// The base directory.
    #[must_use]
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Full path of a file.
    #[must_use]
    pub fn path_of(&self, location: &SnapshotLocation, file: &SnapshotFile) -> PathBuf {
        file.path_in(&location.snapshots_dir(&self.base))
    }

    /// Takes the ordering ticket of a write about to be handed to a worker.
    pub fn ticket(&self) -> u64 {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        in_flight.insert(ticket);
        ticket
    }

    /// Ends the write of `ticket` and keeps the bookkeeping bounded: once more
    /// than [`SnapshotDir::MAX_TRACKED`] files are recorded, records older than every write
    /// still in flight are dropped (no such write can be overtaken any more).
    fn finish(&self, ticket: u64) {
        let floor = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
            in_flight.remove(&ticket);
            in_flight.first().copied().unwrap_or(u64::MAX)
        };
        let mut published = self.published.lock().unwrap_or_else(PoisonError::into_inner);
        if published.len() > Self::MAX_TRACKED {
            published.retain(|_, last| *last >= floor);
        }
        drop(published);
        let mut swept = self.swept.lock().unwrap_or_else(PoisonError::into_inner);
        if swept.len() > Self::MAX_TRACKED {
            swept.clear();
        }
    }

    /// Records published and directories swept that are kept before pruning.
    pub const MAX_TRACKED: usize = 4096;

    /// How many files have a recorded last write (for tests of the bound).
    #[must_use]
    pub fn tracked(&self) -> usize {
        self.published.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Atomically replaces a file with `content`, unless a write with a later
    /// ticket to the same file has already landed (then this one is dropped:
    /// the newer content stays).
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Io`] when a directory or the file cannot be written.
    pub fn write(
        &self,
        location: &SnapshotLocation,
        file: &SnapshotFile,
        content: &[u8],
        ticket: u64,
    ) -> Result<(), SnapshotError> {
        let written = self.write_ticketed(location, file, content, ticket);
        self.finish(ticket);
        written
    }

    fn write_ticketed(
        &self,
        location: &SnapshotLocation,
        file: &SnapshotFile,
        content: &[u8],
        ticket: u64,
    ) -> Result<(), SnapshotError> {
        let target = self.path_of(location, file);
        let (dirs, name) = file_key(location, file);
        let dir_path = target.parent().unwrap_or(Path::new("."));
        let dir = Dir::open(&self.base, true, self.durable)
            .and_then(|base| base.subdir(dirs.split('/'), Some(self.durable)))
            .and_then(|dir| dir.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
            .map_err(|e| SnapshotError::io("create directory", dir_path, e))?;
        self.sweep_once(&dir);
        let temp = dir.write_temp(&name, content, &SNAPSHOT_TEMPS, self.durable).map_err(write_error)?;
        let publish = |temp: &str| dir.publish_over(temp, &name, self.durable).map_err(write_error);
        if matches!(file, SnapshotFile::History(_)) {
            return publish(&temp);
        }
        let mut published = self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let last = published.get(&target).copied().unwrap_or(0);
        if ticket < last {
            let _ = dir.remove_file(&temp);
            return Ok(());
        }
        publish(&temp)?;
        published.insert(target, ticket);
        Ok(())
    }

    /// The directory of a location's file, `None` when it (or the base) is
    /// missing or is reached through a symbolic link.
    fn existing_dir(&self, dirs: &str) -> io::Result<Option<Dir>> {
        match Dir::open(&self.base, false, false) {
            Ok(base) => base.subdir(dirs.split('/'), None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The file's bytes, or `None` when it does not exist.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Io`] for any other failure (a directory in its place,
    /// permissions, ...).
    pub fn read(
        &self,
        location: &SnapshotLocation,
        file: &SnapshotFile,
    ) -> Result<Option<Vec<u8>>, SnapshotError> {
        let path = self.path_of(location, file);
        let (dirs, name) = file_key(location, file);
        let read_error = |e| SnapshotError::io("read snapshot", &path, e);
        let Some(dir) = self.existing_dir(&dirs).map_err(read_error)? else {
            return Ok(None);
        };
        match dir.read_file(&name).map_err(read_error)? {
            Found::File(bytes) => Ok(Some(bytes)),
            Found::Directory => Err(read_error(io::Error::other("illegal operation on a directory, read"))),
            Found::Absent => Ok(None),
        }
    }

    /// Immutable snapshot ids of a location in ascending (UUID v7, so
    /// chronological) order: those after `start_after` when given, at most
    /// `limit` of them.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Invalid`] when `start_after` is not a UUID v7;
    /// [`SnapshotError::Io`] when the directory cannot be read.
    pub fn list_ids(
        &self,
        location: &SnapshotLocation,
        start_after: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<String>, SnapshotError> {
        if limit == Some(0) {
            return Ok(Vec::new());
        }
        if let Some(cursor) = start_after {
            validate::uuid_v7(cursor)?;
        }
        let path = location.snapshots_dir(&self.base).join(IMMUTABLE_HISTORY);
        let list_error = |e| SnapshotError::io("list snapshots in", &path, e);
        let dirs = format!("{}/{IMMUTABLE_HISTORY}", location.snapshots_key());
        let Some(dir) = self.existing_dir(&dirs).map_err(list_error)? else {
            return Ok(Vec::new());
        };
        let mut ids = Vec::new();
        for entry in dir.entries().map_err(list_error)? {
            if entry.kind != EntryKind::File {
                continue;
            }
            if let Some(id) = snapshot_id_of(&entry.name) {
                if start_after.is_none_or(|cursor| id > cursor) {
                    ids.push(id.to_owned());
                }
            }
        }
        ids.sort_unstable();
        if let Some(limit) = limit {
            ids.truncate(limit);
        }
        Ok(ids)
    }

    /// Removes everything of a session (`<base>/<session id>`); nothing to do
    /// when it does not exist.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Invalid`] for a bad session id;
    /// [`SnapshotError::Io`] when something cannot be removed.
    pub fn delete_session(&self, session_id: &str) -> Result<(), SnapshotError> {
        validate::identifier(session_id)?;
        let path = self.base.join(session_id);
        let removed = match Dir::open(&self.base, false, false) {
            Ok(base) => base.remove_all(session_id).map(|_| ()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
        match removed {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(SnapshotError::io("delete session", path, e))
            }
            _ => {
                self.forget_under(&path);
                Ok(())
            }
        }
    }

    /// The first time this instance writes into `dir`, removes temporary
    /// files that crashed writers left there (older than
    /// [`STALE_AFTER`](offload_atomic::STALE_AFTER)).
    fn sweep_once(&self, dir: &Dir) {
        let first = self
            .swept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(dir.path().to_path_buf());
        if first {
            dir.sweep_stale(&SNAPSHOT_TEMPS, offload_atomic::STALE_AFTER);
        }
    }

    /// Drops the records kept for files under `prefix` (after a deletion).
    fn forget_under(&self, prefix: &Path) {
        let mut published = self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        published.retain(|path, _| !path.starts_with(prefix));
        let mut swept = self.swept.lock().unwrap_or_else(PoisonError::into_inner);
        swept.retain(|path| !path.starts_with(prefix));
    }
}

/// The directories (`/`-separated, below the base) and the name of a file.
fn file_key(location: &SnapshotLocation, file: &SnapshotFile) -> (String, String) {
    let key = format!("{}/{}", location.snapshots_key(), file.relative_key());
    let (dirs, name) = key.rsplit_once('/').unwrap_or(("", &key));
    (dirs.to_owned(), name.to_owned())
}

/// A failed step of a snapshot write, as a [`SnapshotError::Io`] naming it.
fn write_error(e: offload_atomic::Error) -> SnapshotError {
    let op = match e.step {
        offload_atomic::Step::SyncDirectory => "sync directory",
        _ => "write snapshot",
    };
    SnapshotError::io(op, e.path, e.source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn loc(session: &str) -> SnapshotLocation {
        SnapshotLocation::new(session, "agent", "default").unwrap()
    }

    #[test]
    fn write_read_list_delete() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SnapshotDir::new(tmp.path(), false);
        let l = loc("s1");
        assert_eq!(store.read(&l, &SnapshotFile::Latest).unwrap(), None);
        store
            .write(&l, &SnapshotFile::Latest, b"{}", store.ticket())
            .unwrap();
        assert_eq!(
            store.read(&l, &SnapshotFile::Latest).unwrap().unwrap(),
            b"{}"
        );
        assert!(tmp
            .path()
            .join("s1/scopes/agent/default/snapshots/snapshot_latest.json")
            .is_file());
        let ids = [
            "01890a5d-ac96-774b-bcce-b302099a8059",
            "01890a5d-ac96-774b-bcce-b302099a8057",
            "01890a5d-ac96-774b-bcce-b302099a8058",
        ];
        for id in ids {
            let f = SnapshotFile::history(id).unwrap();
            store.write(&l, &f, id.as_bytes(), store.ticket()).unwrap();
        }
        let all = store.list_ids(&l, None, None).unwrap();
        assert_eq!(all, [ids[1], ids[2], ids[0]]);
        assert_eq!(store.list_ids(&l, Some(ids[1]), Some(1)).unwrap(), [ids[2]]);
        assert!(store.list_ids(&l, Some("x"), None).is_err());
        assert!(store
            .list_ids(&loc("nobody"), None, None)
            .unwrap()
            .is_empty());
        store.delete_session("s1").unwrap();
        assert!(!tmp.path().join("s1").exists());
        store.delete_session("s1").unwrap();
        assert!(store.delete_session("../x").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn deleting_a_symlinked_session_removes_only_the_link() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("linked")).unwrap();
        let store = SnapshotDir::new(tmp.path(), false);
        store.delete_session("linked").unwrap();
        assert!(!tmp.path().join("linked").exists());
        assert!(outside.path().join("keep.json").exists());
    }

    #[test]
    fn an_older_ticket_never_replaces_a_newer_write() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SnapshotDir::new(tmp.path(), false);
        let l = loc("s");
        let (old, new) = (store.ticket(), store.ticket());
        store.write(&l, &SnapshotFile::Latest, b"new", new).unwrap();
        store.write(&l, &SnapshotFile::Latest, b"old", old).unwrap();
        assert_eq!(
            store.read(&l, &SnapshotFile::Latest).unwrap().unwrap(),
            b"new"
        );
        let dir = l.snapshots_dir(tmp.path());
        assert_eq!(fs::read_dir(dir).unwrap().count(), 1, "no temp file left");
    }

    /// A server writing the latest snapshot of ever new sessions keeps its
    /// bookkeeping bounded, and writes still land in ticket order.
    #[test]
    fn bookkeeping_stays_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SnapshotDir::new(tmp.path(), false);
        for i in 0..(SnapshotDir::MAX_TRACKED + 500) {
            let l = loc(&format!("s{i}"));
            let ticket = store.ticket();
            store.write(&l, &SnapshotFile::Latest, b"{}", ticket).unwrap();
        }
        assert!(store.tracked() <= SnapshotDir::MAX_TRACKED + 1, "{}", store.tracked());
        let l = loc("s0");
        let (older, newer) = (store.ticket(), store.ticket());
        store.write(&l, &SnapshotFile::Latest, b"new", newer).unwrap();
        store.write(&l, &SnapshotFile::Latest, b"old", older).unwrap();
        assert_eq!(store.read(&l, &SnapshotFile::Latest).unwrap().as_deref(), Some(&b"new"[..]));
    }
}
