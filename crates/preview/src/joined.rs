//! The blocks of a result joined with `'\n'`, without copying them all.

use std::borrow::Cow;

use crate::lines::{count_lines_up_to, Forward};
use crate::meter::{floor_boundary, Meter};
use crate::options::PreviewBlock;

/// The texts of some blocks as if joined with `'\n'`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Joined<'b, 'a> {
    blocks: &'b [PreviewBlock<'a>],
    len: usize,
}

impl<'b, 'a> Joined<'b, 'a> {
    /// The join of `blocks`.
    pub fn new(blocks: &'b [PreviewBlock<'a>]) -> Self {
        let texts: usize = blocks.iter().map(|b| b.text.len()).sum();
        Self {
            blocks,
            len: texts + blocks.len().saturating_sub(1),
        }
    }

    /// Byte length of the joined text.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The first `max` bytes of the joined text (fewer if that would split a
    /// character).
    pub fn prefix(&self, max: usize) -> Cow<'a, str> {
        if let [only] = self.blocks {
            return Cow::Borrowed(&only.text[..floor_boundary(only.text, max)]);
        }
        let mut out = String::with_capacity(max.min(self.len));
        for (i, block) in self.blocks.iter().enumerate() {
            if i > 0 {
                if out.len() >= max {
                    break;
                }
                out.push('\n');
            }
            let room = max - out.len();
            if block.text.len() > room {
                out.push_str(&block.text[..floor_boundary(block.text, room)]);
                break;
            }
            out.push_str(block.text);
        }
        out.into()
    }

    /// Byte length of the longest prefix of the joined text that fits
    /// `budget`, asking the meter about windows that double in size.
    pub fn fit_prefix(&self, meter: &dyn Meter, budget: usize) -> usize {
        let mut window = budget.saturating_mul(4).saturating_add(64);
        loop {
            let prefix = self.prefix(window);
            let fit = floor_boundary(&prefix, meter.fit_prefix(&prefix, budget));
            if prefix.len() == self.len || fit < prefix.len() {
                return fit;
            }
            window = window.saturating_mul(2);
        }
    }

    /// Number of lines of the joined text, counting no further than `cap`.
    pub fn count_lines_up_to(&self, cap: u64) -> u64 {
        let mut total = 0u64;
        for block in self.blocks {
            total += count_lines_up_to(block.text, cap);
            if total >= cap {
                return cap;
            }
        }
        total.max(1)
    }

    /// Lines of the joined text (without their `'\n'`).
    pub fn lines(&self) -> impl Iterator<Item = &'a str> + 'b {
        self.blocks
            .iter()
            .flat_map(|block| Forward::new(block.text).map(|line| line.text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Utf16Meter;

    fn blocks<'a>(texts: &[&'a str]) -> Vec<PreviewBlock<'a>> {
        texts.iter().map(|t| PreviewBlock::text(t)).collect()
    }

    #[test]
    fn prefixes_match_the_real_join() {
        let b = blocks(&["ab€", "", "cd\ne"]);
        let joined = Joined::new(&b);
        let real = "ab€\n\ncd\ne";
        assert_eq!(joined.len(), real.len());
        for max in 0..=real.len() + 2 {
            let expected = &real[..floor_boundary(real, max)];
            assert_eq!(joined.prefix(max), expected, "{max}");
        }
        for budget in 0..12 {
            assert_eq!(
                joined.fit_prefix(&Utf16Meter, budget),
                Utf16Meter.fit_prefix(real, budget)
            );
        }
        let lines: Vec<_> = joined.lines().collect();
        assert_eq!(lines, ["ab€", "", "cd", "e"]);
        assert_eq!(joined.count_lines_up_to(3), 3);
        assert_eq!(joined.count_lines_up_to(10), 4);
    }
}
