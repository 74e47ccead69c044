//! Output formatting identical to the SDK's `formatLines` / `truncate`,
//! built incrementally so that only the part that survives truncation is
//! ever formatted.

use std::fmt::Write as _;

use crate::lines::LineIndex;
use crate::utf16::BoundedWriter;

/// Truncation note for pattern searches.
pub const PATTERN_TRUNCATION: &str = "output truncated, narrow your search";
/// Truncation note for line ranges.
pub const RANGE_TRUNCATION: &str = "output truncated, narrow your range";

/// Number of decimal digits of `n`.
fn digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Writes formatted lines in increasing index order, inserting `---` for
/// gaps, until the writer's budget is exceeded.
struct LineFormatter<'a, 't> {
    lines: &'a LineIndex<'t>,
    out: BoundedWriter,
    width: usize,
    prev: Option<usize>,
    prefix: String,
}

impl<'a, 't> LineFormatter<'a, 't> {
    fn new(lines: &'a LineIndex<'t>, last_index: usize, max_chars: usize) -> Self {
        Self {
            lines,
            out: BoundedWriter::new(max_chars),
            width: digits(last_index.saturating_add(1)),
            prev: None,
            prefix: String::new(),
        }
    }

    fn is_over(&self) -> bool {
        self.out.is_over()
    }

    fn line(&mut self, idx: usize, matched: bool) {
        if let Some(p) = self.prev {
            self.out.push_newline();
            if idx > p + 1 {
                self.out.push_str("---");
                self.out.push_newline();
            }
        }
        self.prefix.clear();
        let marker = if matched { '>' } else { ' ' };
        let _ = write!(self.prefix, "{marker} {:>w$}| ", idx + 1, w = self.width);
        self.out.push_str(&self.prefix);
        self.out.push_str(self.lines.line(idx));
        self.prev = Some(idx);
    }

    fn finish(self, message: &str) -> String {
        self.out.finish(message)
    }
}

/// Body of a pattern search: matched lines (ascending, within
/// `first..=last`) with `context` lines around them, marked with `>`.
pub fn matches_body(
    lines: &LineIndex<'_>,
    matches: &[usize],
    first: usize,
    last: usize,
    context: u64,
    max_chars: usize,
) -> String {
    let ctx = usize::try_from(context).unwrap_or(usize::MAX);
    let Some(&last_match) = matches.last() else {
        return String::new();
    };
    let last_visible = last.min(last_match.saturating_add(ctx));
    let mut f = LineFormatter::new(lines, last_visible, max_chars);
    let mut next = first; // smallest index not yet printed
    let mut mp = 0; // first match not yet passed
    for &m in matches {
        let lo = first.max(m.saturating_sub(ctx)).max(next);
        let hi = last.min(m.saturating_add(ctx));
        if lo > hi {
            continue;
        }
        for idx in lo..=hi {
            while mp < matches.len() && matches[mp] < idx {
                mp += 1;
            }
            let matched = matches.get(mp) == Some(&idx);
            f.line(idx, matched);
            if f.is_over() {
                return f.finish(PATTERN_TRUNCATION);
            }
        }
        next = hi.saturating_add(1);
    }
    f.finish(PATTERN_TRUNCATION)
}

/// Body of a line-range request: every line in `first..=last`.
pub fn range_body(lines: &LineIndex<'_>, first: usize, last: usize, max_chars: usize) -> String {
    let mut f = LineFormatter::new(lines, last, max_chars);
    for idx in first..=last {
        f.line(idx, false);
        if f.is_over() {
            break;
        }
    }
    f.finish(RANGE_TRUNCATION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_counts() {
        assert_eq!(digits(0), 1);
        assert_eq!(digits(9), 1);
        assert_eq!(digits(10), 2);
        assert_eq!(digits(200_000), 6);
    }
}
