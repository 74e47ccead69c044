//! Answers of the retrieval tool that are longer than one page, built once
//! and kept while the model pages through them.
//!
//! A page is asked for with the arguments of the first page and a page
//! number. The answer (a search's output, a query's results, the decoded
//! content) is built once, on the first request, and kept with where its
//! pages start ([`PageIndex`]); every later page is cut from it. Reading all
//! the pages of an answer thus costs one build and one pass over the answer,
//! where building it again for every page would cost one build per page.
//!
//! Every page request still retrieves the artifact first, with every check a
//! retrieve makes (the reference resolved and confined, expiry, the byte
//! budget's record of use); a kept answer is served only for the very
//! version of the content it was built from (see [`Version`]): a memory
//! store's shared bytes, a file's stamp (a file is not read again when its
//! stamp matches), or the digest of content handed in. Stores tell the cache
//! what they remove ([`crate::removal_hook`]). Answers of one page are not
//! kept.

use std::ops::Deref;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use bytes::Bytes;
use offload_preview::pages::PageIndex;
use offload_preview::Meter;
use offload_storage::lifecycle::{digest, digest_hex};
use offload_storage::{FileStore, Lifecycle, MemoryStore, RemovalHook, StorageError};

use crate::artifact_cache::{ArtifactCache, Version};
use crate::decode::DecodedText;
use crate::document_cache::DocumentCache;
use crate::prepared::PreparedText;
use crate::prepared_cache::PreparedCache;
use crate::search::RetrievalQuery;
use crate::stored::search_text_uncached;

/// Default budget of the process-wide answer cache: 512 MiB. Only answers of
/// more than one page are kept, and only while they are being read: the
/// least recently paged go first.
pub const DEFAULT_ANSWER_BUDGET_BYTES: usize = 512 << 20;

/// The output budget a search answer is built with: the largest the tool
/// takes (the answer is then cut into pages).
const UNBOUNDED_SEARCH_CHARS: usize = u32::MAX as usize;

/// An answer kept for paging: its text and where its pages start.
#[derive(Debug)]
pub struct PreparedAnswer {
    text: DecodedText,
    /// Whether the text is a JSON document (the caller parses an answer of one page).
    json: bool,
    pages: Mutex<PageIndex>,
}

impl PreparedAnswer {
    fn new(text: DecodedText, json: bool) -> Self {
        PreparedAnswer { text, json, pages: Mutex::new(PageIndex::default()) }
    }

    /// Page `paging.page` of the answer.
    fn page(&self, paging: &Paging<'_>) -> PageAnswer {
        let mut pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        self.render(&mut pages, paging)
    }

    /// Page `paging.page` when that costs one page cut: its start is known (or
    /// how many pages there are), and no other request is walking the answer.
    fn page_now(&self, paging: &Paging<'_>) -> Option<PageAnswer> {
        let mut pages = match self.pages.try_lock() {
            Ok(pages) => pages,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        pages.knows(paging.page).then(|| self.render(&mut pages, paging))
    }

    fn render(&self, pages: &mut PageIndex, paging: &Paging<'_>) -> PageAnswer {
        match pages.render(self.text.as_str(), paging.meter, paging.budget, paging.page) {
            Ok((text, page)) => PageAnswer::Page { text, has_more: page.has_more, whole: page.number == 1 && !page.has_more, json: self.json },
            Err(pages) => PageAnswer::Beyond(pages),
        }
    }
}

/// How an answer is cut into pages, and the page asked for.
#[derive(Clone, Copy)]
pub struct Paging<'m> {
    /// What a page's budget is measured in (UTF-16 units, tokens).
    pub meter: &'m dyn Meter,
    /// The most a page, footer included, may measure.
    pub budget: usize,
    /// The page asked for (1-based; 0 is taken as 1).
    pub page: usize,
}

/// What building an answer gave.
#[derive(Debug)]
pub enum Built {
    /// A text, cut into pages.
    Text(DecodedText),
    /// A JSON document's text, cut into pages (the caller parses an answer of
    /// one page, as the tool returns JSON that fits).
    Json(DecodedText),
    /// An answer given whole and never paged (an error, a notice).
    Final(String),
    /// The content is not text: it is handed back as it is.
    Binary,
}

/// The answer to a page request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageAnswer {
    /// The page, with its footer when the answer has more than one.
    Page {
        /// The page's text.
        text: String,
        /// Whether more pages follow.
        has_more: bool,
        /// Whether the page is the whole answer (one page, no footer).
        whole: bool,
        /// Whether the answer is a JSON document's text.
        json: bool,
    },
    /// The page asked for is past the last one; the answer has this many.
    Beyond(usize),
    /// An answer given whole and never paged (an error, a notice).
    Final(String),
    /// The content is not text: here it is, as stored.
    Binary(Bytes),
}

/// A page asked for about a stored artifact.
#[derive(Clone, Copy)]
pub struct Ask<'a> {
    /// The artifact's reference.
    pub reference: &'a str,
    /// The time of the request, in ms since the epoch (expiry is checked at it).
    pub now_ms: u64,
    /// What is asked and the page budget: names the answer among the
    /// artifact's answers.
    pub variant: &'a str,
    /// How the answer is paged, and the page.
    pub paging: Paging<'a>,
}

/// The content an answer is built from.
#[derive(Debug)]
pub struct Source<'a> {
    /// The content.
    pub content: &'a Bytes,
    /// Its content type.
    pub content_type: &'a str,
    /// The store, artifact name and version this content is, when what is
    /// derived from it may be kept (see [`PreparedCache`]).
    pub artifact: Option<(u64, &'a str, &'a Version)>,
}

/// Answers longer than a page, kept while they are paged through, least
/// recently used first out, within a byte budget (see the module docs).
#[derive(Debug)]
pub struct AnswerCache {
    entries: Arc<ArtifactCache<PreparedAnswer>>,
}

/// Where kept content is charged: what the answer holds that its store does not.
struct Keep<'a> {
    store: u64,
    name: &'a str,
    version: Version,
    /// Whether the content an answer shares is the store's own (a memory
    /// store's bytes), so not charged again.
    content_is_stored: bool,
}

impl AnswerCache {
    /// An empty cache of `budget_bytes` (0 disables it).
    #[must_use]
    pub fn new(budget_bytes: usize) -> Self {
        AnswerCache { entries: Arc::new(ArtifactCache::new(budget_bytes)) }
    }

    /// The cache of the process, [`DEFAULT_ANSWER_BUDGET_BYTES`] until changed.
    pub fn global() -> &'static Arc<AnswerCache> {
        static GLOBAL: LazyLock<Arc<AnswerCache>> = LazyLock::new(|| Arc::new(AnswerCache::new(DEFAULT_ANSWER_BUDGET_BYTES)));
        &GLOBAL
    }

    /// A hook for a store's removals (see [`offload_storage::removal`]) that
    /// drops the answers about what the store removes. It holds the cache
    /// weakly: a store does not keep a cache alive.
    #[must_use]
    pub fn removal_hook(&self) -> RemovalHook {
        self.entries.removal_hook()
    }

    /// Builds the answer from `source` with `build` and cuts the page; keeps
    /// it (under `variant`) when it has more than one page and `keep` says
    /// where.
    fn build_and_page(
        &self,
        source: &Source<'_>,
        keep: Option<Keep<'_>>,
        variant: &str,
        paging: &Paging<'_>,
        build: impl FnOnce(&Source<'_>) -> Built,
    ) -> PageAnswer {
        let text = match build(source) {
            Built::Final(answer) => return PageAnswer::Final(answer),
            Built::Binary => return PageAnswer::Binary(source.content.clone()),
            Built::Text(text) => (text, false),
            Built::Json(text) => (text, true),
        };
        let answer = PreparedAnswer::new(text.0, text.1);
        let page = answer.page(paging);
        if let (Some(keep), PageAnswer::Page { whole: false, .. } | PageAnswer::Beyond(2..)) = (keep, &page) {
            let owned = if answer.text.shares_content() && keep.content_is_stored { 0 } else { answer.text.heap_bytes() };
            // Page starts: 8 bytes a page, pages of at least a few dozen bytes.
            let index = answer.text.as_str().len() / 32;
            self.entries.insert(keep.store, keep.name, variant, keep.version, Arc::new(answer), owned + index);
        }
        page
    }
}

/// The budget, the charge, and the forgetting of answers are the inner cache's.
impl Deref for AnswerCache {
    type Target = ArtifactCache<PreparedAnswer>;

    fn deref(&self) -> &Self::Target {
        &self.entries
    }
}

/// A hook for a store's removals (see [`offload_storage::removal`]) that
/// drops what the process-wide caches ([`PreparedCache::global`],
/// [`AnswerCache::global`], [`DocumentCache::global`]) keep of what the store
/// removes.
#[must_use]
pub fn removal_hook() -> RemovalHook {
    let texts = PreparedCache::global().removal_hook();
    let answers = AnswerCache::global().removal_hook();
    let documents = DocumentCache::global().removal_hook();
    Arc::new(move |store, removal| {
        texts(store, removal);
        answers(store, removal);
        documents(store, removal);
    })
}

/// Page `ask.paging.page` of the answer `build` makes from artifact
/// `ask.reference` of a memory store, as retrieved at `ask.now_ms`; with its
/// content type.
///
/// # Errors
///
/// What [`Lifecycle::retrieve_at`] reports (unknown, expired, evicted).
pub fn answer_memory(
    cache: &AnswerCache,
    store: &MemoryStore,
    ask: &Ask<'_>,
    build: impl FnOnce(&Source<'_>) -> Built,
) -> Result<(String, PageAnswer), StorageError> {
    let Ask { reference, now_ms, variant, paging } = *ask;
    let paging = &paging;
    let blob = store.retrieve_at(reference, now_ms)?;
    let version = Version::Shared(blob.content.clone());
    if let Some(held) = cache.entries.get(store.id(), reference, variant, &version) {
        return Ok((blob.content_type, held.page(paging)));
    }
    let source = Source { content: &blob.content, content_type: &blob.content_type, artifact: Some((store.id(), reference, &version)) };
    let keep = Keep { store: store.id(), name: reference, version: version.clone(), content_is_stored: true };
    let page = cache.build_and_page(&source, Some(keep), variant, paging, build);
    // Removed between the retrieve and the inserts: the removal hook came too
    // early to drop what was kept, so it goes now.
    if !store.holds(reference, &blob.content) {
        cache.forget(store.id(), reference);
        PreparedCache::global().forget(store.id(), reference);
        DocumentCache::global().forget(store.id(), reference);
    }
    Ok((blob.content_type, page))
}

/// Page `ask.paging.page` of the answer `build` makes from artifact
/// `ask.reference` of a file store, as retrieved at `ask.now_ms`; with its
/// content type. The
/// file is not read when the answer for its current version is kept.
///
/// # Errors
///
/// What [`Lifecycle::retrieve_at`] reports (unknown, expired, evicted, I/O).
pub fn answer_file(
    cache: &AnswerCache,
    store: &FileStore,
    ask: &Ask<'_>,
    build: impl FnOnce(&Source<'_>) -> Built,
) -> Result<(String, PageAnswer), StorageError> {
    let Ask { reference, now_ms, variant, paging } = *ask;
    let paging = &paging;
    let mut held = None;
    let found = store.retrieve_stamped_at(reference, now_ms, |name, stamp| {
        held = cache.entries.get(store.id(), name, variant, &Version::File(*stamp));
        held.is_some()
    })?;
    if let Some(answer) = held {
        return Ok((found.content_type, answer.page(paging)));
    }
    let content = found.content.clone().unwrap_or_default();
    let version = match (found.stamp, found.settled) {
        (Some(stamp), true) => Some(Version::File(stamp)),
        _ => None,
    };
    let source = Source {
        content: &content,
        content_type: &found.content_type,
        artifact: version.as_ref().map(|v| (store.id(), found.name.as_str(), v)),
    };
    let keep = version.clone().map(|version| Keep { store: store.id(), name: &found.name, version, content_is_stored: false });
    let page = cache.build_and_page(&source, keep, variant, paging, build);
    Ok((found.content_type, page))
}

/// Page `ask.paging.page` of a kept answer about artifact `ask.reference` of a
/// memory store, retrieved at `ask.now_ms` (every check of a retrieve runs), without
/// building anything: `None` when no answer for the content stored now is
/// kept, or when the page would have to be looked for (its start is not
/// known yet) or another request is walking the answer. Cheap enough for the
/// caller's thread: a lookup and one page cut.
///
/// # Errors
///
/// What [`Lifecycle::retrieve_at`] reports (unknown, expired, evicted).
pub fn held_memory(
    cache: &AnswerCache,
    store: &MemoryStore,
    ask: &Ask<'_>,
) -> Result<Option<(String, PageAnswer)>, StorageError> {
    let Ask { reference, now_ms, variant, paging } = *ask;
    let paging = &paging;
    let blob = store.retrieve_at(reference, now_ms)?;
    let held = cache.entries.get(store.id(), reference, variant, &Version::Shared(blob.content.clone()));
    Ok(held.and_then(|answer| answer.page_now(paging)).map(|page| (blob.content_type, page)))
}

/// [`held_memory`] for a file store: the file is opened and stamped, never read.
///
/// # Errors
///
/// What [`Lifecycle::retrieve_at`] reports (unknown, expired, evicted, I/O).
pub fn held_file(
    cache: &AnswerCache,
    store: &FileStore,
    ask: &Ask<'_>,
) -> Result<Option<(String, PageAnswer)>, StorageError> {
    let Ask { reference, now_ms, variant, paging } = *ask;
    let paging = &paging;
    let mut held = None;
    let found = store.retrieve_stamped_at(reference, now_ms, |name, stamp| {
        held = cache.entries.get(store.id(), name, variant, &Version::File(*stamp));
        true
    })?;
    Ok(held.and_then(|answer| answer.page_now(paging)).map(|page| (found.content_type, page)))
}

/// Page `paging.page` of the answer `build` makes from `content` handed in
/// (by a storage written in JavaScript); the answer is kept under the
/// content's digest, so a later page of the same content is cut from it.
#[must_use]
pub fn answer_content(
    cache: &AnswerCache,
    content: &Bytes,
    content_type: &str,
    variant: &str,
    paging: &Paging<'_>,
    build: impl FnOnce(&Source<'_>) -> Built,
) -> PageAnswer {
    let sha = digest(content);
    let version = Version::Digest(sha);
    // One name per content and type; the store number 0 is never a store's.
    let name = format!("{}\u{0}{content_type}", digest_hex(&sha));
    if let Some(held) = cache.entries.get(0, &name, variant, &version) {
        return held.page(paging);
    }
    let source = Source { content, content_type, artifact: None };
    let keep = Keep { store: 0, name: &name, version, content_is_stored: false };
    cache.build_and_page(&source, Some(keep), variant, paging, build)
}

/// The answer of a search (`pattern`, `line_range`, `context_lines`): the
/// search's whole output, an error, or the notice that binary content
/// cannot be searched. The content's prepared text is taken from, or kept
/// in, [`PreparedCache::global`] when the source names its artifact.
#[must_use]
pub fn search_answer(source: &Source<'_>, query: &RetrievalQuery<'_>) -> Built {
    if !crate::is_searchable_content(source.content_type) {
        return Built::Final(format!(
            "Error: cannot search binary content ({}). Omit pattern/line_range/context_lines to retrieve the full content.",
            source.content_type
        ));
    }
    let cache = PreparedCache::global();
    let result = match source.artifact {
        Some((store, name, version)) if cache.budget() > 0 => {
            let text = cache.get(store, name, version).unwrap_or_else(|| {
                let text = Arc::new(PreparedText::new(source.content));
                let owned = if text.shares_content() && matches!(version, Version::Shared(_)) { 0 } else { text.text_bytes() };
                cache.insert(store, name, version.clone(), Arc::clone(&text), owned + text.index_bytes());
                text
            });
            text.run(query, UNBOUNDED_SEARCH_CHARS)
        }
        _ => search_text_uncached(source.content, query, UNBOUNDED_SEARCH_CHARS),
    };
    match result {
        // Errors the search gives as its output (a line range past the end) are
        // answers given whole, as the tool gives them.
        Ok(output) if output.starts_with("Error: ") => Built::Final(output),
        Ok(output) => Built::Text(DecodedText::from(output)),
        Err(err) => Built::Final(err.to_string()),
    }
}

/// The answer of a full retrieval, as the tool decodes stored content: text
/// for `text/*`, JSON text for `application/json` (the caller parses an
/// answer of one page), the content itself for images, videos and other
/// `application/*` types, and any other type decoded as text.
#[must_use]
pub fn full_answer(source: &Source<'_>) -> Built {
    let ct = source.content_type;
    let media = ct.starts_with("image/") || ct.starts_with("video/") || ct.starts_with("application/");
    if media && !ct.starts_with("text/") && ct != "application/json" {
        return Built::Binary;
    }
    let text = DecodedText::new(source.content);
    if ct != "application/json" {
        return Built::Text(text);
    }
    // A JSON string is answered as the string it holds (the tool parses stored JSON,
    // and gives a string as text); other JSON as its text.
    if text.as_str().trim_start_matches([' ', '\t', '\n', '\r']).starts_with('"') {
        if let Ok(decoded) = serde_json::from_str::<String>(text.as_str()) {
            return Built::Text(DecodedText::from(decoded));
        }
    }
    Built::Json(text)
}
