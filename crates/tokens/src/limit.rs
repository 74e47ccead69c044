//! Work bounded by a token budget: counting up to a limit, and the longest
//! prefix or suffix of a text within a number of tokens. Each costs about as
//! much as encoding the budget's worth of text, however long the text is.
//!
//! The text is consumed in chunks ending at [split points](crate::boundary),
//! so the counts of the chunks add up to the count of the text they cover.
//! Chunk sizes follow the token budget still open and the bytes per token
//! seen so far, starting from one byte per token: no text has fewer, so the
//! first chunk never holds many more tokens than the budget.

use crate::boundary::{ceil_char_boundary, floor_char_boundary, is_split_point, next_split_point, prev_split_point};
use crate::count::PARALLEL_MIN_BYTES;
use crate::tokenizer::Tokenizer;

/// Bytes per token assumed before anything has been counted (a token has
/// at least one byte).
const INITIAL_BYTES_PER_TOKEN: usize = 1;

/// Smallest chunk worth an encoder call.
const MIN_STEP_BYTES: usize = 256;

/// How far a cut candidate is searched back (or forward) for a split point
/// from which to re-encode it; beyond that, the whole candidate is re-encoded.
const RESCAN_BYTES: usize = 8 * 1024;

/// The outcome of [`Tokenizer::count_up_to`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    /// The exact count when `exceeded` is false; otherwise a lower bound of
    /// the exact count that is itself above the limit.
    pub value: usize,
    /// Whether the text has more tokens than the limit.
    pub exceeded: bool,
}

/// The next chunk's size in bytes: enough for `tokens` more tokens at the
/// rate observed over `bytes_done` bytes and `tokens_done` tokens (the
/// product saturates, which only makes the chunk the rest of the text).
fn step_bytes(tokens: usize, bytes_done: usize, tokens_done: usize) -> usize {
    let bytes = tokens
        .saturating_mul(bytes_done)
        .checked_div(tokens_done)
        .unwrap_or_else(|| tokens.saturating_mul(INITIAL_BYTES_PER_TOKEN));
    bytes.max(MIN_STEP_BYTES)
}

/// A stretch of text consumed by [`Tokenizer::advance`] or [`Tokenizer::retreat`].
enum Stretch {
    /// The stretch ends (or starts) at a split point or an end of the text
    /// and holds `count` tokens, within the budget.
    Within { bound: usize, count: usize },
    /// The stretch holds more tokens than the budget; these are its tokens.
    Crossing { bound: usize, tokens: Vec<u32> },
}

impl Tokenizer {
    /// Counts the tokens of `text` until the count passes `limit`.
    ///
    /// When `exceeded` is false, `value` is the exact count. When it is
    /// true, `limit < value <= exact count`: `value` counts the chunks
    /// encoded so far, or is the bound `ceil(bytes / max_token_bytes)` when
    /// the text left over is too long to fit in the budget at all.
    ///
    /// That bound also caps the work: at most `limit * max_token_bytes`
    /// bytes are ever encoded, which is reached only on text without split
    /// points (where the count cannot be cut short); elsewhere the cost is
    /// that of encoding a little over `limit` tokens.
    pub fn count_up_to(&self, text: &str, limit: usize) -> Count {
        let mut pos = 0;
        let mut total = 0;
        while pos < text.len() {
            let floor = total + (text.len() - pos).div_ceil(self.max_token_bytes());
            if floor > limit {
                return Count { value: floor, exceeded: true };
            }
            let step = step_bytes((limit - total).saturating_add(1), pos, total);
            let end = next_split_point(text, pos.saturating_add(step), usize::MAX).unwrap_or(text.len());
            total += self.count_whole(&text[pos..end]);
            pos = end;
            if total > limit {
                return Count { value: total, exceeded: true };
            }
        }
        Count { value: total, exceeded: false }
    }

    /// The byte length of the longest prefix of `text`, ending on a character
    /// boundary, whose count is at most `max_tokens`.
    ///
    /// Whole chunks are taken while they fit; in the chunk that does not,
    /// the cut goes after as many of its tokens as the budget allows (moved
    /// back to a character boundary), and the candidate prefix is re-encoded
    /// and moved back token by token until it fits: re-encoding a cut
    /// text can take more tokens than the tokens it was cut after.
    pub fn prefix_within(&self, text: &str, max_tokens: usize) -> usize {
        let mut pos = 0;
        let mut total = 0;
        while pos < text.len() {
            let budget = max_tokens - total;
            match self.advance(text, pos, budget, total) {
                Stretch::Within { bound, count } => {
                    total += count;
                    pos = bound;
                }
                Stretch::Crossing { bound, tokens } => {
                    return pos + self.fit_prefix(&text[pos..bound], &tokens, budget);
                }
            }
        }
        text.len()
    }

    /// The byte offset where the longest suffix of `text` whose count is at
    /// most `max_tokens` starts (a character boundary; `text.len()` when no
    /// character fits).
    ///
    /// Works backwards from the end as [`prefix_within`](Self::prefix_within)
    /// works forwards.
    pub fn suffix_within(&self, text: &str, max_tokens: usize) -> usize {
        let mut end = text.len();
        let mut total = 0;
        while end > 0 {
            let budget = max_tokens - total;
            match self.retreat(text, end, budget, total) {
                Stretch::Within { bound, count } => {
                    total += count;
                    end = bound;
                }
                Stretch::Crossing { bound, tokens } => {
                    return bound + self.fit_suffix(&text[bound..end], &tokens, budget);
                }
            }
        }
        0
    }

    /// Consumes text from `pos` (a split point or 0) onwards: up to a split
    /// point near the size the budget suggests, or, where none is near, in
    /// windows from `pos` that double until they cross the budget or reach
    /// the end of the text.
    fn advance(&self, text: &str, pos: usize, budget: usize, tokens_done: usize) -> Stretch {
        let step = step_bytes(budget.saturating_add(1), pos, tokens_done);
        let target = pos.saturating_add(step);
        let hard = if target < text.len() {
            next_split_point(text, target, target.saturating_add(step))
        } else {
            Some(text.len())
        };
        if let Some(bound) = hard {
            return self.measure(&text[pos..bound], bound, budget);
        }
        let mut window = step.saturating_mul(2);
        loop {
            let bound = ceil_char_boundary(text, pos.saturating_add(window));
            let tokens = self.encode(&text[pos..bound]);
            if tokens.len() > budget {
                return Stretch::Crossing { bound, tokens };
            }
            if bound == text.len() {
                return Stretch::Within { bound, count: tokens.len() };
            }
            window = window.saturating_mul(2);
        }
    }

    /// Consumes text before `end` (a split point or the end of the text)
    /// backwards, as [`advance`](Self::advance) does forwards.
    fn retreat(&self, text: &str, end: usize, budget: usize, tokens_done: usize) -> Stretch {
        let step = step_bytes(budget.saturating_add(1), text.len() - end, tokens_done);
        let target = end.saturating_sub(step);
        let hard = if target > 0 { prev_split_point(text, target, target.saturating_sub(step)) } else { Some(0) };
        if let Some(bound) = hard {
            return self.measure(&text[bound..end], bound, budget);
        }
        let mut window = step.saturating_mul(2);
        loop {
            let bound = floor_char_boundary(text, end.saturating_sub(window));
            let tokens = self.encode(&text[bound..end]);
            if tokens.len() > budget {
                return Stretch::Crossing { bound, tokens };
            }
            if bound == 0 {
                return Stretch::Within { bound, count: tokens.len() };
            }
            window = window.saturating_mul(2);
        }
    }

    /// Counts a stretch cut at split points, keeping its tokens if it crosses
    /// the budget. Stretches of [`PARALLEL_MIN_BYTES`] or more are counted
    /// first (in parallel, without a token vector) and encoded only if needed.
    fn measure(&self, stretch: &str, bound: usize, budget: usize) -> Stretch {
        if stretch.len() >= PARALLEL_MIN_BYTES {
            let count = self.count(stretch);
            if count <= budget {
                return Stretch::Within { bound, count };
            }
        }
        let tokens = self.encode(stretch);
        if tokens.len() <= budget {
            Stretch::Within { bound, count: tokens.len() }
        } else {
            Stretch::Crossing { bound, tokens }
        }
    }

    /// The longest prefix of `chunk` (whose tokens are `tokens`, more than
    /// `budget` of them) that encodes to at most `budget` tokens, cut after
    /// a token and on a character boundary.
    fn fit_prefix(&self, chunk: &str, tokens: &[u32], budget: usize) -> usize {
        let offsets = self.offsets(tokens);
        let mut keep = budget.min(tokens.len());
        loop {
            let cut = floor_char_boundary(chunk, offsets[keep]);
            let used = self.count_head(chunk, &offsets, cut);
            if used <= budget || keep == 0 {
                return cut;
            }
            keep -= (used - budget).clamp(1, keep);
        }
    }

    /// The start of the longest suffix of `chunk` (whose tokens are
    /// `tokens`, more than `budget` of them) that encodes to at most
    /// `budget` tokens, cut before a token and on a character boundary.
    fn fit_suffix(&self, chunk: &str, tokens: &[u32], budget: usize) -> usize {
        let offsets = self.offsets(tokens);
        let mut keep = budget.min(tokens.len());
        loop {
            let cut = ceil_char_boundary(chunk, offsets[tokens.len() - keep]);
            let used = self.count_tail(chunk, &offsets, cut);
            if used <= budget || keep == 0 {
                return cut;
            }
            keep -= (used - budget).clamp(1, keep);
        }
    }

    /// The byte offset of each token of a text, and the text's length last.
    fn offsets(&self, tokens: &[u32]) -> Vec<usize> {
        let mut offsets = Vec::with_capacity(tokens.len() + 1);
        let mut at = 0;
        offsets.push(at);
        for &rank in tokens {
            at += self.bytes_of(&[rank]);
            offsets.push(at);
        }
        offsets
    }

    /// `count(&chunk[..cut])`, given the token offsets of `chunk`: the
    /// tokens before the last split point at or before `cut` are those of
    /// the chunk, so only the rest is encoded.
    fn count_head(&self, chunk: &str, offsets: &[usize], cut: usize) -> usize {
        let split = prev_split_point(chunk, cut, cut.saturating_sub(RESCAN_BYTES));
        match split.map(|q| (q, offsets.binary_search(&q))) {
            Some((q, Ok(k))) => k + self.count_whole(&chunk[q..cut]),
            _ => self.count_whole(&chunk[..cut]),
        }
    }

    /// `count(&chunk[cut..])`, given the token offsets of `chunk`, encoding
    /// only up to the first split point at or after `cut`.
    fn count_tail(&self, chunk: &str, offsets: &[usize], cut: usize) -> usize {
        let split = if cut == chunk.len() {
            None
        } else if is_split_point(chunk, cut) {
            Some(cut)
        } else {
            next_split_point(chunk, cut, cut.saturating_add(RESCAN_BYTES))
        };
        match split.map(|q| (q, offsets.binary_search(&q))) {
            Some((q, Ok(k))) => self.count_whole(&chunk[cut..q]) + (offsets.len() - 1 - k),
            _ => self.count_whole(&chunk[cut..]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{tokenizer, Encoding};

    fn o200k() -> &'static Tokenizer {
        tokenizer(Encoding::O200kBase).expect("loads")
    }

    #[test]
    fn count_up_to_is_exact_below_the_limit() {
        let t = o200k();
        let text = "The quick brown fox jumps over the lazy dog.\n".repeat(40);
        let exact = t.count(&text);
        assert_eq!(t.count_up_to(&text, exact), Count { value: exact, exceeded: false });
        assert_eq!(t.count_up_to(&text, exact + 100), Count { value: exact, exceeded: false });
        let over = t.count_up_to(&text, exact - 1);
        assert!(over.exceeded && over.value == exact);
        assert_eq!(t.count_up_to("", 0), Count { value: 0, exceeded: false });
        assert!(t.count_up_to("a", 0).exceeded);
    }

    #[test]
    fn count_up_to_stops_early_on_long_texts() {
        let t = o200k();
        let text = "word ".repeat(400_000);
        let lower_bound = text.len().div_ceil(t.max_token_bytes());
        let outcome = t.count_up_to(&text, 1_000);
        assert_eq!(outcome, Count { value: lower_bound, exceeded: true });
        let limit = lower_bound + 10;
        let outcome = t.count_up_to(&text, limit);
        assert!(outcome.exceeded && outcome.value > limit && outcome.value < limit + limit / 2, "{outcome:?}");
    }

    #[test]
    fn prefix_and_suffix_of_short_texts() {
        let t = o200k();
        assert_eq!(t.prefix_within("", 5), 0);
        assert_eq!(t.suffix_within("", 5), 0);
        assert_eq!(t.prefix_within("hello world", 0), 0);
        assert_eq!(t.suffix_within("hello world", 0), 11);
        assert_eq!(t.prefix_within("hello world", 2), 11);
        assert_eq!(t.suffix_within("hello world", 2), 0);
        assert_eq!(t.prefix_within("hello world", usize::MAX), 11);
        assert_eq!(t.suffix_within("hello world", usize::MAX), 0);
        assert_eq!(t.prefix_within("hello world", 1), 5);
        assert_eq!(t.suffix_within("hello world", 1), 5);
    }

    #[test]
    fn prefix_and_suffix_without_split_points() {
        let t = o200k();
        let text = "😀!🎉?".repeat(20_000);
        assert_eq!(t.count_up_to("ab", usize::MAX), Count { value: 1, exceeded: false });
        let n = t.prefix_within(&text, 500);
        let used = t.count(&text[..n]);
        assert!((496..=500).contains(&used), "{used}");
        let s = t.suffix_within(&text, 500);
        let used = t.count(&text[s..]);
        assert!((496..=500).contains(&used), "{used}");
    }
}
