//! The sampled estimate against exact counts on generated texts whose kind
//! does not change along their length.

use offload_tokens::{tokenizer, Encoding, ESTIMATE_EXACT_BYTES};

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "model",
    "returns",
    "a",
    "large",
    "result",
    "which",
    "is",
    "stored",
    "and",
    "replaced",
    "by",
    "preview",
    "context",
    "window",
    "agent",
    "tool",
    "call",
    "with",
    "references",
    "to",
    "retrieve",
    "content",
    "later",
];
const CJK: &[&str] =
    &["日本語", "テキスト", "東京", "天気", "晴れ", "です", "ます", "中文", "世界", "你好", "。", "、"];

fn generate(kind: &str, bytes: usize, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut out = String::with_capacity(bytes + 256);
    let mut line = 0usize;
    while out.len() < bytes {
        line += 1;
        match kind {
            "logs" => out.push_str(&format!(
                "2024-05-01T{:02}:{:02}:{:02}.{:03}Z INFO worker-{} GET /api/v1/items/{} status=200 duration_ms={}\n",
                line / 3600 % 24,
                line / 60 % 60,
                line % 60,
                rng.below(1000),
                rng.below(8),
                rng.below(100_000),
                rng.below(250)
            )),
            "prose" => {
                let n = 8 + rng.below(20);
                let words: Vec<&str> = (0..n).map(|_| rng.pick(WORDS)).collect();
                out.push_str(&words.join(" "));
                out.push_str(". ");
                if rng.below(5) == 0 {
                    out.push('\n');
                }
            }
            "code" => out.push_str(&format!(
                "    let {}_{} = {}({}, {}) + {};\n",
                rng.pick(WORDS),
                line,
                rng.pick(WORDS),
                rng.pick(WORDS),
                rng.below(1000),
                rng.below(10)
            )),
            "json" => out.push_str(&format!(
                "{{\"id\":{},\"name\":\"{}-{}\",\"score\":{}.{},\"tags\":[\"{}\",\"{}\"]}},",
                line,
                rng.pick(WORDS),
                rng.below(10_000),
                rng.below(100),
                rng.below(100),
                rng.pick(WORDS),
                rng.pick(WORDS)
            )),
            "cjk" => {
                for _ in 0..(5 + rng.below(10)) {
                    out.push_str(rng.pick(CJK));
                }
                out.push('\n');
            }
            _ => {
                const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
                for _ in 0..76 {
                    out.push(char::from(ALPHABET[rng.below(64)]));
                }
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn estimates_are_within_ten_percent_on_homogeneous_texts() {
    for encoding in Encoding::ALL {
        let t = tokenizer(encoding).expect("loads");
        for (i, kind) in ["logs", "prose", "code", "json", "cjk", "base64"].into_iter().enumerate() {
            let text = generate(kind, 600_000, 7 + i as u64);
            assert!(text.len() > ESTIMATE_EXACT_BYTES);
            let exact = t.count(&text) as f64;
            let estimate = t.estimate(&text) as f64;
            let error = (estimate - exact).abs() / exact;
            assert!(error < 0.10, "{encoding} {kind}: estimate {estimate} vs exact {exact}");
        }
    }
}

#[test]
fn estimates_respect_the_lower_bound() {
    let t = tokenizer(Encoding::O200kBase).expect("loads");
    let text = " ".repeat(2_000_000);
    assert!(t.estimate(&text) >= text.len().div_ceil(t.max_token_bytes()));
}
