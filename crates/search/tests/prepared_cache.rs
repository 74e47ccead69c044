//! The search cache against the uncached search: identical answers over
//! random texts and queries (repeated), and never a stale answer when the
//! content behind a reference changes: deleted and stored again, rewritten
//! by another writer, expired, evicted; the byte budget is kept.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use offload_search::{
    search_file, search_file_once, search_memory, search_uncached, LineRange, PreparedCache, RetrievalQuery,
    StoredSearch,
};
use offload_storage::{
    BlobStore, FileStore, GoneReason, Lifecycle, MemoryStore, NewBlob, Policy, StorageError, Tags,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

const MAX_CHARS: usize = 4_000;
const T0: u64 = 1_800_000_000_000;

/// Patterns an agent greps with: words, regexes, alternations, anchors,
/// classes, look-around, invalid ones (searched as text), and none.
const PATTERNS: &[Option<&str>] = &[
    None,
    Some("ERROR"),
    Some("ERROR.*timeout"),
    Some("timeout|refused"),
    Some("^WARN"),
    Some("\\d{3}"),
    Some("worker-7\\b"),
    Some("(?<=id=)\\d+"),
    Some("é|😀"),
    Some("[unclosed"),
    Some(""),
    Some("\u{fffd}"),
];

fn query(
    pattern: Option<&'static str>,
    range: Option<(u64, u64)>,
    context: Option<u64>,
) -> RetrievalQuery<'static> {
    RetrievalQuery {
        pattern,
        line_range: range.map(|(start, end)| LineRange { start, end }),
        context_lines: context,
    }
}

fn queries() -> impl Strategy<Value = Vec<RetrievalQuery<'static>>> {
    let one = (
        prop::sample::select(PATTERNS),
        prop::option::of((1u64..40, 0u64..40).prop_map(|(start, len)| (start, start + len))),
        prop::option::of(0u64..6),
    )
        .prop_map(|(pattern, range, context)| query(pattern, range, context));
    prop::collection::vec(one, 1..8)
}

/// Log-like text of random lines, sometimes with a byte order mark,
/// invalid UTF-8 or `\r\n` endings.
fn contents() -> impl Strategy<Value = Vec<u8>> {
    let word = prop::sample::select(
        &[
            "ERROR",
            "WARN",
            "INFO",
            "timeout",
            "refused",
            "worker-7",
            "worker-70",
            "id=123",
            "é",
            "😀",
            " ",
            "\r",
            "\t",
            "\u{2028}",
            "x",
        ][..],
    );
    let line = prop::collection::vec(word, 0..8).prop_map(|words| words.concat());
    (
        prop::collection::vec(line, 0..60),
        any::<bool>(),
        prop::option::of((
            any::<prop::sample::Index>(),
            prop::sample::select(&[0xFFu8, 0xC0, 0xED, 0x80][..]),
        )),
    )
        .prop_map(|(lines, bom, invalid)| {
            let mut bytes = if bom {
                b"\xEF\xBB\xBF".to_vec()
            } else {
                Vec::new()
            };
            bytes.extend(lines.join("\n").into_bytes());
            if let Some((at, byte)) = invalid {
                let i = at.index(bytes.len() + 1);
                bytes.insert(i, byte);
            }
            bytes
        })
}

fn uncached(content: &[u8], q: &RetrievalQuery<'_>) -> StoredSearch {
    search_uncached(content, "text/plain".to_owned(), q, MAX_CHARS)
}

fn answer(searched: &StoredSearch) -> &str {
    match &searched.result {
        Some(Ok(text)) => text,
        other => panic!("no answer: {other:?}"),
    }
}

fn memory_store(cache: &Arc<PreparedCache>) -> MemoryStore {
    let store = MemoryStore::new(None).unwrap();
    store.set_removal_hook(Some(cache.removal_hook()));
    store
}

fn file_store(cache: &Arc<PreparedCache>, dir: &Path) -> FileStore {
    let store = FileStore::new(dir.to_str().unwrap());
    store.set_removal_hook(Some(cache.removal_hook()));
    store
}

fn put(store: &dyn Lifecycle, sequence: u64, key: &str, content: &[u8], tags: Tags<'_>) -> String {
    store
        .store_blob(NewBlob {
            sequence,
            key,
            content: Bytes::copy_from_slice(content),
            content_type: "text/plain",
            tags,
        })
        .unwrap()
}

/// Waits until the file behind `reference` is settled (a change to it
/// could no longer go unseen), so that a search caches it.
fn settle(store: &FileStore, reference: &str) {
    let started = Instant::now();
    while !store
        .retrieve_stamped_at(reference, T0, |_, _| true)
        .unwrap()
        .settled
    {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the file never settled"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mem_search(
    cache: &PreparedCache,
    store: &MemoryStore,
    reference: &str,
    q: &RetrievalQuery<'_>,
) -> StoredSearch {
    search_memory(cache, store, reference, T0, q, MAX_CHARS).unwrap()
}

fn file_search(
    cache: &PreparedCache,
    store: &FileStore,
    reference: &str,
    q: &RetrievalQuery<'_>,
) -> StoredSearch {
    search_file(cache, store, reference, T0, q, MAX_CHARS).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every query, asked twice, answers through the cache exactly as the
    /// uncached search; the second round comes from the cache.
    #[test]
    fn memory_answers_are_those_of_the_uncached_search(content in contents(), qs in queries()) {
        let cache = Arc::new(PreparedCache::new(1 << 30));
        let store = memory_store(&cache);
        let reference = store.store("k", Bytes::from(content.clone()), "text/plain").unwrap();
        for round in 0..2 {
            for q in &qs {
                prop_assert_eq!(&mem_search(&cache, &store, &reference, q), &uncached(&content, q), "round {}", round);
            }
            prop_assert_eq!(cache.len(), 1);
        }
    }

    /// The same through a small budget that evicts between queries of
    /// several references searched in turn.
    #[test]
    fn answers_hold_through_evictions(contents in prop::collection::vec(contents(), 2..5), qs in queries()) {
        let cache = Arc::new(PreparedCache::new(2_000));
        let store = memory_store(&cache);
        let references: Vec<String> = contents
            .iter()
            .enumerate()
            .map(|(i, c)| store.store(&format!("k{i}"), Bytes::from(c.clone()), "text/plain").unwrap())
            .collect();
        for q in qs.iter().chain(&qs) {
            for (reference, content) in references.iter().zip(&contents) {
                prop_assert_eq!(&mem_search(&cache, &store, reference, q), &uncached(content, q));
                prop_assert!(cache.used_bytes() <= 2_000);
            }
        }
    }
}

/// Files: random contents, each searched with the same random queries,
/// twice, through the cache once the files have settled.
#[test]
fn file_answers_are_those_of_the_uncached_search() {
    let mut runner = TestRunner::deterministic();
    let cases: Vec<(Vec<u8>, Vec<RetrievalQuery<'static>>)> = (0..24)
        .map(|_| {
            (
                contents().new_tree(&mut runner).unwrap().current(),
                queries().new_tree(&mut runner).unwrap().current(),
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(PreparedCache::new(1 << 30));
    let store = file_store(&cache, dir.path());
    let references: Vec<String> = cases
        .iter()
        .map(|(content, _)| {
            store
                .store("k", Bytes::from(content.clone()), "text/plain")
                .unwrap()
        })
        .collect();
    for reference in &references {
        settle(&store, reference);
    }
    for round in 0..2 {
        for (reference, (content, qs)) in references.iter().zip(&cases) {
            for q in qs {
                assert_eq!(
                    file_search(&cache, &store, reference, q),
                    uncached(content, q),
                    "round {round}: {q:?}"
                );
                // The one-shot search over the mapped file answers the same.
                assert_eq!(
                    search_file_once(&store, reference, T0, q, MAX_CHARS).unwrap(),
                    uncached(content, q),
                    "once: {q:?}"
                );
            }
        }
        assert_eq!(cache.len(), cases.len());
    }
}

/// The content of each reference, as searched, through `search`.
fn all_lines(search: impl Fn(&RetrievalQuery<'_>) -> StoredSearch) -> String {
    answer(&search(&query(None, Some((1, 1_000)), None))).to_owned()
}

#[test]
fn memory_delete_and_store_again_under_the_same_reference() {
    let cache = Arc::new(PreparedCache::new(1 << 20));
    let store = memory_store(&cache);
    let q = query(Some("alpha|beta"), None, Some(0));
    let reference = put(&store, 1, "k", b"alpha 1\n", Tags::default());
    assert!(answer(&mem_search(&cache, &store, &reference, &q)).contains("alpha 1"));
    assert_eq!(cache.len(), 1);
    assert!(store.delete(&reference));
    assert!(cache.is_empty(), "the delete dropped the entry");
    assert_eq!(
        put(&store, 1, "k", b"beta 22\n", Tags::default()),
        reference
    );
    assert!(answer(&mem_search(&cache, &store, &reference, &q)).contains("beta 22"));
    // Stored again over it (no delete), with equal-length content.
    put(&store, 1, "k", b"beta 33\n", Tags::default());
    assert!(answer(&mem_search(&cache, &store, &reference, &q)).contains("beta 33"));
    assert_eq!(cache.len(), 1);
}

#[test]
fn memory_without_a_hook_still_never_answers_stale() {
    let cache = Arc::new(PreparedCache::new(1 << 20));
    let store = MemoryStore::new(None).unwrap();
    for round in 0..50u8 {
        let content = format!("round {round:02}\n");
        let reference = put(&store, 1, "k", content.as_bytes(), Tags::default());
        assert_eq!(
            all_lines(|q| mem_search(&cache, &store, &reference, q)),
            "[Lines 1-2 of 2]\n\n  1| ".to_owned() + &content + "  2| "
        );
        if round % 2 == 0 {
            store.delete(&reference);
        }
    }
}

#[test]
fn memory_removals_drop_entries() {
    let cache = Arc::new(PreparedCache::new(1 << 20));
    let store = memory_store(&cache);
    store.set_evict_after(Some(2)).unwrap();
    let q = query(Some("x"), None, None);
    let search = |r: &str| mem_search(&cache, &store, r, &q);
    let old = put(&store, 1, "old", b"x", Tags::default());
    search(&old);
    store.evict(1);
    let fresh = put(&store, 2, "new", b"x", Tags::default());
    search(&fresh);
    assert_eq!(cache.len(), 2);
    assert_eq!(store.evict(3), 1, "idle for two cycles");
    assert_eq!(cache.len(), 1);
    let session = put(
        &store,
        3,
        "s",
        b"x",
        Tags {
            session: Some("a"),
            ..Tags::default()
        },
    );
    search(&session);
    assert_eq!(cache.len(), 2);
    assert_eq!(store.delete_session("a").unwrap(), 1);
    assert_eq!(cache.len(), 1);
    store.clear();
    assert!(cache.is_empty());
    search(&put(&store, 4, "k", b"x", Tags::default()));
    assert_eq!(cache.len(), 1);
    drop(store);
    assert!(cache.is_empty(), "a dropped store takes its entries along");
}

#[test]
fn expiry_is_enforced_on_every_search_and_drops_the_entry() {
    let cache = Arc::new(PreparedCache::new(1 << 20));
    let dir = tempfile::tempdir().unwrap();
    let memory = memory_store(&cache);
    let files = file_store(&cache, dir.path());
    let tags = Tags {
        ttl_ms: Some(1_000),
        now_ms: Some(T0),
        ..Tags::default()
    };
    let q = query(Some("live"), None, None);
    for (store, kind) in [
        (&memory as &dyn Lifecycle, "memory"),
        (&files as &dyn Lifecycle, "file"),
    ] {
        let reference = put(store, 1, "k", b"live\n", tags);
        let search = |now: u64| match kind {
            "memory" => search_memory(&cache, &memory, &reference, now, &q, MAX_CHARS),
            _ => search_file(&cache, &files, &reference, now, &q, MAX_CHARS),
        };
        if kind == "file" {
            settle(&files, &reference);
        }
        assert!(answer(&search(T0 + 999).unwrap()).contains("live"));
        assert!(answer(&search(T0 + 999).unwrap()).contains("live"));
        assert_eq!(cache.len(), 1, "{kind}");
        if kind == "file" {
            // The one-shot search runs every check of a retrieve too, and caches nothing.
            assert!(answer(&search_file_once(&files, &reference, T0 + 999, &q, MAX_CHARS).unwrap()).contains("live"));
            assert_eq!(cache.len(), 1);
            for hostile in ["../k", "/etc/passwd", "C:\\k", "nope"] {
                assert!(search_file_once(&files, hostile, T0, &q, MAX_CHARS).is_err(), "{hostile}");
            }
        }
        let err = search(T0 + 1_000).unwrap_err();
        assert_eq!(
            err.to_string(),
            StorageError::gone(&reference, GoneReason::Expired).to_string(),
            "{kind}"
        );
        assert!(cache.is_empty(), "{kind}: the expiry dropped the entry");
        assert_eq!(
            search(T0).unwrap_err().to_string(),
            StorageError::gone(&reference, GoneReason::Expired).to_string(),
            "{kind}"
        );
    }
    // cleanupExpired drops what it removes.
    for (store, kind) in [
        (&memory as &dyn Lifecycle, "memory"),
        (&files as &dyn Lifecycle, "file"),
    ] {
        let reference = put(store, 2, "k", b"live\n", tags);
        match kind {
            "memory" => {
                drop(search_memory(&cache, &memory, &reference, T0, &q, MAX_CHARS).unwrap())
            }
            _ => {
                settle(&files, &reference);
                drop(search_file(&cache, &files, &reference, T0, &q, MAX_CHARS).unwrap());
            }
        }
        assert_eq!(cache.len(), 1, "{kind}");
        assert_eq!(store.cleanup_expired(T0 + 1_000).unwrap(), 1);
        assert!(cache.is_empty(), "{kind}");
    }
}

#[test]
fn a_store_budget_eviction_drops_the_entry() {
    let cache = Arc::new(PreparedCache::new(1 << 20));
    let dir = tempfile::tempdir().unwrap();
    let memory = memory_store(&cache);
    let files = file_store(&cache, dir.path());
    let q = query(Some("a"), None, None);
    for store in [&memory as &dyn Lifecycle, &files as &dyn Lifecycle] {
        store
            .set_policy(Policy {
                max_bytes: Some(10),
                ..Policy::default()
            })
            .unwrap();
    }
    let first = put(&memory, 1, "a", b"aaaaaa", Tags::default());
    mem_search(&cache, &memory, &first, &q);
    let first_file = put(&files, 1, "a", b"aaaaaa", Tags::default());
    settle(&files, &first_file);
    file_search(&cache, &files, &first_file, &q);
    assert_eq!(cache.len(), 2);
    put(&memory, 2, "b", b"bbbbbb", Tags::default());
    put(&files, 2, "b", b"bbbbbb", Tags::default());
    assert!(cache.is_empty(), "both evicted to stay under maxBytes");
    assert_eq!(
        search_memory(&cache, &memory, &first, T0, &q, MAX_CHARS)
            .unwrap_err()
            .to_string(),
        StorageError::gone(&first, GoneReason::Evicted).to_string()
    );
}

#[test]
fn files_rewritten_replaced_or_deleted_by_another_writer_are_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(PreparedCache::new(1 << 20));
    let store = file_store(&cache, dir.path());
    let reference = store
        .store("k", Bytes::from_static(b"version one\n"), "text/plain")
        .unwrap();
    let path = dir.path().join(Path::new(&reference).file_name().unwrap());
    let lines = |store: &FileStore| all_lines(|q| file_search(&cache, store, &reference, q));
    let expect = |content: &str| format!("[Lines 1-2 of 2]\n\n  1| {content}\n  2| ");
    // Searched at once: answered, not cached (the file is too fresh).
    assert_eq!(lines(&store), expect("version one"));
    assert!(cache.is_empty());
    settle(&store, &reference);
    assert_eq!(lines(&store), expect("version one"));
    assert_eq!(cache.len(), 1);
    assert_eq!(lines(&store), expect("version one"), "from the cache");

    // Rewritten in place (same inode, same size), right after the cached search.
    std::fs::write(&path, b"version two\n").unwrap();
    assert_eq!(lines(&store), expect("version two"));
    settle(&store, &reference);
    assert_eq!(lines(&store), expect("version two"));
    assert_eq!(cache.len(), 1);

    // Replaced by a rename (another inode, same size).
    let temp = dir.path().join("replacement");
    std::fs::write(&temp, b"version 333\n").unwrap();
    std::fs::rename(&temp, &path).unwrap();
    assert_eq!(lines(&store), expect("version 333"));
    settle(&store, &reference);
    assert_eq!(lines(&store), expect("version 333"));

    // Deleted, then written again under the same name (the inode may be reused).
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        search_file(
            &cache,
            &store,
            &reference,
            T0,
            &query(Some("v"), None, None),
            MAX_CHARS
        )
        .unwrap_err()
        .to_string(),
        StorageError::not_found(&reference).to_string()
    );
    std::fs::write(&path, b"version 444\n").unwrap();
    assert_eq!(lines(&store), expect("version 444"));
    settle(&store, &reference);
    assert_eq!(lines(&store), expect("version 444"));
}

#[test]
fn a_cached_file_is_not_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(PreparedCache::new(1 << 20));
    let store = file_store(&cache, dir.path());
    let reference = store
        .store("k", Bytes::from_static(b"hello\n"), "text/plain")
        .unwrap();
    settle(&store, &reference);
    let q = query(Some("hello"), None, None);
    file_search(&cache, &store, &reference, &q);
    let mut reused = false;
    let found = store
        .retrieve_stamped_at(&reference, T0, |name, stamp| {
            reused = cache
                .get(store.id(), name, &offload_search::Version::File(*stamp))
                .is_some();
            reused
        })
        .unwrap();
    assert!(reused);
    assert_eq!(found.content, None);
    // Every spelling of the reference finds the same entry.
    let bare = Path::new(&reference)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        file_search(&cache, &store, &bare, &q),
        file_search(&cache, &store, &reference, &q)
    );
    assert_eq!(cache.len(), 1);
}

#[test]
fn the_byte_budget_is_kept_and_oversized_texts_are_not_cached() {
    let cache = Arc::new(PreparedCache::new(0));
    let store = memory_store(&cache);
    let q = query(Some("line 7"), None, Some(1));
    let content: Vec<u8> = (0..1_000)
        .flat_map(|i| format!("line {i}\n").into_bytes())
        .collect();
    let reference = store
        .store("k", Bytes::from(content.clone()), "text/plain")
        .unwrap();
    assert_eq!(
        mem_search(&cache, &store, &reference, &q),
        uncached(&content, &q)
    );
    assert!(cache.is_empty(), "a budget of 0 disables the cache");
    // The index of 1,001 lines is about 8 KB: a 4 KB budget cannot hold it.
    cache.set_budget(4_096);
    assert_eq!(
        mem_search(&cache, &store, &reference, &q),
        uncached(&content, &q)
    );
    assert!(cache.is_empty());
    cache.set_budget(2 * 9_000);
    let references: Vec<String> = (0..5)
        .map(|i| {
            store
                .store(&format!("k{i}"), Bytes::from(content.clone()), "text/plain")
                .unwrap()
        })
        .collect();
    for reference in &references {
        assert_eq!(
            mem_search(&cache, &store, reference, &q),
            uncached(&content, &q)
        );
        assert!(cache.used_bytes() <= 2 * 9_000);
    }
    assert_eq!(cache.len(), 2, "the oldest were evicted");
    // Invalid UTF-8 is decoded into a copy: that copy is charged too.
    let mut invalid = content.clone();
    invalid[3] = 0xFF;
    cache.set_budget(1 << 20);
    cache.clear();
    let reference = store
        .store("bad", Bytes::from(invalid.clone()), "text/plain")
        .unwrap();
    assert_eq!(
        mem_search(&cache, &store, &reference, &q),
        uncached(&invalid, &q)
    );
    assert!(cache.used_bytes() > invalid.len());
}

#[test]
fn binary_content_is_neither_searched_nor_cached() {
    let cache = Arc::new(PreparedCache::new(1 << 20));
    let store = memory_store(&cache);
    let reference = store
        .store(
            "k",
            Bytes::from_static(b"\x00\x01"),
            "application/octet-stream",
        )
        .unwrap();
    let searched = mem_search(&cache, &store, &reference, &query(Some("x"), None, None));
    assert_eq!(
        searched,
        StoredSearch {
            content_type: "application/octet-stream".to_owned(),
            result: None
        }
    );
    assert!(cache.is_empty());
}
