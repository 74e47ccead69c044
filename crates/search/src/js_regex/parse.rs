//! Parser for ECMAScript regular expressions in non-unicode mode with the
//! Annex B (web compatibility) grammar, as accepted by V8's `new RegExp(p)`.
//!
//! It works on UTF-16 code units so that its accept/reject decision matches
//! JavaScript exactly (for example `[😀-😂]` is an out-of-order range of code
//! units and therefore a syntax error).

use super::ast::{Assertion, ClassItem, ClassSpec, Node, Predef};

/// Why JavaScript would reject a pattern (a `SyntaxError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid regular expression at code unit {pos}: {msg}")]
pub struct SyntaxError {
    /// UTF-16 offset where the problem was detected.
    pub pos: usize,
    /// What is wrong.
    pub msg: &'static str,
}

/// V8's cap on the number of captures a decimal escape may refer to.
const MAX_CAPTURES: u64 = 1 << 16;

/// Parses `pattern` (UTF-16 code units) as `new RegExp(pattern)` would.
pub fn parse(pattern: &[u16]) -> Result<Node, SyntaxError> {
    let (capture_count, has_named) = scan_captures(pattern);
    let mut p = Parser {
        src: pattern,
        pos: 0,
        capture_count,
        named_mode: has_named,
        next_capture: 1,
        names: Vec::new(),
        named_refs: Vec::new(),
        closed: Vec::new(),
    };
    let node = p.disjunction(0)?;
    if p.pos < p.src.len() {
        // Only an unmatched ')' stops the top-level disjunction early.
        return Err(p.err("unmatched ')'"));
    }
    let mut targets = Vec::with_capacity(p.named_refs.len());
    for (name, pos, closed) in &p.named_refs {
        match p.names.iter().find(|(n, _)| n == name) {
            // A reference to a group that is not closed yet at that point
            // (forward or self reference) always matches empty.
            Some((_, index)) if closed.contains(index) => targets.push(*index),
            Some(_) => targets.push(0),
            None => {
                return Err(SyntaxError {
                    pos: *pos,
                    msg: "invalid named capture referenced",
                })
            }
        }
    }
    Ok(resolve_named_refs(node, &targets))
}

/// Counts capturing groups and detects named groups, like V8's
/// `ScanForCaptures` (escapes and class contents are skipped).
fn scan_captures(src: &[u16]) -> (u32, bool) {
    let mut count = 0u32;
    let mut named = false;
    let mut i = 0;
    let mut in_class = false;
    while i < src.len() {
        let c = src[i];
        if c == u16::from(b'\\') {
            i += 2;
            continue;
        }
        if in_class {
            if c == u16::from(b']') {
                in_class = false;
            }
        } else if c == u16::from(b'[') {
            in_class = true;
        } else if c == u16::from(b'(') {
            if src.get(i + 1) != Some(&u16::from(b'?')) {
                count = count.saturating_add(1);
            } else if src.get(i + 2) == Some(&u16::from(b'<'))
                && !matches!(src.get(i + 3).copied(), Some(x) if x == u16::from(b'=') || x == u16::from(b'!'))
            {
                count = count.saturating_add(1);
                named = true;
            }
        }
        i += 1;
    }
    (count, named)
}

/// Named back-references are parsed as `Backref(NAMED_REF_BASE - k)`
/// placeholders (`k` indexes the reference list); this swaps in the group
/// numbers in `targets`.
fn resolve_named_refs(node: Node, targets: &[u32]) -> Node {
    if targets.is_empty() {
        return node;
    }
    match node {
        Node::Backref(n) if n > NAMED_REF_BASE - MAX_NAMED_REFS => {
            let k = (NAMED_REF_BASE - n) as usize;
            match targets.get(k).copied() {
                Some(0) | None => Node::Empty,
                Some(t) => Node::Backref(t),
            }
        }
        other => other.map_children(&mut |n| resolve_named_refs(n, targets)),
    }
}

struct Parser<'a> {
    src: &'a [u16],
    pos: usize,
    capture_count: u32,
    named_mode: bool,
    next_capture: u32,
    names: Vec<(Vec<u16>, u32)>,
    /// Named references: name, position, groups closed at that point.
    named_refs: Vec<(Vec<u16>, usize, Vec<u32>)>,
    /// Capture groups whose closing parenthesis has been parsed.
    closed: Vec<u32>,
}

fn is_digit(u: u16) -> bool {
    (u16::from(b'0')..=u16::from(b'9')).contains(&u)
}

fn is_octal(u: u16) -> bool {
    (u16::from(b'0')..=u16::from(b'7')).contains(&u)
}

fn is_ascii_letter(u: u16) -> bool {
    (u16::from(b'a')..=u16::from(b'z')).contains(&u)
        || (u16::from(b'A')..=u16::from(b'Z')).contains(&u)
}

fn hex_value(u: u16) -> Option<u16> {
    char::from_u32(u32::from(u))
        .and_then(|c| c.to_digit(16))
        .and_then(|d| u16::try_from(d).ok())
}

const fn u(c: u8) -> u16 {
    c as u16
}

impl Parser<'_> {
    fn err(&self, msg: &'static str) -> SyntaxError {
        SyntaxError { pos: self.pos, msg }
    }

    fn peek(&self) -> Option<u16> {
        self.src.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<u16> {
        self.src.get(self.pos + off).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(u(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn disjunction(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        let mut alts = vec![self.alternative(depth)?];
        while self.eat(b'|') {
            alts.push(self.alternative(depth)?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(alts)
        })
    }

    fn alternative(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        let mut terms = Vec::new();
        while let Some(c) = self.peek() {
            if c == u(b'|') {
                break;
            }
            if c == u(b')') {
                if depth == 0 {
                    return Err(self.err("unmatched ')'"));
                }
                break;
            }
            terms.push(self.term(depth)?);
        }
        Ok(match terms.len() {
            0 => Node::Empty,
            1 => terms.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(terms),
        })
    }

    fn term(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        let start = self.pos;
        let Some(c) = self.peek() else {
            return Err(self.err("unexpected end of pattern"));
        };
        // Assertions that can never be quantified.
        let assertion = match c {
            x if x == u(b'^') => Some(Assertion::Start),
            x if x == u(b'$') => Some(Assertion::End),
            x if x == u(b'\\') && self.peek_at(1) == Some(u(b'b')) => Some(Assertion::WordBoundary),
            x if x == u(b'\\') && self.peek_at(1) == Some(u(b'B')) => {
                Some(Assertion::NotWordBoundary)
            }
            _ => None,
        };
        if let Some(a) = assertion {
            self.pos += if c == u(b'\\') { 2 } else { 1 };
            if self.at_quantifier() {
                return Err(self.err("nothing to repeat"));
            }
            return Ok(Node::Assert(a));
        }
        let atom = match c {
            x if x == u(b'(') => {
                let (node, quantifiable) = self.group(depth)?;
                if !quantifiable {
                    if self.at_quantifier() {
                        return Err(self.err("invalid quantifier"));
                    }
                    return Ok(node);
                }
                node
            }
            x if x == u(b'[') => {
                self.pos += 1;
                Node::Class(self.class()?)
            }
            x if x == u(b'*') || x == u(b'+') || x == u(b'?') => {
                return Err(self.err("nothing to repeat"));
            }
            x if x == u(b'{') => {
                if self.braced_quantifier_at(self.pos).is_some() {
                    return Err(self.err("nothing to repeat"));
                }
                self.pos += 1;
                Node::Unit(c)
            }
            x if x == u(b'.') => {
                self.pos += 1;
                Node::Dot
            }
            x if x == u(b'\\') => self.atom_escape()?,
            _ => {
                self.pos += 1;
                Node::Unit(c)
            }
        };
        debug_assert!(self.pos > start);
        self.quantified(atom)
    }

    /// Whether a quantifier starts at the current position.
    fn at_quantifier(&self) -> bool {
        match self.peek() {
            Some(x) if x == u(b'*') || x == u(b'+') || x == u(b'?') => true,
            Some(x) if x == u(b'{') => self.braced_quantifier_at(self.pos).is_some(),
            _ => false,
        }
    }

    /// Parses `{n}`, `{n,}` or `{n,m}` at `at`; returns (min, max, end).
    /// Counts saturate like V8 (huge values mean "infinity").
    fn braced_quantifier_at(&self, at: usize) -> Option<(u32, Option<u32>, usize)> {
        let src = self.src;
        let mut i = at;
        if src.get(i) != Some(&u(b'{')) {
            return None;
        }
        i += 1;
        let (min, next) = read_decimal(src, i)?;
        i = next;
        match src.get(i).copied() {
            Some(x) if x == u(b'}') => Some((min, Some(min), i + 1)),
            Some(x) if x == u(b',') => {
                i += 1;
                if src.get(i) == Some(&u(b'}')) {
                    return Some((min, None, i + 1));
                }
                let (max, next) = read_decimal(src, i)?;
                if src.get(next) == Some(&u(b'}')) {
                    Some((min, Some(max), next + 1))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, SyntaxError> {
        let (min, max) = match self.peek() {
            Some(x) if x == u(b'*') => {
                self.pos += 1;
                (0, None)
            }
            Some(x) if x == u(b'+') => {
                self.pos += 1;
                (1, None)
            }
            Some(x) if x == u(b'?') => {
                self.pos += 1;
                (0, Some(1))
            }
            Some(x) if x == u(b'{') => match self.braced_quantifier_at(self.pos) {
                Some((min, max, end)) => {
                    if let Some(max) = max {
                        if min > max {
                            return Err(self.err("numbers out of order in {} quantifier"));
                        }
                    }
                    self.pos = end;
                    (min, max)
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        let greedy = !self.eat(b'?');
        // V8 treats saturated counts as infinity.
        let max = max.filter(|&m| m != u32::MAX);
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    /// Parses a group starting at `(`. Returns the node and whether a
    /// quantifier may follow it.
    fn group(&mut self, depth: usize) -> Result<(Node, bool), SyntaxError> {
        self.pos += 1; // '('
        if !self.eat(b'?') {
            let index = self.next_capture;
            self.next_capture = self.next_capture.saturating_add(1);
            let body = self.group_body(depth)?;
            self.closed.push(index);
            return Ok((
                Node::Group {
                    capture: Some(index),
                    node: Box::new(body),
                },
                true,
            ));
        }
        match self.peek() {
            Some(x) if x == u(b':') => {
                self.pos += 1;
                let body = self.group_body(depth)?;
                Ok((
                    Node::Group {
                        capture: None,
                        node: Box::new(body),
                    },
                    true,
                ))
            }
            Some(x) if x == u(b'=') || x == u(b'!') => {
                self.pos += 1;
                let body = self.group_body(depth)?;
                Ok((
                    Node::Look {
                        behind: false,
                        negate: x == u(b'!'),
                        node: Box::new(body),
                    },
                    true,
                ))
            }
            Some(x) if x == u(b'<') => {
                match self.peek_at(1) {
                    Some(y) if y == u(b'=') || y == u(b'!') => {
                        self.pos += 2;
                        let body = self.group_body(depth)?;
                        return Ok((
                            Node::Look {
                                behind: true,
                                negate: y == u(b'!'),
                                node: Box::new(body),
                            },
                            false,
                        ));
                    }
                    _ => {}
                }
                self.pos += 1;
                let name = self.group_name()?;
                if self.names.iter().any(|(n, _)| *n == name) {
                    return Err(self.err("duplicate capture group name"));
                }
                let index = self.next_capture;
                self.next_capture = self.next_capture.saturating_add(1);
                self.names.push((name, index));
                let body = self.group_body(depth)?;
                self.closed.push(index);
                Ok((
                    Node::Group {
                        capture: Some(index),
                        node: Box::new(body),
                    },
                    true,
                ))
            }
            _ => Err(self.err("invalid group")),
        }
    }

    fn group_body(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        let body = self.disjunction(depth + 1)?;
        if !self.eat(b')') {
            return Err(self.err("unterminated group"));
        }
        Ok(body)
    }

    /// Parses `name>` (after `<`) of a group or `\k<name>`.
    fn group_name(&mut self) -> Result<Vec<u16>, SyntaxError> {
        let mut name = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("invalid capture group name"));
            };
            if c == u(b'>') {
                self.pos += 1;
                if first {
                    return Err(self.err("invalid capture group name"));
                }
                return Ok(name);
            }
            let cp = if c == u(b'\\') {
                self.pos += 1;
                if !self.eat(b'u') {
                    return Err(self.err("invalid capture group name"));
                }
                self.name_unicode_escape()?
            } else if (0xD800..=0xDBFF).contains(&c) {
                self.pos += 1;
                match self.peek() {
                    Some(l) if (0xDC00..=0xDFFF).contains(&l) => {
                        self.pos += 1;
                        super::class::combine_pair(c, l)
                    }
                    _ => u32::from(c),
                }
            } else {
                self.pos += 1;
                u32::from(c)
            };
            let ok = char::from_u32(cp).is_some_and(|ch| {
                if first {
                    is_id_start(ch)
                } else {
                    is_id_continue(ch)
                }
            });
            if !ok {
                return Err(self.err("invalid capture group name"));
            }
            first = false;
            let mut buf = [0u16; 2];
            if let Some(ch) = char::from_u32(cp) {
                name.extend_from_slice(ch.encode_utf16(&mut buf));
            }
        }
    }

    /// `\u` escape inside a group name (after `\u`): `XXXX`, a surrogate
    /// pair `XXXX\uXXXX`, or `{X...}`.
    fn name_unicode_escape(&mut self) -> Result<u32, SyntaxError> {
        if self.eat(b'{') {
            let mut v: u32 = 0;
            let mut n = 0;
            while let Some(h) = self.peek().and_then(hex_value) {
                v = v.saturating_mul(16).saturating_add(u32::from(h));
                n += 1;
                self.pos += 1;
            }
            if n == 0 || !self.eat(b'}') || v > 0x10FFFF {
                return Err(self.err("invalid unicode escape"));
            }
            return Ok(v);
        }
        let Some(hi) = self.hex4(self.pos) else {
            return Err(self.err("invalid unicode escape"));
        };
        self.pos += 4;
        if (0xD800..=0xDBFF).contains(&hi)
            && self.peek() == Some(u(b'\\'))
            && self.peek_at(1) == Some(u(b'u'))
        {
            if let Some(lo) = self.hex4(self.pos + 2) {
                if (0xDC00..=0xDFFF).contains(&lo) {
                    self.pos += 6;
                    return Ok(super::class::combine_pair(hi, lo));
                }
            }
        }
        Ok(u32::from(hi))
    }

    fn hex4(&self, at: usize) -> Option<u16> {
        let mut v = 0u16;
        for k in 0..4 {
            let h = self.src.get(at + k).copied().and_then(hex_value)?;
            v = v * 16 + h;
        }
        Some(v)
    }

    fn hex2(&self, at: usize) -> Option<u16> {
        let a = self.src.get(at).copied().and_then(hex_value)?;
        let b = self.src.get(at + 1).copied().and_then(hex_value)?;
        Some(a * 16 + b)
    }

    /// Legacy octal escape starting at the current digit (`\0`-`\377`).
    fn octal(&mut self) -> u16 {
        let mut v = self.peek().map_or(0, |d| d - u(b'0'));
        self.pos += 1;
        if let Some(d) = self.peek().filter(|&d| is_octal(d)) {
            v = v * 8 + (d - u(b'0'));
            self.pos += 1;
            if v < 32 {
                if let Some(d) = self.peek().filter(|&d| is_octal(d)) {
                    v = v * 8 + (d - u(b'0'));
                    self.pos += 1;
                }
            }
        }
        v
    }

    /// Escapes shared by atoms and classes: control, hex, unicode escapes.
    /// The current position is the character after the backslash.
    fn character_escape(&mut self, c: u16) -> Option<u16> {
        let v = match c {
            x if x == u(b'f') => 0x0C,
            x if x == u(b'n') => 0x0A,
            x if x == u(b'r') => 0x0D,
            x if x == u(b't') => 0x09,
            x if x == u(b'v') => 0x0B,
            x if x == u(b'x') => {
                if let Some(v) = self.hex2(self.pos + 1) {
                    self.pos += 3;
                    return Some(v);
                }
                u(b'x')
            }
            x if x == u(b'u') => {
                if let Some(v) = self.hex4(self.pos + 1) {
                    self.pos += 5;
                    return Some(v);
                }
                u(b'u')
            }
            _ => return None,
        };
        self.pos += 1;
        Some(v)
    }

    /// Parses an escape outside a class (the current position is `\`).
    fn atom_escape(&mut self) -> Result<Node, SyntaxError> {
        self.pos += 1;
        let Some(c) = self.peek() else {
            return Err(self.err("\\ at end of pattern"));
        };
        if let Some(p) = predef(c) {
            self.pos += 1;
            return Ok(Node::Class(ClassSpec {
                negated: false,
                items: vec![ClassItem::Predef(p)],
            }));
        }
        if (u(b'1')..=u(b'9')).contains(&c) {
            let digits_start = self.pos;
            let mut v: u64 = 0;
            let mut i = self.pos;
            let mut overflow = false;
            while let Some(d) = self.src.get(i).copied().filter(|&d| is_digit(d)) {
                v = v * 10 + u64::from(d - u(b'0'));
                i += 1;
                if v > MAX_CAPTURES {
                    overflow = true;
                    break;
                }
            }
            if !overflow && v <= u64::from(self.capture_count) {
                self.pos = i;
                let index = u32::try_from(v).unwrap_or(u32::MAX);
                // A reference to a group that is not closed yet (forward or
                // self reference) always matches empty in JavaScript.
                if !self.closed.contains(&index) {
                    return Ok(Node::Empty);
                }
                return Ok(Node::Backref(index));
            }
            self.pos = digits_start;
            if c == u(b'8') || c == u(b'9') {
                self.pos += 1;
                return Ok(Node::Unit(c));
            }
            return Ok(Node::Unit(self.octal()));
        }
        if c == u(b'0') {
            return Ok(Node::Unit(self.octal()));
        }
        if c == u(b'c') {
            if let Some(l) = self.peek_at(1).filter(|&l| is_ascii_letter(l)) {
                self.pos += 2;
                return Ok(Node::Unit(l % 32));
            }
            // `\c` without a control letter is a literal backslash; the `c`
            // is parsed as the next term.
            return Ok(Node::Unit(u(b'\\')));
        }
        if c == u(b'k') && self.named_mode {
            let at = self.pos - 1;
            self.pos += 1;
            if !self.eat(b'<') {
                return Err(self.err("invalid named reference"));
            }
            let name = self.group_name()?;
            self.named_refs.push((name, at, self.closed.clone()));
            let idx = u32::try_from(self.named_refs.len() - 1).unwrap_or(u32::MAX);
            return Ok(Node::Backref(NAMED_REF_BASE - idx));
        }
        if let Some(v) = self.character_escape(c) {
            return Ok(Node::Unit(v));
        }
        // Identity escape: any other character stands for itself.
        self.pos += 1;
        Ok(Node::Unit(c))
    }

    /// Parses a class body (after `[`) through the closing `]`.
    fn class(&mut self) -> Result<ClassSpec, SyntaxError> {
        let negated = self.eat(b'^');
        let mut items = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("unterminated character class"));
            };
            if c == u(b']') {
                self.pos += 1;
                return Ok(ClassSpec { negated, items });
            }
            let a = self.class_atom()?;
            let dash_range = self.peek() == Some(u(b'-'))
                && self.peek_at(1).is_some()
                && self.peek_at(1) != Some(u(b']'));
            if !dash_range {
                items.push(a);
                continue;
            }
            self.pos += 1; // '-'
            let b = self.class_atom()?;
            match (a, b) {
                (ClassItem::Unit(x), ClassItem::Unit(y)) => {
                    if x > y {
                        return Err(self.err("range out of order in character class"));
                    }
                    items.push(ClassItem::Range(x, y));
                }
                // Annex B: a range with a class escape on either side is a
                // union of both sides and a literal '-'.
                _ => {
                    items.push(a);
                    items.push(ClassItem::Unit(u(b'-')));
                    items.push(b);
                }
            }
        }
    }

    fn class_atom(&mut self) -> Result<ClassItem, SyntaxError> {
        let Some(c) = self.peek() else {
            return Err(self.err("unterminated character class"));
        };
        if c != u(b'\\') {
            self.pos += 1;
            return Ok(ClassItem::Unit(c));
        }
        self.pos += 1;
        let Some(c) = self.peek() else {
            return Err(self.err("\\ at end of pattern"));
        };
        if let Some(p) = predef(c) {
            self.pos += 1;
            return Ok(ClassItem::Predef(p));
        }
        if c == u(b'b') {
            self.pos += 1;
            return Ok(ClassItem::Unit(0x08));
        }
        if c == u(b'c') {
            if let Some(l) = self
                .peek_at(1)
                .filter(|&l| is_ascii_letter(l) || is_digit(l) || l == u(b'_'))
            {
                self.pos += 2;
                return Ok(ClassItem::Unit(l % 32));
            }
            return Ok(ClassItem::Unit(u(b'\\')));
        }
        if is_octal(c) {
            return Ok(ClassItem::Unit(self.octal()));
        }
        if c == u(b'k') && self.named_mode {
            return Err(self.err("invalid escape"));
        }
        if let Some(v) = self.character_escape(c) {
            return Ok(ClassItem::Unit(v));
        }
        self.pos += 1;
        Ok(ClassItem::Unit(c))
    }
}

/// Placeholder numbers for named back-references, resolved after parsing.
const NAMED_REF_BASE: u32 = u32::MAX;
/// Upper bound on placeholders (patterns are at most 200 code units).
const MAX_NAMED_REFS: u32 = 1 << 20;

fn predef(c: u16) -> Option<Predef> {
    Some(match u8::try_from(c).ok()? {
        b'd' => Predef::Digit,
        b'D' => Predef::NotDigit,
        b's' => Predef::Space,
        b'S' => Predef::NotSpace,
        b'w' => Predef::Word,
        b'W' => Predef::NotWord,
        _ => return None,
    })
}

/// Reads a non-empty decimal number, saturating at `u32::MAX`.
fn read_decimal(src: &[u16], mut i: usize) -> Option<(u32, usize)> {
    let start = i;
    let mut v: u32 = 0;
    while let Some(d) = src.get(i).copied().filter(|&d| is_digit(d)) {
        v = v.saturating_mul(10).saturating_add(u32::from(d - u(b'0')));
        i += 1;
    }
    (i > start).then_some((v, i))
}

/// Approximation of Unicode `ID_Start` plus `$` and `_`.
fn is_id_start(c: char) -> bool {
    c == '$' || c == '_' || c.is_alphabetic()
}

/// Approximation of Unicode `ID_Continue` plus `$`, ZWNJ and ZWJ.
fn is_id_continue(c: char) -> bool {
    is_id_start(c)
        || c.is_alphanumeric()
        || c == '\u{200C}'
        || c == '\u{200D}'
        || matches!(c, '\u{0300}'..='\u{036F}' | '\u{203F}'..='\u{2040}')
}
