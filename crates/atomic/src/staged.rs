//! Content written under no final name yet: a named temporary file
//! ([`TempFile`]) or, on Linux, an unnamed `O_TMPFILE` inode ([`Staged`]).

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Step};
use crate::names::TempNames;
use crate::publish::{link_new, sync_dir};

/// How many fresh names are tried when a temporary name is taken.
const NAME_ATTEMPTS: u32 = 100;

/// Content in a hidden temporary file, waiting for its final name.
#[derive(Debug)]
#[must_use = "a temporary file is published with `replace` or `publish_new`, or removed with `discard`"]
pub struct TempFile {
    path: PathBuf,
}

impl TempFile {
    /// Writes `content` to a new temporary file in `dir` named by `names`
    /// (plain schemes; see [`beside`](Self::beside) for names built from the
    /// target's). With `durable`, the data is fsynced. On failure nothing is
    /// left behind.
    ///
    /// # Errors
    ///
    /// [`Step::CreateTemp`] or [`Step::Write`] with the OS error.
    pub fn in_dir(
        dir: &Path,
        names: &TempNames,
        content: &[u8],
        durable: bool,
    ) -> Result<Self, Error> {
        create(dir, OsStr::new(""), names, content, durable)
    }

    /// Writes `content` to a new temporary file in `target`'s directory, named
    /// by `names` after `target`. With `durable`, the data is fsynced. On
    /// failure nothing is left behind.
    ///
    /// # Errors
    ///
    /// [`Step::CreateTemp`] or [`Step::Write`] with the OS error.
    pub fn beside(
        target: &Path,
        names: &TempNames,
        content: &[u8],
        durable: bool,
    ) -> Result<Self, Error> {
        let dir = target.parent().unwrap_or(Path::new("."));
        let name = target.file_name().unwrap_or_default();
        create(dir, name, names, content, durable)
    }

    /// The temporary file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file over `target`, atomically replacing what is there;
    /// with `durable`, `target`'s directory entry is flushed too. The
    /// temporary file is removed when the rename fails.
    ///
    /// # Errors
    ///
    /// [`Step::Publish`] or [`Step::SyncDirectory`] with the OS error.
    pub fn replace(self, target: &Path, durable: bool) -> Result<(), Error> {
        if let Err(e) = fs::rename(&self.path, target) {
            self.discard();
            return Err(Error::new(Step::Publish, target, e));
        }
        if durable {
            sync_dir(target.parent().unwrap_or(Path::new(".")))?;
        }
        Ok(())
    }

    /// Gives the file the name `target` unless that name exists: `Ok(true)`
    /// when published (the temporary name is gone), `Ok(false)` when `target`
    /// exists (the file stays staged, for another name).
    ///
    /// # Errors
    ///
    /// [`Step::Publish`] with the OS error.
    pub fn publish_new(&self, target: &Path) -> Result<bool, Error> {
        link_new(&self.path, target).map_err(|e| Error::new(Step::Publish, target, e))
    }

    /// Removes the temporary file (best effort).
    pub fn discard(self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Creates a fresh temporary file in `dir` and writes `content` to it.
fn create(
    dir: &Path,
    target_name: &OsStr,
    names: &TempNames,
    content: &[u8],
    durable: bool,
) -> Result<TempFile, Error> {
    let mut attempt = 0;
    let (path, file) = loop {
        let path = dir.join(names.fresh(target_name));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => break (path, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < NAME_ATTEMPTS => {
                attempt += 1
            }
            Err(e) => return Err(Error::new(Step::CreateTemp, path, e)),
        }
    };
    match fill(file, content, durable) {
        Ok(()) => Ok(TempFile { path }),
        Err(e) => {
            let _ = fs::remove_file(&path);
            Err(Error::new(Step::Write, path, e))
        }
    }
}

/// Writes `content` and, with `durable`, fsyncs it.
fn fill(mut file: File, content: &[u8], durable: bool) -> io::Result<()> {
    file.write_all(content)?;
    if durable {
        file.sync_all()?;
    }
    Ok(())
}

/// Content written into a directory, not yet under a final name: an unnamed
/// file where the platform and file system have them, else a [`TempFile`].
/// Published with [`publish_new`](Self::publish_new) only (names that writers
/// race for); nothing of an unnamed file survives a crash before that.
#[derive(Debug)]
#[must_use = "staged content is published with `publish_new` or removed with `discard`"]
pub enum Staged {
    /// An `O_TMPFILE` inode, kept open until it is linked.
    #[cfg(target_os = "linux")]
    Unnamed(File),
    /// A hidden temporary file.
    Named(TempFile),
}

impl Staged {
    /// Writes `content` into `dir`: in an unnamed file when `unnamed` is set
    /// and supported, else in a temporary file named by `names`. With
    /// `durable`, the data is fsynced.
    ///
    /// # Errors
    ///
    /// [`Step::CreateTemp`] or [`Step::Write`] with the OS error (a missing
    /// `dir` is [`io::ErrorKind::NotFound`]).
    pub fn in_dir(
        dir: &Path,
        names: &TempNames,
        content: &[u8],
        durable: bool,
        unnamed: bool,
    ) -> Result<Self, Error> {
        #[cfg(target_os = "linux")]
        if unnamed {
            if let Some(file) = unnamed_file(dir, content, durable)? {
                return Ok(Staged::Unnamed(file));
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = unnamed;
        TempFile::in_dir(dir, names, content, durable).map(Staged::Named)
    }

    /// Gives the content the name `target` unless that name exists:
    /// `Ok(true)` when published, `Ok(false)` when `target` exists (the
    /// content stays staged, for another name).
    ///
    /// # Errors
    ///
    /// [`Step::Publish`] with the OS error.
    pub fn publish_new(&self, target: &Path) -> Result<bool, Error> {
        match self {
            #[cfg(target_os = "linux")]
            Staged::Unnamed(file) => crate::publish::link_unnamed(file, target)
                .map_err(|e| Error::new(Step::Publish, target, e)),
            Staged::Named(temp) => temp.publish_new(target),
        }
    }

    /// Removes what was staged (best effort).
    pub fn discard(self) {
        match self {
            #[cfg(target_os = "linux")]
            Staged::Unnamed(_) => {}
            Staged::Named(temp) => temp.discard(),
        }
    }
}

/// Writes `content` to an `O_TMPFILE` inode in `dir`; `Ok(None)` when the
/// file system has no unnamed files.
#[cfg(target_os = "linux")]
fn unnamed_file(dir: &Path, content: &[u8], durable: bool) -> Result<Option<File>, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = OpenOptions::new()
        .write(true)
        .mode(0o644)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    let file = match opened {
        Ok(file) => file,
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOSYS)
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(Error::new(Step::CreateTemp, dir, e)),
    };
    let kept = file
        .try_clone()
        .map_err(|e| Error::new(Step::CreateTemp, dir, e))?;
    fill(file, content, durable).map_err(|e| Error::new(Step::Write, dir, e))?;
    Ok(Some(kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: TempNames = TempNames::plain(".tmp-");
    const HIDDEN: TempNames = TempNames::around_target(".", ".", ".tmp");

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replace_overwrites_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("snapshot_latest.json");
        for (i, durable) in [(1, false), (2, true)] {
            let content = format!("v{i}");
            let temp = TempFile::beside(&target, &HIDDEN, content.as_bytes(), durable).unwrap();
            assert!(HIDDEN.matches(temp.path().file_name().unwrap().to_str().unwrap()));
            temp.replace(&target, durable).unwrap();
            assert_eq!(fs::read_to_string(&target).unwrap(), content);
        }
        assert_eq!(names_in(dir.path()), ["snapshot_latest.json"]);
    }

    #[test]
    fn publish_new_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        fs::write(&target, b"first").unwrap();
        let temp = TempFile::in_dir(dir.path(), &PLAIN, b"second", false).unwrap();
        assert!(!temp.publish_new(&target).unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"first");
        assert!(temp.path().exists());
        let other = dir.path().join("b.txt");
        assert!(temp.publish_new(&other).unwrap());
        assert_eq!(fs::read(&other).unwrap(), b"second");
        assert!(!temp.path().exists());
    }

    /// Both staging kinds publish under a free name only, and leave no
    /// directory entry besides the published one.
    #[test]
    fn staged_content_publishes_without_overwriting() {
        for unnamed in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("a.txt");
            fs::write(&target, b"first").unwrap();
            let staged = Staged::in_dir(dir.path(), &PLAIN, b"second", false, unnamed).unwrap();
            #[cfg(target_os = "linux")]
            assert_eq!(matches!(staged, Staged::Unnamed(_)), unnamed);
            assert!(!staged.publish_new(&target).unwrap());
            assert_eq!(fs::read(&target).unwrap(), b"first");
            let other = dir.path().join("b.txt");
            assert!(staged.publish_new(&other).unwrap());
            drop(staged);
            assert_eq!(fs::read(&other).unwrap(), b"second");
            assert_eq!(
                names_in(dir.path()),
                ["a.txt", "b.txt"],
                "unnamed={unnamed}"
            );
        }
    }

    #[test]
    fn discarded_content_never_reaches_the_target() {
        for unnamed in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            Staged::in_dir(dir.path(), &PLAIN, b"gone", false, unnamed)
                .unwrap()
                .discard();
            assert!(names_in(dir.path()).is_empty(), "unnamed={unnamed}");
        }
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("x.json");
        fs::write(&target, "old").unwrap();
        TempFile::beside(&target, &HIDDEN, b"new", false)
            .unwrap()
            .discard();
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(names_in(dir.path()), ["x.json"]);
    }

    #[test]
    fn a_missing_directory_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        for unnamed in [true, false] {
            let err = Staged::in_dir(&missing, &PLAIN, b"x", false, unnamed).unwrap_err();
            assert_eq!(
                (err.step, err.kind()),
                (Step::CreateTemp, io::ErrorKind::NotFound)
            );
            assert!(
                err.to_string()
                    .starts_with("failed to create temporary file "),
                "{err}"
            );
        }
        assert!(!missing.exists());
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("x.json");
        let temp = TempFile::beside(&target, &HIDDEN, b"new", false).unwrap();
        let elsewhere = dir.path().join("missing").join("x.json");
        let err = temp.replace(&elsewhere, false).unwrap_err();
        assert_eq!(err.step, Step::Publish);
        assert!(names_in(dir.path()).is_empty());
    }
}
