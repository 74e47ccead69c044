//! Atomic file replacement: write a temporary file next to the target, then
//! rename it over the target. Readers (and a process restarted after a crash)
//! see the previous content or the new one, never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::SnapshotError;

/// Process-wide counter for temporary file names.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Suffix of temporary files. The SDK's listing pattern ends in `\.json$`, so
/// these are never taken for snapshots.
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// Content written next to its target under a hidden, unique name.
#[derive(Debug)]
pub(crate) struct Staged {
    temp: PathBuf,
}

impl Staged {
    /// Creates the target's directory if needed and writes `content` to a new
    /// hidden file in it; with `durable`, the data is flushed to disk.
    pub(crate) fn write(
        target: &Path,
        content: &[u8],
        durable: bool,
    ) -> Result<Self, SnapshotError> {
        let dir = target.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| SnapshotError::io("create directory", dir, e))?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = dir.join(format!(
            ".{name}.{}-{}{TEMP_SUFFIX}",
            std::process::id(),
            TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| {
                file.write_all(content)?;
                if durable {
                    file.sync_all()?;
                }
                Ok(())
            });
        match written {
            Ok(()) => Ok(Self { temp }),
            Err(e) => {
                let _ = fs::remove_file(&temp);
                Err(SnapshotError::io("write snapshot", target, e))
            }
        }
    }

    /// Renames the staged file over `target` (atomic on one file system);
    /// with `durable`, the directory entry is flushed too.
    pub(crate) fn publish(self, target: &Path, durable: bool) -> Result<(), SnapshotError> {
        if let Err(e) = fs::rename(&self.temp, target) {
            self.discard();
            return Err(SnapshotError::io("write snapshot", target, e));
        }
        if durable {
            if let Some(dir) = target.parent() {
                sync_dir(dir).map_err(|e| SnapshotError::io("sync directory", dir, e))?;
            }
        }
        Ok(())
    }

    /// Removes the staged file (best effort).
    pub(crate) fn discard(self) {
        let _ = fs::remove_file(&self.temp);
    }
}

/// Temporary files older than this are left over from a crashed writer.
pub(crate) const STALE_TEMP_AGE: Duration = Duration::from_secs(60 * 60);

/// Removes temporary files of crashed writers (hidden, ending in
/// [`TEMP_SUFFIX`], older than [`STALE_TEMP_AGE`]) from `dir`. Best effort.
pub(crate) fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with('.') && name.ends_with(TEMP_SUFFIX)) {
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
        if meta.is_file() && stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Flushes a directory's entries to disk.
fn sync_dir(dir: &Path) -> io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/snapshot_latest.json");
        for (i, durable) in [(1, false), (2, true)] {
            let content = format!("v{i}");
            Staged::write(&target, content.as_bytes(), durable)
                .unwrap()
                .publish(&target, durable)
                .unwrap();
            assert_eq!(fs::read_to_string(&target).unwrap(), content);
        }
        let names: Vec<_> = fs::read_dir(target.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn only_stale_hidden_temps_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(".snapshot_latest.json.1-1.tmp");
        let fresh = dir.path().join(".snapshot_latest.json.1-2.tmp");
        let sdk_temp = dir.path().join("snapshot_latest.json.tmp");
        for p in [&old, &fresh, &sdk_temp] {
            fs::write(p, "x").unwrap();
        }
        let past = SystemTime::now() - STALE_TEMP_AGE - Duration::from_secs(60);
        File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(past)
            .unwrap();
        File::options()
            .write(true)
            .open(&sdk_temp)
            .unwrap()
            .set_modified(past)
            .unwrap();
        remove_stale_temps(dir.path());
        assert!(!old.exists());
        assert!(fresh.exists());
        assert!(sdk_temp.exists(), "files of other writers are left alone");
    }

    #[test]
    fn discarded_content_never_reaches_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("x.json");
        fs::write(&target, "old").unwrap();
        Staged::write(&target, b"new", false).unwrap().discard();
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
