//! `FileStore`: round trips, names, references, metadata and failure modes.

mod common;

use std::fs;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{all_names, file_name, s, visible_names};
use offload_storage::{BlobStore, Bytes, FileStore, ReferenceStyle, StorageError};

fn is_sdk_name(name: &str, counter: u64, rest: &str) -> bool {
    let mut parts = name.splitn(3, '_');
    let ts = parts.next().unwrap_or_default();
    ts.len() >= 13
        && ts.bytes().all(|b| b.is_ascii_digit())
        && parts.next() == Some(counter.to_string().as_str())
        && parts.next() == Some(rest)
}

#[test]
fn round_trips_text_json_binary_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("artifacts");
    let store = FileStore::new(s(&dir));
    let binary: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        ("text", b"hello\nworld".to_vec(), "text/plain", "text.txt"),
        (
            "json",
            b"{\"a\":[1,2,3]}".to_vec(),
            "application/json",
            "json.json",
        ),
        (
            "bin",
            binary,
            "application/octet-stream",
            "bin.octet-stream",
        ),
        ("empty", Vec::new(), "text/plain", "empty.txt"),
        ("img", vec![0x89, b'P', b'N', b'G'], "image/png", "img.png"),
    ];
    for (i, (key, content, ct, suffix)) in cases.iter().enumerate() {
        let r = store.store(key, Bytes::from(content.clone()), ct).unwrap();
        let name = file_name(&r);
        assert_eq!(r, format!("{}/{}", s(&dir), name));
        assert!(is_sdk_name(name, i as u64 + 1, suffix), "{name}");
        assert_eq!(fs::read(dir.join(name)).unwrap(), *content);
        let blob = store.retrieve(&r).unwrap();
        assert_eq!(blob.content, content[..]);
        assert_eq!(blob.content_type, *ct);
    }
    assert_eq!(visible_names(&dir).len(), cases.len());
    assert!(!all_names(&dir).iter().any(|n| n.starts_with(".tmp-")));
}

#[test]
fn constructor_does_no_io_and_directory_is_created_lazily() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a/b/c");
    let store = FileStore::new(s(&dir));
    assert!(!dir.exists());
    let r = store
        .store("k", Bytes::from_static(b"x"), "text/plain")
        .unwrap();
    assert!(dir.is_dir());
    // The directory disappearing after first use is repaired on the next store.
    fs::remove_dir_all(&dir).unwrap();
    assert!(store.retrieve(&r).unwrap_err().is_not_found());
    let r2 = store
        .store("k", Bytes::from_static(b"y"), "application/json")
        .unwrap();
    assert_eq!(&store.retrieve(&r2).unwrap().content[..], b"y");
    // The recreated directory has its own journal with the new record.
    let reopened = FileStore::new(s(&dir));
    assert_eq!(
        reopened.retrieve(&r2).unwrap().content_type,
        "application/json"
    );
}

#[test]
fn reference_styles_for_absolute_dirs() {
    let tmp = tempfile::tempdir().unwrap();
    let base = s(tmp.path()).to_owned();
    let with_slash = format!("{base}/art//");
    let store = FileStore::new(&with_slash);
    let joined = store
        .store_with_style(
            "k",
            Bytes::from_static(b"1"),
            "text/plain",
            ReferenceStyle::Joined,
        )
        .unwrap();
    let concat = store
        .store_with_style(
            "k",
            Bytes::from_static(b"2"),
            "text/plain",
            ReferenceStyle::Concatenated,
        )
        .unwrap();
    assert_eq!(joined, format!("{base}/art/{}", file_name(&joined)));
    assert_eq!(concat, format!("{base}/art/{}", file_name(&concat)));
    for (r, body) in [(&joined, b"1"), (&concat, b"2")] {
        assert_eq!(&store.retrieve(r).unwrap().content[..], body);
        // Bare file name, and the reference with a dotted directory part.
        assert_eq!(&store.retrieve(file_name(r)).unwrap().content[..], body);
        let dotted = format!("{base}/./art/../art/{}", file_name(r));
        assert_eq!(&store.retrieve(&dotted).unwrap().content[..], body);
    }
    let plain = FileStore::new(&format!("{base}/art"));
    assert!(plain
        .store("k", Bytes::new(), "text/plain")
        .unwrap()
        .starts_with(&format!("{base}/art/")));
    assert_eq!(&plain.retrieve(&concat).unwrap().content[..], b"2");
}

#[test]
fn sanitized_keys_stay_inside_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("art");
    let store = FileStore::new(s(&dir));
    let cases = [
        ("../../etc/passwd", "____etc_passwd.txt"),
        ("a\\b/c", "a_b_c.txt"),
        ("tool😀call", "tool__call.txt"),
        ("héllo wörld", "h_llo_w_rld.txt"),
        ("...", "_..txt"),
        ("", ".txt"),
    ];
    for (i, (key, suffix)) in cases.iter().enumerate() {
        let r = store
            .store(key, Bytes::from(key.to_string()), "text/plain")
            .unwrap();
        let name = file_name(&r);
        assert!(is_sdk_name(name, i as u64 + 1, suffix), "{key:?} -> {name}");
        assert_eq!(store.retrieve(&r).unwrap().content, key.as_bytes());
    }
    assert_eq!(visible_names(&dir).len(), cases.len());
    assert_eq!(all_names(tmp.path()), vec!["art".to_owned()]);
}

#[test]
fn unusual_content_types_make_safe_extensions() {
    let tmp = tempfile::tempdir().unwrap();
    let store = FileStore::new(s(tmp.path()));
    for (ct, ext) in [
        ("image/svg+xml", ".svg+xml"),
        ("text/plain; charset=utf-8", ".plain; charset=utf-8"),
        ("noslash", ".noslash"),
        ("a/b\\c\0d", ".b_c_d"),
    ] {
        let r = store.store("k", Bytes::from_static(b"x"), ct).unwrap();
        assert!(file_name(&r).ends_with(ext), "{ct:?} -> {r}");
        assert_eq!(store.retrieve(&r).unwrap().content_type, ct);
    }
}

#[test]
fn very_long_keys_are_shortened_uniquely() {
    let tmp = tempfile::tempdir().unwrap();
    let store = FileStore::new(s(tmp.path()));
    let prefix = "k".repeat(5000);
    let a = store
        .store(
            &format!("{prefix}-a"),
            Bytes::from_static(b"A"),
            "application/json",
        )
        .unwrap();
    let b = store
        .store(
            &format!("{prefix}-b"),
            Bytes::from_static(b"B"),
            "application/json",
        )
        .unwrap();
    let (na, nb) = (file_name(&a), file_name(&b));
    assert!(
        na.len() <= 255 && nb.len() <= 255,
        "{} {}",
        na.len(),
        nb.len()
    );
    assert!(na.ends_with(".json"));
    // Same counter position: the names must differ by more than the counter.
    assert_ne!(
        na.split_once('_').unwrap().1.split_once('_').unwrap().1,
        nb.split_once('_').unwrap().1.split_once('_').unwrap().1
    );
    assert_eq!(&store.retrieve(&a).unwrap().content[..], b"A");
    assert_eq!(&store.retrieve(&b).unwrap().content[..], b"B");
    assert_eq!(store.retrieve(&b).unwrap().content_type, "application/json");
    let emoji = "😀".repeat(2000);
    let e = store
        .store(&emoji, Bytes::from_static(b"E"), "text/plain")
        .unwrap();
    assert!(file_name(&e).len() <= 255);
    assert_eq!(&store.retrieve(&e).unwrap().content[..], b"E");
}

#[test]
fn reads_a_directory_written_by_the_sdk() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // What the SDK's FileStorage leaves behind.
    let metadata = r#"{"1700000000000_1_tool-a.txt":"text/plain","1700000000001_2_tool-b.json":"application/json"}"#;
    fs::write(dir.join(".metadata.json"), metadata).unwrap();
    fs::write(dir.join("1700000000000_1_tool-a.txt"), "alpha").unwrap();
    fs::write(dir.join("1700000000001_2_tool-b.json"), "{\"b\":2}").unwrap();
    fs::write(dir.join("1700000000002_3_tool-c.png"), [0u8, 1, 2]).unwrap();

    let store = FileStore::new(s(dir));
    let a = store
        .retrieve(&format!("{}/1700000000000_1_tool-a.txt", s(dir)))
        .unwrap();
    assert_eq!(
        (&a.content[..], a.content_type.as_str()),
        (&b"alpha"[..], "text/plain")
    );
    let b = store.retrieve("1700000000001_2_tool-b.json").unwrap();
    assert_eq!(
        (&b.content[..], b.content_type.as_str()),
        (&b"{\"b\":2}"[..], "application/json")
    );
    let c = store.retrieve("1700000000002_3_tool-c.png").unwrap();
    assert_eq!(
        c.content_type, "application/octet-stream",
        "unknown types default like the SDK"
    );

    let r = store
        .store("new", Bytes::from_static(b"n"), "text/markdown")
        .unwrap();
    assert_eq!(
        fs::read_to_string(dir.join(".metadata.json")).unwrap(),
        metadata,
        "SDK metadata untouched"
    );
    let reopened = FileStore::new(s(dir));
    assert_eq!(reopened.retrieve(&r).unwrap().content_type, "text/markdown");
    assert_eq!(
        reopened
            .retrieve("1700000000001_2_tool-b.json")
            .unwrap()
            .content_type,
        "application/json"
    );
}

#[test]
fn malformed_sdk_metadata_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join(".metadata.json"), "{not json").unwrap();
    fs::write(tmp.path().join("1_1_a.txt"), "a").unwrap();
    let store = FileStore::new(s(tmp.path()));
    assert_eq!(
        store.retrieve("1_1_a.txt").unwrap().content_type,
        "application/octet-stream"
    );
}

#[test]
fn content_types_survive_a_new_instance_via_the_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let first = FileStore::new(s(dir));
    let types = [
        "text/plain",
        "application/json",
        "image/svg+xml",
        "text/x \"quoted\"\nline",
    ];
    let refs: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, ct)| {
            first
                .store(&format!("k{i}"), Bytes::from(format!("c{i}")), ct)
                .unwrap()
        })
        .collect();
    drop(first);
    let journal = fs::read_to_string(dir.join(".metadata.journal")).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    assert_eq!(lines.len(), types.len());
    for ((line, r), ct) in lines.iter().zip(&refs).zip(types) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["f"], file_name(r));
        assert_eq!(v["t"], ct);
    }
    let second = FileStore::new(s(dir));
    for (i, (r, ct)) in refs.iter().zip(types).enumerate() {
        let blob = second.retrieve(r).unwrap();
        assert_eq!(blob.content_type, ct);
        assert_eq!(blob.content, format!("c{i}").as_bytes());
    }
}

#[test]
fn types_appended_by_another_instance_are_picked_up() {
    let tmp = tempfile::tempdir().unwrap();
    let reader = FileStore::new(s(tmp.path()));
    let own = reader
        .store("own", Bytes::from_static(b"o"), "text/plain")
        .unwrap();
    assert_eq!(reader.retrieve(&own).unwrap().content_type, "text/plain");
    let writer = FileStore::new(s(tmp.path()));
    let theirs = writer
        .store("theirs", Bytes::from_static(b"t"), "application/xml")
        .unwrap();
    assert_eq!(
        reader.retrieve(&theirs).unwrap().content_type,
        "application/xml"
    );
}

#[test]
fn torn_and_malformed_journal_lines_are_tolerated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("1_1_a.txt"), "a").unwrap();
    fs::write(dir.join("2_2_b.json"), "b").unwrap();
    fs::write(dir.join("3_3_c.csv"), "c").unwrap();
    let journal = concat!(
        "{\"f\":\"1_1_a.txt\",\"t\":\"text/plain\"}\n",
        "garbage line\n",
        "{\"f\":\"2_2_b.json\",\"t\":\"application/json\"}\n",
        "{\"f\":\"3_3_c.csv\",\"t\":\"te", // torn by a crash
    );
    fs::write(dir.join(".metadata.journal"), journal).unwrap();
    let store = FileStore::new(s(dir));
    assert_eq!(
        store.retrieve("1_1_a.txt").unwrap().content_type,
        "text/plain"
    );
    assert_eq!(
        store.retrieve("2_2_b.json").unwrap().content_type,
        "application/json"
    );
    assert_eq!(
        store.retrieve("3_3_c.csv").unwrap().content_type,
        "application/octet-stream"
    );
    // A record appended after the torn line is still readable by anyone.
    let r = store
        .store("d", Bytes::from_static(b"d"), "text/csv")
        .unwrap();
    assert_eq!(store.retrieve(&r).unwrap().content_type, "text/csv");
    let reopened = FileStore::new(s(dir));
    assert_eq!(reopened.retrieve(&r).unwrap().content_type, "text/csv");
    assert_eq!(
        reopened.retrieve("2_2_b.json").unwrap().content_type,
        "application/json"
    );
    assert!(fs::read_to_string(dir.join(".metadata.journal"))
        .unwrap()
        .starts_with(journal));
}

#[test]
fn name_collisions_never_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Occupy every name a first store of key "k" could get in the next seconds.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    for ms in now..now + 5000 {
        fs::write(dir.join(format!("{ms}_1_k.txt")), "precreated").unwrap();
    }
    let store = FileStore::new(s(dir));
    let r = store
        .store("k", Bytes::from_static(b"mine"), "text/plain")
        .unwrap();
    let name = file_name(&r);
    assert!(is_sdk_name(name, 2, "k.txt"), "{name}");
    assert_eq!(&store.retrieve(&r).unwrap().content[..], b"mine");
    let names = visible_names(dir);
    assert_eq!(names.len(), 5001);
    for n in names.iter().filter(|n| n.as_str() != name) {
        assert_eq!(
            fs::read(dir.join(n)).unwrap(),
            b"precreated",
            "{n} was overwritten"
        );
    }
    assert!(!all_names(dir).iter().any(|n| n.starts_with(".tmp-")));
}

#[test]
fn durable_mode_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let store = FileStore::new(s(tmp.path())).with_durable(true);
    assert!(store.is_durable());
    let r = store
        .store("k", Bytes::from_static(b"durable"), "text/plain")
        .unwrap();
    assert_eq!(&store.retrieve(&r).unwrap().content[..], b"durable");
    assert_eq!(
        FileStore::new(s(tmp.path()))
            .retrieve(&r)
            .unwrap()
            .content_type,
        "text/plain"
    );
}

#[test]
fn stale_temp_files_are_removed_on_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let old = dir.join(".tmp-1-1");
    let fresh = dir.join(".tmp-1-2");
    fs::write(&old, "old").unwrap();
    fs::write(&fresh, "fresh").unwrap();
    let two_hours_ago = SystemTime::now() - Duration::from_secs(2 * 3600);
    fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();
    let store = FileStore::new(s(dir));
    assert!(
        old.exists() && fresh.exists(),
        "constructor must not touch the directory"
    );
    assert!(store.retrieve("missing.txt").unwrap_err().is_not_found());
    assert!(!old.exists());
    assert!(fresh.exists());
}

#[test]
fn invalid_directories_are_rejected() {
    for dir in ["", "a\0b"] {
        let store = FileStore::new(dir);
        assert!(matches!(
            store.store("k", Bytes::new(), "text/plain"),
            Err(StorageError::InvalidArgument(_))
        ));
        assert!(matches!(
            store.retrieve("x"),
            Err(StorageError::InvalidArgument(_))
        ));
    }
}

#[test]
fn directory_under_a_regular_file_is_an_io_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "x").unwrap();
    let store = FileStore::new(s(&file.join("art")));
    let err = store
        .store("k", Bytes::from_static(b"x"), "text/plain")
        .unwrap_err();
    assert!(matches!(err, StorageError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains(s(&file)), "{err}");
}

#[cfg(unix)]
#[test]
fn read_only_directory_gives_io_error_and_keeps_existing_artifacts() {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::Arc;

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ro");
    let store = Arc::new(FileStore::new(s(&dir)));
    let before = store
        .store("before", Bytes::from_static(b"kept"), "text/plain")
        .unwrap();
    let journal_before = fs::read(dir.join(".metadata.journal")).unwrap();
    let names_before = all_names(&dir);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();

    let attempt = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || {
            // Root ignores permission bits; give up that power on this thread
            // only (the file-system uid and its capabilities are per thread).
            // SAFETY: setfsuid has no memory-safety preconditions.
            if unsafe { libc::geteuid() } == 0 {
                unsafe { libc::setfsuid(65534) };
            }
            store.store("after", Bytes::from_static(b"lost"), "text/plain")
        })
        .join()
        .unwrap()
    };
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();

    let err = attempt.unwrap_err();
    match &err {
        StorageError::Io { source, .. } => {
            assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied)
        }
        other => panic!("expected Io, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(s(&dir)) && message.contains("ermission denied"),
        "{message}"
    );
    assert_eq!(all_names(&dir), names_before, "no partial files");
    assert_eq!(
        fs::read(dir.join(".metadata.journal")).unwrap(),
        journal_before
    );
    assert_eq!(&store.retrieve(&before).unwrap().content[..], b"kept");
}
