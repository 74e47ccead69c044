//! Session snapshots as S3 objects, in the layout of the SDK's session `S3Storage`:
//!
//! ```text
//! [<prefix>/]<session id>/scopes/<scope>/<scope id>/snapshots/
//!   snapshot_latest.json
//!   manifest.json
//!   immutable_history/snapshot_<uuid v7>.json
//! ```
//!
//! Locations and snapshot ids are validated by `offload-sessions` (the SDK's checks and
//! messages); failures carry the SDK's `SessionError` messages. JSON stays with the caller.

use crate::reference::{fits_s3, key_too_long};
use crate::pages::Continuation;
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{Delete, ObjectIdentifier};
use offload_sessions::{snapshot_id_of, validate, SnapshotError, SnapshotFile, SnapshotLocation, IMMUTABLE_HISTORY};

use crate::store::cause_chain;
use crate::{S3Error, S3Options, S3Store};

/// Objects per `ListObjectsV2` page, as the SDK.
const PAGE_SIZE: usize = 1000;

/// Errors of [`S3Snapshots`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum S3SnapshotError {
    /// An identifier, scope or snapshot id was rejected (the SDK's message).
    #[error(transparent)]
    Invalid(#[from] SnapshotError),

    /// A request failed: `message` is the SDK's `SessionError` message, `cause`
    /// the request's error.
    #[error("{message}: {cause}")]
    Failed {
        /// The SDK's message, e.g. `Failed to write S3 object <key>`.
        message: String,
        /// The underlying error with its chain of causes.
        cause: String,
    },

    /// The store could not be configured.
    #[error(transparent)]
    Config(#[from] S3Error),
}

/// Refuses an object key longer than S3 allows (as an invalid identifier).
fn checked(key: &str) -> Result<(), S3SnapshotError> {
    if fits_s3(key) {
        Ok(())
    } else {
        Err(S3SnapshotError::Invalid(SnapshotError::Invalid(key_too_long("the object key", key))))
    }
}

impl S3SnapshotError {
    fn failed(message: String, err: &dyn std::error::Error) -> Self {
        S3SnapshotError::Failed { message, cause: cause_chain(err) }
    }
}

/// What a read found: the object's key (for messages) and its text, `None` when the
/// object is missing or empty (the SDK returns `null` for both).
#[derive(Debug)]
pub struct SnapshotText {
    /// The object key read.
    pub key: String,
    /// The body as UTF-8 (invalid sequences replaced), or `None`.
    pub text: Option<String>,
}

/// Session snapshots of all sessions in one bucket, under an optional prefix.
#[derive(Debug)]
pub struct S3Snapshots {
    store: S3Store,
    base: String,
}

/// `NoSuchKey` or `NoSuchBucket`, the errors the SDK reads as "nothing there".
fn is_not_found<E: ProvideErrorMetadata, R>(err: &aws_sdk_s3::error::SdkError<E, R>) -> bool {
    err.as_service_error().and_then(|e| e.code()).is_some_and(|c| c == "NoSuchKey" || c == "NoSuchBucket")
}

impl S3Snapshots {
    /// Snapshots in `options.bucket`; `options.prefix` is used as the SDK uses it
    /// (`<prefix>/` before every key when non-empty, without normalisation).
    ///
    /// # Errors
    ///
    /// [`S3SnapshotError::Config`] for invalid options.
    pub fn new(mut options: S3Options) -> Result<Self, S3SnapshotError> {
        let base = if options.prefix.is_empty() { String::new() } else { format!("{}/", options.prefix) };
        options.prefix = String::new();
        Ok(Self { store: S3Store::new(options)?, base })
    }

    /// The bucket written to.
    #[must_use]
    pub fn bucket(&self) -> &str {
        self.store.bucket()
    }

    /// The object key of a file (validating the snapshot id first, then the location,
    /// in the SDK's order).
    ///
    /// # Errors
    ///
    /// [`S3SnapshotError::Invalid`] with the SDK's message.
    pub fn object_key(
        &self,
        session_id: &str,
        scope: &str,
        scope_id: &str,
        file: &SnapshotFileKind<'_>,
    ) -> Result<(SnapshotLocation, String), S3SnapshotError> {
        let file = match file {
            SnapshotFileKind::Latest => SnapshotFile::Latest,
            SnapshotFileKind::Manifest => SnapshotFile::Manifest,
            SnapshotFileKind::History(id) => SnapshotFile::history(id)?,
        };
        let location = SnapshotLocation::new(session_id, scope, scope_id)?;
        let key = format!("{}{}/{}", self.base, location.snapshots_key(), file.relative_key());
        checked(&key)?;
        Ok((location, key))
    }

    /// Writes `text` as the object `key` with `Content-Type: application/json`.
    ///
    /// # Errors
    ///
    /// [`S3SnapshotError::Failed`] (`Failed to write S3 object <key>`).
    pub async fn write(&self, key: &str, text: String) -> Result<(), S3SnapshotError> {
        checked(key)?;
        let client = self.store.client().await;
        let _permit = self.store.permit().await?;
        client
            .put_object()
            .bucket(self.bucket())
            .key(key)
            .content_type("application/json")
            .body(ByteStream::from(text.into_bytes()))
            .send()
            .await
            .map_err(|e| S3SnapshotError::failed(format!("Failed to write S3 object {key}"), &e))?;
        Ok(())
    }

    /// Reads the object `key`; `None` when it (or the bucket) is missing or empty.
    ///
    /// # Errors
    ///
    /// [`S3SnapshotError::Failed`] (`S3 error reading <key>`).
    pub async fn read(&self, key: String) -> Result<SnapshotText, S3SnapshotError> {
        checked(&key)?;
        let client = self.store.client().await;
        let _permit = self.store.permit().await?;
        let message = || format!("S3 error reading {key}");
        let out = match client.get_object().bucket(self.bucket()).key(&key).send().await {
            Ok(out) => out,
            Err(err) if is_not_found(&err) => return Ok(SnapshotText { key, text: None }),
            Err(err) => return Err(S3SnapshotError::failed(message(), &err)),
        };
        let body = out.body.collect().await.map_err(|e| S3SnapshotError::failed(message(), &e))?.into_bytes();
        let text = (!body.is_empty()).then(|| String::from_utf8_lossy(&body).into_owned());
        Ok(SnapshotText { key, text })
    }

    /// Immutable snapshot ids of a location in ascending key order, after the
    /// snapshot `start_after` (exclusive), at most `limit`, as the SDK pages them
    /// (`StartAfter` and `MaxKeys` pushed down; objects not named `snapshot_<id>.json`
    /// skipped). A missing bucket lists nothing.
    ///
    /// # Errors
    ///
    /// [`S3SnapshotError::Invalid`] for a rejected location or cursor,
    /// [`S3SnapshotError::Failed`] (`Failed to list snapshots for session <id>`).
    pub async fn list_ids(
        &self,
        session_id: &str,
        scope: &str,
        scope_id: &str,
        start_after: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<String>, S3SnapshotError> {
        if limit == Some(0) {
            return Ok(Vec::new());
        }
        if let Some(cursor) = start_after {
            validate::uuid_v7(cursor)?;
        }
        let location = SnapshotLocation::new(session_id, scope, scope_id)?;
        let prefix = format!("{}{}/{IMMUTABLE_HISTORY}/", self.base, location.snapshots_key());
        let start_key = match start_after {
            Some(cursor) => Some(self.object_key(session_id, scope, scope_id, &SnapshotFileKind::History(cursor))?.1),
            None => None,
        };
        let client = self.store.client().await;
        let failed = |e: &dyn std::error::Error| {
            S3SnapshotError::failed(format!("Failed to list snapshots for session {session_id}"), e)
        };
        let mut ids = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = Continuation::default();
        loop {
            let max_keys = limit.map_or(PAGE_SIZE, |l| PAGE_SIZE.min(l - ids.len()));
            let request = client
                .list_objects_v2()
                .bucket(self.bucket())
                .prefix(&prefix)
                .max_keys(i32::try_from(max_keys).unwrap_or(i32::MAX))
                .set_start_after(if token.is_none() { start_key.clone() } else { None })
                .set_continuation_token(token.take());
            let result = {
                let _permit = self.store.permit().await?;
                request.send().await
            };
            let out = match result {
                Ok(out) => out,
                Err(err) if is_not_found(&err) => return Ok(Vec::new()),
                Err(err) => return Err(failed(&err)),
            };
            ids.extend(out.contents().iter().filter_map(|o| o.key()).filter_map(snapshot_id_of).map(str::to_owned));
            token = pages.next(out.is_truncated(), out.next_continuation_token()).map_err(|e| failed(&e))?;
            if token.is_none() || limit.is_some_and(|l| ids.len() >= l) {
                break;
            }
        }
        if let Some(l) = limit {
            ids.truncate(l);
        }
        Ok(ids)
    }

    /// Deletes every object under `[<prefix>/]<session id>/`, one `DeleteObjects`
    /// request per listing page (at most 1,000 keys each).
    ///
    /// # Errors
    ///
    /// [`S3SnapshotError::Invalid`] for a rejected session id,
    /// [`S3SnapshotError::Failed`] (`Failed to delete session <id>`).
    pub async fn delete_session(&self, session_id: &str) -> Result<(), S3SnapshotError> {
        validate::identifier(session_id)?;
        let prefix = format!("{}{session_id}/", self.base);
        checked(&prefix)?;
        let client = self.store.client().await;
        let failed =
            |e: &dyn std::error::Error| S3SnapshotError::failed(format!("Failed to delete session {session_id}"), e);
        let mut token: Option<String> = None;
        let mut pages = Continuation::default();
        loop {
            let out = {
                let _permit = self.store.permit().await?;
                client
                    .list_objects_v2()
                    .bucket(self.bucket())
                    .prefix(&prefix)
                    .set_continuation_token(token.take())
                    .send()
                    .await
                    .map_err(|e| failed(&e))?
            };
            let objects = out
                .contents()
                .iter()
                .filter_map(|o| o.key())
                .map(|k| ObjectIdentifier::builder().key(k).build())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| failed(&e))?;
            if !objects.is_empty() {
                let delete = Delete::builder().set_objects(Some(objects)).quiet(true).build().map_err(|e| failed(&e))?;
                let _permit = self.store.permit().await?;
                let result = client
                    .delete_objects()
                    .bucket(self.bucket())
                    .delete(delete)
                    .send()
                    .await
                    .map_err(|e| failed(&e))?;
                if let Some(first) = result.errors().first() {
                    let cause = format!(
                        "{}: {}",
                        first.key().unwrap_or_default(),
                        first.message().or(first.code()).unwrap_or("not deleted")
                    );
                    return Err(S3SnapshotError::Failed { message: format!("Failed to delete session {session_id}"), cause });
                }
            }
            token = pages.next(out.is_truncated(), out.next_continuation_token()).map_err(|e| failed(&e))?;
            if token.is_none() {
                break;
            }
        }
        Ok(())
    }
}

/// Which file of a location: the latest snapshot, the manifest, or an immutable snapshot.
#[derive(Debug, Clone, Copy)]
pub enum SnapshotFileKind<'a> {
    /// `snapshot_latest.json`.
    Latest,
    /// `manifest.json`.
    Manifest,
    /// `immutable_history/snapshot_<id>.json`.
    History(&'a str),
}
