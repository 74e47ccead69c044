//! The budget of the process-wide cache of prepared search texts (see
//! `offload_search::prepared_cache`), and what it holds: internal calls for
//! the benchmark and the tests, not part of the package's API.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_search::PreparedCache;

/// What the search cache holds.
#[napi(object)]
pub struct SearchCacheStats {
  /// The budget in bytes (0: disabled).
  pub budget_bytes: f64,
  /// Bytes charged by the entries held.
  pub used_bytes: f64,
  /// Number of entries held.
  pub entries: u32,
}

/// Sets the byte budget of the search cache of the process, evicting what
/// no longer fits; 0 empties and disables it. A fraction of a byte is
/// dropped; budgets beyond the address space mean no limit.
#[napi(catch_unwind)]
pub fn set_search_cache_bytes(bytes: f64) -> Result<()> {
  if !(bytes.is_finite() && bytes >= 0.0) {
    return Err(Error::new(
      Status::InvalidArg,
      format!("setSearchCacheBytes: the budget must be a finite number of bytes >= 0 (0 disables the cache), got {bytes}"),
    ));
  }
  // `as` saturates: values beyond usize::MAX become usize::MAX.
  PreparedCache::global().set_budget(bytes as usize);
  Ok(())
}

/// What the search cache of the process holds now.
#[napi(catch_unwind)]
pub fn search_cache_stats() -> SearchCacheStats {
  let cache = PreparedCache::global();
  SearchCacheStats {
    budget_bytes: cache.budget() as f64,
    used_bytes: cache.used_bytes() as f64,
    entries: u32::try_from(cache.len()).unwrap_or(u32::MAX),
  }
}
