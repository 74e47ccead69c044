//! `NativeS3Store`: the S3 backend with the same JavaScript surface as `NativeStore`
//! (`storeText`, `storeBytes`, `retrieve`, `search`), so the plugin drives it the same way.
//!
//! Requests run on napi's Tokio runtime; the core (`offload-s3`) caps them at
//! `maxInFlight` per store. Searches run on a blocking thread over the downloaded bytes.

use crate::lifecycle::{removal_args, whole, ArtifactEntry, LifecyclePolicy, StorageStats};
use crate::store::Stamp;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_s3::reference::resolve_reference;
use offload_s3::{S3Options, S3Store, StaticCredentials};
use offload_storage::NewBlob;

use crate::error::to_js_error;
use crate::kv::kv_error;
use crate::search::{run_query, run_search, SearchOutcome, SearchQuery};
use crate::store::{RetrieveOutcome, StoreOutcome};
use crate::text::NativeText;

/// Static credentials for [`S3StoreOptions`].
#[napi(object)]
pub struct S3Credentials {
  pub access_key_id: String,
  pub secret_access_key: String,
  pub session_token: Option<String>,
}

/// What [`NativeS3Store::listing_progress`] returns.
#[napi(object)]
pub struct S3ListingProgress {
  /// `ListObjectsV2` pages received.
  pub pages: f64,
  /// Artifact objects those pages named.
  pub objects: f64,
  /// Artifact objects whose metadata was read.
  pub described: f64,
}

/// Options of [`NativeS3Store::new`]; omitted ones take the core's defaults.
#[napi(object)]
pub struct S3StoreOptions {
  pub prefix: Option<String>,
  pub region: Option<String>,
  pub endpoint: Option<String>,
  pub force_path_style: Option<bool>,
  pub credentials: Option<S3Credentials>,
  pub timeout_ms: Option<f64>,
  pub max_attempts: Option<u32>,
  pub max_in_flight: Option<u32>,
  pub multipart_threshold: Option<f64>,
  pub part_size: Option<f64>,
  /// Reading an expired object refuses it without deleting it (the command-line tool).
  pub keep_expired: Option<bool>,
}

/// Longest per-attempt timeout accepted (a day).
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

fn positive(name: &str, value: f64) -> Result<f64> {
  if value.is_finite() && value > 0.0 {
    Ok(value)
  } else {
    Err(Error::new(Status::InvalidArg, format!("{name} must be a positive number, got {value}")))
  }
}

pub(crate) fn options_of(bucket: String, options: Option<S3StoreOptions>) -> Result<S3Options> {
  let mut out = S3Options::new(bucket);
  let Some(o) = options else { return Ok(out) };
  out.prefix = o.prefix.unwrap_or_default();
  out.region = o.region;
  out.endpoint = o.endpoint;
  out.force_path_style = o.force_path_style.unwrap_or(false);
  out.delete_expired_on_read = !o.keep_expired.unwrap_or(false);
  out.credentials = o.credentials.map(|c| StaticCredentials {
    access_key_id: c.access_key_id,
    secret_access_key: c.secret_access_key,
    session_token: c.session_token,
  });
  if let Some(ms) = o.timeout_ms {
    let ms = positive("timeoutMs", ms)?;
    out.timeout = Duration::try_from_secs_f64(ms / 1000.0)
      .ok()
      .filter(|d| *d <= MAX_TIMEOUT)
      .ok_or_else(|| Error::new(Status::InvalidArg, format!("timeoutMs must be at most {}, got {ms}", MAX_TIMEOUT.as_millis())))?;
  }
  if let Some(n) = o.max_attempts {
    out.max_attempts = n;
  }
  if let Some(n) = o.max_in_flight {
    out.max_in_flight = n as usize;
  }
  if let Some(n) = o.multipart_threshold {
    out.multipart_threshold = positive("multipartThreshold", n)? as usize;
  }
  if let Some(n) = o.part_size {
    out.part_size = positive("partSize", n)? as usize;
  }
  Ok(out)
}

/// Offloaded blocks as objects of one S3 bucket.
#[napi]
pub struct NativeS3Store {
  store: Arc<S3Store>,
  /// Session and lifetime of what this handle stores, and the clock.
  stamp: Stamp,
}

impl NativeS3Store {
  /// Uploads `content()` (built on the runtime) under a sequence number taken now.
  fn upload<'env>(
    &self,
    env: &'env Env,
    key: String,
    content_type: String,
    content: impl FnOnce() -> Bytes + Send + 'static,
  ) -> Result<PromiseRaw<'env, StoreOutcome>> {
    let store = self.store.clone();
    let sequence = store.next_sequence();
    let (stamp, now) = (self.stamp.clone(), self.stamp.now());
    env.spawn_future(async move {
      let content = content();
      let byte_length = content.len() as f64;
      let blob = NewBlob { sequence, key: &key, content, content_type: &content_type, tags: stamp.tags_at(now) };
      let reference = store.store_blob(blob).await.map_err(to_js_error)?;
      Ok(StoreOutcome { reference, byte_length })
    })
  }
}

#[napi]
impl NativeS3Store {
  /// A store for `bucket`; no request is made until the first store or retrieve.
  #[napi(constructor, catch_unwind)]
  pub fn new(bucket: String, options: Option<S3StoreOptions>) -> Result<Self> {
    let store = S3Store::new(options_of(bucket, options)?).map_err(to_js_error)?;
    Ok(Self { store: Arc::new(store), stamp: Stamp::default() })
  }

  /// The bucket written to.
  #[napi(getter, catch_unwind)]
  pub fn bucket(&self) -> String {
    self.store.bucket().to_owned()
  }

  /// The normalised key prefix (`""` or ending in `/`).
  #[napi(getter, catch_unwind)]
  pub fn prefix(&self) -> String {
    self.store.prefix().to_owned()
  }

  /// Never stores synchronously (every store is a network request): always `null`.
  #[napi(catch_unwind)]
  pub fn store_text_now(
    &self,
    _key: String,
    _text: &NativeText,
    _content_type: String,
    _concatenated: Option<bool>,
  ) -> Option<StoreOutcome> {
    None
  }

  /// Never stores synchronously: always `null`; use `storeBytes`.
  #[napi(catch_unwind)]
  pub fn store_bytes_now(
    &self,
    _key: String,
    _content: &[u8],
    _content_type: String,
    _concatenated: Option<bool>,
  ) -> Option<StoreOutcome> {
    None
  }

  /// Uploads text moved out of a [`NativeText`]. The sequence number is taken now,
  /// so blocks are numbered in the order they were handed over.
  #[napi(ts_return_type = "Promise<StoreOutcome>", catch_unwind)]
  pub fn store_text<'env>(
    &self,
    env: &'env Env,
    key: String,
    text: &mut NativeText,
    content_type: String,
    _concatenated: Option<bool>,
  ) -> Result<PromiseRaw<'env, StoreOutcome>> {
    let pending = text.take();
    self.upload(env, key, content_type, move || Bytes::from(pending.into_utf8()))
  }

  /// Uploads raw bytes (copied before the call returns).
  #[napi(ts_return_type = "Promise<StoreOutcome>", catch_unwind)]
  pub fn store_bytes<'env>(
    &self,
    env: &'env Env,
    key: String,
    content: &[u8],
    content_type: String,
    _concatenated: Option<bool>,
  ) -> Result<PromiseRaw<'env, StoreOutcome>> {
    let bytes = Bytes::copy_from_slice(content);
    self.upload(env, key, content_type, move || bytes)
  }

  /// Downloads an object; rejects with `Reference not found: <ref>` when it is unknown.
  #[napi]
  pub async fn retrieve(&self, reference: String) -> Result<RetrieveOutcome> {
    let blob = self.store.retrieve_at(&reference, self.stamp.now()).await.map_err(to_js_error)?;
    Ok(RetrieveOutcome { content: Vec::from(blob.content).into(), content_type: blob.content_type })
  }

  /// Downloads an object and searches it natively; nothing large crosses into JavaScript.
  #[napi]
  pub async fn search(&self, reference: String, query: SearchQuery, max_chars: u32) -> Result<SearchOutcome> {
    let blob = self.store.retrieve_at(&reference, self.stamp.now()).await.map_err(to_js_error)?;
    run_search(move || Ok(run_query(&blob.content, blob.content_type, &query, max_chars))).await
  }

  /// Sets the default lifetime of stored objects (`defaultTtlMs`); S3 keeps no byte
  /// budget and does not deduplicate (refused).
  #[napi(catch_unwind)]
  pub fn set_policy(&self, policy: LifecyclePolicy) -> Result<()> {
    if policy.max_bytes.is_some() || policy.dedup == Some(true) {
      return Err(Error::new(Status::InvalidArg, "S3Storage keeps no maxBytes budget and does not deduplicate"));
    }
    let ttl = policy.default_ttl_ms.map(|v| whole(v, "ttl")).transpose()?;
    self.store.set_default_ttl(ttl);
    Ok(())
  }

  /// A handle on the same store whose uploads carry `session` and last `ttlMs`.
  #[napi(catch_unwind)]
  pub fn with_tags(&self, session: Option<String>, ttl_ms: Option<f64>) -> Result<NativeS3Store> {
    Ok(NativeS3Store { store: Arc::clone(&self.store), stamp: self.stamp.tagged(session, ttl_ms)? })
  }

  /// Sets the time (ms since the epoch) of this store's handles; `null`: the system clock.
  #[napi(catch_unwind)]
  pub fn set_now(&self, now_ms: Option<f64>) -> Result<()> {
    self.stamp.set_now(now_ms)
  }

  /// Deletes every expired artifact object under the prefix; resolves with how many.
  #[napi]
  pub async fn cleanup_expired(&self) -> Result<f64> {
    Ok(self.store.cleanup_expired(self.stamp.now()).await.map_err(to_js_error)? as f64)
  }

  /// Deletes every artifact object of `session`; resolves with how many.
  #[napi]
  pub async fn delete_session(&self, session: String) -> Result<f64> {
    Ok(self.store.delete_session(&session).await.map_err(to_js_error)? as f64)
  }

  /// What the prefix holds now.
  #[napi]
  pub async fn stats(&self) -> Result<StorageStats> {
    Ok(self.store.stats(self.stamp.now()).await.map_err(to_js_error)?.into())
  }

  /// How far the listings of this store have got, counted since it was made: pages
  /// received, artifact objects they named, and metadata read (one `HeadObject` per
  /// artifact). Read it while `listArtifacts` runs to show progress.
  #[napi(catch_unwind)]
  pub fn listing_progress(&self) -> S3ListingProgress {
    let p = self.store.listing_progress();
    S3ListingProgress { pages: p.pages as f64, objects: p.objects as f64, described: p.described as f64 }
  }

  /// Every artifact object under the prefix, expired ones included, oldest first.
  #[napi]
  pub async fn list_artifacts(&self) -> Result<Vec<ArtifactEntry>> {
    let listed = self.store.list_artifacts().await.map_err(to_js_error)?;
    Ok(listed.into_iter().map(ArtifactEntry::from).collect())
  }

  /// Deletes the artifact objects named; with `onlyExpiredAtMs`, only those whose
  /// metadata, read again, says they are expired then. Resolves with how many.
  #[napi]
  pub async fn remove_artifacts(&self, names: Vec<String>, only_expired_at_ms: Option<f64>) -> Result<f64> {
    let (names, only) = removal_args(names, only_expired_at_ms)?;
    Ok(self.store.remove_artifacts(&names, only).await.map_err(to_js_error)? as f64)
  }

  /// Deletes the artifact objects `references` name (the blocks of an offload that
  /// failed as a whole); only artifact-shaped objects under the prefix go. Resolves
  /// with how many were deleted.
  #[napi]
  pub async fn discard(&self, references: Vec<String>) -> Result<f64> {
    let (bucket, prefix) = (self.store.bucket(), self.store.prefix());
    let names: Vec<String> = references
      .iter()
      .filter_map(|reference| resolve_reference(bucket, prefix, reference).ok())
      .filter_map(|key| key.strip_prefix(prefix).map(str::to_owned))
      .collect();
    Ok(self.store.remove_artifacts(&names, None).await.map_err(to_js_error)? as f64)
  }

  /// Number of unfinished multipart uploads under the prefix (for checks and tests).
  #[napi]
  pub async fn pending_multipart_uploads(&self) -> Result<u32> {
    Ok(self.store.pending_multipart_uploads().await.map_err(to_js_error)? as u32)
  }

  /// Unified storage: stores `data` (copied before the call returns) under `key`.
  /// Errors are `<StorageError message>\0<cause>`, as those of `NativeStore`.
  #[napi(ts_return_type = "Promise<void>", catch_unwind)]
  pub fn kv_write<'env>(&self, env: &'env Env, key: String, data: &[u8]) -> Result<PromiseRaw<'env, ()>> {
    let store = self.store.clone();
    let bytes = Bytes::copy_from_slice(data);
    env.spawn_future(async move { store.kv_write(&key, bytes).await.map_err(kv_error) })
  }

  /// Unified storage: the bytes under `key`, or `null`.
  #[napi]
  pub async fn kv_read(&self, key: String) -> Result<Option<Buffer>> {
    let value = self.store.kv_read(&key).await.map_err(kv_error)?;
    Ok(value.map(|bytes| Vec::from(bytes).into()))
  }

  /// Unified storage: removes `key` (no-op when missing).
  #[napi]
  pub async fn kv_delete(&self, key: String) -> Result<()> {
    self.store.kv_delete(&key).await.map_err(kv_error)
  }

  /// Unified storage: the keys starting with `prefix`, sorted as JavaScript sorts.
  #[napi]
  pub async fn kv_list(&self, prefix: String) -> Result<Vec<String>> {
    self.store.kv_list(&prefix).await.map_err(kv_error)
  }
}
