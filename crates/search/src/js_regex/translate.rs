//! Translation of a parsed JavaScript pattern into Rust `regex` /
//! `fancy-regex` syntax with JavaScript meanings.
//!
//! Every consuming construct is emitted without `\n`, so a match can never
//! span two lines; this lets the linear engine run over a whole text in
//! multi-line mode and still agree with per-line `RegExp.test`.

use std::fmt::Write as _;

use super::ast::{Assertion, ClassItem, ClassSpec, Node};
use super::class::{class_set, combine_pair, dot_set, CodePointSet};

/// Which engine the emitted syntax is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// The `regex` crate (no look-around, no back-references).
    Linear,
    /// `fancy-regex` (look-around, back-references, conditionals).
    Backtracking,
}

/// A class that matches nothing, accepted by both engines.
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";
const WORD: &str = "[0-9A-Za-z_]";

/// Emits `node` as a pattern for `flavor`.
pub fn translate(node: &Node, flavor: Flavor) -> String {
    let mut out = String::new();
    emit(node, flavor, &mut out);
    out
}

/// A look-around-free approximation of `node` that matches every line the
/// original matches (and possibly more): look-arounds are dropped and
/// back-references match any run of characters. Used as a linear-time
/// prefilter for backtracking patterns.
pub fn relax(node: Node) -> Node {
    match node {
        Node::Look { .. } => Node::Empty,
        Node::Backref(_) => Node::Repeat {
            node: Box::new(Node::Class(ClassSpec {
                negated: true,
                items: vec![ClassItem::Unit(0x0A)],
            })),
            min: 0,
            max: None,
            greedy: true,
        },
        other => other.map_children(&mut relax),
    }
}

fn is_high(u: u16) -> bool {
    (0xD800..=0xDBFF).contains(&u)
}

fn is_low(u: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&u)
}

fn emit(node: &Node, flavor: Flavor, out: &mut String) {
    match node {
        Node::Empty => out.push_str("(?:)"),
        Node::Unit(u) => emit_unit(*u, out),
        Node::Class(spec) => {
            let mut set = class_set(spec);
            set.remove(0x0A);
            emit_set(&set, out);
        }
        Node::Dot => emit_set(&dot_set(), out),
        Node::Assert(a) => emit_assertion(*a, flavor, out),
        Node::Group { capture, node } => {
            out.push_str(if flavor == Flavor::Backtracking && capture.is_some() {
                "("
            } else {
                "(?:"
            });
            emit(node, flavor, out);
            out.push(')');
        }
        Node::Look {
            behind,
            negate,
            node,
        } => {
            out.push_str(match (behind, negate) {
                (false, false) => "(?=",
                (false, true) => "(?!",
                (true, false) => "(?<=",
                (true, true) => "(?<!",
            });
            emit(node, flavor, out);
            out.push(')');
        }
        Node::Backref(n) => {
            // JavaScript: a reference to a group that has not participated
            // matches the empty string.
            let _ = write!(out, r"(?({n})\{n}|)");
        }
        Node::Repeat {
            node,
            min,
            max,
            greedy,
        } => emit_repeat(node, *min, *max, *greedy, flavor, out),
        Node::Concat(items) => emit_concat(items, flavor, out),
        Node::Alt(alts) => {
            out.push_str("(?:");
            for (i, alt) in alts.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(alt, flavor, out);
            }
            out.push(')');
        }
    }
}

fn emit_concat(items: &[Node], flavor: Flavor, out: &mut String) {
    let mut i = 0;
    while i < items.len() {
        if let (Node::Unit(h), Some(Node::Unit(l))) = (&items[i], items.get(i + 1)) {
            if is_high(*h) && is_low(*l) {
                emit_char(combine_pair(*h, *l), out);
                i += 2;
                continue;
            }
        }
        // Without the `u` flag a quantifier after an astral character applies to its
        // low half only (`😀+` is "high half, then one or more low halves"). Text has
        // no lone halves, so: at least one low half means exactly the character;
        // none means the character's high half alone (matched as the whole
        // character); two or more can never match.
        if let (Node::Unit(h), Some(Node::Repeat { node, min, .. })) = (&items[i], items.get(i + 1)) {
            if let Node::Unit(l) = node.as_ref() {
                if is_high(*h) && is_low(*l) {
                    match *min {
                        0 => emit(&items[i], flavor, out),
                        1 => emit_char(combine_pair(*h, *l), out),
                        _ => out.push_str(NEVER),
                    }
                    i += 2;
                    continue;
                }
            }
        }
        emit(&items[i], flavor, out);
        i += 1;
    }
}

fn emit_repeat(
    node: &Node,
    min: u32,
    max: Option<u32>,
    greedy: bool,
    flavor: Flavor,
    out: &mut String,
) {
    if node.is_zero_width() {
        // An iteration that matches empty is rejected by JavaScript's
        // empty-check, so optional repeats of assertions match trivially and
        // required ones match like the assertion itself.
        if min > 0 {
            emit(node, flavor, out);
        } else if flavor == Flavor::Backtracking && node.has_capture() {
            out.push_str("(?:|(?:");
            emit(node, flavor, out);
            out.push_str("))");
        } else {
            out.push_str("(?:)");
        }
        return;
    }
    out.push_str("(?:");
    emit(node, flavor, out);
    out.push(')');
    match (min, max) {
        (0, None) => out.push('*'),
        (1, None) => out.push('+'),
        (0, Some(1)) => out.push('?'),
        (n, None) => {
            let _ = write!(out, "{{{n},}}");
        }
        (n, Some(m)) if n == m => {
            let _ = write!(out, "{{{n}}}");
        }
        (n, Some(m)) => {
            let _ = write!(out, "{{{n},{m}}}");
        }
    }
    if !greedy {
        out.push('?');
    }
}

fn emit_assertion(a: Assertion, flavor: Flavor, out: &mut String) {
    match (a, flavor) {
        (Assertion::Start, _) => out.push('^'),
        (Assertion::End, _) => out.push('$'),
        (Assertion::WordBoundary, Flavor::Linear) => out.push_str(r"(?-u:\b)"),
        (Assertion::NotWordBoundary, Flavor::Linear) => out.push_str(r"(?-u:\B)"),
        (Assertion::WordBoundary, Flavor::Backtracking) => {
            let _ = write!(out, "(?:(?<={WORD})(?!{WORD})|(?<!{WORD})(?={WORD}))");
        }
        (Assertion::NotWordBoundary, Flavor::Backtracking) => {
            let _ = write!(out, "(?:(?<={WORD})(?={WORD})|(?<!{WORD})(?!{WORD}))");
        }
    }
}

/// A literal code unit. Lone surrogates stand for the astral characters
/// they are half of.
fn emit_unit(u: u16, out: &mut String) {
    if is_high(u) {
        let mut set = CodePointSet::new();
        set.add(combine_pair(u, 0xDC00), combine_pair(u, 0xDFFF));
        emit_set(&set, out);
    } else if is_low(u) {
        let mut set = CodePointSet::new();
        for h in 0xD800u16..=0xDBFF {
            let c = combine_pair(h, u);
            set.add(c, c);
        }
        emit_set(&set, out);
    } else {
        emit_char(u32::from(u), out);
    }
}

fn emit_char(c: u32, out: &mut String) {
    if c == 0x0A {
        // Lines never contain '\n'.
        out.push_str(NEVER);
        return;
    }
    match char::from_u32(c) {
        Some(ch) if ch.is_ascii_alphanumeric() || ch == ' ' => out.push(ch),
        _ => {
            let _ = write!(out, r"\x{{{c:X}}}");
        }
    }
}

fn emit_set(set: &CodePointSet, out: &mut String) {
    if set.is_empty() {
        out.push_str(NEVER);
        return;
    }
    out.push('[');
    for &(a, b) in set.ranges() {
        if a == b {
            let _ = write!(out, r"\x{{{a:X}}}");
        } else {
            let _ = write!(out, r"\x{{{a:X}}}-\x{{{b:X}}}");
        }
    }
    out.push(']');
}
