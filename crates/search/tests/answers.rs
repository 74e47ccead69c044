//! Answers kept while they are paged: every page of a long answer is cut from
//! one build (the answer is not built again per page), the pages are those of
//! the answer built whole, and a kept answer is never served for other
//! content: a reference deleted and stored again, a file rewritten, expired,
//! or evicted. Reading every page costs about one pass over the answer
//! (measured by the work a counting meter is given).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use offload_preview::pages::render_page;
use offload_preview::{Meter, Utf16Meter};
use offload_search::answers::{answer_content, answer_file, answer_memory, full_answer, search_answer, Ask};
use offload_search::{AnswerCache, Built, LineRange, PageAnswer, Paging, RetrievalQuery, Source};
use offload_storage::{BlobStore, FileStore, Lifecycle, MemoryStore, NewBlob, Policy, StorageError, Tags};

const T0: u64 = 1_800_000_000_000;
const BUDGET: usize = 2_000;

/// A UTF-16 meter that counts the bytes of text it is given.
#[derive(Default)]
struct CountingMeter(AtomicUsize);

impl Meter for CountingMeter {
    fn is_additive(&self) -> bool {
        Utf16Meter.is_additive()
    }
    fn measure(&self, text: &str) -> usize {
        self.0.fetch_add(text.len(), Ordering::Relaxed);
        Utf16Meter.measure(text)
    }
    fn fit_prefix(&self, text: &str, budget: usize) -> usize {
        // What a meter that stops where the budget runs out looks at.
        let fit = Utf16Meter.fit_prefix(text, budget);
        self.0.fetch_add((fit + 4).min(text.len()), Ordering::Relaxed);
        fit
    }
    fn fit_suffix(&self, text: &str, budget: usize) -> usize {
        self.0.fetch_add(text.len(), Ordering::Relaxed);
        Utf16Meter.fit_suffix(text, budget)
    }
}

fn log(lines: usize) -> String {
    (0..lines).map(|i| format!("2026-11-24T10:00:{:02} {} worker-{} request {i} é\n", i % 60, if i % 3 == 0 { "ERROR" } else { "INFO" }, i % 7)).collect()
}

fn every_error() -> RetrievalQuery<'static> {
    RetrievalQuery { pattern: Some("ERROR"), line_range: None, context_lines: Some(0) }
}

fn put(store: &dyn Lifecycle, sequence: u64, key: &str, content: &str, tags: Tags<'_>) -> String {
    store
        .store_blob(NewBlob { sequence, key, content: Bytes::from(content.to_owned()), content_type: "text/plain", tags })
        .unwrap()
}

/// The page's text, or a panic naming what came instead.
fn text(answer: &PageAnswer) -> (&str, bool) {
    match answer {
        PageAnswer::Page { text, has_more, .. } => (text, *has_more),
        other => panic!("no page: {other:?}"),
    }
}

/// A build that counts how often it runs.
fn counted<'c>(builds: &'c Cell<usize>, query: RetrievalQuery<'static>) -> impl FnOnce(&Source<'_>) -> Built + 'c {
    move |source| {
        builds.set(builds.get() + 1);
        search_answer(source, &query)
    }
}

/// The answer built whole, as the uncached search gives it.
fn whole_answer(content: &str, query: &RetrievalQuery<'_>) -> String {
    let bytes = Bytes::from(content.to_owned());
    match search_answer(&Source { content: &bytes, content_type: "text/plain", artifact: None }, query) {
        Built::Text(text) => text.as_str().to_owned(),
        other => panic!("no text: {other:?}"),
    }
}

#[test]
fn every_page_of_a_memory_answer_comes_from_one_build_and_one_pass() {
    let cache = Arc::new(AnswerCache::new(64 << 20));
    let store = MemoryStore::new(None).unwrap();
    store.set_removal_hook(Some(cache.removal_hook()));
    let content = log(20_000);
    let reference = put(&store, 1, "k", &content, Tags::default());
    let whole = whole_answer(&content, &every_error());
    let meter = CountingMeter::default();
    let builds = Cell::new(0);
    let mut pages = Vec::new();
    for page in 1.. {
        let paging = Paging { meter: &meter, budget: BUDGET, page };
        let (content_type, answer) = answer_memory(&cache, &store, &Ask { reference: &reference, now_ms: T0, variant: "v", paging }, counted(&builds, every_error())).unwrap();
        assert_eq!(content_type, "text/plain");
        let (text, more) = text(&answer);
        let expected: Result<String, usize> = render_page(&whole, &Utf16Meter, BUDGET, page).map(|(t, _)| t);
        assert_eq!(Ok(text.to_owned()), expected, "page {page}");
        pages.push(text.to_owned());
        if !more {
            break;
        }
    }
    assert!(pages.len() > 100, "{} pages", pages.len());
    assert_eq!(builds.get(), 1, "the answer is built once");
    // Each page is measured once, and its footer; rebuilding it per page would measure
    // every page before it again (quadratic).
    let measured = meter.0.load(Ordering::Relaxed);
    assert!(measured < 2 * whole.len(), "measured {measured} bytes for an answer of {}", whole.len());
    // A page past the end names how many there are, from the kept answer.
    let paging = Paging { meter: &Utf16Meter, budget: BUDGET, page: pages.len() + 5 };
    let (_, beyond) = answer_memory(&cache, &store, &Ask { reference: &reference, now_ms: T0, variant: "v", paging }, counted(&builds, every_error())).unwrap();
    assert_eq!(beyond, PageAnswer::Beyond(pages.len()));
    assert_eq!(builds.get(), 1);
}

#[test]
fn a_kept_answer_is_never_served_for_other_content() {
    let cache = Arc::new(AnswerCache::new(64 << 20));
    let store = MemoryStore::new(None).unwrap();
    store.set_removal_hook(Some(cache.removal_hook()));
    store.set_policy(Policy { max_bytes: Some(10 << 20), ..Policy::default() }).unwrap();
    let first = log(5_000);
    let reference = put(&store, 7, "k", &first, Tags::default());
    let builds = Cell::new(0);
    let page2 = |builds: &Cell<usize>| {
        let paging = Paging { meter: &Utf16Meter, budget: BUDGET, page: 2 };
        answer_memory(&cache, &store, &Ask { reference: &reference, now_ms: T0, variant: "v", paging }, counted(builds, every_error()))
    };
    let before = page2(&builds).unwrap().1;
    assert_eq!(builds.get(), 1);
    assert!(!cache.is_empty());
    // Deleted: the kept answer goes with it, and the reference is unknown.
    assert!(store.delete(&reference));
    assert!(cache.is_empty());
    assert!(matches!(page2(&builds), Err(StorageError::NotFound { .. })));
    // Stored again under the same reference with other content: built anew.
    let second = first.replace("ERROR", "ERROR!");
    assert_eq!(put(&store, 7, "k", &second, Tags::default()), reference);
    let after = page2(&builds).unwrap().1;
    assert_eq!(builds.get(), 2);
    assert_ne!(text(&before).0, text(&after).0);
    assert_eq!(text(&after).0, render_page(&whole_answer(&second, &every_error()), &Utf16Meter, BUDGET, 2).unwrap().0);
    // Expired: refused as a retrieve is, and the answer goes.
    let ttl = Tags { ttl_ms: Some(1_000), now_ms: Some(T0), ..Tags::default() };
    let expiring = put(&store, 8, "e", &first, ttl);
    let paging = Paging { meter: &Utf16Meter, budget: BUDGET, page: 2 };
    answer_memory(&cache, &store, &Ask { reference: &expiring, now_ms: T0, variant: "v", paging }, counted(&builds, every_error())).unwrap();
    let gone = answer_memory(&cache, &store, &Ask { reference: &expiring, now_ms: T0 + 1_000, variant: "v", paging }, counted(&builds, every_error()));
    assert!(matches!(gone, Err(StorageError::Gone { .. })), "{gone:?}");
}

#[test]
fn a_file_answer_is_cut_without_reading_the_file_again_and_follows_a_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(AnswerCache::new(64 << 20));
    let store = FileStore::new(dir.path().to_str().unwrap());
    store.set_removal_hook(Some(cache.removal_hook()));
    let content = log(5_000);
    let reference = store.store("k", Bytes::from(content.clone()), "text/plain").unwrap();
    let name = reference.rsplit('/').next().unwrap().to_owned();
    // Wait until the file is settled (a change in the same timestamp tick could not go unseen).
    let started = Instant::now();
    while !store.retrieve_stamped_at(&reference, T0, |_, _| true).unwrap().settled {
        assert!(started.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(20));
    }
    let builds = Cell::new(0);
    let page = |n: usize, builds: &Cell<usize>| {
        let paging = Paging { meter: &Utf16Meter, budget: BUDGET, page: n };
        answer_file(&cache, &store, &Ask { reference: &reference, now_ms: T0, variant: "v", paging }, counted(builds, every_error())).unwrap().1
    };
    let p1 = page(1, &builds);
    assert!(matches!(&p1, PageAnswer::Page { has_more: true, .. }), "{p1:?}");
    let p2 = page(2, &builds);
    assert_eq!(builds.get(), 1);
    assert_ne!(p1, p2);
    // Rewritten in place by another writer: the next page is built from the new content.
    let rewritten = content.replace("ERROR", "ERROR!");
    std::fs::write(dir.path().join(&name), &rewritten).unwrap();
    let p2_again = page(2, &builds);
    assert_eq!(builds.get(), 2);
    assert_eq!(text(&p2_again).0, render_page(&whole_answer(&rewritten, &every_error()), &Utf16Meter, BUDGET, 2).unwrap().0);
}

#[test]
fn full_answers_decode_text_and_hand_binary_back() {
    let cache = AnswerCache::new(64 << 20);
    let page1 = Paging { meter: &Utf16Meter, budget: BUDGET, page: 1 };
    let text_content = Bytes::from_static(b"\xEF\xBB\xBFhello \xC0 world");
    let answer = answer_content(&cache, &text_content, "text/plain", "full", &page1, full_answer);
    assert_eq!(answer, PageAnswer::Page { text: "hello \u{fffd} world".to_owned(), has_more: false, whole: true, json: false });
    let png = Bytes::from_static(b"\x89PNG....");
    assert_eq!(answer_content(&cache, &png, "image/png", "full", &page1, full_answer), PageAnswer::Binary(png.clone()));
    let pdf = Bytes::from_static(b"%PDF");
    assert_eq!(answer_content(&cache, &pdf, "application/pdf", "full", &page1, full_answer), PageAnswer::Binary(pdf.clone()));
    let json = Bytes::from_static(b"{\"a\": 1}");
    assert!(matches!(answer_content(&cache, &json, "application/json", "full", &page1, full_answer), PageAnswer::Page { whole: true, json: true, .. }));
    // A JSON string is its string (as text), other JSON its text (to parse when whole).
    let string = Bytes::from_static(b" \"line \\\"one\\\"\\nline two\" ");
    assert_eq!(
        answer_content(&cache, &string, "application/json", "full", &page1, full_answer),
        PageAnswer::Page { text: "line \"one\"\nline two".to_owned(), has_more: false, whole: true, json: false }
    );
    let broken = Bytes::from_static(b"\"unterminated");
    assert!(matches!(answer_content(&cache, &broken, "application/json", "full", &page1, full_answer), PageAnswer::Page { json: true, .. }));
    let odd = Bytes::from_static(b"plain");
    assert!(matches!(answer_content(&cache, &odd, "weird", "full", &page1, full_answer), PageAnswer::Page { whole: true, .. }));
    // Binary content cannot be searched: a notice, given whole.
    let search = |source: &Source<'_>| search_answer(source, &every_error());
    match answer_content(&cache, &png, "image/png", "grep", &page1, search) {
        PageAnswer::Final(notice) => assert!(notice.starts_with("Error: cannot search binary content (image/png)."), "{notice}"),
        other => panic!("{other:?}"),
    }
    // One-page answers are not kept.
    assert!(cache.is_empty());
}

#[test]
fn content_handed_in_is_kept_under_its_digest() {
    let cache = AnswerCache::new(64 << 20);
    let content = Bytes::from(log(5_000));
    let builds = Cell::new(0);
    let range = RetrievalQuery { pattern: None, line_range: Some(LineRange { start: 1, end: 5_000 }), context_lines: None };
    let page = |n: usize, content: &Bytes, builds: &Cell<usize>| {
        let paging = Paging { meter: &Utf16Meter, budget: BUDGET, page: n };
        answer_content(&cache, content, "text/plain", "v", &paging, counted(builds, range))
    };
    let p1 = page(1, &content, &builds);
    let p3 = page(3, &content, &builds);
    assert_eq!(builds.get(), 1);
    assert_ne!(p1, p3);
    // Equal bytes elsewhere are the same content; other bytes are another answer.
    let copy = Bytes::from(content.to_vec());
    assert_eq!(page(3, &copy, &builds), p3);
    assert_eq!(builds.get(), 1);
    let other = Bytes::from(log(5_001));
    page(3, &other, &builds);
    assert_eq!(builds.get(), 2);
    assert_eq!(cache.len(), 2);
    cache.set_budget(0);
    assert!(cache.is_empty());
}
