//! Limits applied to one query, and the fixed bounds behind them.

use std::time::Duration;

/// Deepest nesting of arrays/objects accepted in the document and built at run time.
///
/// A document nested deeper is refused as not JSON; a value that would be
/// nested deeper at run time stops the query with a "too expensive" error.
pub const MAX_DEPTH: usize = 10_000;

/// Longest jq expression accepted, in bytes.
///
/// jaq's parser and compiler recurse on the structure of the expression; this
/// bound keeps that recursion far inside the evaluator thread's stack.
pub const MAX_EXPRESSION_BYTES: usize = 16 * 1024;

/// Stack size of the evaluator thread.
pub(crate) const STACK_SIZE: usize = 256 * 1024 * 1024;

/// Stack kept free below the evaluation-depth check.
///
/// Work that runs between two metered steps without being metered itself
/// (dropping, comparing or printing a value nested [`MAX_DEPTH`] deep, and the
/// few interpreter frames between two steps) must fit into this room.
pub(crate) const STACK_RESERVE: usize = 48 * 1024 * 1024;

/// Resource limits for one call of [`crate::run_query`].
///
/// Every limit is enforced while the query runs; when one is exceeded the
/// query stops with [`crate::QueryError::TooExpensive`], except the two output
/// limits, which end the query early with [`crate::QueryOutput::truncated`]
/// set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryLimits {
    /// Evaluation steps allowed: one step per interpreter dispatch, per value
    /// operation, per element produced by an iteration, and per node visited
    /// while comparing values (long operations are charged proportionally).
    pub max_steps: u64,
    /// Wall-clock time allowed for parsing the document and evaluating the expression.
    pub time_budget: Duration,
    /// Cumulative bytes of memory the query may allocate: its copy of the
    /// document, the values read from it and every value it builds (see the
    /// crate docs for what each value is charged). This also bounds the work
    /// of copying operations. All queries of the process together are further
    /// held to [`crate::SHARED_MEMORY_BYTES`].
    pub max_memory_bytes: usize,
    /// Total bytes of compact JSON output (without line breaks) returned.
    pub max_output_bytes: usize,
    /// Number of results returned.
    pub max_outputs: usize,
}

impl Default for QueryLimits {
    /// 50 million steps, 5 seconds, 1 GiB of memory, 64 MiB of output, 1 million results.
    ///
    /// 50 million steps take about 1 to 2 seconds in a release build; that
    /// lets one pass of `to_entries` or `test(...)` over each of the 150,000
    /// records of a 20 MB document finish (10 million would not).
    fn default() -> Self {
        Self {
            max_steps: 50_000_000,
            time_budget: Duration::from_secs(5),
            max_memory_bytes: 1 << 30,
            max_output_bytes: 64 << 20,
            max_outputs: 1_000_000,
        }
    }
}
