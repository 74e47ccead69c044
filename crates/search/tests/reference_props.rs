//! Property tests against a deliberately naive reference: the text is split
//! into a `Vec` of lines, each line is tested separately with its own regex
//! call, and the output is formatted with the SDK's algorithm written out
//! directly (full body, then truncation by UTF-16 units).

use proptest::prelude::*;

use offload_search::{search_content, LineRange};

/// Simple patterns whose JavaScript meaning equals the Rust `regex` meaning
/// when run on a single line with Unicode disabled for the classes.
const PATTERNS: &[(&str, &str)] = &[
    ("a", "a"),
    ("ab", "ab"),
    ("b|c", "b|c"),
    ("^a", "^a"),
    ("a$", "a$"),
    ("^$", "^$"),
    ("\\d+", "[0-9]+"),
    ("x*", "x*"),
    ("[a-c]{2}", "[a-c]{2}"),
    ("é", "é"),
    ("\\bab", "(?-u:\\b)ab"),
    ("a.c", "a[^\\n\\r\\x{2028}\\x{2029}]c"),
    ("\\s", "[\\t\\x{b}\\x{c}\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}]"),
    ("[^a ]", "[^a \\n]"),
    ("(a|b)c?", "(a|b)c?"),
    ("a(?=b)", "ab"),
    ("(a)\\1", "aa"),
    ("f(x", "f\\(x"),
    ("(a+)+b", "\\(a\\+\\)\\+b"),
];

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Byte offset of UTF-16 unit `n`, backing off to a character boundary.
fn byte_at_unit(s: &str, n: usize) -> usize {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        if units + c.len_utf16() > n {
            return i;
        }
        units += c.len_utf16();
    }
    s.len()
}

fn truncate(output: &str, max: usize, message: &str) -> String {
    if utf16_len(output) <= max {
        return output.to_owned();
    }
    // lastIndexOf('\n', max): last newline at unit index <= max.
    let mut cut = None;
    let mut units = 0;
    for (i, c) in output.char_indices() {
        if units > max {
            break;
        }
        if c == '\n' {
            cut = Some(i);
        }
        units += c.len_utf16();
    }
    let end = match cut {
        Some(i) if i > 0 => i,
        _ => byte_at_unit(output, max),
    };
    format!("{}\n\n[{message}]", &output[..end])
}

fn format_lines(lines: &[&str], indices: &[usize], matched: &[usize]) -> String {
    let Some(&last) = indices.last() else {
        return String::new();
    };
    let width = (last + 1).to_string().len();
    let mut out: Vec<String> = Vec::new();
    for (k, &idx) in indices.iter().enumerate() {
        if k > 0 && idx > indices[k - 1] + 1 {
            out.push("---".into());
        }
        let marker = if matched.contains(&idx) { '>' } else { ' ' };
        out.push(format!("{marker} {:>width$}| {}", idx + 1, lines[idx]));
    }
    out.join("\n")
}

fn reference(
    text: &str,
    pattern: Option<(&str, &str)>,
    range: Option<LineRange>,
    ctx: usize,
    max: usize,
) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    if text.is_empty() {
        return "Content is empty (0 lines).".into();
    }
    let total = lines.len();
    let (mut s, mut e) = (0usize, total - 1);
    if let Some(r) = range {
        if r.start > r.end {
            return format!(
                "Error: line_range.start ({}) must be <= line_range.end ({}).",
                r.start, r.end
            );
        }
        if r.start as usize > total {
            return format!(
                "Error: line_range.start ({}) is beyond content length ({total} lines).",
                r.start
            );
        }
        s = r.start as usize - 1;
        e = (r.end as usize - 1).min(total - 1);
    }
    match pattern {
        Some((js, rust)) => {
            let label = range
                .map(|r| format!(" in lines {}-{}", r.start, e + 1))
                .unwrap_or_default();
            let re = regex::Regex::new(rust).unwrap();
            let matched: Vec<usize> = (s..=e).filter(|&i| re.is_match(lines[i])).collect();
            if matched.is_empty() {
                return format!(
                    "No matches found for pattern '{js}'{label} (searched {} lines).",
                    e - s + 1
                );
            }
            let mut visible: Vec<usize> = Vec::new();
            for &m in &matched {
                for i in m.saturating_sub(ctx).max(s)..=(m + ctx).min(e) {
                    if !visible.contains(&i) {
                        visible.push(i);
                    }
                }
            }
            visible.sort_unstable();
            let safe: String = js
                .chars()
                .map(|c| if "\n\r/]".contains(c) { ' ' } else { c })
                .collect();
            let safe = &safe[..byte_at_unit(&safe, 50)];
            let plural = if matched.len() > 1 { "es" } else { "" };
            let header = format!("[{} match{plural} for /{safe}/{label}]", matched.len());
            let body = format_lines(&lines, &visible, &matched);
            format!(
                "{header}\n\n{}",
                truncate(&body, max, "output truncated, narrow your search")
            )
        }
        None => {
            let indices: Vec<usize> = (s..=e).collect();
            let header = format!("[Lines {}-{} of {total}]", s + 1, e + 1);
            let body = format_lines(&lines, &indices, &[]);
            format!(
                "{header}\n\n{}",
                truncate(&body, max, "output truncated, narrow your range")
            )
        }
    }
}

fn text_strategy() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a", "b", "c", "ab", "x", "1", "23", " ", "\t", "é", "😀", "€", "\r", "\u{a0}", "\u{2028}",
        "(", "f(x", "(a+)+b", "aa", "-", "_",
    ]);
    let line = prop::collection::vec(piece, 0..6).prop_map(|v| v.concat());
    (prop::collection::vec(line, 0..14), any::<bool>())
        .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" }))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn matches_naive_reference(
        text in text_strategy(),
        pat in prop::option::of(0..PATTERNS.len()),
        range in prop::option::of((1u64..16, 0u64..16)),
        ctx in 0usize..4,
        max in prop_oneof![Just(100_000usize), 0usize..120],
    ) {
        let range = range.map(|(start, len)| LineRange { start, end: (start + len).saturating_sub(2).max(1) });
        let pattern = pat.map(|i| PATTERNS[i]);
        let want = reference(&text, pattern, range, ctx, max);
        let got = search_content(&text, pattern.map(|p| p.0), range, ctx as u64, max).unwrap();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn output_never_exceeds_budget_plus_overhead(
        text in text_strategy(),
        max in 0usize..200,
    ) {
        if let Ok(out) = search_content(&text, Some("a|b|\\s"), None, 2, max) {
            if let Some((header, body)) = out.split_once("\n\n") {
                prop_assert!(header.starts_with('['));
                let note = "\n\n[output truncated, narrow your search]";
                let body = body.strip_suffix(note).unwrap_or(body);
                prop_assert!(utf16_len(body) <= max);
            }
        }
    }
}
