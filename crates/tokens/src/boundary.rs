//! Split points: byte offsets at which a text can be cut into parts that are
//! encoded independently, with exactly the tokens of the whole.
//!
//! # Why counts add up across a split point
//!
//! tiktoken encodes a text in two steps. A pre-tokenizer regex cuts the text
//! into *pieces* (`find_iter`, leftmost-first alternation with backtracking),
//! then each piece is byte-pair encoded on its own. So
//! `encode(a + b) == encode(a) ++ encode(b)` holds whenever the pieces of
//! `a + b` are the pieces of `a` followed by the pieces of `b`.
//!
//! The two patterns, with their alternatives named for the argument:
//!
//! ```text
//! o200k_base
//!   A1  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//!   A2  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//!   A3  \p{N}{1,3}
//!   A4   ?[^\s\p{L}\p{N}]+[\r\n/]*
//!   A5  \s*[\r\n]+
//!   A6  \s+(?!\S)
//!   A7  \s+
//! cl100k_base
//!   B1  '(?i:[sdmt]|ll|ve|re)
//!   B2  [^\r\n\p{L}\p{N}]?+\p{L}++
//!   B3  \p{N}{1,3}+
//!   B4   ?[^\s\p{L}\p{N}]++[\r\n]*+
//!   B5  \s++$
//!   B6  \s*[\r\n]
//!   B7  \s+(?!\S)
//!   B8  \s
//! ```
//!
//! Every character can start a match (letters: A1/A2, B2; numbers: A3, B3;
//! whitespace: A7, B8; anything else: A4, B4) and no alternative matches the
//! empty string, so the pieces tile the text. Neither pattern has a
//! look-behind, `^` or `\b`, so the matches found from an offset depend only
//! on the text from that offset on.
//!
//! Let `p` be an offset with `c1` the character before it and `c2` the one at
//! it. An attempt to match that starts before `p` can examine `c2` (by
//! consuming it, by a look-ahead, or by `$`) only after it has consumed `c1`.
//! If every alternative that can consume `c1` can neither consume `c2` nor
//! behave differently when `c2` is replaced by the end of the text, then:
//! no piece contains both `c1` and `c2` (so `p` is a piece boundary of the
//! whole), every attempt before `p` ends the same way in `text[..p]` as in
//! the whole (so the pieces before `p` are those of `text[..p]`), and the
//! matching from `p` on is that of `text[p..]`. Three rules satisfy this:
//!
//! 1. **Line start**: `c1` is `\n` and `c2` is a printable ASCII character
//!    other than `/`, or a [plain letter](is_plain_letter). Only A4/B4
//!    (in their trailing `[\r\n/]*` / `[\r\n]*+`) and the whitespace
//!    alternatives can consume `\n`; none of them can consume `c2`, and
//!    against `c2` they stop exactly as at the end of the text. The one
//!    end-sensitive construct is reached the same way: a whitespace run
//!    that ends in `\n` is taken whole by A5 (before A6/A7 are tried) in
//!    both texts; in cl100k it is taken whole by B5 `\s++$` in `text[..p]`
//!    and whole by B6 `\s*[\r\n]` (backing off to the final `\n`) in the
//!    whole text, so the piece is the same. A6, A7 and B7 are only tried
//!    where the run holds no line break, so never on a run reaching `c1`.
//! 2. **After a number**: `c1` is an ASCII digit and `c2` is an ASCII
//!    character that is not a digit. Only A3/B3 consume digits, and they
//!    consume nothing else; `\p{N}{1,3}` stops at `c2` as at the end.
//! 3. **After a word**: `c1` is a [plain letter](is_plain_letter) and `c2`
//!    is an ASCII character other than a letter and the apostrophe, or one
//!    of a few CJK and full-width punctuation marks. Only A1/A2 and B1/B2
//!    consume letters; after their first character they consume only
//!    letters, marks (`\p{M}`, o200k) and the apostrophe of a contraction,
//!    none of which `c2` is, and they contain no look-ahead or `$`.
//!
//! The rules only look at `c1` and `c2`, so a split point of a text is also
//! a split point of any substring that contains both characters. The
//! property tests check `encode(text) == encode(&text[..p]) ++
//! encode(&text[p..])` at every split point of random texts mixing scripts,
//! marks, emoji, digits, punctuation, CR/LF and whitespace runs of every
//! Unicode kind.

/// Letters for which `\p{L}` holds in every Unicode version and that are
/// neither marks nor whitespace: ASCII, Latin-1, basic Greek and Cyrillic,
/// Hebrew, Arabic, Devanagari and Thai consonants and vowels, kana, the CJK
/// unified ideographs of Unicode 1.1 and Hangul syllables.
pub fn is_plain_letter(c: char) -> bool {
    matches!(c,
        'A'..='Z'
        | 'a'..='z'
        | '\u{00C0}'..='\u{00D6}'
        | '\u{00D8}'..='\u{00F6}'
        | '\u{00F8}'..='\u{00FF}'
        | '\u{0391}'..='\u{03A1}'
        | '\u{03A3}'..='\u{03A9}'
        | '\u{03B1}'..='\u{03C9}'
        | '\u{0410}'..='\u{044F}'
        | '\u{05D0}'..='\u{05EA}'
        | '\u{0621}'..='\u{063A}'
        | '\u{0641}'..='\u{064A}'
        | '\u{0905}'..='\u{0939}'
        | '\u{0E01}'..='\u{0E30}'
        | '\u{3041}'..='\u{3096}'
        | '\u{30A1}'..='\u{30FA}'
        | '\u{4E00}'..='\u{9FA5}'
        | '\u{AC00}'..='\u{D7A3}')
}

/// CJK and full-width punctuation (categories `Po`, `Ps`, `Pe`) that ends a
/// word as ASCII punctuation does.
fn is_wide_punctuation(c: char) -> bool {
    matches!(
        c,
        '\u{3001}' // 、
            | '\u{3002}' // 。
            | '\u{300C}' // 「
            | '\u{300D}' // 」
            | '\u{FF01}' // ！
            | '\u{FF08}' // （
            | '\u{FF09}' // ）
            | '\u{FF0C}' // ，
            | '\u{FF1A}' // ：
            | '\u{FF1B}' // ；
            | '\u{FF1F}' // ？
    )
}

/// Whether the characters `c1` (before) and `c2` (after) make a split point.
fn splits_between(c1: char, c2: char) -> bool {
    if c1 == '\n' {
        (c2.is_ascii_graphic() && c2 != '/') || is_plain_letter(c2)
    } else if c1.is_ascii_digit() {
        c2.is_ascii() && !c2.is_ascii_digit()
    } else if is_plain_letter(c1) {
        (c2.is_ascii() && !c2.is_ascii_alphabetic() && c2 != '\'') || is_wide_punctuation(c2)
    } else {
        false
    }
}

/// Whether the interior offset `p` (`0 < p < text.len()`) is a split point.
/// The ends of the text are not reported: they need no proof.
pub fn is_split_point(text: &str, p: usize) -> bool {
    if p == 0 || p >= text.len() || !text.is_char_boundary(p) {
        return false;
    }
    match (text[..p].chars().next_back(), text[p..].chars().next()) {
        (Some(c1), Some(c2)) => splits_between(c1, c2),
        _ => false,
    }
}

/// The first split point in `from..until`, if any.
pub(crate) fn next_split_point(text: &str, from: usize, until: usize) -> Option<usize> {
    (from.max(1)..until.min(text.len())).find(|&p| is_split_point(text, p))
}

/// The last split point in `after + 1..=at`, if any.
pub(crate) fn prev_split_point(text: &str, at: usize, after: usize) -> Option<usize> {
    let last = at.min(text.len().saturating_sub(1));
    (after.saturating_add(1).max(1)..=last).rev().find(|&p| is_split_point(text, p))
}

/// Cuts `text` into consecutive parts of at least `target` bytes (except the
/// last), each ending at a split point or at the end of the text.
pub(crate) fn chunks(text: &str, target: usize) -> Chunks<'_> {
    Chunks { text, start: 0, target: target.max(1) }
}

/// Iterator returned by [`chunks`].
pub(crate) struct Chunks<'a> {
    text: &'a str,
    start: usize,
    target: usize,
}

impl<'a> Iterator for Chunks<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.start >= self.text.len() {
            return None;
        }
        let from = self.start.saturating_add(self.target);
        let end = next_split_point(self.text, from, usize::MAX).unwrap_or(self.text.len());
        let part = &self.text[self.start..end];
        self.start = end;
        Some(part)
    }
}

/// Cuts `text` into at most `parts` pieces of roughly equal size at split
/// points; fewer (down to one) when split points are missing.
pub(crate) fn split_evenly(text: &str, parts: usize) -> Vec<&str> {
    let len = text.len();
    let parts = parts.max(1);
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for i in 1..parts {
        let target = len / parts * i;
        if target <= start {
            continue;
        }
        match next_split_point(text, target, len) {
            Some(cut) => {
                out.push(&text[start..cut]);
                start = cut;
            }
            None => break,
        }
    }
    out.push(&text[start..]);
    out
}

/// The largest character boundary at or below `n` (clamped to the text).
pub(crate) fn floor_char_boundary(text: &str, n: usize) -> usize {
    let mut n = n.min(text.len());
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// The smallest character boundary at or above `n` (clamped to the text).
pub(crate) fn ceil_char_boundary(text: &str, n: usize) -> usize {
    let mut n = n.min(text.len());
    while !text.is_char_boundary(n) {
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_the_three_rules() {
        assert!(is_split_point("a\nb", 2));
        assert!(is_split_point("a\n1", 2));
        assert!(is_split_point("a\n{", 2));
        assert!(!is_split_point("a\n/", 2));
        assert!(!is_split_point("a\n ", 2));
        assert!(!is_split_point("a\n\n", 2));
        assert!(is_split_point("12a", 2));
        assert!(is_split_point("12 ", 2));
        assert!(!is_split_point("123", 2));
        assert!(!is_split_point("1\u{00B2}", 1));
        assert!(is_split_point("ab c", 2));
        assert!(is_split_point("ab,", 2));
        assert!(is_split_point("ab1", 2));
        assert!(!is_split_point("ab'", 2));
        assert!(!is_split_point("abc", 2));
        assert!(!is_split_point("ab\u{0301}", 2));
        assert!(is_split_point("日本。", 6));
        assert!(!is_split_point("日本語", 6));
        assert!(!is_split_point("!? ", 1));
    }

    #[test]
    fn never_reports_the_ends_or_inside_a_character() {
        assert!(!is_split_point("ab c", 0));
        assert!(!is_split_point("ab c", 4));
        assert!(!is_split_point("é1", 1));
        assert_eq!(next_split_point("abc", 0, 9), None);
        assert_eq!(prev_split_point("", 5, 0), None);
    }

    #[test]
    fn finds_the_nearest_split_points() {
        let text = "abc def ghi";
        assert_eq!(next_split_point(text, 0, 99), Some(3));
        assert_eq!(next_split_point(text, 4, 99), Some(7));
        assert_eq!(next_split_point(text, 4, 7), None);
        assert_eq!(next_split_point(text, 8, 99), None);
        assert_eq!(prev_split_point(text, 6, 0), Some(3));
        assert_eq!(prev_split_point(text, 6, 3), None);
        assert_eq!(prev_split_point(text, 100, 0), Some(7));
        assert_eq!(prev_split_point(text, 2, 0), None);
    }

    #[test]
    fn chunks_cover_the_text() {
        let text = "alpha beta gamma delta epsilon\nzeta 12 eta";
        for target in [1, 3, 7, 100] {
            let parts: Vec<&str> = chunks(text, target).collect();
            assert_eq!(parts.concat(), text);
            assert!(parts.iter().take(parts.len() - 1).all(|p| p.len() >= target));
        }
        assert_eq!(chunks("", 4).count(), 0);
    }

    #[test]
    fn even_split_covers_the_text() {
        let text = "word ".repeat(1000);
        for parts in 1..6 {
            let pieces = split_evenly(&text, parts);
            assert_eq!(pieces.len(), parts);
            assert_eq!(pieces.concat(), text);
        }
        assert_eq!(split_evenly(&"!".repeat(100), 4), vec!["!".repeat(100)]);
        assert_eq!(split_evenly("", 3), vec![""]);
    }

    #[test]
    fn char_boundaries() {
        let text = "aé😀";
        assert_eq!(floor_char_boundary(text, 2), 1);
        assert_eq!(ceil_char_boundary(text, 2), 3);
        assert_eq!(floor_char_boundary(text, 5), 3);
        assert_eq!(ceil_char_boundary(text, 5), 7);
        assert_eq!(floor_char_boundary(text, 99), 7);
    }
}
