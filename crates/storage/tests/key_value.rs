//! The unified key-value API of both stores: normalised keys, sorted
//! listings, and the file layout shared with the SDK's `LocalFileStorage`.

use std::fs;

use offload_storage::{BlobStore, Bytes, FileStore, KeyValueStore, MemoryStore, StorageError};

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn exercise(store: &dyn KeyValueStore) {
    store.write("//a//b/", b("1")).unwrap();
    store.write("a/c", b("2")).unwrap();
    store.write("ab", b("3")).unwrap();
    store.write("a/c", b("2b")).unwrap();
    assert_eq!(store.read("a/b").unwrap(), Some(b("1")));
    assert_eq!(store.read("/a/c/").unwrap(), Some(b("2b")));
    assert_eq!(store.read("missing").unwrap(), None);
    assert_eq!(store.list("").unwrap(), ["a/b", "a/c", "ab"]);
    assert_eq!(store.list("a").unwrap(), ["a/b", "a/c", "ab"]);
    assert_eq!(store.list("a/").unwrap(), ["a/b", "a/c"]);
    assert_eq!(store.list("/a//c").unwrap(), ["a/c"]);
    assert!(store.delete("a/b").unwrap());
    assert!(!store.delete("a/b").unwrap());
    assert_eq!(store.list("").unwrap(), ["a/c", "ab"]);
    for bad in ["", "//", "a/../b", "a\\b"] {
        assert!(
            matches!(store.write(bad, b("x")), Err(StorageError::InvalidKey(_))),
            "{bad}"
        );
        assert!(
            matches!(store.read(bad), Err(StorageError::InvalidKey(_))),
            "{bad}"
        );
    }
    assert!(matches!(
        store.list("../x"),
        Err(StorageError::InvalidKey(_))
    ));
}

#[test]
fn memory_store_has_the_sdk_semantics() {
    exercise(&MemoryStore::default());
}

#[test]
fn file_store_has_the_sdk_semantics() {
    let dir = tempfile::tempdir().unwrap();
    exercise(&FileStore::new(dir.path().to_str().unwrap()));
}

#[test]
fn keys_are_files_under_the_directory_as_the_sdk_lays_them_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().to_str().unwrap());
    store.write("sessions/abc/snapshot.json", b("{}")).unwrap();
    store.write("top", b("t")).unwrap();
    assert_eq!(
        fs::read(dir.path().join("sessions/abc/snapshot.json")).unwrap(),
        b"{}"
    );
    assert_eq!(fs::read(dir.path().join("top")).unwrap(), b"t");
    // Written by someone else (the SDK's LocalFileStorage), read by us.
    fs::create_dir_all(dir.path().join("x/y")).unwrap();
    fs::write(dir.path().join("x/y/z"), b"zz").unwrap();
    fs::write(dir.path().join("x/y/z.__strands_tmp_1234"), b"partial").unwrap();
    assert_eq!(store.read("x/y/z").unwrap(), Some(b("zz")));
    assert_eq!(store.list("x").unwrap(), ["x/y/z"]);
    // No temporary files remain after writes.
    let names: Vec<_> = fs::read_dir(dir.path().join("sessions/abc"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["snapshot.json"]);
}

#[test]
fn artifacts_and_keys_share_a_directory_without_colliding() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().to_str().unwrap());
    let reference = store.store("tool_0", b("artifact"), "text/plain").unwrap();
    store.write("offloader/tool_0", b("value")).unwrap();
    assert_eq!(store.list("").unwrap(), ["offloader/tool_0"]);
    assert_eq!(store.retrieve(&reference).unwrap().content, b("artifact"));
    let artifact_name = reference.rsplit('/').next().unwrap().to_owned();
    for key in [
        artifact_name.as_str(),
        ".metadata.journal",
        ".metadata.json",
        ".tmp-1-1",
    ] {
        assert!(
            matches!(store.write(key, b("x")), Err(StorageError::InvalidKey(_))),
            "{key}"
        );
        assert!(
            matches!(store.read(key), Err(StorageError::InvalidKey(_))),
            "{key}"
        );
        assert!(
            matches!(store.delete(key), Err(StorageError::InvalidKey(_))),
            "{key}"
        );
    }
    assert_eq!(store.retrieve(&reference).unwrap().content, b("artifact"));
}

#[test]
fn io_failures_carry_the_sdk_messages() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().to_str().unwrap());
    store.write("a/b", b("1")).unwrap();
    let err = store.write("a/b/c", b("x")).unwrap_err();
    assert_eq!(err.to_string(), "Failed to write 'a/b/c' to local storage");
    let err = store.read("a").unwrap_err();
    assert_eq!(err.to_string(), "Failed to read 'a' from local storage");
    let err = store.delete("a").unwrap_err();
    assert_eq!(err.to_string(), "Failed to delete 'a' from local storage");
    let long = "k".repeat(300);
    let err = store.write(&long, b("x")).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("Failed to write '{long}' to local storage")
    );
}

#[cfg(unix)]
#[test]
fn keys_never_go_through_symbolic_links() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), b"s").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("file-link"))
        .unwrap();
    let store = FileStore::new(dir.path().to_str().unwrap());
    assert_eq!(store.read("link/secret").unwrap(), None);
    assert_eq!(store.read("file-link").unwrap(), None);
    assert!(store.write("link/new", b("x")).is_err());
    assert!(!outside.path().join("new").exists());
    assert!(!store.delete("link/secret").unwrap());
    assert!(outside.path().join("secret").exists());
    assert!(store.list("").unwrap().is_empty());
    assert!(store.list("link/").unwrap().is_empty());
}

#[test]
fn concurrent_writes_of_one_key_leave_one_whole_value() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(FileStore::new(dir.path().to_str().unwrap()));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    store
                        .write("k/v", Bytes::from(vec![b'0' + i; 4096]))
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let value = store.read("k/v").unwrap().unwrap();
    assert_eq!(value.len(), 4096);
    assert!(value.iter().all(|&c| c == value[0]));
    assert_eq!(store.list("").unwrap(), ["k/v"]);
}

#[test]
fn scoped_operations_act_as_the_sdk_namespaced_local_file_storage() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().to_str().unwrap());
    store.write_in("/ns//one/", "k", b"1").unwrap();
    store.write_in("ns/one", "two/deep/k", b"2").unwrap();
    assert_eq!(
        fs::read(dir.path().join("ns/one/two/deep/k")).unwrap(),
        b"2"
    );
    assert_eq!(store.list_in("ns/one/", "").unwrap(), ["k", "two/deep/k"]);
    assert_eq!(store.list_in("ns/one", "two/").unwrap(), ["two/deep/k"]);
    assert_eq!(store.list("").unwrap(), ["ns/one/k", "ns/one/two/deep/k"]);
    assert_eq!(store.read_in("ns/one/two", "deep/k").unwrap(), Some(b("2")));
    // Messages name the key relative to the namespace, as the SDK's do.
    let err = store.write_in("ns/one", "../x", b"x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid storage key '../x': '..' path segments are not allowed"
    );
    let err = store.write_in("ns", "one", b"x").unwrap_err();
    assert_eq!(err.to_string(), "Failed to write 'one' to local storage");
    // Artifact-shaped names are only reserved at the top of the directory.
    store.write_in("ns", "1700000000000_1_x.txt", b"x").unwrap();
    assert!(store.write_in("", "1700000000000_1_x.txt", b"x").is_err());
    assert!(store.delete_in("ns/one", "k").unwrap());
    assert!(store.list_in("../", "").is_err());
}

#[test]
fn dot_segments_name_the_directory_they_are_in() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().to_str().unwrap());
    store.write("x/./y", b("1")).unwrap();
    assert_eq!(fs::read(dir.path().join("x/y")).unwrap(), b"1");
    assert_eq!(store.read("x/y").unwrap(), Some(b("1")));
    assert_eq!(store.list("").unwrap(), ["x/y"]);
    // `.` alone resolves to no key at all.
    let err = store.write(".", b("x")).unwrap_err();
    assert_eq!(err.to_string(), "Storage key must not be empty");
}
