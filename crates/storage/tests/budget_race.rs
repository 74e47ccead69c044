//! Many writers, in one process and in several, storing into one directory
//! under one byte budget: every store finishes, the artifacts on disk stay
//! within the budget (at most one artifact over while writers race) and the
//! journal grows with the stores, not without bound.

mod common;

use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use common::s;
use offload_storage::{BlobStore, Bytes, FileStore, Lifecycle, Policy};

const BUDGET: u64 = 2_000_000;
const SMALLEST: u64 = 20_000;
const LARGEST: u64 = 100_000;
const STORES_PER_WRITER: usize = 150;
/// Longest a run may take before it counts as hung.
const DEADLINE: Duration = Duration::from_secs(240);
/// Set in the environment of a child process of the multi-process test: the directory.
const CHILD_DIR: &str = "OFFLOAD_BUDGET_RACE_CHILD_DIR";
/// The child's number (seeds its sizes).
const CHILD_ID: &str = "OFFLOAD_BUDGET_RACE_CHILD_ID";

fn budget_store(dir: &str) -> FileStore {
    let store = FileStore::new(dir);
    store.set_policy(Policy { max_bytes: Some(BUDGET), ..Policy::default() }).unwrap();
    store
}

/// Stores `STORES_PER_WRITER` artifacts of 20 to 100 KB (sizes from `seed`).
fn write(store: &FileStore, seed: u64) -> usize {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for i in 0..STORES_PER_WRITER {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = SMALLEST + state % (LARGEST - SMALLEST + 1);
        let body = vec![b'a' + (i % 26) as u8; usize::try_from(len).unwrap()];
        store.store(&format!("w{seed}_{i}"), Bytes::from(body), "application/octet-stream").unwrap();
    }
    STORES_PER_WRITER
}

/// Bytes of the artifact files in `dir` (hidden files, such as the journal
/// and in-flight writes, are not artifacts); files removed while listed are
/// skipped.
fn artifact_bytes_on_disk(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Samples the bytes on disk until `done`; returns the most seen and how many samples.
fn sample_until(dir: std::path::PathBuf, done: Arc<AtomicBool>, most: Arc<AtomicU64>) -> thread::JoinHandle<usize> {
    thread::spawn(move || {
        let mut samples = 0;
        while !done.load(Ordering::Relaxed) {
            most.fetch_max(artifact_bytes_on_disk(&dir), Ordering::Relaxed);
            samples += 1;
            thread::sleep(Duration::from_millis(2));
        }
        samples
    })
}

/// What must hold once every writer finished.
fn check_after(dir: &std::path::Path, most: u64, samples: usize, stores: usize) {
    assert!(samples > 10, "the sampler ran ({samples} samples)");
    assert!(most <= BUDGET + LARGEST, "{most} bytes on disk at one point: more than the budget and one artifact");
    let at_end = artifact_bytes_on_disk(dir);
    assert!(at_end <= BUDGET, "{at_end} bytes on disk at the end");
    assert!(at_end >= BUDGET - 2 * LARGEST, "the budget is used ({at_end} bytes)");
    let journal = std::fs::metadata(dir.join(".metadata.journal")).unwrap().len();
    // One stored and at most one removal line per store, of about 100 bytes each.
    assert!(journal < (stores as u64) * 2 * 200, "the journal grew to {journal} bytes for {stores} stores");
    let fresh = budget_store(s(dir));
    let stats = fresh.stats(offload_storage::lifecycle::system_now_ms()).unwrap();
    assert!(stats.stored_bytes <= BUDGET, "{} bytes counted", stats.stored_bytes);
    assert_eq!(stats.stored_bytes, at_end);
}

#[test]
fn sixteen_writers_in_one_process_keep_the_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = s(tmp.path()).to_owned();
    // Four instances (each its own catalog, as separate processes have), four threads each.
    let stores: Vec<Arc<FileStore>> = (0..4).map(|_| Arc::new(budget_store(&dir))).collect();
    let (done, most) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    let sampler = sample_until(tmp.path().to_path_buf(), Arc::clone(&done), Arc::clone(&most));
    let (tx, rx) = mpsc::channel();
    for w in 0..16u64 {
        let (store, tx) = (Arc::clone(&stores[(w % 4) as usize]), tx.clone());
        thread::spawn(move || {
            let _ = tx.send(write(&store, w + 1));
        });
    }
    drop(tx);
    let started = Instant::now();
    let mut stored = 0;
    for _ in 0..16 {
        let left = DEADLINE.saturating_sub(started.elapsed());
        stored += rx.recv_timeout(left).expect("a writer did not finish in time (or failed)");
    }
    done.store(true, Ordering::Relaxed);
    let samples = sampler.join().unwrap();
    check_after(tmp.path(), most.load(Ordering::Relaxed), samples, stored);
}

/// Four threads of one child process: stores into the directory in `CHILD_DIR`.
fn run_child(dir: &str, id: u64) {
    let store = Arc::new(budget_store(dir));
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let store = Arc::clone(&store);
            thread::spawn(move || write(&store, id * 10 + t))
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
}

fn spawn_child(dir: &str, id: u64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "four_processes_of_four_writers_keep_the_budget", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR, dir)
        .env(CHILD_ID, id.to_string())
        .spawn()
        .unwrap()
}

/// The test runs itself again as each of its four child processes.
#[test]
fn four_processes_of_four_writers_keep_the_budget() {
    if let Ok(dir) = std::env::var(CHILD_DIR) {
        let id = std::env::var(CHILD_ID).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
        run_child(&dir, id);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = s(tmp.path()).to_owned();
    let (done, most) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    let sampler = sample_until(tmp.path().to_path_buf(), Arc::clone(&done), Arc::clone(&most));
    let mut children: Vec<Child> = (1..=4).map(|id| spawn_child(&dir, id)).collect();
    let started = Instant::now();
    let mut statuses = Vec::new();
    while statuses.len() < children.len() {
        if started.elapsed() > DEADLINE {
            for child in &mut children {
                let _ = child.kill();
            }
            panic!("a writer process did not finish in time");
        }
        statuses = children.iter_mut().filter_map(|c| c.try_wait().unwrap()).collect();
        thread::sleep(Duration::from_millis(20));
    }
    done.store(true, Ordering::Relaxed);
    let samples = sampler.join().unwrap();
    assert!(statuses.iter().all(std::process::ExitStatus::success), "{statuses:?}");
    check_after(tmp.path(), most.load(Ordering::Relaxed), samples, 16 * STORES_PER_WRITER);
}
