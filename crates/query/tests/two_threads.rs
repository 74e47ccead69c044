//! Documents of 1 MiB or more are read by two threads: the second reserves
//! from the budget all queries share by itself and hands its reservation over
//! (or gives it back). After many such readings, taken, refused and failed,
//! the whole shared budget is free again. One test in its own process, so that
//! no other query shares the budget meanwhile.

use bytes::Bytes;
use offload_query::{
    run_query, run_query_keeping, ParsedDocument, QueryError, QueryLimits, SHARED_MEMORY_BYTES,
};
use std::sync::Arc;
use std::time::Duration;

fn records(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id": {i}, "name": "user {i}", "tags": ["a", "b"], "ok": true}}"#))
        .collect();
    format!("[{}]", items.join(",\n  "))
}

#[test]
fn two_thread_readings_give_the_shared_budget_back() {
    let limits = QueryLimits {
        time_budget: Duration::from_secs(60),
        max_memory_bytes: SHARED_MEMORY_BYTES,
        ..QueryLimits::default()
    };
    let good = records(40_000);
    assert!(good.len() > 2 << 20);
    let at = good.len() * 3 / 4 + good[good.len() * 3 / 4..].find("true").expect("a true");
    let late_error = format!("{}tru{}", &good[..at], &good[at + 4..]);
    let in_string = format!("[\"{}\", 1]", ", {a: [1, 2]}, 3, [4], true".repeat(100_000));
    for _ in 0..5 {
        let out = run_query(good.as_bytes(), "length", &limits).expect("reads");
        assert_eq!(out.lines, vec!["40000".to_string()]);
        let out = run_query(good.as_bytes(), ".[-1].id, .[20000].name", &limits).expect("reads");
        assert_eq!(
            out.lines,
            vec!["39999".to_string(), "\"user 20000\"".to_string()]
        );
        match run_query(late_error.as_bytes(), "length", &limits) {
            Err(QueryError::NotJson { message, .. }) => assert!(
                message.contains("literal") || message.contains("value"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        let out = run_query(in_string.as_bytes(), "length", &limits).expect("reads");
        assert_eq!(out.lines, vec!["2".to_string()]);
    }
    // every reservation is back: documents can be kept until the budget is full
    std::thread::sleep(Duration::from_millis(500));
    let doc = Bytes::from(format!("[{}]", vec!["[]"; 3_000_000].join(",")));
    let mut kept: Vec<Arc<ParsedDocument>> = Vec::new();
    loop {
        assert!(kept.len() < 60, "the shared budget never filled up");
        let run = run_query_keeping(doc.clone(), "length", &limits, usize::MAX);
        match (run.result, run.document) {
            (Ok(_), Some(document)) => kept.push(document),
            (Err(QueryError::TooExpensive(m)), None) => {
                assert!(m.contains("all queries share"), "{m}");
                break;
            }
            (result, document) => panic!("unexpected {result:?} {document:?}"),
        }
    }
    let held: usize = kept.iter().map(|d| d.charged_bytes()).sum();
    assert!(held <= SHARED_MEMORY_BYTES, "{held} held");
    assert!(
        held + kept[0].charged_bytes() > SHARED_MEMORY_BYTES - (64 << 20),
        "{held} held of {SHARED_MEMORY_BYTES}"
    );
}
