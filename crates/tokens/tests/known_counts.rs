//! Token ids of fixed strings, recorded from js-tiktoken (an implementation
//! of the same encodings written independently of this crate and of
//! tiktoken-rs); regenerate with `fixtures/generate.mjs`.

use offload_tokens::{tokenizer, Encoding};
use serde_json::Value;

const FIXTURES: &str = include_str!("fixtures/js_tiktoken.json");

struct Fixture {
    encoding: Encoding,
    name: String,
    text: String,
    ids: Vec<u32>,
}

fn fixtures() -> Vec<Fixture> {
    let parsed: Value = serde_json::from_str(FIXTURES).expect("fixture file is JSON");
    let entries = parsed.as_array().expect("fixture file is an array");
    entries
        .iter()
        .map(|entry| Fixture {
            encoding: entry["encoding"].as_str().expect("encoding").parse().expect("known encoding"),
            name: entry["name"].as_str().expect("name").to_owned(),
            text: entry["text"].as_str().expect("text").to_owned(),
            ids: entry["ids"]
                .as_array()
                .expect("ids")
                .iter()
                .map(|id| id.as_u64().and_then(|id| u32::try_from(id).ok()).expect("id is a u32"))
                .collect(),
        })
        .collect()
}

#[test]
fn fixtures_cover_both_encodings() {
    let all = fixtures();
    for encoding in Encoding::ALL {
        assert!(all.iter().filter(|f| f.encoding == encoding).count() >= 15);
    }
}

#[test]
fn ids_match_js_tiktoken() {
    for fixture in fixtures() {
        let t = tokenizer(fixture.encoding).expect("loads");
        assert_eq!(t.encode(&fixture.text), fixture.ids, "{} {}", fixture.encoding, fixture.name);
    }
}

#[test]
fn counts_match_js_tiktoken() {
    for fixture in fixtures() {
        let t = tokenizer(fixture.encoding).expect("loads");
        let expected = fixture.ids.len();
        let label = format!("{} {}", fixture.encoding, fixture.name);
        assert_eq!(t.count(&fixture.text), expected, "{label}");
        assert_eq!(t.estimate(&fixture.text), expected, "{label}");
        let within = t.count_up_to(&fixture.text, expected);
        assert!(!within.exceeded && within.value == expected, "{label}");
        if expected > 0 {
            let over = t.count_up_to(&fixture.text, expected - 1);
            assert!(over.exceeded && over.value > expected - 1 && over.value <= expected, "{label}");
        }
        assert_eq!(t.prefix_within(&fixture.text, expected), fixture.text.len(), "{label}");
        assert_eq!(t.suffix_within(&fixture.text, expected), 0, "{label}");
    }
}

#[test]
fn special_tokens_are_ordinary_text() {
    for encoding in Encoding::ALL {
        let t = tokenizer(encoding).expect("loads");
        assert!(t.count("<|endoftext|>") > 1, "{encoding}");
    }
}

#[test]
fn a_long_repeated_text_counts_as_its_repetitions() {
    // Lines start with a letter after a newline, so each line is encoded alone.
    let line = "Line of text with 12 numbers, punctuation; and émoji 😀\n";
    for encoding in Encoding::ALL {
        let t = tokenizer(encoding).expect("loads");
        let per_line = t.count(line);
        let text = line.repeat(30_000);
        assert!(text.len() > offload_tokens::PARALLEL_MIN_BYTES);
        assert_eq!(t.count(&text), per_line * 30_000, "{encoding}");
        assert_eq!(t.encode(&text).len(), per_line * 30_000, "{encoding}");
    }
}

#[test]
fn max_token_bytes_bounds_every_count() {
    for encoding in Encoding::ALL {
        let t = tokenizer(encoding).expect("loads");
        assert_eq!(t.max_token_bytes(), 128, "{encoding}");
        for fixture in fixtures().iter().filter(|f| f.encoding == encoding) {
            assert!(fixture.ids.len() >= fixture.text.len().div_ceil(t.max_token_bytes()));
        }
        let spaces = " ".repeat(10_000);
        assert!(t.count(&spaces) >= spaces.len().div_ceil(t.max_token_bytes()));
    }
}
