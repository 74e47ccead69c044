//! UTF-16 length arithmetic over UTF-8 strings.
//!
//! JavaScript measures strings in UTF-16 code units (`.length`, `slice`,
//! `lastIndexOf`). These helpers let the rest of the crate apply the same
//! budgets to Rust `str` data without converting it.

/// Number of UTF-16 code units needed to encode `s` (JavaScript `s.length`).
pub fn len(s: &str) -> usize {
    // Every char contributes one unit per leading byte, plus one more for
    // 4-byte sequences (which become surrogate pairs).
    s.as_bytes()
        .iter()
        .map(|&b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// Number of UTF-8 bytes of the UTF-16 text `units`, each lone surrogate
/// counting as U+FFFD (three bytes), as `TextEncoder` and
/// `String::from_utf16_lossy` encode it.
///
/// One branch-free pass the compiler vectorises: every unit counts 1, 2 or 3
/// bytes by its value. A surrogate pair (two units of 3) is one 4-byte
/// character, so each paired surrogate counts one byte less; pairs are
/// counted (in a second branch-free pass) only when the text has surrogates.
/// Counts are kept in 16-bit counters over blocks of [`COUNTED_UNITS`] units
/// (at most 2 per unit: no overflow), so that a vector register holds as many
/// counters as units (32-bit counters ran 2.5 to 4 times slower).
pub fn utf8_len_of_utf16(units: &[u16]) -> usize {
    let mut len = units.len();
    let mut surrogates = false;
    for block in units.chunks(COUNTED_UNITS) {
        let (mut wide, mut sur) = (0u16, 0u16);
        for &u in block {
            wide += u16::from(u >= 0x80) + u16::from(u >= 0x800);
            sur |= u16::from(u & 0xF800 == 0xD800);
        }
        len += usize::from(wide);
        surrogates |= sur != 0;
    }
    if !surrogates {
        return len;
    }
    // A low surrogate cannot start a pair, so pairs never overlap: every high
    // surrogate followed by a low one is a pair, as encoders pair them.
    let (heads, tails) = (&units[..units.len() - 1], &units[1..]);
    let mut pairs = 0usize;
    for (heads, tails) in heads.chunks(COUNTED_UNITS).zip(tails.chunks(COUNTED_UNITS)) {
        let mut n = 0u16;
        for (&a, &b) in heads.iter().zip(tails) {
            n += u16::from(a & 0xFC00 == 0xD800) & u16::from(b & 0xFC00 == 0xDC00);
        }
        pairs += usize::from(n);
    }
    len - 2 * pairs
}

/// Units counted in 16-bit counters before they are added up (2 per unit at most).
const COUNTED_UNITS: usize = 1 << 12;

/// Byte offset of the longest prefix of `s` that is at most `units` UTF-16
/// code units long.
///
/// Where JavaScript's `slice(0, units)` would split a surrogate pair, the
/// prefix stops before the whole pair instead.
pub fn prefix_end(s: &str, units: usize) -> usize {
    if s.len() <= units {
        // Byte length bounds the UTF-16 length from above.
        return s.len();
    }
    let mut count = 0usize;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if count + w > units {
            return i;
        }
        count += w;
    }
    s.len()
}

/// The longest prefix of `s` that is at most `units` UTF-16 code units long
/// (see [`prefix_end`]).
pub fn prefix(s: &str, units: usize) -> &str {
    &s[..prefix_end(s, units)]
}

/// A string builder that stops accepting text once it holds more than a
/// given number of UTF-16 code units.
///
/// It keeps everything up to and including code unit index `max_units`, which
/// is exactly what JavaScript's `truncate` reads (`length > max` and
/// `lastIndexOf('\n', max)`), and remembers the last separator newline at a
/// unit index `<= max_units`.
#[derive(Debug)]
pub struct BoundedWriter {
    buf: String,
    units: usize,
    max_units: usize,
    last_newline: Option<usize>,
}

impl BoundedWriter {
    /// A writer for a budget of `max_units` UTF-16 code units.
    pub fn new(max_units: usize) -> Self {
        Self {
            buf: String::new(),
            units: 0,
            max_units,
            last_newline: None,
        }
    }

    /// Whether the text written so far already exceeds the budget (so the
    /// output will be truncated and nothing more needs to be written).
    pub fn is_over(&self) -> bool {
        self.units > self.max_units
    }

    /// Appends a newline separator (the `join('\n')` glue).
    pub fn push_newline(&mut self) {
        if self.is_over() {
            return;
        }
        if self.units <= self.max_units {
            self.last_newline = Some(self.buf.len());
        }
        self.buf.push('\n');
        self.units += 1;
    }

    /// Appends `s`, keeping only as much as is needed to exceed the budget.
    pub fn push_str(&mut self, s: &str) {
        if self.is_over() || s.is_empty() {
            return;
        }
        // Units still wanted so that index `max_units` is included.
        let wanted = self.max_units.saturating_add(1) - self.units;
        if s.len() <= wanted {
            self.buf.push_str(s);
            self.units += len(s);
            return;
        }
        let mut taken = 0usize;
        let mut end = s.len();
        for (i, c) in s.char_indices() {
            if taken >= wanted {
                end = i;
                break;
            }
            taken += c.len_utf16();
        }
        self.buf.push_str(&s[..end]);
        self.units += taken;
    }

    /// Finishes like the SDK's `truncate(output, max, message)`: returns the
    /// text unchanged when it fits, otherwise cuts it at the last separator
    /// newline at or before the budget (or at the budget itself when there is
    /// none) and appends `\n\n[message]`.
    pub fn finish(self, message: &str) -> String {
        if !self.is_over() {
            return self.buf;
        }
        let mut buf = self.buf;
        let cut = match self.last_newline {
            Some(byte) if byte > 0 => byte,
            _ => prefix_end(&buf, self.max_units),
        };
        buf.truncate(cut);
        buf.push_str("\n\n[");
        buf.push_str(message);
        buf.push(']');
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Units biased towards every class the length depends on.
    fn unit() -> impl Strategy<Value = u16> {
        prop_oneof![
            0u16..0x80,
            0x80u16..0x800,
            0x800u16..0xD800,
            0xD800u16..0xDC00,
            0xDC00u16..0xE000,
            0xE000u16..=0xFFFF,
        ]
    }

    proptest! {
        #[test]
        fn utf8_length_is_the_lossy_encoding_length(units in prop::collection::vec(unit(), 0..300)) {
            prop_assert_eq!(utf8_len_of_utf16(&units), String::from_utf16_lossy(&units).len());
        }
    }

    #[test]
    fn utf8_length_of_pairs_lone_surrogates_and_long_texts() {
        let pair = [0xD83D, 0xDE00];
        assert_eq!(utf8_len_of_utf16(&pair), 4);
        assert_eq!(utf8_len_of_utf16(&[0xD83D]), 3);
        assert_eq!(utf8_len_of_utf16(&[0xDE00, 0xD83D]), 6);
        assert_eq!(utf8_len_of_utf16(&[0xD83D, 0xD83D, 0xDE00]), 7);
        // longer than one counting chunk, with a pair across the chunk boundary
        let mut long: Vec<u16> = "é漢a".encode_utf16().cycle().take((1 << 16) - 1).collect();
        long.extend_from_slice(&pair);
        long.extend("b€".encode_utf16().cycle().take(70_001));
        assert_eq!(
            utf8_len_of_utf16(&long),
            String::from_utf16_lossy(&long).len()
        );
    }

    #[test]
    fn lengths_count_utf16_units() {
        assert_eq!(len(""), 0);
        assert_eq!(len("abc"), 3);
        assert_eq!(len("é"), 1);
        assert_eq!(len("€"), 1);
        assert_eq!(len("😀"), 2);
        assert_eq!(len("a😀b"), 4);
    }

    #[test]
    fn prefixes_never_split_pairs() {
        assert_eq!(prefix("a😀b", 1), "a");
        assert_eq!(prefix("a😀b", 2), "a");
        assert_eq!(prefix("a😀b", 3), "a😀");
        assert_eq!(prefix("a😀b", 10), "a😀b");
        assert_eq!(prefix("ééé", 2), "éé");
    }

    #[test]
    fn writer_keeps_text_within_budget() {
        let mut w = BoundedWriter::new(10);
        w.push_str("abc");
        w.push_newline();
        w.push_str("def");
        assert!(!w.is_over());
        assert_eq!(w.finish("m"), "abc\ndef");
    }

    #[test]
    fn writer_cuts_at_last_newline() {
        let mut w = BoundedWriter::new(5);
        w.push_str("abc");
        w.push_newline();
        w.push_str("defghij");
        assert!(w.is_over());
        assert_eq!(w.finish("m"), "abc\n\n[m]");
    }

    #[test]
    fn writer_newline_exactly_at_budget_counts() {
        // JS: "abcde\nf".lastIndexOf('\n', 5) === 5
        let mut w = BoundedWriter::new(5);
        w.push_str("abcde");
        w.push_newline();
        w.push_str("f");
        assert_eq!(w.finish("m"), "abcde\n\n[m]");
    }

    #[test]
    fn writer_without_newline_cuts_at_budget() {
        let mut w = BoundedWriter::new(3);
        w.push_str("abcdef");
        assert_eq!(w.finish("m"), "abc\n\n[m]");
        let mut w = BoundedWriter::new(0);
        w.push_str("x");
        assert_eq!(w.finish("m"), "\n\n[m]");
    }
}
