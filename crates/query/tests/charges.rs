//! The memory a query is charged must reflect the memory it really uses.
//!
//! This binary counts every allocation (as glibc lays blocks out: 8 bytes of
//! header, 16-byte multiples, at least 32 bytes) and records the peak of the
//! bytes in use. For each case it finds, by bisection, the smallest memory
//! budget under which the query succeeds (what it is charged), runs it once
//! more under a generous budget to record its real peak, and compares the
//! two, after subtracting what the same expression uses on a tiny document
//! (the compiled program, the interpreter's own structures).

use offload_query::{run_query, QueryError, QueryLimits};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Bytes a glibc heap block for `size` bytes occupies.
fn block(size: usize) -> usize {
    ((size + 8 + 15) & !15).max(32)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = IN_USE.fetch_add(block(layout.size()), Relaxed) + block(layout.size());
        PEAK.fetch_max(now, Relaxed);
        // SAFETY: forwarded unchanged to the system allocator
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(block(layout.size()), Relaxed);
        // SAFETY: forwarded unchanged to the system allocator
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (old, new) = (block(layout.size()), block(new_size));
        if new >= old {
            let now = IN_USE.fetch_add(new - old, Relaxed) + new - old;
            PEAK.fetch_max(now, Relaxed);
        } else {
            IN_USE.fetch_sub(old - new, Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Waits until the memory in use is back to `level` (the query thread frees
/// its values after answering; a few KiB of the test's own may remain), at
/// most a few seconds.
fn settle(level: usize) {
    for _ in 0..500 {
        if IN_USE.load(Relaxed) <= level + (64 << 10) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The peak of bytes in use while `expr` runs on `doc` (beyond what was in
/// use before), and whether it succeeded. `idle` is the level of bytes in
/// use when no query runs: earlier queries must have freed their memory.
fn peak_of(
    doc: &[u8],
    expr: &str,
    limits: &QueryLimits,
    idle: usize,
) -> (usize, Result<(), QueryError>) {
    settle(idle);
    let before = IN_USE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let result = run_query(doc, expr, limits).map(|_| ());
    settle(before);
    (PEAK.load(Relaxed) - before, result)
}

/// The smallest memory budget under which the query succeeds (within 2%),
/// if it is at most `high`.
fn charged(doc: &[u8], expr: &str, high: usize) -> Option<usize> {
    let (mut low, mut high) = (0usize, high);
    let limits = |m| QueryLimits {
        max_memory_bytes: m,
        time_budget: Duration::from_secs(60),
        ..QueryLimits::default()
    };
    if run_query(doc, expr, &limits(high)).is_err() {
        return None;
    }
    while high - low > high / 50 {
        let mid = low + (high - low) / 2;
        match run_query(doc, expr, &limits(mid)) {
            Ok(_) => high = mid,
            Err(QueryError::TooExpensive(m))
                if m.contains("MiB of values") || m.contains("bytes of values") =>
            {
                low = mid
            }
            Err(e) => panic!("{expr}: unexpected error with {mid} bytes: {e}"),
        }
    }
    Some(high)
}

/// A case: a document of `n` items (large enough that the query's own
/// memory dwarfs the transient peak of compiling the program) and an expression.
struct Case {
    name: &'static str,
    doc: fn(usize) -> String,
    n: usize,
    expr: &'static str,
}

fn numbers(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    format!("[{}]", items.join(","))
}

fn empty_arrays(n: usize) -> String {
    format!("[{}]", vec!["[]"; n].join(","))
}

fn small_objects(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id":{i},"name":"user {i}","tags":["a","b"]}}"#))
        .collect();
    format!("[{}]", items.join(","))
}

fn strings(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| format!(r#""s{i}""#)).collect();
    format!("[{}]", items.join(","))
}

fn text(n: usize) -> String {
    format!("\"{}\"", "ab cd, ".repeat(n / 7 + 1))
}

const CASES: &[Case] = &[
    Case {
        name: "reading empty arrays",
        doc: empty_arrays,
        n: 500_000,
        expr: "length",
    },
    Case {
        name: "reading objects",
        doc: small_objects,
        n: 100_000,
        expr: "length",
    },
    Case {
        name: "reading strings",
        doc: strings,
        n: 500_000,
        expr: "length",
    },
    Case {
        name: "split into characters",
        doc: text,
        n: 1_000_000,
        expr: r#"split("") | length"#,
    },
    Case {
        name: "split at a separator",
        doc: text,
        n: 4_000_000,
        expr: r#"split(",") | length"#,
    },
    Case {
        name: "numbers to strings",
        doc: numbers,
        n: 400_000,
        expr: "map(tostring) | length",
    },
    Case {
        name: "wrapping in arrays",
        doc: numbers,
        n: 400_000,
        expr: "map([.]) | length",
    },
    Case {
        name: "wrapping in objects",
        doc: numbers,
        n: 200_000,
        expr: "map({a: .}) | length",
    },
    Case {
        name: "copies of strings",
        doc: small_objects,
        n: 100_000,
        expr: "[.[].name] | length",
    },
    Case {
        name: "entries",
        doc: small_objects,
        n: 50_000,
        expr: "map(to_entries) | length",
    },
    Case {
        name: "explode",
        doc: text,
        n: 2_000_000,
        expr: "explode | length",
    },
    Case {
        name: "regex matches",
        doc: text,
        n: 200_000,
        expr: r#"[match("b"; "g")] | length"#,
    },
    Case {
        name: "sort_by",
        doc: small_objects,
        n: 100_000,
        expr: "sort_by(.name) | length",
    },
];

#[test]
fn charges_reflect_real_memory() {
    let mut failures = Vec::new();
    let idle = IN_USE.load(Relaxed);
    for case in CASES {
        // the previous case's documents and queries are gone
        settle(idle);
        let big = (case.doc)(case.n);
        let tiny = (case.doc)(2);
        let idle = IN_USE.load(Relaxed);
        let generous = QueryLimits {
            time_budget: Duration::from_secs(60),
            ..QueryLimits::default()
        };
        let (peak_big, ok) = peak_of(big.as_bytes(), case.expr, &generous, idle);
        assert!(ok.is_ok(), "{}: {ok:?}", case.name);
        let (peak_tiny, _) = peak_of(tiny.as_bytes(), case.expr, &generous, idle);
        let real = peak_big.saturating_sub(peak_tiny);
        let Some(charge) = charged(big.as_bytes(), case.expr, 3 * real) else {
            failures.push(format!(
                "{}: charged more than 3x its real peak of {real} B",
                case.name
            ));
            continue;
        };
        let ratio = charge as f64 / real as f64;
        println!(
            "{:<24} document {:>9} B, real peak {:>10} B (program {:>8} B), charged {:>10} B ({ratio:.2}x)",
            case.name,
            big.len(),
            real,
            peak_tiny,
            charge
        );
        // at least 85% of what is really used is charged (cumulative charges
        // of values that only pass through may make it more)
        if ratio < 0.85 {
            failures.push(format!("{}: charged {ratio:.2}x the real peak", case.name));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
