//! `searchContent` and the retrieval tool's argument handling.

use crate::deadline::Deadline;
use crate::error::SearchError;
use crate::format;
use crate::js_regex;
use crate::lines::LineIndex;
use crate::matcher::Matcher;
use crate::utf16;

/// 1-indexed inclusive line span as the user gave it (`start`, `end >= 1`,
/// possibly huge, up to 2^53).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineRange {
    /// First line (1-based).
    pub start: u64,
    /// Last line (1-based, inclusive).
    pub end: u64,
}

/// What the retrieval tool was asked, after JS-side validation (integers,
/// `start`/`end >= 1`, `context_lines >= 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RetrievalQuery<'a> {
    /// Regex or keyword; an empty string counts as absent (JS truthiness).
    pub pattern: Option<&'a str>,
    /// Line span to show or to search within.
    pub line_range: Option<LineRange>,
    /// Context lines around each match (default 5).
    pub context_lines: Option<u64>,
}

/// Default `context_lines` of the retrieval tool.
pub const DEFAULT_CONTEXT_LINES: u64 = 5;

fn pattern_is_truthy(pattern: Option<&str>) -> bool {
    pattern.is_some_and(|p| !p.is_empty())
}

/// Whether the retrieval tool returns the whole stored content instead of
/// searching: no (truthy) pattern, no line range and no `context_lines`.
pub fn is_full_retrieval(query: &RetrievalQuery<'_>) -> bool {
    !pattern_is_truthy(query.pattern) && query.line_range.is_none() && query.context_lines.is_none()
}

/// Mirrors the retrieval tool callback: applies the defaults
/// (`context_lines ?? 5`; without a pattern or range, "head mode" shows
/// lines `1..=max(1, context_lines)`), then runs [`search_content`].
/// Only call it when [`is_full_retrieval`] is false.
pub fn run_retrieval_query(
    text: &str,
    query: &RetrievalQuery<'_>,
    max_chars: usize,
) -> Result<String, SearchError> {
    let (line_range, context) = with_defaults(query);
    search_content(text, query.pattern, line_range, context, max_chars)
}

/// [`run_retrieval_query`] over a text already indexed (the same result).
pub fn run_retrieval_query_indexed(
    lines: &LineIndex<'_>,
    query: &RetrievalQuery<'_>,
    max_chars: usize,
) -> Result<String, SearchError> {
    let (line_range, context) = with_defaults(query);
    search_lines(lines, query.pattern, line_range, context, max_chars)
}

/// The line range and context lines the tool searches with: `context_lines
/// ?? 5`, and without a pattern or range lines `1..=max(1, context_lines)`.
fn with_defaults(query: &RetrievalQuery<'_>) -> (Option<LineRange>, u64) {
    let context = query.context_lines.unwrap_or(DEFAULT_CONTEXT_LINES);
    let line_range = query.line_range.or_else(|| {
        (!pattern_is_truthy(query.pattern)).then_some(LineRange {
            start: 1,
            end: context.max(1),
        })
    });
    (line_range, context)
}

/// Result of searching an empty text.
const EMPTY_CONTENT: &str = "Content is empty (0 lines).";

/// Mirrors the SDK's `searchContent(text, {pattern, line_range,
/// context_lines}, maxChars)`; `max_chars` counts UTF-16 code units.
///
/// Invalid line ranges and "no matches" are ordinary results (strings), as in
/// the SDK; errors are reserved for patterns that cannot be run safely.
pub fn search_content(
    text: &str,
    pattern: Option<&str>,
    line_range: Option<LineRange>,
    context_lines: u64,
    max_chars: usize,
) -> Result<String, SearchError> {
    if text.is_empty() {
        return Ok(EMPTY_CONTENT.to_owned());
    }
    search_lines(
        &LineIndex::new(text),
        pattern,
        line_range,
        context_lines,
        max_chars,
    )
}

/// [`search_content`] over a text already indexed (the same result).
pub fn search_lines(
    lines: &LineIndex<'_>,
    pattern: Option<&str>,
    line_range: Option<LineRange>,
    context_lines: u64,
    max_chars: usize,
) -> Result<String, SearchError> {
    if lines.text().is_empty() {
        return Ok(EMPTY_CONTENT.to_owned());
    }
    let total = lines.count();
    let total_u64 = total as u64;
    let (first, last) = match line_range {
        None => (0, total - 1),
        Some(r) => {
            if r.start > r.end {
                return Ok(format!(
                    "Error: line_range.start ({}) must be <= line_range.end ({}).",
                    r.start, r.end
                ));
            }
            if r.start > total_u64 {
                return Ok(format!(
                    "Error: line_range.start ({}) is beyond content length ({total} lines).",
                    r.start
                ));
            }
            let first = usize::try_from(r.start.saturating_sub(1)).unwrap_or(total - 1);
            let last = usize::try_from(r.end.saturating_sub(1))
                .unwrap_or(usize::MAX)
                .min(total - 1);
            (first, last)
        }
    };
    match pattern {
        Some(p) if !p.is_empty() => {
            let scope_label = match line_range {
                Some(r) => format!(" in lines {}-{}", r.start, last + 1),
                None => String::new(),
            };
            search_by_pattern(
                lines,
                p,
                first,
                last,
                context_lines,
                max_chars,
                &scope_label,
            )
        }
        _ => {
            let header = format!("[Lines {}-{} of {total}]", first + 1, last + 1);
            let body = format::range_body(lines, first, last, max_chars);
            Ok(format!("{header}\n\n{body}"))
        }
    }
}

fn search_by_pattern(
    lines: &LineIndex<'_>,
    pattern: &str,
    first: usize,
    last: usize,
    context: u64,
    max_chars: usize,
    scope_label: &str,
) -> Result<String, SearchError> {
    let matcher = Matcher::new(&js_regex::plan(pattern))?;
    let mut matches = Vec::new();
    matcher.matching_lines(lines, first, last, &Deadline::default(), &mut matches)?;
    if matches.is_empty() {
        return Ok(format!(
            "No matches found for pattern '{pattern}'{scope_label} (searched {} lines).",
            last - first + 1
        ));
    }
    let safe: String = pattern
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '/' | ']') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let safe = utf16::prefix(&safe, 50);
    let n = matches.len();
    let plural = if n > 1 { "es" } else { "" };
    let header = format!("[{n} match{plural} for /{safe}/{scope_label}]");
    let body = format::matches_body(lines, &matches, first, last, context, max_chars);
    Ok(format!("{header}\n\n{body}"))
}
