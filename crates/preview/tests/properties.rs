//! Properties of every preview, on generated text and JSON, with several
//! meters.

mod common;

use common::{
    check_head_tail, check_line, display, parse_header, ByteMeter, ChunkMeter, WordMeter,
};
use offload_preview::{
    build_preview, BlockKind, HeadShare, Meter, PreviewBlock, PreviewMode, PreviewOptions,
    Utf16Meter,
};
use proptest::prelude::*;
use serde_json::Value;

/// Meters to run with: UTF-16 units, bytes, words, and a tokenizer-like one.
#[derive(Debug, Clone, Copy)]
enum Which {
    Utf16,
    Bytes,
    Words,
    Chunks,
}

fn meter(which: Which) -> &'static dyn Meter {
    match which {
        Which::Utf16 => &Utf16Meter,
        Which::Bytes => &ByteMeter,
        Which::Words => &WordMeter,
        Which::Chunks => &ChunkMeter,
    }
}

/// Meters whose measure of lines joined with '\n' is the sum of the parts.
fn additive() -> impl Strategy<Value = Which> {
    prop::sample::select(vec![Which::Utf16, Which::Bytes, Which::Words])
}

fn any_meter() -> impl Strategy<Value = Which> {
    prop::sample::select(vec![
        Which::Utf16,
        Which::Bytes,
        Which::Words,
        Which::Chunks,
    ])
}

fn mode() -> impl Strategy<Value = PreviewMode> {
    prop::sample::select(vec![
        PreviewMode::Head,
        PreviewMode::HeadTail,
        PreviewMode::Structure,
    ])
}

fn text_char() -> impl Strategy<Value = char> {
    prop::sample::select(vec![
        'a', 'b', 'Z', '0', '7', ' ', ' ', '\t', '\r', ',', '{', '}', '[', ']', '"', ':', 'é', '€',
        '😀', '\u{2028}', '-',
    ])
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop::collection::vec(text_char(), 0..30).prop_map(String::from_iter),
        1 => prop::collection::vec(text_char(), 100..1500).prop_map(String::from_iter),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(line(), 1..80).prop_map(|lines| lines.join("\n"))
}

fn kind() -> impl Strategy<Value = BlockKind> {
    prop::sample::select(vec![BlockKind::Text, BlockKind::Json])
}

fn blocks() -> impl Strategy<Value = Vec<(BlockKind, String)>> {
    prop::collection::vec((kind(), text()), 0..4)
}

fn some_blocks() -> impl Strategy<Value = Vec<(BlockKind, String)>> {
    prop::collection::vec((kind(), text()), 1..4)
}

fn as_blocks(blocks: &[(BlockKind, String)]) -> Vec<PreviewBlock<'_>> {
    blocks
        .iter()
        .map(|(kind, text)| PreviewBlock { kind: *kind, text })
        .collect()
}

fn run(
    blocks: &[PreviewBlock<'_>],
    which: Which,
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
    build_preview(blocks, meter(which), &options)
}

/// Head shares: the ends and anything between.
fn head_share() -> impl Strategy<Value = HeadShare> {
    prop_oneof![Just(0.0), Just(1.0), 0.0..=1.0f64]
        .prop_map(|share| HeadShare::new(share).expect("a share from 0 to 1"))
}

fn run_with_share(
    blocks: &[PreviewBlock<'_>],
    which: Which,
    mode: PreviewMode,
    budget: usize,
    head_share: HeadShare,
) -> String {
    let options = PreviewOptions {
        mode,
        budget,
        cut_long_lines: false,
        head_share,
    };
    build_preview(blocks, meter(which), &options)
}

fn json_string() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec![
        'a', 'b', 'x', ' ', '"', '\\', '/', '\n', '\t', '\u{1}', 'é', '😀', '\u{2028}',
    ]);
    prop_oneof![
        8 => prop::collection::vec(chars.clone(), 0..12).prop_map(String::from_iter),
        1 => prop::collection::vec(chars, 40..200).prop_map(String::from_iter),
    ]
}

fn json_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["id", "name", "email", "tags", "a", "b", "value"]).prop_map(String::from),
        1 => json_string(),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(Value::from),
        json_string().prop_map(Value::String),
    ]
}

/// Arrays of objects whose keys vary from element to element.
fn records() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec!["id", "name", "email", "tags", "score"]);
    prop::collection::vec(prop::collection::btree_map(keys, json_leaf(), 0..5), 0..400).prop_map(
        |rows| {
            Value::Array(
                rows.into_iter()
                    .map(|row| {
                        Value::Object(row.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                    })
                    .collect(),
            )
        },
    )
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(8, 200, 10, |inner| {
        prop_oneof![
            4 => prop::collection::vec(inner.clone(), 0..10).prop_map(Value::Array),
            4 => prop::collection::btree_map(json_key(), inner, 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
            1 => records(),
        ]
    })
}

/// A document with an object or array at its root.
fn json_document() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::btree_map(json_key(), json_value(), 0..10)
            .prop_map(|members| Value::Object(members.into_iter().collect())),
        prop::collection::vec(json_value(), 0..20).prop_map(Value::Array),
        records(),
    ]
}

/// Checks every `(lines A-B)` of an outline against the document: line A
/// opens the container (after the member's key, when there is one) and line
/// B closes it.
fn check_line_ranges(outline: &str, text: &str) -> Result<(), String> {
    let lines: Vec<&str> = text.lines().collect();
    for shown in outline.lines() {
        let Some(at) = shown.find(" (lines ") else {
            continue;
        };
        let range = &shown[at + " (lines ".len()..];
        let range = &range[..range.find(')').ok_or("unclosed range")?];
        let (first, last) = range.split_once('-').ok_or("bad range")?;
        let first: usize = first
            .replace(',', "")
            .parse()
            .map_err(|_| "bad first line")?;
        let last: usize = last.replace(',', "").parse().map_err(|_| "bad last line")?;
        let opening = lines
            .get(first - 1)
            .ok_or("first line out of range")?
            .trim();
        let closing = lines.get(last - 1).ok_or("last line out of range")?.trim();
        if !(opening.ends_with('{') || opening.ends_with('[')) {
            return Err(format!("{shown:?}: line {first} is {opening:?}"));
        }
        if !(closing.starts_with('}') || closing.starts_with(']')) {
            return Err(format!("{shown:?}: line {last} is {closing:?}"));
        }
        let member = shown.trim_start();
        if let Some(label) = member.strip_prefix('"') {
            let bytes = label.as_bytes();
            let mut end = 0;
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            let key = &label[..end.min(label.len())];
            if !key.ends_with('…') && !opening.starts_with(&format!("\"{key}\": ")) {
                return Err(format!("{shown:?}: line {first} is {opening:?}"));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_preview_fits_its_budget_and_is_deterministic(
        blocks in blocks(),
        which in any_meter(),
        mode in mode(),
        budget in 0usize..700,
        cut in any::<bool>(),
    ) {
        let blocks = as_blocks(&blocks);
        let out = run(&blocks, which, mode, budget, cut);
        prop_assert!(meter(which).measure(&out) <= budget, "{} > {budget}: {out:?}", meter(which).measure(&out));
        prop_assert_eq!(&out, &run(&blocks, which, mode, budget, cut));
        if budget == 0 || blocks.is_empty() {
            prop_assert_eq!(out, "");
        }
    }

    #[test]
    fn head_is_the_longest_prefix_that_fits(blocks in blocks(), which in any_meter(), budget in 1usize..700) {
        let blocks = as_blocks(&blocks);
        let joined: String = blocks.iter().map(|b| b.text).collect::<Vec<_>>().join("\n");
        let out = run(&blocks, which, PreviewMode::Head, budget, false);
        prop_assert!(joined.starts_with(&out));
        if let Some(next) = joined[out.len()..].chars().next() {
            let longer = &joined[..out.len() + next.len_utf8()];
            prop_assert!(meter(which).measure(longer) > budget);
        }
    }

    #[test]
    fn head_lines_stand_for_the_lines_of_the_text(blocks in some_blocks(), which in additive(), budget in 1usize..700) {
        let blocks = as_blocks(&blocks);
        let joined: String = blocks.iter().map(|b| b.text).collect::<Vec<_>>().join("\n");
        let out = run(&blocks, which, PreviewMode::Head, budget, true);
        if out != joined {
            let originals: Vec<&str> = joined.split('\n').map(display).collect();
            let shown: Vec<&str> = out.split('\n').collect();
            prop_assert!(shown.len() <= originals.len());
            for (i, (line, original)) in shown.iter().zip(&originals).enumerate() {
                let last = i + 1 == shown.len();
                if let Err(e) = check_line(line, original, last) {
                    prop_assert!(false, "line {}: {}", i + 1, e);
                }
            }
        }
    }

    #[test]
    fn head_tail_sections_show_the_right_lines(blocks in some_blocks(), which in additive(), budget in 1usize..700) {
        let blocks = as_blocks(&blocks);
        let out = run(&blocks, which, PreviewMode::HeadTail, budget, false);
        check_head_tail_sections(&out, &blocks, which, budget)?;
    }

    #[test]
    fn head_tail_fits_and_shows_the_right_lines_with_any_share(
        blocks in some_blocks(),
        which in any_meter(),
        budget in 0usize..700,
        share in head_share(),
    ) {
        let blocks = as_blocks(&blocks);
        for mode in [PreviewMode::HeadTail, PreviewMode::Structure] {
            let out = run_with_share(&blocks, which, mode, budget, share);
            prop_assert!(meter(which).measure(&out) <= budget, "{} > {budget}: {out:?}", meter(which).measure(&out));
            prop_assert_eq!(&out, &run_with_share(&blocks, which, mode, budget, share));
        }
        if !matches!(which, Which::Chunks) && budget > 0 {
            let out = run_with_share(&blocks, which, PreviewMode::HeadTail, budget, share);
            check_head_tail_sections(&out, &blocks, which, budget)?;
        }
    }

    #[test]
    fn structure_outlines_json_documents(
        doc in json_document(),
        compact in any::<bool>(),
        kind in kind(),
        which in any_meter(),
        budget in 0usize..2500,
    ) {
        let text = if compact { serde_json::to_string(&doc) } else { serde_json::to_string_pretty(&doc) };
        let text = text.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let blocks = [PreviewBlock { kind, text: &text }];
        let out = run(&blocks, which, PreviewMode::Structure, budget, false);
        let m = meter(which);
        prop_assert!(m.measure(&out) <= budget);
        prop_assert_eq!(&out, &run(&blocks, which, PreviewMode::Structure, budget, false));
        if m.measure(&text) <= budget {
            prop_assert_eq!(&out, &text);
        } else if budget >= 60 && matches!(which, Which::Utf16 | Which::Bytes) {
            prop_assert!(out.starts_with("[JSON outline: "), "{}", out);
        }
        if let Err(e) = check_line_ranges(&out, &text) {
            prop_assert!(false, "{e}\n{out}");
        }
        if compact {
            prop_assert!(!out.contains("(lines "));
        }
        if out.starts_with("[JSON outline: ") && budget >= 80 && matches!(which, Which::Utf16 | Which::Bytes) {
            // Planned exactly: never cut by the final check, so balanced.
            let opened = out.lines().filter(|l| l.ends_with(" {") || *l == "{" || *l == "[").count();
            let closed = out.lines().filter(|l| matches!(l.trim_start(), "}" | "]")).count();
            prop_assert_eq!(opened, closed, "{}", out);
        }
    }

    #[test]
    fn structure_falls_back_on_invalid_json(doc in json_document(), cut in any::<prop::sample::Index>(), budget in 1usize..1500, kind in kind()) {
        let text = serde_json::to_string_pretty(&doc).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let end = cut.index(text.len());
        let end = (0..=end).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let truncated = &text[..end];
        prop_assume!(serde_json::from_str::<serde::de::IgnoredAny>(truncated).is_err());
        let blocks = [PreviewBlock { kind, text: truncated }];
        prop_assert_eq!(
            run(&blocks, Which::Utf16, PreviewMode::Structure, budget, false),
            run(&blocks, Which::Utf16, PreviewMode::HeadTail, budget, false)
        );
    }

    #[test]
    fn structure_of_plain_text_is_head_tail(blocks in blocks(), which in any_meter(), budget in 1usize..700) {
        let blocks = as_blocks(&blocks);
        let all_text = blocks.iter().all(|b| {
            !matches!(serde_json::from_str::<Value>(b.text), Ok(Value::Object(_) | Value::Array(_)))
        });
        prop_assume!(all_text);
        prop_assert_eq!(
            run(&blocks, which, PreviewMode::Structure, budget, false),
            run(&blocks, which, PreviewMode::HeadTail, budget, false)
        );
    }
}

/// Splits a sectioned preview into the bodies of its `count` blocks.
/// Checks every block's section of a head-and-tail preview `out` of `blocks` within
/// `budget` (nothing to check when not even the section headers fit: the preview is
/// then a cut of them).
fn check_head_tail_sections(out: &str, blocks: &[PreviewBlock<'_>], which: Which, budget: usize) -> Result<(), TestCaseError> {
    let headers: usize = (0..blocks.len())
        .map(|i| meter(which).measure(&format!("[block {} of {}: text]\n", i + 1, blocks.len())))
        .sum();
    if blocks.len() > 1 && budget < headers {
        return Ok(());
    }
    let sections = split_sections(out, blocks.len())?;
    for (section, block) in sections.iter().zip(blocks) {
        if let Err(e) = check_head_tail(section, block.text) {
            prop_assert!(false, "{e}\nsection: {section:?}");
        }
    }
    Ok(())
}

fn split_sections(out: &str, count: usize) -> Result<Vec<String>, TestCaseError> {
    if count == 1 {
        return Ok(vec![out.to_owned()]);
    }
    let mut sections: Vec<Vec<&str>> = Vec::new();
    for line in out.split('\n') {
        match parse_header(line) {
            Some((index, total, _)) if index == sections.len() + 1 && total == count => {
                sections.push(Vec::new())
            }
            _ => match sections.last_mut() {
                Some(section) => section.push(line),
                None => return Err(TestCaseError::fail(format!("no header before {line:?}"))),
            },
        }
    }
    if sections.len() != count {
        return Err(TestCaseError::fail(format!(
            "{} sections of {count}",
            sections.len()
        )));
    }
    Ok(sections.into_iter().map(|lines| lines.join("\n")).collect())
}
