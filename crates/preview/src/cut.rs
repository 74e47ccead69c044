//! Fitting one line into a budget, cutting it with a marker when it is
//! longer than the per-line limit.

use crate::format::{count_chars, cut_marker};
use crate::meter::{prefix_fit, Meter};

/// Smallest per-line limit, so that a cut line keeps some text next to its
/// marker even under a small budget.
pub(crate) const MIN_LINE_LIMIT: usize = 32;

/// The per-line limit for a text of `lines` lines under `budget`: the whole
/// budget for a single line, half of it for two lines, a third for three,
/// and a quarter (at least [`MIN_LINE_LIMIT`]) for more.
pub(crate) fn line_limit(budget: usize, lines: u64) -> usize {
    let share = usize::try_from(lines.clamp(1, 4)).unwrap_or(4);
    if share == 1 {
        return budget;
    }
    (budget / share).max(MIN_LINE_LIMIT).min(budget)
}

/// How a line fits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineFit {
    /// The whole line fits; it measures `cost`.
    Whole {
        /// Measure of the line.
        cost: usize,
    },
    /// The line is longer than its limit; `text` is its start followed by a
    /// cut marker, measuring `cost`.
    Cut {
        /// The shown start of the line and its marker.
        text: String,
        /// Measure of `text`.
        cost: usize,
    },
    /// The line does not fit what is left (or not even a cut of it does).
    Stop,
}

/// Fits `line` into `allowance` units when it is at most `limit` long, or
/// cuts it to `min(limit, allowance)` units, marker included, when longer.
pub(crate) fn fit_line(meter: &dyn Meter, line: &str, allowance: usize, limit: usize) -> LineFit {
    match measure_within(meter, line, limit) {
        Some(cost) if cost <= allowance => LineFit::Whole { cost },
        Some(_) => LineFit::Stop,
        None => cut_line(meter, line, allowance.min(limit)),
    }
}

/// `Some(measure(text))` when it is at most `limit`, `None` when it is more;
/// looks at no more than about `limit` units of a long text.
pub(crate) fn measure_within(meter: &dyn Meter, text: &str, limit: usize) -> Option<usize> {
    let short = limit.saturating_mul(4).saturating_add(64);
    if text.len() > short && prefix_fit(meter, text, limit) < text.len() {
        return None;
    }
    let cost = meter.measure(text);
    (cost <= limit).then_some(cost)
}

/// The start of `line` followed by a cut marker, measuring at most `cap`.
pub(crate) fn cut_line(meter: &dyn Meter, line: &str, cap: usize) -> LineFit {
    // The byte length bounds the number of characters left out, so the
    // marker for it is at least as long as the marker finally shown.
    let widest = meter.measure(&cut_marker(u64::try_from(line.len()).unwrap_or(u64::MAX)));
    let Some(mut content) = cap.checked_sub(widest) else {
        return LineFit::Stop;
    };
    // A meter that is not additive may measure the joined text as more than
    // its parts: shrink the content until it fits.
    for _ in 0..4 {
        let end = prefix_fit(meter, line, content);
        if end == 0 {
            return LineFit::Stop;
        }
        if end == line.len() {
            let cost = meter.measure(line);
            return if cost <= cap {
                LineFit::Whole { cost }
            } else {
                LineFit::Stop
            };
        }
        let mut text = String::with_capacity(end + 24);
        text.push_str(&line[..end]);
        text.push_str(&cut_marker(count_chars(&line[end..])));
        let cost = meter.measure(&text);
        if cost <= cap {
            return LineFit::Cut { text, cost };
        }
        content = content.saturating_sub((cost - cap).max(1));
    }
    LineFit::Stop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Utf16Meter;

    #[test]
    fn limits() {
        assert_eq!(line_limit(1000, 1), 1000);
        assert_eq!(line_limit(1000, 2), 500);
        assert_eq!(line_limit(1000, 3), 333);
        assert_eq!(line_limit(1000, 40), 250);
        assert_eq!(line_limit(40, 40), 32);
        assert_eq!(line_limit(20, 40), 20);
    }

    #[test]
    fn whole_cut_or_stop() {
        let m = Utf16Meter;
        assert_eq!(fit_line(&m, "short", 10, 10), LineFit::Whole { cost: 5 });
        assert_eq!(fit_line(&m, "short", 4, 10), LineFit::Stop);
        let long = "x".repeat(100);
        match fit_line(&m, &long, 1000, 40) {
            LineFit::Cut { text, cost } => {
                assert_eq!(text, format!("{} … [+75 chars]", "x".repeat(25)));
                assert_eq!(cost, 39);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(fit_line(&m, &long, 10, 40), LineFit::Stop);
    }

    #[test]
    fn cut_counts_characters() {
        let m = Utf16Meter;
        let line = "é".repeat(50);
        match cut_line(&m, &line, 30) {
            LineFit::Cut { text, cost } => {
                assert_eq!(text, format!("{} … [+35 chars]", "é".repeat(15)));
                assert!(cost <= 30);
            }
            other => panic!("{other:?}"),
        }
    }
}
