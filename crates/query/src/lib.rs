//! Run a jq expression over a JSON document, under hard limits.
//!
//! This crate lets the retrieval tool of an LLM agent answer questions like
//! `.users[] | select(.role == "admin") | .email` about a large stored tool
//! result. The expression is parsed, compiled and evaluated by
//! [jaq](https://github.com/01mf02/jaq) (jaq-core, jaq-std; MIT licensed);
//! this crate supplies the value type, the document reader, the printer and the
//! limits. Results come back as compact JSON lines, like `jq -c`.
//!
//! ```
//! use offload_query::{run_query, QueryLimits};
//!
//! let doc = br#"{"users": [{"email": "a@x.org", "role": "admin"}, {"email": "b@x.org", "role": "user"}]}"#;
//! let out = run_query(doc, r#".users[] | select(.role == "admin") | .email"#, &QueryLimits::default())?;
//! assert_eq!(out.lines, [r#""a@x.org""#]);
//! assert!(!out.truncated);
//! # Ok::<(), offload_query::QueryError>(())
//! ```
//!
//! # Documents
//!
//! The document is one JSON value or several separated by whitespace; the
//! expression runs once per value, as `jq` does, and `input`/`inputs` read
//! the values after the current one. The reader accepts exactly RFC 8259 JSON
//! (no `NaN`, comments or trailing commas), skips a UTF-8 byte order mark,
//! refuses nesting deeper than [`MAX_DEPTH`] (10,000) levels, and reports the
//! line and column of the first error ([`QueryError::NotJson`]). Invalid UTF-8
//! inside strings is kept and printed as U+FFFD. An empty document is an error.
//!
//! # Output
//!
//! One line per result: object keys in insertion order, no spaces, strings
//! escaping `"`, `\` and U+0000..U+001F, U+007F. Integers are printed exactly;
//! number literals (from the document or the expression) are printed as
//! written; computed floating-point numbers are printed in the shortest form
//! that reads back to the same double, laid out like jq (`1e+17`, `1e-05`,
//! `0.30000000000000004`); NaN prints as `null` and infinities as
//! `±1.7976931348623157e+308`.
//!
//! # Limits and how they are enforced
//!
//! Every query runs on its own thread with a 256 MiB stack. The thread installs
//! a per-thread meter; when a limit is exceeded the meter unwinds the thread
//! (with `resume_unwind`, which prints nothing), the unwinding is caught at the
//! top of the thread, and the caller gets [`QueryError::TooExpensive`] naming
//! the limit. Because it unwinds instead of raising a jq error, `try`, `?` and
//! `//` cannot swallow it. The result is handed to the caller as soon as it is
//! known (for a tripped limit: at the trip, before unwinding); the thread then
//! drops the parsed document and whatever the query built on its own.
//!
//! - **Steps** ([`QueryLimits::max_steps`], default 50 million): jaq looks up
//!   the program through its global data on every term it evaluates; this
//!   crate's data type counts a step on every such lookup. That covers every
//!   loop of the interpreter: recursion, tail calls, `repeat`, `while`,
//!   `reduce`, `foreach`, `limit`, `label`. In addition every operation of the
//!   value type counts: each element produced by `.[]`, `..`, `keys`, `to_entries`
//!   and the like, each index, slice, update and arithmetic operation, each node
//!   visited when comparing values (`==`, `sort`, `group_by`, `unique`, `-`,
//!   `contains`, `indices`), each element and each 16 bytes of strings printed
//!   by `tostring`/`tojson`/output, each element collected into an array, and
//!   long native operations in proportion to their input. A regular expression
//!   match is charged `text length × (1 + automaton size / 1 KiB)` steps before
//!   it runs and is refused if that exceeds the steps left.
//! - **Time** ([`QueryLimits::time_budget`], default 5 s, measured from the
//!   call): the clock is read every 512 steps and periodically while reading
//!   the document, so a query stops within a few milliseconds after its budget.
//! - **Memory** ([`QueryLimits::max_memory_bytes`], default 1 GiB): a budget of
//!   cumulative bytes of new values, charged *before* allocating: 16 bytes per
//!   array slot, 48 per object entry, the bytes of every new string
//!   (concatenation, `*` repetition, `tostring`, `tojson`, `@base64`, ...), and
//!   the copy of a shared array or object when an update has to copy it. String
//!   natives whose output may be larger than their input (`@html` 6×, `@uri` 3×,
//!   `@sh` 4×, `explode` 16×, ...) are charged that factor up front. Thus
//!   `"a" * 1e12`-style allocations are refused before they happen, and values
//!   that share their parts (`[$x, $x]` nested 60 times) cannot be printed,
//!   converted or walked past the step and memory budgets.
//! - **Nesting depth**: every value carries an upper bound of its nesting depth
//!   (exact for parsed values, maintained by every constructor); building a
//!   value deeper than [`MAX_DEPTH`] stops the query. Every recursive walk over
//!   a value (printing, comparing, dropping) is therefore at most 10,000 levels
//!   deep; a unit test runs these walks on a thread with a quarter of the stack
//!   reserve.
//! - **Recursion** (stack): on every step the meter compares the stack pointer
//!   with a floor 48 MiB above the end of the thread's stack and stops the
//!   query ("recursion too deep") when it is crossed. Unbounded recursion such
//!   as `def f: 1 + f; f` or `def f: [f]; f` ends this way instead of
//!   overflowing the stack, which would abort the process.
//! - **Expression size**: at most [`MAX_EXPRESSION_BYTES`] (16 KiB). jaq's
//!   parser and compiler are recursive; this bound keeps them far inside the
//!   stack (tests nest 29 kinds of constructs up to the bound).
//! - **Integers**: `+`, `-` and `*` keep integers exact up to 4096 bits and
//!   fall back to doubles beyond (as jq always does), so `. * .` repeated cannot
//!   build huge numbers.
//! - **Output** ([`QueryLimits::max_outputs`], default 1 million results;
//!   [`QueryLimits::max_output_bytes`], default 64 MiB): when either is reached
//!   the query stops and [`QueryOutput::truncated`] is set; if the first result
//!   alone is larger than the byte limit, the query fails as too expensive.
//! - **Panics**: everything runs under `catch_unwind`; a panic inside jaq
//!   becomes [`QueryError::Internal`]. The crate refuses to compile with
//!   `panic = "abort"`.
//!
//! Features refused or changed for safety: `env` and `$ENV` are empty objects;
//! `debug`, `stderr` pass their input through without logging; `halt` and
//! `halt_error` end the query with a jq error; modules (`include`, `import`),
//! `input_filename`, `$__loc__`, `input_line_number` and `tobytes` are not
//! available.
//!
//! ## Remaining gaps
//!
//! - The clock is read between metered operations. One native operation runs to
//!   its end once started; the longest ones are a regular expression match that
//!   passed its cost estimate (an estimate, not a bound) and copying a string of
//!   up to the memory budget (a `memcpy`).
//! - After a query stops, its thread keeps running in the background for as
//!   long as dropping the document and the built values takes (milliseconds
//!   to a second for hundreds of MB); the caller does not wait for it, but the
//!   CPU and memory stay in use until then.
//! - The memory budget counts the values a query builds, not every allocation:
//!   the parsed document (about 5 to 12 times the document size), jaq's own
//!   iterator and closure structures (bounded by the steps), and the spare
//!   capacity of growing arrays are not counted. Peak memory can therefore
//!   exceed `max_memory_bytes` by those amounts.
//! - Parsing and compiling the expression is not metered (it is bounded by the
//!   expression size: well under a second even in a debug build).
//! - Some jq programs are quadratic in jaq: `[..]`, `paths` or `tostream` on a
//!   value nested thousands of levels deep walk nested iterators; they stop at
//!   the time limit.
//! - Steps are cost units, not a measure of jq's own steps; 50 million take
//!   roughly 1 to 2 s in a release build.
//!
//! # Differences from jq
//!
//! The reference is jq 1.7; the differential test runs the installed `jq`
//! (1.6) and compares outputs exactly on 100+ expressions. Known differences:
//!
//! - Numbers: literals are printed as written (`1.10`, `1e2`, `1e1000`): jq 1.6
//!   prints `1.1`, `100`, `1.7976931348623157e+308`; jq 1.7 mostly keeps them but
//!   canonicalises some (`1E2` as `1E+2`). `-0` is read as the integer `0`.
//!   Integers are exact at any size (jq 1.6 rounds `12345678901234567890` to
//!   `12345678901234567000`) and integer overflow yields exact big integers (up
//!   to 4096 bits) where jq yields a double. `tonumber` keeps the literal too.
//! - `indices`, `index`, `rindex` on strings count code points (jq 1.6 and 1.7
//!   count bytes; jq 1.8 counts code points).
//! - Regular expressions use jaq's engine (regex-bites, Rust `regex` syntax), not
//!   Oniguruma: `\w`, `\d`, `\s` and case-insensitive matching are ASCII-only,
//!   no look-around or backreferences.
//! - `@html` escapes `'` as `&apos;` (jq: `&#39;`). `@base32`, `@base32d`,
//!   `ascii`, `fromstream`, `truncate_stream`, `getpath` with invalid paths,
//!   `splits` and `sub` flags follow jaq or are missing.
//! - `ltrimstr`/`rtrimstr`/`startswith` on a non-string input is an error (jq
//!   returns the input unchanged or an error, depending on the filter).
//! - `"abc" * 1.5` (a non-integer factor) is an error; jq repeats the string.
//! - `.[1.5]` on an array is an error (jq truncates the index).
//! - `reduce`/`foreach` whose update yields several values continue with each
//!   of them (jaq: `reduce (1,2) as $x (0; ., 10)` yields `0,10,10,10`), where
//!   jq keeps the last one (`10`).
//! - `walk(f)` is `.. |= f` (like jq 1.7; jq 1.6's `walk` also sorts keys).
//! - `limit` with a negative count yields nothing (jq yields every output).
//! - Error messages use jaq's wording (`cannot index "abc" with "a"`, `cannot
//!   calculate 1 + "x"`, `cannot use 1 as iterable (array or object)`) and
//!   shorten values to 240 bytes.
//! - `input` with no input left is an error ("No more inputs", as jq);
//!   `env`/`$ENV` are empty; `debug`/`stderr` do not print.
//!
//! Changes from jaq towards jq: objects can only have string keys (`{(1): 2}`
//! is an error), indexing an object with a number is an error, `has(-1)` is
//! false, `null | .a = 1` and `null | .[2] = 1` create an object or array,
//! assigning past the end of an array pads it with `null`, deleting a key keeps
//! the order of the other keys, and `join` is jq's.

#![warn(missing_docs)]

#[cfg(panic = "abort")]
compile_error!(
    "offload-query stops over-budget queries by unwinding the evaluator thread; \
     it needs panic = \"unwind\""
);

mod document;
mod error;
mod limits;
mod meter;
mod natives;
mod program;
mod run;
mod value;

pub use error::QueryError;
pub use limits::{QueryLimits, MAX_DEPTH, MAX_EXPRESSION_BYTES};

/// The results of a query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryOutput {
    /// Each result as compact JSON (`jq -c` style), in order.
    pub lines: Vec<String>,
    /// True when [`QueryLimits::max_outputs`] or [`QueryLimits::max_output_bytes`]
    /// was reached and the query was stopped there; more results may exist.
    pub truncated: bool,
}

/// Runs the jq `expression` over `document` within `limits`.
///
/// `document` is one JSON value or several separated by whitespace; the
/// expression runs once per value (as `jq` does), and `input`/`inputs` read the
/// values that follow. Each result is returned as one line of compact JSON.
///
/// The query runs on a thread of its own (the document is copied to it); this
/// call blocks until the result is known, which is at the latest shortly after
/// one of the limits is reached. Calls on different threads run in parallel.
pub fn run_query(
    document: &[u8],
    expression: &str,
    limits: &QueryLimits,
) -> Result<QueryOutput, QueryError> {
    run::run(document, expression, limits)
}
