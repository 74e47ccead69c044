//! Compact JSON output in the style of `jq -c`.
//!
//! - Object keys keep their insertion order, no spaces are printed.
//! - Strings escape `"`, `\`, the control characters U+0000..U+001F and U+007F
//!   (`\b \t \n \f \r` by name, the others as `\u00XX`); everything else is
//!   printed as UTF-8, invalid UTF-8 becomes U+FFFD.
//! - Integers are printed exactly (also beyond 64 bits). Number literals from
//!   the document or the expression are printed as written (as jq 1.7 does).
//!   Computed floating-point numbers use the shortest representation that
//!   reads back to the same number, laid out like jq's `jvp_dtoa_fmt`
//!   (`1e+17`, `1e-05`, `0.0001`, `123456789012345680`). NaN prints as
//!   `null` and infinities as `±1.7976931348623157e+308`, as in jq.

use jaq_json::{Num, Val};
use std::io::Write as _;

/// The output would exceed the allowed number of bytes.
#[derive(Debug)]
pub(crate) struct Full;

/// Appends the compact JSON text of `v` to `out`, failing once `out` grows beyond `cap` bytes.
///
/// On failure `out` holds a partial text that may exceed `cap` by at most one
/// scalar. The recursion depth equals the nesting depth of `v`, which is
/// bounded by [`crate::MAX_DEPTH`]. This variant is not metered and is meant
/// for small caps (error messages).
pub(crate) fn write_value(out: &mut Vec<u8>, v: &Val, cap: usize) -> Result<(), Full> {
    write::<false>(out, v, cap)
}

/// Like [`write_value`], but counts one step per array element and object
/// entry, so that printing large values is bounded by the step and time budgets.
pub(crate) fn write_metered(out: &mut Vec<u8>, v: &Val, cap: usize) -> Result<(), Full> {
    write::<true>(out, v, cap)
}

fn write<const METERED: bool>(out: &mut Vec<u8>, v: &Val, cap: usize) -> Result<(), Full> {
    match v {
        Val::Null => out.extend_from_slice(b"null"),
        Val::Bool(true) => out.extend_from_slice(b"true"),
        Val::Bool(false) => out.extend_from_slice(b"false"),
        Val::Num(n) => write_num(out, n),
        Val::BStr(s) | Val::TStr(s) => {
            // the escaped text is at least as long as the raw bytes
            if out.len().saturating_add(s.len()).saturating_add(2) > cap {
                return Err(Full);
            }
            write_str_metered(out, s, METERED, cap)?;
        }
        Val::Arr(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if METERED {
                    crate::meter::tick(1);
                }
                write::<METERED>(out, x, cap)?;
            }
            out.push(b']');
        }
        Val::Obj(o) => {
            out.push(b'{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if METERED {
                    crate::meter::tick(1);
                }
                match k {
                    Val::BStr(_) | Val::TStr(_) => write::<METERED>(out, k, cap)?,
                    // keys are always strings here; print anything else as a string anyway
                    other => {
                        let mut key = Vec::new();
                        write_value(&mut key, other, cap)?;
                        write_value(out, &Val::utf8_str(key), cap)?;
                    }
                }
                out.push(b':');
                write::<METERED>(out, x, cap)?;
            }
            out.push(b'}');
        }
    }
    if out.len() > cap {
        Err(Full)
    } else {
        Ok(())
    }
}

/// Writes a JSON string literal.
#[cfg(test)]
fn write_str(out: &mut Vec<u8>, s: &[u8]) {
    let _ = write_str_metered(out, s, false, usize::MAX);
}

/// Writes a JSON string literal, counting one step per 16 bytes if `metered`
/// and failing once `out` is longer than `cap` (escapes make the text up to
/// six times longer than the string; at most one piece of 16 KiB is written
/// past `cap`).
fn write_str_metered(out: &mut Vec<u8>, s: &[u8], metered: bool, cap: usize) -> Result<(), Full> {
    // escaping works byte by byte, so pieces may split multi-byte characters
    const PIECE: usize = 1 << 14;
    out.push(b'"');
    for chunk in s.utf8_chunks() {
        for piece in chunk.valid().as_bytes().chunks(PIECE) {
            if metered {
                crate::meter::tick(1 + piece.len() as u64 / 16);
            }
            escape(out, piece);
            if out.len() > cap {
                return Err(Full);
            }
        }
        if !chunk.invalid().is_empty() {
            if metered {
                crate::meter::tick(1);
            }
            out.extend_from_slice("\u{FFFD}".as_bytes());
            if out.len() > cap {
                return Err(Full);
            }
        }
    }
    out.push(b'"');
    Ok(())
}

/// Appends `valid` with JSON escapes.
fn escape(out: &mut Vec<u8>, valid: &[u8]) {
    let mut start = 0;
    for (i, &b) in valid.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f | 0x7f => b"",
            _ => continue,
        };
        out.extend_from_slice(&valid[start..i]);
        start = i + 1;
        if escape.is_empty() {
            // writing into a Vec cannot fail
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.extend_from_slice(escape);
        }
    }
    out.extend_from_slice(&valid[start..]);
}

/// Writes a number the way jq prints it.
pub(crate) fn write_num(out: &mut Vec<u8>, n: &Num) {
    match n {
        Num::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Num::BigInt(i) => {
            let _ = write!(out, "{i}");
        }
        Num::Float(f) => write_float(out, *f),
        Num::Dec(s) if crate::document::is_json_number(s.as_bytes()) => {
            out.extend_from_slice(s.as_bytes())
        }
        Num::Dec(s) => write_float(out, s.parse().unwrap_or(f64::NAN)),
    }
}

/// Writes a double like jq's `jvp_dtoa_fmt` (shortest round-trip digits).
pub(crate) fn write_float(out: &mut Vec<u8>, f: f64) {
    if f.is_nan() {
        out.extend_from_slice(b"null");
        return;
    }
    if f.is_infinite() {
        let text: &[u8] = if f > 0.0 {
            b"1.7976931348623157e+308"
        } else {
            b"-1.7976931348623157e+308"
        };
        out.extend_from_slice(text);
        return;
    }
    if f.is_sign_negative() {
        out.push(b'-');
    }
    if f == 0.0 {
        out.push(b'0');
        return;
    }
    // `{:e}` yields the shortest round-trip digits, e.g. "1.2345e-7" or "5e300"
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    let nd = digits.len() as i64;
    // position of the decimal point relative to the first digit
    let decpt = exp + 1;
    if decpt <= -4 || decpt > nd + 15 {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:02}", exp.unsigned_abs());
    } else if decpt <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', decpt.unsigned_abs() as usize));
        out.extend_from_slice(&digits);
    } else if decpt >= nd {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', (decpt - nd) as usize));
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(f: f64) -> String {
        let mut out = Vec::new();
        write_float(&mut out, f);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn floats_like_jq() {
        let cases = [
            (0.1 + 0.2, "0.30000000000000004"),
            (1e17, "1e+17"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000"),
            (123456789012345678.0, "123456789012345680"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (1.5e300, "1.5e+300"),
            (1.0 / 3.0, "0.3333333333333333"),
            (-0.0, "-0"),
            (1e15 + 0.5, "1000000000000000.5"),
            (3.0, "3"),
            (2.5e-7, "2.5e-07"),
            (5e-324, "5e-324"),
            (-2.5, "-2.5"),
            (f64::NAN, "null"),
            (f64::INFINITY, "1.7976931348623157e+308"),
            (f64::NEG_INFINITY, "-1.7976931348623157e+308"),
        ];
        for (f, want) in cases {
            assert_eq!(float(f), want, "formatting {f:e}");
        }
    }

    #[test]
    fn strings_like_jq() {
        let mut out = Vec::new();
        write_str(&mut out, b"a\"\\\n\t\r\x08\x0c\x01\x1f\x7f\xc3\xa9\xff");
        assert_eq!(
            String::from_utf8_lossy(&out),
            "\"a\\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001f\\u007fé\u{FFFD}\""
        );
    }
}
