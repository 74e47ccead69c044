//! Classic catastrophic-backtracking patterns on large inputs. These tests
//! only assert that a result (or a clear error) comes back; they make no
//! wall-clock assertions.

use offload_search::{search_content, SearchError};

fn run(text: &str, pattern: &str) -> Result<String, SearchError> {
    search_content(text, Some(pattern), None, 5, 10_000)
}

#[test]
fn alternation_plus_dollar_on_long_line() {
    let text = format!("{}!", "a".repeat(100_000));
    let out = run(&text, "(a|aa)+$").unwrap();
    assert!(out.starts_with("No matches found"), "{out}");
}

#[test]
fn repeated_dot_star_group() {
    let text = "a".repeat(5_000) + "\n" + &"b".repeat(50_000);
    let out = run(&text, "(.*a){20}").unwrap();
    assert!(
        out.starts_with("[1 match for /(.*a){20}/]"),
        "{}",
        &out[..80]
    );
}

#[test]
fn words_and_optional_spaces() {
    let text = format!("{}!", "word ".repeat(20_000));
    let out = run(&text, r"^(\w+\s?)*$").unwrap();
    assert!(out.starts_with("No matches found"));
}

#[test]
fn trailing_whitespace_on_long_space_run() {
    let text = format!("{}x", " ".repeat(200_000));
    let out = run(&text, r"\s+$").unwrap();
    assert!(out.starts_with("No matches found"));
}

#[test]
fn nested_quantifiers_use_the_sdk_literal_fallback() {
    let text = "a".repeat(100_000);
    assert!(run(&text, "(a+)+b")
        .unwrap()
        .starts_with("No matches found"));
    assert!(run(&text, "(x+x+)+y")
        .unwrap()
        .starts_with("No matches found"));
    let digits = "1".repeat(100_000);
    assert!(run(&digits, r"(\d+)*\1")
        .unwrap()
        .starts_with("No matches found"));
}

#[test]
fn optional_alternation_anchored() {
    let text = format!("{}b", "a".repeat(100_000));
    assert!(run(&text, "^(a|a?)+$")
        .unwrap()
        .starts_with("No matches found"));
}

#[test]
fn many_lines_with_linear_engine() {
    let text = vec!["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"; 200_000].join("\n");
    assert!(run(&text, "(a|aa)+$")
        .unwrap()
        .starts_with("No matches found"));
    let out = run(&text, "(a|aa)+!$").unwrap();
    assert!(out.starts_with("[200000 matches for /(a|aa)+!$/]"));
    assert!(out.ends_with("[output truncated, narrow your search]"));
}

#[test]
fn backtracking_engine_reports_instead_of_hanging() {
    // Back-reference forces the backtracking engine; the nested optional
    // repetition explodes, so the step limit must stop it.
    let text = format!("{}!", "a".repeat(5_000));
    match run(&text, r"^(a|a?)+\1$") {
        Err(SearchError::TooMuchBacktracking { line, .. }) => assert_eq!(line, 1),
        Ok(out) => assert!(out.starts_with("No matches found")),
        Err(other) => panic!("unexpected error {other}"),
    }
}

#[test]
fn lookahead_on_many_lines_completes() {
    let text = vec!["value user id Exception at com.example"; 50_000].join("\n");
    let out = run(&text, "Exception(?= at)").unwrap();
    assert!(out.starts_with("[50000 matches"));
}

#[test]
fn huge_repetition_is_a_clear_error() {
    let err = run("aaa", r"(?:\w{1000}){1000}").unwrap_err();
    assert!(matches!(err, SearchError::PatternTooLarge { .. }), "{err}");
    assert!(err.to_string().contains("too large"));
}

#[test]
fn variable_lookbehind_is_a_clear_error() {
    let err = run("aab", "(?<=a+)b").unwrap_err();
    assert_eq!(err, SearchError::UnsupportedLookbehind);
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn huge_single_line_is_truncated() {
    let text = "z".repeat(5_000_000);
    let out = run(&text, "z").unwrap();
    assert_eq!(
        out.len(),
        "[1 match for /z/]\n\n> 1| ".len() - 5
            + 10_000
            + "\n\n[output truncated, narrow your search]".len()
    );
}

/// A counted repetition makes the lazy DFA build a state for nearly every
/// byte; over a megabyte the search must answer (or refuse) at once instead of
/// simulating a 20,000-state NFA over every byte (about 37 s before).
#[test]
fn counted_repetition_over_a_megabyte_is_bounded() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut ab = |n: usize| -> String {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if seed & 1 == 0 { 'a' } else { 'b' }
            })
            .collect()
    };
    let one_line = ab(1 << 20);
    let many_lines: String = (0..(1 << 20) / 101).map(|_| ab(100) + "\n").collect();
    // One line: the work is out of bounds, a clear error at once.
    let started = std::time::Instant::now();
    let out = run(&one_line, "a[ab]{10000}[^ab]");
    assert!(matches!(out, Err(SearchError::TooExpensive)), "{out:?}");
    // A hang guard, not a speed target (`npm run bench` measures it).
    assert!(started.elapsed().as_secs() < 10, "took {:?}", started.elapsed());
    // Lines of 100: shorter than the shortest match (10,002 bytes), none is
    // searched; a real answer at once.
    let started = std::time::Instant::now();
    let out = run(&many_lines, "a[ab]{10000}[^ab]").unwrap();
    assert!(out.starts_with("No matches found"), "{out}");
    assert!(started.elapsed().as_secs() < 10, "took {:?}", started.elapsed());
}

/// Where the worst-case work is small, the same pattern still answers.
#[test]
fn counted_repetition_on_small_content_answers() {
    let hit = format!("xx\na{}c\nyy", "b".repeat(10_000));
    let out = run(&hit, "a[ab]{10000}[^ab]").unwrap();
    // `/` and `]` are blanked in the header, as in the SDK.
    assert!(out.starts_with("[1 match for /a[ab {10000}[^ab /]\n\n  1| xx\n"), "{}", &out[..60]);
    let miss = format!("a{}", "b".repeat(10_000));
    assert!(run(&miss, "a[ab]{10000}[^ab]").unwrap().starts_with("No matches found"));
}
