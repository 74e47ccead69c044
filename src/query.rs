//! jq queries over stored JSON for the retrieval tool, on a search thread.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_query::{run_query, QueryLimits};

use crate::search::run_search;

/// The outcome of a query: the results as compact JSON lines, or why there are none.
#[napi(object)]
pub struct QueryAnswer {
  /// Each result as compact JSON (`jq -c`), in order.
  pub lines: Vec<String>,
  /// Whether the output limit stopped the query (more results may exist).
  pub truncated: bool,
  /// Why the query failed, as one line addressed to the model (`not JSON: …`,
  /// `bad jq expression: …`, `jq error: …`, `query too expensive: …`).
  pub error: Option<String>,
}

/// Runs the jq `expression` over the JSON `document` with the default limits
/// (50 million steps, 5 s, 1 GiB of values, 64 MiB and 1 million results), on a
/// search thread (at most one per core at a time).
#[napi]
pub async fn query_json(document: Uint8Array, expression: String) -> Result<QueryAnswer> {
  run_search(move || {
    Ok(match run_query(&document, &expression, &QueryLimits::default()) {
      Ok(output) => QueryAnswer { lines: output.lines, truncated: output.truncated, error: None },
      Err(err) => QueryAnswer { lines: Vec::new(), truncated: false, error: Some(err.to_string()) },
    })
  })
  .await
}
