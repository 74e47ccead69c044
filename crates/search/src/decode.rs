//! `new TextDecoder().decode(bytes)` for UTF-8.

use std::borrow::Cow;

use bytes::Bytes;

/// Decodes `bytes` like `new TextDecoder().decode(bytes)`: one leading UTF-8
/// byte order mark is removed and each invalid sequence becomes U+FFFD,
/// following the WHATWG "maximal subpart" rule (which Rust's lossy decoding
/// also implements).
pub fn decode_text(bytes: &[u8]) -> Cow<'_, str> {
    let body = without_bom(bytes);
    // A SIMD validity check is many times faster than the lossy decoder's scan,
    // and stored text is almost always valid.
    match simdutf8::basic::from_utf8(body) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(body),
    }
}

/// Stored content decoded as [`decode_text`] decodes it, held without a copy
/// when it is valid UTF-8 (the text shares the content's [`Bytes`]), or text
/// made elsewhere.
#[derive(Debug, Clone)]
pub struct DecodedText(Text);

#[derive(Debug, Clone)]
enum Text {
    /// The content itself (after a byte order mark), checked to be valid
    /// UTF-8 when the [`DecodedText`] was made. `Bytes` never changes the
    /// bytes it shares, so they stay valid.
    Shared(Bytes),
    /// Text of its own: content decoded with replacement characters (it was
    /// not valid UTF-8), or made from a `String`.
    Owned(String),
}

impl DecodedText {
    /// Decodes `content` (sharing it when it is valid UTF-8).
    #[must_use]
    pub fn new(content: &Bytes) -> Self {
        DecodedText(match decode_text(content) {
            Cow::Borrowed(valid) => Text::Shared(content.slice_ref(valid.as_bytes())),
            Cow::Owned(decoded) => Text::Owned(decoded),
        })
    }

    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // SAFETY: `Text::Shared` is only made (in `DecodedText::new`) from
            // bytes that `decode_text` found to be valid UTF-8, and the bytes
            // behind a `Bytes` are never changed while it shares them.
            Text::Shared(bytes) => unsafe { std::str::from_utf8_unchecked(bytes) },
            Text::Owned(text) => text,
        }
    }

    /// Whether the text is the content's own bytes, shared with it rather
    /// than a copy.
    #[must_use]
    pub fn shares_content(&self) -> bool {
        matches!(self.0, Text::Shared(_))
    }

    /// Bytes the text occupies (shared or its own).
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Text::Shared(bytes) => bytes.len(),
            Text::Owned(text) => text.capacity(),
        }
    }
}

impl From<String> for DecodedText {
    fn from(text: String) -> Self {
        DecodedText(Text::Owned(text))
    }
}

/// `bytes` after one leading UTF-8 byte order mark, which the decoder drops.
pub(crate) fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected strings were produced by Node 22's `TextDecoder`.
    #[test]
    fn matches_whatwg_decoder() {
        let cases: &[(&[u8], &str)] = &[
            (&[0xef, 0xbb, 0xbf, 0x61], "a"),
            (&[0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf], "\u{feff}"),
            (&[0xc0, 0x80], "\u{fffd}\u{fffd}"),
            (&[0xe0, 0x80, 0x80], "\u{fffd}\u{fffd}\u{fffd}"),
            (&[0xed, 0xa0, 0x80], "\u{fffd}\u{fffd}\u{fffd}"),
            (&[0xf0, 0x9f, 0x98], "\u{fffd}"),
            (
                &[0xf4, 0x90, 0x80, 0x80],
                "\u{fffd}\u{fffd}\u{fffd}\u{fffd}",
            ),
            (&[0xe2, 0x82, 0x41], "\u{fffd}A"),
            (&[0xff, 0x61], "\u{fffd}a"),
            (&[0xf0, 0x9f, 0x98, 0x80], "😀"),
            (&[], ""),
        ];
        for (bytes, want) in cases {
            assert_eq!(decode_text(bytes), *want, "{bytes:x?}");
        }
    }

    #[test]
    fn valid_input_is_borrowed() {
        assert!(matches!(decode_text(b"plain"), Cow::Borrowed("plain")));
    }
}
