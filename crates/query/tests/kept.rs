//! Documents read once and queried again: the same answers as reading them
//! each time, never changed by a query, and every limit still holding.

use bytes::Bytes;
use offload_query::{
    run_query, run_query_keeping, run_query_parsed, QueryError, QueryLimits, QueryOutput,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn limits() -> QueryLimits {
    QueryLimits {
        time_budget: Duration::from_secs(20),
        ..QueryLimits::default()
    }
}

fn text(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// Records of users, about `n` of them.
fn users(n: usize) -> String {
    let users: Vec<String> = (0..n)
        .map(|i| {
            let role = ["admin", "member", "viewer"][i % 3];
            format!(
                r#"{{"id": {i}, "name": "user \u00e9{i}", "role": "{role}", "logins": {}, "tags": ["a", "b"]}}"#,
                (i * 37) % 1000
            )
        })
        .collect();
    format!(r#"{{"users": [{}], "total": {n}}}"#, users.join(",\n"))
}

#[test]
fn kept_documents_answer_as_documents_read_each_time() {
    let doc = users(500) + " 7 \"second\" [1,2,3]";
    let run = run_query_keeping(text(&doc), ".total? // .", &limits(), usize::MAX);
    let kept = run.document.expect("kept");
    assert_eq!(kept.len(), 4);
    assert!(
        kept.charged_bytes() > doc.len(),
        "the buffer and the values are charged"
    );
    assert_eq!(
        run.result,
        run_query(doc.as_bytes(), ".total? // .", &limits())
    );
    for expr in [
        ".users[] | select(.role == \"admin\") | .name",
        "[.users[]? | .logins] | add",
        ".users[0] | to_entries",
        "[inputs]",
        "input",
        "., .",
        "paths(type == \"number\") | tostring",
        ".users[3].tags[1:]",
        "tojson | length",
        "[.. | strings] | length",
        ".users[0].nope.deeper",
        "error(\"x\")",
    ] {
        assert_eq!(
            run_query_parsed(&kept, expr, &limits()),
            run_query(doc.as_bytes(), expr, &limits()),
            "{expr}"
        );
    }
}

#[test]
fn queries_never_change_a_kept_document() {
    let doc = r#"{"a": [1, {"b": "x"}], "s": "text"}"#;
    let kept = run_query_keeping(text(doc), ".", &limits(), usize::MAX)
        .document
        .expect("kept");
    for expr in [
        ".a[1].b = 5",
        ".a += [3]",
        "del(.s)",
        ".a |= reverse",
        "to_entries | map(.value = null) | from_entries",
        ".s |= ascii_upcase",
        "walk(if type == \"number\" then . + 1 else . end)",
    ] {
        let out = run_query_parsed(&kept, expr, &limits());
        assert!(out.is_ok(), "{expr}: {out:?}");
    }
    let same = run_query_parsed(&kept, ".", &limits());
    assert_eq!(
        same.map(|o| o.lines),
        Ok(vec![r#"{"a":[1,{"b":"x"}],"s":"text"}"#.to_string()])
    );
}

#[test]
fn what_is_kept_and_what_is_not() {
    let doc = users(50);
    // read, but charged more than asked: not kept
    let run = run_query_keeping(text(&doc), ".total", &limits(), 100);
    assert!(run.document.is_none());
    assert_eq!(run.result.map(|o| o.lines), Ok(vec!["50".to_string()]));
    // kept even when the query itself fails
    let run = run_query_keeping(text(&doc), ".total | error", &limits(), usize::MAX);
    assert!(matches!(run.result, Err(QueryError::Runtime(_))));
    assert!(run.document.is_some());
    // not read: bad expression, not JSON, a limit while reading
    let run = run_query_keeping(text(&doc), ".[", &limits(), usize::MAX);
    assert!(matches!(run.result, Err(QueryError::BadExpression(_))));
    assert!(run.document.is_none());
    let run = run_query_keeping(text("{\"a\": 1,}"), ".", &limits(), usize::MAX);
    assert!(matches!(run.result, Err(QueryError::NotJson { .. })));
    assert!(run.document.is_none());
    let small = QueryLimits {
        max_memory_bytes: 64 << 10,
        ..limits()
    };
    let run = run_query_keeping(text(&users(2000)), ".", &small, usize::MAX);
    assert!(
        matches!(run.result, Err(QueryError::TooExpensive(_))),
        "{:?}",
        run.result
    );
    assert!(run.document.is_none());
}

fn too_expensive(r: &Result<QueryOutput, QueryError>, what: &str) {
    match r {
        Err(QueryError::TooExpensive(m)) => assert!(m.contains(what), "{m}"),
        other => panic!("expected too expensive ({what}), got {other:?}"),
    }
}

#[test]
fn every_limit_holds_on_a_kept_document() {
    let doc = users(3000);
    let kept = run_query_keeping(text(&doc), "length", &limits(), usize::MAX)
        .document
        .expect("kept");
    let charged = kept.charged_bytes();
    let tight = QueryLimits {
        max_steps: 200_000,
        ..limits()
    };
    too_expensive(
        &run_query_parsed(
            &kept,
            "[.users[] | to_entries] | length, last(range(1e9))",
            &tight,
        ),
        "steps",
    );
    let quick = QueryLimits {
        time_budget: Duration::from_millis(300),
        max_steps: u64::MAX,
        ..limits()
    };
    let start = Instant::now();
    too_expensive(
        &run_query_parsed(&kept, "last(range(1e12))", &quick),
        "time limit",
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    // the document counts against the query's own memory budget again
    let under = QueryLimits {
        max_memory_bytes: charged - 1,
        ..limits()
    };
    too_expensive(&run_query_parsed(&kept, ".total", &under), "of values");
    let just = QueryLimits {
        max_memory_bytes: charged + (1 << 20),
        ..limits()
    };
    assert!(run_query_parsed(&kept, ".total", &just).is_ok());
    too_expensive(
        &run_query_parsed(&kept, "[.users[] | tojson] | add * 100", &just),
        "of values",
    );
    too_expensive(&run_query_parsed(&kept, "def f: [f]; f", &limits()), "");
    let few = QueryLimits {
        max_outputs: 10,
        ..limits()
    };
    let out = run_query_parsed(&kept, ".users[].id", &few).expect("truncated");
    assert_eq!(out.lines.len(), 10);
    assert!(out.truncated);
    let narrow = QueryLimits {
        max_output_bytes: 100,
        ..limits()
    };
    too_expensive(&run_query_parsed(&kept, ".users", &narrow), "output limit");
}

#[test]
fn kept_documents_are_shared_between_threads() {
    let doc = users(2000);
    let kept = run_query_keeping(text(&doc), ".total", &limits(), usize::MAX)
        .document
        .expect("kept");
    let want = run_query(
        doc.as_bytes(),
        "[.users[] | select(.logins > 500) | .id] | length",
        &limits(),
    );
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let kept = Arc::clone(&kept);
            std::thread::spawn(move || {
                (0..5)
                    .map(|_| {
                        run_query_parsed(
                            &kept,
                            "[.users[] | select(.logins > 500) | .id] | length",
                            &limits(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for t in threads {
        for got in t.join().expect("thread") {
            assert_eq!(got, want);
        }
    }
}
