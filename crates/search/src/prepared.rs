//! [`PreparedText`]: stored content decoded and indexed once, for any number
//! of retrieval queries.

use std::mem::size_of;

use bytes::Bytes;

use crate::decode::DecodedText;
use crate::error::SearchError;
use crate::lines::{line_starts, LineIndex};
use crate::search::{run_retrieval_query_indexed, RetrievalQuery};

/// Stored content as the retrieval search sees it: decoded exactly as
/// [`decode_text`](crate::decode_text) decodes it (without copying content that is valid UTF-8:
/// the text shares the content's [`Bytes`]) and split into lines.
///
/// [`PreparedText::run`] gives the same result as
/// [`run_retrieval_query`](crate::run_retrieval_query) on the decoded text,
/// without decoding or indexing again.
#[derive(Debug)]
pub struct PreparedText {
    text: DecodedText,
    /// Start offset of every line of the text (see [`LineIndex`]).
    starts: Vec<usize>,
}

impl PreparedText {
    /// Decodes and indexes `content`.
    #[must_use]
    pub fn new(content: &Bytes) -> Self {
        let text = DecodedText::new(content);
        let mut starts = line_starts(text.as_str());
        starts.shrink_to_fit();
        PreparedText { text, starts }
    }

    /// The decoded text.
    #[must_use]
    pub fn text(&self) -> &str {
        self.text.as_str()
    }

    /// The text split into lines.
    #[must_use]
    pub fn lines(&self) -> LineIndex<'_> {
        LineIndex::with_starts(self.text(), &self.starts)
    }

    /// Runs a retrieval query (see
    /// [`run_retrieval_query`](crate::run_retrieval_query)).
    ///
    /// # Errors
    ///
    /// As [`run_retrieval_query`](crate::run_retrieval_query).
    pub fn run(&self, query: &RetrievalQuery<'_>, max_chars: usize) -> Result<String, SearchError> {
        run_retrieval_query_indexed(&self.lines(), query, max_chars)
    }

    /// Whether the text is the content's own bytes (valid UTF-8), shared
    /// with the content rather than a decoded copy.
    #[must_use]
    pub fn shares_content(&self) -> bool {
        self.text.shares_content()
    }

    /// Bytes of the text (shared or decoded).
    #[must_use]
    pub fn text_bytes(&self) -> usize {
        self.text.heap_bytes()
    }

    /// Bytes of the line index.
    #[must_use]
    pub fn index_bytes(&self) -> usize {
        self.starts.capacity() * size_of::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{run_retrieval_query, LineRange};

    fn query(
        pattern: Option<&str>,
        range: Option<(u64, u64)>,
        context: Option<u64>,
    ) -> RetrievalQuery<'_> {
        RetrievalQuery {
            pattern,
            line_range: range.map(|(start, end)| LineRange { start, end }),
            context_lines: context,
        }
    }

    #[test]
    fn valid_content_is_shared_and_invalid_content_decoded() {
        let valid = Bytes::from_static(b"\xEF\xBB\xBFa\nb\n");
        let prepared = PreparedText::new(&valid);
        assert!(prepared.shares_content());
        assert_eq!(prepared.text(), "a\nb\n");
        assert_eq!(prepared.text().as_ptr(), valid[3..].as_ptr());
        assert_eq!(prepared.lines().count(), 3);
        let invalid = Bytes::from_static(b"a\xFFb\nc");
        let prepared = PreparedText::new(&invalid);
        assert!(!prepared.shares_content());
        assert_eq!(prepared.text(), "a\u{fffd}b\nc");
        assert!(prepared.text_bytes() >= 7);
        assert_eq!(prepared.index_bytes(), 2 * size_of::<usize>());
    }

    #[test]
    fn answers_as_the_search_over_the_decoded_text() {
        for content in [
            &b""[..],
            b"\n",
            b"x",
            b"ERROR one\nok\n\xF0\x9F\x98\x80 ERROR two\xC0\n",
        ] {
            let bytes = Bytes::copy_from_slice(content);
            let prepared = PreparedText::new(&bytes);
            let text = crate::decode_text(content);
            for q in [
                query(Some("ERROR"), None, Some(0)),
                query(Some("ERROR"), Some((2, 3)), None),
                query(None, Some((1, 2)), None),
                query(None, None, Some(3)),
                query(Some("[unclosed"), None, None),
            ] {
                assert_eq!(
                    prepared.run(&q, 10_000),
                    run_retrieval_query(&text, &q, 10_000),
                    "{content:?} {q:?}"
                );
            }
        }
    }
}
