//! String natives: `explode`, `implode`, `startswith`, `endswith`,
//! `ltrimstr`, `rtrimstr`, `trim`, `ltrim`, `rtrim`, and the guard that
//! prepays the output of jaq's string natives.
//!
//! Each counts steps for the bytes it compares or scans (a comparison of two
//! long strings in a loop would otherwise run unmetered between two looks at
//! the clock) and charges what it builds before building it.

use super::Native;
use crate::cost;
use crate::meter;
use crate::value::{build, Error, Value};
use bstr::ByteSlice;
use jaq_core::native::{bome, unary, v};
use jaq_json::{Num, Val};
use jaq_std::ValT as _;

/// jaq's string natives behind the `!prepay` guard, with the factor by which
/// their output (and the buffers they build it in) may exceed their input.
pub(super) const PREPAID_NATIVES: [(&str, &str); 9] = [
    ("ascii_downcase", "1"),
    ("ascii_upcase", "1"),
    ("escape_html", "6"),
    ("unescape_html", "1"),
    // percent-encoding triples a byte, and the result is copied once more
    ("encode_uri", "6"),
    ("decode_uri", "2"),
    ("encode_base64", "2"),
    ("decode_base64", "1"),
    ("escape_sh", "4"),
];

/// Largest code point.
const MAX_CODE_POINT: i64 = 0x10FFFF;

pub(super) fn funs() -> Box<[Native]> {
    Box::new([
        ("!prepay", v(1), |cv| {
            unary(cv, |x, factor| Ok(prepay(x, &factor)))
        }),
        ("explode", v(0), |cv| bome(explode(&cv.1))),
        ("implode", v(0), |cv| bome(implode(&cv.1))),
        ("startswith", v(1), |cv| {
            unary(cv, |x, s| {
                let (x, s) = (x.try_as_bytes()?, s.try_as_bytes()?);
                meter::tick(s.len().min(x.len()) as u64 / 256);
                Ok(Value::from(x.starts_with(s)))
            })
        }),
        ("endswith", v(1), |cv| {
            unary(cv, |x, s| {
                let (x, s) = (x.try_as_bytes()?, s.try_as_bytes()?);
                meter::tick(s.len().min(x.len()) as u64 / 256);
                Ok(Value::from(x.ends_with(s)))
            })
        }),
        ("ltrimstr", v(1), |cv| {
            unary(cv, |x, s| strip(x, &s, <[u8]>::strip_prefix))
        }),
        ("rtrimstr", v(1), |cv| {
            unary(cv, |x, s| strip(x, &s, <[u8]>::strip_suffix))
        }),
        ("trim", v(0), |cv| bome(trim(&cv.1, ByteSlice::trim))),
        ("ltrim", v(0), |cv| bome(trim(&cv.1, ByteSlice::trim_start))),
        ("rtrim", v(0), |cv| bome(trim(&cv.1, ByteSlice::trim_end))),
    ])
}

/// `!prepay(factor)`: prepays `factor` times the input's length (and the
/// handle of the string the next native builds), counts steps for scanning
/// it, and passes the input on.
fn prepay(x: Value, factor: &Value) -> Value {
    let factor = match factor.num() {
        Some(Num::Int(f)) => usize::try_from(*f).unwrap_or(1),
        _ => 1,
    };
    if let Some(s) = x.str_bytes() {
        let out = s.len().saturating_mul(factor);
        meter::tick(1 + out as u64 / 64);
        meter::prepay(cost::block(out) + cost::OWNER);
    }
    x
}

/// `explode`: the code points of a string; invalid UTF-8 yields U+FFFD, as in jq.
fn explode(x: &Value) -> Result<Value, Error> {
    let s = x.try_as_utf8_bytes()?;
    let mut out = build::Array::new();
    for c in s.chars() {
        // a step per element, as for every array collected
        meter::tick(1);
        out.push_val(Val::from(c as usize), 0);
    }
    Ok(out.finish())
}

/// The code point an element of `implode`'s input stands for.
fn code_point(v: &Val) -> Result<char, Error> {
    let Val::Num(n) = v else {
        let v = Value::child(v.clone(), 1);
        return Err(Error::str(format_args!(
            "{} ({v}) can't be imploded, unicode codepoint needs to be numeric",
            v.kind()
        )));
    };
    // like jq, a fraction is cut off
    let i = match n {
        Num::Int(i) => i64::try_from(*i).ok(),
        _ => {
            let f = <Val as jaq_std::ValT>::as_f64(v).unwrap_or(f64::NAN);
            (f.is_finite() && f.abs() < 1e15).then(|| f.trunc() as i64)
        }
    };
    i.filter(|i| (0..=MAX_CODE_POINT).contains(i))
        .and_then(|i| char::from_u32(i as u32))
        .ok_or_else(|| {
            let v = Value::child(v.clone(), 1);
            Error::str(format_args!(
                "cannot implode {v}: not a unicode code point (0 to 1114111, \
                 except the surrogates 55296 to 57343)"
            ))
        })
}

/// `implode`: the string of an array of code points; anything that is not a
/// code point is an error.
fn implode(x: &Value) -> Result<Value, Error> {
    let Val::Arr(a) = &x.val else {
        return Err(Error::str("implode input must be an array"));
    };
    meter::tick(1 + a.len() as u64 / 16);
    let mut len = 0usize;
    for v in a.iter() {
        len += code_point(v)?.len_utf8();
    }
    meter::charge(cost::block(len));
    let mut out = String::with_capacity(len);
    for v in a.iter() {
        out.push(code_point(v)?);
    }
    Ok(Value::scalar(Val::utf8_str(out.into_bytes())))
}

/// `ltrimstr`/`rtrimstr`: the input without the given prefix or suffix.
fn strip(
    x: Value,
    fix: &Value,
    f: for<'a> fn(&'a [u8], &[u8]) -> Option<&'a [u8]>,
) -> Result<Value, Error> {
    let (s, fix) = (x.try_as_bytes()?, fix.try_as_bytes()?);
    meter::tick(fix.len().min(s.len()) as u64 / 256);
    Ok(match f(s, fix) {
        Some(rest) => x.as_sub_str(rest),
        None => x,
    })
}

/// `trim`, `ltrim`, `rtrim`: the input without white space at its ends.
fn trim(x: &Value, f: fn(&[u8]) -> &[u8]) -> Result<Value, Error> {
    let s = x.try_as_utf8_bytes()?;
    // white space is decoded character by character (slowly), at worst all of it
    meter::tick(s.len() as u64 / 2);
    let rest = f(s);
    Ok(x.as_sub_str(rest))
}
