//! Pages of a long retrieval answer, cut within the output budget on a worker thread.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_preview::pages::render_page;
use offload_preview::{Meter, Utf16Meter};
use crate::tokens::shared_tokenizer;

use crate::error::to_js_error;
use crate::offload::TokenMeter;
use crate::task::{on_worker, Work};
use crate::text::NativeText;
use crate::tokens::parse_encoding;

/// One page of an answer.
#[napi(object)]
pub struct AnswerPage {
  /// The page's text with its footer (none when the answer is one page);
  /// absent when the page asked for is past the last one.
  pub text: Option<String>,
  /// Whether more pages follow.
  pub has_more: bool,
  /// How many pages the answer has, when the page asked for is past the last one.
  pub pages: Option<u32>,
}

/// Page `page` (1-based) of `text` (moved out of the native text, which may have been
/// handed over in slices) when every page, footer included, gets `budget` tokens of
/// `encoding` (UTF-16 units without one). Encoding and paging run on a worker thread.
#[napi(ts_return_type = "Promise<AnswerPage>", catch_unwind)]
pub fn page_answer(text: &mut NativeText, page: u32, budget: u32, encoding: Option<String>) -> Result<AsyncTask<Work<AnswerPage>>> {
  let meter: Box<dyn Meter + Send> = match encoding {
    Some(name) => Box::new(TokenMeter(shared_tokenizer(parse_encoding(&name)?).map_err(to_js_error)?)),
    None => Box::new(Utf16Meter),
  };
  let pending = text.take();
  Ok(on_worker(move || {
    let utf8 = pending.into_utf8();
    let text = String::from_utf8(utf8).map_err(|_| Error::from_reason("the answer is not valid UTF-8"))?;
    Ok(match render_page(&text, meter.as_ref(), budget as usize, page as usize) {
      Ok((text, page)) => AnswerPage { text: Some(text), has_more: page.has_more, pages: None },
      Err(pages) => AnswerPage { text: None, has_more: false, pages: Some(u32::try_from(pages).unwrap_or(u32::MAX)) },
    })
  }))
}
