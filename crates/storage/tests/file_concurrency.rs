//! Several `FileStore` instances writing one directory from many threads.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::thread;

use common::{all_names, file_name, s, visible_names};
use offload_storage::{BlobStore, Bytes, FileStore, ReferenceStyle};

const THREADS_PER_STORE: usize = 6;
const STORES_PER_THREAD: usize = 200;

fn content_type(i: usize) -> &'static str {
    [
        "text/plain",
        "application/json",
        "image/png",
        "application/x-custom",
    ][i % 4]
}

#[test]
fn two_instances_many_threads_one_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = s(tmp.path()).to_owned();
    let stores = [
        Arc::new(FileStore::new(&dir)),
        Arc::new(FileStore::new(&dir)),
    ];
    let mut handles = Vec::new();
    for (si, store) in stores.iter().enumerate() {
        for t in 0..THREADS_PER_STORE {
            let store = Arc::clone(store);
            handles.push(thread::spawn(move || {
                (0..STORES_PER_THREAD)
                    .map(|i| {
                        // Same key everywhere: both instances produce the same
                        // names within a millisecond and must not collide.
                        let body = format!("store {si} thread {t} item {i}");
                        let style = if i % 2 == 0 {
                            ReferenceStyle::Joined
                        } else {
                            ReferenceStyle::Concatenated
                        };
                        let r = store
                            .store_with_style(
                                "tool",
                                Bytes::from(body.clone()),
                                content_type(i),
                                style,
                            )
                            .unwrap();
                        (r, body, content_type(i))
                    })
                    .collect::<Vec<_>>()
            }));
        }
    }
    let results: Vec<(String, String, &str)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let total = 2 * THREADS_PER_STORE * STORES_PER_THREAD;
    assert_eq!(results.len(), total);
    let unique: HashSet<&str> = results.iter().map(|(r, _, _)| file_name(r)).collect();
    assert_eq!(unique.len(), total, "every store got its own file");
    assert_eq!(
        visible_names(tmp.path()).len(),
        total,
        "no lost or extra files"
    );
    assert!(!all_names(tmp.path()).iter().any(|n| n.starts_with(".tmp-")));

    let fresh = FileStore::new(&dir);
    for (r, body, ct) in &results {
        for store in stores.iter().map(|s| s.as_ref()).chain([&fresh]) {
            let blob = store.retrieve(r).unwrap();
            assert_eq!(blob.content, body.as_bytes());
            assert_eq!(blob.content_type, *ct);
        }
    }
    let journal = std::fs::read_to_string(tmp.path().join(".metadata.journal")).unwrap();
    assert_eq!(journal.lines().count(), total);
    assert!(journal
        .lines()
        .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
}

#[test]
fn concurrent_reads_while_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Arc::new(FileStore::new(s(tmp.path())));
    let first = store
        .store("seed", Bytes::from_static(b"seed"), "text/plain")
        .unwrap();
    let writer = {
        let store = Arc::clone(&store);
        thread::spawn(move || {
            for i in 0..300 {
                store
                    .store(
                        "w",
                        Bytes::from(vec![i as u8; 4096]),
                        "application/octet-stream",
                    )
                    .unwrap();
            }
        })
    };
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let store = Arc::clone(&store);
            let first = first.clone();
            thread::spawn(move || {
                for _ in 0..300 {
                    assert_eq!(&store.retrieve(&first).unwrap().content[..], b"seed");
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(visible_names(tmp.path()).len(), 301);
}
