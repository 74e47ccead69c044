//! Times opening a directory whose journal records `removed` artifacts
//! stored and removed (and 10 live ones): the first open, and the next one,
//! with the journal's size after each.
//!
//! `cargo run --release -p offload-storage --example journal_open -- [removed]`

use std::time::Instant;

use offload_storage::{FileStore, Lifecycle};

const T0: u64 = 1_800_000_000_000;

/// Journal lines of `removed` artifacts stored and evicted, then of 10 live ones.
fn journal(removed: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(removed * 190);
    for i in 0..removed {
        let name = format!("{}_{i}_tooluse_{i:08}_0.json", T0 + i as u64);
        let stored = format!(
            "{{\"f\":\"{name}\",\"t\":\"application/json\",\"n\":{},\"c\":{},\"s\":\"session-{}\"}}\n",
            1_000 + i,
            T0 + i as u64,
            i % 7
        );
        out.extend_from_slice(stored.as_bytes());
        out.extend_from_slice(format!("{{\"r\":\"{name}\",\"y\":\"v\"}}\n").as_bytes());
    }
    for i in 0..10 {
        let live = format!("{{\"f\":\"{T0}_{i}_live.txt\",\"t\":\"text/plain\",\"n\":10,\"c\":{T0}}}\n");
        out.extend_from_slice(live.as_bytes());
    }
    out
}

fn main() {
    let removed: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300_000);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let path = tmp.path().join(".metadata.journal");
    std::fs::write(&path, journal(removed)).expect("the journal written");
    let size = |label: &str| {
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        println!("{label}: journal of {len} bytes");
    };
    size("generated");
    for open in ["first open", "second open"] {
        let started = Instant::now();
        let store = FileStore::new(tmp.path().to_str().expect("a UTF-8 path"));
        let live = store.stats(T0).expect("stats").artifacts;
        println!("{open}: {:.1} ms ({live} live artifacts)", started.elapsed().as_secs_f64() * 1e3);
        size(open);
    }
}
