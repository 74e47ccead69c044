//! Listing artifacts for an operator and removing them by name: the same
//! behaviour on the memory and the file store (each test runs on both),
//! plus what only a shared directory has (records written by another
//! instance, files without a record, names that would leave the directory).

use bytes::Bytes;
use offload_storage::{BlobStore, 
    ArtifactInfo, FileStore, GoneReason, Lifecycle, NewBlob, Policy, StorageError,
    Tags,
};
use proptest::prelude::*;

mod common;

use common::subjects;

/// A fixed "now" for the tests (ms since the epoch); no test sleeps.
const T0: u64 = 1_800_000_000_000;

fn put(
    store: &dyn Lifecycle,
    key: &str,
    content: &[u8],
    content_type: &str,
    tags: Tags<'_>,
) -> String {
    let blob = NewBlob {
        sequence: store.next_sequence(),
        key,
        content: Bytes::copy_from_slice(content),
        content_type,
        tags,
    };
    store.store_blob(blob).unwrap()
}

fn at(now_ms: u64) -> Tags<'static> {
    Tags {
        now_ms: Some(now_ms),
        ..Tags::default()
    }
}

fn names(listing: &[ArtifactInfo]) -> Vec<&str> {
    listing.iter().map(|a| a.name.as_str()).collect()
}

#[test]
fn a_listing_shows_every_artifact_oldest_first_and_removes_nothing() {
    for s in subjects(Policy {
        dedup: true,
        ..Policy::default()
    }) {
        let store = &*s.store;
        let late = put(
            store,
            "late",
            b"{\"a\":1}",
            "application/json",
            Tags {
                session: Some("s1"),
                ..at(T0 + 20)
            },
        );
        let early = put(
            store,
            "early",
            b"0123456789",
            "text/plain",
            Tags {
                ttl_ms: Some(5),
                ..at(T0)
            },
        );
        let twin = put(
            store,
            "twin",
            b"0123456789",
            "text/plain",
            Tags {
                session: Some("s2"),
                ..at(T0 + 10)
            },
        );
        for _ in 0..2 {
            let listed = store.list_artifacts().unwrap();
            let refs: Vec<&str> = listed.iter().map(|a| a.reference.as_str()).collect();
            assert_eq!(refs, [&early, &twin, &late], "{}", s.name);
            let e = &listed[0];
            assert_eq!(
                (e.bytes, e.content_type.as_str(), e.session.as_deref()),
                (10, "text/plain", None),
                "{}",
                s.name
            );
            assert_eq!(
                (e.created_ms, e.expires_ms),
                (Some(T0), Some(T0 + 5)),
                "{}",
                s.name
            );
            assert!(e.expired(T0 + 5) && !e.expired(T0 + 4));
            assert_eq!(
                (listed[1].session.as_deref(), listed[1].bytes),
                (Some("s2"), 10),
                "{}",
                s.name
            );
            assert_eq!(listed[2].content_type, "application/json", "{}", s.name);
            assert_eq!(listed[2].expires_ms, None, "{}", s.name);
        }
        // The expired artifact is still there to be seen; a retrieve then removes it.
        assert!(
            matches!(
                store.retrieve_at(&early, T0 + 100),
                Err(StorageError::Gone { .. })
            ),
            "{}",
            s.name
        );
        assert_eq!(store.list_artifacts().unwrap().len(), 2, "{}", s.name);
    }
}

#[test]
fn removal_by_name_checks_expiry_again_and_skips_what_is_not_held() {
    for s in subjects(Policy::default()) {
        let store = &*s.store;
        let short = put(
            store,
            "short",
            b"a",
            "text/plain",
            Tags {
                ttl_ms: Some(10),
                ..at(T0)
            },
        );
        let long = put(
            store,
            "long",
            b"b",
            "text/plain",
            Tags {
                ttl_ms: Some(1_000),
                ..at(T0)
            },
        );
        let forever = put(store, "forever", b"c", "text/plain", at(T0));
        let listed = store.list_artifacts().unwrap();
        let mut asked: Vec<String> = names(&listed).into_iter().map(str::to_owned).collect();
        asked.extend([
            "nope".to_owned(),
            "../escape".to_owned(),
            String::new(),
            ".metadata.journal".to_owned(),
        ]);
        // Only what is expired at the time given goes, and it goes as expired.
        assert_eq!(
            store.remove_artifacts(&asked, Some(T0 + 10)).unwrap(),
            1,
            "{}",
            s.name
        );
        assert!(matches!(
            store.retrieve_at(&short, T0),
            Err(StorageError::Gone {
                reason: GoneReason::Expired,
                ..
            })
        ));
        assert!(store.retrieve_at(&long, T0).is_ok(), "{}", s.name);
        // Twice is harmless.
        assert_eq!(
            store.remove_artifacts(&asked, Some(T0 + 10)).unwrap(),
            0,
            "{}",
            s.name
        );
        // Without a time, every name held goes, as a plain deletion.
        assert_eq!(
            store.remove_artifacts(&asked, None).unwrap(),
            2,
            "{}",
            s.name
        );
        for r in [&long, &forever] {
            assert!(
                matches!(store.retrieve_at(r, T0), Err(StorageError::NotFound { .. })),
                "{} {r}",
                s.name
            );
        }
        assert!(store.list_artifacts().unwrap().is_empty(), "{}", s.name);
        if let Some(dir) = &s.dir {
            assert!(
                dir.path().join(".metadata.journal").is_file(),
                "the journal is not an artifact"
            );
        }
    }
}

#[test]
fn an_operators_store_lists_and_refuses_what_expired_but_removes_nothing() {
    // Stored an hour ago in real time with a one-second TTL: expired for every clock here.
    let tmp = tempfile::tempdir().unwrap();
    let past = lifecycle_now() - 3_600_000;
    let writer = FileStore::new(tmp.path().to_str().unwrap());
    let r = put(&writer, "k", b"old", "text/plain", Tags { ttl_ms: Some(1_000), ..at(past) });
    drop(writer);
    let operator = FileStore::new(tmp.path().to_str().unwrap()).keeping_expired();
    assert!(matches!(
        operator.retrieve(&r),
        Err(StorageError::Gone { reason: GoneReason::Expired, .. })
    ));
    assert!(operator.stats(lifecycle_now()).is_ok());
    assert_eq!(operator.list_artifacts().unwrap().len(), 1, "refusing it left it in place");
    assert!(tmp.path().join(r.rsplit('/').next().unwrap()).is_file());
    // A default store sweeps it when it opens the directory: the control.
    let agent = FileStore::new(tmp.path().to_str().unwrap());
    assert!(agent.retrieve(&r).is_err());
    assert!(agent.list_artifacts().unwrap().is_empty());
}

fn lifecycle_now() -> u64 {
    offload_storage::lifecycle::system_now_ms()
}

#[test]
fn another_instance_sees_the_listing_and_its_removals() {
    let tmp = tempfile::tempdir().unwrap();
    let writer = FileStore::new(tmp.path().to_str().unwrap());
    let r = put(
        &writer,
        "k",
        b"payload",
        "text/csv",
        Tags {
            ttl_ms: Some(50),
            session: Some("s"),
            ..at(T0)
        },
    );
    let operator = FileStore::new(tmp.path().to_str().unwrap());
    let listed = operator.list_artifacts().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].reference, r);
    assert_eq!(
        (
            listed[0].content_type.as_str(),
            listed[0].session.as_deref()
        ),
        ("text/csv", Some("s"))
    );
    // Stored after the operator's listing: its removal still sees the record.
    let later = put(
        &writer,
        "later",
        b"x",
        "text/plain",
        Tags {
            ttl_ms: Some(1),
            ..at(T0)
        },
    );
    let later_name = later.rsplit('/').next().unwrap().to_owned();
    assert_eq!(
        operator
            .remove_artifacts(&[later_name], Some(T0 + 1))
            .unwrap(),
        1
    );
    assert!(matches!(
        writer.retrieve_at(&later, T0),
        Err(StorageError::Gone {
            reason: GoneReason::Expired,
            ..
        })
    ));
    assert!(writer.retrieve_at(&r, T0).is_ok());
}

#[test]
fn files_without_a_record_or_removed_by_hand_are_not_listed_and_old_records_get_their_size_and_time(
) {
    let tmp = tempfile::tempdir().unwrap();
    // An artifact of a journal that recorded neither size nor creation.
    std::fs::write(tmp.path().join("1700000000000_1_old.txt"), b"0123456789").unwrap();
    std::fs::write(
        tmp.path().join(".metadata.journal"),
        b"{\"f\":\"1700000000000_1_old.txt\",\"t\":\"text/plain\"}\n{\"f\":\"1700000000000_2_gone.txt\",\"t\":\"text/plain\"}\n",
    )
    .unwrap();
    // A file nobody recorded (a writer killed before its journal line).
    std::fs::write(tmp.path().join("1700000000000_3_orphan.txt"), b"x").unwrap();
    std::fs::create_dir(tmp.path().join("1700000000000_4_dir.txt")).unwrap();
    let store = FileStore::new(tmp.path().to_str().unwrap());
    let listed = store.list_artifacts().unwrap();
    assert_eq!(names(&listed), ["1700000000000_1_old.txt"]);
    assert_eq!(listed[0].bytes, 10);
    let modified = std::fs::metadata(tmp.path().join("1700000000000_1_old.txt"))
        .unwrap()
        .modified()
        .unwrap();
    let modified_ms = modified
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert_eq!(listed[0].created_ms, Some(modified_ms));
    // Removal takes recorded names only: the orphan and the directory stay.
    let asked = [
        "1700000000000_3_orphan.txt",
        "1700000000000_4_dir.txt",
        "1700000000000_1_old.txt",
    ]
    .map(String::from);
    assert_eq!(store.remove_artifacts(&asked, None).unwrap(), 1);
    assert!(tmp.path().join("1700000000000_3_orphan.txt").is_file());
    assert!(tmp.path().join("1700000000000_4_dir.txt").is_dir());
    assert!(!tmp.path().join("1700000000000_1_old.txt").exists());
}

#[test]
fn hostile_names_never_reach_outside_the_directory() {
    let outer = tempfile::tempdir().unwrap();
    let dir = outer.path().join("artifacts");
    std::fs::create_dir(&dir).unwrap();
    let victim = outer.path().join("victim.txt");
    std::fs::write(&victim, b"keep").unwrap();
    let store = FileStore::new(dir.to_str().unwrap());
    let kept = put(&store, "k", b"v", "text/plain", at(T0));
    let hostile: Vec<String> = [
        "../victim.txt",
        victim.to_str().unwrap(),
        "..\\victim.txt",
        "C:\\victim.txt",
        "\\\\server\\share\\victim.txt",
        ".",
        "..",
        ".metadata.journal",
        ".blobs",
        "victim.txt\0",
        "",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(store.remove_artifacts(&hostile, None).unwrap(), 0);
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert!(store.retrieve_at(&kept, T0).is_ok());
    assert!(dir.join(".metadata.journal").is_file());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever the lifetimes and the time of the sweep, removing every
    /// listed name "only if expired" leaves exactly the unexpired ones,
    /// on both stores.
    #[test]
    fn removing_only_the_expired_leaves_exactly_the_live(
        ttls in proptest::collection::vec(proptest::option::of(0u64..100), 0..24),
        sweep_at in 0u64..120,
    ) {
        for s in subjects(Policy::default()) {
            let store = &*s.store;
            let refs: Vec<(String, Option<u64>)> = ttls
                .iter()
                .enumerate()
                .map(|(i, ttl)| (put(store, &format!("k{i}"), b"body", "text/plain", Tags { ttl_ms: *ttl, ..at(T0) }), *ttl))
                .collect();
            let listed = store.list_artifacts().unwrap();
            prop_assert_eq!(listed.len(), refs.len());
            let asked: Vec<String> = names(&listed).into_iter().map(str::to_owned).collect();
            let expected = refs.iter().filter(|(_, ttl)| ttl.is_some_and(|t| t <= sweep_at)).count();
            prop_assert_eq!(store.remove_artifacts(&asked, Some(T0 + sweep_at)).unwrap(), expected);
            for (r, ttl) in &refs {
                let live = ttl.is_none_or(|t| t > sweep_at);
                prop_assert_eq!(store.retrieve_at(r, T0).is_ok(), live, "{} {}", s.name, r);
            }
            prop_assert_eq!(store.list_artifacts().unwrap().len(), refs.len() - expected);
        }
    }
}
