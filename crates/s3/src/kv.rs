//! The SDK's unified `Storage` (`write`, `read`, `delete`, `list`) on an [`S3Store`],
//! with the object keys of the SDK's unified `S3Storage`: `<prefix><key>`, the
//! prefix's empty segments dropped (`a//b/` is `a/b/`), so either one reads what the
//! other wrote. Keys and list prefixes go through the SDK's `normalizeKey` and
//! `normalizePrefix` ([`offload_storage::normalize_key`], [`offload_storage::normalize_prefix`]).

use aws_sdk_s3::primitives::ByteStream;
use bytes::Bytes;
use crate::pages::Continuation;
use crate::reference::{fits_s3, key_too_long};
use offload_storage::{artifact_key_error, names_an_artifact, normalize_key, normalize_prefix, sort_js, StorageError};

use crate::store::cause_chain;
use crate::S3Store;

/// Objects per `ListObjectsV2` page, as the SDK.
const PAGE_SIZE: i32 = 1000;

/// The unified storage's key prefix for the store's normalised prefix: `""`, or its
/// non-empty segments joined with `/` plus a trailing `/` (the SDK's
/// `prefix.split('/').filter(Boolean).join('/') + '/'`, which maps `/` to `/`).
#[must_use]
pub fn unified_prefix(prefix: &str) -> String {
    if prefix.is_empty() {
        return String::new();
    }
    let segments: Vec<&str> = prefix.split('/').filter(|s| !s.is_empty()).collect();
    segments.join("/") + "/"
}

/// A failed request as the SDK's `StorageError`: its message, the request's error as the cause.
fn failed(message: String, err: &dyn std::error::Error) -> StorageError {
    StorageError::KeyValue { message, source: std::io::Error::other(cause_chain(err)) }
}

impl S3Store {
    fn kv_object(&self, key: &str) -> String {
        format!("{}{key}", unified_prefix(&self.options.prefix))
    }

    /// Refuses a key whose object key would be longer than S3 allows.
    fn checked_object(&self, key: &str) -> Result<(), StorageError> {
        let object = self.kv_object(key);
        if fits_s3(&object) {
            return Ok(());
        }
        Err(StorageError::InvalidKey(format!("Invalid storage key '{key}': {}", key_too_long("its object key", &object))))
    }

    fn kv_permit_error(&self) -> StorageError {
        StorageError::InvalidArgument("the store was closed".to_owned())
    }

    /// Unified storage: stores `data` under `key`, replacing any value.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a rejected key, [`StorageError::KeyValue`]
    /// (`Failed to write '<key>' to S3 bucket '<bucket>'`) when the upload fails.
    pub async fn kv_write(&self, key: &str, data: Bytes) -> Result<(), StorageError> {
        let key = value_key(key)?;
        self.checked_object(&key)?;
        let client = self.client().await;
        let _permit = self.permit().await.map_err(|_| self.kv_permit_error())?;
        let bucket = &self.options.bucket;
        client
            .put_object()
            .bucket(bucket)
            .key(self.kv_object(&key))
            .body(ByteStream::from(data))
            .send()
            .await
            .map_err(|e| failed(format!("Failed to write '{key}' to S3 bucket '{bucket}'"), &e))?;
        Ok(())
    }

    /// Unified storage: the bytes under `key`, `None` when there is no such object.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a rejected key, [`StorageError::KeyValue`]
    /// (`Failed to read '<key>' from S3 bucket '<bucket>'`) for other failures.
    pub async fn kv_read(&self, key: &str) -> Result<Option<Bytes>, StorageError> {
        let key = value_key(key)?;
        self.checked_object(&key)?;
        let client = self.client().await;
        let _permit = self.permit().await.map_err(|_| self.kv_permit_error())?;
        let bucket = &self.options.bucket;
        let message = || format!("Failed to read '{key}' from S3 bucket '{bucket}'");
        let out = match client.get_object().bucket(bucket).key(self.kv_object(&key)).send().await {
            Ok(out) => out,
            Err(err) if err.as_service_error().is_some_and(|e| e.is_no_such_key()) => return Ok(None),
            Err(err) if err.raw_response().is_some_and(|r| r.status().as_u16() == 404) && !is_no_such_bucket(&err) => {
                return Ok(None)
            }
            Err(err) => return Err(failed(message(), &err)),
        };
        let body = out.body.collect().await.map_err(|e| failed(message(), &e))?;
        Ok(Some(body.into_bytes()))
    }

    /// Unified storage: removes `key` (a missing key is not an error).
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a rejected key, [`StorageError::KeyValue`]
    /// (`Failed to delete '<key>' from S3 bucket '<bucket>'`) when the request fails.
    pub async fn kv_delete(&self, key: &str) -> Result<(), StorageError> {
        let key = value_key(key)?;
        self.checked_object(&key)?;
        let client = self.client().await;
        let _permit = self.permit().await.map_err(|_| self.kv_permit_error())?;
        let bucket = &self.options.bucket;
        client
            .delete_object()
            .bucket(bucket)
            .key(self.kv_object(&key))
            .send()
            .await
            .map_err(|e| failed(format!("Failed to delete '{key}' from S3 bucket '{bucket}'"), &e))?;
        Ok(())
    }

    /// Unified storage: every key starting with `prefix`, relative to the store's
    /// prefix, sorted as JavaScript sorts strings. Follows every page of the listing.
    ///
    /// # Errors
    ///
    /// [`StorageError::InvalidKey`] for a rejected prefix, [`StorageError::KeyValue`]
    /// (`Failed to list S3 bucket '<bucket>' under '<prefix>'`) when a request fails.
    pub async fn kv_list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        let normalized = normalize_prefix(prefix)?;
        let base = unified_prefix(&self.options.prefix);
        let list_prefix = format!("{base}{normalized}");
        if !fits_s3(&list_prefix) {
            return Ok(Vec::new());
        }
        let client = self.client().await;
        let bucket = &self.options.bucket;
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = Continuation::default();
        loop {
            let out = {
                let _permit = self.permit().await.map_err(|_| self.kv_permit_error())?;
                client
                    .list_objects_v2()
                    .bucket(bucket)
                    .prefix(&list_prefix)
                    .max_keys(PAGE_SIZE)
                    .set_continuation_token(token.take())
                    .send()
                    .await
                    .map_err(|e| failed(format!("Failed to list S3 bucket '{bucket}' under '{normalized}'"), &e))?
            };
            for object in out.contents() {
                if let Some(key) = object.key() {
                    let key = key.get(base.len()..).unwrap_or(key);
                    if !names_an_artifact(key) {
                        keys.push(key.to_owned());
                    }
                }
            }
            token = pages.next(out.is_truncated(), out.next_continuation_token()).map_err(|e| StorageError::KeyValue {
                message: format!("Failed to list S3 bucket '{bucket}' under '{normalized}'"),
                source: std::io::Error::other(e),
            })?;
            if token.is_none() {
                break;
            }
        }
        sort_js(&mut keys);
        Ok(keys)
    }
}

/// A normalised key of the unified storage; keys naming an artifact of the
/// same prefix are refused (a write could otherwise replace an offloaded block).
fn value_key(key: &str) -> Result<String, StorageError> {
    let key = normalize_key(key)?;
    if names_an_artifact(&key) {
        return Err(artifact_key_error(&key));
    }
    Ok(key)
}

/// Whether a failed request was answered `NoSuchBucket` (a missing bucket is an error
/// for reads, as in the SDK, which only treats `NoSuchKey`/`NotFound` as absent).
fn is_no_such_bucket<E, R>(err: &aws_sdk_s3::error::SdkError<E, R>) -> bool
where
    E: aws_sdk_s3::error::ProvideErrorMetadata,
{
    err.as_service_error().and_then(|e| e.code()).is_some_and(|c| c == "NoSuchBucket")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Segments of generated keys: plain names and everything hostile,
    /// Windows-shaped ones included.
    const SEGMENTS: &[&str] = &[
        "a", "b", "ok.txt", ".h", ".", "..", "...", "", " ", "a.", "C:", "C:.env", "x:y", "CON", "nul.txt", "COM1",
        "a\\b", "\u{0}", "a\tb", "<", "?", ".metadata.journal", "1700000000000_1_k.txt", "1_2_x", "k.__strands_tmp_1",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 100_000, failure_persistence: None, ..Default::default() })]

        /// Every key the S3 store accepts maps to an object under its prefix
        /// that is not an artifact of the store, with portable segments only.
        #[test]
        fn accepted_keys_stay_under_the_prefix_and_off_the_artifacts(
            parts in proptest::collection::vec(proptest::sample::select(SEGMENTS), 1..4),
            lead in proptest::bool::ANY,
            prefix in proptest::sample::select(&["", "p/", "//a//b/", "x"][..]),
        ) {
            let raw = format!("{}{}", if lead { "/" } else { "" }, parts.join("/"));
            if let Ok(key) = value_key(&raw) {
                let base = unified_prefix(prefix);
                let object = format!("{base}{key}");
                proptest::prop_assert!(object.starts_with(&base));
                proptest::prop_assert!(!names_an_artifact(&key), "{key}");
                for segment in key.split('/') {
                    proptest::prop_assert!(segment != "." && segment != ".." && !segment.is_empty(), "{key}");
                    proptest::prop_assert_eq!(offload_storage::segment_problem(segment), None, "{}", key);
                }
            }
        }
    }

    #[test]
    fn unified_prefixes_match_the_sdk() {
        assert_eq!(unified_prefix(""), "");
        assert_eq!(unified_prefix("a/"), "a/");
        assert_eq!(unified_prefix("//a//b/"), "a/b/");
        assert_eq!(unified_prefix("/"), "/");
    }
}
