//! The budgets of the process-wide caches of prepared search texts (see
//! `offload_search::prepared_cache`), of answers being paged (see
//! `offload_search::answers`) and of JSON documents read for jq queries (see
//! `offload_search::document_cache`), and what they hold: internal calls for
//! the benchmark and the tests, not part of the package's API.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_search::artifact_cache::ArtifactCache;
use offload_search::{AnswerCache, DocumentCache, PreparedCache};

/// What a cache holds.
#[napi(object)]
pub struct SearchCacheStats {
  /// The budget in bytes (0: disabled).
  pub budget_bytes: f64,
  /// Bytes charged by the entries held.
  pub used_bytes: f64,
  /// Number of entries held.
  pub entries: u32,
}

/// A budget given from JavaScript as a byte count: a fraction of a byte is dropped,
/// budgets beyond the address space mean no limit (`as` saturates).
fn budget_bytes(bytes: f64, what: &str) -> Result<usize> {
  if !(bytes.is_finite() && bytes >= 0.0) {
    return Err(Error::new(
      Status::InvalidArg,
      format!("{what}: the budget must be a finite number of bytes >= 0 (0 disables the cache), got {bytes}"),
    ));
  }
  Ok(bytes as usize)
}

fn stats_of<V>(cache: &ArtifactCache<V>) -> SearchCacheStats {
  SearchCacheStats {
    budget_bytes: cache.budget() as f64,
    used_bytes: cache.used_bytes() as f64,
    entries: u32::try_from(cache.len()).unwrap_or(u32::MAX),
  }
}

/// Sets the byte budget of the search cache of the process, evicting what
/// no longer fits; 0 empties and disables it.
#[napi(catch_unwind)]
pub fn set_search_cache_bytes(bytes: f64) -> Result<()> {
  PreparedCache::global().set_budget(budget_bytes(bytes, "setSearchCacheBytes")?);
  Ok(())
}

/// What the search cache of the process holds now.
#[napi(catch_unwind)]
pub fn search_cache_stats() -> SearchCacheStats {
  stats_of(PreparedCache::global())
}

/// Sets the byte budget of the process's cache of answers being paged,
/// evicting what no longer fits; 0 empties and disables it.
#[napi(catch_unwind)]
pub fn set_answer_cache_bytes(bytes: f64) -> Result<()> {
  AnswerCache::global().set_budget(budget_bytes(bytes, "setAnswerCacheBytes")?);
  Ok(())
}

/// What the answer cache of the process holds now.
#[napi(catch_unwind)]
pub fn answer_cache_stats() -> SearchCacheStats {
  stats_of(AnswerCache::global())
}

/// Sets the byte budget of the process's cache of JSON documents read for jq
/// queries, evicting what no longer fits; 0 empties and disables it.
#[napi(catch_unwind)]
pub fn set_query_cache_bytes(bytes: f64) -> Result<()> {
  DocumentCache::global().set_budget(budget_bytes(bytes, "setQueryCacheBytes")?);
  Ok(())
}

/// What the query document cache of the process holds now.
#[napi(catch_unwind)]
pub fn query_cache_stats() -> SearchCacheStats {
  stats_of(DocumentCache::global())
}
