//! Compaction of `.metadata.journal`: a journal of mostly removed artifacts
//! shrinks on the next open or sweep, appenders in other threads and
//! processes lose no line while it is compacted, and a compaction killed at
//! any moment leaves every live artifact known.
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::s;
use offload_storage::{BlobStore, Bytes, FileStore, Lifecycle, Policy, StorageError};

const JOURNAL: &str = ".metadata.journal";
/// A fixed "now" (ms since the epoch) for the generated journals.
const T0: u64 = 1_800_000_000_000;
/// Set in the environment of a child process: what it does (`store` or `compact`).
const CHILD_ROLE: &str = "OFFLOAD_COMPACTION_CHILD_ROLE";
/// The directory a child works in.
const CHILD_DIR: &str = "OFFLOAD_COMPACTION_CHILD_DIR";
/// A child's number.
const CHILD_ID: &str = "OFFLOAD_COMPACTION_CHILD_ID";

fn journal_len(dir: &std::path::Path) -> u64 {
    std::fs::metadata(dir.join(JOURNAL)).unwrap().len()
}

/// Journal lines of `dead` artifacts stored and then evicted.
fn dead_lines(dead: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(dead * 190);
    for i in 0..dead {
        let name = format!("{}_{i}_tooluse_{i:08}_0.json", T0 + i as u64);
        out.extend_from_slice(format!(
            "{{\"f\":\"{name}\",\"t\":\"application/json\",\"n\":{},\"c\":{},\"s\":\"session-{}\"}}\n",
            1_000 + i,
            T0 + i as u64,
            i % 7
        )
        .as_bytes());
        out.extend_from_slice(format!("{{\"r\":\"{name}\",\"y\":\"v\"}}\n").as_bytes());
    }
    out
}

/// The name of the `i`th generated live artifact.
fn live_name(i: usize) -> String {
    format!("{}_{i}_live_{i}.txt", T0 + i as u64)
}

/// Journal lines of `live` artifacts of 10 bytes (no file behind them
/// unless a test writes one).
fn live_lines(live: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..live {
        out.extend_from_slice(
            format!("{{\"f\":\"{}\",\"t\":\"text/x-live-{i}\",\"n\":10,\"c\":{}}}\n", live_name(i), T0 + i as u64)
                .as_bytes(),
        );
    }
    out
}

/// Runs this very test again as a child process with `role`.
fn spawn_child(test: &str, role: &str, dir: &str, id: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ROLE, role)
        .env(CHILD_DIR, dir)
        .env(CHILD_ID, id.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The role of this process when it was started as a child, with its
/// directory and number.
fn child_role() -> Option<(String, String, usize)> {
    let role = std::env::var(CHILD_ROLE).ok()?;
    let dir = std::env::var(CHILD_DIR).ok()?;
    let id = std::env::var(CHILD_ID).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    Some((role, dir, id))
}

/// Stores `count` artifacts, each with a content type of its own; returns
/// (reference, content type) of each.
fn store_distinct(store: &FileStore, tag: &str, count: usize) -> Vec<(String, String)> {
    (0..count)
        .map(|i| {
            let content_type = format!("application/x-{tag}-{i}");
            let reference =
                store.store(&format!("{tag}_{i}"), Bytes::from(format!("{tag} {i}")), &content_type).unwrap();
            (reference, content_type)
        })
        .collect()
}

#[test]
fn a_journal_of_removed_artifacts_is_compacted_by_the_next_open() {
    let tmp = tempfile::tempdir().unwrap();
    let mut journal = dead_lines(300_000);
    journal.extend(live_lines(10));
    std::fs::write(tmp.path().join(JOURNAL), &journal).unwrap();
    let before = journal_len(tmp.path());
    let started = Instant::now();
    let first = FileStore::new(s(tmp.path()));
    assert_eq!(first.stats(T0).unwrap().artifacts, 10);
    let first_open = started.elapsed();
    let after = journal_len(tmp.path());
    let started = Instant::now();
    let second = FileStore::new(s(tmp.path()));
    assert_eq!(second.stats(T0).unwrap().artifacts, 10);
    let second_open = started.elapsed();
    println!(
        "journal of 300,000 removed and 10 live artifacts: {before} bytes; first open (reads and compacts) \
         {first_open:?}; compacted to {after} bytes; next open {second_open:?}"
    );
    assert!(before > 50_000_000, "{before}");
    assert!(after < 100_000, "compacted to {after} bytes");
    // Both instances agree, recent removals still say why.
    for store in [&first, &second] {
        let listed = store.list_artifacts().unwrap();
        assert!(listed.is_empty(), "no file is behind the generated records");
        let recent = format!("{}_299999_tooluse_00299999_0.json", T0 + 299_999);
        match store.retrieve_at(&recent, T0) {
            Err(StorageError::Gone { reason, .. }) => assert_eq!(reason, offload_storage::GoneReason::Evicted),
            other => panic!("{other:?}"),
        }
    }
    // The first instance reads on from the compacted journal.
    let r = first.store("after", Bytes::from_static(b"x"), "text/x-after").unwrap();
    assert_eq!(second.retrieve(&r).unwrap().content_type, "text/x-after");
}

#[test]
fn a_sweep_of_stored_artifacts_compacts_the_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let store = FileStore::new(s(tmp.path()));
    store.set_policy(Policy { default_ttl_ms: Some(1_000), ..Policy::default() }).unwrap();
    let kept = FileStore::new(s(tmp.path()));
    let forever = kept.store("forever", Bytes::from_static(b"kept"), "text/x-kept").unwrap();
    let key = "k".repeat(120);
    for i in 0..6_000 {
        store.store(&format!("{key}{i}"), Bytes::from_static(b"brief"), "text/plain").unwrap();
    }
    let grown = journal_len(tmp.path());
    assert!(grown > 1 << 20, "{grown}");
    let later = offload_storage::lifecycle::system_now_ms() + 2_000;
    assert_eq!(store.cleanup_expired(later).unwrap(), 6_000);
    let compacted = journal_len(tmp.path());
    assert!(compacted < 200_000, "{grown} bytes compacted to {compacted}");
    assert_eq!(FileStore::new(s(tmp.path())).retrieve(&forever).unwrap().content_type, "text/x-kept");
    assert_eq!(store.stats(later).unwrap().artifacts, 1);
    assert_eq!(common::visible_names(tmp.path()).len(), 1);
}

/// Writers in two threads and two child processes store while another
/// thread compacts the journal over and over (the threads go on until ten
/// compactions ran): a fresh instance afterwards knows the content type of
/// every artifact stored.
#[test]
fn compaction_racing_appenders_in_threads_and_processes_loses_no_line() {
    const TEST: &str = "compaction_racing_appenders_in_threads_and_processes_loses_no_line";
    const PER_WRITER: usize = 1_500;
    if let Some((_, dir, id)) = child_role() {
        let store = FileStore::new(&dir);
        for (reference, content_type) in store_distinct(&store, &format!("p{id}"), PER_WRITER) {
            println!("stored\t{reference}\t{content_type}");
        }
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = s(tmp.path()).to_owned();
    std::fs::write(tmp.path().join(JOURNAL), dead_lines(5_000)).unwrap();
    let store = Arc::new(FileStore::new(&dir));
    let done = Arc::new(AtomicBool::new(false));
    let compactions = Arc::new(AtomicUsize::new(0));
    let compactor = {
        let (done, compactions, dir) = (Arc::clone(&done), Arc::clone(&compactions), dir.clone());
        thread::spawn(move || {
            let own = FileStore::new(&dir);
            while !done.load(Ordering::Relaxed) {
                if own.compact_journal().unwrap() {
                    compactions.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let children: Vec<Child> = (0..2).map(|id| spawn_child(TEST, "store", &dir, id)).collect();
    // The threads store until the children are done and ten compactions ran meanwhile.
    let children_done = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|t| {
            let (store, compactions, children_done) =
                (Arc::clone(&store), Arc::clone(&compactions), Arc::clone(&children_done));
            thread::spawn(move || {
                let started = Instant::now();
                let mut stored = Vec::new();
                while !(children_done.load(Ordering::Relaxed) && compactions.load(Ordering::Relaxed) >= 10)
                    && started.elapsed() < Duration::from_secs(120)
                {
                    stored.extend(store_distinct(&store, &format!("t{t}_{}", stored.len()), 100));
                }
                stored
            })
        })
        .collect();
    let mut stored: Vec<(String, String)> = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success());
        for line in String::from_utf8(output.stdout).unwrap().lines() {
            // The harness's own "test ... " may open the first line.
            if let Some((_, rest)) = line.split_once("stored\t") {
                let (reference, content_type) = rest.split_once('\t').unwrap();
                stored.push((reference.to_owned(), content_type.to_owned()));
            }
        }
    }
    assert_eq!(stored.len(), 2 * PER_WRITER, "every line of the children");
    children_done.store(true, Ordering::Relaxed);
    stored.extend(writers.into_iter().flat_map(|w| w.join().unwrap()));
    let during = compactions.load(Ordering::Relaxed);
    done.store(true, Ordering::Relaxed);
    compactor.join().unwrap();
    assert!(during >= 10, "{during} compactions while the threads stored");
    assert!(stored.len() > 2 * PER_WRITER, "the threads stored too");
    let fresh = FileStore::new(&dir);
    let lost: Vec<&(String, String)> =
        stored.iter().filter(|(r, t)| fresh.retrieve(r).map(|b| b.content_type != *t).unwrap_or(true)).collect();
    assert!(lost.is_empty(), "{} of {} lines lost, e.g. {:?}", lost.len(), stored.len(), lost.first());
    assert_eq!(fresh.stats(T0).unwrap().artifacts, stored.len() as u64);
    // The writers' own instance, which read the journal while it was replaced, agrees.
    assert_eq!(store.stats(T0).unwrap().artifacts, stored.len() as u64);
}

/// A child process compacts the journal in a loop and is killed with
/// SIGKILL ten times, at random moments or as soon as its compacted journal
/// is being written: every live artifact is still known afterwards, and the
/// journal is whole.
#[test]
fn a_compaction_killed_at_any_moment_loses_no_live_artifact() {
    const TEST: &str = "a_compaction_killed_at_any_moment_loses_no_live_artifact";
    const LIVE: usize = 20_000;
    if let Some((_, dir, _)) = child_role() {
        let store = FileStore::new(&dir).keeping_expired();
        let started = Instant::now();
        store.compact_journal().unwrap();
        // How long one compaction takes, so that the kills spread over every step of one.
        println!("ready {}", started.elapsed().as_micros());
        // Until killed (or, should the test be gone, for a minute).
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until {
            store.compact_journal().unwrap();
        }
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = s(tmp.path()).to_owned();
    let mut journal = dead_lines(20_000);
    journal.extend(live_lines(LIVE));
    std::fs::write(tmp.path().join(JOURNAL), &journal).unwrap();
    // Files behind the first few, so that a listing shows them with their types.
    const WITH_FILES: usize = 300;
    for i in 0..WITH_FILES {
        std::fs::write(tmp.path().join(live_name(i)), b"0123456789").unwrap();
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for round in 0..10 {
        let mut child = spawn_child(TEST, "compact", &dir, round);
        let mut ready = String::new();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        while !ready.contains("ready") {
            ready.clear();
            assert!(out.read_line(&mut ready).unwrap() > 0, "the child ended early");
        }
        if round % 2 == 0 {
            // At a random moment of the next compactions.
            let took: u64 = ready.split_whitespace().last().and_then(|t| t.parse().ok()).unwrap_or(10_000);
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            thread::sleep(Duration::from_micros(seed % (2 * took + 1)));
        } else {
            // As soon as a compacted journal is being written, before it is renamed.
            let temporaries = |names: Vec<String>| names.into_iter().filter(|n| n.starts_with(".tmp-")).collect::<Vec<_>>();
            let left_before = temporaries(common::all_names(tmp.path()));
            while temporaries(common::all_names(tmp.path())) == left_before {}
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let fresh = FileStore::new(&dir).keeping_expired();
        assert_eq!(fresh.stats(T0).unwrap().artifacts, LIVE as u64, "round {round}");
        let listed = fresh.list_artifacts().unwrap();
        assert_eq!(listed.len(), WITH_FILES, "round {round}");
        for (i, artifact) in listed.iter().enumerate() {
            assert_eq!((artifact.name.as_str(), artifact.content_type.as_str()), (live_name(i).as_str(), format!("text/x-live-{i}").as_str()));
        }
        let text = std::fs::read_to_string(tmp.path().join(JOURNAL)).unwrap();
        assert!(text.ends_with('\n') && text.lines().all(|l| l.starts_with('{') && l.ends_with('}')), "round {round}");
    }
    assert!(journal_len(tmp.path()) < journal.len() as u64, "the journal was compacted");
    let temporaries = common::all_names(tmp.path()).into_iter().filter(|n| n.starts_with(".tmp-")).count();
    println!("{temporaries} temporary files left by the killed compactions (swept when stale)");
}
