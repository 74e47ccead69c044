//! Pathological expressions and inputs: every query must end within its
//! limits with a "too expensive" error (or a clear jq error, or truncated
//! output for generators), never hang, abort or panic.

use offload_query::{
    run_query, QueryError, QueryLimits, QueryOutput, MAX_DEPTH, MAX_EXPRESSION_BYTES,
};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Time allowed beyond the budget (the clock is read every few hundred steps;
/// a debug build on a loaded machine is slow).
const MARGIN: Duration = Duration::from_millis(1500);

/// A generated ~20 MB document of users.
fn big_doc() -> &'static [u8] {
    static DOC: OnceLock<Vec<u8>> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc = String::from("{\"items\":[");
        let mut i = 0u64;
        while doc.len() < 20_000_000 {
            if i > 0 {
                doc.push(',');
            }
            doc.push_str(&format!(
                "{{\"id\":{i},\"name\":\"user-{i}\",\"email\":\"user{i}@example.com\",\"role\":\"{}\",\
                 \"score\":{}.5,\"tags\":[\"a\",\"b\",\"c{}\"],\"active\":{}}}",
                ["admin", "user", "guest"][(i % 3) as usize],
                i % 100,
                i % 7,
                i.is_multiple_of(2)
            ));
            i += 1;
        }
        doc.push_str("],\"count\":");
        doc.push_str(&i.to_string());
        doc.push('}');
        doc.into_bytes()
    })
}

/// Default limits, with the step budget lowered to 10 million to keep the
/// debug-build test run short (the time budget stays at its default).
fn test_limits() -> QueryLimits {
    QueryLimits {
        max_steps: 10_000_000,
        ..QueryLimits::default()
    }
}

/// Runs a query and checks that it ended within its time budget.
fn timed(
    doc: &[u8],
    expr: &str,
    limits: &QueryLimits,
) -> (Result<QueryOutput, QueryError>, Duration) {
    let start = Instant::now();
    let result = run_query(doc, expr, limits);
    let elapsed = start.elapsed();
    assert!(
        elapsed < limits.time_budget + MARGIN,
        "{expr}: took {elapsed:?}, budget {:?}",
        limits.time_budget
    );
    (result, elapsed)
}

/// The query must be stopped by a limit.
fn assert_too_expensive(doc: &[u8], expr: &str) -> Duration {
    let (result, elapsed) = timed(doc, expr, &test_limits());
    match result {
        Err(QueryError::TooExpensive(msg)) => {
            assert!(
                msg.contains("limit"),
                "{expr}: message without the limit: {msg}"
            );
            println!("{elapsed:>12.3?}  {expr}  ->  {msg}");
        }
        other => panic!("{expr}: expected TooExpensive, got {}", describe(&other)),
    }
    elapsed
}

/// The query must be stopped by a limit, end with a jq error, or be truncated.
fn assert_stopped(doc: &[u8], expr: &str) -> Duration {
    let (result, elapsed) = timed(doc, expr, &test_limits());
    match &result {
        Err(QueryError::TooExpensive(_) | QueryError::Runtime(_)) => {}
        Ok(out) if out.truncated => {}
        other => panic!("{expr}: expected a stop, got {}", describe(other)),
    }
    println!("{elapsed:>12.3?}  {expr}  ->  {}", describe(&result));
    elapsed
}

fn describe(r: &Result<QueryOutput, QueryError>) -> String {
    match r {
        Ok(out) => format!(
            "Ok({} lines, truncated: {}, first: {:.80})",
            out.lines.len(),
            out.truncated,
            out.lines.first().map(String::as_str).unwrap_or("")
        ),
        Err(e) => format!("Err({e})"),
    }
}

#[test]
fn big_document_is_usable() {
    let doc = big_doc();
    assert!(doc.len() >= 20_000_000);
    // generous budget: this test checks results, and a debug build parses slowly
    let limits = QueryLimits {
        time_budget: Duration::from_secs(30),
        ..QueryLimits::default()
    };
    let (r, elapsed) = timed(
        doc,
        ".count, (.items | length), .items[1234].email",
        &limits,
    );
    let out = r.expect("simple query on the big document");
    assert_eq!(out.lines[1], out.lines[0]);
    assert_eq!(out.lines[2], "\"user1234@example.com\"");
    println!("simple query on {} bytes: {elapsed:?}", doc.len());
    let (r, _) = timed(
        doc,
        r#"[.items[] | select(.role == "admin" and .score > 98)] | length"#,
        &limits,
    );
    assert!(r.expect("select on the big document").lines[0]
        .parse::<u64>()
        .is_ok());
}

#[test]
fn infinite_generators_on_big_document() {
    let doc = big_doc();
    for expr in [
        "range(1e18)",
        "[range(1e18)] | length",
        "last(range(1e18))",
        "repeat(1)",
        "[repeat(1)] | length",
        "0 | recurse(. + 1)",
        "[0 | recurse(. + 1)] | length",
        "limit(1e9; repeat(.))",
        "[limit(1e9; repeat(.))] | length",
        "def f: f; f",
        "def f: ., f; f",
        "[.items[] | repeat(.)] | length",
        "until(false; .)",
        "[while(true; .)] | length",
        "label $x | repeat(1) | select(. == 2) | ., break $x",
        "first(repeat(1) | select(. == 2))",
    ] {
        assert_stopped(doc, expr);
    }
}

#[test]
fn huge_reductions_and_collections_on_big_document() {
    let doc = big_doc();
    for expr in [
        "reduce range(1e12) as $x (0; . + 1)",
        "[range(1e9)] | length",
        "[limit(1e8; repeat(.))] | length",
        "foreach range(1e12) as $x (0; . + 1; empty)",
        "[range(1e6)] as $a | reduce range(1e6) as $i ([]; . + $a) | length",
        "reduce range(1e9) as $i ([]; . + [$i]) | length",
        "def f: [.[], .[]] | f; [1] | f",
        "[.items[] as $x | .items[] | select(.id == $x.id)] | length",
    ] {
        assert_stopped(doc, expr);
    }
}

#[test]
fn unbounded_recursion_never_overflows_the_stack() {
    let doc = big_doc();
    for expr in [
        "def f: 1 + f; f",
        "def f: [f]; f",
        "def f: {a: f}; f",
        "def f: f + 1; f",
        "def f: (1, f) | . + 1; f",
        "def f(g): g | f(g); 0 | f(. + 1)",
        "def f($x): [f($x + 1)]; f(0)",
        "def f: try f catch .; f",
        "def f: reduce f as $x (0; .); f",
        "def f: if . then f else 0 end; [f]",
        "def f: [., f]; f",
        "reduce range(1e6) as $i (null; [.])",
        "reduce range(1e6) as $i (null; {a: .})",
        "null | setpath([range(1e6) | 0]; 1)",
        "[range(20000) | \"a\"] as $p | null | setpath($p; 1)",
        "def f: [f, f]; f",
    ] {
        assert_too_expensive(doc, expr);
    }
}

#[test]
fn memory_blowups_on_big_document() {
    let doc = big_doc();
    for expr in [
        "\"a\" * 1000000000000",
        "reduce range(60) as $i (.; [., .]) | tostring | length",
        "reduce range(60) as $i (.; [., .])",
        "reduce range(40) as $i (1; [., .]) | tojson | length",
        "reduce range(40) as $i (.; [., .]) | flatten | length",
        "(reduce range(40) as $i (1; [., .])) == (reduce range(40) as $i (2 - 1; [., .]))",
        "reduce range(40) as $i (1; [., .]) | [..] | length",
        ". as $x | [$x,$x,$x,$x] | [.,.,.,.] | [.,.,.,.] | [.,.,.,.] | [.,.,.,.] | tostring",
        "[limit(100; repeat(tostring))] | length",
        "reduce range(30) as $i (\"ab\"; . + .) | length",
        "tostring * 1000 | length",
        "[.items[0] | limit(1e9; repeat(tojson))] | length",
        "{} | .[range(1e7) | tostring] = 1 | length",
        "[] | .[1e9] = 1 | length",
        "[] | .[100000000] = 1 | length",
        "tojson | [limit(200; repeat(.))] | add | length",
        "reduce range(50) as $i (\"x\"; @json \"\\(.)\\(.)\") | length",
    ] {
        assert_stopped(doc, expr);
    }
}

#[test]
fn expensive_natives_on_big_document() {
    let doc = big_doc();
    for expr in [
        "tostring | test(\"(a|b|c|d|e)*z\")",
        "tostring | [match(\"[a-z]+\"; \"g\")] | length",
        "tostring | gsub(\"a\"; \"bb\") | length",
        "tostring | explode | length",
        "tostring | indices(\"user\") | length",
        "tostring | split(\"\") | length",
        "tostring | ascii_downcase | ascii_upcase | @base64 | @base64d | length",
        "[.items[] | tostring] | join(\",\") | fromjson | length",
        "tostring | [splits(\",\")] | length",
        "[.items[].tags] | combinations | length",
        "[.items[] | .name] | unique | length",
        ".items | group_by(.id % 1000) | map(length) | add",
        "[.items[] | .score] | sort | .[0]",
        "[.items[] | [.id, .name]] | transpose | length",
        "[.items[] | .email | test(\"^user1\")] | length",
        "[.items[], .items[], .items[], .items[]] | length",
        "[.items[] | .tags[]] as $t | [$t[], $t[], $t[]] | length",
        "[.items[] | tostring * 10] | length",
        "[.items[] | tostring] | sort | length",
        "reduce range(1e6) as $i (\"\"; . + \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\") | length",
        "reduce range(64) as $i (2; . * .) | . > 1",
        "[paths] | length",
        "[..] | length",
        "[.. | numbers] | add",
        "\"a\" * 100000000 | length",
        ".items | map(.id) | contains([1, 2, 3])",
        "[.items[] | select(.tags | inside([\"a\", \"b\", \"c1\"]))] | length",
        ".items | . - .[0:1000] | length",
        "[.items[] | tojson | fromjson] | length",
        "walk(.) | length",
        "[.items[] | to_entries] | length",
        "tostream | select(length == 2) | .[1]",
        "[tostream] | length",
    ] {
        // these may succeed, but must end within the budget
        let (result, elapsed) = timed(doc, expr, &test_limits());
        println!("{elapsed:>12.3?}  {expr}  ->  {}", describe(&result));
    }
}

#[test]
fn small_budgets_are_respected() {
    let doc = big_doc();
    let limits = QueryLimits {
        time_budget: Duration::from_millis(300),
        ..QueryLimits::default()
    };
    for expr in [
        "[range(1e18)] | length",
        "[.items[] | tostring] | sort | length",
        "def f: ., f; [f] | length",
    ] {
        let (result, elapsed) = timed(doc, expr, &limits);
        assert!(
            matches!(result, Err(QueryError::TooExpensive(_))),
            "{expr}: {}",
            describe(&result)
        );
        println!("{elapsed:>12.3?}  {expr}  ->  {}", describe(&result));
    }
    let limits = QueryLimits {
        max_steps: 1000,
        ..QueryLimits::default()
    };
    let (result, _) = timed(doc, "[range(1e18)]", &limits);
    match result {
        Err(e @ QueryError::TooExpensive(_)) => assert_eq!(
            e.to_string(),
            "query too expensive: stopped after 1000 steps (limit); narrow the expression \
             (for example select before map) or query a smaller part"
        ),
        other => panic!("expected a step limit, got {}", describe(&other)),
    }
    let limits = QueryLimits {
        max_memory_bytes: 1 << 20,
        ..QueryLimits::default()
    };
    let (result, _) = timed(doc, "\"a\" * 2000000", &limits);
    assert!(
        matches!(&result, Err(QueryError::TooExpensive(m)) if m.contains("1 MiB")),
        "{}",
        describe(&result)
    );
}

#[test]
fn output_limits_truncate() {
    let limits = QueryLimits {
        max_outputs: 3,
        ..QueryLimits::default()
    };
    let out = run_query(b"[1,2,3,4,5]", ".[]", &limits).expect("truncated output");
    assert_eq!(out.lines, ["1", "2", "3"]);
    assert!(out.truncated);
    let out = run_query(b"[1,2,3]", ".[]", &limits).expect("exactly at the limit");
    assert_eq!(out.lines.len(), 3);

    let limits = QueryLimits {
        max_output_bytes: 10,
        ..QueryLimits::default()
    };
    let out = run_query(b"[\"abcd\",\"efgh\",\"ijkl\"]", ".[]", &limits).expect("byte limit");
    assert_eq!(out.lines, ["\"abcd\""]);
    assert!(out.truncated);
    let err = run_query(b"[\"a long string that does not fit\"]", ".[]", &limits).unwrap_err();
    assert!(
        matches!(err, QueryError::TooExpensive(ref m) if m.contains("first result")),
        "{err}"
    );
    assert!(!run_query(b"1 2", ".", &limits).expect("small").truncated);
}

#[test]
fn deep_documents_are_refused_not_crashed() {
    let deep = "[".repeat(1_000_000);
    let err = run_query(deep.as_bytes(), ".", &QueryLimits::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "not JSON: nested deeper than {MAX_DEPTH} levels at line 1 column {}",
            MAX_DEPTH + 1
        )
    );
    let deep = format!("{}{}", "{\"a\":".repeat(1_000_000), "}".repeat(1_000_000));
    assert!(matches!(
        run_query(deep.as_bytes(), ".", &QueryLimits::default()),
        Err(QueryError::NotJson { .. })
    ));

    // exactly at the limit is accepted, and every walk over it is safe
    let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    for expr in [
        ".",
        "tostring | length",
        "[..] | length",
        ". == .",
        "[., .] | .[0] == .[1]",
        "[paths] | length",
        "tojson | fromjson | . == []",
        "walk(.) | length",
        "flatten",
        ". as $x | [$x] | length",
        "[.] | length",
        "{a: .} | length",
        "[leaf_paths] | length",
        "tostream | length",
        ". * 1 | length",
        "[.[]] | length",
        ". < [[[]]]",
        "[.,.] | unique | length",
        "contains(.)",
    ] {
        let (result, elapsed) = timed(at_limit.as_bytes(), expr, &test_limits());
        match &result {
            Ok(_) | Err(QueryError::TooExpensive(_) | QueryError::Runtime(_)) => {}
            other => panic!("{expr}: {}", describe(other)),
        }
        println!(
            "{elapsed:>12.3?}  depth {MAX_DEPTH}: {expr}  ->  {}",
            describe(&result)
        );
    }
    let ok = run_query(
        at_limit.as_bytes(),
        "tostring | length",
        &QueryLimits::default(),
    );
    assert_eq!(
        ok.expect("printing the deepest document").lines,
        [(2 * MAX_DEPTH).to_string()]
    );

    // fromjson goes through the same reader
    let err = run_query(
        b"null",
        "\"[\" * 100000 | fromjson",
        &QueryLimits::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("nested deeper than"), "{err}");
}

/// `count` repetitions of `open`, then `mid`, then `count` of `close`, within the expression limit.
fn nest(open: &str, mid: &str, close: &str) -> String {
    let count = (MAX_EXPRESSION_BYTES - mid.len()) / (open.len() + close.len());
    format!("{}{}{}", open.repeat(count), mid, close.repeat(count))
}

#[test]
fn deeply_nested_expressions_never_overflow_the_stack() {
    let cases = [
        nest("(", "1", ")"),
        nest("[", "1", "]"),
        nest("{a:", "1", "}"),
        nest("-", "1", ""),
        nest("- ", "1", ""),
        nest("if 1 then ", "1", " else 1 end"),
        nest("\"\\(", "1", ")\""),
        nest(".a", "", ""),
        nest("1+", "1", ""),
        nest("1|", "1", ""),
        nest("1,", "1", ""),
        nest("def f: ", "1", ""),
        nest("try ", "1", ""),
        nest("1 as $x | ", "1", ""),
        nest("label $a | ", "1", ""),
        nest("f(", "1", ")"),
        nest(".[", ".", "]"),
        nest("reduce .[] as $x (", "1", ";1)"),
        nest("not | ", "1", ""),
        nest("[.[]|", "1", "]"),
        nest("1+(", "0", ")"),
        nest("{(", "\"a\"", "):1}"),
        nest("(. as [$a, {b: $c}] | ", "1", ")"),
        nest("foreach .[] as $x (0; 1; ", "1", ")"),
        nest("if . then 1 elif ", "1", " else 2 end"),
        nest(".a[", "0", "]"),
        nest("@json \"\\(", "1", ")\""),
        nest("[.[]?, ", "1", "]"),
        nest("def f: ", "f", "; f"),
    ];
    for expr in cases {
        assert!(expr.len() <= MAX_EXPRESSION_BYTES);
        let (result, elapsed) = timed(b"[1,2]", &expr, &test_limits());
        assert!(
            !matches!(result, Err(QueryError::Internal(_))),
            "{}",
            describe(&result)
        );
        println!(
            "{elapsed:>12.3?}  {:.30}...  ->  {:.100}",
            expr,
            describe(&result)
        );
    }
    let too_long = "1+".repeat(MAX_EXPRESSION_BYTES) + "1";
    let err = run_query(b"1", &too_long, &QueryLimits::default()).unwrap_err();
    assert!(
        matches!(err, QueryError::BadExpression(ref m) if m.contains("limit")),
        "{err}"
    );
}
