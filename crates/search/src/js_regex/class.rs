//! Code point sets for JavaScript character classes.
//!
//! Sets are sorted, non-overlapping, non-adjacent inclusive ranges of Unicode
//! scalar values (surrogate code points never occur in Rust strings and are
//! always excluded).

use super::ast::{ClassItem, ClassSpec, Predef};

/// Largest code point.
const MAX: u32 = 0x10FFFF;
const SURR_LO: u32 = 0xD800;
const SURR_HI: u32 = 0xDFFF;

/// JavaScript `\s`: WhiteSpace and LineTerminator code points.
const JS_SPACE: &[(u32, u32)] = &[
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];
const JS_DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];
const JS_WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
/// Line terminators that `.` does not match.
const LINE_TERMINATORS: &[(u32, u32)] = &[(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)];

/// Whether `c` is in the JavaScript `\s` set.
pub fn is_js_space(c: u32) -> bool {
    JS_SPACE.iter().any(|&(a, b)| a <= c && c <= b)
}

/// A set of Unicode scalar values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CodePointSet {
    ranges: Vec<(u32, u32)>,
}

impl CodePointSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// A set from possibly unsorted, overlapping ranges.
    pub fn from_ranges(ranges: &[(u32, u32)]) -> Self {
        let mut s = Self::new();
        for &(a, b) in ranges {
            s.add(a, b);
        }
        s
    }

    /// Adds the inclusive range `a..=b` (surrogates are dropped).
    pub fn add(&mut self, a: u32, b: u32) {
        if a > b {
            return;
        }
        // Split around the surrogate block.
        if a < SURR_LO && b >= SURR_LO {
            self.add(a, SURR_LO - 1);
            self.add(SURR_HI + 1, b);
            return;
        }
        if (SURR_LO..=SURR_HI).contains(&a) {
            if b > SURR_HI {
                self.add(SURR_HI + 1, b);
            }
            return;
        }
        let b = b.min(MAX);
        if a > b {
            return;
        }
        self.ranges.push((a, b));
        self.normalize();
    }

    /// Adds every member of `other`.
    pub fn union(&mut self, other: &CodePointSet) {
        self.ranges.extend_from_slice(&other.ranges);
        self.normalize();
    }

    fn normalize(&mut self) {
        self.ranges.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(self.ranges.len());
        for &(a, b) in &self.ranges {
            match out.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        self.ranges = out;
    }

    /// The complement with respect to all Unicode scalar values.
    pub fn complement(&self) -> Self {
        let mut out = Self::new();
        let mut next = 0u32;
        for &(a, b) in &self.ranges {
            if a > next {
                out.add(next, a - 1);
            }
            next = b.saturating_add(1);
        }
        if next <= MAX {
            out.add(next, MAX);
        }
        out
    }

    /// Removes one code point.
    pub fn remove(&mut self, c: u32) {
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        for &(a, b) in &self.ranges {
            if c < a || c > b {
                out.push((a, b));
                continue;
            }
            if a < c {
                out.push((a, c - 1));
            }
            if c < b {
                out.push((c + 1, b));
            }
        }
        self.ranges = out;
    }

    /// The ranges, sorted.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether `c` is a member.
    pub fn contains(&self, c: u32) -> bool {
        self.ranges.iter().any(|&(a, b)| a <= c && c <= b)
    }
}

/// The set for a predefined class escape.
pub fn predef_set(p: Predef) -> CodePointSet {
    match p {
        Predef::Digit => CodePointSet::from_ranges(JS_DIGIT),
        Predef::NotDigit => CodePointSet::from_ranges(JS_DIGIT).complement(),
        Predef::Space => CodePointSet::from_ranges(JS_SPACE),
        Predef::NotSpace => CodePointSet::from_ranges(JS_SPACE).complement(),
        Predef::Word => CodePointSet::from_ranges(JS_WORD),
        Predef::NotWord => CodePointSet::from_ranges(JS_WORD).complement(),
    }
}

/// The set matched by `.`.
pub fn dot_set() -> CodePointSet {
    CodePointSet::from_ranges(LINE_TERMINATORS).complement()
}

fn is_high(u: u16) -> bool {
    (0xD800..=0xDBFF).contains(&u)
}

fn is_low(u: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&u)
}

/// Combines a surrogate pair into a code point.
pub fn combine_pair(high: u16, low: u16) -> u32 {
    0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
}

/// Astral code points whose high surrogate lies in `hi_a..=hi_b`.
fn astral_with_high(set: &mut CodePointSet, hi_a: u16, hi_b: u16) {
    let first = combine_pair(hi_a, 0xDC00);
    let last = combine_pair(hi_b, 0xDFFF);
    set.add(first, last);
}

/// Astral code points whose low surrogate is `low`.
fn astral_with_low(set: &mut CodePointSet, low: u16) {
    for high in 0xD800u16..=0xDBFF {
        let c = combine_pair(high, low);
        set.add(c, c);
    }
}

/// Resolves a class to the code points it matches.
///
/// JavaScript (non-unicode) classes contain UTF-16 code units; this maps
/// them to code points: a high surrogate followed by a low surrogate in the
/// source is the astral character they encode, a lone high surrogate (or a
/// range of them) matches every astral character with that high half, and a
/// lone low surrogate matches every astral character with that low half.
pub fn class_set(spec: &ClassSpec) -> CodePointSet {
    let mut set = CodePointSet::new();
    let items = &spec.items;
    let mut i = 0;
    while i < items.len() {
        match items[i] {
            ClassItem::Unit(h) if is_high(h) => {
                if let Some(ClassItem::Unit(l)) = items.get(i + 1) {
                    if is_low(*l) {
                        let c = combine_pair(h, *l);
                        set.add(c, c);
                        i += 2;
                        continue;
                    }
                }
                astral_with_high(&mut set, h, h);
            }
            ClassItem::Unit(l) if is_low(l) => astral_with_low(&mut set, l),
            ClassItem::Unit(u) => set.add(u32::from(u), u32::from(u)),
            ClassItem::Range(a, b) => {
                set.add(u32::from(a), u32::from(b));
                let ha = a.max(0xD800);
                let hb = b.min(0xDBFF);
                if ha <= hb {
                    astral_with_high(&mut set, ha, hb);
                }
                if a <= 0xDC00 && b >= 0xDFFF {
                    set.add(0x10000, MAX);
                }
            }
            ClassItem::Predef(p) => set.union(&predef_set(p)),
        }
        i += 1;
    }
    if spec.negated {
        set.complement()
    } else {
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complement_round_trips() {
        let s = CodePointSet::from_ranges(&[(0x41, 0x5A), (0x61, 0x7A)]);
        assert_eq!(s.complement().complement(), s);
        assert!(!s.complement().contains(0x41));
        assert!(s.complement().contains(0x40));
        assert!(!s.complement().contains(0xD800));
    }

    #[test]
    fn remove_splits_ranges() {
        let mut s = CodePointSet::from_ranges(&[(0x00, 0x20)]);
        s.remove(0x0A);
        assert_eq!(s.ranges(), &[(0x00, 0x09), (0x0B, 0x20)]);
    }

    #[test]
    fn pairs_in_classes_become_astral_chars() {
        let spec = ClassSpec {
            negated: false,
            items: vec![ClassItem::Unit(0xD83D), ClassItem::Unit(0xDE00)],
        };
        let s = class_set(&spec);
        assert!(s.contains(0x1F600));
        assert!(!s.contains(0x1F601));
    }
}
