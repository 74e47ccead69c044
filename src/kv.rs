//! The SDK's unified `Storage` interface on [`NativeStore`]: `kvWrite`,
//! `kvRead`, `kvDelete`, `kvList` run on the libuv worker pool; `kvWriteNow`
//! stores small values in memory on the JavaScript thread.
//!
//! Errors of these methods carry the SDK's `StorageError` message followed by a
//! NUL character and the text of the OS error that caused them (if any), which
//! the JavaScript glue attaches as the error's `cause`.

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_storage::{KeyValueStore, StorageError};

use crate::store::{Backend, NativeStore};

/// Largest value written on the JavaScript thread into memory (about 0.1 ms).
const INLINE_MEMORY_WRITE: usize = 1024 * 1024;

/// Maps a key-value error to a JavaScript error: `<SDK message>\0<cause>`, the
/// cause (an OS error's text, never containing NUL) empty when there is none. The
/// message may itself contain NUL (keys may), so the glue splits at the last one.
pub(crate) fn kv_error(err: StorageError) -> Error {
  let message = match &err {
    StorageError::KeyValue { message, source } => format!("{message}\u{0}{source}"),
    other => format!("{other}\u{0}"),
  };
  Error::new(Status::GenericFailure, message)
}

/// Runs one operation. A file store works inside `scope` (the SDK's
/// `LocalFileStorage.namespace`, keys and messages relative to it); in memory
/// namespaces are views built by the JavaScript glue, so `scope` must be empty.
fn run(backend: &Backend, scope: &str, op: KvOp) -> std::result::Result<KvOutput, StorageError> {
  match backend {
    Backend::File(f) => match op {
      KvOp::Write(key, data) => f.write_in(scope, &key, &data).map(|()| KvOutput::Written),
      KvOp::Read(key) => f.read_in(scope, &key).map(KvOutput::Value),
      KvOp::Delete(key) => f.delete_in(scope, &key).map(KvOutput::Deleted),
      KvOp::List(prefix) => f.list_in(scope, &prefix).map(KvOutput::Keys),
      KvOp::Prune(prefix) => f.prune_in(scope, &prefix).map(KvOutput::Deleted),
    },
    Backend::Memory(_) if !scope.is_empty() => Err(StorageError::InvalidArgument(
      "in-memory storage takes no scope".to_owned(),
    )),
    Backend::Memory(m) => {
      let kv: &dyn KeyValueStore = m.as_ref();
      match op {
        KvOp::Write(key, data) => kv
          .write(&key, Bytes::copy_from_slice(&data))
          .map(|()| KvOutput::Written),
        KvOp::Read(key) => kv.read(&key).map(KvOutput::Value),
        KvOp::Delete(key) => kv.delete(&key).map(KvOutput::Deleted),
        KvOp::List(prefix) => kv.list(&prefix).map(KvOutput::Keys),
        // Keys in memory leave no directories behind.
        KvOp::Prune(_) => Ok(KvOutput::Deleted(false)),
      }
    }
  }
}

/// One key-value operation, run on a worker thread.
pub enum KvOp {
  /// `write(key, bytes)`.
  Write(String, Uint8Array),
  /// `read(key)`.
  Read(String),
  /// `delete(key)`.
  Delete(String),
  /// `list(prefix)`.
  List(String),
  /// Removes the empty directory a list prefix names (files only).
  Prune(String),
}

/// What a key-value operation produced.
pub enum KvOutput {
  /// A write completed.
  Written,
  /// A read's value (`None` when missing).
  Value(Option<Bytes>),
  /// Whether a delete removed a value.
  Deleted(bool),
  /// A listing.
  Keys(Vec<String>),
}

/// Runs a [`KvOp`] against a backend on the worker pool.
pub struct KvTask {
  backend: Backend,
  scope: String,
  op: Option<KvOp>,
}

impl Task for KvTask {
  type Output = KvOutput;
  type JsValue = Either5<(), Null, Buffer, bool, Vec<String>>;

  fn compute(&mut self) -> Result<KvOutput> {
    let Some(op) = self.op.take() else {
      return Err(Error::new(Status::GenericFailure, "key-value task ran twice"));
    };
    run(&self.backend, &self.scope, op).map_err(kv_error)
  }

  fn resolve(&mut self, _env: Env, output: KvOutput) -> Result<Self::JsValue> {
    Ok(match output {
      KvOutput::Written => Either5::A(()),
      KvOutput::Value(None) => Either5::B(Null),
      KvOutput::Value(Some(bytes)) => Either5::C(Buffer::from(Vec::from(bytes))),
      KvOutput::Deleted(deleted) => Either5::D(deleted),
      KvOutput::Keys(keys) => Either5::E(keys),
    })
  }
}

#[napi]
impl NativeStore {
  fn kv_task(&self, scope: Option<String>, op: KvOp) -> AsyncTask<KvTask> {
    AsyncTask::new(KvTask {
      backend: self.backend.clone(),
      scope: scope.unwrap_or_default(),
      op: Some(op),
    })
  }

  /// Unified storage: stores `data` under `key` (replacing any value); `scope`
  /// is a namespace of a file store (keys relative to it).
  #[napi(ts_return_type = "Promise<void>", catch_unwind)]
  pub fn kv_write(&self, key: String, data: Uint8Array, scope: Option<String>) -> AsyncTask<KvTask> {
    self.kv_task(scope, KvOp::Write(key, data))
  }

  /// Unified storage, in memory only: stores `data` right away when it is at
  /// most 1 MiB; returns `false` (doing nothing) otherwise or for files.
  #[napi(catch_unwind)]
  pub fn kv_write_now(&self, key: String, data: &[u8]) -> Result<bool> {
    match &self.backend {
      Backend::Memory(m) if data.len() <= INLINE_MEMORY_WRITE => {
        KeyValueStore::write(m.as_ref(), &key, Bytes::copy_from_slice(data)).map_err(kv_error)?;
        Ok(true)
      }
      _ => Ok(false),
    }
  }

  /// Unified storage: the bytes under `key`, or `null`.
  #[napi(ts_return_type = "Promise<Buffer | null>", catch_unwind)]
  pub fn kv_read(&self, key: String, scope: Option<String>) -> AsyncTask<KvTask> {
    self.kv_task(scope, KvOp::Read(key))
  }

  /// Unified storage: removes `key`; resolves whether it existed.
  #[napi(ts_return_type = "Promise<boolean>", catch_unwind)]
  pub fn kv_delete(&self, key: String, scope: Option<String>) -> AsyncTask<KvTask> {
    self.kv_task(scope, KvOp::Delete(key))
  }

  /// Unified storage: the keys starting with `prefix`, sorted as JavaScript sorts.
  #[napi(ts_return_type = "Promise<string[]>", catch_unwind)]
  pub fn kv_list(&self, prefix: String, scope: Option<String>) -> AsyncTask<KvTask> {
    self.kv_task(scope, KvOp::List(prefix))
  }

  /// Removes the directory the list prefix `prefix` names when it is empty (a file
  /// store leaves the directories of deleted keys otherwise); resolves with whether it
  /// was removed. Nothing to do in memory.
  #[napi(ts_return_type = "Promise<boolean>", catch_unwind)]
  pub fn kv_prune(&self, prefix: String, scope: Option<String>) -> AsyncTask<KvTask> {
    self.kv_task(scope, KvOp::Prune(prefix))
  }

  /// Unified storage, in memory only: removes every value (offloaded blocks are kept).
  #[napi(catch_unwind)]
  pub fn kv_clear(&self) -> Result<()> {
    if let Backend::Memory(m) = &self.backend {
      m.clear_values();
    }
    Ok(())
  }
}
