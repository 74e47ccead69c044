//! Kept documents hold their memory in the budget all queries share: keeping
//! documents until that budget is full stops the next query, unless a relief
//! registered with `on_memory_pressure` gives kept documents up. One test in
//! its own process, so that no other query shares the budget meanwhile.

use bytes::Bytes;
use offload_query::{
    on_memory_pressure, run_query_keeping, ParsedDocument, QueryError, QueryLimits,
    SHARED_MEMORY_BYTES,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `[[],[],...]` of about `bytes` bytes: about 22 times its size once read.
fn empty_arrays(bytes: usize) -> Bytes {
    let mut doc = Vec::with_capacity(bytes + 2);
    doc.push(b'[');
    while doc.len() < bytes {
        doc.extend_from_slice(b"[],");
    }
    doc.extend_from_slice(b"[]]");
    Bytes::from(doc)
}

#[test]
fn kept_documents_count_in_the_shared_budget_and_give_way_under_pressure() {
    let limits = QueryLimits {
        time_budget: Duration::from_secs(60),
        max_memory_bytes: SHARED_MEMORY_BYTES,
        ..QueryLimits::default()
    };
    let doc = empty_arrays(8 << 20);
    let mut kept: Vec<Arc<ParsedDocument>> = Vec::new();
    // keep documents until the shared budget refuses the next one
    let refused = loop {
        assert!(kept.len() < 40, "the shared budget never filled up");
        let run = run_query_keeping(doc.clone(), "length", &limits, usize::MAX);
        match (run.result, run.document) {
            (Ok(_), Some(document)) => kept.push(document),
            (Err(e), None) => break e,
            (result, document) => panic!("unexpected {result:?} {document:?}"),
        }
    };
    let held: usize = kept.iter().map(|d| d.charged_bytes()).sum();
    assert!(kept.len() >= 2, "{} kept", kept.len());
    assert!(held <= SHARED_MEMORY_BYTES, "{held} held");
    assert!(
        held + kept[0].charged_bytes() > SHARED_MEMORY_BYTES - (64 << 20),
        "{held} held"
    );
    match refused {
        QueryError::TooExpensive(m) => assert!(m.contains("all queries share"), "{m}"),
        other => panic!("{other:?}"),
    }

    // a relief that gives up the oldest kept documents lets the query through
    let pool = Arc::new(Mutex::new(kept));
    let calls = Arc::new(AtomicUsize::new(0));
    let (relief_pool, relief_calls) = (Arc::clone(&pool), Arc::clone(&calls));
    on_memory_pressure(Some(Arc::new(move |missing: usize| {
        relief_calls.fetch_add(1, Ordering::SeqCst);
        let mut pool = relief_pool.lock().unwrap_or_else(|e| e.into_inner());
        let mut freed = 0;
        while freed < missing && !pool.is_empty() {
            freed += pool.remove(0).charged_bytes();
        }
        // the query then waits while the dropped documents give their share back
        freed > 0
    })));
    let run = run_query_keeping(doc.clone(), "length", &limits, usize::MAX);
    assert!(run.result.is_ok(), "{:?}", run.result);
    assert!(calls.load(Ordering::SeqCst) >= 1);
    on_memory_pressure(None);
    drop(run);

    // once every document is dropped, the whole budget is free again
    pool.lock().unwrap_or_else(|e| e.into_inner()).clear();
    std::thread::sleep(Duration::from_secs(1));
    let mut all = Vec::new();
    for _ in 0..3 {
        let run = run_query_keeping(doc.clone(), "length", &limits, usize::MAX);
        assert!(run.result.is_ok(), "{:?}", run.result);
        all.extend(run.document);
    }
    assert_eq!(all.len(), 3);
}
