//! The direct evaluator's `[f]` holds no more than the memory limit allows:
//! each item is charged as it is collected, so the limit stops a collection
//! before the process holds much more than the limit (measured with a
//! counting allocator; a test binary of its own, so no other test allocates
//! meanwhile).

use offload_query::{run_query, QueryError, QueryLimits};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes held and their peak.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let held = HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(held, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak bytes held above what was held before `f`, and its result.
fn peak_of<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (PEAK.load(Ordering::Relaxed) - before, out)
}

#[test]
fn collecting_stays_within_the_memory_limit() {
    const LIMIT: usize = 64 << 20;
    let doc = format!("[{}0]", "0,".repeat(1_000_000));
    let limits = QueryLimits {
        max_memory_bytes: LIMIT,
        ..QueryLimits::default()
    };
    let expr = "[.[],.[],.[],.[],.[],.[],.[],.[]] | length";
    let (jaq_peak, jaq) =
        peak_of(|| run_query(doc.as_bytes(), &format!("def _jaq: .; {expr}"), &limits));
    let (direct_peak, direct) = peak_of(|| run_query(doc.as_bytes(), expr, &limits));
    assert!(matches!(jaq, Err(QueryError::TooExpensive(_))), "{jaq:?}");
    assert!(
        matches!(direct, Err(QueryError::TooExpensive(_))),
        "{direct:?}"
    );
    // the document's text and values are held either way; what the query builds is bounded by the limit
    assert!(
        direct_peak <= jaq_peak + LIMIT / 4,
        "direct held {direct_peak} bytes at most, jaq {jaq_peak}"
    );
    assert!(
        direct_peak <= 2 * LIMIT,
        "direct held {direct_peak} bytes at most"
    );
}
