//! Preparing an offload: the UTF-8 of each text block and the preview of the result,
//! computed together on a worker thread, with a character or token budget.

use std::str::FromStr;

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_preview::{build_preview, BlockKind, HeadShare, Meter, PreviewBlock, PreviewMode, PreviewOptions, Utf16Meter};
use offload_tokens::{Encoding, Tokenizer};

use crate::tokens::shared_tokenizer;

use crate::task::{on_worker, Work};
use crate::text::{NativeText, PendingText};
use crate::tokens::parse_encoding;

/// Measures previews in BPE tokens of one encoding.
pub(crate) struct TokenMeter(pub(crate) &'static Tokenizer);

impl Meter for TokenMeter {
  fn measure(&self, text: &str) -> usize {
    self.0.count(text)
  }

  fn fit_prefix(&self, text: &str, budget: usize) -> usize {
    self.0.prefix_within(text, budget)
  }

  fn fit_suffix(&self, text: &str, budget: usize) -> usize {
    self.0.suffix_within(text, budget)
  }
}

/// How to preview an offloaded result.
#[napi(object)]
pub struct PreviewSpec {
  /// `'head'`, `'headTail'` or `'structure'`.
  pub mode: String,
  /// The budget: tokens of `encoding`, or UTF-16 units without one.
  pub budget: u32,
  /// A native encoding to measure the budget in; characters when absent.
  pub encoding: Option<String>,
  /// Cut over-long lines with a marker (`head` mode; the other modes always do).
  pub cut_long_lines: Option<bool>,
  /// The share of a block's budget given to its first lines in a head-and-tail preview
  /// (`headTail`, and `structure` for blocks that are not JSON): from 0 to 1; default 0.5.
  pub head_share: Option<f64>,
}

/// Text encoded as UTF-8 in native memory, ready to be stored without another copy.
#[napi]
pub struct EncodedText {
  bytes: Bytes,
}

impl Drop for EncodedText {
  /// Large text is freed in the background (see `crate::drops`): the finalizer runs
  /// on the JavaScript thread. (Text that was stored is shared with the store and
  /// only loses a reference here.)
  fn drop(&mut self) {
    if self.bytes.len() >= crate::drops::BACKGROUND_FREE_BYTES {
      crate::drops::drop_in_background(std::mem::take(&mut self.bytes));
    }
  }
}

impl EncodedText {
  /// The bytes (a cheap, shared handle).
  pub(crate) fn bytes(&self) -> Bytes {
    self.bytes.clone()
  }
}

#[napi]
impl EncodedText {
  /// Length in bytes.
  #[napi(getter, catch_unwind)]
  pub fn byte_length(&self) -> f64 {
    self.bytes.len() as f64
  }

  /// A copy of the bytes as a `Buffer` (for storages written in JavaScript).
  #[napi(catch_unwind)]
  pub fn to_buffer(&self) -> Buffer {
    Buffer::from(self.bytes.to_vec())
  }
}

/// What [`PreviewBuilder::build`] resolves with.
#[napi(object, object_from_js = false)]
pub struct PreparedOffload {
  /// The preview text.
  pub preview: String,
  /// Every added text as UTF-8, in the order they were added.
  pub texts: Vec<EncodedText>,
}

/// Collects the text blocks of one tool result for [`PreviewBuilder::build`].
#[napi]
#[derive(Default)]
pub struct PreviewBuilder {
  blocks: Vec<(BlockKind, PendingText)>,
}

#[napi]
impl PreviewBuilder {
  /// An empty builder.
  #[napi(constructor, catch_unwind)]
  pub fn new() -> Self {
    Self::default()
  }

  /// Adds one block (its text is moved out of `text`); `json` marks pretty-printed JSON.
  #[napi(catch_unwind)]
  pub fn add(&mut self, text: &mut NativeText, json: bool) {
    let kind = if json { BlockKind::Json } else { BlockKind::Text };
    self.blocks.push((kind, text.take()));
  }

  /// Encodes every block as UTF-8 and builds the preview, on a worker thread.
  /// Rejects an unknown mode or encoding, or a head share outside 0..=1, right away.
  #[napi(ts_return_type = "Promise<PreparedOffload>", catch_unwind)]
  pub fn build(&mut self, spec: PreviewSpec) -> Result<AsyncTask<Work<PreparedOffload>>> {
    let mode = PreviewMode::from_str(&spec.mode).map_err(|err| Error::new(Status::InvalidArg, err.to_string()))?;
    let encoding = spec.encoding.as_deref().map(parse_encoding).transpose()?;
    let head_share = spec
      .head_share
      .map_or(Ok(HeadShare::default()), HeadShare::new)
      .map_err(|err| Error::new(Status::InvalidArg, err.to_string()))?;
    let blocks = std::mem::take(&mut self.blocks);
    let options = PreviewOptions {
      mode,
      budget: spec.budget as usize,
      cut_long_lines: spec.cut_long_lines.unwrap_or(false),
      head_share,
    };
    Ok(on_worker(move || prepare(blocks, &options, encoding)))
  }
}

/// Encodes the blocks as UTF-8 and builds their preview (on a worker thread).
fn prepare(blocks: Vec<(BlockKind, PendingText)>, options: &PreviewOptions, encoding: Option<Encoding>) -> Result<PreparedOffload> {
  let kinds: Vec<BlockKind> = blocks.iter().map(|(kind, _)| *kind).collect();
  let texts: Vec<Vec<u8>> = blocks.into_iter().map(|(_, text)| text.into_utf8()).collect();
  let strs = texts
    .iter()
    .map(|bytes| std::str::from_utf8(bytes).map_err(|err| Error::new(Status::GenericFailure, err.to_string())))
    .collect::<Result<Vec<&str>>>()?;
  let preview_blocks: Vec<PreviewBlock<'_>> =
    kinds.iter().zip(&strs).map(|(kind, text)| PreviewBlock { kind: *kind, text }).collect();
  let preview = match encoding {
    Some(encoding) => {
      let tokens = shared_tokenizer(encoding).map_err(|err| Error::new(Status::GenericFailure, err.to_string()))?;
      build_preview(&preview_blocks, &TokenMeter(tokens), options)
    }
    None => build_preview(&preview_blocks, &Utf16Meter, options),
  };
  let texts = texts.into_iter().map(|bytes| EncodedText { bytes: Bytes::from(bytes) }).collect();
  Ok(PreparedOffload { preview, texts })
}

