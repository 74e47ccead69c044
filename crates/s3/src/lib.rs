//! Amazon S3 (and S3-compatible) storage for offloaded tool-result content.
//!
//! The native counterpart of the `S3Storage` of the `ContextOffloader`
//! plugin: the same object keys (`<prefix><ms>_<n>_<key>`), references
//! (`s3://<bucket>/<key>`) and reference checks, with bounded timeouts,
//! retries with backoff, a cap on requests in flight and multipart uploads
//! for large bodies.
//!
//! * [`S3Store`]: the async store (for callers with a Tokio runtime).
//! * [`BlockingS3Store`]: the same behind [`offload_storage::BlobStore`].
//! * `S3Store::kv_*`: the SDK's unified `Storage` (keys of its unified `S3Storage`).
//! * [`S3Snapshots`]: session snapshots in the layout of the SDK's session `S3Storage`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod blocking;
mod config;
mod error;
mod kv;
pub mod lifecycle;
mod pages;
mod snapshots;
pub mod reference;
mod store;

pub use blocking::BlockingS3Store;
pub use config::{
    S3Options, StaticCredentials, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MULTIPART_THRESHOLD,
    DEFAULT_PART_SIZE, DEFAULT_REGION, DEFAULT_TIMEOUT,
};
pub use error::S3Error;
pub use kv::unified_prefix;
pub use snapshots::{S3SnapshotError, S3Snapshots, SnapshotFileKind, SnapshotText};
pub use store::{ListingProgress, S3Store};
