//! Times a query over a JSON file: `cargo run --release --example query_timing -- FILE EXPR [REPS [kept]]`.
//!
//! Prints the median and the fastest of REPS runs (default 15) after two
//! warm-up runs, and the number of result lines: reading the document each
//! time (`cold`; the documents read are dropped between runs, untimed), and
//! on the document read once and kept (`kept`). The limits
//! are the default ones except the time budget (a minute, so that runs under a
//! profiler end). With `kept`, only queries on the kept document are timed.

use bytes::Bytes;
use mimalloc::MiMalloc;
use offload_query::{run_query_keeping, run_query_parsed, QueryLimits};
use std::time::{Duration, Instant};

/// mimalloc, as in the Node addon (there built through `mimalloc-safe`).
#[global_allocator]
static ALLOCATOR: MiMalloc = MiMalloc;

/// Median and fastest of `reps` timed runs of `f` (after two untimed ones);
/// `f` returns the number of result lines and what it wants dropped after
/// the timing (a kept document is dropped on a thread of its own).
fn time<T>(reps: usize, mut f: impl FnMut() -> (usize, T)) -> (Duration, Duration, usize) {
    let mut held = Vec::new();
    let (mut lines, first) = f();
    held.push(first);
    held.push(f().1);
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        if held.len() >= 4 {
            held.clear();
            std::thread::sleep(Duration::from_millis(300));
        }
        let start = Instant::now();
        let (n, keep) = f();
        times.push(start.elapsed());
        lines = n;
        held.push(keep);
    }
    times.sort();
    (times[reps / 2], times[0], lines)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(expr)) = (args.next(), args.next()) else {
        return Err("usage: query_timing FILE EXPR [REPS]".into());
    };
    let reps: usize = args.next().map_or(Ok(15), |r| r.parse())?;
    if reps == 0 {
        return Err("REPS must be at least 1".into());
    }
    let doc = std::fs::read(&path)?;
    let limits = QueryLimits {
        time_budget: Duration::from_secs(60),
        ..QueryLimits::default()
    };
    let lines = |r: Result<offload_query::QueryOutput, _>| r.map_or(0, |o| o.lines.len());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let only_kept = args.next().as_deref() == Some("kept");
    let text = Bytes::from(doc);
    let (median, fastest, n) = if only_kept {
        Default::default()
    } else {
        time(reps, || {
            let run = run_query_keeping(text.clone(), &expr, &limits, usize::MAX);
            (lines(run.result), run.document)
        })
    };
    println!(
        "cold: {} bytes, {n} lines: median {:.1} ms, fastest {:.1} ms ({reps} runs)",
        text.len(),
        ms(median),
        ms(fastest)
    );
    let kept = run_query_keeping(text, &expr, &limits, usize::MAX);
    let document = kept.document.ok_or("the document was not kept")?;
    let (median, fastest, n) = time(reps, || {
        (lines(run_query_parsed(&document, &expr, &limits)), ())
    });
    println!(
        "kept: {} bytes charged, {n} lines: median {:.1} ms, fastest {:.1} ms ({reps} runs)",
        document.charged_bytes(),
        ms(median),
        ms(fastest)
    );
    Ok(())
}
