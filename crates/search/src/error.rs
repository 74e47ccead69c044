//! Errors reported to the model instead of search results.

/// Why a search could not be carried out. The `Display` text is a single
/// line addressed to the model, saying what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// Compiling the pattern would exceed the engine's size limit.
    #[error("Error: the pattern is too large to compile (over the {limit_bytes}-byte limit for compiled patterns); use smaller repetition counts (for example x+ instead of x{{5000}}), fewer alternatives, or a plain keyword.")]
    PatternTooLarge {
        /// The size limit, in bytes, that was exceeded.
        limit_bytes: usize,
    },
    /// A pattern with look-around or back-references backtracked too much.
    #[error("Error: the pattern needs too much backtracking (more than {limit} steps on line {line}); simplify it: avoid nested or overlapping quantifiers such as (a+)+, (\\w+\\s?)* or (.*a){{10}}, and avoid combining back-references or look-arounds with .*, or search for a plain keyword instead.")]
    TooMuchBacktracking {
        /// Backtracking step limit per line.
        limit: usize,
        /// 1-based line number on which the limit was hit.
        line: u64,
    },
    /// A pattern with look-around or back-references ran out of time.
    #[error("Error: the search took longer than {seconds} seconds because the pattern uses look-around or back-references, which are slow on large content; use a simpler pattern without (?=, (?!, (?<=, (?<! or \\1, or narrow the search with line_range.")]
    TimeBudgetExceeded {
        /// The time budget in seconds.
        seconds: u64,
    },
    /// A linear-engine pattern whose work on this content would be out of
    /// bounds (each character would cost thousands of steps).
    #[error("Error: the pattern is too expensive to run on this content (counted repetitions such as [ab]{{1000}} make every character cost thousands of steps); use smaller repetition counts or a plain keyword, or narrow the search with line_range.")]
    TooExpensive,
    /// A search ran out of time (or would have, at the rate it was going).
    #[error("Error: the search would take longer than {seconds} seconds on this content; use a simpler pattern or a plain keyword, or narrow the search with line_range.")]
    Deadline {
        /// The time budget in seconds.
        seconds: u64,
    },
    /// A lookbehind whose body can match strings of different lengths.
    #[error("Error: variable-length lookbehind is not supported (for example (?<=a+) or (?<=\\w*)); use a fixed-length lookbehind such as (?<=ab) or (?<=a|bc), or drop the lookbehind and match the text directly.")]
    UnsupportedLookbehind,
    /// Any other failure to build the pattern.
    #[error("Error: the pattern could not be compiled ({0}); simplify it or search for a plain keyword.")]
    Compile(String),
}
