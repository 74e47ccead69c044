//! Previews of offloaded tool results.
//!
//! When a tool result is too large for an agent's context, it is stored and
//! replaced by a preview plus references. A result has one or more blocks
//! ([`PreviewBlock`]): plain text, or JSON stored as
//! `JSON.stringify(value, null, 2)`. [`build_preview`] makes the preview in
//! one of three [`PreviewMode`]s within a budget measured by a [`Meter`]:
//! [`Utf16Meter`] counts UTF-16 code units (the length of a JavaScript
//! string); a tokenizer can implement the same trait to budget in tokens.
//!
//! Guarantees, for every input:
//!
//! * `meter.measure(&preview) <= budget`, markers and headers included;
//! * no character is split: every cut falls on a char boundary;
//! * the same input gives the same preview;
//! * work is proportional to what ends up in the preview, plus a few fast
//!   linear scans (counting a block's lines or the characters left out of a
//!   cut line, validating a JSON document for an outline). The meter is only
//!   asked about lines, markers and windows about the size of the preview,
//!   never about a whole large text;
//! * a JSON outline needs memory bounded by constants plus one byte per
//!   nesting level, and no recursion, so any nesting depth is fine.
//!
//! A budget of 0 or an empty list of blocks gives an empty preview.
//!
//! # Lines
//!
//! Lines are split on `'\n'` and numbered from 1 within their block, as the
//! retrieval tool's `line_range` counts them. A `'\r'` before the `'\n'`
//! belongs to the terminator: lines are shown without it (except in a plain
//! head preview, which is a prefix of the text as stored).
//!
//! A line longer than the per-line limit is cut, and followed by a marker
//! with the number of characters (Unicode scalar values) left out of it:
//!
//! ```text
//! 1,aaaaaaaaaaaaaaaaaaaaaaaaaaaaa … [+471 chars]
//! ```
//!
//! The per-line limit is the whole budget for a text of one line, half of
//! it for two lines, a third for three and a quarter (at least 32 units)
//! for more. When every line is shown and some are cut, what is left of the
//! budget is shared among the cut lines.
//!
//! # Modes
//!
//! ## `head`
//!
//! The blocks joined with `'\n'`, and the longest start of that text that
//! fits. With [`PreviewOptions::cut_long_lines`], long lines are cut as
//! above so that the lines after them show too, and the last line shown may
//! be a plain prefix of its line.
//!
//! ```
//! use offload_preview::{build_preview, HeadShare, PreviewBlock, PreviewMode, PreviewOptions, Utf16Meter};
//!
//! let text = format!("id,name\n1,{}\n2,bob", "a".repeat(500));
//! let options = PreviewOptions {
//!     mode: PreviewMode::Head,
//!     budget: 60,
//!     cut_long_lines: true,
//!     head_share: HeadShare::default(),
//! };
//! let preview = build_preview(&[PreviewBlock::text(&text)], &Utf16Meter, &options);
//! assert_eq!(preview, "id,name\n1,aaaaaaaaaaaaaaaaaaaaaaaaaaaaa … [+471 chars]\n2,bob");
//! ```
//!
//! ## `headTail`
//!
//! Per block: a block that fits is shown whole, and so are all its lines
//! when they fit once long lines are cut. Otherwise its first lines and its
//! last lines, with one marker line between them naming the lines left out
//! by their numbers in the block. Besides the marker, the first lines get
//! [`PreviewOptions::head_share`] of the budget (a [`HeadShare`] from 0 to
//! 1, half by default) and the last lines the rest; budget one side does
//! not use goes to the other (so with a share of 0 the first lines show
//! only in what the last lines left over):
//!
//! ```text
//! [… 12,345 lines omitted (lines 41-12,385) …]
//! [… 1 line omitted (line 41) …]
//! ```
//!
//! ```
//! use offload_preview::{build_preview, HeadShare, PreviewBlock, PreviewMode, PreviewOptions, Utf16Meter};
//!
//! let log: String = (1..=1000).map(|i| format!("line {i}\n")).collect::<String>() + "done";
//! let options = PreviewOptions {
//!     mode: PreviewMode::HeadTail,
//!     budget: 120,
//!     cut_long_lines: false,
//!     head_share: HeadShare::default(),
//! };
//! let preview = build_preview(&[PreviewBlock::text(&log)], &Utf16Meter, &options);
//! assert_eq!(
//!     preview,
//!     "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n\
//!      [… 991 lines omitted (lines 7-997) …]\n\
//!      line 998\nline 999\nline 1000\ndone"
//! );
//! ```
//!
//! ## `structure`
//!
//! Per block: a block that fits is shown whole. A block of kind
//! [`BlockKind::Json`], or a text block whose first non-whitespace character
//! is `{` or `[`, that is one valid JSON document (exactly what
//! `JSON.parse` accepts) with an object or array at its root, is shown as an
//! outline. Anything else (other text, invalid or truncated JSON, a scalar
//! document) is previewed as in `headTail`.
//!
//! An outline starts with a header line, then shows the root:
//!
//! ```text
//! [JSON outline: object, 3 keys, 120,004 lines]
//! {
//!   "users": array[10,000] (lines 2-120,001) of object {
//!     "id": number, e.g. 1
//!     "name": string, e.g. "Alice"
//!     "email"?: string, e.g. "alice@example.com"
//!     "tags": array[0..3] of string, e.g. "admin"
//!   }
//!   "total": number = 10000
//!   "next": null
//! }
//! ```
//!
//! * Header: `[JSON outline: object, N keys, L lines]` or
//!   `[JSON outline: array, N items, L lines]`. The root follows as `{` …
//!   `}` with its members, or as `[` … `]` with one line describing its
//!   elements; an empty root is `{}` or `[]`, a collapsed one `{…}` or `[…]`.
//! * Member lines: `"key": value`, indented two spaces per level. The key is
//!   shown as written in the document, escapes included (what a search
//!   pattern must match), cut after 60 characters with `…`.
//! * Values at a fixed place in the document are exact: `string = "…"`
//!   (with ` (N chars)` when cut after 40 characters), `number = 42`,
//!   `boolean = true`, `null`, `object, N keys`, `array[N]`, `{}`, `[]`.
//!   Objects and arrays there carry their 1-based line range in the block,
//!   ` (lines A-B)` or ` (line A)`, usable as a `line_range`; there are no
//!   line ranges in a document of one line.
//! * Array elements are summarised from a sample (the first four elements
//!   and the last one): `array[N] of` their description. Merged values name
//!   their kinds (`object`, `array[A..B]` when lengths differ, `string`,
//!   `number`, `boolean`, `null`) followed by sample values:
//!   `number, e.g. 1`. Several kinds are alternatives:
//!   `number | string | null, e.g. 1, "x"`; as an array's element type they
//!   are put in parentheses, `array[5] of (number | string, e.g. 1, "x")`,
//!   and so is an alternative that is itself an array or has its own
//!   samples. The members of sampled objects are merged in order of first
//!   appearance; a key missing from some samples is marked `"key"?`.
//! * An object (or an array's object elements) with members shown ends its
//!   line with ` {`, followed by the member lines and a closing `}`.
//!   Members not shown are counted on one line: `… 25 more keys`.
//! * Collapsed containers: an object keeps its description and ends with
//!   ` {…}` (`"meta": object, 3 keys (lines 5-9) {…}`); an array below the
//!   depth shown names its elements' kinds only (`array[3] of string`,
//!   `array[10] of object {…}`, `array[2] of array […]`), or is `array[N] […]`
//!   when they are below the deepest level kept (16).
//!
//! When the whole outline does not fit, it is shown with fewer members per
//! object (64, 32, 16), then with the smallest containers collapsed (those
//! under 1/256, 1/64, 1/16, then 1/4 of the document's bytes, where the
//! elements of an array count as large as the array, so that the parts
//! holding most of the data keep their detail longest), then with fewer
//! levels and fewer members (8, 4, 2, 1), down to the header and a
//! collapsed root; as a last resort the header is cut.
//!
//! ```
//! use offload_preview::{build_preview, HeadShare, PreviewBlock, PreviewMode, PreviewOptions, Utf16Meter};
//!
//! let json = r#"{
//!   "users": [
//!     {
//!       "id": 1,
//!       "name": "Alice",
//!       "tags": ["admin", "dev"]
//!     },
//!     {
//!       "id": 2,
//!       "name": "Bob",
//!       "email": "bob@example.com",
//!       "tags": []
//!     }
//!   ],
//!   "total": 2,
//!   "next": null
//! }"#;
//! let options = PreviewOptions {
//!     mode: PreviewMode::Structure,
//!     budget: 200,
//!     cut_long_lines: false,
//!     head_share: HeadShare::default(),
//! };
//! let preview = build_preview(&[PreviewBlock::json(json)], &Utf16Meter, &options);
//! assert_eq!(
//!     preview,
//!     "[JSON outline: object, 3 keys, 17 lines]\n\
//!      {\n  \"users\": array[2] (lines 2-14) of object {…}\n  \"total\": number = 2\n  \"next\": null\n}"
//! );
//! ```
//!
//! # Several blocks
//!
//! `head` joins the blocks with `'\n'`. `headTail` and `structure` give each
//! block its own section; with more than one block, each section starts
//! with a header line, `[block 2 of 3: json]` (the kind is `text` or
//! `json`), and sections are joined with `'\n'`. After the headers, the
//! budget is shared in equal parts, and what a block does not use goes to
//! the blocks after it. A block with empty text still has its header.

#![warn(missing_docs)]

mod budget;
mod cut;
mod error;
mod fill;
mod format;
mod guard;
mod head;
mod head_tail;
mod joined;
mod json;
mod lines;
mod meter;
mod options;
pub mod pages;
mod sections;
mod structure;

pub use error::PreviewError;
pub use meter::{Meter, Utf16Meter};
pub use options::{BlockKind, HeadShare, PreviewBlock, PreviewMode, PreviewOptions};

/// The preview of a tool result made of `blocks`, measured with `meter`.
///
/// The result always satisfies `meter.measure(&preview) <= options.budget`.
/// A budget of 0 or no blocks give an empty preview.
pub fn build_preview(
    blocks: &[PreviewBlock<'_>],
    meter: &dyn Meter,
    options: &PreviewOptions,
) -> String {
    let budget = options.budget;
    if budget == 0 || blocks.is_empty() {
        return String::new();
    }
    let preview = match options.mode {
        PreviewMode::Head => head::preview(blocks, meter, budget, options.cut_long_lines),
        PreviewMode::HeadTail => sections::render(blocks, meter, budget, |b, m, n| {
            head_tail::section(b, m, n, options.head_share)
        }),
        PreviewMode::Structure => sections::render(blocks, meter, budget, |b, m, n| {
            structure::block(b, m, n, options.head_share)
        }),
    };
    guard::enforce(preview, meter, budget, options.mode != PreviewMode::Head)
}
