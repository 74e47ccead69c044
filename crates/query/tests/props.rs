//! Property test: random small expressions from a jq grammar on random JSON
//! documents never panic, never fail internally, and always return within
//! the time budget.

use offload_query::{run_query, QueryError, QueryLimits};
use proptest::prelude::*;
use std::time::{Duration, Instant};

/// Random JSON text (as a string, possibly several values).
fn json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        (-1e6f64..1e6).prop_map(|f| format!("{f}")),
        Just("1e300".to_string()),
        Just("-0.5e-3".to_string()),
        Just("123456789012345678901234567890".to_string()),
        "[a-z\u{e9}\u{1F600} \\\\\"\n]{0,8}".prop_map(|s| {
            let escaped: String = s
                .chars()
                .map(|c| match c {
                    '"' => "\\\"".to_string(),
                    '\\' => "\\\\".to_string(),
                    '\n' => "\\n".to_string(),
                    c => c.to_string(),
                })
                .collect();
            format!("\"{escaped}\"")
        }),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(("[a-d]{1,2}", inner), 0..6).prop_map(|kv| {
                let fields: Vec<String> = kv
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", fields.join(","))
            }),
        ]
    })
}

/// Random jq expressions.
fn expr() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just(".".to_string()),
        Just("..".to_string()),
        "[a-d]".prop_map(|k| format!(".{k}")),
        (-3i32..4).prop_map(|i| format!(".[{i}]")),
        Just(".[]".to_string()),
        Just(".[1:]".to_string()),
        Just("$x".to_string()),
        (-5i32..100).prop_map(|i| i.to_string()),
        Just("1e18".to_string()),
        Just("\"ab\"".to_string()),
        Just("null".to_string()),
        Just("empty".to_string()),
        Just("error".to_string()),
        Just("input".to_string()),
        prop::sample::select(vec![
            "length",
            "keys",
            "tostring",
            "tojson",
            "fromjson",
            "type",
            "not",
            "add",
            "sort",
            "unique",
            "reverse",
            "to_entries",
            "from_entries",
            "paths",
            "leaf_paths",
            "flatten",
            "floor",
            "sqrt",
            "explode",
            "implode",
            "ascii_downcase",
            "@csv",
            "@tsv",
            "@base64",
            "@base64d",
            "@html",
            "@uri",
            "@sh",
            "@json",
            "tostream",
            "min",
            "max",
            "any",
            "all",
            "splits(\"a\")",
            "test(\"a.\")",
            "ltrimstr(\"a\")",
            "has(\"a\")",
            "has(0)",
            "range(5)",
            "range(1e18)",
            "repeat(.)",
            "recurse",
            "env",
            "$ENV",
            "input",
            "[inputs]",
            "halt",
            "getpath([\"a\",0])",
            "transpose",
            "combinations",
            "walk(.)",
            "indices(1)",
            "tojson|fromjson",
        ])
        .prop_map(str::to_string),
    ];
    atom.prop_recursive(5, 60, 3, |inner| {
        let two = (inner.clone(), inner.clone());
        prop_oneof![
            two.clone().prop_map(|(a, b)| format!("{a} | {b}")),
            two.clone().prop_map(|(a, b)| format!("{a}, {b}")),
            inner.clone().prop_map(|a| format!("[{a}]")),
            two.clone()
                .prop_map(|(a, b)| format!("{{a: {a}, (\"k\" + \"\\({b})\"): 1}}")),
            (
                two.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "%", "==", "<", "and", "//"])
            )
                .prop_map(|((a, b), op)| format!("({a}) {op} ({b})")),
            inner.clone().prop_map(|a| format!("({a})?")),
            inner.clone().prop_map(|a| format!("select({a})")),
            inner.clone().prop_map(|a| format!("map({a})")),
            inner.clone().prop_map(|a| format!("first({a})")),
            inner.clone().prop_map(|a| format!("limit(3; {a})")),
            inner.clone().prop_map(|a| format!("[recurse({a})]")),
            inner.clone().prop_map(|a| format!("group_by({a})")),
            inner.clone().prop_map(|a| format!("sort_by({a})")),
            inner.clone().prop_map(|a| format!("{a} as $x | $x")),
            inner.clone().prop_map(|a| format!(".a |= {a}")),
            inner.clone().prop_map(|a| format!("del({a})")),
            inner.clone().prop_map(|a| format!("path({a})")),
            inner.clone().prop_map(|a| format!("def f: {a}; f")),
            inner.clone().prop_map(|a| format!("def f: {a} | f; f")),
            inner.clone().prop_map(|a| format!("def f: [{a}, f]; f")),
            two.clone().prop_map(|(a, b)| format!("try {a} catch {b}")),
            two.clone()
                .prop_map(|(a, b)| format!("if {a} then {b} else . end")),
            two.clone()
                .prop_map(|(a, b)| format!("reduce {a} as $x (.; {b})")),
            two.clone()
                .prop_map(|(a, b)| format!("foreach {a} as $x (0; {b})")),
            two.clone()
                .prop_map(|(a, b)| format!("[limit(5; repeat({a}))] | {b}")),
            two.prop_map(|(a, b)| format!("label $out | {a} | ., break $out | {b}")),
        ]
    })
}

fn limits() -> QueryLimits {
    QueryLimits {
        max_steps: 200_000,
        time_budget: Duration::from_millis(1500),
        max_memory_bytes: 32 << 20,
        max_output_bytes: 1 << 20,
        max_outputs: 1000,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_respects_the_budget(doc in json(), second in json(), expr in expr()) {
        let limits = limits();
        let doc = format!("{doc}\n{second}");
        let start = Instant::now();
        let result = run_query(doc.as_bytes(), &expr, &limits);
        let elapsed = start.elapsed();
        prop_assert!(elapsed < limits.time_budget + Duration::from_secs(2), "{expr}: {elapsed:?}");
        prop_assert!(!matches!(result, Err(QueryError::Internal(_))), "{expr} on {doc}: {result:?}");
        match result {
            Ok(out) => {
                prop_assert!(out.lines.len() <= limits.max_outputs);
                prop_assert!(out.lines.iter().map(String::len).sum::<usize>() <= limits.max_output_bytes);
                prop_assert!(out.lines.iter().all(|l| !l.is_empty() && !l.contains('\n')));
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(!msg.contains('\n'), "{msg:?}");
            }
        }
    }

    #[test]
    fn random_bytes_are_rejected_cleanly(doc in prop::collection::vec(any::<u8>(), 0..200)) {
        let result = run_query(&doc, ".", &limits());
        prop_assert!(!matches!(result, Err(QueryError::Internal(_))));
    }
}

/// Every output line is valid JSON that reads back to the same text.
#[test]
fn outputs_read_back() {
    let doc = r#"{"a":[1,2.5,"x\u0000y\u007f\ud83d\ude00",null,true,{"b":-0.0}],"n":1e-7}"#;
    for expr in [
        ".",
        ".a[]",
        "tojson",
        ".n * 3",
        "[.a[] | tostring]",
        ".a[1] / 3",
    ] {
        let out = run_query(doc.as_bytes(), expr, &limits()).expect("query");
        for line in out.lines {
            let again = run_query(line.as_bytes(), ".", &limits()).expect("reads back");
            assert_eq!(again.lines, vec![line.clone()], "{expr}");
        }
    }
}
