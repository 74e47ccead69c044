//! [`ParsedDocument`]: a document read once and queried many times.
//!
//! A query that is allowed to keep its document ([`crate::run_query_keeping`])
//! hands it back once it is read. The document then holds its own share of
//! the shared memory budget (what reading it was charged: its text buffer and
//! its values), split off from the share of the query that read it, and gives
//! it back only when it is dropped: whoever keeps documents (a cache) keeps
//! them inside the budget all queries share.
//!
//! A kept document is never changed: its arrays and objects are shared by
//! reference count, and a query that updates a part of it copies that part
//! first (and is charged for the copy, as for any shared value).

use crate::shared_budget::Reservation;
use crate::value::Value;
use core::fmt;

/// A JSON document read into values, ready to be queried again with
/// [`crate::run_query_parsed`]. Cheap to share between threads (in an `Arc`).
pub struct ParsedDocument {
    /// The top-level values, in order.
    values: Vec<Value>,
    /// Bytes charged for reading it: its text buffer and its values.
    bytes: usize,
    /// Its share of the shared memory budget; given back after the values are dropped.
    reservation: Reservation,
}

impl ParsedDocument {
    /// A document of `values`, charged `bytes`, holding `reservation`.
    pub(crate) fn new(values: Vec<Value>, bytes: usize, reservation: Reservation) -> Self {
        ParsedDocument {
            values,
            bytes,
            reservation,
        }
    }

    /// The top-level values.
    pub(crate) fn values(&self) -> &[Value] {
        &self.values
    }

    /// Bytes of memory the document holds as charged when it was read (its
    /// text buffer and its values, see the crate docs on memory); the same
    /// bytes stay reserved in the shared budget until it is dropped.
    #[must_use]
    pub fn charged_bytes(&self) -> usize {
        self.bytes
    }

    /// Number of top-level JSON values.
    #[must_use]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there is no value (never for a document that was read).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Stack of the thread that drops a kept document: dropping recurses once
/// per nesting level (at most [`crate::MAX_DEPTH`]), which must not depend on
/// the stack of whichever thread lets the document go.
const DROP_STACK: usize = 32 << 20;

/// What is left of a document being dropped: the values first, then the share
/// of the shared budget (fields drop in this order).
struct Remains {
    _values: Vec<Value>,
    reservation: Reservation,
}

impl Drop for ParsedDocument {
    fn drop(&mut self) {
        let mut remains = Remains {
            _values: core::mem::take(&mut self.values),
            reservation: core::mem::take(&mut self.reservation),
        };
        if remains.reservation.bytes() == 0 {
            // not kept: dropped by the query's own thread, which holds its share
            return;
        }
        // queries waiting for shared memory may wait for this document's share
        remains.reservation.start_release();
        // A kept document goes when a cache lets it go, on whatever thread that
        // happens (a JavaScript thread removing an artifact): it is dropped on a
        // thread of its own, and its share given back once it is gone. Should
        // no thread start, the closure and the document are dropped here.
        let _ = std::thread::Builder::new()
            .name("offload-query-drop".into())
            .stack_size(DROP_STACK)
            .spawn(move || drop(remains));
    }
}

impl fmt::Debug for ParsedDocument {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("ParsedDocument")
            .field("values", &self.values.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}
