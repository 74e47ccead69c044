//! 10 MB inputs and pathological nesting: previews stay within budget, and
//! the meter is only asked about what ends up in the preview.

mod common;

use std::time::Instant;

use common::{check_head_tail, CountingMeter};
use offload_preview::{
    build_preview, HeadShare, Meter, PreviewBlock, PreviewMode, PreviewOptions, Utf16Meter,
};

const TEN_MB: usize = 10 * 1024 * 1024;
const BUDGET: usize = 4000;

fn log_text() -> String {
    let mut out = String::with_capacity(TEN_MB + 100);
    let mut i = 0u64;
    while out.len() < TEN_MB {
        i += 1;
        out.push_str(&format!(
            "2024-05-01T12:00:00Z INFO request {i} served in {} ms\r\n",
            i % 997
        ));
    }
    out
}

fn json_records(pretty: bool) -> String {
    let mut items = Vec::new();
    let mut size = 0;
    let mut i = 0u64;
    while size < TEN_MB {
        i += 1;
        let item = serde_json::json!({"id": i, "name": format!("item \"{i}\" é"), "tags": ["a", "b"], "price": i as f64 / 8.0});
        size += if pretty { 110 } else { 70 };
        items.push(item);
    }
    let doc = serde_json::json!({"items": items, "count": i});
    if pretty {
        serde_json::to_string_pretty(&doc).unwrap()
    } else {
        serde_json::to_string(&doc).unwrap()
    }
}

/// Previews `block` in `mode`, checking the budget and how much text the
/// meter was asked about; returns the preview.
fn preview(block: PreviewBlock<'_>, mode: PreviewMode, max_seen: usize) -> String {
    let options = PreviewOptions {
        mode,
        budget: BUDGET,
        cut_long_lines: true,
        head_share: HeadShare::default(),
    };
    let meter = CountingMeter::default();
    let start = Instant::now();
    let out = build_preview(&[block], &meter, &options);
    let elapsed = start.elapsed();
    assert!(Utf16Meter.measure(&out) <= BUDGET);
    println!(
        "{mode:<10} {:>9} bytes: {:>8.2} ms, meter saw {} bytes in {} calls",
        block.text.len(),
        elapsed.as_secs_f64() * 1e3,
        meter.seen.get(),
        meter.calls.get()
    );
    assert!(
        meter.seen.get() <= max_seen,
        "meter saw {} bytes",
        meter.seen.get()
    );
    assert_eq!(out, build_preview(&[block], &Utf16Meter, &options));
    out
}

#[test]
fn ten_megabytes_of_log_lines() {
    let text = log_text();
    let block = PreviewBlock::text(&text);
    let head = preview(block, PreviewMode::Head, 40 * BUDGET);
    // Lines are shown without their '\r'.
    assert!(head.starts_with("2024-05-01T12:00:00Z INFO request 1 served in 1 ms\n2024"));
    let head_tail = preview(block, PreviewMode::HeadTail, 40 * BUDGET);
    check_head_tail(&head_tail, &text).unwrap();
    assert!(head_tail.contains(" lines omitted (lines "));
    assert_eq!(
        preview(block, PreviewMode::Structure, 40 * BUDGET),
        head_tail
    );
}

#[test]
fn one_ten_megabyte_line() {
    let text = "é".repeat(TEN_MB / 2);
    let block = PreviewBlock::text(&text);
    for mode in [
        PreviewMode::Head,
        PreviewMode::HeadTail,
        PreviewMode::Structure,
    ] {
        let out = preview(block, mode, 40 * BUDGET);
        assert!(out.ends_with(" chars]"), "{mode}");
        check_head_tail(&out, &text).unwrap();
    }
}

#[test]
fn ten_megabytes_of_json() {
    for pretty in [true, false] {
        let text = json_records(pretty);
        let block = PreviewBlock::json(&text);
        let out = preview(block, PreviewMode::Structure, 40 * BUDGET);
        assert!(out.starts_with("[JSON outline: object, 2 keys, "), "{out}");
        assert!(out.contains("\"items\": array["), "{out}");
        assert!(
            out.contains("\"name\": string, e.g. \"item \\\"1\\\" é\""),
            "{out}"
        );
        assert_eq!(out.contains(" (lines "), pretty, "{out}");
        preview(block, PreviewMode::Head, 40 * BUDGET);
        let head_tail = preview(block, PreviewMode::HeadTail, 40 * BUDGET);
        check_head_tail(&head_tail, &text).unwrap();
    }
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let depth = 100_000;
    let arrays = "[".repeat(depth) + &"]".repeat(depth);
    let objects = "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth);
    let pretty_ish = "[\n".repeat(depth) + &"]\n".repeat(depth);
    for text in [&arrays, &objects, &pretty_ish] {
        let out = preview(
            PreviewBlock::json(text),
            PreviewMode::Structure,
            40 * BUDGET,
        );
        assert!(out.starts_with("[JSON outline: "), "{out}");
        preview(PreviewBlock::text(text), PreviewMode::HeadTail, 40 * BUDGET);
    }
    let options = PreviewOptions {
        mode: PreviewMode::Structure,
        budget: 300,
        cut_long_lines: false,
        head_share: HeadShare::default(),
    };
    let out = build_preview(&[PreviewBlock::json(&objects)], &Utf16Meter, &options);
    assert!(
        out.starts_with("[JSON outline: object, 1 key, 1 line]\n{\n  \"a\": object, 1 key {"),
        "{out}"
    );
    // Unbalanced: not JSON, previewed as text.
    let unbalanced = "[".repeat(depth);
    let out = build_preview(&[PreviewBlock::json(&unbalanced)], &Utf16Meter, &options);
    assert!(out.starts_with("[[[[") && out.ends_with(" chars]"), "{out}");
    common::check_line(&out, &unbalanced, false).unwrap();
}
