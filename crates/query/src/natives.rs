//! The filters available to expressions: jaq's standard library, with the
//! JSON-specific natives re-implemented for [`Value`] and a few natives
//! guarded or replaced.
//!
//! - `tojson`, `fromjson`, `length`, `contains`, `has`, `indices`, `bsearch`
//!   (jaq-json's natives, which only exist for jaq-json's own value type) are
//!   implemented here with metering; `fromjson` goes through the same strict,
//!   depth-checked reader as the document. `tobytes` is not offered.
//! - `env` and `$ENV` are empty objects (the host's environment is private);
//!   `debug` and `stderr` pass their input through without logging;
//!   `input_filename`, `$__loc__`, `input_line_number`, modules and
//!   `include`/`import` are not available. `halt` and `halt_error` end the query
//!   with an error.
//! - Regular expressions (`test`, `match`, `capture`, `scan`, `split/2`,
//!   `splits`, `sub`, `gsub`) are matched by jaq's engine (regex-bites, a
//!   Pike VM with `O(pattern × text)` time). Before each match the pattern is
//!   compiled once more under growing size limits to bound its automaton, and
//!   the match is charged `text length × automaton size` steps up front, so an
//!   expensive match is refused instead of running past the budgets.
//! - String natives whose output can be several times larger than their input
//!   (`@html`, `@uri`, `@base64`, `@sh`, ...) charge that size before running.
//! - Added for jq compatibility: `@csv`, `@tsv`, `leaf_paths`, `toarray`,
//!   `IN`, `INDEX`, `tostream`; `join` is jq's (null joins as "", numbers and
//!   booleans as JSON, arrays and objects are an error) instead of jaq's.

use crate::document;
use crate::meter;
use crate::value::{cmp, Error, Value, SLOT_BYTES};
use bstr::ByteSlice;
use jaq_core::box_iter::box_once;
use jaq_core::load::parse::{BinaryOp, Def, Term};
use jaq_core::native::{bome, unary, v, Fun};
use jaq_core::{DataT, RunPtr};
use jaq_json::{Map, Num, Val};
use std::cell::RefCell;
use std::collections::HashMap;

/// Marker type binding jaq's interpreter to [`Value`] and [`Data`].
pub(crate) struct Ev;

impl DataT for Ev {
    type V<'a> = Value;
    type Data<'a> = Data<'a>;
}

/// Global data of one evaluation: the program and the remaining inputs.
#[derive(Clone)]
pub(crate) struct Data<'a> {
    pub(crate) lut: &'a jaq_core::Lut<Ev>,
    pub(crate) inputs: jaq_std::input::Inputs<'a, Value>,
}

impl<'a> jaq_core::data::HasLut<'a, Ev> for Data<'a> {
    /// Called by the interpreter on every dispatch of a term: one step.
    fn lut(&self) -> &'a jaq_core::Lut<Ev> {
        meter::tick(1);
        self.lut
    }
}

impl<'a> jaq_std::input::HasInputs<'a, Value> for Data<'a> {
    fn inputs(&self) -> jaq_std::input::Inputs<'a, Value> {
        self.inputs
    }
}

/// jaq-std natives replaced by a definition that guards them; the original is
/// kept under the name prefixed with `!`, which expressions cannot spell.
const REGEX_NATIVES: [&str; 3] = ["matches", "split_matches", "split_"];

/// jaq-std string natives and the factor by which their output may exceed their input.
const STRING_NATIVES: [(&str, usize); 10] = [
    ("ascii_downcase", 1),
    ("ascii_upcase", 1),
    ("escape_html", 6),
    ("unescape_html", 1),
    ("encode_uri", 3),
    ("decode_uri", 1),
    ("encode_base64", 2),
    ("decode_base64", 1),
    ("escape_sh", 4),
    ("explode", 16),
];

/// Names of the guarded originals (`"!matches"`, ...).
fn hidden(name: &'static str) -> &'static str {
    match name {
        "matches" => "!matches",
        "split_matches" => "!split_matches",
        "split_" => "!split_",
        "ascii_downcase" => "!ascii_downcase",
        "ascii_upcase" => "!ascii_upcase",
        "escape_html" => "!escape_html",
        "unescape_html" => "!unescape_html",
        "encode_uri" => "!encode_uri",
        "decode_uri" => "!decode_uri",
        "encode_base64" => "!encode_base64",
        "decode_base64" => "!decode_base64",
        "escape_sh" => "!escape_sh",
        "explode" => "!explode",
        other => other,
    }
}

/// All native filters, the ones defined here first (the first match wins).
pub(crate) fn funs() -> Vec<Fun<Ev>> {
    let own = own_funs().into_vec().into_iter();
    let input = jaq_std::input::funs::<Ev>().into_vec().into_iter();
    let own = own
        .chain(input)
        .map(|(name, args, f)| (name, args, jaq_core::Native::<Ev>::new(f)));
    let std = jaq_std::funs::<Ev>().map(|(name, args, f)| (hidden(name), args, f));
    own.chain(jaq_core::funs()).chain(std).collect()
}

/// Prelude definitions: jaq's, with the guard definitions placed before the
/// standard library (so that it uses them) and compatibility additions after it.
pub(crate) fn defs() -> Vec<Def<&'static str>> {
    let mut defs: Vec<_> = jaq_core::defs().collect();
    defs.extend(guard_defs());
    defs.extend(jaq_std::defs());
    defs.extend(jaq_json::defs());
    defs.extend(jaq_core::load::parse(EXTRA_DEFS, |p| p.defs()).unwrap_or_default());
    defs
}

/// jq filters missing from jaq's standard library.
const EXTRA_DEFS: &str = r#"
def @csv:
  if type == "array" then
    map(if type == "string" then "\"" + (split("\"") | join("\"\"")) + "\""
        elif . == null then ""
        elif type == "boolean" or type == "number" then tostring
        else error("\(type) (\(tojson)) is not valid in a csv row") end)
    | join(",")
  else error("\(type) (\(tojson)) cannot be csv-formatted, only an array can be") end;
def @tsv:
  if type == "array" then
    map(if type == "string" then
          split("\\") | join("\\\\") | split("\t") | join("\\t")
          | split("\n") | join("\\n") | split("\r") | join("\\r")
        elif . == null then ""
        elif type == "boolean" or type == "number" then tostring
        else error("\(type) (\(tojson)) is not valid in a tsv row") end)
    | join("\t")
  else error("\(type) (\(tojson)) cannot be tsv-formatted, only an array can be") end;
def join($x): reduce .[] as $i (null;
  (if . == null then "" else . + $x end) +
  ($i | if type == "boolean" or type == "number" then tojson elif . == null then "" else . end)
) // "";
def leaf_paths: paths(scalars);
def toarray: if type == "array" then . else [.] end;
def IN(s): any(s == .; .);
def IN(src; s): any(src == s; .);
def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row | idx_expr | tostring] |= $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def tostream: path(def r: (.[]? | r), .; r) as $p | getpath($p) | reduce path(.[]?) as $q ([$p, .]; [$p + $q]);
"#;

/// `name(args): !guard(guard_args) | !name(args)` as a definition.
fn guarded(
    name: &'static str,
    args: &[&'static str],
    guard: Term<&'static str>,
) -> Def<&'static str> {
    let call_args = args.iter().map(|a| Term::Var(*a)).collect();
    let body = Term::BinOp(
        Box::new(guard),
        BinaryOp::Pipe(None),
        Box::new(Term::Call(hidden(name), call_args)),
    );
    Def {
        name,
        args: args.to_vec(),
        body,
    }
}

fn guard_defs() -> Vec<Def<&'static str>> {
    let mut defs = Vec::new();
    for name in REGEX_NATIVES {
        let guard = Term::Call("!regex_guard", vec![Term::Var("$re"), Term::Var("$flags")]);
        defs.push(guarded(name, &["$re", "$flags"], guard));
    }
    for (name, factor) in STRING_NATIVES {
        let factor = match factor {
            1 => "1",
            2 => "2",
            3 => "3",
            4 => "4",
            6 => "6",
            _ => "16",
        };
        let guard = Term::Call("!precharge", vec![Term::Num(factor)]);
        defs.push(guarded(name, &[], guard));
    }
    defs
}

fn own_funs() -> Box<[jaq_core::native::Filter<RunPtr<Ev>>]> {
    Box::new([
        ("tojson", v(0), |cv| bome(Ok(Value::string(cv.1.to_json())))),
        ("fromjson", v(0), |cv| fromjson(cv.1)),
        ("length", v(0), |cv| bome(length(&cv.1))),
        ("contains", v(1), |cv| {
            unary(cv, |x, y| Ok(Value::from(contains(&x.val, &y.val))))
        }),
        ("has", v(1), |cv| {
            unary(cv, |x, k| x.has(&k).map(Value::from))
        }),
        ("indices", v(1), |cv| unary(cv, |x, y| indices(&x, &y))),
        ("bsearch", v(1), |cv| unary(cv, |a, x| bsearch(a, &x))),
        ("input", v(0), |cv| {
            let next = jaq_std::input::HasInputs::inputs(cv.0.data()).next();
            let no_more = || Error::str("No more inputs");
            bome(next.map_or_else(|| Err(no_more()), |r| r.map_err(Error::str)))
        }),
        ("env", v(0), |_| bome(Ok(Value::object(Map::default(), 0)))),
        ("debug_empty", v(0), |_| Box::new(core::iter::empty())),
        ("stderr_empty", v(0), |_| Box::new(core::iter::empty())),
        ("!precharge", v(1), |cv| {
            unary(cv, |x, factor| {
                let factor = factor.as_isize_pos().unwrap_or(1);
                if let Some(s) = x.str_bytes() {
                    meter::charge_n(s.len(), factor);
                    meter::tick(s.len() as u64 / 256);
                }
                Ok(x)
            })
        }),
        ("!regex_guard", v(2), |mut cv| {
            let flags = cv.0.pop_var();
            let re = cv.0.pop_var();
            let checked = regex_guard(&cv.1, &re, &flags).map(|()| cv.1);
            box_once(checked.map_err(jaq_core::Exn::from))
        }),
    ])
}

impl Value {
    fn as_isize_pos(&self) -> Option<usize> {
        match self.num()? {
            Num::Int(i) => usize::try_from(*i).ok(),
            _ => None,
        }
    }
}

fn fromjson<'a>(v: Value) -> jaq_core::ValXs<'a, Value> {
    let Val::TStr(s) = &v.val else {
        return bome(Err(Error::typ(v, "string")));
    };
    meter::charge_n(s.len(), 2);
    meter::tick(s.len() as u64 / 16);
    match document::parse(s) {
        Ok(values) => Box::new(values.into_iter().map(Ok)),
        Err(crate::QueryError::NotJson { message, .. }) if message.starts_with("empty") => {
            Box::new(core::iter::empty())
        }
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.strip_prefix("not JSON: ").unwrap_or(&msg).to_string();
            bome(Err(Error::str(format_args!(
                "cannot parse {v} as JSON: {msg}"
            ))))
        }
    }
}

fn length(v: &Value) -> Result<Value, Error> {
    Ok(match &v.val {
        Val::Null => Value::from(0usize),
        Val::Bool(_) => return Err(Error::str(format_args!("boolean ({v}) has no length"))),
        Val::Num(n) => {
            let abs = if *n < Num::Int(0) {
                -n.clone()
            } else {
                n.clone()
            };
            Value::scalar(Val::Num(abs))
        }
        Val::TStr(s) => {
            meter::tick(s.len() as u64 / 256);
            Value::from(s.chars().count())
        }
        Val::BStr(b) => Value::from(b.len()),
        Val::Arr(a) => Value::from(a.len()),
        Val::Obj(o) => Value::from(o.len()),
    })
}

/// jq's `contains`: substring, every element contained in some element, every entry contained.
fn contains(l: &Val, r: &Val) -> bool {
    meter::tick(1);
    match (l, r) {
        (Val::BStr(l), Val::BStr(r)) | (Val::TStr(l), Val::TStr(r)) => {
            meter::tick((l.len() + r.len()) as u64 / 256);
            l.contains_str(&**r)
        }
        (Val::Arr(l), Val::Arr(r)) => r.iter().all(|r| l.iter().any(|l| contains(l, r))),
        (Val::Obj(l), Val::Obj(r)) => r
            .iter()
            .all(|(k, r)| l.get(k).is_some_and(|l| contains(l, r))),
        _ => cmp::equal(l, r),
    }
}

/// Positions of `y` in `x` (characters for strings, elements for arrays).
fn indices(x: &Value, y: &Value) -> Result<Value, Error> {
    let items: Vec<Val> = match (&x.val, &y.val) {
        (Val::BStr(_), Val::BStr(b)) | (Val::TStr(_), Val::TStr(b)) if b.is_empty() => Vec::new(),
        (Val::TStr(a), Val::TStr(b)) => {
            let mut out = Vec::new();
            for (n, (i, _, _)) in a.char_indices().enumerate() {
                meter::tick(1 + b.len() as u64 / 64);
                match a.get(i..i + b.len()) {
                    Some(w) if w == &b[..] => {
                        meter::charge(SLOT_BYTES);
                        out.push(Val::from(n));
                    }
                    Some(_) => {}
                    None => break,
                }
            }
            out
        }
        (Val::BStr(a), Val::BStr(b)) => {
            let mut out = Vec::new();
            for (n, w) in a.windows(b.len()).enumerate() {
                meter::tick(1 + b.len() as u64 / 64);
                if w == &b[..] {
                    meter::charge(SLOT_BYTES);
                    out.push(Val::from(n));
                }
            }
            out
        }
        (Val::Arr(_), Val::Arr(b)) if b.is_empty() => Vec::new(),
        (Val::Arr(a), Val::Arr(b)) => Value::subarray_indices(a, b),
        (Val::Arr(a), _) => {
            let mut out = Vec::new();
            for (n, e) in a.iter().enumerate() {
                if cmp::equal(e, &y.val) {
                    meter::charge(SLOT_BYTES);
                    out.push(Val::from(n));
                }
            }
            out
        }
        _ => return Err(Error::index(x.clone(), y.clone())),
    };
    Ok(Value::array(items, 0))
}

fn bsearch(a: Value, x: &Value) -> Result<Value, Error> {
    match &a.val {
        Val::Arr(items) => {
            let found = items.binary_search_by(|e| cmp::compare(e, &x.val));
            let i = found.map_or_else(|i| -1 - i as isize, |i| i as isize);
            Ok(Value::from(i))
        }
        _ => Err(Error::typ(a, "array")),
    }
}

/// Result of [`regex_size`] per (pattern, flags).
type RegexSizes = HashMap<(Vec<u8>, Vec<u8>), Option<Result<usize, ()>>>;

thread_local! {
    /// Cache of automaton size bounds, so that a pattern applied to many strings is measured once.
    static REGEX_SIZES: RefCell<RegexSizes> = RefCell::new(HashMap::new());
}

/// Largest automaton (bytes) a pattern may compile to.
const MAX_REGEX_BYTES: usize = 1 << 20;

/// Smallest size limit (bytes) under which `re` compiles with `flags`;
/// `Some(Err(()))` if the pattern is invalid, `None` if it is too large.
fn regex_size(re: &str, flags: &str) -> Option<Result<usize, ()>> {
    let mut limit = 1 << 10;
    while limit <= MAX_REGEX_BYTES {
        let mut b = regex_bites::bytes::RegexBuilder::new(re);
        for f in flags.chars() {
            match f {
                'i' => b.case_insensitive(true),
                'm' => b.multi_line(true),
                's' => b.dot_matches_new_line(true),
                'l' => b.swap_greed(true),
                'x' => b.ignore_whitespace(true),
                'p' => b.multi_line(true).dot_matches_new_line(true),
                _ => &mut b,
            };
        }
        match b.size_limit(limit).build() {
            Ok(_) => return Some(Ok(limit)),
            Err(e) if e.to_string().contains("size limit") => limit *= 4,
            // an invalid pattern: jaq reports it
            Err(_) => return Some(Err(())),
        }
    }
    None
}

/// Charges the worst-case cost of matching `re` against the input string.
///
/// Invalid patterns or flags are left to jaq, which reports them.
fn regex_guard(input: &Value, re: &Value, flags: &Value) -> Result<(), Error> {
    let (Some(text), Some(re), Some(flags)) =
        (input.str_bytes(), re.str_bytes(), flags.str_bytes())
    else {
        return Ok(());
    };
    let (Ok(re_str), Ok(flags_str)) = (std::str::from_utf8(re), std::str::from_utf8(flags)) else {
        return Ok(());
    };
    let key = (re.to_vec(), flags.to_vec());
    let cached = REGEX_SIZES.with(|c| c.borrow().get(&key).copied());
    let size = match cached {
        Some(size) => size,
        None => {
            meter::tick(1 + re.len() as u64);
            let size = regex_size(re_str, flags_str);
            REGEX_SIZES.with(|c| {
                let mut c = c.borrow_mut();
                if c.len() > 4096 {
                    c.clear();
                }
                c.insert(key, size);
            });
            size
        }
    };
    let size = match size {
        Some(Ok(size)) => size,
        Some(Err(())) => return Ok(()),
        None => {
            return Err(Error::str(format_args!(
                "regular expression too large (its automaton exceeds {MAX_REGEX_BYTES} bytes)"
            )))
        }
    };
    // matching costs time per text byte proportional to the automaton size;
    // each call also compiles the pattern
    let per_byte = 1 + (size / 1024) as u64;
    let cost = (text.len() as u64)
        .saturating_mul(per_byte)
        .saturating_add(8 + re.len() as u64);
    if cost > meter::steps_left() {
        meter::trip(meter::Limit::Regex);
    }
    meter::tick(cost);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn extra_definitions_parse() {
        let extra = jaq_core::load::parse(super::EXTRA_DEFS, |p| p.defs()).unwrap_or_default();
        assert_eq!(extra.len(), 10);
    }
}
