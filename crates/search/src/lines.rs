//! Line offsets of a text split on `'\n'` (JavaScript `text.split('\n')`).

/// Start offsets of every line of a text; line `i` spans from `start(i)` to
/// `end(i)` (exclusive, not including the `'\n'`).
#[derive(Debug)]
pub struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    /// Indexes `text`.
    pub fn new(text: &'t str) -> Self {
        let mut starts = Vec::with_capacity(text.len() / 64 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Self { text, starts }
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
}
