//! Reading the document: a strict, iterative JSON reader that builds
//! jaq-json values directly.
//!
//! jaq-json's own parser accepts a superset of JSON (`NaN`, `Infinity`, `+1`,
//! `#` comments, byte strings) and recurses once per nesting level, so a
//! document of a million `[` would overflow the stack. This reader instead
//! accepts exactly RFC 8259 JSON values separated by whitespace (a stream, as
//! jq reads it), keeps an explicit stack, refuses nesting deeper than
//! [`MAX_DEPTH`], reports line and column of the first error, and measures each
//! value's depth. It produces the same values as jaq-json would: integers as
//! machine or big integers, other numbers keep their literal text, strings
//! keep invalid UTF-8 bytes as they are (printed as U+FFFD). Strings without
//! escapes share one copy of the document instead of being allocated one by one.

use crate::cost;
use crate::error::QueryError;
use crate::limits::MAX_DEPTH;
use crate::meter;
use crate::value::Value;
use bytes::Bytes;
use jaq_json::{Map, Num, Rc, Val};

/// Longest integer literal read as an exact integer (4096 bits, the widest
/// integer arithmetic keeps exact); longer ones keep their literal text.
const MAX_INT_DIGITS: usize = 1234;

/// A reading failure: byte offset and message.
type Failure = (usize, String);

/// Parses a document into its top-level values.
///
/// Strings of the result share `doc`'s buffer.
pub(crate) fn parse(doc: &Bytes) -> Result<Vec<Value>, QueryError> {
    let (doc, shift) = match doc.strip_prefix(b"\xEF\xBB\xBF") {
        Some(_) => (doc.slice(3..), 3),
        None => (doc.clone(), 0),
    };
    let not_json = |(offset, message): Failure| {
        let (line, column) = line_column(&doc, offset);
        let column = if line == 1 { column + shift } else { column };
        QueryError::NotJson {
            line,
            column,
            message,
        }
    };
    let values = read_all(&doc).map_err(not_json)?;
    if values.is_empty() {
        return Err(not_json((
            0,
            "empty document, expected a JSON value".into(),
        )));
    }
    meter::check_time();
    Ok(values)
}

/// 1-based line and byte column of `offset`.
fn line_column(doc: &[u8], offset: usize) -> (usize, usize) {
    let before = &doc[..offset.min(doc.len())];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let column = match before.iter().rposition(|&b| b == b'\n') {
        Some(nl) => offset - nl,
        None => offset + 1,
    };
    (line, column)
}

/// Whether `s` is exactly one JSON number.
pub(crate) fn is_json_number(s: &[u8]) -> bool {
    let buf = Bytes::new();
    let mut r = Reader {
        s,
        buf: &buf,
        i: 0,
        pending: 0,
    };
    r.number_end().is_ok() && r.i == s.len()
}

/// Reads all values of a document.
fn read_all(buf: &Bytes) -> Result<Vec<Value>, Failure> {
    let mut r = Reader {
        s: buf,
        buf,
        i: 0,
        pending: 0,
    };
    let mut values = Vec::new();
    loop {
        r.skip_ws();
        if r.i >= buf.len() {
            r.flush();
            return Ok(values);
        }
        let v = r.value()?;
        r.pending += cost::VALUE;
        values.push(v);
    }
}

/// An array or object being read; its items (for objects: keys and values
/// alternating) are the values of the reader's stack from `start` on.
struct Frame {
    is_arr: bool,
    start: usize,
}

/// Charges gathered before they are passed to the meter in one go.
const PENDING_BYTES: usize = 256 << 10;

struct Reader<'a> {
    s: &'a [u8],
    /// The same bytes, for sharing string slices.
    buf: &'a Bytes,
    i: usize,
    /// Memory of small values read but not yet charged (at most [`PENDING_BYTES`]).
    pending: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn fail<T>(&self, message: &str) -> Result<T, Failure> {
        Err((self.i, message.to_string()))
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// Charges the memory gathered so far.
    fn flush(&mut self) {
        meter::charge(core::mem::take(&mut self.pending));
    }

    /// Charges `bytes` (with what is pending) before a container is allocated.
    fn charge(&mut self, bytes: usize) {
        self.pending = self.pending.saturating_add(bytes);
        if self.pending >= PENDING_BYTES {
            self.flush();
        }
    }

    /// One complete value, read iteratively.
    ///
    /// The items of all open containers wait on one stack; a container is
    /// allocated at its exact size when it closes, after its memory is charged.
    fn value(&mut self) -> Result<Value, Failure> {
        let mut open: Vec<Frame> = Vec::new();
        let mut stack: Vec<Val> = Vec::new();
        let mut deepest = 0;
        let mut count = 0u32;
        loop {
            count = count.wrapping_add(1);
            if count.is_multiple_of(4096) {
                self.flush();
                meter::check_time();
            }
            // at the start of a value
            self.skip_ws();
            let mut v = match self.peek() {
                None => return self.fail("EOF while parsing a value"),
                Some(c @ (b'[' | b'{')) => {
                    if open.len() >= MAX_DEPTH {
                        return self.fail(&format!("nested deeper than {MAX_DEPTH} levels"));
                    }
                    self.i += 1;
                    deepest = deepest.max(open.len() + 1);
                    self.skip_ws();
                    match (c, self.peek()) {
                        (b'[', Some(b']')) => {
                            self.i += 1;
                            self.charge(cost::ARRAY);
                            Val::Arr(Rc::new(Vec::new()))
                        }
                        (b'{', Some(b'}')) => {
                            self.i += 1;
                            self.charge(cost::OBJECT);
                            Val::obj(Map::default())
                        }
                        (b'[', _) => {
                            open.push(Frame {
                                is_arr: true,
                                start: stack.len(),
                            });
                            continue;
                        }
                        _ => {
                            open.push(Frame {
                                is_arr: false,
                                start: stack.len(),
                            });
                            let key = self.key()?;
                            self.push(&mut stack, key);
                            continue;
                        }
                    }
                }
                Some(b'"') => self.string()?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.literal(b"true", Val::Bool(true))?,
                Some(b'f') => self.literal(b"false", Val::Bool(false))?,
                Some(b'n') => self.literal(b"null", Val::Null)?,
                Some(_) => return self.fail("expected value"),
            };
            // a value is complete: store it, closing the containers it completes
            loop {
                let Some(frame) = open.last() else {
                    self.flush();
                    return Ok(Value::parsed(v, deepest));
                };
                let is_arr = frame.is_arr;
                self.push(&mut stack, v);
                self.skip_ws();
                match (self.peek(), is_arr) {
                    (Some(b','), _) => {
                        self.i += 1;
                        if !is_arr {
                            let key = self.key()?;
                            self.push(&mut stack, key);
                        }
                        break;
                    }
                    (Some(b']'), true) | (Some(b'}'), false) => {
                        self.i += 1;
                        let start = open.pop().map_or(0, |f| f.start);
                        v = if is_arr {
                            self.close_array(&mut stack, start)
                        } else {
                            self.close_object(&mut stack, start)
                        };
                    }
                    (None, true) => return self.fail("EOF while parsing a list"),
                    (None, false) => return self.fail("EOF while parsing an object"),
                    (Some(_), true) => return self.fail("expected `,` or `]`"),
                    (Some(_), false) => return self.fail("expected `,` or `}`"),
                }
            }
        }
    }

    /// Puts a value on the stack, charging the stack's growth first.
    fn push(&mut self, stack: &mut Vec<Val>, v: Val) {
        if stack.len() == stack.capacity() {
            let cap = stack.capacity();
            let grown = (2 * cap).max(16);
            self.pending += cost::slots(grown) - cost::slots(cap);
            self.flush();
            stack.reserve_exact(grown - cap);
        }
        stack.push(v);
    }

    /// The array of the stack's values from `start` on.
    fn close_array(&mut self, stack: &mut Vec<Val>, start: usize) -> Val {
        let n = stack.len() - start;
        if start == 0 {
            // the outermost container: the stack itself (its slots are charged) becomes the array
            self.charge(cost::ARRAY);
            return Val::Arr(Rc::new(core::mem::take(stack)));
        }
        self.charge(cost::array(n));
        Val::Arr(Rc::new(stack.drain(start..).collect()))
    }

    /// The object of the stack's keys and values from `start` on.
    fn close_object(&mut self, stack: &mut Vec<Val>, start: usize) -> Val {
        let n = (stack.len() - start) / 2;
        self.charge(cost::object(n));
        let mut map = Map::with_capacity_and_hasher(n, Default::default());
        let mut items = stack.drain(start..);
        while let (Some(k), Some(v)) = (items.next(), items.next()) {
            map.insert(k, v);
        }
        Val::obj(map)
    }

    /// An object key and the colon after it.
    fn key(&mut self) -> Result<Val, Failure> {
        self.skip_ws();
        let key = match self.peek() {
            Some(b'"') => self.string()?,
            None => return self.fail("EOF while parsing an object"),
            Some(_) => return self.fail("key must be a string"),
        };
        self.skip_ws();
        match self.peek() {
            Some(b':') => {
                self.i += 1;
                Ok(key)
            }
            None => self.fail("EOF while parsing an object"),
            Some(_) => self.fail("expected `:`"),
        }
    }

    fn literal(&mut self, word: &[u8], v: Val) -> Result<Val, Failure> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            if !self.at_value_end() {
                return self.fail("invalid literal");
            }
            Ok(v)
        } else {
            self.fail("expected value")
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    /// Checks the number grammar; returns whether the number is an integer.
    fn number_end(&mut self) -> Result<bool, Failure> {
        let mut int = true;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.fail("invalid number"),
        }
        if self.peek() == Some(b'.') {
            int = false;
            self.i += 1;
            if self.digits() == 0 {
                return self.fail("invalid number");
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            int = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.fail("invalid number");
            }
        }
        if !self.at_value_end() {
            return self.fail("invalid number");
        }
        Ok(int)
    }

    /// Whether a number or literal may end here: at the end, before white space or a
    /// delimiter (`2-3` and `true1` are one invalid token, as in jq and serde_json, not
    /// two values).
    fn at_value_end(&self) -> bool {
        matches!(
            self.peek(),
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'"' | b':' | b',' | b']' | b'}' | b'[' | b'{')
        )
    }

    /// A number: machine or big integer, else its literal text (as jaq-json).
    fn number(&mut self) -> Result<Val, Failure> {
        let start = self.i;
        let int = self.number_end()?;
        let text = &self.s[start..self.i];
        if int && text.len() <= 18 {
            let (neg, digits) = match text.split_first() {
                Some((b'-', rest)) => (true, rest),
                _ => (false, text),
            };
            let n = digits
                .iter()
                .fold(0isize, |n, d| n * 10 + isize::from(d - b'0'));
            return Ok(Val::Num(Num::Int(if neg { -n } else { n })));
        }
        // only ASCII digits, signs, dots and exponents remain here
        let text = std::str::from_utf8(text).unwrap_or("0");
        let v = if int && text.len() > MAX_INT_DIGITS {
            // reading a big integer takes time quadratic in its length: keep the literal
            Val::Num(Num::Dec(Rc::new(text.to_string())))
        } else {
            <Val as jaq_core::ValT>::from_num(text).unwrap_or(Val::Null)
        };
        if let Val::Num(n) = &v {
            self.charge(cost::number(n));
        }
        Ok(v)
    }

    fn hex4(&mut self) -> Result<u32, Failure> {
        let digits = self.s.get(self.i..self.i + 4).unwrap_or_default();
        if digits.len() == 4 && digits.iter().all(u8::is_ascii_hexdigit) {
            self.i += 4;
            let hex = |d: &u8| char::from(*d).to_digit(16).unwrap_or(0);
            Ok(digits.iter().fold(0, |n, d| n * 16 + hex(d)))
        } else {
            self.fail("invalid \\u escape")
        }
    }

    /// A string; without escapes it shares the document's bytes.
    fn string(&mut self) -> Result<Val, Failure> {
        let start = self.i;
        self.i += 1;
        let special = |b: &u8| *b == b'"' || *b == b'\\' || *b < 0x20;
        let run = self.s[self.i..].iter().position(special);
        let Some(run) = run else {
            return Err((start, "EOF while parsing a string".into()));
        };
        if self.s[self.i + run] == b'"' {
            let text = self.buf.slice(self.i..self.i + run);
            self.i += run + 1;
            self.charge(cost::STRING);
            return Ok(Val::utf8_str(text));
        }
        let mut out = self.s[self.i..self.i + run].to_vec();
        self.i += run;
        loop {
            match self.peek() {
                None => return Err((start, "EOF while parsing a string".into())),
                Some(b'"') => {
                    self.i += 1;
                    out.shrink_to_fit();
                    self.charge(cost::string(out.len()));
                    return Ok(Val::utf8_str(out));
                }
                Some(0x00..=0x1f) => {
                    return self
                        .fail("control character (\\u0000-\\u001F) found while parsing a string")
                }
                Some(b'\\') => {
                    self.i += 1;
                    let simple = match self.peek() {
                        Some(b'"') => Some('"'),
                        Some(b'\\') => Some('\\'),
                        Some(b'/') => Some('/'),
                        Some(b'b') => Some('\u{8}'),
                        Some(b'f') => Some('\u{c}'),
                        Some(b'n') => Some('\n'),
                        Some(b'r') => Some('\r'),
                        Some(b't') => Some('\t'),
                        Some(b'u') => None,
                        _ => return self.fail("invalid escape"),
                    };
                    self.i += 1;
                    let c = match simple {
                        Some(c) => c,
                        None => self.unicode_escape()?,
                    };
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                Some(_) => {
                    let run = self.s[self.i..]
                        .iter()
                        .position(special)
                        .unwrap_or(self.s.len() - self.i);
                    out.extend_from_slice(&self.s[self.i..self.i + run]);
                    self.i += run;
                }
            }
        }
    }

    /// The character of a `\uXXXX` escape (with its low surrogate, if any).
    fn unicode_escape(&mut self) -> Result<char, Failure> {
        let unit = self.hex4()?;
        if (0xDC00..=0xDFFF).contains(&unit) {
            return self.fail("lone surrogate in \\u escape");
        }
        let code = if (0xD800..=0xDBFF).contains(&unit) {
            if !self.s[self.i..].starts_with(b"\\u") {
                return self.fail("lone surrogate in \\u escape");
            }
            self.i += 2;
            let low = self.hex4()?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return self.fail("lone surrogate in \\u escape");
            }
            0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
        } else {
            unit
        };
        match char::from_u32(code) {
            Some(c) => Ok(c),
            None => self.fail("invalid \\u escape"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(doc: &str) -> Result<Vec<String>, Failure> {
        let buf = Bytes::copy_from_slice(doc.as_bytes());
        let values = read_all(&buf)?;
        Ok(values.iter().map(|v| format!("{}:{v}", v.depth)).collect())
    }

    #[test]
    fn reads_json_and_streams() {
        let doc = " {\"a\": [1, 2.50e-3, \"x\\u00e9\\ud83d\\ude00\\n\", -0, 123456789012345678901234567890]} 3 null";
        let want = [
            "2:{\"a\":[1,2.50e-3,\"xé😀\\n\",0,123456789012345678901234567890]}",
            "0:3",
            "0:null",
        ];
        assert_eq!(read(doc), Ok(want.map(String::from).to_vec()));
        assert_eq!(read("[[[]],{}]"), Ok(vec!["3:[[[]],{}]".to_string()]));
        assert_eq!(
            read("{\"a\":1,\"b\":2,\"a\":3}"),
            Ok(vec!["1:{\"a\":3,\"b\":2}".to_string()])
        );
        assert_eq!(
            read("\"a\\\"b\\\\c\\/d\\te\""),
            Ok(vec!["0:\"a\\\"b\\\\c/d\\te\"".to_string()])
        );
        assert!(is_json_number(b"-0.5E+10"));
        assert!(!is_json_number(b"01.5"));
    }

    #[test]
    fn refuses_non_json() {
        let fails = |d: &str| read(d).err().unwrap_or_default().1;
        assert_eq!(fails("[1,]"), "expected value");
        assert_eq!(fails("{\"a\" 1}"), "expected `:`");
        assert_eq!(fails("[1 2]"), "expected `,` or `]`");
        assert_eq!(fails("{\"a\":1 \"b\":2}"), "expected `,` or `}`");
        assert_eq!(fails("NaN"), "expected value");
        assert_eq!(
            fails("\"a\tb\""),
            "control character (\\u0000-\\u001F) found while parsing a string"
        );
        assert_eq!(fails("[01]"), "invalid number");
        assert_eq!(fails("\"\\ud800\""), "lone surrogate in \\u escape");
        assert_eq!(fails("\"\\x\""), "invalid escape");
        assert_eq!(fails("{1:2}"), "key must be a string");
        assert_eq!(fails("["), "EOF while parsing a value");
        assert_eq!(fails("[1"), "EOF while parsing a list");
        assert_eq!(fails("{\"a\":1"), "EOF while parsing an object");
        assert_eq!(fails("\"abc"), "EOF while parsing a string");
        assert_eq!(fails("tru"), "expected value");
    }

    #[test]
    fn positions() {
        assert_eq!(line_column(b"[\n 1,\n  x]", 8), (3, 3));
        assert_eq!(line_column(b"[x]", 1), (1, 2));
    }
}
