//! Byte-pair merging of one piece into tokens.
//!
//! A piece starts as one part per byte. While some two adjacent parts
//! concatenate to a vocabulary entry, the pair whose entry has the lowest
//! rank is merged (the leftmost one on a tie: equal ranks mean equal bytes).
//! The remaining parts are the piece's tokens. This is tiktoken's rule; the
//! ranks of OpenAI's vocabularies are their merge priorities.
//!
//! Short pieces (nearly all) use a flat list scanned for the lowest rank at
//! every merge; long pieces (a run of thousands of spaces, a long word) use a
//! heap over a linked list, so their cost grows as `n log n`, not `n²`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::vocab::Vocabulary;

/// Pieces up to this many bytes use the flat list.
const FLAT_MAX: usize = 128;

/// Marks "no vocabulary entry" where a rank is expected.
const NONE: u32 = u32::MAX;

/// Calls `emit` with the rank of each token of `piece`, in order.
pub(crate) fn merge(vocab: &Vocabulary, piece: &[u8], emit: &mut impl FnMut(u32)) {
    if let Some(rank) = vocab.rank(piece) {
        emit(rank);
    } else if piece.len() <= FLAT_MAX {
        merge_flat(vocab, piece, emit);
    } else {
        merge_heap(vocab, piece, emit);
    }
}

/// One part of a piece being merged, in the flat list.
#[derive(Clone, Copy)]
struct FlatPart {
    start: usize,
    /// The token rank of this part.
    rank: u32,
    /// The rank of this part joined with the next one, or [`NONE`].
    pair: u32,
}

fn merge_flat(vocab: &Vocabulary, piece: &[u8], emit: &mut impl FnMut(u32)) {
    let n = piece.len();
    let mut parts: Vec<FlatPart> = (0..n)
        .map(|i| FlatPart {
            start: i,
            rank: vocab.byte_rank(piece[i]),
            pair: if i + 1 < n { vocab.rank(&piece[i..i + 2]).unwrap_or(NONE) } else { NONE },
        })
        .collect();
    let end_of = |parts: &[FlatPart], i: usize| parts.get(i + 1).map_or(n, |p| p.start);
    loop {
        let mut best = NONE;
        let mut at = 0;
        for (i, part) in parts.iter().enumerate() {
            if part.pair < best {
                best = part.pair;
                at = i;
            }
        }
        if best == NONE {
            break;
        }
        parts.remove(at + 1);
        parts[at].rank = best;
        let end = end_of(&parts, at);
        parts[at].pair = if at + 1 < parts.len() {
            vocab.rank(&piece[parts[at].start..end_of(&parts, at + 1)]).unwrap_or(NONE)
        } else {
            NONE
        };
        if at > 0 {
            parts[at - 1].pair = vocab.rank(&piece[parts[at - 1].start..end]).unwrap_or(NONE);
        }
    }
    for part in &parts {
        emit(part.rank);
    }
}

/// One part of a piece being merged, in the linked list.
#[derive(Clone, Copy)]
struct LinkedPart {
    /// One past the last byte of the part.
    end: usize,
    /// Index (start byte) of the previous part, if any.
    prev: Option<usize>,
    rank: u32,
    pair: u32,
    alive: bool,
}

fn merge_heap(vocab: &Vocabulary, piece: &[u8], emit: &mut impl FnMut(u32)) {
    let n = piece.len();
    // Parts are indexed by their start byte; the next part starts at `end`.
    let mut parts: Vec<LinkedPart> = (0..n)
        .map(|i| LinkedPart {
            end: i + 1,
            prev: i.checked_sub(1),
            rank: vocab.byte_rank(piece[i]),
            pair: if i + 1 < n { vocab.rank(&piece[i..i + 2]).unwrap_or(NONE) } else { NONE },
            alive: true,
        })
        .collect();
    let mut heap: BinaryHeap<Reverse<(u32, usize)>> =
        parts.iter().enumerate().filter(|(_, p)| p.pair != NONE).map(|(i, p)| Reverse((p.pair, i))).collect();
    while let Some(Reverse((pair, left))) = heap.pop() {
        // A stale entry: the part is gone, or its pair changed (a different
        // pair of bytes has a different rank).
        if !parts[left].alive || parts[left].pair != pair {
            continue;
        }
        let right = parts[left].end;
        let right_end = parts[right].end;
        parts[right].alive = false;
        parts[left].end = right_end;
        parts[left].rank = pair;
        if right_end < n {
            parts[right_end].prev = Some(left);
        }
        parts[left].pair =
            if right_end < n { vocab.rank(&piece[left..parts[right_end].end]).unwrap_or(NONE) } else { NONE };
        if parts[left].pair != NONE {
            heap.push(Reverse((parts[left].pair, left)));
        }
        if let Some(prev) = parts[left].prev {
            parts[prev].pair = vocab.rank(&piece[prev..right_end]).unwrap_or(NONE);
            if parts[prev].pair != NONE {
                heap.push(Reverse((parts[prev].pair, prev)));
            }
        }
    }
    let mut at = 0;
    while at < n {
        emit(parts[at].rank);
        at = parts[at].end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{tokenizer, Encoding};

    fn both(vocab: &Vocabulary, piece: &[u8]) -> (Vec<u32>, Vec<u32>) {
        let (mut flat, mut heap) = (Vec::new(), Vec::new());
        merge_flat(vocab, piece, &mut |r| flat.push(r));
        merge_heap(vocab, piece, &mut |r| heap.push(r));
        (flat, heap)
    }

    #[test]
    fn flat_and_heap_merges_agree() {
        for encoding in Encoding::ALL {
            let vocab = tokenizer(encoding).expect("loads").vocabulary();
            for piece in [
                "a",
                "ab",
                "internationalization",
                "antidisestablishmentarianism",
                "                                   ",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "日本語のテキストです",
                "😀😀😀🎉",
                "zqxjkvbwpfy",
            ] {
                let (flat, heap) = both(vocab, piece.as_bytes());
                assert_eq!(flat, heap, "{encoding}: {piece:?}");
                assert_eq!(flat.iter().map(|&r| vocab.token_len(r)).sum::<usize>(), piece.len());
            }
        }
    }

    #[test]
    fn long_pieces_merge_quickly() {
        let vocab = tokenizer(Encoding::O200kBase).expect("loads").vocabulary();
        let piece = " ".repeat(200_000);
        let mut count = 0;
        merge(vocab, piece.as_bytes(), &mut |_| count += 1);
        assert!(count > 0 && count <= 200_000);
    }
}
