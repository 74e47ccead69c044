//! `NativeSnapshotDir`: session snapshot files (`offload-sessions`) for the
//! JavaScript `FileSnapshotStorage`. JSON stays in JavaScript; every file
//! operation runs as an `AsyncTask` on the libuv worker pool.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_sessions::{SnapshotDir, SnapshotFile, SnapshotLocation};

use crate::error::to_js_error;

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

fn location_of(session_id: &str, scope: &str, scope_id: &str) -> Result<SnapshotLocation> {
  SnapshotLocation::new(session_id, scope, scope_id).map_err(to_js_error)
}

/// Writes one file atomically on a worker thread.
pub struct SnapshotWriteTask {
  dir: Arc<SnapshotDir>,
  location: SnapshotLocation,
  file: SnapshotFile,
  content: String,
  ticket: u64,
}

impl Task for SnapshotWriteTask {
  type Output = ();
  type JsValue = ();

  fn compute(&mut self) -> Result<()> {
    self.dir.write(&self.location, &self.file, self.content.as_bytes(), self.ticket).map_err(to_js_error)
  }

  fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
    Ok(())
  }
}

/// Reads one file on a worker thread (`null` when missing; invalid UTF-8 is
/// replaced, as Node's `readFile(path, 'utf8')` does).
pub struct SnapshotReadTask {
  dir: Arc<SnapshotDir>,
  location: SnapshotLocation,
  file: SnapshotFile,
}

impl Task for SnapshotReadTask {
  type Output = Option<String>;
  type JsValue = Option<String>;

  fn compute(&mut self) -> Result<Option<String>> {
    let bytes = self.dir.read(&self.location, &self.file).map_err(to_js_error)?;
    Ok(bytes.map(|b| match String::from_utf8(b) {
      Ok(text) => text,
      Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
  }

  fn resolve(&mut self, _env: Env, output: Option<String>) -> Result<Option<String>> {
    Ok(output)
  }
}

/// Lists immutable snapshot ids on a worker thread.
pub struct SnapshotListTask {
  dir: Arc<SnapshotDir>,
  location: SnapshotLocation,
  start_after: Option<String>,
  limit: Option<usize>,
}

impl Task for SnapshotListTask {
  type Output = Vec<String>;
  type JsValue = Vec<String>;

  fn compute(&mut self) -> Result<Vec<String>> {
    self.dir.list_ids(&self.location, self.start_after.as_deref(), self.limit).map_err(to_js_error)
  }

  fn resolve(&mut self, _env: Env, output: Vec<String>) -> Result<Vec<String>> {
    Ok(output)
  }
}

/// Removes a session directory on a worker thread.
pub struct SnapshotDeleteTask {
  dir: Arc<SnapshotDir>,
  session_id: String,
}

impl Task for SnapshotDeleteTask {
  type Output = ();
  type JsValue = ();

  fn compute(&mut self) -> Result<()> {
    self.dir.delete_session(&self.session_id).map_err(to_js_error)
  }

  fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
    Ok(())
  }
}

/// Converts a JavaScript page size (already an integer >= 1, or `Infinity`).
fn page_limit(limit: Option<f64>) -> Option<usize> {
  limit.map(|l| if l.is_nan() || l < 0.0 { 0 } else if l >= usize::MAX as f64 { usize::MAX } else { l as usize })
}

#[napi]
impl NativeSnapshotDir {
  /// Snapshot storage rooted at `baseDir`; `durable` fsyncs every write.
  #[napi(constructor)]
  pub fn new(base_dir: String, durable: Option<bool>) -> Self {
    Self { dir: Arc::new(SnapshotDir::new(base_dir, durable.unwrap_or(false))) }
  }

  /// Atomically replaces a file (`kind`: `latest`, `manifest` or `history`)
  /// with `content`. Writes to one file land in call order.
  #[napi(ts_return_type = "Promise<void>")]
  pub fn write(
    &self,
    session_id: String,
    scope: String,
    scope_id: String,
    kind: String,
    snapshot_id: Option<String>,
    content: String,
  ) -> Result<AsyncTask<SnapshotWriteTask>> {
    let location = location_of(&session_id, &scope, &scope_id)?;
    let file = file_of(&kind, snapshot_id.as_deref())?;
    let ticket = self.dir.ticket();
    Ok(AsyncTask::new(SnapshotWriteTask { dir: self.dir.clone(), location, file, content, ticket }))
  }

  /// A file's text, or `null` when it does not exist.
  #[napi(ts_return_type = "Promise<string | null>")]
  pub fn read(
    &self,
    session_id: String,
    scope: String,
    scope_id: String,
    kind: String,
    snapshot_id: Option<String>,
  ) -> Result<AsyncTask<SnapshotReadTask>> {
    let location = location_of(&session_id, &scope, &scope_id)?;
    let file = file_of(&kind, snapshot_id.as_deref())?;
    Ok(AsyncTask::new(SnapshotReadTask { dir: self.dir.clone(), location, file }))
  }

  /// Immutable snapshot ids in ascending order, after `startAfter`, at most `limit`.
  #[napi(ts_return_type = "Promise<string[]>")]
  pub fn list_ids(
    &self,
    session_id: String,
    scope: String,
    scope_id: String,
    start_after: Option<String>,
    limit: Option<f64>,
  ) -> Result<AsyncTask<SnapshotListTask>> {
    let location = location_of(&session_id, &scope, &scope_id)?;
    Ok(AsyncTask::new(SnapshotListTask { dir: self.dir.clone(), location, start_after, limit: page_limit(limit) }))
  }

  /// Removes everything of a session.
  #[napi(ts_return_type = "Promise<void>")]
  pub fn delete_session(&self, session_id: String) -> AsyncTask<SnapshotDeleteTask> {
    AsyncTask::new(SnapshotDeleteTask { dir: self.dir.clone(), session_id })
  }
}
