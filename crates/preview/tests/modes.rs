//! Exact output of each mode on small inputs.

mod common;

use common::{check_head_tail, ByteMeter, WordMeter};
use offload_preview::{
    build_preview, BlockKind, HeadShare, Meter, PreviewBlock, PreviewError, PreviewMode,
    PreviewOptions, Utf16Meter,
};

fn preview(
    blocks: &[PreviewBlock<'_>],
    mode: PreviewMode,
    budget: usize,
    cut_long_lines: bool,
) -> String {
    let options = PreviewOptions {
        mode,
        budget,
        cut_long_lines,
        head_share: HeadShare::default(),
    };
    let out = build_preview(blocks, &Utf16Meter, &options);
    assert!(Utf16Meter.measure(&out) <= budget, "{out:?} over {budget}");
    out
}

fn numbered(lines: u64) -> String {
    (1..=lines)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn modes_parse_from_their_names() {
    assert_eq!("head".parse::<PreviewMode>(), Ok(PreviewMode::Head));
    assert_eq!("headTail".parse::<PreviewMode>(), Ok(PreviewMode::HeadTail));
    assert_eq!(
        "structure".parse::<PreviewMode>(),
        Ok(PreviewMode::Structure)
    );
    let err = "tail".parse::<PreviewMode>().unwrap_err();
    assert_eq!(err, PreviewError::UnknownMode("tail".into()));
    assert_eq!(
        err.to_string(),
        "unknown preview mode 'tail': expected 'head', 'headTail' or 'structure'"
    );
    assert!("HEAD".parse::<PreviewMode>().is_err());
    for mode in [
        PreviewMode::Head,
        PreviewMode::HeadTail,
        PreviewMode::Structure,
    ] {
        assert_eq!(mode.to_string().parse::<PreviewMode>(), Ok(mode));
    }
}

#[test]
fn zero_budget_or_no_blocks_give_nothing() {
    for mode in [
        PreviewMode::Head,
        PreviewMode::HeadTail,
        PreviewMode::Structure,
    ] {
        assert_eq!(preview(&[PreviewBlock::text("abc")], mode, 0, true), "");
        assert_eq!(preview(&[], mode, 100, true), "");
        assert_eq!(preview(&[PreviewBlock::text("")], mode, 100, true), "");
    }
}

#[test]
fn head_is_the_longest_prefix() {
    let text = "héllo\r\nwörld 😀!";
    let blocks = [PreviewBlock::text(text)];
    assert_eq!(preview(&blocks, PreviewMode::Head, 100, false), text);
    assert_eq!(preview(&blocks, PreviewMode::Head, 7, false), "héllo\r\n");
    assert_eq!(
        preview(&blocks, PreviewMode::Head, 13, false),
        "héllo\r\nwörld "
    );
    assert_eq!(
        preview(&blocks, PreviewMode::Head, 14, false),
        "héllo\r\nwörld "
    );
    assert_eq!(
        preview(&blocks, PreviewMode::Head, 15, false),
        "héllo\r\nwörld 😀"
    );
}

#[test]
fn head_joins_blocks_with_newlines() {
    let blocks = [
        PreviewBlock::text("one"),
        PreviewBlock::json("{}"),
        PreviewBlock::text("three"),
    ];
    assert_eq!(
        preview(&blocks, PreviewMode::Head, 100, false),
        "one\n{}\nthree"
    );
    assert_eq!(preview(&blocks, PreviewMode::Head, 8, false), "one\n{}\nt");
    assert_eq!(preview(&blocks, PreviewMode::Head, 8, true), "one\n{}\nt");
}

#[test]
fn head_cuts_long_lines_and_goes_on() {
    let text = format!("id,name\n1,{}\n2,bob\n3,carol\n4,dave", "a".repeat(500));
    let out = preview(&[PreviewBlock::text(&text)], PreviewMode::Head, 60, true);
    // The per-line limit is 32 (a quarter of 60 is less than the minimum).
    assert_eq!(
        out,
        "id,name\n1,aaaaaaaaaaaaaaa … [+485 chars]\n2,bob\n3,carol\n4,dav"
    );
    // A single long line gets the whole budget.
    let line = "é".repeat(10_000);
    let out = preview(&[PreviewBlock::text(&line)], PreviewMode::Head, 40, true);
    assert_eq!(out, format!("{} … [+9,978 chars]", "é".repeat(22)));
}

#[test]
fn head_tail_shows_whole_blocks_that_fit() {
    let text = "a\r\nb\n\nc\r\n";
    assert_eq!(
        preview(
            &[PreviewBlock::text(text)],
            PreviewMode::HeadTail,
            100,
            false
        ),
        "a\nb\n\nc\n"
    );
}

/// A head-and-tail preview of one text block with the head's `share`.
fn head_tail(text: &str, budget: usize, share: f64) -> String {
    let options = PreviewOptions {
        mode: PreviewMode::HeadTail,
        budget,
        cut_long_lines: false,
        head_share: HeadShare::new(share).unwrap(),
    };
    let out = build_preview(&[PreviewBlock::text(text)], &Utf16Meter, &options);
    assert!(Utf16Meter.measure(&out) <= budget, "{out:?} over {budget}");
    out
}

#[test]
fn head_tail_names_omitted_lines() {
    let text = numbered(12_385);
    let out = head_tail(&text, 200, 2.0 / 3.0);
    assert_eq!(
        out,
        "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\n\
         [… 12,367 lines omitted (lines 14-12,380) …]\n\
         line 12381\nline 12382\nline 12383\nline 12384\nline 12385"
    );
    check_head_tail(&out, &text).unwrap();
    // The default share is one half.
    let half = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n\
         [… 12,368 lines omitted (lines 11-12,378) …]\n\
         line 12379\nline 12380\nline 12381\nline 12382\nline 12383\nline 12384\nline 12385";
    assert_eq!(head_tail(&text, 200, 0.5), half);
    assert_eq!(
        preview(
            &[PreviewBlock::text(&text)],
            PreviewMode::HeadTail,
            200,
            false
        ),
        half
    );
}

#[test]
fn head_share_is_a_number_from_0_to_1() {
    assert_eq!(HeadShare::default(), HeadShare::HALF);
    assert_eq!(HeadShare::default().get(), 0.5);
    for ok in [0.0, -0.0, 1e-300, 0.1, 0.5, 2.0 / 3.0, 1.0] {
        let share = HeadShare::new(ok).unwrap();
        assert_eq!(share.get(), ok);
        assert_eq!(HeadShare::try_from(ok), Ok(share));
        assert_eq!(f64::from(share), ok);
    }
    assert!(HeadShare::new(-0.0).unwrap().get().is_sign_positive());
    for bad in [
        -0.1,
        -f64::MIN_POSITIVE,
        1.0 + f64::EPSILON,
        1.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let err = HeadShare::new(bad).unwrap_err();
        assert!(matches!(err, PreviewError::InvalidHeadShare(v) if v.to_bits() == bad.to_bits()));
    }
    assert_eq!(
        HeadShare::new(1.5).unwrap_err().to_string(),
        "invalid head share 1.5: expected a number from 0 to 1 (the head's share of a headTail preview)"
    );
    assert_eq!(
        HeadShare::new(f64::NAN).unwrap_err().to_string(),
        "invalid head share NaN: expected a number from 0 to 1 (the head's share of a headTail preview)"
    );
}

#[test]
fn structure_falls_back_to_head_tail_with_the_same_share() {
    let text = numbered(1000);
    for share in [0.0, 0.2, 0.5, 0.8, 1.0] {
        let mut options = PreviewOptions {
            mode: PreviewMode::Structure,
            budget: 200,
            cut_long_lines: false,
            head_share: HeadShare::new(share).unwrap(),
        };
        let structure = build_preview(&[PreviewBlock::text(&text)], &Utf16Meter, &options);
        options.mode = PreviewMode::HeadTail;
        let head_tail = build_preview(&[PreviewBlock::text(&text)], &Utf16Meter, &options);
        assert_eq!(structure, head_tail, "share {share}");
    }
    // The share does not change an outline.
    let json = format!("[{}]", vec!["1"; 1000].join(",\n"));
    let outline = |share: f64| {
        let options = PreviewOptions {
            mode: PreviewMode::Structure,
            budget: 200,
            cut_long_lines: false,
            head_share: HeadShare::new(share).unwrap(),
        };
        build_preview(&[PreviewBlock::json(&json)], &Utf16Meter, &options)
    };
    assert!(outline(0.0).starts_with("[JSON outline: array, 1,000 items"));
    assert_eq!(outline(0.0), outline(1.0));
}

#[test]
fn head_tail_marks_a_single_omitted_line() {
    let lines: Vec<String> = (1..=5)
        .map(|i| format!("{i:02}{}", "x".repeat(38)))
        .collect();
    let text = lines.join("\n");
    let out = preview(
        &[PreviewBlock::text(&text)],
        PreviewMode::HeadTail,
        200,
        false,
    );
    let expected = [
        &lines[0],
        &lines[1],
        "[… 1 line omitted (line 3) …]",
        &lines[3],
        &lines[4],
    ];
    assert_eq!(out, expected.join("\n"));
}

#[test]
fn head_tail_cuts_long_lines() {
    let text = format!(
        "start\n{}\nmiddle\n{}\nend",
        "x".repeat(1000),
        "y".repeat(1000)
    );
    let out = preview(
        &[PreviewBlock::text(&text)],
        PreviewMode::HeadTail,
        200,
        false,
    );
    check_head_tail(&out, &text).unwrap();
    assert!(out.starts_with("start\nxxxx"), "{out}");
    assert!(out.ends_with("chars]\nend"), "{out}");
    assert!(!out.contains("omitted"), "{out}");
    // Every line shows, and the cut lines share the rest of the budget.
    assert!(Utf16Meter.measure(&out) > 190, "{out}");
}

#[test]
fn head_tail_counts_lines_of_each_block() {
    let first = numbered(100);
    let second = numbered(50);
    let blocks = [
        PreviewBlock::text(&first),
        PreviewBlock::text(""),
        PreviewBlock::json(&second),
    ];
    let out = preview(&blocks, PreviewMode::HeadTail, 300, false);
    let sections: Vec<&str> = out.split("[block ").skip(1).collect();
    assert_eq!(sections.len(), 3, "{out}");
    assert!(out.starts_with("[block 1 of 3: text]\nline 1\n"), "{out}");
    assert!(
        out.contains("\n[block 2 of 3: text]\n[block 3 of 3: json]\nline 1\n"),
        "{out}"
    );
    assert!(out.contains("(lines "), "{out}");
    for (section, text) in sections.iter().zip([&first, "", &second]) {
        let body = section
            .split_once("]\n")
            .map_or("", |(_, body)| body.trim_end_matches('\n'));
        check_head_tail(body, text).unwrap();
    }
}

#[test]
fn budget_a_block_does_not_use_goes_to_the_next() {
    let big = numbered(1000);
    let blocks = [PreviewBlock::text("tiny"), PreviewBlock::text(&big)];
    let out = preview(&blocks, PreviewMode::HeadTail, 400, false);
    assert!(
        Utf16Meter.measure(&out) > 370,
        "{}: {out}",
        Utf16Meter.measure(&out)
    );
}

const USERS: &str = r#"{
  "users": [
    {
      "id": 1,
      "name": "Alice",
      "tags": [
        "admin",
        "dev"
      ]
    },
    {
      "id": 2,
      "name": "Bob",
      "email": "bob@example.com",
      "tags": []
    }
  ],
  "total": 2,
  "next": null
}"#;

#[test]
fn structure_shows_small_documents_whole() {
    let out = preview(
        &[PreviewBlock::json(USERS)],
        PreviewMode::Structure,
        1000,
        false,
    );
    assert_eq!(out, USERS);
}

fn users(count: usize) -> String {
    let users: Vec<serde_json::Value> = (1..=count)
        .map(|i| {
            let mut user = serde_json::json!({"id": i, "name": format!("user {i}"), "tags": vec!["admin"; i % 3]});
            if i % 4 == 0 {
                user["email"] = format!("u{i}@example.com").into();
            }
            user
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({"users": users, "total": count, "next": null}))
        .unwrap()
}

#[test]
fn structure_outlines_json() {
    let text = users(50);
    let out = preview(
        &[PreviewBlock::json(&text)],
        PreviewMode::Structure,
        300,
        false,
    );
    assert_eq!(
        out,
        r#"[JSON outline: object, 3 keys, 353 lines]
{
  "next": null
  "total": number = 50
  "users": array[50] (lines 4-352) of object {
    "id": number, e.g. 1
    "name": string, e.g. "user 1"
    "tags": array[0..2] of string, e.g. "admin"
    "email"?: string, e.g. "u4@example.com"
  }
}"#
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[3], "  \"users\": [");
    assert_eq!(lines[351], "  ]");
}

#[test]
fn structure_degrades_step_by_step() {
    let expect = [
        (200, "[JSON outline: object, 3 keys, 20 lines]\n{\n  \"users\": array[2] (lines 2-17) of object {…}\n  \"total\": number = 2\n  \"next\": null\n}"),
        (120, "[JSON outline: object, 3 keys, 20 lines]\n{\n  \"users\": array[2] (lines 2-17) of object {…}\n  … 2 more keys\n}"),
        (50, "[JSON outline: object, 3 keys, 20 lines]\n{…}"),
        (30, "[JSON outline: object, 3 keys,"),
    ];
    for (budget, expected) in expect {
        assert_eq!(
            preview(
                &[PreviewBlock::json(USERS)],
                PreviewMode::Structure,
                budget,
                false
            ),
            expected,
            "{budget}"
        );
    }
}

#[test]
fn structure_outline_of_a_root_array() {
    let items: Vec<serde_json::Value> = (0..40)
        .map(|i| match i % 5 {
            0 => serde_json::json!({"a": i, "b": [1, "x", null]}),
            1 => serde_json::json!({"a": 2.5, "c": {"d": true}}),
            2 => serde_json::json!("loose"),
            3 => serde_json::json!({"a": 3}),
            _ => serde_json::json!({"a": 4, "e": []}),
        })
        .collect();
    let text = serde_json::to_string_pretty(&items).unwrap();
    let out = preview(
        &[PreviewBlock::json(&text)],
        PreviewMode::Structure,
        300,
        false,
    );
    assert_eq!(
        out,
        r#"[JSON outline: array, 40 items, 178 lines]
[
  object | string, e.g. "loose" {
    "a": number, e.g. 0
    "b"?: array[3] of (number | string | null, e.g. 1, "x")
    "c"?: object {
      "d": boolean, e.g. true
    }
    "e"?: []
  }
]"#
    );
}

#[test]
fn structure_of_minified_json_has_no_line_ranges() {
    let text = serde_json::to_string(&serde_json::json!({
        "items": (0..500).map(|i| serde_json::json!({"id": i, "name": format!("n{i}")})).collect::<Vec<_>>(),
        "deep": {"x": {"y": [[1, 2], [3]]}},
        "long": "z".repeat(100),
    }))
    .unwrap();
    let out = preview(
        &[PreviewBlock::text(&text)],
        PreviewMode::Structure,
        500,
        false,
    );
    assert_eq!(
        out,
        r#"[JSON outline: object, 3 keys, 1 line]
{
  "deep": object, 1 key {
    "x": object, 1 key {
      "y": array[2] of array[1..2] of number, e.g. 1
    }
  }
  "items": array[500] of object {
    "id": number, e.g. 0
    "name": string, e.g. "n0"
  }
  "long": string = "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz…" (100 chars)
}"#
    );
}

#[test]
fn structure_falls_back_to_head_tail() {
    let invalid = format!("{{\n  \"a\": [\n{}\n  ]\n", "    1,\n".repeat(200));
    let text_like = format!("[not json\n{}", numbered(300));
    let scalar = format!("\"{}\"", "s".repeat(5000));
    for (text, kind) in [
        (invalid.as_str(), BlockKind::Json),
        (text_like.as_str(), BlockKind::Text),
        (scalar.as_str(), BlockKind::Json),
        (&numbered(300), BlockKind::Text),
    ] {
        let blocks = [PreviewBlock { kind, text }];
        let structure = preview(&blocks, PreviewMode::Structure, 150, false);
        let head_tail = preview(&blocks, PreviewMode::HeadTail, 150, false);
        assert_eq!(structure, head_tail);
        check_head_tail(&structure, text).unwrap();
    }
}

#[test]
fn text_blocks_starting_with_a_bracket_are_outlined() {
    let text = format!("  \n[{}]", vec!["1"; 1000].join(","));
    let out = preview(
        &[PreviewBlock::text(&text)],
        PreviewMode::Structure,
        200,
        false,
    );
    assert_eq!(
        out,
        "[JSON outline: array, 1,000 items, 2 lines]\n[\n  number, e.g. 1\n]"
    );
}

#[test]
fn structure_sections_for_several_blocks() {
    let blocks = [PreviewBlock::text("first block"), PreviewBlock::json(USERS)];
    let out = preview(&blocks, PreviewMode::Structure, 260, false);
    assert_eq!(
        out,
        "[block 1 of 2: text]\nfirst block\n[block 2 of 2: json]\n\
         [JSON outline: object, 3 keys, 20 lines]\n{\n  \"users\": array[2] (lines 2-17) of object {…}\n  \"total\": number = 2\n  \"next\": null\n}"
    );
}

#[test]
fn wide_objects_say_how_many_keys_are_not_shown() {
    let members: Vec<String> = (0..200).map(|i| format!("  \"key{i}\": {i}")).collect();
    let text = format!("{{\n{}\n}}", members.join(",\n"));
    let out = preview(
        &[PreviewBlock::json(&text)],
        PreviewMode::Structure,
        400,
        false,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "[JSON outline: object, 200 keys, 202 lines]");
    assert_eq!(lines[2], "  \"key0\": number = 0");
    assert_eq!(lines[lines.len() - 2], "  … 192 more keys");
}

#[test]
fn other_meters_are_respected() {
    let text = numbered(500);
    for mode in [
        PreviewMode::Head,
        PreviewMode::HeadTail,
        PreviewMode::Structure,
    ] {
        let options = PreviewOptions {
            mode,
            budget: 50,
            cut_long_lines: true,
            head_share: HeadShare::default(),
        };
        let by_words = build_preview(&[PreviewBlock::text(&text)], &WordMeter, &options);
        assert!(WordMeter.measure(&by_words) <= 50);
        assert!(by_words.len() > 150, "{by_words}");
        let by_bytes = build_preview(&[PreviewBlock::text(&text)], &ByteMeter, &options);
        assert!(by_bytes.len() <= 50);
    }
}

#[test]
fn small_containers_collapse_before_large_ones() {
    let items: Vec<serde_json::Value> = (0..2000)
        .map(|i| serde_json::json!({"id": i, "name": format!("item {i}")}))
        .collect();
    let doc = serde_json::json!({
        "meta": {"page": 1, "filters": {"status": "open", "owner": {"id": 7, "team": "core"}}},
        "items": items,
    });
    let text = serde_json::to_string_pretty(&doc).unwrap();
    let full = preview(
        &[PreviewBlock::json(&text)],
        PreviewMode::Structure,
        2000,
        false,
    );
    assert!(full.contains("\"owner\": object, 2 keys"), "{full}");
    let out = preview(
        &[PreviewBlock::json(&text)],
        PreviewMode::Structure,
        300,
        false,
    );
    assert_eq!(
        out,
        r#"[JSON outline: object, 2 keys, 8,014 lines]
{
  "items": array[2,000] (lines 2-8,003) of object {
    "id": number, e.g. 0
    "name": string, e.g. "item 0"
  }
  "meta": object, 2 keys (lines 8,004-8,013) {…}
}"#
    );
}
