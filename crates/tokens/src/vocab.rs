//! The vocabulary of an encoding: token bytes to rank, and back to length.

use rustc_hash::FxHashMap;
use tiktoken_rs::CoreBPE;

use crate::encoding::Encoding;
use crate::error::TokenError;

/// The ordinary tokens of an encoding (special tokens are never produced:
/// `<|endoftext|>` in a text is encoded as ordinary text).
pub(crate) struct Vocabulary {
    ranks: FxHashMap<Vec<u8>, u32>,
    /// The rank of each single byte (every byte is a token of its own).
    byte_ranks: [u32; 256],
    /// Byte length of the token of each rank.
    lengths: Vec<u16>,
    max_token_bytes: usize,
    /// For the first four bytes of the tokens of four bytes or more, the
    /// length of the longest such token (see [`Vocabulary::longest_from`]).
    longest_by_head: FxHashMap<u32, u16>,
}

impl Vocabulary {
    /// Loads the vocabulary bundled with `tiktoken-rs`.
    ///
    /// tiktoken-rs parses its bundled file into a full encoder (which
    /// compiles its own regexes); its tokens are read back by rank and the
    /// encoder is dropped. OpenAI's vocabularies give their ordinary tokens
    /// the dense ranks `0..n` and their special tokens ranks after those, so
    /// the scan stops at the first rank that is missing or decodes to a
    /// special token.
    pub(crate) fn load(encoding: Encoding) -> Result<Self, TokenError> {
        let fail = |message: String| TokenError::Load { encoding: encoding.name(), message };
        let bpe: CoreBPE = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
        }
        .map_err(|err| fail(err.to_string()))?;
        let specials = bpe.special_tokens();
        let mut ranks = FxHashMap::with_capacity_and_hasher(1 << 18, Default::default());
        let mut lengths = Vec::with_capacity(1 << 18);
        for rank in 0..u32::MAX {
            let Ok(bytes) = bpe.decode_bytes(&[rank]) else {
                break;
            };
            if std::str::from_utf8(&bytes).is_ok_and(|s| specials.contains(s)) {
                break;
            }
            let len =
                u16::try_from(bytes.len()).map_err(|_| fail(format!("token {rank} is {} bytes long", bytes.len())))?;
            lengths.push(len);
            ranks.insert(bytes, rank);
        }
        let mut byte_ranks = [0u32; 256];
        for (byte, slot) in (0..=255u8).zip(byte_ranks.iter_mut()) {
            *slot = *ranks.get([byte].as_slice()).ok_or_else(|| fail(format!("byte {byte:#04x} is not a token")))?;
        }
        let max_token_bytes = lengths.iter().copied().max().map_or(1, usize::from);
        let mut longest_by_head = FxHashMap::default();
        for bytes in ranks.keys() {
            if let Some(head) = head_of(bytes) {
                let len = u16::try_from(bytes.len()).unwrap_or(u16::MAX);
                let longest = longest_by_head.entry(head).or_insert(len);
                *longest = (*longest).max(len);
            }
        }
        Ok(Vocabulary { ranks, byte_ranks, lengths, max_token_bytes, longest_by_head })
    }

    /// The rank of the token whose bytes are `bytes`, if there is one.
    #[inline]
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.ranks.get(bytes).copied()
    }

    /// The rank of the single-byte token `byte`.
    #[inline]
    pub(crate) fn byte_rank(&self, byte: u8) -> u32 {
        self.byte_ranks[usize::from(byte)]
    }

    /// Byte length of the token `rank` (0 for a rank outside the vocabulary).
    #[inline]
    pub(crate) fn token_len(&self, rank: u32) -> usize {
        usize::try_from(rank).ok().and_then(|i| self.lengths.get(i)).map_or(0, |&len| usize::from(len))
    }

    /// Number of ordinary tokens.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Length in bytes of the longest token.
    pub(crate) fn max_token_bytes(&self) -> usize {
        self.max_token_bytes
    }

    /// The length of the longest token of four bytes or more that starts
    /// with the first four bytes of `bytes` (0 when there is none, or when
    /// `bytes` is shorter than four). No token of four bytes or more that
    /// starts where `bytes` starts is longer.
    #[inline]
    pub(crate) fn longest_from(&self, bytes: &[u8]) -> usize {
        head_of(bytes).and_then(|head| self.longest_by_head.get(&head)).map_or(0, |&len| usize::from(len))
    }
}

/// The first four bytes of `bytes` as one number, if it has four.
#[inline]
fn head_of(bytes: &[u8]) -> Option<u32> {
    bytes.first_chunk::<4>().map(|head| u32::from_le_bytes(*head))
}
