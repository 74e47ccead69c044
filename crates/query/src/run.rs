//! Running a query on a dedicated, metered evaluator thread.

use crate::direct::{self, Bail, Direct};
use crate::error::QueryError;
use crate::limits::{QueryLimits, MAX_DEPTH, STACK_RESERVE, STACK_SIZE};
use crate::meter::{self, Limit, Trip};
use crate::natives::{Data, Ev};
use crate::parsed::ParsedDocument;
use crate::shared_budget::{Reservation, SHARED_MEMORY_BYTES};
use crate::value::{write, Value};
use crate::{cost, document, program, QueryOutput};
use bytes::Bytes;
use jaq_core::{Ctx, Vars};
use jaq_std::input::RcIter;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Longest jq error message passed on, in bytes.
const MAX_ERROR_BYTES: usize = 1000;

/// Longest time budget honoured (a year: longer ones are taken as this).
const FAR: Duration = Duration::from_secs(365 * 24 * 3600);

/// What a query runs on: a document's text, or a document read before.
pub(crate) enum Input<'a> {
    /// The text, copied once its memory is reserved.
    Borrowed(&'a [u8]),
    /// The text, read on the evaluator thread (its strings share this buffer).
    Text(Bytes),
    /// A document read before.
    Parsed(Arc<ParsedDocument>),
}

/// The result of a query, and the document it read when it was asked to keep it.
pub(crate) type Ran = (Result<QueryOutput, QueryError>, Option<Arc<ParsedDocument>>);

/// Runs the query on a new thread with a large stack and waits for its result.
///
/// A text's buffer is charged to the query's memory budget and reserved from
/// the shared budget first; the reservation travels with the thread and is
/// given back when the thread has freed everything. When the text, once read,
/// was charged at most `keep` bytes, the document is handed back with its own
/// share of the shared budget (see [`ParsedDocument`]). A document read before
/// is charged to the query's memory budget again (its share of the shared
/// budget is its own already).
pub(crate) fn run(
    input: Input<'_>,
    expression: &str,
    limits: &QueryLimits,
    keep: Option<usize>,
) -> Ran {
    let start = Instant::now();
    let deadline = start + limits.time_budget.min(FAR);
    let (held, reserve) = match &input {
        Input::Borrowed(text) => {
            let copy = cost::block(text.len());
            (copy, copy)
        }
        Input::Text(text) => {
            let copy = cost::block(text.len());
            (copy, copy)
        }
        Input::Parsed(document) => (document.charged_bytes(), 0),
    };
    let Some(memory) = limits.max_memory_bytes.checked_sub(held) else {
        return (Err(too_expensive(Limit::Memory, limits)), None);
    };
    let mut reservation = Reservation::default();
    if !reservation.grow(reserve, deadline) {
        return (Err(too_expensive(Limit::SharedMemory, limits)), None);
    }
    let input = match input {
        Input::Borrowed(text) => Owned::Text(Bytes::copy_from_slice(text)),
        Input::Text(text) => Owned::Text(text),
        Input::Parsed(document) => Owned::Parsed(document),
    };
    let expression = expression.to_owned();
    let limits = limits.clone();
    let (sender, receiver) = mpsc::sync_channel(1);
    let kept = Arc::new(Mutex::new(None));
    let kept_by_thread = Arc::clone(&kept);
    let spawned = std::thread::Builder::new()
        .name("offload-query".into())
        .stack_size(STACK_SIZE)
        .spawn(move || {
            meter::install(
                limits.max_steps,
                deadline,
                memory,
                reservation,
                STACK_SIZE - STACK_RESERVE,
            );
            // the first result wins: the error of a tripped limit is sent from
            // the trip itself, before unwinding drops what the query built
            let slot = Rc::new(RefCell::new(Some(sender)));
            let send = {
                let slot = Rc::clone(&slot);
                move |result| {
                    if let Some(sender) = slot.borrow_mut().take() {
                        // the receiver only disappears if the caller's thread died
                        let _ = sender.send(result);
                    }
                    meter::start_release();
                }
            };
            let hook_send = send.clone();
            let hook_limits = limits.clone();
            meter::on_trip(move |limit| hook_send(Err(too_expensive(limit, &hook_limits))));
            let keep = Keep {
                at_most: keep,
                held,
                into: &kept_by_thread,
            };
            thread_body(input, &expression, &limits, keep, send);
            // everything the query built is dropped: its memory is free again
            meter::release();
        });
    if let Err(e) = spawned {
        let error = QueryError::Internal(format!("cannot start the evaluator thread: {e}"));
        return (Err(error), None);
    }
    let result = receiver
        .recv()
        .unwrap_or_else(|_| Err(QueryError::Internal("the evaluator thread failed".into())));
    // the document is put there (if at all) before any result after reading it is sent
    let document = kept.lock().unwrap_or_else(PoisonError::into_inner).take();
    (result, document)
}

/// What the evaluator thread runs on.
enum Owned {
    Text(Bytes),
    Parsed(Arc<ParsedDocument>),
}

/// Whether and where the evaluator thread hands back the document it read.
struct Keep<'a> {
    /// Most bytes a document handed back may have been charged (`None`: none is).
    at_most: Option<usize>,
    /// Bytes charged for the text's buffer before the thread started.
    held: usize,
    into: &'a Mutex<Option<Arc<ParsedDocument>>>,
}

/// Body of the evaluator thread.
///
/// Everything runs under `catch_unwind`. The document and the evaluation's
/// iterator (which owns most of what the query built) are dropped only after
/// `send` delivered the result, so that the caller does not wait for that.
fn thread_body(
    input: Owned,
    expression: &str,
    limits: &QueryLimits,
    keep: Keep<'_>,
    send: impl FnOnce(Result<QueryOutput, QueryError>),
) {
    let program = match caught(limits, || program::compile(expression)) {
        Ok(program) => program,
        Err(e) => return send(Err(e)),
    };
    let document = match input {
        Owned::Parsed(document) => document,
        Owned::Text(text) => {
            let before = meter::memory_left();
            let values = match caught(limits, || document::parse(&text)) {
                Ok(values) => values,
                Err(e) => return send(Err(e)),
            };
            drop(text);
            let charged = keep.held + (before - meter::memory_left());
            let kept = keep.at_most.is_some_and(|at_most| charged <= at_most);
            let reservation = if kept {
                meter::split_reservation(charged)
            } else {
                Reservation::default()
            };
            let document = Arc::new(ParsedDocument::new(values, charged, reservation));
            if kept {
                *keep.into.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(Arc::clone(&document));
            }
            document
        }
    };
    // planning reads the expression only (no meter), and cannot fail but by a bug
    let plan = catch_unwind(|| direct::plan(expression)).ok().flatten();
    if let Some(plan) = plan {
        let before = meter::spent();
        match caught(limits, || evaluate_direct(&plan, &document, limits)) {
            Ok(Some(output)) => return send(Ok(output)),
            // gave up on an error (having dropped all it built): jaq runs the
            // query with what the attempt used given back, and reports the error
            Ok(None) => meter::give_back(before),
            Err(e) => return send(Err(e)),
        }
    }
    let inputs = RcIter::new(document.values().iter().cloned().map(Ok::<Value, String>));
    let inputs: &RcIter<dyn Iterator<Item = Result<Value, String>>> = &inputs;
    let data = Data {
        lut: &program.lut,
        inputs,
    };
    let mut current = None;
    let result = caught(limits, || evaluate(&program, &data, limits, &mut current));
    send(result);
    drop(current);
}

/// Runs `f`, turning an unwinding (limit or panic) into an error.
fn caught<T>(
    limits: &QueryLimits,
    f: impl FnOnce() -> Result<T, QueryError>,
) -> Result<T, QueryError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(unwound(payload, limits)))
}

/// The error for an unwinding caught at the top of the evaluator thread.
fn unwound(payload: Box<dyn std::any::Any + Send>, limits: &QueryLimits) -> QueryError {
    if let Some(Trip(limit)) = payload.downcast_ref::<Trip>() {
        return too_expensive(*limit, limits);
    }
    // a limit may have tripped while jaq was already unwinding for another reason
    if let Some(limit) = meter::tripped() {
        return too_expensive(limit, limits);
    }
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    QueryError::Internal(format!("jaq panicked: {what}"))
}

/// Runs the program once per input value (as jq does; `input`/`inputs`
/// consume the following ones) and prints the results.
///
/// The running output iterator is kept in `current`, owned by the caller.
fn evaluate<'a>(
    program: &'a program::Program,
    data: &Data<'a>,
    limits: &QueryLimits,
    current: &mut Option<jaq_core::ValXs<'a, Value>>,
) -> Result<QueryOutput, QueryError> {
    let env = Value::object(jaq_json::Map::default(), 0);
    let mut out = Output::new(limits);
    for input in data.inputs {
        let input = input.map_err(QueryError::Runtime)?;
        let ctx = Ctx::<Ev>::new(data.clone(), Vars::new([env.clone()]));
        let outputs = current.insert(program.id.run((ctx, input)));
        for y in outputs {
            let y = y.map_err(exception)?;
            if !out.push(&y)? {
                return Ok(out.finish(true));
            }
        }
    }
    Ok(out.finish(false))
}

/// Runs a direct plan (see [`direct`]) once per input value and prints the
/// results as [`evaluate`] does; `None` when it gave up on an error.
fn evaluate_direct(
    plan: &Direct,
    document: &ParsedDocument,
    limits: &QueryLimits,
) -> Result<Option<QueryOutput>, QueryError> {
    let mut out = Output::new(limits);
    let mut failed = None;
    for input in document.values() {
        let flow = direct::run(plan, input.clone(), &mut |v| {
            out.push(&v).or_else(|e| {
                failed = Some(e);
                Ok(false)
            })
        });
        match flow {
            Ok(true) => {}
            Ok(false) => {
                return match failed {
                    Some(e) => Err(e),
                    None => Ok(Some(out.finish(true))),
                }
            }
            Err(Bail) => return Ok(None),
        }
    }
    Ok(Some(out.finish(false)))
}

/// Collected output lines.
struct Output {
    lines: Vec<String>,
    bytes: usize,
    max_bytes: usize,
    max_outputs: usize,
}

impl Output {
    fn new(limits: &QueryLimits) -> Self {
        Self {
            lines: Vec::new(),
            bytes: 0,
            max_bytes: limits.max_output_bytes,
            max_outputs: limits.max_outputs,
        }
    }

    /// Adds a result; `false` once an output limit is reached.
    fn push(&mut self, v: &Value) -> Result<bool, QueryError> {
        if self.lines.len() >= self.max_outputs {
            return Ok(false);
        }
        let mut buf = Vec::new();
        if write::write_metered(&mut buf, &v.val, self.max_bytes - self.bytes).is_err() {
            if self.lines.is_empty() {
                return Err(QueryError::TooExpensive(format!(
                    "the first result alone is larger than the output limit of {}; \
                     select fewer fields or elements",
                    bytes(self.max_bytes)
                )));
            }
            return Ok(false);
        }
        self.bytes += buf.len();
        self.lines.push(
            String::from_utf8(buf)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        );
        Ok(self.lines.len() < self.max_outputs)
    }

    fn finish(self, truncated: bool) -> QueryOutput {
        QueryOutput {
            lines: self.lines,
            truncated,
        }
    }
}

/// Converts an exception that escaped the program into an error.
fn exception(e: jaq_core::Exn<'_, Value>) -> QueryError {
    match e.get_err() {
        Ok(err) => {
            let v = err.into_val();
            let msg = match v.str_bytes() {
                Some(s) => String::from_utf8_lossy(s).into_owned(),
                None => format!("{v} (not a string)"),
            };
            QueryError::Runtime(one_line(&msg))
        }
        Err(e) => match e.get_halt() {
            Ok(code) => QueryError::Runtime(format!(
                "halt_error/halt({code}) was called; halting is not supported here"
            )),
            Err(_) => QueryError::Internal("an internal jaq exception escaped".into()),
        },
    }
}

/// The message on one line, shortened to [`MAX_ERROR_BYTES`].
fn one_line(msg: &str) -> String {
    let mut out = String::new();
    for c in msg.chars() {
        if out.len() >= MAX_ERROR_BYTES {
            out.push_str("...");
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn bytes(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// The message for an exceeded limit.
fn too_expensive(limit: Limit, limits: &QueryLimits) -> QueryError {
    const NARROW: &str =
        "narrow the expression (for example select before map) or query a smaller part";
    QueryError::TooExpensive(match limit {
        Limit::Steps => format!("stopped after {} steps (limit); {NARROW}", limits.max_steps),
        Limit::Time => format!(
            "stopped after {:.1} s (time limit); {NARROW}",
            limits.time_budget.as_secs_f64()
        ),
        Limit::Memory => format!(
            "the query built more than {} of values (limit); select fewer or smaller values \
             instead of copying, repeating or concatenating large ones",
            bytes(limits.max_memory_bytes)
        ),
        Limit::Depth => format!(
            "a value would be nested deeper than {MAX_DEPTH} levels (limit); \
             check recursive definitions and reductions that wrap values"
        ),
        Limit::Recursion => "recursion too deep (limit); a recursive definition such as \
             `def f: 1 + f; f` does not terminate or recurses too deeply"
            .into(),
        Limit::SharedMemory => format!(
            "the queries running at the same time hold the {} of memory all queries share \
             (limit); try again when they have finished, or query a smaller part",
            bytes(SHARED_MEMORY_BYTES)
        ),
    })
}
