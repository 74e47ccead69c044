//! Line offsets of a text split on `'\n'` (JavaScript `text.split('\n')`).

use std::borrow::Cow;

use crate::sampled_lines::{check_and_sample, Sampled};

/// The lines of a text: line `i` spans from `start(i)` to `end(i)`
/// (exclusive, not including the `'\n'`).
#[derive(Debug)]
pub struct LineIndex<'t> {
    text: &'t str,
    starts: Starts<'t>,
}

/// How a [`LineIndex`] finds its lines.
#[derive(Debug)]
enum Starts<'t> {
    /// The start of every line: computed here, or borrowed from a
    /// [`crate::prepared::PreparedText`].
    Every(Cow<'t, [usize]>),
    /// Block starts only, for one search (see [`crate::sampled_lines`]).
    Sampled(Sampled),
}

impl<'t> LineIndex<'t> {
    /// Indexes `text`.
    pub fn new(text: &'t str) -> Self {
        Self {
            text,
            starts: Starts::Every(Cow::Owned(line_starts(text))),
        }
    }

    /// The index of `text` whose line starts were computed before by
    /// [`line_starts`] on the same text.
    pub(crate) fn with_starts(text: &'t str, starts: &'t [usize]) -> Self {
        Self {
            text,
            starts: Starts::Every(Cow::Borrowed(starts)),
        }
    }

    /// `bytes` as text with its lines sampled for one search, when they
    /// are valid UTF-8 (see [`crate::sampled_lines`]): checked and sampled
    /// in one pass, without the start of every line. It answers as
    /// [`LineIndex::new`] does, each lookup scanning at most a block and the
    /// line it lands on.
    pub(crate) fn sampled(bytes: &'t [u8]) -> Option<Self> {
        let (text, sampled) = check_and_sample(bytes)?;
        Some(Self {
            text,
            starts: Starts::Sampled(sampled),
        })
    }

    /// [`LineIndex::sampled`] cut into `parts` parts and blocks of `block`
    /// bytes (small blocks make small texts span many).
    #[cfg(test)]
    pub(crate) fn sampled_split(bytes: &'t [u8], parts: usize, block: usize) -> Option<Self> {
        let (text, sampled) = crate::sampled_lines::check_and_sample_split(bytes, parts, block)?;
        Some(Self {
            text,
            starts: Starts::Sampled(sampled),
        })
    }

    /// The indexed text.
    pub fn text(&self) -> &'t str {
        self.text
    }

    /// Number of lines (`split('\n').length`, at least 1).
    pub fn count(&self) -> usize {
        match &self.starts {
            Starts::Every(starts) => starts.len(),
            Starts::Sampled(sampled) => sampled.count(),
        }
    }

    /// Byte offset where line `i` starts.
    pub fn start(&self, i: usize) -> usize {
        match &self.starts {
            Starts::Every(starts) => starts.get(i).copied().unwrap_or(self.text.len()),
            Starts::Sampled(sampled) => sampled.start(self.text.as_bytes(), i),
        }
    }

    /// Byte offset where line `i` ends (its `'\n'` or the end of text).
    pub fn end(&self, i: usize) -> usize {
        match &self.starts {
            Starts::Every(starts) => match starts.get(i + 1) {
                Some(&next) => next - 1,
                None => self.text.len(),
            },
            Starts::Sampled(sampled) => sampled.end(self.text.as_bytes(), i),
        }
    }

    /// The text of line `i`.
    pub fn line(&self, i: usize) -> &'t str {
        self.text.get(self.start(i)..self.end(i)).unwrap_or("")
    }

    /// The line containing byte `offset` (offsets at a `'\n'` belong to the
    /// line it ends).
    pub fn line_of(&self, offset: usize) -> usize {
        match &self.starts {
            Starts::Every(starts) => starts.partition_point(|&s| s <= offset).saturating_sub(1),
            Starts::Sampled(sampled) => sampled.line_of(self.text.as_bytes(), offset),
        }
    }

    /// [`LineIndex::line_of`] for an `offset` known to lie in line `from`
    /// or after it: a galloping search forward from `from`, so that finding
    /// the line of each match, match after match, costs in proportion to the
    /// logarithm of the distance between them instead of a search over the
    /// whole index every time.
    pub fn line_of_from(&self, offset: usize, from: usize) -> usize {
        let starts = match &self.starts {
            Starts::Every(starts) => &starts[..],
            Starts::Sampled(_) => return self.line_of(offset),
        };
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

/// The offsets of the `'\n'` bytes of `part`.
fn newlines(part: &[u8]) -> memchr::Memchr<'_> {
    memchr::memchr_iter(b'\n', part)
}

/// Texts from this size on are indexed by several threads.
const PARALLEL_FROM: usize = 16 << 20;

/// Start offsets of every line of `text`: 0, then one past each `'\n'`.
/// Large texts are split between the cores (at any byte: only `'\n'`
/// bytes are looked for), each part indexed on its own thread.
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(4);
    line_starts_split(text.as_bytes(), if text.len() >= PARALLEL_FROM { threads } else { 1 })
}

/// [`line_starts`] of `bytes` split into `parts` parts: the newlines of
/// each part are counted, then written straight into their own stretch of
/// the one index (no part is copied, nothing is allocated twice).
fn line_starts_split(bytes: &[u8], parts: usize) -> Vec<usize> {
    if parts <= 1 || bytes.len() < parts {
        let mut starts = Vec::with_capacity(bytes.len() / 64 + 1);
        starts.push(0);
        starts.extend(newlines(bytes).map(|i| i + 1));
        return starts;
    }
    let size = bytes.len().div_ceil(parts);
    let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
    let counts: Vec<usize> = std::thread::scope(|scope| {
        let counting: Vec<_> = chunks.iter().map(|&part| scope.spawn(move || newlines(part).count())).collect();
        counting.into_iter().zip(&chunks).map(|(h, part)| h.join().unwrap_or_else(|_| newlines(part).count())).collect()
    });
    let mut starts = vec![0; 1 + counts.iter().sum::<usize>()];
    let filled = std::thread::scope(|scope| {
        let mut rest = &mut starts[1..];
        let mut filling = Vec::with_capacity(chunks.len());
        for (i, (&part, &count)) in chunks.iter().zip(&counts).enumerate() {
            let (mine, others) = std::mem::take(&mut rest).split_at_mut(count);
            rest = others;
            filling.push(scope.spawn(move || {
                let from = i * size;
                let mut found = newlines(part);
                let mut written = 0;
                for (slot, at) in mine.iter_mut().zip(&mut found) {
                    *slot = from + at + 1;
                    written += 1;
                }
                written == count && found.next().is_none()
            }));
        }
        filling.into_iter().all(|h| h.join().unwrap_or(false))
    });
    if filled {
        starts
    } else {
        // Only if the bytes changed between the two passes (a file rewritten
        // in place under a map): index what is there now, in one pass.
        line_starts_split(bytes, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::search::{run_retrieval_query, run_retrieval_query_indexed, LineRange, RetrievalQuery};

    /// Texts of many short and a few long lines, with multi-byte characters.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec!["a", "b", "\n", "\n", "\n\n", "é", "😀", "ab\n", "\r\n", "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"]);
        prop::collection::vec(piece, 0..120).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// The sampled index answers every lookup, in any order, as the
        /// index of every line does.
        #[test]
        fn sampled_lines_are_the_same_lines(
            text in text(),
            parts in 1usize..5,
            block in 1usize..40,
            ops in prop::collection::vec((0u8..5, 0usize..400, 0usize..400), 0..80),
        ) {
            let every = LineIndex::new(&text);
            let sampled = LineIndex::sampled_split(text.as_bytes(), parts, block).expect("valid UTF-8");
            prop_assert_eq!(sampled.text(), text.as_str());
            prop_assert_eq!(sampled.count(), every.count());
            let lines = every.count() + 2;
            let offsets = text.len() + 2;
            for (op, a, b) in ops {
                let (i, offset, from) = (a % lines, a % offsets, b % lines);
                match op {
                    0 => prop_assert_eq!(sampled.start(i), every.start(i), "start({})", i),
                    1 => prop_assert_eq!(sampled.end(i), every.end(i), "end({})", i),
                    2 => prop_assert_eq!(sampled.line(i), every.line(i), "line({})", i),
                    3 => prop_assert_eq!(sampled.line_of(offset), every.line_of(offset), "line_of({})", offset),
                    _ => {
                        // `from` must not lie past the line of `offset`.
                        let from = from.min(every.line_of(offset));
                        prop_assert_eq!(sampled.line_of_from(offset, from), every.line_of(offset), "line_of_from({}, {})", offset, from);
                    }
                }
            }
            // In order, as a search and its output visit them.
            for i in 0..every.count() {
                prop_assert_eq!(sampled.line(i), every.line(i));
                prop_assert_eq!(sampled.end(i), every.end(i));
            }
        }

        /// A search over the sampled index answers as one over the decoded,
        /// fully indexed text.
        #[test]
        fn sampled_searches_answer_alike(
            text in text(),
            parts in 1usize..4,
            block in 1usize..40,
            pattern in prop::option::of(prop::sample::select(vec!["a", "b.*a", "^$", "é", "(?=a)b", "\\r$", "q{3}", "😀", "^b", "a\\n"])),
            range in prop::option::of((1u64..40, 1u64..40)),
            context in prop::option::of(0u64..4),
            max_chars in 5usize..3000,
        ) {
            let sampled = LineIndex::sampled_split(text.as_bytes(), parts, block).expect("valid UTF-8");
            let query = RetrievalQuery {
                pattern,
                line_range: range.map(|(start, end)| LineRange { start, end }),
                context_lines: context,
            };
            prop_assert_eq!(
                run_retrieval_query_indexed(&sampled, &query, max_chars),
                run_retrieval_query(&text, &query, max_chars)
            );
        }
    }

    #[test]
    fn split_indexing_finds_the_same_lines() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..300 {
            let len = (next() % 400) as usize;
            let text: Vec<u8> = (0..len).map(|_| if next() % 5 == 0 { b'\n' } else { b'a' + (next() % 3) as u8 }).collect();
            let whole = line_starts_split(&text, 1);
            for parts in [2, 3, 4, 7, 64, 1000] {
                assert_eq!(line_starts_split(&text, parts), whole, "case {case}, {parts} parts");
            }
        }
        let big = "line\n".repeat((PARALLEL_FROM / 5) + 3);
        assert_eq!(line_starts(&big), line_starts_split(big.as_bytes(), 1));
    }

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
