//! Differential property test of the document reader against serde_json:
//! on generated JSON (escapes, surrogate pairs, big and fractional numbers,
//! nesting, duplicate keys, several values in a row) both accept the same
//! texts and read the same values; on texts made invalid by a mutation both
//! refuse them. The values are compared through the query output of `.`
//! (read back by serde_json), numbers by their double value.

use offload_query::{run_query, QueryError, QueryLimits};
use proptest::prelude::*;
use serde_json::{Deserializer, Value};

/// A JSON string literal of `s`, escaping with a mix of styles.
fn string_literal(s: &str, style: u8) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '/' if style.is_multiple_of(2) => out.push_str("\\/"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            // astral characters as surrogate pairs, others as \u escapes or as they are
            c if style.is_multiple_of(3) && (c as u32) > 0xFFFF => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04X}"));
                }
            }
            c if style % 3 == 1 && !c.is_ascii() && (c as u32) <= 0xFFFF => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        (1u32..60).prop_map(|digits| "9".repeat(digits as usize)),
        Just("123456789012345678901234567890".to_string()),
        (-1e9f64..1e9).prop_map(|f| format!("{f}")),
        (-300i32..300, 1u32..999).prop_map(|(e, m)| format!("{m}e{e}")),
        (1u32..999, 0u32..99).prop_map(|(i, f)| format!("-{i}.{f:02}E+2")),
        Just("0.0".to_string()),
        Just("1.10".to_string()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    "[a-z \u{e9}\u{1F600}\u{7f}\u{2028}\"\\\\/\n\t\u{1}]{0,12}"
}

fn json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        number(),
        (text(), any::<u8>()).prop_map(|(s, style)| string_literal(&s, style)),
    ];
    leaf.prop_recursive(8, 64, 6, |inner| {
        prop_oneof![
            (prop::collection::vec(inner.clone(), 0..6), 0usize..3).prop_map(|(v, ws)| {
                let sep = [",", " , ", ",\n  "][ws];
                format!("[{}]", v.join(sep))
            }),
            prop::collection::vec(((text(), any::<u8>()), inner.clone()), 0..6).prop_map(|kv| {
                let fields: Vec<String> = kv
                    .into_iter()
                    .map(|((k, style), v)| format!("{}: {v}", string_literal(&k, style)))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }),
            // duplicate keys: the last value wins
            (inner.clone(), inner).prop_map(|(a, b)| format!("{{\"k\":{a},\"k\":{b}}}")),
        ]
    })
}

/// Several values separated by whitespace.
fn document() -> impl Strategy<Value = String> {
    prop::collection::vec(json(), 1..4).prop_map(|values| values.join("\n "))
}

/// serde_json's reading of a stream of values (`None` if it refuses it).
fn serde_values(doc: &str) -> Option<Vec<Value>> {
    let values: Result<Vec<Value>, _> = Deserializer::from_str(doc).into_iter().collect();
    values.ok().filter(|v| !v.is_empty())
}

/// The values this crate reads, printed by `.` and read back by serde_json.
fn our_values(doc: &str) -> Result<Vec<Value>, QueryError> {
    let out = run_query(doc.as_bytes(), ".", &QueryLimits::default())?;
    Ok(out
        .lines
        .iter()
        .map(|line| {
            serde_json::from_str(line).unwrap_or(Value::String(format!("unreadable: {line}")))
        })
        .collect())
}

/// Equal values, numbers compared by their double value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn reads_what_serde_json_reads(doc in document()) {
        let theirs = serde_values(&doc);
        prop_assert!(theirs.is_some(), "generated invalid JSON: {}", doc);
        let ours = our_values(&doc);
        prop_assert!(ours.is_ok(), "{:?} on {}", ours, doc);
        let (ours, theirs) = (ours.unwrap_or_default(), theirs.unwrap_or_default());
        prop_assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(&theirs) {
            prop_assert!(same(a, b), "{} != {} for {}", a, b, doc);
        }
    }

    #[test]
    fn refuses_what_serde_json_refuses(
        doc in json(),
        at in any::<prop::sample::Index>(),
        edit in 0usize..3,
        inserted in prop::sample::select(vec!['[', ']', '{', '}', ':', ',', '"', '\\', 'x', 'u', '\u{1}', '.', '-']),
    ) {
        let mut chars: Vec<char> = doc.chars().collect();
        let i = at.index(chars.len() + 1);
        match edit {
            0 => chars.insert(i, inserted),
            1 if i < chars.len() => { chars.remove(i); }
            _ if i < chars.len() => chars[i] = inserted,
            _ => chars.push(inserted),
        }
        let mutated: String = chars.into_iter().collect();
        let theirs = serde_values(&mutated).is_some();
        let ours = our_values(&mutated);
        match &ours {
            Ok(_) | Err(QueryError::NotJson { .. }) => {}
            Err(other) => prop_assert!(false, "{:?} on {}", other, mutated),
        }
        prop_assert_eq!(ours.is_ok(), theirs, "{:?} on {:?}", ours, mutated);
    }
}

#[test]
fn numbers_and_literals_run_into_what_follows_are_refused() {
    for doc in ["2-6324493919100000", "1+2", "2-3", "1.5e3-2", "true-1", "null+", "false.", "0x10", "1true"] {
        assert!(serde_values(doc).is_none(), "serde_json reads {doc}");
        assert!(
            matches!(our_values(doc), Err(QueryError::NotJson { .. })),
            "{doc}: {:?}",
            our_values(doc)
        );
    }
    for doc in ["2 -3", "[1]-2", "1\n2", "true\tnull", "1[2]", "{\"a\":1}{\"b\":2}"] {
        assert_eq!(our_values(doc).ok().map(|v| v.len()), serde_values(doc).map(|v| v.len()), "{doc}");
    }
}

#[test]
fn edge_cases_read_as_serde_json_reads_them() {
    for doc in [
        r#""\ud83d\ude00 \u00e9 \u0000 \u001f \/ \b\f\n\r\t""#,
        r#"[1e308, -1e-308, 5e-324, 0.1, 1.7976931348623157e308, 18446744073709551616]"#,
        r#"{"a": {"b": {"c": [[[[[[[[[[]]]]]]]]]]}}, "": "", "\u0000": 0}"#,
        "1 2 3\n\"x\"\t[]\r\n{}",
        "\u{FEFF}",
    ] {
        let doc = doc.trim_start_matches('\u{FEFF}');
        if doc.is_empty() {
            assert!(matches!(our_values(doc), Err(QueryError::NotJson { .. })));
            continue;
        }
        let (ours, theirs) = (our_values(doc), serde_values(doc));
        let (Ok(ours), Some(theirs)) = (ours, theirs) else {
            panic!("not read by both: {doc}");
        };
        assert!(
            ours.iter().zip(&theirs).all(|(a, b)| same(a, b)) && ours.len() == theirs.len(),
            "{doc}"
        );
    }
    // refused by both, with the messages the reader gives
    for (doc, message) in [
        (r#""\ud800""#, "lone surrogate in \\u escape"),
        (r#""\udc00\ud800""#, "lone surrogate in \\u escape"),
        (r#""\ud800\u0041""#, "lone surrogate in \\u escape"),
        ("[1,]", "expected value"),
        ("{\"a\":1,}", "key must be a string"),
        ("[01]", "invalid number"),
        ("[1.]", "invalid number"),
        ("\"\\x\"", "invalid escape"),
        (
            "\"a\u{1}\"",
            "control character (\\u0000-\\u001F) found while parsing a string",
        ),
        ("nul", "expected value"),
        ("[", "EOF while parsing a value"),
    ] {
        assert!(serde_values(doc).is_none(), "{doc}");
        match our_values(doc) {
            Err(QueryError::NotJson { message: m, .. }) => assert_eq!(m, message, "{doc}"),
            other => panic!("{doc}: {other:?}"),
        }
    }
}
