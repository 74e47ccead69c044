//! Moving large JavaScript strings into native memory without stalling the event loop.
//!
//! Reading a 10 MB string as UTF-8 on the JavaScript thread costs 5-25 ms. Instead the
//! JavaScript glue hands the string over in slices, each copied in its raw V8 form
//! (one byte per character for Latin-1 strings, UTF-16 otherwise: a plain copy), and
//! yields to the event loop between slices. The UTF-8 encoding then happens on a
//! worker thread when the text is stored or searched.

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use std::ptr;

/// One slice of a JavaScript string in the form it was copied out of V8.
enum Segment {
  /// Every character was below U+0100: one byte per character.
  Latin1(Vec<u8>),
  /// Raw UTF-16 code units (a surrogate pair may straddle two segments).
  Utf16(Vec<u16>),
}

/// A JavaScript string being assembled in native memory, slice by slice.
#[napi]
#[derive(Default)]
pub struct NativeText {
  segments: Vec<Segment>,
}

/// A string argument copied out as Latin-1 bytes (the caller guarantees every
/// character is below U+0100).
pub struct Latin1Slice(Vec<u8>);

/// A string argument copied out as raw UTF-16 code units.
pub struct Utf16Slice(Vec<u16>);

impl TypeName for Latin1Slice {
  fn type_name() -> &'static str {
    "string"
  }
  fn value_type() -> ValueType {
    ValueType::String
  }
}

impl TypeName for Utf16Slice {
  fn type_name() -> &'static str {
    "string"
  }
  fn value_type() -> ValueType {
    ValueType::String
  }
}

impl ValidateNapiValue for Latin1Slice {}
impl ValidateNapiValue for Utf16Slice {}

impl FromNapiValue for Latin1Slice {
  unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
    let mut len = 0usize;
    check_status!(unsafe { sys::napi_get_value_string_latin1(env, value, ptr::null_mut(), 0, &mut len) })?;
    let mut buf: Vec<u8> = Vec::with_capacity(len + 1);
    let mut written = 0usize;
    check_status!(unsafe {
      sys::napi_get_value_string_latin1(env, value, buf.as_mut_ptr().cast(), len + 1, &mut written)
    })?;
    // SAFETY: napi initialised `written` bytes (it also wrote a terminator, which is dropped).
    unsafe { buf.set_len(written.min(len)) };
    Ok(Latin1Slice(buf))
  }
}

impl FromNapiValue for Utf16Slice {
  unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
    let mut len = 0usize;
    check_status!(unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut len) })?;
    let mut buf: Vec<u16> = Vec::with_capacity(len + 1);
    let mut written = 0usize;
    check_status!(unsafe {
      sys::napi_get_value_string_utf16(env, value, buf.as_mut_ptr(), len + 1, &mut written)
    })?;
    // SAFETY: napi initialised `written` code units (it also wrote a terminator, which is dropped).
    unsafe { buf.set_len(written.min(len)) };
    Ok(Utf16Slice(buf))
  }
}

#[napi]
impl NativeText {
  /// Creates an empty text.
  #[napi(constructor)]
  pub fn new() -> Self {
    Self::default()
  }

  /// Appends a slice whose characters are all below U+0100 (checked by the caller with
  /// `/[^\x00-\xff]/`, which V8 answers in constant time for one-byte strings).
  #[napi]
  pub fn push_latin1(&mut self, slice: Latin1Slice) {
    self.segments.push(Segment::Latin1(slice.0));
  }

  /// Appends a slice of any characters as raw UTF-16.
  #[napi]
  pub fn push_utf16(&mut self, slice: Utf16Slice) {
    self.segments.push(Segment::Utf16(slice.0));
  }

  /// Number of UTF-16 code units received so far.
  #[napi(getter)]
  pub fn length(&self) -> f64 {
    self
      .segments
      .iter()
      .map(|s| match s {
        Segment::Latin1(b) => b.len(),
        Segment::Utf16(u) => u.len(),
      })
      .sum::<usize>() as f64
  }
}

impl NativeText {
  /// Moves the received slices out, leaving this text empty (it can be reused).
  pub fn take(&mut self) -> PendingText {
    PendingText { segments: std::mem::take(&mut self.segments) }
  }
}

/// Slices taken from a [`NativeText`], ready to be encoded on a worker thread.
pub struct PendingText {
  segments: Vec<Segment>,
}

impl PendingText {
  /// Encodes the text as UTF-8, replacing lone surrogates with U+FFFD exactly as
  /// `TextEncoder` does. A single ASCII slice is reused without copying.
  pub fn into_utf8(mut self) -> Vec<u8> {
    if self.segments.len() == 1 {
      if let Some(Segment::Latin1(bytes)) = self.segments.first() {
        if bytes.is_ascii() {
          if let Some(Segment::Latin1(bytes)) = self.segments.pop() {
            return bytes;
          }
        }
      }
    }
    let capacity: usize = self
      .segments
      .iter()
      .map(|s| match s {
        Segment::Latin1(b) => b.len() * 2,
        Segment::Utf16(u) => u.len() * 3,
      })
      .sum();
    let mut out: Vec<u8> = Vec::with_capacity(capacity);
    // UTF-16 units waiting for the next segment (a high surrogate at a boundary).
    let mut carry: Vec<u16> = Vec::new();
    for segment in self.segments {
      match segment {
        Segment::Latin1(bytes) => {
          flush_utf16(&mut out, &carry);
          carry.clear();
          let start = out.len();
          out.resize(start + bytes.len() * 2, 0);
          let written = encoding_rs::mem::convert_latin1_to_utf8(&bytes, &mut out[start..]);
          out.truncate(start + written);
        }
        Segment::Utf16(units) => {
          let mut joined;
          let units: &[u16] = if carry.is_empty() {
            &units
          } else {
            joined = std::mem::take(&mut carry);
            joined.extend_from_slice(&units);
            &joined
          };
          // Hold back a trailing high surrogate: its pair may start the next segment.
          let split = match units.last() {
            Some(&u) if (0xD800..0xDC00).contains(&u) => units.len() - 1,
            _ => units.len(),
          };
          flush_utf16(&mut out, &units[..split]);
          carry = units[split..].to_vec();
        }
      }
    }
    flush_utf16(&mut out, &carry);
    out
  }
}

/// Appends UTF-16 units to `out` as UTF-8 (lone surrogates become U+FFFD).
fn flush_utf16(out: &mut Vec<u8>, units: &[u16]) {
  if units.is_empty() {
    return;
  }
  let start = out.len();
  out.resize(start + units.len() * 3, 0);
  let written = encoding_rs::mem::convert_utf16_to_utf8(units, &mut out[start..]);
  out.truncate(start + written);
}
