//! Lines of a text split on `'\n'` (JavaScript `text.split('\n')`), numbered
//! from 1, walked from either end without indexing the whole text.

/// One line of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The line without its `'\n'`.
    pub text: &'a str,
}

impl<'a> Line<'a> {
    /// The line as displayed: without a trailing `'\r'`.
    pub fn display(&self) -> &'a str {
        display(self.text)
    }
}

/// `line` without a trailing `'\r'` (part of a `"\r\n"` terminator).
pub(crate) fn display(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// Number of lines of `text` (newlines + 1).
pub(crate) fn count_lines(text: &str) -> u64 {
    // Counting in 255-byte chunks into a byte accumulator lets the compiler
    // vectorise the comparison.
    let mut total = 1u64;
    for chunk in text.as_bytes().chunks(255) {
        let mut n = 0u8;
        for &b in chunk {
            n += u8::from(b == b'\n');
        }
        total += u64::from(n);
    }
    total
}

/// Number of lines of `text`, counting no further than `cap`.
pub(crate) fn count_lines_up_to(text: &str, cap: u64) -> u64 {
    let mut total = 1u64;
    for _ in memchr::memchr_iter(b'\n', text.as_bytes()) {
        if total >= cap {
            break;
        }
        total += 1;
    }
    total
}

/// `text` with `'\r'` removed from the end of every line.
pub(crate) fn without_carriage_returns(text: &str) -> String {
    if memchr::memchr(b'\r', text.as_bytes()).is_none() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(display(line));
    }
    out
}

/// Lines of a text from the first one on.
#[derive(Debug, Clone)]
pub(crate) struct Forward<'a> {
    text: &'a str,
    start: Option<usize>,
    number: u64,
}

impl<'a> Forward<'a> {
    /// Lines of `text` from line 1.
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            start: Some(0),
            number: 1,
        }
    }
}

impl<'a> Iterator for Forward<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        let start = self.start?;
        let rest = self.text.get(start..)?;
        let (text, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], Some(start + i + 1)),
            None => (rest, None),
        };
        let line = Line {
            number: self.number,
            text,
        };
        self.start = next;
        self.number += 1;
        Some(line)
    }
}

/// Lines of a text from the last one back.
#[derive(Debug, Clone)]
pub(crate) struct Backward<'a> {
    text: &'a str,
    end: Option<usize>,
    number: u64,
}

impl<'a> Backward<'a> {
    /// Lines of `text`, which has `lines` lines, from the last one back.
    pub fn new(text: &'a str, lines: u64) -> Self {
        Self {
            text,
            end: Some(text.len()),
            number: lines,
        }
    }
}

impl<'a> Iterator for Backward<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        let end = self.end?;
        let head = self.text.get(..end)?;
        let start = memchr::memrchr(b'\n', head.as_bytes()).map_or(0, |i| i + 1);
        let line = Line {
            number: self.number,
            text: &head[start..],
        };
        self.end = start.checked_sub(1);
        self.number = self.number.saturating_sub(1);
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_split() {
        for text in ["", "a", "a\n", "\n\n", "a\r\nb", "x\ny\nz"] {
            assert_eq!(
                count_lines(text),
                text.split('\n').count() as u64,
                "{text:?}"
            );
        }
        let big = "ab\n".repeat(1000);
        assert_eq!(count_lines(&big), 1001);
        assert_eq!(count_lines_up_to(&big, 4), 4);
        assert_eq!(count_lines_up_to("a\nb", 4), 2);
    }

    #[test]
    fn walks_both_ways() {
        let text = "one\r\ntwo\n\nfour\n";
        let forward: Vec<_> = Forward::new(text)
            .map(|l| (l.number, l.display()))
            .collect();
        assert_eq!(
            forward,
            [(1, "one"), (2, "two"), (3, ""), (4, "four"), (5, "")]
        );
        let backward: Vec<_> = Backward::new(text, 5).map(|l| (l.number, l.text)).collect();
        assert_eq!(
            backward,
            [(5, ""), (4, "four"), (3, ""), (2, "two"), (1, "one\r")]
        );
        assert_eq!(Forward::new("").count(), 1);
        assert_eq!(Backward::new("", 1).count(), 1);
    }

    #[test]
    fn strips_carriage_returns_at_line_ends_only() {
        assert_eq!(without_carriage_returns("a\r\nb\rc\r\n\r"), "a\nb\rc\n");
        assert_eq!(without_carriage_returns("plain"), "plain");
    }
}
