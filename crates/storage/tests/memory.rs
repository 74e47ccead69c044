//! `MemoryStore`: references, round trips and the SDK's eviction rules.

use std::sync::Arc;
use std::thread;

use offload_storage::{BlobStore, Bytes, MemoryStore, StorageError};

fn store(s: &MemoryStore, key: &str, content: &'static [u8]) -> String {
    s.store(key, Bytes::from_static(content), "text/plain")
        .unwrap()
}

#[test]
fn references_use_counter_and_unchanged_key() {
    let s = MemoryStore::new(None).unwrap();
    assert_eq!(store(&s, "tool-1", b"a"), "mem_1_tool-1");
    assert_eq!(store(&s, "../we ird/😀", b"b"), "mem_2_../we ird/😀");
    assert_eq!(store(&s, "tool-1", b"c"), "mem_3_tool-1");
    let other = MemoryStore::new(None).unwrap();
    assert_eq!(store(&other, "k", b"x"), "mem_1_k");
}

#[test]
fn round_trip_keeps_bytes_and_type_without_copying() {
    let s = MemoryStore::default();
    let big = Bytes::from(vec![7u8; 10 * 1024 * 1024]);
    let r = s
        .store("big", big.clone(), "application/octet-stream")
        .unwrap();
    let blob = s.retrieve(&r).unwrap();
    assert_eq!(blob.content_type, "application/octet-stream");
    assert_eq!(blob.content.len(), big.len());
    assert_eq!(
        blob.content.as_ptr(),
        big.as_ptr(),
        "content must be shared, not copied"
    );

    let j = s
        .store("j", Bytes::from_static(b"{\"a\":1}"), "application/json")
        .unwrap();
    let e = s.store("e", Bytes::new(), "text/plain").unwrap();
    assert_eq!(&s.retrieve(&j).unwrap().content[..], b"{\"a\":1}");
    assert_eq!(s.retrieve(&j).unwrap().content_type, "application/json");
    assert!(s.retrieve(&e).unwrap().content.is_empty());
}

#[test]
fn missing_reference_is_not_found_with_sdk_message() {
    let s = MemoryStore::default();
    let err = s.retrieve("mem_9_nope").unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(err.to_string(), "Reference not found: mem_9_nope");
}

#[test]
fn eviction_removes_entries_older_than_window() {
    let s = MemoryStore::new(Some(2)).unwrap();
    let a = store(&s, "a", b"a");
    assert_eq!(s.evict(1), 0);
    assert_eq!(s.evict(2), 0, "last access 0 is not < threshold 0");
    assert!(s.contains(&a));
    assert_eq!(s.evict(3), 1, "last access 0 < threshold 1");
    assert!(s.retrieve(&a).unwrap_err().is_not_found());
    assert_eq!(s.current_cycle(), 3);
}

#[test]
fn store_and_retrieve_refresh_last_access() {
    let s = MemoryStore::new(Some(2)).unwrap();
    let a = store(&s, "a", b"a");
    let b = store(&s, "b", b"bb");
    assert_eq!(s.evict(2), 0);
    s.retrieve(&a).unwrap(); // a: last access 2
    let c = store(&s, "c", b"ccc"); // c: stored at cycle 2
    assert_eq!(s.evict(3), 1); // threshold 1: only b (0) goes
    assert!(s.contains(&a) && s.contains(&c) && !s.contains(&b));
    assert_eq!(s.total_bytes(), 4);
    assert_eq!(s.evict(4), 0); // threshold 2: 2 < 2 is false
    assert_eq!(s.evict(5), 2); // threshold 3
    assert!(s.is_empty());
    assert_eq!(s.total_bytes(), 0);
}

#[test]
fn cycles_below_window_do_not_underflow() {
    let s = MemoryStore::new(Some(20)).unwrap();
    let a = store(&s, "a", b"a");
    assert_eq!(s.evict(5), 0);
    assert_eq!(s.evict(20), 0);
    assert!(s.contains(&a));
    assert_eq!(s.evict(u64::MAX), 1);
}

#[test]
fn eviction_can_be_disabled_and_changed() {
    let s = MemoryStore::new(None).unwrap();
    assert_eq!(s.evict_after(), None);
    let a = store(&s, "a", b"a");
    assert_eq!(s.evict(1_000_000), 0);
    assert!(s.contains(&a));
    s.set_evict_after(Some(3)).unwrap();
    assert_eq!(s.evict_after(), Some(3));
    assert_eq!(s.evict(1_000_001), 1);
    assert_eq!(
        MemoryStore::default().evict_after(),
        Some(MemoryStore::DEFAULT_EVICT_AFTER_CYCLES)
    );
}

#[test]
fn zero_window_is_rejected() {
    assert!(matches!(
        MemoryStore::new(Some(0)),
        Err(StorageError::InvalidArgument(_))
    ));
    let s = MemoryStore::new(Some(5)).unwrap();
    assert!(matches!(
        s.set_evict_after(Some(0)),
        Err(StorageError::InvalidArgument(_))
    ));
    assert_eq!(s.evict_after(), Some(5));
}

#[test]
fn clear_delete_len_total_bytes() {
    let s = MemoryStore::default();
    assert!(s.is_empty());
    let a = store(&s, "a", b"12345");
    let b = store(&s, "b", b"123");
    assert_eq!(s.len(), 2);
    assert_eq!(s.total_bytes(), 8);
    assert!(s.delete(&a));
    assert!(!s.delete(&a));
    assert_eq!(s.len(), 1);
    assert_eq!(s.total_bytes(), 3);
    s.clear();
    assert_eq!(s.len(), 0);
    assert_eq!(s.total_bytes(), 0);
    assert!(s.retrieve(&b).unwrap_err().is_not_found());
    assert_eq!(store(&s, "c", b"c"), "mem_3_c", "counter survives clear");
}

#[test]
fn concurrent_stores_and_retrieves() {
    let s = Arc::new(MemoryStore::new(None).unwrap());
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let s = Arc::clone(&s);
            thread::spawn(move || {
                (0..500)
                    .map(|i| {
                        let body = format!("{t}-{i}");
                        let r = s
                            .store("k", Bytes::from(body.clone()), "text/plain")
                            .unwrap();
                        assert_eq!(s.retrieve(&r).unwrap().content, body.as_bytes());
                        r
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut refs: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    refs.sort();
    refs.dedup();
    assert_eq!(refs.len(), 4000);
    assert_eq!(s.len(), 4000);
}

#[test]
fn a_store_handed_over_later_keeps_its_number_and_cycle() {
    use offload_storage::{NewBlob, Tags};
    let s = MemoryStore::new(Some(2)).unwrap();
    // Numbers taken in call order: a later store is handed over first.
    let early = s.next_sequence();
    s.evict(1);
    let later = store(&s, "later", b"b");
    assert_eq!(later, "mem_2_later");
    s.evict(3);
    let tags = Tags { session: None, ttl_ms: None, now_ms: Some(1_000) };
    let blob = NewBlob { sequence: early, key: "early", content: Bytes::from_static(b"a"), content_type: "text/plain", tags };
    // Handed over in cycle 3 as stored in cycle 0: evicted as from cycle 0.
    assert_eq!(s.store_blob_used_at(blob, 0).unwrap(), "mem_1_early");
    assert_eq!(s.last_sequence(), 2);
    assert_eq!(s.evict(3), 1, "the early store is idle since cycle 0");
    assert!(s.retrieve("mem_1_early").is_err());
    assert!(s.retrieve(&later).is_ok());
}

#[test]
fn the_counter_is_lent_once_and_numbers_taken_through_it_count() {
    let s = MemoryStore::new(None).unwrap();
    let cell = s.lend_sequence_cell().expect("lent the first time");
    assert!(s.lend_sequence_cell().is_none(), "lent only once");
    cell.fetch_add(5, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(s.last_sequence(), 5);
    assert_eq!(store(&s, "k", b"x"), "mem_6_k");
}
