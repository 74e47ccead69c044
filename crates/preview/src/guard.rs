//! The last check of every preview: it must fit its budget.

use crate::meter::{prefix_fit, Meter};

/// `preview` if it fits `budget`, otherwise its longest start that does
/// (ending at a line end when `whole_lines` and the start has one).
///
/// Previews are planned from the measures of their lines and markers, which
/// add up exactly for meters such as [`Utf16Meter`](crate::Utf16Meter); a
/// meter that measures joined text differently from its parts (a tokenizer
/// merging across a newline) can need this cut.
pub(crate) fn enforce(
    preview: String,
    meter: &dyn Meter,
    budget: usize,
    whole_lines: bool,
) -> String {
    if meter.measure(&preview) <= budget {
        return preview;
    }
    let mut target = budget;
    for _ in 0..8 {
        let mut end = prefix_fit(meter, &preview, target);
        if whole_lines && end < preview.len() && preview.as_bytes()[end] != b'\n' {
            if let Some(newline) = memchr::memrchr(b'\n', &preview.as_bytes()[..end]) {
                end = newline;
            }
        }
        let cost = meter.measure(&preview[..end]);
        if cost <= budget {
            return preview[..end].to_owned();
        }
        target = target.saturating_sub((cost - budget).max(1));
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts one unit per char plus one per line after the first, and one
    /// more when the text has more than one line: not additive over joins.
    struct Lumpy;

    impl Meter for Lumpy {
        fn measure(&self, text: &str) -> usize {
            let newlines = text.matches('\n').count();
            text.chars().count() + newlines + usize::from(newlines > 0)
        }
        fn fit_prefix(&self, text: &str, budget: usize) -> usize {
            let mut end = 0;
            for (i, c) in text.char_indices() {
                let next = i + c.len_utf8();
                if self.measure(&text[..next]) > budget {
                    break;
                }
                end = next;
            }
            end
        }
        fn fit_suffix(&self, text: &str, _budget: usize) -> usize {
            text.len()
        }
    }

    #[test]
    fn cuts_what_does_not_fit() {
        assert_eq!(enforce("abc".into(), &Lumpy, 3, true), "abc");
        assert_eq!(enforce("abc\ndef".into(), &Lumpy, 9, true), "abc\ndef");
        assert_eq!(enforce("abc\ndef".into(), &Lumpy, 8, true), "abc");
        assert_eq!(enforce("abc\ndef".into(), &Lumpy, 8, false), "abc\nde");
        assert_eq!(enforce("abc".into(), &Lumpy, 0, true), "");
    }
}
