//! Expiry, sessions, byte budgets, deduplication, stats and cleanup: the same
//! behaviour on the memory and the file store (each test runs on both), plus
//! what only files have (restarts, a second instance, links on disk).

use std::collections::VecDeque;

use bytes::Bytes;
use offload_storage::{
    FileStore, GoneReason, Lifecycle, MemoryStore, NewBlob, Policy, StorageError, Tags,
};

mod common;

use common::subjects;

/// A fixed "now" for the tests (ms since the epoch); no test sleeps.
const T0: u64 = 1_800_000_000_000;

fn put(store: &dyn Lifecycle, key: &str, content: &[u8], tags: Tags<'_>) -> String {
    store.store_blob(new_blob(store, key, content, tags)).unwrap()
}

fn new_blob<'a>(store: &dyn Lifecycle, key: &'a str, content: &[u8], tags: Tags<'a>) -> NewBlob<'a> {
    NewBlob {
        sequence: store.next_sequence(),
        key,
        content: Bytes::copy_from_slice(content),
        content_type: "text/plain",
        tags,
    }
}

fn at(now_ms: u64) -> Tags<'static> {
    Tags { now_ms: Some(now_ms), ..Tags::default() }
}

fn gone_reason(result: Result<offload_storage::Blob, StorageError>) -> Option<GoneReason> {
    match result {
        Err(StorageError::Gone { reason, .. }) => Some(reason),
        other => panic!("expected a gone reference, got {other:?}"),
    }
}

#[test]
fn an_expired_artifact_is_gone_at_once_before_any_sweep() {
    for s in subjects(Policy::default()) {
        let store = &*s.store;
        let r = put(store, "k", b"hello", Tags { ttl_ms: Some(1_000), ..at(T0) });
        let keep = put(store, "forever", b"stays", at(T0));
        assert_eq!(&store.retrieve_at(&r, T0 + 999).unwrap().content[..], b"hello", "{}", s.name);
        let err = store.retrieve_at(&r, T0 + 1_000).unwrap_err();
        assert!(err.is_not_found(), "{}", s.name);
        assert_eq!(err.to_string(), format!("Reference not found (expired): {r}"), "{}", s.name);
        // Still says so afterwards, and an unexpired artifact is untouched.
        assert_eq!(gone_reason(store.retrieve_at(&r, T0 + 1_000)), Some(GoneReason::Expired), "{}", s.name);
        assert!(store.retrieve_at(&keep, T0 + 10_000_000).is_ok(), "{}", s.name);
        // A reference that never existed stays a plain "not found".
        let missing = if s.name == "memory" { "mem_99_x".to_owned() } else { "1_99_x.txt".to_owned() };
        assert!(matches!(store.retrieve_at(&missing, T0), Err(StorageError::NotFound { .. })), "{}", s.name);
    }
}

#[test]
fn the_store_default_ttl_applies_unless_the_artifact_has_its_own() {
    let policy = Policy { default_ttl_ms: Some(60_000), ..Policy::default() };
    for s in subjects(policy) {
        let store = &*s.store;
        let default = put(store, "d", b"d", at(T0));
        let own = put(store, "o", b"o", Tags { ttl_ms: Some(120_000), ..at(T0) });
        assert!(store.retrieve_at(&default, T0 + 59_999).is_ok());
        assert_eq!(gone_reason(store.retrieve_at(&default, T0 + 60_000)), Some(GoneReason::Expired), "{}", s.name);
        assert!(store.retrieve_at(&own, T0 + 119_999).is_ok(), "{}", s.name);
    }
}

#[test]
fn cleanup_removes_exactly_the_expired_and_stats_count_the_live() {
    for s in subjects(Policy::default()) {
        let store = &*s.store;
        for i in 0..10u64 {
            let session = if i % 2 == 0 { "even" } else { "odd" };
            let tags = Tags { ttl_ms: (i < 4).then_some(1_000 + i), session: Some(session), ..at(T0) };
            put(store, &format!("k{i}"), &vec![b'x'; 10 + i as usize], tags);
        }
        let stats = store.stats(T0).unwrap();
        assert_eq!(stats.artifacts, 10, "{}", s.name);
        assert_eq!(stats.bytes, (10..20).sum::<u64>(), "{}", s.name);
        assert_eq!(stats.sessions["even"].artifacts, 5, "{}", s.name);
        assert_eq!(stats.sessions["odd"].bytes, 11 + 13 + 15 + 17 + 19, "{}", s.name);
        // Expired but not swept: no longer counted.
        assert_eq!(store.stats(T0 + 1_002).unwrap().artifacts, 7, "{}", s.name);
        assert_eq!(store.cleanup_expired(T0 + 1_002).unwrap(), 3, "{}", s.name);
        assert_eq!(store.cleanup_expired(T0 + 1_003).unwrap(), 1, "{}", s.name);
        assert_eq!(store.cleanup_expired(T0 + 999_999).unwrap(), 0, "{}", s.name);
        let stats = store.stats(T0 + 999_999).unwrap();
        assert_eq!((stats.artifacts, stats.bytes, stats.stored_bytes), (6, (14..20).sum(), (14..20).sum()), "{}", s.name);
    }
}

#[test]
fn deleting_a_session_removes_its_artifacts_only() {
    for s in subjects(Policy::default()) {
        let store = &*s.store;
        let mine: Vec<String> =
            (0..3).map(|i| put(store, &format!("m{i}"), b"m", Tags { session: Some("mine"), ..at(T0) })).collect();
        let theirs = put(store, "t", b"t", Tags { session: Some("theirs"), ..at(T0) });
        let none = put(store, "n", b"n", at(T0));
        assert_eq!(store.delete_session("mine").unwrap(), 3, "{}", s.name);
        assert_eq!(store.delete_session("mine").unwrap(), 0, "{}", s.name);
        for r in &mine {
            assert!(matches!(store.retrieve_at(r, T0), Err(StorageError::NotFound { .. })), "{}", s.name);
        }
        assert!(store.retrieve_at(&theirs, T0).is_ok());
        assert!(store.retrieve_at(&none, T0).is_ok());
        let stats = store.stats(T0).unwrap();
        assert_eq!(stats.artifacts, 2, "{}", s.name);
        assert!(!stats.sessions.contains_key("mine"), "{}", s.name);
    }
}

#[test]
fn the_budget_evicts_the_least_recently_used_and_says_so() {
    let policy = Policy { max_bytes: Some(300), ..Policy::default() };
    for s in subjects(policy) {
        let store = &*s.store;
        let a = put(store, "a", &[b'a'; 100], at(T0));
        let b = put(store, "b", &[b'b'; 100], at(T0));
        let c = put(store, "c", &[b'c'; 100], at(T0));
        // Reading `a` makes `b` the least recently used.
        store.retrieve_at(&a, T0).unwrap();
        let d = put(store, "d", &[b'd'; 100], at(T0));
        let err = store.retrieve_at(&b, T0).unwrap_err();
        assert_eq!(err.to_string(), format!("Reference not found (evicted to stay under maxBytes): {b}"), "{}", s.name);
        for r in [&a, &c, &d] {
            assert!(store.retrieve_at(r, T0).is_ok(), "{}: {r}", s.name);
        }
        assert_eq!(store.stats(T0).unwrap().stored_bytes, 300, "{}", s.name);
        // Two slots needed: the two least recently used go (c, then a).
        let big = put(store, "big", &[b'e'; 200], at(T0));
        assert_eq!(gone_reason(store.retrieve_at(&c, T0)), Some(GoneReason::Evicted), "{}", s.name);
        assert_eq!(gone_reason(store.retrieve_at(&a, T0)), Some(GoneReason::Evicted), "{}", s.name);
        assert!(store.retrieve_at(&d, T0).is_ok() && store.retrieve_at(&big, T0).is_ok(), "{}", s.name);
    }
}

#[test]
fn content_larger_than_the_whole_budget_is_refused_and_nothing_is_evicted() {
    let policy = Policy { max_bytes: Some(300), ..Policy::default() };
    for s in subjects(policy) {
        let store = &*s.store;
        let kept = put(store, "kept", &[b'k'; 250], at(T0));
        let err = store.store_blob(new_blob(store, "huge", &[b'h'; 301], at(T0))).unwrap_err();
        assert!(matches!(err, StorageError::TooLarge { bytes: 301, max_bytes: 300 }), "{}: {err:?}", s.name);
        assert!(err.to_string().contains("maxBytes"), "{err}");
        assert!(store.retrieve_at(&kept, T0).is_ok(), "{}", s.name);
        assert_eq!(store.stats(T0).unwrap().artifacts, 1, "{}", s.name);
    }
}

#[test]
fn identical_content_is_stored_once_and_freed_with_its_last_reference() {
    let policy = Policy { dedup: true, ..Policy::default() };
    for s in subjects(policy) {
        let store = &*s.store;
        let body = vec![b'z'; 1_000];
        let by_session = put(store, "a", &body, Tags { session: Some("s1"), ..at(T0) });
        let expiring = put(store, "b", &body, Tags { ttl_ms: Some(10), ..at(T0) });
        let plain = put(store, "c", &body, Tags { ttl_ms: Some(20), ..at(T0) });
        let other = put(store, "d", b"different", at(T0));
        assert_eq!(
            [&by_session, &expiring, &plain].iter().collect::<std::collections::HashSet<_>>().len(),
            3,
            "{}: references stay distinct",
            s.name
        );
        let stats = store.stats(T0).unwrap();
        assert_eq!((stats.bytes, stats.stored_bytes), (3_009, 1_009), "{}", s.name);
        assert_eq!(store.delete_session("s1").unwrap(), 1);
        assert_eq!(store.cleanup_expired(T0 + 10).unwrap(), 1);
        // The last reference still reads the shared content in full.
        assert_eq!(&store.retrieve_at(&plain, T0 + 10).unwrap().content[..], &body[..], "{}", s.name);
        assert_eq!(store.stats(T0 + 10).unwrap().stored_bytes, 1_009, "{}", s.name);
        // Its removal frees the bytes.
        assert_eq!(store.cleanup_expired(T0 + 20).unwrap(), 1);
        let stats = store.stats(T0 + 20).unwrap();
        assert_eq!((stats.artifacts, stats.stored_bytes), (1, 9), "{}", s.name);
        assert!(store.retrieve_at(&other, T0 + 20).is_ok());
    }
}

#[test]
fn dedup_and_the_budget_evict_until_shared_bytes_are_really_freed() {
    let policy = Policy { dedup: true, max_bytes: Some(250), ..Policy::default() };
    for s in subjects(policy) {
        let store = &*s.store;
        let body = [b'q'; 100];
        let first = put(store, "a", &body, at(T0));
        let second = put(store, "b", &body, at(T0));
        // Identical content costs nothing more.
        assert_eq!(store.stats(T0).unwrap().stored_bytes, 100, "{}", s.name);
        let x = put(store, "x", &[b'x'; 100], at(T0));
        // 200 held; 100 more only fit once both users of `q…` are evicted.
        let y = put(store, "y", &[b'y'; 100], at(T0));
        assert_eq!(gone_reason(store.retrieve_at(&first, T0)), Some(GoneReason::Evicted), "{}", s.name);
        assert_eq!(gone_reason(store.retrieve_at(&second, T0)), Some(GoneReason::Evicted), "{}", s.name);
        assert!(store.retrieve_at(&x, T0).is_ok() && store.retrieve_at(&y, T0).is_ok(), "{}", s.name);
        assert_eq!(store.stats(T0).unwrap().stored_bytes, 200, "{}", s.name);
    }
}

/// A seeded random walk of stores and retrievals against a model of
/// least-recently-used eviction: both stores keep exactly the model's set.
#[test]
fn lru_eviction_matches_a_model_over_a_random_walk() {
    let policy = Policy { max_bytes: Some(1_000), ..Policy::default() };
    for s in subjects(policy) {
        let store = &*s.store;
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // Model: (reference, size) from least to most recently used.
        let mut model: VecDeque<(String, u64)> = VecDeque::new();
        let mut all = Vec::new();
        for step in 0..400 {
            if next() % 3 == 0 && !model.is_empty() {
                let i = (next() % model.len() as u64) as usize;
                let (r, size) = model.remove(i).unwrap();
                assert!(store.retrieve_at(&r, T0).is_ok(), "{} step {step}: {r}", s.name);
                model.push_back((r, size));
            } else {
                let size = 1 + next() % 400;
                let r = put(store, &format!("k{step}"), &vec![b'r'; size as usize], at(T0));
                while model.iter().map(|(_, n)| n).sum::<u64>() + size > 1_000 {
                    model.pop_front();
                }
                model.push_back((r.clone(), size));
                all.push(r);
            }
        }
        for r in &all {
            let live = model.iter().any(|(m, _)| m == r);
            let result = store.retrieve_at(r, T0);
            assert_eq!(result.is_ok(), live, "{}: {r}", s.name);
            // Reading refreshes the order; put the model in the same order.
            if live {
                let i = model.iter().position(|(m, _)| m == r).unwrap();
                let entry = model.remove(i).unwrap();
                model.push_back(entry);
            }
        }
        assert_eq!(store.stats(T0).unwrap().stored_bytes, model.iter().map(|(_, n)| n).sum::<u64>(), "{}", s.name);
    }
}

#[test]
fn a_zero_budget_is_refused() {
    let memory = MemoryStore::new(None).unwrap();
    assert!(matches!(
        memory.set_policy(Policy { max_bytes: Some(0), ..Policy::default() }),
        Err(StorageError::InvalidArgument(_))
    ));
    let file = FileStore::new("/nonexistent-never-created");
    assert!(file.set_policy(Policy { max_bytes: Some(0), ..Policy::default() }).is_err());
}

mod files {
    use super::*;
    use std::path::Path;

    fn file_store(dir: &Path, policy: Policy) -> FileStore {
        let store = FileStore::new(dir.to_str().unwrap());
        store.set_policy(policy).unwrap();
        store
    }

    #[test]
    fn ttl_sessions_sizes_and_sharing_survive_a_restart() {
        let tmp = tempfile::tempdir().unwrap();
        let policy = Policy { dedup: true, ..Policy::default() };
        let first = file_store(tmp.path(), policy);
        let body = vec![b'w'; 500];
        let short = put(&first, "short", &body, Tags { ttl_ms: Some(1_000), session: Some("s"), ..at(T0) });
        let long = put(&first, "long", &body, Tags { ttl_ms: Some(9_000), session: Some("s"), ..at(T0) });
        let before = first.stats(T0).unwrap();
        drop(first);
        let reopened = file_store(tmp.path(), policy);
        assert_eq!(reopened.stats(T0).unwrap(), before);
        assert_eq!(before.stored_bytes, 500);
        assert_eq!(gone_reason(reopened.retrieve_at(&short, T0 + 1_000)), Some(GoneReason::Expired));
        assert_eq!(&reopened.retrieve_at(&long, T0 + 1_000).unwrap().content[..], &body[..]);
        drop(reopened);
        // A third instance after both expired: nothing expired comes back.
        let third = file_store(tmp.path(), policy);
        assert_eq!(third.cleanup_expired(T0 + 9_000).unwrap(), 1);
        assert_eq!(third.stats(T0 + 9_000).unwrap().artifacts, 0);
        let names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
        // The shared content went with its last artifact.
        assert_eq!(std::fs::read_dir(tmp.path().join(".blobs")).unwrap().count(), 0);
    }

    #[test]
    fn a_second_instance_sees_the_first_ones_removals_and_reasons() {
        let tmp = tempfile::tempdir().unwrap();
        let a = file_store(tmp.path(), Policy::default());
        let b = file_store(tmp.path(), Policy::default());
        let r = put(&a, "k", b"v", Tags { ttl_ms: Some(5), ..at(T0) });
        let s = put(&a, "s", b"v", Tags { session: Some("gone"), ..at(T0) });
        // `b` never saw the store and sweeps it.
        assert_eq!(b.cleanup_expired(T0 + 5).unwrap(), 1);
        assert_eq!(a.cleanup_expired(T0 + 5).unwrap(), 0, "already removed by the other instance");
        assert_eq!(gone_reason(a.retrieve_at(&r, T0)), Some(GoneReason::Expired));
        assert_eq!(b.delete_session("gone").unwrap(), 1);
        assert!(matches!(a.retrieve_at(&s, T0), Err(StorageError::NotFound { .. })));
        assert_eq!(a.stats(T0).unwrap().artifacts, 0);
    }

    #[test]
    fn opening_a_directory_sweeps_what_expired_meanwhile() {
        let tmp = tempfile::tempdir().unwrap();
        let first = file_store(tmp.path(), Policy::default());
        let r = put(&first, "k", b"v", Tags { ttl_ms: Some(5), ..at(T0) });
        let file = Path::new(&r).file_name().unwrap().to_owned();
        drop(first);
        assert!(tmp.path().join(&file).exists());
        let second = file_store(tmp.path(), Policy::default());
        // Any first use opens the directory; at T0 + 5 the artifact is due.
        let _ = second.retrieve_at("1_1_unrelated.txt", T0 + 5);
        assert!(!tmp.path().join(&file).exists());
    }

    #[test]
    fn files_removed_by_hand_are_dropped_from_the_stats_by_a_sweep() {
        let tmp = tempfile::tempdir().unwrap();
        let store = file_store(tmp.path(), Policy::default());
        let r = put(&store, "k", b"12345", Tags { session: Some("s"), ..at(T0) });
        put(&store, "other", b"1", at(T0));
        std::fs::remove_file(&r).unwrap();
        assert_eq!(store.cleanup_expired(T0).unwrap(), 0);
        let stats = store.stats(T0).unwrap();
        assert_eq!((stats.artifacts, stats.bytes), (1, 1));
        assert!(stats.sessions.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn deduplicated_artifacts_are_links_to_one_file_under_their_own_names() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let store = file_store(tmp.path(), Policy { dedup: true, ..Policy::default() });
        let refs: Vec<String> = (0..3).map(|i| put(&store, &format!("k{i}"), b"same bytes", at(T0))).collect();
        let inodes: std::collections::HashSet<u64> =
            refs.iter().map(|r| std::fs::metadata(r).unwrap().ino()).collect();
        assert_eq!(inodes.len(), 1);
        for r in &refs {
            // What an agent's `cat` on the path would see.
            assert_eq!(std::fs::read(r).unwrap(), b"same bytes");
            assert!(r.ends_with(".txt"));
        }
        assert_eq!(std::fs::read_dir(tmp.path().join(".blobs")).unwrap().count(), 1);
    }

    #[test]
    fn artifacts_of_an_older_journal_count_with_their_size_on_disk() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("1700000000000_1_old.txt"), b"0123456789").unwrap();
        std::fs::write(
            tmp.path().join(".metadata.journal"),
            b"{\"f\":\"1700000000000_1_old.txt\",\"t\":\"text/plain\"}\n",
        )
        .unwrap();
        let store = file_store(tmp.path(), Policy { max_bytes: Some(15), ..Policy::default() });
        assert_eq!(store.stats(T0).unwrap().bytes, 10);
        // The old artifact is the least recently used: evicted for the new one.
        let r = put(&store, "new", b"0123456789", at(T0));
        assert!(store.retrieve_at(&r, T0).is_ok());
        assert_eq!(
            gone_reason(store.retrieve_at("1700000000000_1_old.txt", T0)),
            Some(GoneReason::Evicted)
        );
    }
}
