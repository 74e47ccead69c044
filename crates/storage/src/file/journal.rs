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
//! line on the same physical line. Nothing is ever rewritten: the cost of a
//! store or a removal does not depend on how many artifacts there are.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::names::is_artifact_name;
use crate::lifecycle::{digest_hex, parse_digest_hex, ContentDigest, GoneReason, Removals, Stats, UseOrder};
use crate::StorageError;

/// The SDK's metadata file: one JSON object mapping file name to content
/// type. Read when a directory is opened; never written.
pub(crate) const METADATA_FILE: &str = ".metadata.json";

/// The append-only journal of stored and removed artifacts.
pub(crate) const JOURNAL_FILE: &str = ".metadata.journal";

/// Mark the start of a record; cannot occur inside a JSON-encoded string
/// (where `"` is always escaped).
const RECORD_STARTS: [&[u8]; 2] = [b"{\"f\":", b"{\"r\":"];

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
    /// Set when the content is shared with identical artifacts.
    pub(crate) digest: Option<ContentDigest>,
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

/// The catalog's contents.
#[derive(Debug, Default)]
pub(crate) struct Known {
    pub(crate) records: HashMap<String, Record>,
    pub(crate) removals: Removals,
    /// Artifacts sharing each deduplicated content, and its size.
    pub(crate) shared: HashMap<ContentDigest, (usize, u64)>,
    /// Least-recently-used order, kept while a byte budget is set.
    pub(crate) uses: Option<UseOrder>,
}

impl Known {
    fn insert(&mut self, name: String, record: Record) {
        self.forget(&name);
        if let Some(d) = record.digest {
            let entry = self.shared.entry(d).or_insert((0, record.bytes.unwrap_or(0)));
            entry.0 += 1;
        }
        if let Some(uses) = &mut self.uses {
            uses.insert_unused(&name, record.created_ms.unwrap_or(0));
        }
        self.removals.forget(&name);
        self.records.insert(name, record);
    }

    /// Drops `name`; returns its record. With a digest whose last user it
    /// was, the digest is returned too (its shared content can go).
    pub(crate) fn forget(&mut self, name: &str) -> Option<(Record, Option<ContentDigest>)> {
        let record = self.records.remove(name)?;
        if let Some(uses) = &mut self.uses {
            uses.remove(name);
        }
        let mut orphan = None;
        if let Some(d) = record.digest {
            if let Some(entry) = self.shared.get_mut(&d) {
                entry.0 = entry.0.saturating_sub(1);
                if entry.0 == 0 {
                    self.shared.remove(&d);
                    orphan = Some(d);
                }
            }
        }
        Some((record, orphan))
    }

    fn apply(&mut self, event: Event) {
        match event {
            Event::Stored(name, record) => self.insert(name, record),
            Event::Removed(name, reason) => {
                self.forget(&name);
                if let Some(reason) = reason {
                    self.removals.remember(&name, reason);
                }
            }
        }
    }

    /// Bytes held: known sizes, deduplicated content counted once.
    pub(crate) fn stored_bytes(&self) -> u64 {
        let unique: u64 = self.records.values().filter(|r| r.digest.is_none()).filter_map(|r| r.bytes).sum();
        unique + self.shared.values().map(|&(_, len)| len).sum::<u64>()
    }

    /// Live artifacts at `now_ms`.
    pub(crate) fn stats(&self, now_ms: u64) -> Stats {
        let mut stats = Stats { stored_bytes: self.stored_bytes(), ..Stats::default() };
        for record in self.records.values().filter(|r| !r.expired(now_ms)) {
            stats.add(record.session.as_deref(), record.bytes.unwrap_or(0));
        }
        stats
    }

    /// Names whose record `pick` selects.
    pub(crate) fn names_where(&self, pick: impl Fn(&Record) -> bool) -> Vec<String> {
        self.records.iter().filter(|(_, r)| pick(r)).map(|(n, _)| n.clone()).collect()
    }
}

/// The catalog of one artifact directory.
#[derive(Debug)]
pub(crate) struct Catalog {
    dir: PathBuf,
    known: RwLock<Known>,
    /// Where reading the journal (and `.metadata.json`) last stopped.
    read: Mutex<ReadState>,
    /// `O_APPEND` descriptor, opened on the first store.
    appender: RwLock<Option<Arc<File>>>,
}

/// How far the journal and the SDK's metadata file have been read.
#[derive(Debug, Default)]
struct ReadState {
    /// Bytes of the journal consumed so far (always at a line boundary).
    offset: u64,
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
    /// Loads `.metadata.json` (if present and valid) and then the journal.
    /// Unreadable or malformed data is ignored, as the SDK does.
    pub(crate) fn load(dir: &Path) -> Self {
        let loaded = Catalog {
            dir: dir.to_path_buf(),
            known: RwLock::new(Known::default()),
            read: Mutex::new(ReadState::default()),
            appender: RwLock::new(None),
        };
        loaded.refresh();
        loaded
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

    /// Appends `lines` (complete lines) with one write.
    fn append(&self, lines: &[u8], durable: bool) -> Result<(), StorageError> {
        let path = self.dir.join(JOURNAL_FILE);
        let file = self.appender(&path)?;
        append_line(&file, lines)
            .and_then(|()| if durable { file.sync_data() } else { Ok(()) })
            .map_err(|e| StorageError::io("append to metadata journal", &path, e))
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
        *self
            .appender
            .write()
            .unwrap_or_else(PoisonError::into_inner) = None;
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        read.offset = 0;
        read.journal = None;
    }

    /// The shared append descriptor, opened (and the journal created) on
    /// first use.
    fn appender(&self, path: &Path) -> Result<Arc<File>, StorageError> {
        if let Some(file) = self
            .appender
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            return Ok(Arc::clone(file));
        }
        let mut slot = self
            .appender
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(file) = slot.as_ref() {
            return Ok(Arc::clone(file));
        }
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| StorageError::io("open metadata journal", path, e))?;
        let file = Arc::new(file);
        *slot = Some(Arc::clone(&file));
        Ok(file)
    }

    fn lookup(&self, filename: &str) -> Option<Record> {
        self.known().records.get(filename).cloned()
    }

    /// Reads `.metadata.json` when it changed since it was last read, then the
    /// complete journal lines appended since the last read.
    fn refresh(&self) {
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        let mut fresh: Vec<Event> = read_metadata(&self.dir.join(METADATA_FILE), &mut read.metadata)
            .into_iter()
            .map(|(name, content_type)| Event::Stored(name, Record { content_type, ..Record::default() }))
            .collect();
        let ReadState { offset, journal, .. } = &mut *read;
        fresh.extend(read_from(&self.dir.join(JOURNAL_FILE), offset, journal).unwrap_or_default());
        if fresh.is_empty() {
            return;
        }
        let mut known = self.write();
        for event in fresh {
            // The SDK's file names a type only: what the journal knows of the
            // same artifact stays.
            if let Event::Stored(name, record) = &event {
                if record.created_ms.is_none() {
                    if let Some(existing) = known.records.get_mut(name) {
                        existing.content_type.clone_from(&record.content_type);
                        continue;
                    }
                }
            }
            known.apply(event);
        }
    }
}

/// The entries of the SDK's `.metadata.json` when it changed since `*last`
/// (its stamp, updated); nothing when it is unchanged, missing or invalid.
fn read_metadata(path: &Path, last: &mut Option<FileStamp>) -> Vec<(String, String)> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let stamp = FileStamp::of(&meta);
    if *last == Some(stamp) {
        return Vec::new();
    }
    *last = Some(stamp);
    let Ok(raw) = std::fs::read(path) else {
        return Vec::new();
    };
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

/// Reads the journal from `*offset`, returns the records of the complete
/// lines found and advances `*offset` past them. A journal that is another
/// file than the one read so far (`*identity`), or shorter than the offset,
/// is read again from the start.
fn read_from(path: &Path, offset: &mut u64, identity: &mut Option<FileStamp>) -> io::Result<Vec<Event>> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    let stamp = FileStamp::of(&meta);
    let len = meta.len();
    if len < *offset || identity.is_some_and(|known| known.identity != stamp.identity) {
        *offset = 0;
    }
    *identity = Some(stamp);
    if len == *offset {
        return Ok(Vec::new());
    }
    file.seek(SeekFrom::Start(*offset))?;
    let mut buf = Vec::with_capacity(usize::try_from(len - *offset).unwrap_or(0));
    file.read_to_end(&mut buf)?;
    let Some(last_newline) = buf.iter().rposition(|&b| b == b'\n') else {
        return Ok(Vec::new());
    };
    let complete = &buf[..=last_newline];
    *offset += complete.len() as u64;
    Ok(complete
        .split(|&b| b == b'\n')
        .filter_map(parse_line)
        .collect())
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
    if let Some(record) = parse_record(line) {
        return Some(record);
    }
    (1..line.len())
        .filter(|&i| RECORD_STARTS.iter().any(|start| line[i..].starts_with(start)))
        .find_map(|i| parse_record(&line[i..]))
}

fn parse_record(bytes: &[u8]) -> Option<Event> {
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
        digest: value.get("h").and_then(serde_json::Value::as_str).and_then(parse_digest_hex),
    };
    is_artifact_name(name).then(|| Event::Stored(name.to_owned(), record))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(content_type: &str) -> Record {
        Record { content_type: content_type.to_owned(), ..Record::default() }
    }

    #[test]
    fn record_round_trip_with_escapes() {
        let record = Record {
            content_type: "text/x \"q\" {\"f\":\n".to_owned(),
            bytes: Some(12),
            created_ms: Some(1_700_000_000_000),
            expires_ms: Some(1_700_000_360_000),
            session: Some(Arc::from("s \"1\"")),
            digest: Some(crate::lifecycle::digest(b"x")),
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
        let types = Catalog::load(dir.path());
        assert_eq!(types.content_type("1_1_a.txt"), None);
        let journal = dir.path().join(JOURNAL_FILE);
        std::fs::write(
            &journal,
            b"{\"f\":\"1_1_a.txt\",\"t\":\"text/plain\"}\n{\"f\":\"2_2_b.bin\",\"t\":\"app",
        )
        .unwrap();
        assert_eq!(types.content_type("1_1_a.txt").as_deref(), Some("text/plain"));
        assert_eq!(types.content_type("2_2_b.bin"), None);
        let mut f = OpenOptions::new().append(true).open(&journal).unwrap();
        f.write_all(b"lication/x\"}\n").unwrap();
        assert_eq!(types.content_type("2_2_b.bin").as_deref(), Some("application/x"));
    }

    /// Content types the SDK's own `FileStorage` writes after the store opened
    /// the directory are found on a lookup miss.
    #[test]
    fn metadata_written_later_is_read_on_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let types = Catalog::load(dir.path());
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
        let types = Catalog::load(dir.path());
        assert_eq!(types.content_type("1_1_a.txt").as_deref(), Some("text/plain"));
        let mut replacement = encode_stored("2_2_b.json", &plain("application/json"));
        replacement.extend(encode_stored("3_3_c.csv", &plain("text/csv")));
        let staged = dir.path().join("replacement");
        std::fs::write(&staged, &replacement).unwrap();
        std::fs::rename(&staged, &journal).unwrap();
        assert_eq!(types.content_type("2_2_b.json").as_deref(), Some("application/json"));
        assert_eq!(types.content_type("3_3_c.csv").as_deref(), Some("text/csv"));
    }
}
