//! Dates: `strftime`, `strflocaltime`, `gmtime`, `localtime`, `mktime`,
//! `strptime`, `todateiso8601`, `fromdateiso8601` (and the definitions on
//! them: `todate`, `fromdate`).
//!
//! As jaq's (on the jiff library), with two changes:
//!
//! - Everything is in UTC: `localtime` is `gmtime` and `strflocaltime` is
//!   `strftime`, so that queries cannot learn the host's time zone.
//! - A format is formatted directive by directive: its steps are counted for
//!   every directive before any is formatted, and the output's memory is
//!   charged before each directive can add to it (a directive prints at most
//!   [`MAX_DIRECTIVE_BYTES`]: jiff pads to widths of at most 255).

use super::Native;
use crate::meter;
use crate::value::{build, Error, ValR, Value};
use jaq_core::native::{bome, unary, v};
use jaq_json::Val;
use jaq_std::ValT as _;
use jiff::civil::DateTime;
use jiff::fmt::strtime::BrokenDownTime;
use jiff::tz::{Offset, TimeZone};
use jiff::{Timestamp, Zoned};

/// Most bytes one directive of a format prints.
const MAX_DIRECTIVE_BYTES: usize = 512;

/// Steps counted for formatting one directive.
const DIRECTIVE_STEPS: u64 = 4;

pub(super) fn funs() -> Box<[Native]> {
    Box::new([
        ("strftime", v(1), |cv| {
            unary(cv, |v, fmt| strftime(&v, &fmt))
        }),
        ("strflocaltime", v(1), |cv| {
            unary(cv, |v, fmt| strftime(&v, &fmt))
        }),
        ("gmtime", v(0), |cv| bome(gmtime(&cv.1))),
        ("localtime", v(0), |cv| bome(gmtime(&cv.1))),
        ("mktime", v(0), |cv| bome(mktime(&cv.1))),
        ("strptime", v(1), |cv| {
            unary(cv, |v, fmt| strptime(&v, &fmt))
        }),
        ("todateiso8601", v(0), |cv| bome(to_iso8601(&cv.1))),
        ("fromdateiso8601", v(0), |cv| bome(from_iso8601(&cv.1))),
    ])
}

/// The text of a string value (UTF-8), or a type error.
fn text(v: &Value) -> Result<&str, Error> {
    let bytes = v.try_as_utf8_bytes()?;
    meter::tick(bytes.len() as u64 / 256);
    std::str::from_utf8(bytes).map_err(Error::str)
}

/// The number, or a type error.
fn number(v: &Value) -> Result<f64, Error> {
    v.as_f64().ok_or_else(|| Error::typ(v.clone(), "number"))
}

/// A UNIX time in seconds (with fractions) as a timestamp.
fn epoch_to_timestamp(v: &Value) -> Result<Timestamp, Error> {
    let micros = match v.as_isize() {
        Some(i) => (i as i64).saturating_mul(1_000_000),
        None => (number(v)? * 1e6) as i64,
    };
    Timestamp::from_microsecond(micros).map_err(Error::str)
}

/// A timestamp as UNIX time: seconds, or seconds with fractions if `frac`.
fn timestamp_to_epoch(ts: Timestamp, frac: bool) -> ValR {
    if frac {
        Ok(Value::from(ts.as_microsecond() as f64 / 1e6))
    } else {
        let seconds = ts.as_second();
        Ok(match isize::try_from(seconds) {
            Ok(s) => Value::from(s),
            Err(_) => Value::from(seconds as f64),
        })
    }
}

/// The first six elements of a "broken down time" array as a date and time.
fn array_to_datetime(v: &Value) -> Option<Result<DateTime, jiff::Error>> {
    let Val::Arr(a) = &v.val else { return None };
    let part = |i: usize| a.get(i).map(|x| Value::child(x.clone(), 1));
    let (year, month, day, hour, min, sec) =
        (part(0)?, part(1)?, part(2)?, part(3)?, part(4)?, part(5)?);
    let sec = sec.as_f64()?;
    let i8 = |v: &Value| -> Option<i8> { v.as_isize()?.try_into().ok() };
    Some(DateTime::new(
        year.as_isize()?.try_into().ok()?,
        i8(&month)?.checked_add(1)?,
        i8(&day)?,
        i8(&hour)?,
        i8(&min)?,
        // the cast saturates
        sec.floor() as i8,
        (sec.fract() * 1e9) as i32,
    ))
}

/// A date and time as a "broken down time" array (as jq's `gmtime`).
fn datetime_to_array(dt: DateTime) -> Value {
    let second = if dt.subsec_nanosecond() > 0 {
        Val::from(dt.second() as f64 + dt.subsec_nanosecond() as f64 / 1e9)
    } else {
        Val::from(dt.second() as isize)
    };
    let mut out = build::Array::new();
    for part in [
        Val::from(dt.year() as isize),
        Val::from(dt.month() as isize - 1),
        Val::from(dt.day() as isize),
        Val::from(dt.hour() as isize),
        Val::from(dt.minute() as isize),
        second,
        Val::from(dt.weekday().to_sunday_zero_offset() as isize),
        Val::from(dt.day_of_year() as isize - 1),
    ] {
        out.push_val(part, 0);
    }
    out.finish()
}

/// The input (UNIX time or broken down time, taken as UTC) as a zoned time.
fn zoned(v: &Value) -> Result<Zoned, Error> {
    let fail = || Error::str(format_args!("cannot convert {v} to time"));
    match &v.val {
        Val::Arr(_) => array_to_datetime(v)
            .ok_or_else(fail)?
            .and_then(|dt| dt.to_zoned(TimeZone::UTC))
            .map_err(Error::str),
        _ => Ok(epoch_to_timestamp(v)?.to_zoned(TimeZone::UTC)),
    }
}

/// Byte offsets where the directives of `fmt` begin (a `%` not escaped as
/// `%%`; `%%` is a directive of its own).
fn directive_starts(fmt: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut i = 0;
    core::iter::from_fn(move || {
        while i < fmt.len() {
            if fmt[i] == b'%' {
                let start = i;
                i += if fmt.get(i + 1) == Some(&b'%') { 2 } else { 1 };
                return Some(start);
            }
            i += 1;
        }
        None
    })
}

/// `strftime` (and `strflocaltime`): the time formatted in UTC.
///
/// The steps of all directives are counted first; then the format is
/// formatted in pieces of literal text and one directive, the output's room
/// for each piece charged before it is formatted.
fn strftime(v: &Value, fmt: &Value) -> ValR {
    let fmt = text(fmt)?.as_bytes();
    let zoned = zoned(v)?;
    let directives = directive_starts(fmt).count() as u64;
    meter::tick(1 + fmt.len() as u64 / 16 + DIRECTIVE_STEPS.saturating_mul(directives));
    let time = BrokenDownTime::from(&zoned);
    let mut out = String::new();
    let mut begin = 0;
    for end in directive_starts(fmt).chain([fmt.len()]) {
        if end == begin {
            continue;
        }
        let piece = &fmt[begin..end];
        build::reserve_text(&mut out, piece.len().saturating_add(MAX_DIRECTIVE_BYTES));
        time.format(piece, &mut out).map_err(Error::str)?;
        begin = end;
    }
    Ok(Value::scalar(Val::utf8_str(out.into_bytes())))
}

/// `gmtime` (and `localtime`): UNIX time as a broken down time in UTC.
fn gmtime(v: &Value) -> ValR {
    let dt = epoch_to_timestamp(v)?.to_zoned(TimeZone::UTC).datetime();
    Ok(datetime_to_array(dt))
}

/// `mktime`: a broken down time (UTC) as UNIX time.
fn mktime(v: &Value) -> ValR {
    if !matches!(v.val, Val::Arr(_)) {
        return Err(Error::typ(v.clone(), "array"));
    }
    let ts = zoned(v)?.timestamp();
    timestamp_to_epoch(ts, ts.subsec_nanosecond() > 0)
}

/// `strptime`: a string read with a format, as a broken down time (UTC
/// unless the string gives an offset or time zone).
fn strptime(v: &Value, fmt: &Value) -> ValR {
    let (s, fmt) = (text(v)?, text(fmt)?);
    meter::tick(1 + (s.len() + fmt.len()) as u64 / 16);
    let mut time = BrokenDownTime::parse(fmt, s).map_err(Error::str)?;
    if (time.offset(), time.iana_time_zone()) == (None, None) {
        time.set_offset(Some(Offset::UTC));
    }
    let dt = time.to_zoned().map_err(Error::str)?.datetime();
    Ok(datetime_to_array(dt))
}

/// `todateiso8601`: UNIX time as an ISO 8601 text in UTC.
fn to_iso8601(v: &Value) -> ValR {
    let ts = match v.as_isize() {
        Some(i) => Timestamp::from_second(i as i64),
        None => Timestamp::from_microsecond((number(v)? * 1e6) as i64),
    };
    Ok(Value::from(ts.map_err(Error::str)?.to_string()))
}

/// `fromdateiso8601`: an RFC 3339 text as UNIX time.
fn from_iso8601(v: &Value) -> ValR {
    let s = text(v)?;
    let ts: Timestamp = s.parse().map_err(Error::str)?;
    timestamp_to_epoch(ts, s.contains('.'))
}
