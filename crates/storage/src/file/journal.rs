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
    /// Bytes of the journal consumed so far (always at a line boundary).
    read_offset: Mutex<u64>,
    /// `O_APPEND` descriptor, opened on the first store.
    appender: RwLock<Option<Arc<File>>>,
}

impl ContentTypes {
    /// Loads `.metadata.json` (if present and valid) and then the journal.
    /// Unreadable or malformed data is ignored, as the SDK does.
    pub(crate) fn load(dir: &Path) -> Self {
        let mut types = HashMap::new();
        if let Ok(raw) = std::fs::read(dir.join(METADATA_FILE)) {
            if let Ok(serde_json::Value::Object(map)) = serde_json::from_slice(&raw) {
                for (name, value) in map {
                    if let serde_json::Value::String(t) = value {
                        types.insert(name, t);
                    }
                }
            }
        }
        let loaded = ContentTypes {
            dir: dir.to_path_buf(),
            types: RwLock::new(types),
            read_offset: Mutex::new(0),
            appender: RwLock::new(None),
        };
        loaded.refresh();
        loaded
    }

    /// The content type of `filename`. When it is not known yet, the journal
    /// is re-read from where reading last stopped (another instance or
    /// process may have appended to it).
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
        let mut writer: &File = &file;
        writer
            .write_all(&line)
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
        *self
            .read_offset
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = 0;
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

    /// Reads complete journal lines appended since the last read.
    fn refresh(&self) {
        let mut offset = self
            .read_offset
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Ok(fresh) = read_from(&self.dir.join(JOURNAL_FILE), &mut offset) else {
            return;
        };
        if fresh.is_empty() {
            return;
        }
        let mut types = self.types.write().unwrap_or_else(PoisonError::into_inner);
        for (name, content_type) in fresh {
            types.insert(name, content_type);
        }
    }
}

/// Reads the journal from `*offset`, returns the records of the complete
/// lines found and advances `*offset` past them. A journal shorter than the
/// offset (replaced or truncated) is read again from the start.
fn read_from(path: &Path, offset: &mut u64) -> io::Result<Vec<(String, String)>> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len < *offset {
        *offset = 0;
    }
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
}
