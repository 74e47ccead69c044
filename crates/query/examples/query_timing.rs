//! Times a query over a JSON file: `cargo run --release --example query_timing -- FILE EXPR [REPS]`.
//!
//! Prints the median and the fastest of REPS runs (default 15) after two
//! warm-up runs, and the number of result lines. The limits are the default
//! ones except the time budget (a minute, so that runs under a profiler end).

use offload_query::{run_query, QueryLimits};
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(expr)) = (args.next(), args.next()) else {
        return Err("usage: query_timing FILE EXPR [REPS]".into());
    };
    let reps: usize = args.next().map_or(Ok(15), |r| r.parse())?;
    let doc = std::fs::read(&path)?;
    let limits = QueryLimits {
        time_budget: Duration::from_secs(60),
        ..QueryLimits::default()
    };
    let mut lines = 0;
    for _ in 0..2 {
        lines = run_query(&doc, &expr, &limits)?.lines.len();
    }
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            let out = run_query(&doc, &expr, &limits);
            let elapsed = start.elapsed();
            lines = out.map_or(0, |o| o.lines.len());
            elapsed
        })
        .collect();
    times.sort();
    println!(
        "{} bytes, {lines} lines: median {:.1} ms, fastest {:.1} ms ({reps} runs)",
        doc.len(),
        times[reps / 2].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3
    );
    Ok(())
}
