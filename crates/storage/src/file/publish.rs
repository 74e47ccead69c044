//! Crash-safe, no-clobber publication of artifact files.
//!
//! Content is first written to a file with no name yet and then given its
//! final name with a link, which fails with `EEXIST` instead of replacing an
//! existing file. A file therefore never appears under its final name
//! half-written, and two writers (threads, instances or processes) never
//! overwrite each other's artifacts.
//!
//! On Linux the unnamed file is an `O_TMPFILE` inode, linked in with
//! `linkat`: one directory entry per store and nothing to clean up after a
//! crash. Elsewhere (or where the file system lacks `O_TMPFILE`) it is a
//! hidden temporary file, hard-linked to the final name and then unlinked.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::StorageError;

/// Prefix of temporary files; hidden, so never served by `retrieve`.
pub(crate) const TEMP_PREFIX: &str = ".tmp-";

/// Temporary files older than this are removed when a directory is opened.
pub(crate) const STALE_TEMP_AGE: Duration = Duration::from_secs(60 * 60);

/// Process-wide sequence for temporary file names.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// How many temporary names to try before giving up.
const TEMP_NAME_ATTEMPTS: u32 = 100;

/// Content written to the artifact directory but not yet published.
pub(crate) enum Staged {
    /// An `O_TMPFILE` inode, kept open until it is linked.
    #[cfg(target_os = "linux")]
    Anonymous(File),
    /// A hidden temporary file.
    Named(PathBuf),
}

impl Staged {
    /// Removes what was staged (best effort): after a failed store.
    pub(crate) fn discard(self) {
        match self {
            #[cfg(target_os = "linux")]
            Staged::Anonymous(_) => {}
            Staged::Named(path) => {
                let _ = fs::remove_file(path);
            }
        }
    }
}

/// Writes `content` into `dir` without giving it a name yet: in an unnamed
/// file when `anonymous` is set and the platform supports it, else in a hidden
/// temporary file.
pub(crate) fn stage(
    dir: &Path,
    content: &[u8],
    durable: bool,
    anonymous: bool,
) -> Result<Staged, StorageError> {
    #[cfg(target_os = "linux")]
    if anonymous {
        if let Some(file) = write_anonymous(dir, content, durable)? {
            return Ok(Staged::Anonymous(file));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = anonymous;
    write_temp(dir, content, durable).map(Staged::Named)
}

/// Writes `content` to an `O_TMPFILE` inode in `dir`; `Ok(None)` when the file
/// system does not support unnamed files.
#[cfg(target_os = "linux")]
fn write_anonymous(dir: &Path, content: &[u8], durable: bool) -> Result<Option<File>, StorageError> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = OpenOptions::new()
        .write(true)
        .mode(0o644)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    let mut file = match opened {
        Ok(file) => file,
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOSYS)
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(StorageError::io("create temporary file", dir, e)),
    };
    file.write_all(content)
        .and_then(|()| if durable { file.sync_all() } else { Ok(()) })
        .map_err(|e| StorageError::io("write artifact", dir, e))?;
    Ok(Some(file))
}

/// Gives staged content the name `target` without ever replacing an existing
/// file. `Ok(true)` when published, `Ok(false)` when `target` exists (the
/// content stays staged so the caller can try another name).
pub(crate) fn publish_staged(staged: &Staged, target: &Path) -> io::Result<bool> {
    match staged {
        #[cfg(target_os = "linux")]
        Staged::Anonymous(file) => link_anonymous(file, target),
        Staged::Named(temp) => publish(temp, target),
    }
}

/// Links an `O_TMPFILE` inode at `target` (through its `/proc/self/fd` entry,
/// which needs no privilege).
#[cfg(target_os = "linux")]
fn link_anonymous(file: &File, target: &Path) -> io::Result<bool> {
    use rustix::fs::{linkat, AtFlags, CWD};
    use std::os::unix::io::AsRawFd;
    let source = format!("/proc/self/fd/{}", file.as_raw_fd());
    match linkat(CWD, source.as_str(), CWD, target, AtFlags::SYMLINK_FOLLOW) {
        Ok(()) => Ok(true),
        Err(e) => {
            let e = io::Error::from(e);
            if e.kind() == io::ErrorKind::AlreadyExists {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// Writes `content` to a new temporary file in `dir` and returns its path.
/// With `durable`, the file's data is flushed to stable storage. On failure
/// the temporary file is removed.
pub(crate) fn write_temp(
    dir: &Path,
    content: &[u8],
    durable: bool,
) -> Result<PathBuf, StorageError> {
    let pid = std::process::id();
    let mut attempt = 0;
    let (path, mut file) = loop {
        let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{TEMP_PREFIX}{pid}-{seq}"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => break (path, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < TEMP_NAME_ATTEMPTS => {
                attempt += 1
            }
            Err(e) => return Err(StorageError::io("create temporary file", path, e)),
        }
    };
    let written = file
        .write_all(content)
        .and_then(|()| if durable { file.sync_all() } else { Ok(()) });
    drop(file);
    match written {
        Ok(()) => Ok(path),
        Err(e) => {
            let _ = fs::remove_file(&path);
            Err(StorageError::io("write artifact", path, e))
        }
    }
}

/// Marker in the names of temporary files of the key-value API: the SDK's
/// `LocalFileStorage` writes `<path>.__strands_tmp_<uuid>` and skips such
/// names when listing, so each implementation ignores the other's in-flight
/// writes.
pub(crate) const KEY_TEMP_MARKER: &str = ".__strands_tmp_";

/// Writes `content` to a new temporary file next to `target`
/// (`<target>.__strands_tmp_<pid>-<seq>`), for publishing with
/// [`replace`]. On failure nothing is left behind.
pub(crate) fn write_temp_beside(
    target: &Path,
    content: &[u8],
    durable: bool,
) -> io::Result<PathBuf> {
    let pid = std::process::id();
    let mut attempt = 0;
    let (path, mut file) = loop {
        let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let mut name = target.as_os_str().to_owned();
        name.push(format!("{KEY_TEMP_MARKER}{pid}-{seq}"));
        let path = PathBuf::from(name);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => break (path, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < TEMP_NAME_ATTEMPTS => {
                attempt += 1
            }
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(content)
        .and_then(|()| if durable { file.sync_all() } else { Ok(()) });
    drop(file);
    match written {
        Ok(()) => Ok(path),
        Err(e) => {
            let _ = fs::remove_file(&path);
            Err(e)
        }
    }
}

/// Publishes `temp` as `target`, atomically replacing an existing file
/// (rename); the temporary file is removed on failure.
pub(crate) fn replace(temp: &Path, target: &Path) -> io::Result<()> {
    fs::rename(temp, target).inspect_err(|_| {
        let _ = fs::remove_file(temp);
    })
}

/// Gives the temporary file `temp` the name `target` without ever replacing
/// an existing file.
///
/// Returns `Ok(true)` when published (the temporary name is gone),
/// `Ok(false)` when `target` already exists (the temporary file is kept so
/// the caller can retry under another name).
pub(crate) fn publish(temp: &Path, target: &Path) -> io::Result<bool> {
    match fs::hard_link(temp, target) {
        Ok(()) => {
            // Best effort: a leftover temporary name is removed by the stale
            // temp cleanup and does not affect the published artifact.
            let _ = fs::remove_file(temp);
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) if links_unsupported(&e) => publish_without_links(temp, target),
        Err(e) => Err(e),
    }
}

/// Fallback for file systems without hard links: reserve the final name with
/// an exclusive create, then rename the temporary file over the (empty,
/// private) placeholder.
fn publish_without_links(temp: &Path, target: &Path) -> io::Result<bool> {
    match OpenOptions::new().write(true).create_new(true).open(target) {
        Ok(placeholder) => drop(placeholder),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(e),
    }
    if let Err(e) = fs::rename(temp, target) {
        let _ = fs::remove_file(target);
        return Err(e);
    }
    Ok(true)
}

/// Whether a `link(2)` failure means the file system does not support hard
/// links (as opposed to a real error such as a full disk).
fn links_unsupported(e: &io::Error) -> bool {
    if e.kind() == io::ErrorKind::Unsupported {
        return true;
    }
    #[cfg(unix)]
    {
        matches!(
            e.raw_os_error(),
            Some(code) if code == libc::EPERM || code == libc::EOPNOTSUPP || code == libc::ENOSYS
        )
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::PermissionDenied
    }
}

/// Flushes the directory entry table of `dir` to stable storage.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Removes temporary files older than [`STALE_TEMP_AGE`] left behind by
/// crashed writers. Best effort: errors are ignored.
pub(crate) fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(TEMP_PREFIX) {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let stale = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > STALE_TEMP_AGE);
        if meta.file_type().is_file() && stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        fs::write(&target, b"first").unwrap();
        let temp = write_temp(dir.path(), b"second", false).unwrap();
        assert!(!publish(&temp, &target).unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"first");
        assert!(temp.exists());
        let other = dir.path().join("b.txt");
        assert!(publish(&temp, &other).unwrap());
        assert_eq!(fs::read(&other).unwrap(), b"second");
        assert!(!temp.exists());
    }

    /// Both staging kinds publish under a free name only, and leave no
    /// directory entry besides the published one.
    #[test]
    fn staged_content_publishes_without_overwriting() {
        for anonymous in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("a.txt");
            fs::write(&target, b"first").unwrap();
            let staged = stage(dir.path(), b"second", false, anonymous).unwrap();
            #[cfg(target_os = "linux")]
            assert_eq!(matches!(staged, Staged::Anonymous(_)), anonymous);
            assert!(!publish_staged(&staged, &target).unwrap());
            assert_eq!(fs::read(&target).unwrap(), b"first");
            let other = dir.path().join("b.txt");
            assert!(publish_staged(&staged, &other).unwrap());
            drop(staged);
            assert_eq!(fs::read(&other).unwrap(), b"second");
            let mut names: Vec<_> = fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            names.sort();
            assert_eq!(names, ["a.txt", "b.txt"], "anonymous={anonymous}");
        }
    }

    /// A discarded unnamed file leaves nothing in the directory.
    #[test]
    fn discarded_staging_leaves_nothing() {
        for anonymous in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            stage(dir.path(), b"gone", false, anonymous).unwrap().discard();
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0, "anonymous={anonymous}");
        }
    }

    #[test]
    fn fallback_publish_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        fs::write(&target, b"first").unwrap();
        let temp = write_temp(dir.path(), b"second", true).unwrap();
        assert!(!publish_without_links(&temp, &target).unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"first");
        let other = dir.path().join("b.txt");
        assert!(publish_without_links(&temp, &other).unwrap());
        assert_eq!(fs::read(&other).unwrap(), b"second");
        assert!(!temp.exists());
    }

    #[test]
    fn temp_files_are_hidden_and_unique() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_temp(dir.path(), b"x", false).unwrap();
        let b = write_temp(dir.path(), b"y", false).unwrap();
        assert_ne!(a, b);
        for p in [&a, &b] {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with(TEMP_PREFIX), "{name}");
        }
    }

    #[test]
    fn write_temp_into_missing_dir_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        match write_temp(&missing, b"x", false).unwrap_err() {
            StorageError::Io { op, source, .. } => {
                assert_eq!(source.kind(), io::ErrorKind::NotFound);
                assert_eq!(op, "create temporary file");
            }
            other => panic!("unexpected error {other:?}"),
        }
        assert!(!missing.exists());
    }
}
