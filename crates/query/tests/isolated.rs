//! Queries run in a child process of their own, to measure what a test
//! process cannot measure about itself: the peak memory (RSS) of one query
//! or of several running at the same time, and the host's time zone.
//!
//! This binary has no test harness. Run without arguments, it runs every
//! case by starting itself again with `--child CASE`, under an address-space
//! limit of 8 GiB and a deadline of a minute (so that a failing case cannot
//! exhaust the machine), and checks what the child reports: each query's
//! outcome and time, and the child's own peak RSS (`VmHWM` from
//! `/proc/self/status`, read by the child at the end; the peak of a child as
//! seen by its parent can carry over the parent's).

use offload_query::{run_query, QueryError, QueryLimits, QueryOutput};
use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// Longest a query may take: the 5 s budget and a margin for a loaded machine.
const MAX_QUERY_TIME: Duration = Duration::from_secs(8);

/// The default time budget.
const FIVE_SECONDS: Duration = Duration::from_secs(5);

/// Address space allowed to a child (its query threads reserve 256 MiB of stack each).
const CHILD_ADDRESS_SPACE_KIB: u64 = 8 << 20;

/// When a child is killed.
const CHILD_DEADLINE: Duration = Duration::from_secs(60);

/// What a query must end with.
enum Expect {
    /// `query too expensive: ...` containing the text.
    TooExpensive(&'static str),
    /// These results.
    Lines(&'static [&'static str]),
}

/// One case: a document, an expression run by `threads` queries at once.
struct Case {
    name: &'static str,
    document: fn() -> Vec<u8>,
    expression: &'static str,
    threads: usize,
    /// Environment of the child.
    env: &'static [(&'static str, &'static str)],
    expect: Expect,
    /// Peak RSS allowed to the child, in MiB (the document itself included).
    max_rss_mib: u64,
    /// The queries' time budget (the default, or longer where memory is
    /// what must stop them) and the longest they may take.
    time_budget: Duration,
    max_time: Duration,
}

fn null() -> Vec<u8> {
    b"null".to_vec()
}

/// `[[],[],...]` of about `bytes` bytes: the document that costs most memory per byte.
fn empty_arrays(bytes: usize) -> Vec<u8> {
    let mut doc = Vec::with_capacity(bytes + 2);
    doc.push(b'[');
    while doc.len() + 3 < bytes {
        doc.extend_from_slice(b"[],");
    }
    doc.extend_from_slice(b"[]]");
    doc
}

fn empty_arrays_100mb() -> Vec<u8> {
    empty_arrays(100_000_000)
}

fn empty_arrays_150mb() -> Vec<u8> {
    empty_arrays(150_000_000)
}

const CASES: &[Case] = &[
    // the output of a date format was built before it was charged (4 GB, 20-40 s)
    Case {
        name: "strftime_output",
        document: null,
        expression: r#"now | strftime("%c" * 100000000)"#,
        threads: 1,
        env: &[],
        expect: Expect::TooExpensive("limit"),
        max_rss_mib: 1536,
        time_budget: FIVE_SECONDS,
        max_time: MAX_QUERY_TIME,
    },
    // the pieces of split("") were charged 16 bytes each (3 GB for 4e7 pieces)
    Case {
        name: "split_into_characters",
        document: null,
        expression: r#""a" * 40000000 | split("") | length"#,
        threads: 1,
        env: &[],
        expect: Expect::TooExpensive("limit"),
        max_rss_mib: 1536,
        time_budget: FIVE_SECONDS,
        max_time: MAX_QUERY_TIME,
    },
    // reading the document was not charged (30 times its size)
    Case {
        name: "document_of_empty_arrays",
        document: empty_arrays_100mb,
        expression: "length",
        threads: 1,
        env: &[],
        expect: Expect::TooExpensive("1024 MiB of values"),
        max_rss_mib: 1536,
        time_budget: FIVE_SECONDS,
        max_time: MAX_QUERY_TIME,
    },
    // four such queries at once share one budget (4 x 4.8 GB before); with a
    // long time budget, so that memory is what stops them
    Case {
        name: "four_documents_at_once",
        document: empty_arrays_150mb,
        expression: "length",
        threads: 4,
        env: &[],
        expect: Expect::TooExpensive("MiB"),
        max_rss_mib: 3584,
        time_budget: Duration::from_secs(30),
        // a query may wait for another one to free its memory
        max_time: Duration::from_secs(25),
    },
    // a global search that rescans the rest of the text for every match
    // passed its cost estimate and ran for 30 s
    Case {
        name: "regex_rescanning_per_match",
        document: null,
        expression: r#""y" * 30000 | [match(".*x|y"; "g")] | length"#,
        threads: 1,
        env: &[],
        expect: Expect::TooExpensive("limit"),
        max_rss_mib: 512,
        time_budget: FIVE_SECONDS,
        max_time: MAX_QUERY_TIME,
    },
    // the host's time zone must not show
    Case {
        name: "local_time_is_utc",
        document: null,
        expression: r#"0 | strflocaltime("%H:%M %z"), localtime, (0 | strftime("%H:%M %z"))"#,
        threads: 1,
        env: &[("TZ", "IST-5:30")],
        expect: Expect::Lines(&[
            r#""00:00 +0000""#,
            "[1970,0,1,0,0,0,4,0]",
            r#""00:00 +0000""#,
        ]),
        max_rss_mib: 512,
        time_budget: FIVE_SECONDS,
        max_time: MAX_QUERY_TIME,
    },
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let name = args.get(i + 1).map(String::as_str).unwrap_or_default();
        match CASES.iter().find(|c| c.name == name) {
            Some(case) => run_child(case),
            None => {
                eprintln!("no case {name}");
                std::process::exit(2);
            }
        }
        return;
    }
    let mut failures = Vec::new();
    for case in CASES {
        match check(case) {
            Ok(summary) => println!("ok    {:<28} {summary}", case.name),
            Err(why) => {
                println!("FAIL  {:<28} {why}", case.name);
                failures.push(case.name);
            }
        }
    }
    if !failures.is_empty() {
        eprintln!("failed: {}", failures.join(", "));
        std::process::exit(1);
    }
    println!("{} cases passed", CASES.len());
}

/// In the child: runs the case's queries and reports each outcome, then the peak RSS.
fn run_child(case: &Case) {
    let document = (case.document)();
    let limits = QueryLimits {
        time_budget: case.time_budget,
        ..QueryLimits::default()
    };
    let results: Vec<(Duration, Result<QueryOutput, QueryError>)> = std::thread::scope(|s| {
        let queries: Vec<_> = (0..case.threads)
            .map(|_| {
                s.spawn(|| {
                    let start = Instant::now();
                    let result = run_query(&document, case.expression, &limits);
                    (start.elapsed(), result)
                })
            })
            .collect();
        queries
            .into_iter()
            .map(|q| {
                q.join().unwrap_or_else(|_| {
                    (
                        Duration::ZERO,
                        Err(QueryError::Internal("the query thread panicked".into())),
                    )
                })
            })
            .collect()
    });
    for (elapsed, result) in results {
        let outcome = match result {
            Ok(out) => format!("ok {}", out.lines.join("\t")),
            Err(QueryError::TooExpensive(m)) => format!("too-expensive {m}"),
            Err(QueryError::Runtime(m)) => format!("runtime {m}"),
            Err(e) => format!("other {e}"),
        };
        println!("query {} {outcome}", elapsed.as_millis());
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    println!("peak-rss-kib {}", peak.unwrap_or(0));
}

/// In the parent: runs the case in a child and checks its report.
fn check(case: &Case) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("no executable: {e}"))?;
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {CHILD_ADDRESS_SPACE_KIB} && exec \"$0\" --child \"$1\""
        ))
        .arg(&exe)
        .arg(case.name)
        .envs(case.env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the child: {e}"))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > CHILD_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("still running after {CHILD_DEADLINE:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("cannot wait for the child: {e}")),
        }
    };
    let (mut out, mut err) = (String::new(), String::new());
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    if !status.success() {
        return Err(format!("the child failed ({status}): {}", err.trim()));
    }
    let mut summary = Vec::new();
    let mut queries = 0;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("query ") {
            queries += 1;
            let (ms, outcome) = rest.split_once(' ').unwrap_or((rest, ""));
            let ms: u64 = ms.parse().map_err(|_| format!("bad report line {line}"))?;
            if Duration::from_millis(ms) > case.max_time {
                return Err(format!("a query took {ms} ms: {outcome}"));
            }
            let expected = match &case.expect {
                Expect::TooExpensive(text) => {
                    outcome.starts_with("too-expensive ") && outcome.contains(text)
                }
                Expect::Lines(lines) => outcome == format!("ok {}", lines.join("\t")),
            };
            if !expected {
                return Err(format!("unexpected outcome: {outcome:.300}"));
            }
            summary.push(format!("{ms} ms"));
        } else if let Some(kib) = line.strip_prefix("peak-rss-kib ") {
            let kib: u64 = kib.parse().map_err(|_| format!("bad report line {line}"))?;
            let mib = kib * 1024 / MIB;
            if kib == 0 || mib > case.max_rss_mib {
                return Err(format!(
                    "peak RSS {mib} MiB, allowed {} MiB",
                    case.max_rss_mib
                ));
            }
            summary.push(format!("peak RSS {mib} MiB"));
        }
    }
    if queries != case.threads {
        return Err(format!(
            "{queries} of {} queries reported: {out}",
            case.threads
        ));
    }
    Ok(summary.join(", "))
}
