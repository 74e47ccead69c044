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
use crate::utf8::Run;
use std::cell::OnceCell;
use std::ptr;

/// One run of a JavaScript string in the form it was copied out of V8.
enum Segment {
  /// Consecutive slices whose characters were all below U+0100: one byte per character.
  Latin1(Vec<u8>),
  /// Raw UTF-16 code units (a surrogate pair may straddle two segments).
  Utf16(Vec<u16>),
}

/// A JavaScript string being assembled in native memory, slice by slice.
///
/// Consecutive Latin-1 slices are copied by V8 straight into one buffer, so the
/// common case (ASCII text) needs no further copy: it is already UTF-8.
#[napi]
#[derive(Default)]
pub struct NativeText {
  segments: Vec<Segment>,
  /// Expected total length in UTF-16 units (a capacity hint).
  expected_units: usize,
  /// Whether some character received so far is not ASCII.
  non_ascii: bool,
  /// Each segment's UTF-8 size, once counted (see [`NativeText::utf8_len`]): counted
  /// once, for the caller that checks the size before storing and for the encoding.
  sizes: OnceCell<Vec<usize>>,
}

impl Drop for NativeText {
  /// A text never stored (its offload failed) is freed in the background when large
  /// (see `crate::drops`): the finalizer runs on the JavaScript thread.
  fn drop(&mut self) {
    let bytes: usize = self
      .segments
      .iter()
      .map(|s| match s {
        Segment::Latin1(b) => b.capacity(),
        Segment::Utf16(u) => u.capacity() * 2,
      })
      .sum();
    if bytes >= crate::drops::BACKGROUND_FREE_BYTES {
      crate::drops::drop_in_background(std::mem::take(&mut self.segments));
    }
  }
}

/// A string argument not yet read: reading it is left to the method, which knows
/// where the characters should go.
pub struct StringArg {
  env: sys::napi_env,
  value: sys::napi_value,
}

/// A string argument copied out as raw UTF-16 code units.
pub struct Utf16Slice(Vec<u16>);

impl Utf16Slice {
  /// The copied code units (lone surrogates included, as JavaScript holds them).
  pub fn into_units(self) -> Vec<u16> {
    self.0
  }
}

impl TypeName for StringArg {
  fn type_name() -> &'static str {
    "string"
  }
  fn value_type() -> ValueType {
    ValueType::String
  }
}

impl ValidateNapiValue for StringArg {}

impl FromNapiValue for StringArg {
  unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
    Ok(StringArg { env, value })
  }
}

impl StringArg {
  /// Appends the string's characters as Latin-1 bytes to `out` (the caller
  /// guarantees every character is below U+0100): V8 copies them in place.
  pub(crate) fn append_latin1(&self, out: &mut Vec<u8>) -> Result<()> {
    let mut len = 0usize;
    check_status!(unsafe { sys::napi_get_value_string_latin1(self.env, self.value, ptr::null_mut(), 0, &mut len) })?;
    out.reserve(len + 1);
    let start = out.len();
    let mut written = 0usize;
    check_status!(unsafe {
      sys::napi_get_value_string_latin1(
        self.env,
        self.value,
        out.as_mut_ptr().add(start).cast(),
        len + 1,
        &mut written,
      )
    })?;
    // SAFETY: napi initialised `written` bytes after `start` (plus a terminator
    // that is left outside the length) within the reserved capacity.
    unsafe { out.set_len(start + written.min(len)) };
    Ok(())
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

impl ValidateNapiValue for Utf16Slice {}

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
  /// Creates an empty text; `expectedLength` (UTF-16 units) sizes the buffer.
  #[napi(constructor, catch_unwind)]
  pub fn new(expected_length: Option<f64>) -> Self {
    let expected_units = expected_length.filter(|n| n.is_finite() && *n > 0.0).map_or(0, |n| n as usize);
    Self { segments: Vec::new(), expected_units, non_ascii: false, sizes: OnceCell::new() }
  }

  /// Appends a slice whose characters are all below U+0100 (checked by the caller with
  /// `/[^\x00-\xff]/`, which V8 answers in constant time for one-byte strings).
  #[napi(catch_unwind)]
  pub fn push_latin1(&mut self, slice: StringArg) -> Result<()> {
    self.sizes.take();
    if !matches!(self.segments.last(), Some(Segment::Latin1(_))) {
      let remaining = self.expected_units.saturating_sub(self.length() as usize);
      // One byte more than the text: napi always writes a terminating NUL, and a
      // buffer that had to grow for it would free and reallocate 10 MB blocks.
      self.segments.push(Segment::Latin1(Vec::with_capacity(remaining + 1)));
    }
    match self.segments.last_mut() {
      Some(Segment::Latin1(buffer)) => {
        let start = buffer.len();
        slice.append_latin1(buffer)?;
        self.non_ascii |= !buffer[start..].is_ascii();
        Ok(())
      }
      _ => Err(Error::new(Status::GenericFailure, "text buffer is in an unexpected state")),
    }
  }

  /// Appends a slice of any characters as raw UTF-16.
  #[napi(catch_unwind)]
  pub fn push_utf16(&mut self, slice: Utf16Slice) {
    self.sizes.take();
    self.non_ascii |= slice.0.iter().any(|&u| u >= 0x80);
    self.segments.push(Segment::Utf16(slice.0));
  }

  /// Number of UTF-16 code units received so far.
  #[napi(getter, catch_unwind)]
  pub fn length(&self) -> f64 {
    self.units() as f64
  }

  /// Bytes of the text's UTF-8 (lone surrogates as U+FFFD): the length itself for
  /// ASCII text, else counted here, natively.
  #[napi(getter, catch_unwind)]
  pub fn utf8_length(&self) -> f64 {
    self.utf8_len() as f64
  }
}

impl NativeText {
  /// Moves the received slices out, leaving this text empty (it can be reused).
  pub fn take(&mut self) -> PendingText {
    let non_ascii = std::mem::replace(&mut self.non_ascii, false);
    PendingText { segments: std::mem::take(&mut self.segments), non_ascii, sizes: self.sizes.take() }
  }

  /// Number of UTF-16 code units received so far.
  pub fn units(&self) -> usize {
    self
      .segments
      .iter()
      .map(|s| match s {
        Segment::Latin1(b) => b.len(),
        Segment::Utf16(u) => u.len(),
      })
      .sum()
  }

  /// The exact UTF-8 length of the text (lone surrogates count as U+FFFD).
  pub fn utf8_len(&self) -> usize {
    if !self.non_ascii {
      return self.units();
    }
    // A pair split between two segments counts 3 + 3 here instead of 4: an
    // overestimate by 2, on the safe side of every limit it is compared with.
    self.sizes.get_or_init(|| self.segments.iter().map(Segment::utf8_len).collect()).iter().sum()
  }

  /// The text as UTF-8 when it is all ASCII, taken out of this object: its one buffer
  /// as it is, or the slices it came in joined (a copy); `None` otherwise (nothing is
  /// taken).
  pub fn take_ascii(&mut self) -> Option<Vec<u8>> {
    let ascii = !self.non_ascii && self.segments.iter().all(|s| matches!(s, Segment::Latin1(_)));
    if !ascii {
      return None;
    }
    self.sizes.take();
    if self.segments.len() <= 1 {
      return self.take_if_utf8();
    }
    let mut joined = Vec::with_capacity(self.units());
    for segment in self.segments.drain(..) {
      if let Segment::Latin1(bytes) = segment {
        joined.extend_from_slice(&bytes);
      }
    }
    Some(joined)
  }

  /// The text as UTF-8 if that needs no encoding work (it is all ASCII, in one
  /// buffer), taking it out of this object; `None` otherwise (nothing is taken).
  pub fn take_if_utf8(&mut self) -> Option<Vec<u8>> {
    if self.non_ascii || self.segments.len() > 1 {
      return None;
    }
    match self.segments.pop() {
      Some(Segment::Latin1(bytes)) => {
        self.sizes.take();
        Some(bytes)
      }
      Some(other) => {
        self.segments.push(other);
        None
      }
      None => Some(Vec::new()),
    }
  }
}

/// Slices taken from a [`NativeText`], ready to be encoded on a worker thread.
pub struct PendingText {
  segments: Vec<Segment>,
  /// Whether some character is not ASCII (when false, Latin-1 bytes are UTF-8).
  non_ascii: bool,
  /// Each segment's UTF-8 size when already counted.
  sizes: Option<Vec<usize>>,
}

impl PendingText {
  /// Encodes the text as UTF-8, replacing lone surrogates with U+FFFD exactly as
  /// `TextEncoder` does. A single ASCII slice is reused without copying; otherwise
  /// the exact size is computed first (or taken from [`NativeText::utf8_len`]'s count)
  /// and ASCII slices are plain copies (see `crate::utf8`).
  pub fn into_utf8(mut self) -> Vec<u8> {
    if !self.non_ascii {
      if let [Segment::Latin1(_)] = self.segments.as_slice() {
        if let Some(Segment::Latin1(bytes)) = self.segments.pop() {
          return bytes;
        }
      }
    }
    let (segments, joined) = join_split_pairs(self.segments);
    // Sizes counted before a pair was joined are not those of the joined segments.
    let sizes = if joined { None } else { self.sizes };
    let runs: Vec<Run<'_>> = segments.iter().map(Segment::run).collect();
    crate::utf8::encode_runs(&runs, sizes)
  }
}

impl Segment {
  /// This segment's characters, borrowed.
  fn run(&self) -> Run<'_> {
    match self {
      Segment::Latin1(bytes) => Run::Latin1(bytes),
      Segment::Utf16(units) => Run::Utf16(units),
    }
  }

  /// Number of UTF-8 bytes this segment encodes to (lone surrogates count as U+FFFD).
  fn utf8_len(&self) -> usize {
    self.run().utf8_len()
  }
}

/// Moves a high surrogate that ends a UTF-16 segment to the front of the next
/// UTF-16 segment, so a pair split by slicing is encoded as one character; and whether
/// one was moved.
fn join_split_pairs(segments: Vec<Segment>) -> (Vec<Segment>, bool) {
  let mut joined_any = false;
  let mut out: Vec<Segment> = Vec::with_capacity(segments.len());
  for segment in segments {
    if let (Segment::Utf16(next), Some(Segment::Utf16(prev))) = (&segment, out.last_mut()) {
      if matches!(prev.last(), Some(0xD800..=0xDBFF)) && matches!(next.first(), Some(0xDC00..=0xDFFF)) {
        if let Some(high) = prev.pop() {
          let mut joined = Vec::with_capacity(next.len() + 1);
          joined.push(high);
          joined.extend_from_slice(next);
          out.push(Segment::Utf16(joined));
          joined_any = true;
          continue;
        }
      }
    }
    out.push(segment);
  }
  (out, joined_any)
}
