//! `NativeS3SnapshotStore`: session snapshots as S3 objects (`offload-s3`) for the
//! JavaScript `S3SnapshotStorage`. JSON stays in JavaScript; requests run on napi's
//! Tokio runtime.
//!
//! Request failures reject with `<SessionError message>\0<cause>` (the glue builds the
//! SDK's `SessionError` from it); rejected identifiers reject with the SDK's message alone.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_s3::{S3SnapshotError, S3Snapshots, SnapshotFileKind};

use crate::s3::{options_of, S3StoreOptions};
use crate::snapshot::{page_limit, SnapshotScope};

/// Maps an error: request failures as `<message>\0<cause>`, anything else as its message.
fn snapshot_error(err: S3SnapshotError) -> Error {
  let message = match err {
    S3SnapshotError::Failed { message, cause } => format!("{message}\u{0}{cause}"),
    other => other.to_string(),
  };
  Error::new(Status::GenericFailure, message)
}

/// Resolves `kind` (`latest`, `manifest` or `history`) and the snapshot id.
fn kind_of<'a>(kind: &str, snapshot_id: Option<&'a str>) -> Result<SnapshotFileKind<'a>> {
  match (kind, snapshot_id) {
    ("latest", _) => Ok(SnapshotFileKind::Latest),
    ("manifest", _) => Ok(SnapshotFileKind::Manifest),
    ("history", Some(id)) => Ok(SnapshotFileKind::History(id)),
    _ => Err(Error::new(Status::InvalidArg, format!("unknown snapshot file kind '{kind}'"))),
  }
}

/// A read's object key and text (`null` when missing or empty).
#[napi(object)]
pub struct S3SnapshotRead {
  pub key: String,
  pub text: Option<String>,
}

/// Snapshots of all sessions in one bucket.
#[napi]
pub struct NativeS3SnapshotStore {
  store: Arc<S3Snapshots>,
}

#[napi]
impl NativeS3SnapshotStore {
  /// Snapshots in `bucket`; `options.prefix` is used unnormalised, as the SDK does.
  #[napi(constructor, catch_unwind)]
  pub fn new(bucket: String, options: Option<S3StoreOptions>) -> Result<Self> {
    let store = S3Snapshots::new(options_of(bucket, options)?).map_err(snapshot_error)?;
    Ok(Self { store: Arc::new(store) })
  }

  /// The object key of a file, validated as the SDK validates it (throws its message).
  #[napi(catch_unwind)]
  pub fn object_key(&self, location: SnapshotScope, kind: String, snapshot_id: Option<String>) -> Result<String> {
    let kind = kind_of(&kind, snapshot_id.as_deref())?;
    let SnapshotScope { session_id, scope, scope_id } = &location;
    let (_, key) = self.store.object_key(session_id, scope, scope_id, &kind).map_err(snapshot_error)?;
    Ok(key)
  }

  /// Writes `text` to the object `key` (from `objectKey`) as `application/json`.
  #[napi]
  pub async fn write(&self, key: String, text: String) -> Result<()> {
    self.store.write(&key, text).await.map_err(snapshot_error)
  }

  /// Reads the object `key`; `text` is `null` when it is missing or empty.
  #[napi]
  pub async fn read(&self, key: String) -> Result<S3SnapshotRead> {
    let out = self.store.read(key).await.map_err(snapshot_error)?;
    Ok(S3SnapshotRead { key: out.key, text: out.text })
  }

  /// Immutable snapshot ids in ascending order, after `startAfter`, at most `limit`.
  #[napi]
  pub async fn list_ids(&self, location: SnapshotScope, start_after: Option<String>, limit: Option<f64>) -> Result<Vec<String>> {
    let SnapshotScope { session_id, scope, scope_id } = &location;
    self
      .store
      .list_ids(session_id, scope, scope_id, start_after.as_deref(), page_limit(limit))
      .await
      .map_err(snapshot_error)
  }

  /// Deletes every object of a session.
  #[napi]
  pub async fn delete_session(&self, session_id: String) -> Result<()> {
    self.store.delete_session(&session_id).await.map_err(snapshot_error)
  }
}
