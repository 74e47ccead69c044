//! Content types of artifacts: the SDK's `.metadata.json` (read only) plus
//! an append-only journal written one line per stored artifact.
//!
//! Journal format (`.metadata.journal`): UTF-8, one JSON object per line,
//! `{"f":"<file name>","t":"<content type>"}\n`. Each line is appended with a
//! single `write(2)` on an `O_APPEND` descriptor, so concurrent writers in
//! other processes never interleave within a line. Readers consume only
//! complete lines, skip malformed ones, and recover a record that follows a
//! torn (crash-truncated) line on the same physical line.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use super::names::is_artifact_name;
use crate::StorageError;

/// The SDK's metadata file: one JSON object mapping file name to content
/// type. Read when a directory is opened; never written.
pub(crate) const METADATA_FILE: &str = ".metadata.json";

/// The append-only journal of content types.
pub(crate) const JOURNAL_FILE: &str = ".metadata.journal";

/// Marks the start of a record; cannot occur inside a JSON-encoded string
/// (where `"` is always escaped).
const RECORD_START: &[u8] = b"{\"f\":";

/// Content types known for one artifact directory.
#[derive(Debug)]
pub(crate) struct ContentTypes {
    dir: PathBuf,
    types: RwLock<HashMap<String, String>>,
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

impl ContentTypes {
    /// Loads `.metadata.json` (if present and valid) and then the journal.
    /// Unreadable or malformed data is ignored, as the SDK does.
    pub(crate) fn load(dir: &Path) -> Self {
        let loaded = ContentTypes {
            dir: dir.to_path_buf(),
            types: RwLock::new(HashMap::new()),
            read: Mutex::new(ReadState::default()),
            appender: RwLock::new(None),
        };
        loaded.refresh();
        loaded
    }

    /// The content type of `filename`. When it is not known yet, the journal
    /// is re-read from where reading last stopped (another instance or
    /// process may have appended to it), and `.metadata.json` when it changed.
    pub(crate) fn get(&self, filename: &str) -> Option<String> {
        if let Some(t) = self.lookup(filename) {
            return Some(t);
        }
        self.refresh();
        self.lookup(filename)
    }

    /// Appends the record for `filename` to the journal and remembers it.
    /// With `durable`, the journal is flushed to stable storage.
    pub(crate) fn record(
        &self,
        filename: &str,
        content_type: &str,
        durable: bool,
    ) -> Result<(), StorageError> {
        let path = self.dir.join(JOURNAL_FILE);
        let file = self.appender(&path)?;
        let line = encode_record(filename, content_type);
        append_line(&file, &line)
            .and_then(|()| if durable { file.sync_data() } else { Ok(()) })
            .map_err(|e| StorageError::io("append to metadata journal", &path, e))?;
        self.types
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(filename.to_owned(), content_type.to_owned());
        Ok(())
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

    fn lookup(&self, filename: &str) -> Option<String> {
        self.types
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(filename)
            .cloned()
    }

    /// Reads `.metadata.json` when it changed since it was last read, then the
    /// complete journal lines appended since the last read.
    fn refresh(&self) {
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        let mut fresh = read_metadata(&self.dir.join(METADATA_FILE), &mut read.metadata);
        let ReadState { offset, journal, .. } = &mut *read;
        fresh.extend(read_from(&self.dir.join(JOURNAL_FILE), offset, journal).unwrap_or_default());
        if fresh.is_empty() {
            return;
        }
        let mut types = self.types.write().unwrap_or_else(PoisonError::into_inner);
        for (name, content_type) in fresh {
            types.insert(name, content_type);
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
fn read_from(path: &Path, offset: &mut u64, identity: &mut Option<FileStamp>) -> io::Result<Vec<(String, String)>> {
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

/// One journal line, newline included.
fn encode_record(filename: &str, content_type: &str) -> Vec<u8> {
    let f = serde_json::Value::from(filename).to_string();
    let t = serde_json::Value::from(content_type).to_string();
    format!("{{\"f\":{f},\"t\":{t}}}\n").into_bytes()
}

/// Parses a journal line. When the whole line is not a record (a torn line
/// from a crashed writer followed by a later record), the last complete
/// record on the line is recovered.
fn parse_line(line: &[u8]) -> Option<(String, String)> {
    if line.is_empty() {
        return None;
    }
    if let Some(record) = parse_record(line) {
        return Some(record);
    }
    (1..line.len())
        .filter(|&i| line[i..].starts_with(RECORD_START))
        .find_map(|i| parse_record(&line[i..]))
}

fn parse_record(bytes: &[u8]) -> Option<(String, String)> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let name = value.get("f")?.as_str()?;
    let content_type = value.get("t")?.as_str()?;
    is_artifact_name(name).then(|| (name.to_owned(), content_type.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip_with_escapes() {
        let line = encode_record("1_1_a.txt", "text/x \"q\" {\"f\":\n");
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let parsed = parse_line(&line[..line.len() - 1]).unwrap();
        assert_eq!(
            parsed,
            ("1_1_a.txt".to_owned(), "text/x \"q\" {\"f\":\n".to_owned())
        );
    }

    #[test]
    fn torn_line_followed_by_record_is_recovered() {
        let line = b"{\"f\":\"1_1_a.txt\",\"t\":\"text/pl{\"f\":\"2_2_b.json\",\"t\":\"application/json\"}";
        assert_eq!(
            parse_line(line),
            Some(("2_2_b.json".to_owned(), "application/json".to_owned()))
        );
        assert_eq!(parse_line(b"{\"f\":\"1_1_a.txt\",\"t\":\"te"), None);
        assert_eq!(parse_line(b"garbage"), None);
        assert_eq!(parse_line(b"{\"f\":\".metadata.json\",\"t\":\"x\"}"), None);
        assert_eq!(parse_line(b"{\"f\":\"../x\",\"t\":\"x\"}"), None);
    }

    #[test]
    fn refresh_reads_only_complete_lines_and_new_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let types = ContentTypes::load(dir.path());
        assert_eq!(types.get("1_1_a.txt"), None);
        let journal = dir.path().join(JOURNAL_FILE);
        std::fs::write(
            &journal,
            b"{\"f\":\"1_1_a.txt\",\"t\":\"text/plain\"}\n{\"f\":\"2_2_b.bin\",\"t\":\"app",
        )
        .unwrap();
        assert_eq!(types.get("1_1_a.txt").as_deref(), Some("text/plain"));
        assert_eq!(types.get("2_2_b.bin"), None);
        let mut f = OpenOptions::new().append(true).open(&journal).unwrap();
        f.write_all(b"lication/x\"}\n").unwrap();
        assert_eq!(types.get("2_2_b.bin").as_deref(), Some("application/x"));
    }

    /// Content types the SDK's own `FileStorage` writes after the store opened
    /// the directory are found on a lookup miss.
    #[test]
    fn metadata_written_later_is_read_on_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let types = ContentTypes::load(dir.path());
        assert_eq!(types.get("1_1_a.png"), None);
        std::fs::write(dir.path().join(METADATA_FILE), br#"{"1_1_a.png":"image/png"}"#).unwrap();
        assert_eq!(types.get("1_1_a.png").as_deref(), Some("image/png"));
        // Rewritten with one more entry (the SDK rewrites the whole file).
        std::fs::write(dir.path().join(METADATA_FILE), br#"{"1_1_a.png":"image/png","2_2_b.json":"application/json"}"#).unwrap();
        assert_eq!(types.get("2_2_b.json").as_deref(), Some("application/json"));
    }

    /// A journal replaced by another, longer file is read from its start, not
    /// from the offset reached in the old one.
    #[test]
    fn a_replaced_journal_is_read_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join(JOURNAL_FILE);
        std::fs::write(&journal, encode_record("1_1_a.txt", "text/plain")).unwrap();
        let types = ContentTypes::load(dir.path());
        assert_eq!(types.get("1_1_a.txt").as_deref(), Some("text/plain"));
        let mut replacement = encode_record("2_2_b.json", "application/json");
        replacement.extend(encode_record("3_3_c.csv", "text/csv"));
        let staged = dir.path().join("replacement");
        std::fs::write(&staged, &replacement).unwrap();
        std::fs::rename(&staged, &journal).unwrap();
        assert_eq!(types.get("2_2_b.json").as_deref(), Some("application/json"));
        assert_eq!(types.get("3_3_c.csv").as_deref(), Some("text/csv"));
    }
}
