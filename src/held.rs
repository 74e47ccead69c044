//! What V8 is told about the native memory a storage holds.
//!
//! A storage's content lives outside the JavaScript heap, so V8 does not see it: a
//! dropped storage is freed only when V8's next full collection finds its handle
//! unreachable, and V8 schedules those by its own heap's growth alone. An agent made
//! per request, each offloading into its own memory storage, left hundreds of
//! megabytes of dropped content mapped that way. Reporting the bytes held as external
//! memory (`napi_adjust_external_memory`) lets V8 collect as it does for the
//! `ArrayBuffer`s of a JavaScript storage.
//!
//! A store reports what it holds after every change made on the JavaScript thread and
//! when a worker's store, removal or retrieve settles. Searches and extended answers,
//! which remove an expired block they read on a search thread, do not: the store's next
//! report (or its finalization) catches up: the account is what the store held at its
//! last report.

use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

use napi::Env;
use napi_derive::napi;

/// Bytes accounted by every memory store of the process, not yet withdrawn.
static REPORTED: AtomicI64 = AtomicI64::new(0);

/// The bytes of content the process's memory storages account for as external memory
/// (V8 is told in steps of [`TELL_EVERY`]; Node 22's `process.memoryUsage().external`
/// does not show it): a diagnostic.
#[napi(catch_unwind)]
pub fn held_memory_reported() -> f64 {
  REPORTED.load(Ordering::Relaxed) as f64
}

/// V8 is told once what it was not told adds up to this many bytes, either way (V8
/// collects on account of external memory once it grew by tens of megabytes). Each
/// call costs more than the accounting: while V8 marks, a call past its limit runs a
/// marking step of up to milliseconds inside the store. Told every 256 KiB, offloads
/// of 100 KB ran at 0.47–0.96x the SDK's speed in the bench instead of 0.86–1.33x.
const TELL_EVERY: i64 = 4 * 1024 * 1024;

thread_local! {
  /// Bytes accounted on this thread that its V8 isolate was not told of yet (each
  /// JavaScript thread, the main one or a worker's, has its own isolate).
  static UNTOLD: Cell<i64> = const { Cell::new(0) };
}

/// Accounts `delta` more (or fewer) bytes of external memory, and tells V8 once they
/// add up to [`TELL_EVERY`].
fn adjust(env: &Env, delta: i64) {
  if delta == 0 {
    return;
  }
  REPORTED.fetch_add(delta, Ordering::Relaxed);
  let untold = UNTOLD.with(|untold| {
    let sum = untold.get().saturating_add(delta);
    let tell = sum.unsigned_abs() >= TELL_EVERY.unsigned_abs();
    untold.set(if tell { 0 } else { sum });
    if tell { sum } else { 0 }
  });
  if untold != 0 {
    // A failure only leaves V8's estimate as it was.
    let _ = env.adjust_external_memory(untold);
  }
}

/// The bytes accounted as external memory for one memory store, shared by all its
/// handles (the store's own and its tagged views): accounted once, withdrawn when the
/// last handle is finalized. Only touched on the JavaScript thread; atomics make it
/// `Send` for the closures that run there after a worker's store.
#[derive(Debug)]
pub(crate) struct HeldMemory {
  /// Bytes accounted for the store, as it held them at its last report.
  reported: AtomicI64,
  /// Handles not yet finalized.
  handles: AtomicUsize,
}

impl HeldMemory {
  /// The account of a new store, for its first handle.
  pub(crate) fn new() -> Arc<Self> {
    Arc::new(Self { reported: AtomicI64::new(0), handles: AtomicUsize::new(1) })
  }

  /// The account for one more handle on the same store.
  pub(crate) fn share(self: &Arc<Self>) -> Arc<Self> {
    self.handles.fetch_add(1, Ordering::Relaxed);
    Arc::clone(self)
  }

  /// Accounts that the store holds `held` bytes now (the difference from its last
  /// report; V8 hears of it in steps, see [`TELL_EVERY`]). Nothing once every handle is
  /// finalized: a worker's store that settles after that must not account memory
  /// nobody withdraws.
  pub(crate) fn report(&self, env: &Env, held: u64) {
    if self.handles.load(Ordering::Relaxed) == 0 {
      return;
    }
    let held = i64::try_from(held).unwrap_or(i64::MAX);
    adjust(env, held.saturating_sub(self.reported.swap(held, Ordering::Relaxed)));
  }

  /// One handle finalized: the last one withdraws what the store accounted.
  pub(crate) fn release(&self, env: &Env) {
    if self.handles.fetch_sub(1, Ordering::Relaxed) != 1 {
      return;
    }
    adjust(env, -self.reported.swap(0, Ordering::Relaxed));
  }
}
