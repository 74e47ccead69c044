//! The artifact lifecycle of a [`NativeStore`]: policy (default TTL, byte
//! budget, deduplication), tagged handles (session, lifetime), the clock, and
//! the operator's calls (cleanup, session deletion, stats), each sweep on a
//! worker thread. Arguments are checked in JavaScript; what reaches here is
//! checked again and refused with an error, never trusted.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offload_storage::{ArtifactInfo, Policy, Stats};

use crate::error::to_js_error;
use crate::store::{NativeStore, Stamp};
use crate::task::{on_worker, on_worker_then, Work};

/// Largest whole number a JavaScript number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A non-negative whole number of at most 2^53 - 1 (`what` names it in the error).
pub(crate) fn whole(value: f64, what: &str) -> Result<u64> {
  if (0.0..=MAX_SAFE).contains(&value) && value.fract() == 0.0 {
    Ok(value as u64)
  } else {
    Err(Error::new(Status::InvalidArg, format!("{what} must be a non-negative integer of at most 2^53 - 1")))
  }
}

/// The policy a storage is created with (see `Policy` in the storage core).
#[napi(object)]
pub struct LifecyclePolicy {
  /// Lifetime of artifacts stored without their own, in milliseconds.
  pub default_ttl_ms: Option<f64>,
  /// Most bytes of content kept (after deduplication).
  pub max_bytes: Option<f64>,
  /// Store identical content once.
  pub dedup: Option<bool>,
}

/// One session's share of a storage.
#[napi(object)]
pub struct SessionUsage {
  /// Live artifacts.
  pub artifacts: f64,
  /// Their content bytes.
  pub bytes: f64,
}

/// What a storage holds.
#[napi(object)]
pub struct StorageStats {
  /// Live artifacts (expired ones not counted).
  pub artifacts: f64,
  /// Their content bytes, each artifact counted in full.
  pub bytes: f64,
  /// Bytes actually held (identical content counted once when deduplicated).
  pub stored_bytes: f64,
  /// Per session id.
  pub sessions: HashMap<String, SessionUsage>,
}

impl From<Stats> for StorageStats {
  fn from(stats: Stats) -> Self {
    StorageStats {
      artifacts: stats.artifacts as f64,
      bytes: stats.bytes as f64,
      stored_bytes: stats.stored_bytes as f64,
      sessions: stats
        .sessions
        .into_iter()
        .map(|(id, s)| (id, SessionUsage { artifacts: s.artifacts as f64, bytes: s.bytes as f64 }))
        .collect(),
    }
  }
}

/// One artifact as a storage lists it for an operator.
#[napi(object)]
pub struct ArtifactEntry {
  /// What `removeArtifacts` takes.
  pub name: String,
  /// What a retrieve takes.
  pub reference: String,
  /// The content type recorded at store time.
  pub content_type: String,
  /// Content bytes.
  pub bytes: f64,
  /// The session it was stored for.
  pub session: Option<String>,
  /// When it was stored (ms since the epoch), if known.
  pub created_ms: Option<f64>,
  /// When it expires (ms since the epoch); absent: never.
  pub expires_ms: Option<f64>,
}

impl From<ArtifactInfo> for ArtifactEntry {
  fn from(a: ArtifactInfo) -> Self {
    ArtifactEntry {
      name: a.name,
      reference: a.reference,
      content_type: a.content_type,
      bytes: a.bytes as f64,
      session: a.session,
      created_ms: a.created_ms.map(|v| v as f64),
      expires_ms: a.expires_ms.map(|v| v as f64),
    }
  }
}

/// The checked arguments of a `removeArtifacts` call.
pub(crate) fn removal_args(names: Vec<String>, only_expired_at_ms: Option<f64>) -> Result<(Vec<String>, Option<u64>)> {
  Ok((names, only_expired_at_ms.map(|v| whole(v, "onlyExpiredAtMs")).transpose()?))
}

impl Stamp {
  /// A stamp with this one's clock, for `session` and a lifetime of `ttl_ms`.
  pub(crate) fn tagged(&self, session: Option<String>, ttl_ms: Option<f64>) -> Result<Stamp> {
    Ok(Stamp {
      session: session.map(Arc::from),
      ttl_ms: ttl_ms.map(|v| whole(v, "ttl")).transpose()?,
      clock: Arc::clone(&self.clock),
    })
  }

  /// Sets the clock's time (`None`: the system clock).
  pub(crate) fn set_now(&self, now_ms: Option<f64>) -> Result<()> {
    let value = match now_ms {
      Some(v) => whole(v, "the clock's time")?.max(1),
      None => 0,
    };
    self.clock.store(value, Ordering::Relaxed);
    Ok(())
  }
}

#[napi]
impl NativeStore {
  /// Sets the storage's policy (shared by all its handles).
  #[napi(catch_unwind)]
  pub fn set_policy(&self, policy: LifecyclePolicy) -> Result<()> {
    let policy = Policy {
      default_ttl_ms: policy.default_ttl_ms.map(|v| whole(v, "ttl")).transpose()?,
      max_bytes: policy.max_bytes.map(|v| whole(v, "maxBytes")).transpose()?,
      dedup: policy.dedup.unwrap_or(false),
    };
    self.backend.lifecycle().set_policy(policy).map_err(to_js_error)
  }

  /// A handle on the same storage (same numbering, same clock) whose stores
  /// carry `session` and last `ttlMs` (`null`: the storage's default).
  #[napi(catch_unwind)]
  pub fn with_tags(&self, session: Option<String>, ttl_ms: Option<f64>) -> Result<NativeStore> {
    Ok(NativeStore { backend: self.backend.clone(), stamp: self.stamp.tagged(session, ttl_ms)?, held: self.held.share() })
  }

  /// Sets the time (ms since the epoch) the storage's handles use from now
  /// on; `null` goes back to the system clock.
  #[napi(catch_unwind)]
  pub fn set_now(&self, now_ms: Option<f64>) -> Result<()> {
    self.stamp.set_now(now_ms)
  }

  /// Removes every expired artifact; resolves with how many.
  #[napi(ts_return_type = "Promise<number>", catch_unwind)]
  pub fn cleanup_expired(&self) -> AsyncTask<Work<f64>> {
    let (backend, now) = (self.backend.clone(), self.stamp.now());
    let removed = move || backend.lifecycle().cleanup_expired(now).map(|n| n as f64).map_err(to_js_error);
    on_worker_then(removed, self.report_held_later())
  }

  /// Removes every artifact of `session`; resolves with how many.
  #[napi(ts_return_type = "Promise<number>", catch_unwind)]
  pub fn delete_session(&self, session: String) -> AsyncTask<Work<f64>> {
    let backend = self.backend.clone();
    let removed = move || backend.lifecycle().delete_session(&session).map(|n| n as f64).map_err(to_js_error);
    on_worker_then(removed, self.report_held_later())
  }

  /// What the storage holds now.
  #[napi(ts_return_type = "Promise<StorageStats>", catch_unwind)]
  pub fn stats(&self) -> AsyncTask<Work<StorageStats>> {
    let (backend, now) = (self.backend.clone(), self.stamp.now());
    on_worker(move || backend.lifecycle().stats(now).map(StorageStats::from).map_err(to_js_error))
  }

  /// Every artifact, expired ones included, oldest first; removes nothing.
  #[napi(ts_return_type = "Promise<ArtifactEntry[]>", catch_unwind)]
  pub fn list_artifacts(&self) -> AsyncTask<Work<Vec<ArtifactEntry>>> {
    let backend = self.backend.clone();
    on_worker(move || {
      let listed = backend.lifecycle().list_artifacts().map_err(to_js_error)?;
      Ok(listed.into_iter().map(ArtifactEntry::from).collect())
    })
  }

  /// Removes the artifacts named (names of nothing held are skipped); with
  /// `onlyExpiredAtMs`, only those expired at that time by what the storage
  /// knows when it removes them. Resolves with how many were removed.
  #[napi(ts_return_type = "Promise<number>", catch_unwind)]
  pub fn remove_artifacts(&self, names: Vec<String>, only_expired_at_ms: Option<f64>) -> Result<AsyncTask<Work<f64>>> {
    let (names, only) = removal_args(names, only_expired_at_ms)?;
    let backend = self.backend.clone();
    let removed = move || backend.lifecycle().remove_artifacts(&names, only).map(|n| n as f64).map_err(to_js_error);
    Ok(on_worker_then(removed, self.report_held_later()))
  }
}
