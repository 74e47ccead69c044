//! Differential test of the direct evaluator: expressions of the shape it
//! handles (paths, `.[]`, `select`, comparisons, `and`/`or`/`not`, `[...]`,
//! `length`, `,` and `|`) on random documents give exactly what jaq gives.
//! The jaq side runs the same expression behind a definition it does not
//! use (`def _jaq: .; EXPR`), a shape the direct evaluator leaves to jaq.
//! Results, errors, truncation and output limits must all agree.

use offload_query::{run_query, QueryError, QueryLimits};
use proptest::prelude::*;

/// The same expression, run by jaq's interpreter.
fn through_jaq(expression: &str) -> String {
    format!("def _jaq: .; {expression}")
}

/// What a query answered, comparable across the two evaluators.
fn answer(
    document: &str,
    expression: &str,
    limits: &QueryLimits,
) -> Result<(Vec<String>, bool), String> {
    match run_query(document.as_bytes(), expression, limits) {
        Ok(out) => Ok((out.lines, out.truncated)),
        Err(QueryError::Internal(e)) => {
            panic!("internal error for {expression} on {document}: {e}")
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Random documents: records with a few known fields of any type, so that
/// paths hit, miss, and meet values they cannot index or iterate.
fn document() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        (-5i64..5).prop_map(|n| n.to_string()),
        Just("2.5".to_string()),
        Just("1e3".to_string()),
        Just("100000000000000000000".to_string()),
        "[ab\u{e9}]{0,3}".prop_map(|s| format!("\"{s}\"")),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(
                (
                    prop::sample::select(vec!["a", "b", "role", "n", "é"]),
                    inner
                ),
                0..5
            )
            .prop_map(|kv| {
                let fields: Vec<String> = kv
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", fields.join(","))
            }),
        ]
    })
}

/// Random expressions of the direct evaluator's shape (and a few just outside it).
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just(".".to_string()),
        Just(".a".to_string()),
        Just(".role".to_string()),
        Just(r#".["é"]"#.to_string()),
        Just(".[]".to_string()),
        Just(".[0]".to_string()),
        Just(".[1]".to_string()),
        Just(".a.b".to_string()),
        Just(".a[]".to_string()),
        Just(".[].n".to_string()),
        Just(r#""admin""#.to_string()),
        Just(r#""""#.to_string()),
        Just("1".to_string()),
        Just("0".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("null".to_string()),
        Just("length".to_string()),
        Just("not".to_string()),
        // just outside: left to jaq by both sides
        Just(".a?".to_string()),
        Just("-1".to_string()),
        Just("2.5".to_string()),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} | {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
            inner.clone().prop_map(|a| format!("select({a})")),
            inner.clone().prop_map(|a| format!("[{a}]")),
            (
                inner.clone(),
                prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (
                inner.clone(),
                prop::sample::select(vec!["and", "or"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            inner.prop_map(|a| format!("({a})[]")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn direct_evaluation_answers_as_jaq(doc in document(), expr in expression(), outputs in prop::option::of(1usize..4)) {
        let mut limits = QueryLimits::default();
        if let Some(n) = outputs {
            limits.max_outputs = n;
        }
        let direct = answer(&doc, &expr, &limits);
        let jaq = answer(&doc, &through_jaq(&expr), &limits);
        prop_assert_eq!(direct, jaq, "expression {} on {}", expr, doc);
    }
}

/// The shape of the common filters models write, on records where some fail.
#[test]
fn errors_are_jaq_errors() {
    let limits = QueryLimits::default();
    let doc = r#"{"users": [{"role": "admin", "email": "a@x"}, {"role": "user"}, "not a record"]}"#;
    for expr in [
        r#".users[] | select(.role == "admin") | .email"#,
        ".users[].role",
        "[.users[] | .email] | length",
        ".users[2][]",
        ".users | length, (.[2] | length), (.[0].role.x)",
    ] {
        let direct = answer(doc, expr, &limits);
        let jaq = answer(doc, &through_jaq(expr), &limits);
        assert_eq!(direct, jaq, "{expr}");
        assert!(
            direct.is_err(),
            "{expr} should fail on the string record: {direct:?}"
        );
    }
}

/// Results up to the output limits are the same, and so is the truncation.
#[test]
fn output_limits_hold() {
    let doc = format!(
        "[{}]",
        (0..100)
            .map(|i| format!(r#"{{"n":{i},"s":"{}"}}"#, "x".repeat(i)))
            .collect::<Vec<_>>()
            .join(",")
    );
    for limits in [
        QueryLimits {
            max_outputs: 7,
            ..QueryLimits::default()
        },
        QueryLimits {
            max_output_bytes: 300,
            ..QueryLimits::default()
        },
        QueryLimits {
            max_output_bytes: 5,
            ..QueryLimits::default()
        },
    ] {
        for expr in [
            ".[] | select(.n > 10) | .s",
            ".[].n",
            "[.[] | select(.n < 50)]",
        ] {
            let direct = answer(&doc, expr, &limits);
            let jaq = answer(&doc, &through_jaq(expr), &limits);
            assert_eq!(direct, jaq, "{expr}");
        }
    }
}

/// The step and time limits hold on the direct path as on jaq's.
#[test]
fn step_limit_holds() {
    let doc = records(20_000);
    let limits = QueryLimits {
        max_steps: 1_000,
        ..QueryLimits::default()
    };
    // reading the document fits the limit; filtering every record does not
    assert!(run_query(doc.as_bytes(), "length", &limits).is_ok());
    let direct = run_query(doc.as_bytes(), "[.[] | select(.n > 5)] | length", &limits);
    assert!(
        matches!(direct, Err(QueryError::TooExpensive(_))),
        "{direct:?}"
    );
}

/// An array of `n` records `{"n": i}`.
fn records(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| format!(r#"{{"n":{i}}}"#)).collect();
    format!("[{}]", items.join(","))
}

/// The smallest limit (found by bisection) at which `run(limit)` is not
/// stopped as too expensive.
fn threshold(mut run: impl FnMut(u64) -> Result<(Vec<String>, bool), String>) -> u64 {
    let too_expensive = |r: &Result<(Vec<String>, bool), String>| {
        r.as_ref().is_err_and(|e| e.contains("too expensive"))
    };
    let (mut low, mut high) = (1u64, 1u64 << 34);
    assert!(!too_expensive(&run(high)), "not within the largest limit");
    while low < high {
        let mid = low + (high - low) / 2;
        if too_expensive(&run(mid)) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// An attempt that gives up on an error costs the query nothing: jaq then
/// runs with the whole budget, and reports the error, not a limit.
#[test]
fn given_up_attempts_cost_nothing() {
    let doc = format!(
        "[{}5]",
        r#"{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},"#.repeat(20_000)
    );
    let steps = |n: u64| QueryLimits {
        max_steps: n,
        ..QueryLimits::default()
    };
    let memory = |n: u64| QueryLimits {
        max_memory_bytes: n as usize,
        ..QueryLimits::default()
    };
    for expr in [".[] | .a", "[.[] | .a] | length"] {
        let at = threshold(|n| answer(&doc, &through_jaq(expr), &steps(n)));
        let direct = answer(&doc, expr, &steps(at));
        assert_eq!(
            direct,
            answer(&doc, &through_jaq(expr), &steps(at)),
            "{expr} at {at} steps"
        );
        assert!(direct.is_err_and(|e| e.contains("cannot index")), "{expr}");
    }
    let expr = "[.[] | .a] | length";
    let at = threshold(|n| answer(&doc, &through_jaq(expr), &memory(n)));
    let direct = answer(&doc, expr, &memory(at));
    assert!(
        direct.is_err_and(|e| e.contains("cannot index")),
        "{expr} at {at} bytes"
    );
}

/// `[f]` charges each item as it comes: the memory limit stops it as it
/// stops jaq, before it holds more than the limit.
#[test]
fn collecting_is_charged_as_it_goes() {
    let doc = format!("[{}0]", "0,".repeat(1_000_000));
    let expr = "[.[],.[],.[],.[],.[],.[],.[],.[]] | length";
    let limits = QueryLimits {
        max_memory_bytes: 64 << 20,
        ..QueryLimits::default()
    };
    let direct = answer(&doc, expr, &limits);
    assert!(
        direct
            .as_ref()
            .is_err_and(|e| e.contains("built more than")),
        "{direct:?}"
    );
    assert_eq!(direct, answer(&doc, &through_jaq(expr), &limits));
    // whatever jaq finishes within, the direct evaluation finishes within
    let small = format!("[{}0]", "0,".repeat(50_000));
    let expr = "[.[], .[]] | length";
    let memory = |n: u64| QueryLimits {
        max_memory_bytes: n as usize,
        ..QueryLimits::default()
    };
    let at = threshold(|n| answer(&small, &through_jaq(expr), &memory(n)));
    assert_eq!(
        answer(&small, expr, &memory(at)),
        Ok((vec!["100002".to_string()], false))
    );
    assert!(answer(&small, expr, &memory(at / 2)).is_err_and(|e| e.contains("built more than")));
}

/// Planning charges nothing: a literal that is never evaluated cannot trip a limit.
#[test]
fn planning_charges_nothing() {
    let expr = format!(r#".[] | "{}""#, "a".repeat(480));
    let limits = QueryLimits {
        max_memory_bytes: 200,
        ..QueryLimits::default()
    };
    assert_eq!(answer("[]", &expr, &limits), Ok((vec![], false)));
    assert_eq!(
        answer("[]", &expr, &limits),
        answer("[]", &through_jaq(&expr), &limits)
    );
}

/// The direct evaluation counts a step per term: about as many as jaq, so
/// half of jaq's budget is not enough for it either.
#[test]
fn steps_are_counted_per_term() {
    let doc = records(20_000);
    let expr = "[.[] | select(.n > 5)] | length";
    let steps = |n: u64| QueryLimits {
        max_steps: n,
        ..QueryLimits::default()
    };
    let jaq = threshold(|n| answer(&doc, &through_jaq(expr), &steps(n)));
    let direct = threshold(|n| answer(&doc, expr, &steps(n)));
    assert!(
        direct > jaq / 2 && direct <= jaq,
        "direct {direct} steps, jaq {jaq}"
    );
}

/// A key longer than those a document's reader gives shared bytes.
const LONG_KEY: &str = "a_key_longer_than_sixty_four_bytes_so_that_it_is_compared_by_text_";

/// Long arrays of records whose fields change place from one record to the
/// next (shuffled, missing, keys of equal length, objects wider than a
/// scan), mixed with values that are not records: a field found where the
/// previous record had it, or anywhere else, or nowhere, and the records
/// read ahead of the one evaluated, give what jaq gives.
fn changing_records() -> impl Strategy<Value = String> {
    // `a\u0062` is `ab` written with an escape; the long key is longer than
    // the keys a document's reader shares
    const KEYS: [&str; 8] = ["ab", "ba", "role", "rolf", "n", "é", "a\\u0062", LONG_KEY];
    let value = prop_oneof![
        (-3i64..3).prop_map(|n| n.to_string()),
        Just("null".to_string()),
        Just("true".to_string()),
        Just(r#""x""#.to_string()),
        Just(r#"[{"ab":1},2]"#.to_string()),
    ];
    let record = prop::collection::vec((prop::sample::select(KEYS.to_vec()), value.clone()), 0..6)
        .prop_shuffle()
        .prop_map(|fields| {
            let fields: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", fields.join(","))
        });
    let wide = (0usize..24, value.clone()).prop_map(|(at, v)| {
        let mut fields: Vec<String> = (0..20).map(|i| format!("\"k{i}\":{i}")).collect();
        fields.insert(at.min(20), format!("\"ab\":{v}"));
        format!("{{{}}}", fields.join(","))
    });
    // a few layouts of the same fields: a field found at one place, then
    // records that have another shared key at that place
    let layout = (
        prop::sample::select(vec![0usize, 1, 2, 3]),
        value.clone(),
        value.clone(),
    )
        .prop_map(|(l, a, b)| match l {
            0 => format!(r#"{{"ab":{a},"ba":{b}}}"#),
            1 => format!(r#"{{"ba":{b},"ab":{a}}}"#),
            2 => format!(r#"{{"role":{b},"ab":{a},"ba":{b}}}"#),
            _ => format!(r#"{{"ba":{a},"role":{b}}}"#),
        });
    let item = prop_oneof![8 => record, 2 => wide, 8 => layout, 1 => value];
    prop::collection::vec(item, 0..80).prop_map(|items| format!("[{}]", items.join(",")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn records_of_changing_layout_answer_as_jaq(
        doc in changing_records(),
        expr in prop::sample::select(vec![
            ".[] | .ab",
            ".[].ba",
            "[.[] | select(.ab == 1)] | length",
            r#".[] | select(.role == "x" or .rolf) | .n"#,
            r#".[] | select(.ab and .ba > 0) | .["é"]"#,
            ".[] | .ab[] | .ab",
            "[.[] | .k19, .ab] | length",
            "[.[] | select(.n)]",
            ".[] | select(.ab | not) | .role",
            ".[] | .a_key_longer_than_sixty_four_bytes_so_that_it_is_compared_by_text_",
        ]),
    ) {
        let limits = QueryLimits::default();
        let direct = answer(&doc, expr, &limits);
        let jaq = answer(&doc, &through_jaq(expr), &limits);
        prop_assert_eq!(direct, jaq, "expression {} on {}", expr, doc);
    }
}

/// A document long enough to be read by two threads: the records after the
/// place where the second reader starts have keys of their own bytes, and
/// fields found through either reader's keys give what jaq gives.
#[test]
fn records_read_by_two_readers_answer_as_jaq() {
    let layouts = [
        r#"{"id":I,"role":"admin","active":true,"logins":L}"#,
        r#"{"role":"member","id":I,"logins":L,"active":false}"#,
        r#"{"logins":L,"a\u0063tive":true,"id":I}"#,
    ];
    let records: Vec<String> = (0..40_000)
        .map(|i| {
            layouts[(i * 7 + i / 3) % 3]
                .replace('I', &i.to_string())
                .replace('L', &(i % 1000).to_string())
        })
        .collect();
    let doc = format!("[{}]", records.join(","));
    assert!(doc.len() > 1 << 20, "{} bytes", doc.len());
    for expr in [
        "[.[] | select(.active and .logins > 900)] | length",
        r#"[.[] | select(.role == "admin") | .id] | length"#,
        "[.[] | .active] | map(select(. == null)) | length",
    ] {
        let limits = QueryLimits::default();
        let direct = answer(&doc, expr, &limits);
        assert!(direct.is_ok(), "{expr}: {direct:?}");
        assert_eq!(direct, answer(&doc, &through_jaq(expr), &limits), "{expr}");
    }
}

/// A field found at another place than before, then a record whose key at that
/// place is another key with shared bytes: the field is still the one named.
#[test]
fn a_field_that_moved_is_not_taken_for_the_key_now_at_its_place() {
    let doc =
        r#"[{"ab":1,"ba":2},{"ba":3,"ab":4},{"ab":5,"ba":6},{"ba":7,"ab":8},{"ab":9,"ba":10}]"#;
    for expr in [
        ".[] | .ab",
        ".[].ba",
        "[.[] | select(.ab > 4)] | length",
        ".[] | select(.ba == 2 or .ab == 8) | .ab",
    ] {
        let limits = QueryLimits::default();
        assert_eq!(
            answer(doc, expr, &limits),
            answer(doc, &through_jaq(expr), &limits),
            "{expr}"
        );
    }
    assert_eq!(
        answer(doc, ".[] | .ab", &QueryLimits::default()),
        Ok((["1", "4", "5", "8", "9"].map(String::from).to_vec(), false))
    );
}
