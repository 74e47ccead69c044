//! Retrieval search for offloaded content: a byte-for-byte reimplementation
//! of the `@strands-agents/sdk` context-offloader `searchContent` (grep-like
//! pattern search and line-range access with a character budget) that
//! cannot hang.
//!
//! Patterns follow the SDK exactly: they are cut to 200 UTF-16 code units,
//! patterns caught by the SDK's nested-quantifier heuristic
//! (`/[+*]\s*\)\s*[+*]/`) and patterns JavaScript rejects are searched as
//! literal text, everything else is parsed as an ECMAScript regular
//! expression (non-unicode, Annex B) and translated to Rust with JavaScript
//! meanings (`\d`, `\w`, `\b` are ASCII; `\s` is the JavaScript whitespace
//! set; `.` excludes `\n`, `\r`, U+2028 and U+2029; `^`/`$` anchor the line).
//! Patterns without look-around or back-references run on a linear-time
//! lazy DFA that gives up instead of spending minutes on patterns whose
//! states explode (see [`linear`]); the rest run on `fancy-regex` with a
//! backtracking step limit per line. Every search has a time budget
//! ([`deadline`]); what cannot run safely is reported as [`SearchError`].
//!
//! # Known divergences from JavaScript
//!
//! * **Code points, not code units.** JavaScript non-unicode regexes see an
//!   astral character (such as an emoji) as two UTF-16 code units; here it is
//!   one character. So `^.$` matches `"😀"` here but not in JavaScript, a
//!   quantifier after an astral literal repeats the whole character, and
//!   surrogates written as escapes are mapped to whole characters: a pair
//!   (`\uD83D\uDE00`) is that character, a lone high (or low) surrogate
//!   matches any astral character with that half.
//! * **Cutting text.** Where JavaScript would cut a surrogate pair in half
//!   (the 200-unit pattern cap, the 50-unit pattern in the header, the
//!   `maxChars` cut without a newline), the cut is made before the pair.
//! * **Back-references.** A reference to a group that has not participated
//!   matches empty, as in JavaScript; but captures inside a repeated group
//!   are not reset between iterations as JavaScript does, which can change
//!   the outcome of rare patterns such as `(?:(a)|b)+\1`.
//! * **Lookbehind** must have a bounded set of fixed lengths (for example
//!   `(?<=ab)` or `(?<=a|bc)`); variable-length lookbehind such as
//!   `(?<=a+)` is reported as [`SearchError::UnsupportedLookbehind`].
//! * **Resource limits.** Patterns whose compiled form exceeds the size
//!   limits (for example `(?:\w{1000}){1000}`) are reported as
//!   [`SearchError::PatternTooLarge`]; look-around/back-reference patterns
//!   that backtrack more than [`matcher::BACKTRACK_LIMIT`] steps on one line,
//!   linear patterns whose work on the content is out of bounds
//!   ([`SearchError::TooExpensive`]), and searches that would run longer
//!   than [`deadline::SEARCH_TIME_BUDGET`] are reported instead of hanging. Repetition counts too large for V8 (more
//!   than 2^32 - 1) are treated as unbounded maxima.
//! * **Group names** use an approximation of Unicode `ID_Start` /
//!   `ID_Continue` (alphabetic / alphanumeric plus `$`, `_`, ZWNJ, ZWJ and
//!   common combining marks) to decide validity.
//! * **Line ranges** are taken as validated by the tool schema (`>= 1`); a
//!   start of 0 behaves like 1.

pub mod answers;
pub mod artifact_cache;
pub mod deadline;
pub mod decode;
pub mod document_cache;
pub mod error;
pub mod format;
pub mod js_regex;
pub mod linear;
pub mod lines;
pub mod matcher;
pub mod prepared;
pub mod prepared_cache;
mod sampled_lines;
pub mod search;
pub mod stored;
pub mod utf16;

pub use decode::decode_text;
pub use error::SearchError;
pub use prepared::PreparedText;
pub use answers::{removal_hook, AnswerCache, Built, PageAnswer, Paging, Source};
pub use artifact_cache::Version;
pub use decode::DecodedText;
pub use document_cache::DocumentCache;
pub use prepared_cache::PreparedCache;
pub use search::{
    is_full_retrieval, run_retrieval_query, run_retrieval_query_indexed, search_content,
    search_lines, LineRange, RetrievalQuery, DEFAULT_CONTEXT_LINES,
};
pub use stored::{search_file, search_file_once, search_memory, search_uncached, StoredSearch};

/// MIME types outside `text/*` that the SDK treats as searchable text.
const TEXT_APPLICATION_TYPES: &[&str] = &[
    "application/json",
    "application/xml",
    "application/javascript",
    "application/typescript",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/sql",
    "application/graphql",
    "application/xhtml+xml",
];

/// The SDK's `isSearchableContent`: `text/*` or one of a fixed list of
/// textual `application/*` types (exact, case-sensitive comparison).
pub fn is_searchable_content(content_type: &str) -> bool {
    content_type.starts_with("text/") || TEXT_APPLICATION_TYPES.contains(&content_type)
}
