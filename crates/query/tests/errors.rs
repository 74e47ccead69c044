//! Every kind of error, with its exact one-line message.

use offload_query::{run_query, QueryError, QueryLimits};

fn err(doc: &[u8], expr: &str) -> QueryError {
    match run_query(doc, expr, &QueryLimits::default()) {
        Err(e) => e,
        Ok(out) => panic!("{expr}: expected an error, got {:?}", out.lines),
    }
}

fn message(doc: &[u8], expr: &str) -> String {
    err(doc, expr).to_string()
}

#[test]
fn not_json_has_line_and_column() {
    assert_eq!(
        err(b"{\"a\": 1,\n  \"b\": x}", "."),
        QueryError::NotJson {
            line: 2,
            column: 8,
            message: "expected value".into()
        }
    );
    assert_eq!(
        message(b"{\"a\": 1,\n  \"b\": x}", "."),
        "not JSON: expected value at line 2 column 8"
    );
    // a UTF-8 byte order mark is skipped but still counted in the column
    assert_eq!(
        message(b"\xEF\xBB\xBF[1,", ".a"),
        "not JSON: EOF while parsing a value at line 1 column 7"
    );
    assert_eq!(
        message(b" \n ", "."),
        "not JSON: empty document, expected a JSON value at line 1 column 1"
    );
    assert_eq!(
        message(b"[1, 2] {\"a\" 1}", "."),
        "not JSON: expected `:` at line 1 column 13"
    );
    assert_eq!(
        message(b"[NaN]", "."),
        "not JSON: expected value at line 1 column 2"
    );
    assert_eq!(
        message(b"\"tab\there\"", "."),
        "not JSON: control character (\\u0000-\\u001F) found while parsing a string at line 1 column 5"
    );
    assert_eq!(
        message(b"{\"a\": \"unterminated}", "."),
        "not JSON: EOF while parsing a string at line 1 column 7"
    );
}

#[test]
fn bad_expressions_say_what_and_where() {
    let doc = b"{\"a\":1}";
    let cases = [
        (
            ".a |",
            "expected term but found the end of the expression at line 1 column 5",
        ),
        ("foo", "foo/0 is not defined at line 1 column 1"),
        (
            ".a | map(.b) | bar(1; 2)",
            "bar/2 is not defined at line 1 column 16",
        ),
        ("$x", "variable $x is not defined at line 1 column 1"),
        ("map(.a", "expected closing parenthesis at line 1 column 7"),
        (
            ".a | (1 + )",
            "expected term but found `)` at line 1 column 11",
        ),
        ("\"abc", "expected closing quote at line 1 column 5"),
        (
            "1 +\n  * 2",
            "expected term but found `*` at line 2 column 3",
        ),
        (
            "include \"x\"; .",
            "cannot load module x: module loading not supported",
        ),
        (
            "  ",
            "the expression is empty; use `.` for the whole document",
        ),
        ("break $x", "label $x is not defined at line 1 column 7"),
        (
            "input_filename",
            "input_filename/0 is not defined at line 1 column 1",
        ),
        (
            "$__loc__",
            "variable $__loc__ is not defined at line 1 column 1",
        ),
    ];
    for (expr, want) in cases {
        match err(doc, expr) {
            QueryError::BadExpression(msg) => assert_eq!(msg, want, "{expr}"),
            other => panic!("{expr}: expected BadExpression, got {other:?}"),
        }
        assert_eq!(message(doc, expr), format!("bad jq expression: {want}"));
    }
    let long = ".".repeat(offload_query::MAX_EXPRESSION_BYTES + 1);
    assert_eq!(
        message(doc, &long),
        format!(
            "bad jq expression: the expression is {} bytes long, the limit is {}",
            long.len(),
            offload_query::MAX_EXPRESSION_BYTES
        )
    );
}

#[test]
fn runtime_errors_are_jq_errors() {
    let cases: [(&[u8], &str, &str); 11] = [
        (
            b"{\"a\":\"str\"}",
            ".a.b",
            "cannot index \"str\" with \"b\"",
        ),
        (b"{\"a\":1}", ".a + \"x\"", "cannot calculate 1 + \"x\""),
        (b"{\"a\":1}", "{} | .[0]", "cannot index {} with 0"),
        (b"[1]", "error(\"boom\")", "boom"),
        (b"[1]", "error(\"multi\nline\")", "multi\\nline"),
        (b"[1]", "error({\"a\":1})", "{\"a\":1} (not a string)"),
        (b"[1]", "input", "No more inputs"),
        (
            b"[1]",
            "halt_error(1)",
            "halt_error/halt(1) was called; halting is not supported here",
        ),
        (
            b"[1]",
            "\"x\" | fromjson",
            "cannot parse \"x\" as JSON: expected value at line 1 column 1",
        ),
        (
            b"[1]",
            "\"x\" | test(\"(\")",
            "invalid regex: unclosed group",
        ),
        (
            b"[1]",
            "{(1): 2}",
            "object keys must be strings, not number (1)",
        ),
    ];
    for (doc, expr, want) in cases {
        assert_eq!(err(doc, expr), QueryError::Runtime(want.into()), "{expr}");
        assert_eq!(message(doc, expr), format!("jq error: {want}"));
    }
    // huge values are shortened in messages
    let big = format!("[{}]", vec!["\"xxxxxxxxxx\""; 1000].join(","));
    let msg = message(big.as_bytes(), ". + 1");
    assert!(
        msg.starts_with("jq error: cannot calculate [\"xxxxxxxxxx\","),
        "{msg}"
    );
    assert!(msg.len() < 600, "{}", msg.len());
    // errors can be caught like in jq
    let out = run_query(
        b"[1]",
        "try error(\"x\") catch \"caught \\(.)\"",
        &QueryLimits::default(),
    );
    assert_eq!(out.map(|o| o.lines), Ok(vec!["\"caught x\"".to_string()]));
}

#[test]
fn too_expensive_names_the_limit() {
    let doc = b"{\"a\":1}";
    assert_eq!(
        message(doc, "def f: 1 + f; f"),
        "query too expensive: recursion too deep (limit); a recursive definition such as \
         `def f: 1 + f; f` does not terminate or recurses too deeply"
    );
    // (fewer steps than the default, so that they run out before the time on a loaded machine)
    let few_steps = QueryLimits {
        max_steps: 5_000_000,
        ..QueryLimits::default()
    };
    assert_eq!(
        run_query(doc, "reduce range(1e9) as $i (0; . + 1)", &few_steps).map_err(|e| e.to_string()),
        Err(
            "query too expensive: stopped after 5000000 steps (limit); narrow the expression \
         (for example select before map) or query a smaller part"
                .into()
        )
    );
    assert_eq!(
        message(doc, "reduce range(20000) as $i (null; [.])"),
        "query too expensive: a value would be nested deeper than 10000 levels (limit); \
         check recursive definitions and reductions that wrap values"
    );
    assert_eq!(
        message(doc, "\"a\" * 2000000000"),
        "query too expensive: the query built more than 1024 MiB of values (limit); select \
         fewer or smaller values instead of copying, repeating or concatenating large ones"
    );
    let limits = QueryLimits {
        time_budget: std::time::Duration::from_millis(200),
        ..QueryLimits::default()
    };
    assert_eq!(
        run_query(doc, "def f: f; f", &limits).map_err(|e| e.to_string()),
        Err(
            "query too expensive: stopped after 0.2 s (time limit); narrow the expression \
             (for example select before map) or query a smaller part"
                .into()
        )
    );
    let limits = QueryLimits {
        max_steps: 1_000_000,
        ..QueryLimits::default()
    };
    // a regular expression search counts steps as it goes: each search of this global
    // match scans to the end of the text (the first alternative stays alive), so all
    // of them together scan it about 50,000 times
    let long = format!("\"{}\"", "a".repeat(100_000));
    let msg = run_query(long.as_bytes(), "[match(\"a*c|a\"; \"g\")] | length", &limits).map_err(|e| e.to_string());
    let msg = msg.err().unwrap_or_default();
    assert!(
        msg.starts_with("query too expensive: stopped after 1000000 steps (limit)"),
        "{msg}"
    );
    // the same match on short strings is fine
    let short = format!("[{}]", vec!["\"aab\""; 1000].join(","));
    let out = run_query(short.as_bytes(), "map(test(\"a+b\")) | all", &limits);
    assert_eq!(out.map(|o| o.lines), Ok(vec!["true".to_string()]));
}

#[test]
fn errors_are_single_lines() {
    for (doc, expr) in [
        (&b"{\n\n x"[..], "."),
        (b"1", "error(\"a\\nb\\r\\nc\")"),
        (b"1", "1 +\n\n"),
        (b"1", "def f: 1 + f; f"),
    ] {
        let msg = message(doc, expr);
        assert!(!msg.contains('\n') && !msg.contains('\r'), "{msg:?}");
    }
}
