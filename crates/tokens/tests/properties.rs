//! Property tests: split points, agreement with tiktoken-rs, and the
//! invariants of the budgeted operations, on random texts mixing scripts,
//! marks, emoji, digits, punctuation, line breaks and whitespace runs.

use offload_tokens::boundary::is_split_point;
use offload_tokens::{tokenizer, Encoding, Tokenizer};
use proptest::prelude::*;
use tiktoken_rs::CoreBPE;

/// Fragments chosen to exercise every alternative of both pre-tokenizers.
const ATOMS: &[&str] = &[
    "a",
    "Z",
    "word",
    "Word",
    "WORD",
    "HTTPServer",
    "naïve",
    "ÉCOLE",
    "straße",
    "ǅemal",
    "ʰ",
    "'s",
    "'S",
    "'ll",
    "'LL",
    "'ve",
    "'re",
    "'d",
    "'m",
    "'t",
    "'",
    "don't",
    "O'Neil",
    "0",
    "7",
    "12",
    "123",
    "1234",
    "3.14",
    "²",
    "½",
    "Ⅻ",
    "٣",
    " ",
    "  ",
    "   ",
    "        ",
    "\t",
    " \t",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    " \n",
    "\n ",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{2029}",
    "\u{85}",
    "\u{2003}",
    "\u{b}",
    "\u{c}",
    "\u{180e}",
    "\u{200b}",
    "\u{feff}",
    ".",
    ",",
    "!",
    "?",
    "...",
    "--",
    "/",
    "//",
    "\\",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "<",
    ">",
    "=",
    "+",
    "#",
    "@",
    "<|endoftext|>",
    "\u{fffd}",
    "\u{0}",
    "\u{1b}",
    "日本語",
    "テキスト",
    "ひらがな",
    "ー",
    "한국어",
    "中文",
    "。",
    "、",
    "「",
    "」",
    "，",
    "！",
    "？",
    "：",
    "русский",
    "Ελληνικά",
    "עברית",
    "العربية",
    "ـ",
    "हिन्दी",
    "ि",
    "ไทย",
    "ั",
    "\u{301}",
    "e\u{301}",
    "\u{20dd}",
    "😀",
    "👍🏽",
    "👨\u{200d}👩\u{200d}👧",
    "🇫🇷",
    "🎉",
    "✔\u{fe0f}",
];

fn atom_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ATOMS), 0..48).prop_map(|atoms| atoms.concat())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![3 => atom_text(), 1 => "\\PC{0,64}", 1 => "[a-c1 \n\t.'/]{0,64}"]
}

fn encoding() -> impl Strategy<Value = Encoding> {
    prop::sample::select(Encoding::ALL.to_vec())
}

fn load(encoding: Encoding) -> &'static Tokenizer {
    tokenizer(encoding).expect("bundled vocabulary loads")
}

fn reference(encoding: Encoding) -> &'static CoreBPE {
    match encoding {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    }
}

fn char_boundaries(text: &str) -> impl Iterator<Item = usize> + '_ {
    (0..=text.len()).filter(|&i| text.is_char_boundary(i))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn ids_match_tiktoken_rs(text in any_text(), encoding in encoding()) {
        prop_assert_eq!(load(encoding).encode(&text), reference(encoding).encode_ordinary(&text));
    }

    #[test]
    fn encoding_is_additive_at_every_split_point(text in any_text(), encoding in encoding()) {
        let t = load(encoding);
        let whole = t.encode(&text);
        for p in (1..text.len()).filter(|&p| is_split_point(&text, p)) {
            let mut parts = t.encode(&text[..p]);
            parts.extend(t.encode(&text[p..]));
            prop_assert_eq!(&parts, &whole, "split at {}", p);
        }
    }

    #[test]
    fn count_is_the_number_of_ids(text in any_text(), encoding in encoding()) {
        let t = load(encoding);
        prop_assert_eq!(t.count(&text), t.encode(&text).len());
    }

    #[test]
    fn count_up_to_is_exact_or_a_lower_bound_above_the_limit(
        text in any_text(), encoding in encoding(), limit in 0usize..40,
    ) {
        let t = load(encoding);
        let exact = t.count(&text);
        let outcome = t.count_up_to(&text, limit);
        if outcome.exceeded {
            prop_assert!(exact > limit && outcome.value > limit && outcome.value <= exact);
        } else {
            prop_assert!(exact <= limit && outcome.value == exact);
        }
    }

    #[test]
    fn prefix_fits_and_is_nearly_the_longest(text in any_text(), encoding in encoding(), max in 0usize..40) {
        let t = load(encoding);
        let n = t.prefix_within(&text, max);
        prop_assert!(text.is_char_boundary(n));
        prop_assert!(t.count(&text[..n]) <= max);
        if t.count(&text) <= max {
            prop_assert_eq!(n, text.len());
        }
        let best = char_boundaries(&text).filter(|&i| t.count(&text[..i]) <= max).max().unwrap_or(0);
        prop_assert!(t.count(&text[..n]) + 4 >= t.count(&text[..best]), "prefix {} of best {}", n, best);
    }

    #[test]
    fn suffix_fits_and_is_nearly_the_longest(text in any_text(), encoding in encoding(), max in 0usize..40) {
        let t = load(encoding);
        let s = t.suffix_within(&text, max);
        prop_assert!(text.is_char_boundary(s));
        prop_assert!(t.count(&text[s..]) <= max);
        if t.count(&text) <= max {
            prop_assert_eq!(s, 0);
        }
        let best = char_boundaries(&text).filter(|&i| t.count(&text[i..]) <= max).min().unwrap_or(text.len());
        prop_assert!(t.count(&text[s..]) + 4 >= t.count(&text[best..]), "suffix at {} of best {}", s, best);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Large texts take the multi-threaded path; their count must still be
    /// that of one encoder pass.
    #[test]
    fn parallel_counts_equal_one_pass(parts in prop::collection::vec(atom_text(), 1..40), encoding in encoding()) {
        let t = load(encoding);
        let mut text = String::new();
        let mut i = 0;
        while text.len() < offload_tokens::PARALLEL_MIN_BYTES + 4096 {
            text.push_str(&parts[i % parts.len()]);
            text.push_str(if i % 3 == 0 { "\n" } else { " " });
            i += 1;
        }
        prop_assert_eq!(t.count(&text), t.encode(&text).len());
    }

    /// Budgeted operations on large texts with large budgets.
    #[test]
    fn budgets_on_large_texts(parts in prop::collection::vec(atom_text(), 1..20), encoding in encoding(), max in 1usize..60_000) {
        let t = load(encoding);
        let mut text = String::new();
        let mut i = 0;
        while text.len() < 300_000 {
            text.push_str(&parts[i % parts.len()]);
            text.push('\n');
            i += 1;
        }
        let exact = t.count(&text);
        let outcome = t.count_up_to(&text, max);
        prop_assert_eq!(outcome.exceeded, exact > max);
        prop_assert!(outcome.value <= exact && (outcome.exceeded || outcome.value == exact));
        let n = t.prefix_within(&text, max);
        let used = t.count(&text[..n]);
        prop_assert!(used <= max && used + 4 >= max.min(exact), "prefix of {} tokens for {}", used, max);
        let s = t.suffix_within(&text, max);
        let used = t.count(&text[s..]);
        prop_assert!(used <= max && used + 4 >= max.min(exact), "suffix of {} tokens for {}", used, max);
    }
}

/// Letters and marks that pre-tokenize into one long piece when run together
/// (CJK, kana, Hangul, Latin with accents and combining marks, Cyrillic,
/// Arabic, Thai), and fragments that recur in tokens, so that tokens overlap
/// the offsets where a long piece may be cut.
const RUN_ATOMS: &[&str] = &[
    "漢",
    "字",
    "語",
    "東京",
    "天気",
    "日本語",
    "中文",
    "の",
    "は",
    "かな",
    "です",
    "カナ",
    "カタカナ",
    "한",
    "국어",
    "한국어",
    "가나다",
    "a",
    "e",
    "the",
    "ing",
    "tion",
    "é",
    "ñ",
    "ü",
    "e\u{301}",
    "\u{308}",
    "д",
    "ия",
    "ский",
    "ال",
    "مرحبا",
    "ก",
    "สวัสดี",
    "ß",
    "ǅ",
    "ʰ",
    "Σ",
    "λόγος",
];

fn long_run() -> impl Strategy<Value = String> {
    (prop::collection::vec(prop::sample::select(RUN_ATOMS), 1..8), 100usize..1200)
        .prop_map(|(atoms, len)| (0..len).map(|i| atoms[(i * 7 + i / 3) % atoms.len()]).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// A long run of letters is one piece, merged in parts cut where no token
    /// spans the cut: the tokens must be those of tiktoken-rs, which merges
    /// the piece whole.
    #[test]
    fn long_pieces_match_tiktoken_rs(run in long_run(), encoding in encoding()) {
        prop_assert_eq!(load(encoding).encode(&run), reference(encoding).encode_ordinary(&run));
    }
}
