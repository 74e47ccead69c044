//! [`Staged`]: content written into a directory under no final name yet,
//! for names that several writers race for.

use std::io::{self, Write};

use crate::dir::Dir;
use crate::error::{Error, Step};
use crate::names::TempNames;

/// Content written into a [`Dir`] but not yet under its final name: an
/// unnamed file where the platform and file system have them (`O_TMPFILE`
/// on Linux: nothing of it survives a crash before publication), else a
/// hidden temporary file. Published with [`publish_new`](Self::publish_new),
/// which never replaces a file.
#[derive(Debug)]
#[must_use = "staged content is published with `publish_new` or removed with `discard`"]
pub enum Staged {
    /// An `O_TMPFILE` inode, kept open until it is linked.
    #[cfg(target_os = "linux")]
    Unnamed(std::fs::File),
    /// A hidden temporary file of the directory.
    Named(String),
}

impl Staged {
    /// Writes `content` into `dir`: in an unnamed file when `unnamed` is set
    /// and supported, else in a temporary file named by `temps`. With
    /// `durable`, the data is fsynced.
    ///
    /// # Errors
    ///
    /// [`Step::CreateTemp`] or [`Step::Write`] with the OS error (a removed
    /// directory is [`io::ErrorKind::NotFound`]).
    pub fn write(
        dir: &Dir,
        content: &[u8],
        temps: &TempNames,
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
        dir.write_temp("", content, temps, durable)
            .map(Staged::Named)
    }

    /// Gives the content the name `target` in `dir` (the directory it was
    /// written into) unless that name exists: `Ok(true)` when published,
    /// `Ok(false)` when `target` exists (the content stays staged, for
    /// another name).
    ///
    /// # Errors
    ///
    /// [`Step::Publish`] with the OS error.
    pub fn publish_new(&self, dir: &Dir, target: &str) -> Result<bool, Error> {
        let published = match self {
            #[cfg(target_os = "linux")]
            Staged::Unnamed(file) => link_unnamed(file, dir, target),
            Staged::Named(temp) => dir.link_new(temp, target).inspect(|&done| {
                if done {
                    // Best effort: a leftover temporary name is swept later
                    // and does not affect the published file.
                    let _ = dir.remove_file(temp);
                }
            }),
        };
        published.map_err(|e| Error::new(Step::Publish, dir.path().join(target), e))
    }

    /// Removes what was staged in `dir` (best effort).
    pub fn discard(self, dir: &Dir) {
        match self {
            #[cfg(target_os = "linux")]
            Staged::Unnamed(_) => {}
            Staged::Named(temp) => {
                let _ = dir.remove_file(&temp);
            }
        }
    }
}

/// Writes `content` to an `O_TMPFILE` inode in `dir`; `Ok(None)` when the
/// file system has no unnamed files.
#[cfg(target_os = "linux")]
fn unnamed_file(dir: &Dir, content: &[u8], durable: bool) -> Result<Option<std::fs::File>, Error> {
    use rustix::fs::{openat, Mode, OFlags};
    use std::os::fd::AsFd;
    let flags = OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC;
    let fd = match openat(dir.cap().as_fd(), ".", flags, Mode::from_raw_mode(0o644)) {
        Ok(fd) => fd,
        Err(
            rustix::io::Errno::OPNOTSUPP
            | rustix::io::Errno::ISDIR
            | rustix::io::Errno::INVAL
            | rustix::io::Errno::NOSYS,
        ) => return Ok(None),
        // An unnamed file cannot be made in a removed directory (`EPERM`):
        // report that as the directory missing, as a named file would.
        Err(_) if dir.is_removed() => {
            return Err(Error::new(
                Step::CreateTemp,
                dir.path(),
                io::Error::from(io::ErrorKind::NotFound),
            ))
        }
        Err(e) => return Err(Error::new(Step::CreateTemp, dir.path(), io::Error::from(e))),
    };
    let mut file = std::fs::File::from(fd);
    file.write_all(content)
        .and_then(|()| if durable { file.sync_all() } else { Ok(()) })
        .map_err(|e| Error::new(Step::Write, dir.path(), e))?;
    Ok(Some(file))
}

/// Links an `O_TMPFILE` inode at `target` in `dir` (through its
/// `/proc/self/fd` entry, which needs no privilege); `Ok(false)` when
/// `target` exists.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &std::fs::File, dir: &Dir, target: &str) -> io::Result<bool> {
    use rustix::fs::{linkat, AtFlags, CWD};
    use std::os::fd::{AsFd, AsRawFd};
    let source = format!("/proc/self/fd/{}", file.as_raw_fd());
    match linkat(
        CWD,
        source.as_str(),
        dir.cap().as_fd(),
        target,
        AtFlags::SYMLINK_FOLLOW,
    ) {
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
