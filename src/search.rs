//! Retrieval search over bytes that already live in native memory or were handed in once.
//!
//! Searches run on their own threads (Tokio's blocking pool), at most one per
//! core at a time ([`run_search`]): however many the agents start, they never
//! occupy the libuv pool that file I/O and every other worker task share, and
//! a search waiting for its turn holds no thread.

use std::sync::LazyLock;

use napi::bindgen_prelude::*;
use napi::tokio::sync::Semaphore;
use napi_derive::napi;
use offload_search::{search_uncached, LineRange, RetrievalQuery, StoredSearch};

/// Searches allowed to run at once: one per core (at least two).
static SEARCH_SLOTS: LazyLock<Semaphore> = LazyLock::new(|| {
  let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
  Semaphore::new(cores.max(2))
});

/// Runs a search `job` on a blocking thread once a search slot is free. A
/// panic in the job rejects with an error instead of crossing into JavaScript.
pub(crate) async fn run_search<T: Send + 'static>(job: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
  let _slot = SEARCH_SLOTS.acquire().await.map_err(|_| Error::from_reason("the search pool is closed"))?;
  spawn_blocking(job).await.map_err(|e| Error::from_reason(format!("search task failed: {e}")))?
}

/// The retrieval tool's search arguments, already validated by the tool's schema.
#[napi(object)]
#[derive(Clone, Debug)]
pub struct SearchQuery {
  /// Regex or keyword (an empty string counts as absent, as in JavaScript).
  pub pattern: Option<String>,
  /// First line of `line_range` (1-indexed).
  pub line_start: Option<f64>,
  /// Last line of `line_range` (1-indexed, inclusive).
  pub line_end: Option<f64>,
  /// `context_lines`, when the caller gave it.
  pub context_lines: Option<f64>,
}

/// The result of a search: exactly one of `output` and `error` is set when the
/// content was searchable; both are absent when it was binary.
#[napi(object)]
pub struct SearchOutcome {
  /// Content type of the searched block.
  pub content_type: String,
  /// The formatted search result shown to the model.
  pub output: Option<String>,
  /// Why the search could not run (for example a pattern that backtracks too much).
  pub error: Option<String>,
}

fn to_u64(v: f64) -> u64 {
  if v.is_nan() || v <= 0.0 {
    0
  } else if v >= u64::MAX as f64 {
    u64::MAX
  } else {
    v as u64
  }
}

/// The core's form of the tool's query.
pub(crate) fn retrieval_query(query: &SearchQuery) -> RetrievalQuery<'_> {
  let line_range = match (query.line_start, query.line_end) {
    (Some(start), Some(end)) => Some(LineRange { start: to_u64(start), end: to_u64(end) }),
    _ => None,
  };
  RetrievalQuery { pattern: query.pattern.as_deref(), line_range, context_lines: query.context_lines.map(to_u64) }
}

/// The outcome JavaScript receives for a search's result.
pub(crate) fn outcome(searched: StoredSearch) -> SearchOutcome {
  let content_type = searched.content_type;
  match searched.result {
    None => SearchOutcome { content_type, output: None, error: None },
    Some(Ok(output)) => SearchOutcome { content_type, output: Some(output), error: None },
    Some(Err(err)) => SearchOutcome { content_type, output: None, error: Some(err.to_string()) },
  }
}

/// Runs a retrieval query over `content` whose type is `content_type`.
pub fn run_query(content: &[u8], content_type: String, query: &SearchQuery, max_chars: u32) -> SearchOutcome {
  outcome(search_uncached(content, content_type, &retrieval_query(query), max_chars as usize))
}

/// Searches `content` (of type `contentType`) on a search thread.
#[napi]
pub async fn search_bytes(content: Uint8Array, content_type: String, query: SearchQuery, max_chars: u32) -> Result<SearchOutcome> {
  run_search(move || Ok(run_query(&content, content_type, &query, max_chars))).await
}
