//! Exact token counting with OpenAI's byte-pair encodings (`o200k_base`,
//! `cl100k_base`), for deciding what fits in a model's context.
//!
//! The vocabularies are bundled (through `tiktoken-rs`) and parsed lazily,
//! once per process, by [`tokenizer`]. Encoding gives tiktoken's token ids;
//! the pre-tokenizer regex is compiled once per thread, so that threads do
//! not contend, and long pieces merge in `n log n`. On top of that:
//!
//! * [`Tokenizer::count`]: exact counts, large inputs spread over all cores;
//! * [`Tokenizer::count_up_to`]: a count that stops soon after a limit;
//! * [`Tokenizer::prefix_within`] / [`Tokenizer::suffix_within`]: the longest
//!   prefix or suffix within a token budget;
//! * [`Tokenizer::estimate`]: a sampled estimate at a fixed cost.
//!
//! All of them rest on [split points](boundary), offsets at which a text can
//! be cut without changing its tokens.
//!
//! ```
//! use offload_tokens::{tokenizer, Encoding};
//!
//! let o200k = tokenizer("o200k_base".parse::<Encoding>()?)?;
//! assert_eq!(o200k.count("hello world"), 2);
//! assert_eq!(o200k.prefix_within("hello world", 1), "hello".len());
//! # Ok::<(), offload_tokens::TokenError>(())
//! ```

pub mod boundary;
mod bpe;
mod count;
mod encoding;
mod error;
mod estimate;
mod limit;
mod pretokenize;
mod tokenizer;
mod vocab;

pub use count::PARALLEL_MIN_BYTES;
pub use encoding::Encoding;
pub use error::TokenError;
pub use estimate::ESTIMATE_EXACT_BYTES;
pub use limit::Count;
pub use tokenizer::{tokenizer, Tokenizer};
