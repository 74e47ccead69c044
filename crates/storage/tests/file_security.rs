//! `FileStore::retrieve` never reads outside the artifact directory.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{file_name, s};
use offload_storage::{BlobStore, Bytes, FileStore, StorageError};

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    dir: PathBuf,
    store: FileStore,
    good: String,
}

/// `<root>/art` holds one artifact; `<root>/secret`, `<root>/art2/secret`
/// and `<root>/art/1_1_sub/inner` are bait that must stay unreachable.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let dir = root.join("art");
    let store = FileStore::new(s(&dir));
    let good = store
        .store("ok", Bytes::from_static(b"good"), "text/plain")
        .unwrap();
    fs::write(root.join("secret"), "outside").unwrap();
    fs::create_dir(root.join("art2")).unwrap();
    fs::write(root.join("art2/secret"), "sibling").unwrap();
    fs::create_dir(dir.join("1_1_sub")).unwrap();
    fs::write(dir.join("1_1_sub/inner"), "nested").unwrap();
    fs::write(dir.join(".hidden"), "hidden").unwrap();
    Fixture {
        _tmp: tmp,
        root,
        dir,
        store,
        good,
    }
}

fn assert_rejected(store: &FileStore, reference: &str) {
    match store.retrieve(reference) {
        Err(StorageError::NotFound { reference: r }) => assert_eq!(r, reference),
        other => panic!("{reference:?} must be NotFound, got {other:?}"),
    }
    let message = store.retrieve(reference).unwrap_err().to_string();
    assert_eq!(message, format!("Reference not found: {reference}"));
}

#[test]
fn the_valid_reference_works() {
    let f = fixture();
    assert_eq!(&f.store.retrieve(&f.good).unwrap().content[..], b"good");
    let via_parent = format!("{}/../art/{}", s(&f.dir), file_name(&f.good));
    assert_eq!(&f.store.retrieve(&via_parent).unwrap().content[..], b"good");
    let dotted = format!("./{}", file_name(&f.good));
    assert_eq!(&f.store.retrieve(&dotted).unwrap().content[..], b"good");
}

#[test]
fn parent_escapes_are_rejected() {
    let f = fixture();
    let dir = s(&f.dir);
    // Bait with the same name as a real artifact, one level up.
    let n = file_name(&f.good);
    fs::write(f.root.join(n), "outside").unwrap();
    assert_rejected(&f.store, &format!("../{n}"));
    assert_rejected(&f.store, &format!("{dir}/../{n}"));
    assert_rejected(&f.store, &format!("{}/{n}", s(&f.root)));
    for r in [
        "../secret".to_owned(),
        "../../secret".to_owned(),
        format!("{dir}/../secret"),
        format!("{dir}/sub/../../secret"),
        "../art2/secret".to_owned(),
        "..".to_owned(),
        format!("{dir}/.."),
        "../../../../../../../../etc/passwd".to_owned(),
    ] {
        assert_rejected(&f.store, &r);
    }
}

#[test]
fn absolute_paths_elsewhere_and_siblings_are_rejected() {
    let f = fixture();
    let root = s(&f.root);
    for r in [
        format!("{root}/secret"),
        format!("{root}/art2/secret"),
        format!("{root}/art2/{}", file_name(&f.good)),
        format!("{root}/ar/{}", file_name(&f.good)),
        "/etc/passwd".to_owned(),
        format!("/{}", file_name(&f.good)),
    ] {
        assert_rejected(&f.store, &r);
    }
    // Same file name as a real artifact, but in the sibling directory.
    fs::write(f.root.join("art2").join(file_name(&f.good)), "sibling copy").unwrap();
    assert_rejected(&f.store, &format!("{root}/art2/{}", file_name(&f.good)));
}

#[test]
fn subdirectories_and_directories_are_rejected() {
    let f = fixture();
    let dir = s(&f.dir);
    for r in [
        format!("{dir}/1_1_sub/inner"),
        "1_1_sub/inner".to_owned(),
        "1_1_sub".to_owned(),
        format!("{dir}/1_1_sub"),
        format!("{dir}/"),
        "".to_owned(),
        "/".to_owned(),
    ] {
        assert_rejected(&f.store, &r);
    }
    let n = file_name(&f.good);
    fs::write(f.dir.join("1_1_sub").join(n), "nested copy").unwrap();
    assert_rejected(&f.store, &format!("1_1_sub/{n}"));
    assert_rejected(&f.store, &format!("{dir}/sub/{n}"));
}

#[test]
fn hidden_and_internal_files_are_rejected() {
    let f = fixture();
    let dir = s(&f.dir);
    assert!(f.dir.join(".metadata.journal").exists());
    fs::write(f.dir.join(".tmp-1-1"), "in flight").unwrap();
    fs::write(f.dir.join(".metadata.json"), "{}").unwrap();
    for r in [
        ".hidden",
        ".metadata.journal",
        ".metadata.json",
        ".tmp-1-1",
        &format!("{dir}/.hidden"),
        &format!("{dir}/.metadata.journal"),
    ] {
        assert_rejected(&f.store, r);
    }
}

#[test]
fn nul_bytes_are_rejected() {
    let f = fixture();
    assert_rejected(&f.store, &format!("{}\0", f.good));
    assert_rejected(&f.store, &format!("{}\0/../secret", s(&f.dir)));
    assert_rejected(&f.store, "\0");
}

#[cfg(unix)]
#[test]
fn symlinks_are_rejected() {
    use std::os::unix::fs::symlink;
    let f = fixture();
    let dir = s(&f.dir);
    symlink(f.root.join("secret"), f.dir.join("1_1_link-out")).unwrap();
    symlink(f.dir.join(file_name(&f.good)), f.dir.join("1_1_link-in")).unwrap();
    symlink(&f.root, f.dir.join("1_1_dirlink")).unwrap();
    symlink("nowhere", f.dir.join("1_1_dangling")).unwrap();
    for r in [
        "1_1_link-out".to_owned(),
        format!("{dir}/1_1_link-out"),
        "1_1_link-in".to_owned(),
        "1_1_dirlink".to_owned(),
        format!("{dir}/1_1_dirlink/secret"),
        "1_1_dangling".to_owned(),
    ] {
        assert_rejected(&f.store, &r);
    }
}

#[cfg(unix)]
#[test]
fn symlinked_subdirectory_in_reference_is_not_followed() {
    use std::os::unix::fs::symlink;
    let f = fixture();
    // `<dir>/up/..` would resolve physically to `<root>`, lexically to <dir>:
    // only <dir>/<name> is ever opened.
    symlink(f.root.join("art2"), f.dir.join("up")).unwrap();
    let r = format!("{}/up/../secret", s(&f.dir));
    assert_rejected(&f.store, &r);
    fs::write(f.dir.join("1_1_secret-in-dir"), "mine").unwrap();
    let r = format!("{}/up/../1_1_secret-in-dir", s(&f.dir));
    assert_eq!(&f.store.retrieve(&r).unwrap().content[..], b"mine");
}

#[cfg(unix)]
#[test]
fn fifos_are_rejected_without_blocking() {
    let f = fixture();
    let fifo = f.dir.join("1_1_pipe");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    assert_rejected(&f.store, "1_1_pipe");
}

#[test]
fn missing_files_are_not_found() {
    let f = fixture();
    assert_rejected(&f.store, "1_1_missing.txt");
    assert_rejected(&f.store, &format!("{}/1_1_missing.txt", s(&f.dir)));
    assert!(Path::new(&f.good).exists());
}

/// The store's own files planted as symbolic links: the journal (to a file
/// outside, to a path that does not exist) and the SDK's `.metadata.json`.
#[cfg(unix)]
mod planted_links {
    use super::*;
    use offload_storage::{Lifecycle, Policy};
    use std::os::unix::fs::symlink;

    /// An empty artifact directory next to `outside` (an existing file) and
    /// `missing` (a path nothing exists at).
    struct Planted {
        _tmp: tempfile::TempDir,
        dir: PathBuf,
        outside: PathBuf,
        missing: PathBuf,
    }

    const OUTSIDE: &str = "{\"f\":\"1_1_planted.txt\",\"t\":\"text/secret\"}\n";

    fn planted() -> Planted {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("art");
        fs::create_dir(&dir).unwrap();
        let outside = tmp.path().join("outside.log");
        fs::write(&outside, OUTSIDE).unwrap();
        let missing = tmp.path().join("created-through-a-link");
        Planted { dir, outside, missing, _tmp: tmp }
    }

    fn outside_unchanged(p: &Planted) {
        assert_eq!(fs::read_to_string(&p.outside).unwrap(), OUTSIDE, "the file outside was written through the link");
        assert!(!p.missing.exists(), "a file was created through the link");
    }

    #[test]
    fn a_journal_linked_to_a_file_outside_is_never_written_or_read() {
        let p = planted();
        symlink(&p.outside, p.dir.join(".metadata.journal")).unwrap();
        fs::write(p.dir.join("1_1_planted.txt"), "planted").unwrap();
        let store = FileStore::new(s(&p.dir));
        // Not read: the planted record's content type is not taken.
        assert_eq!(store.retrieve("1_1_planted.txt").unwrap().content_type, "application/octet-stream");
        // Not written: the store fails and leaves no artifact behind.
        assert!(store.store("k", Bytes::from_static(b"v"), "text/plain").is_err());
        let _ = store.remove_artifacts(&["1_1_planted.txt".to_owned()], None);
        let _ = store.cleanup_expired(u64::MAX);
        outside_unchanged(&p);
        assert!(fs::symlink_metadata(p.dir.join(".metadata.journal")).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_journal_linked_to_a_missing_path_creates_nothing() {
        let p = planted();
        symlink(&p.missing, p.dir.join(".metadata.journal")).unwrap();
        let store = FileStore::new(s(&p.dir));
        store.set_policy(Policy { default_ttl_ms: Some(1), ..Policy::default() }).unwrap();
        assert!(store.store("k", Bytes::from_static(b"v"), "text/plain").is_err());
        let _ = store.cleanup_expired(u64::MAX);
        let _ = store.stats(0);
        outside_unchanged(&p);
        let left: Vec<String> = common::visible_names(&p.dir);
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn the_sdk_metadata_linked_outside_is_never_read() {
        let p = planted();
        fs::write(&p.outside, "{\"1_1_planted.txt\":\"text/secret\"}").unwrap();
        symlink(&p.outside, p.dir.join(".metadata.json")).unwrap();
        fs::write(p.dir.join("1_1_planted.txt"), "planted").unwrap();
        let store = FileStore::new(s(&p.dir));
        assert_eq!(store.retrieve("1_1_planted.txt").unwrap().content_type, "application/octet-stream");
        assert!(store.list_artifacts().unwrap().is_empty());
        // Storing still works (the link is only refused, not an error).
        let r = store.store("k", Bytes::from_static(b"v"), "text/plain").unwrap();
        assert_eq!(&store.retrieve(&r).unwrap().content[..], b"v");
        assert_eq!(fs::read_to_string(&p.outside).unwrap(), "{\"1_1_planted.txt\":\"text/secret\"}");
    }

    #[test]
    fn a_journal_replaced_by_a_link_later_is_not_followed() {
        let p = planted();
        let store = FileStore::new(s(&p.dir));
        let r = store.store("k", Bytes::from_static(b"v"), "text/plain").unwrap();
        fs::remove_file(p.dir.join(".metadata.journal")).unwrap();
        symlink(&p.outside, p.dir.join(".metadata.journal")).unwrap();
        // Another instance opening the directory now, and this one going on.
        let other = FileStore::new(s(&p.dir));
        assert!(other.store("k2", Bytes::from_static(b"v2"), "text/plain").is_err());
        let _ = store.store("k3", Bytes::from_static(b"v3"), "text/plain");
        let _ = store.remove_artifacts(&[common::file_name(&r).to_owned()], None);
        outside_unchanged(&p);
    }
}
