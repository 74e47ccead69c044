//! Exact BPE token counts in OpenAI encodings (`o200k_base`, `cl100k_base`).
//!
//! The `*Sync` and budgeted calls run on the JavaScript thread and are meant for
//! short texts; `countTokens`, `countTokensUpToAsync` and `loadEncoding` run on a
//! worker thread. The asynchronous calls take the text as a plain copy of its
//! UTF-16 code units and encode it to UTF-8 on the worker (10 MB of CJK text
//! costs the event loop about 2 ms instead of 25). A vocabulary is loaded on
//! first use (a few tenths of a second); `loadEncoding` does that ahead of time.

use std::sync::atomic::{AtomicBool, Ordering};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_tokens::{tokenizer, Encoding, TokenError, Tokenizer};

use crate::error::to_js_error;
use crate::task::{on_worker, Work};
use crate::text::Utf16Slice;

/// Largest integer a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The tokenizer of `encoding`, loading it if needed. Every binding reaches the
/// tokenizers through here: loading a vocabulary parses a full encoder and drops it
/// (tens of MB), and mimalloc keeps freed pages for reuse; they are handed back to
/// the system once, on the loading thread, right after the first load.
pub(crate) fn shared_tokenizer(encoding: Encoding) -> std::result::Result<&'static Tokenizer, TokenError> {
  static RELEASED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
  let tokenizer = tokenizer(encoding)?;
  let slot = match encoding {
    Encoding::O200kBase => 0,
    Encoding::Cl100kBase => 1,
  };
  if !RELEASED[slot].swap(true, Ordering::Relaxed) {
    // SAFETY: mi_collect only returns this thread's free pages to the system; it
    // takes no pointers and is safe to call at any time.
    unsafe { libmimalloc_sys2::mi_collect(true) };
  }
  Ok(tokenizer)
}

/// The tokenizer named `encoding`, loading it if needed; an unknown name is an
/// `Error` with the crate's message (which lists the supported encodings).
fn load(encoding: &str) -> Result<&'static Tokenizer> {
  shared_tokenizer(parse_encoding(encoding)?).map_err(to_js_error)
}

/// Parses an encoding name; an unknown name is an `Error` with the crate's message.
pub(crate) fn parse_encoding(encoding: &str) -> Result<Encoding> {
  encoding.parse().map_err(to_js_error)
}

/// A token count or budget given by JavaScript: a non-negative integer.
fn token_budget(what: &str, value: f64) -> Result<usize> {
  if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_SAFE_INTEGER {
    Ok(value as usize)
  } else {
    Err(Error::new(Status::InvalidArg, format!("{what} must be a non-negative integer, got {value}")))
  }
}

/// Number of UTF-16 code units of `text` (its JavaScript `length`).
fn utf16_len(text: &str) -> usize {
  text.chars().map(char::len_utf16).sum()
}

/// What `countTokensUpTo` returns.
#[napi(object)]
pub struct TokenCount {
  /// The exact count when `exceeded` is false; otherwise a number of tokens
  /// above the limit that the text has at least.
  pub count: f64,
  /// Whether the text has more tokens than the limit.
  pub exceeded: bool,
}

/// Text handed to a worker as UTF-16; `take` encodes it as UTF-8 there, with
/// lone surrogates replaced by U+FFFD as `TextEncoder` does.
struct WorkerText(Vec<u16>);

impl WorkerText {
  fn take(&mut self) -> String {
    String::from_utf16_lossy(&std::mem::take(&mut self.0))
  }
}

fn count_up_to(text: &str, encoding: &str, limit: f64) -> Result<TokenCount> {
  let limit = token_budget("limit", limit)?;
  let outcome = load(encoding)?.count_up_to(text, limit);
  Ok(TokenCount { count: outcome.value as f64, exceeded: outcome.exceeded })
}

/// Number of tokens of `text` in `encoding` (`'o200k_base'` or `'cl100k_base'`),
/// counted on a worker thread; special tokens such as `<|endoftext|>` count as
/// ordinary text.
#[napi(ts_args_type = "text: string, encoding: string", ts_return_type = "Promise<number>", catch_unwind)]
pub fn count_tokens(text: Utf16Slice, encoding: String) -> AsyncTask<Work<f64>> {
  let mut text = WorkerText(text.into_units());
  on_worker(move || Ok(load(&encoding)?.count(&text.take()) as f64))
}

/// [`count_tokens`] on the calling thread (for short texts).
#[napi(catch_unwind)]
pub fn count_tokens_sync(text: String, encoding: String) -> Result<f64> {
  Ok(load(&encoding)?.count(&text) as f64)
}

/// Counts the tokens of `text` until the count passes `limit`, on the calling
/// thread: the exact count when it is at most `limit`, else `exceeded` with a
/// count above `limit` that the text has at least. Costs about as much as
/// encoding `limit` tokens, however long the text.
#[napi(catch_unwind)]
pub fn count_tokens_up_to(text: String, encoding: String, limit: f64) -> Result<TokenCount> {
  count_up_to(&text, &encoding, limit)
}

/// [`count_tokens_up_to`] on a worker thread.
#[napi(ts_args_type = "text: string, encoding: string, limit: number", ts_return_type = "Promise<TokenCount>", catch_unwind)]
pub fn count_tokens_up_to_async(text: Utf16Slice, encoding: String, limit: f64) -> AsyncTask<Work<TokenCount>> {
  let mut text = WorkerText(text.into_units());
  on_worker(move || count_up_to(&text.take(), &encoding, limit))
}

/// Loads the vocabulary of `encoding` on a worker thread (once per process);
/// resolves with its longest token's length in UTF-8 bytes.
#[napi(ts_return_type = "Promise<number>", catch_unwind)]
pub fn load_encoding(encoding: String) -> AsyncTask<Work<u32>> {
  on_worker(move || max_token_bytes(encoding))
}

/// The length in UTF-8 bytes of the longest token of `encoding`: a text of `n`
/// bytes has at least `ceil(n / maxTokenBytes)` tokens. Loads the vocabulary on
/// the calling thread if needed.
#[napi(catch_unwind)]
pub fn max_token_bytes(encoding: String) -> Result<u32> {
  u32::try_from(load(&encoding)?.max_token_bytes()).map_err(to_js_error)
}

/// The length (in UTF-16 code units, as JavaScript's `length`) of the longest
/// prefix of `text` with at most `maxTokens` tokens. The prefix ends after a
/// token and never inside a character, so never between the halves of a
/// surrogate pair.
#[napi(catch_unwind)]
pub fn token_prefix_length(text: String, encoding: String, max_tokens: f64) -> Result<f64> {
  let max_tokens = token_budget("maxTokens", max_tokens)?;
  let end = load(&encoding)?.prefix_within(&text, max_tokens);
  Ok(utf16_len(&text[..end]) as f64)
}
