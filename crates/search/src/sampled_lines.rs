//! A line index for one search of a large text: instead of the start of
//! every line, it records where each block of about [`BLOCK`] bytes starts
//! and how many `'\n'` precede it. It is built in the same pass, on every
//! core, as the UTF-8 check of the text, and writes one entry per block
//! instead of one per line; lines are then located by counting `'\n'`
//! within one block, or on from the last line located (a search and its
//! output visit lines mostly in increasing order).
//!
//! Every lookup scans at most one block plus the line it lands on, so the
//! cost of a search stays proportional to what it visits.

use std::cell::Cell;

use memchr::memchr_iter;

/// Bytes per block (a block ends at the first character boundary from
/// there on).
pub(crate) const BLOCK: usize = 16 << 10;

/// Texts from this size on are checked and sampled by several threads.
const PARALLEL_FROM: usize = 4 << 20;

/// The last line located: it starts at `start`, and `newlines` `'\n'`
/// precede it (its index); `end` is where it ends, once known.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    newlines: usize,
    start: usize,
    end: Option<usize>,
}

/// Block starts and the `'\n'` count before each (see the module doc).
#[derive(Debug)]
pub(crate) struct Sampled {
    /// Bytes per block ([`BLOCK`]; smaller in tests).
    block: usize,
    /// Where each block starts, ascending; the first is 0.
    block_starts: Vec<usize>,
    /// `'\n'` bytes before each block.
    newlines_before: Vec<usize>,
    /// `'\n'` bytes in the whole text.
    newlines: usize,
    cursor: Cell<Cursor>,
}

/// The number of `'\n'` bytes in `bytes`.
fn count_newlines(bytes: &[u8]) -> usize {
    scanned(bytes.len());
    memchr_iter(b'\n', bytes).count()
}

#[cfg(test)]
thread_local! {
    /// Bytes looked at by lookups on this thread (see the tests).
    static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `bytes` looked at (in tests only).
#[inline]
fn scanned(#[allow(unused_variables)] bytes: usize) {
    #[cfg(test)]
    SCANNED.with(|s| s.set(s.get() + bytes));
}

/// Whether `b` continues a UTF-8 sequence (`10xxxxxx`).
fn continues(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The first offset from `at` (up to `limit`) that does not continue a
/// UTF-8 sequence. In valid UTF-8 that is a character boundary; cutting
/// any text at such offsets leaves pieces that are all valid exactly when
/// the whole text is.
fn boundary_from(bytes: &[u8], mut at: usize, limit: usize) -> usize {
    while at < limit && bytes.get(at).is_some_and(|&b| continues(b)) {
        at += 1;
    }
    at.min(limit)
}

/// Checks `bytes[from..to]` (cut at character boundaries) block by block:
/// each block's start and `'\n'` count, or `None` as soon as one is not
/// valid UTF-8.
fn scan_part(bytes: &[u8], from: usize, to: usize, block_size: usize) -> Option<(Vec<usize>, Vec<usize>)> {
    let blocks = (to - from) / block_size + 1;
    let (mut starts, mut counts) = (Vec::with_capacity(blocks), Vec::with_capacity(blocks));
    let mut pos = from;
    while pos < to {
        let end = boundary_from(bytes, pos.saturating_add(block_size).min(to), to);
        let block = bytes.get(pos..end)?;
        simdutf8::basic::from_utf8(block).ok()?;
        starts.push(pos);
        counts.push(count_newlines(block));
        pos = end;
    }
    Some((starts, counts))
}

/// Checks that `bytes` is valid UTF-8 and samples its lines, in one pass
/// split between the cores for large texts. `None` when it is not valid
/// UTF-8 (decode it and index it whole instead).
pub(crate) fn check_and_sample(bytes: &[u8]) -> Option<(&str, Sampled)> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(4);
    check_and_sample_split(bytes, if bytes.len() >= PARALLEL_FROM { threads } else { 1 }, BLOCK)
}

/// [`check_and_sample`] with `bytes` cut into `parts` parts, each scanned
/// on its own thread, in blocks of `block` bytes.
pub(crate) fn check_and_sample_split(bytes: &[u8], parts: usize, block: usize) -> Option<(&str, Sampled)> {
    let block = block.max(1);
    let parts = parts.clamp(1, bytes.len().max(1));
    let size = bytes.len().div_ceil(parts);
    let mut cuts = vec![0];
    for i in 1..parts {
        let cut = boundary_from(bytes, (i * size).max(*cuts.last()?), bytes.len());
        cuts.push(cut);
    }
    cuts.push(bytes.len());
    let scanned: Vec<Option<(Vec<usize>, Vec<usize>)>> = if parts == 1 {
        vec![scan_part(bytes, 0, bytes.len(), block)]
    } else {
        std::thread::scope(|scope| {
            let scanning: Vec<_> = cuts
                .windows(2)
                .map(|w| {
                    let (from, to) = (w[0], w[1]);
                    let thread = std::thread::Builder::new().spawn_scoped(scope, move || scan_part(bytes, from, to, block));
                    (from, to, thread.ok())
                })
                .collect();
            scanning
                .into_iter()
                .map(|(from, to, thread)| match thread {
                    // A thread that could not finish counts as a failed
                    // check: the caller then takes the slow, sure path.
                    Some(thread) => thread.join().ok().flatten(),
                    // No thread to be had: this one scans the part.
                    None => scan_part(bytes, from, to, block),
                })
                .collect()
        })
    };
    let mut block_starts = Vec::new();
    let mut newlines_before = Vec::new();
    let mut newlines = 0usize;
    for part in scanned {
        let (starts, counts) = part?;
        block_starts.extend(starts);
        for count in counts {
            newlines_before.push(newlines);
            newlines += count;
        }
    }
    if block_starts.is_empty() {
        block_starts.push(0);
        newlines_before.push(0);
    }
    // SAFETY: every byte of `bytes` lies in exactly one block (the parts and
    // their blocks tile it), each block was found valid UTF-8 by `simdutf8`,
    // and each cut is at a byte that does not continue a sequence, so the
    // concatenation, `bytes`, is valid UTF-8 too.
    #[allow(unsafe_code)]
    let text = unsafe { std::str::from_utf8_unchecked(bytes) };
    let cursor = Cell::new(Cursor { newlines: 0, start: 0, end: None });
    Some((text, Sampled { block, block_starts, newlines_before, newlines, cursor }))
}

impl Sampled {
    /// Number of lines (newlines + 1).
    pub(crate) fn count(&self) -> usize {
        self.newlines + 1
    }

    /// The block holding byte `offset`, with the `'\n'` count before it.
    fn block_of_offset(&self, offset: usize) -> (usize, usize) {
        let k = self.block_starts.partition_point(|&s| s <= offset).saturating_sub(1);
        (self.newlines_before.get(k).copied().unwrap_or(0), self.block_starts.get(k).copied().unwrap_or(0))
    }

    /// The line holding byte `offset` (see `LineIndex::line_of`).
    pub(crate) fn line_of(&self, text: &[u8], offset: usize) -> usize {
        let offset = offset.min(text.len());
        let c = self.cursor.get();
        let (before, base) = if c.start <= offset && offset - c.start <= self.block {
            (c.newlines, c.start)
        } else {
            self.block_of_offset(offset)
        };
        before + count_newlines(text.get(base..offset).unwrap_or_default())
    }

    /// Where line `i` starts (the text's length past the last line).
    pub(crate) fn start(&self, text: &[u8], i: usize) -> usize {
        if i > self.newlines {
            return text.len();
        }
        let c = self.cursor.get();
        if c.newlines == i {
            return c.start;
        }
        if i == 0 {
            self.cursor.set(Cursor { newlines: 0, start: 0, end: None });
            return 0;
        }
        // The block holding the `i`-th '\n' (counting from 1).
        let k = self.newlines_before.partition_point(|&n| n < i).saturating_sub(1);
        let block_start = self.block_starts.get(k).copied().unwrap_or(0);
        let (before, base) = if c.newlines < i && c.start >= block_start {
            (c.newlines, c.start)
        } else {
            (self.newlines_before.get(k).copied().unwrap_or(0), block_start)
        };
        let rest = text.get(base..).unwrap_or_default();
        let start = match memchr_iter(b'\n', rest).nth(i - before - 1) {
            Some(at) => {
                scanned(at + 1);
                base + at + 1
            }
            // Only if the bytes changed since they were sampled (a file
            // rewritten in place under a map).
            None => text.len(),
        };
        self.cursor.set(Cursor { newlines: i, start, end: None });
        start
    }

    /// Where line `i` ends (its `'\n'`, or the end of the text).
    pub(crate) fn end(&self, text: &[u8], i: usize) -> usize {
        if i >= self.newlines {
            return text.len();
        }
        let start = self.start(text, i);
        let mut c = self.cursor.get();
        if let Some(end) = c.end {
            return end;
        }
        let end = memchr::memchr(b'\n', text.get(start..).unwrap_or_default()).map_or(text.len(), |at| start + at);
        scanned(end - start);
        c.end = Some(end);
        self.cursor.set(c);
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::LineIndex;
    use crate::search::{run_retrieval_query_indexed, LineRange, RetrievalQuery};

    /// Runs `query` over `text` sampled in blocks of [`BLOCK`] bytes and
    /// returns how many bytes its lookups scanned.
    fn bytes_scanned(text: &str, query: &RetrievalQuery<'_>) -> usize {
        let lines = LineIndex::sampled_split(text.as_bytes(), 1, BLOCK).expect("valid UTF-8");
        SCANNED.with(|s| s.set(0));
        run_retrieval_query_indexed(&lines, query, usize::MAX).expect("searched");
        SCANNED.with(std::cell::Cell::get)
    }

    /// Whatever a search visits, its lookups scan each byte a few times
    /// at most, plus at most a block or two per match: never a scan from
    /// the start for each line.
    #[test]
    fn lookups_scan_in_proportion_to_what_is_visited() {
        let dense: String = (0..200_000).map(|i| format!("{}{}\n", "x".repeat(i % 13), if i % 2 == 0 { "hit" } else { "" })).collect();
        let sparse: String = (0..200_000).map(|i| format!("{}{}\n", "y".repeat(i % 97), if i % 5_000 == 0 { "hit" } else { "" })).collect();
        let long = format!("{}hit{}\n{}", "z".repeat(3_000_000), "z".repeat(3_000_000), "short\n".repeat(1_000));
        for (name, text, matches) in [("dense", &dense, 100_000), ("sparse", &sparse, 40), ("long", &long, 1)] {
            for query in [
                RetrievalQuery { pattern: Some("hit"), line_range: None, context_lines: Some(2) },
                RetrievalQuery { pattern: Some("h.t$"), line_range: None, context_lines: Some(0) },
                RetrievalQuery { pattern: Some("(?<=i)t"), line_range: Some(LineRange { start: 1, end: 1 << 40 }), context_lines: Some(1) },
                RetrievalQuery { pattern: None, line_range: Some(LineRange { start: 2, end: 1 << 40 }), context_lines: None },
            ] {
                let scanned = bytes_scanned(text, &query);
                let bound = 6 * text.len() + 3 * BLOCK * matches;
                assert!(scanned <= bound, "{name} {query:?}: scanned {scanned} bytes of {} (bound {bound})", text.len());
            }
        }
    }

    /// Texts large enough to be checked on several threads answer as the
    /// decoded, fully indexed text, valid or not, a byte order mark or not.
    #[test]
    fn large_texts_answer_as_the_decoded_text() {
        use crate::decode::decode_text;
        use crate::search::run_retrieval_query;
        use crate::stored::search_uncached;

        let line = |i: usize| format!("{i} é {}{}\n", "😀".repeat(i % 3), if i.is_multiple_of(9_999) { "ERROR" } else { "ok" });
        let valid: String = (0..600_000).map(line).collect();
        assert!(valid.len() > 2 * PARALLEL_FROM);
        let mut cases = vec![valid.clone().into_bytes(), [&b"\xEF\xBB\xBF"[..], valid.as_bytes()].concat()];
        for at in [1, valid.len() / 2, valid.len() - 2] {
            let mut bad = valid.clone().into_bytes();
            bad[at] = 0xC0;
            cases.push(bad);
        }
        let queries = [
            RetrievalQuery { pattern: Some("ERROR"), line_range: None, context_lines: Some(1) },
            RetrievalQuery { pattern: Some("^1 "), line_range: Some(LineRange { start: 3, end: 200_000 }), context_lines: Some(0) },
            RetrievalQuery { pattern: None, line_range: Some(LineRange { start: 199_990, end: 200_010 }), context_lines: None },
        ];
        for (n, content) in cases.iter().enumerate() {
            for query in &queries {
                let found = search_uncached(content, "text/plain".into(), query, 100_000).result.expect("text");
                assert_eq!(found, run_retrieval_query(&decode_text(content), query, 100_000), "case {n} {query:?}");
            }
        }
    }

    #[test]
    fn cuts_only_where_no_sequence_continues() {
        let text = "aé😀\nb".as_bytes();
        for at in 0..=text.len() {
            let cut = boundary_from(text, at, text.len());
            assert!(std::str::from_utf8(&text[..cut]).is_ok(), "{at} -> {cut}");
        }
    }

    #[test]
    fn refuses_invalid_utf8_in_any_part() {
        let mut bytes = "line\n".repeat(20_000).into_bytes();
        assert!(check_and_sample_split(&bytes, 3, BLOCK).is_some());
        for at in [0, 1, 50_000, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] = 0xFF;
            for parts in [1, 2, 3, 7] {
                assert!(check_and_sample_split(&bad, parts, BLOCK).is_none(), "0xFF at {at}, {parts} parts");
            }
        }
        // A sequence cut by a part or block boundary is still whole.
        bytes.splice(BLOCK - 1..BLOCK - 1, "😀".bytes());
        for parts in [1, 2, 5] {
            assert!(check_and_sample_split(&bytes, parts, BLOCK).is_some());
        }
    }
}
