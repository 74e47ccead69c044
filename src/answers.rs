//! Pages of the retrieval tool's extended answers (search, full content, jq
//! query), built and cut on a search thread: only the page crosses into
//! JavaScript. A long answer is built once and kept while it is paged
//! through (see `offload_search::answers`).

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_preview::{Meter, Utf16Meter};
use offload_query::QueryLimits;
use offload_search::answers::{answer_content, answer_file, answer_memory, full_answer, held_file, held_memory, search_answer, Ask};
use offload_search::{AnswerCache, Built, DecodedText, DocumentCache, PageAnswer, Paging, Source};
use crate::tokens::shared_tokenizer;

use crate::error::to_js_error;
use crate::offload::TokenMeter;
use crate::search::{retrieval_query, run_search, SearchQuery};
use crate::store::{writes_inline, Backend, NativeStore, ReportHeld};
use crate::tokens::parse_encoding;

/// What the tool was asked for, besides the reference and the page.
#[napi(object)]
#[derive(Clone, Debug)]
pub struct AnswerRequest {
  /// `'search'` (pattern, line range, context lines), `'full'` or `'query'`.
  pub kind: String,
  /// The search (for `'search'`).
  pub search: Option<SearchQuery>,
  /// The jq expression (for `'query'`).
  pub query: Option<String>,
}

/// One page of an answer, or what stands in for it.
#[napi(object)]
pub struct AnswerOutcome {
  /// The stored content's type.
  pub content_type: String,
  /// The page's text (with its footer when the answer has several pages), or an
  /// answer given whole (`final`); absent when the page is past the last one or the
  /// content is binary.
  pub text: Option<String>,
  /// Whether `text` is an answer given whole and never paged (an error or a notice).
  pub is_final: bool,
  /// Whether more pages follow.
  pub has_more: bool,
  /// Whether the page is the whole answer (one page, no footer).
  pub whole: bool,
  /// Whether the answer is a JSON document's text (parse it when it is `whole`).
  pub json: bool,
  /// How many pages the answer has, when the page asked for is past the last one.
  pub pages: Option<u32>,
  /// The content as stored, when it is not text (images, video, documents).
  pub content: Option<Buffer>,
}

/// The checked request: its kind and how it is told apart from others of the same
/// artifact (the cache's variant, which also names the page budget and encoding).
enum Kind {
  Search(SearchQuery),
  Full,
  Query(String),
}

impl Kind {
  fn of(request: AnswerRequest) -> Result<Self> {
    match (request.kind.as_str(), request.search, request.query) {
      ("search", Some(search), _) => Ok(Kind::Search(search)),
      ("full", _, _) => Ok(Kind::Full),
      ("query", _, Some(query)) => Ok(Kind::Query(query)),
      (kind, _, _) => Err(Error::new(Status::InvalidArg, format!("answer: unknown request kind {kind:?} or its argument is missing"))),
    }
  }

  /// A key naming this request with its page budget and encoding: fields are
  /// length-prefixed, so no two requests share one.
  fn variant(&self, budget: u32, encoding: Option<&str>) -> String {
    let field = |value: Option<&str>| value.map_or_else(|| "-".to_owned(), |v| format!("{}:{v}", v.len()));
    let number = |value: Option<f64>| value.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let head = format!("{budget}/{}/", field(encoding));
    match self {
      Kind::Search(q) => format!(
        "{head}search/{}/{}/{}/{}",
        field(q.pattern.as_deref()),
        number(q.line_start),
        number(q.line_end),
        number(q.context_lines)
      ),
      Kind::Full => format!("{head}full"),
      Kind::Query(expression) => format!("{head}query/{}", field(Some(expression))),
    }
  }

  /// Builds the whole answer from its content.
  fn build(&self, source: &Source<'_>) -> Built {
    match self {
      Kind::Search(q) => search_answer(source, &retrieval_query(q)),
      Kind::Full => full_answer(source),
      Kind::Query(expression) => query_answer(source, expression),
    }
  }
}

/// Content types a jq query reads as JSON text.
fn is_json_like(content_type: &str) -> bool {
  content_type == "application/json" || content_type.ends_with("+json") || content_type.starts_with("text/")
}

/// `n` with a comma between groups of three digits (`toLocaleString('en-US')`).
fn grouped(n: usize) -> String {
  let digits = n.to_string();
  let mut out = String::with_capacity(digits.len() + digits.len() / 3);
  for (i, c) in digits.chars().enumerate() {
    if i > 0 && (digits.len() - i).is_multiple_of(3) {
      out.push(',');
    }
    out.push(c);
  }
  out
}

/// The answer of a jq query: its results as compact JSON lines, or why there are none.
/// The document is read once per version of a stored artifact and kept for the next
/// queries (see `offload_search::document_cache`).
fn query_answer(source: &Source<'_>, expression: &str) -> Built {
  if !is_json_like(source.content_type) {
    return Built::Final(format!(
      "Error: query needs JSON content; this reference holds {}. Use pattern or line_range instead.",
      source.content_type
    ));
  }
  let output = match DocumentCache::global().query(source.artifact, source.content, expression, &QueryLimits::default()) {
    Ok(output) => output,
    Err(err) => return Built::Final(format!("Error: {err}")),
  };
  let mut text = if output.lines.is_empty() { "The query produced no results.".to_owned() } else { output.lines.join("\n") };
  if output.truncated {
    text.push_str(&format!(
      "\n[The query stopped after {} results at its output limit (1,000,000 results or 64 MiB); narrow it (select, limit, first) to see the rest.]",
      grouped(output.lines.len())
    ));
  }
  drop(output);
  Built::Text(DecodedText::from(text))
}

/// The meter of a page budget: tokens of `encoding`, else UTF-16 units.
fn meter_of(encoding: Option<&str>) -> Result<Box<dyn Meter + Send>> {
  Ok(match encoding {
    Some(name) => Box::new(TokenMeter(shared_tokenizer(parse_encoding(name)?).map_err(to_js_error)?)),
    None => Box::new(Utf16Meter),
  })
}

/// The outcome JavaScript receives for a page answer.
fn outcome(content_type: String, answer: PageAnswer) -> AnswerOutcome {
  let mut out = AnswerOutcome { content_type, text: None, is_final: false, has_more: false, whole: false, json: false, pages: None, content: None };
  match answer {
    PageAnswer::Page { text, has_more, whole, json } => {
      out.text = Some(text);
      out.has_more = has_more;
      out.whole = whole;
      out.json = json;
    }
    PageAnswer::Beyond(pages) => out.pages = Some(u32::try_from(pages).unwrap_or(u32::MAX)),
    PageAnswer::Final(text) => {
      out.text = Some(text);
      out.is_final = true;
    }
    PageAnswer::Binary(content) => out.content = Some(Vec::from(content).into()),
  }
  out
}

#[napi]
impl NativeStore {
  /// [`NativeStore::answer`] right away on the JavaScript thread when the answer is
  /// kept and its pages are measured in UTF-16 units (a lookup and one page cut, less
  /// than a round trip to a search thread), and a file store's directory is open and not
  /// durable; `null` otherwise (nothing is built), then call `answer`.
  #[napi(catch_unwind)]
  pub fn answer_now(&self, env: Env, reference: String, request: AnswerRequest, page: u32, budget: u32) -> Result<Option<AnswerOutcome>> {
    // Reading an expired block removes it.
    let _held = ReportHeld(self, &env);
    let variant = Kind::of(request)?.variant(budget, None);
    let paging = Paging { meter: &Utf16Meter, budget: budget as usize, page: page as usize };
    let ask = Ask { reference: &reference, now_ms: self.stamp.now(), variant: &variant, paging };
    let held = match &self.backend {
      Backend::Memory(m) => held_memory(AnswerCache::global(), m, &ask),
      // Opening a directory reads its whole journal: never on the JavaScript thread.
      Backend::File(f) if !writes_inline(f) => return Ok(None),
      Backend::File(f) => held_file(AnswerCache::global(), f, &ask),
    };
    Ok(held.map_err(to_js_error)?.map(|(content_type, answer)| outcome(content_type, answer)))
  }

  /// Page `page` (1-based) of the extended answer to `request` about `reference`, each
  /// page within `budget` tokens of `encoding` (UTF-16 units without one), footer
  /// included. Runs on a search thread; a long answer is built once and later pages are
  /// cut from it. Rejects as a retrieve does (unknown, expired, evicted references).
  #[napi(ts_return_type = "Promise<AnswerOutcome>")]
  pub async fn answer(&self, reference: String, request: AnswerRequest, page: u32, budget: u32, encoding: Option<String>) -> Result<AnswerOutcome> {
    let kind = Kind::of(request)?;
    let meter = meter_of(encoding.as_deref())?;
    let variant = kind.variant(budget, encoding.as_deref());
    let (backend, now) = (self.backend.clone(), self.stamp.now());
    run_search(move || {
      let paging = Paging { meter: meter.as_ref(), budget: budget as usize, page: page as usize };
      let ask = Ask { reference: &reference, now_ms: now, variant: &variant, paging };
      let (cache, build) = (AnswerCache::global(), |source: &Source<'_>| kind.build(source));
      let answered = match &backend {
        Backend::Memory(m) => answer_memory(cache, m, &ask, build),
        Backend::File(f) => answer_file(cache, f, &ask, build),
      };
      answered.map(|(content_type, answer)| outcome(content_type, answer)).map_err(to_js_error)
    })
    .await
  }
}

/// [`NativeStore::answer`] for content read by a storage written in JavaScript: the
/// answer is kept under the content's digest between pages.
#[napi(ts_return_type = "Promise<AnswerOutcome>")]
pub async fn answer_content_page(
  content: Uint8Array,
  content_type: String,
  request: AnswerRequest,
  page: u32,
  budget: u32,
  encoding: Option<String>,
) -> Result<AnswerOutcome> {
  let kind = Kind::of(request)?;
  let meter = meter_of(encoding.as_deref())?;
  let variant = kind.variant(budget, encoding.as_deref());
  run_search(move || {
    let paging = Paging { meter: meter.as_ref(), budget: budget as usize, page: page as usize };
    let content = Bytes::copy_from_slice(&content);
    let answer = answer_content(AnswerCache::global(), &content, &content_type, &variant, &paging, |source| kind.build(source));
    Ok(outcome(content_type, answer))
  })
  .await
}

#[cfg(test)]
mod tests {
  use super::grouped;

  #[test]
  fn groups_digits_as_en_us() {
    assert_eq!(grouped(0), "0");
    assert_eq!(grouped(999), "999");
    assert_eq!(grouped(1_000), "1,000");
    assert_eq!(grouped(1_000_000), "1,000,000");
    assert_eq!(grouped(12_345_678), "12,345,678");
  }
}
