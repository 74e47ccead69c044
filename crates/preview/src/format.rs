//! Numbers and marker texts shown in previews.

use crate::options::BlockKind;

/// `n` with `,` between groups of three digits: `12,345`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let first = match digits.len() % 3 {
        0 => 3,
        short => short,
    };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    out.push_str(&digits[..first.min(digits.len())]);
    let mut at = first;
    while at + 3 <= digits.len() {
        out.push(',');
        out.push_str(&digits[at..at + 3]);
        at += 3;
    }
    out
}

/// `1 line`, `12,345 lines`.
pub(crate) fn counted(n: u64, singular: &str, plural: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { singular } else { plural })
}

/// Number of characters (Unicode scalar values) of `text`.
pub(crate) fn count_chars(text: &str) -> u64 {
    // Counting in 255-byte chunks into a byte accumulator lets the compiler
    // vectorise the comparison.
    let mut total = 0u64;
    for chunk in text.as_bytes().chunks(255) {
        let mut n = 0u8;
        for &b in chunk {
            n += u8::from((b as i8) >= -0x40);
        }
        total += u64::from(n);
    }
    total
}

/// Appended to a line cut short: ` … [+12,345 chars]`, the number of
/// characters of the line that were left out.
pub(crate) fn cut_marker(rest_chars: u64) -> String {
    format!(" … [+{}]", counted(rest_chars, "char", "chars"))
}

/// Marker line for the lines `first..=last` left out of a block:
/// `[… 12,345 lines omitted (lines 41-12,385) …]`.
pub(crate) fn omission_marker(first: u64, last: u64) -> String {
    let count = last.saturating_sub(first).saturating_add(1);
    if count == 1 {
        format!("[… 1 line omitted (line {}) …]", grouped(first))
    } else {
        format!(
            "[… {} lines omitted (lines {}-{}) …]",
            grouped(count),
            grouped(first),
            grouped(last)
        )
    }
}

/// The longest omission marker a block of `lines` lines can need.
pub(crate) fn widest_omission_marker(lines: u64) -> String {
    format!(
        "[… {} lines omitted (lines {}-{}) …]",
        grouped(lines),
        grouped(lines),
        grouped(lines)
    )
}

/// First line of a block's section when a result has several blocks:
/// `[block 2 of 3: json]`.
pub(crate) fn block_header(index: usize, total: usize, kind: BlockKind) -> String {
    format!("[block {} of {}: {}]", index + 1, total, kind.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(12_345), "12,345");
        assert_eq!(grouped(123_456), "123,456");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn markers() {
        assert_eq!(cut_marker(12_345), " … [+12,345 chars]");
        assert_eq!(cut_marker(1), " … [+1 char]");
        assert_eq!(
            omission_marker(41, 12_385),
            "[… 12,345 lines omitted (lines 41-12,385) …]"
        );
        assert_eq!(omission_marker(7, 7), "[… 1 line omitted (line 7) …]");
        assert_eq!(block_header(1, 3, BlockKind::Json), "[block 2 of 3: json]");
        assert_eq!(counted(2, "key", "keys"), "2 keys");
    }

    #[test]
    fn counts_chars_not_bytes() {
        assert_eq!(count_chars("aé€😀"), 4);
        assert_eq!(count_chars(""), 0);
    }
}
