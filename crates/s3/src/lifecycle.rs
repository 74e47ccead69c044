//! Expiry and sessions of offloaded objects: kept on each object as user
//! metadata (`x-amz-meta-offloader-expires`: ms since the epoch,
//! `x-amz-meta-offloader-session`: the session id, percent-encoded) and, for
//! bucket lifecycle rules that expire objects server-side, as the object tag
//! `offloader-expires-days=<whole days of the TTL, rounded up>`.
//!
//! Sweeps list the artifact objects under the prefix and read each one's
//! metadata (`HeadObject`, at most `maxInFlight` at once): their cost grows
//! with the number of objects, which is why the bucket rule is the way to
//! expire objects at scale.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use aws_sdk_s3::types::{Delete, ObjectIdentifier};
use futures_util::{StreamExt, TryStreamExt};
use offload_storage::lifecycle::sort_artifacts;
use offload_storage::{names_an_artifact, ArtifactInfo, Stats, Tags, DEFAULT_CONTENT_TYPE};

use crate::pages::Continuation;
use crate::reference::{fits_s3, reference_for};
use crate::{S3Error, S3Store};

/// An artifact object as a listing shows it.
struct Listed {
    key: String,
    size: u64,
    modified_ms: Option<u64>,
}

/// A listed object with what its metadata says.
struct Described {
    listed: Listed,
    content_type: String,
    life: Life,
}

/// The store time at the start of an artifact name (`<ms>_<n>_<key>`).
fn created_in_name(name: &str) -> Option<u64> {
    let (ms, rest) = name.split_once('_')?;
    let (sequence, _) = rest.split_once('_')?;
    if ms.is_empty() || sequence.is_empty() || !sequence.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    ms.parse().ok()
}

/// Metadata key of the expiry time (ms since the epoch).
pub const EXPIRES_METADATA: &str = "offloader-expires";
/// Metadata key of the session id (percent-encoded).
pub const SESSION_METADATA: &str = "offloader-session";
/// Object tag with the TTL in whole days, for bucket lifecycle rules.
pub const EXPIRES_DAYS_TAG: &str = "offloader-expires-days";

const DAY_MS: u64 = 24 * 60 * 60 * 1000;
/// Keys per `DeleteObjects` request (the S3 limit).
const DELETE_BATCH: usize = 1000;

/// The lifetime and session of one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Life {
    pub(crate) ttl_ms: Option<u64>,
    pub(crate) expires_ms: Option<u64>,
    pub(crate) session: Option<String>,
}

impl Life {
    /// The user metadata to store with the object (`None`: nothing to add).
    pub(crate) fn metadata(&self) -> Option<HashMap<String, String>> {
        let mut out = HashMap::new();
        if let Some(at) = self.expires_ms {
            out.insert(EXPIRES_METADATA.to_owned(), at.to_string());
        }
        if let Some(session) = &self.session {
            out.insert(SESSION_METADATA.to_owned(), percent_encode(session));
        }
        (!out.is_empty()).then_some(out)
    }

    /// The object's tagging header (`None` without a TTL).
    pub(crate) fn tagging(&self) -> Option<String> {
        self.ttl_ms.map(|ttl| format!("{EXPIRES_DAYS_TAG}={}", ttl.div_ceil(DAY_MS).max(1)))
    }

    /// The life recorded in an object's metadata.
    pub(crate) fn from_metadata(metadata: Option<&HashMap<String, String>>) -> Life {
        let Some(m) = metadata else { return Life::default() };
        Life {
            ttl_ms: None,
            expires_ms: m.get(EXPIRES_METADATA).and_then(|v| v.trim().parse().ok()),
            session: m.get(SESSION_METADATA).and_then(|v| percent_decode(v)),
        }
    }

    pub(crate) fn expired(&self, now_ms: u64) -> bool {
        self.expires_ms.is_some_and(|at| at <= now_ms)
    }
}

/// `s` with every byte outside `A-Z a-z 0-9 - _ . ~` as `%XX` (header-safe ASCII).
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The inverse of [`percent_encode`]; `None` for malformed input.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl S3Store {
    /// Sets the lifetime of objects stored without their own (`None`: none).
    pub fn set_default_ttl(&self, ttl_ms: Option<u64>) {
        self.default_ttl_ms.store(ttl_ms.unwrap_or(0), Ordering::Relaxed);
    }

    /// The life of an object stored with `tags`.
    pub(crate) fn life_of(&self, tags: &Tags<'_>) -> Life {
        let default = match self.default_ttl_ms.load(Ordering::Relaxed) {
            0 => None,
            ttl => Some(ttl),
        };
        let ttl_ms = tags.ttl_ms.or(default);
        Life { ttl_ms, expires_ms: ttl_ms.map(|ttl| tags.now().saturating_add(ttl)), session: tags.session.map(str::to_owned) }
    }

    /// The artifact objects directly under the prefix, with their sizes and
    /// last-modified times (ms since the epoch).
    async fn artifact_objects(&self) -> Result<Vec<Listed>, S3Error> {
        let client = self.client().await;
        let prefix = &self.options.prefix;
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = Continuation::default();
        loop {
            let page = {
                let _permit = self.permit().await?;
                client
                    .list_objects_v2()
                    .bucket(&self.options.bucket)
                    .prefix(prefix)
                    .set_continuation_token(token.take())
                    .send()
                    .await
                    .map_err(|e| self.request_error("ListObjectsV2", prefix, e))?
            };
            let before = out.len();
            for object in page.contents() {
                let Some(key) = object.key() else { continue };
                let name = key.get(prefix.len()..).unwrap_or_default();
                if !name.contains('/') && names_an_artifact(name) {
                    out.push(Listed {
                        key: key.to_owned(),
                        size: u64::try_from(object.size().unwrap_or(0)).unwrap_or(0),
                        modified_ms: object.last_modified().and_then(|t| u64::try_from(t.to_millis().ok()?).ok()),
                    });
                }
            }
            self.listing.pages.fetch_add(1, Ordering::Relaxed);
            self.listing.objects.fetch_add((out.len() - before) as u64, Ordering::Relaxed);
            token = pages
                .next(page.is_truncated(), page.next_continuation_token())
                .map_err(|e| S3Error::Request {
                    op: "ListObjectsV2",
                    bucket: self.options.bucket.clone(),
                    key: prefix.clone(),
                    cause: e.to_string(),
                })?;
            if token.is_none() {
                return Ok(out);
            }
        }
    }

    /// Every artifact object with its size and life (objects deleted meanwhile are left out).
    async fn lives(&self) -> Result<Vec<(String, u64, Life)>, S3Error> {
        Ok(self.described(self.artifact_objects().await?).await?.into_iter().map(|d| (d.listed.key, d.listed.size, d.life)).collect())
    }

    /// `objects` with their metadata (`HeadObject`, at most `maxInFlight` at
    /// once); objects deleted meanwhile are left out.
    async fn described(&self, objects: Vec<Listed>) -> Result<Vec<Described>, S3Error> {
        let client = self.client().await;
        let found: Vec<Option<Described>> = futures_util::stream::iter(objects)
            .map(|listed| async move {
                let _permit = self.permit().await?;
                let head = client.head_object().bucket(&self.options.bucket).key(&listed.key).send().await;
                self.listing.described.fetch_add(1, Ordering::Relaxed);
                match head {
                    Ok(out) => Ok(Some(Described {
                        life: Life::from_metadata(out.metadata()),
                        content_type: out.content_type().unwrap_or(DEFAULT_CONTENT_TYPE).to_owned(),
                        listed,
                    })),
                    Err(err) if err.as_service_error().is_some_and(|e| e.is_not_found()) => Ok(None),
                    Err(err) => Err(self.request_error("HeadObject", &listed.key, err)),
                }
            })
            .buffer_unordered(self.options.max_in_flight.max(1))
            .try_collect()
            .await?;
        Ok(found.into_iter().flatten().collect())
    }

    /// Every artifact object under the prefix, expired ones included,
    /// oldest first (one `HeadObject` each, for its content type, session
    /// and expiry). The creation time is the one in the object's name, or
    /// its last-modified time.
    ///
    /// # Errors
    ///
    /// As [`S3Store::cleanup_expired`].
    pub async fn list_artifacts(&self) -> Result<Vec<ArtifactInfo>, S3Error> {
        let prefix_len = self.options.prefix.len();
        let mut out: Vec<ArtifactInfo> = self
            .described(self.artifact_objects().await?)
            .await?
            .into_iter()
            .map(|d| {
                let name = d.listed.key.get(prefix_len..).unwrap_or_default().to_owned();
                ArtifactInfo {
                    created_ms: created_in_name(&name).or(d.listed.modified_ms),
                    reference: reference_for(&self.options.bucket, &d.listed.key),
                    name,
                    content_type: d.content_type,
                    bytes: d.listed.size,
                    session: d.life.session,
                    expires_ms: d.life.expires_ms,
                }
            })
            .collect();
        sort_artifacts(&mut out);
        Ok(out)
    }

    /// Deletes the artifact objects named (names under the prefix, as
    /// [`S3Store::list_artifacts`] gives them; anything that is not an
    /// artifact name is skipped). With `only_expired_at`, each object's
    /// metadata is read again first and only those expired at that time go.
    /// Returns how many the server reports deleted.
    ///
    /// # Errors
    ///
    /// As [`S3Store::cleanup_expired`].
    pub async fn remove_artifacts(&self, names: &[String], only_expired_at: Option<u64>) -> Result<usize, S3Error> {
        let prefix = &self.options.prefix;
        let keys: Vec<String> = names
            .iter()
            .filter(|name| !name.contains('/') && names_an_artifact(name))
            .map(|name| format!("{prefix}{name}"))
            .filter(|key| fits_s3(key))
            .collect();
        let doomed = match only_expired_at {
            None => keys,
            Some(at) => {
                let listed = keys.into_iter().map(|key| Listed { key, size: 0, modified_ms: None }).collect();
                self.described(listed).await?.into_iter().filter(|d| d.life.expired(at)).map(|d| d.listed.key).collect()
            }
        };
        self.delete_objects(&doomed).await
    }

    /// Deletes `keys` (batches of 1,000); returns how many the server deleted.
    pub(crate) async fn delete_objects(&self, keys: &[String]) -> Result<usize, S3Error> {
        let client = self.client().await;
        let mut deleted = 0;
        for batch in keys.chunks(DELETE_BATCH) {
            let objects: Vec<ObjectIdentifier> =
                batch.iter().filter_map(|k| ObjectIdentifier::builder().key(k).build().ok()).collect();
            let delete = Delete::builder()
                .set_objects(Some(objects))
                .build()
                .map_err(|e| S3Error::Config(e.to_string()))?;
            let _permit = self.permit().await?;
            let out = client
                .delete_objects()
                .bucket(&self.options.bucket)
                .delete(delete)
                .send()
                .await
                .map_err(|e| self.request_error("DeleteObjects", &batch[0], e))?;
            deleted += out.deleted().len();
            // Keys the server could not delete (access denied, ...) fail the call,
            // after the rest of the batch went.
            if let Some(failed) = out.errors().first() {
                return Err(S3Error::Request {
                    op: "DeleteObjects",
                    bucket: self.options.bucket.clone(),
                    key: failed.key().unwrap_or_default().to_owned(),
                    cause: format!(
                        "{}: {} ({} of {} keys not deleted)",
                        failed.code().unwrap_or("error"),
                        failed.message().unwrap_or_default(),
                        out.errors().len(),
                        batch.len()
                    ),
                });
            }
        }
        Ok(deleted)
    }

    /// Deletes every artifact object expired at `now_ms`; returns how many.
    ///
    /// # Errors
    ///
    /// [`S3Error::Request`] when a listing, a metadata read or a deletion fails.
    pub async fn cleanup_expired(&self, now_ms: u64) -> Result<usize, S3Error> {
        let doomed: Vec<String> =
            self.lives().await?.into_iter().filter(|(_, _, life)| life.expired(now_ms)).map(|(k, _, _)| k).collect();
        self.delete_objects(&doomed).await
    }

    /// Deletes every artifact object of `session`; returns how many.
    ///
    /// # Errors
    ///
    /// As [`S3Store::cleanup_expired`].
    pub async fn delete_session(&self, session: &str) -> Result<usize, S3Error> {
        let doomed: Vec<String> = self
            .lives()
            .await?
            .into_iter()
            .filter(|(_, _, life)| life.session.as_deref() == Some(session))
            .map(|(k, _, _)| k)
            .collect();
        self.delete_objects(&doomed).await
    }

    /// What the prefix holds at `now_ms` (expired objects not counted).
    ///
    /// # Errors
    ///
    /// As [`S3Store::cleanup_expired`].
    pub async fn stats(&self, now_ms: u64) -> Result<Stats, S3Error> {
        let mut stats = Stats::default();
        for (_, size, life) in self.lives().await?.into_iter().filter(|(_, _, life)| !life.expired(now_ms)) {
            stats.add(life.session.as_deref(), size);
        }
        stats.stored_bytes = stats.bytes;
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_times_come_from_artifact_names() {
        assert_eq!(created_in_name("1732000000000_3_tool_0.txt"), Some(1_732_000_000_000));
        assert_eq!(created_in_name("1732000000000_3_"), Some(1_732_000_000_000));
        for name in ["", "_1_x", "12_x_y", "12_1", "x12_1_y", "99999999999999999999999_1_x", "12__x"] {
            assert_eq!(created_in_name(name), None, "{name}");
        }
    }

    #[test]
    fn sessions_survive_the_header_round_trip() {
        for s in ["plain", "with space", "ünï/cødé:?&=", "%41", ""] {
            let encoded = percent_encode(s);
            assert!(encoded.bytes().all(|b| b.is_ascii_graphic()), "{encoded}");
            assert_eq!(percent_decode(&encoded).as_deref(), Some(s));
        }
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%4"), None);
    }

    #[test]
    fn metadata_and_tags_of_a_lifetime() {
        let life = Life { ttl_ms: Some(DAY_MS + 1), expires_ms: Some(5), session: Some("s 1".into()) };
        assert_eq!(life.tagging().as_deref(), Some("offloader-expires-days=2"));
        let meta = life.metadata().unwrap();
        assert_eq!(meta[EXPIRES_METADATA], "5");
        assert_eq!(meta[SESSION_METADATA], "s%201");
        let back = Life::from_metadata(Some(&meta));
        assert_eq!((back.expires_ms, back.session.as_deref()), (Some(5), Some("s 1")));
        assert!(back.expired(5) && !back.expired(4));
        assert_eq!(Life::default().metadata(), None);
        assert_eq!(Life { ttl_ms: Some(1), ..Life::default() }.tagging().as_deref(), Some("offloader-expires-days=1"));
    }
}
