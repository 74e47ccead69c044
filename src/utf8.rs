//! UTF-8 encoding of text held as runs of Latin-1 bytes and UTF-16 code units (as
//! [`crate::text::NativeText`] receives it from V8), split between two threads when
//! the text is long.
//!
//! Encoding is two passes over the text: one to size the output exactly, one to fill
//! it. On a 10 MB text of mixed scripts each pass takes milliseconds and both are bound
//! by how fast one core reads memory, so the two halves of a long text are sized and
//! encoded side by side, each into its own part of one buffer.

use std::mem::MaybeUninit;

/// A borrowed run of text in the form it was copied out of V8.
#[derive(Clone, Copy)]
pub(crate) enum Run<'a> {
  /// Characters below U+0100, one byte each.
  Latin1(&'a [u8]),
  /// UTF-16 code units; no surrogate pair straddles two runs.
  Utf16(&'a [u16]),
}

/// Texts of at least this many code units are encoded by two threads (below it, starting
/// a thread costs more than it saves).
pub(crate) const TWO_THREAD_UNITS: usize = 512 * 1024;

impl Run<'_> {
  fn units(&self) -> usize {
    match self {
      Run::Latin1(bytes) => bytes.len(),
      Run::Utf16(units) => units.len(),
    }
  }

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

  /// This run split after `at` units, or moved one unit on when `at` falls inside a
  /// surrogate pair (so the pair stays whole).
  fn split(self, at: usize) -> (Self, Self) {
    match self {
      Run::Latin1(bytes) => {
        let (head, tail) = bytes.split_at(at.min(bytes.len()));
        (Run::Latin1(head), Run::Latin1(tail))
      }
      Run::Utf16(units) => {
        let mut at = at.min(units.len());
        let inside_pair = |at: usize| {
          at > 0
            && at < units.len()
            && (0xD800..=0xDBFF).contains(&units[at - 1])
            && (0xDC00..=0xDFFF).contains(&units[at])
        };
        if inside_pair(at) {
          at += 1;
        }
        let (head, tail) = units.split_at(at);
        (Run::Utf16(head), Run::Utf16(tail))
      }
    }
  }
}

/// The UTF-8 of `runs` in order, lone surrogates replaced with U+FFFD as `TextEncoder`
/// replaces them. With `may_split`, a text of [`TWO_THREAD_UNITS`] or more is split in
/// two halves of about as many code units, sized and encoded side by side (for worker
/// threads: on the JavaScript thread, whose texts are short, starting a thread and
/// waiting for it costs more than it saves). `sizes`, when given, are each run's UTF-8
/// size (as [`Run::utf8_len`] counts them), counted earlier.
pub(crate) fn encode_runs(runs: &[Run<'_>], may_split: bool, sizes: Option<Vec<usize>>) -> Vec<u8> {
  let total_units: usize = runs.iter().map(Run::units).sum();
  encode(runs, total_units, may_split && total_units >= TWO_THREAD_UNITS, sizes)
}

/// A run and its UTF-8 size when counted already.
type Counted<'a> = (Run<'a>, Option<usize>);

/// [`encode_runs`] of `runs` (`total_units` long), split in two when `two_threads`.
fn encode(runs: &[Run<'_>], total_units: usize, two_threads: bool, sizes: Option<Vec<usize>>) -> Vec<u8> {
  let counted: Vec<Counted<'_>> = match sizes {
    Some(sizes) if sizes.len() == runs.len() => runs.iter().copied().zip(sizes.into_iter().map(Some)).collect(),
    _ => runs.iter().map(|&run| (run, None)).collect(),
  };
  let (first, second) = if two_threads { halves(&counted, total_units / 2) } else { (counted, Vec::new()) };
  let (mut first_sizes, mut second_sizes) = (Vec::new(), Vec::new());
  side_by_side(
    two_threads,
    || first_sizes = sizes_of(&first),
    || second_sizes = sizes_of(&second),
  );
  let own: usize = first_sizes.iter().sum();
  let theirs: usize = second_sizes.iter().sum();
  let total = own + theirs;
  let mut out: Vec<u8> = Vec::with_capacity(total);
  let (mut own_written, mut their_written) = (0, 0);
  {
    let (mine, rest) = out.spare_capacity_mut()[..total].split_at_mut(own);
    side_by_side(
      two_threads,
      || own_written = encode_into(&first, &first_sizes, zeroed(mine)),
      || their_written = encode_into(&second, &second_sizes, zeroed(rest)),
    );
  }
  // SAFETY: `zeroed` initialised all `total` bytes (`own` of them, then the rest).
  unsafe { out.set_len(total) };
  // Each run writes what it was counted to; a size counted too high (the sizes given
  // are trusted) would leave room unused: the second half then closes the gap.
  if own_written < own {
    out.copy_within(own..own + their_written, own_written);
  }
  out.truncate(own_written + their_written);
  out
}

/// `runs` as two lists, the first holding the runs (and part of a run) up to `at` code
/// units. A run split in two is counted again, each part on its own.
fn halves<'a>(runs: &[Counted<'a>], at: usize) -> (Vec<Counted<'a>>, Vec<Counted<'a>>) {
  let (mut first, mut second) = (Vec::new(), Vec::new());
  let mut seen = 0;
  for &(run, size) in runs {
    let units = run.units();
    if !second.is_empty() || seen >= at {
      second.push((run, size));
    } else if seen + units <= at {
      first.push((run, size));
    } else {
      let (head, tail) = run.split(at - seen);
      first.push((head, None));
      second.push((tail, None));
    }
    seen += units;
  }
  (first, second)
}

/// Each run's UTF-8 size (counted now unless known).
fn sizes_of(runs: &[Counted<'_>]) -> Vec<usize> {
  runs.iter().map(|(run, known)| known.unwrap_or_else(|| run.utf8_len())).collect()
}

/// Encodes `runs` one after another into `dst`, each given its `sizes` entry of room
/// (and no more, so a run never overwrites the next): the bytes written, without gaps.
fn encode_into(runs: &[Counted<'_>], sizes: &[usize], dst: &mut [u8]) -> usize {
  let mut written = 0;
  let mut room_end = 0;
  for ((run, _), &size) in runs.iter().zip(sizes) {
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

/// Runs `here` on this thread and, when `two_threads`, `there` on a second thread at
/// the same time; `there` runs on this thread after `here` when a thread cannot be
/// started. A panic in `there` resumes here.
fn side_by_side(two_threads: bool, here: impl FnOnce(), there: impl FnOnce() + Send) {
  let mut there = Some(there);
  if two_threads {
    let joined = std::thread::scope(|scope| {
      let slot = &mut there;
      let helper = std::thread::Builder::new().name("offload-utf8".into()).spawn_scoped(scope, move || {
        if let Some(there) = slot.take() {
          there();
        }
      });
      here();
      helper.map(|helper| helper.join())
    });
    if let Ok(Err(panic)) = joined {
      std::panic::resume_unwind(panic);
    }
  } else {
    here();
  }
  if let Some(there) = there {
    there();
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
  }

  #[test]
  fn a_long_text_split_in_two_encodes_as_one() {
    // Long enough for two threads, with pairs around every possible split point.
    let text: String = "a€😀é漢".repeat(TWO_THREAD_UNITS / 3);
    let units = utf16(&text);
    assert_eq!(encode_runs(&[Run::Utf16(&units)], true, None), text.as_bytes());
    assert_eq!(encode_runs(&[Run::Utf16(&units)], false, None), text.as_bytes());
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
  fn runs_cut_anywhere_encode_as_text_encoder_would_on_one_thread_or_two() {
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
      for two_threads in [false, true] {
        for sizes in [None, Some(exact.clone()), Some(over.clone())] {
          let label = format!("seed {seed}, two threads {two_threads}, sizes {:?}", sizes.as_ref().map(Vec::len));
          assert_eq!(encode(&runs, len, two_threads, sizes), expected, "{label}");
        }
      }
    }
  }

  #[test]
  fn a_split_never_falls_inside_a_pair() {
    let units = utf16("😀😀");
    for at in 0..=units.len() {
      let (head, tail) = Run::Utf16(&units).split(at);
      let (Run::Utf16(h), Run::Utf16(t)) = (head, tail) else { panic!("kinds changed") };
      let whole = String::from_utf16(h).ok().zip(String::from_utf16(t).ok()).map(|(h, t)| h + &t);
      assert_eq!(whole.as_deref(), Some("😀😀"), "at {at}");
    }
  }

  #[test]
  fn lone_surrogates_become_replacement_characters_on_both_sides_of_the_split() {
    let mut units = vec![0x61u16; TWO_THREAD_UNITS];
    units[TWO_THREAD_UNITS / 2 - 1] = 0xD800;
    units[TWO_THREAD_UNITS / 2] = 0xDFFF;
    units[0] = 0xDC00;
    let expected = String::from_utf16_lossy(&units);
    assert_eq!(encode_runs(&[Run::Utf16(&units)], true, None), expected.as_bytes());
  }
}
