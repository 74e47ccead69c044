//! Natives that were re-implemented so that they meter their work and
//! output: their results, their errors, and their steps on long inputs.

use offload_query::{run_query, QueryError, QueryLimits};
use std::time::{Duration, Instant};

fn lines(doc: &str, expr: &str) -> Result<Vec<String>, QueryError> {
    run_query(doc.as_bytes(), expr, &QueryLimits::default()).map(|o| o.lines)
}

fn ok(expr: &str) -> Vec<String> {
    lines("null", expr).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn error(expr: &str) -> String {
    match lines("null", expr) {
        Err(e) => e.to_string(),
        Ok(out) => panic!("{expr}: expected an error, got {out:?}"),
    }
}

#[test]
fn implode_refuses_what_is_not_a_code_point() {
    for (expr, want) in [
        ("[65, 66] | implode", r#""AB""#),
        ("[128512, 233] | implode", r#""😀é""#),
        ("[] | implode", r#""""#),
        ("[1114111] | implode | length", "1"),
        ("[55295, 57344] | implode | explode", "[55295,57344]"),
        // a fraction is cut off, as jq does
        ("[65.9] | implode", r#""A""#),
    ] {
        assert_eq!(ok(expr), [want], "{expr}");
    }
    let invalid = |n: &str| {
        format!(
            "jq error: cannot implode {n}: not a unicode code point (0 to 1114111, except \
             the surrogates 55296 to 57343)"
        )
    };
    for (expr, n) in [
        ("[-65] | implode", "-65"),
        ("[-1] | implode", "-1"),
        ("[55296] | implode", "55296"),
        ("[57343] | implode", "57343"),
        ("[1114112] | implode", "1114112"),
        ("[65, 4294967361] | implode", "4294967361"),
        ("[1e300] | implode", "1e300"),
        ("[nan] | implode", "null"),
        ("[infinite] | implode", "1.7976931348623157e+308"),
    ] {
        assert_eq!(error(expr), invalid(n), "{expr}");
    }
    assert_eq!(
        error(r#"[65, "a"] | implode"#),
        r#"jq error: string ("a") can't be imploded, unicode codepoint needs to be numeric"#
    );
    assert_eq!(
        error(r#""a" | implode"#),
        "jq error: implode input must be an array"
    );
    // an invalid code point is an error, not a string cut short by try
    assert_eq!(ok(r#"[([65, -1] | implode)?] | length"#), ["0"]);
}

#[test]
fn explode_reads_invalid_utf8_as_replacement_characters() {
    // the document's string holds the bytes 0xff and 0xc3 (invalid UTF-8)
    let doc = b"\"a\xffb\xc3\"";
    let out = run_query(doc, "explode", &QueryLimits::default()).map(|o| o.lines);
    assert_eq!(out, Ok(vec!["[97,65533,98,65533]".to_string()]));
    assert_eq!(ok(r#""😀é" | explode"#), ["[128512,233]"]);
    assert_eq!(ok(r#""héllo" | explode | implode"#), [r#""héllo""#]);
}

/// Comparing, scanning or hashing long strings counts steps in proportion to
/// their length, so that a loop over them runs out of steps instead of
/// running unmetered between two looks at the clock.
#[test]
fn long_string_operations_count_their_steps() {
    let limits = QueryLimits {
        max_steps: 10_000_000,
        ..QueryLimits::default()
    };
    for expr in [
        r#"("a" * 100000000) as $s | [range(1000000) | $s | startswith($s)] | length"#,
        r#"("a" * 100000000) as $s | [range(1000000) | $s | endswith($s)] | length"#,
        r#"("a" * 100000000) as $s | [range(1000000) | $s | ltrimstr($s)] | length"#,
        r#"("a" * 100000000) as $s | [range(1000000) | $s | rtrimstr($s)] | length"#,
        r#"(" " * 10000000) as $s | [range(1000000) | $s | trim] | length"#,
        r#"("a" * 100000000) as $s | [range(1000000) | {} | has($s)] | length"#,
        r#"("a" * 100000000) as $s | [range(1000000) | {} | .[$s]] | length"#,
        r#"("a" * 100000000) as $s | [range(1000000) | {($s): 1}] | length"#,
        r#"("a" * 100000000) as $s | [range(1000000) | $s | utf8bytelength, test("b")] | length"#,
        r#"("1" * 100000000) as $s | [range(1000000) | $s | tonumber] | length"#,
        r#"("a" * 10000000) as $s | [range(1000000) | $s | strptime("%Y")?] | length"#,
    ] {
        let start = Instant::now();
        let result = run_query(b"null", expr, &limits);
        let elapsed = start.elapsed();
        assert!(
            matches!(&result, Err(QueryError::TooExpensive(m)) if m.contains("steps")),
            "{expr}: {result:?}"
        );
        // 10 million steps take well under a second; the time budget is 5 s
        assert!(elapsed < Duration::from_secs(3), "{expr}: took {elapsed:?}");
    }
}

#[test]
fn dates_are_utc_and_formatted_piece_by_piece() {
    assert_eq!(
        ok(
            r#"1425599507 | todate, gmtime, (gmtime | mktime), strftime("%Y-%m-%dT%H:%M:%SZ %% %j")"#
        ),
        [
            r#""2015-03-05T23:51:47Z""#,
            "[2015,2,5,23,51,47,4,63]",
            "1425599507",
            r#""2015-03-05T23:51:47Z % 064""#,
        ]
    );
    assert_eq!(
        ok(r#""2015-03-05T23:51:47Z" | fromdate, (strptime("%Y-%m-%dT%H:%M:%SZ") | mktime)"#),
        ["1425599507", "1425599507"]
    );
    assert_eq!(
        ok(r#"[2015,2,5,23,51,47,4,63] | strftime("%A, %B %d, %Y"), strflocaltime("%H:%M %Z")"#),
        [r#""Thursday, March 05, 2015""#, r#""23:51 UTC""#]
    );
    assert_eq!(ok("0 | localtime == gmtime"), ["true"]);
    assert_eq!(ok(r#"0 | strftime("%10Y")"#), [r#""0000001970""#]);
    assert!(error(r#"0 | strftime("%")"#).starts_with("jq error: "));
    // the steps of every directive are counted before any is formatted
    let limits = QueryLimits {
        max_steps: 1_000_000,
        ..QueryLimits::default()
    };
    let start = Instant::now();
    let result = run_query(b"0", r#"strftime("%Y" * 1000000)"#, &limits);
    assert!(
        matches!(&result, Err(QueryError::TooExpensive(m)) if m.contains("steps")),
        "{result:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn regular_expressions_keep_their_results() {
    assert_eq!(
        ok(r#""test 123 abc 456" | [match("[0-9]+"; "g") | {offset, length, string}]"#),
        [r#"[{"offset":5,"length":3,"string":"123"},{"offset":13,"length":3,"string":"456"}]"#]
    );
    assert_eq!(
        ok(
            r#""héllo wörld" | [match("ö|l+"; "g") | .offset], sub("(?<x>l+)"; "<\(.x)>"), [splits(" +")]"#
        ),
        ["[2,7,9]", r#""hé<ll>o wörld""#, r#"["héllo","wörld"]"#]
    );
    assert_eq!(
        ok(r#""abc" | [match(""; "g") | .offset], gsub(""; "-"), [scan("[a-c]")], test("B"; "i")"#),
        ["[0,1,2,3]", r#""-a-b-c-""#, r#"["a","b","c"]"#, "true"]
    );
    assert_eq!(
        ok(r#""xyz" | capture("(?<a>x)(?<b>q)?"), [match("(a)|(y)"; "g") | .captures | length]"#),
        [r#"{"a":"x"}"#, "[1]"]
    );
    assert_eq!(
        ok(r#""aXbX" | ([splits("x"; "gi")] | length), ([match("X"; "gn")] | length)"#),
        ["3", "2"]
    );
    assert_eq!(
        error(r#""a" | test("a"; "q")"#),
        "jq error: invalid regex flag: q"
    );
    assert!(error(r#""a" | test("a" * 70000)"#).contains("the pattern is 70000 bytes long"));
    assert!(error(r#""a" | test("a{1000}{1000}")"#).contains("too large"));
}

#[test]
fn huge_integer_literals_are_kept_as_written() {
    // reading a big integer takes time quadratic in its length: past 4096
    // bits a literal keeps its text (and computes as a double)
    let digits = "7".repeat(10_000_000);
    let start = Instant::now();
    let out = run_query(
        digits.as_bytes(),
        "(tostring | length), (tostring | fromjson | . > 1), (. + 1 | . > 1e308)",
        &QueryLimits::default(),
    );
    assert_eq!(
        out.map(|o| o.lines),
        Ok(vec!["10000000".to_string(), "true".into(), "true".into()])
    );
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        ok(&format!("{} | . + 1", "9".repeat(40))),
        [format!("1{}", "0".repeat(40))]
    );
}
