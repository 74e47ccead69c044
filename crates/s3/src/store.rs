//! [`S3Store`]: offloaded blocks as objects of one bucket.

use std::time::{SystemTime, UNIX_EPOCH};

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use offload_storage::{Blob, NewBlob, Sequence, DEFAULT_CONTENT_TYPE};
use tokio::sync::{OnceCell, Semaphore, SemaphorePermit};

use crate::config::{build_client, S3Options};
use crate::reference::{
    connection_problem, fits_s3, key_too_long, normalize_prefix, object_key, reference_for, resolve_reference,
};
use crate::lifecycle::Life;
use crate::S3Error;

/// An error and its sources as one line (`a: b: c`), without repeated messages.
pub(crate) fn cause_chain(err: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&dyn std::error::Error> = Some(err);
    while let Some(e) = current {
        let message = e.to_string();
        if !message.is_empty() && !parts.last().is_some_and(|last| last.contains(&message)) {
            parts.push(message);
        }
        current = e.source();
    }
    parts.join(": ")
}

/// Parts of one multipart upload sent at once (each still takes a request permit).
const PARTS_IN_FLIGHT: usize = 4;

/// Offloaded blocks as S3 objects, with the SDK's keys and references
/// (`s3://<bucket>/<prefix><ms>_<n>_<key>`) and the content type as the
/// object's `Content-Type`.
///
/// The client is built on first use (region and credentials may come from the
/// environment). At most `max_in_flight` requests run at once; bodies above
/// the multipart threshold go up in parts, and a failed multipart upload is
/// aborted so that no partial object remains.
pub struct S3Store {
    pub(crate) options: S3Options,
    client: OnceCell<aws_sdk_s3::Client>,
    permits: Semaphore,
    sequence: Sequence,
    /// Default lifetime of stored objects in ms; 0: none.
    pub(crate) default_ttl_ms: std::sync::atomic::AtomicU64,
    /// How far the listings of this store have got (see [`S3Store::listing_progress`]).
    pub(crate) listing: ListingCounters,
}

/// Counters of the listings of one store, advanced as pages and metadata come in.
#[derive(Debug, Default)]
pub(crate) struct ListingCounters {
    pub(crate) pages: std::sync::atomic::AtomicU64,
    pub(crate) objects: std::sync::atomic::AtomicU64,
    pub(crate) described: std::sync::atomic::AtomicU64,
}

/// How far the listings of one store have got, counted since the store was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListingProgress {
    /// `ListObjectsV2` pages received.
    pub pages: u64,
    /// Artifact objects those pages named.
    pub objects: u64,
    /// Artifact objects whose metadata (`HeadObject`) was read.
    pub described: u64,
}

impl std::fmt::Debug for S3Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Store").field("bucket", &self.options.bucket).field("prefix", &self.options.prefix).finish()
    }
}

impl S3Store {
    /// A store for `options` (no request is made yet).
    ///
    /// # Errors
    ///
    /// [`S3Error::Config`] for an empty bucket name or zero limits.
    pub fn new(mut options: S3Options) -> Result<Self, S3Error> {
        if let Some(problem) = connection_problem(&options.bucket, options.region.as_deref(), options.endpoint.as_deref()) {
            return Err(S3Error::Config(problem));
        }
        if !fits_s3(&options.prefix) {
            return Err(S3Error::Config(key_too_long("the prefix", &options.prefix)));
        }
        if options.max_in_flight == 0 || options.part_size == 0 || options.max_attempts == 0 {
            return Err(S3Error::Config("maxInFlight, partSize and maxAttempts must be positive".into()));
        }
        options.prefix = normalize_prefix(&options.prefix);
        Ok(Self {
            permits: Semaphore::new(options.max_in_flight),
            options,
            client: OnceCell::new(),
            sequence: Sequence::default(),
            default_ttl_ms: std::sync::atomic::AtomicU64::new(0),
            listing: ListingCounters::default(),
        })
    }

    /// How far the listings of this store have got: pages received, artifact objects
    /// named, and metadata read, counted since the store was made (a caller watching one
    /// listing subtracts what it read before starting it). Read while a listing runs,
    /// from any thread.
    #[must_use]
    pub fn listing_progress(&self) -> ListingProgress {
        use std::sync::atomic::Ordering::Relaxed;
        ListingProgress {
            pages: self.listing.pages.load(Relaxed),
            objects: self.listing.objects.load(Relaxed),
            described: self.listing.described.load(Relaxed),
        }
    }

    /// The bucket objects are written to.
    #[must_use]
    pub fn bucket(&self) -> &str {
        &self.options.bucket
    }

    /// The normalised key prefix (`""` or ending in `/`).
    #[must_use]
    pub fn prefix(&self) -> &str {
        &self.options.prefix
    }

    /// Takes the next sequence number of this instance (1, 2, ...).
    pub fn next_sequence(&self) -> u64 {
        self.sequence.next()
    }

    /// The S3 client (built on first use).
    pub async fn client(&self) -> &aws_sdk_s3::Client {
        self.client.get_or_init(|| build_client(&self.options)).await
    }

    pub(crate) async fn permit(&self) -> Result<SemaphorePermit<'_>, S3Error> {
        self.permits.acquire().await.map_err(|_| S3Error::Config("the store was closed".into()))
    }

    pub(crate) fn request_error(&self, op: &'static str, key: &str, err: impl std::error::Error + 'static) -> S3Error {
        S3Error::Request {
            op,
            bucket: self.options.bucket.clone(),
            key: key.to_owned(),
            cause: cause_chain(&err),
        }
    }

    /// Stores `content` under a fresh key and returns its `s3://` reference.
    ///
    /// # Errors
    ///
    /// [`S3Error::Request`] when the upload fails (nothing is left behind).
    pub async fn store(&self, key: &str, content: Bytes, content_type: &str) -> Result<String, S3Error> {
        let sequence = self.next_sequence();
        self.store_blob(NewBlob { sequence, key, content, content_type, tags: offload_storage::Tags::default() }).await
    }

    /// Stores a blob under the object key for its sequence number (from
    /// [`S3Store::next_sequence`]).
    ///
    /// # Errors
    ///
    /// As [`S3Store::store`].
    pub async fn store_blob(&self, blob: NewBlob<'_>) -> Result<String, S3Error> {
        let NewBlob { sequence, key, content, content_type, tags } = blob;
        let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
        let object = object_key(&self.options.prefix, now_ms, sequence, key);
        if !fits_s3(&object) {
            return Err(S3Error::Config(key_too_long("the object key", &object)));
        }
        let life = self.life_of(&tags);
        if content.len() > self.options.multipart_threshold {
            self.put_multipart(&object, content, content_type, &life).await?;
        } else {
            self.put(&object, content, content_type, &life).await?;
        }
        Ok(reference_for(&self.options.bucket, &object))
    }

    async fn put(&self, object: &str, content: Bytes, content_type: &str, life: &Life) -> Result<(), S3Error> {
        let client = self.client().await;
        let _permit = self.permit().await?;
        client
            .put_object()
            .bucket(&self.options.bucket)
            .key(object)
            .content_type(content_type)
            .set_metadata(life.metadata())
            .set_tagging(life.tagging())
            .body(ByteStream::from(content))
            .send()
            .await
            .map_err(|e| self.request_error("PutObject", object, e))?;
        Ok(())
    }

    async fn put_multipart(&self, object: &str, content: Bytes, content_type: &str, life: &Life) -> Result<(), S3Error> {
        let client = self.client().await;
        let created = {
            let _permit = self.permit().await?;
            client
                .create_multipart_upload()
                .bucket(&self.options.bucket)
                .key(object)
                .content_type(content_type)
                .set_metadata(life.metadata())
                .set_tagging(life.tagging())
                .send()
                .await
                .map_err(|e| self.request_error("CreateMultipartUpload", object, e))?
        };
        let upload_id = created
            .upload_id()
            .ok_or_else(|| S3Error::Request {
                op: "CreateMultipartUpload",
                bucket: self.options.bucket.clone(),
                key: object.to_owned(),
                cause: "the response carried no upload id".into(),
            })?
            .to_owned();
        let result = self.upload_parts(client, object, &upload_id, content).await;
        if result.is_err() {
            // Best effort: if the server is unreachable the upload stays pending (it is
            // never visible as an object; bucket lifecycle rules reclaim its parts).
            if let Ok(_permit) = self.permit().await {
                let _ = client
                    .abort_multipart_upload()
                    .bucket(&self.options.bucket)
                    .key(object)
                    .upload_id(&upload_id)
                    .send()
                    .await;
            }
        }
        result
    }

    async fn upload_parts(
        &self,
        client: &aws_sdk_s3::Client,
        object: &str,
        upload_id: &str,
        content: Bytes,
    ) -> Result<(), S3Error> {
        let part_size = self.options.part_size;
        let ranges: Vec<(i32, Bytes)> = (0..content.len())
            .step_by(part_size)
            .enumerate()
            .map(|(i, start)| (i as i32 + 1, content.slice(start..(start + part_size).min(content.len()))))
            .collect();
        let parts: Vec<CompletedPart> = futures_util::stream::iter(ranges)
            .map(|(number, body)| async move {
                let _permit = self.permit().await?;
                let out = client
                    .upload_part()
                    .bucket(&self.options.bucket)
                    .key(object)
                    .upload_id(upload_id)
                    .part_number(number)
                    .body(ByteStream::from(body))
                    .send()
                    .await
                    .map_err(|e| self.request_error("UploadPart", object, e))?;
                Ok::<_, S3Error>(CompletedPart::builder().part_number(number).set_e_tag(out.e_tag).build())
            })
            .buffered(PARTS_IN_FLIGHT)
            .try_collect()
            .await?;
        let _permit = self.permit().await?;
        client
            .complete_multipart_upload()
            .bucket(&self.options.bucket)
            .key(object)
            .upload_id(upload_id)
            .multipart_upload(CompletedMultipartUpload::builder().set_parts(Some(parts)).build())
            .send()
            .await
            .map_err(|e| self.request_error("CompleteMultipartUpload", object, e))?;
        Ok(())
    }

    /// Reads the object a reference names (`s3://bucket/key` or a raw key).
    ///
    /// # Errors
    ///
    /// [`S3Error::NotFound`] for references to other buckets, keys outside the
    /// prefix and missing keys; [`S3Error::Request`] for other failures.
    pub async fn retrieve(&self, reference: &str) -> Result<Blob, S3Error> {
        self.retrieve_at(reference, offload_storage::lifecycle::system_now_ms()).await
    }

    /// [`S3Store::retrieve`] at time `now_ms`: an object whose TTL ran out by
    /// then is [`S3Error::Gone`] (and deleted).
    ///
    /// # Errors
    ///
    /// As [`S3Store::retrieve`], plus [`S3Error::Gone`].
    pub async fn retrieve_at(&self, reference: &str, now_ms: u64) -> Result<Blob, S3Error> {
        let object = resolve_reference(&self.options.bucket, &self.options.prefix, reference)?;
        let client = self.client().await;
        let _permit = self.permit().await?;
        let out = match client.get_object().bucket(&self.options.bucket).key(&object).send().await {
            Ok(out) => out,
            Err(err) if err.as_service_error().is_some_and(|e| e.is_no_such_key()) => {
                return Err(S3Error::not_found(reference));
            }
            Err(err) => return Err(self.request_error("GetObject", &object, err)),
        };
        if Life::from_metadata(out.metadata()).expired(now_ms) {
            drop(_permit);
            if self.options.delete_expired_on_read {
                let _ = self.delete_objects(std::slice::from_ref(&object)).await;
            }
            return Err(S3Error::Gone { reference: reference.to_owned(), reason: offload_storage::GoneReason::Expired });
        }
        let content_type = out.content_type().unwrap_or(DEFAULT_CONTENT_TYPE).to_owned();
        let content = out
            .body
            .collect()
            .await
            .map_err(|e| self.request_error("GetObject", &object, e))?
            .into_bytes();
        Ok(Blob { content, content_type })
    }

    /// Number of multipart uploads started and neither completed nor aborted
    /// under this store's prefix (for checks and tests).
    ///
    /// # Errors
    ///
    /// [`S3Error::Request`] when the listing fails.
    pub async fn pending_multipart_uploads(&self) -> Result<usize, S3Error> {
        let client = self.client().await;
        let _permit = self.permit().await?;
        let out = client
            .list_multipart_uploads()
            .bucket(&self.options.bucket)
            .prefix(&self.options.prefix)
            .send()
            .await
            .map_err(|e| self.request_error("ListMultipartUploads", &self.options.prefix, e))?;
        Ok(out.uploads().len())
    }
}
