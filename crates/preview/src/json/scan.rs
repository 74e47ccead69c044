//! A validating, streaming JSON scanner.
//!
//! It accepts exactly the documents `JSON.parse` accepts (RFC 8259: one value
//! with optional whitespace around it, whitespace being space, tab, line
//! feed and carriage return) and reports what it reads to a [`Sink`]. It
//! keeps one byte per open container and nothing else, runs in one pass and
//! does not recurse, so any nesting depth is fine.

/// Kinds of scalar values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
}

/// Where a bracket is in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// 1-based line number.
    pub line: u64,
    /// Byte offset.
    pub offset: usize,
}

/// Receives the parts of a document in order.
pub(crate) trait Sink<'a> {
    /// An object starts (its `{` is at `at`).
    fn begin_object(&mut self, at: Mark);
    /// A member's key, as written between its quotes (escapes not decoded).
    fn key(&mut self, raw: &'a str);
    /// The innermost open object ends (its `}` is at `at`).
    fn end_object(&mut self, at: Mark);
    /// An array starts (its `[` is at `at`).
    fn begin_array(&mut self, at: Mark);
    /// The innermost open array ends (its `]` is at `at`).
    fn end_array(&mut self, at: Mark);
    /// A scalar value: a literal or number as written, or a string's text
    /// between its quotes (escapes not decoded).
    fn scalar(&mut self, kind: Scalar, raw: &'a str);
}

/// Why a text is not a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JsonError {
    /// The text ends inside a value or before one.
    #[error("unexpected end of JSON input")]
    UnexpectedEnd,
    /// A byte that cannot start or continue what is expected there.
    #[error("unexpected character at byte {offset}")]
    UnexpectedByte {
        /// Byte offset of the character.
        offset: usize,
    },
    /// A backslash in a string not followed by a valid escape.
    #[error("invalid escape sequence at byte {offset}")]
    InvalidEscape {
        /// Byte offset of the backslash.
        offset: usize,
    },
    /// A character below U+0020 written unescaped inside a string.
    #[error("unescaped control character in string at byte {offset}")]
    ControlCharacter {
        /// Byte offset of the character.
        offset: usize,
    },
    /// A number not in the JSON grammar (`01`, `1.`, `.5`, `-`, `1e`).
    #[error("invalid number at byte {offset}")]
    InvalidNumber {
        /// Byte offset where the number becomes invalid.
        offset: usize,
    },
    /// Something other than whitespace after the document.
    #[error("unexpected content after the JSON document at byte {offset}")]
    TrailingContent {
        /// Byte offset of the content.
        offset: usize,
    },
}

/// `0x01` in every byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte of a word.
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `word` is below `n` (`n <= 0x80`).
fn has_byte_below(word: u64, n: u8) -> bool {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS != 0
}

/// Whether any byte of `word` equals `byte`.
fn has_byte(word: u64, byte: u8) -> bool {
    has_byte_below(word ^ (ONES * u64::from(byte)), 1)
}

/// Offset of the first byte at or after `from` that ends the fast run
/// through a string (see [`STRING_STOP`]), looking at eight bytes at a time.
fn string_stop(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        if has_byte(word, b'"') || has_byte(word, b'\\') || has_byte_below(word, 0x20) {
            break;
        }
        i += 8;
    }
    let rest = bytes.get(i..)?;
    rest.iter()
        .position(|&b| STRING_STOP[usize::from(b)])
        .map(|p| i + p)
}

/// Bytes that end the fast run through a string: the closing quote, a
/// backslash, or a control character (which is an error).
const STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = true;
        i += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// What the scanner expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Any value.
    Value,
    /// A value or `]` (right after `[`).
    ValueOrEnd,
    /// A key or `}` (right after `{`).
    KeyOrEnd,
    /// A key (after `,` in an object).
    Key,
    /// `,` or the end of the open container, or the end of the text.
    AfterValue,
}

/// Reading position in the text.
struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u64,
}

impl<'a> Cursor<'a> {
    fn skip_whitespace(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                }
                _ => break,
            }
        }
    }

    /// Where the byte just read is.
    fn mark(&self) -> Mark {
        Mark {
            line: self.line,
            offset: self.pos.saturating_sub(1),
        }
    }

    fn peek(&self) -> Result<u8, JsonError> {
        self.bytes
            .get(self.pos)
            .copied()
            .ok_or(JsonError::UnexpectedEnd)
    }

    fn expect_byte(&mut self, byte: u8) -> Result<(), JsonError> {
        if self.peek()? != byte {
            return Err(JsonError::UnexpectedByte { offset: self.pos });
        }
        self.pos += 1;
        Ok(())
    }

    /// Reads the string starting at the current `"`; returns its text
    /// between the quotes.
    fn string(&mut self) -> Result<&'a str, JsonError> {
        let start = self.pos + 1;
        let mut i = start;
        loop {
            i = string_stop(self.bytes, i).ok_or(JsonError::UnexpectedEnd)?;
            match self.bytes[i] {
                b'"' => {
                    self.pos = i + 1;
                    return self.text.get(start..i).ok_or(JsonError::UnexpectedEnd);
                }
                b'\\' => i = self.escape(i)?,
                _ => return Err(JsonError::ControlCharacter { offset: i }),
            }
        }
    }

    /// Checks the escape sequence at `at` (a backslash); returns the offset
    /// after it.
    fn escape(&self, at: usize) -> Result<usize, JsonError> {
        match self.bytes.get(at + 1) {
            None => Err(JsonError::UnexpectedEnd),
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
            Some(b'u') => {
                for k in at + 2..at + 6 {
                    match self.bytes.get(k) {
                        None => return Err(JsonError::UnexpectedEnd),
                        Some(b) if b.is_ascii_hexdigit() => {}
                        Some(_) => return Err(JsonError::InvalidEscape { offset: at }),
                    }
                }
                Ok(at + 6)
            }
            Some(_) => Err(JsonError::InvalidEscape { offset: at }),
        }
    }

    fn digits(&self, from: usize) -> usize {
        let run = self.bytes.get(from..).unwrap_or_default();
        from + run.iter().take_while(|b| b.is_ascii_digit()).count()
    }

    /// At least one digit at `from`; returns the offset after the digits.
    fn some_digits(&self, from: usize) -> Result<usize, JsonError> {
        let end = self.digits(from);
        if end > from {
            Ok(end)
        } else if from >= self.bytes.len() {
            Err(JsonError::UnexpectedEnd)
        } else {
            Err(JsonError::InvalidNumber { offset: from })
        }
    }

    /// Reads the number starting at the current position.
    fn number(&mut self) -> Result<&'a str, JsonError> {
        let start = self.pos;
        let mut i = start;
        if self.bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        i = match self.bytes.get(i) {
            Some(b'0') => i + 1,
            Some(b'1'..=b'9') => self.digits(i + 1),
            None => return Err(JsonError::UnexpectedEnd),
            Some(_) => return Err(JsonError::InvalidNumber { offset: i }),
        };
        if self.bytes.get(i) == Some(&b'.') {
            i = self.some_digits(i + 1)?;
        }
        if matches!(self.bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(self.bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            i = self.some_digits(i)?;
        }
        self.pos = i;
        self.text.get(start..i).ok_or(JsonError::UnexpectedEnd)
    }

    /// Reads the literal `word` (`true`, `false` or `null`).
    fn literal(&mut self, word: &'static str) -> Result<&'a str, JsonError> {
        let end = self.pos + word.len();
        match self.text.get(self.pos..end) {
            Some(found) if found == word => {
                self.pos = end;
                Ok(found)
            }
            _ if word.as_bytes().starts_with(&self.bytes[self.pos..]) => {
                Err(JsonError::UnexpectedEnd)
            }
            _ => Err(JsonError::UnexpectedByte { offset: self.pos }),
        }
    }
}

/// Scans `text` as one JSON document, reporting it to `sink`; returns the
/// number of lines of the text.
pub(crate) fn scan<'a>(text: &'a str, sink: &mut impl Sink<'a>) -> Result<u64, JsonError> {
    let mut cur = Cursor {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        line: 1,
    };
    // One entry per open container: true for an object.
    let mut open: Vec<bool> = Vec::new();
    let mut expect = Expect::Value;
    loop {
        cur.skip_whitespace();
        match expect {
            Expect::Value | Expect::ValueOrEnd => {
                let byte = cur.peek()?;
                if expect == Expect::ValueOrEnd && byte == b']' {
                    cur.pos += 1;
                    open.pop();
                    sink.end_array(cur.mark());
                    expect = Expect::AfterValue;
                    continue;
                }
                expect = Expect::AfterValue;
                match byte {
                    b'{' => {
                        cur.pos += 1;
                        open.push(true);
                        sink.begin_object(cur.mark());
                        expect = Expect::KeyOrEnd;
                    }
                    b'[' => {
                        cur.pos += 1;
                        open.push(false);
                        sink.begin_array(cur.mark());
                        expect = Expect::ValueOrEnd;
                    }
                    b'"' => {
                        let raw = cur.string()?;
                        sink.scalar(Scalar::String, raw);
                    }
                    b'-' | b'0'..=b'9' => {
                        let raw = cur.number()?;
                        sink.scalar(Scalar::Number, raw);
                    }
                    b't' => sink.scalar(Scalar::Bool, cur.literal("true")?),
                    b'f' => sink.scalar(Scalar::Bool, cur.literal("false")?),
                    b'n' => sink.scalar(Scalar::Null, cur.literal("null")?),
                    _ => return Err(JsonError::UnexpectedByte { offset: cur.pos }),
                }
            }
            Expect::KeyOrEnd | Expect::Key => {
                let byte = cur.peek()?;
                if expect == Expect::KeyOrEnd && byte == b'}' {
                    cur.pos += 1;
                    open.pop();
                    sink.end_object(cur.mark());
                    expect = Expect::AfterValue;
                    continue;
                }
                if byte != b'"' {
                    return Err(JsonError::UnexpectedByte { offset: cur.pos });
                }
                let raw = cur.string()?;
                sink.key(raw);
                cur.skip_whitespace();
                cur.expect_byte(b':')?;
                expect = Expect::Value;
            }
            Expect::AfterValue => {
                let Some(&in_object) = open.last() else {
                    return if cur.pos == cur.bytes.len() {
                        Ok(cur.line)
                    } else {
                        Err(JsonError::TrailingContent { offset: cur.pos })
                    };
                };
                let byte = cur.peek()?;
                cur.pos += 1;
                match byte {
                    b',' => {
                        expect = if in_object {
                            Expect::Key
                        } else {
                            Expect::Value
                        }
                    }
                    b'}' if in_object => {
                        open.pop();
                        sink.end_object(cur.mark());
                    }
                    b']' if !in_object => {
                        open.pop();
                        sink.end_array(cur.mark());
                    }
                    _ => {
                        return Err(JsonError::UnexpectedByte {
                            offset: cur.pos - 1,
                        })
                    }
                }
            }
        }
    }
}

/// A sink that keeps nothing: scanning with it only validates.
#[cfg(test)]
pub(crate) struct Validate;

#[cfg(test)]
impl<'a> Sink<'a> for Validate {
    fn begin_object(&mut self, _at: Mark) {}
    fn key(&mut self, _raw: &'a str) {}
    fn end_object(&mut self, _at: Mark) {}
    fn begin_array(&mut self, _at: Mark) {}
    fn end_array(&mut self, _at: Mark) {}
    fn scalar(&mut self, _kind: Scalar, _raw: &'a str) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn valid(text: &str) -> bool {
        scan(text, &mut Validate).is_ok()
    }

    /// JSON-ish text: valid documents with a byte changed, dropped or
    /// repeated, and random runs of JSON punctuation.
    fn json_like() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\n",
            "\"",
            "\"a\"",
            "\"\\u00e9\"",
            "\"\\x\"",
            "0",
            "-0",
            "12",
            "1.5",
            "1e9",
            "01",
            "1.",
            ".5",
            "-",
            "true",
            "fals",
            "null",
            "nul",
            "\"é😀\"",
            "\"\t\"",
            "\\",
        ]);
        prop::collection::vec(piece, 0..30).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn agrees_with_serde_json(text in json_like()) {
            let expected = serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok();
            prop_assert_eq!(valid(&text), expected, "{:?}", text);
        }

        #[test]
        fn agrees_with_serde_json_on_mutated_documents(
            value in prop::collection::vec(any::<(bool, i32, String)>(), 0..5),
            at in any::<prop::sample::Index>(),
            action in 0u8..3,
            byte in prop::sample::select(b"{}[],:\" 0a.-e\\\nt".to_vec()),
        ) {
            let text = serde_json::to_string_pretty(&value).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut bytes = text.into_bytes();
            let i = at.index(bytes.len());
            match action {
                0 => bytes[i] = byte,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, byte),
            }
            let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
            let expected = serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok();
            prop_assert_eq!(valid(&text), expected, "{:?}", text);
        }
    }

    #[test]
    fn accepts_what_json_parse_accepts() {
        for text in [
            "0",
            "-0",
            "1.5",
            "-1.5e10",
            "1E+2",
            "1e-2",
            "123456789012345678901234567890",
            "true",
            "false",
            "null",
            "\"\"",
            "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\"",
            "\"\\ud800\"",
            "\"\u{7f}\u{2028}é😀\"",
            "[]",
            "{}",
            " \t\r\n[1,2,{\"a\":[]}] \n",
            "{\"a\":1,\"a\":2}",
            "[[[[[]]]]]",
            "{\"\":null}",
        ] {
            assert!(valid(text), "{text:?}");
        }
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for text in [
            "",
            " ",
            "01",
            "-01",
            "1.",
            ".5",
            "-",
            "+1",
            "1e",
            "1e+",
            "0x10",
            "NaN",
            "Infinity",
            "tru",
            "nul",
            "True",
            "\"abc",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12G4\"",
            "\"a\tb\"",
            "\"a\nb\"",
            "[1,]",
            "[,1]",
            "{\"a\":1,}",
            "{a:1}",
            "{'a':1}",
            "{\"a\" 1}",
            "[1 2]",
            "[1]]",
            "[1}",
            "{\"a\":1]",
            "{} {}",
            "[]x",
            "\u{feff}[]",
            "[",
            "{\"a\":",
            "\"\\",
            "[\u{a0}]",
            "1 2",
        ] {
            assert!(!valid(text), "{text:?}");
        }
    }

    #[test]
    fn counts_lines_and_reports_lines_of_containers() {
        struct Lines(Vec<(char, u64, usize)>);
        impl<'a> Sink<'a> for Lines {
            fn begin_object(&mut self, at: Mark) {
                self.0.push(('{', at.line, at.offset));
            }
            fn key(&mut self, _raw: &'a str) {}
            fn end_object(&mut self, at: Mark) {
                self.0.push(('}', at.line, at.offset));
            }
            fn begin_array(&mut self, at: Mark) {
                self.0.push(('[', at.line, at.offset));
            }
            fn end_array(&mut self, at: Mark) {
                self.0.push((']', at.line, at.offset));
            }
            fn scalar(&mut self, _kind: Scalar, _raw: &'a str) {}
        }
        let text = "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}\n";
        let mut sink = Lines(Vec::new());
        assert_eq!(scan(text, &mut sink), Ok(7));
        let found: Vec<(char, u64)> = sink.0.iter().map(|&(c, line, _)| (c, line)).collect();
        assert_eq!(
            found,
            [('{', 1), ('[', 2), (']', 4), ('{', 5), ('}', 5), ('}', 6)]
        );
        for (c, _, offset) in sink.0 {
            assert_eq!(text.as_bytes()[offset], c as u8);
        }
    }

    #[test]
    fn word_at_a_time_search_finds_every_stop() {
        for stop in [b'"', b'\\', 0x00, 0x1f] {
            for at in 0..20 {
                let mut bytes = vec![b'a'; 20];
                bytes[at] = stop;
                assert_eq!(string_stop(&bytes, 0), Some(at));
                assert_eq!(string_stop(&bytes, at), Some(at));
            }
        }
        let plain: Vec<u8> = (0x20..=0xff).filter(|&b| b != b'"' && b != b'\\').collect();
        assert_eq!(string_stop(&plain, 0), None);
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let depth = 200_000;
        let text = "[".repeat(depth) + &"]".repeat(depth);
        assert!(valid(&text));
        let open = "[".repeat(depth);
        assert_eq!(scan(&open, &mut Validate), Err(JsonError::UnexpectedEnd));
        let objects = "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth);
        assert!(valid(&objects));
    }
}
