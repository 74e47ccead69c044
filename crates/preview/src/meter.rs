//! Measuring text in budget units.

/// Measures text in the units a preview budget is given in (UTF-16 code
/// units, model tokens, ...).
///
/// Previews call these methods on small pieces (single lines, markers) or on
/// bounded windows of a large text, never repeatedly on a whole large text.
/// Implementations should do work proportional to the text they are given
/// (for the fit methods, to the part that fits), and must be consistent:
/// `fit_prefix` and `fit_suffix` return pieces whose `measure` is at most
/// `budget`.
pub trait Meter {
    /// Size of `text` in budget units.
    fn measure(&self, text: &str) -> usize;

    /// Byte length of the longest prefix of `text` (ending on a char
    /// boundary) with measure <= budget.
    fn fit_prefix(&self, text: &str, budget: usize) -> usize;

    /// Byte offset where the longest suffix of `text` (starting on a char
    /// boundary) with measure <= budget starts.
    fn fit_suffix(&self, text: &str, budget: usize) -> usize;

    /// Whether the measure of a text is the sum of the measures of its
    /// characters (as for UTF-16 units, not for tokens, which merge), so
    /// that any prefix of a text that fits also fits and cuts need no
    /// second check.
    fn is_additive(&self) -> bool {
        false
    }
}

/// Measures text in UTF-16 code units, the length of a JavaScript string.
///
/// `fit_prefix` and `fit_suffix` only look at the part of the text that
/// fits, plus one character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Utf16Meter;

/// Bytes checked at once for ASCII (one UTF-16 unit each) when measuring.
const ASCII_CHUNK: usize = 64;

/// UTF-16 code units contributed by a UTF-8 byte: one per leading byte, one
/// more for the leading byte of a 4-byte sequence (a surrogate pair), none
/// for continuation bytes.
fn utf16_units(byte: u8) -> usize {
    usize::from((byte & 0xC0) != 0x80) + usize::from(byte >= 0xF0)
}

impl Meter for Utf16Meter {
    fn is_additive(&self) -> bool {
        true
    }

    fn measure(&self, text: &str) -> usize {
        text.as_bytes()
            .chunks(ASCII_CHUNK)
            .map(|chunk| if chunk.is_ascii() { chunk.len() } else { chunk.iter().map(|&b| utf16_units(b)).sum() })
            .sum()
    }

    fn fit_prefix(&self, text: &str, budget: usize) -> usize {
        let bytes = text.as_bytes();
        let mut used = 0usize;
        let mut i = 0;
        while i < bytes.len() {
            // A run of ASCII is one unit a byte: taken a chunk at a time.
            let chunk = bytes.get(i..i + ASCII_CHUNK);
            if used + ASCII_CHUNK <= budget && chunk.is_some_and(<[u8]>::is_ascii) {
                used += ASCII_CHUNK;
                i += ASCII_CHUNK;
                continue;
            }
            for &b in &bytes[i..(i + ASCII_CHUNK).min(bytes.len())] {
                let units = utf16_units(b);
                if units != 0 {
                    if used + units > budget {
                        return i;
                    }
                    used += units;
                }
                i += 1;
            }
        }
        text.len()
    }

    fn fit_suffix(&self, text: &str, budget: usize) -> usize {
        let mut used = 0usize;
        let mut start = text.len();
        for (i, &b) in text.as_bytes().iter().enumerate().rev() {
            let units = utf16_units(b);
            if units == 0 {
                continue;
            }
            if used + units > budget {
                return start;
            }
            used += units;
            start = i;
        }
        start
    }
}

/// The largest char boundary of `text` at or below `index`.
pub(crate) fn floor_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// First window tried by [`prefix_fit`]: enough for any text whose budget
/// units are at least a quarter of a byte each, as UTF-16 units and BPE
/// tokens are in practice.
fn first_window(budget: usize) -> usize {
    budget.saturating_mul(4).saturating_add(64)
}

/// Byte length of the longest prefix of `text` that fits `budget`, asking the
/// meter about windows of `text` that double in size, so that a meter whose
/// cost grows with the text it is given still does work proportional to the
/// prefix. The result is always a char boundary of `text`.
pub(crate) fn prefix_fit(meter: &dyn Meter, text: &str, budget: usize) -> usize {
    let mut window = first_window(budget);
    loop {
        let end = floor_boundary(text, window);
        let fit = floor_boundary(text, meter.fit_prefix(&text[..end], budget).min(end));
        if end == text.len() || fit < end {
            return fit;
        }
        window = window.saturating_mul(2);
    }
}

/// Whether all of `text` fits `budget` (see [`prefix_fit`]).
pub(crate) fn fits_whole(meter: &dyn Meter, text: &str, budget: usize) -> bool {
    prefix_fit(meter, text, budget) == text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_measure_counts_code_units() {
        let m = Utf16Meter;
        assert_eq!(m.measure(""), 0);
        assert_eq!(m.measure("abc"), 3);
        assert_eq!(m.measure("é"), 1);
        assert_eq!(m.measure("€"), 1);
        assert_eq!(m.measure("😀"), 2);
        assert_eq!(m.measure("a😀é"), 4);
    }

    #[test]
    fn utf16_fit_prefix_never_splits_a_pair() {
        let m = Utf16Meter;
        let text = "a😀b";
        assert_eq!(m.fit_prefix(text, 0), 0);
        assert_eq!(m.fit_prefix(text, 1), 1);
        assert_eq!(m.fit_prefix(text, 2), 1);
        assert_eq!(m.fit_prefix(text, 3), 5);
        assert_eq!(m.fit_prefix(text, 4), 6);
        assert_eq!(m.fit_prefix(text, 100), 6);
    }

    #[test]
    fn utf16_fit_suffix_never_splits_a_pair() {
        let m = Utf16Meter;
        let text = "a😀b";
        assert_eq!(m.fit_suffix(text, 0), 6);
        assert_eq!(m.fit_suffix(text, 1), 5);
        assert_eq!(m.fit_suffix(text, 2), 5);
        assert_eq!(m.fit_suffix(text, 3), 1);
        assert_eq!(m.fit_suffix(text, 4), 0);
        assert_eq!(m.fit_suffix("", 4), 0);
    }

    #[test]
    fn windowed_fit_matches_a_direct_fit() {
        let m = Utf16Meter;
        let text = "x".repeat(10_000) + "é😀";
        for budget in [
            0, 1, 63, 64, 65, 1000, 9_999, 10_000, 10_001, 10_002, 10_003, 20_000,
        ] {
            assert_eq!(
                prefix_fit(&m, &text, budget),
                m.fit_prefix(&text, budget),
                "{budget}"
            );
        }
    }

    #[test]
    fn floor_boundary_backs_off_to_a_char_start() {
        assert_eq!(floor_boundary("a€", 2), 1);
        assert_eq!(floor_boundary("a€", 4), 4);
        assert_eq!(floor_boundary("a€", 99), 4);
    }
}
