//! Errors of the S3 backend.

/// Errors returned by [`S3Store`](crate::S3Store).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum S3Error {
    /// The reference does not name an object of this store: unknown key
    /// (`NoSuchKey`), a key outside the configured prefix, or (with `detail`
    /// `bucket mismatch`) an `s3://` reference to another bucket. The message
    /// matches the SDK's.
    #[error("Reference not found: {reference}{}", detail.map(|d| format!(" ({d})")).unwrap_or_default())]
    NotFound {
        /// The reference exactly as the caller passed it.
        reference: String,
        /// Why it was rejected, when that is not simply "no such key".
        detail: Option<&'static str>,
    },

    /// The object is gone for a reason the store can tell: its TTL ran out.
    #[error("Reference not found ({reason}): {reference}")]
    Gone {
        /// The reference exactly as the caller passed it.
        reference: String,
        /// Why it is gone.
        reason: offload_storage::GoneReason,
    },

    /// A request to S3 failed (server unreachable, timeout, access denied, ...).
    #[error("S3 {op} of s3://{bucket}/{key} failed: {cause}")]
    Request {
        /// The S3 operation, e.g. `PutObject`.
        op: &'static str,
        /// The bucket addressed.
        bucket: String,
        /// The object key addressed.
        key: String,
        /// The underlying error with its whole chain of causes.
        cause: String,
    },

    /// The store could not be configured (bad option, no runtime, ...).
    #[error("S3 storage configuration error: {0}")]
    Config(String),
}

impl S3Error {
    /// Builds an [`S3Error::NotFound`] without detail.
    pub fn not_found(reference: impl Into<String>) -> Self {
        S3Error::NotFound { reference: reference.into(), detail: None }
    }

    /// Returns `true` for [`S3Error::NotFound`] and [`S3Error::Gone`].
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(self, S3Error::NotFound { .. } | S3Error::Gone { .. })
    }
}

impl From<S3Error> for offload_storage::StorageError {
    fn from(err: S3Error) -> Self {
        match err {
            S3Error::NotFound { reference, detail } => offload_storage::StorageError::not_found(match detail {
                Some(d) => format!("{reference} ({d})"),
                None => reference,
            }),
            S3Error::Gone { reference, reason } => offload_storage::StorageError::gone(reference, reason),
            S3Error::Config(msg) => offload_storage::StorageError::InvalidArgument(msg),
            other @ S3Error::Request { .. } => {
                let path = match &other {
                    S3Error::Request { bucket, key, .. } => format!("s3://{bucket}/{key}"),
                    _ => String::new(),
                };
                offload_storage::StorageError::io("access S3 object", path, std::io::Error::other(other.to_string()))
            }
        }
    }
}
