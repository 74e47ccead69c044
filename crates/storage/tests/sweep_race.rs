//! Sweeps racing writers on one directory: a sweep removes what expired and
//! forgets what vanished, never an artifact stored while it ran.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::s;
use offload_storage::{BlobStore, Bytes, FileStore, Lifecycle, Policy};

/// How long the writers store while the sweeps run.
const RACE: Duration = Duration::from_secs(6);

fn one_hour_store(dir: &str) -> FileStore {
    let store = FileStore::new(dir);
    store.set_policy(Policy { default_ttl_ms: Some(3_600_000), ..Policy::default() }).unwrap();
    store
}

/// Stores small artifacts back to back until `stop`; returns every
/// reference acknowledged, with its content.
fn write_until(store: &FileStore, writer: usize, stop: &AtomicBool) -> Vec<(String, Vec<u8>)> {
    let mut stored = Vec::new();
    let mut i = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let body = format!("writer {writer} artifact {i}").into_bytes();
        let reference = store.store(&format!("w{writer}_{i}"), Bytes::from(body.clone()), "text/plain").unwrap();
        stored.push((reference, body));
        i += 1;
    }
    stored
}

/// Sweeps `store` over and over until `stop`; adds what it removed to `removed`.
fn sweep_until(store: &FileStore, stop: &AtomicBool, removed: &AtomicUsize, sweeps: &AtomicUsize) {
    while !stop.load(Ordering::Relaxed) {
        let now = offload_storage::lifecycle::system_now_ms();
        removed.fetch_add(store.cleanup_expired(now).unwrap(), Ordering::Relaxed);
        sweeps.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn sweeps_racing_writers_lose_no_unexpired_artifact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = s(tmp.path()).to_owned();
    // Writers and one sweeper share an instance (and its catalog); another
    // instance sweeps the same directory as another process would.
    let shared = Arc::new(one_hour_store(&dir));
    let other = Arc::new(one_hour_store(&dir));
    let stop = Arc::new(AtomicBool::new(false));
    let removed = Arc::new(AtomicUsize::new(0));
    let sweeps = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (store, stop) = (Arc::clone(&shared), Arc::clone(&stop));
            thread::spawn(move || write_until(&store, w, &stop))
        })
        .collect();
    let sweepers: Vec<_> = [Arc::clone(&shared), Arc::clone(&other)]
        .into_iter()
        .map(|store| {
            let (stop, removed, sweeps) = (Arc::clone(&stop), Arc::clone(&removed), Arc::clone(&sweeps));
            thread::spawn(move || sweep_until(&store, &stop, &removed, &sweeps))
        })
        .collect();
    let started = Instant::now();
    while started.elapsed() < RACE {
        thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    let stored: Vec<(String, Vec<u8>)> = writers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    for sweeper in sweepers {
        sweeper.join().unwrap();
    }
    assert!(sweeps.load(Ordering::Relaxed) > 10, "the sweeps ran");
    assert!(stored.len() > 1_000, "the writers stored {}", stored.len());
    assert_eq!(removed.load(Ordering::Relaxed), 0, "nothing had expired");
    let fresh = one_hour_store(&dir);
    let lost: Vec<&String> = stored
        .iter()
        .filter(|(reference, body)| fresh.retrieve(reference).map(|b| b.content != body[..]).unwrap_or(true))
        .map(|(reference, _)| reference)
        .collect();
    assert!(lost.is_empty(), "{} of {} artifacts lost, e.g. {:?}", lost.len(), stored.len(), lost.first());
    // The writers' own catalog still knows every one of them.
    assert_eq!(shared.stats(offload_storage::lifecycle::system_now_ms()).unwrap().artifacts, stored.len() as u64);
}

/// A file deleted by hand is forgotten by a sweep; one restored under the
/// same name before the sweep looks again is kept.
#[test]
fn a_sweep_forgets_a_vanished_file_and_keeps_a_restored_one() {
    let tmp = tempfile::tempdir().unwrap();
    let store = one_hour_store(s(tmp.path()));
    let gone = store.store("gone", Bytes::from_static(b"gone"), "text/plain").unwrap();
    let back = store.store("back", Bytes::from_static(b"back"), "text/plain").unwrap();
    std::fs::remove_file(&gone).unwrap();
    std::fs::remove_file(&back).unwrap();
    std::fs::write(&back, b"back").unwrap();
    let now = offload_storage::lifecycle::system_now_ms();
    assert_eq!(store.cleanup_expired(now).unwrap(), 0);
    assert_eq!(store.stats(now).unwrap().artifacts, 1);
    assert_eq!(&store.retrieve(&back).unwrap().content[..], b"back");
    assert!(store.retrieve(&gone).is_err());
    // Another instance reads the same from the journal.
    assert_eq!(one_hour_store(s(tmp.path())).stats(now).unwrap().artifacts, 1);
}
