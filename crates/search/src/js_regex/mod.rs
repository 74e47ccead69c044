//! JavaScript regular expression handling: the SDK's pattern preparation
//! (length cap, nested-quantifier guard, literal fallback), an Annex B
//! parser and a translator to Rust regex syntax.

pub mod ast;
pub mod class;
pub mod parse;
pub mod translate;

use crate::utf16;

/// The SDK caps patterns at this many UTF-16 code units.
pub const MAX_PATTERN_UNITS: usize = 200;

/// How a pattern is to be matched against lines, as decided by the SDK logic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// The SDK's escaped-literal fallback: lines containing this substring.
    Literal(String),
    /// A regular expression in Rust syntax.
    Regex {
        /// Pattern text for the chosen engine.
        source: String,
        /// Whether it needs the backtracking engine (look-around or
        /// back-references).
        backtracking: bool,
        /// For backtracking patterns: a linear-engine pattern matching a
        /// superset of the lines, used to skip lines cheaply.
        prefilter: Option<String>,
    },
}

/// Reproduces the SDK's `MAX_PATTERN_LENGTH` truncation (in UTF-16 units;
/// a surrogate pair straddling the cut is dropped whole).
pub fn truncate_pattern(pattern: &str) -> &str {
    utf16::prefix(pattern, MAX_PATTERN_UNITS)
}

/// The SDK's ReDoS heuristic `/[+*]\s*\)\s*[+*]/` (JavaScript `\s`).
pub fn has_nested_quantifier(pattern: &str) -> bool {
    let chars: Vec<char> = pattern.chars().collect();
    let is_q = |c: char| c == '+' || c == '*';
    let is_ws = |c: char| class::is_js_space(u32::from(c));
    for (i, &c) in chars.iter().enumerate() {
        if !is_q(c) {
            continue;
        }
        let mut j = i + 1;
        while j < chars.len() && is_ws(chars[j]) {
            j += 1;
        }
        if chars.get(j) != Some(&')') {
            continue;
        }
        j += 1;
        while j < chars.len() && is_ws(chars[j]) {
            j += 1;
        }
        if chars.get(j).is_some_and(|&c| is_q(c)) {
            return true;
        }
    }
    false
}

/// Decides how the SDK would match `pattern` (the raw, untruncated pattern).
pub fn plan(pattern: &str) -> Plan {
    let truncated = truncate_pattern(pattern);
    if has_nested_quantifier(truncated) {
        return Plan::Literal(truncated.to_owned());
    }
    let units: Vec<u16> = truncated.encode_utf16().collect();
    match parse::parse(&units) {
        Ok(node) => {
            let backtracking = node.needs_backtracking();
            let flavor = if backtracking {
                translate::Flavor::Backtracking
            } else {
                translate::Flavor::Linear
            };
            let prefilter = backtracking
                .then(|| translate::translate(&translate::relax(node.clone()), translate::Flavor::Linear));
            Plan::Regex {
                source: translate::translate(&node, flavor),
                backtracking,
                prefilter,
            }
        }
        Err(_) => Plan::Literal(truncated.to_owned()),
    }
}

/// Whether JavaScript's `new RegExp(pattern)` (no flags) accepts `pattern`.
pub fn is_valid_js_regex(pattern: &str) -> bool {
    let units: Vec<u16> = pattern.encode_utf16().collect();
    parse::parse(&units).is_ok()
}
