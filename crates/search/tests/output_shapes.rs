//! Output shapes and error strings. Every expected string was produced by
//! running the SDK's `searchContent` (and, for the `query_*` tests, the
//! retrieval tool's default handling) in Node 22.

use offload_search::{
    is_full_retrieval, is_searchable_content, run_retrieval_query, search_content, LineRange,
    RetrievalQuery,
};

fn query_text() -> String {
    (1..=20)
        .map(|i| {
            if i == 10 {
                "target line 10".to_owned()
            } else {
                format!("row {i}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn full_retrieval_decision() {
    let none = RetrievalQuery::default();
    assert!(is_full_retrieval(&none));
    assert!(is_full_retrieval(&RetrievalQuery {
        pattern: Some(""),
        ..none
    }));
    assert!(!is_full_retrieval(&RetrievalQuery {
        pattern: Some("x"),
        ..none
    }));
    assert!(!is_full_retrieval(&RetrievalQuery {
        context_lines: Some(0),
        ..none
    }));
    assert!(!is_full_retrieval(&RetrievalQuery {
        line_range: Some(LineRange { start: 1, end: 1 }),
        ..none
    }));
}

#[test]
fn searchable_content_types() {
    for t in [
        "text/plain",
        "text/",
        "application/json",
        "application/x-yaml",
        "application/xhtml+xml",
    ] {
        assert!(is_searchable_content(t), "{t}");
    }
    for t in [
        "application/pdf",
        "image/png",
        "Text/plain",
        "application/json; charset=utf-8",
        "",
    ] {
        assert!(!is_searchable_content(t), "{t}");
    }
}

#[test]
fn utf16_budget_counts_code_units() {
    // The body "  1| 😀😀" is 9 UTF-16 units; a 7-unit budget keeps one
    // emoji (same as Node). With 6 units JavaScript would keep half of the
    // emoji's surrogate pair; the documented divergence cuts before the pair.
    let got = search_content("😀😀", None, Some(LineRange { start: 1, end: 1 }), 0, 7).unwrap();
    assert_eq!(
        got,
        "[Lines 1-1 of 1]\n\n  1| 😀\n\n[output truncated, narrow your range]"
    );
    let got = search_content("😀😀", None, Some(LineRange { start: 1, end: 1 }), 0, 6).unwrap();
    assert_eq!(
        got,
        "[Lines 1-1 of 1]\n\n  1| \n\n[output truncated, narrow your range]"
    );
}

#[test]
fn single_match() {
    let got = search_content("alpha\nbeta\ngamma", Some("beta"), None, 1, 4000).unwrap();
    assert_eq!(
        got,
        "[1 match for /beta/]\n\n  1| alpha\n> 2| beta\n  3| gamma"
    );
}

#[test]
fn multiple_matches_with_gap() {
    let got = search_content("info step 1\ninfo step 2\ninfo step 3\nERROR at step 4\ninfo step 5\ninfo step 6\ninfo step 7\nERROR at step 8\ninfo step 9\ninfo step 10\ninfo step 11\nERROR at step 12", Some("ERROR"), None, 1, 4000).unwrap();
    assert_eq!(got, "[3 matches for /ERROR/]\n\n   3| info step 3\n>  4| ERROR at step 4\n   5| info step 5\n---\n   7| info step 7\n>  8| ERROR at step 8\n   9| info step 9\n---\n  11| info step 11\n> 12| ERROR at step 12");
}

#[test]
fn context_merges() {
    let got = search_content("info step 1\ninfo step 2\ninfo step 3\nERROR at step 4\ninfo step 5\ninfo step 6\ninfo step 7\nERROR at step 8\ninfo step 9\ninfo step 10\ninfo step 11\nERROR at step 12", Some("ERROR"), None, 2, 4000).unwrap();
    assert_eq!(got, "[3 matches for /ERROR/]\n\n   2| info step 2\n   3| info step 3\n>  4| ERROR at step 4\n   5| info step 5\n   6| info step 6\n   7| info step 7\n>  8| ERROR at step 8\n   9| info step 9\n  10| info step 10\n  11| info step 11\n> 12| ERROR at step 12");
}

#[test]
fn no_match() {
    let got = search_content("info step 1\ninfo step 2\ninfo step 3\nERROR at step 4\ninfo step 5\ninfo step 6\ninfo step 7\nERROR at step 8\ninfo step 9\ninfo step 10\ninfo step 11\nERROR at step 12", Some("nothing here"), None, 5, 4000).unwrap();
    assert_eq!(
        got,
        "No matches found for pattern 'nothing here' (searched 12 lines)."
    );
}

#[test]
fn no_match_in_range() {
    let got = search_content("info step 1\ninfo step 2\ninfo step 3\nERROR at step 4\ninfo step 5\ninfo step 6\ninfo step 7\nERROR at step 8\ninfo step 9\ninfo step 10\ninfo step 11\nERROR at step 12", Some("nothing"), Some(LineRange { start: 2, end: 5 }), 5, 4000).unwrap();
    assert_eq!(
        got,
        "No matches found for pattern 'nothing' in lines 2-5 (searched 4 lines)."
    );
}

#[test]
fn range_label_clamped() {
    let got = search_content("info step 1\ninfo step 2\ninfo step 3\nERROR at step 4\ninfo step 5\ninfo step 6\ninfo step 7\nERROR at step 8\ninfo step 9\ninfo step 10\ninfo step 11\nERROR at step 12", Some("step"), Some(LineRange { start: 10, end: 99 }), 0, 4000).unwrap();
    assert_eq!(got, "[3 matches for /step/ in lines 10-12]\n\n> 10| info step 10\n> 11| info step 11\n> 12| ERROR at step 12");
}

#[test]
fn range_only() {
    let got = search_content("info step 1\ninfo step 2\ninfo step 3\nERROR at step 4\ninfo step 5\ninfo step 6\ninfo step 7\nERROR at step 8\ninfo step 9\ninfo step 10\ninfo step 11\nERROR at step 12", None, Some(LineRange { start: 3, end: 6 }), 5, 4000).unwrap();
    assert_eq!(got, "[Lines 3-6 of 12]\n\n  3| info step 3\n  4| ERROR at step 4\n  5| info step 5\n  6| info step 6");
}

#[test]
fn range_clamped() {
    let got = search_content(
        "a\nb\nc",
        None,
        Some(LineRange {
            start: 2,
            end: 1000,
        }),
        5,
        4000,
    )
    .unwrap();
    assert_eq!(got, "[Lines 2-3 of 3]\n\n  2| b\n  3| c");
}

#[test]
fn empty_pattern_is_range() {
    let got = search_content(
        "a\nb\nc",
        Some(""),
        Some(LineRange { start: 1, end: 2 }),
        5,
        4000,
    )
    .unwrap();
    assert_eq!(got, "[Lines 1-2 of 3]\n\n  1| a\n  2| b");
}

#[test]
fn empty_pattern_no_range() {
    let got = search_content("a\nb\nc", Some(""), None, 5, 4000).unwrap();
    assert_eq!(got, "[Lines 1-3 of 3]\n\n  1| a\n  2| b\n  3| c");
}

#[test]
fn start_after_end() {
    let got = search_content(
        "a\nb",
        Some("a"),
        Some(LineRange { start: 5, end: 2 }),
        5,
        4000,
    )
    .unwrap();
    assert_eq!(
        got,
        "Error: line_range.start (5) must be <= line_range.end (2)."
    );
}

#[test]
fn start_beyond() {
    let got = search_content(
        "a\nb",
        Some("a"),
        Some(LineRange { start: 3, end: 9 }),
        5,
        4000,
    )
    .unwrap();
    assert_eq!(
        got,
        "Error: line_range.start (3) is beyond content length (2 lines)."
    );
}

#[test]
fn huge_numbers() {
    let got = search_content(
        "a\nb",
        Some("a"),
        Some(LineRange {
            start: 9007199254740991,
            end: 9007199254740991,
        }),
        5,
        4000,
    )
    .unwrap();
    assert_eq!(
        got,
        "Error: line_range.start (9007199254740991) is beyond content length (2 lines)."
    );
}

#[test]
fn empty_content() {
    let got = search_content("", Some("a"), None, 5, 4000).unwrap();
    assert_eq!(got, "Content is empty (0 lines).");
}

#[test]
fn only_newline() {
    let got = search_content("\n", None, Some(LineRange { start: 1, end: 5 }), 5, 4000).unwrap();
    assert_eq!(got, "[Lines 1-2 of 2]\n\n  1| \n  2| ");
}

#[test]
fn pad_width() {
    let got = search_content("line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14\nline 15\nline 16\nline 17\nline 18\nline 19\nline 20\nline 21\nline 22\nline 23\nline 24\nline 25\nline 26\nline 27\nline 28\nline 29\nline 30\nline 31\nline 32\nline 33\nline 34\nline 35\nline 36\nline 37\nline 38\nline 39\nline 40\nline 41\nline 42\nline 43\nline 44\nline 45\nline 46\nline 47\nline 48\nline 49\nline 50\nline 51\nline 52\nline 53\nline 54\nline 55\nline 56\nline 57\nline 58\nline 59\nline 60\nline 61\nline 62\nline 63\nline 64\nline 65\nline 66\nline 67\nline 68\nline 69\nline 70\nline 71\nline 72\nline 73\nline 74\nline 75\nline 76\nline 77\nline 78\nline 79\nline 80\nline 81\nline 82\nline 83\nline 84\nline 85\nline 86\nline 87\nline 88\nline 89\nline 90\nline 91\nline 92\nline 93\nline 94\nline 95\nline 96\nline 97\nline 98\nline 99\nline 100\nline 101\nline 102\nline 103\nline 104\nline 105\nline 106\nline 107\nline 108\nline 109\nline 110\nline 111\nline 112\nline 113\nline 114\nline 115\nline 116\nline 117\nline 118\nline 119\nline 120", Some("line (9|99|100)$"), None, 1, 4000).unwrap();
    assert_eq!(got, "[3 matches for /line (9|99|100)$/]\n\n    8| line 8\n>   9| line 9\n   10| line 10\n---\n   98| line 98\n>  99| line 99\n> 100| line 100\n  101| line 101");
}

#[test]
fn truncated_at_newline() {
    let got = search_content("info step 1\ninfo step 2\ninfo step 3\nERROR at step 4\ninfo step 5\ninfo step 6\ninfo step 7\nERROR at step 8\ninfo step 9\ninfo step 10\ninfo step 11\nERROR at step 12", Some("step"), None, 0, 60).unwrap();
    assert_eq!(got, "[12 matches for /step/]\n\n>  1| info step 1\n>  2| info step 2\n>  3| info step 3\n\n[output truncated, narrow your search]");
}

#[test]
fn truncated_no_newline() {
    let got = search_content("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", Some("x"), None, 0, 30).unwrap();
    assert_eq!(got, "[1 match for /x/]\n\n> 1| xxxxxxxxxxxxxxxxxxxxxxxxx\n\n[output truncated, narrow your search]");
}

#[test]
fn truncated_zero_budget() {
    let got = search_content("abc", Some("b"), None, 0, 0).unwrap();
    assert_eq!(
        got,
        "[1 match for /b/]\n\n\n\n[output truncated, narrow your search]"
    );
}

#[test]
fn truncated_range() {
    let got = search_content("info step 1\ninfo step 2\ninfo step 3\nERROR at step 4\ninfo step 5\ninfo step 6\ninfo step 7\nERROR at step 8\ninfo step 9\ninfo step 10\ninfo step 11\nERROR at step 12", None, Some(LineRange { start: 1, end: 12 }), 0, 45).unwrap();
    assert_eq!(got, "[Lines 1-12 of 12]\n\n   1| info step 1\n   2| info step 2\n\n[output truncated, narrow your range]");
}

#[test]
fn budget_exact_fit() {
    let got = search_content("abc", None, Some(LineRange { start: 1, end: 1 }), 0, 8).unwrap();
    assert_eq!(got, "[Lines 1-1 of 1]\n\n  1| abc");
}

#[test]
fn budget_newline_at_limit() {
    let got = search_content("ab\ncd", None, Some(LineRange { start: 1, end: 2 }), 0, 7).unwrap();
    assert_eq!(
        got,
        "[Lines 1-2 of 2]\n\n  1| ab\n\n[output truncated, narrow your range]"
    );
}

#[test]
fn header_sanitised() {
    let got = search_content("a/b]c\r\nd", Some("a/b]c\r"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /a b c /]\n\n> 1| a/b]c\r");
}

#[test]
fn header_cut_to_50() {
    let got = search_content(
        "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",
        Some("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"),
        None,
        0,
        4000,
    )
    .unwrap();
    assert_eq!(got, "[1 match for /yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy/]\n\n> 1| yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
}

#[test]
fn literal_fallback_invalid() {
    let got = search_content("call f(x\nother", Some("f(x"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /f(x/]\n\n> 1| call f(x");
}

#[test]
fn literal_fallback_nested_quantifier() {
    let got = search_content("aaa\n(a+)+b here", Some("(a+)+b"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /(a+)+b/]\n\n> 2| (a+)+b here");
}

#[test]
fn regex_alternation() {
    let got = search_content("warn: x\nerror: y\ninfo", Some("warn|error"), None, 0, 4000).unwrap();
    assert_eq!(
        got,
        "[2 matches for /warn|error/]\n\n> 1| warn: x\n> 2| error: y"
    );
}

#[test]
fn crlf_dollar() {
    let got = search_content("foo\r\nfoo", Some("foo$"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /foo$/]\n\n> 2| foo");
}

#[test]
fn unicode_lines() {
    let got = search_content("héllo wörld\n😀 smile\nnaïve", Some("ö|😀"), None, 0, 4000).unwrap();
    assert_eq!(
        got,
        "[2 matches for /ö|😀/]\n\n> 1| héllo wörld\n> 2| 😀 smile"
    );
}

#[test]
fn word_boundary_ascii() {
    let got = search_content("café bar\ncafébar\nx_y", Some("\\bbar"), None, 0, 4000).unwrap();
    assert_eq!(
        got,
        "[2 matches for /\\bbar/]\n\n> 1| café bar\n> 2| cafébar"
    );
}

#[test]
fn js_whitespace() {
    let got = search_content("a\u{a0}b\na b\nab", Some("a\\sb"), None, 0, 4000).unwrap();
    assert_eq!(got, "[2 matches for /a\\sb/]\n\n> 1| a\u{a0}b\n> 2| a b");
}

#[test]
fn dot_excludes_cr() {
    let got = search_content("a\rb\naxb", Some("a.b"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /a.b/]\n\n> 2| axb");
}

#[test]
fn lookahead() {
    let got = search_content(
        "price: 10 USD\nprice: 10 EUR",
        Some("\\d+(?= USD)"),
        None,
        0,
        4000,
    )
    .unwrap();
    assert_eq!(got, "[1 match for /\\d+(?= USD)/]\n\n> 1| price: 10 USD");
}

#[test]
fn lookbehind() {
    let got = search_content("id=7\nkey=7", Some("(?<=id=)\\d"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /(?<=id=)\\d/]\n\n> 1| id=7");
}

#[test]
fn backreference() {
    let got = search_content(
        "the the cat\nthe cat",
        Some("\\b(\\w+) \\1\\b"),
        None,
        0,
        4000,
    )
    .unwrap();
    assert_eq!(got, "[1 match for /\\b(\\w+) \\1\\b/]\n\n> 1| the the cat");
}

#[test]
fn octal_escape_without_groups() {
    let got = search_content("a\u{1}b\nab", Some("a\\1b"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /a\\1b/]\n\n> 1| a\u{1}b");
}

#[test]
fn empty_class_never_matches() {
    let got = search_content("abc", Some("[]"), None, 0, 4000).unwrap();
    assert_eq!(got, "No matches found for pattern '[]' (searched 1 lines).");
}

#[test]
fn negated_empty_class() {
    let got = search_content("abc\n\n", Some("[^]"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /[^ /]\n\n> 1| abc");
}

#[test]
fn empty_match_every_line() {
    let got = search_content("a\n\nb", Some("x*"), None, 0, 4000).unwrap();
    assert_eq!(got, "[3 matches for /x*/]\n\n> 1| a\n> 2| \n> 3| b");
}

#[test]
fn caret_matches_each_line() {
    let got = search_content("a\nb", Some("^"), None, 0, 4000).unwrap();
    assert_eq!(got, "[2 matches for /^/]\n\n> 1| a\n> 2| b");
}

#[test]
fn pattern_length_cap() {
    let got = search_content("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", Some("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"), None, 0, 4000).unwrap();
    assert_eq!(got, "[1 match for /zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz/]\n\n> 1| zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
}

#[test]
fn head_like_range() {
    let got = search_content(
        "l1\nl2\nl3",
        None,
        Some(LineRange { start: 1, end: 1 }),
        5,
        4000,
    )
    .unwrap();
    assert_eq!(got, "[Lines 1-1 of 3]\n\n  1| l1");
}

#[test]
fn query_default_context() {
    let q = RetrievalQuery {
        pattern: Some("target"),
        line_range: None,
        context_lines: None,
    };
    assert_eq!(run_retrieval_query(&query_text(), &q, 10000).unwrap(), "[1 match for /target/]\n\n   5| row 5\n   6| row 6\n   7| row 7\n   8| row 8\n   9| row 9\n> 10| target line 10\n  11| row 11\n  12| row 12\n  13| row 13\n  14| row 14\n  15| row 15");
}

#[test]
fn query_explicit_context() {
    let q = RetrievalQuery {
        pattern: Some("target"),
        line_range: None,
        context_lines: Some(1),
    };
    assert_eq!(
        run_retrieval_query(&query_text(), &q, 10000).unwrap(),
        "[1 match for /target/]\n\n   9| row 9\n> 10| target line 10\n  11| row 11"
    );
}

#[test]
fn query_head_mode_default() {
    let q = RetrievalQuery {
        pattern: None,
        line_range: None,
        context_lines: Some(3),
    };
    assert_eq!(
        run_retrieval_query(&query_text(), &q, 10000).unwrap(),
        "[Lines 1-3 of 20]\n\n  1| row 1\n  2| row 2\n  3| row 3"
    );
}

#[test]
fn query_head_mode_zero_context() {
    let q = RetrievalQuery {
        pattern: None,
        line_range: None,
        context_lines: Some(0),
    };
    assert_eq!(
        run_retrieval_query(&query_text(), &q, 10000).unwrap(),
        "[Lines 1-1 of 20]\n\n  1| row 1"
    );
}

#[test]
fn query_head_mode_empty_pattern() {
    let q = RetrievalQuery {
        pattern: Some(""),
        line_range: None,
        context_lines: Some(2),
    };
    assert_eq!(
        run_retrieval_query(&query_text(), &q, 10000).unwrap(),
        "[Lines 1-2 of 20]\n\n  1| row 1\n  2| row 2"
    );
}

#[test]
fn query_empty_pattern_with_range() {
    let q = RetrievalQuery {
        pattern: Some(""),
        line_range: Some(LineRange { start: 4, end: 5 }),
        context_lines: None,
    };
    assert_eq!(
        run_retrieval_query(&query_text(), &q, 10000).unwrap(),
        "[Lines 4-5 of 20]\n\n  4| row 4\n  5| row 5"
    );
}

#[test]
fn query_range_with_pattern_default_context() {
    let q = RetrievalQuery {
        pattern: Some("row 1"),
        line_range: Some(LineRange { start: 1, end: 12 }),
        context_lines: None,
    };
    assert_eq!(run_retrieval_query(&query_text(), &q, 10000).unwrap(), "[3 matches for /row 1/ in lines 1-12]\n\n>  1| row 1\n   2| row 2\n   3| row 3\n   4| row 4\n   5| row 5\n   6| row 6\n   7| row 7\n   8| row 8\n   9| row 9\n  10| target line 10\n> 11| row 11\n> 12| row 12");
}

#[test]
fn query_empty_pattern_alone() {
    let q = RetrievalQuery {
        pattern: Some(""),
        line_range: None,
        context_lines: None,
    };
    assert_eq!(
        run_retrieval_query(&query_text(), &q, 10000).unwrap(),
        "[Lines 1-5 of 20]\n\n  1| row 1\n  2| row 2\n  3| row 3\n  4| row 4\n  5| row 5"
    );
}

#[test]
fn unlimited_budget() {
    let got = search_content("a\nb", Some("b"), None, 1, usize::MAX).unwrap();
    assert_eq!(got, "[1 match for /b/]\n\n  1| a\n> 2| b");
    let got = search_content(
        "a\nb",
        None,
        Some(LineRange {
            start: 1,
            end: u64::MAX,
        }),
        0,
        usize::MAX,
    )
    .unwrap();
    assert_eq!(got, "[Lines 1-2 of 2]\n\n  1| a\n  2| b");
}

#[test]
fn huge_context_lines() {
    let got = search_content("a\nb\nc", Some("b"), None, u64::MAX, 4000).unwrap();
    assert_eq!(got, "[1 match for /b/]\n\n  1| a\n> 2| b\n  3| c");
}
