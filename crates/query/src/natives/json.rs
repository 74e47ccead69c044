//! `tojson`, `fromjson`, `length`, `contains`, `has`, `indices`, `bsearch`,
//! `input`, and the refused `env`, `debug`, `stderr`.
//!
//! jaq-json's natives exist only for its own value type; these are written
//! for [`Value`] with metering. `fromjson` goes through the same strict,
//! depth-checked and charged reader as the document.

use super::Native;
use crate::document;
use crate::meter;
use crate::value::{build, cmp, Error, Value};
use bstr::ByteSlice;
use jaq_core::native::{bome, unary, v};
use jaq_json::{Map, Num, Val};

pub(super) fn funs() -> Box<[Native]> {
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
    ])
}

/// `fromjson`: the values of a JSON text (charged by the reader as it builds them).
fn fromjson<'a>(v: Value) -> jaq_core::ValXs<'a, Value> {
    let Val::TStr(s) = &v.val else {
        return bome(Err(Error::typ(v, "string")));
    };
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

pub(crate) fn length(v: &Value) -> Result<Value, Error> {
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
            // characters are decoded one by one
            meter::tick(s.len() as u64 / 16);
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
        (Val::Obj(l), Val::Obj(r)) => r.iter().all(|(k, r)| {
            build::hash_work(k);
            l.get(k).is_some_and(|l| contains(l, r))
        }),
        _ => cmp::equal(l, r),
    }
}

/// Positions of `y` in `x` (characters for strings, elements for arrays).
fn indices(x: &Value, y: &Value) -> Result<Value, Error> {
    let mut out = build::Array::new();
    match (&x.val, &y.val) {
        (Val::BStr(_), Val::BStr(b)) | (Val::TStr(_), Val::TStr(b)) if b.is_empty() => {}
        (Val::TStr(a), Val::TStr(b)) => {
            for (n, (i, _, _)) in a.char_indices().enumerate() {
                meter::tick(1 + b.len() as u64 / 64);
                match a.get(i..i + b.len()) {
                    Some(w) if w == &b[..] => out.push_val(Val::from(n), 0),
                    Some(_) => {}
                    None => break,
                }
            }
        }
        (Val::BStr(a), Val::BStr(b)) => {
            for (n, w) in a.windows(b.len()).enumerate() {
                meter::tick(1 + b.len() as u64 / 64);
                if w == &b[..] {
                    out.push_val(Val::from(n), 0);
                }
            }
        }
        (Val::Arr(a), Val::Arr(b)) => return Ok(Value::subarray_indices(a, b)),
        (Val::Arr(a), _) => {
            for (n, e) in a.iter().enumerate() {
                if cmp::equal(e, &y.val) {
                    out.push_val(Val::from(n), 0);
                }
            }
        }
        _ => return Err(Error::index(x.clone(), y.clone())),
    }
    Ok(out.finish())
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
