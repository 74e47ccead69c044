//! Times a loop of small stores into a fresh directory (no TTL, no budget, no
//! dedup: the default path), and the same loop with a byte budget, so that a
//! change to the store path can be measured before and after.
//!
//! `cargo run --release -p offload-storage --example store_loop -- [stores] [rounds]`

use std::time::Instant;

use offload_storage::{BlobStore, Bytes, FileStore, Lifecycle, Policy};

fn main() {
    let mut args = std::env::args().skip(1);
    let stores: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let budgets = [("default", None), ("maxBytes", Some(1u64 << 40))];
    // Directories are removed only at the end: mass deletes slow file creation
    // down for a while on file systems mounted with `discard`.
    let mut keep = Vec::new();
    for (label, max_bytes) in budgets {
        let mut times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let tmp = tempfile::tempdir().expect("a temporary directory");
            let store = FileStore::new(tmp.path().to_str().expect("a UTF-8 path"));
            store.set_policy(Policy { max_bytes, ..Policy::default() }).expect("a valid policy");
            // The first store opens the directory: not part of the loop.
            store.store("warm", Bytes::from_static(b"warm"), "text/plain").expect("a store");
            let started = Instant::now();
            for i in 0..stores {
                let body = Bytes::from(format!("small artifact {i}"));
                store.store("tool_use_0", body, "text/plain").expect("a store");
            }
            times.push(started.elapsed().as_secs_f64());
            keep.push(tmp);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "{label}: {stores} stores, median of {rounds}: {:.1} ms ({:.2} us/store; min {:.1} ms, max {:.1} ms)",
            median * 1e3,
            median * 1e6 / stores as f64,
            times[0] * 1e3,
            times[times.len() - 1] * 1e3
        );
    }
}
