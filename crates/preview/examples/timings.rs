//! Times previews of 10 MB inputs in every mode and prints them.
//!
//! Run with `cargo run --release -p offload-preview --example timings`.

use std::time::{Duration, Instant};

use offload_preview::{
    build_preview, HeadShare, Meter, PreviewBlock, PreviewMode, PreviewOptions, Utf16Meter,
};

const TARGET: usize = 10 * 1024 * 1024;
const BUDGET: usize = 4000;
const RUNS: usize = 7;

/// About 10 MB of log lines.
fn log_text() -> String {
    let mut out = String::with_capacity(TARGET + 200);
    let mut i = 0u64;
    while out.len() < TARGET {
        i += 1;
        out.push_str(&format!(
            "2024-05-01T12:{:02}:{:02}.{:03}Z INFO worker-{} request {i} GET /api/items?page={} served in {} ms\n",
            (i / 60) % 60,
            i % 60,
            i % 1000,
            i % 16,
            i % 500,
            i % 997
        ));
    }
    out
}

/// About 10 MB of JSON: an object holding an array of records, as
/// `JSON.stringify(value, null, 2)` writes it.
fn json_text(pretty: bool) -> String {
    let (nl, i1, i2, i3, sep) = if pretty {
        ("\n", "  ", "    ", "      ", ": ")
    } else {
        ("", "", "", "", ":")
    };
    let mut out = format!("{{{nl}{i1}\"items\"{sep}[{nl}");
    let mut i = 0u64;
    while out.len() < TARGET {
        if i > 0 {
            out.push(',');
            out.push_str(nl);
        }
        i += 1;
        out.push_str(&format!(
            "{i2}{{{nl}{i3}\"id\"{sep}{i},{nl}{i3}\"name\"{sep}\"item \\\"{i}\\\" é\",{nl}{i3}\"price\"{sep}{}.{:02},{nl}{i3}\"active\"{sep}{},{nl}{i3}\"tags\"{sep}[\"a\", \"b\"]{nl}{i2}}}",
            i % 1000,
            i % 100,
            i & 1 == 0
        ));
    }
    out.push_str(&format!("{nl}{i1}],{nl}{i1}\"count\"{sep}{i}{nl}}}"));
    out
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(label: &str, text: &str, block: PreviewBlock<'_>, mode: PreviewMode) {
    let options = PreviewOptions {
        mode,
        budget: BUDGET,
        cut_long_lines: true,
        head_share: HeadShare::default(),
    };
    let mut samples = Vec::with_capacity(RUNS);
    let mut size = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        let preview = build_preview(&[block], &Utf16Meter, &options);
        samples.push(start.elapsed());
        size = Utf16Meter.measure(&preview);
    }
    println!(
        "{label:<28} {mode:<10} {:>6.1} MB  median {:>8.3} ms  (preview {size} units)",
        text.len() as f64 / 1e6,
        median(samples).as_secs_f64() * 1e3
    );
}

fn main() {
    let log = log_text();
    let single_line = "x".repeat(TARGET);
    let pretty = json_text(true);
    let minified = json_text(false);
    for mode in [
        PreviewMode::Head,
        PreviewMode::HeadTail,
        PreviewMode::Structure,
    ] {
        time("log lines", &log, PreviewBlock::text(&log), mode);
        time(
            "one 10 MB line",
            &single_line,
            PreviewBlock::text(&single_line),
            mode,
        );
        time(
            "pretty JSON (json block)",
            &pretty,
            PreviewBlock::json(&pretty),
            mode,
        );
        time(
            "minified JSON (text block)",
            &minified,
            PreviewBlock::text(&minified),
            mode,
        );
    }
    let options = PreviewOptions {
        mode: PreviewMode::Structure,
        budget: 1500,
        cut_long_lines: true,
        head_share: HeadShare::default(),
    };
    println!(
        "\nstructure preview of the pretty JSON, budget 1500:\n{}",
        build_preview(&[PreviewBlock::json(&pretty)], &Utf16Meter, &options)
    );
}
