//! A fast estimate of the count of very large texts, from samples.

use crate::boundary::{ceil_char_boundary, next_split_point};
use crate::tokenizer::Tokenizer;

/// Number of windows sampled.
const WINDOWS: usize = 8;

/// Size of each window in bytes (before its edges are moved to clean cuts).
const WINDOW_BYTES: usize = 8 * 1024;

/// Texts up to this size are counted exactly: sampling would save little.
pub const ESTIMATE_EXACT_BYTES: usize = 4 * WINDOWS * WINDOW_BYTES;

/// How far a window edge may move forwards to reach a clean cut.
const MAX_NUDGE: usize = 512;

/// The first clean cut at or after `at`: a split point, else the position
/// after an ASCII whitespace character, else a character boundary.
fn clean_cut(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    let until = at.saturating_add(MAX_NUDGE).min(text.len());
    if let Some(cut) = next_split_point(text, at, until) {
        return cut;
    }
    let bytes = text.as_bytes();
    match (at..until).find(|&i| bytes[i].is_ascii_whitespace()) {
        Some(i) => i + 1,
        None => ceil_char_boundary(text, at),
    }
}

impl Tokenizer {
    /// An estimate of `count(text)` at a fixed cost (about 64 KiB encoded).
    ///
    /// Texts of up to [`ESTIMATE_EXACT_BYTES`] are counted exactly. Longer
    /// texts are sampled: eight windows of 8 KiB, evenly spaced from the
    /// start to the end of the text, each with its edges moved forwards (by
    /// at most 512 bytes) to a split point, else to just after a whitespace
    /// character, else to a character boundary. The windows' tokens per
    /// byte, times the text's length, is the estimate (never below
    /// `ceil(len / max_token_bytes)`). It is close on texts whose kind does
    /// not change along their length (logs, prose, code, data); on texts
    /// mixing kinds in long stretches it is only as good as the samples.
    pub fn estimate(&self, text: &str) -> usize {
        let len = text.len();
        if len <= ESTIMATE_EXACT_BYTES {
            return self.count(text);
        }
        let stride = (len - WINDOW_BYTES) / (WINDOWS - 1);
        let (mut tokens, mut bytes) = (0usize, 0usize);
        for i in 0..WINDOWS {
            let start = clean_cut(text, stride * i);
            let end = clean_cut(text, stride * i + WINDOW_BYTES).max(start);
            tokens += self.count_whole(&text[start..end]);
            bytes += end - start;
        }
        let floor = len.div_ceil(self.max_token_bytes());
        if bytes == 0 {
            return floor;
        }
        let scaled = (tokens as f64 * len as f64 / bytes as f64).round() as usize;
        scaled.max(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{tokenizer, Encoding};

    #[test]
    fn clean_cuts() {
        assert_eq!(clean_cut("abc def", 1), 3);
        assert_eq!(clean_cut("!!! ???", 1), 4);
        assert_eq!(clean_cut("😀😀", 1), 4);
        assert_eq!(clean_cut("abc", 7), 3);
    }

    #[test]
    fn small_texts_are_counted_exactly() {
        let t = tokenizer(Encoding::Cl100kBase).expect("loads");
        let text = "exactly counted text, ".repeat(100);
        assert_eq!(t.estimate(&text), t.count(&text));
        assert_eq!(t.estimate(""), 0);
    }
}
