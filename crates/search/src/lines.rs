//! Line offsets of a text split on `'\n'` (JavaScript `text.split('\n')`).

use std::borrow::Cow;

/// Start offsets of every line of a text; line `i` spans from `start(i)` to
/// `end(i)` (exclusive, not including the `'\n'`).
#[derive(Debug)]
pub struct LineIndex<'t> {
    text: &'t str,
    /// Computed here, or borrowed from a [`crate::prepared::PreparedText`].
    starts: Cow<'t, [usize]>,
}

impl<'t> LineIndex<'t> {
    /// Indexes `text`.
    pub fn new(text: &'t str) -> Self {
        Self {
            text,
            starts: Cow::Owned(line_starts(text)),
        }
    }

    /// The index of `text` whose line starts were computed before by
    /// [`line_starts`] on the same text.
    pub(crate) fn with_starts(text: &'t str, starts: &'t [usize]) -> Self {
        Self {
            text,
            starts: Cow::Borrowed(starts),
        }
    }

    /// The indexed text.
    pub fn text(&self) -> &'t str {
        self.text
    }

    /// Number of lines (`split('\n').length`, at least 1).
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// Byte offset where line `i` starts.
    pub fn start(&self, i: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(self.text.len())
    }

    /// Byte offset where line `i` ends (its `'\n'` or the end of text).
    pub fn end(&self, i: usize) -> usize {
        match self.starts.get(i + 1) {
            Some(&next) => next - 1,
            None => self.text.len(),
        }
    }

    /// The text of line `i`.
    pub fn line(&self, i: usize) -> &'t str {
        self.text.get(self.start(i)..self.end(i)).unwrap_or("")
    }

    /// The line containing byte `offset` (offsets at a `'\n'` belong to the
    /// line it ends).
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// [`LineIndex::line_of`] for an `offset` known to lie in line `from`
    /// or after it: a galloping search forward from `from`, so that finding
    /// the line of each match, match after match, costs in proportion to the
    /// logarithm of the distance between them instead of a search over the
    /// whole index every time.
    pub fn line_of_from(&self, offset: usize, from: usize) -> usize {
        let starts = &self.starts[..];
        if starts.get(from).is_none_or(|&s| s > offset) {
            return self.line_of(offset);
        }
        // `starts[lo] <= offset` holds throughout.
        let mut lo = from;
        let mut step = 1;
        let hi = loop {
            let probe = lo.saturating_add(step);
            match starts.get(probe) {
                Some(&s) if s <= offset => {
                    lo = probe;
                    step = step.saturating_mul(2);
                }
                Some(_) => break probe,
                None => break starts.len(),
            }
        };
        lo + starts[lo..hi].partition_point(|&s| s <= offset) - 1
    }
}

/// Start offsets of every line of `text`: 0, then one past each `'\n'`.
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::with_capacity(text.len() / 64 + 1);
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_javascript() {
        let idx = LineIndex::new("a\n\nbc\n");
        assert_eq!(idx.count(), 4);
        let lines: Vec<&str> = (0..idx.count()).map(|i| idx.line(i)).collect();
        assert_eq!(lines, vec!["a", "", "bc", ""]);
        assert_eq!(idx.line_of(0), 0);
        assert_eq!(idx.line_of(1), 0);
        assert_eq!(idx.line_of(2), 1);
        assert_eq!(idx.line_of(5), 2);
        assert_eq!(idx.line_of(6), 3);
    }

    #[test]
    fn line_of_from_agrees_with_line_of() {
        let text: String = (0..300).map(|i| "x".repeat(i % 7) + "\n").collect();
        let idx = LineIndex::new(&text);
        for offset in 0..=text.len() {
            let line = idx.line_of(offset);
            for from in [0, line / 2, line.saturating_sub(1), line] {
                assert_eq!(
                    idx.line_of_from(offset, from),
                    line,
                    "offset {offset} from {from}"
                );
            }
            // A hint past the line falls back to the full search.
            assert_eq!(idx.line_of_from(offset, line + 1), line);
        }
    }
}
