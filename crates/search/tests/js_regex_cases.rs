//! JavaScript regex syntax and semantics. Every expectation was checked
//! against Node 22 (`new RegExp(p)` for validity, `new RegExp(p).test(line)`
//! for matching).

use offload_search::js_regex::{is_valid_js_regex, plan, Plan};
use offload_search::search_content;

/// (pattern, whether `new RegExp(pattern)` succeeds in Node 22)
const VALIDITY: &[(&str, bool)] = &[
    ("(?i)x", false),
    ("a**", false),
    ("[z-a]", false),
    ("(", false),
    ("x{2,1}", false),
    ("a{", true),
    ("{", true),
    ("}", true),
    ("]", true),
    ("\\p", true),
    ("\\/", true),
    ("\\-", true),
    ("\\8", true),
    ("\\1", true),
    ("(a)\\1", true),
    ("\\k<n>", true),
    ("(?<n>a)\\k<n>", true),
    ("(?<n>a)\\k", false),
    ("(?<n>a)\\k<m>", false),
    ("[]", true),
    ("[^]", true),
    ("\\c", true),
    ("\\cA", true),
    ("\\c1", true),
    ("[\\c1]", true),
    ("[\\c_]", true),
    ("[\\c*]", true),
    ("\\x4", true),
    ("\\u12", true),
    ("\\u{41}", true),
    ("{2}", false),
    ("a{2}{3}", false),
    ("a*?", true),
    ("a*??", false),
    ("a{2}?", true),
    ("(?=a)*", true),
    ("(?<=a)*", false),
    ("\\b*", false),
    ("^*", false),
    ("$+", false),
    ("(?!a){2}", true),
    ("(?<n>a)(?<n>b)", false),
    ("(?i:a)", false),
    ("[\\d-z]", true),
    ("[a-\\d]", true),
    ("[\\w-]", true),
    ("(?<1a>x)", false),
    ("(?<a1>x)", true),
    ("(?<$>x)", true),
    ("(?<é>x)", true),
    ("a{,2}", true),
    ("x{99999999999999999999}", true),
    ("x{2,99999999999999999999}", true),
    ("\\k", true),
    ("[\\k]", true),
    ("(?<n>a)[\\k]", false),
    ("(?<n>a)[\\k<n>]", false),
    ("\\0", true),
    ("\\00", true),
    ("\\08", true),
    ("[\\b]", true),
    ("\\B", true),
    ("a|*", false),
    ("|", true),
    ("()", true),
    ("(?:)", true),
    ("(?", false),
    ("(?<", false),
    ("(?<=", false),
    ("(?<!a)", true),
    ("(?<a)", false),
    ("\\", false),
    ("[\\]", false),
    ("[a-]", true),
    ("[-a]", true),
    ("[\\d-\\w]", true),
    ("[a-\\w]", true),
    ("[%-\\d]", true),
    ("(?<a>x)|(?<a>y)", false),
    ("\\c\\", false),
    ("[\\c]", true),
    ("\\q", true),
    ("\\ca", true),
    ("[\\B]", true),
    ("\\2(a)(b)", true),
    ("[\\-]", true),
    ("(?<n>)\\k<x>", false),
    ("(?=)", true),
    ("x{1,2}{3}", false),
    ("(?:a)?+", false),
    ("a{1}*", false),
    ("a{1,}?", true),
    ("a{2,2}", true),
    ("a{3,2}?", false),
    ("\\u{", true),
    ("x{-1}", true),
    ("x{1,-1}", true),
    (")", false),
    ("a)", false),
    ("[a-z-0]", true),
    ("[a-z-\\d]", true),
    ("[\\s-\\d]", true),
    ("\\k<n>(?<n>a)", true),
    ("(?<n>a)\\k<n", false),
    ("(?<\\u0061>x)\\k<a>", true),
    ("(?<a\\u0062>x)", true),
    ("[\\u{41}]", true),
    ("\\c0", true),
    ("(?<𝑓>x)", true),
    ("\\u{110000}", true),
    ("(?<a-b>x)", false),
    ("a{0}", true),
    ("x{2,}", true),
    ("\\N", true),
    ("[\\9]", true),
    ("(?<n>a)\\k<n>{2}", true),
    ("\\b{2}", false),
    ("(?:^){2}", true),
    ("(?=a)?", true),
    ("(?<=a)?", false),
    ("[😀-😂]", false),
    ("[😀]", true),
    ("😀+", true),
    ("(?<n>a)|\\k<n>", true),
    ("[b-a]", false),
    ("[\\x41-\\x40]", false),
    ("(a)(b)\\3", true),
    ("\\10", true),
    ("(((((((((((a)))))))))))\\11", true),
    ("a{1,2", true),
    ("a{1,2}}", true),
    ("x{0,0}", true),
    ("(?<=a|bc)d", true),
    ("(?<!\\d+)x", true),
    ("(?:a|b)+?c", true),
    ("[\\]]", true),
    ("[^\\]]", true),
    ("\\]", true),
];

/// (pattern, line, `new RegExp(pattern).test(line)` in Node 22)
const SEMANTICS: &[(&str, &str, bool)] = &[
    ("\\d+", "abc 42", true),
    ("\\d", "abc", false),
    ("\\w", "é", false),
    ("\\W", "é", true),
    ("\\s", "a\u{a0}b", true),
    ("\\s", "a\u{2028}b", true),
    ("\\s", "\u{feff}", true),
    ("\\S", "　", false),
    (".", "\r", false),
    (".", "\u{2028}", false),
    ("\\bé", "x é", false),
    ("é\\b", "é", false),
    ("\\Bb", "ab", true),
    ("^$", "", true),
    ("^a|b$", "xxb", true),
    ("a{2,3}", "aa", true),
    ("a{2,3}", "a a", false),
    ("\\x41", "A", true),
    ("\\u00e9", "é", true),
    ("\\0", "\u{0}", true),
    ("\\101", "A", true),
    ("\\1(a)", "a", true),
    ("(a)\\1", "aa", true),
    ("(a)\\1", "ab", false),
    ("(a)?\\1b", "b", true),
    ("\\k<n>(?<n>x)", "x", true),
    ("(?<n>x)\\k<n>", "xx", true),
    ("\\cJ", "", false),
    ("\\cA", "\u{1}", true),
    ("\\c1", "\\c1", true),
    ("[\\c1]", "\u{11}", true),
    ("[\\b]", "\u{8}", true),
    ("a\\/b", "a/b", true),
    ("[^]", "x", true),
    ("[]", "x", false),
    ("[^\\s\\S]", "x", false),
    ("\\u{2}", "uu", true),
    ("\\u{2}", "u{2}", false),
    ("a{", "a{", true),
    ("x*", "", true),
    ("(?=a)*b", "b", true),
    ("(?!a)*b", "b", true),
    ("(?<=\\$)\\d", "$5", true),
    ("(?<!\\$)\\d", "$5", false),
    ("(?<=^|,)x", "a,x", true),
    ("\\p{L}", "p{L}", true),
    ("[\\d-z]", "-", true),
    ("[a-\\d]", "-", true),
    ("\\8", "8", true),
    ("\\18", "\u{1}8", true),
    ("\\377", "ÿ", true),
    ("\\400", " 0", true),
    ("[\\400]", "0", true),
    ("a|", "zzz", true),
    ("(?:)", "", true),
    ("\\t", "a\tb", true),
    ("\\v", "\u{b}", true),
    ("[^a]", "\n", true),
    ("\\n", "a", false),
    ("$", "x", true),
    ("\\u0041\\u0042", "AB", true),
    ("\\uD83D\\uDE00", "😀", true),
    // A quantifier after an astral character repeats its low half only.
    ("😀+", "a😀", true),
    ("😀{1}", "😀", true),
    ("😀{1,}", "x😀y", true),
    ("😀{2}", "😀😀", false),
    ("😀+$", "a😀", true),
    ("a😀?$", "a😀😀", false),
    ("a😀?$", "a😀", true),
    ("\\S+😀+", "b😀", true),
    ("\\uD83D", "😁", true),
    ("[\\uD83D\\uDE00]", "😀", true),
    ("[\\uD800-\\uDBFF]", "𝑓", true),
    ("(?<=a)b", "ab", true),
    ("(?<=a)b", "b", false),
    ("(\\w)\\1", "hello", true),
    ("(a)|\\1b", "b", true),
    ("\\bfoo\\b", "a foo.", true),
    ("\\bfoo\\b", "foobar", false),
];

#[test]
fn validity_matches_node() {
    let mut wrong = Vec::new();
    for &(pattern, valid) in VALIDITY {
        if is_valid_js_regex(pattern) != valid {
            wrong.push((pattern, valid));
        }
    }
    assert!(wrong.is_empty(), "disagreements with Node: {wrong:?}");
}

#[test]
fn lone_surrogates_in_patterns() {
    // Patterns given as UTF-16 (as JavaScript sees them).
    let p = |units: &[u16]| offload_search::js_regex::parse::parse(units).is_ok();
    assert!(p(&[0xD83D]));
    assert!(p(&[u16::from(b'['), 0xDE00, u16::from(b']')]));
    // [😀-😂] is the range \uDE00-\uD83D of code units: out of order.
    let units: Vec<u16> = "[😀-😂]".encode_utf16().collect();
    assert!(!p(&units));
}

/// Whether the search marks `line` (as line 1 of a two-line text) as a match.
fn line_matches(pattern: &str, line: &str) -> bool {
    let text = format!("{line}\n");
    let out = search_content(&text, Some(pattern), None, 0, 100_000).unwrap();
    out.contains("\n> 1| ")
}

#[test]
fn semantics_match_node() {
    let mut wrong = Vec::new();
    for &(pattern, line, expected) in SEMANTICS {
        if line.contains('\n') {
            continue;
        }
        if line_matches(pattern, line) != expected {
            wrong.push((pattern, line, expected));
        }
    }
    assert!(wrong.is_empty(), "disagreements with Node: {wrong:?}");
}

#[test]
fn documented_astral_divergence() {
    // JavaScript (non-unicode) sees "😀" as two code units, so /^.$/ fails
    // there; here it is one character.
    assert!(line_matches("^.$", "😀"));
}

#[test]
fn sdk_fallback_decisions() {
    // Nested-quantifier heuristic -> literal, even though the regex is valid.
    assert_eq!(plan("(a+)+b"), Plan::Literal("(a+)+b".into()));
    assert_eq!(plan("(x+x+)+y"), Plan::Literal("(x+x+)+y".into()));
    assert_eq!(plan("(\\d+)*\\1"), Plan::Literal("(\\d+)*\\1".into()));
    assert_eq!(
        plan("a* \u{2028}) *b"),
        Plan::Literal("a* \u{2028}) *b".into())
    );
    // Invalid syntax -> literal.
    assert_eq!(plan("(?i)error"), Plan::Literal("(?i)error".into()));
    assert_eq!(plan("[z-a]"), Plan::Literal("[z-a]".into()));
    // Valid, not caught by the heuristic -> regex.
    assert!(matches!(
        plan("^(a|a?)+$"),
        Plan::Regex {
            backtracking: false,
            ..
        }
    ));
    assert!(matches!(
        plan("(.*a){20}"),
        Plan::Regex {
            backtracking: false,
            ..
        }
    ));
    assert!(matches!(
        plan("a(?=b)"),
        Plan::Regex {
            backtracking: true,
            ..
        }
    ));
    // Cut to 200 UTF-16 units before the heuristic and the parse: the
    // unbalanced '(' past the cut no longer matters.
    let long = format!("{}(", "a".repeat(200));
    assert!(matches!(plan(&long), Plan::Regex { .. }));
    let long = format!("{}(", "a".repeat(199));
    assert_eq!(plan(&long), Plan::Literal(long.clone()));
}

#[test]
fn literal_fallback_with_newline_never_matches() {
    let out = search_content("a(\nb", Some("a(\nb"), None, 0, 1000).unwrap();
    assert_eq!(
        out,
        "No matches found for pattern 'a(\nb' (searched 2 lines)."
    );
}
