//! Retrieval search over bytes that already live in native memory or were handed in once.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_search::{decode_text, is_searchable_content, run_retrieval_query, LineRange, RetrievalQuery};

use crate::task::{on_worker, Work};

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

/// Runs a retrieval query over `content` whose type is `content_type`.
pub fn run_query(content: &[u8], content_type: String, query: &SearchQuery, max_chars: u32) -> SearchOutcome {
  if !is_searchable_content(&content_type) {
    return SearchOutcome { content_type, output: None, error: None };
  }
  let text = decode_text(content);
  let line_range = match (query.line_start, query.line_end) {
    (Some(start), Some(end)) => Some(LineRange { start: to_u64(start), end: to_u64(end) }),
    _ => None,
  };
  let request = RetrievalQuery {
    pattern: query.pattern.as_deref(),
    line_range,
    context_lines: query.context_lines.map(to_u64),
  };
  match run_retrieval_query(&text, &request, max_chars as usize) {
    Ok(output) => SearchOutcome { content_type, output: Some(output), error: None },
    Err(err) => SearchOutcome { content_type, output: None, error: Some(err.to_string()) },
  }
}

/// Searches `content` (of type `contentType`) on a worker thread.
#[napi(ts_return_type = "Promise<SearchOutcome>")]
pub fn search_bytes(content: Uint8Array, content_type: String, query: SearchQuery, max_chars: u32) -> AsyncTask<Work<SearchOutcome>> {
  on_worker(move || Ok(run_query(&content, content_type, &query, max_chars)))
}
