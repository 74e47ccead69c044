//! What is known about the artifacts of a directory (the catalog): the SDK's
//! `.metadata.json` (read only) plus an append-only journal written one line
//! per stored or removed artifact.
//!
//! Journal format (`.metadata.journal`): UTF-8, one JSON object per line.
//! A stored artifact is `{"f":"<file name>","t":"<content type>"}` followed,
//! when known, by `"n"` (bytes), `"c"` (created, ms since the epoch), `"e"`
//! (expires, ms), `"s"` (session id) and `"h"` (SHA-256 of the content, hex,
//! when it is deduplicated). A removed artifact is `{"r":"<file name>"}`, with
//! `"y":"e"` (expired) or `"y":"v"` (evicted for the byte budget) when the
//! reason is worth telling. Each line is appended with a single `write(2)` on
//! an `O_APPEND` descriptor, so concurrent writers in other processes never
//! interleave within a line. Readers consume only complete lines, skip
//! malformed ones, and recover a record that follows a torn (crash-truncated)
//! line on the same physical line. A store or a removal costs one append,
//! whatever the number of artifacts.
//!
//! Every file is opened through the directory handle, never through a
//! symbolic link: a link planted at the journal's or the metadata's name is
//! neither read nor written through.
//!
//! # Compaction (Unix)
//!
//! Once dead lines (removed artifacts and their removal lines) dominate a
//! journal of more than [`COMPACT_FROM_BYTES`], it is rewritten with only
//! the live records and the most recent removals that carry a reason. The
//! protocol keeps every line and never shows half a journal:
//!
//! * an appender takes a shared `flock` on its descriptor around each
//!   append and, holding it, checks that the descriptor is still the file
//!   named `.metadata.journal` (device and inode); if the journal was
//!   replaced, it opens the new one and tries again;
//! * the compactor takes an exclusive `flock` on the current journal, reads
//!   it whole, writes the compacted lines to a temporary file (fsynced),
//!   renames it over the journal (and flushes the directory), then releases
//!   the lock: an append either landed before the read, or waits and goes
//!   to the new file;
//! * a reader that finds another file under the name (a new identity)
//!   rebuilds its catalog from it, keeping its own use order and the
//!   reasons it remembers.
//!
//! A process killed at any point of a compaction leaves the old journal or
//! the new one (and perhaps a temporary file, swept when stale). Elsewhere
//! (no device and inode numbers to compare) journals are not compacted.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use indexmap::map::Entry;
use indexmap::IndexMap;
use offload_atomic::Dir;

use super::names::is_artifact_name;
use crate::lifecycle::{
    digest_hex, parse_digest_hex, ContentDigest, Expiries, GoneReason, Removals, Stats, UseOrder,
};
use crate::StorageError;

/// The SDK's metadata file: one JSON object mapping file name to content
/// type. Read when a directory is opened; never written.
pub(crate) const METADATA_FILE: &str = ".metadata.json";

/// The append-only journal of stored and removed artifacts.
pub(crate) const JOURNAL_FILE: &str = ".metadata.journal";

/// The lock file that serialises the stores of every process under a byte
/// budget (see `FileStore::lock_budget`).
pub(crate) const LOCK_FILE: &str = ".metadata.lock";

/// Mark the start of a record; cannot occur inside a JSON-encoded string
/// (where `"` is always escaped).
const RECORD_STARTS: [&[u8]; 2] = [b"{\"f\":", b"{\"r\":"];

/// Journals smaller than this are never compacted.
pub(crate) const COMPACT_FROM_BYTES: u64 = 1 << 20;

/// A journal is compacted once its live records are fewer than one line in
/// this many.
const COMPACT_WHEN_LIVE_ONE_IN: u64 = 4;

/// How many recent removal lines (with a reason) a compaction keeps, so that
/// a recently expired or evicted reference still says why. Far below what
/// would make a compacted journal due for compaction again.
#[cfg(unix)]
const KEPT_REMOVALS: usize = 1024;

/// Most records room is made for before a journal is read.
const MAX_RESERVED_RECORDS: usize = 1 << 17;

/// How much of the journal is read at once.
const READ_CHUNK: usize = 1 << 20;

/// How many journal lines are applied to the catalog under one hold of its lock (a
/// lookup waits for no more than this many).
const EVENTS_PER_BATCH: usize = 256;

/// How many times an append tries again when the journal was replaced under it.
const APPEND_ATTEMPTS: usize = 64;

/// How many times a compaction started by a removal tries for the journal's
/// lock (a millisecond apart) before it leaves the compaction for later.
#[cfg(unix)]
const COMPACT_LOCK_ATTEMPTS: usize = 50;

/// What is known of one artifact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) content_type: String,
    /// Content bytes (unknown for artifacts of older journals and the SDK's
    /// `.metadata.json` until the file is looked at).
    pub(crate) bytes: Option<u64>,
    pub(crate) created_ms: Option<u64>,
    pub(crate) expires_ms: Option<u64>,
    pub(crate) session: Option<Arc<str>>,
    /// Set when the content is shared with identical artifacts (boxed: only stores
    /// with `dedup` have one, and a catalog holds one record per artifact).
    pub(crate) digest: Option<Box<ContentDigest>>,
}

impl Record {
    pub(crate) fn expired(&self, now_ms: u64) -> bool {
        self.expires_ms.is_some_and(|at| at <= now_ms)
    }
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Stored(String, Record),
    Removed(String, Option<GoneReason>),
}

/// The records of a catalog by artifact name: a dense list of records behind a table of
/// their indices (an `IndexMap`; a removal moves the last record into the gap, so the
/// list keeps no order). Reading a long journal is mostly inserting new names: a record
/// lands at the end of the list, not at a random place of a table as large as all the
/// records, and the table of indices takes 9 bytes per slot. Names are hashed with a
/// fast hasher seeded at random (they are checked to be artifact-shaped first, and the
/// seed is not known outside the process).
pub(crate) type Records = IndexMap<String, Record, foldhash::fast::RandomState>;

/// The catalog's contents.
#[derive(Debug, Default)]
pub(crate) struct Known {
    pub(crate) records: Records,
    pub(crate) removals: Removals,
    /// Artifacts sharing each deduplicated content, and its size.
    shared: HashMap<ContentDigest, (usize, u64)>,
    /// Bytes the records hold: known sizes, shared content once.
    held: u64,
    /// How many records have no size yet (see [`Known::unsized_names`]).
    sizeless: usize,
    /// The records by expiry.
    expiries: Expiries,
    /// Least-recently-used order of the records (and of nothing else),
    /// kept while a byte budget is set.
    uses: Option<UseOrder>,
}

impl Known {
    /// Records `name` (again: its own line read back, or a store under the
    /// same name). A name already in the use order keeps its place.
    fn insert(&mut self, name: String, record: Record) {
        self.place(name, record, false);
    }

    /// [`Known::insert`]; with `retype_known`, a name already recorded only takes
    /// the content type of `record`. The name is looked up once (a journal read
    /// from its start is nearly all new names).
    fn place(&mut self, name: String, record: Record, retype_known: bool) {
        let (digest, bytes, expires_ms, created_ms) = (record.digest.as_deref().copied(), record.bytes, record.expires_ms, record.created_ms);
        let name_needed = self.uses.is_some() || !self.removals.is_empty() || expires_ms.is_some();
        let (name, previous) = match self.records.entry(name) {
            Entry::Occupied(mut slot) if retype_known => {
                slot.get_mut().content_type = record.content_type;
                return;
            }
            Entry::Occupied(mut slot) => {
                let previous = std::mem::replace(slot.get_mut(), record);
                (Some(slot.key().clone()), Some(previous))
            }
            Entry::Vacant(slot) => {
                let name = name_needed.then(|| slot.key().clone());
                slot.insert(record);
                (name, None)
            }
        };
        if let (Some(name), Some(previous)) = (&name, &previous) {
            self.unaccount(name, previous);
        }
        match digest {
            Some(d) => {
                let entry = self.shared.entry(d).or_insert((0, bytes.unwrap_or(0)));
                if entry.0 == 0 {
                    self.held += entry.1;
                }
                entry.0 += 1;
            }
            None => self.held += bytes.unwrap_or(0),
        }
        if bytes.is_none() {
            self.sizeless += 1;
        }
        if let Some(name) = name {
            self.expiries.insert(&name, expires_ms);
            if let Some(uses) = &mut self.uses {
                uses.insert_unused(&name, created_ms.unwrap_or(0));
            }
            self.removals.forget(&name);
        }
    }

    /// Drops `name` (from the use order too, even when it has no record);
    /// returns its record. With a digest whose last user it was, the digest
    /// is returned too (its shared content can go).
    pub(crate) fn forget(&mut self, name: &str) -> Option<(Record, Option<ContentDigest>)> {
        if let Some(uses) = &mut self.uses {
            uses.remove(name);
        }
        self.drop_record(name)
    }

    /// Drops the record of `name` and what it counts for (bytes, sharing,
    /// expiry), but not its place in the use order; returns the record, and
    /// its digest when it was the last to share it.
    fn drop_record(&mut self, name: &str) -> Option<(Record, Option<ContentDigest>)> {
        let record = self.records.swap_remove(name)?;
        let orphan = self.unaccount(name, &record);
        Some((record, orphan))
    }

    /// Takes out what the record `record` of `name` (no longer in the records)
    /// counted for: bytes, sharing, expiry. Returns its digest when it was the
    /// last to share it.
    fn unaccount(&mut self, name: &str, record: &Record) -> Option<ContentDigest> {
        if record.bytes.is_none() {
            self.sizeless = self.sizeless.saturating_sub(1);
        }
        self.expiries.remove(name, record.expires_ms);
        let mut orphan = None;
        match record.digest.as_deref().copied() {
            Some(d) => {
                if let Some(entry) = self.shared.get_mut(&d) {
                    entry.0 = entry.0.saturating_sub(1);
                    if entry.0 == 0 {
                        self.held = self.held.saturating_sub(entry.1);
                        self.shared.remove(&d);
                        orphan = Some(d);
                    }
                }
            }
            None => self.held = self.held.saturating_sub(record.bytes.unwrap_or(0)),
        }
        orphan
    }

    fn apply(&mut self, event: Event) {
        match event {
            // A record without a creation time (the SDK's file names a type only):
            // what is already known of the same artifact stays.
            Event::Stored(name, record) => {
                let retype_known = record.created_ms.is_none();
                self.place(name, record, retype_known);
            }
            Event::Removed(name, reason) => {
                self.forget(&name);
                if let Some(reason) = reason {
                    self.removals.remember(&name, reason);
                }
            }
        }
    }

    /// Makes room for the records of a journal read from its start, whose lines
    /// [`read_lines`] expects to number `lines` (never more than
    /// [`MAX_RESERVED_RECORDS`]), so that reading it does not grow the table step by
    /// step. The table is not made larger than the lines need: room for twice as many
    /// doubles the memory the first read touches, and touching fresh memory is most of
    /// what reading a long journal costs.
    fn reserve_for_journal(&mut self, lines: u64) {
        let estimate = usize::try_from(lines).unwrap_or(MAX_RESERVED_RECORDS).min(MAX_RESERVED_RECORDS);
        self.records.reserve(estimate.saturating_sub(self.records.len()));
    }

    /// Gives back the room [`Known::reserve_for_journal`] made when the journal
    /// held far fewer live records than lines (removals, records stored again).
    fn release_spare_room(&mut self) {
        if self.records.capacity() > 4 * self.records.len().max(1024) {
            self.records.shrink_to_fit();
        }
    }

    /// Sets the size of `name` when it was unknown.
    pub(crate) fn set_size(&mut self, name: &str, len: u64) {
        if let Some(record) = self.records.get_mut(name) {
            if record.bytes.is_none() && record.digest.is_none() {
                record.bytes = Some(len);
                self.held += len;
                self.sizeless = self.sizeless.saturating_sub(1);
            }
        }
    }

    /// Bytes held: known sizes, deduplicated content counted once, expired
    /// artifacts included (they are on disk until swept).
    #[cfg(test)]
    pub(crate) fn stored_bytes(&self) -> u64 {
        self.held
    }

    /// Whether content of digest `d` is held by an artifact.
    pub(crate) fn shares(&self, d: &ContentDigest) -> bool {
        self.shared.contains_key(d)
    }

    /// Live artifacts at `now_ms` (what expired is not counted, not even in
    /// the bytes held).
    pub(crate) fn stats(&self, now_ms: u64) -> Stats {
        let mut stats = Stats::default();
        let mut digests = HashSet::new();
        for record in self.records.values().filter(|r| !r.expired(now_ms)) {
            let len = record.bytes.unwrap_or(0);
            stats.add(record.session.as_deref(), len);
            match record.digest.as_deref() {
                Some(d) if !digests.insert(d) => {}
                _ => stats.stored_bytes += len,
            }
        }
        stats
    }

    /// The names whose size is not known yet (artifacts of older journals
    /// and of the SDK's `.metadata.json`); none, without looking at every
    /// record, once every size is known.
    pub(crate) fn unsized_names(&self) -> Vec<String> {
        if self.sizeless == 0 {
            return Vec::new();
        }
        self.names_where(|r| r.bytes.is_none())
    }

    /// Names whose record `pick` selects.
    pub(crate) fn names_where(&self, pick: impl Fn(&Record) -> bool) -> Vec<String> {
        self.records.iter().filter(|(_, r)| pick(r)).map(|(n, _)| n.clone()).collect()
    }

    /// The names expired at `now_ms`.
    pub(crate) fn expired(&self, now_ms: u64) -> Vec<String> {
        self.expiries.due(now_ms)
    }

    /// Keeps (`true`) or drops the use order of the byte budget. A new one
    /// ranks every record by its creation time.
    pub(crate) fn track_uses(&mut self, on: bool) {
        match (on, &self.uses) {
            (true, None) => {
                let mut uses = UseOrder::default();
                for (name, record) in &self.records {
                    uses.insert_unused(name, record.created_ms.unwrap_or(0));
                }
                self.uses = Some(uses);
            }
            (false, Some(_)) => self.uses = None,
            _ => {}
        }
    }

    /// Records a use of `name` at `at_ms` (keeping the use order from now
    /// on), when `name` is an artifact the catalog holds.
    pub(crate) fn touch(&mut self, name: &str, at_ms: u64) {
        self.track_uses(true);
        if let Some(uses) = &mut self.uses {
            if self.records.contains_key(name) {
                uses.touch(name, at_ms);
            }
        }
    }

    /// What to remove next so that `len` more bytes (nothing more when
    /// content of `digest` is already held) fit under `max_bytes` at
    /// `now_ms`: every expired artifact first, then the least recently
    /// used. `None` when it fits, or when nothing is left to remove.
    pub(crate) fn next_to_free(
        &mut self,
        max_bytes: u64,
        len: u64,
        digest: Option<&ContentDigest>,
        now_ms: u64,
    ) -> Option<(Vec<String>, GoneReason)> {
        self.track_uses(true);
        let cost = if digest.is_some_and(|d| self.shares(d)) { 0 } else { len };
        if self.held.saturating_add(cost) <= max_bytes {
            return None;
        }
        if self.expiries.any_due(now_ms) {
            return Some((self.expiries.due(now_ms), GoneReason::Expired));
        }
        let victim = self.uses.as_ref().and_then(UseOrder::oldest)?.to_owned();
        Some((vec![victim], GoneReason::Evicted))
    }

    /// Replaces the records with those of `fresh` (read from a journal that
    /// replaced the one read so far), keeping the use order of the names
    /// still there and every reason remembered.
    fn rebuild_from(&mut self, fresh: Known) {
        let Known { records, removals, shared, held, sizeless, expiries, .. } = fresh;
        self.records = records;
        self.shared = shared;
        self.held = held;
        self.sizeless = sizeless;
        self.expiries = expiries;
        self.removals.absorb(removals);
        if let Some(uses) = &mut self.uses {
            uses.retain(|name| self.records.contains_key(name));
            for (name, record) in &self.records {
                uses.insert_unused(name, record.created_ms.unwrap_or(0));
            }
        }
    }
}

/// The catalog of one artifact directory.
#[derive(Debug)]
pub(crate) struct Catalog {
    /// The open directory; `None` until it could be opened.
    root: RwLock<Option<Arc<Dir>>>,
    known: RwLock<Known>,
    /// Where reading the journal (and `.metadata.json`) last stopped.
    read: Mutex<ReadState>,
    /// The append descriptor, opened on the first store.
    appender: Mutex<Option<Appender>>,
}

/// The journal opened for appending.
#[derive(Debug, Clone)]
struct Appender {
    file: Arc<File>,
    /// Device and inode of the file, to tell whether the journal's name
    /// still names it.
    #[cfg(unix)]
    identity: (u64, u64),
}

/// How far the journal and the SDK's metadata file have been read.
#[derive(Debug, Default)]
struct ReadState {
    /// Bytes of the journal consumed so far (always at a line boundary).
    offset: u64,
    /// Complete lines consumed so far.
    lines: u64,
    /// The journal file those bytes belong to: a journal replaced by another
    /// file (even a longer one) is read again from its start.
    journal: Option<FileStamp>,
    /// The `.metadata.json` last read: read again when it changes (the SDK's
    /// own `FileStorage` may write to the directory at any time).
    metadata: Option<FileStamp>,
}

/// What tells one version of a file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    /// Device and inode (Unix): which file.
    identity: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let identity = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let identity = (0, 0);
        FileStamp { identity, len: meta.len(), modified: meta.modified().ok() }
    }
}

impl Catalog {
    /// Loads `.metadata.json` (if present and valid) and then the journal of
    /// the open directory `root` (`None`: not opened, nothing to read yet).
    /// Unreadable or malformed data is ignored, as the SDK does.
    pub(crate) fn load(root: Option<Arc<Dir>>) -> Self {
        let loaded = Catalog {
            root: RwLock::new(root),
            known: RwLock::new(Known::default()),
            read: Mutex::new(ReadState::default()),
            appender: Mutex::new(None),
        };
        loaded.refresh();
        loaded
    }

    /// The open directory, if it could be opened.
    pub(crate) fn root(&self) -> Option<Arc<Dir>> {
        self.root.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The directory opened again (after it was created anew).
    pub(crate) fn set_root(&self, root: Arc<Dir>) {
        *self.root.write().unwrap_or_else(PoisonError::into_inner) = Some(root);
    }

    /// The record of `filename`. When it is not known yet, the journal is
    /// re-read from where reading last stopped (another instance or process
    /// may have appended to it), and `.metadata.json` when it changed.
    pub(crate) fn get(&self, filename: &str) -> Option<Record> {
        if let Some(r) = self.lookup(filename) {
            return Some(r);
        }
        self.refresh();
        self.lookup(filename)
    }

    /// The content type of `filename` (see [`Catalog::get`]).
    #[cfg(test)]
    pub(crate) fn content_type(&self, filename: &str) -> Option<String> {
        self.get(filename).map(|r| r.content_type)
    }

    /// Appends the record of a stored `filename` to the journal and
    /// remembers it. With `durable`, the journal is flushed to stable storage.
    pub(crate) fn record(&self, filename: &str, record: Record, durable: bool) -> Result<(), StorageError> {
        self.append(&encode_stored(filename, &record), durable)?;
        self.write().insert(filename.to_owned(), record);
        Ok(())
    }

    /// Appends the removal of `filenames` to the journal (in one write) and
    /// forgets them; returns the digests whose last artifact went.
    pub(crate) fn record_removals(
        &self,
        filenames: &[String],
        reason: Option<GoneReason>,
        durable: bool,
    ) -> Result<Vec<ContentDigest>, StorageError> {
        if filenames.is_empty() {
            return Ok(Vec::new());
        }
        let mut lines = Vec::new();
        for name in filenames {
            lines.extend(encode_removed(name, reason));
        }
        let appended = self.append(&lines, durable);
        // Forgotten even when the line could not be written: the files are gone.
        let mut known = self.write();
        let mut orphans = Vec::new();
        for name in filenames {
            if let Some((_, Some(d))) = known.forget(name) {
                orphans.push(d);
            }
            if let Some(reason) = reason {
                known.removals.remember(name, reason);
            }
        }
        drop(known);
        appended.map(|()| orphans)
    }

    /// Appends `lines` (complete lines) with one write, to the file the
    /// journal's name holds at that moment (see the module's compaction).
    fn append(&self, lines: &[u8], durable: bool) -> Result<(), StorageError> {
        let root = self.root().ok_or_else(|| {
            StorageError::io("open metadata journal", JOURNAL_FILE, io::Error::from(io::ErrorKind::NotFound))
        })?;
        let error = |e| StorageError::io("append to metadata journal", root.path().join(JOURNAL_FILE), e);
        let mut slot = self.appender.lock().unwrap_or_else(PoisonError::into_inner);
        for _ in 0..APPEND_ATTEMPTS {
            let appender = match slot.as_ref() {
                Some(appender) => appender.clone(),
                None => slot.insert(open_appender(&root).map_err(error)?).clone(),
            };
            if append_if_current(&root, &appender, lines).map_err(error)? {
                drop(slot);
                if durable {
                    appender.file.sync_data().map_err(error)?;
                }
                return Ok(());
            }
            *slot = None;
        }
        Err(error(io::Error::other("the journal was replaced on every attempt")))
    }

    /// Reads what other writers appended, then gives `f` the catalog.
    pub(crate) fn refreshed<T>(&self, f: impl FnOnce(&mut Known) -> T) -> T {
        self.refresh();
        f(&mut self.write())
    }

    /// The catalog as it is (without reading the journal again).
    pub(crate) fn known(&self) -> RwLockReadGuard<'_, Known> {
        self.known.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The catalog for changing.
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Known> {
        self.known.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets the journal descriptor and read position, for when the
    /// directory was removed and created again: the next store starts a new
    /// journal instead of appending to the deleted one.
    pub(crate) fn reset_journal(&self) {
        *self.appender.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let mut read = self.reading();
        read.offset = 0;
        read.lines = 0;
        read.journal = None;
    }

    fn reading(&self) -> MutexGuard<'_, ReadState> {
        self.read.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lookup(&self, filename: &str) -> Option<Record> {
        self.known().records.get(filename).cloned()
    }

    /// Reads `.metadata.json` when it changed since it was last read, then the
    /// complete journal lines appended since the last read. A journal that
    /// is another file than the one read so far (compacted, or replaced) is
    /// read whole into a new catalog that then replaces this one's records.
    fn refresh(&self) {
        let Some(root) = self.root() else { return };
        let mut read = self.reading();
        let journal = root.open_read(JOURNAL_FILE).ok().flatten();
        let stamp = journal.as_ref().and_then(|f| f.metadata().ok()).map(|m| FileStamp::of(&m));
        let replaced = match (stamp, read.journal) {
            (Some(now), Some(before)) => now.identity != before.identity || now.len < read.offset,
            _ => false,
        };
        if replaced {
            *read = ReadState::default();
        }
        let sdk = read_metadata(&root, &mut read.metadata);
        let metadata_events =
            sdk.into_iter().map(|(name, content_type)| Event::Stored(name, Record { content_type, ..Record::default() }));
        let ReadState { offset, lines, .. } = &mut *read;
        if replaced {
            let mut fresh = Known::default();
            metadata_events.for_each(|e| fresh.apply(e));
            if let Some(mut file) = journal {
                let len = stamp.map_or(0, |st| st.len);
                let _ = read_lines(&mut file, len, offset, lines, |events, expected| {
                    if let Some(expected) = expected {
                        fresh.reserve_for_journal(expected);
                    }
                    events.for_each(|e| fresh.apply(e));
                });
                fresh.release_spare_room();
            }
            self.write().rebuild_from(fresh);
        } else {
            let metadata_events: Vec<Event> = metadata_events.collect();
            if !metadata_events.is_empty() {
                let mut known = self.write();
                metadata_events.into_iter().for_each(|e| known.apply(e));
            }
            if let Some(mut file) = journal {
                let len = stamp.map_or(0, |st| st.len);
                // A journal read from its start: room for its records at once.
                let from_start = *offset == 0;
                let _ = read_lines(&mut file, len, offset, lines, |events, expected| {
                    let mut known = self.write();
                    if let Some(expected) = expected {
                        known.reserve_for_journal(expected);
                    }
                    events.for_each(|e| known.apply(e));
                });
                if from_start {
                    self.write().release_spare_room();
                }
            }
        }
        read.journal = stamp;
    }

    /// Whether the journal read so far is worth compacting: larger than
    /// [`COMPACT_FROM_BYTES`] with fewer live records than one line in
    /// [`COMPACT_WHEN_LIVE_ONE_IN`]. Looks at no file.
    pub(crate) fn compaction_due(&self) -> bool {
        let (offset, lines) = {
            let read = self.reading();
            (read.offset, read.lines)
        };
        let live = self.known().records.len() as u64;
        offset >= COMPACT_FROM_BYTES && live.saturating_mul(COMPACT_WHEN_LIVE_ONE_IN) < lines
    }

    /// Compacts the journal when [`Catalog::compaction_due`] says so; best
    /// effort (a journal another writer holds is left for a later call).
    pub(crate) fn compact_if_due(&self, temps: &offload_atomic::TempNames) {
        if self.compaction_due() {
            let _ = self.compact(temps, false);
        }
    }

    /// Rewrites the journal with its live records and its most recent
    /// removals (see the module's compaction); `wait` waits for the journal's
    /// lock, else a journal locked for long is left alone. Returns whether
    /// the journal was rewritten; always `false` where journals are not
    /// compacted.
    ///
    /// # Errors
    ///
    /// The OS error of reading the journal or writing its replacement (the
    /// journal is then unchanged).
    pub(crate) fn compact(&self, temps: &offload_atomic::TempNames, wait: bool) -> Result<bool, StorageError> {
        #[cfg(unix)]
        {
            let Some(root) = self.root() else { return Ok(false) };
            let compacted = compact_journal(&root, temps, wait)
                .map_err(|e| StorageError::io("compact metadata journal", root.path().join(JOURNAL_FILE), e))?;
            // Read from the journal as it is now (this one, or one another
            // process compacted first), so that what was read before does not
            // ask for another compaction.
            self.refresh();
            Ok(compacted)
        }
        #[cfg(not(unix))]
        {
            let _ = (temps, wait);
            Ok(false)
        }
    }
}

/// Opens (creating it if need be) the journal for appending, through the
/// directory and never through a link.
fn open_appender(root: &Dir) -> io::Result<Appender> {
    let file = root.open_append(JOURNAL_FILE, true)?;
    #[cfg(unix)]
    let identity = offload_atomic::file_identity(&file)?;
    Ok(Appender {
        file: Arc::new(file),
        #[cfg(unix)]
        identity,
    })
}

/// Appends `lines` to `appender` if it still is the journal: `Ok(false)`
/// when the journal's name now holds another file (compacted, replaced or
/// removed), so the caller opens it again. Holds a shared lock on the
/// descriptor around the check and the write, so a compaction never misses
/// the line.
#[cfg(unix)]
fn append_if_current(root: &Dir, appender: &Appender, lines: &[u8]) -> io::Result<bool> {
    appender.file.lock_shared()?;
    let appended = match root.identity(JOURNAL_FILE) {
        Ok(Some(identity)) if identity == appender.identity => append_line(&appender.file, lines).map(|()| true),
        Ok(_) => Ok(false),
        Err(e) => Err(e),
    };
    let unlocked = appender.file.unlock();
    let appended = appended?;
    unlocked.map(|()| appended)
}

/// Appends `lines` to `appender` (journals are not compacted here).
#[cfg(not(unix))]
fn append_if_current(_root: &Dir, appender: &Appender, lines: &[u8]) -> io::Result<bool> {
    append_line(&appender.file, lines).map(|()| true)
}

/// Compacts the journal of `root` (see the module's compaction); returns
/// whether it was rewritten.
#[cfg(unix)]
fn compact_journal(root: &Dir, temps: &offload_atomic::TempNames, wait: bool) -> io::Result<bool> {
    let Some(mut file) = root.open_read(JOURNAL_FILE)? else { return Ok(false) };
    if !lock_exclusive(&file, wait)? {
        return Ok(false);
    }
    // Locked: no append is in flight on this file. Another compactor may
    // have replaced it since it was opened.
    if root.identity(JOURNAL_FILE)? != Some(offload_atomic::file_identity(&file)?) {
        return Ok(false);
    }
    let compacted = compacted_lines(&mut file)?;
    let temp = root.write_temp("", &compacted, temps, true).map_err(|e| e.source)?;
    root.publish_over(&temp, JOURNAL_FILE, true).map_err(|e| e.source)?;
    // The lock goes with the descriptor, after the rename: appenders waiting
    // for it find the new journal.
    drop(file);
    Ok(true)
}

/// Takes an exclusive lock on `file`: waiting for it with `wait`, else
/// trying for a few milliseconds. Returns whether it is held.
#[cfg(unix)]
fn lock_exclusive(file: &File, wait: bool) -> io::Result<bool> {
    if wait {
        file.lock()?;
        return Ok(true);
    }
    for _ in 0..COMPACT_LOCK_ATTEMPTS {
        match file.try_lock() {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => std::thread::sleep(std::time::Duration::from_millis(1)),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
    Ok(false)
}

/// The compacted form of the journal `file` (read from its start): the most
/// recent [`KEPT_REMOVALS`] removals that carry a reason, of names not
/// stored again, then every live record, oldest first. A torn last line
/// (no append is in flight while the journal is locked) is dropped.
#[cfg(unix)]
fn compacted_lines(file: &mut File) -> io::Result<Vec<u8>> {
    // The records as `Known::apply` leaves them, without its bookkeeping.
    let mut live = Records::default();
    let mut removals: std::collections::VecDeque<(String, GoneReason)> = std::collections::VecDeque::new();
    let (mut offset, mut lines) = (0, 0);
    let len = file.metadata()?.len();
    read_lines(file, len, &mut offset, &mut lines, |events, _| {
        for event in events {
            match event {
                Event::Stored(name, record) => match live.get_mut(&name) {
                    Some(existing) if record.created_ms.is_none() => existing.content_type = record.content_type,
                    _ => {
                        live.insert(name, record);
                    }
                },
                Event::Removed(name, reason) => {
                    live.swap_remove(&name);
                    if let Some(reason) = reason {
                        removals.push_back((name, reason));
                        if removals.len() > KEPT_REMOVALS {
                            removals.pop_front();
                        }
                    }
                }
            }
        }
    })?;
    let mut out = Vec::new();
    for (name, reason) in removals.iter().filter(|(name, _)| !live.contains_key(name)) {
        out.extend(encode_removed(name, Some(*reason)));
    }
    let mut records: Vec<(&String, &Record)> = live.iter().collect();
    records.sort_unstable_by(|a, b| (a.1.created_ms, a.0).cmp(&(b.1.created_ms, b.0)));
    for (name, record) in records {
        out.extend(encode_stored(name, record));
    }
    Ok(out)
}

/// The entries of the SDK's `.metadata.json` when it changed since `*last`
/// (its stamp, updated); nothing when it is unchanged, missing, not a
/// regular file (a link is never followed) or invalid.
fn read_metadata(root: &Dir, last: &mut Option<FileStamp>) -> Vec<(String, String)> {
    let Ok(Some(mut file)) = root.open_read(METADATA_FILE) else {
        return Vec::new();
    };
    let Ok(meta) = file.metadata() else {
        return Vec::new();
    };
    let stamp = FileStamp::of(&meta);
    if *last == Some(stamp) {
        return Vec::new();
    }
    *last = Some(stamp);
    let mut raw = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    if file.read_to_end(&mut raw).is_err() {
        return Vec::new();
    }
    match serde_json::from_slice(&raw) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .filter_map(|(name, value)| match value {
                serde_json::Value::String(t) => Some((name, t)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Appends one line with a single `write(2)` on the `O_APPEND` descriptor,
/// so it lands whole between other processes' lines. Should the write come
/// back short (a full disk, a signal), the fragment is ended with a newline
/// (readers skip it as a malformed line) and the line is written again.
fn append_line(file: &File, line: &[u8]) -> io::Result<()> {
    let mut writer: &File = file;
    for _ in 0..3 {
        let written = writer.write(line)?;
        if written == line.len() {
            return Ok(());
        }
        if written > 0 {
            writer.write_all(b"\n")?;
        }
    }
    Err(io::Error::new(io::ErrorKind::WriteZero, "the journal line could not be written whole"))
}

/// Reads the complete lines of `file` (of `len` bytes when it was looked
/// at; it may have grown since) from `*offset`, a chunk at a time, and hands
/// the records of each chunk to `apply`; advances `*offset` past them and
/// counts them in `*lines`. An incomplete last line is left for a later
/// read. Nothing is read when `len` says there is nothing new.
///
/// With the first records of a read from the file's start, `apply` is also
/// given how many lines the file is expected to hold: `len` at the density of
/// the lines of the first chunk (exact when that chunk is the whole file).
fn read_lines(
    file: &mut File,
    len: u64,
    offset: &mut u64,
    lines: &mut u64,
    mut apply: impl FnMut(&mut dyn Iterator<Item = Event>, Option<u64>),
) -> io::Result<()> {
    let Some(new) = len.checked_sub(*offset).filter(|&n| n > 0) else {
        return Ok(());
    };
    let mut expected = None;
    let from_start = *offset == 0;
    file.seek(SeekFrom::Start(*offset))?;
    let mut pending: Vec<u8> = Vec::new();
    let chunk_len = usize::try_from(new).unwrap_or(READ_CHUNK).clamp(4096, READ_CHUNK);
    let mut chunk = vec![0u8; chunk_len];
    // One small buffer of parsed lines for the whole read.
    let mut events: Vec<Event> = Vec::with_capacity(EVENTS_PER_BATCH);
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        pending.extend_from_slice(&chunk[..n]);
        let Some(last_newline) = pending.iter().rposition(|&b| b == b'\n') else { continue };
        let complete = &pending[..=last_newline];
        let complete_lines = complete.iter().filter(|&&b| b == b'\n').count() as u64;
        if from_start && *offset == 0 {
            // Lines of `complete.len()` bytes on average, over `len` bytes (rounded up;
            // over what was read, should the file have grown past `len` since).
            let estimate = u128::from(len.max(complete.len() as u64)) * u128::from(complete_lines);
            expected = Some(u64::try_from(estimate.div_ceil(complete.len() as u128)).unwrap_or(u64::MAX));
        }
        *offset += complete.len() as u64;
        *lines += complete_lines;
        // Parsed a batch at a time, then applied: the catalog is held only while a batch
        // is applied, and free while the next one is parsed, so whoever waits for it
        // waits for one batch at most.
        let mut parsed = complete.split(|&b| b == b'\n').filter_map(parse_line);
        loop {
            events.extend(parsed.by_ref().take(EVENTS_PER_BATCH));
            if events.is_empty() {
                break;
            }
            apply(&mut events.drain(..), expected.take());
        }
        pending.drain(..=last_newline);
    }
}

/// The journal line of a stored artifact, newline included.
fn encode_stored(filename: &str, record: &Record) -> Vec<u8> {
    use std::fmt::Write as _;
    let text = |s: &str| serde_json::Value::from(s).to_string();
    // `"f"` first: a record is found after a torn line by its start.
    let mut line = format!("{{\"f\":{},\"t\":{}", text(filename), text(&record.content_type));
    let numbers = [("n", record.bytes), ("c", record.created_ms), ("e", record.expires_ms)];
    for (key, value) in numbers {
        if let Some(value) = value {
            let _ = write!(line, ",\"{key}\":{value}");
        }
    }
    if let Some(session) = &record.session {
        let _ = write!(line, ",\"s\":{}", text(session));
    }
    if let Some(d) = &record.digest {
        let _ = write!(line, ",\"h\":\"{}\"", digest_hex(d));
    }
    line.push_str("}\n");
    line.into_bytes()
}

/// The journal line of a removed artifact, newline included.
fn encode_removed(filename: &str, reason: Option<GoneReason>) -> Vec<u8> {
    let r = serde_json::Value::from(filename).to_string();
    match reason {
        Some(reason) => format!("{{\"r\":{r},\"y\":\"{}\"}}\n", reason.code()),
        None => format!("{{\"r\":{r}}}\n"),
    }
    .into_bytes()
}

/// Parses a journal line. When the whole line is not a record (a torn line
/// from a crashed writer followed by a later record), the last complete
/// record on the line is recovered.
fn parse_line(line: &[u8]) -> Option<Event> {
    if line.is_empty() {
        return None;
    }
    parse_canonical(line).or_else(|| parse_generally(line))
}

/// [`parse_line`] with a JSON parser, for any line.
fn parse_generally(line: &[u8]) -> Option<Event> {
    if let Some(record) = parse_record(line) {
        return Some(record);
    }
    (1..line.len())
        .filter(|&i| RECORD_STARTS.iter().any(|start| line[i..].starts_with(start)))
        .find_map(|i| parse_record(&line[i..]))
}

/// One record as a line holds it, its strings borrowed where they have no
/// escapes. A line of another shape (a field of another type, a key twice)
/// is read by [`parse_loosely`] instead, with the same outcome as ever.
#[derive(serde::Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    f: Option<Cow<'a, str>>,
    #[serde(borrow)]
    t: Option<Cow<'a, str>>,
    n: Option<u64>,
    c: Option<u64>,
    e: Option<u64>,
    #[serde(borrow)]
    s: Option<Cow<'a, str>>,
    #[serde(borrow)]
    h: Option<Cow<'a, str>>,
    #[serde(borrow)]
    r: Option<Cow<'a, str>>,
    #[serde(borrow)]
    y: Option<Cow<'a, str>>,
}

impl Line<'_> {
    fn into_event(self) -> Option<Event> {
        if let Some(name) = self.r {
            let reason = self.y.as_deref().and_then(GoneReason::from_code);
            return is_artifact_name(&name).then(|| Event::Removed(name.into_owned(), reason));
        }
        let name = self.f?;
        let record = Record {
            content_type: self.t?.into_owned(),
            bytes: self.n,
            created_ms: self.c,
            expires_ms: self.e,
            session: self.s.as_deref().map(Arc::from),
            digest: self.h.as_deref().and_then(parse_digest_hex).map(Box::new),
        };
        is_artifact_name(&name).then(|| Event::Stored(name.into_owned(), record))
    }
}

/// A line exactly as this module writes it (fields in [`encode_stored`]'s or
/// [`encode_removed`]'s order, strings without escapes, numbers as plain digits,
/// no spaces), read without a JSON parser; `None` for any other line, and for a
/// name that is not an artifact's, which [`parse_record`] then reads. Where it
/// answers, it answers as [`parse_record`] would: it only skips the general work
/// for the lines every journal is made of.
fn parse_canonical(line: &[u8]) -> Option<Event> {
    let mut cursor = Cursor { rest: line.strip_prefix(b"{")?.strip_suffix(b"}")? };
    if cursor.key(b"r", true) {
        let name = cursor.string()?;
        let reason = if cursor.key(b"y", false) { GoneReason::from_code(cursor.string()?) } else { None };
        return (cursor.rest.is_empty() && is_artifact_name(name)).then(|| Event::Removed(name.to_owned(), reason));
    }
    if !cursor.key(b"f", true) {
        return None;
    }
    let name = cursor.string()?;
    if !cursor.key(b"t", false) {
        return None;
    }
    let mut record = Record { content_type: cursor.string()?.to_owned(), ..Record::default() };
    if cursor.key(b"n", false) {
        record.bytes = Some(cursor.number()?);
    }
    if cursor.key(b"c", false) {
        record.created_ms = Some(cursor.number()?);
    }
    if cursor.key(b"e", false) {
        record.expires_ms = Some(cursor.number()?);
    }
    if cursor.key(b"s", false) {
        record.session = Some(Arc::from(cursor.string()?));
    }
    if cursor.key(b"h", false) {
        record.digest = parse_digest_hex(cursor.string()?).map(Box::new);
    }
    (cursor.rest.is_empty() && is_artifact_name(name)).then(|| Event::Stored(name.to_owned(), record))
}

/// What [`parse_canonical`] has still to read of a line.
struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// Steps over `"key":` (after a comma unless `first`) when the line goes on with it.
    fn key(&mut self, key: &[u8], first: bool) -> bool {
        let rest = if first { Some(self.rest) } else { self.rest.strip_prefix(b",") };
        let after = rest
            .and_then(|r| r.strip_prefix(b"\""))
            .and_then(|r| r.strip_prefix(key))
            .and_then(|r| r.strip_prefix(b"\":"));
        match after {
            Some(after) => {
                self.rest = after;
                true
            }
            None => false,
        }
    }

    /// A string without escapes or control characters (`None` for any other).
    fn string(&mut self) -> Option<&'a str> {
        let body = self.rest.strip_prefix(b"\"")?;
        let end = body.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if body[end] != b'"' {
            return None;
        }
        self.rest = &body[end + 1..];
        std::str::from_utf8(&body[..end]).ok()
    }

    /// A number as plain decimal digits that fits in a `u64`, without a leading
    /// zero (`None` for any other). What follows the digits (a fraction, an
    /// exponent) is left unread, so the line is not read canonically.
    fn number(&mut self) -> Option<u64> {
        let digits = self.rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (text, rest) = self.rest.split_at(digits);
        if text.is_empty() || (text.len() > 1 && text[0] == b'0') {
            return None;
        }
        self.rest = rest;
        text.iter().try_fold(0u64, |n, &d| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
    }
}

fn parse_record(bytes: &[u8]) -> Option<Event> {
    match serde_json::from_slice::<Line<'_>>(bytes) {
        Ok(line) => line.into_event(),
        Err(_) => parse_loosely(bytes),
    }
}

/// [`parse_record`] for lines that are not of the usual shape: any JSON
/// object, its fields of the wrong type ignored.
fn parse_loosely(bytes: &[u8]) -> Option<Event> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if let Some(name) = value.get("r").and_then(serde_json::Value::as_str) {
        let reason = value.get("y").and_then(serde_json::Value::as_str).and_then(GoneReason::from_code);
        return is_artifact_name(name).then(|| Event::Removed(name.to_owned(), reason));
    }
    let name = value.get("f")?.as_str()?;
    let number = |key: &str| value.get(key).and_then(serde_json::Value::as_u64);
    let record = Record {
        content_type: value.get("t")?.as_str()?.to_owned(),
        bytes: number("n"),
        created_ms: number("c"),
        expires_ms: number("e"),
        session: value.get("s").and_then(serde_json::Value::as_str).map(Arc::from),
        digest: value.get("h").and_then(serde_json::Value::as_str).and_then(parse_digest_hex).map(Box::new),
    };
    is_artifact_name(name).then(|| Event::Stored(name.to_owned(), record))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(content_type: &str) -> Record {
        Record { content_type: content_type.to_owned(), ..Record::default() }
    }

    fn open(path: &std::path::Path) -> Arc<Dir> {
        Arc::new(Dir::open(path, false, false).unwrap())
    }

    fn stored(created_ms: u64) -> Record {
        Record { content_type: "text/plain".to_owned(), bytes: Some(10), created_ms: Some(created_ms), ..Record::default() }
    }

    #[test]
    fn record_round_trip_with_escapes() {
        let record = Record {
            content_type: "text/x \"q\" {\"f\":\n".to_owned(),
            bytes: Some(12),
            created_ms: Some(1_700_000_000_000),
            expires_ms: Some(1_700_000_360_000),
            session: Some(Arc::from("s \"1\"")),
            digest: Some(Box::new(crate::lifecycle::digest(b"x"))),
        };
        let line = encode_stored("1_1_a.txt", &record);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let parsed = parse_line(&line[..line.len() - 1]).unwrap();
        assert_eq!(parsed, Event::Stored("1_1_a.txt".to_owned(), record));
        let removed = encode_removed("1_1_a.txt", Some(GoneReason::Evicted));
        assert_eq!(
            parse_line(&removed[..removed.len() - 1]),
            Some(Event::Removed("1_1_a.txt".to_owned(), Some(GoneReason::Evicted)))
        );
    }

    /// Lines of another shape than the usual one read as they always did.
    #[test]
    fn lines_of_unusual_shapes_are_read_loosely() {
        let odd = br#"{"f":"1_1_a.txt","t":"text/plain","n":-1,"c":1.5,"s":7,"x":[1]}"#;
        assert_eq!(parse_line(odd), Some(Event::Stored("1_1_a.txt".to_owned(), plain("text/plain"))));
        let r_not_text = br#"{"r":5,"f":"1_1_a.txt","t":"x/y"}"#;
        assert_eq!(parse_line(r_not_text), Some(Event::Stored("1_1_a.txt".to_owned(), plain("x/y"))));
        let twice = br#"{"r":"1_1_a.txt","r":"1_2_b.txt","y":"e"}"#;
        assert_eq!(parse_line(twice), Some(Event::Removed("1_2_b.txt".to_owned(), Some(GoneReason::Expired))));
        let escaped = br#"{"f":"1_1_\u0061.txt","t":"text/\"q\""}"#;
        assert_eq!(parse_line(escaped), Some(Event::Stored("1_1_a.txt".to_owned(), plain("text/\"q\""))));
        assert_eq!(parse_line(br#"{"f":null,"t":"x"}"#), None);
        assert_eq!(parse_line(b"[1,2]"), None);
    }

    #[test]
    fn torn_line_followed_by_record_is_recovered() {
        let line = b"{\"f\":\"1_1_a.txt\",\"t\":\"text/pl{\"f\":\"2_2_b.json\",\"t\":\"application/json\"}";
        assert_eq!(
            parse_line(line),
            Some(Event::Stored(
                "2_2_b.json".to_owned(),
                Record { content_type: "application/json".to_owned(), ..Record::default() }
            ))
        );
        let torn_then_removal = b"{\"f\":\"1_1_a.txt\",\"t\":\"te{\"r\":\"2_2_b.json\"}";
        assert_eq!(parse_line(torn_then_removal), Some(Event::Removed("2_2_b.json".to_owned(), None)));
        assert_eq!(parse_line(b"{\"f\":\"1_1_a.txt\",\"t\":\"te"), None);
        assert_eq!(parse_line(b"garbage"), None);
        assert_eq!(parse_line(b"{\"f\":\".metadata.json\",\"t\":\"x\"}"), None);
        assert_eq!(parse_line(b"{\"f\":\"../x\",\"t\":\"x\"}"), None);
    }

    #[test]
    fn refresh_reads_only_complete_lines_and_new_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let types = Catalog::load(Some(open(dir.path())));
        assert_eq!(types.content_type("1_1_a.txt"), None);
        let journal = dir.path().join(JOURNAL_FILE);
        std::fs::write(
            &journal,
            b"{\"f\":\"1_1_a.txt\",\"t\":\"text/plain\"}\n{\"f\":\"2_2_b.bin\",\"t\":\"app",
        )
        .unwrap();
        assert_eq!(types.content_type("1_1_a.txt").as_deref(), Some("text/plain"));
        assert_eq!(types.content_type("2_2_b.bin"), None);
        let mut f = std::fs::OpenOptions::new().append(true).open(&journal).unwrap();
        f.write_all(b"lication/x\"}\n").unwrap();
        assert_eq!(types.content_type("2_2_b.bin").as_deref(), Some("application/x"));
    }

    /// A catalog holds one record per artifact, a hundred thousand and more in a long-lived
    /// directory: a record stays small (a digest, which few records have, is boxed).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_record_is_at_most_96_bytes() {
        assert!(std::mem::size_of::<Record>() <= 96, "{} bytes", std::mem::size_of::<Record>());
    }

    /// A journal read from its start gets room for its records at once, and only as
    /// much as its lines need, whether the first chunk read is the whole journal or a
    /// part of it: lines longer than the shortest possible ones once made the table
    /// twice as large as needed (memory the first read touched for nothing).
    #[test]
    fn a_journal_read_from_its_start_gets_room_for_its_lines_only() {
        let long_fields = ",\"n\":1234567,\"c\":1700000000000,\"e\":1800000000000,\"s\":\"a-session-name\"";
        for (count, fields) in [(300, ""), (5_000, long_fields), (20_000, long_fields), (40_000, "")] {
            let dir = tempfile::tempdir().unwrap();
            let journal: String =
                (0..count).map(|i| format!("{{\"f\":\"1700000000000_{i}_k{i}.txt\",\"t\":\"text/plain\"{fields}}}\n")).collect();
            std::fs::write(dir.path().join(JOURNAL_FILE), &journal).unwrap();
            let catalog = Catalog::load(Some(open(dir.path())));
            let known = catalog.known();
            assert_eq!(known.records.len(), count);
            let mut needed = Records::default();
            needed.reserve(count);
            let needed = needed.capacity();
            assert_eq!(known.records.capacity(), needed, "{count} lines of {} bytes", journal.len() / count);
        }
    }

    /// Content types the SDK's own `FileStorage` writes after the store opened
    /// the directory are found on a lookup miss.
    #[test]
    fn metadata_written_later_is_read_on_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let types = Catalog::load(Some(open(dir.path())));
        assert_eq!(types.content_type("1_1_a.png"), None);
        std::fs::write(dir.path().join(METADATA_FILE), br#"{"1_1_a.png":"image/png"}"#).unwrap();
        assert_eq!(types.content_type("1_1_a.png").as_deref(), Some("image/png"));
        // Rewritten with one more entry (the SDK rewrites the whole file).
        std::fs::write(dir.path().join(METADATA_FILE), br#"{"1_1_a.png":"image/png","2_2_b.json":"application/json"}"#).unwrap();
        assert_eq!(types.content_type("2_2_b.json").as_deref(), Some("application/json"));
    }

    /// A journal replaced by another, longer file is read from its start, not
    /// from the offset reached in the old one.
    #[test]
    fn a_replaced_journal_is_read_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join(JOURNAL_FILE);
        std::fs::write(&journal, encode_stored("1_1_a.txt", &plain("text/plain"))).unwrap();
        let types = Catalog::load(Some(open(dir.path())));
        assert_eq!(types.content_type("1_1_a.txt").as_deref(), Some("text/plain"));
        let mut replacement = encode_stored("2_2_b.json", &plain("application/json"));
        replacement.extend(encode_stored("3_3_c.csv", &plain("text/csv")));
        let staged = dir.path().join("replacement");
        std::fs::write(&staged, &replacement).unwrap();
        std::fs::rename(&staged, &journal).unwrap();
        assert_eq!(types.content_type("2_2_b.json").as_deref(), Some("application/json"));
        assert_eq!(types.content_type("3_3_c.csv").as_deref(), Some("text/csv"));
    }

    /// Lines another process appended are applied a batch at a time: a lookup from
    /// another thread while they are read gets the catalog between two batches (it
    /// sees part of them), not after the whole read.
    #[test]
    fn lookups_are_answered_while_a_long_journal_is_read() {
        const APPENDED: usize = 400_000;
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join(JOURNAL_FILE);
        std::fs::write(&journal, encode_stored("1_0_first.txt", &plain("text/plain"))).unwrap();
        let catalog = Catalog::load(Some(open(dir.path())));
        let mut lines = Vec::with_capacity(APPENDED * 60);
        for i in 1..=APPENDED {
            lines.extend(encode_stored(&format!("1700000000000_{i}_k{i}.txt"), &plain("text/plain")));
        }
        std::fs::OpenOptions::new().append(true).open(&journal).unwrap().write_all(&lines).unwrap();
        let seen = std::thread::scope(|scope| {
            let reader = scope.spawn(|| catalog.get("1_9_not_there.txt"));
            let mut seen = std::collections::BTreeSet::new();
            while !reader.is_finished() {
                seen.insert(catalog.known().records.len());
                std::thread::yield_now();
            }
            assert_eq!(reader.join().unwrap(), None);
            seen
        });
        assert_eq!(catalog.known().records.len(), APPENDED + 1);
        let between: Vec<usize> = seen.into_iter().filter(|&n| n > 1 && n < APPENDED + 1).collect();
        assert!(!between.is_empty(), "no lookup was answered while the lines were read");
        // The counts a catalog held for a whole chunk of the file at a time could show.
        let chunk_ends: std::collections::BTreeSet<usize> = (1..=lines.len().div_ceil(READ_CHUNK))
            .map(|k| 1 + lines[..(k * READ_CHUNK).min(lines.len())].iter().filter(|&&b| b == b'\n').count())
            .collect();
        assert!(between.iter().any(|n| !chunk_ends.contains(n)), "lookups saw only whole chunks: {between:?}");
    }

    /// A name another process removed is dropped from the use order even
    /// when this catalog no longer has its record, and a name the catalog
    /// does not hold is never put into it: no victim is ever a ghost.
    #[test]
    fn the_use_order_holds_only_names_the_catalog_holds() {
        let mut known = Known::default();
        known.track_uses(true);
        known.insert("1_1_a.txt".to_owned(), stored(1));
        // As `forget` found it when another process's removal was read first.
        known.records.swap_remove("1_1_a.txt");
        known.forget("1_1_a.txt");
        assert!(known.uses.as_ref().is_some_and(UseOrder::is_empty));
        known.touch("1_2_ghost.txt", 5);
        assert!(known.uses.as_ref().is_some_and(UseOrder::is_empty));
        assert_eq!(known.next_to_free(1, 10, None, 0), None, "nothing left to remove");
    }

    #[test]
    fn what_expired_is_freed_first_then_the_least_recently_used() {
        let mut known = Known::default();
        known.insert("1_1_old.txt".to_owned(), stored(1));
        known.insert("1_2_brief.txt".to_owned(), Record { expires_ms: Some(50), ..stored(2) });
        known.insert("1_3_new.txt".to_owned(), stored(3));
        assert_eq!(known.stored_bytes(), 30);
        assert_eq!(known.next_to_free(30, 0, None, 100), None);
        assert_eq!(known.next_to_free(30, 10, None, 100), Some((vec!["1_2_brief.txt".to_owned()], GoneReason::Expired)));
        assert_eq!(known.next_to_free(30, 10, None, 49), Some((vec!["1_1_old.txt".to_owned()], GoneReason::Evicted)));
        known.touch("1_1_old.txt", 60);
        assert_eq!(known.next_to_free(30, 10, None, 49), Some((vec!["1_2_brief.txt".to_owned()], GoneReason::Evicted)));
        let stats = known.stats(50);
        assert_eq!((stats.artifacts, stats.bytes, stats.stored_bytes), (2, 20, 20));
    }

    /// A journal of which most lines are dead is rewritten with its live
    /// records and recent removal reasons; a reader sees the same catalog.
    #[cfg(unix)]
    #[test]
    fn compaction_keeps_the_live_records_and_recent_reasons() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Vec::new();
        for i in 0..20_000u64 {
            let name = format!("{i}_{i}_dead.txt");
            journal.extend(encode_stored(&name, &stored(i)));
            journal.extend(encode_removed(&name, (i % 2 == 0).then_some(GoneReason::Evicted)));
        }
        journal.extend(encode_stored("7_7_live.txt", &Record { session: Some(Arc::from("s")), ..stored(7) }));
        journal.extend(b"{\"f\":\"9_9_torn.txt\",\"t\":\"te");
        std::fs::write(dir.path().join(JOURNAL_FILE), &journal).unwrap();
        let catalog = Catalog::load(Some(open(dir.path())));
        assert!(catalog.compaction_due());
        assert!(catalog.compact(&super::super::ARTIFACT_TEMPS, false).unwrap());
        let compacted = std::fs::read(dir.path().join(JOURNAL_FILE)).unwrap();
        assert!(compacted.len() < 80 * (KEPT_REMOVALS + 1), "{} bytes", compacted.len());
        // The catalog read before and one read after agree.
        catalog.refresh();
        let after = Catalog::load(Some(open(dir.path())));
        for c in [&catalog, &after] {
            assert_eq!(c.known().records.len(), 1);
            assert_eq!(c.get("7_7_live.txt").and_then(|r| r.session).as_deref(), Some("s"));
            assert_eq!(c.known().removals.reason("19998_19998_dead.txt"), Some(GoneReason::Evicted));
        }
        assert!(!after.compaction_due());
        // The compacted journal is appended to as before.
        after.record("8_8_next.txt", stored(8), false).unwrap();
        assert_eq!(Catalog::load(Some(open(dir.path()))).known().records.len(), 2);
        let left: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(left, [JOURNAL_FILE], "no temporary file is left");
    }

    /// [`Known::apply`] as it was before the name was looked up once: the record
    /// dropped, then accounted for again.
    fn apply_in_two_lookups(known: &mut Known, event: Event) {
        match event {
            Event::Stored(name, record) => {
                if record.created_ms.is_none() {
                    if let Some(existing) = known.records.get_mut(&name) {
                        existing.content_type = record.content_type;
                        return;
                    }
                }
                known.drop_record(&name);
                match record.digest.as_deref().copied() {
                    Some(d) => {
                        let entry = known.shared.entry(d).or_insert((0, record.bytes.unwrap_or(0)));
                        if entry.0 == 0 {
                            known.held += entry.1;
                        }
                        entry.0 += 1;
                    }
                    None => known.held += record.bytes.unwrap_or(0),
                }
                if record.bytes.is_none() {
                    known.sizeless += 1;
                }
                known.expiries.insert(&name, record.expires_ms);
                if let Some(uses) = &mut known.uses {
                    uses.insert_unused(&name, record.created_ms.unwrap_or(0));
                }
                known.removals.forget(&name);
                known.records.insert(name, record);
            }
            removed => known.apply(removed),
        }
    }

    /// The next number of a seeded xorshift generator (`state`, never zero), below `n`.
    fn below(state: &mut u64, n: u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state % n
    }

    /// Applying any sequence of stores (new names, names stored again, with and
    /// without sizes, digests, expiries and creation times) and removals leaves
    /// the catalog as the two-lookup apply did: records, bytes held, sharing,
    /// expiries, use order and remembered reasons.
    #[test]
    fn one_lookup_apply_keeps_the_catalog_as_two_lookups_did() {
        const NAMES: [&str; 5] = ["1_1_a.txt", "1_2_b.txt", "1_3_c.txt", "1_4_d.txt", "1_5_e.txt"];
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| below(&mut rng, n);
        for case in 0..2_000 {
            let (mut one, mut two) = (Known::default(), Known::default());
            let budget = case % 2 == 0;
            one.track_uses(budget);
            two.track_uses(budget);
            for _ in 0..next(40) {
                let name = NAMES[next(NAMES.len() as u64) as usize].to_owned();
                let event = if next(4) == 0 {
                    Event::Removed(name, [None, Some(GoneReason::Expired), Some(GoneReason::Evicted)][next(3) as usize])
                } else {
                    let maybe = |v: u64, next: &mut dyn FnMut(u64) -> u64| (next(3) != 0).then_some(v);
                    let record = Record {
                        content_type: format!("t/{}", next(3)),
                        bytes: maybe(next(100), &mut next),
                        created_ms: maybe(next(50), &mut next),
                        expires_ms: maybe(next(50), &mut next),
                        session: None,
                        digest: (next(2) == 0).then(|| Box::new(crate::lifecycle::digest(&[next(3) as u8]))),
                    };
                    Event::Stored(name, record)
                };
                one.apply(event.clone());
                apply_in_two_lookups(&mut two, event);
            }
            assert_eq!(one.records, two.records, "case {case}");
            assert_eq!((one.held, one.sizeless), (two.held, two.sizeless), "case {case}");
            assert_eq!(one.shared, two.shared, "case {case}");
            assert_eq!(one.expiries.due(u64::MAX), two.expiries.due(u64::MAX), "case {case}");
            for name in NAMES {
                assert_eq!(one.removals.reason(name), two.removals.reason(name), "case {case}");
            }
            let order = |known: &mut Known| {
                let mut order = Vec::new();
                while let Some(uses) = &mut known.uses {
                    let Some(oldest) = uses.oldest().map(str::to_owned) else { break };
                    uses.remove(&oldest);
                    order.push(oldest);
                }
                order
            };
            assert_eq!(order(&mut one), order(&mut two), "case {case}");
        }
    }

    /// A line shaped as this module writes it, then bent: fields left out, given
    /// values of the wrong type, escaped, out of range, reordered, doubled, spaced.
    fn bent_line(rng: &mut u64) -> Vec<u8> {
        let mut next = |n: usize| below(rng, n as u64) as usize;
        const STRINGS: [&str; 14] = [
            "\"1700000000000_7_k7.txt\"", "\"1_1_a.json\"", "\"../x\"", "\".metadata.json\"", "\"text/plain\"",
            "\"e\"", "\"v\"", "\"1_1_\u{e9}\u{4e00}.txt\"", "\"a\\u0041.txt\"", "\"tab\there\"", "\"\\\"\"", "\"\"",
            "\"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\"", "\"1_2_\\\"q\\\".txt\"",
        ];
        const NUMBERS: [&str; 13] = [
            "0", "7", "1700000000000", "18446744073709551615", "18446744073709551616", "00", "012", "-1", "1.5",
            "1e3", "null", "", "99999999999999999999999",
        ];
        let template: &[(&str, bool)] = if next(4) == 0 {
            &[("r", false), ("y", false)]
        } else {
            &[("f", false), ("t", false), ("n", true), ("c", true), ("e", true), ("s", false), ("h", false)]
        };
        let mut fields: Vec<String> = Vec::new();
        for &(key, numeric) in template {
            if next(4) == 0 {
                continue;
            }
            let value = if numeric == (next(5) != 0) { NUMBERS[next(NUMBERS.len())] } else { STRINGS[next(STRINGS.len())] };
            let key = if next(30) == 0 { ["z", "F", "r", "f"][next(4)] } else { key };
            fields.push(format!("\"{key}\":{value}"));
        }
        if fields.len() > 1 && next(10) == 0 {
            let (a, b) = (next(fields.len()), next(fields.len()));
            fields.swap(a, b);
        }
        if !fields.is_empty() && next(10) == 0 {
            let doubled = fields[next(fields.len())].clone();
            fields.insert(next(fields.len() + 1), doubled);
        }
        let mut line = format!("{{{}}}", fields.join(",")).into_bytes();
        match next(12) {
            0 => line.insert(next(line.len() + 1), b' '),
            1 => line.push(b' '),
            2 => line.truncate(next(line.len() + 1)),
            3 => line.insert(next(line.len() + 1), [b'{', b'}', b',', b'"', b'\\', 0x01, 0xff][next(7)]),
            _ => {}
        }
        line
    }

    /// The reader of the usual lines answers as the JSON parser does, for any
    /// line near their shape (and reads most of the lines it is given).
    #[test]
    fn canonical_reading_agrees_with_the_json_parser() {
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        let mut read_canonically = 0;
        for _ in 0..200_000 {
            let line = bent_line(&mut rng);
            let fast = parse_canonical(&line);
            if let Some(event) = &fast {
                read_canonically += 1;
                assert_eq!(Some(event.clone()), parse_record(&line), "{}", String::from_utf8_lossy(&line));
            }
            let general = if line.is_empty() { None } else { parse_generally(&line) };
            assert_eq!(parse_line(&line), general, "{}", String::from_utf8_lossy(&line));
        }
        assert!(read_canonically > 2_000, "only {read_canonically} lines were read canonically");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4096, ..Default::default() })]

        /// Every line this module writes is one the canonical reader reads.
        #[test]
        fn written_lines_are_read_without_the_json_parser(
            name in "[0-9]{1,13}_[0-9]{1,4}_[a-z0-9._-]{1,20}\\.(txt|json|bin)",
            content_type in "[ -~\u{e9}\u{4e00}]{0,16}",
            bytes in proptest::option::of(proptest::prelude::any::<u64>()),
            created_ms in proptest::option::of(proptest::prelude::any::<u64>()),
            expires_ms in proptest::option::of(proptest::prelude::any::<u64>()),
            session in proptest::option::of("[ -~]{0,10}"),
            hashed in proptest::prelude::any::<bool>(),
            reason in proptest::prelude::any::<Option<bool>>(),
        ) {
            let record = Record {
                content_type,
                bytes,
                created_ms,
                expires_ms,
                session: session.map(|s| Arc::from(s.as_str())),
                digest: hashed.then(|| Box::new(crate::lifecycle::digest(name.as_bytes()))),
            };
            let escaped = record.content_type.contains(['"', '\\']) || record.session.as_deref().is_some_and(|s| s.contains(['"', '\\']));
            let line = encode_stored(&name, &record);
            let line = &line[..line.len() - 1];
            proptest::prop_assert_eq!(parse_record(line), Some(Event::Stored(name.clone(), record)));
            proptest::prop_assert_eq!(parse_canonical(line).is_some(), !escaped);
            proptest::prop_assert_eq!(parse_line(line), parse_record(line));
            let reason = reason.map(|expired| if expired { GoneReason::Expired } else { GoneReason::Evicted });
            let removed = encode_removed(&name, reason);
            let removed = &removed[..removed.len() - 1];
            proptest::prop_assert_eq!(parse_canonical(removed), Some(Event::Removed(name, reason)));
        }
    }
}
