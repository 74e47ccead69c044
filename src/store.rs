//! `NativeStore`: one JavaScript-facing class over the core's storage backends.
//!
//! Every operation that touches content (encoding, copying, file I/O, search) runs
//! as an `AsyncTask` on the libuv worker pool, so the event loop only pays for
//! converting small arguments.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_search::{search_file, search_file_once, search_memory, PreparedCache};
use offload_storage::{Blob, BlobStore, FileStore, Lifecycle, MemoryStore, NewBlob, ReferenceStyle, Tags};

use crate::drops::drop_in_background;
use crate::error::to_js_error;
use crate::held::HeldMemory;
use crate::lifecycle::whole;
use crate::search::{outcome, retrieval_query, run_search, SearchOutcome, SearchQuery};
use crate::offload::EncodedText;
use crate::task::{on_worker, on_worker_then, Settled, Work};
use crate::text::{NativeText, PendingText, StringArg, Utf16Slice};

/// Largest file written on the JavaScript thread instead of a worker: small
/// writes cost less than the round trip to the worker pool.
const INLINE_WRITE_LIMIT: usize = 64 * 1024;

/// Largest block copied into memory on the JavaScript thread (about 0.1 ms).
const INLINE_COPY_LIMIT: usize = 1024 * 1024;

/// Longest text (UTF-16 units) encoded as UTF-8 on the JavaScript thread to be
/// stored in memory right away, whatever its script (about 0.1 ms): cheaper than a
/// round trip to a worker thread.
const INLINE_ENCODE_UNITS: usize = 128 * 1024;
/// Longest text (UTF-16 units) encoded on the JavaScript thread when it is mostly ASCII
/// (see [`mostly_ascii`]): the SIMD encoder's ASCII runs take well under a millisecond
/// for a megabyte, less than a worker's round trip (whose wake-ups cost as much again on
/// a busy machine). Texts of CJK, emoji or dense accents take several milliseconds
/// here: they go to a worker.
const INLINE_MOSTLY_ASCII_UNITS: usize = 1024 * 1024;

/// Whether `utf8_len` bytes for `units` UTF-16 units mean mostly ASCII: at most one
/// extra byte per 16 units.
fn mostly_ascii(units: usize, utf8_len: usize) -> bool {
  utf8_len <= units + units / 16
}
/// Longest ASCII text stored into memory on the JavaScript thread (no encoding: its bytes
/// are moved, or copied once when it came in several slices, well under a millisecond).
const INLINE_ASCII_UNITS: usize = 4 * 1024 * 1024;

/// The backend a [`NativeStore`] wraps.
#[derive(Clone)]
pub(crate) enum Backend {
  Memory(Arc<MemoryStore>),
  File(Arc<FileStore>),
}

impl Backend {
  /// Whether freeing this backend (were it the last handle) may take long: an open
  /// directory (its catalog), or a memory store holding many or large blocks.
  fn costly_to_free(&self) -> bool {
    match self {
      Backend::Memory(m) => m.len() > 64 || m.total_bytes() > crate::drops::BACKGROUND_FREE_BYTES as u64,
      Backend::File(f) => f.is_open(),
    }
  }

  fn next_sequence(&self) -> u64 {
    match self {
      Backend::Memory(m) => m.next_sequence(),
      Backend::File(f) => f.next_sequence(),
    }
  }

  fn store(&self, blob: NewBlob<'_>, style: ReferenceStyle) -> Result<String> {
    match self {
      Backend::Memory(m) => m.store_blob(blob),
      Backend::File(f) => f.store_blob_with_style(blob, style),
    }
    .map_err(to_js_error)
  }

  fn retrieve_at(&self, reference: &str, now_ms: u64) -> Result<Blob> {
    self.lifecycle().retrieve_at(reference, now_ms).map_err(to_js_error)
  }

  /// The backend's lifecycle (expiry, sessions, budget, stats).
  pub(crate) fn lifecycle(&self) -> &dyn Lifecycle {
    match self {
      Backend::Memory(m) => m.as_ref(),
      Backend::File(f) => f.as_ref(),
    }
  }

  fn memory(&self) -> Result<&MemoryStore> {
    match self {
      Backend::Memory(m) => Ok(m),
      Backend::File(_) => Err(Error::new(Status::InvalidArg, "operation is only available on in-memory storage")),
    }
  }
}

/// Converts an optional JavaScript cycle count (`null` = never) to the core's form.
fn cycles(value: Option<f64>) -> Result<Option<u64>> {
  match value {
    None => Ok(None),
    Some(v) if v.is_finite() && v >= 1.0 && v.fract() == 0.0 => Ok(Some(v as u64)),
    Some(v) => Err(Error::new(Status::InvalidArg, format!("evictAfter must be a positive integer or null, got {v}"))),
  }
}

/// Internal, for the tests: sets how long an inline file write may take before small
/// file writes go to a worker for a second (default 1,000 µs; 0 counts every inline
/// write as slow).
#[napi(catch_unwind)]
pub fn set_slow_inline_write_micros(micros: u32) {
  SLOW_INLINE_WRITE_MICROS.store(u64::from(micros), Ordering::Relaxed);
}

/// A storage backend living in native memory or on disk.
#[napi(custom_finalize)]
pub struct NativeStore {
  pub(crate) backend: Backend,
  /// Session and lifetime given to what this handle stores, and the clock.
  pub(crate) stamp: Stamp,
  /// What the store accounts as external memory for V8 (shared by its handles).
  pub(crate) held: Arc<HeldMemory>,
}

impl ObjectFinalize for NativeStore {
  /// The last handle of a memory store withdraws what it accounted as external
  /// memory; the backend is then dropped (see [`Drop`]).
  fn finalize(self, env: Env) -> Result<()> {
    self.held.release(&env);
    Ok(())
  }
}

impl Drop for NativeStore {
  /// Runs from the handle's finalizer, on the JavaScript thread: a backend that may
  /// take long to free is freed on a background thread (see `crate::drops`).
  fn drop(&mut self) {
    let placeholder = Backend::Memory(Arc::clone(&FREED));
    free_off_thread(std::mem::replace(&mut self.backend, placeholder));
  }
}

/// Drops `backend` here, or on a background thread when freeing it may take long (when
/// this was its last handle).
fn free_off_thread(backend: Backend) {
  if backend.costly_to_free() {
    drop_in_background(backend);
  }
}

/// What a dropped handle holds instead of its backend (never used).
static FREED: LazyLock<Arc<MemoryStore>> = LazyLock::new(|| Arc::new(MemoryStore::default()));

/// What a [`NativeStore`] handle adds to each store: a session, a lifetime, and
/// the time (a clock shared by every handle of one storage).
#[derive(Clone, Default)]
pub(crate) struct Stamp {
  pub(crate) session: Option<Arc<str>>,
  pub(crate) ttl_ms: Option<u64>,
  /// Milliseconds since the epoch set by the caller's clock; 0: the system clock.
  pub(crate) clock: Arc<AtomicU64>,
}

impl Stamp {
  /// The time now, by the storage's clock.
  pub(crate) fn now(&self) -> u64 {
    match self.clock.load(Ordering::Relaxed) {
      0 => offload_storage::lifecycle::system_now_ms(),
      set => set,
    }
  }

  /// The tags of a store made at `now_ms`.
  pub(crate) fn tags_at(&self, now_ms: u64) -> Tags<'_> {
    Tags { session: self.session.as_deref(), ttl_ms: self.ttl_ms, now_ms: Some(now_ms) }
  }
}

/// What a store resolves with.
#[napi(object)]
pub struct StoreOutcome {
  /// The reference to hand back to the model.
  pub reference: String,
  /// Number of bytes stored (UTF-8 bytes for text).
  pub byte_length: f64,
}

/// What an inline text store (`storeLatin1Now`, `storeUtf16Now`) returns: the stored
/// UTF-8 length in decimal, a colon, then the reference (`"10240:mem_1_tooluse_0"`).
///
/// One string rather than a [`StoreOutcome`] object: V8 forgets the hidden classes of
/// objects built through Node-API once none is alive, so the first store after a full
/// garbage collection would build them again (tens of microseconds, more than the store
/// itself). The length comes first and holds no colon, so the reference needs no escaping.
fn inline_outcome(byte_length: usize, reference: &str) -> String {
  format!("{byte_length}:{reference}")
}

/// What a retrieve resolves with.
#[napi(object)]
pub struct RetrieveOutcome {
  /// The stored bytes (a copy the caller owns).
  pub content: Buffer,
  /// The content type recorded at store time.
  pub content_type: String,
}

/// Content handed to a store task.
enum Payload {
  Text(PendingText),
  Bytes(Uint8Array),
  /// Text already encoded as UTF-8 in native memory (shared, not copied).
  Encoded(Bytes),
}

/// An inline file write slower than this many microseconds means a busy disk (see
/// [`INLINE_PAUSE_MS`]); 1 ms unless the tests change it.
static SLOW_INLINE_WRITE_MICROS: AtomicU64 = AtomicU64::new(1_000);

/// For how long, after one slow inline file write, small file writes go to a worker
/// thread instead: a busy disk must not hold the event loop store after store.
const INLINE_PAUSE_MS: u64 = 1_000;

/// The start of the process's clock for [`INLINE_FILES_PAUSED_UNTIL`].
static CLOCK_START: LazyLock<Instant> = LazyLock::new(Instant::now);

/// Until when (ms on [`CLOCK_START`]'s clock) small file writes go to a worker: set
/// by a slow inline write, in any store of the process (they share the disk).
static INLINE_FILES_PAUSED_UNTIL: AtomicU64 = AtomicU64::new(0);

fn clock_ms() -> u64 {
  u64::try_from(CLOCK_START.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Whether small writes to `store` may run on the JavaScript thread: only once
/// its directory is open (opening reads the whole journal), never with fsyncs (a
/// flush takes milliseconds), never under a byte budget (a store then waits for the
/// directory's lock, which another process may hold), and not for a second after an
/// inline write was slow.
pub(crate) fn writes_inline(store: &FileStore) -> bool {
  store.is_open()
    && !store.is_durable()
    && Lifecycle::policy(store).max_bytes.is_none()
    && clock_ms() >= INLINE_FILES_PAUSED_UNTIL.load(Ordering::Relaxed)
}

/// Runs an inline write of `backend`; a file write that took long pauses inline file
/// writes (see [`INLINE_PAUSE_MS`]).
fn timed_inline<T>(backend: &Backend, write: impl FnOnce() -> T) -> T {
  if !matches!(backend, Backend::File(_)) {
    return write();
  }
  let started = Instant::now();
  let written = write();
  if started.elapsed() > Duration::from_micros(SLOW_INLINE_WRITE_MICROS.load(Ordering::Relaxed)) {
    INLINE_FILES_PAUSED_UNTIL.store(clock_ms().saturating_add(INLINE_PAUSE_MS), Ordering::Relaxed);
  }
  written
}

/// `buffer` cut to its first `len` bytes, its spare capacity given back when that is more
/// than an eighth (the stored content keeps its allocation for as long as it is held).
fn fitted(mut buffer: Vec<u8>, len: usize) -> Vec<u8> {
  buffer.truncate(len);
  if buffer.capacity() - len > len / 8 {
    buffer.shrink_to_fit();
  }
  buffer
}

fn style(concatenated: Option<bool>) -> ReferenceStyle {
  if concatenated.unwrap_or(false) {
    ReferenceStyle::Concatenated
  } else {
    ReferenceStyle::Joined
  }
}

impl NativeStore {
  /// Accounts the bytes of content a memory store holds now as external memory (see
  /// `crate::held`).
  pub(crate) fn report_held(&self, env: &Env) {
    if let Backend::Memory(m) = &self.backend {
      self.held.report(env, m.total_bytes());
    }
  }

  /// [`NativeStore::report_held`] for work on a worker thread: run once it settled.
  pub(crate) fn report_held_later(&self) -> Option<Settled> {
    match &self.backend {
      Backend::Memory(m) => {
        let (memory, held) = (Arc::clone(m), Arc::clone(&self.held));
        Some(Box::new(move |env: &Env| held.report(env, memory.total_bytes())))
      }
      Backend::File(_) => None,
    }
  }

  /// A store numbered now (so blocks are numbered in the order they were handed
  /// over, as in the SDK) that runs on a worker thread.
  fn store_task(
    &self,
    key: String,
    payload: Payload,
    content_type: String,
    concatenated: Option<bool>,
  ) -> AsyncTask<Work<StoreOutcome>> {
    let (backend, sequence, style) = (self.backend.clone(), self.backend.next_sequence(), style(concatenated));
    let (stamp, now) = (self.stamp.clone(), self.stamp.now());
    let settled = self.report_held_later();
    on_worker_then(move || {
      let content = match payload {
        Payload::Text(text) => Bytes::from(text.into_utf8()),
        Payload::Bytes(array) => Bytes::copy_from_slice(&array),
        Payload::Encoded(bytes) => bytes,
      };
      let byte_length = content.len() as f64;
      let blob = NewBlob { sequence, key: &key, content, content_type: &content_type, tags: stamp.tags_at(now) };
      let reference = backend.store(blob, style)?;
      Ok(StoreOutcome { reference, byte_length })
    }, settled)
  }

  /// Stores `bytes` on the calling thread.
  fn store_now(&self, key: &str, bytes: Bytes, content_type: &str, concatenated: Option<bool>) -> Result<StoreOutcome> {
    let byte_length = bytes.len() as f64;
    let sequence = self.backend.next_sequence();
    let tags = self.stamp.tags_at(self.stamp.now());
    let blob = NewBlob { sequence, key, content: bytes, content_type, tags };
    let reference = timed_inline(&self.backend, || self.backend.store(blob, style(concatenated)))?;
    Ok(StoreOutcome { reference, byte_length })
  }
}

/// The UTF-8 of a string of characters below U+0100: V8 copies its bytes out as they
/// are, and only characters from U+0080 to U+00FF need encoding here.
fn latin1_to_utf8(text: StringArg) -> Result<Vec<u8>> {
  let mut latin1 = Vec::new();
  text.append_latin1(&mut latin1)?;
  if latin1.is_ascii() {
    return Ok(latin1);
  }
  let mut out = vec![0u8; latin1.len() * 2];
  let written = encoding_rs::mem::convert_latin1_to_utf8(&latin1, &mut out);
  Ok(fitted(out, written))
}

/// The UTF-8 of a string copied out as UTF-16, encoded with a SIMD transcoder.
fn utf16_to_utf8(text: Utf16Slice) -> Vec<u8> {
  let units = text.into_units();
  // At most three UTF-8 bytes per UTF-16 unit (a pair is four bytes for two units).
  let mut utf8 = vec![0u8; units.len() * 3];
  let written = encoding_rs::mem::convert_utf16_to_utf8(&units, &mut utf8);
  fitted(utf8, written)
}

/// Accounts what a memory store holds when dropped (see `crate::held`): at the end of a
/// method that may have changed it, whichever way it returns (not while a panic unwinds).
pub(crate) struct ReportHeld<'a>(pub(crate) &'a NativeStore, pub(crate) &'a Env);

impl Drop for ReportHeld<'_> {
  fn drop(&mut self) {
    if !std::thread::panicking() {
      self.0.report_held(self.1);
    }
  }
}

#[napi]
impl NativeStore {
  /// An in-memory store; `evictAfter` is the number of idle agent cycles before an
  /// entry is dropped (`null` disables eviction).
  #[napi(factory, catch_unwind)]
  pub fn memory(evict_after: Option<f64>) -> Result<Self> {
    let store = MemoryStore::new(cycles(evict_after)?).map_err(to_js_error)?;
    store.set_removal_hook(Some(offload_search::removal_hook()));
    Ok(Self { backend: Backend::Memory(Arc::new(store)), stamp: Stamp::default(), held: HeldMemory::new() })
  }

  /// A store writing one file per block into `dir` (created on first use). With
  /// `keepExpired`, an operator's store: opening the directory and retrieving remove
  /// nothing (an expired artifact is refused but left in place).
  #[napi(factory, catch_unwind)]
  pub fn file(dir: String, durable: Option<bool>, keep_expired: Option<bool>) -> Self {
    let store = FileStore::new(&dir).with_durable(durable.unwrap_or(false));
    let store = if keep_expired.unwrap_or(false) { store.keeping_expired() } else { store };
    store.set_removal_hook(Some(offload_search::removal_hook()));
    Self { backend: Backend::File(Arc::new(store)), stamp: Stamp::default(), held: HeldMemory::new() }
  }

  /// Whether the store is ready for stores that run right away: always for memory;
  /// for files, once the directory is open (its journal read, by the first store).
  #[napi(getter, catch_unwind)]
  pub fn is_open(&self) -> bool {
    match &self.backend {
      Backend::Memory(_) => true,
      Backend::File(f) => f.is_open(),
    }
  }

  /// Opens the directory on a worker thread (reads its journal) unless it is open:
  /// what the first store into it does before writing, so that stores waiting for
  /// the directory can wait for this instead. Resolves with whether the store is open.
  #[napi(ts_return_type = "Promise<boolean>", catch_unwind)]
  pub fn open(&self) -> AsyncTask<Work<bool>> {
    // Opening sweeps what expired: by the storage's clock, read now.
    let (backend, now) = (self.backend.clone(), self.stamp.now());
    on_worker(move || match &backend {
      Backend::Memory(_) => Ok(true),
      Backend::File(f) => {
        f.open_at(now).map_err(to_js_error)?;
        Ok(f.is_open())
      }
    })
  }

  /// A file store on the same directory with its own numbering that shares the
  /// open directory and its content types with this one (an agent's view).
  #[napi(catch_unwind)]
  pub fn view(&self) -> Result<NativeStore> {
    match &self.backend {
      Backend::File(f) => Ok(NativeStore { backend: Backend::File(Arc::new(f.view())), stamp: self.stamp.clone(), held: HeldMemory::new() }),
      Backend::Memory(_) => Err(Error::new(Status::InvalidArg, "only a file store has views")),
    }
  }

  /// Stores text assembled in a [`NativeText`] (the text is moved out of it).
  /// `concatenated` selects the `<dir>/<name>` reference form the plugin uses for files.
  #[napi(ts_return_type = "Promise<StoreOutcome>", catch_unwind)]
  pub fn store_text(
    &self,
    key: String,
    text: &mut NativeText,
    content_type: String,
    concatenated: Option<bool>,
  ) -> AsyncTask<Work<StoreOutcome>> {
    self.store_task(key, Payload::Text(text.take()), content_type, concatenated)
  }

  /// Stores text right away on the JavaScript thread when that is cheap: into memory
  /// up to [`INLINE_ENCODE_UNITS`] (or [`INLINE_MOSTLY_ASCII_UNITS`] of mostly ASCII; encoded here unless it is already UTF-8), or as a
  /// file of at most [`INLINE_WRITE_LIMIT`] UTF-8 bytes into an open directory without
  /// fsync (a few tens of microseconds, less than a round trip to a worker thread).
  /// Returns `null` (and takes nothing) otherwise; then call `storeText`.
  #[napi(catch_unwind)]
  pub fn store_text_now(
    &self,
    env: Env,
    key: String,
    text: &mut NativeText,
    content_type: String,
    concatenated: Option<bool>,
  ) -> Result<Option<StoreOutcome>> {
    let _held = ReportHeld(self, &env);
    // ASCII text goes into memory as its bytes (a move, or one copy joining its slices):
    // cheaper than a round trip to a worker thread up to a few megabytes.
    if matches!(self.backend, Backend::Memory(_)) && text.units() <= INLINE_ASCII_UNITS {
      if let Some(bytes) = text.take_ascii() {
        return self.store_now(&key, Bytes::from(bytes), &content_type, concatenated).map(Some);
      }
    }
    let inline = match &self.backend {
      Backend::Memory(_) => {
        let units = text.units();
        units <= INLINE_ENCODE_UNITS || (units <= INLINE_MOSTLY_ASCII_UNITS && mostly_ascii(units, text.utf8_len()))
      }
      // UTF-8 has at least one byte per UTF-16 unit: the unit count rules out long
      // texts before the exact length is computed.
      Backend::File(f) => writes_inline(f) && text.units() <= INLINE_WRITE_LIMIT && text.utf8_len() <= INLINE_WRITE_LIMIT,
    };
    if !inline {
      return Ok(None);
    }
    let bytes = match text.take_if_utf8() {
      Some(bytes) => bytes,
      None => text.take().into_utf8(),
    };
    self.store_now(&key, Bytes::from(bytes), &content_type, concatenated).map(Some)
  }

  /// Stores a short JavaScript string whose characters are all below U+0100 (the
  /// caller checks) right away on the JavaScript thread when that is cheap: into
  /// memory up to 1 MiB, as a file of at most [`INLINE_WRITE_LIMIT`] bytes into an
  /// open directory without fsync. V8 copies the string's bytes out as they are and
  /// only characters from U+0080 to U+00FF need encoding here: one native call for the
  /// whole store, the cheapest path for the small results most offloads are. Returns
  /// the stored UTF-8 length (which JavaScript would need a pass over the string to
  /// know) and the reference, as one string (see [`inline_outcome`]), or `null` (storing
  /// nothing) when the store cannot run inline; then hand the text over with
  /// [`NativeText`] and call `storeText`.
  #[napi(catch_unwind, ts_args_type = "key: string, text: string, contentType: string, concatenated?: boolean | undefined | null")]
  pub fn store_latin1_now(
    &self,
    env: Env,
    key: String,
    text: StringArg,
    content_type: String,
    concatenated: Option<bool>,
  ) -> Result<Option<String>> {
    let _held = ReportHeld(self, &env);
    self.store_utf8_now(&key, latin1_to_utf8(text)?, &content_type, concatenated)
  }

  /// [`NativeStore::store_latin1_now`] for a string with characters beyond Latin-1:
  /// copied out as UTF-16 (a plain copy) and encoded here with a SIMD transcoder,
  /// faster than V8's two-pass UTF-8 hand-over of such strings.
  #[napi(catch_unwind, ts_args_type = "key: string, text: string, contentType: string, concatenated?: boolean | undefined | null")]
  pub fn store_utf16_now(
    &self,
    env: Env,
    key: String,
    text: Utf16Slice,
    content_type: String,
    concatenated: Option<bool>,
  ) -> Result<Option<String>> {
    let _held = ReportHeld(self, &env);
    self.store_utf8_now(&key, utf16_to_utf8(text), &content_type, concatenated)
  }

  /// In-memory only: takes the next reference number now for a store whose content is
  /// handed over later with `storeLatin1At` or `storeUtf16At`, so that references stay
  /// numbered in the order the stores were made, whatever path each took.
  #[napi(catch_unwind)]
  pub fn reserve_sequence(&self) -> Result<f64> {
    Ok(self.backend.memory()?.next_sequence() as f64)
  }

  /// In-memory only: the store's reference counter as an `ArrayBuffer` of 8 bytes over
  /// its native memory (a little-endian `u64`, the last number taken), so that
  /// JavaScript can take a number without a native call: lent once per store; `null`
  /// after, or where the runtime allows no external buffers (take numbers with
  /// `reserveSequence` then). Numbers of a memory store are only taken on the
  /// JavaScript thread, so a plain increment of the low word is safe there.
  #[napi(catch_unwind, ts_return_type = "ArrayBuffer | null")]
  pub fn sequence_cell<'env>(&self, env: &'env Env) -> Result<Option<ArrayBuffer<'env>>> {
    let Backend::Memory(memory) = &self.backend else {
      return Ok(None);
    };
    let Some(cell) = memory.lend_sequence_cell() else {
      return Ok(None);
    };
    let data = cell.as_ptr().cast::<u8>();
    // The buffer keeps the store (and so the counter's memory) alive.
    let owner = Arc::clone(memory);
    // SAFETY: `data` points at the 8 bytes of an `AtomicU64` inside `owner`'s
    // allocation, which lives until the finalizer drops `owner`; lent only once.
    // Its finalizer may drop the store's last handle: a store that takes long to free is
    // then freed in the background, as a `NativeStore`'s last handle frees it.
    let buffer = unsafe { ArrayBuffer::from_external(env, data, 8, owner, |_, owner| free_off_thread(Backend::Memory(owner))) }?;
    // A runtime without external buffers gets a copy: no use for sharing.
    Ok((buffer.as_ptr() == data.cast_const()).then_some(buffer))
  }

  /// In-memory only: stores a text whose store was made earlier, as if it had been made
  /// then: under `sequence` (from `reserveSequence`), stored at `storedMs` (ms since the
  /// epoch) and last used in agent cycle `cycle`. The text must be of characters below
  /// U+0100 (see `storeLatin1Now`). Returns the UTF-8 bytes stored.
  // One argument per field of the store being handed over, as JavaScript calls it.
  #[allow(clippy::too_many_arguments)]
  #[napi(catch_unwind, ts_args_type = "sequence: number, key: string, text: string, contentType: string, storedMs: number, cycle: number")]
  pub fn store_latin1_at(&self, env: Env, sequence: f64, key: String, text: StringArg, content_type: String, stored_ms: f64, cycle: f64) -> Result<f64> {
    let _held = ReportHeld(self, &env);
    let at = self.stored_at(sequence, stored_ms, cycle)?;
    self.store_utf8_at(at, &key, latin1_to_utf8(text)?, &content_type)
  }

  /// [`NativeStore::store_latin1_at`] for a text with characters beyond Latin-1.
  // One argument per field of the store being handed over, as JavaScript calls it.
  #[allow(clippy::too_many_arguments)]
  #[napi(catch_unwind, ts_args_type = "sequence: number, key: string, text: string, contentType: string, storedMs: number, cycle: number")]
  pub fn store_utf16_at(&self, env: Env, sequence: f64, key: String, text: Utf16Slice, content_type: String, stored_ms: f64, cycle: f64) -> Result<f64> {
    let _held = ReportHeld(self, &env);
    let at = self.stored_at(sequence, stored_ms, cycle)?;
    self.store_utf8_at(at, &key, utf16_to_utf8(text), &content_type)
  }

  /// The number, time and cycle of a store handed over later, checked before its text is
  /// converted: `(sequence, storedMs, cycle)`.
  fn stored_at(&self, sequence: f64, stored_ms: f64, cycle: f64) -> Result<(u64, u64, u64)> {
    let memory = self.backend.memory()?;
    let (sequence, stored_ms, cycle) = (whole(sequence, "sequence")?, whole(stored_ms, "storedMs")?, whole(cycle, "cycle")?);
    if sequence == 0 || sequence > memory.last_sequence() {
      return Err(Error::new(Status::InvalidArg, format!("sequence {sequence} was never taken")));
    }
    Ok((sequence, stored_ms, cycle))
  }

  /// Stores UTF-8 text in memory as made earlier (see [`NativeStore::store_latin1_at`]).
  fn store_utf8_at(&self, (sequence, stored_ms, cycle): (u64, u64, u64), key: &str, utf8: Vec<u8>, content_type: &str) -> Result<f64> {
    let memory = self.backend.memory()?;
    let byte_length = utf8.len() as f64;
    let tags = Tags { session: None, ttl_ms: None, now_ms: Some(stored_ms) };
    let blob = NewBlob { sequence, key, content: Bytes::from(utf8), content_type, tags };
    memory.store_blob_used_at(blob, cycle).map_err(to_js_error)?;
    Ok(byte_length)
  }

  /// Stores UTF-8 text right away when that is cheap (see [`NativeStore::store_latin1_now`]).
  fn store_utf8_now(&self, key: &str, utf8: Vec<u8>, content_type: &str, concatenated: Option<bool>) -> Result<Option<String>> {
    let inline = match &self.backend {
      Backend::Memory(_) => utf8.len() <= INLINE_COPY_LIMIT,
      Backend::File(f) => writes_inline(f) && utf8.len() <= INLINE_WRITE_LIMIT,
    };
    if !inline {
      return Ok(None);
    }
    let byte_length = utf8.len();
    let sequence = self.backend.next_sequence();
    let tags = self.stamp.tags_at(self.stamp.now());
    let blob = NewBlob { sequence, key, content: Bytes::from(utf8), content_type, tags };
    let reference = timed_inline(&self.backend, || self.backend.store(blob, style(concatenated)))?;
    Ok(Some(inline_outcome(byte_length, &reference)))
  }

  /// Stores small content right away on the JavaScript thread: any size in memory,
  /// up to [`INLINE_WRITE_LIMIT`] bytes for files. Returns `null` for larger files;
  /// then call `storeBytes`, which works on a worker thread.
  #[napi(catch_unwind)]
  pub fn store_bytes_now(
    &self,
    env: Env,
    key: String,
    content: &[u8],
    content_type: String,
    concatenated: Option<bool>,
  ) -> Result<Option<StoreOutcome>> {
    let _held = ReportHeld(self, &env);
    let inline = match &self.backend {
      Backend::Memory(_) => content.len() <= INLINE_COPY_LIMIT,
      Backend::File(f) => writes_inline(f) && content.len() <= INLINE_WRITE_LIMIT,
    };
    if !inline {
      return Ok(None);
    }
    self.store_now(&key, Bytes::copy_from_slice(content), &content_type, concatenated).map(Some)
  }

  /// Stores raw bytes (copied on the worker thread).
  #[napi(ts_return_type = "Promise<StoreOutcome>", catch_unwind)]
  pub fn store_bytes(
    &self,
    key: String,
    content: Uint8Array,
    content_type: String,
    concatenated: Option<bool>,
  ) -> AsyncTask<Work<StoreOutcome>> {
    self.store_task(key, Payload::Bytes(content), content_type, concatenated)
  }

  /// Stores text that is already UTF-8 in native memory ([`EncodedText`]) right away
  /// when that is cheap: always in memory (the bytes are shared, not copied), files
  /// of at most [`INLINE_WRITE_LIMIT`] bytes. Returns `null` otherwise; then call
  /// `storeEncoded`.
  #[napi(catch_unwind)]
  pub fn store_encoded_now(
    &self,
    env: Env,
    key: String,
    text: &EncodedText,
    content_type: String,
    concatenated: Option<bool>,
  ) -> Result<Option<StoreOutcome>> {
    let _held = ReportHeld(self, &env);
    let bytes = text.bytes();
    if let Backend::File(f) = &self.backend {
      if !writes_inline(f) || bytes.len() > INLINE_WRITE_LIMIT {
        return Ok(None);
      }
    }
    self.store_now(&key, bytes, &content_type, concatenated).map(Some)
  }

  /// Stores text that is already UTF-8 in native memory, on a worker thread.
  #[napi(ts_return_type = "Promise<StoreOutcome>", catch_unwind)]
  pub fn store_encoded(
    &self,
    key: String,
    text: &EncodedText,
    content_type: String,
    concatenated: Option<bool>,
  ) -> AsyncTask<Work<StoreOutcome>> {
    self.store_task(key, Payload::Encoded(text.bytes()), content_type, concatenated)
  }

  /// Reads a block back; rejects with `Reference not found: <ref>` when it is unknown.
  #[napi(ts_return_type = "Promise<RetrieveOutcome>", catch_unwind)]
  pub fn retrieve(&self, reference: String) -> AsyncTask<Work<RetrieveOutcome>> {
    let (backend, now) = (self.backend.clone(), self.stamp.now());
    // Reading an expired block removes it.
    on_worker_then(move || {
      let blob = backend.retrieve_at(&reference, now)?;
      Ok(RetrieveOutcome { content: Vec::from(blob.content).into(), content_type: blob.content_type })
    }, self.report_held_later())
  }

  /// Searches a stored block without copying it into JavaScript. The block's text,
  /// decoded and split into lines, is kept in the process's search cache for the
  /// next search of it (see `offload_search::stored`).
  #[napi(ts_return_type = "Promise<SearchOutcome>")]
  pub async fn search(&self, reference: String, query: SearchQuery, max_chars: u32) -> Result<SearchOutcome> {
    let (backend, now) = (self.backend.clone(), self.stamp.now());
    run_search(move || {
      let (cache, request, max_chars) = (PreparedCache::global(), retrieval_query(&query), max_chars as usize);
      let searched = match &backend {
        Backend::Memory(m) => search_memory(cache, m, &reference, now, &request, max_chars),
        Backend::File(f) => search_file(cache, f, &reference, now, &request, max_chars),
      };
      searched.map(outcome).map_err(to_js_error)
    })
    .await
  }

  /// `search` for a process that searches once and ends (the command-line tool): a
  /// file's content is mapped rather than read, and nothing is cached. A file truncated
  /// by another process during the search ends this process (`SIGBUS`), so agents use
  /// `search`. A memory store searches as `search` does.
  #[napi(ts_return_type = "Promise<SearchOutcome>")]
  pub async fn search_once(&self, reference: String, query: SearchQuery, max_chars: u32) -> Result<SearchOutcome> {
    let (backend, now) = (self.backend.clone(), self.stamp.now());
    run_search(move || {
      let (request, max_chars) = (retrieval_query(&query), max_chars as usize);
      let searched = match &backend {
        Backend::Memory(m) => search_memory(PreparedCache::global(), m, &reference, now, &request, max_chars),
        Backend::File(f) => search_file_once(f, &reference, now, &request, max_chars),
      };
      searched.map(outcome).map_err(to_js_error)
    })
    .await
  }

  /// Whether every one of `references` names an artifact held now (unexpired, its
  /// content present), without reading any content or counting as a use. For the few
  /// blocks of one offload (a file store stats each file): used to tell that no block
  /// of a result was evicted before the others were stored.
  #[napi(catch_unwind)]
  pub fn holds_all(&self, references: Vec<String>) -> bool {
    let now = self.stamp.now();
    references.iter().all(|reference| self.backend.lifecycle().holds(reference, now).unwrap_or(false))
  }

  /// For each of `references`: whether it names an artifact held now (`true`), one
  /// that is gone, expired or never was (`false`), or `null` when that cannot be told
  /// (an I/O error). Reads no content and counts as no use; a file store stats each
  /// file. Used to keep the offload manifest true to the store: the manifest kept in a
  /// directory names that directory's artifacts, so a file store judges each reference
  /// by its file name alone, however the writer spelled the directory (relative to
  /// another working directory, say).
  #[napi(catch_unwind)]
  pub fn holds_each(&self, references: Vec<String>) -> Vec<Option<bool>> {
    let now = self.stamp.now();
    let lifecycle = self.backend.lifecycle();
    references
      .iter()
      .map(|reference| {
        let name = match &self.backend {
          Backend::File(_) => reference.rsplit(['/', '\\']).next().unwrap_or(reference),
          Backend::Memory(_) => reference.as_str(),
        };
        lifecycle.holds(name, now).ok()
      })
      .collect()
  }

  /// Removes the artifacts `references` name (the blocks of an offload that failed as
  /// a whole), on a worker thread; resolves with how many were removed.
  #[napi(ts_return_type = "Promise<number>", catch_unwind)]
  pub fn discard(&self, references: Vec<String>) -> AsyncTask<Work<u32>> {
    let (backend, now) = (self.backend.clone(), self.stamp.now());
    let settled = self.report_held_later();
    on_worker_then(move || {
      let removed = match &backend {
        Backend::Memory(m) => references.iter().filter(|reference| m.delete(reference)).count(),
        Backend::File(f) => {
          let names: Vec<String> =
            references.iter().filter_map(|reference| f.retrieve_stamped_at(reference, now, |_, _| true).ok().map(|found| found.name)).collect();
          f.remove_artifacts(&names, None).map_err(to_js_error)?
        }
      };
      Ok(u32::try_from(removed).unwrap_or(u32::MAX))
    }, settled)
  }

  /// In-memory only: advances the agent cycle and evicts idle entries; returns how many.
  #[napi(catch_unwind)]
  pub fn evict(&self, env: Env, cycle: f64) -> Result<u32> {
    let _held = ReportHeld(self, &env);
    let cycle = if cycle.is_finite() && cycle > 0.0 { cycle as u64 } else { 0 };
    Ok(self.backend.memory()?.evict(cycle) as u32)
  }

  /// In-memory only: changes the eviction window (`null` disables eviction).
  #[napi(catch_unwind)]
  pub fn set_evict_after(&self, evict_after: Option<f64>) -> Result<()> {
    self.backend.memory()?.set_evict_after(cycles(evict_after)?).map_err(to_js_error)
  }

  /// In-memory only: drops every entry.
  #[napi(catch_unwind)]
  pub fn clear(&self, env: Env) -> Result<()> {
    let _held = ReportHeld(self, &env);
    self.backend.memory()?.clear();
    Ok(())
  }

  /// In-memory only: drops one entry; returns whether it existed.
  #[napi(catch_unwind)]
  pub fn delete(&self, env: Env, reference: String) -> Result<bool> {
    let _held = ReportHeld(self, &env);
    Ok(self.backend.memory()?.delete(&reference))
  }

  /// In-memory only: number of entries held.
  #[napi(getter, catch_unwind)]
  pub fn size(&self) -> Result<u32> {
    Ok(self.backend.memory()?.len() as u32)
  }

  /// In-memory only: total bytes of content held.
  #[napi(getter, catch_unwind)]
  pub fn byte_length(&self) -> Result<f64> {
    Ok(self.backend.memory()?.total_bytes() as f64)
  }
}
