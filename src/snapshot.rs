//! `NativeSnapshotDir`: session snapshot files (`offload-sessions`) for the
//! JavaScript `FileSnapshotStorage`. JSON stays in JavaScript; every file
//! operation runs on the libuv worker pool ([`on_worker`]).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_sessions::{SnapshotDir, SnapshotFile, SnapshotLocation};

use crate::error::to_js_error;
use crate::task::{on_worker, Work};

/// Snapshot files of all sessions under one base directory.
#[napi]
pub struct NativeSnapshotDir {
  dir: Arc<SnapshotDir>,
}

/// Resolves `kind` (`latest`, `manifest` or `history`) and the snapshot id.
fn file_of(kind: &str, snapshot_id: Option<&str>) -> Result<SnapshotFile> {
  match (kind, snapshot_id) {
    ("latest", _) => Ok(SnapshotFile::Latest),
    ("manifest", _) => Ok(SnapshotFile::Manifest),
    ("history", Some(id)) => SnapshotFile::history(id).map_err(to_js_error),
    _ => Err(Error::new(Status::InvalidArg, format!("unknown snapshot file kind '{kind}'"))),
  }
}

/// A scope of a session, as the SDK's `SnapshotLocation` (`{ sessionId, scope, scopeId }`).
#[napi(object)]
pub struct SnapshotScope {
  pub session_id: String,
  pub scope: String,
  pub scope_id: String,
}

fn location_of(scope: &SnapshotScope) -> Result<SnapshotLocation> {
  SnapshotLocation::new(&scope.session_id, &scope.scope, &scope.scope_id).map_err(to_js_error)
}

/// Converts a JavaScript page size (already an integer, or `Infinity`).
pub(crate) fn page_limit(limit: Option<f64>) -> Option<usize> {
  limit.map(|l| if l.is_nan() || l < 0.0 { 0 } else if l >= usize::MAX as f64 { usize::MAX } else { l as usize })
}

#[napi]
impl NativeSnapshotDir {
  /// Snapshot storage rooted at `baseDir`; `durable` fsyncs every write.
  #[napi(constructor, catch_unwind)]
  pub fn new(base_dir: String, durable: Option<bool>) -> Self {
    Self { dir: Arc::new(SnapshotDir::new(base_dir, durable.unwrap_or(false))) }
  }

  /// Atomically replaces a file (`kind`: `latest`, `manifest` or `history`)
  /// with `content`. Writes to one file land in call order.
  #[napi(ts_return_type = "Promise<void>", catch_unwind)]
  pub fn write(
    &self,
    location: SnapshotScope,
    kind: String,
    snapshot_id: Option<String>,
    content: String,
  ) -> Result<AsyncTask<Work<()>>> {
    let location = location_of(&location)?;
    let file = file_of(&kind, snapshot_id.as_deref())?;
    let (dir, ticket) = (self.dir.clone(), self.dir.ticket());
    Ok(on_worker(move || dir.write(&location, &file, content.as_bytes(), ticket).map_err(to_js_error)))
  }

  /// A file's text, or `null` when it does not exist.
  #[napi(ts_return_type = "Promise<string | null>", catch_unwind)]
  pub fn read(
    &self,
    location: SnapshotScope,
    kind: String,
    snapshot_id: Option<String>,
  ) -> Result<AsyncTask<Work<Option<String>>>> {
    let location = location_of(&location)?;
    let file = file_of(&kind, snapshot_id.as_deref())?;
    let dir = self.dir.clone();
    Ok(on_worker(move || {
      let bytes = dir.read(&location, &file).map_err(to_js_error)?;
      // Invalid UTF-8 is replaced, as Node's `readFile(path, 'utf8')` does.
      Ok(bytes.map(|b| String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())))
    }))
  }

  /// Immutable snapshot ids in ascending order, after `startAfter`, at most `limit`.
  #[napi(ts_return_type = "Promise<string[]>", catch_unwind)]
  pub fn list_ids(
    &self,
    location: SnapshotScope,
    start_after: Option<String>,
    limit: Option<f64>,
  ) -> Result<AsyncTask<Work<Vec<String>>>> {
    let location = location_of(&location)?;
    let (dir, limit) = (self.dir.clone(), page_limit(limit));
    Ok(on_worker(move || dir.list_ids(&location, start_after.as_deref(), limit).map_err(to_js_error)))
  }

  /// Removes everything of a session.
  #[napi(ts_return_type = "Promise<void>", catch_unwind)]
  pub fn delete_session(&self, session_id: String) -> AsyncTask<Work<()>> {
    let dir = self.dir.clone();
    on_worker(move || dir.delete_session(&session_id).map_err(to_js_error))
  }
}
