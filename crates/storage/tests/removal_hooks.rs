//! Removal hooks (every way a store removes artifacts is told, by the name
//! its lookups use) and stamped retrieves of files.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use offload_storage::{
    BlobStore, FileStore, Lifecycle, MemoryStore, NewBlob, Policy, Removal, RemovalHook, Tags,
};

const T0: u64 = 1_800_000_000_000;

/// What a recording hook was told, as `(store, name)` (`"*"`: all).
type Seen = Arc<Mutex<Vec<(u64, String)>>>;

/// A hook that records what it is told.
fn recorder() -> (RemovalHook, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let hook: RemovalHook = Arc::new(move |store, removal| {
        let name = match removal {
            Removal::Artifact(name) => name.to_owned(),
            Removal::All => "*".to_owned(),
        };
        log.lock().unwrap().push((store, name));
    });
    (hook, seen)
}

fn put(store: &dyn Lifecycle, key: &str, content: &'static [u8], tags: Tags<'_>) -> String {
    let sequence = store.next_sequence();
    store
        .store_blob(NewBlob { sequence, key, content: Bytes::from_static(content), content_type: "text/plain", tags })
        .unwrap()
}

fn file_name(reference: &str) -> String {
    reference.rsplit('/').next().unwrap().to_owned()
}

#[test]
fn memory_store_tells_every_removal() {
    let store = MemoryStore::new(Some(1)).unwrap();
    let (hook, seen) = recorder();
    store.set_removal_hook(Some(hook));
    let id = store.id();
    let take = || std::mem::take(&mut *seen.lock().unwrap());

    let a = put(&store, "a", b"a", Tags::default());
    assert!(store.delete(&a));
    assert!(!store.delete(&a));
    assert_eq!(take(), vec![(id, a.clone())]);

    let idle = put(&store, "idle", b"x", Tags::default());
    store.evict(5);
    assert_eq!(take(), vec![(id, idle)]);

    let expiring = put(&store, "e", b"x", Tags { ttl_ms: Some(10), now_ms: Some(T0), ..Tags::default() });
    assert!(store.retrieve_at(&expiring, T0 + 10).is_err());
    assert_eq!(take(), vec![(id, expiring)]);
    let swept = put(&store, "s", b"x", Tags { ttl_ms: Some(10), now_ms: Some(T0), session: Some("z") });
    assert_eq!(store.cleanup_expired(T0 + 10).unwrap(), 1);
    assert_eq!(take(), vec![(id, swept)]);
    let session = put(&store, "s", b"x", Tags { session: Some("z"), ..Tags::default() });
    assert_eq!(store.delete_session("z").unwrap(), 1);
    assert_eq!(take(), vec![(id, session)]);

    store.set_policy(Policy { max_bytes: Some(2), ..Policy::default() }).unwrap();
    let old = put(&store, "old", b"xx", Tags::default());
    put(&store, "new", b"yy", Tags::default());
    assert_eq!(take(), vec![(id, old)]);

    // Stored again under the same reference: the old content is removed.
    let again = store
        .store_blob(NewBlob { sequence: 99, key: "k", content: Bytes::from_static(b"1"), content_type: "text/plain", tags: Tags::default() })
        .unwrap();
    store
        .store_blob(NewBlob { sequence: 99, key: "k", content: Bytes::from_static(b"2"), content_type: "text/plain", tags: Tags::default() })
        .unwrap();
    assert!(take().contains(&(id, again)));

    store.clear();
    assert_eq!(take(), vec![(id, "*".to_owned())]);
    drop(store);
    assert_eq!(take(), vec![(id, "*".to_owned())]);
}

#[test]
fn memory_store_tells_whether_it_holds_the_same_bytes() {
    let store = MemoryStore::new(None).unwrap();
    let content = Bytes::from(b"hello".to_vec());
    let reference = store.store("k", content.clone(), "text/plain").unwrap();
    assert!(store.holds(&reference, &content));
    assert!(!store.holds(&reference, &Bytes::from(b"hello".to_vec())), "equal is not the same");
    assert!(!store.holds("mem_9_x", &content));
    assert_ne!(store.id(), MemoryStore::new(None).unwrap().id());
}

#[test]
fn file_store_tells_every_removal_by_file_name_for_all_its_views() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().to_str().unwrap());
    let (hook, seen) = recorder();
    store.set_removal_hook(Some(hook));
    let view = store.view();
    assert_eq!(view.id(), store.id());
    let id = store.id();
    let take = || std::mem::take(&mut *seen.lock().unwrap());

    let expiring = put(&view, "e", b"x", Tags { ttl_ms: Some(10), now_ms: Some(T0), ..Tags::default() });
    assert!(store.retrieve_at(&expiring, T0 + 10).is_err());
    assert_eq!(take(), vec![(id, file_name(&expiring))]);

    let swept = put(&store, "s", b"x", Tags { ttl_ms: Some(10), now_ms: Some(T0), ..Tags::default() });
    assert_eq!(store.cleanup_expired(T0 + 10).unwrap(), 1);
    assert_eq!(take(), vec![(id, file_name(&swept))]);

    let session = put(&store, "s", b"x", Tags { session: Some("z"), ..Tags::default() });
    assert_eq!(view.delete_session("z").unwrap(), 1);
    assert_eq!(take(), vec![(id, file_name(&session))]);

    // Removed by hand: the next cleanup drops its record and says so.
    let vanished = put(&store, "v", b"x", Tags::default());
    std::fs::remove_file(dir.path().join(file_name(&vanished))).unwrap();
    store.cleanup_expired(T0).unwrap();
    assert_eq!(take(), vec![(id, file_name(&vanished))]);

    store.set_policy(Policy { max_bytes: Some(2), ..Policy::default() }).unwrap();
    let old = put(&store, "old", b"xx", Tags::default());
    put(&store, "new", b"yy", Tags::default());
    assert_eq!(take(), vec![(id, file_name(&old))]);

    drop(store);
    assert!(take().is_empty(), "the view still holds the directory");
    drop(view);
    assert_eq!(take(), vec![(id, "*".to_owned())]);
}

#[test]
fn stamped_retrieves_skip_the_read_only_when_asked_and_keep_every_check() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().to_str().unwrap());
    let reference = put(&store, "k", b"content", Tags { ttl_ms: Some(10), now_ms: Some(T0), ..Tags::default() });
    let first = store.retrieve_stamped_at(&reference, T0, |_, _| false).unwrap();
    assert_eq!(first.content.as_deref(), Some(&b"content"[..]));
    assert_eq!(first.name, file_name(&reference));
    assert_eq!(first.content_type, "text/plain");
    let mut shown = None;
    let again = store
        .retrieve_stamped_at(&file_name(&reference), T0, |name, stamp| {
            shown = Some((name.to_owned(), *stamp));
            true
        })
        .unwrap();
    assert_eq!(again.content, None);
    #[cfg(unix)]
    {
        assert_eq!(first.stamp, again.stamp);
        assert_eq!(shown, Some((first.name.clone(), first.stamp.unwrap())));
    }
    let err = store.retrieve_stamped_at(&reference, T0 + 10, |_, _| true).unwrap_err();
    assert_eq!(err.to_string(), format!("Reference not found (expired): {reference}"));
    assert!(store.retrieve_stamped_at("../escape", T0, |_, _| true).is_err());
}
