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
//!
//! A long piece (a run of CJK text without punctuation is one piece however
//! long) is first cut where no token can span the cut: if no token of the
//! vocabulary starts before offset `p` and ends after it, no part ever spans
//! `p` (a part is only ever a token), so no merge joins the two sides. Each
//! side then takes the merges it takes in the whole, in the same order (the
//! lowest rank first, the leftmost on a tie), and the tokens of the sides are
//! the tokens of the whole. The cut parts are short, merged in cache.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::vocab::Vocabulary;

/// Pieces up to this many bytes use the flat list.
const FLAT_MAX: usize = 128;

/// Marks "no vocabulary entry" where a rank is expected.
const NONE: u32 = u32::MAX;

/// Pieces longer than this are cut where no token can span the cut.
const CUT_MIN: usize = 256;
/// How far apart cuts are sought.
const CUT_EVERY: usize = 32;
/// How many offsets after a target are tried for a cut.
const CUT_SEARCH: usize = 64;
/// Vocabulary lookups allowed per byte of a piece in the search for cuts;
/// once spent, the rest of the piece is merged whole.
const CUT_LOOKUPS_PER_BYTE: usize = 8;

/// Calls `emit` with the rank of each token of `piece`, in order.
pub(crate) fn merge(vocab: &Vocabulary, piece: &[u8], emit: &mut impl FnMut(u32)) {
    if piece.len() <= CUT_MIN {
        return merge_part(vocab, piece, emit);
    }
    let mut start = 0;
    for_each_cut(vocab, piece, &mut |cut| {
        merge_part(vocab, &piece[start..cut], emit);
        start = cut;
    });
    merge_part(vocab, &piece[start..], emit);
}

/// Calls `cut` with offsets of `piece`, in increasing order, that no token
/// spans, about [`CUT_EVERY`] bytes apart where the text allows. Where no
/// cut is found near a target, the next target is twice as far (a run of
/// spaces, where tokens of every length overlap, is not searched byte by
/// byte), and the whole search spends at most [`CUT_LOOKUPS_PER_BYTE`]
/// lookups per byte.
fn for_each_cut(vocab: &Vocabulary, piece: &[u8], cut: &mut impl FnMut(usize)) {
    let n = piece.len();
    let budget = n.saturating_mul(CUT_LOOKUPS_PER_BYTE);
    let mut lookups = 0;
    let mut gap = CUT_EVERY;
    let mut at = CUT_EVERY;
    while at < n && lookups < budget {
        let end = at.saturating_add(CUT_SEARCH).min(n);
        let found = (at..end).find(|&p| !is_continuation(piece[p]) && no_token_spans(vocab, piece, p, &mut lookups));
        match found {
            Some(p) => {
                cut(p);
                gap = CUT_EVERY;
                at = p.saturating_add(gap);
            }
            None => {
                gap = gap.saturating_mul(2);
                at = end.saturating_add(gap);
            }
        }
    }
}

/// Whether `byte` continues a UTF-8 character (cuts are sought between characters).
#[inline]
fn is_continuation(byte: u8) -> bool {
    byte & 0xc0 == 0x80
}

/// Whether no token of the vocabulary occurs in `piece` starting before `p`
/// and ending after it (`0 < p < piece.len()`). Counts its lookups into
/// `lookups`.
fn no_token_spans(vocab: &Vocabulary, piece: &[u8], p: usize, lookups: &mut usize) -> bool {
    let n = piece.len();
    // Tokens of two and three bytes: they start at most two bytes before `p`.
    let short = [(p.checked_sub(1), p + 1), (p.checked_sub(1), p + 2), (p.checked_sub(2), p + 1)];
    for (start, end) in short {
        if let Some(start) = start {
            if end <= n {
                *lookups += 1;
                if vocab.rank(&piece[start..end]).is_some() {
                    return false;
                }
            }
        }
    }
    // Tokens of four bytes or more: those starting at `a` are no longer than
    // the longest token that shares their first four bytes.
    let first = p.saturating_sub(vocab.max_token_bytes().saturating_sub(1));
    for a in first..p {
        *lookups += 1;
        let longest = vocab.longest_from(&piece[a..]);
        if a + longest <= p {
            continue;
        }
        for b in (p + 1).max(a + 4)..=(a + longest).min(n) {
            *lookups += 1;
            if vocab.rank(&piece[a..b]).is_some() {
                return false;
            }
        }
    }
    true
}

/// [`merge`] without cuts.
fn merge_part(vocab: &Vocabulary, piece: &[u8], emit: &mut impl FnMut(u32)) {
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

    /// Long pieces merged in cut parts give the tokens of the whole piece
    /// merged at once, and a run of CJK text is really cut.
    #[test]
    fn cut_pieces_merge_as_whole_pieces() {
        let runs = [
            "漢字かなカナ한국어".repeat(200),
            "東京都天気晴明日雨降".repeat(150),
            "abcabcabcab".repeat(100),
            " ".repeat(3000),
            "ﾊﾝｶｸ".repeat(300),
            "ааааббббвввв".repeat(100),
            "e\u{301}\u{308}".repeat(400),
        ];
        for encoding in Encoding::ALL {
            let vocab = tokenizer(encoding).expect("loads").vocabulary();
            for run in &runs {
                let (mut cut, mut whole) = (Vec::new(), Vec::new());
                merge(vocab, run.as_bytes(), &mut |r| cut.push(r));
                merge_heap(vocab, run.as_bytes(), &mut |r| whole.push(r));
                assert_eq!(cut, whole, "{encoding}: {}", &run[..24]);
            }
            let cjk = "漢字かなカナ한국어".repeat(200);
            let mut cuts = 0;
            for_each_cut(vocab, cjk.as_bytes(), &mut |_| cuts += 1);
            assert!(cuts > cjk.len() / 256, "{encoding}: {cuts} cuts in {} bytes", cjk.len());
        }
    }

    /// Where every offset is spanned by some token (a run of spaces), the
    /// search for cuts finds none and stays within its lookup budget.
    #[test]
    fn the_search_for_cuts_is_bounded() {
        let vocab = tokenizer(Encoding::O200kBase).expect("loads").vocabulary();
        let spaces = " ".repeat(100_000);
        let mut cuts = 0;
        for_each_cut(vocab, spaces.as_bytes(), &mut |_| cuts += 1);
        assert_eq!(cuts, 0);
        let mut lookups = 0;
        for p in 1..spaces.len() {
            assert!(!no_token_spans(vocab, spaces.as_bytes(), p, &mut lookups));
        }
        let text = "漢字".repeat(100);
        let p = text.len() / 2;
        let mut lookups = 0;
        let spans = no_token_spans(vocab, text.as_bytes(), p, &mut lookups);
        let mut reference = false;
        for a in p.saturating_sub(vocab.max_token_bytes())..p {
            for b in p + 1..=(a + vocab.max_token_bytes()).min(text.len()) {
                reference |= vocab.rank(&text.as_bytes()[a..b]).is_some();
            }
        }
        assert_eq!(spans, !reference);
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
