//! [`DocumentCache`]: JSON documents of stored artifacts, read once for a jq
//! query and kept for the next queries, least recently used first out,
//! within a byte budget.
//!
//! An agent asks several questions about one large JSON result in a row;
//! reading the document into values is most of a query's time. The first
//! query reads it and hands it back ([`offload_query::run_query_keeping`]);
//! later queries on the same content run on the values kept
//! ([`offload_query::run_query_parsed`]), under every limit of a query (steps,
//! time, memory, output).
//!
//! Each document is filed under the store and the artifact's name and
//! carries the [`Version`] of the content it was read from (a memory store's
//! shared bytes, a file's settled stamp, a digest); a lookup names the version
//! stored now and finds nothing when it differs (the stale document is dropped
//! on the spot). Stores tell the cache what they remove (see
//! [`crate::removal_hook`]).
//!
//! Memory: an entry is charged what reading its document was charged (its
//! text buffer and its values, as the query crate counts them); the same
//! bytes stay reserved in the budget all queries share
//! ([`offload_query::SHARED_MEMORY_BYTES`]) for as long as the document lives,
//! and the process-wide cache gives kept documents up, least recently used
//! first, when a query cannot get its share of that budget.

use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use offload_query::{run_query_keeping, run_query_parsed, ParsedDocument, QueryError, QueryLimits, QueryOutput};
use offload_storage::RemovalHook;

use crate::artifact_cache::{ArtifactCache, Version};

/// Default budget of the process-wide cache: 512 MiB (a 20 MB JSON document
/// of small records takes about 150 MiB once read).
pub const DEFAULT_DOCUMENT_BUDGET_BYTES: usize = 512 << 20;

/// The one variant of a document (an artifact has one).
const DOCUMENT: &str = "";

/// Parsed JSON documents of stored artifacts, least recently used first out,
/// within a byte budget. Thread-safe; the lock is held only for map
/// operations, never while a document is read or queried.
#[derive(Debug)]
pub struct DocumentCache {
    entries: Arc<ArtifactCache<ParsedDocument>>,
}

/// The artifact a content is: store, name and version (see [`crate::Source::artifact`]).
pub type Artifact<'a> = (u64, &'a str, &'a Version);

impl DocumentCache {
    /// An empty cache of `budget_bytes` (0 disables it).
    #[must_use]
    pub fn new(budget_bytes: usize) -> Self {
        DocumentCache { entries: Arc::new(ArtifactCache::new(budget_bytes)) }
    }

    /// The cache of the process, [`DEFAULT_DOCUMENT_BUDGET_BYTES`] until
    /// changed. It gives its documents up when a query cannot get its share
    /// of the shared memory budget (see [`offload_query::on_memory_pressure`]).
    pub fn global() -> &'static Arc<DocumentCache> {
        static GLOBAL: LazyLock<Arc<DocumentCache>> = LazyLock::new(|| {
            let cache = Arc::new(DocumentCache::new(DEFAULT_DOCUMENT_BUDGET_BYTES));
            let weak = Arc::downgrade(&cache.entries);
            offload_query::on_memory_pressure(Some(Arc::new(move |bytes| weak.upgrade().is_some_and(|entries| entries.evict(bytes) > 0))));
            cache
        });
        &GLOBAL
    }

    /// The document read from `version` of artifact `name` of `store`, if
    /// held (it becomes the most recently used). A document read from another
    /// version is dropped.
    #[must_use]
    pub fn get(&self, store: u64, name: &str, version: &Version) -> Option<Arc<ParsedDocument>> {
        self.entries.get(store, name, DOCUMENT, version)
    }

    /// Keeps `document`, read from `version` of artifact `name` of `store`,
    /// charged what reading it was charged; least recently used documents are
    /// evicted to make room. A document larger than the whole budget is not
    /// kept (and an older one of the artifact is dropped all the same).
    pub fn insert(&self, store: u64, name: &str, version: Version, document: Arc<ParsedDocument>) {
        let bytes = document.charged_bytes();
        self.entries.insert(store, name, DOCUMENT, version, document, bytes);
    }

    /// Runs the jq `expression` over `content` within `limits`: on the
    /// document kept for `artifact` when there is one, else reading `content`
    /// and keeping the document for `artifact` when it fits in the budget.
    /// Content that names no artifact is read and dropped.
    ///
    /// # Errors
    ///
    /// What [`offload_query::run_query`] reports.
    pub fn query(&self, artifact: Option<Artifact<'_>>, content: &Bytes, expression: &str, limits: &QueryLimits) -> Result<QueryOutput, QueryError> {
        // content read and dropped is not copied either: its strings share its buffer
        let once = || run_query_keeping(content.clone(), expression, limits, 0).result;
        let Some((store, name, version)) = artifact else {
            return once();
        };
        if let Some(document) = self.get(store, name, version) {
            return run_query_parsed(&document, expression, limits);
        }
        let budget = self.budget();
        if budget == 0 {
            return once();
        }
        let run = run_query_keeping(content.clone(), expression, limits, budget);
        if let Some(document) = run.document {
            self.insert(store, name, version.clone(), document);
        }
        run.result
    }

    /// A hook for a store's removals (see [`offload_storage::removal`]) that
    /// drops the documents of what the store removes. It holds the cache
    /// weakly: a store does not keep a cache alive.
    #[must_use]
    pub fn removal_hook(&self) -> RemovalHook {
        self.entries.removal_hook()
    }
}

/// The budget, the charge, and the forgetting of documents are the inner cache's.
impl Deref for DocumentCache {
    type Target = ArtifactCache<ParsedDocument>;

    fn deref(&self) -> &Self::Target {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits() -> QueryLimits {
        QueryLimits { time_budget: Duration::from_secs(20), ..QueryLimits::default() }
    }

    fn lines(r: Result<QueryOutput, QueryError>) -> Vec<String> {
        r.map(|o| o.lines).unwrap_or_else(|e| vec![format!("error: {e}")])
    }

    fn ask(cache: &DocumentCache, store: u64, name: &str, content: &Bytes, expression: &str) -> Vec<String> {
        let version = Version::Shared(content.clone());
        lines(cache.query(Some((store, name, &version)), content, expression, &limits()))
    }

    fn doc(n: usize) -> Bytes {
        let items: Vec<String> = (0..n).map(|i| format!("{{\"id\":{i},\"name\":\"item {i}\"}}")).collect();
        Bytes::from(format!("{{\"items\":[{}]}}", items.join(",")))
    }

    #[test]
    fn a_second_query_runs_on_the_kept_document() {
        let cache = DocumentCache::new(64 << 20);
        let content = doc(100);
        assert_eq!(ask(&cache, 1, "r", &content, ".items | length"), ["100"]);
        assert_eq!(cache.len(), 1);
        let kept = cache.get(1, "r", &Version::Shared(content.clone())).expect("kept");
        assert!(cache.used_bytes() >= kept.charged_bytes());
        assert_eq!(ask(&cache, 1, "r", &content, ".items[7].name"), ["\"item 7\""]);
        // the document was not read again: the same one is kept
        let again = cache.get(1, "r", &Version::Shared(content.clone())).expect("kept");
        assert!(Arc::ptr_eq(&kept, &again));
        // errors come as they do without the cache, and limits hold
        assert_eq!(ask(&cache, 1, "r", &content, ".items | .a"), lines(offload_query::run_query(&content, ".items | .a", &limits())));
        let quick = QueryLimits { time_budget: Duration::from_millis(200), ..limits() };
        let slow = cache.query(Some((1, "r", &Version::Shared(content.clone()))), &content, "last(range(1e12))", &quick);
        assert!(matches!(slow, Err(QueryError::TooExpensive(m)) if m.contains("time limit")));
    }

    #[test]
    fn another_version_of_the_content_is_read_again() {
        let cache = DocumentCache::new(64 << 20);
        let (one, two) = (Bytes::from_static(b"{\"v\": 1}"), Bytes::from(b"{\"v\": 2}".to_vec()));
        assert_eq!(ask(&cache, 1, "r", &one, ".v"), ["1"]);
        // same name, other content: never the kept document
        assert_eq!(ask(&cache, 1, "r", &two, ".v"), ["2"]);
        assert_eq!(cache.len(), 1);
        assert!(cache.get(1, "r", &Version::Shared(one.clone())).is_none());
        // equal bytes elsewhere are another version too
        let copy = Bytes::from(b"{\"v\": 2}".to_vec());
        assert!(cache.get(1, "r", &Version::Shared(copy)).is_none());
        // file stamps and digests name versions the same way
        let digest = Version::Digest([7; 32]);
        assert_eq!(lines(cache.query(Some((2, "d", &digest)), &one, ".v", &limits())), ["1"]);
        assert!(cache.get(2, "d", &Version::Digest([8; 32])).is_none());
        // not JSON: nothing kept, the error as always
        let bad = Bytes::from_static(b"{\"v\": }");
        assert_eq!(ask(&cache, 3, "bad", &bad, ".v"), ["error: not JSON: expected value at line 1 column 7"]);
        assert!(cache.is_empty());
    }

    #[test]
    fn removals_forget_kept_documents() {
        let cache = Arc::new(DocumentCache::new(64 << 20));
        let content = doc(10);
        for (store, name) in [(1, "a"), (1, "b"), (2, "a")] {
            ask(&cache, store, name, &content, "length");
        }
        assert_eq!(cache.len(), 3);
        let hook = cache.removal_hook();
        hook(1, offload_storage::Removal::Artifact("a"));
        assert!(cache.get(1, "a", &Version::Shared(content.clone())).is_none());
        assert_eq!(cache.len(), 2);
        hook(1, offload_storage::Removal::All);
        assert_eq!(cache.len(), 1);
        assert!(cache.get(2, "a", &Version::Shared(content.clone())).is_some());
    }

    #[test]
    fn the_budget_holds_with_many_documents() {
        let probe = DocumentCache::new(1 << 30);
        let content = doc(2000);
        ask(&probe, 1, "probe", &content, "length");
        let one = probe.used_bytes();
        assert!(one > content.len());
        let cache = DocumentCache::new(3 * one + one / 2);
        let contents: Vec<Bytes> = (0..12).map(|_| Bytes::from(content.to_vec())).collect();
        for (i, content) in contents.iter().enumerate() {
            assert_eq!(ask(&cache, 1, &format!("r{i}"), content, ".items[-1].id"), ["1999"]);
            assert!(cache.used_bytes() <= cache.budget());
            assert!(cache.len() <= 3);
        }
        // the most recently used are kept, the oldest went
        assert!(cache.get(1, "r11", &Version::Shared(contents[11].clone())).is_some());
        assert!(cache.get(1, "r0", &Version::Shared(contents[0].clone())).is_none());
        // a document larger than the whole budget is answered, not kept
        cache.set_budget(one / 2);
        assert!(cache.is_empty());
        assert_eq!(ask(&cache, 1, "big", &content, ".items | length"), ["2000"]);
        assert!(cache.is_empty());
        // a budget of 0 keeps nothing
        cache.set_budget(0);
        assert_eq!(ask(&cache, 1, "big", &content, ".items | length"), ["2000"]);
        assert!(cache.is_empty());
        // giving way under pressure: the least recently used go first
        cache.set_budget(1 << 30);
        for (i, content) in contents.iter().take(3).enumerate() {
            ask(&cache, 1, &format!("r{i}"), content, "length");
        }
        assert!(cache.evict(1) > content.len());
        assert!(cache.get(1, "r0", &Version::Shared(contents[0].clone())).is_none());
        assert_eq!(cache.len(), 2);
        // content that names no artifact is never kept
        assert_eq!(lines(cache.query(None, &content, ".items | length", &limits())), ["2000"]);
        assert_eq!(cache.len(), 2);
    }
}
