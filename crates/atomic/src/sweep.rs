//! Removal of temporary files that crashed writers left behind.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::names::TempNames;

/// Age after which a temporary file is taken for a crashed writer's: no write
/// takes an hour between creating its file and publishing it.
pub const STALE_AFTER: Duration = Duration::from_secs(60 * 60);

/// Removes the regular files of `dir` whose names are temporary names of
/// `names` and that were last modified more than `older_than` ago; returns
/// how many it removed. Best effort: unreadable entries are skipped, and
/// nothing else in `dir` is touched.
pub fn sweep_stale(dir: &Path, names: &TempNames, older_than: Duration) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| names.matches(n)) {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let stale = meta
            .modified()
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > older_than);
        if meta.file_type().is_file() && stale && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    const HIDDEN: TempNames = TempNames::around_target(".", ".", ".tmp");

    fn age(path: &Path, by: Duration) {
        let past = SystemTime::now() - by;
        let file = if path.is_dir() {
            File::open(path)
        } else {
            File::options().write(true).open(path)
        };
        file.unwrap().set_modified(past).unwrap();
    }

    #[test]
    fn only_stale_temporaries_of_the_scheme_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(".snapshot_latest.json.1-1.tmp");
        let fresh = dir.path().join(".snapshot_latest.json.1-2.tmp");
        let sdk_temp = dir.path().join("snapshot_latest.json.tmp");
        let data = dir.path().join("snapshot_latest.json");
        for p in [&old, &fresh, &sdk_temp, &data] {
            fs::write(p, "x").unwrap();
        }
        for p in [&old, &sdk_temp, &data] {
            age(p, STALE_AFTER + Duration::from_secs(60));
        }
        fs::create_dir(dir.path().join(".dir.1-3.tmp")).unwrap();
        age(&dir.path().join(".dir.1-3.tmp"), STALE_AFTER * 2);
        assert_eq!(sweep_stale(dir.path(), &HIDDEN, STALE_AFTER), 1);
        assert!(!old.exists());
        assert!(fresh.exists());
        assert!(sdk_temp.exists(), "files of other writers are left alone");
        assert!(data.exists());
        assert!(
            dir.path().join(".dir.1-3.tmp").is_dir(),
            "directories are left alone"
        );
        assert_eq!(
            sweep_stale(&dir.path().join("missing"), &HIDDEN, STALE_AFTER),
            0
        );
    }
}
