//! The directory handle: atomic replacement, no-clobber publication, reads
//! that refuse links and special files, link-free traversal, sweeps.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use offload_atomic::{Dir, EntryKind, Found, Staged, Step, TempNames, STALE_AFTER};

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

fn root(tmp: &tempfile::TempDir) -> Dir {
    Dir::open(tmp.path(), false, false).unwrap()
}

#[test]
fn replace_overwrites_and_leaves_no_temporary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = root(&tmp);
    for (i, durable) in [(1, false), (2, true)] {
        dir.replace(
            "snapshot_latest.json",
            format!("v{i}").as_bytes(),
            &HIDDEN,
            durable,
        )
        .unwrap();
        assert_eq!(
            fs::read_to_string(tmp.path().join("snapshot_latest.json")).unwrap(),
            format!("v{i}")
        );
    }
    assert_eq!(names_in(tmp.path()), ["snapshot_latest.json"]);
}

#[test]
fn replace_over_a_link_replaces_the_link_not_its_target() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), "keep").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path().join("secret"), tmp.path().join("v")).unwrap();
    root(&tmp).replace("v", b"new", &HIDDEN, false).unwrap();
    assert_eq!(
        fs::read_to_string(outside.path().join("secret")).unwrap(),
        "keep"
    );
    assert_eq!(fs::read_to_string(tmp.path().join("v")).unwrap(), "new");
}

#[test]
fn a_failed_replace_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("taken")).unwrap();
    fs::write(tmp.path().join("taken/x"), "x").unwrap();
    let err = root(&tmp)
        .replace("taken", b"new", &HIDDEN, false)
        .unwrap_err();
    assert_eq!(err.step, Step::Publish);
    assert_eq!(names_in(tmp.path()), ["taken"]);
}

#[test]
fn staged_content_publishes_without_overwriting() {
    for unnamed in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = root(&tmp);
        fs::write(tmp.path().join("a.txt"), b"first").unwrap();
        let staged = Staged::write(&dir, b"second", &PLAIN, false, unnamed).unwrap();
        #[cfg(target_os = "linux")]
        assert_eq!(matches!(staged, Staged::Unnamed(_)), unnamed);
        assert!(!staged.publish_new(&dir, "a.txt").unwrap());
        assert_eq!(fs::read(tmp.path().join("a.txt")).unwrap(), b"first");
        assert!(staged.publish_new(&dir, "b.txt").unwrap());
        drop(staged);
        assert_eq!(fs::read(tmp.path().join("b.txt")).unwrap(), b"second");
        assert_eq!(
            names_in(tmp.path()),
            ["a.txt", "b.txt"],
            "unnamed={unnamed}"
        );
    }
}

#[test]
fn discarded_content_leaves_nothing() {
    for unnamed in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = root(&tmp);
        Staged::write(&dir, b"gone", &PLAIN, false, unnamed)
            .unwrap()
            .discard(&dir);
        assert!(names_in(tmp.path()).is_empty(), "unnamed={unnamed}");
    }
}

#[test]
fn staging_into_a_removed_directory_fails_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("gone");
    fs::create_dir(&path).unwrap();
    let dir = Dir::open(&path, false, false).unwrap();
    fs::remove_dir(&path).unwrap();
    for unnamed in [true, false] {
        let err = Staged::write(&dir, b"x", &PLAIN, false, unnamed).unwrap_err();
        assert_eq!(
            (err.step, err.kind()),
            (Step::CreateTemp, std::io::ErrorKind::NotFound)
        );
        assert!(
            err.to_string()
                .starts_with("failed to create temporary file "),
            "{err}"
        );
    }
    assert!(!path.exists());
}

#[test]
fn subdirectories_are_created_and_never_reached_through_links() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let dir = root(&tmp);
    assert!(dir.subdir(["a", "b"], None).unwrap().is_none());
    let b = dir.subdir(["a", "b"], Some(true)).unwrap().unwrap();
    assert_eq!(b.path(), tmp.path().join("a/b"));
    b.replace("k", b"v", &HIDDEN, true).unwrap();
    assert_eq!(
        dir.subdir(["a", "b"], None)
            .unwrap()
            .unwrap()
            .read_file("k")
            .unwrap(),
        Found::File(b"v".to_vec())
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("link")).unwrap();
        assert!(dir.subdir(["link"], None).unwrap().is_none());
        assert!(dir.subdir(["link", "x"], None).unwrap().is_none());
        let err = dir.subdir(["link", "x"], Some(false)).unwrap_err();
        assert_eq!(err.to_string(), "'link' is a symbolic link");
        assert!(names_in(outside.path()).is_empty());
    }
    fs::write(tmp.path().join("file"), "f").unwrap();
    let err = dir.subdir(["file", "x"], None).unwrap_err();
    assert!(offload_atomic::is_not_a_directory(&err), "{err}");
    assert!(dir.subdir(["file", "x"], Some(false)).is_err());
}

#[test]
fn reads_refuse_links_and_special_files_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = root(&tmp);
    fs::write(tmp.path().join("plain"), "p").unwrap();
    fs::create_dir(tmp.path().join("d")).unwrap();
    assert_eq!(dir.read_file("plain").unwrap(), Found::File(b"p".to_vec()));
    assert_eq!(dir.read_file("d").unwrap(), Found::Directory);
    assert_eq!(dir.read_file("missing").unwrap(), Found::Absent);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(tmp.path().join("plain"), tmp.path().join("link")).unwrap();
        assert_eq!(dir.read_file("link").unwrap(), Found::Absent);
        let fifo = std::ffi::CString::new(tmp.path().join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert_eq!(dir.read_file("fifo").unwrap(), Found::Absent);
        let kinds: Vec<_> = {
            let mut e = dir.entries().unwrap();
            e.sort_by(|a, b| a.name.cmp(&b.name));
            e.into_iter().map(|e| (e.name, e.kind)).collect()
        };
        assert_eq!(
            kinds,
            [
                ("d".to_owned(), EntryKind::Directory),
                ("fifo".to_owned(), EntryKind::Other),
                ("link".to_owned(), EntryKind::Other),
                ("plain".to_owned(), EntryKind::File),
            ]
        );
    }
}

#[test]
fn removals_never_follow_links() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("keep"), "k").unwrap();
    let dir = root(&tmp);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("link")).unwrap();
        assert!(dir.remove_all("link").unwrap());
        assert!(outside.path().join("keep").exists());
    }
    fs::create_dir_all(tmp.path().join("s/t")).unwrap();
    fs::write(tmp.path().join("s/t/f"), "f").unwrap();
    assert!(dir.remove_all("s").unwrap());
    assert!(!dir.remove_all("s").unwrap());
    fs::write(tmp.path().join("f"), "f").unwrap();
    assert!(dir.remove_file("f").unwrap());
    assert!(!dir.remove_file("f").unwrap());
    assert!(names_in(tmp.path()).is_empty());
}

#[test]
fn only_stale_temporaries_of_the_scheme_are_swept() {
    let tmp = tempfile::tempdir().unwrap();
    let age = |name: &str, by: Duration| {
        let path = tmp.path().join(name);
        let file = if path.is_dir() {
            fs::File::open(&path)
        } else {
            fs::File::options().write(true).open(&path)
        };
        file.unwrap().set_modified(SystemTime::now() - by).unwrap();
    };
    for name in [
        ".snapshot_latest.json.1-1.tmp",
        ".snapshot_latest.json.1-2.tmp",
        "snapshot_latest.json.tmp",
        "data",
    ] {
        fs::write(tmp.path().join(name), "x").unwrap();
    }
    for name in [
        ".snapshot_latest.json.1-1.tmp",
        "snapshot_latest.json.tmp",
        "data",
    ] {
        age(name, STALE_AFTER + Duration::from_secs(60));
    }
    fs::create_dir(tmp.path().join(".dir.1-3.tmp")).unwrap();
    age(".dir.1-3.tmp", STALE_AFTER * 2);
    assert_eq!(root(&tmp).sweep_stale(&HIDDEN, STALE_AFTER), 1);
    assert_eq!(
        names_in(tmp.path()),
        [
            ".dir.1-3.tmp",
            ".snapshot_latest.json.1-2.tmp",
            "data",
            "snapshot_latest.json.tmp"
        ]
    );
}

#[test]
fn opening_creates_missing_parents() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("x/y/z");
    assert!(Dir::open(&deep, false, false).is_err());
    for durable in [false, true] {
        Dir::open(&deep, true, durable)
            .unwrap()
            .replace("f", b"1", &HIDDEN, durable)
            .unwrap();
    }
    assert_eq!(fs::read(deep.join("f")).unwrap(), b"1");
}

#[test]
fn open_append_creates_appends_and_refuses_what_is_not_a_regular_file() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let dir = root(&tmp);
    assert_eq!(dir.open_append("log", false).unwrap_err().kind(), std::io::ErrorKind::NotFound);
    dir.open_append("log", true).unwrap().write_all(b"one\n").unwrap();
    dir.open_append("log", true).unwrap().write_all(b"two\n").unwrap();
    assert_eq!(fs::read_to_string(tmp.path().join("log")).unwrap(), "one\ntwo\n");
    fs::create_dir(tmp.path().join("sub")).unwrap();
    assert!(dir.open_append("sub", true).is_err());
    assert!(dir.has_entry("sub").unwrap() && dir.has_entry("log").unwrap());
    assert!(!dir.has_entry("nothing").unwrap());
}

#[cfg(unix)]
#[test]
fn open_append_and_open_read_never_go_through_a_link() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("target");
    fs::write(&target, "keep").unwrap();
    symlink(&target, tmp.path().join("to-file")).unwrap();
    symlink(outside.path().join("missing"), tmp.path().join("dangling")).unwrap();
    let dir = root(&tmp);
    for name in ["to-file", "dangling"] {
        for create in [false, true] {
            let err = dir.open_append(name, create).unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{name}: {err}");
        }
        assert!(dir.open_read(name).unwrap().is_none(), "{name}");
        assert!(dir.has_entry(name).unwrap(), "a dangling link is an entry");
    }
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    assert!(!outside.path().join("missing").exists());
    // A FIFO is neither opened for reading nor waited on for appending.
    let fifo = tmp.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    assert!(dir.open_read("fifo").unwrap().is_none());
    assert!(dir.open_append("fifo", true).is_err());
}

#[cfg(unix)]
#[test]
fn an_entry_s_identity_is_its_open_file_s_until_it_is_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = root(&tmp);
    fs::write(tmp.path().join("journal"), "old").unwrap();
    let file = dir.open_read("journal").unwrap().unwrap();
    let id = offload_atomic::file_identity(&file).unwrap();
    assert_eq!(dir.identity("journal").unwrap(), Some(id));
    dir.replace("journal", b"new", &PLAIN, false).unwrap();
    assert_ne!(dir.identity("journal").unwrap(), Some(id));
    assert_eq!(dir.identity("missing").unwrap(), None);
}
