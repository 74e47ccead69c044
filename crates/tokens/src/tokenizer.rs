//! Loading the vocabularies (once per process) and encoding.

use std::sync::OnceLock;

use crate::bpe;
use crate::encoding::Encoding;
use crate::error::TokenError;
use crate::pretokenize::Pretokenizer;
use crate::vocab::Vocabulary;

/// A loaded encoding: its pre-tokenizer and vocabulary.
///
/// Encoding follows tiktoken exactly: the pre-tokenizer regex cuts the text
/// into pieces, and each piece that is not a token by itself is byte-pair
/// merged. Special tokens are not recognised: `<|endoftext|>` in a text is
/// ordinary text (tiktoken's `encode_ordinary`).
pub struct Tokenizer {
    encoding: Encoding,
    pretokenizer: Pretokenizer,
    vocabulary: Vocabulary,
}

/// The tokenizer of `encoding`, loaded on first use and then shared for the
/// life of the process. Loading parses the bundled vocabulary (a few tenths
/// of a second for `o200k_base`); concurrent first callers wait for one load.
pub fn tokenizer(encoding: Encoding) -> Result<&'static Tokenizer, TokenError> {
    static O200K: OnceLock<Result<Tokenizer, TokenError>> = OnceLock::new();
    static CL100K: OnceLock<Result<Tokenizer, TokenError>> = OnceLock::new();
    let cell = match encoding {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
    };
    cell.get_or_init(|| Tokenizer::load(encoding)).as_ref().map_err(Clone::clone)
}

impl Tokenizer {
    fn load(encoding: Encoding) -> Result<Self, TokenError> {
        let pretokenizer = Pretokenizer::new(encoding)?;
        let vocabulary = Vocabulary::load(encoding)?;
        Ok(Tokenizer { encoding, pretokenizer, vocabulary })
    }

    /// The encoding this tokenizer implements.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The token ids of `text`, the same as tiktoken's `encode_ordinary`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut tokens = Vec::with_capacity(text.len() / 4 + 1);
        self.pretokenizer.for_each_piece(text, |piece| {
            bpe::merge(&self.vocabulary, piece.as_bytes(), &mut |rank| tokens.push(rank))
        });
        tokens
    }

    /// Number of tokens of `text`, in one pass on the calling thread without
    /// collecting the tokens.
    pub(crate) fn count_whole(&self, text: &str) -> usize {
        let mut count = 0;
        self.pretokenizer
            .for_each_piece(text, |piece| bpe::merge(&self.vocabulary, piece.as_bytes(), &mut |_| count += 1));
        count
    }

    /// The length in bytes of the longest token of the vocabulary, so that
    /// every text of `n` bytes has at least `ceil(n / max_token_bytes)` tokens.
    pub fn max_token_bytes(&self) -> usize {
        self.vocabulary.max_token_bytes()
    }

    /// Total byte length of `tokens`.
    pub(crate) fn bytes_of(&self, tokens: &[u32]) -> usize {
        tokens.iter().map(|&rank| self.vocabulary.token_len(rank)).sum()
    }

    /// The vocabulary, for the merge tests.
    #[cfg(test)]
    pub(crate) fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_once_and_reports_its_encoding() {
        for encoding in Encoding::ALL {
            let first = tokenizer(encoding).expect("bundled vocabulary loads");
            let second = tokenizer(encoding).expect("bundled vocabulary loads");
            assert!(std::ptr::eq(first, second));
            assert_eq!(first.encoding(), encoding);
        }
    }

    #[test]
    fn vocabulary_sizes_and_longest_tokens() {
        let o200k = tokenizer(Encoding::O200kBase).expect("loads");
        let cl100k = tokenizer(Encoding::Cl100kBase).expect("loads");
        assert_eq!(o200k.vocabulary.len(), 199_998);
        assert_eq!(cl100k.vocabulary.len(), 100_256);
        for t in [o200k, cl100k] {
            let vocab = &t.vocabulary;
            let lengths: Vec<usize> = (0..vocab.len() as u32).map(|r| vocab.token_len(r)).collect();
            assert_eq!(lengths.iter().max(), Some(&t.max_token_bytes()));
            assert!(t.max_token_bytes() >= 16);
            assert!(lengths.iter().all(|&len| len >= 1));
        }
    }

    #[test]
    fn token_lengths_match_the_decoded_tokens() {
        let t = tokenizer(Encoding::O200kBase).expect("loads");
        let text = "Token lengths: naïve café, 日本語, 😀 and <|endoftext|>.";
        let tokens = t.encode(text);
        assert_eq!(t.bytes_of(&tokens), text.len());
        assert_eq!(t.vocabulary.token_len(u32::MAX), 0);
        assert_eq!(t.count_whole(text), tokens.len());
    }
}
