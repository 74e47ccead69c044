//! UTF-8 encoding of text held as runs of Latin-1 bytes and UTF-16 code units (as
//! [`crate::text::NativeText`] receives it from V8).
//!
//! Encoding is two passes over the text: one to size the output exactly, one to fill
//! it. The sizing pass is skipped when the sizes were counted already (to decide
//! whether a text may be encoded on the JavaScript thread).

use std::mem::MaybeUninit;

/// A borrowed run of text in the form it was copied out of V8.
#[derive(Clone, Copy)]
pub(crate) enum Run<'a> {
  /// Characters below U+0100, one byte each.
  Latin1(&'a [u8]),
  /// UTF-16 code units; no surrogate pair straddles two runs.
  Utf16(&'a [u16]),
}

impl Run<'_> {
  /// Bytes of this run's UTF-8 (a lone surrogate counts as U+FFFD, 3 bytes).
  pub(crate) fn utf8_len(&self) -> usize {
    match self {
      Run::Latin1(bytes) => bytes.len() + bytes.iter().filter(|&&b| b >= 0x80).count(),
      Run::Utf16(units) => offload_search::utf16::utf8_len_of_utf16(units),
    }
  }

  /// Encodes this run into `dst` (at least [`Run::utf8_len`] bytes); the bytes written.
  fn encode(&self, dst: &mut [u8]) -> usize {
    match self {
      Run::Latin1(bytes) if bytes.is_ascii() => {
        let n = bytes.len().min(dst.len());
        dst[..n].copy_from_slice(&bytes[..n]);
        n
      }
      Run::Latin1(bytes) => encoding_rs::mem::convert_latin1_to_utf8_partial(bytes, dst).1,
      Run::Utf16(units) => encoding_rs::mem::convert_utf16_to_utf8_partial(units, dst).1,
    }
  }
}

/// The UTF-8 of `runs` in order, lone surrogates replaced with U+FFFD as `TextEncoder`
/// replaces them. `sizes`, when given, are each run's UTF-8 size (as [`Run::utf8_len`]
/// counts them), counted earlier.
pub(crate) fn encode_runs(runs: &[Run<'_>], sizes: Option<Vec<usize>>) -> Vec<u8> {
  let sizes = match sizes {
    Some(sizes) if sizes.len() == runs.len() => sizes,
    _ => runs.iter().map(Run::utf8_len).collect(),
  };
  let total: usize = sizes.iter().sum();
  let mut out: Vec<u8> = Vec::with_capacity(total);
  let written = encode_into(runs, &sizes, zeroed(&mut out.spare_capacity_mut()[..total]));
  // SAFETY: `zeroed` initialised all `total` bytes.
  unsafe { out.set_len(total) };
  out.truncate(written);
  out
}

/// Encodes `runs` one after another into `dst`, each given its `sizes` entry of room
/// (and no more, so a run never overwrites the next): the bytes written, without gaps
/// (a size counted too high leaves its room unused; the next run starts where the last
/// one stopped).
fn encode_into(runs: &[Run<'_>], sizes: &[usize], dst: &mut [u8]) -> usize {
  let mut written = 0;
  let mut room_end = 0;
  for (run, &size) in runs.iter().zip(sizes) {
    room_end = (room_end + size).min(dst.len());
    let start = written.min(room_end);
    written = start + run.encode(&mut dst[start..room_end]);
  }
  written
}

/// `part` with every byte set to zero, as initialised bytes.
fn zeroed(part: &mut [MaybeUninit<u8>]) -> &mut [u8] {
  // SAFETY: writes `part.len()` zero bytes within `part`; `MaybeUninit<u8>` and `u8`
  // have the same layout, and every byte is initialised before the cast.
  unsafe {
    std::ptr::write_bytes(part.as_mut_ptr(), 0, part.len());
    &mut *(part as *mut [MaybeUninit<u8>] as *mut [u8])
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
  }

  #[test]
  fn a_long_text_encodes_as_text_encoder_would() {
    let text: String = "a€😀é漢".repeat(100_000);
    let units = utf16(&text);
    assert_eq!(encode_runs(&[Run::Utf16(&units)], None), text.as_bytes());
  }

  /// A seeded xorshift generator (the binding crate has no property-testing dependency).
  struct Seeded(u64);

  impl Seeded {
    fn below(&mut self, n: usize) -> usize {
      self.0 ^= self.0 << 13;
      self.0 ^= self.0 >> 7;
      self.0 ^= self.0 << 17;
      (self.0 % n as u64) as usize
    }
  }

  /// A code unit of a kind picked at random: ASCII, Latin-1, other BMP, a high or a low
  /// surrogate (pairs form when they meet, lone ones stay).
  fn unit(rng: &mut Seeded) -> u16 {
    match rng.below(6) {
      0 | 1 => 0x20 + rng.below(0x5F) as u16,
      2 => 0x80 + rng.below(0x80) as u16,
      3 => 0x100 + rng.below(0xD700) as u16,
      4 => 0xD800 + rng.below(0x400) as u16,
      _ => 0xDC00 + rng.below(0x400) as u16,
    }
  }

  #[test]
  fn runs_cut_anywhere_encode_as_text_encoder_would_with_sizes_counted_or_not() {
    for seed in 1..=300u64 {
      let mut rng = Seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
      let len = rng.below(if seed % 10 == 0 { 40_000 } else { 600 });
      let dense = rng.below(3) == 0;
      let units: Vec<u16> =
        (0..len).map(|_| if dense || rng.below(20) == 0 { unit(&mut rng) } else { 0x61 }).collect();
      // Cut into runs (never inside a pair, as `NativeText` joins pairs), each
      // Latin-1 when it can be and the coin says so.
      let mut latin1: Vec<Vec<u8>> = Vec::new();
      let mut cuts = vec![0];
      while *cuts.last().unwrap_or(&0) < len {
        let mut at = (cuts.last().unwrap_or(&0) + 1 + rng.below(len / 3 + 1)).min(len);
        if at < len && (0xD800..=0xDBFF).contains(&units[at - 1]) && (0xDC00..=0xDFFF).contains(&units[at]) {
          at += 1;
        }
        cuts.push(at);
      }
      let pieces: Vec<&[u16]> = cuts.windows(2).map(|w| &units[w[0]..w[1]]).collect();
      let as_latin1: Vec<bool> = pieces.iter().map(|p| p.iter().all(|&u| u < 0x100) && rng.below(2) == 0).collect();
      for (piece, &l) in pieces.iter().zip(&as_latin1) {
        latin1.push(if l { piece.iter().map(|&u| u as u8).collect() } else { Vec::new() });
      }
      let runs: Vec<Run<'_>> = pieces
        .iter()
        .zip(&as_latin1)
        .zip(&latin1)
        .map(|((piece, &l), bytes)| if l { Run::Latin1(bytes) } else { Run::Utf16(piece) })
        .collect();
      let expected = String::from_utf16_lossy(&units).into_bytes();
      let exact: Vec<usize> = runs.iter().map(Run::utf8_len).collect();
      let over: Vec<usize> = exact.iter().map(|&n| n + rng.below(5)).collect();
      for sizes in [None, Some(exact.clone()), Some(over.clone())] {
        let label = format!("seed {seed}, sizes {:?}", sizes.as_ref().map(|s| s.iter().sum::<usize>()));
        assert_eq!(encode_runs(&runs, sizes), expected, "{label}");
      }
    }
  }

  #[test]
  fn lone_surrogates_become_replacement_characters() {
    let mut units = vec![0x61u16; 1 << 16];
    units[1 << 15] = 0xD800;
    units[(1 << 15) + 1] = 0xDFFF;
    units[0] = 0xDC00;
    let expected = String::from_utf16_lossy(&units);
    assert_eq!(encode_runs(&[Run::Utf16(&units)], None), expected.as_bytes());
  }
}
