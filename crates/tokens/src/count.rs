//! Exact counting, in chunks and across threads for large texts.

use std::num::NonZeroUsize;
use std::thread;

use crate::boundary::{chunks, split_evenly};
use crate::tokenizer::Tokenizer;

/// Inputs at least this large are counted on several threads.
pub const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// Each thread gets at least this many bytes.
const MIN_BYTES_PER_THREAD: usize = 256 * 1024;

/// Texts are encoded in chunks of about this size, so that no token vector
/// longer than a chunk's is ever allocated.
const CHUNK_BYTES: usize = 64 * 1024;

impl Tokenizer {
    /// The exact number of tokens of `text` (as `encode(text).len()`).
    ///
    /// The text is encoded in chunks cut at [split points](crate::boundary),
    /// which keeps memory flat. Inputs of [`PARALLEL_MIN_BYTES`] or more are
    /// cut at split points into one part per available core, counted on
    /// scoped threads; the parts' counts add up to the count of the whole.
    /// A text without split points (one huge word or run of symbols) is
    /// counted in one piece on the calling thread.
    pub fn count(&self, text: &str) -> usize {
        if text.len() < PARALLEL_MIN_BYTES {
            return self.count_chunked(text);
        }
        let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
        let threads = cores.min(text.len() / MIN_BYTES_PER_THREAD).max(1);
        self.count_in_parts(text, threads)
    }

    /// Counts `text` chunk by chunk on the calling thread.
    pub(crate) fn count_chunked(&self, text: &str) -> usize {
        chunks(text, CHUNK_BYTES).map(|chunk| self.count_whole(chunk)).sum()
    }

    /// Counts `text` cut into up to `parts` parts, one thread per part (the
    /// first on the calling thread). A thread that cannot be started leaves
    /// its part to the calling thread.
    pub(crate) fn count_in_parts(&self, text: &str, parts: usize) -> usize {
        let pieces = split_evenly(text, parts);
        let Some((first, rest)) = pieces.split_first() else { return 0 };
        if rest.is_empty() {
            return self.count_chunked(first);
        }
        thread::scope(|scope| {
            let mut inline = 0;
            let mut handles = Vec::with_capacity(rest.len());
            for &piece in rest {
                match thread::Builder::new().spawn_scoped(scope, move || self.count_chunked(piece)) {
                    Ok(handle) => handles.push(handle),
                    Err(_) => inline += self.count_chunked(piece),
                }
            }
            let mut total = inline + self.count_chunked(first);
            for handle in handles {
                total += handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
            total
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{tokenizer, Encoding};

    fn sample(len: usize) -> String {
        let lines = [
            "2024-05-01T12:00:00Z INFO worker-3 GET /api/v1/items/42 status=200\n",
            "The quick brown fox jumps over the lazy dog; 日本語のテキスト。\n",
            "    fn main() { println!(\"{}\", 1 + 2); }\r\n",
            "{\"id\":17,\"tags\":[\"a\",\"b\"],\"ok\":true}\n",
            "😀🎉 emoji line with <|endoftext|> inside\n",
        ];
        let mut out = String::new();
        let mut i = 0;
        while out.len() < len {
            out.push_str(lines[i % lines.len()]);
            i += 1;
        }
        out
    }

    #[test]
    fn parallel_count_equals_single_call() {
        let text = sample(300_000);
        for encoding in Encoding::ALL {
            let t = tokenizer(encoding).expect("loads");
            let exact = t.encode(&text).len();
            assert_eq!(t.count_chunked(&text), exact);
            for parts in [2, 3, 7, 16] {
                assert_eq!(t.count_in_parts(&text, parts), exact, "{encoding} in {parts} parts");
            }
        }
    }

    #[test]
    fn large_inputs_take_the_parallel_path() {
        let text = sample(super::PARALLEL_MIN_BYTES + 12_345);
        let t = tokenizer(Encoding::O200kBase).expect("loads");
        assert_eq!(t.count(&text), t.encode(&text).len());
    }

    #[test]
    fn texts_without_split_points_are_counted_whole() {
        let text = "!#%&*+=?@^~".repeat(50_000);
        let t = tokenizer(Encoding::Cl100kBase).expect("loads");
        assert_eq!(t.count_in_parts(&text, 4), t.encode(&text).len());
        assert_eq!(t.count(""), 0);
    }
}
