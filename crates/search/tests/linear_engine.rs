//! The linear engine's two paths (lazy DFA, and the NFA fallback it takes
//! when the DFA gives up) find exactly the lines a per-line `regex` finds,
//! on generated texts, patterns and scopes.

use proptest::prelude::*;

use offload_search::deadline::Deadline;
use offload_search::linear::LinearMatcher;
use offload_search::lines::LineIndex;

/// Patterns in the `regex` syntax the translator emits (multi-line mode; as
/// there, no class matches `\n`).
const PATTERNS: &[&str] = &[
    "a",
    "ab|ba",
    "^a",
    "b$",
    "^$",
    "a[ab]{3}b",
    "(?-u:\\b)ab",
    "[^ab\\n]",
    "a*",
    "(?:a|b)*c",
    "é.b",
    "a[ab]{12}[^ab\\n]",
];

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just('a'),
            Just('b'),
            Just('c'),
            Just('\n'),
            Just('é'),
            Just(' ')
        ],
        0..400,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn both_paths_match_a_per_line_regex(
        text in text(),
        pattern in proptest::sample::select(PATTERNS),
        a in 0usize..50,
        b in 0usize..50,
    ) {
        let lines = LineIndex::new(&text);
        let first = a.min(lines.count() - 1);
        let last = (first + b).min(lines.count() - 1);
        let re = regex::RegexBuilder::new(pattern).multi_line(true).build().unwrap();
        let expected: Vec<usize> = (first..=last).filter(|&i| re.is_match(lines.line(i))).collect();
        for cache in [16 << 20, 0] {
            let matcher = LinearMatcher::with_cache(pattern, cache).unwrap();
            let mut found = Vec::new();
            matcher.matching_lines(&lines, first, last, &Deadline::default(), &mut found).unwrap();
            prop_assert_eq!(&found, &expected, "cache {}", cache);
        }
    }
}
