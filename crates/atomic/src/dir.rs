//! [`Dir`]: a directory opened once, and every file operation relative to it.
//!
//! Only [`Dir::open`] resolves a path through the file system the usual way.
//! Everything after that names one entry of an open directory at a time and
//! never follows a symbolic link: subdirectories are opened component by
//! component without following links, files are opened without following a
//! link in their name, renames and links work between open directories. A
//! process that swaps a directory for a symbolic link between a check and a
//! use (rename-exchange) gets the operation refused, never redirected
//! outside the directory.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir as CapDir, OpenOptions};

use crate::error::{Error, Step};
use crate::names::TempNames;

/// How many fresh names are tried when a temporary name is taken.
const NAME_ATTEMPTS: u32 = 100;

/// An open directory.
#[derive(Debug)]
pub struct Dir {
    dir: CapDir,
    path: PathBuf,
}

/// What a name of a directory holds, as [`Dir::read_file`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A regular file, with its bytes.
    File(Vec<u8>),
    /// A directory.
    Directory,
    /// Nothing that may be read: missing, a symbolic link, a FIFO, a device, ...
    Absent,
}

/// The kind of a directory entry (links are never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// Anything else: a symbolic link, a FIFO, a socket, a device.
    Other,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name (entries whose names are not UTF-8 are not listed).
    pub name: String,
    /// What it is.
    pub kind: EntryKind,
}

impl Dir {
    /// Opens the directory at `path`, creating it and its parents first
    /// when `create` is set (with `durable`, each directory created is
    /// flushed into its parent). The only step that resolves a path through
    /// the file system the usual way.
    ///
    /// # Errors
    ///
    /// The OS error of creating or opening it.
    pub fn open(path: &Path, create: bool, durable: bool) -> io::Result<Self> {
        if create {
            create_dir_all(path, durable)?;
        }
        let dir = CapDir::open_ambient_dir(path, ambient_authority())?;
        Ok(Self {
            dir,
            path: path.to_path_buf(),
        })
    }

    /// The path it was opened at, joined with the names it was reached by
    /// (for messages; operations never use it).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The subdirectory reached by `segments` (each one name), each opened
    /// without following a symbolic link.
    ///
    /// Without `create`, `Ok(None)` when one of them is missing or is a link
    /// (and an error, `ENOTDIR`, when a file stands in the way). With
    /// `create: Some(durable)`, missing ones are created (with `durable`,
    /// each creation is flushed into its parent), and a link or a file in the
    /// way is an error.
    ///
    /// # Errors
    ///
    /// The OS error; a link in the way of `create` is
    /// `'<name>' is a symbolic link`.
    pub fn subdir<'s>(
        &self,
        segments: impl IntoIterator<Item = &'s str>,
        create: Option<bool>,
    ) -> io::Result<Option<Dir>> {
        let mut current: Option<Dir> = None;
        for segment in segments {
            let parent = current.as_ref().unwrap_or(self);
            let next = match parent.dir.open_dir_nofollow(segment) {
                Ok(dir) => dir,
                Err(e) if e.kind() == io::ErrorKind::NotFound => match create {
                    None => return Ok(None),
                    Some(durable) => parent.create_subdir(segment, durable)?,
                },
                Err(_) if parent.is_link(segment) => match create {
                    None => return Ok(None),
                    Some(_) => {
                        return Err(io::Error::other(format!("'{segment}' is a symbolic link")))
                    }
                },
                Err(e) => return Err(e),
            };
            current = Some(Dir {
                dir: next,
                path: parent.path.join(segment),
            });
        }
        match current {
            Some(dir) => Ok(Some(dir)),
            None => self.dir.try_clone().map(|dir| {
                Some(Dir {
                    dir,
                    path: self.path.clone(),
                })
            }),
        }
    }

    /// Creates the directory `name` (another writer may just have) and opens it.
    fn create_subdir(&self, name: &str, durable: bool) -> io::Result<CapDir> {
        match self.dir.create_dir(name) {
            Ok(()) if durable => self.sync().map_err(|e| e.source)?,
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        self.dir.open_dir_nofollow(name)
    }

    /// Whether `name` is a symbolic link.
    fn is_link(&self, name: &str) -> bool {
        self.dir
            .symlink_metadata(name)
            .is_ok_and(|m| m.file_type().is_symlink())
    }

    /// What `name` holds: the bytes of a regular file (opened without
    /// following a link, without blocking on a FIFO, and checked on the open
    /// handle), or that it is a directory, or nothing readable.
    ///
    /// # Errors
    ///
    /// The OS error of an existing regular file that cannot be read.
    pub fn read_file(&self, name: &str) -> io::Result<Found> {
        let (mut file, meta) = match self.open_regular(name)? {
            Ok(opened) => opened,
            Err(found) => return Ok(found),
        };
        let mut content = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.read_to_end(&mut content)?;
        Ok(Found::File(content))
    }

    /// The regular file `name` opened for reading (without following a
    /// link, without blocking on a FIFO) with the metadata of the open
    /// handle; otherwise what [`Dir::read_file`] reports instead of bytes.
    pub(crate) fn open_regular(
        &self,
        name: &str,
    ) -> io::Result<Result<(cap_std::fs::File, cap_std::fs::Metadata), Found>> {
        match self.dir.symlink_metadata(name) {
            Ok(meta) if meta.is_dir() => return Ok(Err(Found::Directory)),
            Ok(meta) if !meta.is_file() => return Ok(Err(Found::Absent)),
            Ok(_) => {}
            Err(e) if is_missing(&e) => return Ok(Err(Found::Absent)),
            Err(e) => return Err(e),
        }
        let mut options = OpenOptions::new();
        options.read(true).follow(FollowSymlinks::No);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = match self.dir.open_with(name, &options) {
            Ok(file) => file,
            Err(e) if is_missing(&e) || is_refused(&e) => return Ok(Err(Found::Absent)),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Ok(Err(if meta.is_dir() {
                Found::Directory
            } else {
                Found::Absent
            }));
        }
        Ok(Ok((file, meta)))
    }

    /// The regular file `name` opened for reading, as a standard file: never
    /// through a symbolic link, never blocking on a FIFO, and checked to be a
    /// regular file on the open handle. `Ok(None)` when there is no regular
    /// file of that name (missing, a link, a directory, a device, ...).
    ///
    /// # Errors
    ///
    /// The OS error of an existing regular file that cannot be opened.
    pub fn open_read(&self, name: &str) -> io::Result<Option<std::fs::File>> {
        Ok(self.open_regular(name)?.ok().map(|(file, _)| file.into_std()))
    }

    /// The regular file `name` opened for appending, as a standard file;
    /// with `create`, an empty one is created when there is none. A
    /// symbolic link at `name` is refused (never followed, never replaced,
    /// dangling or not), and so is anything but a regular file, so a write
    /// through the handle can only land in this directory's own file.
    ///
    /// # Errors
    ///
    /// The OS error (`NotFound` without `create`; a link is
    /// `'<name>' is a symbolic link`, anything else that is not a regular
    /// file `'<name>' is not a regular file`).
    pub fn open_append(&self, name: &str, create: bool) -> io::Result<std::fs::File> {
        let mut options = OpenOptions::new();
        options
            .append(true)
            .create(create)
            .follow(FollowSymlinks::No);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = match self.dir.open_with(name, &options) {
            Ok(file) => file,
            Err(_) if self.is_link(name) => {
                return Err(io::Error::other(format!("'{name}' is a symbolic link")))
            }
            Err(e) => return Err(e),
        };
        if !file.metadata()?.is_file() {
            return Err(io::Error::other(format!("'{name}' is not a regular file")));
        }
        Ok(file.into_std())
    }

    /// Whether this directory has an entry `name` of any kind (a link is
    /// not followed: a dangling one is an entry).
    ///
    /// # Errors
    ///
    /// The OS error other than a missing entry.
    pub fn has_entry(&self, name: &str) -> io::Result<bool> {
        match self.dir.symlink_metadata(name) {
            Ok(_) => Ok(true),
            Err(e) if is_missing(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Device and inode numbers of the entry `name` (a link's own, never its
    /// target's); `Ok(None)` when there is none. Compared with those of an
    /// open file ([`file_identity`]), they tell whether the name still
    /// names that file.
    ///
    /// # Errors
    ///
    /// The OS error other than a missing entry.
    #[cfg(unix)]
    pub fn identity(&self, name: &str) -> io::Result<Option<(u64, u64)>> {
        use cap_std::fs::MetadataExt;
        match self.dir.symlink_metadata(name) {
            Ok(meta) => Ok(Some((meta.dev(), meta.ino()))),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces `name` with `content` atomically: written to a temporary
    /// file of `temps` in this directory (fsynced with `durable`), then
    /// renamed over `name` (and, with `durable`, the directory flushed).
    /// Readers see the old content or the new one, never a mix; a link at
    /// `name` is replaced, not followed.
    ///
    /// # Errors
    ///
    /// The failed [`Step`]; nothing is left behind.
    pub fn replace(
        &self,
        name: &str,
        content: &[u8],
        temps: &TempNames,
        durable: bool,
    ) -> Result<(), Error> {
        let temp = self.write_temp(name, content, temps, durable)?;
        self.publish_over(&temp, name, durable)
    }

    /// Renames the temporary file `temp` (from [`Dir::write_temp`]) over
    /// `name`, atomically replacing what is there; with `durable`, the
    /// directory is flushed too. The temporary file is removed when the
    /// rename fails.
    ///
    /// # Errors
    ///
    /// [`Step::Publish`] or [`Step::SyncDirectory`] with the OS error.
    pub fn publish_over(&self, temp: &str, name: &str, durable: bool) -> Result<(), Error> {
        if let Err(e) = self.dir.rename(temp, &self.dir, name) {
            let _ = self.dir.remove_file(temp);
            return Err(Error::new(Step::Publish, self.path.join(name), e));
        }
        if durable {
            self.sync()?;
        }
        Ok(())
    }

    /// Writes `content` to a fresh temporary file of `temps` in this
    /// directory (named after `target` where the scheme says so; fsynced with
    /// `durable`) and returns its name, for [`Dir::publish_over`] or
    /// [`Dir::remove_file`]. On failure nothing is left behind.
    ///
    /// # Errors
    ///
    /// [`Step::CreateTemp`] or [`Step::Write`] with the OS error.
    pub fn write_temp(
        &self,
        target: &str,
        content: &[u8],
        temps: &TempNames,
        durable: bool,
    ) -> Result<String, Error> {
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .follow(FollowSymlinks::No);
        let mut attempt = 0;
        let (name, file) = loop {
            let name = temps.fresh(target);
            match self.dir.open_with(&name, &options) {
                Ok(file) => break (name, file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < NAME_ATTEMPTS => {
                    attempt += 1
                }
                Err(e) => return Err(Error::new(Step::CreateTemp, self.path.join(&name), e)),
            }
        };
        let mut file = file.into_std();
        let written =
            file.write_all(content)
                .and_then(|()| if durable { file.sync_all() } else { Ok(()) });
        drop(file);
        match written {
            Ok(()) => Ok(name),
            Err(e) => {
                let _ = self.dir.remove_file(&name);
                Err(Error::new(Step::Write, self.path.join(&name), e))
            }
        }
    }

    /// Gives the file `from` (an entry of this directory) the name `to` too,
    /// unless `to` exists: `Ok(false)` then. On file systems without hard
    /// links, `to` is reserved with an exclusive create and `from` renamed
    /// over it (then `from` is gone).
    pub(crate) fn link_new(&self, from: &str, to: &str) -> io::Result<bool> {
        match self.dir.hard_link(from, &self.dir, to) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) if links_unsupported(&e) => {
                let mut options = OpenOptions::new();
                options
                    .write(true)
                    .create_new(true)
                    .follow(FollowSymlinks::No);
                match self.dir.open_with(to, &options) {
                    Ok(placeholder) => drop(placeholder),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
                    Err(e) => return Err(e),
                }
                self.dir.rename(from, &self.dir, to).inspect_err(|_| {
                    let _ = self.dir.remove_file(to);
                })?;
                Ok(true)
            }
            Err(e) => Err(e),
        }
    }

    /// Gives the file `from` of this directory the name `to` in `target`
    /// too, unless `to` exists there: `Ok(false)` then. A link at `from` is
    /// linked as a link, never followed.
    ///
    /// # Errors
    ///
    /// The OS error (`NotFound` when `from` is missing; file systems without
    /// hard links answer with their own error).
    pub fn link_to(&self, from: &str, target: &Dir, to: &str) -> io::Result<bool> {
        match self.dir.hard_link(from, &target.dir, to) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The size of the regular file `name` (not following a link); `None`
    /// when there is no regular file of that name.
    ///
    /// # Errors
    ///
    /// The OS error other than a missing file.
    pub fn file_len(&self, name: &str) -> io::Result<Option<u64>> {
        match self.dir.symlink_metadata(name) {
            Ok(meta) if meta.is_file() => Ok(Some(meta.len())),
            Ok(_) => Ok(None),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The size and modification time of the regular file `name` (not
    /// following a link); `None` when there is no regular file of that name.
    /// The time is `None` where the platform does not keep one.
    ///
    /// # Errors
    ///
    /// The OS error other than a missing file.
    pub fn file_len_and_modified(&self, name: &str) -> io::Result<Option<(u64, Option<std::time::SystemTime>)>> {
        match self.dir.symlink_metadata(name) {
            Ok(meta) if meta.is_file() => Ok(Some((meta.len(), meta.modified().ok().map(cap_std::time::SystemTime::into_std)))),
            Ok(_) => Ok(None),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Removes the file (or link) `name`; `Ok(false)` when there is none.
    ///
    /// # Errors
    ///
    /// The OS error (a directory at `name` is one).
    pub fn remove_file(&self, name: &str) -> io::Result<bool> {
        match self.dir.remove_file_or_symlink(name) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Removes the directory `name` if it is empty; `Ok(false)` when there
    /// is none, it is not empty, or `name` is not a directory (a link is
    /// never followed nor removed).
    ///
    /// # Errors
    ///
    /// Any other OS error.
    pub fn remove_empty_dir(&self, name: &str) -> io::Result<bool> {
        match self.dir.symlink_metadata(name) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Ok(false),
            Err(e) if is_missing(&e) => return Ok(false),
            Err(e) => return Err(e),
        }
        match self.dir.remove_dir(name) {
            Ok(()) => Ok(true),
            Err(e) if is_missing(&e) || is_not_empty(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Removes `name` and everything below it (a link at `name` is removed,
    /// not followed); `Ok(false)` when there is none.
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn remove_all(&self, name: &str) -> io::Result<bool> {
        match self.dir.symlink_metadata(name) {
            Err(e) if is_missing(&e) => Ok(false),
            Err(e) => Err(e),
            Ok(meta) if meta.is_dir() => self.dir.remove_dir_all(name).map(|()| true),
            Ok(_) => self.remove_file(name),
        }
    }

    /// The entries of this directory, in no particular order.
    ///
    /// # Errors
    ///
    /// The OS error of reading the directory.
    pub fn entries(&self) -> io::Result<Vec<Entry>> {
        let mut out = Vec::new();
        for entry in self.dir.entries()? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let kind = if file_type.is_file() {
                EntryKind::File
            } else if file_type.is_dir() {
                EntryKind::Directory
            } else {
                EntryKind::Other
            };
            out.push(Entry { name, kind });
        }
        Ok(out)
    }

    /// Flushes this directory's entries (names created, renamed or removed
    /// in it) to stable storage. A no-op where directories cannot be
    /// fsynced (Windows).
    ///
    /// # Errors
    ///
    /// [`Step::SyncDirectory`] with the OS error.
    pub fn sync(&self) -> Result<(), Error> {
        #[cfg(unix)]
        {
            use rustix::fs::{fsync, openat, Mode, OFlags};
            use std::os::fd::AsFd;
            // The handle may be an `O_PATH` one, which cannot be fsynced: flush
            // through a readable handle of the same directory.
            openat(
                self.dir.as_fd(),
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .and_then(|fd| fsync(&fd))
            .map_err(|e| Error::new(Step::SyncDirectory, &self.path, io::Error::from(e)))
        }
        #[cfg(not(unix))]
        {
            Ok(())
        }
    }

    /// Removes the regular files of this directory whose names are
    /// temporary names of `temps` and that were last modified more than
    /// `older_than` ago; returns how many. Best effort: nothing else is
    /// touched.
    pub fn sweep_stale(&self, temps: &TempNames, older_than: Duration) -> usize {
        let Ok(entries) = self.entries() else {
            return 0;
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries {
            if entry.kind != EntryKind::File || !temps.matches(&entry.name) {
                continue;
            }
            let stale = self
                .dir
                .symlink_metadata(&entry.name)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified.into_std()).ok())
                .is_some_and(|age| age > older_than);
            if stale && self.dir.remove_file(&entry.name).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// Whether this directory has been removed since it was opened (no
    /// entry can be created in it any more).
    #[must_use]
    pub fn is_removed(&self) -> bool {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            rustix::fs::fstat(self.dir.as_fd()).is_ok_and(|st| st.st_nlink == 0)
        }
        #[cfg(not(unix))]
        {
            !self.path.is_dir()
        }
    }

    /// The handle, for the unnamed-file staging of [`crate::Staged`].
    pub(crate) fn cap(&self) -> &CapDir {
        &self.dir
    }
}

/// `create_dir_all` that, with `durable`, flushes each directory it created
/// into its parent.
fn create_dir_all(path: &Path, durable: bool) -> io::Result<()> {
    if path.as_os_str().is_empty() || path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        create_dir_all(parent, durable)?;
    }
    match std::fs::create_dir(path) {
        Ok(()) => {
            if durable {
                let parent = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                Dir::open(parent, false, false)?
                    .sync()
                    .map_err(|e| e.source)?;
            }
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether an error means "no such entry" (`ENOENT`, or `ENOTDIR` for a
/// file where a directory was expected).
pub(crate) fn is_missing(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || is_not_a_directory(e)
}

/// Whether an error means a directory is not empty.
fn is_not_empty(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ENOTEMPTY | libc::EEXIST))
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::DirectoryNotEmpty
    }
}

/// Whether an error means that a path went through something that is not a
/// directory (`ENOTDIR`; `ELOOP` for a link refused on the way).
pub fn is_not_a_directory(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ELOOP))
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::NotADirectory
    }
}

/// Whether opening failed because the entry is something never read (a
/// link, a directory, a device without a reader, a name too long).
fn is_refused(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(
            e.raw_os_error(),
            Some(libc::ELOOP | libc::EISDIR | libc::ENXIO | libc::EMLINK | libc::ENAMETOOLONG)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Whether a `link(2)` failure means the file system has no hard links (as
/// opposed to a real error such as a full disk).
fn links_unsupported(e: &io::Error) -> bool {
    if e.kind() == io::ErrorKind::Unsupported {
        return true;
    }
    #[cfg(unix)]
    {
        matches!(
            e.raw_os_error(),
            Some(libc::EPERM | libc::EOPNOTSUPP | libc::ENOSYS)
        )
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::PermissionDenied
    }
}

/// Device and inode numbers of an open file, as [`Dir::identity`] gives them
/// for a name.
///
/// # Errors
///
/// The OS error of `fstat`.
#[cfg(unix)]
pub fn file_identity(file: &std::fs::File) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata()?;
    Ok((meta.dev(), meta.ino()))
}
