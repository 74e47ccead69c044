//! The regular expression natives behind `test`, `match`, `capture`, `scan`,
//! `split/2`, `splits`, `sub` and `gsub` (jaq defines those on these three):
//!
//! - `matches(re; flags)`: an array with, per match, the array of its
//!   capture groups (`{offset, length, string, name}`, offsets and lengths in
//!   characters; groups that did not take part are left out, as in jaq);
//! - `split_(re; flags)`: the strings between the matches;
//! - `split_matches(re; flags)`: both, interleaved.
//!
//! Matching runs on the metered engine of [`crate::regex`], one search at a
//! time, and every part of the output is charged as it is built. Compiled
//! patterns are kept for the rest of the query (up to [`CACHED_PATTERNS`]).

use super::{Ev, Native};
use crate::meter;
use crate::regex::{self, Flags, Regex};
use crate::value::{build, Error, ValR, Value};
use bstr::ByteSlice;
use bytes::Bytes;
use jaq_core::native::bome;
use jaq_core::{Bind, Cv};
use jaq_json::Val;
use jaq_std::ValT as _;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Compiled patterns kept per query.
const CACHED_PATTERNS: usize = 64;

/// Compiled patterns by pattern and flags.
type Patterns = HashMap<(String, Flags), Rc<RefCell<Regex>>>;

thread_local! {
    /// Patterns compiled by the current query (the evaluator thread ends with it).
    static PATTERNS: RefCell<Patterns> = RefCell::new(HashMap::new());
}

pub(super) fn funs() -> Box<[Native]> {
    let vv = || [Bind::Var(()), Bind::Var(())].into();
    Box::new([
        ("matches", vv(), |cv| bome(run(cv, false, true))),
        ("split_matches", vv(), |cv| bome(run(cv, true, true))),
        ("split_", vv(), |cv| bome(run(cv, true, false))),
    ])
}

/// The text of a string value (UTF-8), or a type error.
fn text(v: &Value) -> Result<&str, Error> {
    let bytes = v.try_as_utf8_bytes()?;
    std::str::from_utf8(bytes).map_err(Error::str)
}

/// The compiled pattern, from the query's cache or compiled now.
fn pattern(re: &str, flags: Flags) -> Result<Rc<RefCell<Regex>>, Error> {
    let key = (re.to_string(), flags);
    if let Some(found) = PATTERNS.with(|p| p.borrow().get(&key).cloned()) {
        return Ok(found);
    }
    let compiled =
        Regex::new(re, flags).map_err(|e| Error::str(format_args!("invalid regex: {e}")))?;
    let compiled = Rc::new(RefCell::new(compiled));
    PATTERNS.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() >= CACHED_PATTERNS {
            p.clear();
        }
        p.insert(key, Rc::clone(&compiled));
    });
    Ok(compiled)
}

/// Character offsets of increasing byte offsets in a text.
struct Chars<'a> {
    text: &'a [u8],
    byte: usize,
    chars: usize,
}

impl Chars<'_> {
    /// The number of characters before byte `at`.
    fn before(&mut self, at: usize) -> usize {
        if at < self.byte {
            (self.byte, self.chars) = (0, 0);
        }
        let part = &self.text[self.byte..at];
        meter::tick(part.len() as u64 / 16);
        self.chars += part.chars().count();
        self.byte = at;
        self.chars
    }
}

/// A part of the input string (sharing its bytes).
fn part(input: &Value, s: usize, e: usize) -> Value {
    match input.str_bytes() {
        Some(b) => input.as_sub_str(&b[s..e]),
        None => Value::null(),
    }
}

/// The capture groups of one match as an array of objects.
fn groups(re: &Regex, input: &Value, spans: &[Option<(usize, usize)>], chars: &mut Chars) -> Value {
    let mut out = build::Array::new();
    for (i, span) in spans.iter().enumerate() {
        let Some((s, e)) = *span else { continue };
        let offset = chars.before(s);
        meter::tick(1 + (e - s) as u64 / 16);
        let length = input.str_bytes().map_or(0, |b| b[s..e].chars().count());
        let key = |k: &'static str| Val::utf8_str(Bytes::from_static(k.as_bytes()));
        let mut group = build::Object::new();
        group.insert(key("offset"), Value::from(offset));
        group.insert(key("length"), Value::from(length));
        group.insert(key("string"), part(input, s, e));
        if let Some(name) = re.name(i) {
            group.insert(key("name"), Value::from(name.to_string()));
        }
        out.push(group.finish());
    }
    out.finish()
}

/// Runs `re` with `flags` over the input; `split` yields the strings between
/// matches, `matches` the matches (as in jaq's `regex` helper).
fn run(mut cv: Cv<'_, Ev>, split: bool, matches: bool) -> ValR {
    let flags = cv.0.pop_var();
    let re = cv.0.pop_var();
    let flags = Flags::new(text(&flags)?)
        .map_err(|c| Error::str(format_args!("invalid regex flag: {c}")))?;
    let re = pattern(text(&re)?, flags)?;
    let mut re = re.borrow_mut();
    let input = cv.1;
    let hay = input.try_as_utf8_bytes()?;
    let mut chars = Chars {
        text: hay,
        byte: 0,
        chars: 0,
    };
    let mut out = build::Array::new();
    let (mut at, mut last_end, mut unmatched_from) = (0, None, 0);
    while let Some(mut spans) = re.search(hay, at) {
        let Some((mut s, mut e)) = spans.first().copied().flatten() else {
            break;
        };
        // an empty match right after the previous match: search again one character on
        if s >= e && Some(e) == last_end {
            at += regex::char_len(&hay[at..]);
            if at > hay.len() {
                break;
            }
            let Some(again) = re.search(hay, at) else {
                break;
            };
            spans = again;
            let Some(whole) = spans.first().copied().flatten() else {
                break;
            };
            (s, e) = whole;
        }
        at = e;
        last_end = Some(e);
        if flags.ignore_empty && s == e {
            continue;
        }
        if split {
            out.push(part(&input, unmatched_from, s));
            unmatched_from = e;
        }
        if matches {
            out.push(groups(&re, &input, &spans, &mut chars));
        }
        if !flags.global {
            break;
        }
    }
    if split {
        out.push(part(&input, unmatched_from, hay.len()));
    }
    Ok(out.finish())
}
