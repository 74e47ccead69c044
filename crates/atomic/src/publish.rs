//! Publication by link (never replacing a file) and directory flushes.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::Path;

use crate::error::{Error, Step};

/// Gives the file `temp` the name `target` without ever replacing an existing
/// file: `Ok(true)` when published (the temporary name is gone), `Ok(false)`
/// when `target` exists (the temporary file is kept).
pub(crate) fn link_new(temp: &Path, target: &Path) -> io::Result<bool> {
    match fs::hard_link(temp, target) {
        Ok(()) => {
            // Best effort: a leftover temporary name is removed by a stale
            // sweep and does not affect the published file.
            let _ = fs::remove_file(temp);
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) if links_unsupported(&e) => publish_without_links(temp, target),
        Err(e) => Err(e),
    }
}

/// Links an `O_TMPFILE` inode at `target` (through its `/proc/self/fd`
/// entry, which needs no privilege); `Ok(false)` when `target` exists.
#[cfg(target_os = "linux")]
pub(crate) fn link_unnamed(file: &File, target: &Path) -> io::Result<bool> {
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

/// Whether a `link(2)` failure means the file system has no hard links (as
/// opposed to a real error such as a full disk).
fn links_unsupported(e: &io::Error) -> bool {
    if e.kind() == io::ErrorKind::Unsupported {
        return true;
    }
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(code) if code == libc::EPERM || code == libc::EOPNOTSUPP || code == libc::ENOSYS)
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::PermissionDenied
    }
}

/// Flushes the entries of `dir` (names created, renamed or removed in it) to
/// stable storage. A no-op where directories cannot be fsynced (Windows).
///
/// # Errors
///
/// [`Step::SyncDirectory`] with the OS error.
pub fn sync_dir(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::new(Step::SyncDirectory, dir, e))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallback_publish_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        fs::write(&target, b"first").unwrap();
        let temp = dir.path().join(".tmp-1-1");
        fs::write(&temp, b"second").unwrap();
        assert!(!publish_without_links(&temp, &target).unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"first");
        let other = dir.path().join("b.txt");
        assert!(publish_without_links(&temp, &other).unwrap());
        assert_eq!(fs::read(&other).unwrap(), b"second");
        assert!(!temp.exists());
    }

    #[test]
    fn syncing_a_missing_directory_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        #[cfg(unix)]
        {
            let err = sync_dir(&missing).unwrap_err();
            assert_eq!(
                (err.step, err.kind()),
                (Step::SyncDirectory, io::ErrorKind::NotFound)
            );
            assert_eq!(err.path, missing);
        }
        sync_dir(dir.path()).unwrap();
    }
}
