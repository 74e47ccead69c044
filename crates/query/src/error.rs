//! Errors of [`crate::run_query`].

/// Why a query produced no result.
///
/// The `Display` text of every variant is a single line meant to be shown to a
/// language model, saying what went wrong and how to continue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The document is not JSON (or not a whitespace-separated sequence of
    /// JSON values), or it is nested deeper than [`crate::MAX_DEPTH`].
    #[error("not JSON: {message} at line {line} column {column}")]
    NotJson {
        /// 1-based line of the offending byte.
        line: usize,
        /// 1-based column (in bytes) of the offending byte.
        column: usize,
        /// What was wrong, for example "expected value".
        message: String,
    },
    /// The expression could not be parsed or compiled (syntax error, unknown
    /// filter or variable, refused feature, too long).
    #[error("bad jq expression: {0}")]
    BadExpression(String),
    /// The expression raised a jq error while running, for example
    /// `cannot index "abc" with "a"`.
    #[error("jq error: {0}")]
    Runtime(String),
    /// The query exceeded one of its limits (steps, time, memory, nesting,
    /// recursion) or its first result alone exceeded the output limit.
    #[error("query too expensive: {0}")]
    TooExpensive(String),
    /// The query could not be run because of a fault of this library or of the
    /// machine (for example the evaluator thread could not be started, or
    /// jaq panicked).
    #[error("internal error while running the query: {0}")]
    Internal(String),
}
