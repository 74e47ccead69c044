//! Reading the document: a strict, iterative JSON reader that builds
//! jaq-json values directly.
//!
//! jaq-json's own parser accepts a superset of JSON (`NaN`, `Infinity`, `+1`,
//! `#` comments, byte strings) and recurses once per nesting level, so a
//! document of a million `[` would overflow the stack. This reader instead
//! accepts exactly RFC 8259 JSON values separated by whitespace (a stream, as
//! jq reads it), keeps an explicit stack, refuses nesting deeper than
//! [`MAX_DEPTH`], reports line and column of the first error, and measures each
//! value's depth. It produces the same values as jaq-json would: integers as
//! machine or big integers, other numbers keep their literal text, strings
//! keep invalid UTF-8 bytes as they are (printed as U+FFFD). Strings without
//! escapes share one copy of the document instead of being allocated one by one.

use crate::cost;
use crate::error::QueryError;
use crate::limits::MAX_DEPTH;
use crate::meter;
use crate::shared_keys::{KeyTable, LONGEST_SHARED_KEY};
use crate::value::Value;
use bytes::Bytes;
use jaq_json::{Map, Num, Rc, Val};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, OnceLock};
use std::thread;
use std::time::Instant;

/// Longest integer literal read as an exact integer (4096 bits, the widest
/// integer arithmetic keeps exact); longer ones keep their literal text.
const MAX_INT_DIGITS: usize = 1234;

/// A reading failure: byte offset and message.
type Failure = (usize, String);

/// Parses a document into its top-level values.
///
/// Strings of the result share `doc`'s buffer.
pub(crate) fn parse(doc: &Bytes) -> Result<Vec<Value>, QueryError> {
    let (doc, shift) = match doc.strip_prefix(b"\xEF\xBB\xBF") {
        Some(_) => (doc.slice(3..), 3),
        None => (doc.clone(), 0),
    };
    let not_json = |(offset, message): Failure| {
        let (line, column) = line_column(&doc, offset);
        let column = if line == 1 { column + shift } else { column };
        QueryError::NotJson {
            line,
            column,
            message,
        }
    };
    let values = read_all(&doc).map_err(not_json)?;
    if values.is_empty() {
        return Err(not_json((
            0,
            "empty document, expected a JSON value".into(),
        )));
    }
    meter::check_time();
    Ok(values)
}

/// 1-based line and byte column of `offset`.
fn line_column(doc: &[u8], offset: usize) -> (usize, usize) {
    let before = &doc[..offset.min(doc.len())];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let column = match before.iter().rposition(|&b| b == b'\n') {
        Some(nl) => offset - nl,
        None => offset + 1,
    };
    (line, column)
}

/// Whether `s` is exactly one JSON number.
pub(crate) fn is_json_number(s: &[u8]) -> bool {
    let buf = Bytes::new();
    let mut r = Reader::new(&buf);
    r.s = s;
    r.number_end().is_ok() && r.i == s.len()
}

/// Documents at least this long are read by two threads (see [`read_all`]).
const SPLIT_MIN_BYTES: usize = 1 << 20;

/// How far after the middle of a document an array element is sought where
/// the second thread starts.
const SPLIT_SEARCH_BYTES: usize = 1 << 20;

/// Memory the second thread may charge per byte it reads: records charge
/// about 5 to 40, numbers about 10, arrays of empty containers (`[{},{}]`,
/// `[[],[]]`) up to about 42. Where more is needed, or the query's budget
/// cannot spare it, the second thread stops and the first reads on.
const AHEAD_CHARGE_PER_BYTE: usize = 48;

/// Reads all values of a document.
///
/// A long document is read by two threads where there are two cores: a second
/// thread starts at an array element after the middle (a `,` followed by the
/// start of a value that cannot be an object key) and reads the elements up to
/// the `]` that closes their array, while this thread reads from the start.
/// When this thread reaches that offset at the start of an element of an array,
/// the bytes from there on are read exactly as the second thread read them (the
/// same grammar from the same state), and its elements are taken as they are.
/// When it does not (the guess fell inside a string, or in an object), or the
/// second thread failed, this thread reads on by itself: errors, limits and
/// values are those of a reading by one thread. The second thread may charge
/// up to half of what the query's budget has left, set aside before it starts
/// (given back when its elements are taken or dropped, or as soon as this
/// thread would need it), and reserves what it charges from the budget all
/// queries share by itself; the query takes that reservation over with the
/// elements.
fn read_all(buf: &Bytes) -> Result<Vec<Value>, Failure> {
    let Some((at, allowance)) = split_plan(buf) else {
        return read_values(&mut Reader::new(buf));
    };
    let cancel = AtomicBool::new(false);
    let deadline = meter::deadline();
    let pooled = meter::is_pooled();
    // The second thread's strings share the document through a handle of their
    // own: two threads counting references on one handle would slow each other.
    let second = Bytes::from_owner(SharedDocument(buf.clone()));
    thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel(1);
        let cancel = &cancel;
        let second = &second;
        let spawned = thread::Builder::new()
            .name("offload-query-ahead".into())
            .spawn_scoped(scope, move || {
                let _ = sender.send(read_ahead(second, at, allowance, deadline, pooled, cancel));
            });
        if spawned.is_err() {
            meter::put_back(allowance);
            return read_values(&mut Reader::new(buf));
        }
        let mut r = Reader::new(buf);
        r.ahead_at = at;
        r.ahead = Some(Ahead {
            receiver,
            prepaid: allowance,
            cancel,
        });
        let values = read_values(&mut r);
        r.abandon_ahead();
        values
    })
}

/// A document's bytes, owned by another handle to them.
struct SharedDocument(Bytes);

impl AsRef<[u8]> for SharedDocument {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Whether two cores are available to this process.
fn two_cores() -> bool {
    static TWO: OnceLock<bool> = OnceLock::new();
    *TWO.get_or_init(|| thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}

/// Where a second thread may start reading `doc`, and the budget set aside for
/// it; `None` when the document is short, there is one core, or no array
/// element is found after the middle.
fn split_plan(doc: &[u8]) -> Option<(usize, usize)> {
    if doc.len() < SPLIT_MIN_BYTES || !two_cores() {
        return None;
    }
    let at = array_element_after(doc, doc.len() / 2)?;
    let allowance = (doc.len() - at)
        .saturating_mul(AHEAD_CHARGE_PER_BYTE)
        .min(meter::memory_left() / 2);
    meter::set_aside(allowance).then_some((at, allowance))
}

/// The offset of the first value after `from` that follows a `,` and starts
/// with a byte no object key starts with (`{`, `[`, a digit, `-`, `t`, `f`,
/// `n`): outside a string, such a value is an array element.
fn array_element_after(doc: &[u8], from: usize) -> Option<usize> {
    let end = from.saturating_add(SPLIT_SEARCH_BYTES).min(doc.len());
    let mut i = from;
    while i < end {
        let comma = i + doc[i..end].iter().position(|&b| b == b',')?;
        let mut j = comma + 1;
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = doc.get(j) {
            j += 1;
        }
        if let Some(b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n') = doc.get(j) {
            return Some(j);
        }
        i = comma + 1;
    }
    None
}

/// The elements a second thread read, from where it started to the `]` that
/// closes their array.
struct Elements {
    values: Vec<Val>,
    /// Offset just after the last element.
    end: usize,
    /// Nesting depth of the deepest element (0 for scalars).
    deepest: usize,
    /// Memory the second thread charged (its own vector of elements included).
    charged: usize,
    /// The most items the first thread's stack would have held above its
    /// items before the first element, reading the elements itself (finished
    /// elements and the items of the one being read).
    reach: usize,
    /// What the second thread reserved from the shared budget (dropped after
    /// the values).
    handover: meter::Handover,
}

/// Reads, on a second thread, the array elements from `at` to the `]` that
/// closes their array, within `allowance` bytes of the query's budget and its
/// `deadline` (reserving from the shared budget when `pooled`); `None` when
/// that is not what is found there, or a limit is reached, or `cancel` is set.
fn read_ahead(
    buf: &Bytes,
    at: usize,
    allowance: usize,
    deadline: Option<Instant>,
    pooled: bool,
    cancel: &AtomicBool,
) -> Option<Elements> {
    meter::install_helper(deadline, allowance, pooled);
    let read = catch_unwind(AssertUnwindSafe(|| {
        let mut r = Reader::new(buf);
        r.i = at;
        r.cancel = Some(cancel);
        let mut values = Vec::new();
        let mut deepest = 0;
        // One stack for all elements, never empty below them: each element is
        // read and charged as the first thread reads it, inside its array.
        let mut stack = Vec::new();
        r.push(&mut stack, Val::Null);
        let mut reach = 0;
        loop {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            r.stack_peak = 0;
            let (v, depth) = r.value_raw(&mut stack).ok()?;
            deepest = deepest.max(depth);
            // items of this element on the stack at most (the sentinel aside),
            // or the element itself once read
            let in_flight = r.stack_peak.saturating_sub(1).max(1);
            reach = reach.max(values.len() + in_flight);
            r.push(&mut values, v);
            let end = r.i;
            r.skip_ws();
            match r.peek() {
                Some(b',') => r.i += 1,
                Some(b']') => {
                    r.flush();
                    // the stack is dropped here: the first thread has its own
                    let own = cost::slots(stack.capacity());
                    let charged = allowance - meter::memory_left() - own;
                    return Some(Elements {
                        values,
                        end,
                        deepest,
                        charged,
                        reach,
                        handover: meter::hand_over(own),
                    });
                }
                _ => return None,
            }
        }
    }));
    read.ok().flatten()
}

/// A second thread's reading ahead, as the first thread holds it.
struct Ahead<'a> {
    receiver: mpsc::Receiver<Option<Elements>>,
    /// The query's budget set aside for the second thread.
    prepaid: usize,
    cancel: &'a AtomicBool,
}

impl Drop for Ahead<'_> {
    fn drop(&mut self) {
        // the first thread has stopped (or unwinds): the second stops soon
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Reads the values of a document (a stream of whitespace-separated values).
fn read_values(r: &mut Reader) -> Result<Vec<Value>, Failure> {
    let buf = r.buf;
    let mut values = Vec::new();
    loop {
        r.skip_ws();
        if r.i >= buf.len() {
            r.flush();
            return Ok(values);
        }
        let v = r.value()?;
        r.pending += cost::VALUE;
        values.push(v);
    }
}

/// An array or object being read; its items (for objects: keys and values
/// alternating) are the values of the reader's stack from `start` on.
struct Frame {
    is_arr: bool,
    start: usize,
}

/// Charges gathered before they are passed to the meter in one go.
const PENDING_BYTES: usize = 256 << 10;

struct Reader<'a> {
    s: &'a [u8],
    /// The same bytes, for sharing string slices.
    buf: &'a Bytes,
    i: usize,
    /// Memory of small values read but not yet charged (at most [`PENDING_BYTES`]).
    pending: usize,
    /// Where a second thread reads ahead (`usize::MAX`: nowhere).
    ahead_at: usize,
    /// The second thread's reading, until it is taken or abandoned.
    ahead: Option<Ahead<'a>>,
    /// Set when this reader reads ahead for another, which no longer needs it.
    cancel: Option<&'a AtomicBool>,
    /// Values started, for looking at the clock and `cancel` now and then.
    started: u32,
    /// The most items a stack held since this was last reset (see [`Reader::push`]).
    stack_peak: usize,
    /// Object keys read before (see [`Reader::key`]).
    keys: KeyTable,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a Bytes) -> Self {
        Reader {
            s: buf,
            buf,
            i: 0,
            pending: 0,
            ahead_at: usize::MAX,
            ahead: None,
            cancel: None,
            started: 0,
            stack_peak: 0,
            keys: KeyTable::default(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn fail<T>(&self, message: &str) -> Result<T, Failure> {
        Err((self.i, message.to_string()))
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// Charges the memory gathered so far. The budget set aside for a second
    /// thread is given back first (and the thread stopped) when the query
    /// would otherwise need more, or memory it cannot reserve right away.
    fn flush(&mut self) {
        let pending = core::mem::take(&mut self.pending);
        if self.ahead.is_some() {
            if meter::try_charge(pending) {
                return;
            }
            self.abandon_ahead();
        }
        meter::charge(pending);
    }

    /// Stops the second thread, drops what it read and gives its memory back.
    fn abandon_ahead(&mut self) {
        self.ahead_at = usize::MAX;
        if let Some(ahead) = self.ahead.take() {
            ahead.cancel.store(true, Ordering::Relaxed);
            drop(ahead.receiver.recv());
            meter::put_back(ahead.prepaid);
        }
    }

    /// Takes the second thread's elements, at the start of a value at the
    /// offset where it started, when they were read to the end of their array
    /// within the depth limit: all but the last go on the stack, the last is
    /// returned, and the reader continues after it.
    ///
    /// That offset follows a `,` (and white space): a value starts right after
    /// a `,` only in an array (in an object a key follows it, and at the top
    /// level it is an error), so this reader is in an array there.
    fn adopt(&mut self, open: &[Frame], stack: &mut Vec<Val>, deepest: &mut usize) -> Option<Val> {
        self.ahead_at = usize::MAX;
        let ahead = self.ahead.take()?;
        let elements = ahead.receiver.recv().ok().flatten();
        let Some(Elements {
            mut values,
            end,
            deepest: depth,
            charged,
            reach,
            handover,
        }) = elements.filter(|e| open.len() + e.deepest <= MAX_DEPTH && !e.values.is_empty())
        else {
            meter::put_back(ahead.prepaid);
            return None;
        };
        meter::take_over(handover);
        meter::put_back(ahead.prepaid.saturating_sub(charged));
        #[cfg(test)]
        tests::ADOPTED.with(|n| n.set(n.get() + 1));
        *deepest = (*deepest).max(open.len() + depth);
        let last = values.pop()?;
        // the elements move to the stack, which grows (and is charged) as it
        // would have reading them here
        meter::refund(cost::slots(values.capacity()));
        self.grow_stack(stack, stack.len() + reach);
        for v in values.drain(..) {
            self.push(stack, v);
        }
        self.i = end;
        Some(last)
    }

    /// Charges `bytes` (with what is pending) before a container is allocated.
    fn charge(&mut self, bytes: usize) {
        self.pending = self.pending.saturating_add(bytes);
        if self.pending >= PENDING_BYTES {
            self.flush();
        }
    }

    /// One complete value, read iteratively.
    fn value(&mut self) -> Result<Value, Failure> {
        let (v, deepest) = self.value_raw(&mut Vec::new())?;
        Ok(Value::parsed(v, deepest))
    }

    /// One complete value and its nesting depth, read iteratively.
    ///
    /// The items of all open containers wait on `stack`, after what it holds
    /// (which they leave as it was); a container is allocated at its exact size
    /// when it closes, after its memory is charged.
    fn value_raw(&mut self, stack: &mut Vec<Val>) -> Result<(Val, usize), Failure> {
        let mut open: Vec<Frame> = Vec::new();
        let mut deepest = 0;
        loop {
            self.started = self.started.wrapping_add(1);
            if self.started.is_multiple_of(4096) {
                if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return self.fail("no longer needed");
                }
                self.flush();
                meter::check_time();
            }
            // at the start of a value
            self.skip_ws();
            let adopted = if self.i == self.ahead_at {
                self.adopt(&open, stack, &mut deepest)
            } else {
                None
            };
            let mut v = if let Some(v) = adopted {
                v
            } else {
                match self.peek() {
                    None => return self.fail("EOF while parsing a value"),
                    Some(c @ (b'[' | b'{')) => {
                        if open.len() >= MAX_DEPTH {
                            return self.fail(&format!("nested deeper than {MAX_DEPTH} levels"));
                        }
                        self.i += 1;
                        deepest = deepest.max(open.len() + 1);
                        self.skip_ws();
                        match (c, self.peek()) {
                            (b'[', Some(b']')) => {
                                self.i += 1;
                                self.charge(cost::ARRAY);
                                Val::Arr(Rc::new(Vec::new()))
                            }
                            (b'{', Some(b'}')) => {
                                self.i += 1;
                                self.charge(cost::OBJECT);
                                Val::obj(Map::default())
                            }
                            (b'[', _) => {
                                open.push(Frame {
                                    is_arr: true,
                                    start: stack.len(),
                                });
                                continue;
                            }
                            _ => {
                                open.push(Frame {
                                    is_arr: false,
                                    start: stack.len(),
                                });
                                let key = self.key()?;
                                self.push(stack, key);
                                continue;
                            }
                        }
                    }
                    Some(b'"') => self.string()?,
                    Some(b'-' | b'0'..=b'9') => self.number()?,
                    Some(b't') => self.literal(b"true", Val::Bool(true))?,
                    Some(b'f') => self.literal(b"false", Val::Bool(false))?,
                    Some(b'n') => self.literal(b"null", Val::Null)?,
                    Some(_) => return self.fail("expected value"),
                }
            };
            // a value is complete: store it, closing the containers it completes
            loop {
                let Some(frame) = open.last() else {
                    self.flush();
                    return Ok((v, deepest));
                };
                let is_arr = frame.is_arr;
                self.push(stack, v);
                self.skip_ws();
                match (self.peek(), is_arr) {
                    (Some(b','), _) => {
                        self.i += 1;
                        if !is_arr {
                            let key = self.key()?;
                            self.push(stack, key);
                        }
                        break;
                    }
                    (Some(b']'), true) | (Some(b'}'), false) => {
                        self.i += 1;
                        let start = open.pop().map_or(0, |f| f.start);
                        v = if is_arr {
                            self.close_array(stack, start)
                        } else {
                            self.close_object(stack, start)
                        };
                    }
                    (None, true) => return self.fail("EOF while parsing a list"),
                    (None, false) => return self.fail("EOF while parsing an object"),
                    (Some(_), true) => return self.fail("expected `,` or `]`"),
                    (Some(_), false) => return self.fail("expected `,` or `}`"),
                }
            }
        }
    }

    /// Puts a value on the stack, charging the stack's growth first.
    fn push(&mut self, stack: &mut Vec<Val>, v: Val) {
        self.grow_stack(stack, stack.len() + 1);
        stack.push(v);
        self.stack_peak = self.stack_peak.max(stack.len());
    }

    /// Grows the stack, as pushing grows it (doubling, charged first), until
    /// it can hold `items`.
    fn grow_stack(&mut self, stack: &mut Vec<Val>, items: usize) {
        while stack.capacity() < items {
            let cap = stack.capacity();
            let grown = (2 * cap).max(16);
            self.pending += cost::slots(grown) - cost::slots(cap);
            self.flush();
            stack.reserve_exact(grown - cap);
        }
    }

    /// The array of the stack's values from `start` on.
    fn close_array(&mut self, stack: &mut Vec<Val>, start: usize) -> Val {
        let n = stack.len() - start;
        if start == 0 {
            // the outermost container: the stack itself (its slots are charged) becomes the array
            self.charge(cost::ARRAY);
            return Val::Arr(Rc::new(core::mem::take(stack)));
        }
        self.charge(cost::array(n));
        Val::Arr(Rc::new(stack.drain(start..).collect()))
    }

    /// The object of the stack's keys and values from `start` on.
    fn close_object(&mut self, stack: &mut Vec<Val>, start: usize) -> Val {
        let n = (stack.len() - start) / 2;
        self.charge(cost::object(n));
        let mut map = Map::with_capacity_and_hasher(n, Default::default());
        let mut items = stack.drain(start..);
        while let (Some(k), Some(v)) = (items.next(), items.next()) {
            map.insert(k, v);
        }
        Val::obj(map)
    }

    /// An object key and the colon after it.
    /// An object key and its `:`. A key without escapes that an earlier key
    /// of this reader had too shares that key's bytes (the same place in the
    /// text), so that records of one layout have the same key bytes and a
    /// query finding a field compares addresses, not text (see
    /// `valt::index_ref`); it is charged as any string.
    fn key(&mut self) -> Result<Val, Failure> {
        self.skip_ws();
        let key = match self.peek() {
            Some(b'"') => match self.shared_key() {
                Some(key) => key,
                None => self.string()?,
            },
            None => return self.fail("EOF while parsing an object"),
            Some(_) => return self.fail("key must be a string"),
        };
        self.skip_ws();
        match self.peek() {
            Some(b':') => {
                self.i += 1;
                Ok(key)
            }
            None => self.fail("EOF while parsing an object"),
            Some(_) => self.fail("expected `:`"),
        }
    }

    /// The key string at the reader (after its `"`), when it has no escape
    /// and is short: the bytes of an equal key read before, or its own
    /// (then kept for the next equal keys, see [`KeyTable`]). `None` for others
    /// ([`Reader::string`]).
    fn shared_key(&mut self) -> Option<Val> {
        let text = &self.s[self.i + 1..];
        let run = text
            .iter()
            .take(LONGEST_SHARED_KEY + 1)
            .position(|b| *b == b'"' || *b == b'\\' || *b < 0x20)?;
        if text[run] != b'"' {
            return None;
        }
        let (buf, start) = (self.buf, self.i + 1);
        let key = self
            .keys
            .share(&text[..run], || buf.slice(start..start + run));
        self.i += run + 2;
        self.charge(cost::STRING);
        Some(Val::utf8_str(key))
    }

    fn literal(&mut self, word: &[u8], v: Val) -> Result<Val, Failure> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            if !self.at_value_end() {
                return self.fail("invalid literal");
            }
            Ok(v)
        } else {
            self.fail("expected value")
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    /// Checks the number grammar; returns whether the number is an integer.
    fn number_end(&mut self) -> Result<bool, Failure> {
        let mut int = true;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.fail("invalid number"),
        }
        if self.peek() == Some(b'.') {
            int = false;
            self.i += 1;
            if self.digits() == 0 {
                return self.fail("invalid number");
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            int = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.fail("invalid number");
            }
        }
        if !self.at_value_end() {
            return self.fail("invalid number");
        }
        Ok(int)
    }

    /// Whether a number or literal may end here: at the end, before white space or a
    /// delimiter (`2-3` and `true1` are one invalid token, as in jq and serde_json, not
    /// two values).
    fn at_value_end(&self) -> bool {
        matches!(
            self.peek(),
            None | Some(
                b' ' | b'\t' | b'\n' | b'\r' | b'"' | b':' | b',' | b']' | b'}' | b'[' | b'{'
            )
        )
    }

    /// A number: machine or big integer, else its literal text (as jaq-json).
    fn number(&mut self) -> Result<Val, Failure> {
        let start = self.i;
        let int = self.number_end()?;
        let text = &self.s[start..self.i];
        if int && text.len() <= 18 {
            let (neg, digits) = match text.split_first() {
                Some((b'-', rest)) => (true, rest),
                _ => (false, text),
            };
            let n = digits
                .iter()
                .fold(0isize, |n, d| n * 10 + isize::from(d - b'0'));
            return Ok(Val::Num(Num::Int(if neg { -n } else { n })));
        }
        // only ASCII digits, signs, dots and exponents remain here
        let text = std::str::from_utf8(text).unwrap_or("0");
        let v = if int && text.len() > MAX_INT_DIGITS {
            // reading a big integer takes time quadratic in its length: keep the literal
            Val::Num(Num::Dec(Rc::new(text.to_string())))
        } else {
            <Val as jaq_core::ValT>::from_num(text).unwrap_or(Val::Null)
        };
        if let Val::Num(n) = &v {
            self.charge(cost::number(n));
        }
        Ok(v)
    }

    fn hex4(&mut self) -> Result<u32, Failure> {
        let digits = self.s.get(self.i..self.i + 4).unwrap_or_default();
        if digits.len() == 4 && digits.iter().all(u8::is_ascii_hexdigit) {
            self.i += 4;
            let hex = |d: &u8| char::from(*d).to_digit(16).unwrap_or(0);
            Ok(digits.iter().fold(0, |n, d| n * 16 + hex(d)))
        } else {
            self.fail("invalid \\u escape")
        }
    }

    /// A string; without escapes it shares the document's bytes.
    fn string(&mut self) -> Result<Val, Failure> {
        let start = self.i;
        self.i += 1;
        let special = |b: &u8| *b == b'"' || *b == b'\\' || *b < 0x20;
        let run = self.s[self.i..].iter().position(special);
        let Some(run) = run else {
            return Err((start, "EOF while parsing a string".into()));
        };
        if self.s[self.i + run] == b'"' {
            let text = self.buf.slice(self.i..self.i + run);
            self.i += run + 1;
            self.charge(cost::STRING);
            return Ok(Val::utf8_str(text));
        }
        let mut out = self.s[self.i..self.i + run].to_vec();
        self.i += run;
        loop {
            match self.peek() {
                None => return Err((start, "EOF while parsing a string".into())),
                Some(b'"') => {
                    self.i += 1;
                    out.shrink_to_fit();
                    self.charge(cost::string(out.len()));
                    return Ok(Val::utf8_str(out));
                }
                Some(0x00..=0x1f) => {
                    return self
                        .fail("control character (\\u0000-\\u001F) found while parsing a string")
                }
                Some(b'\\') => {
                    self.i += 1;
                    let simple = match self.peek() {
                        Some(b'"') => Some('"'),
                        Some(b'\\') => Some('\\'),
                        Some(b'/') => Some('/'),
                        Some(b'b') => Some('\u{8}'),
                        Some(b'f') => Some('\u{c}'),
                        Some(b'n') => Some('\n'),
                        Some(b'r') => Some('\r'),
                        Some(b't') => Some('\t'),
                        Some(b'u') => None,
                        _ => return self.fail("invalid escape"),
                    };
                    self.i += 1;
                    let c = match simple {
                        Some(c) => c,
                        None => self.unicode_escape()?,
                    };
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                Some(_) => {
                    let run = self.s[self.i..]
                        .iter()
                        .position(special)
                        .unwrap_or(self.s.len() - self.i);
                    out.extend_from_slice(&self.s[self.i..self.i + run]);
                    self.i += run;
                }
            }
        }
    }

    /// The character of a `\uXXXX` escape (with its low surrogate, if any).
    fn unicode_escape(&mut self) -> Result<char, Failure> {
        let unit = self.hex4()?;
        if (0xDC00..=0xDFFF).contains(&unit) {
            return self.fail("lone surrogate in \\u escape");
        }
        let code = if (0xD800..=0xDBFF).contains(&unit) {
            if !self.s[self.i..].starts_with(b"\\u") {
                return self.fail("lone surrogate in \\u escape");
            }
            self.i += 2;
            let low = self.hex4()?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return self.fail("lone surrogate in \\u escape");
            }
            0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
        } else {
            unit
        };
        match char::from_u32(code) {
            Some(c) => Ok(c),
            None => self.fail("invalid \\u escape"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Readings on this thread that took a second thread's elements.
        pub(super) static ADOPTED: Cell<usize> = const { Cell::new(0) };
    }

    fn read(doc: &str) -> Result<Vec<String>, Failure> {
        let buf = Bytes::copy_from_slice(doc.as_bytes());
        let values = read_all(&buf)?;
        Ok(values.iter().map(|v| format!("{}:{v}", v.depth)).collect())
    }

    #[test]
    fn reads_json_and_streams() {
        let doc = " {\"a\": [1, 2.50e-3, \"x\\u00e9\\ud83d\\ude00\\n\", -0, 123456789012345678901234567890]} 3 null";
        let want = [
            "2:{\"a\":[1,2.50e-3,\"xé😀\\n\",0,123456789012345678901234567890]}",
            "0:3",
            "0:null",
        ];
        assert_eq!(read(doc), Ok(want.map(String::from).to_vec()));
        assert_eq!(read("[[[]],{}]"), Ok(vec!["3:[[[]],{}]".to_string()]));
        assert_eq!(
            read("{\"a\":1,\"b\":2,\"a\":3}"),
            Ok(vec!["1:{\"a\":3,\"b\":2}".to_string()])
        );
        assert_eq!(
            read("\"a\\\"b\\\\c\\/d\\te\""),
            Ok(vec!["0:\"a\\\"b\\\\c/d\\te\"".to_string()])
        );
        assert!(is_json_number(b"-0.5E+10"));
        assert!(!is_json_number(b"01.5"));
    }

    #[test]
    fn refuses_non_json() {
        let fails = |d: &str| read(d).err().unwrap_or_default().1;
        assert_eq!(fails("[1,]"), "expected value");
        assert_eq!(fails("{\"a\" 1}"), "expected `:`");
        assert_eq!(fails("[1 2]"), "expected `,` or `]`");
        assert_eq!(fails("{\"a\":1 \"b\":2}"), "expected `,` or `}`");
        assert_eq!(fails("NaN"), "expected value");
        assert_eq!(
            fails("\"a\tb\""),
            "control character (\\u0000-\\u001F) found while parsing a string"
        );
        assert_eq!(fails("[01]"), "invalid number");
        assert_eq!(fails("\"\\ud800\""), "lone surrogate in \\u escape");
        assert_eq!(fails("\"\\x\""), "invalid escape");
        assert_eq!(fails("{1:2}"), "key must be a string");
        assert_eq!(fails("["), "EOF while parsing a value");
        assert_eq!(fails("[1"), "EOF while parsing a list");
        assert_eq!(fails("{\"a\":1"), "EOF while parsing an object");
        assert_eq!(fails("\"abc"), "EOF while parsing a string");
        assert_eq!(fails("tru"), "expected value");
    }

    /// The values (with depths) or the failure of reading `doc` with one thread.
    fn read_alone(doc: &Bytes) -> Result<Vec<String>, Failure> {
        let values = read_values(&mut Reader::new(doc))?;
        Ok(values.iter().map(|v| format!("{}:{v}", v.depth)).collect())
    }

    /// Reads `doc` as `read_all` does and with one thread; both must agree.
    /// Returns whether the second thread's elements were taken.
    fn same_as_alone(doc: &str) -> bool {
        let buf = Bytes::copy_from_slice(doc.as_bytes());
        let before = ADOPTED.with(Cell::get);
        let both = read_all(&buf).map(|v| {
            v.iter()
                .map(|v| format!("{}:{v}", v.depth))
                .collect::<Vec<_>>()
        });
        let adopted = ADOPTED.with(Cell::get) > before;
        assert_eq!(both, read_alone(&buf), "{}…", &doc[..doc.len().min(80)]);
        adopted
    }

    fn objects(n: usize, pretty: bool) -> String {
        let items: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"id": {i}, "name": "user {i}", "tags": ["a", "b"], "ok": true, "x": null}}"#))
            .collect();
        let sep = if pretty { ",\n    " } else { "," };
        format!("{{\"users\": [{}], \"total\": {n}}}", items.join(sep))
    }

    #[test]
    fn two_threads_read_what_one_reads() {
        let big = objects(30_000, true);
        assert!(big.len() > SPLIT_MIN_BYTES);
        assert!(
            same_as_alone(&big),
            "the second thread's elements are taken"
        );
        assert!(same_as_alone(&objects(30_000, false)));
        let numbers: Vec<String> = (0..300_000u64)
            .map(|i| (i * 7919 % 1000).to_string())
            .collect();
        assert!(same_as_alone(&format!("[{}]", numbers.join(","))));
        let nested = format!(
            "[{}]",
            vec!["[[10,[\"two\"]],{\"a\":[3,4,5],\"b\":{\"c\":\"d\"}}]"; 40_000].join(",")
        );
        assert!(same_as_alone(&nested));
        let empties = format!("[{}]", vec!["[{}]"; 300_000].join(","));
        assert!(same_as_alone(&empties));
        // several values in a stream; the middle in the second
        let stream = format!("{} {} 3", objects(10_000, true), objects(20_000, false));
        same_as_alone(&stream);
    }

    #[test]
    fn guesses_inside_strings_and_objects_are_not_taken() {
        // the middle is inside one long string full of `, {` and `, 1`
        let trap = format!("[\"{}\", 1, 2]", ", {\"a\": [1, 2]}, 3, [4]".repeat(60_000));
        assert!(!same_as_alone(&trap));
        // the middle is inside an object's values: `, ` is followed by keys only,
        // except inside the arrays held by its values, which close early
        let mut fields: Vec<String> = (0..40_000)
            .map(|i| format!("\"k{i}\": [{i}, {{\"v\": {i}}}]"))
            .collect();
        fields.push("\"end\": 0".into());
        same_as_alone(&format!("{{{}}}", fields.join(", ")));
        // elements that do not end their array where the second thread expects
        let mixed = format!("[{}, \"tail\"]", vec!["{\"a\": 1}"; 200_000].join(", "));
        assert!(same_as_alone(&mixed));
    }

    #[test]
    fn failures_and_depth_are_those_of_one_thread() {
        let big = objects(30_000, true);
        let half = big.len() / 2;
        // an error in the second thread's part, in the first's, and at the end
        let late = format!(
            "{}{}",
            &big[..half + 40_000],
            big[half + 40_000..].replacen("true", "tru", 1)
        );
        let early = big.replacen("\"user 5\"", "\"user\u{1} 5\"", 1);
        let cut = &big[..big.len() - 3];
        for doc in [&late, &early, &cut.to_string()] {
            let buf = Bytes::copy_from_slice(doc.as_bytes());
            let alone = read_alone(&buf);
            assert!(alone.is_err());
            assert_eq!(read_all(&buf).map(|_| ()), alone.map(|_| ()));
        }
        // an element in the second thread's part nested to the depth limit,
        // and one level deeper (which the second thread alone could read)
        for extra in [0, 1] {
            let depth = MAX_DEPTH - 1 + extra;
            let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            let doc = format!("[{}, {deep}, 1]", vec!["0"; 500_000].join(", "));
            let buf = Bytes::copy_from_slice(doc.as_bytes());
            let alone = read_alone(&buf).map(|v| v.len());
            assert_eq!(alone.is_ok(), extra == 0);
            let before = ADOPTED.with(Cell::get);
            assert_eq!(read_all(&buf).map(|v| v.len()), alone);
            assert_eq!(ADOPTED.with(Cell::get) > before, extra == 0);
        }
    }

    /// Reads with `read` under a memory budget of `memory` bytes: the number
    /// of values and the bytes charged, or `None` when the budget was exceeded.
    fn within(
        memory: usize,
        read: impl FnOnce() -> Result<Vec<Value>, Failure>,
    ) -> Option<(usize, usize)> {
        // a budget of the query's own only: the shared budget's tests run
        // alongside and count on having it to themselves
        meter::install_helper(None, memory, false);
        let outcome = catch_unwind(AssertUnwindSafe(read));
        let tripped = meter::tripped();
        let charged = memory - meter::memory_left();
        meter::release();
        match outcome {
            Ok(values) => Some((values.map(|v| v.len()).unwrap_or(0), charged)),
            Err(_) => {
                assert_eq!(tripped, Some(meter::Limit::Memory));
                None
            }
        }
    }

    /// Two threads read a document within exactly the smallest budget one
    /// thread needs, and not within one byte less.
    #[test]
    fn two_threads_need_the_memory_one_needs() {
        let numbers = |n: usize| vec!["1234"; n].join(",");
        let heavy = |n: usize| vec!["[{}]"; n].join(",");
        let docs = [
            objects(30_000, true),
            // most of the memory before the middle: the first thread takes back
            // what it charged for the second
            format!("[{},{}]", heavy(200_000), numbers(100_000)),
            // most after: the second thread runs out (it may charge half of the
            // budget) and the first reads it all
            format!("[{},{}]", numbers(250_000), heavy(150_000)),
            // the items of the last element take the first thread's stack past
            // a doubling (2^17 items) while it is read
            format!("[{}[0,0]]", "12345678,".repeat((1 << 17) - 1)),
        ];
        for doc in &docs {
            let buf = Bytes::copy_from_slice(doc.as_bytes());
            let alone = || read_values(&mut Reader::new(&buf));
            let (mut low, mut high) = (0usize, 1 << 30);
            assert!(within(high, alone).is_some());
            while high - low > 1 {
                let mid = low + (high - low) / 2;
                match within(mid, alone) {
                    Some(_) => high = mid,
                    None => low = mid,
                }
            }
            assert_eq!(
                within(high, || read_all(&buf)),
                within(high, alone),
                "{}…",
                &doc[..40]
            );
            assert_eq!(within(high - 1, || read_all(&buf)), None, "{}…", &doc[..40]);
            // with room to spare, the second thread's elements are taken and
            // the query is charged what one thread is charged
            let before = ADOPTED.with(Cell::get);
            assert_eq!(within(1 << 30, || read_all(&buf)), within(1 << 30, alone));
            assert!(ADOPTED.with(Cell::get) > before, "{}…", &doc[..40]);
        }
    }

    #[test]
    fn positions() {
        assert_eq!(line_column(b"[\n 1,\n  x]", 8), (3, 3));
        assert_eq!(line_column(b"[x]", 1), (1, 2));
    }
}
