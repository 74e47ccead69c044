//! Run a jq expression over a JSON document, under hard limits.
//!
//! This crate lets the retrieval tool of an LLM agent answer questions like
//! `.users[] | select(.role == "admin") | .email` about a large stored tool
//! result. The expression is parsed, compiled and evaluated by
//! [jaq](https://github.com/01mf02/jaq) (jaq-core, jaq-std; MIT licensed);
//! this crate supplies the value type, the document reader, the printer and the
//! limits. Results come back as compact JSON lines, like `jq -c`. Expressions
//! of the shape models write most (paths, `.[]`, `select` with comparisons,
//! `and`/`or`/`not`, `[...]`, `length`, `,` and `|`) are evaluated directly,
//! without jaq's general interpreter but through the same metered operations,
//! with the same results; it counts a step per term (about as many as jaq)
//! and charges what it builds, which is less than jaq builds. One that meets
//! an error is given back what it used and runs again in jaq, which reports
//! the error.
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
//! # Kept documents
//!
//! [`run_query_keeping`] reads a document from a shared buffer (its strings
//! share that buffer, nothing is copied) and hands the values back as a
//! [`ParsedDocument`]; [`run_query_parsed`] runs later queries on it without
//! reading it again. A kept document is shared between threads and never
//! changed (a query that updates part of it copies that part, charged). It
//! keeps the bytes reading it was charged reserved in the shared memory budget
//! until it is dropped (on a thread of its own), and a query on it counts them
//! against its own memory budget again; every other limit holds as for a
//! document read each time. [`on_memory_pressure`] lets whoever keeps
//! documents give them up when a query cannot get its share of the shared
//! budget.
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
//! drops the parsed document and whatever the query built, and only then gives
//! its memory back to the shared budget (see **Memory**).
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
//!   by `tostring`/`tojson`/output, each element collected into an array. Every
//!   native whose work grows with its input counts steps in proportion to it
//!   *before* doing it (one step per 256 bytes compared, hashed or copied, per 16
//!   characters decoded, per 2 bytes of white space trimmed, per directive of a
//!   date format, ...), so no single operation runs long unmetered. A regular
//!   expression search counts steps for every position of the text it visits,
//!   in proportion to the states of its automaton it keeps active and the
//!   capture slots they copy (see `regex`): it stops when the steps or the
//!   time run out, whatever its pattern or text.
//! - **Time** ([`QueryLimits::time_budget`], default 5 s, measured from the
//!   call): the clock is read every 512 steps and every 4096 values while
//!   reading the document, so a query stops within a few milliseconds after its
//!   budget.
//! - **Memory** ([`QueryLimits::max_memory_bytes`], default 1 GiB): a budget of
//!   cumulative bytes, charged *before* allocating, for everything a query
//!   holds: its copy of the document, the values it reads from it, and every
//!   value it builds. Charges follow the allocations values really make (heap
//!   blocks counted as glibc lays them out): a 16-byte slot per array element,
//!   48 bytes per array and 96 per object besides their entries (40 bytes each
//!   plus the hash index), 48 bytes of handle per stored string besides its
//!   bytes, and the growth of arrays, objects and strings by doubling as it
//!   happens; a copy of a shared array or object when an update has to copy it
//!   is charged too. A document of `[]`s thus costs about 22 times its size,
//!   typical JSON 5 to 15 times (short keys and values cost most). Natives charge their
//!   output before building it (`split`, `explode`, `implode`, date formats
//!   directive by directive, regular expression matches) or prepay the
//!   largest output they can build (`@html` 6×, `@uri` 6×, `@sh` 4×,
//!   `@base64` 2×, ...); `tojson`/`tostring` may use half of the memory left.
//!   Thus `"a" * 1e12`-style allocations are refused before they happen, and
//!   values that share their parts (`[$x, $x]` nested 60 times) cannot be
//!   printed, converted or walked past the step and memory budgets.
//! - **Shared memory** ([`SHARED_MEMORY_BYTES`], 2 GiB for the process): a
//!   query reserves the bytes it charges from one budget shared by all queries
//!   of the process (in chunks of 32 MiB), and gives them back only when its
//!   thread has dropped everything (after it answered). When a reservation
//!   cannot be granted, the query waits while other queries are freeing their
//!   memory, at most until its deadline; if none is freeing memory, or the
//!   deadline passes, it stops as too expensive ("the queries running at the
//!   same time hold the 2048 MiB of memory all queries share"). However many
//!   queries run at once, together they hold at most 2 GiB of charged memory.
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
//!   stack (tests nest 29 kinds of constructs up to the bound). Regular
//!   expressions built at run time are limited to 64 KiB of pattern and 1 MiB
//!   of automaton.
//! - **Integers**: `+`, `-` and `*` keep integers exact up to 4096 bits and
//!   fall back to doubles beyond (as jq always does), so `. * .` repeated cannot
//!   build huge numbers. Integer literals longer than 1234 digits (in the
//!   document or in `fromjson`/`tonumber`) keep their text instead of being
//!   read as exact integers, which takes time quadratic in their length.
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
//! available. Dates are in UTC: `localtime` is `gmtime` and `strflocaltime`
//! is `strftime`, so that a query cannot learn the host's time zone.
//!
//! ## Remaining gaps
//!
//! - After a query answers, its thread keeps running in the background for as
//!   long as dropping the document and the built values takes (milliseconds
//!   to a second for hundreds of MB); the caller does not wait for it. Its
//!   memory stays reserved in the shared budget until then, but its CPU is not
//!   counted against anything (the binding's search slot is already free).
//! - The memory budget counts values, not every allocation: jaq's own
//!   iterator and closure structures (bounded by the steps), the transient
//!   buffers of a few natives, and memory the allocator keeps after it was
//!   freed are not counted; cumulative charges also count values that were
//!   dropped since. Peak RSS of one query stays within a few percent of the
//!   charged bytes plus the caller's own copy of the document; with several
//!   queries at once, allocators that keep freed memory per thread (glibc)
//!   can add a few hundred MB to the shared budget (2.7 GiB measured for four
//!   queries reading 150 MB documents of `[]`s at once).
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
//! - Regular expressions have Rust `regex` syntax (compiled by regex-automata,
//!   searched and metered here, see `regex`), not Oniguruma's: no look-around
//!   or backreferences; `\w`, `\d`, `\s`, `\b` and case-insensitive matching
//!   are Unicode-aware, as in jq.
//! - `implode` refuses what is not a code point (negative numbers, surrogates,
//!   numbers past 0x10FFFF) with an error, where jq 1.7 substitutes U+FFFD
//!   (jq 1.6 aborts); fractions are cut off, as in jq. `explode` yields
//!   U+FFFD for invalid UTF-8, as jq does.
//! - Dates are in UTC (see above); `%c` follows jiff's layout, not C's locale.
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

mod cost;
mod direct;
mod document;
mod error;
mod limits;
mod meter;
mod natives;
mod parsed;
mod program;
mod regex;
mod run;
mod shared_budget;
mod shared_keys;
mod value;

pub use error::QueryError;
pub use limits::{QueryLimits, MAX_DEPTH, MAX_EXPRESSION_BYTES};
pub use parsed::ParsedDocument;
pub use shared_budget::{on_memory_pressure, MemoryRelief, SHARED_MEMORY_BYTES};

use bytes::Bytes;
use std::sync::Arc;

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
    run::run(run::Input::Borrowed(document), expression, limits, None).0
}

/// A query's result, and the document it read when it was kept.
#[derive(Debug)]
pub struct QueryRun {
    /// The results, or why there are none.
    pub result: Result<QueryOutput, QueryError>,
    /// The document as read, when it was read and charged no more than asked
    /// (see [`run_query_keeping`]); whether the query then succeeded or not.
    pub document: Option<Arc<ParsedDocument>>,
}

/// [`run_query`] on a document's text held in `document` (not copied: the
/// strings read share its buffer), handing back the document it read when
/// reading it was charged at most `keep_up_to` bytes, so that later queries
/// can run on it with [`run_query_parsed`] without reading it again.
///
/// The document handed back holds its charged bytes in the budget all
/// queries share ([`SHARED_MEMORY_BYTES`]) until it is dropped.
pub fn run_query_keeping(
    document: Bytes,
    expression: &str,
    limits: &QueryLimits,
    keep_up_to: usize,
) -> QueryRun {
    let (result, document) = run::run(
        run::Input::Text(document),
        expression,
        limits,
        Some(keep_up_to),
    );
    QueryRun { result, document }
}

/// [`run_query`] on a document read before (see [`run_query_keeping`]).
///
/// Every limit holds as for [`run_query`]; the document's charged bytes
/// count against [`QueryLimits::max_memory_bytes`] again (they are not
/// reserved from the shared budget again: the document holds them).
pub fn run_query_parsed(
    document: &Arc<ParsedDocument>,
    expression: &str,
    limits: &QueryLimits,
) -> Result<QueryOutput, QueryError> {
    run::run(
        run::Input::Parsed(Arc::clone(document)),
        expression,
        limits,
        None,
    )
    .0
}
