//! [`FileStamp`]: what tells one version of a file's content from another
//! without reading it, and [`Dir::read_file_stamped`], a read that can be
//! skipped when the caller already holds that version.

use std::io::{self, Read};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::dir::{Dir, Found};

/// How long after a file's last change a further change is sure to carry a
/// different timestamp on file systems with sub-second timestamps: the
/// kernel stamps files from a clock that advances in ticks of up to 10 ms,
/// and some file systems (exFAT) keep 10 ms; 50 ms leaves a margin.
pub const SETTLE_FINE: Duration = Duration::from_millis(50);

/// The same for timestamps in whole seconds (1 s granularity, or 2 s on
/// FAT), recognised by their nanoseconds being zero.
pub const SETTLE_COARSE: Duration = Duration::from_millis(2_100);

/// Device, inode, size, modification time and status-change time of a file,
/// taken from the open handle (`fstat`).
///
/// Any write, truncation, rename over the name or replacement of the file
/// changes at least one of them, provided the change is not made within the
/// same timestamp tick as the change before it: see [`FileStamp::is_settled`].
/// The status-change time (`ctime`) cannot be set back by ordinary processes
/// (unlike the modification time), so a writer that restores `mtime` after
/// rewriting a file in place is still seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileStamp {
    /// Device holding the file.
    pub device: u64,
    /// Inode number.
    pub inode: u64,
    /// Size in bytes.
    pub len: u64,
    /// Last modification, in nanoseconds since the Unix epoch.
    pub modified_ns: i128,
    /// Last status change, in nanoseconds since the Unix epoch.
    pub changed_ns: i128,
}

const NANOS_PER_SECOND: i128 = 1_000_000_000;

impl FileStamp {
    /// The stamp of an open file's metadata; `None` where the platform does
    /// not give device and inode numbers.
    #[cfg(unix)]
    pub(crate) fn of(meta: &cap_std::fs::Metadata) -> Option<Self> {
        use cap_std::fs::MetadataExt;
        let ns = |s: i64, n: i64| i128::from(s) * NANOS_PER_SECOND + i128::from(n);
        Some(FileStamp {
            device: meta.dev(),
            inode: meta.ino(),
            len: meta.size(),
            modified_ns: ns(meta.mtime(), meta.mtime_nsec()),
            changed_ns: ns(meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// The stamp of an open file's metadata; `None` where the platform does
    /// not give device and inode numbers.
    #[cfg(not(unix))]
    pub(crate) fn of(_meta: &cap_std::fs::Metadata) -> Option<Self> {
        None
    }

    /// Whether, seen at `observed` (a time taken after the stamp was), the
    /// file's last change is old enough that any later change must carry
    /// newer timestamps, so the stamp is a safe name for the content read
    /// after it. A change made in the same timestamp tick as the previous
    /// one, within [`SETTLE_FINE`] (or [`SETTLE_COARSE`] for whole-second
    /// timestamps) of it, could leave every field unchanged: such a stamp
    /// is not settled. Timestamps in the future of `observed` (a clock set
    /// back, a file server's clock ahead) are never settled.
    #[must_use]
    pub fn is_settled(&self, observed: SystemTime) -> bool {
        let Ok(since_epoch) = observed.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let observed_ns = i128::try_from(since_epoch.as_nanos()).unwrap_or(i128::MAX);
        let whole_seconds =
            self.modified_ns % NANOS_PER_SECOND == 0 && self.changed_ns % NANOS_PER_SECOND == 0;
        let settle = if whole_seconds {
            SETTLE_COARSE
        } else {
            SETTLE_FINE
        };
        let last_change = self.modified_ns.max(self.changed_ns);
        observed_ns >= last_change.saturating_add(settle.as_nanos() as i128)
    }
}

/// What [`Dir::read_file_stamped`] found at a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StampedFound {
    /// A regular file.
    File {
        /// Its stamp, taken on the open handle before any byte was read
        /// (`None` where the platform has none).
        stamp: Option<FileStamp>,
        /// Whether the stamp was [settled](FileStamp::is_settled) when taken.
        settled: bool,
        /// Its bytes; `None` when the caller said it holds this version.
        content: Option<Vec<u8>>,
    },
    /// A directory.
    Directory,
    /// Nothing that may be read: missing, a symbolic link, a FIFO, a device, ...
    Absent,
}

impl Dir {
    /// [`Dir::read_file`], with the stamp of the open file: `reuse` sees the
    /// stamp first and, when it returns `true` (the caller already holds
    /// what was read from this version), the content is not read. The stamp
    /// is taken before the bytes are read, so a change made while they are
    /// read gives the next call a different stamp.
    ///
    /// # Errors
    ///
    /// The OS error of an existing regular file that cannot be read.
    pub fn read_file_stamped(
        &self,
        name: &str,
        reuse: impl FnOnce(&FileStamp) -> bool,
    ) -> io::Result<StampedFound> {
        let (mut file, meta) = match self.open_regular(name)? {
            Ok(opened) => opened,
            Err(Found::Directory) => return Ok(StampedFound::Directory),
            Err(_) => return Ok(StampedFound::Absent),
        };
        let stamp = FileStamp::of(&meta);
        let settled = stamp.is_some_and(|s| s.is_settled(SystemTime::now()));
        if stamp.as_ref().is_some_and(reuse) {
            return Ok(StampedFound::File {
                stamp,
                settled,
                content: None,
            });
        }
        let mut content = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.read_to_end(&mut content)?;
        Ok(StampedFound::File {
            stamp,
            settled,
            content: Some(content),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(modified_ns: i128, changed_ns: i128) -> FileStamp {
        FileStamp {
            device: 1,
            inode: 2,
            len: 3,
            modified_ns,
            changed_ns,
        }
    }

    fn at(ns: i128) -> SystemTime {
        UNIX_EPOCH + Duration::from_nanos(u64::try_from(ns).unwrap())
    }

    #[test]
    fn settles_after_the_margin_of_its_granularity() {
        let t = 1_700_000_000 * NANOS_PER_SECOND + 123_456_789;
        let s = stamp(t, t);
        assert!(!s.is_settled(at(t)));
        assert!(!s.is_settled(at(t + 49_000_000)));
        assert!(s.is_settled(at(t + 50_000_000)));
        let whole = stamp(t - 123_456_789, t - 123_456_789);
        assert!(!whole.is_settled(at(t + 1_000_000_000)));
        assert!(whole.is_settled(at(t + 2_000_000_000)));
        // The later of the two times counts; a time in the future never settles.
        assert!(!stamp(t - 10_000_000_000, t).is_settled(at(t + 1_000_000)));
        assert!(!s.is_settled(at(t - 1)));
    }

    #[cfg(unix)]
    #[test]
    fn a_held_version_is_not_read_and_a_rewrite_changes_the_stamp() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a"), b"one").unwrap();
        let dir = Dir::open(tmp.path(), false, false).unwrap();
        let StampedFound::File {
            stamp: Some(first),
            content: Some(content),
            ..
        } = dir.read_file_stamped("a", |_| false).unwrap()
        else {
            panic!("expected a file")
        };
        assert_eq!(content, b"one");
        let again = dir.read_file_stamped("a", |s| *s == first).unwrap();
        assert!(matches!(again, StampedFound::File { content: None, .. }));
        // Same size, new content, by replacement and in place.
        std::fs::write(tmp.path().join("b"), b"two").unwrap();
        std::fs::rename(tmp.path().join("b"), tmp.path().join("a")).unwrap();
        let StampedFound::File {
            stamp: Some(second),
            content: Some(content),
            ..
        } = dir.read_file_stamped("a", |s| *s == first).unwrap()
        else {
            panic!("expected a changed file")
        };
        assert_eq!(content, b"two");
        assert_ne!(first, second);
        assert_eq!(
            dir.read_file_stamped("missing", |_| true).unwrap(),
            StampedFound::Absent
        );
        std::fs::create_dir(tmp.path().join("d")).unwrap();
        assert_eq!(
            dir.read_file_stamped("d", |_| true).unwrap(),
            StampedFound::Directory
        );
    }
}
