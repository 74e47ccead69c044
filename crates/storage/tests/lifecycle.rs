//! Expiry, sessions, byte budgets, deduplication, stats and cleanup: the same
//! behaviour on the memory and the file store (each test runs on both), plus
//! what only files have (restarts, a second instance, links on disk).

use std::collections::VecDeque;

use bytes::Bytes;
use offload_storage::{
    BlobStore, FileStore, GoneReason, Lifecycle, MemoryStore, NewBlob, Policy, StorageError, Tags,
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
fn expired_artifacts_leave_the_budget_before_any_live_one() {
    let policy = Policy { max_bytes: Some(300), ..Policy::default() };
    for s in subjects(policy) {
        let store = &*s.store;
        let old = put(store, "old", &[b'o'; 100], at(T0));
        let older = put(store, "older", &[b'p'; 100], at(T0 + 1));
        // The most recently stored, but it expires first.
        let brief = put(store, "brief", &[b'b'; 100], Tags { ttl_ms: Some(10), ..at(T0 + 2) });
        let new = put(store, "new", &[b'n'; 100], at(T0 + 20));
        assert_eq!(gone_reason(store.retrieve_at(&brief, T0 + 20)), Some(GoneReason::Expired), "{}", s.name);
        for r in [&old, &older, &new] {
            assert!(store.retrieve_at(r, T0 + 20).is_ok(), "{}: {r} is live and was not evicted", s.name);
        }
        // Several expired ones all go before a live one does.
        let a = put(store, "a", &[b'a'; 100], Tags { ttl_ms: Some(5), ..at(T0 + 21) });
        assert_eq!(gone_reason(store.retrieve_at(&old, T0 + 21)), Some(GoneReason::Evicted), "{}", s.name);
        let b = put(store, "b", &[b'b'; 100], Tags { ttl_ms: Some(5), ..at(T0 + 22) });
        let big = put(store, "big", &[b'g'; 200], at(T0 + 30));
        assert_eq!(gone_reason(store.retrieve_at(&a, T0 + 30)), Some(GoneReason::Expired), "{}", s.name);
        assert_eq!(gone_reason(store.retrieve_at(&b, T0 + 30)), Some(GoneReason::Expired), "{}", s.name);
        assert!(store.retrieve_at(&new, T0 + 30).is_ok() && store.retrieve_at(&big, T0 + 30).is_ok(), "{}", s.name);
    }
}

#[test]
fn stored_bytes_do_not_count_what_expired() {
    for dedup in [false, true] {
        for s in subjects(Policy { dedup, ..Policy::default() }) {
            let store = &*s.store;
            put(store, "brief", &[b'x'; 100], Tags { ttl_ms: Some(10), ..at(T0) });
            put(store, "kept", &[b'k'; 50], at(T0));
            // Identical content, one copy expiring, the other not: still held.
            put(store, "shared-brief", &[b's'; 30], Tags { ttl_ms: Some(10), ..at(T0) });
            put(store, "shared-kept", &[b's'; 30], Tags { ttl_ms: Some(20), ..at(T0) });
            let stats = store.stats(T0).unwrap();
            let all = if dedup { 180 } else { 210 };
            assert_eq!((stats.artifacts, stats.bytes, stats.stored_bytes), (4, 210, all), "{} dedup {dedup}", s.name);
            let stats = store.stats(T0 + 10).unwrap();
            assert_eq!((stats.artifacts, stats.bytes, stats.stored_bytes), (2, 80, 80), "{} dedup {dedup}", s.name);
            let stats = store.stats(T0 + 20).unwrap();
            assert_eq!((stats.artifacts, stats.bytes, stats.stored_bytes), (1, 50, 50), "{} dedup {dedup}", s.name);
        }
    }
}

/// `holds` tells whether a reference is live now, without reading it,
/// without counting as a use and without removing what expired.
#[test]
fn holds_tells_a_live_artifact_without_using_or_removing_it() {
    let policy = Policy { max_bytes: Some(300), ..Policy::default() };
    for s in subjects(policy) {
        let store = &*s.store;
        let a = put(store, "a", &[b'a'; 100], at(T0));
        let b = put(store, "b", &[b'b'; 100], Tags { ttl_ms: Some(10), ..at(T0 + 1) });
        let c = put(store, "c", &[b'c'; 100], at(T0 + 2));
        assert!(store.holds(&a, T0 + 3).unwrap(), "{}", s.name);
        assert!(store.holds(&b, T0 + 10).unwrap(), "{}", s.name);
        assert!(!store.holds(&b, T0 + 11).unwrap(), "{}: expired", s.name);
        // Only reported: a retrieve still finds it expired (and removes it then).
        assert_eq!(gone_reason(store.retrieve_at(&b, T0 + 11)), Some(GoneReason::Expired), "{}", s.name);
        assert!(!store.holds(&b, T0 + 11).unwrap(), "{}", s.name);
        let missing = if s.name == "memory" { "mem_99_x" } else { "1_99_x.txt" };
        assert!(!store.holds(missing, T0).unwrap(), "{}", s.name);
        // Not a use: `a` stays the least recently used and goes first.
        assert!(store.holds(&a, T0 + 20).unwrap());
        let d = put(store, "d", &[b'd'; 100], at(T0 + 21));
        let e = put(store, "e", &[b'e'; 100], at(T0 + 22));
        assert!(!store.holds(&a, T0 + 22).unwrap(), "{}: evicted", s.name);
        for r in [&c, &d, &e] {
            assert!(store.holds(r, T0 + 22).unwrap(), "{}: {r}", s.name);
        }
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

    /// Content types with C1 control characters (U+0080 to U+009F) give a
    /// file name every instance reads as an artifact: stored, retrieved,
    /// seen by another instance and swept when it expires.
    #[test]
    fn a_content_type_with_a_c1_control_character_names_a_usable_artifact() {
        let tmp = tempfile::tempdir().unwrap();
        let store = file_store(tmp.path(), Policy::default());
        let content_type = "application/pdf\u{85}";
        let blob = NewBlob {
            sequence: store.next_sequence(),
            key: "doc",
            content: Bytes::from_static(b"%PDF-1.7"),
            content_type,
            tags: Tags { ttl_ms: Some(1_000), ..at(T0) },
        };
        let r = store.store_blob(blob).unwrap();
        assert!(r.ends_with(".pdf_"), "{r}");
        let got = store.retrieve_at(&r, T0).unwrap();
        assert_eq!((&got.content[..], got.content_type.as_str()), (&b"%PDF-1.7"[..], content_type));
        let second = file_store(tmp.path(), Policy::default());
        assert_eq!(second.retrieve_at(&r, T0).unwrap().content_type, content_type);
        assert_eq!(second.stats(T0).unwrap().artifacts, 1);
        assert_eq!(second.cleanup_expired(T0 + 1_000).unwrap(), 1);
        assert!(!Path::new(&r).exists());
        assert_eq!(gone_reason(store.retrieve_at(&r, T0 + 1_000)), Some(GoneReason::Expired));
    }

    #[test]
    fn holds_refuses_what_a_retrieve_refuses() {
        let tmp = tempfile::tempdir().unwrap();
        let store = file_store(tmp.path(), Policy::default());
        let r = put(&store, "k", b"v", at(T0));
        assert!(store.holds(&r, T0).unwrap());
        assert!(store.holds(common::file_name(&r), T0).unwrap(), "a bare file name");
        std::fs::write(tmp.path().join("1_1_no-record.txt"), b"x").unwrap();
        assert!(store.holds("1_1_no-record.txt", T0).unwrap(), "a file without a record reads");
        for bad in ["../x", ".metadata.journal", "/etc/passwd", ""] {
            assert!(!store.holds(bad, T0).unwrap(), "{bad}");
        }
        std::fs::remove_file(&r).unwrap();
        assert!(!store.holds(&r, T0).unwrap(), "its file is gone");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", tmp.path().join("1_2_link.txt")).unwrap();
            assert!(!store.holds("1_2_link.txt", T0).unwrap());
        }
    }

    /// Another process's artifact stored just now ranks by its creation
    /// time, after this process's own artifacts last used before it.
    #[test]
    fn another_instance_s_artifact_stored_just_now_is_not_the_first_victim() {
        let tmp = tempfile::tempdir().unwrap();
        let policy = Policy { max_bytes: Some(300), ..Policy::default() };
        let mine = file_store(tmp.path(), policy);
        let theirs = file_store(tmp.path(), policy);
        let a1 = put(&mine, "a1", &[b'1'; 100], at(T0));
        let a2 = put(&mine, "a2", &[b'2'; 100], at(T0 + 1));
        let b1 = put(&theirs, "b1", &[b'b'; 100], at(T0 + 2));
        let a3 = put(&mine, "a3", &[b'3'; 100], at(T0 + 3));
        let exists = |r: &String| Path::new(r).exists();
        assert!(!exists(&a1), "this instance's oldest use goes first");
        assert!(exists(&a2) && exists(&b1) && exists(&a3));
        assert_eq!(gone_reason(theirs.retrieve_at(&a1, T0 + 3)), Some(GoneReason::Evicted));
        // A retrieval is a use (at T0 + 4): b1, stored at T0 + 2, goes next.
        mine.retrieve_at(&a2, T0 + 4).unwrap();
        let a4 = put(&mine, "a4", &[b'4'; 100], at(T0 + 5));
        assert!(!exists(&b1));
        assert!(exists(&a2) && exists(&a3) && exists(&a4));
    }

    /// The hex digest `.blobs` names `content` by.
    fn blob_path(dir: &Path, content: &[u8]) -> std::path::PathBuf {
        use offload_storage::lifecycle::{digest, digest_hex};
        dir.join(".blobs").join(digest_hex(&digest(content)))
    }

    #[test]
    fn dedup_never_trusts_a_planted_blob_of_the_same_length() {
        let tmp = tempfile::tempdir().unwrap();
        let store = file_store(tmp.path(), Policy { dedup: true, ..Policy::default() });
        let content = b"the real content";
        let first = put(&store, "first", content, at(T0));
        // Replaced (not edited: `first` keeps its bytes) by other bytes of the same length.
        let blob = blob_path(tmp.path(), content);
        std::fs::remove_file(&blob).unwrap();
        std::fs::write(&blob, b"planted content!").unwrap();
        let second = put(&store, "second", content, at(T0));
        assert_eq!(&store.retrieve_at(&second, T0).unwrap().content[..], content);
        assert_eq!(&store.retrieve_at(&first, T0).unwrap().content[..], content);
        // The bad entry was replaced: a third store shares the right content.
        assert_eq!(std::fs::read(&blob).unwrap(), content);
        let third = put(&store, "third", content, at(T0));
        assert_eq!(&store.retrieve_at(&third, T0).unwrap().content[..], content);
        // Another instance, with its own view of `.blobs`, too.
        std::fs::write(tmp.path().join(".blobs/unrelated"), b"x").unwrap();
        let other = file_store(tmp.path(), Policy { dedup: true, ..Policy::default() });
        std::fs::remove_file(&blob).unwrap();
        std::fs::write(&blob, b"planted content!").unwrap();
        let fourth = put(&other, "fourth", content, at(T0));
        assert_eq!(&other.retrieve_at(&fourth, T0).unwrap().content[..], content);
    }

    #[test]
    fn dedup_never_shares_an_artifact_edited_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let store = file_store(tmp.path(), Policy { dedup: true, ..Policy::default() });
        let content = b"original content";
        let first = put(&store, "first", content, at(T0));
        // Edited in place (same inode, same length): the shared copy changes too.
        std::fs::write(&first, b"edited  content!").unwrap();
        let second = put(&store, "second", content, at(T0));
        assert_eq!(&store.retrieve_at(&second, T0).unwrap().content[..], content);
        let third = put(&store, "third", content, at(T0));
        assert_eq!(&store.retrieve_at(&third, T0).unwrap().content[..], content);
        assert_eq!(std::fs::read(blob_path(tmp.path(), content)).unwrap(), content);
        // Stats count the content once again from here on.
        assert_eq!(store.stats(T0).unwrap().artifacts, 3);
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
