//! Meters and checks shared by the integration tests.

#![allow(dead_code)]

use std::cell::Cell;

use offload_preview::{Meter, Utf16Meter};

/// Counts bytes of UTF-8.
pub struct ByteMeter;

impl Meter for ByteMeter {
    fn measure(&self, text: &str) -> usize {
        text.len()
    }

    fn fit_prefix(&self, text: &str, budget: usize) -> usize {
        let mut end = budget.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        end
    }

    fn fit_suffix(&self, text: &str, budget: usize) -> usize {
        let mut start = text.len().saturating_sub(budget);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        start
    }
}

/// Counts whitespace-separated words; whitespace is free.
pub struct WordMeter;

impl Meter for WordMeter {
    fn measure(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }

    fn fit_prefix(&self, text: &str, budget: usize) -> usize {
        let mut words = 0;
        let mut in_word = false;
        for (i, c) in text.char_indices() {
            if c.is_whitespace() {
                in_word = false;
            } else if !in_word {
                in_word = true;
                words += 1;
                if words > budget {
                    return i;
                }
            }
        }
        text.len()
    }

    fn fit_suffix(&self, text: &str, budget: usize) -> usize {
        let mut words = 0;
        let mut in_word = false;
        let mut start = text.len();
        for (i, c) in text.char_indices().rev() {
            if c.is_whitespace() {
                in_word = false;
            } else if !in_word {
                in_word = true;
                words += 1;
                if words > budget {
                    return start;
                }
            }
            start = i;
        }
        0
    }
}

/// A tokenizer-like meter: one unit per started group of four characters of
/// a run of letters/digits, of whitespace, or of other characters. Joined
/// texts can measure less than their parts.
pub struct ChunkMeter;

fn class(c: char) -> u8 {
    if c.is_alphanumeric() {
        0
    } else if c.is_whitespace() {
        1
    } else {
        2
    }
}

impl ChunkMeter {
    /// Measure of each prefix, by end offset, until it exceeds `budget`.
    fn walk(text: &str, mut visit: impl FnMut(usize, usize) -> bool) {
        let mut total = 0;
        let mut run_class = u8::MAX;
        let mut run_len = 0;
        for (i, c) in text.char_indices() {
            let k = class(c);
            if k == run_class {
                run_len += 1;
                if run_len % 4 == 1 {
                    total += 1;
                }
            } else {
                run_class = k;
                run_len = 1;
                total += 1;
            }
            if !visit(i + c.len_utf8(), total) {
                return;
            }
        }
    }
}

impl Meter for ChunkMeter {
    fn measure(&self, text: &str) -> usize {
        let mut last = 0;
        Self::walk(text, |_, total| {
            last = total;
            true
        });
        last
    }

    fn fit_prefix(&self, text: &str, budget: usize) -> usize {
        let mut end = 0;
        Self::walk(text, |offset, total| {
            if total > budget {
                return false;
            }
            end = offset;
            true
        });
        end
    }

    fn fit_suffix(&self, text: &str, budget: usize) -> usize {
        let mut start = text.len();
        for (i, _) in text.char_indices().rev() {
            if self.measure(&text[i..]) > budget {
                break;
            }
            start = i;
        }
        start
    }
}

/// [`Utf16Meter`] that counts the bytes it is asked about.
#[derive(Default)]
pub struct CountingMeter {
    pub seen: Cell<usize>,
    pub calls: Cell<usize>,
}

impl CountingMeter {
    fn note(&self, text: &str) {
        self.seen.set(self.seen.get() + text.len());
        self.calls.set(self.calls.get() + 1);
    }
}

impl Meter for CountingMeter {
    fn measure(&self, text: &str) -> usize {
        self.note(text);
        Utf16Meter.measure(text)
    }

    fn fit_prefix(&self, text: &str, budget: usize) -> usize {
        self.note(text);
        Utf16Meter.fit_prefix(text, budget)
    }

    fn fit_suffix(&self, text: &str, budget: usize) -> usize {
        self.note(text);
        Utf16Meter.fit_suffix(text, budget)
    }
}

/// A line without a trailing `'\r'`.
pub fn display(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// `"12,345"` as a number.
pub fn number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || b == b',') {
        return None;
    }
    text.replace(',', "").parse().ok()
}

/// A cut line: its shown start and the number of characters left out.
pub fn parse_cut(line: &str) -> Option<(&str, u64)> {
    let body = line
        .strip_suffix(" chars]")
        .or_else(|| line.strip_suffix(" char]"))?;
    let at = body.rfind(" … [+")?;
    let count = number(&body[at + " … [+".len()..])?;
    Some((&line[..at], count))
}

/// An omission marker: the first and last lines left out.
pub fn parse_omission(line: &str) -> Option<(u64, u64)> {
    let inner = line.strip_prefix("[… ")?.strip_suffix(" …]")?;
    if let Some(rest) = inner.strip_prefix("1 line omitted (line ") {
        let n = number(rest.strip_suffix(')')?)?;
        return Some((n, n));
    }
    let (count, rest) = inner.split_once(" lines omitted (lines ")?;
    let (first, last) = rest.strip_suffix(')')?.split_once('-')?;
    let (count, first, last) = (number(count)?, number(first)?, number(last)?);
    (last >= first && count == last - first + 1).then_some((first, last))
}

/// A block header: index (1-based), total and kind.
pub fn parse_header(line: &str) -> Option<(usize, usize, &str)> {
    let inner = line.strip_prefix("[block ")?.strip_suffix(']')?;
    let (index, rest) = inner.split_once(" of ")?;
    let (total, kind) = rest.split_once(": ")?;
    Some((index.parse().ok()?, total.parse().ok()?, kind))
}

/// Checks that `shown` stands for the line `original`: the same, or its
/// start with an exact cut marker, or (when `may_be_prefix`) a plain start.
pub fn check_line(shown: &str, original: &str, may_be_prefix: bool) -> Result<(), String> {
    if shown == original {
        return Ok(());
    }
    if let Some((start, rest)) = parse_cut(shown) {
        if !start.is_empty() && original.starts_with(start) {
            let left = original[start.len()..].chars().count() as u64;
            if left == rest && left > 0 {
                return Ok(());
            }
            return Err(format!(
                "cut {shown:?} of {original:?} counts {rest}, not {left}"
            ));
        }
    }
    if may_be_prefix && original.starts_with(shown) {
        return Ok(());
    }
    Err(format!("{shown:?} does not stand for {original:?}"))
}

/// Checks a head-and-tail preview `section` of the block `text`: the whole
/// block, or its lines from 1 on, one marker naming exactly the lines left
/// out, then lines up to the last one, each whole or cut.
pub fn check_head_tail(section: &str, text: &str) -> Result<(), String> {
    let lines: Vec<&str> = text.split('\n').map(display).collect();
    if section == lines.join("\n") {
        return Ok(());
    }
    let shown: Vec<&str> = section.split('\n').collect();
    let mut expected = 1u64;
    let mut marker = false;
    for (i, line) in shown.iter().enumerate() {
        if let Some((first, last)) = parse_omission(line) {
            if marker || first != expected {
                return Err(format!(
                    "marker {line:?} where line {expected} was expected"
                ));
            }
            marker = true;
            expected = last + 1;
            continue;
        }
        let Some(original) = lines.get(expected as usize - 1) else {
            return Err(format!(
                "line {expected} shown but the block has {}",
                lines.len()
            ));
        };
        let only = shown.len() == 1;
        check_line(line, original, only && i == 0)?;
        expected += 1;
    }
    let complete = expected == lines.len() as u64 + 1;
    if (marker || shown.len() > 1) && !complete {
        return Err(format!(
            "shown up to line {} of {}",
            expected - 1,
            lines.len()
        ));
    }
    Ok(())
}
