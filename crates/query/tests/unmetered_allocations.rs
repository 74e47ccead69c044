//! What the reader and the direct evaluator allocate beyond the values they
//! charge: nothing that stays with a kept document, and nothing per number.
//! (A test binary of its own: it counts every allocation of the process.)

use bytes::Bytes;
use offload_query::{run_query, run_query_keeping, run_query_parsed, QueryLimits};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Counts the bytes allocated and still live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
/// The tests take turns: each counts the allocations of the whole process.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counts are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Waits until the live bytes are at most `limit` above `base` (a query's thread
/// frees what it built after it answered); the last excess seen otherwise.
fn settles_within(base: isize, limit: isize) -> Result<(), isize> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let excess = LIVE.load(Ordering::Relaxed) - base;
        if excess <= limit {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(excess);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Records whose keys have escapes have bytes of their own (no two records
/// share them): finding their fields compares text on every record, and what
/// it remembers of the last match must not copy or convert a key (that would
/// stay with the kept document, charged nowhere).
#[test]
fn finding_fields_leaves_nothing_with_a_kept_document() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let records: Vec<String> = (0..20_000)
        .map(|i| format!(r#"{{"id":{i},"a\u0063tive":true,"n\u0061me":"r{i}"}}"#))
        .collect();
    let doc = Bytes::from(format!("[{}]", records.join(",")));
    let limits = QueryLimits::default();
    let kept = run_query_keeping(doc, "length", &limits, 1 << 30)
        .document
        .expect("kept");
    // anything the first queries set up once (threads, tables) is not counted
    run_query_parsed(&kept, ".[0].id", &limits).expect("warm-up");
    std::thread::sleep(Duration::from_millis(200));
    let base = LIVE.load(Ordering::Relaxed);
    for expr in [
        "[.[] | select(.active)] | length",
        r#"[.[] | select(.name == "r7") | .id]"#,
    ] {
        run_query_parsed(&kept, expr, &limits).expect(expr);
        // 20,000 records: 24 bytes kept per record would be 480,000
        assert_eq!(
            settles_within(base, 64 << 10),
            Ok(()),
            "{expr}: bytes left live"
        );
    }
}

/// Reading a number allocates nothing beyond its value (printing a decimal reads
/// it again to check its text).
#[test]
fn numbers_cost_no_allocation_of_their_own() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let doc = format!("[{}]", vec!["2.5"; 20_000].join(","));
    let before = ALLOCATED.load(Ordering::Relaxed);
    let out = run_query(doc.as_bytes(), ".[]", &QueryLimits::default()).expect("query");
    assert_eq!(out.lines.len(), 20_000);
    let allocated = ALLOCATED.load(Ordering::Relaxed) - before;
    // 2 KiB per number would be 40 MB
    assert!(allocated < 16 << 20, "{allocated} bytes allocated");
}
